/* cuda-sys-gen stand-in for the Khronos EGL/egl.h (EGL 1.5): the core handle types, opaque
 * pointers as the specification's header declares them. cudaEGL.h itself names only EGLint
 * from here, and the KHR types of eglext.h. */
#pragma once
#include <EGL/eglplatform.h>
typedef unsigned int EGLBoolean;
typedef void *EGLDisplay;
typedef void *EGLConfig;
typedef void *EGLSurface;
typedef void *EGLContext;
typedef void *EGLImage;
typedef void *EGLSync;
