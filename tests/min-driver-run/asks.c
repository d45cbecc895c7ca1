/* What a program asks the driver for, for `min-driver --run` (tests/tests/min_driver_runs.rs):
 * loads libcuda.so.1 by its name, asks cuGetProcAddress_v2 for each request of the file given
 * ("symbol version flags" a line), and prints each answer: the result, the status and the
 * name of the function handed out (dladdr), so that two drivers' answers can be compared line
 * by line. Then calls cuDriverGetVersion and prints what it says. Never passes a NULL pfn. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*get_proc_t)(const char *, void **, int, unsigned long long, int *);
typedef int (*version_t)(int *);

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: asks FILE (a request a line: symbol version flags)\n");
        return 2;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "asks: %s\n", dlerror());
        return 3;
    }
    get_proc_t get = (get_proc_t)dlsym(lib, "cuGetProcAddress_v2");
    version_t version = (version_t)dlsym(lib, "cuDriverGetVersion");
    FILE *f = fopen(argv[1], "r");
    if (!f || !get || !version) {
        fprintf(stderr, "asks: no %s\n", !f ? argv[1] : "lookup function");
        return 3;
    }
    char symbol[256];
    int v;
    unsigned long long flags;
    while (fscanf(f, "%255s %d %llu", symbol, &v, &flags) == 3) {
        void *pfn = NULL;
        int status = -1;
        int r = get(symbol, &pfn, v, flags, &status);
        Dl_info info;
        const char *name = "NULL";
        if (pfn) name = dladdr(pfn, &info) && info.dli_sname ? info.dli_sname : "unnamed";
        printf("%s %d %llu -> result %d status %d %s\n", symbol, v, flags, r, status, name);
    }
    fclose(f);
    int said = 0;
    int r = version(&said);
    printf("cuDriverGetVersion -> result %d version %d\n", r, said);
    return 0;
}
