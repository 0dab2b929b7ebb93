/* track_tracktrack.c — TrackTrack, step for step as Ultralytics 8.4.190's
 * trackers/track_tracker.py (TRACKTRACK, TTSTrack; BOTrack's XYWH Kalman
 * filter with NSA's confidence-scaled measurement noise; stracks.py's
 * merge_track_pools), so identities and boxes match it
 * (tests/test_track.c against tools/reference/track_goldens.py's goldens).
 *
 * Per frame: the tracked (confirmed) and lost tracks (the pool) and the
 * unconfirmed ones are warped by the camera motion, then predicted; the
 * pool is matched to the high- and low-score detections together by
 * iterative assignment (mutually nearest pairs under a threshold that
 * shrinks by reduce_step each round) on a multi-cue cost: 1 - HMIoU (IoU
 * times the vertical IoU) + conf_weight x |the track's extrapolated score -
 * the detection's| + angle_weight x score x the mean angle between the
 * track's corner velocities and the corners' motion from the track's box
 * three frames back, 1 where the IoU is <= 0.1, low-score detections
 * penalty_p dearer, and the recovered detections (the boxes a looser NMS
 * kept, strix_tracker_recovered) scoring above track_high_thresh with
 * them, penalty_q dearer; the unconfirmed tracks take leftover high detections
 * the same way (the others are removed); optionally (lost_match_thr > 0)
 * lost tracks take what remains under that looser gate; a leftover scoring
 * above new_track_thresh starts a track unless it overlaps (IoU >
 * tai_thr) a confirmed track or a better leftover (track-aware
 * initialisation).  A track is confirmed after min_track_len updates.
 * With ReID (with_reid, model: auto), 1 - HMIoU becomes iou_weight x (1 -
 * HMIoU) + reid_weight x the cosine distance of the track's smoothed
 * feature and the high-score detection's (where both have one), and a
 * track's feature is smoothed with beta = 0.95 + 0.05 x (1 - score) of the
 * detection it takes (track_reid.c).
 *
 * Number types follow the reference where they change results: boxes and
 * costs float32; the Kalman filter and the camera-motion warp double; the
 * association thresholds the YAML's doubles, compared as float32.  Where
 * numpy promotes to double because one operand is a double array, so does
 * this: a track's box history mixes the detections' float32 boxes (updates)
 * with its state's double boxes (start and re-activation), and the angle
 * cost runs in double for all pairs of a cost matrix as soon as one of
 * their history boxes is double (np.stack promotes the whole array).
 *
 * Oriented boxes: the tracks and detections are their unrotated long-edge
 * boxes for everything (HMIoU, corner motion, track-aware initialisation:
 * the reference's xyxy), but a track keeps its angle, turned by the camera
 * motion, and the duplicate test runs on probiou of the xywha. */
#include "track_tracktrack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tasks.h"
#include "track_reid.h"
#include "util.h"

enum { T_FREE, T_NEW, T_TRACKED, T_LOST, T_REMOVED };

#define DELTA_T 3             /* TTSTrack._delta_t: frames the corner motion spans */
#define HIST (DELTA_T + 1)    /* its box history, a deque of delta_t + 1 */
#define ANGLE_MIN_IOU 0.10f   /* _cost_matrix: pairs with less IoU cost 1 */
#define DUPLICATE_IOU_DIST 0.15f
#define REMOVED_KEEP 1000
#define PI 3.141592653589793 /* np.pi */

/* Corner (LT, LB, RT, RB) coordinates in an (x1, y1, x2, y2) box. */
static const int CDX[4] = {0, 0, 2, 2}, CDY[4] = {1, 3, 1, 3};

typedef struct hbox {
    long frame;
    double b[4]; /* x1 y1 x2 y2 */
    int f64;     /* the reference holds it as float64 (from the state), else float32 (a detection's) */
} hbox;

typedef struct tt_track {
    double mean[8], cov[64];
    int state, activated, idx;
    long id, frame_id, start_frame, tracklet_len;
    float score, prev_score;
    float vel[4][2]; /* per-corner unit velocity, float32 */
    hbox hist[HIST]; /* oldest first */
    int n_hist;
    double angle;    /* oriented boxes: radians */
} tt_track;

struct strix_tracktrack {
    strix_track_options o;
    double match_thr, lost_match_thr, reduce_step, angle_weight; /* the YAML's doubles (strix_typed_double) */
    long frame_id, next_id;
    tt_track *pool;
    int n_pool;
    char *mark; /* [n_pool] scratch */
    strix_slots tracked, lost;
    long *removed; /* identities of the last REMOVED_KEEP removed tracks, oldest first */
    int n_removed;
    int obb;       /* this update's detections are oriented boxes */
    strix_reid *reid; /* with_reid: the tracker's (track.c), its slots these tracks' */
};

strix_tracktrack *strix_tracktrack_create(const strix_track_options *o, strix_reid *reid)
{
    strix_tracktrack *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->o = *o;
    t->reid = reid;
    t->match_thr = strix_typed_double(o->match_thresh);
    t->lost_match_thr = strix_typed_double(o->lost_match_thr);
    t->reduce_step = strix_typed_double(o->reduce_step);
    t->angle_weight = strix_typed_double(o->angle_weight);
    t->next_id = 1;
    return t;
}

void strix_tracktrack_free(strix_tracktrack *t)
{
    if (!t) return;
    free(t->pool);
    free(t->mark);
    free(t->tracked.v);
    free(t->lost.v);
    free(t->removed);
    free(t);
}

/* ----------------------------------------------------------------- tracks */

static void track_box(const tt_track *k, float b[4]) { strix_kf_xyxy(k->mean, 1, b); }

/* The state's xyxy in double, as the reference's TTSTrack.xyxy. */
static void state_box(const tt_track *k, double b[4])
{
    double x1 = k->mean[0] - k->mean[2] / 2, y1 = k->mean[1] - k->mean[3] / 2;
    b[0] = x1;
    b[1] = y1;
    b[2] = k->mean[2] + x1;
    b[3] = k->mean[3] + y1;
}

static void hist_push(tt_track *k, long frame, const double b[4], int f64)
{
    if (k->n_hist == HIST) {
        memmove(k->hist, k->hist + 1, sizeof k->hist[0] * (HIST - 1));
        k->n_hist--;
    }
    hbox *h = &k->hist[k->n_hist++];
    h->frame = frame;
    memcpy(h->b, b, sizeof h->b);
    h->f64 = f64;
}

/* get_history_box: the box of frame - dt, else the latest (a track always
 * has one). */
static const hbox *hist_box(const tt_track *k, long frame, int dt)
{
    for (int i = 0; i < k->n_hist; i++)
        if (k->hist[i].frame == frame - dt) return &k->hist[i];
    return &k->hist[k->n_hist - 1];
}

/* The Kalman update with detection d's box, its noise scaled by
 * max(1 - score, 0.05) (NSA-Kalman). */
static void nsa_update(tt_track *k, const strix_track_det *d)
{
    float m[4];
    strix_det_measure(d, 1, m);
    double r = 1.0 - (double)d->score;
    strix_kf_update(k->mean, k->cov, 1, m, r > 0.05 ? r : 0.05);
}

/* TTSTrack.update_features with detection d's feature, the track's score
 * already d's: beta = _alpha + (1 - _alpha) x (1 - score), float32 as numpy
 * computes it from the float32 score. */
static void reid_update(const strix_tracktrack *t, const tt_track *k, const strix_track_det *d)
{
    if (!t->reid) return;
    float beta = 0.95f + (float)(1 - 0.95) * (1 - k->score);
    strix_reid_update(t->reid, (int)(k - t->pool), d->index, beta, 1 - beta);
}

/* TTSTrack.update: a matched track takes detection d. */
static void track_update(const strix_tracktrack *t, tt_track *k, const strix_track_det *d)
{
    const long f = t->frame_id;
    k->frame_id = f;
    k->tracklet_len++;
    k->prev_score = k->score;
    nsa_update(k, d);
    float cb[4];
    strix_det_xyxy(d, cb);
    double db[4] = {cb[0], cb[1], cb[2], cb[3]};
    hist_push(k, f, db, 0);
    /* the corners' unit motion from 1..delta_t frames back, each / dt, averaged:
     * float32 where the older box is float32, else double stored as float32 */
    float v[4][2] = {{0}};
    for (int dt = 1; dt <= DELTA_T; dt++) {
        const hbox *h = hist_box(k, f, dt);
        for (int c = 0; c < 4; c++) {
            if (h->f64) {
                double dx = (double)cb[CDX[c]] - h->b[CDX[c]], dy = (double)cb[CDY[c]] - h->b[CDY[c]];
                double n = sqrt(dx * dx + dy * dy) + 1e-5;
                v[c][0] = (float)((double)v[c][0] + dx / n / dt);
                v[c][1] = (float)((double)v[c][1] + dy / n / dt);
            } else {
                float dx = cb[CDX[c]] - (float)h->b[CDX[c]], dy = cb[CDY[c]] - (float)h->b[CDY[c]];
                float n = sqrtf(dx * dx + dy * dy) + 1e-5f;
                v[c][0] = v[c][0] + dx / n / (float)dt;
                v[c][1] = v[c][1] + dy / n / (float)dt;
            }
        }
    }
    for (int c = 0; c < 4; c++) {
        k->vel[c][0] = v[c][0] / (float)DELTA_T;
        k->vel[c][1] = v[c][1] / (float)DELTA_T;
    }
    k->score = d->score;
    reid_update(t, k, d);
    if (k->state == T_TRACKED || k->tracklet_len + 1 >= t->o.min_track_len) {
        k->state = T_TRACKED;
        k->activated = 1;
    }
    k->idx = d->index;
    if (t->obb) k->angle = strix_obb_angle(k->angle, d->angle);
}

/* TTSTrack.re_activate: a lost track found again, same identity. */
static void track_reactivate(const strix_tracktrack *t, tt_track *k, const strix_track_det *d)
{
    k->prev_score = k->score;
    nsa_update(k, d);
    double b[4];
    state_box(k, b);
    hist_push(k, t->frame_id, b, 1);
    k->score = d->score;
    reid_update(t, k, d);
    k->tracklet_len = 0;
    k->state = T_TRACKED;
    k->activated = 1;
    k->frame_id = t->frame_id;
    k->idx = d->index;
    if (t->obb) k->angle = strix_obb_angle(k->angle, d->angle);
}

/* ------------------------------------------------------------------- cost */

/* The angle cost of track k against detection box db (_angle_distance, before
 * angle_weight, times the detection's score), in float32 or double. */
static float angle_cost_f32(const tt_track *k, const hbox *h, const float db[4], float score)
{
    float a[4];
    for (int c = 0; c < 4; c++) {
        float dx = db[CDX[c]] - (float)h->b[CDX[c]], dy = db[CDY[c]] - (float)h->b[CDY[c]];
        float n = sqrtf(dx * dx + dy * dy) + 1e-5f;
        dx /= n;
        dy /= n;
        float dot = k->vel[c][0] * dx + k->vel[c][1] * dy;
        dot = dot < -1 ? -1 : dot > 1 ? 1 : dot;
        a[c] = fabsf(acosf(dot));
    }
    return (((a[0] + a[1]) + a[2]) + a[3]) / 4 / (float)PI * score;
}

static double angle_cost_f64(const tt_track *k, const hbox *h, const float db[4], float score)
{
    double a[4];
    for (int c = 0; c < 4; c++) {
        double dx = (double)db[CDX[c]] - h->b[CDX[c]], dy = (double)db[CDY[c]] - h->b[CDY[c]];
        double n = sqrt(dx * dx + dy * dy) + 1e-5;
        dx /= n;
        dy /= n;
        double dot = (double)k->vel[c][0] * dx + (double)k->vel[c][1] * dy;
        dot = dot < -1 ? -1 : dot > 1 ? 1 : dot;
        a[c] = fabs(acos(dot));
    }
    return (((a[0] + a[1]) + a[2]) + a[3]) / 4 / PI * (double)score;
}

/* _cost_matrix of tracks (slots) tr [nt] against detections dj [nd] (indices
 * into d) into cost [nt][nd], float32, clipped to 0..1; iou [nt][nd]
 * scratch. */
static void cost_matrix(const strix_tracktrack *t, const int *tr, int nt, const strix_track_det *d, const int *dj,
                        int nd, float *cost, float *iou)
{
    int any64 = 0;
    for (int i = 0; i < nt; i++) {
        const tt_track *k = &t->pool[tr[i]];
        float a[4];
        track_box(k, a);
        const float proj = k->score + (k->score - k->prev_score);
        const int f64 = hist_box(k, t->frame_id, DELTA_T)->f64;
        for (int j = 0; j < nd; j++) {
            float b[4];
            strix_det_xyxy(&d[dj[j]], b);
            float s = strix_box_iou(a, b);
            float over = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
            float uni = (a[3] > b[3] ? a[3] : b[3]) - (a[1] < b[1] ? a[1] : b[1]);
            float hiou = over / (uni + 1e-9f);
            hiou = hiou < 0 ? 0 : hiou > 1 ? 1 : hiou;
            float c = 1 - hiou * s;
            if (t->reid) { /* np.where(isnan(cos), hmiou, iou_weight * hmiou + reid_weight * cos) */
                float cos = strix_reid_cosine_distance(t->reid, tr[i], d[dj[j]].index);
                if (!isnan(cos)) c = t->o.iou_weight * c + t->o.reid_weight * cos;
            }
            cost[i * nd + j] = c + t->o.conf_weight * fabsf(proj - d[dj[j]].score);
            iou[i * nd + j] = s;
            if (s > ANGLE_MIN_IOU) any64 |= f64;
        }
    }
    for (int i = 0; i < nt; i++) {
        const tt_track *k = &t->pool[tr[i]];
        const hbox *h = hist_box(k, t->frame_id, DELTA_T);
        for (int j = 0; j < nd; j++) {
            float *c = &cost[i * nd + j];
            if (!(iou[i * nd + j] > ANGLE_MIN_IOU)) {
                *c = 1;
                continue;
            }
            float b[4];
            strix_det_xyxy(&d[dj[j]], b);
            if (any64) *c = (float)((double)*c + t->angle_weight * angle_cost_f64(k, h, b, d[dj[j]].score));
            else *c = *c + t->o.angle_weight * angle_cost_f32(k, h, b, d[dj[j]].score);
            *c = *c < 0 ? 0 : *c > 1 ? 1 : *c;
        }
    }
}

/* _iterative_associate over cost [nr][nc] (overwritten): each round, the
 * pairs that are each other's nearest with cost < thr (as float32) are
 * matched and leave; thr shrinks by step.  mr [nr]: the column of each
 * matched row, or -1; order [nr]: the matched rows in the order matched,
 * *n_order of them; near [nr + nc] scratch. */
static void iterate(float *cost, int nr, int nc, double thr, double step, int *mr, int *order, int *n_order, int *near)
{
    int *nd = near, *nt = near + nr;
    *n_order = 0;
    for (int i = 0; i < nr; i++) mr[i] = -1;
    while (nr > 0 && nc > 0) {
        for (int i = 0; i < nr; i++) {
            int b = 0;
            for (int j = 1; j < nc; j++)
                if (cost[i * nc + j] < cost[i * nc + b]) b = j;
            nd[i] = b;
        }
        for (int j = 0; j < nc; j++) {
            int b = 0;
            for (int i = 1; i < nr; i++)
                if (cost[i * nc + j] < cost[b * nc + j]) b = i;
            nt[j] = b;
        }
        const int before = *n_order;
        const float th = (float)thr;
        for (int i = 0; i < nr; i++)
            if (nt[nd[i]] == i && cost[i * nc + nd[i]] < th) {
                mr[i] = nd[i];
                order[(*n_order)++] = i;
            }
        if (*n_order == before) break;
        for (int q = before; q < *n_order; q++) {
            int i = order[q], j = mr[i];
            for (int c = 0; c < nc; c++) cost[i * nc + c] = INFINITY;
            for (int r = 0; r < nr; r++) cost[r * nc + j] = INFINITY;
        }
        thr -= step;
    }
}

/* ----------------------------------------------------------------- update */

/* Scratch of one update, freed together. */
typedef struct scratch {
    int *all, *left, *mr, *order, *near, *allow, *taken;
    float *cost, *iou;
    strix_slots trk, unconf, pool, activated, refind, lost_now, removed_now, uc, active;
} scratch;

static void scratch_free(scratch *s)
{
    free(s->all);
    free(s->left);
    free(s->mr);
    free(s->order);
    free(s->near);
    free(s->allow);
    free(s->taken);
    free(s->cost);
    free(s->iou);
    strix_slots *l[] = {&s->trk,      &s->unconf,   &s->pool,        &s->activated, &s->refind,
                        &s->lost_now, &s->uc,       &s->removed_now, &s->active};
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) free(l[i]->v);
}

/* Cost of tracks tr [nt] against detections dj [nd] (those from n_high
 * on penalty_p dearer, those from n_rec on, the recovered ones, penalty_q
 * dearer instead), then the iterative assignment under thr: s->mr
 * (column of each row or -1), s->order [*n_order] (matched rows in match
 * order). */
static void associate(const strix_tracktrack *t, scratch *s, const int *tr, int nt, const strix_track_det *d,
                      const int *dj, int nd, int n_high, int n_rec, double thr, int *n_order)
{
    *n_order = 0;
    for (int i = 0; i < nt; i++) s->mr[i] = -1;
    if (!nt || !nd) return;
    cost_matrix(t, tr, nt, d, dj, nd, s->cost, s->iou);
    for (int i = 0; i < nt; i++)
        for (int j = n_high; j < nd; j++) {
            float *c = &s->cost[i * nd + j];
            *c = *c + (j < n_rec ? t->o.penalty_p : t->o.penalty_q);
            *c = *c > 1 ? 1 : *c;
        }
    iterate(s->cost, nt, nd, thr, t->reduce_step, s->mr, s->order, n_order, s->near);
}

/* dj [*nd] without the columns s->mr took (order kept). */
static void drop_matched(scratch *s, int nt, int *dj, int *nd)
{
    memset(s->taken, 0, sizeof *s->taken * (size_t)(*nd + 1));
    for (int i = 0; i < nt; i++)
        if (s->mr[i] >= 0) s->taken[s->mr[i]] = 1;
    int m = 0;
    for (int j = 0; j < *nd; j++)
        if (!s->taken[j]) dj[m++] = dj[j];
    *nd = m;
}

/* _track_aware_nms: which leftover detections lj [nl] may start a track
 * (s->allow): those scoring above new_track_thresh whose IoU with every
 * active track (slots s->active) and with every better allowed leftover is
 * <= tai_thr. */
static void track_aware_nms(const strix_tracktrack *t, scratch *s, const strix_track_det *d, const int *lj, int nl)
{
    const float thr = t->o.tai_thr;
    for (int j = 0; j < nl; j++) s->allow[j] = d[lj[j]].score > t->o.new_track_thresh;
    if (s->active.n + nl < 2) return;
    for (int j = 0; j < nl; j++) {
        float b[4];
        strix_det_xyxy(&d[lj[j]], b);
        float most = -INFINITY;
        for (int i = 0; i < s->active.n; i++) {
            float a[4];
            track_box(&t->pool[s->active.v[i]], a);
            float v = strix_box_iou(b, a);
            most = v > most ? v : most;
        }
        if (s->active.n && !(most <= thr)) s->allow[j] = 0;
    }
    /* best score first, as numpy's argsort()[::-1]; equal scores latest
     * index first (its introsort sorts fewer than 17 by insertion, stable) */
    int *ord = s->order;
    for (int j = 0; j < nl; j++) ord[j] = j;
    for (int j = 1; j < nl; j++) {
        int x = ord[j], q = j;
        while (q > 0 && d[lj[ord[q - 1]]].score > d[lj[x]].score) {
            ord[q] = ord[q - 1];
            q--;
        }
        ord[q] = x;
    }
    for (int r = nl - 1; r >= 0; r--) {
        int i = ord[r];
        if (!s->allow[i]) continue;
        float a[4];
        strix_det_xyxy(&d[lj[i]], a);
        for (int j = 0; j < nl; j++) {
            if (j == i) continue;
            float b[4];
            strix_det_xyxy(&d[lj[j]], b);
            if (strix_box_iou(a, b) > thr) s->allow[j] = 0;
        }
    }
}

/* A free slot of the pool (growing it); -1 on OOM. */
static int new_slot(strix_tracktrack *t)
{
    for (int i = 0; i < t->n_pool; i++)
        if (t->pool[i].state == T_FREE) return i;
    int n = t->n_pool ? 2 * t->n_pool : 32;
    if (t->reid && strix_reid_reserve(t->reid, n)) return -1;
    tt_track *p = realloc(t->pool, sizeof *p * (size_t)n);
    if (!p) return -1;
    t->pool = p;
    char *m = realloc(t->mark, (size_t)n);
    if (!m) return -1;
    t->mark = m;
    memset(p + t->n_pool, 0, sizeof *p * (size_t)(n - t->n_pool));
    int slot = t->n_pool;
    t->n_pool = n;
    return slot;
}

/* TTSTrack.activate: a track from detection d in slot. */
static void track_start(strix_tracktrack *t, int slot, const strix_track_det *d)
{
    tt_track *k = &t->pool[slot];
    memset(k, 0, sizeof *k);
    float m[4];
    strix_det_measure(d, 1, m);
    strix_kf_initiate(k->mean, k->cov, 1, m);
    k->id = t->next_id++;
    double b[4];
    state_box(k, b);
    hist_push(k, t->frame_id, b, 1);
    k->state = t->o.min_track_len <= 1 ? T_TRACKED : T_NEW;
    k->activated = t->frame_id == 1 || k->state == T_TRACKED;
    k->frame_id = k->start_frame = t->frame_id;
    k->score = k->prev_score = d->score;
    k->idx = d->index;
    k->angle = d->angle;
    if (t->reid) strix_reid_start(t->reid, slot, d->index);
}

static int removed_has(const strix_tracktrack *t, long id)
{
    for (int i = 0; i < t->n_removed; i++)
        if (t->removed[i] == id) return 1;
    return 0;
}

/* Every slot's mark cleared (none before the first track: mark is NULL then). */
static void unmark(strix_tracktrack *t)
{
    if (t->n_pool) memset(t->mark, 0, (size_t)t->n_pool);
}

/* The duplicate test's 1 - IoU of two tracks (iou_distance: probiou of the
 * xywha for oriented boxes). */
static float track_dist(const strix_tracktrack *t, const tt_track *x, const tt_track *y)
{
    float p[5], q[5];
    if (!t->obb) {
        track_box(x, p);
        track_box(y, q);
        return 1 - strix_box_iou(p, q);
    }
    strix_kf_xywha(x->mean, 1, x->angle, p);
    strix_kf_xywha(y->mean, 1, y->angle, q);
    return 1 - strix_probiou(p, q);
}

/* remove_duplicate_stracks over tracked x lost: of two tracks with IoU >
 * 0.85 the younger goes, the tracked one on a tie. */
static void remove_duplicates(strix_tracktrack *t)
{
    strix_slots *a = &t->tracked, *b = &t->lost;
    unmark(t);
    enum { DROP_A = 1, DROP_B = 2 };
    for (int i = 0; i < a->n; i++) {
        const tt_track *x = &t->pool[a->v[i]];
        for (int j = 0; j < b->n; j++) {
            const tt_track *y = &t->pool[b->v[j]];
            if (!(track_dist(t, x, y) < DUPLICATE_IOU_DIST)) continue;
            if (x->frame_id - x->start_frame > y->frame_id - y->start_frame) t->mark[b->v[j]] |= DROP_B;
            else t->mark[a->v[i]] |= DROP_A;
        }
    }
    int m = 0;
    for (int i = 0; i < a->n; i++)
        if (!(t->mark[a->v[i]] & DROP_A)) a->v[m++] = a->v[i];
    a->n = m;
    m = 0;
    for (int j = 0; j < b->n; j++)
        if (!(t->mark[b->v[j]] & DROP_B)) b->v[m++] = b->v[j];
    b->n = m;
}

static int update(strix_tracktrack *t, scratch *s, const double *H, const strix_track_det *d, const int *high,
                  int n_high, const int *low, int n_low, const int *rec, int n_rec, int *ids, float *boxes)
{
    const long f = ++t->frame_id;
    const int na = n_high + n_low + n_rec;
    const size_t nn = (size_t)na + 1;
    s->all = malloc(sizeof *s->all * nn);
    s->left = malloc(sizeof *s->left * nn);
    s->allow = malloc(sizeof *s->allow * nn);
    s->taken = malloc(sizeof *s->taken * nn);
    if (!s->all || !s->left || !s->allow || !s->taken) return -1;
    memcpy(s->all, high, sizeof *high * (size_t)n_high);
    memcpy(s->all + n_high, low, sizeof *low * (size_t)n_low);
    memcpy(s->all + n_high + n_low, rec, sizeof *rec * (size_t)n_rec);

    /* confirmed tracks with the lost ones (the pool), and the unconfirmed */
    for (int i = 0; i < t->tracked.n; i++)
        if (strix_slots_push(t->pool[t->tracked.v[i]].state == T_TRACKED ? &s->trk : &s->unconf, t->tracked.v[i]))
            return -1;
    if (strix_slots_join(&s->pool, &s->trk) || strix_slots_join(&s->pool, &t->lost)) return -1;
    strix_slots *moved[2] = {&s->pool, &s->unconf};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < moved[l]->n && H; i++) {
            tt_track *k = &t->pool[moved[l]->v[i]];
            strix_kf_warp(k->mean, k->cov, H, t->obb ? STRIX_KF_WARP_OBB : 0);
            if (t->obb) k->angle += strix_kf_warp_angle(H);
        }
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < moved[l]->n; i++) {
            tt_track *k = &t->pool[moved[l]->v[i]];
            if (k->state != T_TRACKED) k->mean[6] = k->mean[7] = 0;
            strix_kf_predict(k->mean, k->cov, 1);
        }

    int most = s->pool.n > s->unconf.n ? s->pool.n : s->unconf.n;
    size_t cells = (size_t)(most > 0 ? most : 1) * nn;
    s->mr = malloc(sizeof *s->mr * (size_t)(most + 1));
    s->order = malloc(sizeof *s->order * ((size_t)most + nn));
    s->near = malloc(sizeof *s->near * ((size_t)most + nn));
    s->cost = malloc(sizeof *s->cost * cells);
    s->iou = malloc(sizeof *s->iou * cells);
    if (!s->mr || !s->order || !s->near || !s->cost || !s->iou) return -1;

    /* the pool with every detection, the low-score and recovered ones penalised */
    int n_order, nd = na;
    associate(t, s, s->pool.v, s->pool.n, d, s->all, nd, n_high, n_high + n_low, t->match_thr, &n_order);
    for (int q = 0; q < n_order; q++) {
        int r = s->order[q];
        tt_track *k = &t->pool[s->pool.v[r]];
        if (k->state == T_TRACKED) {
            track_update(t, k, &d[s->all[s->mr[r]]]);
            if (strix_slots_push(&s->activated, s->pool.v[r])) return -1;
        } else {
            track_reactivate(t, k, &d[s->all[s->mr[r]]]);
            if (strix_slots_push(&s->refind, s->pool.v[r])) return -1;
        }
    }
    for (int i = 0; i < s->pool.n; i++) {
        tt_track *k = &t->pool[s->pool.v[i]];
        if (s->mr[i] >= 0 || k->state == T_LOST) continue;
        k->state = T_LOST;
        if (strix_slots_push(&s->lost_now, s->pool.v[i])) return -1;
    }
    /* the high-score detections left */
    int nl = 0;
    memset(s->taken, 0, sizeof *s->taken * nn);
    for (int i = 0; i < s->pool.n; i++)
        if (s->mr[i] >= 0) s->taken[s->mr[i]] = 1;
    for (int j = 0; j < n_high; j++)
        if (!s->taken[j]) s->left[nl++] = s->all[j];

    /* the unconfirmed tracks with them; the unconfirmed left are removed */
    if (s->unconf.n && nl) {
        associate(t, s, s->unconf.v, s->unconf.n, d, s->left, nl, nl, nl, t->match_thr, &n_order);
        for (int q = 0; q < n_order; q++) {
            int r = s->order[q];
            track_update(t, &t->pool[s->unconf.v[r]], &d[s->left[s->mr[r]]]);
            if (strix_slots_push(&s->activated, s->unconf.v[r])) return -1;
        }
        for (int i = 0; i < s->unconf.n; i++) {
            if (s->mr[i] >= 0) continue;
            t->pool[s->unconf.v[i]].state = T_REMOVED;
            if (strix_slots_push(&s->removed_now, s->unconf.v[i])) return -1;
        }
        drop_matched(s, s->unconf.n, s->left, &nl);
    } else {
        for (int i = 0; i < s->unconf.n; i++) {
            t->pool[s->unconf.v[i]].state = T_REMOVED;
            if (strix_slots_push(&s->removed_now, s->unconf.v[i])) return -1;
        }
    }

    /* the relaxed rebind: tracks lost before this frame, still unmatched */
    if (t->lost_match_thr > 0 && nl) {
        for (int i = 0; i < s->pool.n; i++)
            if (t->pool[s->pool.v[i]].state == T_LOST && !strix_slots_has(&s->lost_now, s->pool.v[i]) &&
                strix_slots_push(&s->uc, s->pool.v[i]))
                return -1;
        if (s->uc.n) {
            associate(t, s, s->uc.v, s->uc.n, d, s->left, nl, nl, nl, t->lost_match_thr, &n_order);
            for (int q = 0; q < n_order; q++) {
                int r = s->order[q];
                track_reactivate(t, &t->pool[s->uc.v[r]], &d[s->left[s->mr[r]]]);
                if (strix_slots_push(&s->refind, s->uc.v[r])) return -1;
            }
            drop_matched(s, s->uc.n, s->left, &nl);
        }
    }

    /* track-aware initialisation from what is left */
    for (int i = 0; i < t->tracked.n; i++)
        if (t->pool[t->tracked.v[i]].state == T_TRACKED && strix_slots_push(&s->active, t->tracked.v[i])) return -1;
    for (int i = 0; i < s->activated.n; i++)
        if (strix_slots_push(&s->active, s->activated.v[i])) return -1;
    track_aware_nms(t, s, d, s->left, nl);
    for (int j = 0; j < nl; j++) {
        if (!s->allow[j]) continue;
        int slot = new_slot(t);
        if (slot < 0 || strix_slots_push(&s->activated, slot)) return -1;
        track_start(t, slot, &d[s->left[j]]);
    }

    /* lost tracks past the buffer */
    for (int i = 0; i < t->lost.n; i++) {
        tt_track *k = &t->pool[t->lost.v[i]];
        if (f - k->frame_id > t->o.track_buffer) {
            k->state = T_REMOVED;
            if (strix_slots_push(&s->removed_now, t->lost.v[i])) return -1;
        }
    }

    /* merge_track_pools, in the reference's order */
    int m = 0;
    for (int i = 0; i < t->tracked.n; i++)
        if (t->pool[t->tracked.v[i]].state == T_TRACKED) t->tracked.v[m++] = t->tracked.v[i];
    t->tracked.n = m;
    if (strix_slots_join(&t->tracked, &s->activated) || strix_slots_join(&t->tracked, &s->refind)) return -1;
    strix_slots_sub(&t->lost, &t->tracked);
    for (int i = 0; i < s->lost_now.n; i++)
        if (strix_slots_push(&t->lost, s->lost_now.v[i])) return -1;
    m = 0;
    for (int i = 0; i < t->lost.n; i++)
        if (!removed_has(t, t->pool[t->lost.v[i]].id)) t->lost.v[m++] = t->lost.v[i];
    t->lost.n = m;
    remove_duplicates(t);
    for (int i = 0; i < s->removed_now.n; i++) {
        if (!t->removed && !(t->removed = malloc(sizeof *t->removed * REMOVED_KEEP))) return -1;
        if (t->n_removed == REMOVED_KEEP) {
            memmove(t->removed, t->removed + 1, sizeof *t->removed * (REMOVED_KEEP - 1));
            t->n_removed--;
        }
        t->removed[t->n_removed++] = t->pool[s->removed_now.v[i]].id;
    }

    /* the rows: confirmed tracks updated this frame, their state's box */
    for (int i = 0; i < t->tracked.n; i++) {
        const tt_track *k = &t->pool[t->tracked.v[i]];
        if (!k->activated || k->frame_id != f) continue;
        ids[k->idx] = (int)k->id;
        if (t->obb) strix_kf_xywha(k->mean, 1, k->angle, &boxes[5 * k->idx]);
        else track_box(k, &boxes[5 * k->idx]);
    }
    /* slots no list holds any more are free */
    unmark(t);
    for (int i = 0; i < t->tracked.n; i++) t->mark[t->tracked.v[i]] = 1;
    for (int i = 0; i < t->lost.n; i++) t->mark[t->lost.v[i]] = 1;
    for (int i = 0; i < t->n_pool; i++)
        if (!t->mark[i]) t->pool[i].state = T_FREE;
    return 0;
}

int strix_tracktrack_update(strix_tracktrack *t, const double *H, const strix_track_det *d, const int *high,
                            int n_high, const int *low, int n_low, const int *rec, int n_rec, int *ids, float *boxes,
                            int obb)
{
    t->obb = obb;
    scratch s;
    memset(&s, 0, sizeof s);
    int rc = update(t, &s, H, d, high, n_high, low, n_low, rec, n_rec, ids, boxes);
    scratch_free(&s);
    return rc;
}
