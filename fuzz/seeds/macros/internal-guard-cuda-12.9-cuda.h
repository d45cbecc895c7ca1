#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__
#include <stdlib.h>
#include <stdint.h>
#define CUDAAPI
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_NOT_FOUND = 500 } CUresult;
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
#if defined(__CUDA_API_VERSION_INTERNAL)
typedef unsigned int CUdeviceptr_v1;
#endif
#define CUDA_VERSION 12090

#endif
