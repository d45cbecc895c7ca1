/* Fixture: EGL types from the system's EGL headers (libegl-dev), with EGL_NO_X11. */
#ifndef CUDAEGL_H
#define CUDAEGL_H
#include "cuda.h"
#include "EGL/egl.h"
#include "EGL/eglext.h"
typedef struct CUeglStreamConnection_st *CUeglStreamConnection;
#endif
