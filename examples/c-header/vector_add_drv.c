/* NVIDIA's vectorAddDrv sample (C = A + B through the driver API, the kernel as PTX), with every
 * driver function taken through cuda_pfn.h: opened with cuda_pfn_driver_open (nothing links
 * libcuda), each function got by cuda.h's own name (cuda_pfn_get_cuMemAlloc is the ABI this cuda.h
 * means by cuMemAlloc, asked for at exactly its version), each failure said with
 * CUDA_PFN_ERROR_STRING. Built by tests/tests/c_header.rs with gcc and clang, and with nvcc on the
 * GPU machine (.device-bin/h49/run.sh), where it prints `Result = PASS`. */
#include "cuda_pfn.h"

#include <stdio.h>
#include <stdlib.h>

/* c = a + b for i < n. */
static const char *ptx =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry VecAdd_kernel(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
    "{\n"
    "    .reg .pred p;\n"
    "    .reg .b32 r<5>;\n"
    "    .reg .f32 f<4>;\n"
    "    .reg .b64 rd<11>;\n"
    "    ld.param.u64 rd1, [a];\n"
    "    ld.param.u64 rd2, [b];\n"
    "    ld.param.u64 rd3, [c];\n"
    "    ld.param.u32 r1, [n];\n"
    "    mov.u32 r2, %ctaid.x;\n"
    "    mov.u32 r3, %ntid.x;\n"
    "    mov.u32 r4, %tid.x;\n"
    "    mad.lo.s32 r2, r2, r3, r4;\n"
    "    setp.ge.s32 p, r2, r1;\n"
    "    @p bra DONE;\n"
    "    cvta.to.global.u64 rd4, rd1;\n"
    "    cvta.to.global.u64 rd5, rd2;\n"
    "    cvta.to.global.u64 rd6, rd3;\n"
    "    mul.wide.s32 rd7, r2, 4;\n"
    "    add.s64 rd8, rd4, rd7;\n"
    "    add.s64 rd9, rd5, rd7;\n"
    "    add.s64 rd10, rd6, rd7;\n"
    "    ld.global.f32 f1, [rd8];\n"
    "    ld.global.f32 f2, [rd9];\n"
    "    add.f32 f3, f1, f2;\n"
    "    st.global.f32 [rd10], f3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

static cuda_pfn_driver driver;

/* A driver function by cuda.h's name, or the reason it is not there, and exit. */
#define GET(name, out)                                                                          \
    do {                                                                                        \
        CUresult got_ = cuda_pfn_get_##name(&driver, &(out));                                   \
        if (got_ != CUDA_SUCCESS) {                                                             \
            char why_[512];                                                                     \
            fprintf(stderr, "%s\n", CUDA_PFN_ERROR_STRING(why_, sizeof why_, &driver, name, got_)); \
            exit(EXIT_FAILURE);                                                                 \
        }                                                                                       \
    } while (0)

#define CHECK(call)                                                             \
    do {                                                                        \
        CUresult err_ = (call);                                                 \
        if (err_ != CUDA_SUCCESS) {                                             \
            const char *name_ = "unknown";                                      \
            if (f.cuGetErrorName != NULL) f.cuGetErrorName(err_, &name_);       \
            fprintf(stderr, "%s failed: %s (%d)\n", #call, name_, (int)err_);   \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

/* The functions this program calls, each with the type of the ABI it was got at. */
static struct {
    cuda_pfn_PFN_cuGetErrorName cuGetErrorName;
    cuda_pfn_PFN_cuInit cuInit;
    cuda_pfn_PFN_cuDeviceGet cuDeviceGet;
    cuda_pfn_PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
    cuda_pfn_PFN_cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease;
    cuda_pfn_PFN_cuCtxSetCurrent cuCtxSetCurrent;
    cuda_pfn_PFN_cuModuleLoadData cuModuleLoadData;
    cuda_pfn_PFN_cuModuleGetFunction cuModuleGetFunction;
    cuda_pfn_PFN_cuModuleUnload cuModuleUnload;
    cuda_pfn_PFN_cuMemAlloc cuMemAlloc;
    cuda_pfn_PFN_cuMemFree cuMemFree;
    cuda_pfn_PFN_cuMemcpyHtoD cuMemcpyHtoD;
    cuda_pfn_PFN_cuMemcpyDtoH cuMemcpyDtoH;
    cuda_pfn_PFN_cuLaunchKernel cuLaunchKernel;
    cuda_pfn_PFN_cuCtxSynchronize cuCtxSynchronize;
} f;

int main(void) {
    int n = 50000;
    size_t bytes = (size_t)n * sizeof(float);
    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction vec_add;
    CUdeviceptr d_a, d_b, d_c;
    CUresult opened = cuda_pfn_driver_open(&driver);
    int i, wrong = 0;
    if (opened != CUDA_SUCCESS) {
        char why[512];
        fprintf(stderr, "%s\n", cuda_pfn_error_string(why, sizeof why, NULL, "the driver", 0, 1, opened));
        return EXIT_FAILURE;
    }
    printf("Vector Addition (Driver API, cuda_pfn.h): driver CUDA %d.%d\n", driver.version / 1000,
           driver.version % 1000 / 10);
    GET(cuGetErrorName, f.cuGetErrorName);
    GET(cuInit, f.cuInit);
    GET(cuDeviceGet, f.cuDeviceGet);
    GET(cuDevicePrimaryCtxRetain, f.cuDevicePrimaryCtxRetain);
    GET(cuDevicePrimaryCtxRelease, f.cuDevicePrimaryCtxRelease);
    GET(cuCtxSetCurrent, f.cuCtxSetCurrent);
    GET(cuModuleLoadData, f.cuModuleLoadData);
    GET(cuModuleGetFunction, f.cuModuleGetFunction);
    GET(cuModuleUnload, f.cuModuleUnload);
    GET(cuMemAlloc, f.cuMemAlloc);
    GET(cuMemFree, f.cuMemFree);
    GET(cuMemcpyHtoD, f.cuMemcpyHtoD);
    GET(cuMemcpyDtoH, f.cuMemcpyDtoH);
    GET(cuLaunchKernel, f.cuLaunchKernel);
    GET(cuCtxSynchronize, f.cuCtxSynchronize);
    printf("cuMemAlloc is %s (version %d), cuLaunchKernel %s (version %d)\n", CUDA_PFN_NAME(cuMemAlloc),
           CUDA_PFN_VERSION(cuMemAlloc), CUDA_PFN_NAME(cuLaunchKernel), CUDA_PFN_VERSION(cuLaunchKernel));

    for (i = 0; i < n; i++) {
        a[i] = (float)rand() / (float)RAND_MAX;
        b[i] = (float)rand() / (float)RAND_MAX;
    }
    CHECK(f.cuInit(0));
    CHECK(f.cuDeviceGet(&dev, 0));
    CHECK(f.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(f.cuCtxSetCurrent(ctx));
    CHECK(f.cuModuleLoadData(&module, ptx));
    CHECK(f.cuModuleGetFunction(&vec_add, module, "VecAdd_kernel"));
    CHECK(f.cuMemAlloc(&d_a, bytes));
    CHECK(f.cuMemAlloc(&d_b, bytes));
    CHECK(f.cuMemAlloc(&d_c, bytes));
    CHECK(f.cuMemcpyHtoD(d_a, a, bytes));
    CHECK(f.cuMemcpyHtoD(d_b, b, bytes));
    {
        unsigned int block = 256, grid = ((unsigned int)n + block - 1) / block;
        void *args[4];
        args[0] = &d_a;
        args[1] = &d_b;
        args[2] = &d_c;
        args[3] = &n;
        CHECK(f.cuLaunchKernel(vec_add, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL));
    }
    CHECK(f.cuCtxSynchronize());
    CHECK(f.cuMemcpyDtoH(c, d_c, bytes));
    for (i = 0; i < n; i++) {
        float want = a[i] + b[i], d = c[i] - want;
        wrong += d > 1e-5f || d < -1e-5f;
    }
    CHECK(f.cuMemFree(d_a));
    CHECK(f.cuMemFree(d_b));
    CHECK(f.cuMemFree(d_c));
    CHECK(f.cuModuleUnload(module));
    CHECK(f.cuDevicePrimaryCtxRelease(dev));
    free(a);
    free(b);
    free(c);
    printf("%d elements, %d wrong: Result = %s\n", n, wrong, wrong == 0 ? "PASS" : "FAIL");
    return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
