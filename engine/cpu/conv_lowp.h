/* conv_lowp.h — what the reduced-precision convolutions (int8:
 * conv_int8.c, bf16: conv_bf16.c) share: the input converted once into the
 * workspace, the im2col of a block of rows, the blocks as the team's tasks,
 * and the fp32 epilogue.  Each precision hands in how wide its elements
 * are, how it converts a run of floats, and its GEMM over one block.
 *
 * Layouts as strix_cpu_conv2d: in [N, H, W, Cin], out/residual
 * [N, OH, OW, Cout] strided NHWC views.  Per image the convolution is
 * C[M][Cout] = A[M][K] * B[K][Cout], M = OH*OW pixels, K = KH*KW*Cin in
 * (ky, kx, ci) order:
 *   1. the whole input is converted once into the workspace, dense
 *      [N][H][W][Cin] elements of esize bytes;
 *   2. a 1x1 stride-1 unpadded convolution with Cin a multiple of
 *      cin_align reads A straight from it (row stride Cin), the rows that
 *      fill whole micro-kernel blocks of mr; any other rows go through an
 *      im2col into the thread's scratch (row stride kpad, `fill` bytes for
 *      padding taps, rows past the block and depth past K);
 *   3. blocks of rows are the team's tasks (team.h): the precision's GEMM
 *      writes the block's fp32 sums into the thread's tile [mc][npad], which
 *      the fp32 convolution's bias + SiLU + residual epilogue (conv_isa.h)
 *      writes to out. */
#ifndef STRIX_CPU_CONV_LOWP_H
#define STRIX_CPU_CONV_LOWP_H

#include <stddef.h>
#include <stdint.h>

#include "../ops.h"
#include "../tensor.h"
#include "ops.h"

/* One block's GEMM: rows [0, full) of A at a_in (row stride lda_in
 * elements, the converted input read in place), rows [full, full +
 * rest_pad) at a_im (row stride kpad), both multiples of mr; sums into ft
 * [rows][npad] fp32, scratch (scratch_bytes per row of a block) its own. */
typedef void (*strix_lowp_gemm)(const void *op, const uint8_t *a_in, size_t lda_in, int full, const uint8_t *a_im,
                                int rest_pad, void *scratch, float *ft);

typedef struct strix_lowp {
    const void *op;       /* the precision's weights, handed to convert and gemm */
    size_t esize;         /* bytes per converted element */
    int k, kpad;          /* depth; padded to the kernels' group */
    int cout, npad;       /* output channels; padded to the kernels' panels */
    int mr;               /* rows per micro-kernel call */
    int cin_align;        /* see 2. above */
    uint8_t fill;         /* every byte of a padding element */
    size_t scratch_bytes; /* per row of a block */
    void (*convert)(const void *op, uint8_t *dst, const float *src, int n);
    strix_lowp_gemm gemm;
} strix_lowp;

size_t strix_lowp_workspace(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                            const strix_lowp *lp, int threads);
/* out = act(conv(in) + bias) [+ residual] (res may alias out), groups == 1. */
void strix_lowp_conv2d(const strix_view *out, const strix_view *in, const strix_lowp *lp, const float *bias,
                       const strix_view *residual, const strix_conv_params *p, strix_cpu_isa epi_isa,
                       void *workspace, strix_cpu_team *team);

#endif
