/* vectorAddMMAP with stream-ordered allocation, as a C developer writes it: the inputs in
 * memory mapped with the virtual memory management calls, the output from the device's
 * default pool, freed in stream order. The C original of
 * generated/examples/vector_add_mmap_drv.rs (tests/tests/ports.rs compares their code lines). */
#include <cuda.h>
#include <math.h>
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

/* c[i] = a[i] + b[i] for i < n. */
static const char *ptx =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry vecAdd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
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
    "    setp.ge.u32 p, r2, r1;\n"
    "    @p bra DONE;\n"
    "    cvta.to.global.u64 rd4, rd1;\n"
    "    cvta.to.global.u64 rd5, rd2;\n"
    "    cvta.to.global.u64 rd6, rd3;\n"
    "    mul.wide.u32 rd7, r2, 4;\n"
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

/* Reserves an address range of `size` bytes, backs it with memory of `prop` and lets the
 * device read and write it. */
static CUdeviceptr alloc_mapped(size_t size, const CUmemAllocationProp *prop) {
    CUdeviceptr ptr;
    CUmemGenericAllocationHandle handle;
    CHECK(cuMemAddressReserve(&ptr, size, 0, 0, 0));
    CHECK(cuMemCreate(&handle, size, prop, 0));
    CHECK(cuMemMap(ptr, size, 0, handle, 0));
    CHECK(cuMemRelease(handle));
    CUmemAccessDesc access = {0};
    access.location = prop->location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemSetAccess(ptr, size, &access, 1));
    return ptr;
}

int main(void) {
    unsigned int n = 50000;
    size_t bytes = n * sizeof(float);
    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    for (unsigned int i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * i;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction kernel;
    CUstream stream;
    CUmemoryPool pool;
    CUdeviceptr d_c;
    int vmm = 0;
    size_t granularity = 0;
    cuuint64_t used_high = 0;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
    if (!vmm) {
        printf("vector_add_mmap_drv: device 0 has no virtual memory management: Result = WAIVED\n");
        return EXIT_SUCCESS;
    }
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&module, ptx));
    CHECK(cuModuleGetFunction(&kernel, module, "vecAdd"));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CHECK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t size = (bytes + granularity - 1) / granularity * granularity;
    CUdeviceptr d_a = alloc_mapped(size, &prop);
    CUdeviceptr d_b = alloc_mapped(size, &prop);
    CHECK(cuMemAllocAsync(&d_c, bytes, stream));

    CHECK(cuMemcpyHtoDAsync(d_a, a, bytes, stream));
    CHECK(cuMemcpyHtoDAsync(d_b, b, bytes, stream));
    void *args[] = {&d_a, &d_b, &d_c, &n};
    CHECK(cuLaunchKernel(kernel, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    CHECK(cuMemcpyDtoHAsync(c, d_c, bytes, stream));
    CHECK(cuMemFreeAsync(d_c, stream));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuDeviceGetDefaultMemPool(&pool, dev));
    CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &used_high));

    CHECK(cuMemUnmap(d_a, size));
    CHECK(cuMemUnmap(d_b, size));
    CHECK(cuMemAddressFree(d_a, size));
    CHECK(cuMemAddressFree(d_b, size));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuModuleUnload(module));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    unsigned int wrong = 0;
    for (unsigned int i = 0; i < n; i++) wrong += !(fabsf(c[i] - (a[i] + b[i])) <= 1e-5f * fabsf(c[i]));
    int ok = wrong == 0 && used_high >= bytes;
    printf("vector_add_mmap_drv: %u sums, %u wrong, pool high-water mark %llu bytes: Result = %s\n", n, wrong,
           (unsigned long long)used_high, ok ? "PASS" : "FAIL");
    free(a);
    free(b);
    free(c);
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
