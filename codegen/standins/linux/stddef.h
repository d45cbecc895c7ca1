/* cuda-sys-gen stand-in: the C library as far as NVIDIA's headers need it, x86-64 Linux. */
#pragma once
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef int wchar_t;
#define NULL ((void *)0)
#define offsetof(t, m) __builtin_offsetof(t, m)
