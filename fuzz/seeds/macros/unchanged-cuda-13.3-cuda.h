/* Diff fixture: the few types the typedefs use. */
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__
#include <stdlib.h>
#define CUDAAPI
#define CUDA_VERSION 13030
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUmemLocation_st { int type; int id; } CUmemLocation;
#endif
