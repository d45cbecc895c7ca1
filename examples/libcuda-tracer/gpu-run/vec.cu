// A CUDA C++ program on libcudart: a vector add of 2^20 floats, its checksum printed.
#include <cstdio>
#include <vector>
__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
int main() {
    const int n = 1 << 20;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; i++) { a[i] = i % 1000; b[i] = 2 * (i % 7); }
    float *da, *db, *dc;
    cudaMalloc(&da, n * 4); cudaMalloc(&db, n * 4); cudaMalloc(&dc, n * 4);
    cudaMemcpy(da, a.data(), n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), n * 4, cudaMemcpyHostToDevice);
    add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    cudaError_t e = cudaMemcpy(c.data(), dc, n * 4, cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += c[i];
    printf("vec: %s, checksum %.1f\n", cudaGetErrorName(e), sum);
    return e != cudaSuccess;
}
