/* cuda-sys-gen stand-in for the Windows SDK's d3d9.h: only what cudaD3D9.h names. COM
 * interfaces are opaque: CUDA only ever passes pointers to them. */
#pragma once
typedef unsigned int UINT;
typedef struct IDirect3D9 IDirect3D9;
typedef struct IDirect3DDevice9 IDirect3DDevice9;
typedef struct IDirect3DResource9 IDirect3DResource9;
typedef struct IDirect3DVertexBuffer9 IDirect3DVertexBuffer9;
