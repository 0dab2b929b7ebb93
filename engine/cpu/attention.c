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
 * the whole file), so the results are too. */
#if defined(__x86_64__) && defined(__linux__)
#define HOT_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define HOT_CLONES
#endif

/* Query rows [i0, i0 + rows) of head h of image n; kt: kd x P, s: P floats. */
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
        for (int j = 0; j < pixels; j++) s[j] = 0.0f;
        for (int d = 0; d < kd; d++) {
            const float *kr = kt + (size_t)d * pixels;
            float qd = q[d];
            for (int j = 0; j < pixels; j++) s[j] = strix_cpu_madd(qd, kr[j], s[j]);
        }
        float mx = -INFINITY;
        for (int j = 0; j < pixels; j++) {
            s[j] *= p->scale;
            mx = s[j] > mx ? s[j] : mx;
        }
        float sum = 0.0f;
        for (int j = 0; j < pixels; j++) {
            s[j] = expf(s[j] - mx);
            sum += s[j];
        }
        float inv = 1.0f / sum;
        float *o = out->data + (size_t)n * out->batch_stride + (size_t)(i0 + i) * out->pix_stride +
                   (size_t)h * hd;
        for (int d = 0; d < hd; d++) o[d] = 0.0f;
        for (int j = 0; j < pixels; j++) {
            const float *v = base + (size_t)j * ps + 2 * kd;
            float pj = s[j] * inv;
            for (int d = 0; d < hd; d++) o[d] = strix_cpu_madd(pj, v[d], o[d]);
        }
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
