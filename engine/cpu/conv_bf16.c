/* conv_bf16.c — the CPU bf16 convolution (see conv_bf16.h for the rounding
 * and the packed weight layout): weight packing, the activation
 * conversion, and the GEMM per path.
 *
 * Layouts as strix_cpu_conv2d: in [N, H, W, Cin], out/residual
 * [N, OH, OW, Cout] strided NHWC views, weights OHWI.  Per image the
 * convolution is C[M][Cout] = A[M][K] * B[K][Cout], M = OH*OW pixels,
 * K = KH*KW*Cin in (ky, kx, ci) order, the int8 convolution's scheme
 * (conv_int8.c) with 2-byte elements:
 *   1. the whole input is converted once into the workspace, dense
 *      [N][H][W][Cin] bf16;
 *   2. a 1x1 stride-1 unpadded convolution with Cin even reads A straight
 *      from it (row stride Cin = K); any other shape builds A for one block
 *      of rows at a time (im2col, row stride kp*2, zero for padding taps and
 *      past K);
 *   3. blocks of rows are the team's tasks; the thread running one runs
 *      the 4 x 16 micro-kernel over the whole depth into its fp32 tile and
 *      hands that to the fp32 convolution's epilogue (conv_isa.h).
 * Each output's sum runs over the depth in order whatever the blocking, so
 * the result does not depend on threads. */
#include "conv_bf16.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "conv_int8.h"
#include "conv_isa.h"

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
#define MC_MAX 96 /* rows per block at most */

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

static void convert_row(uint16_t *dst, const float *src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = strix_bf16_from_f32(src[i]);
}

/* ----------------------------------------------------------- the conv */

typedef struct bplan {
    int threads;
    int m;      /* output pixels per image */
    int kpad;   /* kp * 2 */
    int mc;     /* rows per block, a multiple of BMR */
    int direct; /* A is the converted input itself */
    size_t img_bytes, a_bytes, t_bytes; /* converted input; per thread: A block, one tile */
} bplan;

static size_t round_up(size_t n) { return STRIX_CEIL_DIV(n, WS_ALIGN) * WS_ALIGN; }

static bplan make_bplan(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                        const strix_bconv *q, int threads)
{
    bplan pl;
    memset(&pl, 0, sizeof pl);
    pl.threads = threads < 1 ? 1 : threads;
    pl.m = out->h * out->w;
    pl.kpad = q->kp * 2;
    pl.direct = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0 && in->c % 2 == 0;
    pl.mc = strix_cpu_row_block(pl.m, out->n, pl.threads, BMR, MC_MAX);
    pl.img_bytes = round_up((size_t)in->n * in->h * in->w * in->c * sizeof(uint16_t));
    pl.a_bytes = round_up((size_t)pl.mc * pl.kpad * sizeof(uint16_t));
    pl.t_bytes = round_up((size_t)pl.mc * q->npad * sizeof(float));
    return pl;
}

size_t strix_cpu_conv2d_bf16_workspace(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                                       const strix_bconv *q, int threads)
{
    bplan pl = make_bplan(out, in, p, q, threads);
    return pl.img_bytes + (size_t)pl.threads * (pl.a_bytes + pl.t_bytes) + WS_ALIGN;
}

/* Rows [m0, m0 + rows) of image n: the GEMM into the fp32 tile, then the
 * epilogue into out. */
static void bgemm_block(const strix_view *out, const strix_view *in, const strix_bconv *q, const float *bias,
                        const strix_view *residual, const strix_conv_params *p, const bplan *pl,
                        strix_cpu_isa epi_isa, const uint16_t *bimg, uint16_t *ap, float *ct, int n, int m0, int rows)
{
    bkernel kern = kernel_c;
#ifdef STRIX_BFDOT
    if (q->isa == STRIX_BF16_NEON_BFDOT) kern = kernel_bfdot;
#endif
    const uint16_t *img = bimg + (size_t)n * in->h * in->w * in->c;
    int full = pl->direct ? rows / BMR * BMR : 0; /* rows read in place */
    int rest = rows - full, rest_pad = STRIX_CEIL_DIV(rest, BMR) * BMR;
    if (rest) /* bf16 zero is two zero bytes: the byte im2col with 2-byte elements */
        strix_cpu_im2col_bytes((uint8_t *)ap, (const uint8_t *)img, sizeof(uint16_t), in, p, pl->kpad, out->w,
                               m0 + full, rest, rest_pad, q->k, 0);
    size_t bstride = (size_t)q->kp * BNR * 2;
    for (int jr = 0; jr < q->npad; jr += BNR)
        for (int ir = 0; ir < full + rest_pad; ir += BMR) {
            const uint16_t *a = ir < full ? img + (size_t)(m0 + ir) * in->c : ap + (size_t)(ir - full) * pl->kpad;
            size_t lda = ir < full ? (size_t)in->c : (size_t)pl->kpad;
            kern(q->kp, a, lda, q->wp + (size_t)(jr / BNR) * bstride, ct + (size_t)ir * q->npad + jr,
                 (size_t)q->npad);
        }
    float *o = out->data + (size_t)n * out->batch_stride + (size_t)m0 * out->pix_stride;
    const float *r = NULL;
    size_t ldr = 0;
    if (residual) {
        r = residual->data + (size_t)n * residual->batch_stride + (size_t)m0 * residual->pix_stride;
        ldr = residual->pix_stride;
    }
    strix_cpu_conv_epilogue(epi_isa, o, out->pix_stride, ct, (size_t)q->npad, bias, r, ldr, rows, q->cout, p->act);
}

/* What the team's tasks share. */
typedef struct brun {
    const strix_view *out, *in, *residual;
    const strix_bconv *q;
    const float *bias;
    const strix_conv_params *p;
    strix_cpu_isa epi_isa;
    bplan pl;
    uint16_t *bimg;
    int blocks;
} brun;

/* Task: image row `row` of the input converted into bimg. */
static void convert_task(void *ctx, int row, int worker)
{
    (void)worker;
    const brun *r = ctx;
    const strix_view *in = r->in;
    int n = row / in->h, y = row % in->h, cin = in->c;
    void (*row_fn)(uint16_t *, const float *, int) = convert_row;
#ifdef STRIX_BFDOT
    if (r->q->isa == STRIX_BF16_NEON_BFDOT) row_fn = convert_row_bfcvt;
#endif
    uint16_t *dst = r->bimg + ((size_t)n * in->h + y) * in->w * cin;
    if (in->pix_stride == (size_t)cin) /* dense: the whole image row at once */
        row_fn(dst, strix_view_at(in, n, y, 0), in->w * cin);
    else
        for (int x = 0; x < in->w; x++) row_fn(dst + (size_t)x * cin, strix_view_at(in, n, y, x), cin);
}

/* Task: one block of rows of one image, in the worker's scratch. */
static void gemm_task(void *ctx, int t, int worker)
{
    const brun *r = ctx;
    const bplan *pl = &r->pl;
    uint8_t *scratch = (uint8_t *)r->bimg + pl->img_bytes + (size_t)worker * (pl->a_bytes + pl->t_bytes);
    int n = t / r->blocks, m0 = (t % r->blocks) * pl->mc;
    int rows = pl->m - m0 < pl->mc ? pl->m - m0 : pl->mc;
    bgemm_block(r->out, r->in, r->q, r->bias, r->residual, r->p, pl, r->epi_isa, r->bimg, (uint16_t *)scratch,
                (float *)(scratch + pl->a_bytes), n, m0, rows);
}

void strix_cpu_conv2d_bf16(const strix_view *out, const strix_view *in, const strix_bconv *q, const float *bias,
                           const strix_view *residual, const strix_conv_params *p, strix_cpu_isa epi_isa,
                           void *workspace, strix_cpu_team *team)
{
    assert(p->groups == 1 && in->n == out->n && out->c == q->cout);
    assert(q->k == p->kh * p->kw * in->c);
    if (out->n == 0 || out->h == 0 || out->w == 0 || out->c == 0) return;
    brun r = {out, in, residual, q, bias, p, epi_isa, make_bplan(out, in, p, q, strix_cpu_team_threads(team)),
              NULL, 0};
    uintptr_t base = ((uintptr_t)workspace + WS_ALIGN - 1) & ~(uintptr_t)(WS_ALIGN - 1);
    r.bimg = (uint16_t *)base;
    r.blocks = STRIX_CEIL_DIV(r.pl.m, r.pl.mc);
    /* every element is converted before any block reads it: the first loop returns first */
    strix_cpu_team_run(team, in->n * in->h, convert_task, &r);
    strix_cpu_team_run(team, out->n * r.blocks, gemm_task, &r);
}
