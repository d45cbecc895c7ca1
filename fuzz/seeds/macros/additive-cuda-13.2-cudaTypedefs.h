/* Diff fixture: one new symbol, nothing else (a new ABI of an existing symbol would change
 * its unversioned alias under the 13.x rule, which is breaking). */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
typedef CUresult (CUDAAPI *PFN_cuMemGetDefaultMemPool_v13000)(CUmemoryPool *pool_out, CUmemLocation *location, int type);
#endif
