/* Fixture: legacy typedefs under the INTERNAL guard shift the exported-name numbering. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>

#define PFN_cuMemAlloc  PFN_cuMemAlloc_v3020
#define PFN_cuInit  PFN_cuInit_v2000

typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v3020)(CUdeviceptr_v2 *dptr, size_t bytesize);

#if defined(__CUDA_API_VERSION_INTERNAL)
    typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v2000)(CUdeviceptr_v1 *dptr, unsigned int bytesize);
#endif

#endif
