/* Fixture: cuFoo v11060 adds a parameter. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
#define PFN_cuFoo PFN_cuFoo_v11060
typedef CUresult (CUDAAPI *PFN_cuFoo_v11040)(int a);
typedef CUresult (CUDAAPI *PFN_cuFoo_v11050)(int a);
typedef CUresult (CUDAAPI *PFN_cuFoo_v11060)(int a, int b);
#endif
