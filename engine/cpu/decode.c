/* decode.c — the CPU Detect-head decode (Ultralytics Detect._inference):
 * DFL expectation of each box side, anchor points at cell centres, boxes to
 * cx,cy,w,h in input pixels, sigmoid class scores; then the task channels
 * (Segment's coefficients copied, Pose's keypoints decoded, OBB's angle,
 * which also rotates the box centre).
 *
 * Layouts: head [N, A, 4*reg_max + nc + extra] dense, anchors level by level
 * and row-major within a level; out [N, A, 4 + nc + extra] dense.
 *
 * The DFL softmaxes and the class sigmoids (4 x 16 + nc exps an anchor,
 * 1.2 M for an 8400-anchor, 80-class head) run on 8-float vectors with
 * vmath.h's exp, not libm's scalar expf: that took 5% of a yolo11n forward
 * pass.  The baseline build's compiler also makes AVX2 and AVX-512F
 * versions of the row loop (target_clones, as attention.c); the arithmetic
 * is the same in each, so are the results.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>

#include "ops.h"

/* 8-float vectors in every clone: the baseline one splits them in two SSE
 * halves.  They never cross a non-inline call (all of vmath.h is static
 * inline), so the ABI note gcc makes about passing them is moot. */
#pragma GCC diagnostic ignored "-Wpsabi"
#define VL 8
#include "vmath.h"

#if defined(__x86_64__) && defined(__linux__)
#define HOT_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define HOT_CLONES
#endif

/* sum_i i * softmax(l)_i over reg_max bins, max subtracted for safety;
 * with one bin (reg_max 1, YOLO26: no DFL) the output is the distance.
 * Bins past the last vector's end are zero-weighted lanes of a padded copy. */
static inline __attribute__((always_inline)) float dfl_distance(const float *l, int bins)
{
    if (bins == 1) return l[0];
    vf mx = v_splat(-INFINITY), sum = v_splat(0.0f), wsum = sum;
    for (int i = 0; i < bins; i += VL) {
        vf v = v_splat(-INFINITY);
        memcpy(&v, l + i, (size_t)(bins - i < VL ? bins - i : VL) * sizeof(float));
        mx = v_select(v > mx, v, mx);
    }
    vf m = v_splat(v_hmax(mx)), idx = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int i = 0; i < bins; i += VL, idx += v_splat((float)VL)) {
        vf v = m;
        memcpy(&v, l + i, (size_t)(bins - i < VL ? bins - i : VL) * sizeof(float));
        vf e = v_exp(v - m);
        e = v_select(idx < v_splat((float)bins), e, v_splat(0.0f));
        sum += e;
        wsum = v_fma(idx, e, wsum);
    }
    return v_hsum(wsum) / v_hsum(sum);
}

/* dst[c] = sigmoid(src[c]) for c < n; the tail through a padded vector. */
static inline __attribute__((always_inline)) void sigmoid_run(float *dst, const float *src, int n)
{
    int c = 0;
    for (; c + VL <= n; c += VL) v_store(dst + c, v_sigmoid(v_load(src + c)));
    if (c < n) {
        vf v = v_splat(0.0f);
        memcpy(&v, src + c, (size_t)(n - c) * sizeof(float));
        v = v_sigmoid(v);
        memcpy(dst + c, &v, (size_t)(n - c) * sizeof(float));
    }
}

typedef struct decode_job {
    float *out;
    const float *head;
    const strix_decode_params *p;
    int rows_per_image;
    size_t anchors; /* per image */
} decode_job;

/* The anchors of grid row y of a level (stride s, w cells), starting at
 * head row hp and output row op. */
HOT_CLONES static void decode_cells(float *op, const float *hp, const strix_decode_params *p, int y, int w,
                                    float s)
{
    int rm = p->reg_max, nc = p->nc, ne = p->extra;
    size_t in_w = (size_t)4 * rm + nc + ne, out_w = (size_t)4 + nc + ne;
    for (int x = 0; x < w; x++, hp += in_w, op += out_w) {
        float ax = (float)x + 0.5f, ay = (float)y + 0.5f;
        float dl = dfl_distance(hp, rm), dt = dfl_distance(hp + rm, rm);
        float dr = dfl_distance(hp + 2 * rm, rm), db = dfl_distance(hp + 3 * rm, rm);
        const float *xp = hp + 4 * rm + nc;
        float *xo = op + 4 + nc;
        if (p->kind == STRIX_EXTRA_ANGLE) {
            /* OBB: the angle ((sigmoid - 1/4) pi; OBB26 raw), the centre
             * offset rotated by it (dist2rbox), w = l + r, h = t + b */
            float ang = p->v26 ? xp[0] : (1.0f / (1.0f + expf(-xp[0])) - 0.25f) * 3.14159265358979323846f;
            float c = cosf(ang), sn = sinf(ang), xf = (dr - dl) / 2, yf = (db - dt) / 2;
            op[0] = (xf * c - yf * sn + ax) * s;
            op[1] = (xf * sn + yf * c + ay) * s;
            op[2] = (dl + dr) * s;
            op[3] = (dt + db) * s;
            xo[0] = ang;
        } else {
            float x1 = ax - dl, y1 = ay - dt, x2 = ax + dr, y2 = ay + db;
            op[0] = (x1 + x2) * 0.5f * s;
            op[1] = (y1 + y2) * 0.5f * s;
            op[2] = (x2 - x1) * s;
            op[3] = (y2 - y1) * s;
        }
        sigmoid_run(op + 4, hp + 4 * rm, nc);
        if (p->kind == STRIX_EXTRA_COPY) {
            for (int k = 0; k < ne; k++) xo[k] = xp[k];
        } else if (p->kind == STRIX_EXTRA_KPT) {
            /* Pose.kpts_decode: (2v + anchor - 0.5) * stride; Pose26: (v + anchor) * stride */
            for (int k = 0; k + p->kpt_d <= ne; k += p->kpt_d) {
                if (p->v26) {
                    xo[k] = (xp[k] + ax) * s;
                    xo[k + 1] = (xp[k + 1] + ay) * s;
                } else {
                    xo[k] = (xp[k] * 2.0f + (ax - 0.5f)) * s;
                    xo[k + 1] = (xp[k + 1] * 2.0f + (ay - 0.5f)) * s;
                }
                if (p->kpt_d == 3) xo[k + 2] = 1.0f / (1.0f + expf(-xp[k + 2]));
            }
        }
    }
}

/* Task t: one grid row of one level of one image. */
static void decode_row(void *ctx, int t, int worker)
{
    const decode_job *j = ctx;
    const strix_decode_params *p = j->p;
    (void)worker;
    size_t in_w = (size_t)4 * p->reg_max + p->nc + p->extra, out_w = (size_t)4 + p->nc + p->extra;
    int img = t / j->rows_per_image, y = t % j->rows_per_image, l = 0;
    size_t a = (size_t)img * j->anchors; /* first anchor of the row */
    while (y >= p->level_h[l]) {
        a += (size_t)p->level_h[l] * p->level_w[l];
        y -= p->level_h[l];
        l++;
    }
    a += (size_t)y * p->level_w[l];
    decode_cells(j->out + a * out_w, j->head + a * in_w, p, y, p->level_w[l], (float)p->level_stride[l]);
}

void strix_cpu_detect_decode(float *out, const float *head, int n, const strix_decode_params *p,
                             strix_cpu_team *team)
{
    assert(p->levels >= 1 && p->levels <= STRIX_MAX_LEVELS);
    decode_job j = {out, head, p, 0, 0};
    for (int l = 0; l < p->levels; l++) {
        j.rows_per_image += p->level_h[l];
        j.anchors += (size_t)p->level_h[l] * p->level_w[l];
    }
    strix_cpu_team_run(team, n * j.rows_per_image, decode_row, &j);
}
