/* cuda-sys-gen stand-in for the Windows SDK's D3D11_1.h: only what cudaD3D11.h names. */
#pragma once
typedef unsigned int UINT;
#include <dxgi.h>
typedef struct ID3D11Device ID3D11Device;
typedef struct ID3D11Resource ID3D11Resource;
