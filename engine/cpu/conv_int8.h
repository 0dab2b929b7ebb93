/* conv_int8.h — the CPU int8 convolution (opt-in: strix_model_quantize) and
 * its quantised weights.
 *
 * Quantisation:
 *   weights:     symmetric per output channel co, step
 *                sw[co] = max_k |w[co][k]| / WMAX, wq = round(w / sw[co]) in
 *                [-WMAX, WMAX], done once; WMAX is 127, or 63 for the AVX2
 *                path (see below);
 *   activations: asymmetric per convolution input, from the range [lo, hi]
 *                a calibration pass (fp32) over a few images saw, widened to
 *                hold 0: step sx = (hi - lo) / 255, zero point
 *                zx = round(-lo / sx), xu = clamp(round(x / sx) + zx, 0, 255)
 *                (rounded half up), an unsigned byte; a padding tap (x = 0)
 *                is zx.  Asymmetric because most inputs follow a SiLU
 *                (>= -0.28): a symmetric step would leave half the codes
 *                unused.
 * The GEMM multiplies unsigned activations by signed weights with int32
 * accumulation: acc = sum_k xu*wq = sum_k (xu - zx)*wq + comp[co], where
 * comp[co] = zx * sum_k wq[co][k] is precomputed (NEON_SDOT: see below).  The epilogue, in fp32:
 *   out = act((acc - comp[co]) * sx * sw[co] + bias[co]) (+ residual).
 *
 * Paths (strix_int8_isa), chosen at run time by the caller:
 *   C            portable, any CPU (the per-op tests' second opinion);
 *   AVX2         vpmaddubsw (u8 x s8 pairs -> s16) + vpmaddwd by 1 (-> s32):
 *                vpmaddubsw saturates at 32767, and 2 * 255 * 63 = 32130 <
 *                32767, so with 7-bit weights (WMAX 63) it never saturates;
 *   AVX512_VNNI  vpdpbusd (4 u8 x s8 products summed into s32, exact);
 *   NEON_SDOT    aarch64 with the dot-product extension: sdot (4 s8 x s8
 *                products into s32, exact) on xu - 128 (the byte's top bit
 *                flipped), so comp[co] = (zx - 128) * sum_k wq there.
 * All paths accumulate exactly in int32, so for the same quantised weights
 * they agree bit for bit before the fp32 epilogue.
 *
 * Packed weights (the layout vpdpbusd wants): panels of 16 output channels,
 * depth in groups of 4:
 *   wp[((s * kq + g) * 16 + j) * 4 + t] = wq[16 s + j][4 g + t]
 * zero past cout and past k (k padded to kq * 4). */
#ifndef STRIX_CPU_CONV_INT8_H
#define STRIX_CPU_CONV_INT8_H

#include <stddef.h>
#include <stdint.h>

#include "../ops.h"
#include "../tensor.h"
#include "ops.h"

typedef enum strix_int8_isa {
    STRIX_INT8_C = 0,
    STRIX_INT8_AVX2 = 1,
    STRIX_INT8_AVX512_VNNI = 2,
    STRIX_INT8_NEON_SDOT = 3,
    STRIX_INT8_ISAS = 4
} strix_int8_isa;

/* Whether this CPU runs path isa (x86: cpuid, through the compiler's
 * builtins; aarch64: the kernel's hwcaps); the best one it runs; a short
 * name ("c", "avx2", "avx512-vnni", "neon-sdot"). */
int strix_int8_isa_supported(strix_int8_isa isa);
strix_int8_isa strix_int8_best_isa(void);
const char *strix_int8_isa_name(strix_int8_isa isa);

typedef struct strix_qconv {
    strix_int8_isa isa;
    int cout, k;   /* output channels; depth KH*KW*Cin */
    int kq;        /* depth in groups of 4 (k rounded up, / 4) */
    int npad;      /* cout rounded up to 16 */
    float in_step; /* sx */
    int in_zero;   /* zx */
    float *dq;     /* [cout] sx * sw[co] */
    int32_t *comp; /* [npad] zx * sum_k wq[co][k] ((zx - 128) * ... for NEON_SDOT) */
    int8_t *wp;    /* packed, see above */
} strix_qconv;

/* Quantise OHWI weights w [cout][k] for path isa, with the activation
 * range [in_lo, in_hi] seen at this convolution's input.  Returns 0, or -1
 * when out of memory (q then holds nothing to free). */
int strix_qconv_init(strix_qconv *q, const float *w, int cout, int k, float in_lo, float in_hi,
                     strix_int8_isa isa);
void strix_qconv_free(strix_qconv *q);
/* wq[co][kk], read back from the packed layout (tests, references). */
int strix_qconv_weight(const strix_qconv *q, int co, int kk);
/* The activation quantiser: clamp(round(x / step) + zero, 0, 255), given
 * inv_step = 1 / step. */
uint8_t strix_quantize_u8(float x, float inv_step, int zero);

/* out = act(conv(in, q) + bias) [+ residual], as strix_cpu_conv2d (views,
 * residual aliasing, layouts), for groups == 1 only; the bias + SiLU +
 * residual epilogue is that of the fp32 convolution's build for epi_isa.
 * The workspace holds the quantised input and per-thread blocks; `threads`
 * is at least the team's thread count. */
size_t strix_cpu_conv2d_int8_workspace(const strix_view *out, const strix_view *in,
                                       const strix_conv_params *p, const strix_qconv *q,
                                       int threads);
void strix_cpu_conv2d_int8(const strix_view *out, const strix_view *in, const strix_qconv *q,
                           const float *bias, const strix_view *residual,
                           const strix_conv_params *p, strix_cpu_isa epi_isa, void *workspace,
                           strix_cpu_team *team);

#endif
