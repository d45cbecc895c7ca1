/* Loads the image in the file named by its argument through libcuda.so.1's cuModuleLoad (in
 * front of tests/min-driver-run/loader.c): the driver reads the file, not the program. */
#include <stdio.h>

int cuModuleLoad(void **module, const char *fname);

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    void *m = NULL;
    printf("cuModuleLoad -> result %d\n", cuModuleLoad(&m, argv[1]));
    return 0;
}
