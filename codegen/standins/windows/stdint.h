/* cuda-sys-gen stand-in. 64-bit integers are `long long` so that nothing generated
 * depends on the width of `long` (which Windows makes 32 bits). */
#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
typedef long long intmax_t;
typedef unsigned long long uintmax_t;
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
