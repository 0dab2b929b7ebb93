/* conv_kernels.h — the CPU convolution for one instruction set, included once
 * by each engine/cpu/conv_<isa>.c: that file compiles it with its ISA's flags
 * (Makefile) after defining
 *   CONV_SUFFIX  the name suffix: strix_cpu_conv2d_<suffix> and
 *                strix_cpu_conv2d_workspace_<suffix> (conv_isa.h);
 *   VL           floats per vector register (4 SSE2/NEON, 8 AVX2, 16 AVX-512);
 *   MR, NR       the register block: MR rows x NR columns of C live in
 *                MR * NR/VL vector registers, B streamed NR wide.
 * engine/cpu/conv.c picks one of them at run time (conv_isa.h).
 *
 * Layouts: in [N, H, W, Cin] and out/residual [N, OH, OW, Cout] strided NHWC
 * views; w [Cout, KH, KW, Cin/g] (OHWI); bias [Cout].
 *
 * Per group the convolution is the GEMM C[M][Ng] = A[M][K] * B[K][Ng] with
 * M = OH*OW output pixels of one image (rows), Ng = Cout/g output channels
 * and K = KH*KW*Cin/g, where a row of A is the pixel's receptive field in
 * (ky, kx, ci) order — the order of the OHWI weights, so B[k][co] is
 * w[co][k] and needs no reordering beyond panel packing.
 *   - 1x1 stride-1 unpadded convolutions read A straight from the input view
 *     (row stride = pix_stride): no im2col at all.
 *   - other shapes build A for one block of rows at a time (im2col of a row
 *     block into the workspace, row-major like the 1x1 case).
 *   - depthwise convolutions (Cin/g == Cout/g == 1) are not a GEMM but a
 *     per-pixel multiply-add over channels, handled by their own loop.
 *   - a build that defines CONV_DIRECT (AVX2) runs the shapes its rule
 *     DIRECT_FITS picks (thin 3x3 layers at >= 40 pixels a row, the stem)
 *     as a direct convolution instead: same packed B, no A at all (below).
 *   - a build that defines CONV_WINOGRAD (AVX2) runs 3x3 stride-1 layers
 *     its rules WINO_PACKS / WINO_FITS pick as Winograd F(4x4, 3x3) when
 *     the weights were packed beforehand (conv_winograd.h: transformed
 *     weights after the packed B, the same micro-kernel over the 36
 *     transformed points; not bit-equal to the GEMM).
 * The GEMM is blocked GotoBLAS-style: B is packed into NR-wide panels, once
 * at load (strix_cpu_conv2d_pack, the CPU backend does it for every conv) or
 * else once per call and group (shared by all threads); blocks of MC rows
 * are the tasks of the team (engine/cpu/team.h), and the thread running one
 * packs KC-deep slices of it (im2col per tile) and runs an MR x NR
 * register-blocked micro-kernel into its own tile, then applies bias + SiLU
 * + residual while copying the tile into out.  Accumulating in the tile, not in out,
 * keeps `residual == out` correct and lets the micro-kernel always work on
 * full MR x NR blocks (tails are zero-padded).
 *
 * Every output element is summed in the same order whatever the thread count
 * or row blocking (k ascending, KC-sized partial sums added in order), so
 * results do not depend on the team's size.  They do depend on the instruction set
 * in the last bits (fused or separate multiply-add, the SiLU's exp).
 *
 * The micro-kernel and the epilogue use GCC/Clang vector extensions (not
 * intrinsics), so one source serves every ISA.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "conv_isa.h"
#include "team.h"

#if !defined(__GNUC__)
#error "engine/cpu/conv_kernels.h uses GCC/Clang vector extensions: build with gcc or clang"
#endif
#if !defined(CONV_SUFFIX) || !defined(VL) || !defined(MR) || !defined(NR) || NR % VL
#error "define CONV_SUFFIX, VL, MR and NR (NR a multiple of VL) before including conv_kernels.h"
#endif

/* Cache blocks: a KC x NR panel of B (16 KiB at NR 16) stays in L1, an MC x
 * KC block of A (about 96 KiB) in L2; NC bounds the per-thread output tile
 * (MC x NC).  MC_MAX is a multiple of MR. */
#define KC 256
#define MC_MAX (96 / MR * MR)
#define NC 256
#define NV (NR / VL)

#define CONV_CAT_(a, b) a##b
#define CONV_CAT(a, b) CONV_CAT_(a, b)
#define CONV_FN(name) CONV_CAT(name, CONV_SUFFIX)

#include "vmath.h"

/* One vector of the epilogue: act(acc + bias) [+ res]. */
/* The SiLU divides: a reciprocal estimate refined by a Newton step (vrcp14ps,
 * within 1 ulp of 1/d) was tried on AVX-512 and moved the heads measurably
 * further from Ultralytics' (test_golden yolo11n: head rel L2 6.5e-7 ->
 * 1.8e-6, end-to-end boxes 585 -> 567 of 590), so the division stays. */
static inline vf epi_vec(vf acc, vf bias, vf res, strix_act act)
{
    vf v = acc + bias;
    if (act == STRIX_ACT_SILU) v = v / (v_splat(1.0f) + v_exp(-v));
    return v + res;
}

/* For rows i < rows and channels j < n:
 *   out[i*ldo + j] = act(acc[i*lda + j] + bias[j]) (+ res[i*ldr + j]);
 * res may equal out.  A row's tail goes through the same vector code on a
 * zero-padded copy, so every element gets bit-identical arithmetic wherever
 * it falls.  Without a residual, 0 is added (changes at most a zero's sign). */
static void epilogue(float *out, size_t ldo, const float *acc, size_t lda, const float *bias,
                     const float *res, size_t ldr, int rows, int n, strix_act act)
{
    int full = n / VL * VL;
    size_t tail = (size_t)(n - full) * sizeof(float);
    vf zero = v_splat(0.0f), bt = zero;
    memcpy(&bt, bias + full, tail);
    for (int i = 0; i < rows; i++) {
        float *o = out + i * ldo;
        const float *a = acc + i * lda, *r = res ? res + i * ldr : NULL;
        for (int j = 0; j < full; j += VL) {
            vf rv = r ? v_load(r + j) : zero;
            v_store(o + j, epi_vec(v_load(a + j), v_load(bias + j), rv, act));
        }
        if (tail) {
            vf at = zero, rt = zero, ot;
            memcpy(&at, a + full, tail);
            if (r) memcpy(&rt, r + full, tail);
            ot = epi_vec(at, bt, rt, act);
            memcpy(o + full, &ot, tail);
        }
    }
}

void CONV_FN(strix_cpu_conv_epilogue_)(float *out, size_t ldo, const float *acc, size_t lda, const float *bias,
                                       const float *res, size_t ldr, int rows, int n, strix_act act)
{
    epilogue(out, ldo, acc, lda, bias, res, ldr, rows, n, act);
}

/* C[MR][NR] (+)= A[MR][kc] * B[kc][NR].
 *   a: element (i, k) at a[i*lda + k] (a packed im2col block: lda kc;
 *      straight from a 1x1 conv's input: lda pix_stride)
 *   b: packed panel, element (k, j) at b[k*NR + j]
 *   c: row i at c + i*ldc; overwritten when !accumulate. */
static void micro_kernel(int kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                         int accumulate)
{
    vf acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) acc[i][v] = v_splat(0.0f);
    for (int k = 0; k < kc; k++) {
        vf bv[NV];
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) bv[v] = v_load(b + (size_t)k * NR + v * VL);
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++) {
            vf av = v_splat(a[i * lda + k]);
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++) acc[i][v] = v_fma(av, bv[v], acc[i][v]);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            float *p = c + i * ldc + v * VL;
            v_store(p, accumulate ? v_load(p) + acc[i][v] : acc[i][v]);
        }
}

/* Everything the workspace size and the run agree on. */
typedef struct conv_plan {
    int threads;
    int cg, ng;      /* input / output channels per group */
    int m, k;        /* GEMM rows (pixels per image) and depth */
    int npad;        /* ng rounded up to NR */
    int nc;          /* tile width: min(NC, npad) */
    int kc;          /* min(KC, k) */
    int mc;          /* rows per block (multiple of MR) */
    int direct;      /* 1x1, stride 1, no padding: A is the input itself */
    int depthwise;   /* cg == ng == 1 */
    size_t b_floats; /* packed B of one group (GEMM) / transposed weights (depthwise) */
    size_t a_floats; /* per-thread packed A block */
    size_t t_floats; /* per-thread output tile */
} conv_plan;

/* n floats rounded up to whole WS_ALIGN-byte lines */
static size_t round_floats(size_t n)
{
    size_t line = WS_ALIGN / sizeof(float);
    return STRIX_CEIL_DIV(n, line) * line;
}

/* What depends on the weights' shape only: enough to pack them. */
static conv_plan weight_plan(int cin, int cout, const strix_conv_params *p)
{
    conv_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.cg = cin / p->groups;
    pl.ng = cout / p->groups;
    pl.k = p->kh * p->kw * pl.cg;
    pl.depthwise = pl.cg == 1 && pl.ng == 1;
    if (pl.depthwise) {
        pl.b_floats = round_floats((size_t)p->kh * p->kw * cout);
        return pl;
    }
    pl.npad = STRIX_CEIL_DIV(pl.ng, NR) * NR;
    pl.b_floats = round_floats((size_t)pl.k * pl.npad);
    return pl;
}

static conv_plan make_plan(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                           int threads)
{
    conv_plan pl = weight_plan(in->c, out->c, p);
    pl.threads = threads < 1 ? 1 : threads;
    pl.m = out->h * out->w;
    pl.direct = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0;
    if (pl.depthwise) return pl;
    pl.nc = pl.npad < NC ? pl.npad : NC;
    pl.kc = pl.k < KC ? pl.k : KC;
    pl.mc = strix_cpu_row_block(pl.m, out->n, pl.threads, MR, MC_MAX);
    pl.a_floats = round_floats((size_t)pl.mc * pl.kc);
    pl.t_floats = round_floats((size_t)pl.mc * pl.nc);
    return pl;
}

#if defined(CONV_WINOGRAD)
#include "conv_winograd.h"
#endif

size_t CONV_FN(strix_cpu_conv2d_workspace_)(const strix_view *out, const strix_view *in,
                                  const strix_conv_params *p, int threads)
{
    /* per thread the blocks of a 1-thread run, the largest: a team of fewer
     * threads than `threads` may run on this workspace, and its row blocks
     * are larger (strix_cpu_row_block) */
    conv_plan pl = make_plan(out, in, p, threads), one = make_plan(out, in, p, 1);
    size_t floats = pl.b_floats + (size_t)pl.threads * (one.a_floats + one.t_floats);
#if defined(CONV_WINOGRAD)
    if (!pl.depthwise && wino_packs(in->c, out->c, p) && WINO_FITS(out, &pl)) {
        wino_job j = wino_plan(out, &one);
        size_t wf = (size_t)pl.threads * (j.v_floats + j.m_floats);
        if (wf > floats) floats = wf;
    }
#endif
    return floats * sizeof(float) + WS_ALIGN;
}

/* Pack B of group g: panel s holds output channels [s*NR, s*NR + NR) as
 * b[s*k*NR + kk*NR + j] = w[g*ng + s*NR + j][kk], zero past ng. */
static void pack_b_panel(float *bp, const float *w, const conv_plan *pl, int g, int s)
{
    float *dst = bp + (size_t)s * pl->k * NR;
    for (int j = 0; j < NR; j++) {
        int co = s * NR + j;
        if (co < pl->ng) {
            const float *src = w + ((size_t)g * pl->ng + co) * pl->k;
            for (int kk = 0; kk < pl->k; kk++) dst[(size_t)kk * NR + j] = src[kk];
        } else {
            for (int kk = 0; kk < pl->k; kk++) dst[(size_t)kk * NR + j] = 0.0f;
        }
    }
}

/* dst[0, n) = src[0, n), n >= 1.  Few-channel layers (the RGB stem, 16-
 * and 32-channel maps) copy many short runs: those are done with fixed-size
 * moves (the last one overlapping) rather than a library call per run. */
static inline void copy_run(float *dst, const float *src, int n)
{
    if (n >= 64) {
        memcpy(dst, src, (size_t)n * sizeof(float));
    } else if (n >= 4) {
        for (int i = 0; i + 4 <= n; i += 4) memcpy(dst + i, src + i, 4 * sizeof(float));
        memcpy(dst + n - 4, src + n - 4, 4 * sizeof(float));
    } else {
        dst[0] = src[0];
        if (n > 1) dst[1] = src[1];
        if (n > 2) dst[2] = src[2];
    }
}

/* im2col of rows [m0, m0 + rows) of image n, depth [k0, k0 + kc), into a
 * row-major block: element (row i, depth kk) at ap[i*kc + kk], so every run
 * of channels is one memcpy.  Rows up to the next multiple of MR are zero;
 * so are padding taps. */
static void pack_a(float *ap, const strix_view *in, const strix_conv_params *p,
                   const conv_plan *pl, int ow, int n, int g, int m0, int rows, int k0, int kc)
{
    int rows_pad = STRIX_CEIL_DIV(rows, MR) * MR;
    const float *img = in->data + (size_t)n * in->batch_stride + (size_t)g * pl->cg;
    int contiguous = p->dw == 1 && in->pix_stride == (size_t)pl->cg;
    for (int i = 0; i < rows_pad; i++) {
        float *dst = ap + (size_t)i * kc;
        if (i >= rows) {
            memset(dst, 0, (size_t)kc * sizeof(float));
            continue;
        }
        int m = m0 + i;
        int iy0 = (m / ow) * p->sh - p->ph, ix0 = (m % ow) * p->sw - p->pw;
        int tap = k0 / pl->cg, ci = k0 % pl->cg;
        for (int kk = 0; kk < kc; ci = 0) {
            int kx = tap % p->kw;
            int iy = iy0 + (tap / p->kw) * p->dh, ix = ix0 + kx * p->dw;
            int run = pl->cg - ci < kc - kk ? pl->cg - ci : kc - kk;
            int taps = 1;
            if (iy >= 0 && iy < in->h && ix >= 0 && ix < in->w) {
                /* dense undilated input: the next taps of this kernel row
                 * continue the same memory run */
                if (contiguous)
                    for (; kx + taps < p->kw && ix + taps < in->w && kk + run < kc; taps++)
                        run += pl->cg < kc - kk - run ? pl->cg : kc - kk - run;
                copy_run(dst + kk, img + ((size_t)iy * in->w + ix) * in->pix_stride + ci, run);
            } else {
                memset(dst + kk, 0, (size_t)run * sizeof(float));
            }
            kk += run;
            tap += taps;
        }
    }
}

/* Rows [m0, m0 + rows) of image n, group g: the whole GEMM for that block and
 * the epilogue into out. */
static void gemm_block(const strix_view *out, const strix_view *in, const float *bias,
                       const strix_view *residual, const strix_conv_params *p,
                       const conv_plan *pl, const float *bp, float *ap, float *tile, int n,
                       int g, int m0, int rows)
{
    for (int jc = 0; jc < pl->npad; jc += pl->nc) {
        int ncb = pl->npad - jc < pl->nc ? pl->npad - jc : pl->nc;
        for (int k0 = 0; k0 < pl->k; k0 += pl->kc) {
            int kc = pl->k - k0 < pl->kc ? pl->k - k0 : pl->kc;
            int full = pl->direct ? rows / MR * MR : 0; /* rows read in place */
            const float *a_in = NULL;
            if (pl->direct)
                a_in = in->data + (size_t)n * in->batch_stride + (size_t)m0 * in->pix_stride +
                       (size_t)g * pl->cg + k0;
            if (full < rows)
                pack_a(ap, in, p, pl, out->w, n, g, m0 + full, rows - full, k0, kc);
            for (int jr = jc; jr < jc + ncb; jr += NR) {
                const float *b = bp + (size_t)(jr / NR) * pl->k * NR + (size_t)k0 * NR;
                float *t = tile + (jr - jc);
                for (int ir = 0; ir < rows; ir += MR) {
                    float *c = t + (size_t)ir * pl->nc;
                    if (ir < full)
                        micro_kernel(kc, a_in + (size_t)ir * in->pix_stride, in->pix_stride, b,
                                     c, pl->nc, k0 > 0);
                    else
                        micro_kernel(kc, ap + (size_t)(ir - full) * kc, kc, b, c, pl->nc,
                                     k0 > 0);
                }
            }
        }
        int cols = pl->ng - jc < ncb ? pl->ng - jc : ncb;
        int co = g * pl->ng + jc;
        float *o = out->data + (size_t)n * out->batch_stride + (size_t)m0 * out->pix_stride + co;
        const float *r = NULL;
        size_t ldr = 0;
        if (residual) {
            r = residual->data + (size_t)n * residual->batch_stride +
                (size_t)m0 * residual->pix_stride + co;
            ldr = residual->pix_stride;
        }
        epilogue(o, out->pix_stride, tile, pl->nc, bias + co, r, ldr, rows, cols, p->act);
    }
}

/* One call's loops, for the team's task functions. */
typedef struct gemm_job {
    const strix_view *out, *in, *residual;
    const float *w, *bias, *b; /* b: the current group's packed B */
    const strix_conv_params *p;
    const conv_plan *pl;
    float *ws;
    int g, blocks;
} gemm_job;

static void pack_task(void *ctx, int s, int worker)
{
    const gemm_job *j = ctx;
    (void)worker;
    pack_b_panel(j->ws, j->w, j->pl, j->g, s);
}

/* Task t: rows [m0, m0 + mc) of image t / blocks, group g. */
static void gemm_task(void *ctx, int t, int worker)
{
    const gemm_job *j = ctx;
    const conv_plan *pl = j->pl;
    float *ap = j->ws + pl->b_floats + (size_t)worker * (pl->a_floats + pl->t_floats);
    float *tile = ap + pl->a_floats;
    int n = t / j->blocks, m0 = (t % j->blocks) * pl->mc;
    int rows = pl->m - m0 < pl->mc ? pl->m - m0 : pl->mc;
    gemm_block(j->out, j->in, j->bias, j->residual, j->p, pl, j->b, ap, tile, n, j->g, m0, rows);
}

/* packed: B of every group packed at load (group g at g * b_floats), or
 * NULL: each group's packed here into the workspace (the first loop; the
 * team's return from it keeps B stable while the second one reads it). */
static void conv_gemm(const strix_view *out, const strix_view *in, const float *w,
                      const float *packed, const float *bias, const strix_view *residual,
                      const strix_conv_params *p, const conv_plan *pl, float *ws, strix_cpu_team *team)
{
    gemm_job j = {out, in, residual, w, bias, NULL, p, pl, ws, 0, STRIX_CEIL_DIV(pl->m, pl->mc)};
    for (j.g = 0; j.g < p->groups; j.g++) {
        j.b = packed ? packed + (size_t)j.g * pl->b_floats : ws;
        if (!packed) strix_cpu_team_run(team, pl->npad / NR, pack_task, &j);
        strix_cpu_team_run(team, out->n * j.blocks, gemm_task, &j);
    }
}

/* The depthwise weights transposed to wt[tap][c], so that the channel loop
 * is contiguous in both operands. */
static void pack_depthwise(float *wt, const float *w, int c_all, const strix_conv_params *p)
{
    int taps = p->kh * p->kw;
    for (int c = 0; c < c_all; c++)
        for (int t = 0; t < taps; t++) wt[(size_t)t * c_all + c] = w[(size_t)c * taps + t];
}

/* Depthwise: out[n,y,x,c] = sum over taps of in[n,iy,ix,c] * w[c][ky][kx],
 * with the weights as pack_depthwise lays them out. */
typedef struct dw_job {
    const strix_view *out, *in, *residual;
    const float *wt, *bias;
    const strix_conv_params *p;
} dw_job;

/* Depthwise: vectors of channels accumulated side by side per pass, so that
 * their multiply-add and SiLU chains overlap (one at a time left the core
 * waiting on each chain's latency: 2.3x slower). */
#define DW_VECS 4

/* Output pixel (n, oy, ox) for channels [c0, c0 + nv * VL) where every one
 * of those nv <= DW_VECS vectors is full (cols == VL), or the one vector at
 * c0 holds cols < VL channels (nv 1: loads, bias and residual through
 * zero-padded copies, as epilogue() does).  The taps inside the input in
 * ky, kx order from zero: the scalar loop's order, so the same bits. */
static inline void dw_pixel(const dw_job *j, const float *img, int n, int oy, int ox, int c0, int nv, int cols)
{
    const strix_view *out = j->out, *in = j->in;
    const strix_conv_params *p = j->p;
    int c_all = out->c;
    size_t bytes = (size_t)cols * sizeof(float);
    vf zero = v_splat(0.0f), acc[DW_VECS] = {0};
    /* the taps inside the input: ky in [ky0, ky1), kx in [kx0, kx1) */
    int y0 = oy * p->sh - p->ph, x0 = ox * p->sw - p->pw;
    int ky0 = y0 >= 0 ? 0 : (-y0 + p->dh - 1) / p->dh, ky1 = y0 < in->h ? (in->h - 1 - y0) / p->dh + 1 : 0;
    int kx0 = x0 >= 0 ? 0 : (-x0 + p->dw - 1) / p->dw, kx1 = x0 < in->w ? (in->w - 1 - x0) / p->dw + 1 : 0;
    ky1 = ky1 < p->kh ? ky1 : p->kh;
    kx1 = kx1 < p->kw ? kx1 : p->kw;
    for (int ky = ky0; ky < ky1; ky++) {
        const float *row = img + (size_t)(y0 + ky * p->dh) * in->w * in->pix_stride + c0;
        for (int kx = kx0; kx < kx1; kx++) {
            const float *src = row + (size_t)(x0 + kx * p->dw) * in->pix_stride;
            const float *wr = j->wt + (size_t)(ky * p->kw + kx) * c_all + c0;
            if (cols < VL) {
                vf x = zero, w = zero;
                memcpy(&x, src, bytes);
                memcpy(&w, wr, bytes);
                acc[0] = v_fma(x, w, acc[0]);
                continue;
            }
#pragma GCC unroll 4
            for (int v = 0; v < DW_VECS; v++)
                if (v < nv) acc[v] = v_fma(v_load(src + v * VL), v_load(wr + v * VL), acc[v]);
        }
    }
    float *o = strix_view_at(out, n, oy, ox) + c0;
    const float *r = j->residual ? strix_view_at(j->residual, n, oy, ox) + c0 : NULL;
    if (cols < VL) {
        vf bt = zero, rt = zero;
        memcpy(&bt, j->bias + c0, bytes);
        if (r) memcpy(&rt, r, bytes);
        vf ot = epi_vec(acc[0], bt, rt, p->act);
        memcpy(o, &ot, bytes);
        return;
    }
#pragma GCC unroll 4
    for (int v = 0; v < DW_VECS; v++)
        if (v < nv) v_store(o + v * VL, epi_vec(acc[v], v_load(j->bias + c0 + v * VL), r ? v_load(r + v * VL) : zero, p->act));
}

/* Task: output row `row` (image row / out->h, y row % out->h): per pixel,
 * its channels DW_VECS vectors at a time, then the remaining full vectors
 * and the tail. */
static void dw_task(void *ctx, int row, int worker)
{
    const dw_job *j = ctx;
    (void)worker;
    int c_all = j->out->c, full = c_all / VL * VL, blocks = full / (DW_VECS * VL) * (DW_VECS * VL);
    int n = row / j->out->h, oy = row % j->out->h;
    const float *img = j->in->data + (size_t)n * j->in->batch_stride;
    for (int ox = 0; ox < j->out->w; ox++) {
        int c0 = 0;
        for (; c0 < blocks; c0 += DW_VECS * VL) dw_pixel(j, img, n, oy, ox, c0, DW_VECS, VL);
        if (c0 < full) dw_pixel(j, img, n, oy, ox, c0, (full - c0) / VL, VL);
        if (full < c_all) dw_pixel(j, img, n, oy, ox, full, 1, c_all - full);
    }
}

static void conv_depthwise(const strix_view *out, const strix_view *in, const float *wt,
                           const float *bias, const strix_view *residual,
                           const strix_conv_params *p, strix_cpu_team *team)
{
    dw_job j = {out, in, residual, wt, bias, p};
    strix_cpu_team_run(team, out->n * out->h, dw_task, &j);
}

#if defined(CONV_DIRECT)
/* Direct convolution (no im2col), for the builds that define CONV_DIRECT
 * (conv_avx2.c; its rule, direct_fits, says for which shapes).  The same
 * packed B panels as the GEMM (pack_b_panel: NR output channels, k in
 * (ky, kx, ci) order) are read as they are; A is never built: each MR x NR
 * block of C (MR pixels of one output row x NR channels) keeps its
 * accumulators in registers through all taps, reading the input pixels in
 * place through a table of MR pointers per segment, then applies the
 * epilogue (epi_vec, as epilogue() does) on the registers and stores into
 * out.  A segment is a run of k that is contiguous in every pixel's
 * receptive field: one tap's Cin channels, or when the input is dense
 * (pix_stride == Cin) and undilated a whole kernel row's KW * Cin floats
 * (the RGB stem: 3 segments of 9 instead of 9 of 3).  Segments that fall
 * in the padding for some of the block's pixels are gathered, zero-filled,
 * into a per-call stack scratch; kernel rows wholly outside the input are
 * skipped (they would add zeros).  Sums run k ascending in KC-deep
 * partial sums, as the GEMM's, so results are the GEMM's to the bit. */
#define DIRECT_K_MAX 576 /* 3 x 3 x 64: the scratch's depth */
#define DIRECT_TAPS_MAX 9
#define DIRECT_PANELS_MAX 4 /* NR-wide panels of output channels */

/* One block's segments: MR input pointers each, and where in B they start. */
typedef struct direct_seg {
    const float *a[MR];
    int k0;
} direct_seg;

typedef struct direct_job {
    const strix_view *out, *in, *residual;
    const float *bp, *bias;
    const strix_conv_params *p;
    const conv_plan *pl;
    int seg_taps, row_segs; /* taps per segment, segments per kernel row */
    int seg_len;            /* floats per segment: seg_taps * Cin */
} direct_job;

/* acc[i][v] += sum over e < len of a[i][off + e] * b[e*NR + v*VL ...]. */
static inline void direct_segment(vf acc[MR][NV], const float *const *a, int off, const float *b,
                                  int len)
{
    const float *ai[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) ai[i] = a[i] + off;
    for (int e = 0; e < len; e++) {
        vf bv[NV];
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) bv[v] = v_load(b + (size_t)e * NR + v * VL);
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++) {
            vf av = v_splat(ai[i][e]);
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++) acc[i][v] = v_fma(av, bv[v], acc[i][v]);
        }
    }
}

static inline void direct_zero(vf acc[MR][NV])
{
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) acc[i][v] = v_splat(0.0f);
}

/* sum = acc for the first K block (blocks == 0), sum + acc after. */
static inline void direct_fold(vf sum[MR][NV], vf acc[MR][NV], int blocks)
{
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) sum[i][v] = blocks ? sum[i][v] + acc[i][v] : acc[i][v];
}

/* out pixel i < cnt (at o + i*ldo) = epi_vec(acc[i], bias, residual pixel i
 * (at r + i*ldr; zero without one), act), all MR x NV vectors computed
 * before any store (their SiLUs' long dependency chains overlap); a
 * channel tail (cols[v] < VL) through a zero-padded vector, as epilogue()
 * does.  act and has_res are constants at each call, so the unrolled body
 * has no branch on them. */
static inline void direct_store(vf acc[MR][NV], const vf *bv, const int *cols, float *o, size_t ldo,
                                const float *r, size_t ldr, int cnt, strix_act act, int has_res)
{
    vf zero = v_splat(0.0f), rv[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            rv[i][v] = zero;
            if (has_res && i < cnt) {
                if (cols[v] == VL)
                    rv[i][v] = v_load(r + i * ldr + v * VL);
                else
                    memcpy(&rv[i][v], r + i * ldr + v * VL, (size_t)cols[v] * sizeof(float));
            }
        }
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) acc[i][v] = epi_vec(acc[i][v], bv[v], rv[i][v], act);
    for (int i = 0; i < cnt; i++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            if (cols[v] == VL)
                v_store(o + i * ldo + v * VL, acc[i][v]);
            else
                memcpy(o + i * ldo + v * VL, &acc[i][v], (size_t)cols[v] * sizeof(float));
        }
}

/* The segments of the block of output pixels (oy, ox0 .. ox0 + MR - 1) of
 * image n; pixels past cnt repeat the last one (computed, not stored).
 * Returns how many; scratch holds MR * K floats. */
static int direct_segments(direct_seg *seg, float *scratch, const direct_job *j, int n, int oy,
                           int ox0, int cnt)
{
    const strix_view *in = j->in;
    const strix_conv_params *p = j->p;
    int cg = j->pl->cg, taps = j->seg_taps, count = 0;
    size_t ps = in->pix_stride, step = (size_t)p->sw * ps;
    const float *img = in->data + (size_t)n * in->batch_stride;
    for (int ky = 0; ky < p->kh; ky++) {
        int iy = oy * p->sh - p->ph + ky * p->dh;
        if (iy < 0 || iy >= in->h) continue;
        const float *row = img + (size_t)iy * in->w * ps;
        for (int s = 0; s < j->row_segs; s++) {
            int kx0 = s * taps;
            direct_seg *d = &seg[count++];
            d->k0 = (ky * p->kw + kx0) * cg;
            int first = ox0 * p->sw - p->pw + kx0 * p->dw;
            int last = first + (cnt - 1) * p->sw + (taps - 1) * p->dw;
            if (first >= 0 && last < in->w) { /* the whole block in place */
                const float *a = row + (size_t)first * ps;
                for (int i = 0; i < MR; i++) d->a[i] = a + (size_t)(i < cnt ? i : cnt - 1) * step;
                continue;
            }
            for (int i = 0; i < MR; i++) {
                int ix = first + (i < cnt ? i : cnt - 1) * p->sw;
                if (ix >= 0 && ix + (taps - 1) * p->dw < in->w) {
                    d->a[i] = row + (size_t)ix * ps;
                    continue;
                }
                float *dst = scratch + (size_t)i * j->pl->k + d->k0;
                for (int t = 0; t < taps; t++, ix += p->dw) {
                    if (ix >= 0 && ix < in->w)
                        memcpy(dst + t * cg, row + (size_t)ix * ps, (size_t)cg * sizeof(float));
                    else
                        memset(dst + t * cg, 0, (size_t)cg * sizeof(float));
                }
                d->a[i] = dst;
            }
        }
    }
    return count;
}

/* Task: output row `row` (image row / out->h, y row % out->h), all channels. */
static void direct_task(void *ctx, int row, int worker)
{
    const direct_job *j = ctx;
    const strix_view *out = j->out, *residual = j->residual;
    const conv_plan *pl = j->pl;
    (void)worker;
    int n = row / out->h, oy = row % out->h;
    direct_seg seg[DIRECT_TAPS_MAX];
    float scratch[MR * DIRECT_K_MAX];
    /* each panel's bias, zero-padded past ng, and its channels per vector */
    vf bv[DIRECT_PANELS_MAX][NV];
    int cols[DIRECT_PANELS_MAX][NV];
    for (int c = 0; c < pl->npad; c += VL) {
        int left = pl->ng - c, *nc = &cols[c / NR][c % NR / VL];
        vf *bc = &bv[c / NR][c % NR / VL];
        *nc = left < 0 ? 0 : left < VL ? left : VL;
        *bc = v_splat(0.0f);
        memcpy(bc, j->bias + c, (size_t)*nc * sizeof(float));
    }
    for (int ox0 = 0; ox0 < out->w; ox0 += MR) {
        int cnt = out->w - ox0 < MR ? out->w - ox0 : MR;
        int nseg = direct_segments(seg, scratch, j, n, oy, ox0, cnt);
        for (int co = 0; co < pl->ng; co += NR) {
            const float *b = j->bp + (size_t)co * pl->k;
            /* k in KC-deep blocks, each summed from zero and added to the
             * earlier ones' sum, as the GEMM does (gemm_block): the same
             * results to the bit, whichever path a shape takes */
            vf acc[MR][NV], sum[MR][NV];
            int kb = KC, blocks = 0;
            direct_zero(acc);
            for (int s = 0; s < nseg; s++) {
                int k0 = seg[s].k0;
                for (int e = 0; e < j->seg_len;) {
                    if (k0 + e >= kb) {
                        direct_fold(sum, acc, blocks++);
                        direct_zero(acc);
                        kb += KC;
                        continue;
                    }
                    int stop = kb - k0 < j->seg_len ? kb - k0 : j->seg_len;
                    direct_segment(acc, seg[s].a, e, b + (size_t)(k0 + e) * NR, stop - e);
                    e = stop;
                }
            }
            if (blocks) {
                direct_fold(sum, acc, blocks);
                memcpy(acc, sum, sizeof acc);
            }
            int p0 = co / NR, silu = j->p->act == STRIX_ACT_SILU;
            float *o = strix_view_at(out, n, oy, ox0) + co;
            if (residual) {
                const float *r = strix_view_at(residual, n, oy, ox0) + co;
                size_t ldr = residual->pix_stride;
                if (silu)
                    direct_store(acc, bv[p0], cols[p0], o, out->pix_stride, r, ldr, cnt, STRIX_ACT_SILU, 1);
                else
                    direct_store(acc, bv[p0], cols[p0], o, out->pix_stride, r, ldr, cnt, STRIX_ACT_NONE, 1);
            } else if (silu) {
                direct_store(acc, bv[p0], cols[p0], o, out->pix_stride, NULL, 0, cnt, STRIX_ACT_SILU, 0);
            } else {
                direct_store(acc, bv[p0], cols[p0], o, out->pix_stride, NULL, 0, cnt, STRIX_ACT_NONE, 0);
            }
        }
    }
}

/* Whether the direct kernel takes this convolution: the build's measured
 * rule DIRECT_FITS(pl, out, p) (conv_<isa>.c, which defines CONV_DIRECT), within
 * what the kernel handles (one group, the stack arrays' bounds). */
static int direct_fits(const conv_plan *pl, const strix_view *out, const strix_conv_params *p)
{
    return DIRECT_FITS(pl, out, p) && p->groups == 1 && p->kh * p->kw <= DIRECT_TAPS_MAX &&
           pl->k <= DIRECT_K_MAX && pl->npad <= DIRECT_PANELS_MAX * NR;
}

static void conv_direct(const strix_view *out, const strix_view *in, const float *bp,
                        const float *bias, const strix_view *residual, const strix_conv_params *p,
                        const conv_plan *pl, strix_cpu_team *team)
{
    int dense_rows = p->dw == 1 && in->pix_stride == (size_t)pl->cg;
    int taps = dense_rows ? p->kw : 1;
    direct_job j = {out, in, residual, bp, bias, p, pl, taps, p->kw / taps, taps * pl->cg};
    strix_cpu_team_run(team, out->n * out->h, direct_task, &j);
}
#endif

size_t CONV_FN(strix_cpu_conv2d_packed_floats_)(int cin, int cout, const strix_conv_params *p, int wino)
{
    conv_plan pl = weight_plan(cin, cout, p);
#if defined(CONV_WINOGRAD)
    if (wino && !pl.depthwise && wino_packs(cin, cout, p)) return pl.b_floats + wino_u_floats(&pl);
#endif
    (void)wino;
    return pl.depthwise ? pl.b_floats : (size_t)p->groups * pl.b_floats;
}

void CONV_FN(strix_cpu_conv2d_pack_)(float *packed, const float *w, int cin, int cout,
                                     const strix_conv_params *p, int wino)
{
    conv_plan pl = weight_plan(cin, cout, p);
    if (pl.depthwise) {
        pack_depthwise(packed, w, cout, p);
        return;
    }
    for (int g = 0; g < p->groups; g++)
        for (int s = 0; s < pl.npad / NR; s++) pack_b_panel(packed + (size_t)g * pl.b_floats, w, &pl, g, s);
#if defined(CONV_WINOGRAD)
    /* after the GEMM's panels, which WINO_FITS may still pick at run time */
    if (wino && wino_packs(cin, cout, p))
        for (int s = 0; s < pl.npad / NR; s++) wino_pack_panel(packed + pl.b_floats, w, &pl, s);
#endif
    (void)wino;
}

void CONV_FN(strix_cpu_conv2d_)(const strix_view *out, const strix_view *in, const float *w,
                                const float *packed, const float *bias, const strix_view *residual,
                                const strix_conv_params *p, int wino, void *workspace, strix_cpu_team *team)
{
    assert(p->groups >= 1 && in->c % p->groups == 0 && out->c % p->groups == 0);
    assert(in->n == out->n);
    assert(out->h == (in->h + 2 * p->ph - p->dh * (p->kh - 1) - 1) / p->sh + 1);
    assert(out->w == (in->w + 2 * p->pw - p->dw * (p->kw - 1) - 1) / p->sw + 1);
    assert(!residual || (residual->n == out->n && residual->h == out->h &&
                         residual->w == out->w && residual->c == out->c));
    if (out->n == 0 || out->h == 0 || out->w == 0 || out->c == 0) return;
    conv_plan pl = make_plan(out, in, p, strix_cpu_team_threads(team));
    uintptr_t base = ((uintptr_t)workspace + WS_ALIGN - 1) & ~(uintptr_t)(WS_ALIGN - 1);
    float *ws = (float *)base;
    if (pl.depthwise) {
        if (!packed) {
            pack_depthwise(ws, w, out->c, p);
            packed = ws;
        }
        conv_depthwise(out, in, packed, bias, residual, p, team);
        return;
    }
#if defined(CONV_WINOGRAD)
    /* only with weights packed beforehand: U is 4x the weights, too much to
     * transform per call (and the unpacked path stays the exact reference) */
    if (wino && packed && wino_packs(in->c, out->c, p) && WINO_FITS(out, &pl)) {
        conv_winograd(out, in, packed + pl.b_floats, bias, residual, p, &pl, ws, team);
        return;
    }
#endif
    (void)wino;
#if defined(CONV_DIRECT)
    if (direct_fits(&pl, out, p)) {
        if (!packed) {
            for (int s = 0; s < pl.npad / NR; s++) pack_b_panel(ws, w, &pl, 0, s);
            packed = ws;
        }
        conv_direct(out, in, packed, bias, residual, p, &pl, team);
        return;
    }
#endif
    conv_gemm(out, in, w, packed, bias, residual, p, &pl, ws, team);
}
