/* postprocess.c — Ultralytics' non_max_suppression (detect: best class only,
 * no class filter; OBB: the rotated fast NMS over probiou) and scale_boxes +
 * clip_boxes, reproducing the float32 arithmetic of ultralytics/utils/nms.py,
 * torchvision.ops.nms (CPU) and ultralytics/utils/ops.py so the same head
 * gives the same boxes.
 *
 * head: [A, 4 + nc] fp32 per image: cx, cy, w, h in tensor pixels, then the
 * class scores.  Checked box for box against Ultralytics 8.4 on random
 * heads (exact-IoU ties included); the one deliberate difference: torch
 * orders exactly equal scores arbitrarily, we put the lower anchor first.
 */
#include "postprocess.h"
#include "tasks.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

#define MAX_WH 7680.f    /* Ultralytics' per-class coordinate offset */
#define DEFAULT_MAX_NMS 30000
#define ALIGN 64

typedef struct cand {
    float x1, y1, x2, y2, score;
    int cls;
    int anchor;
} cand;

/* A kept box, offset by its class as the IoU sees it. */
typedef struct kept {
    float x1, y1, x2, y2, area;
} kept;

static size_t align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* ------------------------------------------------ end-to-end: top-k, no NMS */

typedef struct scored {
    float score;
    int idx;
} scored;

/* Score descending, then lower index first (torch.topk's order of ties is
 * unspecified; this is the deterministic choice). */
static int by_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static size_t topk_k(size_t anchors, const strix_nms_params *p)
{
    size_t k = p->max_det > 300 ? (size_t)p->max_det : 300; /* the predictor's max(max_det, 300) */
    return k < anchors ? k : anchors;
}

size_t strix_topk_workspace(size_t anchors, const strix_nms_params *p)
{
    size_t k = topk_k(anchors, p);
    return align_up(anchors * sizeof(scored)) + align_up(k * (size_t)p->nc * sizeof(scored));
}

int strix_topk(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p, void *ws)
{
    if (p->nc <= 0 || p->max_det <= 0 || anchors == 0) return 0;
    size_t w = 4 + (size_t)p->nc, k = topk_k(anchors, p);
    scored *best = ws, *pairs = (scored *)((char *)ws + align_up(anchors * sizeof(scored)));
    for (size_t a = 0; a < anchors; a++) {
        const float *s = head + a * w + 4;
        int c = 0;
        for (int j = 1; j < p->nc; j++)
            if (s[j] > s[c]) c = j;
        best[a] = (scored){s[c], (int)a};
    }
    qsort(best, anchors, sizeof *best, by_scored);
    size_t np = 0;
    if (p->agnostic) {
        for (size_t i = 0; i < k; i++) pairs[np++] = (scored){best[i].score, best[i].idx * p->nc};
    } else {
        for (size_t i = 0; i < k; i++) /* the flattened [k, nc] scores, index i * nc + class */
            for (int c = 0; c < p->nc; c++)
                pairs[np++] = (scored){head[(size_t)best[i].idx * w + 4 + c], (int)(i * (size_t)p->nc) + c};
        qsort(pairs, np, sizeof *pairs, by_scored);
        if (np > k) np = k;
    }
    int n = 0;
    for (size_t i = 0; i < np && n < p->max_det; i++) {
        int anchor, cls;
        if (p->agnostic) {
            anchor = pairs[i].idx / p->nc;
            const float *s = head + (size_t)anchor * w + 4;
            cls = 0;
            for (int j = 1; j < p->nc; j++)
                if (s[j] > s[cls]) cls = j;
        } else {
            anchor = best[pairs[i].idx / p->nc].idx;
            cls = pairs[i].idx % p->nc;
        }
        if (!(pairs[i].score > p->conf) || (p->classes && !p->classes[cls])) continue;
        const float *h = head + (size_t)anchor * w;
        out[n++] = (strix_detection){h[0] - h[2] / 2, h[1] - h[3] / 2, h[0] + h[2] / 2, h[1] + h[3] / 2,
                                     pairs[i].score, cls};
    }
    return n;
}

size_t strix_nms_workspace(size_t anchors, const strix_nms_params *p)
{
    size_t keep = p->max_det > 0 ? (size_t)p->max_det : 0;
    return align_up(anchors * sizeof(cand)) + align_up(keep * sizeof(kept));
}

/* Score descending, then lower anchor first: torchvision sorts stably. */
static int by_score(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

/* std::max / std::min as torchvision's kernel uses them (NaN behaviour included). */
static float mx(float a, float b) { return a < b ? b : a; }
static float mn(float a, float b) { return b < a ? b : a; }

int strix_nms(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p,
              void *workspace)
{
    int nc = p->nc;
    if (nc <= 0 || p->max_det <= 0 || anchors == 0) return 0;
    size_t row = 4 + (size_t)nc;
    cand *c = workspace;
    kept *k = (kept *)((unsigned char *)workspace + align_up(anchors * sizeof(cand)));

    /* candidates: best class score > conf (float compare, as torch does
     * with a Python scalar on a float32 tensor); a NaN score anywhere in the
     * row makes torch's amax NaN, which fails the test */
    size_t n = 0;
    for (size_t a = 0; a < anchors; a++) {
        const float *r = head + a * row;
        const float *s = r + 4;
        float best = s[0];
        int bi = 0, nan = s[0] != s[0];
        for (int j = 1; j < nc; j++) {
            if (s[j] > best) best = s[j], bi = j;
            nan |= s[j] != s[j];
        }
        if (nan || !(best > p->conf) || (p->classes && !p->classes[bi])) continue;
        float hw = r[2] / 2, hh = r[3] / 2;
        c[n].x1 = r[0] - hw;
        c[n].y1 = r[1] - hh;
        c[n].x2 = r[0] + hw;
        c[n].y2 = r[1] + hh;
        c[n].score = best;
        c[n].cls = bi;
        c[n].anchor = (int)a;
        n++;
    }
    if (n == 0) return 0;

    qsort(c, n, sizeof *c, by_score);
    size_t max_nms = p->max_nms > 0 ? (size_t)p->max_nms : DEFAULT_MAX_NMS;
    if (n > max_nms) n = max_nms;

    /* greedy NMS on class-offset boxes: a box is dropped when its IoU with
     * any earlier kept box exceeds the threshold; later boxes never affect
     * earlier ones, so stopping at max_det keeps the same first max_det */
    /* the predictor imports torchvision, so non_max_suppression runs
     * torchvision.ops.nms, which compares the float IoU with the threshold as
     * a double: the Python float the caller typed (an IoU of exactly 0.3f is
     * suppressed at 0.3) */
    double thr = strix_typed_double(p->iou);
    int nk = 0;
    for (size_t i = 0; i < n && nk < p->max_det; i++) {
        float off = p->agnostic ? 0.f : (float)c[i].cls * MAX_WH;
        kept b = {c[i].x1 + off, c[i].y1 + off, c[i].x2 + off, c[i].y2 + off, 0.f};
        b.area = (b.x2 - b.x1) * (b.y2 - b.y1);
        int suppressed = 0;
        for (int j = 0; j < nk && !suppressed; j++) {
            float w = mx(0.f, mn(k[j].x2, b.x2) - mx(k[j].x1, b.x1));
            float h = mx(0.f, mn(k[j].y2, b.y2) - mx(k[j].y1, b.y1));
            float inter = w * h;
            /* no overlap: the IoU is 0 (or NaN), never above a threshold >= 0 */
            if (!(inter > 0.f) && thr >= 0) continue;
            float iou = inter / (k[j].area + b.area - inter);
            suppressed = (double)iou > thr;
        }
        if (suppressed) continue;
        k[nk] = b;
        out[nk].x1 = c[i].x1;
        out[nk].y1 = c[i].y1;
        out[nk].x2 = c[i].x2;
        out[nk].y2 = c[i].y2;
        out[nk].score = c[i].score;
        out[nk].class_id = c[i].cls;
        nk++;
    }
    return nk;
}

/* torch's clamp_(0, limit): NaN stays NaN. */
static float clip(float v, float limit) { return v < 0.f ? 0.f : v > limit ? limit : v; }

void strix_scale_geometry(int dst_w, int dst_h, int src_w, int src_h, strix_scale_geom *g)
{
    /* scale_boxes / scale_coords (img1_shape=tensor, img0_shape=source)
     * recompute the geometry from the two shapes (never from the letterbox
     * they undo), with per-axis gains and Python rounding; the subtraction
     * and division then happen in float32 */
    double gh = (double)dst_h / src_h, gw = (double)dst_w / src_w;
    double gain = gh < gw ? gh : gw;
    int new_h = (int)nearbyint(src_h * gain), new_w = (int)nearbyint(src_w * gain);
    if (new_h < 1) new_h = 1;
    if (new_w < 1) new_w = 1;
    g->gain_x = (float)((double)new_w / src_w);
    g->gain_y = (float)((double)new_h / src_h);
    g->pad_x = (float)nearbyint((dst_w - new_w) / 2.0 - 0.1);
    g->pad_y = (float)nearbyint((dst_h - new_h) / 2.0 - 0.1);
}

void strix_scale_boxes(strix_detection *dets, int n, const strix_letterbox_info *info)
{
    int w0 = info->src_w, h0 = info->src_h;
    strix_scale_geom g;
    strix_scale_geometry(info->dst_w, info->dst_h, w0, h0, &g);
    for (int i = 0; i < n; i++) {
        strix_detection *d = &dets[i];
        d->x1 = clip((d->x1 - g.pad_x) / g.gain_x, (float)w0);
        d->y1 = clip((d->y1 - g.pad_y) / g.gain_y, (float)h0);
        d->x2 = clip((d->x2 - g.pad_x) / g.gain_x, (float)w0);
        d->y2 = clip((d->y2 - g.pad_y) / g.gain_y, (float)h0);
    }
}

int strix_nms_rotated(const float *xywhr, const float *scores, int n, float iou_thr, int *keep)
{
    if (n <= 0 || !xywhr || !scores || !keep) return 0;
    scored *order = malloc(sizeof *order * (size_t)n);
    if (!order) return -1;
    for (int i = 0; i < n; i++) {
        order[i].score = scores[i] == scores[i] ? scores[i] : -INFINITY; /* NaN scores last */
        order[i].idx = i;
    }
    qsort(order, (size_t)n, sizeof *order, by_scored);
    int m = 0;
    for (int j = 0; j < n; j++) {
        const float *bj = xywhr + 5 * (size_t)order[j].idx;
        int dropped = 0;
        for (int i = 0; i < j && !dropped; i++)
            dropped = strix_probiou(xywhr + 5 * (size_t)order[i].idx, bj) > iou_thr;
        if (!dropped) keep[m++] = order[j].idx;
    }
    free(order);
    return m;
}
