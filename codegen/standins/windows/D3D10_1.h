/* cuda-sys-gen stand-in for the Windows SDK's D3D10_1.h: only what cudaD3D10.h names. */
#pragma once
typedef unsigned int UINT;
#include <dxgi.h>
typedef struct ID3D10Device ID3D10Device;
typedef struct ID3D10Resource ID3D10Resource;
