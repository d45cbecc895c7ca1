/* Loads the image in the file named by its argument (a fatbin, a cubin, PTX) through
 * libcuda.so.1's cuModuleLoadData (in front of tests/min-driver-run/loader.c). */
#include <stdio.h>
#include <stdlib.h>

int cuModuleLoadData(void **module, const void *image);

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    static char image[1 << 20];
    size_t n = fread(image, 1, sizeof image - 1, f);
    fclose(f);
    image[n] = 0;
    void *m = NULL;
    printf("cuModuleLoadData -> result %d\n", cuModuleLoadData(&m, image));
    return 0;
}
