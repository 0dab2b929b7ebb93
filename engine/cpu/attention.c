/* attention.c — the CPU core of Ultralytics' Attention block (YOLO11's PSA):
 * per image and head, out = softmax(scale * Q K^T) V, plus V gathered
 * densely for the positional-encoding convolution.
 *
 * Layouts: qkv [N, H, W, heads*(2kd+hd)] (per head: q, k, v channels);
 * out and v_out [N, H, W, heads*hd].  P = H*W pixels attend to each other.
 *
 * Work is split into tasks of ATT_ROWS query rows of one (image, head).  A
 * task transposes that head's keys to kt[kd][P] so the score row
 * s[j] = q_i . k_j is accumulated over d with j contiguous (vectorisable
 * without reassociating a dot product), then takes the row's max-subtracted
 * softmax and accumulates out_i = sum_j p_ij v_j with d contiguous.  Only
 * one score row is live at a time, so a thread needs (kd + 1) * P floats.
 * Every element is computed in the same order for any thread count.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ops.h"

/* Query rows per task: amortises the key transpose over that many rows. */
#define ATT_ROWS 32

/* Per thread: the transposed keys (kd x P) and one row of scores (P). */
static size_t thread_floats(int pixels, const strix_attn_params *p)
{
    return (size_t)(p->key_dim + 1) * pixels;
}

size_t strix_cpu_attention_workspace(const strix_view *qkv, const strix_attn_params *p,
                                     int threads)
{
    return (size_t)(threads > 1 ? threads : 1) * thread_floats(qkv->h * qkv->w, p) * sizeof(float);
}

/* The library is built for the baseline target (any x86-64: SSE2), so the
 * compiler also makes AVX2 and AVX-512F versions of the one hot loop nest
 * here and the loader picks one for the CPU (ifunc).  The arithmetic is the
 * same in every version (no FMA contraction in ISO C mode, madd decided for
 * the whole file), so the results are too.  The loops run on 8-float
 * vectors (vmath.h; the baseline clone splits each in two SSE halves), with
 * the running sums of a block of scores or of an output row in registers:
 * each sum still adds its terms in the scalar order (d ascending for a
 * score, j ascending for an output), and the softmax's exps are vmath.h's
 * (libm's scalar expf took half of this block's time). */
#if defined(__x86_64__) && defined(__linux__)
#define HOT_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define HOT_CLONES
#endif
/* vmath.h's vectors never cross a non-inline call, so gcc's note about
 * their ABI without AVX is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"
#define VL 8
#include "vmath.h"

/* Score vectors / output vectors summed in registers at a time. */
#define ATT_SV 4
#define ATT_OV 8

/* Loads and stores of n <= VL floats (a tail through a zero-padded copy). */
static inline __attribute__((always_inline)) vf load_n(const float *p, int n)
{
    if (n == VL) return v_load(p);
    vf v = v_splat(0.0f);
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}

static inline __attribute__((always_inline)) void store_n(float *p, vf v, int n)
{
    if (n == VL) v_store(p, v);
    else memcpy(p, &v, (size_t)n * sizeof(float));
}

/* acc[v] += a * x[v * VL ..] for the nv (<= max) vectors of a full block,
 * or acc[0] += a * the m < VL floats at x (a tail). */
static inline __attribute__((always_inline)) void fma_vecs(vf *acc, vf a, const float *x, int nv, int m, int max)
{
    if (m < VL) {
        acc[0] = v_fma(a, load_n(x, m), acc[0]);
        return;
    }
#pragma GCC unroll 8
    for (int v = 0; v < max; v++)
        if (v < nv) acc[v] = v_fma(a, v_load(x + v * VL), acc[v]);
}

/* nv vectors (nv <= ATT_SV) of scores j0 .. j0 + nv * VL - 1, or one
 * vector of m < VL scores (nv 1): scale * sum_d q[d] kt[d][j] into s, their
 * maximum into *mxv (lanes past the row never win it). */
static inline __attribute__((always_inline)) void score_vecs(float *s, vf *mxv, const float *q, const float *kt,
                                                              int pixels, int kd, float scale, int j0, int nv, int m)
{
    vf acc[ATT_SV] = {0};
    for (int d = 0; d < kd; d++) fma_vecs(acc, v_splat(q[d]), kt + (size_t)d * pixels + j0, nv, m, ATT_SV);
#pragma GCC unroll 4
    for (int v = 0; v < ATT_SV; v++) {
        if (v >= nv) break;
        vf sc = acc[v] * v_splat(scale);
        for (int l = m; l < VL; l++) sc[l] = -INFINITY;
        *mxv = v_select(sc > *mxv, sc, *mxv);
        store_n(s + j0 + v * VL, sc, m);
    }
}

/* nv vectors (nv <= ATT_OV) of output channels d0 .. d0 + nv * VL - 1, or
 * one vector of m < VL (nv 1): o[d] = sum_j (s[j] * inv) v_j[d]. */
static inline __attribute__((always_inline)) void out_vecs(float *o, const float *vb, size_t ps, const float *s,
                                                            float inv, int pixels, int d0, int nv, int m)
{
    vf acc[ATT_OV] = {0};
    for (int j = 0; j < pixels; j++) fma_vecs(acc, v_splat(s[j] * inv), vb + (size_t)j * ps + d0, nv, m, ATT_OV);
#pragma GCC unroll 8
    for (int u = 0; u < ATT_OV; u++)
        if (u < nv) store_n(o + d0 + u * VL, acc[u], m);
}

/* Query rows [i0, i0 + rows) of head h of image n; kt: kd x P, s: P floats.
 * Full blocks of ATT_SV score / ATT_OV output vectors first (constant
 * counts: the accumulators stay in registers), then the rest a vector at a
 * time. */
HOT_CLONES static void attend_block(const strix_view *out, const strix_view *qkv, const strix_attn_params *p,
                         int n, int h, int i0, int rows, float *kt, float *s)
{
    int pixels = qkv->h * qkv->w, kd = p->key_dim, hd = p->head_dim;
    const float *base = qkv->data + (size_t)n * qkv->batch_stride +
                        (size_t)h * (2 * kd + hd);
    size_t ps = qkv->pix_stride;
    for (int j = 0; j < pixels; j++)
        for (int d = 0; d < kd; d++) kt[(size_t)d * pixels + j] = base[(size_t)j * ps + kd + d];
    for (int i = 0; i < rows; i++) {
        const float *q = base + (size_t)(i0 + i) * ps;
        vf mxv = v_splat(-INFINITY);
        int j0 = 0;
        for (; j0 + ATT_SV * VL <= pixels; j0 += ATT_SV * VL)
            score_vecs(s, &mxv, q, kt, pixels, kd, p->scale, j0, ATT_SV, VL);
        for (; j0 < pixels; j0 += VL)
            score_vecs(s, &mxv, q, kt, pixels, kd, p->scale, j0, 1, pixels - j0 < VL ? pixels - j0 : VL);
        float mx = v_hmax(mxv), sum = 0.0f;
        for (j0 = 0; j0 < pixels; j0 += VL) {
            int m = pixels - j0 < VL ? pixels - j0 : VL;
            vf e = v_exp(load_n(s + j0, m) - v_splat(mx));
            store_n(s + j0, e, m);
            for (int l = 0; l < m; l++) sum += e[l];
        }
        float inv = 1.0f / sum;
        float *o = out->data + (size_t)n * out->batch_stride + (size_t)(i0 + i) * out->pix_stride +
                   (size_t)h * hd;
        const float *vb = base + 2 * kd;
        int d0 = 0;
        for (; d0 + ATT_OV * VL <= hd; d0 += ATT_OV * VL) out_vecs(o, vb, ps, s, inv, pixels, d0, ATT_OV, VL);
        for (; d0 < hd; d0 += VL) out_vecs(o, vb, ps, s, inv, pixels, d0, 1, hd - d0 < VL ? hd - d0 : VL);
    }
}

typedef struct attn_job {
    const strix_view *out, *v_out, *qkv;
    const strix_attn_params *p;
    float *ws;
    int blocks;
} attn_job;

static void attend_task(void *ctx, int t, int worker)
{
    const attn_job *j = ctx;
    int heads = j->p->heads, pixels = j->qkv->h * j->qkv->w;
    float *kt = j->ws + (size_t)worker * thread_floats(pixels, j->p);
    float *s = kt + (size_t)j->p->key_dim * pixels;
    int n = t / (heads * j->blocks), h = t / j->blocks % heads, i0 = t % j->blocks * ATT_ROWS;
    int rows = pixels - i0 < ATT_ROWS ? pixels - i0 : ATT_ROWS;
    attend_block(j->out, j->qkv, j->p, n, h, i0, rows, kt, s);
}

/* v_out[i, h*hd + d] = v of head h at pixel i; task r: pixel r of all images */
static void gather_v_task(void *ctx, int r, int worker)
{
    const attn_job *j = ctx;
    const strix_view *qkv = j->qkv;
    int kd = j->p->key_dim, hd = j->p->head_dim, pixels = qkv->h * qkv->w;
    (void)worker;
    int n = r / pixels, i = r % pixels;
    const float *src = strix_view_at(qkv, n, 0, 0) + (size_t)i * qkv->pix_stride;
    float *dst = strix_view_at(j->v_out, n, 0, 0) + (size_t)i * j->v_out->pix_stride;
    for (int h = 0; h < j->p->heads; h++)
        memcpy(dst + (size_t)h * hd, src + (size_t)h * (2 * kd + hd) + 2 * kd, (size_t)hd * sizeof(float));
}

void strix_cpu_attention(const strix_view *out, const strix_view *v_out, const strix_view *qkv,
                         const strix_attn_params *p, void *workspace, strix_cpu_team *team)
{
    int kd = p->key_dim, hd = p->head_dim, heads = p->heads;
    assert(qkv->c == heads * (2 * kd + hd));
    assert(out->c == heads * hd && v_out->c == heads * hd);
    assert(out->n == qkv->n && out->h == qkv->h && out->w == qkv->w);
    assert(v_out->n == qkv->n && v_out->h == qkv->h && v_out->w == qkv->w);
    int pixels = qkv->h * qkv->w;
    if (pixels == 0 || qkv->n == 0) return;
    attn_job j = {out, v_out, qkv, p, workspace, STRIX_CEIL_DIV(pixels, ATT_ROWS)};
    strix_cpu_team_run(team, qkv->n * heads * j.blocks, attend_task, &j);
    strix_cpu_team_run(team, qkv->n * pixels, gather_v_task, &j);
}
