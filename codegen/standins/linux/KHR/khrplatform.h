/* cuda-sys-gen stand-in for the Khronos KHR/khrplatform.h: the sized types EGL builds on,
 * spelled as the registry's khrplatform.h spells them for a C99 compiler on Linux (from
 * <stdint.h>), so that bindgen gives the same aliases. */
#pragma once
#include <stdint.h>
typedef int32_t khronos_int32_t;
typedef uint32_t khronos_uint32_t;
typedef int64_t khronos_int64_t;
typedef uint64_t khronos_uint64_t;
typedef signed long int khronos_ssize_t;
typedef unsigned long int khronos_usize_t;
typedef khronos_uint64_t khronos_utime_nanoseconds_t;
