/* Fixture: a GL typedef; under _WIN32 the WGL one, which a Linux parse must not see. */
#ifndef CUDAGLTYPEDEFS_H
#define CUDAGLTYPEDEFS_H
#include <GL/gl.h>
#include <cudaGL.h>
#define PFN_cuGraphicsGLRegisterBuffer PFN_cuGraphicsGLRegisterBuffer_v3000
typedef CUresult (CUDAAPI *PFN_cuGraphicsGLRegisterBuffer_v3000)(void **pCudaResource, GLuint buffer, unsigned int Flags);
typedef CUresult (CUDAAPI *PFN_cuGLGetDevices_v6050)(unsigned int *pCudaDeviceCount, CUdevice_v1 *pCudaDevices, unsigned int cudaDeviceCount, CUGLDeviceList deviceList);
#ifdef _WIN32
typedef CUresult (CUDAAPI *PFN_cuWGLGetDevice_v2020)(CUdevice_v1 *pDevice, void *hGpu);
#endif
#endif
