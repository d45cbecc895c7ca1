/* Asks the driver (through cuda.h's cuGetProcAddress, the _v2) for entries newer than it: a
   symbol CUDA 13.1 added (cuGraphGetId) and an ABI 13.1 added to an older symbol
   (cuLaunchHostFunc_v13010), each at the version that introduced it and at 13000. Prints what
   came back; with a stand-in in front the lines must be the same. */
#include <cuda.h>
#include <stdio.h>
static void ask(const char *symbol, int version) {
    void *p = 0; CUdriverProcAddressQueryResult status = 7;
    CUresult r = cuGetProcAddress(symbol, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    printf("cuGetProcAddress(%s, %d): result %d, status %d, pointer %s\n", symbol, version, r, status, p ? "set" : "NULL");
}
int main(void) {
    int v = 0;
    printf("cuInit %d\n", cuInit(0));
    /* One call per statement: C leaves the order of a call's arguments open. */
    CUresult r = cuDriverGetVersion(&v);
    printf("cuDriverGetVersion %d: %d\n", r, v);
    ask("cuGraphGetId", 13010);
    ask("cuGraphGetId", 13000);
    ask("cuLaunchHostFunc", 13010);
    ask("cuLaunchHostFunc", 13000);
    return 0;
}
