/* A plain C program against cuda.h: the driver API only, PTX modules of several ISA versions
   and targets loaded with cuModuleLoadData, each result printed. */
#include <cuda.h>
#include <stdio.h>
static const char *ptx[][2] = {
  {"7.0 sm_75", ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry k() { ret; }\n"},
  {"8.0 sm_80", ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n"},
  {"8.0 sm_52 (ptxas 13.0 removed sm_52)", ".version 8.0\n.target sm_52\n.address_size 64\n.visible .entry k() { ret; }\n"},
  {"6.0 sm_30 (removed in CUDA 11)", ".version 6.0\n.target sm_30\n.address_size 64\n.visible .entry k() { ret; }\n"},
  {"9.0 sm_90", ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n"},
  {"9.1 sm_90 (CUDA 13.1's ISA)", ".version 9.1\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n"},
  {"8.7 sm_101a (renamed sm_110 in 13.0)", ".version 8.7\n.target sm_101a\n.address_size 64\n.visible .entry k() { ret; }\n"},
};
int main(int argc, char **argv) {
  CUdevice dev; CUcontext ctx; int v = 0;
  CUresult r = cuInit(0);
  cuDriverGetVersion(&v);
  printf("cuInit %d, driver %d\n", r, v);
  if (argc > 5) { r = cuCtxCreate(&ctx, NULL, 0, 0); printf("cuCtxCreate %d\n", r); }
  cuDeviceGet(&dev, 0);
  r = cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  for (unsigned i = 0; i < sizeof ptx / sizeof ptx[0]; i++) {
    CUmodule m; CUfunction f;
    r = cuModuleLoadData(&m, ptx[i][1]);
    CUresult l = CUDA_ERROR_UNKNOWN;
    if (r == CUDA_SUCCESS && cuModuleGetFunction(&f, m, "k") == CUDA_SUCCESS) {
      l = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL);
      if (l == CUDA_SUCCESS) l = cuCtxSynchronize();
    }
    const char *name = "?"; cuGetErrorName(r, &name);
    printf("PTX %-40s load %3d %-36s launch %d\n", ptx[i][0], r, name, l);
  }
  return 0;
}
