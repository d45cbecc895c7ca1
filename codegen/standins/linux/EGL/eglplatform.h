/* cuda-sys-gen stand-in for the Khronos EGL/eglplatform.h: EGLint is khronos_int32_t. The
 * native window system types are left out: cudaEGL.h names none of them (the manifest
 * defines EGL_NO_X11 for the real header too). */
#pragma once
#include <KHR/khrplatform.h>
typedef khronos_int32_t EGLint;
