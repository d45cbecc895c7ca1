/* Fixture: aliases that are not the highest version, that name another symbol, and the
 * broken ones NVIDIA shipped (two tokens, a doubled suffix, a missing `cu`). */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>

#define PFN_cuCtxCreate  PFN_cuCtxCreate_v11040
#define PFN_cuGraphInstantiate  PFN_cuGraphInstantiateWithFlags_v11040
#define PFN_cuGraphBatchMemOpNodeSetParams  PFN_cuGraphBatchMemOpNodeSetParams _v11070
#define PFN_cuStreamGetId  PFN_cuStreamGetId_v12000_v12000
#define PFN_GraphConditionalHandleCreate  PFN_cuGraphConditionalHandleCreate_v12030

typedef CUresult (CUDAAPI *PFN_cuCtxCreate_v3020)(CUcontext *pctx, unsigned int flags, CUdevice dev);
typedef CUresult (CUDAAPI *PFN_cuCtxCreate_v11040)(CUcontext *pctx, void *paramsArray, int numParams, unsigned int flags, CUdevice dev);
typedef CUresult (CUDAAPI *PFN_cuCtxCreate_v12050)(CUcontext *pctx, void *ctxCreateParams, unsigned int flags, CUdevice dev);
typedef CUresult (CUDAAPI *PFN_cuGraphInstantiate_v11000)(void **phGraphExec, void *hGraph, void **phErrorNode, char *logBuffer, size_t bufferSize);
typedef CUresult (CUDAAPI *PFN_cuGraphInstantiateWithFlags_v11040)(void **phGraphExec, void *hGraph, unsigned long long flags);
typedef CUresult (CUDAAPI *PFN_cuGraphBatchMemOpNodeSetParams_v11070)(void *hNode, const void *nodeParams);
typedef CUresult (CUDAAPI *PFN_cuStreamGetId_v12000)(CUstream hStream, unsigned long long *streamId);
typedef CUresult (CUDAAPI *PFN_cuGraphConditionalHandleCreate_v12030)(void *pHandle_out, void *hGraph, CUcontext ctx, unsigned int defaultLaunchValue, unsigned int flags);

#if defined(__CUDA_API_VERSION_INTERNAL)
typedef CUresult (CUDAAPI *PFN_cuCtxCreate_v2000)(CUcontext *pctx, unsigned int flags, CUdevice dev);
#endif
#endif
