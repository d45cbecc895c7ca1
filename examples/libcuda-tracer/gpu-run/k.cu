// A kernel for ptxload.c's images: PTX, fatbins and a cubin built by nvcc on the GPU machine.
extern "C" __global__ void add(float *x, float a) { x[threadIdx.x] += a; }
