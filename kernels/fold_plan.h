/* fold_plan.h — kernel set 3's nearest upsample folded into the loads of
 * the convolution that consumes it (conv_mma.cu, conv_mma_f16<..., FOLD =
 * true>; not yet run on a GPU), in plain C so that the CPU tests emulate the
 * folded loader exactly (tests/test_cuda_ops.c, upsample_fold_plan).
 *
 * The graph (engine/program.c, strix_program_upsample_fold): U = nearest
 * upsample by `scale` of S [N, SH, SW, C] written into channels [c0, c0 + C)
 * of a Concat buffer X [N, H, W, Cx] (H = SH * scale, W = SW * scale) whose
 * one reader is a convolution.  Folded, the upsample does not run and the
 * convolution's input loader reads
 *   X[n, y, x, c] = S[n, y / scale, x / scale, c - c0]   (c0 <= c < c0 + C)
 * and every other channel from X as before; S and X are strided NHWC views.
 * The loader (conv_mma.cu's header) moves 16-byte chunks of 8 channels of
 * one tap, starting at channels that are multiples of 8 (Cin % 8 == 0 and
 * BK % 8 == 0, so K-tile boundaries fall on chunk boundaries); with c0 and
 * C multiples of 8 a chunk then lies wholly in S or wholly outside it, and
 * whether it is folded depends on its first channel alone. */
#ifndef STRIX_KERNELS_FOLD_PLAN_H
#define STRIX_KERNELS_FOLD_PLAN_H

#include <stddef.h>

#ifdef __CUDACC__
#define STRIX_FOLD_FN static inline __host__ __device__
#else
#define STRIX_FOLD_FN static inline
#endif

/* The folded channels' source, as the kernel takes it (by value). */
typedef struct strix_up_fold {
    const void *src;   /* S: [N, SH, SW, c1 - c0] view (fp16), 16-byte aligned */
    size_t pix, batch; /* S's pixel and image strides (elements), multiples of 8 */
    int sw;            /* S's width */
    int c0, c1;        /* channels [c0, c1) of the convolution's input are S's */
    int scale;         /* the upsample's factor (>= 1) */
} strix_up_fold;

/* Whether channels [c0, c0 + c) of a cin-channel h x w convolution input
 * can be read as the upsample by `scale` of an sh x sw source with strides
 * pix, batch: every chunk whole in one source, the upsample's output exactly
 * the input's size, the source's chunks aligned 16-byte vectors (the caller
 * checks the source's address). */
STRIX_FOLD_FN int strix_fold_fits(int cin, int c0, int c, int scale, int sh, int sw, int h, int w, size_t pix,
                                  size_t batch)
{
    return cin % 8 == 0 && c0 >= 0 && c0 % 8 == 0 && c >= 8 && c % 8 == 0 && c0 + c <= cin && scale >= 1 &&
           sh >= 1 && sw >= 1 && sh * scale == h && sw * scale == w && pix >= (size_t)c && pix % 8 == 0 &&
           batch % 8 == 0;
}

/* Whether the chunk starting at input channel ci (a multiple of 8) is S's. */
STRIX_FOLD_FN int strix_fold_hit(const strix_up_fold *f, int ci)
{
    return ci >= f->c0 && ci < f->c1;
}

/* The element offset in S of input element (n, iy, ix, ci) of such a chunk
 * (iy, ix inside the H x W image): S[n, iy / scale, ix / scale, ci - c0]. */
STRIX_FOLD_FN size_t strix_fold_offset(const strix_up_fold *f, int n, int iy, int ix, int ci)
{
    return (size_t)n * f->batch + ((size_t)(iy / f->scale) * (size_t)f->sw + (size_t)(ix / f->scale)) * f->pix +
           (size_t)(ci - f->c0);
}

#endif
