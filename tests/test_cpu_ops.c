/* test_cpu_ops.c — the CPU backend's operators (engine/cpu/ops.h) against
 * naive double-precision references written here, on random shapes and
 * values drawn from the testlib RNG.
 *
 * Every output buffer is guarded: NaN sentinels before and after it, and the
 * channels/padding outside the view under test are poisoned with the same
 * sentinel and must come back bit-identical.  Inputs are often channel slices
 * of wider buffers (pix_stride > c, padded batch_stride).  Errors are
 * measured as max|a - ref| / (max|ref| + 1e-6) <= 1e-5 (plus, for sums that
 * cancel, their fp32 rounding allowance); results must be free of NaN/Inf
 * and identical for 1 and 2 threads (every op sums in a fixed order).
 *
 * The convolution tests run once per instruction set of its micro-kernels
 * that this architecture has (test_conv_cases[avx2], ...: generic and, on
 * x86-64, AVX2 and AVX-512F, on aarch64 NEON); one the CPU cannot run is
 * skipped with that reason.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "oplayout.h"
#include "testlib.h"

#define GUARD 64             /* sentinel floats before and after each buffer */
#define SENTINEL 0x7fc5a5a5u /* a quiet NaN no op produces, around/in outputs */
#define IN_GUARD 0x7fcbeef1u /* another one around inputs: copied, it is caught */
#define TOL 1e-5

/* The ops' threads: team(1) is NULL (the caller's thread only), team(2) a
 * team of 2 (engine/cpu/team.h), started by main. */
static strix_cpu_team *two_threads;
static strix_cpu_team *team(int threads) { return threads > 1 ? two_threads : NULL; }

/* The convolution's instruction set under test (set by main per run). */
static strix_cpu_isa test_isa = STRIX_CPU_ISA_GENERIC;

/* ------------------------------------------------------------ buffers */

typedef struct gbuf {
    float *mem;  /* GUARD + len + GUARD floats */
    float *data; /* mem + GUARD */
    size_t len;
    uint32_t guard; /* the guards' bit pattern */
} gbuf;

static int has_bits(float f, uint32_t bits) { return f32_bits(f) == bits; }

static int is_sentinel(float f) { return has_bits(f, SENTINEL); }

/* A guarded buffer: an input filled with uniform [-range, range), or for
 * range 0 an output filled with the sentinel. */
static gbuf gbuf_new(size_t len, float range)
{
    gbuf b;
    b.len = len;
    b.mem = malloc((len + 2 * GUARD) * sizeof(float));
    if (!b.mem) {
        fprintf(stderr, "test_cpu_ops: out of memory\n");
        exit(2);
    }
    b.data = b.mem + GUARD;
    b.guard = range > 0 ? IN_GUARD : SENTINEL;
    for (size_t i = 0; i < len + 2 * GUARD; i++) b.mem[i] = bits_f32(b.guard);
    if (range > 0)
        for (size_t i = 0; i < len; i++) b.data[i] = tl_uniform(-range, range);
    return b;
}

static int gbuf_guards_ok(const gbuf *b)
{
    for (size_t i = 0; i < GUARD; i++)
        if (!has_bits(b->mem[i], b->guard) || !has_bits(b->data[b->len + i], b->guard)) return 0;
    return 1;
}

static void gbuf_free(gbuf *b)
{
    free(b->mem);
    b->mem = b->data = NULL;
}

/* index of element (n, y, x, c) of a view into the dense [n, h, w, c] ref */
static size_t dense_index(const strix_view *v, int n, int y, int x, int c)
{
    return (((size_t)n * v->h + y) * v->w + x) * v->c + c;
}

static float view_get(const strix_view *v, int n, int y, int x, int c)
{
    return strix_view_at(v, n, y, x)[c];
}

/* Checks an output view written into guarded buffer b: guards intact,
 * everything outside the view still the sentinel, no NaN/Inf inside, and
 * max|out - ref| / (max|ref| + 1e-6) <= tol.  Where a float sum cancels, its
 * rounding error can exceed that while being correct: slack (NULL for none)
 * gives each element an extra absolute allowance for it.  ref and slack are
 * dense [n, h, w, c].  Returns 1 when all hold. */
static int check_output(const char *what, const gbuf *b, const strix_view *v, const double *ref,
                        const double *slack, double tol)
{
    if (!gbuf_guards_ok(b)) {
        tl_fail("%s: a guard sentinel around the output buffer was overwritten", what);
        return 0;
    }
    unsigned char *inside = calloc(b->len, 1);
    if (!inside) exit(2);
    double max_ref = 0.0;
    int ok = 1;
    for (int n = 0; n < v->n && ok; n++)
        for (int y = 0; y < v->h && ok; y++)
            for (int x = 0; x < v->w && ok; x++)
                for (int c = 0; c < v->c; c++) {
                    const float *p = strix_view_at(v, n, y, x) + c;
                    inside[p - b->data] = 1;
                    double r = ref[dense_index(v, n, y, x, c)];
                    if (!isfinite(*p)) {
                        tl_fail("%s: non-finite output %g at (%d,%d,%d,%d)", what, *p, n, y, x, c);
                        ok = 0;
                        break;
                    }
                    if (fabs(r) > max_ref) max_ref = fabs(r);
                }
    for (size_t i = 0; i < b->len && ok; i++)
        if (!inside[i] && !is_sentinel(b->data[i])) {
            tl_fail("%s: element %zu outside the output view was written", what, i);
            ok = 0;
        }
    free(inside);
    double bound = tol * (max_ref + 1e-6);
    for (int n = 0; n < v->n && ok; n++)
        for (int y = 0; y < v->h && ok; y++)
            for (int x = 0; x < v->w && ok; x++)
                for (int c = 0; c < v->c; c++) {
                    size_t i = dense_index(v, n, y, x, c);
                    double diff = fabs(strix_view_at(v, n, y, x)[c] - ref[i]);
                    if (diff > bound + (slack ? slack[i] : 0.0)) {
                        tl_fail("%s: at (%d,%d,%d,%d) got %.9g, expected %.9g: relative error "
                                "%.3g > %.1g (max|ref| %.3g)",
                                what, n, y, x, c, strix_view_at(v, n, y, x)[c], ref[i],
                                diff / (max_ref + 1e-6), tol, max_ref);
                        ok = 0;
                        break;
                    }
                }
    return ok;
}

/* 1 when the two views (same shape, different buffers) hold identical bits. */
static int views_identical(const strix_view *a, const strix_view *b)
{
    for (int n = 0; n < a->n; n++)
        for (int y = 0; y < a->h; y++)
            for (int x = 0; x < a->w; x++)
                if (memcmp(strix_view_at(a, n, y, x), strix_view_at(b, n, y, x),
                           (size_t)a->c * sizeof(float)) != 0)
                    return 0;
    return 1;
}

/* A workspace with a byte guard behind it, deliberately only 4-byte aligned
 * when `misalign` is set. */
typedef struct wsbuf {
    unsigned char *mem;
    void *ptr;
    size_t bytes;
} wsbuf;

#define WS_GUARD 256
static wsbuf ws_new(size_t bytes, int misalign)
{
    wsbuf w;
    w.bytes = bytes;
    w.mem = malloc(bytes + WS_GUARD + 4);
    if (!w.mem) exit(2);
    w.ptr = w.mem + (misalign ? 4 : 0);
    memset((unsigned char *)w.ptr + bytes, 0xA5, WS_GUARD);
    return w;
}

static int ws_guard_ok(const wsbuf *w)
{
    const unsigned char *g = (const unsigned char *)w->ptr + w->bytes;
    for (int i = 0; i < WS_GUARD; i++)
        if (g[i] != 0xA5) return 0;
    return 1;
}

/* ------------------------------------------------------------ conv2d */

typedef struct conv_case {
    int n, h, w, cin, cout;
    strix_conv_params p;
    int res;          /* 0 none, 1 its own view, 2 residual == out */
    int strided_in, strided_out;
    float bias_range; /* bias drawn from [-bias_range, bias_range) */
} conv_case;

static int conv_oh(const conv_case *cc)
{
    return (cc->h + 2 * cc->p.ph - cc->p.dh * (cc->p.kh - 1) - 1) / cc->p.sh + 1;
}
static int conv_ow(const conv_case *cc)
{
    return (cc->w + 2 * cc->p.pw - cc->p.dw * (cc->p.kw - 1) - 1) / cc->p.sw + 1;
}

/* out = act(conv(in, w) + bias) [+ res], the direct 7-loop convolution.
 * slack gets each output's fp32 rounding allowance for sums that cancel:
 * 8 eps * (sum of |terms|), a few times what float sums of random-signed
 * terms reach (SiLU's slope is below 1.1). */
static void conv_reference(double *ref, double *slack, const strix_view *in, const float *w,
                           const float *bias, const strix_view *res, const conv_case *cc, int oh,
                           int ow)
{
    const strix_conv_params *p = &cc->p;
    int cg = cc->cin / p->groups, ng = cc->cout / p->groups;
    for (int n = 0; n < cc->n; n++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int co = 0; co < cc->cout; co++) {
                    int g = co / ng;
                    double acc = bias[co], mag = fabs(bias[co]);
                    for (int ky = 0; ky < p->kh; ky++)
                        for (int kx = 0; kx < p->kw; kx++) {
                            int iy = oy * p->sh - p->ph + ky * p->dh;
                            int ix = ox * p->sw - p->pw + kx * p->dw;
                            if (iy < 0 || iy >= cc->h || ix < 0 || ix >= cc->w) continue;
                            for (int ci = 0; ci < cg; ci++) {
                                double t = (double)view_get(in, n, iy, ix, g * cg + ci) *
                                           w[(((size_t)co * p->kh + ky) * p->kw + kx) * cg + ci];
                                acc += t;
                                mag += fabs(t);
                            }
                        }
                    if (p->act == STRIX_ACT_SILU) acc = acc / (1.0 + exp(-acc));
                    if (res) acc += view_get(res, n, oy, ox, co);
                    size_t i = (((size_t)n * oh + oy) * ow + ox) * cc->cout + co;
                    ref[i] = acc;
                    slack[i] = 8.0 * FLT_EPSILON * 1.1 * mag;
                }
}

/* The Winograd path's allowance (engine/cpu/conv_winograd.h): this many
 * times conv_reference's fp32 slack, 8 eps * 1.1 * sum |terms|, so 70 eps x
 * sum |terms|: about twice the worst measured (test_conv_winograd's
 * comment). */
#define WINO_SLACK 8.0

/* Whether the build under test has a Winograd path (engine/cpu/conv_avx2.c
 * defines CONV_WINOGRAD; the others run their GEMM or direct kernel). */
static int isa_has_winograd(void) { return test_isa == STRIX_CPU_ISA_AVX2; }

/* Worst |out - ref| / (eps * sum |terms|) of a view, slack as conv_reference
 * fills it (the error measure test_conv_winograd reports on failure). */
static double worst_eps(const strix_view *v, const double *ref, const double *slack)
{
    double worst = 0;
    for (int n = 0; n < v->n; n++)
        for (int y = 0; y < v->h; y++)
            for (int x = 0; x < v->w; x++)
                for (int c = 0; c < v->c; c++) {
                    size_t i = dense_index(v, n, y, x, c);
                    double mag = slack[i] / (8.0 * 1.1), e = fabs(strix_view_at(v, n, y, x)[c] - ref[i]);
                    if (mag > 0 && e / mag > worst) worst = e / mag;
                }
    return worst;
}

/* Runs one case: per call with 1 and 2 threads; on weights packed
 * beforehand (strix_cpu_conv2d_pack) with 2 threads without the Winograd
 * path (STRIX_CPU_CONV_EXACT: the per-call results to the bit); and packed
 * with it allowed, 1 and 2 threads (identical; where the build takes it,
 * within WINO_SLACK times the reference's rounding allowance).  *wino_ran
 * (may be NULL) is set when the last differ from the exact ones.  Returns 1
 * when everything holds. */
static int conv_run_case(const conv_case *cc, const char *name, int *wino_ran)
{
    int oh = conv_oh(cc), ow = conv_ow(cc);
    const strix_conv_params *p = &cc->p;
    size_t wlen = (size_t)cc->cout * p->kh * p->kw * (cc->cin / p->groups);
    layout li = layout_make(cc->n, cc->h, cc->w, cc->cin, cc->strided_in);
    layout lo = layout_make(cc->n, oh, ow, cc->cout, cc->strided_out);
    layout lr = layout_make(cc->n, oh, ow, cc->cout, tl_int(0, 1));
    gbuf in = gbuf_new(layout_len(&li), 1.0f);
    gbuf w = gbuf_new(wlen, 1.0f);
    gbuf bias = gbuf_new((size_t)cc->cout, cc->bias_range > 0 ? cc->bias_range : 1.0f);
    gbuf res = gbuf_new(cc->res == 1 ? layout_len(&lr) : 1, 1.0f);
    enum { RUNS = 5 };
    gbuf out[RUNS];
    strix_view vin = host_view(&li, in.data), vo[RUNS], vres = host_view(&lr, res.data);
    /* for residual == out, the residual's values are those out starts with */
    gbuf alias_src = gbuf_new(cc->res == 2 ? layout_len(&lo) : 1, 1.0f);
    strix_view valias = host_view(&lo, alias_src.data);
    const strix_view *rview = cc->res == 1 ? &vres : cc->res == 2 ? &valias : NULL;
    size_t outs = (size_t)cc->n * oh * ow * cc->cout;
    double *ref = malloc(outs * sizeof(double)), *slack = malloc(outs * sizeof(double));
    double *wslack = malloc(outs * sizeof(double));
    if (!ref || !slack || !wslack) exit(2);
    conv_reference(ref, slack, &vin, w.data, bias.data, rview, cc, oh, ow);
    for (size_t i = 0; i < outs; i++) wslack[i] = WINO_SLACK * slack[i];

    int ok = 1;
    strix_cpu_isa exact = (strix_cpu_isa)(test_isa | STRIX_CPU_CONV_EXACT);
    gbuf packed[2] = {gbuf_new(strix_cpu_conv2d_packed_floats(exact, cc->cin, cc->cout, p), 0.0f),
                      gbuf_new(strix_cpu_conv2d_packed_floats(test_isa, cc->cin, cc->cout, p), 0.0f)};
    strix_cpu_conv2d_pack(exact, packed[0].data, w.data, cc->cin, cc->cout, p);
    strix_cpu_conv2d_pack(test_isa, packed[1].data, w.data, cc->cin, cc->cout, p);
    for (int t = 0; t < RUNS; t++) {
        int threads = t == 0 || t == 3 ? 1 : 2;
        out[t] = gbuf_new(layout_len(&lo), 0.0f);
        vo[t] = host_view(&lo, out[t].data);
        if (cc->res == 2)
            for (int n = 0; n < cc->n; n++)
                for (int y = 0; y < oh; y++)
                    for (int x = 0; x < ow; x++)
                        memcpy(strix_view_at(&vo[t], n, y, x), strix_view_at(&valias, n, y, x),
                               (size_t)cc->cout * sizeof(float));
        /* sized for 2 threads also when 1 runs: "at least the team's" (ops.h) */
        wsbuf ws = ws_new(strix_cpu_conv2d_workspace(&vo[t], &vin, p, 2), tl_int(0, 1));
        const strix_view *r = cc->res == 1 ? &vres : cc->res == 2 ? &vo[t] : NULL;
        if (t < 2)
            strix_cpu_conv2d(test_isa, &vo[t], &vin, w.data, bias.data, r, p, ws.ptr, team(threads));
        else if (t == 2)
            strix_cpu_conv2d_packed(exact, &vo[t], &vin, packed[0].data, bias.data, r, p, ws.ptr, team(threads));
        else
            strix_cpu_conv2d_packed(test_isa, &vo[t], &vin, packed[1].data, bias.data, r, p, ws.ptr,
                                    team(threads));
        char what[220];
        snprintf(what, sizeof what, "%s threads=%d%s", name, threads,
                 t == 2 ? " prepacked exact" : t > 2 ? " prepacked" : "");
        if (ok && !ws_guard_ok(&ws)) {
            tl_fail("%s: wrote past the workspace size it asked for", what);
            ok = 0;
        }
        free(ws.mem);
        if (ok && !(ok = check_output(what, &out[t], &vo[t], ref, t > 2 ? wslack : slack, TOL)) && t > 2)
            fprintf(stderr, "  %s: worst error %.3g eps x sum|terms|\n", what, worst_eps(&vo[t], ref, slack));
    }
    if (ok && !views_identical(&vo[0], &vo[1])) {
        tl_fail("%s: 1 and 2 threads give different results", name);
        ok = 0;
    }
    if (ok && !views_identical(&vo[1], &vo[2])) {
        tl_fail("%s: weights packed beforehand and per call give different results", name);
        ok = 0;
    }
    if (ok && !views_identical(&vo[3], &vo[4])) {
        tl_fail("%s: packed, 1 and 2 threads give different results", name);
        ok = 0;
    }
    if (ok && !isa_has_winograd() && !views_identical(&vo[2], &vo[4])) {
        tl_fail("%s: a build without Winograd gives different packed results with and without "
                "STRIX_CPU_CONV_EXACT", name);
        ok = 0;
    }
    if (ok && wino_ran && !views_identical(&vo[2], &vo[4])) *wino_ran = 1;
    if (ok && (!gbuf_guards_ok(&packed[0]) || !gbuf_guards_ok(&packed[1]))) {
        tl_fail("%s: packing wrote past strix_cpu_conv2d_packed_floats", name);
        ok = 0;
    }
    if (ok && (!gbuf_guards_ok(&in) || !gbuf_guards_ok(&w) || !gbuf_guards_ok(&bias))) {
        tl_fail("%s: an input buffer's guard was overwritten", name);
        ok = 0;
    }
    for (int t = 0; t < RUNS; t++) gbuf_free(&out[t]);
    gbuf_free(&packed[0]);
    gbuf_free(&packed[1]);
    gbuf_free(&in);
    gbuf_free(&w);
    gbuf_free(&bias);
    gbuf_free(&res);
    gbuf_free(&alias_src);
    free(ref);
    free(slack);
    free(wslack);
    return ok;
}

static conv_case conv_make(int n, int h, int w, int cin, int cout, int k, int s, int pad, int d,
                           int groups, strix_act act, int res)
{
    conv_case cc;
    memset(&cc, 0, sizeof cc);
    cc.n = n, cc.h = h, cc.w = w, cc.cin = cin, cc.cout = cout;
    cc.p.kh = cc.p.kw = k;
    cc.p.sh = cc.p.sw = s;
    cc.p.ph = cc.p.pw = pad;
    cc.p.dh = cc.p.dw = d;
    cc.p.groups = groups;
    cc.p.act = act;
    cc.res = res;
    cc.strided_in = cc.strided_out = 1;
    return cc;
}

/* Hand-picked shapes: every code path (direct 1x1, im2col, depthwise,
 * grouped) and every tail (channels vs the 8/16/32-wide panels and 64-channel
 * depthwise chunks, rows vs the 6- and 14-row micro-tiles and the row
 * blocks, depth vs the 256-deep K blocks, width vs the 256-wide tile). */
static void test_conv_cases(void)
{
    const strix_act S = STRIX_ACT_SILU, L = STRIX_ACT_NONE;
    conv_case cases[] = {
        /* 1x1 stride 1: the input is read in place */
        conv_make(3, 7, 9, 17, 33, 1, 1, 0, 1, 1, S, 1),
        conv_make(1, 5, 7, 300, 272, 1, 1, 0, 1, 1, L, 2), /* 2 K blocks, 2 tiles */
        conv_make(2, 1, 1, 1, 1, 1, 1, 0, 1, 1, S, 0),
        conv_make(1, 13, 11, 48, 32, 1, 1, 0, 1, 1, S, 2),
        /* 1x1 that is not in place: strided, padded */
        conv_make(2, 9, 8, 5, 19, 1, 2, 0, 1, 1, S, 0),
        conv_make(1, 4, 5, 3, 17, 1, 1, 1, 1, 1, L, 1),
        /* 3x3 */
        conv_make(3, 11, 13, 3, 16, 3, 1, 1, 1, 1, S, 0),
        conv_make(2, 17, 15, 33, 17, 3, 2, 1, 1, 1, S, 1),
        conv_make(1, 8, 8, 64, 33, 3, 1, 1, 1, 1, S, 2), /* K = 576: 3 K blocks */
        conv_make(1, 9, 7, 34, 18, 3, 1, 1, 1, 2, S, 1), /* groups 2 */
        conv_make(2, 9, 9, 5, 7, 3, 1, 2, 2, 1, L, 0),   /* dilation 2 */
        conv_make(1, 3, 3, 2, 3, 3, 1, 0, 1, 1, S, 0),   /* one output pixel */
        /* 5x5 */
        conv_make(1, 9, 10, 8, 1, 5, 1, 2, 1, 1, S, 0),
        conv_make(3, 7, 6, 4, 6, 5, 2, 2, 1, 2, L, 1),
        /* depthwise */
        conv_make(2, 6, 7, 67, 67, 3, 1, 1, 1, 67, S, 1),
        conv_make(1, 9, 11, 3, 3, 5, 2, 2, 1, 3, S, 0),
        conv_make(3, 5, 5, 130, 130, 3, 2, 1, 2, 130, L, 2),
        /* channel multiplier: groups == cin, 2 outputs each (a GEMM) */
        conv_make(1, 6, 5, 4, 8, 3, 1, 1, 1, 4, S, 0),
    };
    /* kernel 1x3, stride (1,2), padding (0,1) */
    conv_case odd = conv_make(2, 5, 9, 6, 10, 1, 1, 0, 1, 1, S, 1);
    odd.p.kw = 3, odd.p.sw = 2, odd.p.pw = 1;
    /* huge pre-activations: SiLU must saturate to x and to 0 */
    conv_case sat = conv_make(1, 4, 6, 3, 40, 3, 1, 1, 1, 1, S, 0);
    sat.bias_range = 200.0f;
    int count = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < 2 * count; i++) {
        /* each case on dense views (the input's pixels are contiguous) and
         * on slices of wider buffers */
        conv_case cc = cases[i / 2];
        cc.strided_in = cc.strided_out = i % 2;
        char name[64];
        snprintf(name, sizeof name, "case %d (%s)", i / 2, i % 2 ? "strided" : "dense");
        if (!conv_run_case(&cc, name, NULL)) return;
    }
    if (!conv_run_case(&odd, "1x3 kernel", NULL)) return;
    conv_run_case(&sat, "saturated SiLU", NULL);
}

static int pick(const int *v, int n) { return v[tl_int(0, n - 1)]; }

/* Fresh random shapes each run. */
static void test_conv_random(void)
{
    static const int chans[] = {1, 3, 16, 17, 32, 33, 48};
    for (int it = 0; it < 60; it++) {
        conv_case cc;
        memset(&cc, 0, sizeof cc);
        cc.p.kh = tl_int(0, 3) ? (tl_int(0, 1) ? 3 : 1) : 5;
        cc.p.kw = tl_int(0, 4) ? cc.p.kh : pick((const int[]){1, 3, 5}, 3);
        cc.p.sh = tl_int(1, 2);
        cc.p.sw = tl_int(0, 4) ? cc.p.sh : tl_int(1, 2);
        cc.p.dh = tl_int(0, 4) ? 1 : 2;
        cc.p.dw = tl_int(0, 4) ? cc.p.dh : tl_int(1, 2);
        cc.p.ph = tl_int(0, 2) ? cc.p.dh * (cc.p.kh - 1) / 2 : tl_int(0, cc.p.kh - 1);
        cc.p.pw = tl_int(0, 2) ? cc.p.dw * (cc.p.kw - 1) / 2 : tl_int(0, cc.p.kw - 1);
        int kind = tl_int(0, 5); /* 0-2 dense, 3 groups 2, 4 depthwise, 5 random groups */
        int cin = tl_int(0, 1) ? pick(chans, 7) : tl_int(1, 40);
        int cout = tl_int(0, 1) ? pick(chans, 7) : tl_int(1, 40);
        cc.p.groups = 1;
        if (kind == 3) {
            cc.p.groups = 2, cin = 2 * tl_int(1, 20), cout = 2 * tl_int(1, 20);
        } else if (kind == 4) {
            cin = cout = tl_int(1, 80), cc.p.groups = cin;
        } else if (kind == 5) {
            cc.p.groups = tl_int(1, 4), cin = cc.p.groups * tl_int(1, 6);
            cout = cc.p.groups * tl_int(1, 6);
        }
        cc.cin = cin, cc.cout = cout;
        cc.n = tl_int(1, 3);
        int min_h = cc.p.dh * (cc.p.kh - 1) + 1 - 2 * cc.p.ph;
        int min_w = cc.p.dw * (cc.p.kw - 1) + 1 - 2 * cc.p.pw;
        cc.h = tl_int(min_h < 1 ? 1 : min_h, 14);
        cc.w = tl_int(min_w < 1 ? 1 : min_w, 14);
        cc.p.act = tl_int(0, 1) ? STRIX_ACT_SILU : STRIX_ACT_NONE;
        cc.res = tl_int(0, 2);
        cc.strided_in = tl_int(0, 1);
        cc.strided_out = tl_int(0, 1);
        cc.bias_range = tl_int(0, 3) ? 1.0f : 20.0f;
        char name[200];
        snprintf(name, sizeof name,
                 "random %d: n%d %dx%dx%d->%d k%dx%d s%dx%d p%dx%d d%dx%d g%d act%d res%d", it,
                 cc.n, cc.h, cc.w, cc.cin, cc.cout, cc.p.kh, cc.p.kw, cc.p.sh, cc.p.sw, cc.p.ph,
                 cc.p.pw, cc.p.dh, cc.p.dw, cc.p.groups, (int)cc.p.act, cc.res);
        if (!conv_run_case(&cc, name, NULL)) return;
    }
}

/* Random shapes of the ones the AVX2 build runs as a direct convolution
 * (engine/cpu/conv_avx2.c's rule: a kernel larger than 1x1, output rows of
 * at least 40 pixels, <= 64 output channels, one group, K <= 576, <= 288
 * at vertical stride 2; its results are the GEMM's to the bit), the other
 * builds running them as their GEMM: odd sizes, strides 1 and 2, padding
 * up to KH-1 / KW-1, dilation 2, channel counts off the 8/16-wide vectors,
 * the RGB stem's 3-channel dense input (whose kernel rows are read as one
 * run), inputs and outputs as slices of wider buffers, residuals (also in
 * place). */
static void test_conv_direct(void)
{
    static const int chans[] = {1, 3, 5, 8, 16, 17, 24, 32, 33, 48, 64};
    for (int it = 0; it < 40; it++) {
        conv_case cc;
        memset(&cc, 0, sizeof cc);
        do {
            cc.p.kh = tl_int(1, 3);
            cc.p.kw = tl_int(0, 3) ? cc.p.kh : tl_int(1, 3);
        } while (cc.p.kh * cc.p.kw == 1);
        cc.p.sh = tl_int(1, 2);
        cc.p.sw = tl_int(0, 3) ? cc.p.sh : tl_int(1, 2);
        cc.p.dh = tl_int(0, 5) ? 1 : 2;
        cc.p.dw = tl_int(0, 5) ? cc.p.dh : tl_int(1, 2);
        cc.p.ph = tl_int(0, 2) ? cc.p.dh * (cc.p.kh - 1) / 2 : tl_int(0, cc.p.kh - 1);
        cc.p.pw = tl_int(0, 2) ? cc.p.dw * (cc.p.kw - 1) / 2 : tl_int(0, cc.p.kw - 1);
        cc.p.groups = 1;
        int cin;
        do cin = tl_int(0, 1) ? pick(chans, 11) : tl_int(1, 64);
        while (cc.p.kh * cc.p.kw * cin > (cc.p.sh == 1 ? 576 : 288));
        cc.cin = cin;
        cc.cout = tl_int(0, 1) ? pick(chans, 11) : tl_int(1, 40);
        cc.n = tl_int(1, 2);
        /* the input width that gives ow output columns (plus what the
         * stride drops); rows few, to keep the reference quick */
        int ow = tl_int(40, 70), oh = tl_int(1, 4);
        cc.w = (ow - 1) * cc.p.sw + cc.p.dw * (cc.p.kw - 1) + 1 - 2 * cc.p.pw + tl_int(0, cc.p.sw - 1);
        cc.h = (oh - 1) * cc.p.sh + cc.p.dh * (cc.p.kh - 1) + 1 - 2 * cc.p.ph + tl_int(0, cc.p.sh - 1);
        if (cc.h < 1) cc.h = 1;
        cc.p.act = tl_int(0, 1) ? STRIX_ACT_SILU : STRIX_ACT_NONE;
        cc.res = tl_int(0, 2);
        cc.strided_in = tl_int(0, 2) == 0; /* mostly dense: the stem's whole-row runs */
        cc.strided_out = tl_int(0, 1);
        cc.bias_range = tl_int(0, 3) ? 1.0f : 20.0f;
        if (it == 0) { /* the stem: 3 -> 16 channels, 3x3 stride 2, dense */
            cc.cin = 3, cc.cout = 16, cc.p.kh = cc.p.kw = 3, cc.p.sh = cc.p.sw = 2;
            cc.p.ph = cc.p.pw = 1, cc.p.dh = cc.p.dw = 1, cc.strided_in = 0;
            cc.h = 9, cc.w = 97, cc.p.act = STRIX_ACT_SILU;
        }
        char name[200];
        snprintf(name, sizeof name,
                 "direct %d: n%d %dx%dx%d->%d k%dx%d s%dx%d p%dx%d d%dx%d act%d res%d in%s", it,
                 cc.n, cc.h, cc.w, cc.cin, cc.cout, cc.p.kh, cc.p.kw, cc.p.sh, cc.p.sw, cc.p.ph,
                 cc.p.pw, cc.p.dh, cc.p.dw, (int)cc.p.act, cc.res, cc.strided_in ? "strided" : "dense");
        if (conv_ow(&cc) < 40) {
            tl_fail("%s: the test made %d output columns, not >= 40", name, conv_ow(&cc));
            return;
        }
        if (!conv_run_case(&cc, name, NULL)) return;
    }
}

/* Random shapes of the ones the AVX2 build runs through Winograd F(4,3)
 * when packed beforehand (engine/cpu/conv_avx2.c's rule: 3x3, stride 1,
 * padding 1, one group, >= 8 input and output channels, output >= 10 x 10),
 * the other builds through their GEMM: odd sizes (4x4 tiles crossing the
 * right and bottom edges), channel counts off the 8-wide vectors and the
 * 16-wide panels, one input deeper than the GEMM's 256-deep K blocks,
 * strided inputs and outputs, residuals (also in place), 1 and 2 threads.
 * The error bound: conv_run_case's WINO_SLACK times the fp32 allowance.
 * Measured over 500 runs (5400 cases, AMD EPYC Zen 3): the worst
 * |out - ref| was 32.5 eps x sum |w x| (over the output's 9 x Cin terms of
 * |w| |x| and |bias|; 3.9e-6 of it), the worst per case 10.6 on average;
 * the exact path's (GEMM or direct) on the same cases: 2.9 and 1.2. */
static void test_conv_winograd(void)
{
    static const int chans[] = {8, 9, 15, 16, 17, 24, 32, 33, 48, 64};
    int ran = 0;
    for (int it = 0; it < 10; it++) {
        conv_case cc = conv_make(tl_int(1, 2), tl_int(10, 26), tl_int(10, 26), 0, 0, 3, 1, 1, 1, 1,
                                 tl_int(0, 1) ? STRIX_ACT_SILU : STRIX_ACT_NONE, tl_int(0, 2));
        cc.cin = tl_int(0, 1) ? pick(chans, 10) : tl_int(8, 70);
        cc.cout = tl_int(0, 1) ? pick(chans, 10) : tl_int(8, 70);
        if (it == 0) cc.n = 1, cc.h = 10, cc.w = 11, cc.cin = 260, cc.cout = 9; /* 2 K blocks */
        cc.strided_in = tl_int(0, 1);
        cc.strided_out = tl_int(0, 1);
        cc.bias_range = tl_int(0, 3) ? 1.0f : 20.0f;
        char name[200];
        snprintf(name, sizeof name, "winograd %d: n%d %dx%dx%d->%d act%d res%d in%s out%s", it, cc.n, cc.h,
                 cc.w, cc.cin, cc.cout, (int)cc.p.act, cc.res, cc.strided_in ? "strided" : "dense",
                 cc.strided_out ? "strided" : "dense");
        if (!conv_run_case(&cc, name, &ran)) return;
    }
    if (isa_has_winograd() && !ran)
        tl_fail("winograd: no case differed from the exact path: the AVX2 build's Winograd path never ran");
}

/* SiLU element by element over [-100, 100]: a 1x1 identity convolution.
 * The fast exp behind it is good to ~2e-7 relative (3.4 ulp measured).
 * Relative accuracy per element, not just against the largest output. */
static void test_conv_silu_accuracy(void)
{
    int m = 4001;
    float *in = malloc((size_t)m * sizeof(float)), *out = malloc((size_t)m * sizeof(float));
    if (!in || !out) exit(2);
    for (int i = 0; i < m; i++)
        in[i] = i < 2001 ? -100.0f + 0.1f * (float)i : tl_uniform(-30.0f, 30.0f);
    float one = 1.0f, zero = 0.0f;
    strix_conv_params p = {1, 1, 1, 1, 0, 0, 1, 1, 1, STRIX_ACT_SILU};
    strix_view vi = strix_view_dense(in, 1, 1, m, 1), vo = strix_view_dense(out, 1, 1, m, 1);
    void *ws = malloc(strix_cpu_conv2d_workspace(&vo, &vi, &p, 1));
    if (!ws) exit(2);
    strix_cpu_conv2d(test_isa, &vo, &vi, &one, &zero, NULL, &p, ws, team(1));
    for (int i = 0; i < m; i++) {
        double x = in[i], r = x / (1.0 + exp(-x));
        if (!(fabs(out[i] - r) <= 4e-7 * fabs(r) + 1e-30)) {
            tl_fail("silu(%.9g) = %.9g, expected %.9g", x, out[i], r);
            break;
        }
    }
    free(ws);
    free(in);
    free(out);
}

/* The workspace is all a conv needs: the same call with the same arguments
 * gives the same bytes even when the workspace holds garbage. */
static void test_conv_workspace_reuse(void)
{
    conv_case cc = conv_make(2, 10, 12, 20, 24, 3, 1, 1, 1, 1, STRIX_ACT_SILU, 0);
    size_t lin = (size_t)2 * 10 * 12 * 20, lout = (size_t)2 * 10 * 12 * 24;
    size_t wl = (size_t)24 * 9 * 20;
    float *in = malloc(lin * 4), *w = malloc(wl * 4), *b = malloc(24 * 4);
    float *o1 = malloc(lout * 4), *o2 = malloc(lout * 4);
    if (!in || !w || !b || !o1 || !o2) exit(2);
    for (size_t i = 0; i < lin; i++) in[i] = tl_uniform(-1, 1);
    for (size_t i = 0; i < wl; i++) w[i] = tl_uniform(-1, 1);
    for (int i = 0; i < 24; i++) b[i] = tl_uniform(-1, 1);
    strix_view vi = strix_view_dense(in, 2, 10, 12, 20);
    strix_view v1 = strix_view_dense(o1, 2, 10, 12, 24), v2 = strix_view_dense(o2, 2, 10, 12, 24);
    size_t bytes = strix_cpu_conv2d_workspace(&v1, &vi, &cc.p, 2);
    unsigned char *ws = malloc(bytes);
    if (!ws) exit(2);
    memset(ws, 0, bytes);
    strix_cpu_conv2d(test_isa, &v1, &vi, w, b, NULL, &cc.p, ws, team(2));
    for (size_t i = 0; i < bytes; i++) ws[i] = (unsigned char)tl_int(0, 255);
    strix_cpu_conv2d(test_isa, &v2, &vi, w, b, NULL, &cc.p, ws, team(2));
    if (memcmp(o1, o2, lout * 4) != 0) tl_fail("result depends on the workspace's old contents");
    free(ws);
    free(in);
    free(w);
    free(b);
    free(o1);
    free(o2);
}

/* ------------------------------------------------------------ maxpool */

static void test_maxpool(void)
{
    for (int it = 0; it < 20; it++) {
        strix_pool_params p;
        p.k = pick((const int[]){1, 2, 3, 5}, 4);
        p.stride = it == 0 ? 1 : tl_int(1, 2);
        p.pad = it == 0 ? p.k / 2 : tl_int(0, p.k / 2);
        if (it == 0) p.k = 5, p.pad = 2; /* SPPF's pool */
        int n = tl_int(1, 3), c = pick((const int[]){1, 3, 17, 33, tl_int(1, 70)}, 5);
        int h = tl_int(p.k > 2 * p.pad ? p.k - 2 * p.pad : 1, 13);
        int w = tl_int(p.k > 2 * p.pad ? p.k - 2 * p.pad : 1, 13);
        int oh = (h + 2 * p.pad - p.k) / p.stride + 1, ow = (w + 2 * p.pad - p.k) / p.stride + 1;
        layout li = layout_make(n, h, w, c, tl_int(0, 1));
        layout lo = layout_make(n, oh, ow, c, tl_int(0, 1));
        /* negative values everywhere: -inf padding must not turn into 0 */
        gbuf in = gbuf_new(layout_len(&li), 1.0f);
        strix_view vi = host_view(&li, in.data);
        for (size_t i = 0; i < in.len; i++) in.data[i] = in.data[i] - (it % 2 ? 2.0f : 0.0f);
        double *ref = malloc((size_t)n * oh * ow * c * sizeof(double));
        if (!ref) exit(2);
        for (int b = 0; b < n; b++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++)
                    for (int ch = 0; ch < c; ch++) {
                        double m = -INFINITY;
                        for (int ky = 0; ky < p.k; ky++)
                            for (int kx = 0; kx < p.k; kx++) {
                                int iy = y * p.stride - p.pad + ky, ix = x * p.stride - p.pad + kx;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                double v = view_get(&vi, b, iy, ix, ch);
                                if (v > m) m = v;
                            }
                        ref[(((size_t)b * oh + y) * ow + x) * c + ch] = m;
                    }
        gbuf out[2];
        strix_view vo[2];
        int ok = 1;
        for (int t = 0; t < 2; t++) {
            out[t] = gbuf_new(layout_len(&lo), 0.0f);
            vo[t] = host_view(&lo, out[t].data);
            strix_cpu_maxpool2d(&vo[t], &vi, &p, team(t + 1));
            if (ok) ok = check_output("maxpool", &out[t], &vo[t], ref, NULL, 0.0);
        }
        if (ok && !views_identical(&vo[0], &vo[1])) {
            tl_fail("maxpool: 1 and 2 threads differ");
            ok = 0;
        }
        gbuf_free(&out[0]);
        gbuf_free(&out[1]);
        gbuf_free(&in);
        free(ref);
        if (!ok) return;
    }
}

/* ------------------------------------------------- upsample and copy */

static void test_upsample(void)
{
    for (int it = 0; it < 12; it++) {
        int s = tl_int(1, 3), n = tl_int(1, 3), h = tl_int(1, 9), w = tl_int(1, 9);
        int c = pick((const int[]){1, 3, 17, 33, tl_int(1, 70)}, 5);
        layout li = layout_make(n, h, w, c, tl_int(0, 1));
        layout lo = layout_make(n, h * s, w * s, c, tl_int(0, 1));
        gbuf in = gbuf_new(layout_len(&li), 1.0f);
        strix_view vi = host_view(&li, in.data);
        double *ref = malloc((size_t)n * h * s * w * s * c * sizeof(double));
        if (!ref) exit(2);
        for (int b = 0; b < n; b++)
            for (int y = 0; y < h * s; y++)
                for (int x = 0; x < w * s; x++)
                    for (int ch = 0; ch < c; ch++)
                        ref[(((size_t)b * h * s + y) * w * s + x) * c + ch] =
                            view_get(&vi, b, y / s, x / s, ch);
        int ok = 1;
        for (int t = 1; t <= 2 && ok; t++) {
            gbuf out = gbuf_new(layout_len(&lo), 0.0f);
            strix_view vo = host_view(&lo, out.data);
            strix_cpu_upsample_nearest(&vo, &vi, s, team(t));
            ok = check_output("upsample", &out, &vo, ref, NULL, 0.0);
            gbuf_free(&out);
        }
        gbuf_free(&in);
        free(ref);
        if (!ok) return;
    }
}

static void test_copy(void)
{
    for (int it = 0; it < 12; it++) {
        int n = tl_int(1, 3), h = tl_int(1, 9), w = tl_int(1, 9);
        int c = pick((const int[]){1, 3, 17, 33, tl_int(1, 70)}, 5);
        /* it 0: both dense (the whole-row path) */
        layout li = layout_make(n, h, w, c, it > 0 && tl_int(0, 1));
        layout lo = layout_make(n, h, w, c, it > 0 && tl_int(0, 1));
        gbuf in = gbuf_new(layout_len(&li), 1.0f);
        strix_view vi = host_view(&li, in.data);
        double *ref = malloc((size_t)n * h * w * c * sizeof(double));
        if (!ref) exit(2);
        for (int b = 0; b < n; b++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    for (int ch = 0; ch < c; ch++)
                        ref[(((size_t)b * h + y) * w + x) * c + ch] = view_get(&vi, b, y, x, ch);
        int ok = 1;
        for (int t = 1; t <= 2 && ok; t++) {
            gbuf out = gbuf_new(layout_len(&lo), 0.0f);
            strix_view vo = host_view(&lo, out.data);
            strix_cpu_copy(&vo, &vi, team(t));
            ok = check_output("copy", &out, &vo, ref, NULL, 0.0);
            gbuf_free(&out);
        }
        gbuf_free(&in);
        free(ref);
        if (!ok) return;
    }
}

/* ---------------------------------------------------------- attention */

static void attention_reference(double *ref, double *vref, const strix_view *qkv,
                                const strix_attn_params *p)
{
    int pixels = qkv->h * qkv->w, kd = p->key_dim, hd = p->head_dim, c3 = 2 * kd + hd;
    int oc = p->heads * hd;
    double *s = malloc((size_t)pixels * sizeof(double));
    if (!s) exit(2);
    for (int n = 0; n < qkv->n; n++)
        for (int h = 0; h < p->heads; h++)
            for (int i = 0; i < pixels; i++) {
                const float *q = strix_view_at(qkv, n, 0, 0) + (size_t)i * qkv->pix_stride + h * c3;
                double mx = -INFINITY, sum = 0.0;
                for (int j = 0; j < pixels; j++) {
                    const float *k = strix_view_at(qkv, n, 0, 0) + (size_t)j * qkv->pix_stride +
                                     h * c3 + kd;
                    double dot = 0.0;
                    for (int d = 0; d < kd; d++) dot += (double)q[d] * k[d];
                    s[j] = dot * p->scale;
                    if (s[j] > mx) mx = s[j];
                }
                for (int j = 0; j < pixels; j++) sum += (s[j] = exp(s[j] - mx));
                for (int d = 0; d < hd; d++) {
                    double acc = 0.0;
                    for (int j = 0; j < pixels; j++) {
                        const float *v = strix_view_at(qkv, n, 0, 0) +
                                         (size_t)j * qkv->pix_stride + h * c3 + 2 * kd;
                        acc += s[j] / sum * v[d];
                    }
                    ref[((size_t)n * pixels + i) * oc + h * hd + d] = acc;
                    vref[((size_t)n * pixels + i) * oc + h * hd + d] = q[2 * kd + d];
                }
            }
    free(s);
}

static void test_attention(void)
{
    for (int it = 0; it < 14; it++) {
        strix_attn_params p;
        p.heads = tl_int(1, 3);
        p.key_dim = tl_int(1, 9);
        p.head_dim = tl_int(1, 11);
        p.scale = 1.0f / sqrtf((float)p.key_dim);
        int n = tl_int(1, 2), h, w;
        if (it == 0) h = w = 1;                       /* one pixel */
        else if (it == 1) h = 7, w = 9;               /* 63: two row blocks, odd */
        else h = tl_int(1, 8), w = 2 * tl_int(0, 3) + 1; /* odd widths */
        int c = p.heads * (2 * p.key_dim + p.head_dim), oc = p.heads * p.head_dim;
        /* large logits on some runs: a softmax without the max would overflow */
        float range = it % 3 == 2 ? 12.0f : 1.0f;
        /* the softmax amplifies a score's fp32 rounding error (up to about
         * kd * eps * |q||k| * scale, absolute) into the same relative error
         * of its weight: large logits are ill-conditioned in any fp32 code */
        double tol = TOL + 4.0 * p.key_dim * FLT_EPSILON * range * range * p.scale;
        layout lq = layout_make(n, h, w, c, tl_int(0, 1));
        layout lo = layout_make(n, h, w, oc, tl_int(0, 1));
        layout lv = layout_make(n, h, w, oc, tl_int(0, 1));
        gbuf qkv = gbuf_new(layout_len(&lq), range);
        strix_view vq = host_view(&lq, qkv.data);
        double *ref = malloc((size_t)n * h * w * oc * sizeof(double));
        double *vref = malloc((size_t)n * h * w * oc * sizeof(double));
        if (!ref || !vref) exit(2);
        attention_reference(ref, vref, &vq, &p);
        gbuf out[2], vout[2];
        strix_view vo[2], vv[2];
        int ok = 1;
        for (int t = 0; t < 2; t++) {
            out[t] = gbuf_new(layout_len(&lo), 0.0f);
            vout[t] = gbuf_new(layout_len(&lv), 0.0f);
            vo[t] = host_view(&lo, out[t].data);
            vv[t] = host_view(&lv, vout[t].data);
            wsbuf ws = ws_new(strix_cpu_attention_workspace(&vq, &p, t + 1), 0);
            strix_cpu_attention(&vo[t], &vv[t], &vq, &p, ws.ptr, team(t + 1));
            if (ok && !ws_guard_ok(&ws)) {
                tl_fail("attention: wrote past the workspace");
                ok = 0;
            }
            free(ws.mem);
            if (ok) ok = check_output("attention out", &out[t], &vo[t], ref, NULL, tol);
            if (ok) ok = check_output("attention v_out", &vout[t], &vv[t], vref, NULL, 0.0);
        }
        if (ok && (!views_identical(&vo[0], &vo[1]) || !views_identical(&vv[0], &vv[1]))) {
            tl_fail("attention: 1 and 2 threads differ");
            ok = 0;
        }
        for (int t = 0; t < 2; t++) {
            gbuf_free(&out[t]);
            gbuf_free(&vout[t]);
        }
        gbuf_free(&qkv);
        free(ref);
        free(vref);
        if (!ok) {
            fprintf(stderr, "attention case: n%d %dx%d heads %d kd %d hd %d\n", n, h, w, p.heads,
                    p.key_dim, p.head_dim);
            return;
        }
    }
}

/* ------------------------------------------------------------- decode */

/* DFL's expected distance over rm bins, in double; reg_max 1 (YOLO26): no
 * DFL, the output is the distance. */
static double dfl_reference(const float *lg, int rm)
{
    if (rm == 1) return lg[0];
    double mx = lg[0], sum = 0.0, wsum = 0.0;
    for (int i = 1; i < rm; i++) mx = lg[i] > mx ? lg[i] : mx;
    for (int i = 0; i < rm; i++) {
        sum += exp(lg[i] - mx);
        wsum += i * exp(lg[i] - mx);
    }
    return wsum / sum;
}

/* The decode's reference in double, per Ultralytics' formulas: DFL
 * distances, boxes (OBB: dist2rbox with the angle, (sigmoid - 1/4) pi or
 * OBB26's raw one), sigmoid scores, then the task channels (Segment's
 * coefficients copied, Pose.kpts_decode or Pose26's without the 2x - 0.5).
 * head [n, A, 4 rm + nc + extra]; returns [n, A, 4 + nc + extra] (malloc). */
static double *decode_reference(const strix_decode_params *p, int n, const float *head, size_t anchors)
{
    int rm = p->reg_max, nc = p->nc, ne = p->extra;
    size_t iw = (size_t)4 * rm + nc + ne, ow = (size_t)4 + nc + ne;
    double *ref = malloc(n * anchors * ow * sizeof(double));
    if (!ref) exit(2);
    for (int b = 0; b < n; b++) {
        size_t a = (size_t)b * anchors;
        for (int l = 0; l < p->levels; l++)
            for (int y = 0; y < p->level_h[l]; y++)
                for (int x = 0; x < p->level_w[l]; x++, a++) {
                    const float *hp = head + a * iw, *xp = hp + 4 * rm + nc;
                    double d[4], s = p->level_stride[l], ax = x + 0.5, ay = y + 0.5, *r = ref + a * ow;
                    for (int side = 0; side < 4; side++) d[side] = dfl_reference(hp + side * rm, rm);
                    if (p->kind == STRIX_EXTRA_ANGLE) {
                        double ang = p->v26 ? xp[0] : (1 / (1 + exp(-xp[0])) - 0.25) * 3.14159265358979323846;
                        double xf = (d[2] - d[0]) / 2, yf = (d[3] - d[1]) / 2;
                        r[0] = (xf * cos(ang) - yf * sin(ang) + ax) * s;
                        r[1] = (xf * sin(ang) + yf * cos(ang) + ay) * s;
                        r[2] = (d[0] + d[2]) * s;
                        r[3] = (d[1] + d[3]) * s;
                        r[4 + nc] = ang;
                    } else {
                        r[0] = (ax - d[0] + ax + d[2]) / 2 * s;
                        r[1] = (ay - d[1] + ay + d[3]) / 2 * s;
                        r[2] = (d[0] + d[2]) * s;
                        r[3] = (d[1] + d[3]) * s;
                    }
                    for (int c = 0; c < nc; c++) r[4 + c] = 1 / (1 + exp(-hp[4 * rm + c]));
                    if (p->kind == STRIX_EXTRA_COPY)
                        for (int k = 0; k < ne; k++) r[4 + nc + k] = xp[k];
                    if (p->kind == STRIX_EXTRA_KPT)
                        for (int k = 0; k < ne; k += p->kpt_d) {
                            r[4 + nc + k] = p->v26 ? (xp[k] + ax) * s : (xp[k] * 2 + x) * s;
                            r[4 + nc + k + 1] = p->v26 ? (xp[k + 1] + ay) * s : (xp[k + 1] * 2 + y) * s;
                            if (p->kpt_d == 3) r[4 + nc + k + 2] = 1 / (1 + exp(-xp[k + 2]));
                        }
                }
    }
    return ref;
}

/* strides 8, 16, 32 and random level sizes up to max_side for p->levels
 * levels; returns the anchors over all levels */
static size_t random_levels(strix_decode_params *p, int max_side)
{
    size_t anchors = 0;
    for (int l = 0; l < p->levels; l++) {
        p->level_stride[l] = 8 << l;
        p->level_h[l] = tl_int(1, max_side);
        p->level_w[l] = tl_int(1, max_side);
        anchors += (size_t)p->level_h[l] * p->level_w[l];
    }
    return anchors;
}

static void test_decode(void)
{
    for (int it = 0; it < 10; it++) {
        strix_decode_params p;
        memset(&p, 0, sizeof p);
        p.levels = tl_int(1, 3);
        p.reg_max = it % 2 ? 16 : tl_int(1, 17);
        p.nc = tl_int(1, 7);
        size_t anchors = random_levels(&p, 6);
        int n = tl_int(1, 3), rm = p.reg_max, nc = p.nc;
        size_t iw = (size_t)4 * rm + nc, ow = (size_t)4 + nc;
        /* logits up to +-100 on some runs: exp without the max overflows */
        gbuf head = gbuf_new(n * anchors * iw, it % 3 == 0 ? 100.0f : 8.0f);
        double *ref = decode_reference(&p, n, head.data, anchors);
        gbuf out[2];
        int ok = 1;
        for (int t = 0; t < 2; t++) {
            out[t] = gbuf_new(n * anchors * ow, 0.0f);
            strix_cpu_detect_decode(out[t].data, head.data, n, &p, team(t + 1));
            /* boxes and scores are checked separately: scores are tiny next
             * to pixel coordinates.  The output is dense, so its guards are
             * the only place a stray write can land. */
            if (ok && !gbuf_guards_ok(&out[t])) {
                tl_fail("decode: output guard overwritten");
                ok = 0;
            }
            double mb = 0, db = 0, ms = 0, ds = 0;
            for (size_t a = 0; a < n * anchors && ok; a++)
                for (size_t c = 0; c < ow; c++) {
                    float v = out[t].data[a * ow + c];
                    double r = ref[a * ow + c];
                    if (!isfinite(v)) {
                        tl_fail("decode: non-finite output at anchor %zu field %zu", a, c);
                        ok = 0;
                        break;
                    }
                    if (c < 4) {
                        mb = fmax(mb, fabs(r));
                        db = fmax(db, fabs(v - r));
                    } else {
                        ms = fmax(ms, fabs(r));
                        ds = fmax(ds, fabs(v - r));
                    }
                }
            if (ok && (db / (mb + 1e-6) > TOL || ds / (ms + 1e-6) > TOL)) {
                tl_fail("decode: relative error boxes %.3g scores %.3g", db / (mb + 1e-6),
                        ds / (ms + 1e-6));
                ok = 0;
            }
        }
        if (ok && memcmp(out[0].data, out[1].data, n * anchors * ow * sizeof(float)) != 0) {
            tl_fail("decode: 1 and 2 threads differ");
            ok = 0;
        }
        gbuf_free(&out[0]);
        gbuf_free(&out[1]);
        gbuf_free(&head);
        free(ref);
        if (!ok) return;
    }
}

/* ------------------------------------------------------- task heads */

/* ConvTranspose2d(cin, c, 2, stride 2) as strix runs it: the 1x1 GEMM to 4c
 * channels (strix_cpu_conv2d, weights reordered as engine/weights.c does)
 * then strix_cpu_shuffle2, against the transposed convolution computed
 * straight from PyTorch's [cin, c, 2, 2] weights. */
static void test_conv_transpose2x2(void)
{
    for (int it = 0; it < 8; it++) {
        int n = tl_int(1, 2), h = tl_int(1, 7), w = tl_int(1, 7), cin = tl_int(1, 40), c = tl_int(1, 24);
        layout li = layout_make(n, h, w, cin, tl_int(0, 1)), lo = layout_make(n, 2 * h, 2 * w, c, tl_int(0, 1));
        gbuf in = gbuf_new(layout_len(&li), 1.0f), wt = gbuf_new((size_t)cin * c * 4, 0.5f), bias = gbuf_new(c, 0.5f);
        strix_view vi = host_view(&li, in.data);
        float *ohwi = malloc(sizeof(float) * (size_t)cin * c * 4), *b4 = malloc(sizeof(float) * 4 * (size_t)c);
        float *mid = malloc(sizeof(float) * (size_t)n * h * w * 4 * c);
        double *ref = malloc(sizeof(double) * (size_t)n * 4 * h * w * c);
        if (!ohwi || !b4 || !mid || !ref) exit(2);
        for (int i = 0; i < cin; i++)
            for (int o = 0; o < c; o++)
                for (int k = 0; k < 4; k++) ohwi[((size_t)k * c + o) * cin + i] = wt.data[((size_t)i * c + o) * 4 + k];
        for (int k = 0; k < 4; k++) memcpy(b4 + (size_t)k * c, bias.data, sizeof(float) * (size_t)c);
        for (int b = 0; b < n; b++)
            for (int y = 0; y < 2 * h; y++)
                for (int x = 0; x < 2 * w; x++)
                    for (int o = 0; o < c; o++) {
                        double acc = bias.data[o];
                        for (int i = 0; i < cin; i++)
                            acc += (double)view_get(&vi, b, y / 2, x / 2, i) *
                                   wt.data[((size_t)i * c + o) * 4 + (y % 2) * 2 + x % 2];
                        ref[(((size_t)b * 2 * h + y) * 2 * w + x) * c + o] = acc;
                    }
        strix_conv_params p = {1, 1, 1, 1, 0, 0, 1, 1, 1, STRIX_ACT_NONE};
        strix_view vm = strix_view_dense(mid, n, h, w, 4 * c);
        int ok = 1;
        for (int t = 1; t <= 2 && ok; t++) {
            gbuf out = gbuf_new(layout_len(&lo), 0.0f);
            strix_view vo = host_view(&lo, out.data);
            wsbuf ws = ws_new(strix_cpu_conv2d_workspace(&vm, &vi, &p, t), 0);
            strix_cpu_conv2d(STRIX_CPU_ISA_AUTO, &vm, &vi, ohwi, b4, NULL, &p, ws.ptr, team(t));
            strix_cpu_shuffle2(&vo, &vm, team(t));
            ok = check_output("conv_transpose2x2", &out, &vo, ref, NULL, TOL);
            gbuf_free(&out);
            free(ws.mem);
        }
        free(ohwi), free(b4), free(mid), free(ref);
        gbuf_free(&in), gbuf_free(&wt), gbuf_free(&bias);
        if (!ok) return;
    }
}

/* strix_cpu_add, strix_cpu_avgpool_global and strix_cpu_softmax against
 * their definitions in double. */
static void test_add_pool_softmax(void)
{
    for (int it = 0; it < 10; it++) {
        int n = tl_int(1, 3), h = tl_int(1, 9), w = tl_int(1, 9), c = tl_int(1, 70);
        layout la = layout_make(n, h, w, c, tl_int(0, 1)), lb = layout_make(n, h, w, c, tl_int(0, 1));
        layout lo = layout_make(n, h, w, c, tl_int(0, 1)), lp = layout_make(n, 1, 1, c, tl_int(0, 1));
        /* softmax logits up to +-100 on some runs: exp without the max overflows */
        gbuf a = gbuf_new(layout_len(&la), it % 3 ? 4.0f : 100.0f), b = gbuf_new(layout_len(&lb), 4.0f);
        strix_view va = host_view(&la, a.data), vb = host_view(&lb, b.data);
        size_t e = (size_t)n * h * w * c;
        double *sum = malloc(e * sizeof(double)), *sm = malloc(e * sizeof(double));
        double *mean = malloc((size_t)n * c * sizeof(double));
        if (!sum || !sm || !mean) exit(2);
        for (int bi = 0; bi < n; bi++)
            for (int ch = 0; ch < c; ch++) {
                double acc = 0;
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) acc += view_get(&va, bi, y, x, ch);
                mean[(size_t)bi * c + ch] = acc / (h * w);
            }
        for (int bi = 0; bi < n; bi++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    double mx = -INFINITY, z = 0;
                    /* a comparison, not fmax: aarch64 gcc 12 -O3 crashes (ICE) vectorising that reduction */
                    for (int ch = 0; ch < c; ch++) {
                        double v = view_get(&va, bi, y, x, ch);
                        if (v > mx) mx = v;
                    }
                    for (int ch = 0; ch < c; ch++) z += exp(view_get(&va, bi, y, x, ch) - mx);
                    for (int ch = 0; ch < c; ch++) {
                        size_t i = (((size_t)bi * h + y) * w + x) * c + ch;
                        sum[i] = (double)view_get(&va, bi, y, x, ch) + view_get(&vb, bi, y, x, ch);
                        sm[i] = exp(view_get(&va, bi, y, x, ch) - mx) / z;
                    }
                }
        int ok = 1;
        for (int t = 1; t <= 2 && ok; t++) {
            gbuf o1 = gbuf_new(layout_len(&lo), 0.0f), o2 = gbuf_new(layout_len(&lp), 0.0f);
            gbuf o3 = gbuf_new(layout_len(&lo), 0.0f);
            strix_view v1 = host_view(&lo, o1.data), v2 = host_view(&lp, o2.data), v3 = host_view(&lo, o3.data);
            strix_cpu_add(&v1, &va, &vb, team(t));
            strix_cpu_avgpool_global(&v2, &va, team(t));
            strix_cpu_softmax(&v3, &va, team(t));
            ok = check_output("add", &o1, &v1, sum, NULL, TOL) && check_output("avgpool", &o2, &v2, mean, NULL, TOL) &&
                 check_output("softmax", &o3, &v3, sm, NULL, TOL);
            gbuf_free(&o1), gbuf_free(&o2), gbuf_free(&o3);
        }
        free(sum), free(sm), free(mean);
        gbuf_free(&a), gbuf_free(&b);
        if (!ok) return;
    }
}

/* The task channels of the decode: Segment's coefficients copied, Pose's
 * keypoints (Pose.kpts_decode; Pose26's without the 2x - 0.5), OBB's angle
 * and rotated box (dist2rbox; OBB26's raw angle), per Ultralytics' formulas
 * in double. */
static void test_decode_tasks(void)
{
    for (int it = 0; it < 12; it++) {
        strix_decode_params p;
        memset(&p, 0, sizeof p);
        p.levels = tl_int(1, 3);
        p.reg_max = tl_int(0, 1) ? 16 : 1;
        p.nc = tl_int(1, 5);
        p.kind = (strix_decode_extra)(1 + it % 3);
        p.v26 = tl_int(0, 1);
        p.kpt_d = tl_int(2, 3);
        p.extra = p.kind == STRIX_EXTRA_COPY ? tl_int(1, 33) : p.kind == STRIX_EXTRA_KPT ? p.kpt_d * tl_int(1, 5) : 1;
        size_t anchors = random_levels(&p, 5);
        int n = tl_int(1, 2), rm = p.reg_max, nc = p.nc, ne = p.extra;
        size_t iw = (size_t)4 * rm + nc + ne, ow = (size_t)4 + nc + ne;
        gbuf head = gbuf_new(n * anchors * iw, 4.0f);
        double *ref = decode_reference(&p, n, head.data, anchors);
        gbuf out = gbuf_new(n * anchors * ow, 0.0f);
        strix_cpu_detect_decode(out.data, head.data, n, &p, team(2));
        int ok = gbuf_guards_ok(&out);
        if (!ok) tl_fail("decode (task %d): output guard overwritten", (int)p.kind);
        /* pixel coordinates to 1e-4 px relative to the image, scores, angles,
         * visibilities and coefficients to 1e-5 absolute */
        for (size_t a = 0; a < n * anchors && ok; a++)
            for (size_t c = 0; c < ow && ok; c++) {
                double r = ref[a * ow + c], v = out.data[a * ow + c];
                int pixel = c < 4 || (p.kind == STRIX_EXTRA_KPT && c >= 4 + (size_t)nc &&
                                      (c - 4 - nc) % (size_t)p.kpt_d < 2);
                if (!(fabs(v - r) <= (pixel ? 1e-5 * (fabs(r) + 64) : 1e-5 * (fabs(r) + 1)))) {
                    tl_fail("decode (task %d, v26 %d): anchor %zu field %zu is %.9g, expected %.9g", (int)p.kind,
                            p.v26, a, c, v, r);
                    ok = 0;
                }
            }
        gbuf_free(&out);
        gbuf_free(&head);
        free(ref);
        if (!ok) return;
    }
}

/* Every convolution test once per instruction set this architecture has. */
static void (*isa_test)(void);
static void run_isa_test(void)
{
    if (!strix_cpu_isa_supported(test_isa)) {
        tl_skip("this CPU cannot run the %s micro-kernels", strix_cpu_isa_name(test_isa));
        return;
    }
    isa_test();
}

static void run_per_isa(int argc, char **argv, const char *name, void (*fn)(void))
{
    static const strix_cpu_isa isas[] = {
        STRIX_CPU_ISA_GENERIC,
#if defined(__x86_64__)
        STRIX_CPU_ISA_AVX2, STRIX_CPU_ISA_AVX512,
#endif
#if defined(__aarch64__)
        STRIX_CPU_ISA_NEON,
#endif
    };
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        char full[96];
        snprintf(full, sizeof full, "%s[%s]", name, strix_cpu_isa_name(isas[i]));
        if (!tl_selected(argc, argv, full)) continue;
        test_isa = isas[i];
        isa_test = fn;
        tl_run(full, run_isa_test);
    }
}
#define TL_RUN_ISA(fn) run_per_isa(argc, argv, #fn, fn)

int main(int argc, char **argv)
{
    tl_init();
    strix_error e;
    if (strix_cpu_team_create(&two_threads, 2, 0, &e)) {
        fprintf(stderr, "test_cpu_ops: %s\n", e.message);
        return 2;
    }
    TL_RUN_ISA(test_conv_cases);
    TL_RUN_ISA(test_conv_random);
    TL_RUN_ISA(test_conv_direct);
    TL_RUN_ISA(test_conv_winograd);
    TL_RUN_ISA(test_conv_silu_accuracy);
    TL_RUN_ISA(test_conv_workspace_reuse);
    TL_RUN(test_maxpool);
    TL_RUN(test_upsample);
    TL_RUN(test_copy);
    TL_RUN(test_attention);
    TL_RUN(test_decode);
    TL_RUN(test_conv_transpose2x2);
    TL_RUN(test_add_pool_softmax);
    TL_RUN(test_decode_tasks);
    strix_cpu_team_free(two_threads);
    TL_MAIN_END();
}
