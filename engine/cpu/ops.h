/* ops.h — the CPU backend's operators: plain C11, NHWC fp32, the reference for
 * every other backend.  Each op writes into a caller-provided view (output
 * first), reads strided views (so Concat slices and C2f chunks cost nothing),
 * takes a small typed parameter struct and never allocates: scratch memory
 * comes from the caller, sized by the matching *_workspace() function.
 * `team` runs the op's parallel loops (engine/cpu/team.h; NULL = serially
 * on the caller's thread); a *_workspace() function's `threads` must be at
 * least the team's thread count.
 */
#ifndef STRIX_CPU_OPS_H
#define STRIX_CPU_OPS_H

#include <math.h>
#include <stddef.h>
#include "../ops.h"
#include "../strix.h"
#include "team.h"
#include "../tensor.h"

/* out = act(conv(in, w) + bias) [+ residual]
 *   in:       [N, H, W, Cin] view
 *   w:        [Cout, KH, KW, Cin/groups] dense (OHWI)
 *   bias:     [Cout] (never NULL: BatchNorm is folded in at load)
 *   residual: NULL, or a view shaped like out, added after the activation
 *             (it may alias out only if identical).
 *   out:      [N, OH, OW, Cout], OH = (H + 2ph - dh(kh-1) - 1)/sh + 1.
 *   out must not overlap in.
 *   isa:      the micro-kernels' instruction set, one this CPU runs
 *             (strix_cpu_isa_supported); AUTO means strix_cpu_isa_best().
 * The workspace size covers every instruction set. */
/* OR'ed into the isa argument of the convolution entry points: never the
 * Winograd path, so the packed path gives the GEMM's results to the bit
 * (exact comparisons; timing the paths against each other).  strix_cpu_conv2d,
 * whose weights are not packed beforehand, never takes it anyway. */
#define STRIX_CPU_CONV_EXACT 0x100

size_t strix_cpu_conv2d_workspace(const strix_view *out, const strix_view *in,
                                  const strix_conv_params *p, int threads);
void strix_cpu_conv2d(strix_cpu_isa isa, const strix_view *out, const strix_view *in, const float *w,
                      const float *bias, const strix_view *residual,
                      const strix_conv_params *p, void *workspace, strix_cpu_team *team);

/* The same with the weights packed beforehand for isa's micro-kernels
 * (strix_cpu_conv2d_pack, e.g. once at load): the per-call packing is
 * skipped; results are bit-identical to strix_cpu_conv2d's with that isa,
 * except where the build's Winograd path takes the layer (the AVX2 build's
 * 3x3 stride-1 layers, conv_avx2.c): there the packed weights also hold the
 * transformed ones (4x their size) and the results differ in rounding
 * (engine/cpu/conv_winograd.h).  Pack and run with the same isa value.
 * packed: strix_cpu_conv2d_packed_floats(isa, in.c, out.c, p) floats. */
size_t strix_cpu_conv2d_packed_floats(strix_cpu_isa isa, int cin, int cout, const strix_conv_params *p);
/* 1 when isa's build runs this convolution's packed weights as Winograd
 * (outputs of at least 10 x 10 on AVX2; conv_avx2.c), else 0. */
int strix_cpu_conv2d_winograd(strix_cpu_isa isa, int cin, int cout, const strix_conv_params *p);
void strix_cpu_conv2d_pack(strix_cpu_isa isa, float *packed, const float *w, int cin, int cout,
                           const strix_conv_params *p);
void strix_cpu_conv2d_packed(strix_cpu_isa isa, const strix_view *out, const strix_view *in,
                             const float *packed, const float *bias, const strix_view *residual,
                             const strix_conv_params *p, void *workspace, strix_cpu_team *team);

/* The widest instruction set this build and CPU run (cpuid on x86-64,
 * AT_HWCAP on aarch64); never AUTO. */
strix_cpu_isa strix_cpu_isa_best(void);

/* out[n,y,x,c] = max over the window of in; out is [N, OH, OW, C]. */
void strix_cpu_maxpool2d(const strix_view *out, const strix_view *in,
                         const strix_pool_params *p, strix_cpu_team *team);

/* Nearest-neighbour upsampling by an integer factor: out is [N, H*s, W*s, C],
 * out[n,y,x,c] = in[n, y/s, x/s, c]. */
void strix_cpu_upsample_nearest(const strix_view *out, const strix_view *in, int scale,
                                strix_cpu_team *team);

/* out = in, element by element (shapes equal); used when a tensor must land
 * in two different Concat buffers. */
void strix_cpu_copy(const strix_view *out, const strix_view *in, strix_cpu_team *team);

/* Ultralytics' Attention core (after the qkv 1x1 convolution).
 *   qkv: [N, H, W, heads * (2*key_dim + head_dim)]; for head h the channels
 *        h*(2kd+hd) + [0,kd) are q, + [kd,2kd) are k, + [2kd, 2kd+hd) are v.
 *   out:   [N, H, W, heads*head_dim]: for each head, pixel i,
 *          out[i, h*hd + d] = sum_j softmax_j(scale * q_i . k_j) * v[j, d]
 *   v_out: [N, H, W, heads*head_dim]: v gathered densely (v_out[i, h*hd+d] =
 *          v[i, d] of head h), the input of Attention.pe.
 * Softmax is computed with the max subtracted (numerically safe). */
size_t strix_cpu_attention_workspace(const strix_view *qkv, const strix_attn_params *p,
                                     int threads);
void strix_cpu_attention(const strix_view *out, const strix_view *v_out, const strix_view *qkv,
                         const strix_attn_params *p, void *workspace, strix_cpu_team *team);

/* ConvTranspose2d(k=2, s=2)'s scatter after its 1x1 GEMM (to 4C channels):
 * out[n, 2y+dy, 2x+dx, c] = in[n, y, x, (dy*2 + dx)*C + c]; out is
 * [N, 2H, 2W, C], in [N, H, W, 4C]. */
void strix_cpu_shuffle2(const strix_view *out, const strix_view *in, strix_cpu_team *team);

/* out = a + b, element by element (shapes equal; out may alias a or b). */
void strix_cpu_add(const strix_view *out, const strix_view *a, const strix_view *b, strix_cpu_team *team);

/* AdaptiveAvgPool2d(1): out [N, 1, 1, C] = the mean of each channel of in. */
void strix_cpu_avgpool_global(const strix_view *out, const strix_view *in, strix_cpu_team *team);

/* Softmax over each pixel's channels, the max subtracted; out shaped like in. */
void strix_cpu_softmax(const strix_view *out, const strix_view *in, strix_cpu_team *team);

/* Detect head decode (Ultralytics Detect._inference for the box/score part).
 *   head: [N, A, 4*reg_max + nc] dense: per anchor 4 groups of reg_max
 *         distance logits (left, top, right, bottom) then nc class logits.
 *         Anchors are ordered level by level, row-major within a level.
 *   out:  [N, A, 4 + nc] dense: cx, cy, w, h in input pixels, then sigmoid
 *         of each class logit.
 * For anchor (x, y) of a level with stride s, the anchor point is
 * (x + 0.5, y + 0.5); each distance d = sum_i i * softmax(logits)_i;
 * x1 = ax - dl, y1 = ay - dt, x2 = ax + dr, y2 = ay + db (grid units);
 * cx = (x1 + x2)/2 * s, cy likewise, w = (x2 - x1) * s, h = (y2 - y1) * s. */
void strix_cpu_detect_decode(float *out, const float *head, int n, const strix_decode_params *p,
                             strix_cpu_team *team);

/* a * b + c, fused where this file's build has a fast fmaf (evaluated per
 * translation unit: the per-ISA builds of conv and attention differ). */
static inline float strix_cpu_madd(float a, float b, float c)
{
#ifdef FP_FAST_FMAF
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}

#endif
