/* Times dlopen("libcuda.so.1"), dlsym and the first cuDriverGetVersion in one process (the
 * same program as `cargo xtask bench --only first-call`). */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(void) {
    double start = now();
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { printf("no libcuda.so.1: %s\n", dlerror()); return 1; }
    int (*version)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    int v = 0;
    int r = version ? version(&v) : -1;
    double took = now() - start;
    if (r != 0 || v <= 0) { printf("cuDriverGetVersion: %d %d\n", r, v); return 1; }
    printf("first-call-ms\t%.4f\n", took);
    return 0;
}
