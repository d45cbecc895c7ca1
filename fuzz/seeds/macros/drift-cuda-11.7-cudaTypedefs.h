/* Fixture: the same PFN names in two toolkits; in the newer one the union behind
 * CUstreamAttrValue_v1 grows from 32 to 64 bytes (drift), while CUmemPoolProps gains a
 * field carved out of its reserved bytes (no drift). */
#ifndef CUDATYPEDEFS_H
#define CUDATYPEDEFS_H
#include <cuda.h>
typedef CUresult (CUDAAPI *PFN_cuStreamSetAttribute_v11000)(CUstream hStream, int attr, const CUstreamAttrValue_v1 *value);
typedef CUresult (CUDAAPI *PFN_cuMemPoolCreate_v11020)(void **pool, const CUmemPoolProps_v1 *poolProps);
#endif
