/* Fixture: like NVIDIA's, names the D3D9 interfaces without including d3d9.h. */
#ifndef CUDAD3D9_H
#define CUDAD3D9_H
typedef enum CUd3d9DeviceList_enum { CU_D3D9_DEVICE_LIST_ALL = 0x01 } CUd3d9DeviceList;
CUresult CUDAAPI cuD3D9GetDirect3DDevice(IDirect3DDevice9 **ppD3DDevice);
#endif
