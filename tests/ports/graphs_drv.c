/* CUDA graphs with the driver API, as a C developer writes it: one graph recorded by stream
 * capture, one built by hand from kernel nodes. The C original of generated/examples/graphs_drv.rs
 * (tests/tests/ports.rs compares their code lines). */
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

/* x[i] = a * x[i] + b for i < n. */
static const char *ptx =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry affine(.param .u64 x, .param .f32 a, .param .f32 b, .param .u32 n)\n"
    "{\n"
    "    .reg .pred p;\n"
    "    .reg .b32 r<5>;\n"
    "    .reg .f32 f<5>;\n"
    "    .reg .b64 rd<5>;\n"
    "    ld.param.u64 rd1, [x];\n"
    "    ld.param.f32 f1, [a];\n"
    "    ld.param.f32 f2, [b];\n"
    "    ld.param.u32 r1, [n];\n"
    "    mov.u32 r2, %ctaid.x;\n"
    "    mov.u32 r3, %ntid.x;\n"
    "    mov.u32 r4, %tid.x;\n"
    "    mad.lo.s32 r2, r2, r3, r4;\n"
    "    setp.ge.u32 p, r2, r1;\n"
    "    @p bra DONE;\n"
    "    cvta.to.global.u64 rd2, rd1;\n"
    "    mul.wide.u32 rd3, r2, 4;\n"
    "    add.s64 rd4, rd2, rd3;\n"
    "    ld.global.f32 f3, [rd4];\n"
    "    fma.rn.f32 f4, f3, f1, f2;\n"
    "    st.global.f32 [rd4], f4;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

int main(void) {
    unsigned int n = 50000;
    size_t bytes = n * sizeof(float);
    float *h = (float *)malloc(bytes);
    for (unsigned int i = 0; i < n; i++) h[i] = (float)i;
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction affine;
    CUdeviceptr d;
    CUstream stream;
    CUgraph captured, built;
    CUgraphExec captured_exec, built_exec;
    CUgraphNode first, second;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&module, ptx));
    CHECK(cuModuleGetFunction(&affine, module, "affine"));
    CHECK(cuMemAlloc(&d, bytes));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    unsigned int blocks = (n + 255) / 256;

    /* Captured: copy in, x = 2x + 1, copy out. */
    float a = 2.0f, b = 1.0f;
    void *args[] = {&d, &a, &b, &n};
    CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemcpyHtoDAsync(d, h, bytes, stream));
    CHECK(cuLaunchKernel(affine, blocks, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    CHECK(cuMemcpyDtoHAsync(h, d, bytes, stream));
    CHECK(cuStreamEndCapture(stream, &captured));
    CHECK(cuGraphInstantiate(&captured_exec, captured, 0));
    CHECK(cuGraphLaunch(captured_exec, stream));
    CHECK(cuStreamSynchronize(stream));
    unsigned int wrong = 0;
    for (unsigned int i = 0; i < n; i++) wrong += h[i] != 2.0f * i + 1.0f;

    /* Built by hand: x = x - 1, then x = 0.5x: back to i. */
    float one = 1.0f, minus_one = -1.0f, half = 0.5f, zero = 0.0f;
    void *sub_args[] = {&d, &one, &minus_one, &n};
    void *half_args[] = {&d, &half, &zero, &n};
    CUDA_KERNEL_NODE_PARAMS node = {0};
    node.func = affine;
    node.gridDimX = blocks;
    node.gridDimY = node.gridDimZ = 1;
    node.blockDimX = 256;
    node.blockDimY = node.blockDimZ = 1;
    CHECK(cuGraphCreate(&built, 0));
    node.kernelParams = sub_args;
    CHECK(cuGraphAddKernelNode(&first, built, NULL, 0, &node));
    node.kernelParams = half_args;
    CHECK(cuGraphAddKernelNode(&second, built, &first, 1, &node));
    CHECK(cuGraphInstantiate(&built_exec, built, CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY));
    CHECK(cuGraphLaunch(built_exec, stream));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuMemcpyDtoH(h, d, bytes));
    for (unsigned int i = 0; i < n; i++) wrong += h[i] != (float)i;

    CHECK(cuGraphExecDestroy(built_exec));
    CHECK(cuGraphExecDestroy(captured_exec));
    CHECK(cuGraphDestroy(built));
    CHECK(cuGraphDestroy(captured));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuMemFree(d));
    CHECK(cuModuleUnload(module));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(h);
    printf("graphs_drv: %u values, %u wrong: Result = %s\n", n, wrong, wrong == 0 ? "PASS" : "FAIL");
    return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
