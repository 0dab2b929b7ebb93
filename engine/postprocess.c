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
#include <string.h>

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
    size_t w = p->row ? (size_t)p->row : 4 + (size_t)p->nc, k = topk_k(anchors, p);
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
        if (p->rows_out) memcpy(p->rows_out + (size_t)n * w, h, sizeof(float) * w);
        if (p->anchors_out) p->anchors_out[n] = anchor;
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

/* The candidates: best class score > conf (float compare, as torch does
 * with a Python scalar on a float32 tensor; a NaN score anywhere in the row
 * makes torch's amax NaN, which fails the test), in the class filter; by
 * decreasing score, at most max_nms; boxes left as cx, cy, w, h. */
static size_t candidates(cand *c, const float *head, size_t anchors, size_t row, const strix_nms_params *p)
{
    size_t n = 0;
    for (size_t a = 0; a < anchors; a++) {
        const float *r = head + a * row, *s = r + 4;
        float best = s[0];
        int bi = 0, nan = s[0] != s[0];
        for (int j = 1; j < p->nc; j++) {
            if (s[j] > best) best = s[j], bi = j;
            nan |= s[j] != s[j];
        }
        if (nan || !(best > p->conf) || (p->classes && !p->classes[bi])) continue;
        c[n++] = (cand){r[0], r[1], r[2], r[3], best, bi, (int)a};
    }
    qsort(c, n, sizeof *c, by_score);
    size_t max_nms = p->max_nms > 0 ? (size_t)p->max_nms : DEFAULT_MAX_NMS;
    return n < max_nms ? n : max_nms;
}

int strix_nms(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p,
              void *workspace)
{
    int nc = p->nc;
    if (nc <= 0 || p->max_det <= 0 || anchors == 0) return 0;
    size_t row = p->row ? (size_t)p->row : 4 + (size_t)nc;
    cand *c = workspace;
    kept *k = (kept *)((unsigned char *)workspace + align_up(anchors * sizeof(cand)));
    size_t n = candidates(c, head, anchors, row, p);
    for (size_t i = 0; i < n; i++) { /* cx, cy, w, h to corners */
        float hw = c[i].x2 / 2, hh = c[i].y2 / 2, cx = c[i].x1, cy = c[i].y1;
        c[i].x1 = cx - hw;
        c[i].y1 = cy - hh;
        c[i].x2 = cx + hw;
        c[i].y2 = cy + hh;
    }

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
        if (p->rows_out) memcpy(p->rows_out + (size_t)nk * row, head + (size_t)c[i].anchor * row, sizeof(float) * row);
        if (p->anchors_out) p->anchors_out[nk] = c[i].anchor;
        nk++;
    }
    return nk;
}

size_t strix_nms_obb_workspace(size_t anchors, const strix_nms_params *p)
{
    (void)p;
    return align_up(anchors * sizeof(cand)) + align_up(anchors * 5 * sizeof(float)) +
           align_up(anchors * sizeof(float)) + align_up(anchors * sizeof(int));
}

int strix_nms_obb(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p,
                  void *workspace)
{
    if (p->nc <= 0 || p->max_det <= 0 || anchors == 0) return 0;
    size_t row = p->row ? (size_t)p->row : 5 + (size_t)p->nc;
    char *w = workspace;
    cand *c = (cand *)w;
    float *box = (float *)(w + align_up(anchors * sizeof(cand)));
    float *score = (float *)((char *)box + align_up(anchors * 5 * sizeof(float)));
    int *keep = (int *)((char *)score + align_up(anchors * sizeof(float)));
    size_t n = candidates(c, head, anchors, row, p);
    for (size_t i = 0; i < n; i++) {
        float off = p->agnostic ? 0.f : (float)c[i].cls * MAX_WH;
        const float *r = head + (size_t)c[i].anchor * row;
        float *b = box + 5 * i;
        b[0] = r[0] + off, b[1] = r[1] + off, b[2] = r[2], b[3] = r[3], b[4] = r[row - 1];
        score[i] = c[i].score;
    }
    int k = strix_nms_rotated(box, score, (int)n, p->iou, keep);
    if (k < 0) return -1;
    if (k > p->max_det) k = p->max_det;
    for (int j = 0; j < k; j++) {
        const cand *q = &c[keep[j]];
        const float *r = head + (size_t)q->anchor * row;
        /* OBB.xyxy: the bounds of the 4 corners, centre +- (w/2 cos - h/2 sin, w/2 sin + h/2 cos) and mirrored */
        float cs = cosf(r[row - 1]), sn = sinf(r[row - 1]);
        float ex = fabsf(r[2] / 2 * cs) + fabsf(r[3] / 2 * sn), ey = fabsf(r[2] / 2 * sn) + fabsf(r[3] / 2 * cs);
        out[j] = (strix_detection){r[0] - ex, r[1] - ey, r[0] + ex, r[1] + ey, q->score, q->cls};
        if (p->rows_out) memcpy(p->rows_out + (size_t)j * row, r, sizeof(float) * row);
        if (p->anchors_out) p->anchors_out[j] = q->anchor;
    }
    return k;
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

void strix_scale_task_values(float *vals, strix_detection *dets, const float *rows, int n, const strix_task_layout *t,
                             const strix_letterbox_info *info)
{
    strix_scale_geom u;
    strix_scale_geometry(info->dst_w, info->dst_h, info->src_w, info->src_h, &u);
    float w0 = (float)info->src_w, h0 = (float)info->src_h;
    int row = 4 + t->nc + t->extra, stride = strix_task_stride(t);
    for (int i = 0; i < n; i++) {
        const float *r = rows + (size_t)i * row, *x = r + 4 + t->nc;
        float *v = vals + (size_t)i * stride;
        if (t->task == STRIX_TASK_SEGMENT) {
            /* process_mask crops with NMS's xyxy (xywh2xyxy, in the tensor's pixels) before scale_boxes
             * clips it: a box reaching into the padding keeps that part of its mask */
            v[0] = r[0] - r[2] / 2;
            v[1] = r[1] - r[3] / 2;
            v[2] = r[0] + r[2] / 2;
            v[3] = r[1] + r[3] / 2;
            memcpy(v + 4, x, sizeof(float) * (size_t)t->extra);
        } else if (t->task == STRIX_TASK_POSE) {
            /* scale_coords: the letterbox undone, clipped to the source */
            for (int k = 0; k + t->kpt_d <= t->extra; k += t->kpt_d) {
                v[k] = clip((x[k] - u.pad_x) / u.gain_x, w0);
                v[k + 1] = clip((x[k + 1] - u.pad_y) / u.gain_y, h0);
                if (t->kpt_d == 3) v[k + 2] = x[k + 2];
            }
        } else if (t->task == STRIX_TASK_OBB) {
            /* scale_boxes(xywh=True): centre less the padding, all four over the gains, not clipped */
            v[0] = (r[0] - u.pad_x) / u.gain_x;
            v[1] = (r[1] - u.pad_y) / u.gain_y;
            v[2] = r[2] / u.gain_x;
            v[3] = r[3] / u.gain_y;
            v[4] = x[0];
            float cs = cosf(v[4]), sn = sinf(v[4]);
            float ex = fabsf(v[2] / 2 * cs) + fabsf(v[3] / 2 * sn), ey = fabsf(v[2] / 2 * sn) + fabsf(v[3] / 2 * cs);
            dets[i].x1 = clip(v[0] - ex, w0);
            dets[i].y1 = clip(v[1] - ey, h0);
            dets[i].x2 = clip(v[0] + ex, w0);
            dets[i].y2 = clip(v[1] + ey, h0);
        }
    }
}

int strix_task_stride(const strix_task_layout *t)
{
    if (t->task == STRIX_TASK_SEGMENT) return 4 + t->extra;
    return t->task == STRIX_TASK_OBB ? 5 : t->task == STRIX_TASK_POSE ? t->extra : 0;
}

/* Box i's xyxy for the recovered detections' test: the detection's, or
 * with xywhr the bounds of its corners (OBB.xyxy). */
static void dedup_box(const strix_detection *d, const float *xywhr, int i, float b[4])
{
    if (!xywhr) {
        b[0] = d[i].x1, b[1] = d[i].y1, b[2] = d[i].x2, b[3] = d[i].y2;
        return;
    }
    float c[8];
    strix_xywhr_corners(xywhr + 5 * (size_t)i, 1, c);
    b[0] = b[2] = c[0];
    b[1] = b[3] = c[1];
    for (int k = 1; k < 4; k++) {
        b[0] = fminf(b[0], c[2 * k]);
        b[2] = fmaxf(b[2], c[2 * k]);
        b[1] = fminf(b[1], c[2 * k + 1]);
        b[3] = fmaxf(b[3], c[2 * k + 1]);
    }
}

int strix_recovered_dedup(strix_detection *loose, float *loose_xywhr, int n_loose, const strix_detection *tight,
                          const float *tight_xywhr, int n_tight)
{
    if (!n_tight) return 0;
    int n_kept = 0;
    for (int i = 0; i < n_loose; i++) {
        float a[4], most = 0;
        dedup_box(loose, loose_xywhr, i, a);
        for (int j = 0; j < n_tight; j++) {
            float b[4];
            dedup_box(tight, tight_xywhr, j, b);
            float iw = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), ih = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
            float inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
            float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
            float iou = inter / (area_a + area_b - inter + 1e-7f);
            if (iou > most) most = iou;
        }
        if (!(most < 0.97f)) continue;
        if (loose_xywhr && n_kept != i)
            memmove(loose_xywhr + 5 * (size_t)n_kept, loose_xywhr + 5 * (size_t)i, sizeof(float) * 5);
        loose[n_kept++] = loose[i];
    }
    return n_kept;
}
