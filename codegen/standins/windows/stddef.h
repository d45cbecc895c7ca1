/* cuda-sys-gen stand-in: x86-64 Windows (LLP64: `long` is 32 bits, pointers 64). */
#pragma once
typedef unsigned long long size_t;
typedef long long ptrdiff_t;
typedef unsigned short wchar_t;
#define NULL ((void *)0)
#define offsetof(t, m) __builtin_offsetof(t, m)
