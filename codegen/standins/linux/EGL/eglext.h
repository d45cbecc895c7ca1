/* cuda-sys-gen stand-in for the Khronos EGL/eglext.h: the extension handles cudaEGL.h
 * names, opaque pointers in the order the registry's header declares them
 * (EGL_KHR_cl_event2, EGL_KHR_image, EGL_KHR_stream). */
#pragma once
#include <EGL/egl.h>
typedef void *EGLSyncKHR;
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
