/* A program that links libcuda and calls three of its exports by name (no cuGetProcAddress):
 * its static floor (min-driver on the file: the imports, exact) and its run floor
 * (min-driver --run: the ABIs it called) must agree. cuCtxCreate_v4 is the 12050 ABI of
 * cuCtxCreate; after a cuInit that found no GPU it returns CUDA_ERROR_NOT_INITIALIZED (a NULL
 * params pointer crashes driver 555 before that check, so it gets a zeroed one). */
#include <stdio.h>

int cuDriverGetVersion(int *version);
int cuInit(unsigned int flags);
int cuCtxCreate_v4(void **ctx, void *params, unsigned int flags, int device);

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int v = 0;
    int r = cuDriverGetVersion(&v);
    printf("cuDriverGetVersion -> result %d version %d\n", r, v);
    printf("cuInit -> result %d\n", cuInit(0));
    void *ctx = NULL;
    char params[64] = {0};
    printf("cuCtxCreate_v4 -> result %d\n", cuCtxCreate_v4(&ctx, params, 0, 0));
    return 0;
}
