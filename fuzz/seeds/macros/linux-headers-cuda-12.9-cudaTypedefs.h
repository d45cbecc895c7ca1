/* Fixture: cuda.h's own typedefs, minimal. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
#endif
