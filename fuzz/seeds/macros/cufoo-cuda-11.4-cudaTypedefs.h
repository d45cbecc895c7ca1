/* Fixture: the CUDA guide's hypothetical cuFoo, one ABI per toolkit. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
#define PFN_cuFoo PFN_cuFoo_v11040
typedef CUresult (CUDAAPI *PFN_cuFoo_v11040)(int a);
#endif
