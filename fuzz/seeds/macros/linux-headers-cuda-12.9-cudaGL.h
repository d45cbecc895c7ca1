/* Fixture: cudaGL.h names GL types from the system's GL/gl.h (libgl-dev). */
#ifndef CUDAGL_H
#define CUDAGL_H
#include <cuda.h>
#include <GL/gl.h>
typedef enum CUGLDeviceList_enum { CU_GL_DEVICE_LIST_ALL = 1 } CUGLDeviceList;
#endif
