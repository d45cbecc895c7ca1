/* A stand-in for NVIDIA's driver that loads any image (tests/tests/min_driver_runs.rs): without
 * a GPU a real driver's cuModuleLoadData fails, so the tracer's copy of a loaded image is tried
 * in front of this library instead (named by $CUDA_SYS_GEN_REAL_LIBCUDA). */
int cuDriverGetVersion(int *v) { *v = 12050; return 0; }
int cuInit(unsigned int flags) { (void)flags; return 0; }
int cuModuleLoadData(void **module, const void *image) { (void)image; *module = (void *)1; return 0; }
