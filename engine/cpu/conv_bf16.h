/* conv_bf16.h — the CPU bf16 convolution (strix_model_options.precision
 * BF16) and its packed weights.
 *
 * bf16 is the top half of an fp32: sign, the same 8-bit exponent, 7 stored
 * mantissa bits (8 significant bits, unit roundoff 2^-8).  fp32 -> bf16
 * rounds to nearest, ties to even, as the BFCVT instruction (NaN stays a
 * quiet NaN); bf16 -> fp32 is exact.  Weights are rounded once, when
 * packed (at load); activations per convolution, when its input is
 * converted into the workspace.  Products of two bf16 values are exact in
 * fp32 (16 significant bits); they are summed in fp32, and the bias + SiLU
 * + residual epilogue is that of the fp32 convolution (conv_isa.h).
 *
 * Paths (strix_bf16_isa):
 *   C           portable, any CPU: the pair sums in plain fp32 (the per-op
 *               test's check of the layout, im2col and threading on every
 *               machine; never what a model runs: strix_bf16_supported()
 *               asks for NEON_BFDOT);
 *   NEON_BFDOT  aarch64 with FEAT_BF16 (HWCAP2_BF16): BFDOT, two bf16
 *               products summed into each fp32 lane.  BFDOT rounds its sum
 *               to odd and flushes denormals (Arm ARM, FPCR.EBF = 0), so it
 *               agrees with C within the accumulation bound, not bit for
 *               bit.
 *
 * Packed weights: panels of 16 output channels, depth in pairs:
 *   wp[((s * kp + g) * 16 + j) * 2 + t] = bf16(w[16 s + j][2 g + t])
 * zero past cout and past k (k padded to kp * 2). */
#ifndef STRIX_CPU_CONV_BF16_H
#define STRIX_CPU_CONV_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "../ops.h"
#include "../tensor.h"
#include "ops.h"

typedef enum strix_bf16_isa {
    STRIX_BF16_C = 0,
    STRIX_BF16_NEON_BFDOT = 1,
    STRIX_BF16_ISAS = 2
} strix_bf16_isa;

/* Whether this CPU runs path isa (aarch64: the kernel's hwcaps); a short
 * name ("c", "neon-bfdot"). */
int strix_bf16_isa_supported(strix_bf16_isa isa);
const char *strix_bf16_isa_name(strix_bf16_isa isa);
/* Whether this CPU has a bf16 path a model may run (NEON_BFDOT). */
int strix_bf16_supported(void);

uint16_t strix_bf16_from_f32(float x);
float strix_bf16_to_f32(uint16_t b);

typedef struct strix_bconv {
    strix_bf16_isa isa;
    int cout, k;  /* output channels; depth KH*KW*Cin */
    int kp;       /* depth in pairs (k rounded up, / 2) */
    int npad;     /* cout rounded up to 16 */
    uint16_t *wp; /* packed, see above */
} strix_bconv;

/* Round and pack OHWI weights w [cout][k] for path isa.  Returns 0, or -1
 * when out of memory (q then holds nothing to free). */
int strix_bconv_init(strix_bconv *q, const float *w, int cout, int k, strix_bf16_isa isa);
void strix_bconv_free(strix_bconv *q);

/* out = act(conv(in, q) + bias) [+ residual], as strix_cpu_conv2d (views,
 * residual aliasing, layouts), for groups == 1 only; the epilogue is the
 * fp32 convolution's build for epi_isa.  The workspace holds the converted
 * input and per-thread blocks; `threads` is at least the team's count. */
size_t strix_cpu_conv2d_bf16_workspace(const strix_view *out, const strix_view *in,
                                       const strix_conv_params *p, const strix_bconv *q, int threads);
void strix_cpu_conv2d_bf16(const strix_view *out, const strix_view *in, const strix_bconv *q,
                           const float *bias, const strix_view *residual, const strix_conv_params *p,
                           strix_cpu_isa epi_isa, void *workspace, strix_cpu_team *team);

#endif
