extern "C" __global__ void add(float *x, float a) { x[threadIdx.x] += a; }
