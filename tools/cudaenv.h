/* cudaenv.h — the strix tools' environment override of the CUDA model
 * options (the library itself reads no environment): STRIX_CUDA_GRAPHS=0
 * launches eagerly, STRIX_CUDA_SYNC=1 synchronises after every op,
 * STRIX_CUDA_KERNELS=1|2|3 picks the kernel set, STRIX_CUDA_NVTX=1 adds NVTX
 * ranges per layer (and infer's per stage) for Nsight Systems,
 * STRIX_CUDA_ASYNC=1 keeps two batches in flight (cuda_async).  Each
 * tool applies it after its defaults and lists it in --help. */
#ifndef STRIX_CUDAENV_H
#define STRIX_CUDAENV_H

#include <stdlib.h>
#include <string.h>

#include "strix.h"

#define STRIX_CUDA_ENV_HELP                                                                  \
    "Environment (CUDA devices):\n"                                                          \
    "  STRIX_CUDA_GRAPHS=0  launch every kernel eagerly instead of replaying a CUDA graph\n" \
    "  STRIX_CUDA_SYNC=1    synchronise after every op, so that a device error names its\n" \
    "                       layer (slow; no graphs)\n"                              \
    "  STRIX_CUDA_KERNELS=1 the first kernel set (WMMA, cuBLAS 1x1) instead of the\n"      \
    "                       tensor-core set 2 (the default); 3: set 2 with split-K\n" \
    "                       for small grids (not yet run on a GPU)\n"                \
    "  STRIX_CUDA_NVTX=1    NVTX ranges per layer and per stage, for Nsight Systems\n" \
    "  STRIX_CUDA_ASYNC=1   two batches in flight: the next one's upload overlaps this\n" \
    "                       one's network, and video frames are decoded into page-locked\n" \
    "                       memory DMA'd without a copy (not yet run on a GPU; default 0)\n"

static inline void strix_cuda_env_apply(strix_model_options *o)
{
    const char *g = getenv("STRIX_CUDA_GRAPHS"), *s = getenv("STRIX_CUDA_SYNC"), *k = getenv("STRIX_CUDA_KERNELS");
    const char *n = getenv("STRIX_CUDA_NVTX"), *a = getenv("STRIX_CUDA_ASYNC");
    if (g && *g) o->cuda_graphs = strcmp(g, "0") != 0;
    if (n && *n) o->nvtx = strcmp(n, "0") != 0;
    if (a && *a) o->cuda_async = strcmp(a, "0") != 0;
    if (s && *s) o->cuda_sync = strcmp(s, "0") != 0;
    /* any other value reaches the backend, which refuses it with one line */
    if (k && *k) o->cuda_kernels = !strcmp(k, "1") ? 1 : !strcmp(k, "2") ? 2 : !strcmp(k, "3") ? 3 : -1;
}

#endif
