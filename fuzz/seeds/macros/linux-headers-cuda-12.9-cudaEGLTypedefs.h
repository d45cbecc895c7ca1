/* Fixture: every EGL typedef puts CUDAAPI inside a parameter type. */
#ifndef CUDAEGLTYPEDEFS_H
#define CUDAEGLTYPEDEFS_H
#include <cudaEGL.h>
typedef CUresult (CUDAAPI *PFN_cuEGLStreamConsumerConnect_v7000)(CUeglStreamConnection CUDAAPI *conn, EGLStreamKHR stream);
typedef CUresult (CUDAAPI *PFN_cuGraphicsEGLRegisterImage_v7000)(void **pCudaResource, EGLImageKHR image, unsigned int flags);
#endif
