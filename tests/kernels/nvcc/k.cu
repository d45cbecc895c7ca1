#include <cstdio>
__global__ void add(float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += b[i];
}
int main() {
  float *a, *b;
  int n = 1 << 12;
  cudaMalloc(&a, n * 4);
  cudaMalloc(&b, n * 4);
  add<<<n / 256, 256>>>(a, b, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("kernel: %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
