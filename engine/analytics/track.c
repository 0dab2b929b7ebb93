/* track.c — the ByteTrack tracker of strix.h, step for step as the reference
 * implementation in Roboflow supervision 0.26 (itself a port of the authors'
 * code), so identities match it exactly (tests/test_track.c checks them
 * against goldens made by tools/reference/track_goldens.py).
 *
 * Kalman state per track, doubles: mean[8] = (cx, cy, a, h, vcx, vcy, va, vh)
 * with a = w / h; cov[8][8].  Measurements are (cx, cy, a, h).
 *
 * The reference's number types are kept where they change results: a
 * detection box is held as float32 (x1, y1, w, h) and its corner and aspect
 * derived in float32, its area in float32; a freshly started track's mean is
 * float32 until its first predict or update, and the noise scales derived
 * from it are then float32 too.  Everything else is double.
 *
 * Reference quirks kept on purpose (they decide identities): the height
 * velocity of a lost track is zeroed before each predict; unconfirmed
 * tracks are not predicted; a lost track dropped for age stays matchable for
 * one more frame (it leaves the lost list a frame late); when a tracked and
 * a lost track overlap (IoU > 0.85) the younger one goes, the tracked one on
 * a tie.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "strix.h"
#include "util.h"

enum { NEW, TRACKED, LOST, REMOVED };

/* Association thresholds fixed by ByteTrack: the second (low-score) and the
 * unconfirmed-track associations. */
#define SECOND_MATCH_THRESH 0.5
#define UNCONFIRMED_MATCH_THRESH 0.7
#define DUPLICATE_IOU_DIST 0.15

typedef struct track {
    double mean[8], cov[64];
    int mean_f32;      /* mean still holds the float32 values it started from */
    int state, activated;
    long frame_id, start_frame, tracklet_len;
    long internal_id, id;
    double score;
    int det;           /* the detection that updated it this frame, -1 if none */
    int in_use;
} track;

/* A detection as the reference holds it. */
typedef struct det {
    float tlwh[4];     /* x1, y1, w, h, float32 */
    double score;
    int index;         /* in the caller's array */
} det;

/* A list of track slots (indices into the pool). */
typedef struct list {
    int *v;
    int n, cap;
} list;

struct strix_tracker {
    strix_track_options o;
    double det_thresh;
    long max_time_lost, frame_id, next_internal, next_id;
    track *pool;
    int n_pool;
    list tracked, lost, removed; /* removed: last frame's removals, as the reference keeps them */
    int broken;                  /* an update ran out of memory half way */
    long degenerate;             /* detections ignored for an empty or non-finite box */
};

void strix_track_options_init(strix_track_options *o)
{
    o->track_thresh = 0.5f;
    o->low_thresh = 0.1f;
    o->new_track_thresh = -1;
    o->match_thresh = 0.8f;
    o->track_buffer = 30;
    o->frame_rate = 30;
}

static int in_unit(float v) { return v >= 0 && v <= 1; }

strix_status strix_tracker_create(strix_tracker **out, const strix_track_options *o, strix_error *err)
{
    *out = NULL;
    if (!in_unit(o->track_thresh) || !in_unit(o->low_thresh) || !in_unit(o->match_thresh))
        return strix_fail(err, STRIX_E_ARG, "tracker: thresholds must be in 0..1 (track %g, low %g, match %g)",
                          (double)o->track_thresh, (double)o->low_thresh, (double)o->match_thresh);
    if (o->new_track_thresh > 1 || (o->new_track_thresh < 0 && o->new_track_thresh != -1))
        return strix_fail(err, STRIX_E_ARG, "tracker: new-track threshold %g is not in 0..1 (or -1: track + 0.1)",
                          (double)o->new_track_thresh);
    if (o->track_buffer < 0 || !(o->frame_rate > 0 && o->frame_rate < 1e6))
        return strix_fail(err, STRIX_E_ARG, "tracker: track buffer %d and frame rate %g must be >= 0 and > 0",
                          o->track_buffer, o->frame_rate);
    strix_tracker *t = calloc(1, sizeof *t);
    if (!t) return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    t->o = *o;
    /* the reference adds 0.1 to the threshold in double */
    t->det_thresh = o->new_track_thresh < 0 ? (double)o->track_thresh + 0.1 : (double)o->new_track_thresh;
    t->max_time_lost = (long)(o->frame_rate / 30.0 * o->track_buffer);
    t->next_id = 1;
    *out = t;
    return STRIX_OK;
}

void strix_tracker_free(strix_tracker *t)
{
    if (!t) return;
    free(t->pool);
    free(t->tracked.v);
    free(t->lost.v);
    free(t->removed.v);
    free(t);
}

/* ------------------------------------------------------------------ lists */

static int list_push(list *l, int x)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        int *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

static int list_has(const list *l, const track *pool, long internal_id)
{
    for (int i = 0; i < l->n; i++)
        if (pool[l->v[i]].internal_id == internal_id) return 1;
    return 0;
}

/* a := a followed by the tracks of b not already in a (by identity) */
static int list_join(list *a, const list *b, const track *pool)
{
    for (int i = 0; i < b->n; i++)
        if (!list_has(a, pool, pool[b->v[i]].internal_id) && list_push(a, b->v[i])) return -1;
    return 0;
}

/* a := a without the tracks of b */
static void list_sub(list *a, const list *b, const track *pool)
{
    int m = 0;
    for (int i = 0; i < a->n; i++)
        if (!list_has(b, pool, pool[a->v[i]].internal_id)) a->v[m++] = a->v[i];
    a->n = m;
}

/* ----------------------------------------------------------------- kalman */

#define STD_POS (1.0 / 20)
#define STD_VEL (1.0 / 160)

/* A track's (x1, y1, x2, y2) from its mean, as the reference's tlbr. */
static void track_tlbr(const track *k, double b[4])
{
    double w = k->mean[2] * k->mean[3], h = k->mean[3];
    b[0] = k->mean[0] - w / 2;
    b[1] = k->mean[1] - h / 2;
    b[2] = w + b[0];
    b[3] = h + b[1];
}

/* (cx, cy, a, h) of a detection, in float32 as the reference computes it */
static void det_xyah(const det *d, float m[4])
{
    m[0] = d->tlwh[0] + d->tlwh[2] / 2;
    m[1] = d->tlwh[1] + d->tlwh[3] / 2;
    m[2] = d->tlwh[2] / d->tlwh[3];
    m[3] = d->tlwh[3];
}

static void kalman_initiate(track *k, const float m[4])
{
    for (int i = 0; i < 4; i++) {
        k->mean[i] = m[i];
        k->mean[4 + i] = 0;
    }
    /* float32 products (the reference multiplies a float32 height by Python floats) */
    float h = m[3];
    double sp = (double)(0.1f * h), sv = (double)(0.0625f * h);
    double std[8] = {sp, sp, 1e-2, sp, sv, sv, 1e-5, sv};
    memset(k->cov, 0, sizeof k->cov);
    for (int i = 0; i < 8; i++) k->cov[i * 9] = std[i] * std[i];
    k->mean_f32 = 1;
}

/* x' = F x, P' = F P F^T + Q with F = [[I, I], [0, I]].  f32: the noise
 * scales are float32 (the reference stacks float32 means when every track
 * it predicts is fresh). */
static void kalman_predict(track *k, int f32)
{
    double h = k->mean[3], sp, sv, sa = 1e-2, sva = 1e-5;
    if (f32) {
        sp = (double)((float)STD_POS * (float)h);
        sv = (double)((float)STD_VEL * (float)h);
        sa = (double)1e-2f;
        sva = (double)1e-5f;
    } else {
        sp = STD_POS * h;
        sv = STD_VEL * h;
    }
    double q[8] = {sp, sp, sa, sp, sv, sv, sva, sv};
    for (int i = 0; i < 4; i++) k->mean[i] += k->mean[4 + i];
    double left[64], *p = k->cov;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) left[i * 8 + j] = i < 4 ? p[i * 8 + j] + p[(i + 4) * 8 + j] : p[i * 8 + j];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            p[i * 8 + j] = j < 4 ? left[i * 8 + j] + left[i * 8 + j + 4] : left[i * 8 + j];
    for (int i = 0; i < 8; i++) p[i * 9] += q[i] * q[i];
    k->mean_f32 = 0;
}

/* Correct with measurement m (cx, cy, a, h): S = H P H^T + R, K = P H^T S^-1
 * (Cholesky), x += K (m - H x), P -= K S K^T. */
static void kalman_update(track *k, const float m[4])
{
    double h = k->mean[3], sp = k->mean_f32 ? (double)((float)STD_POS * (float)h) : STD_POS * h;
    double r[4] = {sp, sp, 1e-1, sp};
    double s[16], l[16] = {0}, *p = k->cov;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) s[i * 4 + j] = p[i * 8 + j] + (i == j ? r[i] * r[i] : 0);
    for (int j = 0; j < 4; j++) { /* S = L L^T */
        double d = s[j * 4 + j];
        for (int c = 0; c < j; c++) d -= l[j * 4 + c] * l[j * 4 + c];
        l[j * 4 + j] = sqrt(d);
        for (int i = j + 1; i < 4; i++) {
            double v = s[i * 4 + j];
            for (int c = 0; c < j; c++) v -= l[i * 4 + c] * l[j * 4 + c];
            l[i * 4 + j] = v / l[j * 4 + j];
        }
    }
    /* K^T = S^-1 (P H^T)^T: solve L L^T X = B for B = H P (4 x 8) */
    double kt[32];
    for (int c = 0; c < 8; c++) {
        double y[4];
        for (int i = 0; i < 4; i++) {
            double v = p[i * 8 + c];
            for (int q = 0; q < i; q++) v -= l[i * 4 + q] * y[q];
            y[i] = v / l[i * 4 + i];
        }
        for (int i = 3; i >= 0; i--) {
            double v = y[i];
            for (int q = i + 1; q < 4; q++) v -= l[q * 4 + i] * kt[q * 8 + c];
            kt[i * 8 + c] = v / l[i * 4 + i];
        }
    }
    double innov[4];
    for (int i = 0; i < 4; i++) innov[i] = (double)m[i] - k->mean[i];
    for (int c = 0; c < 8; c++) {
        double v = 0;
        for (int i = 0; i < 4; i++) v += innov[i] * kt[i * 8 + c];
        k->mean[c] += v;
    }
    double ks[32]; /* K S, 8 x 4 */
    for (int a = 0; a < 8; a++)
        for (int j = 0; j < 4; j++) {
            double v = 0;
            for (int i = 0; i < 4; i++) v += kt[i * 8 + a] * s[i * 4 + j];
            ks[a * 4 + j] = v;
        }
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            double v = 0;
            for (int j = 0; j < 4; j++) v += ks[a * 4 + j] * kt[j * 8 + b];
            p[a * 8 + b] -= v;
        }
    k->mean_f32 = 0;
}

/* -------------------------------------------------------------------- IoU */

/* 1 - IoU between tracks (double boxes) and detections (float32 boxes with a
 * float32 area), as the reference's iou_distance; [na, nb] row-major. */
static void iou_dist_dets(const track *pool, const int *ta, int na, const det *d, const int *db, int nb,
                          double *cost)
{
    for (int i = 0; i < na; i++) {
        double a[4];
        track_tlbr(&pool[ta[i]], a);
        double area_a = (a[2] - a[0]) * (a[3] - a[1]);
        for (int j = 0; j < nb; j++) {
            const float *t = d[db[j]].tlwh;
            float b[4] = {t[0], t[1], t[0] + t[2], t[1] + t[3]};
            float area_b = (b[2] - b[0]) * (b[3] - b[1]);
            double iw = fmin(a[2], (double)b[2]) - fmax(a[0], (double)b[0]);
            double ih = fmin(a[3], (double)b[3]) - fmax(a[1], (double)b[1]);
            double inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
            double uni = area_a + (double)area_b - inter;
            double iou = uni != 0 ? inter / uni : 0;
            cost[i * nb + j] = 1 - (isfinite(iou) ? iou : 0);
        }
    }
}

/* The reference's fuse_score: cost := 1 - (1 - cost) * score */
static void fuse_score(double *cost, int na, const det *d, const int *db, int nb)
{
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) cost[i * nb + j] = 1 - (1 - cost[i * nb + j]) * d[db[j]].score;
}

/* The reference's linear_assignment: costs above thresh are clamped to
 * thresh + 1e-4, the optimum is taken, and pairs above thresh dropped.
 * match[i] = column of row i or -1.  Returns -1 on OOM. */
static int assign(double *cost, int na, int nb, double thresh, int *match)
{
    for (int i = 0; i < na; i++) match[i] = -1;
    if (!na || !nb) return 0;
    for (int i = 0; i < na * nb; i++)
        if (cost[i] > thresh) cost[i] = thresh + 1e-4;
    if (strix_assign(cost, na, nb, match)) return -1;
    for (int i = 0; i < na; i++)
        if (match[i] >= 0 && !(cost[i * nb + match[i]] <= thresh)) match[i] = -1;
    return 0;
}

/* ------------------------------------------------- the reference's order */

/* The reference lists the unmatched rows and columns of an assignment as
 * tuple(set(range(n)) - set(matched)), so their order is CPython's set
 * table order, not ascending; and that order decides which new track gets
 * which identity.  This reproduces it for small non-negative ints (hash =
 * value) with CPython's set algorithm (Objects/setobject.c, 3.8 to 3.13):
 * when len(range) >> 2 > len(matched) the result is a copy of the range's
 * table (ascending); otherwise a fresh set filled in ascending order:
 * 8 slots, linear probing of 9 then perturbation, grown to the smallest
 * power of two above 4 * used when 5 * fill >= 3 * mask.
 * keep[i]: value i is in the result.  out: the values in iteration order;
 * returns how many, or -1 on OOM. */
static void pyset_insert(long *table, size_t mask, long v)
{
    size_t i = (size_t)v & mask, perturb = (size_t)v;
    for (;;) {
        if (table[i] < 0) break;
        int found = 0;
        if (i + 9 <= mask)
            for (int j = 0; j < 9 && !found; j++)
                if (table[++i] < 0) found = 1;
        if (found) break;
        perturb >>= 5;
        i = (i * 5 + 1 + perturb) & mask;
    }
    table[i] = v;
}

static int pyset_order(const char *keep, int n, int n_matched, int *out)
{
    int k = 0;
    if ((n >> 2) > n_matched) {
        for (int i = 0; i < n; i++)
            if (keep[i]) out[k++] = i;
        return k;
    }
    size_t size = 8, fill = 0;
    long *table = malloc(sizeof *table * size);
    if (!table) return -1;
    for (size_t i = 0; i < size; i++) table[i] = -1;
    for (int v = 0; v < n; v++) {
        if (!keep[v]) continue;
        pyset_insert(table, size - 1, v);
        fill++;
        if (fill * 5 < (size - 1) * 3) continue;
        size_t grown = 8;
        while (grown <= fill * 4) grown <<= 1;
        long *t2 = malloc(sizeof *t2 * grown);
        if (!t2) {
            free(table);
            return -1;
        }
        for (size_t i = 0; i < grown; i++) t2[i] = -1;
        for (size_t i = 0; i < size; i++)
            if (table[i] >= 0) pyset_insert(t2, grown - 1, table[i]);
        free(table);
        table = t2;
        size = grown;
    }
    for (size_t i = 0; i < size; i++)
        if (table[i] >= 0) out[k++] = (int)table[i];
    free(table);
    return k;
}

/* ----------------------------------------------------------------- update */

/* A free slot of the pool (growing it); -1 on OOM. */
static int new_slot(strix_tracker *t)
{
    for (int i = 0; i < t->n_pool; i++)
        if (!t->pool[i].in_use) return i;
    int n = t->n_pool ? 2 * t->n_pool : 32;
    track *p = realloc(t->pool, sizeof *p * (size_t)n);
    if (!p) return -1;
    memset(p + t->n_pool, 0, sizeof *p * (size_t)(n - t->n_pool));
    t->pool = p;
    int slot = t->n_pool;
    t->n_pool = n;
    return slot;
}

static void track_update(track *k, const det *d, int di, long frame_id)
{
    float m[4];
    det_xyah(d, m);
    k->frame_id = frame_id;
    k->tracklet_len++;
    kalman_update(k, m);
    k->state = TRACKED;
    if (k->tracklet_len == 1) k->activated = 1; /* minimum_consecutive_frames = 1 */
    k->score = d->score;
    k->det = di;
}

static void track_reactivate(track *k, const det *d, int di, long frame_id)
{
    float m[4];
    det_xyah(d, m);
    kalman_update(k, m);
    k->tracklet_len = 0;
    k->state = TRACKED;
    k->frame_id = frame_id;
    k->score = d->score;
    k->det = di;
}

/* The reference's remove_duplicate_tracks over tracked x lost. */
static int remove_duplicates(strix_tracker *t)
{
    list *a = &t->tracked, *b = &t->lost;
    if (!a->n || !b->n) return 0;
    char *drop_a = calloc((size_t)a->n, 1), *drop_b = calloc((size_t)b->n, 1);
    if (!drop_a || !drop_b) {
        free(drop_a);
        free(drop_b);
        return -1;
    }
    for (int i = 0; i < a->n; i++) {
        const track *x = &t->pool[a->v[i]];
        double p[4];
        track_tlbr(x, p);
        double area_p = (p[2] - p[0]) * (p[3] - p[1]);
        for (int j = 0; j < b->n; j++) {
            const track *y = &t->pool[b->v[j]];
            double q[4];
            track_tlbr(y, q);
            double area_q = (q[2] - q[0]) * (q[3] - q[1]);
            double iw = fmin(p[2], q[2]) - fmax(p[0], q[0]), ih = fmin(p[3], q[3]) - fmax(p[1], q[1]);
            double inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0), uni = area_p + area_q - inter;
            double iou = uni != 0 ? inter / uni : 0;
            if (!(1 - (isfinite(iou) ? iou : 0) < DUPLICATE_IOU_DIST)) continue;
            if (x->frame_id - x->start_frame > y->frame_id - y->start_frame) drop_b[j] = 1;
            else drop_a[i] = 1;
        }
    }
    int m = 0;
    for (int i = 0; i < a->n; i++)
        if (!drop_a[i]) a->v[m++] = a->v[i];
    a->n = m;
    m = 0;
    for (int j = 0; j < b->n; j++)
        if (!drop_b[j]) b->v[m++] = b->v[j];
    b->n = m;
    free(drop_a);
    free(drop_b);
    return 0;
}

/* Scratch of one update, freed together. */
typedef struct scratch {
    det *d;
    int *high, *low, *left, *match, *u_rows, *u_cols;
    double *cost;
    size_t cost_cap;
    list unconfirmed, pool, activated, refind, lost_now, removed_now, r_tracked;
} scratch;

static void scratch_free(scratch *s)
{
    free(s->d);
    free(s->high);
    free(s->low);
    free(s->left);
    free(s->match);
    free(s->u_rows);
    free(s->u_cols);
    free(s->cost);
    list *l[] = {&s->unconfirmed, &s->pool, &s->activated, &s->refind, &s->lost_now, &s->removed_now,
                 &s->r_tracked};
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) free(l[i]->v);
}

/* The [na, nb] cost matrix of tracks ta against detections db (1 - IoU,
 * fused with the scores when fuse), clamped and assigned with thresh:
 * s->match[i] = the column of row i, or -1.  Returns -1 on OOM. */
static int associate(strix_tracker *t, scratch *s, const int *ta, int na, const int *db, int nb, int fuse,
                     double thresh)
{
    size_t need = (size_t)na * (size_t)nb + 1;
    if (need > s->cost_cap) {
        double *c = realloc(s->cost, sizeof *c * need);
        if (!c) return -1;
        s->cost = c;
        s->cost_cap = need;
    }
    iou_dist_dets(t->pool, ta, na, s->d, db, nb, s->cost);
    if (fuse) fuse_score(s->cost, na, s->d, db, nb);
    return assign(s->cost, na, nb, thresh, s->match);
}

/* After associate(): the unmatched rows and columns in the reference's
 * order (ascending ranges when the matrix was empty).  Returns -1 on OOM. */
static int unmatched(scratch *s, int rows, int cols, int *u_rows, int *n_rows, int *u_cols, int *n_cols)
{
    int most = rows > cols ? rows : cols, matched = 0;
    char *keep = calloc((size_t)most + 1, 1);
    if (!keep) return -1;
    for (int i = 0; i < rows; i++) matched += s->match[i] >= 0;
    int empty = !rows || !cols;
    for (int i = 0; i < rows; i++) keep[i] = s->match[i] < 0;
    *n_rows = empty ? 0 : pyset_order(keep, rows, matched, u_rows);
    if (empty)
        for (int i = 0; i < rows; i++) u_rows[(*n_rows)++] = i;
    memset(keep, 1, (size_t)most + 1);
    for (int i = 0; i < rows; i++)
        if (s->match[i] >= 0) keep[s->match[i]] = 0;
    *n_cols = empty ? 0 : pyset_order(keep, cols, matched, u_cols);
    if (empty)
        for (int j = 0; j < cols; j++) u_cols[(*n_cols)++] = j;
    free(keep);
    return *n_rows < 0 || *n_cols < 0 ? -1 : 0;
}

/* A box with no area (x2 <= x1 or y2 <= y1, e.g. clipped inside the
 * letterbox padding) or a non-finite corner: nothing to match or predict. */
static int degenerate(const strix_detection *x)
{
    return !isfinite(x->x1) || !isfinite(x->y1) || !isfinite(x->x2) || !isfinite(x->y2) || !(x->x2 > x->x1) ||
           !(x->y2 > x->y1);
}

/* One frame; 0, or -1 when memory ran out (the tracker is then unusable). */
static int update(strix_tracker *t, const strix_detection *dets, int n, int *ids, scratch *s)
{
    t->frame_id++;
    size_t nn = (size_t)(n > 0 ? n : 1);
    s->d = malloc(sizeof *s->d * nn);
    s->high = malloc(sizeof *s->high * nn);
    s->low = malloc(sizeof *s->low * nn);
    s->left = malloc(sizeof *s->left * nn);
    s->u_cols = malloc(sizeof *s->u_cols * nn);
    if (!s->d || !s->high || !s->low || !s->left || !s->u_cols) return -1;
    int n_high = 0, n_low = 0;
    double th = t->o.track_thresh, tl = t->o.low_thresh;
    for (int i = 0; i < n; i++) {
        const strix_detection *x = &dets[i];
        det *d = &s->d[i];
        /* the reference: tlwh = float32(tlbr[2:] - tlbr[:2]) computed in double */
        d->tlwh[0] = x->x1;
        d->tlwh[1] = x->y1;
        d->tlwh[2] = (float)((double)x->x2 - (double)x->x1);
        d->tlwh[3] = (float)((double)x->y2 - (double)x->y1);
        d->score = x->score;
        d->index = i;
        ids[i] = -1;
        if (degenerate(x)) { /* never matched, never starts a track */
            t->degenerate++;
            continue;
        }
        if (d->score > th) s->high[n_high++] = i;
        else if (d->score > tl && d->score < th) s->low[n_low++] = i;
    }
    for (int i = 0; i < t->n_pool; i++) t->pool[i].det = -1;

    /* tracked tracks split into confirmed (with the lost ones: the pool) and unconfirmed */
    for (int i = 0; i < t->tracked.n; i++)
        if (list_push(t->pool[t->tracked.v[i]].activated ? &s->pool : &s->unconfirmed, t->tracked.v[i])) return -1;
    if (list_join(&s->pool, &t->lost, t->pool)) return -1;
    int all_f32 = 1;
    for (int i = 0; i < s->pool.n; i++) all_f32 &= t->pool[s->pool.v[i]].mean_f32;
    for (int i = 0; i < s->pool.n; i++) {
        track *k = &t->pool[s->pool.v[i]];
        if (k->state != TRACKED) k->mean[7] = 0;
        kalman_predict(k, all_f32);
    }
    int most = s->pool.n > s->unconfirmed.n ? s->pool.n : s->unconfirmed.n;
    s->match = malloc(sizeof *s->match * (size_t)(most + 1));
    s->u_rows = malloc(sizeof *s->u_rows * (size_t)(most + 1));
    if (!s->match || !s->u_rows) return -1;

    /* first association: high-score detections with the pool, IoU fused with score */
    if (associate(t, s, s->pool.v, s->pool.n, s->high, n_high, 1, t->o.match_thresh)) return -1;
    for (int i = 0; i < s->pool.n; i++) {
        int j = s->match[i];
        if (j < 0) continue;
        track *k = &t->pool[s->pool.v[i]];
        const det *d = &s->d[s->high[j]];
        if (k->state == TRACKED) {
            track_update(k, d, d->index, t->frame_id);
            if (list_push(&s->activated, s->pool.v[i])) return -1;
        } else {
            track_reactivate(k, d, d->index, t->frame_id);
            if (list_push(&s->refind, s->pool.v[i])) return -1;
        }
    }
    int n_ut, n_left;
    if (unmatched(s, s->pool.n, n_high, s->u_rows, &n_ut, s->u_cols, &n_left)) return -1;
    for (int j = 0; j < n_left; j++) s->left[j] = s->high[s->u_cols[j]];
    /* second association candidates: the unmatched that are still tracked */
    for (int i = 0; i < n_ut; i++)
        if (t->pool[s->pool.v[s->u_rows[i]]].state == TRACKED && list_push(&s->r_tracked, s->pool.v[s->u_rows[i]]))
            return -1;

    /* second association: those tracks with the low-score detections, plain IoU */
    if (associate(t, s, s->r_tracked.v, s->r_tracked.n, s->low, n_low, 0, SECOND_MATCH_THRESH)) return -1;
    for (int i = 0; i < s->r_tracked.n; i++) {
        if (s->match[i] < 0) continue;
        const det *d = &s->d[s->low[s->match[i]]];
        track_update(&t->pool[s->r_tracked.v[i]], d, d->index, t->frame_id);
        if (list_push(&s->activated, s->r_tracked.v[i])) return -1;
    }
    int n_u2, n_c2;
    if (unmatched(s, s->r_tracked.n, n_low, s->u_rows, &n_u2, s->u_cols, &n_c2)) return -1;
    for (int i = 0; i < n_u2; i++) {
        track *k = &t->pool[s->r_tracked.v[s->u_rows[i]]];
        if (k->state == LOST) continue;
        k->state = LOST;
        if (list_push(&s->lost_now, s->r_tracked.v[s->u_rows[i]])) return -1;
    }

    /* unconfirmed tracks (one frame old) with the leftover high detections */
    if (associate(t, s, s->unconfirmed.v, s->unconfirmed.n, s->left, n_left, 1, UNCONFIRMED_MATCH_THRESH))
        return -1;
    for (int i = 0; i < s->unconfirmed.n; i++) {
        if (s->match[i] < 0) continue;
        const det *d = &s->d[s->left[s->match[i]]];
        track_update(&t->pool[s->unconfirmed.v[i]], d, d->index, t->frame_id);
        if (list_push(&s->activated, s->unconfirmed.v[i])) return -1;
    }
    int n_u3, n_new;
    if (unmatched(s, s->unconfirmed.n, n_left, s->u_rows, &n_u3, s->u_cols, &n_new)) return -1;
    for (int i = 0; i < n_u3; i++) {
        t->pool[s->unconfirmed.v[s->u_rows[i]]].state = REMOVED;
        if (list_push(&s->removed_now, s->unconfirmed.v[s->u_rows[i]])) return -1;
    }

    /* new tracks from the leftovers that clear the start threshold */
    for (int j = 0; j < n_new; j++) {
        const det *d = &s->d[s->left[s->u_cols[j]]];
        if (d->score < t->det_thresh) continue;
        int slot = new_slot(t);
        if (slot < 0 || list_push(&s->activated, slot)) return -1;
        track *k = &t->pool[slot];
        memset(k, 0, sizeof *k);
        k->in_use = 1;
        float m[4];
        det_xyah(d, m);
        kalman_initiate(k, m);
        k->internal_id = t->next_internal++;
        k->id = t->next_id++;
        k->state = TRACKED;
        k->activated = t->frame_id == 1;
        k->frame_id = k->start_frame = t->frame_id;
        k->score = d->score;
        k->det = d->index;
    }

    /* lost tracks past the buffer */
    for (int i = 0; i < t->lost.n; i++) {
        track *k = &t->pool[t->lost.v[i]];
        if (t->frame_id - k->frame_id > t->max_time_lost) {
            k->state = REMOVED;
            if (list_push(&s->removed_now, t->lost.v[i])) return -1;
        }
    }

    /* the lists, in the reference's order */
    int m = 0;
    for (int i = 0; i < t->tracked.n; i++)
        if (t->pool[t->tracked.v[i]].state == TRACKED) t->tracked.v[m++] = t->tracked.v[i];
    t->tracked.n = m;
    if (list_join(&t->tracked, &s->activated, t->pool) || list_join(&t->tracked, &s->refind, t->pool)) return -1;
    list_sub(&t->lost, &t->tracked, t->pool);
    for (int i = 0; i < s->lost_now.n; i++)
        if (list_push(&t->lost, s->lost_now.v[i])) return -1;
    list_sub(&t->lost, &t->removed, t->pool);
    t->removed.n = 0;
    for (int i = 0; i < s->removed_now.n; i++)
        if (list_push(&t->removed, s->removed_now.v[i])) return -1;
    if (remove_duplicates(t)) return -1;

    /* identities for the detections of confirmed, tracked tracks */
    for (int i = 0; i < t->tracked.n; i++) {
        const track *k = &t->pool[t->tracked.v[i]];
        if (k->activated && k->det >= 0) ids[k->det] = (int)k->id;
    }
    /* slots no list holds any more are free */
    for (int i = 0; i < t->n_pool; i++) t->pool[i].in_use = 0;
    const list *keep[] = {&t->tracked, &t->lost, &t->removed};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < keep[l]->n; i++) t->pool[keep[l]->v[i]].in_use = 1;
    return 0;
}

strix_status strix_tracker_update(strix_tracker *t, const strix_detection *dets, int n, int *ids,
                                  strix_error *err)
{
    if (n < 0 || (n && (!dets || !ids))) return strix_fail(err, STRIX_E_ARG, "tracker: bad detection array");
    for (int i = 0; i < n; i++) {
        const strix_detection *x = &dets[i];
        if (!(x->score >= 0 && x->score <= 1))
            return strix_fail(err, STRIX_E_ARG, "tracker: detection %d has a score outside 0..1", i);
    }
    if (t->broken) return strix_fail(err, STRIX_E_NOMEM, "tracker: unusable after running out of memory");
    scratch s;
    memset(&s, 0, sizeof s);
    int rc = update(t, dets, n, ids, &s);
    scratch_free(&s);
    if (rc) {
        t->broken = 1;
        return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    }
    return STRIX_OK;
}

long strix_tracker_degenerate(const strix_tracker *t) { return t->degenerate; }
