/* cuLaunchKernelEx with a launch configuration and a launch attribute, as a C developer writes
 * it: the device's UUID, the kernel's attributes, then a launch at the context's greatest
 * stream priority. The C original of generated/examples/launch_ex_drv.rs (tests/tests/ports.rs
 * compares their code lines). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                        \
    do {                                                                   \
        CUresult err = (call);                                             \
        if (err != CUDA_SUCCESS) {                                         \
            const char *name = "unknown";                                  \
            cuGetErrorName(err, &name);                                    \
            fprintf(stderr, "%s failed: %s\n", #call, name);               \
            exit(EXIT_FAILURE);                                            \
        }                                                                  \
    } while (0)

/* out[i] = i * i for i < n. */
static const char *ptx =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry square(.param .u64 out, .param .u32 n)\n"
    "{\n"
    "    .reg .pred p;\n"
    "    .reg .b32 r<6>;\n"
    "    .reg .b64 rd<4>;\n"
    "    ld.param.u64 rd1, [out];\n"
    "    ld.param.u32 r1, [n];\n"
    "    mov.u32 r2, %ctaid.x;\n"
    "    mov.u32 r3, %ntid.x;\n"
    "    mov.u32 r4, %tid.x;\n"
    "    mad.lo.s32 r2, r2, r3, r4;\n"
    "    setp.ge.u32 p, r2, r1;\n"
    "    @p bra DONE;\n"
    "    cvta.to.global.u64 rd2, rd1;\n"
    "    mul.wide.u32 rd3, r2, 4;\n"
    "    add.s64 rd3, rd2, rd3;\n"
    "    mul.lo.s32 r5, r2, r2;\n"
    "    st.global.u32 [rd3], r5;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

int main(void) {
    unsigned int n = 50000;
    size_t bytes = n * sizeof(unsigned int);
    unsigned int *out = (unsigned int *)malloc(bytes);
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction square;
    CUdeviceptr d_out;
    CUuuid uuid;
    int max_threads, regs, least, greatest;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetUuid(&uuid, dev));
    printf("Device 0: GPU-");
    for (int i = 0; i < 16; i++) printf(i == 4 || i == 6 || i == 8 || i == 10 ? "-%02x" : "%02x", (unsigned char)uuid.bytes[i]);
    printf("\n");
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&module, ptx));
    CHECK(cuModuleGetFunction(&square, module, "square"));
    CHECK(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, square));
    CHECK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, square));
    printf("square: at most %d threads per block, %d registers per thread\n", max_threads, regs);
    CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
    CHECK(cuMemAlloc(&d_out, bytes));

    unsigned int block = max_threads < 256 ? max_threads : 256;
    CUlaunchAttribute attr = {0};
    attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attr.value.priority = greatest;
    CUlaunchConfig config = {0};
    config.gridDimX = (n + block - 1) / block;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = block;
    config.blockDimY = config.blockDimZ = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    void *args[] = {&d_out, &n};
    CHECK(cuLaunchKernelEx(&config, square, args, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(out, d_out, bytes));

    CHECK(cuMemFree(d_out));
    CHECK(cuModuleUnload(module));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    unsigned int wrong = 0;
    for (unsigned int i = 0; i < n; i++) wrong += out[i] != i * i;
    printf("launch_ex_drv: %u squares, %u wrong: Result = %s\n", n, wrong, wrong == 0 ? "PASS" : "FAIL");
    free(out);
    return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
