/* Fixture: D3D9 typedefs, Windows only: parsed for x86_64-pc-windows-msvc against our stand-ins. */
#ifndef CUDAD3D9TYPEDEFS_H
#define CUDAD3D9TYPEDEFS_H
#include <d3d9.h>
#include <cudaD3D9.h>
typedef CUresult (CUDAAPI *PFN_cuD3D9GetDirect3DDevice_v2000)(IDirect3DDevice9 **ppD3DDevice);
typedef CUresult (CUDAAPI *PFN_cuD3D9GetDevices_v3020)(unsigned int *pCudaDeviceCount, CUdevice_v1 *pCudaDevices, unsigned int cudaDeviceCount, IDirect3DDevice9 *pD3D9Device, CUd3d9DeviceList deviceList);
#endif
