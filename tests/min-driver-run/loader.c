/* A stand-in for NVIDIA's driver that loads any image (tests/tests/min_driver_runs.rs): without
 * a GPU a real driver's cuModuleLoadData fails, so the tracer's copy of a loaded image is tried
 * in front of this library instead (named by $CUDA_SYS_GEN_REAL_LIBCUDA). */
int cuDriverGetVersion(int *v) { *v = 12050; return 0; }
int cuInit(unsigned int flags) { (void)flags; return 0; }
int cuModuleLoadData(void **module, const void *image) { (void)image; *module = (void *)1; return 0; }
int cuModuleLoad(void **module, const char *fname) { (void)fname; *module = (void *)2; return 0; }
/* Says each unload on stderr: a load the stand-in refuses after this library loaded it is undone. */
#include <stdio.h>
int cuModuleUnload(void *module) { fprintf(stderr, "loader: cuModuleUnload %p\n", module); return 0; }
/* A linker input (cuLinkAddData's 6.5 ABI, exported as cuLinkAddData_v2): said on stderr, so that
 * an input the stand-in refuses is seen never to reach the driver. */
int cuLinkAddData_v2(void *state, int type, void *data, unsigned long size, const char *name, unsigned n, void *o,
                     void *v) {
    (void)state; (void)type; (void)data; (void)name; (void)n; (void)o; (void)v;
    fprintf(stderr, "loader: cuLinkAddData_v2 %lu bytes\n", size);
    return 0;
}
/* The device of the current context: an sm_90 GPU, as an H100's driver says. */
int cuCtxGetDevice(int *device) { *device = 0; return 0; }
int cuDeviceGetAttribute(int *value, int attribute, int device) {
    (void)device;
    if (attribute == 75) { *value = 9; return 0; } /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    if (attribute == 76) { *value = 0; return 0; } /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */
    return 1;
}
