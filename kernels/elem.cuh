/* elem.cuh — the few device helpers shared by the data-movement, attention,
 * letterbox, decode and NMS kernels: fp32/fp16 element access (fp32 math
 * inside every kernel, one rounding when an fp16 result is stored), PyTorch's
 * NaN-propagating max, launch-shape arithmetic and argument checks. */
#ifndef STRIX_KERNELS_ELEM_CUH
#define STRIX_KERNELS_ELEM_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels.h"

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

/* Grid-stride loops never need more blocks than this (it keeps every
 * element count, however large, within one launch). */
#define GRID_STRIDE_MAX_BLOCKS 65535u

namespace strix_elem {

__device__ __forceinline__ float load(const float *p) { return *p; }
__device__ __forceinline__ float load(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ void store(float *p, float v) { *p = v; }
__device__ __forceinline__ void store(__half *p, float v) { *p = __float2half_rn(v); }

/* max(m, v) as the CPU pools compute it: a NaN always wins (PyTorch). */
__device__ __forceinline__ float nan_max(float m, float v) { return (v > m || v != v) ? v : m; }

/* Blocks of `threads` for a grid-stride loop over `count` items. */
static inline unsigned grid_for(size_t count, unsigned threads)
{
    size_t blocks = (count + threads - 1) / threads;
    if (blocks < 1) blocks = 1;
    return blocks > GRID_STRIDE_MAX_BLOCKS ? GRID_STRIDE_MAX_BLOCKS : (unsigned)blocks;
}

static inline bool view_ok(const strix_dview *v)
{
    return v && v->data && v->n >= 0 && v->h >= 0 && v->w >= 0 && v->c >= 0;
}

static inline bool dtype_ok(strix_dtype dt) { return dt == STRIX_F32 || dt == STRIX_F16; }

static inline strix_cuda_err last_error() { return (strix_cuda_err)cudaGetLastError(); }

} /* namespace strix_elem */

#endif
