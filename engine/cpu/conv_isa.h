/* conv_isa.h — the convolution's per-instruction-set builds (internal to
 * engine/cpu/): engine/cpu/conv_<isa>.c each compile conv_kernels.h with
 * their ISA's flags, engine/cpu/conv.c picks one at run time
 * (strix_cpu_conv2d's isa argument, see ops.h).  Same arguments, layouts and
 * results (to the last bits of rounding) as strix_cpu_conv2d_packed (packed
 * NULL: strix_cpu_conv2d) and strix_cpu_conv2d_pack, plus wino: whether the
 * build may take its Winograd path (0 for STRIX_CPU_CONV_EXACT).
 *
 *   generic  4-wide vectors, MR x NR = 6 x 8: SSE2 on any x86-64, NEON on
 *            aarch64, scalar code elsewhere;
 *   avx2     x86-64 AVX2 + FMA, 6 x 16 (12 of the 16 ymm registers), and
 *            a direct (no im2col) kernel of the same block for the stem and
 *            the thin 3x3 layers, and Winograd F(4x4, 3x3) for the 3x3
 *            stride-1 layers on packed weights (conv_avx2.c says which, and
 *            why; conv_winograd.h);
 *   avx512   x86-64 AVX-512F, 14 x 32 (28 of the 32 zmm registers), and
 *            14 x 16 (avx512_n16) for layers whose channels per group are
 *            not a multiple of 32;
 *   neon     aarch64 Advanced SIMD, 5 x 16 (20 of the 32 q registers hold
 *            accumulators; see conv_neon.c). */
#ifndef STRIX_CPU_CONV_ISA_H
#define STRIX_CPU_CONV_ISA_H

#include <stddef.h>

#include "ops.h"

/* Sanitizer builds (make test's ASan + UBSan stage) default to the generic
 * kernels (strix_cpu_isa_best, strix_int8_best_isa): instrumented, the wide
 * micro-kernels spill their accumulator registers and ran 70-95x slower
 * than uninstrumented (generic: 2.4x; perf/results/2026-11-26-intel-xeon-2c-1t/
 * sanitizer_isa.txt), which pushed that stage past CI's limit.  Asked for by name, the wide builds still run there (the tests
 * compare every ISA the CPU supports). */
#if defined(__SANITIZE_ADDRESS__)
#define STRIX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRIX_SANITIZED 1
#endif
#endif

/* Workspace sub-buffers start on this boundary (bytes). */
#define WS_ALIGN 64

#define CONV_ISA_DECLARE(suffix)                                                                   \
    size_t strix_cpu_conv2d_workspace_##suffix(const strix_view *out, const strix_view *in,       \
                                               const strix_conv_params *p, int threads);          \
    void strix_cpu_conv2d_##suffix(const strix_view *out, const strix_view *in, const float *w,   \
                                   const float *packed, const float *bias,                        \
                                   const strix_view *residual, const strix_conv_params *p,        \
                                   int wino, void *workspace, strix_cpu_team *team);              \
    size_t strix_cpu_conv2d_packed_floats_##suffix(int cin, int cout, const strix_conv_params *p,  \
                                                   int wino);                                     \
    void strix_cpu_conv2d_pack_##suffix(float *packed, const float *w, int cin, int cout,          \
                                        const strix_conv_params *p, int wino);                    \
    void strix_cpu_conv_epilogue_##suffix(float *out, size_t ldo, const float *acc, size_t lda,    \
                                          const float *bias, const float *res, size_t ldr,         \
                                          int rows, int n, strix_act act);

CONV_ISA_DECLARE(generic)
#if defined(__x86_64__)
CONV_ISA_DECLARE(avx2)
CONV_ISA_DECLARE(avx512)
CONV_ISA_DECLARE(avx512_n16)
#endif
#if defined(__aarch64__)
CONV_ISA_DECLARE(neon)
#endif

/* Rows per block of a convolution's GEMM over m output pixels of each of
 * `images`: enough blocks (about 4 per thread) to balance the team, but
 * never more than mc_max rows nor more than one image needs, a multiple of
 * the micro-kernel's mr.  Shared by the fp32 and the int8 convolution. */
static inline int strix_cpu_row_block(int m, int images, int threads, int mr, int mc_max)
{
    int mc = mc_max;
    if (threads > 1 && images > 0) {
        int per_image = STRIX_CEIL_DIV(4 * threads, images);
        int want = STRIX_CEIL_DIV(STRIX_CEIL_DIV(m, per_image), mr) * mr;
        if (want < mc) mc = want;
    }
    int m_round = STRIX_CEIL_DIV(m, mr) * mr;
    if (m_round < mc) mc = m_round;
    return mc < mr ? mr : mc;
}

/* The convolution's bias + SiLU + residual epilogue of isa's build, for the
 * int8 convolution (conv_int8.c), so that it rounds as the fp32 one: for
 * rows i < rows and channels j < n,
 *   out[i*ldo + j] = act(acc[i*lda + j] + bias[j]) (+ res[i*ldr + j]);
 * res may equal out. */
void strix_cpu_conv_epilogue(strix_cpu_isa isa, float *out, size_t ldo, const float *acc, size_t lda,
                             const float *bias, const float *res, size_t ldr, int rows, int n, strix_act act);

#endif
