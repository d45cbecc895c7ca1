/* Loads each image named on the command line on the GPU, from memory (cuModuleLoadData) and from
 * the file (cuModuleLoad), and prints each result: under min-driver --run --as-driver, an image
 * the older driver cannot load fails with its error (222, 209), and loads at the floor. */
#include <stdio.h>
#include <stdlib.h>
int cuInit(unsigned int);
int cuDeviceGet(int *, int);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxSetCurrent(void *);
int cuModuleLoad(void **, const char *);
int cuModuleLoadData(void **, const void *);
int cuModuleUnload(void *);
int main(int argc, char **argv) {
    int dev = 0; void *ctx = 0;
    int r0 = cuInit(0), r1 = cuDeviceGet(&dev, 0), r2 = cuDevicePrimaryCtxRetain(&ctx, dev), r3 = cuCtxSetCurrent(ctx);
    printf("cuInit %d cuDeviceGet %d retain %d set %d\n", r0, r1, r2, r3);
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) { printf("%s: no file\n", argv[i]); continue; }
        static char image[1 << 24];
        size_t n = fread(image, 1, sizeof image - 1, f);
        fclose(f);
        image[n] = 0;
        void *m = 0;
        int rd = cuModuleLoadData(&m, image);
        if (rd == 0) cuModuleUnload(m);
        m = 0;
        int rf = cuModuleLoad(&m, argv[i]);
        if (rf == 0) cuModuleUnload(m);
        const char *base = argv[i];
        for (const char *p = argv[i]; *p; p++) if (*p == '/') base = p + 1;
        printf("%s: cuModuleLoadData %d, cuModuleLoad %d\n", base, rd, rf);
    }
    return 0;
}
