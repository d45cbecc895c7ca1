/* Fixture: VDPAU typedefs. */
#ifndef CUDAVDPAUTYPEDEFS_H
#define CUDAVDPAUTYPEDEFS_H
#include <vdpau/vdpau.h>
#include <cudaVDPAU.h>
typedef CUresult (CUDAAPI *PFN_cuVDPAUGetDevice_v3010)(CUdevice_v1 *pDevice, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
#endif
