/* Diff fixture: the older side of an additions-only change. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
#endif
