/* Adds a PTX image of ISA 8.5 to a link through libcuda.so.1's cuLinkAddData_v2 (in front of
 * tests/min-driver-run/loader.c), with its size: the stand-in judges it before the driver sees it. */
#include <stdio.h>
#include <string.h>

int cuLinkAddData_v2(void *state, int type, void *data, unsigned long size, const char *name, unsigned n, void *o,
                     void *v);

static char PTX[] = ".version 8.5\n.target sm_90\n.address_size 64\n\n.visible .entry k() { ret; }\n";

int main(void) {
    /* CU_JIT_INPUT_PTX is 1; the state is the driver's business (the loader takes any). */
    int r = cuLinkAddData_v2((void *)1, 1, PTX, strlen(PTX) + 1, "k.ptx", 0, NULL, NULL);
    printf("cuLinkAddData -> result %d\n", r);
    return 0;
}
