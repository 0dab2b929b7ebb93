/* conv_bf16.c — the CPU bf16 convolution (see conv_bf16.h for the rounding
 * and the packed weight layout): weight packing, the activation
 * conversion, and the GEMM per path, over the reduced-precision driver
 * (conv_lowp.h, int8's scheme with 2-byte elements: the input converted
 * once, 1x1 convolutions with Cin even read in place, the others through an
 * im2col with zero for padding, blocks of rows as the team's tasks).  A
 * block runs the path's 4 x 16 micro-kernel over the whole depth into the
 * fp32 tile the epilogue reads; each output's sum runs over the depth in
 * order whatever the blocking, so the result does not depend on threads. */
#include "conv_bf16.h"

#include <stdlib.h>
#include <string.h>

#include "conv_lowp.h"

#if defined(__aarch64__) && defined(__linux__)
#define STRIX_BFDOT 1
#include <arm_neon.h>
#include <sys/auxv.h>
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14) /* the kernel's bit for the BF16 instructions (FEAT_BF16) */
#endif
#endif

#define BNR 16    /* output channels per packed panel */
#define BMR 4     /* rows per micro-kernel call (both paths): 4 x 4 q accumulators */

/* ---------------------------------------------------------------- ISA */

int strix_bf16_isa_supported(strix_bf16_isa isa)
{
    switch (isa) {
    case STRIX_BF16_C: return 1;
#ifdef STRIX_BFDOT
    case STRIX_BF16_NEON_BFDOT: return (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
#endif
    default: return 0;
    }
}

const char *strix_bf16_isa_name(strix_bf16_isa isa)
{
    static const char *const names[] = {"c", "neon-bfdot"};
    return isa >= 0 && isa < STRIX_BF16_ISAS ? names[isa] : "?";
}

int strix_bf16_supported(void) { return strix_bf16_isa_supported(STRIX_BF16_NEON_BFDOT); }

uint16_t strix_bf16_from_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* NaN: quiet, sign kept */
    u += 0x7fffu + ((u >> 16) & 1); /* to nearest, ties to even; overflow carries into infinity */
    return (uint16_t)(u >> 16);
}

float strix_bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* ----------------------------------------------------------- weights */

int strix_bconv_init(strix_bconv *q, const float *w, int cout, int k, strix_bf16_isa isa)
{
    memset(q, 0, sizeof *q);
    q->isa = isa;
    q->cout = cout;
    q->k = k;
    q->kp = STRIX_CEIL_DIV(k, 2);
    q->npad = STRIX_CEIL_DIV(cout, BNR) * BNR;
    q->wp = calloc((size_t)q->npad * q->kp * 2, sizeof *q->wp);
    if (!q->wp) return -1;
    for (int co = 0; co < cout; co++) {
        int s = co / BNR, j = co % BNR;
        for (int kk = 0; kk < k; kk++)
            q->wp[(((size_t)s * q->kp + kk / 2) * BNR + j) * 2 + kk % 2] = strix_bf16_from_f32(w[(size_t)co * k + kk]);
    }
    return 0;
}

void strix_bconv_free(strix_bconv *q)
{
    free(q->wp);
    memset(q, 0, sizeof *q);
}

/* ------------------------------------------------------ micro-kernels */

/* Every kernel: C[4][16] = A[4][2 kp] * B, fp32, overwriting c.
 *   a: row i at a + i*lda (pairs: lda and the base keep no alignment,
 *      hence the memcpy loads);
 *   b: the panel, [kp][16][2];
 *   c: row i at c + i*ldc. */
typedef void (*bkernel)(int kp, const uint16_t *a, size_t lda, const uint16_t *b, float *c, size_t ldc);

static void kernel_c(int kp, const uint16_t *a, size_t lda, const uint16_t *b, float *c, size_t ldc)
{
    for (int i = 0; i < BMR; i++) {
        float acc[BNR] = {0};
        const uint16_t *ar = a + i * lda;
        for (int g = 0; g < kp; g++)
            for (int j = 0; j < BNR; j++) {
                const uint16_t *bj = b + ((size_t)g * BNR + j) * 2;
                float pair = strix_bf16_to_f32(ar[2 * g]) * strix_bf16_to_f32(bj[0]) +
                             strix_bf16_to_f32(ar[2 * g + 1]) * strix_bf16_to_f32(bj[1]);
                acc[j] += pair; /* BFDOT's order: the pair, then the running sum */
            }
        memcpy(c + i * ldc, acc, sizeof acc);
    }
}

#ifdef STRIX_BFDOT
#define BF16_TARGET __attribute__((target("arch=armv8.2-a+bf16")))

/* BFDOT lane form: acc[i][v] += channels 4v..4v+3 of B (a pair each) . row
 * i's pair, lane i of av (4 rows' pairs in one q register). */
BF16_TARGET static void kernel_bfdot(int kp, const uint16_t *a, size_t lda, const uint16_t *b, float *c,
                                     size_t ldc)
{
    float32x4_t acc[BMR][4];
    for (int i = 0; i < BMR; i++)
        for (int v = 0; v < 4; v++) acc[i][v] = vdupq_n_f32(0.0f);
    for (int g = 0; g < kp; g++) {
        bfloat16x8_t bv[4];
        for (int v = 0; v < 4; v++) bv[v] = vld1q_bf16((const bfloat16_t *)(b + (size_t)g * 32 + 8 * v));
        uint16_t rows[8];
        for (int i = 0; i < BMR; i++) memcpy(rows + 2 * i, a + i * lda + 2 * g, 4);
        bfloat16x8_t av = vld1q_bf16((const bfloat16_t *)rows);
        for (int v = 0; v < 4; v++) {
            acc[0][v] = vbfdotq_laneq_f32(acc[0][v], bv[v], av, 0);
            acc[1][v] = vbfdotq_laneq_f32(acc[1][v], bv[v], av, 1);
            acc[2][v] = vbfdotq_laneq_f32(acc[2][v], bv[v], av, 2);
            acc[3][v] = vbfdotq_laneq_f32(acc[3][v], bv[v], av, 3);
        }
    }
    for (int i = 0; i < BMR; i++)
        for (int v = 0; v < 4; v++) vst1q_f32(c + i * ldc + 4 * v, acc[i][v]);
}

/* A run of floats to bf16 with BFCVTN (round to nearest even under the
 * default FPCR, as strix_bf16_from_f32), the tail in C. */
BF16_TARGET static void convert_row_bfcvt(uint16_t *dst, const float *src, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        bfloat16x8_t v = vcvtq_high_bf16_f32(vcvtq_low_bf16_f32(vld1q_f32(src + i)), vld1q_f32(src + i + 4));
        vst1q_bf16((bfloat16_t *)(dst + i), v);
    }
    for (; i < n; i++) dst[i] = strix_bf16_from_f32(src[i]);
}
#endif

/* fp32 -> bf16 as conv_lowp's conversion (BFCVTN on the BFDOT path). */
static void convert_b(const void *op, uint8_t *dst, const float *src, int n)
{
    const strix_bconv *q = op;
    uint16_t *d = (uint16_t *)dst; /* the workspace's elements are 2-byte aligned */
#ifdef STRIX_BFDOT
    if (q->isa == STRIX_BF16_NEON_BFDOT) {
        convert_row_bfcvt(d, src, n);
        return;
    }
#endif
    (void)q;
    for (int i = 0; i < n; i++) d[i] = strix_bf16_from_f32(src[i]);
}

/* One block (strix_lowp_gemm): panel by panel, the path's 4 x 16 kernel
 * over the whole depth straight into ft. */
static void gemm_b(const void *op, const uint8_t *a_in, size_t lda_in, int full, const uint8_t *a_im, int rest_pad,
                   void *scratch, float *ft)
{
    (void)scratch;
    const strix_bconv *q = op;
    bkernel kern = kernel_c;
#ifdef STRIX_BFDOT
    if (q->isa == STRIX_BF16_NEON_BFDOT) kern = kernel_bfdot;
#endif
    const uint16_t *in = (const uint16_t *)a_in, *im = (const uint16_t *)a_im;
    size_t bstride = (size_t)q->kp * BNR * 2, kpad = (size_t)q->kp * 2;
    for (int jr = 0; jr < q->npad; jr += BNR)
        for (int ir = 0; ir < full + rest_pad; ir += BMR) {
            const uint16_t *a = ir < full ? in + (size_t)ir * lda_in : im + (size_t)(ir - full) * kpad;
            kern(q->kp, a, ir < full ? lda_in : kpad, q->wp + (size_t)(jr / BNR) * bstride,
                 ft + (size_t)ir * q->npad + jr, (size_t)q->npad);
        }
}

static strix_lowp lowp_of(const strix_bconv *q)
{
    /* bf16 zero is two zero bytes; no scratch besides the fp32 tile */
    strix_lowp lp = {q, sizeof(uint16_t), q->k, q->kp * 2, q->cout, q->npad, BMR, 2, 0, 0, convert_b, gemm_b};
    return lp;
}

size_t strix_cpu_conv2d_bf16_workspace(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                                       const strix_bconv *q, int threads)
{
    strix_lowp lp = lowp_of(q);
    return strix_lowp_workspace(out, in, p, &lp, threads);
}

void strix_cpu_conv2d_bf16(const strix_view *out, const strix_view *in, const strix_bconv *q, const float *bias,
                           const strix_view *residual, const strix_conv_params *p, strix_cpu_isa epi_isa,
                           void *workspace, strix_cpu_team *team)
{
    strix_lowp lp = lowp_of(q);
    strix_lowp_conv2d(out, in, &lp, bias, residual, p, epi_isa, workspace, team);
}
