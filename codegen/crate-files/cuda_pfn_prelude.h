
#ifndef CUDA_PFN_H
#define CUDA_PFN_H

#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if !defined(CUDA_PFN_NO_DRIVER_OPEN)
#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif
#endif

#if !defined(CUDA_VERSION) || CUDA_VERSION < @OLDEST@
#error "cuda_pfn.h needs the cuda.h of CUDA @OLDEST_TEXT@ or later (the oldest toolkit it was generated from)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a getter answers besides CUDA_SUCCESS, as cuda.h's codes (CUDA_PFN_ERROR_STRING says
   more). */
/* No driver: the cuda_pfn_driver is NULL or was never made (CUDA_ERROR_NOT_INITIALIZED). */
#define CUDA_PFN_ERROR_NO_DRIVER ((CUresult)3)
/* The ABI is newer than the driver: refused before the driver was asked
   (CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36, which cuda.h names from CUDA 12.0 on). */
#define CUDA_PFN_ERROR_DRIVER_TOO_OLD ((CUresult)36)
/* The driver does not have the ABI: no such symbol, or not at this version
   (CUDA_ERROR_NOT_FOUND). */
#define CUDA_PFN_ERROR_NOT_IN_DRIVER ((CUresult)500)
/* The driver answered success with a NULL pointer or a status no driver gives
   (CUDA_ERROR_UNKNOWN). */
#define CUDA_PFN_ERROR_BAD_ANSWER ((CUresult)999)
/* A NULL `out` (CUDA_ERROR_INVALID_VALUE). */
#define CUDA_PFN_ERROR_INVALID_VALUE ((CUresult)1)

/* The driver's lookup functions, as this header calls them. The status is an `int`: cuda.h's
   CUdriverProcAddressQueryResult is an enum (from CUDA 12.0 on) of the same size. */
typedef CUresult (CUDAAPI *cuda_pfn_get_proc_address_v2_fn)(const char *symbol, void **pfn, int cudaVersion,
                                                            cuuint64_t flags, int *symbolStatus);
typedef CUresult (CUDAAPI *cuda_pfn_get_proc_address_fn)(const char *symbol, void **pfn, int cudaVersion,
                                                         cuuint64_t flags);
typedef CUresult (CUDAAPI *cuda_pfn_driver_get_version_fn)(int *driverVersion);

/* A driver to ask: made by cuda_pfn_driver_open, cuda_pfn_driver_from_library,
   cuda_pfn_driver_from_get_proc_address(_v2) or cuda_pfn_driver_from_linked. A value; getters
   only read it. */
typedef struct cuda_pfn_driver {
    /* cuGetProcAddress_v2 (drivers of CUDA 12.0 and later), else NULL. */
    cuda_pfn_get_proc_address_v2_fn get_proc_address_v2;
    /* The 4-argument cuGetProcAddress (drivers of CUDA 11.3 to 11.8), used without the above. */
    cuda_pfn_get_proc_address_fn get_proc_address;
    /* A driver without either (before CUDA 11.3), opened by this header: each ABI is the
       library's export of its exported name. NULL otherwise. */
    void *(*symbol_of)(void *library, const char *name);
    void *library;
    /* cuDriverGetVersion's answer (12040 for CUDA 12.4). */
    int version;
} cuda_pfn_driver;

/* A record (the Rust crate's EntryRecord, 160 bytes) that `cuda-sys-gen min-driver` reads. */
typedef struct cuda_pfn_record {
    unsigned char magic[8];
    unsigned char layout, how, flags, abis;
    unsigned int version, floor, high;
    char symbol[64];
    char exported[64];
    unsigned int check, reserved;
} cuda_pfn_record;
typedef char cuda_pfn_record_size_check_[sizeof(cuda_pfn_record) == 160 ? 1 : -1];
typedef char cuda_pfn_pointer_size_check_[sizeof(void (*)(void)) == sizeof(void *) ? 1 : -1];

/* The ABI of `r` from `d`, under the rules above; *out NULL unless CUDA_SUCCESS. */
static inline CUresult cuda_pfn_lookup_(const cuda_pfn_driver *d, const cuda_pfn_record *r, void **out) {
    void *p = NULL;
    int status = -1; /* unset: whether the driver wrote it */
    CUresult res;
    *out = NULL;
    if (d == NULL) {
        return CUDA_PFN_ERROR_NO_DRIVER;
    }
    /* Drivers before CUDA 13.0 asked for a version above their own answer with an older ABI. */
    if (d->version != 0 && r->version > (unsigned int)d->version) {
        return CUDA_PFN_ERROR_DRIVER_TOO_OLD;
    }
    if (d->get_proc_address_v2 != NULL) {
        res = d->get_proc_address_v2(r->symbol, &p, (int)r->version, (cuuint64_t)r->flags, &status);
        if (status == 1 || status == 2 || res == CUDA_ERROR_NOT_FOUND) {
            return CUDA_PFN_ERROR_NOT_IN_DRIVER;
        }
        if (res != CUDA_SUCCESS) {
            return res;
        }
        if (status != 0 && status != -1) {
            return CUDA_PFN_ERROR_BAD_ANSWER;
        }
    } else if (d->get_proc_address != NULL) {
        res = d->get_proc_address(r->symbol, &p, (int)r->version, (cuuint64_t)r->flags);
        if (res == CUDA_ERROR_NOT_FOUND) {
            return CUDA_PFN_ERROR_NOT_IN_DRIVER;
        }
        if (res != CUDA_SUCCESS) {
            return res;
        }
    } else if (d->symbol_of != NULL && d->library != NULL) {
        p = d->symbol_of(d->library, r->exported);
        if (p == NULL) {
            return CUDA_PFN_ERROR_NOT_IN_DRIVER;
        }
    } else {
        return CUDA_PFN_ERROR_NO_DRIVER;
    }
    if (p == NULL) {
        return CUDA_PFN_ERROR_BAD_ANSWER;
    }
    *out = p;
    return CUDA_SUCCESS;
}

/* The driver's version through its own lookup: cuDriverGetVersion's only ABI (CUDA 2.2). */
static inline CUresult cuda_pfn_read_version_(cuda_pfn_driver *d, cuda_pfn_driver_get_version_fn get_version) {
    /* No record (no magic): the header's own lookup, not the program's. */
    static const cuda_pfn_record record = {{0, 0, 0, 0, 0, 0, 0, 0}, 1, 1, 1, 1, 2020u, 2020u,
                                           2020u, "cuDriverGetVersion", "cuDriverGetVersion", 0u, 0u};
    void *p = NULL;
    CUresult res;
    int v = 0;
    if (get_version == NULL) {
        d->version = 0; /* asks with any version while it is read */
        res = cuda_pfn_lookup_(d, &record, &p);
        if (res != CUDA_SUCCESS) {
            return res;
        }
        memcpy(&get_version, &p, sizeof p);
    }
    res = get_version(&v);
    if (res != CUDA_SUCCESS) {
        return res;
    }
    if (v <= 0) {
        return CUDA_PFN_ERROR_BAD_ANSWER;
    }
    d->version = v;
    return CUDA_SUCCESS;
}

/* A driver from the cuGetProcAddress_v2 (CUDA 12.0 and later) the program has: its version is
   read through it. */
static inline CUresult cuda_pfn_driver_from_get_proc_address_v2(cuda_pfn_driver *d, void (*get_proc_address_v2)(void)) {
    if (d == NULL || get_proc_address_v2 == NULL) {
        return CUDA_PFN_ERROR_INVALID_VALUE;
    }
    memset(d, 0, sizeof *d);
    d->get_proc_address_v2 = (cuda_pfn_get_proc_address_v2_fn)get_proc_address_v2;
    return cuda_pfn_read_version_(d, NULL);
}

/* A driver from the 4-argument cuGetProcAddress (CUDA 11.3 to 11.8) the program has. */
static inline CUresult cuda_pfn_driver_from_get_proc_address(cuda_pfn_driver *d, void (*get_proc_address)(void)) {
    if (d == NULL || get_proc_address == NULL) {
        return CUDA_PFN_ERROR_INVALID_VALUE;
    }
    memset(d, 0, sizeof *d);
    d->get_proc_address = (cuda_pfn_get_proc_address_fn)get_proc_address;
    return cuda_pfn_read_version_(d, NULL);
}

/* A driver from the libcuda the program links: its cuGetProcAddress (the _v2 one with a cuda.h of
   CUDA 12.0 or later) and cuDriverGetVersion. Only a program that calls this links libcuda. */
static inline CUresult cuda_pfn_driver_from_linked(cuda_pfn_driver *d) {
    if (d == NULL) {
        return CUDA_PFN_ERROR_INVALID_VALUE;
    }
    memset(d, 0, sizeof *d);
#if CUDA_VERSION >= 12000
    d->get_proc_address_v2 = (cuda_pfn_get_proc_address_v2_fn)(void (*)(void))cuGetProcAddress_v2;
#else
    d->get_proc_address = (cuda_pfn_get_proc_address_fn)(void (*)(void))cuGetProcAddress;
#endif
    return cuda_pfn_read_version_(d, cuDriverGetVersion);
}

#if !defined(CUDA_PFN_NO_DRIVER_OPEN)
/* The library's export `name` (dlsym, GetProcAddress). */
static inline void *cuda_pfn_symbol_of_(void *library, const char *name) {
    void *p = NULL;
#if defined(_WIN32)
    FARPROC f = GetProcAddress((HMODULE)library, name);
    memcpy(&p, &f, sizeof p);
#else
    p = dlsym(library, name);
#endif
    return p;
}

/* A driver from a library the program opened itself (dlopen, LoadLibrary): cuGetProcAddress_v2,
   else the 4-argument cuGetProcAddress, else (drivers before CUDA 11.3) its exports; and its
   version. CUDA_PFN_ERROR_NO_DRIVER where it is no CUDA driver. */
static inline CUresult cuda_pfn_driver_from_library(cuda_pfn_driver *d, void *library) {
    void *p;
    cuda_pfn_driver_get_version_fn get_version = NULL;
    if (d == NULL || library == NULL) {
        return CUDA_PFN_ERROR_INVALID_VALUE;
    }
    memset(d, 0, sizeof *d);
    d->library = library;
    p = cuda_pfn_symbol_of_(library, "cuGetProcAddress_v2");
    memcpy(&d->get_proc_address_v2, &p, sizeof p);
    if (p == NULL) {
        p = cuda_pfn_symbol_of_(library, "cuGetProcAddress");
        memcpy(&d->get_proc_address, &p, sizeof p);
    }
    p = cuda_pfn_symbol_of_(library, "cuDriverGetVersion");
    memcpy(&get_version, &p, sizeof p);
    if (d->get_proc_address_v2 == NULL && d->get_proc_address == NULL) {
        if (get_version == NULL) {
            return CUDA_PFN_ERROR_NO_DRIVER;
        }
        d->symbol_of = cuda_pfn_symbol_of_;
    }
    return cuda_pfn_read_version_(d, get_version);
}

/* The CUDA driver, by name as the Rust crate loads it: libcuda.so.1, then libcuda.so, from the
   loader's search path (Linux); nvcuda.dll from System32 only (Windows). Never from the working
   directory. Never closed. CUDA_PFN_ERROR_NO_DRIVER where there is none. */
static inline CUresult cuda_pfn_driver_open(cuda_pfn_driver *d) {
    void *library;
    if (d == NULL) {
        return CUDA_PFN_ERROR_INVALID_VALUE;
    }
    memset(d, 0, sizeof *d);
#if defined(_WIN32)
    library = (void *)LoadLibraryExA("nvcuda.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
#else
    library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) {
        library = dlopen("libcuda.so", RTLD_LAZY | RTLD_LOCAL);
    }
#endif
    if (library == NULL) {
        return CUDA_PFN_ERROR_NO_DRIVER;
    }
    return cuda_pfn_driver_from_library(d, library);
}
#endif

/* Why a getter answered `result`, as text in `buf` (at most `size` bytes, NUL included):
   naming the ABI, the version asked and the driver's. Returns `buf`. Use it as
   CUDA_PFN_ERROR_STRING(buf, size, &d, cuCtxCreate_v12050, result) (or a cuda.h name). */
static inline const char *cuda_pfn_error_string(char *buf, size_t size, const cuda_pfn_driver *d, const char *abi,
                                                unsigned int version, unsigned int flags, CUresult result) {
    int dv = d != NULL ? d->version : 0;
    const char *stream = flags == 2 ? "per-thread default stream" : "legacy stream";
    if (buf == NULL || size == 0) {
        return buf;
    }
    switch ((int)result) {
    case 0:
        snprintf(buf, size, "%s (version %u, %s): found in the driver (CUDA %d.%d)", abi, version, stream, dv / 1000,
                 dv % 1000 / 10);
        break;
    case 3:
        snprintf(buf, size,
                 "%s (version %u): no driver: the cuda_pfn_driver is NULL or holds no lookup function, or no CUDA "
                 "driver library could be opened (libcuda.so.1, nvcuda.dll); install NVIDIA's driver",
                 abi, version);
        break;
    case 36:
        snprintf(buf, size,
                 "%s (version %u, CUDA %u.%u) was not asked for: the driver is CUDA %d.%d (%d), older than the ABI, "
                 "and a driver before CUDA 13.0 would answer with an older ABI of another signature; install a "
                 "driver of CUDA %u.%u or later, or get an older ABI of the symbol",
                 abi, version, version / 1000, version % 1000 / 10, dv / 1000, dv % 1000 / 10, dv, version / 1000,
                 version % 1000 / 10);
        break;
    case 500:
        snprintf(buf, size,
                 "%s (version %u, %s): the driver (CUDA %d.%d, %d) does not have it: no such symbol, or none at "
                 "this version",
                 abi, version, stream, dv / 1000, dv % 1000 / 10, dv);
        break;
    case 999:
        snprintf(buf, size,
                 "%s (version %u, %s): the driver (CUDA %d.%d, %d) answered success with a NULL pointer or an "
                 "unknown status, or failed with CUDA_ERROR_UNKNOWN: not used",
                 abi, version, stream, dv / 1000, dv % 1000 / 10, dv);
        break;
    case 1:
        snprintf(buf, size,
                 "%s (version %u, %s): an invalid argument (a NULL out pointer), or the driver (CUDA %d.%d) "
                 "refused the request as invalid",
                 abi, version, stream, dv / 1000, dv % 1000 / 10);
        break;
    default:
        snprintf(buf, size, "%s (version %u, %s): cuGetProcAddress of the driver (CUDA %d.%d) failed with code %d",
                 abi, version, stream, dv / 1000, dv % 1000 / 10, (int)result);
        break;
    }
    return buf;
}
/* The ABI a name stands for (cuCtxCreate_v12050, or a cuda.h name: cuCtxCreate), its version
   and its flags, as constants: CUDA_PFN_VERSION(cuCtxCreate). */
#define CUDA_PFN_VERSION(name) CUDA_PFN_VERSION_OF_(cuda_pfn_abi_##name)
#define CUDA_PFN_VERSION_OF_(abi) CUDA_PFN_PASTE_(CUDA_PFN_VERSION_, abi)
#define CUDA_PFN_FLAGS(name) CUDA_PFN_FLAGS_OF_(cuda_pfn_abi_##name)
#define CUDA_PFN_FLAGS_OF_(abi) CUDA_PFN_PASTE_(CUDA_PFN_FLAGS_, abi)
#define CUDA_PFN_PASTE_(a, b) a##b
/* The ABI's name as a string: CUDA_PFN_NAME(cuCtxCreate) is "cuCtxCreate_v12050" under 13.x's cuda.h. */
#define CUDA_PFN_NAME(name) CUDA_PFN_NAME_OF_(cuda_pfn_abi_##name)
#define CUDA_PFN_NAME_OF_(abi) CUDA_PFN_STRING_(abi)
#define CUDA_PFN_STRING_(abi) #abi
#define CUDA_PFN_ERROR_STRING(buf, size, d, name, result)                                                              \
    CUDA_PFN_ERROR_STRING_OF_(buf, size, d, cuda_pfn_abi_##name, result)
#define CUDA_PFN_ERROR_STRING_OF_(buf, size, d, abi, result) CUDA_PFN_ERROR_STRING_ABI_(buf, size, d, abi, result)
#define CUDA_PFN_ERROR_STRING_ABI_(buf, size, d, abi, result)                                                          \
    cuda_pfn_error_string((buf), (size), (d), #abi, CUDA_PFN_VERSION_##abi, CUDA_PFN_FLAGS_##abi, (result))

/* One getter: `abi`'s record, in the function (so emitted exactly where the getter is), and the
   lookup, which gives the driver the name the record holds. */
#define CUDA_PFN_GETTER_(abi, flags, version, floor, symbol, exported, check)                                        \
    static inline CUresult cuda_pfn_get_##abi(const cuda_pfn_driver *d, cuda_pfn_PFN_##abi *out) {                  \
        static const cuda_pfn_record record = {{0xc3, 0x63, 0x75, 0x52, 0x65, 0x63, 0x1a, 0x0a},                    \
                                               1, 1, flags, 1, version, floor, version, symbol, exported, check, 0u}; \
        void *p = NULL;                                                                                               \
        CUresult res;                                                                                                 \
        if (out == NULL) {                                                                                            \
            return CUDA_PFN_ERROR_INVALID_VALUE;                                                                      \
        }                                                                                                             \
        res = cuda_pfn_lookup_(d, &record, &p);                                                                       \
        memcpy(out, &p, sizeof p);                                                                                    \
        return res;                                                                                                   \
    }
