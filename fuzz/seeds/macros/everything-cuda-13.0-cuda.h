/* Diff fixture: the types the typedefs use. From 12.9 to 13.0 CUtensorMap's alignment
 * doubles (64 -> 128), as it does in NVIDIA's headers. */
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__
#include <stdlib.h>
#include <stdint.h>
#define CUDAAPI
#define CUDA_VERSION 13000
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 } CUresult;
typedef uint32_t cuuint32_t;
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUexecAffinityParam_st { int type; int param; } CUexecAffinityParam;
typedef struct CUctxCreateParams_st { CUexecAffinityParam *execAffinityParams; int numExecAffinityParams; } CUctxCreateParams;
typedef struct CUmemLocation_st { int type; int id; } CUmemLocation;
typedef struct CUtensorMap_st { _Alignas(128) unsigned long long opaque[16]; } CUtensorMap;
#endif
