/* Opens the driver by the absolute path given (dlopen of a path: no search, so a stand-in first
 * on LD_LIBRARY_PATH is passed over) and asks its version: a run min-driver --run cannot observe,
 * and must say so. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "opens_path: %s\n", dlerror());
        return 3;
    }
    int (*version)(int *) = (int (*)(int *))dlsym(lib, "cuDriverGetVersion");
    int v = 0;
    int r = version ? version(&v) : -1;
    printf("cuDriverGetVersion -> result %d version %d\n", r, v);
    return 0;
}
