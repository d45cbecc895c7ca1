/* Fixture: like NVIDIA's, uses CUresult and the Vdp types without including cuda.h or
 * vdpau/vdpau.h: only the typedef header includes vdpau.h, after this one is needed. */
#ifndef CUDAVDPAU_H
#define CUDAVDPAU_H
CUresult CUDAAPI cuVDPAUGetDevice(CUdevice *pDevice, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
#endif
