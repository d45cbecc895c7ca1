/* Fixture: CUDAAPI inside a parameter type (as every EGL typedef has it), irregular spacing,
 * a declaration split over lines, and no aliases at all (13.x). */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>

typedef CUresult (CUDAAPI *PFN_cuEGLStreamConsumerConnect_v7000)(CUeglStreamConnection CUDAAPI *conn, void *stream);
typedef   CUresult(CUDAAPI*PFN_cuEGLStreamConsumerDisconnect_v7000)  (  CUeglStreamConnection CUDAAPI  *conn ) ;
typedef CUresult (CUDAAPI
    *PFN_cuMemGetInfo_v3020)(size_t *free,
                             size_t *total);
typedef CUresult (CUDAAPI *PFN_cuMemGetInfo_v3020_ptds)(size_t *free, size_t *total);
#endif
