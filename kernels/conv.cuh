/* conv.cuh — what the convolution kernel files share (conv.cu: the v1 set;
 * conv_mma.cu: the v2 and v3 sets): the argument block every convolution
 * kernel takes by value, the fused epilogue, and the v2/v3 launchers conv.cu
 * calls (their host-side arithmetic: conv_plan.h).
 * Layouts as in conv.cu's header: NHWC strided views, OHWI weights. */
#ifndef STRIX_KERNELS_CONV_CUH
#define STRIX_KERNELS_CONV_CUH

#include <cuda_runtime.h>

#include "conv_plan.h"
#include "fold_plan.h"
#include "elem.cuh"

namespace strix_conv {

using namespace strix_elem;

/* The fused epilogue's view of the output and residual. */
struct Epi {
    void *out;        /* [N, OH, OW, Cout] view, T */
    size_t out_pix, out_batch;
    const void *res;  /* NULL or shaped like out, T */
    size_t res_pix, res_batch;
    const float *bias; /* [Cout] */
    int act;           /* strix_act */
};

/* Everything a convolution kernel needs, passed by value. */
struct ConvArgs {
    const void *in;   /* [N, H, W, Cin] view, T; group g's channels start at g*cg */
    size_t in_pix, in_batch;
    int h, w;
    const void *wt;   /* [Cout, KH, KW, cg] OHWI, T */
    int cg, ng, groups;
    int kh, kw, sh, sw, ph, pw, dh, dw;
    int ow, ohw;      /* output width, OH*OW */
    int m;            /* GEMM rows: N*OH*OW */
    int k;            /* GEMM depth: KH*KW*cg */
    Epi epi;
};

/* out[n, pix, co] = act(acc + bias[co]) (+ res[n, pix, co]), pix = y*OW + x;
 * computed in fp32, rounded once. */
template <typename T>
__device__ __forceinline__ void epilogue_store(const Epi &e, int n, int pix, int co, float acc)
{
    float v = acc + e.bias[co];
    if (e.act == STRIX_ACT_SILU) v = v / (1.0f + expf(-v));
    if (e.res)
        v += load(static_cast<const T *>(e.res) + (size_t)n * e.res_batch +
                  (size_t)pix * e.res_pix + co);
    store(static_cast<T *>(e.out) + (size_t)n * e.out_batch + (size_t)pix * e.out_pix + co, v);
}

/* ---- the v2 and v3 sets (conv_mma.cu), used when strix_cuda_conv2d is
 * asked for STRIX_CUDA_KERNELS_V2 or _V3 and the shape qualifies; each *_ok
 * says whether it does (the launcher then enqueues and returns the launch's
 * error). */

/* fp16, one group, Cin % 8 == 0, 16-byte aligned input and weights, a GPU
 * of compute capability 8.0 or newer: mma.sync implicit GEMM, every kernel
 * size (1x1 included).  variant 0: the tile the layer's shape gets on `sms`
 * SMs; 1 .. STRIX_MMA_N_TILES: that tile of the table (the kernel lab).
 * splitk (kernel set 3): K split as strix_mma_plan_make says, the partials
 * in `workspace` (its ws_bytes, 16-byte aligned), then a reduction kernel;
 * without a split, workspace is not touched (and may be NULL).  fold (kernel
 * set 3, variant 0; NULL: none): input channels [fold->c0, fold->c1) read
 * from an upsample's source (fold_plan.h), which the caller has checked. */
bool mma_ok(const ConvArgs &a, const strix_dview *in, const void *w, strix_dtype dt);
strix_cuda_err mma_launch(const ConvArgs &a, int variant, int sms, bool splitk, const strix_up_fold *fold,
                          void *workspace, cudaStream_t s);

/* One group with at most STEM_MAX_CIN input channels (the stem reading the
 * letterboxed RGB image): direct convolution, fp32 or fp16; smem (kernel
 * set 3): each block's input tile read once through shared memory, where
 * it fits (conv_plan.h), with the same results bit for bit. */
#define STEM_MAX_CIN 4
bool stem_ok(const ConvArgs &a);
strix_cuda_err stem_launch(const ConvArgs &a, strix_dtype dt, bool smem, cudaStream_t s);

} /* namespace strix_conv */

#endif
