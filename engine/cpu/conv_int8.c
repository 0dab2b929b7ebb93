/* conv_int8.c — the CPU int8 convolution (see conv_int8.h for the
 * quantisation and the packed weight layout): weight quantisation, the
 * activation quantiser, and the GEMM per path, over the reduced-precision
 * driver (conv_lowp.h: the input quantised once into unsigned bytes, the
 * 1x1 convolutions with Cin a multiple of 4 read in place, the others
 * through a byte im2col with the zero point for padding, blocks of rows as
 * the team's tasks).  A block runs the path's MR x 16 (or 12 x 32)
 * register-blocked micro-kernel over the whole depth into its int32 tile
 * and dequantises that into the fp32 tile the epilogue reads.  Integer sums
 * are exact, so the result does not depend on threads or blocking. */
#include "conv_int8.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "conv_isa.h"
#include "conv_lowp.h"

#if defined(__x86_64__) || defined(__i386__)
#define STRIX_X86 1
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#define STRIX_SDOT 1
#include <arm_neon.h>
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20) /* the kernel's bit for the dot-product instructions */
#endif
#endif

#define QNR 16      /* output channels per packed panel */
#define MR_C 4      /* rows per micro-kernel call: portable C */
#define MR_AVX2 4   /* AVX2: 4 rows x 2 ymm accumulators + B, ones, A, temporaries */
#define MR_VNNI 12  /* AVX-512: 12 rows x 2 zmm accumulators (24 of 32 registers) */
#define MR_SDOT 4   /* NEON: 4 rows x 4 q accumulators, one q register holds 4 rows' A */

/* ---------------------------------------------------------------- ISA */

int strix_int8_isa_supported(strix_int8_isa isa)
{
    switch (isa) {
    case STRIX_INT8_C: return 1;
#ifdef STRIX_X86
    case STRIX_INT8_AVX2: return __builtin_cpu_supports("avx2");
    case STRIX_INT8_AVX512_VNNI:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vnni");
#endif
#ifdef STRIX_SDOT
    case STRIX_INT8_NEON_SDOT: return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
    default: return 0;
    }
}

strix_int8_isa strix_int8_best_isa(void)
{
#ifndef STRIX_SANITIZED
    for (int i = STRIX_INT8_ISAS - 1; i > 0; i--)
        if (strix_int8_isa_supported((strix_int8_isa)i)) return (strix_int8_isa)i;
#endif
    return STRIX_INT8_C;
}

const char *strix_int8_isa_name(strix_int8_isa isa)
{
    static const char *const names[] = {"c", "avx2", "avx512-vnni", "neon-sdot"};
    return isa >= 0 && isa < STRIX_INT8_ISAS ? names[isa] : "?";
}

static int isa_mr(strix_int8_isa isa)
{
    return isa == STRIX_INT8_AVX512_VNNI ? MR_VNNI : isa == STRIX_INT8_AVX2 ? MR_AVX2
         : isa == STRIX_INT8_NEON_SDOT ? MR_SDOT : MR_C;
}

/* ----------------------------------------------------------- weights */

/* NaN -> 0.  ISO C mode keeps x * inv_step + zero unfused, in the vector
 * code below too, so both round alike. */
static inline uint8_t quantize(float x, float inv_step, float zero)
{
    float v = x * inv_step + zero;
    v = v > 0.0f ? v : 0.0f;
    v = v < 255.0f ? v : 255.0f;
    return (uint8_t)(int)(v + 0.5f);
}

uint8_t strix_quantize_u8(float x, float inv_step, int zero) { return quantize(x, inv_step, (float)zero); }

/* The scalar quantiser over a run of floats (any CPU). */
static void quantize_row(uint8_t *dst, const float *src, int n, float inv_step, float zero)
{
    for (int i = 0; i < n; i++) dst[i] = quantize(src[i], inv_step, zero);
}

#ifdef STRIX_X86
/* The same with AVX2 (the AVX2 and VNNI paths' CPUs have it): max/min
 * (NaN -> 0, as the selects), truncation of v + 0.5, then packs with
 * unsigned saturation (values are already in 0..255); the scalar tail. */
__attribute__((target("avx2"))) static void quantize_row_avx2(uint8_t *dst, const float *src, int n,
                                                              float inv_step, float zero)
{
    int i = 0;
    const __m256 inv = _mm256_set1_ps(inv_step), z = _mm256_set1_ps(zero), nil = _mm256_setzero_ps();
    const __m256 top = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
#define QV(k) _mm256_cvttps_epi32(_mm256_add_ps( \
        _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(src + i + 8 * (k)), inv), z), nil), top), half))
    for (; i + 32 <= n; i += 32) {
        __m256i p01 = _mm256_packus_epi32(QV(0), QV(1)), p23 = _mm256_packus_epi32(QV(2), QV(3));
        /* bytes per 128-bit lane: lane 0 holds the low halves of the 4 vectors, lane 1 the high */
        __m256i b = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), order);
        _mm256_storeu_si256((__m256i *)(dst + i), b);
    }
    for (; i + 8 <= n; i += 8) {
        __m256i v = QV(0);
        __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(v, v), _mm256_setzero_si256());
        b = _mm256_permutevar8x32_epi32(b, order); /* dwords 0 and 4 -> 0 and 1 */
        _mm_storel_epi64((__m128i *)(dst + i), _mm256_castsi256_si128(b));
    }
#undef QV
    quantize_row(dst + i, src + i, n - i, inv_step, zero);
}
#endif

int strix_qconv_init(strix_qconv *q, const float *w, int cout, int k, float in_lo, float in_hi,
                     strix_int8_isa isa)
{
    memset(q, 0, sizeof *q);
    q->isa = isa;
    q->cout = cout;
    q->k = k;
    q->kq = STRIX_CEIL_DIV(k, 4);
    q->npad = STRIX_CEIL_DIV(cout, QNR) * QNR;
    float lo = in_lo < 0.0f ? in_lo : 0.0f, hi = in_hi > 0.0f ? in_hi : 0.0f;
    if (!(hi > lo)) hi = lo + 1.0f; /* a constant zero input (or NaN): any step works */
    q->in_step = (hi - lo) / 255.0f;
    q->in_zero = (int)(-lo / q->in_step + 0.5f);
    if (q->in_zero > 255) q->in_zero = 255;
    q->dq = malloc(sizeof(float) * (size_t)cout);
    q->comp = calloc((size_t)q->npad, sizeof(int32_t));
    q->wp = calloc((size_t)q->npad * q->kq * 4, 1);
    if (!q->dq || !q->comp || !q->wp) {
        strix_qconv_free(q);
        return -1;
    }
    float wmax = isa == STRIX_INT8_AVX2 ? 63.0f : 127.0f;
    for (int co = 0; co < cout; co++) {
        const float *wr = w + (size_t)co * k;
        float amax = 0.0f;
        for (int kk = 0; kk < k; kk++) {
            float a = wr[kk] < 0 ? -wr[kk] : wr[kk];
            if (a > amax) amax = a;
        }
        float step = amax > 0.0f ? amax / wmax : 1.0f;
        q->dq[co] = q->in_step * step;
        int s = co / QNR, j = co % QNR, sum = 0;
        for (int kk = 0; kk < k; kk++) {
            float v = wr[kk] / step;
            int wq = (int)(v + (v < 0.0f ? -0.5f : 0.5f));
            wq = wq > (int)wmax ? (int)wmax : wq < -(int)wmax ? -(int)wmax : wq;
            q->wp[(((size_t)s * q->kq + kk / 4) * QNR + j) * 4 + kk % 4] = (int8_t)wq;
            sum += wq;
        }
        q->comp[co] = (q->in_zero - (isa == STRIX_INT8_NEON_SDOT ? 128 : 0)) * sum;
    }
    return 0;
}

void strix_qconv_free(strix_qconv *q)
{
    free(q->dq);
    free(q->comp);
    free(q->wp);
    memset(q, 0, sizeof *q);
}

int strix_qconv_weight(const strix_qconv *q, int co, int kk)
{
    return q->wp[(((size_t)(co / QNR) * q->kq + kk / 4) * QNR + co % QNR) * 4 + kk % 4];
}

/* ------------------------------------------------------ micro-kernels */

/* Every kernel: C[mr][16 np] = A[mr][4 kq] * B, int32, overwriting c.
 *   a: row i at a + i*lda (4-byte groups: lda and the base keep no
 *      alignment, hence the memcpy loads);
 *   b: panel 0 at b, panel 1 at b + bstride (bytes), each [kq][16][4];
 *   c: row i at c + i*ldc. */
typedef void (*qkernel)(int kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bstride,
                        int np, int32_t *c, size_t ldc);

static void kernel_c(int kq, const uint8_t *a, size_t lda, const int8_t *b, size_t bstride, int np,
                     int32_t *c, size_t ldc)
{
    (void)bstride;
    assert(np == 1);
    for (int i = 0; i < MR_C; i++) {
        int32_t acc[QNR] = {0};
        const uint8_t *ar = a + i * lda;
        for (int g = 0; g < kq; g++)
            for (int j = 0; j < QNR; j++)
                for (int t = 0; t < 4; t++)
                    acc[j] += (int32_t)ar[4 * g + t] * b[((size_t)g * QNR + j) * 4 + t];
        memcpy(c + i * ldc, acc, sizeof acc);
    }
}

#ifdef STRIX_X86
static inline int32_t load4(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

__attribute__((target("avx2"))) static void kernel_avx2(int kq, const uint8_t *a, size_t lda,
                                                        const int8_t *b, size_t bstride, int np,
                                                        int32_t *c, size_t ldc)
{
    (void)bstride;
    assert(np == 1);
    __m256i acc[MR_AVX2][2];
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 8
    for (int i = 0; i < MR_AVX2; i++) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    for (int g = 0; g < kq; g++) {
        /* channels 0-7 and 8-15, 4 depth bytes each */
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + (size_t)g * 64));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + (size_t)g * 64 + 32));
#pragma GCC unroll 8
        for (int i = 0; i < MR_AVX2; i++) {
            __m256i av = _mm256_set1_epi32(load4(a + i * lda + 4 * g));
            /* u8 x s8 pairs -> s16 (|sum| <= 2*255*63: no saturation), pairs -> s32 */
            __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(av, b0), ones);
            __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(av, b1), ones);
            acc[i][0] = _mm256_add_epi32(acc[i][0], p0);
            acc[i][1] = _mm256_add_epi32(acc[i][1], p1);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR_AVX2; i++) {
        _mm256_storeu_si256((__m256i *)(c + i * ldc), acc[i][0]);
        _mm256_storeu_si256((__m256i *)(c + i * ldc + 8), acc[i][1]);
    }
}

#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* np panels (1 or 2, a constant after inlining). */
VNNI_TARGET static inline void vnni_body(int kq, const uint8_t *a, size_t lda, const int8_t *b,
                                         size_t bstride, const int np, int32_t *c, size_t ldc)
{
    __m512i acc[MR_VNNI][2];
#pragma GCC unroll 16
    for (int i = 0; i < MR_VNNI; i++) acc[i][0] = acc[i][1] = _mm512_setzero_si512();
    for (int g = 0; g < kq; g++) {
        __m512i b0 = _mm512_loadu_si512(b + (size_t)g * 64);
        __m512i b1 = np == 2 ? _mm512_loadu_si512(b + bstride + (size_t)g * 64) : b0;
#pragma GCC unroll 16
        for (int i = 0; i < MR_VNNI; i++) {
            __m512i av = _mm512_set1_epi32(load4(a + i * lda + 4 * g));
            acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], av, b0);
            if (np == 2) acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], av, b1);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR_VNNI; i++) {
        _mm512_storeu_si512(c + i * ldc, acc[i][0]);
        if (np == 2) _mm512_storeu_si512(c + i * ldc + QNR, acc[i][1]);
    }
}

VNNI_TARGET static void kernel_vnni(int kq, const uint8_t *a, size_t lda, const int8_t *b,
                                    size_t bstride, int np, int32_t *c, size_t ldc)
{
    if (np == 2)
        vnni_body(kq, a, lda, b, bstride, 2, c, ldc);
    else
        vnni_body(kq, a, lda, b, bstride, 1, c, ldc);
}
#endif

#ifdef STRIX_SDOT
/* sdot lane form: acc[i][v] += dot(channels 4v..4v+3 of B (4 depth bytes
 * each), row i's 4 A bytes, lane i of av). */
__attribute__((target("arch=armv8.2-a+dotprod"))) static void kernel_sdot(int kq, const uint8_t *a, size_t lda,
                                                            const int8_t *b, size_t bstride, int np,
                                                            int32_t *c, size_t ldc)
{
    (void)bstride;
    assert(np == 1);
    int32x4_t acc[MR_SDOT][4];
    for (int i = 0; i < MR_SDOT; i++)
        for (int v = 0; v < 4; v++) acc[i][v] = vdupq_n_s32(0);
    const uint8x16_t flip = vdupq_n_u8(0x80);
    for (int g = 0; g < kq; g++) {
        int8x16_t bv[4];
        for (int v = 0; v < 4; v++) bv[v] = vld1q_s8(b + (size_t)g * 64 + 16 * v);
        uint8_t rows[16];
        for (int i = 0; i < MR_SDOT; i++) memcpy(rows + 4 * i, a + i * lda + 4 * g, 4);
        int8x16_t av = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(rows), flip)); /* xu - 128 */
        for (int v = 0; v < 4; v++) {
            acc[0][v] = vdotq_laneq_s32(acc[0][v], bv[v], av, 0);
            acc[1][v] = vdotq_laneq_s32(acc[1][v], bv[v], av, 1);
            acc[2][v] = vdotq_laneq_s32(acc[2][v], bv[v], av, 2);
            acc[3][v] = vdotq_laneq_s32(acc[3][v], bv[v], av, 3);
        }
    }
    for (int i = 0; i < MR_SDOT; i++)
        for (int v = 0; v < 4; v++) vst1q_s32(c + i * ldc + 4 * v, acc[i][v]);
}
#endif

static qkernel isa_kernel(strix_int8_isa isa)
{
#ifdef STRIX_SDOT
    if (isa == STRIX_INT8_NEON_SDOT) return kernel_sdot;
#endif
#ifdef STRIX_X86
    if (isa == STRIX_INT8_AVX512_VNNI) return kernel_vnni;
    if (isa == STRIX_INT8_AVX2) return kernel_avx2;
#endif
    return kernel_c;
}

/* ----------------------------------------------------------- the conv */

/* f[i][j] = (c[i][j] - comp[j]) * dq[j] for i < rows, j < n (row stride ld);
 * cloned for the vector widths the loader picks from. */
#ifdef STRIX_X86
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void dequantize(float *f, const int32_t *c, const int32_t *comp, const float *dq, int rows, int n,
                       size_t ld)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < n; j++) f[i * ld + j] = (float)(c[i * ld + j] - comp[j]) * dq[j];
}

/* The activation quantiser as conv_lowp's conversion. */
static void convert_q(const void *op, uint8_t *dst, const float *src, int n)
{
    const strix_qconv *q = op;
    float inv = 1.0f / q->in_step, zero = (float)q->in_zero;
#ifdef STRIX_X86
    if (q->isa == STRIX_INT8_AVX2 || q->isa == STRIX_INT8_AVX512_VNNI) {
        quantize_row_avx2(dst, src, n, inv, zero);
        return;
    }
#endif
    quantize_row(dst, src, n, inv, zero);
}

/* One block (strix_lowp_gemm): panel by panel, the path's micro-kernel over
 * the whole depth into the int32 tile (scratch), then dequantised into ft. */
static void gemm_q(const void *op, const uint8_t *a_in, size_t lda_in, int full, const uint8_t *a_im, int rest_pad,
                   void *scratch, float *ft)
{
    const strix_qconv *q = op;
    const int mr = isa_mr(q->isa), max_np = q->isa == STRIX_INT8_AVX512_VNNI ? 2 : 1;
    const qkernel kern = isa_kernel(q->isa);
    int32_t *ct = scratch;
    size_t bstride = (size_t)q->kq * QNR * 4, kpad = (size_t)q->kq * 4;
    for (int jr = 0; jr < q->npad;) {
        int np = jr + 2 * QNR <= q->npad ? max_np : 1;
        const int8_t *b = q->wp + (size_t)(jr / QNR) * bstride;
        for (int ir = 0; ir < full + rest_pad; ir += mr) {
            const uint8_t *a = ir < full ? a_in + (size_t)ir * lda_in : a_im + (size_t)(ir - full) * kpad;
            kern(q->kq, a, ir < full ? lda_in : kpad, b, bstride, np, ct + (size_t)ir * q->npad + jr, (size_t)q->npad);
        }
        jr += np * QNR;
    }
    dequantize(ft, ct, q->comp, q->dq, full + rest_pad, q->cout, (size_t)q->npad);
}

static strix_lowp lowp_of(const strix_qconv *q)
{
    strix_lowp lp = {q, 1, q->k, q->kq * 4, q->cout, q->npad, isa_mr(q->isa), 4, (uint8_t)q->in_zero,
                     (size_t)q->npad * sizeof(int32_t), convert_q, gemm_q};
    return lp;
}

size_t strix_cpu_conv2d_int8_workspace(const strix_view *out, const strix_view *in,
                                       const strix_conv_params *p, const strix_qconv *q,
                                       int threads)
{
    strix_lowp lp = lowp_of(q);
    return strix_lowp_workspace(out, in, p, &lp, threads);
}

void strix_cpu_conv2d_int8(const strix_view *out, const strix_view *in, const strix_qconv *q,
                           const float *bias, const strix_view *residual,
                           const strix_conv_params *p, strix_cpu_isa epi_isa, void *workspace,
                           strix_cpu_team *team)
{
    strix_lowp lp = lowp_of(q);
    strix_lowp_conv2d(out, in, &lp, bias, residual, p, epi_isa, workspace, team);
}
