/* Fixture: typedefs spelled without a version, renamed to _v12040 by an earlier #define
 * (12.4 to 12.9 do this); and one unversioned typedef no #define renames. */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>

#define PFN_cuFuncIsLoaded PFN_cuFuncIsLoaded_v12040
#define PFN_cuFuncLoad PFN_cuFuncLoad_v12040

typedef CUresult (CUDAAPI *PFN_cuFuncIsLoaded)(int *state, void *function);
typedef CUresult (CUDAAPI *PFN_cuFuncLoad)(void *function);
typedef CUresult (CUDAAPI *PFN_cuFuncGetName)(const char **name, void *hfunc);
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);
#endif
