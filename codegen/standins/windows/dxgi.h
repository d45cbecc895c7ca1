/* cuda-sys-gen stand-in for the Windows SDK's dxgi.h: the adapter interface the D3D10 and
 * D3D11 headers both name. */
#pragma once
typedef struct IDXGIAdapter IDXGIAdapter;
