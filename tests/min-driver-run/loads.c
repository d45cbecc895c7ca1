/* Loads a PTX image of ISA 8.5 through libcuda.so.1's cuModuleLoadData (in front of
 * tests/min-driver-run/loader.c): its run floor is the release that JIT-compiles it. */
#include <stdio.h>

int cuModuleLoadData(void **module, const void *image);

static const char PTX[] = ".version 8.5\n.target sm_90\n.address_size 64\n\n.visible .entry k() { ret; }\n";

int main(void) {
    void *m = NULL;
    printf("cuModuleLoadData -> result %d\n", cuModuleLoadData(&m, PTX));
    return 0;
}
