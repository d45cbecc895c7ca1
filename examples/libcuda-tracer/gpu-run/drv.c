/* A driver-API program linked against libcuda (-lcuda): it calls the exported names cuda.h
   maps its calls to, and asks cuGetProcAddress for an entry newer than the driver. */
#include <cuda.h>
#include <stdio.h>
int main(void) {
    CUdevice dev; CUcontext ctx; CUdeviceptr d; int v = 0;
    unsigned int host[256], back[256];
    for (int i = 0; i < 256; i++) host[i] = i * 3u;
    printf("cuInit %d\n", cuInit(0));
    cuDriverGetVersion(&v);
    /* One call per statement: C leaves the order of a call's arguments open. */
    CUresult r1 = cuDeviceGet(&dev, 0);
    printf("driver %d, cuDeviceGet %d\n", v, r1);
    r1 = cuDevicePrimaryCtxRetain(&ctx, dev);
    CUresult r2 = cuCtxSetCurrent(ctx);
    printf("cuDevicePrimaryCtxRetain %d, cuCtxSetCurrent %d\n", r1, r2);
    printf("cuMemAlloc %d\n", cuMemAlloc(&d, sizeof host));
    r1 = cuMemcpyHtoD(d, host, sizeof host);
    r2 = cuMemcpyDtoH(back, d, sizeof back);
    printf("cuMemcpyHtoD %d, cuMemcpyDtoH %d\n", r1, r2);
    int same = 1;
    for (int i = 0; i < 256; i++) same &= back[i] == host[i];
    printf("round trip %s\n", same ? "equal" : "DIFFERENT");
    void *p = 0; CUdriverProcAddressQueryResult status = 7;
    CUresult r = cuGetProcAddress("cuCtxCreate", &p, v + 10, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    printf("cuGetProcAddress(cuCtxCreate, %d): result %d, status %d, pointer %s\n", v + 10, r, status, p ? "set" : "NULL");
    r = cuGetProcAddress("cuNoSuchThing", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    printf("cuGetProcAddress(cuNoSuchThing, 12000): result %d, status %d\n", r, status);
    r1 = cuMemFree(d);
    r2 = cuDevicePrimaryCtxRelease(dev);
    printf("cuMemFree %d, cuDevicePrimaryCtxRelease %d\n", r1, r2);
    return !same;
}
