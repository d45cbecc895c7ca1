/* Fixture: cuFoo v11050 keeps the parameter list but changes its meaning. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
#define PFN_cuFoo PFN_cuFoo_v11050
typedef CUresult (CUDAAPI *PFN_cuFoo_v11040)(int a);
typedef CUresult (CUDAAPI *PFN_cuFoo_v11050)(int a);
#endif
