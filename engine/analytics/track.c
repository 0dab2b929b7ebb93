/* track.c — the trackers of strix.h, step for step as Ultralytics 8.4.190
 * defines them (ultralytics/trackers: byte_tracker.py BYTETracker,
 * bot_sort.py BOTSORT, oc_sort.py OCSORT and deep_oc_sort.py
 * DeepOCSORT, whose own per-track state is track_ocsort.c's, with_reid's
 * appearance state track_reid.c's (model: auto: the detector's features),
 * fast_tracker.py FASTTracker, whose own is track_fasttrack.c's,
 * utils/kalman_filter.py, utils/matching.py,
 * utils/stracks.py), so identities match it (tests/test_track.c checks them
 * against goldens made by tools/reference/track_goldens.py).  TrackTrack
 * (track_tracker.py) has its own tracks and update in track_tracktrack.c;
 * this file checks its detections and estimates its camera motion.
 *
 * Kalman state per track, doubles: mean[8] = (cx, cy, a, h, vcx, vcy, va, vh)
 * with a = w / h for all but BoT-SORT (measurements (cx, cy, a, h)),
 * (cx, cy, w, h, vcx, vcy, vw, vh) for BoT-SORT (measurements (cx, cy, w,
 * h)); cov[8][8].
 *
 * The reference's number types are kept where they change results: a
 * detection box is float32 (x1, y1, w, h), derived from (cx, cy, w, h)
 * float32 as Ultralytics' Boxes.xywh; its measurement is derived in float32;
 * IoU, the score fusion and the duplicate test run in float32 on float32
 * boxes; the Kalman filter, the camera-motion warp and the assignment in
 * double.
 *
 * Reference behaviours kept on purpose (they decide identities): unconfirmed
 * tracks are not predicted (but are warped); a lost track's size velocities
 * (ByteTrack: the height's; BoT-SORT: width's and height's) are zeroed
 * before each predict; a lost track dropped for age stays in the lost list,
 * matchable, for one more frame; the identities of the last 1000 removed
 * tracks are kept, and a lost track with one of them leaves the lost list;
 * when a tracked and a lost track overlap (IoU > 0.85) the younger one goes,
 * the tracked one on a tie.  Unmatched tracks and detections are visited in
 * ascending order (lap.lapjv's np.where).
 *
 * Oriented boxes (strix_tracker_update_obb; STrack built from xywha): the
 * Kalman state is that of the unrotated long-edge box (det's tlwh), each
 * track keeps its angle beside it (double), and every iou_distance between
 * tracks and detections is 1 - probiou of their xywha in float32
 * (tasks.c's strix_probiou, Ultralytics' batch_probiou); OC-SORT's
 * recovery compares the tracks' predicted xywha (its last observations are
 * unrotated); FastTrack's cover and suppression stay on the unrotated
 * boxes, as the reference's xyxy.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "gmc.h"
#include "strix.h"
#include "tasks.h"
#include "track_fasttrack.h"
#include "track_kalman.h"
#include "track_ocsort.h"
#include "track_reid.h"
#include "track_tracktrack.h"
#include "util.h"

enum { NEW, TRACKED, LOST, REMOVED };

/* Association thresholds fixed by Ultralytics: the second (low-score) and
 * the unconfirmed-track associations, the duplicate test, the removed-track
 * memory. */
#define SECOND_MATCH_THRESH 0.5
#define UNCONFIRMED_MATCH_THRESH 0.7
#define DUPLICATE_IOU_DIST 0.15f
#define REMOVED_KEEP 1000
/* OC-SORT's delta_t, bounded so its observations stay a few kB a track */
#define OCSORT_MAX_DELTA_T 10000
/* floats per detection in the tracker's boxes: xyxy, or xywhr for oriented ones */
#define BOX 5

typedef struct track {
    double mean[8], cov[64];
    int state, activated;
    long frame_id, start_frame, tracklet_len, id;
    float score;
    int idx; /* the detection of its last update (index in the caller's array) */
    double angle; /* oriented boxes: radians */
} track;

typedef strix_track_det det;
#define det_measure strix_det_measure
#define det_xyxy strix_det_xyxy

/* track_kalman.h's slot lists, under the names this file has always used */
typedef strix_slots list;
#define list_push strix_slots_push

struct strix_tracker {
    strix_track_options o;
    int xywh;                    /* BoT-SORT's Kalman state */
    long frame_id, next_id;
    track *pool;
    int n_pool;
    list tracked, lost;
    long *removed;               /* identities of the last REMOVED_KEEP removed tracks, oldest first */
    int n_removed;
    strix_gmc *gmc;              /* BoT-SORT, Deep OC-SORT or TrackTrack with sparseOptFlow */
    strix_ocsort *oc;            /* OC-SORT's and Deep OC-SORT's per-slot state */
    strix_fasttrack *ft;         /* FastTrack's per-slot state */
    strix_tracktrack *tt;        /* TrackTrack: its own tracks and update (track_tracktrack.c) */
    int obb;                     /* 1: oriented boxes (strix_tracker_update_obb), 0: axis-aligned, -1: no detections
                                  * yet */
    float *boxes;                /* [n_boxes][BOX]: the tracker's box of each detection of the last update, x1 y1 x2
                                  * y2 or (oriented) x y w h r (NaN: none) */
    strix_reid *reid;            /* with_reid: the tracks' and detections' features (track_reid.c) */
    int feat_n, feat_dim;        /* the features given for the next update (strix_tracker_features): how many
                                  * (-1: none), and their length (fixed by the first) */
    int n_boxes, boxes_cap;
    /* TrackTrack: the recovered detections given for the next update (strix_tracker_recovered; rec_n -1: none),
     * xywhr when rec_obb; ids: every detection's identity in the update, then the recovered ones' (rec_ids) */
    strix_detection *rec;
    float *rec_xywhr;
    int rec_n, rec_obb, rec_cap;
    int *all_ids, all_ids_cap, *rec_ids, n_rec_ids;
    int broken;                  /* an update ran out of memory half way */
    long degenerate;             /* detections ignored for an empty or non-finite box */
};

void strix_track_options_init(strix_track_options *o, strix_tracker_type type)
{
    o->tracker_type = type;
    o->track_high_thresh = 0.25f;
    o->track_low_thresh = 0.1f;
    o->new_track_thresh = 0.25f;
    o->track_buffer = 30;
    o->match_thresh = 0.8f;
    o->fuse_score = 1;
    o->gmc_method = STRIX_GMC_SPARSE_OPTFLOW;
    o->gmc_grey = STRIX_GREY_OPENCV5;
    o->proximity_thresh = 0.5f;
    o->appearance_thresh = 0.8f;
    o->with_reid = 0;
    o->delta_t = 3;
    o->inertia = 0.2f;
    o->use_byte = 0;
    o->reset_velocity_offset_occ = 5;
    o->reset_pos_offset_occ = 3;
    o->enlarge_bbox_occ = 1.1;
    o->dampen_motion_occ = 0.5;
    o->active_occ_to_lost_thresh = 10;
    o->occ_cover_thresh = 0.7f;
    o->occ_reappear_window = 40;
    o->init_iou_suppress = 0.7f;
    o->alpha_fixed_emb = 0.95f;
    o->lost_match_thr = 0;
    o->iou_weight = 0.5f;
    o->reid_weight = 0.5f;
    o->conf_weight = 0.1f;
    o->angle_weight = 0.05f;
    o->penalty_p = 0.2f;
    o->penalty_q = 0.4f;
    o->reduce_step = 0.05f;
    o->tai_thr = 0.55f;
    o->min_track_len = 3;
    if (type == STRIX_TRACKER_DEEPOCSORT) { /* deepocsort.yaml */
        o->track_high_thresh = o->new_track_thresh = 0.3f;
        o->gmc_method = STRIX_GMC_NONE;
        o->appearance_thresh = 0.9f;
    }
    if (type == STRIX_TRACKER_TRACKTRACK) { /* tracktrack.yaml's own thresholds */
        o->track_high_thresh = 0.6f;
        o->track_low_thresh = 0.25f;
        o->new_track_thresh = 0.7f;
        o->match_thresh = 0.7f;
    }
}

const char *strix_tracker_type_name(strix_tracker_type t)
{
    static const char *const names[] = {"botsort", "bytetrack", "ocsort", "fasttrack", "deepocsort", "tracktrack"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "botsort";
}

static int in_unit(float v) { return v >= 0 && v <= 1; }

strix_status strix_tracker_create(strix_tracker **out, const strix_track_options *o, strix_error *err)
{
    *out = NULL;
    if (o->tracker_type < STRIX_TRACKER_BOTSORT || o->tracker_type > STRIX_TRACKER_TRACKTRACK)
        return strix_fail(err, STRIX_E_ARG, "tracker: unknown tracker type %d", (int)o->tracker_type);
    if (o->gmc_method != STRIX_GMC_SPARSE_OPTFLOW && o->gmc_method != STRIX_GMC_NONE)
        return strix_fail(err, STRIX_E_ARG, "tracker: unknown GMC method %d", (int)o->gmc_method);
    if (o->gmc_grey != STRIX_GREY_OPENCV5 && o->gmc_grey != STRIX_GREY_OPENCV4)
        return strix_fail(err, STRIX_E_ARG, "tracker: unknown GMC grey %d", (int)o->gmc_grey);
    const float th[] = {o->track_high_thresh, o->track_low_thresh, o->new_track_thresh, o->match_thresh,
                        o->proximity_thresh, o->appearance_thresh, o->occ_cover_thresh,   o->init_iou_suppress,
                        o->alpha_fixed_emb,  (float)o->dampen_motion_occ, o->lost_match_thr, o->reduce_step,
                        o->tai_thr};
    const char *names[] = {"track_high_thresh", "track_low_thresh",  "new_track_thresh", "match_thresh",
                           "proximity_thresh",  "appearance_thresh", "occ_cover_thresh", "init_iou_suppress",
                           "alpha_fixed_emb",   "dampen_motion_occ", "lost_match_thr",   "reduce_step",
                           "tai_thr"};
    for (size_t i = 0; i < sizeof th / sizeof th[0]; i++)
        if (!in_unit(th[i]))
            return strix_fail(err, STRIX_E_ARG, "tracker: %s %g is not in 0..1", names[i], (double)th[i]);
    /* TrackTrack's weights and penalties: any size >= 0 */
    const float wt[] = {o->iou_weight, o->reid_weight, o->conf_weight, o->angle_weight, o->penalty_p, o->penalty_q};
    const char *wnames[] = {"iou_weight", "reid_weight", "conf_weight", "angle_weight", "penalty_p", "penalty_q"};
    for (size_t i = 0; i < sizeof wt / sizeof wt[0]; i++)
        if (!(wt[i] >= 0) || !isfinite(wt[i]))
            return strix_fail(err, STRIX_E_ARG, "tracker: %s %g must be a number >= 0", wnames[i], (double)wt[i]);
    if (o->min_track_len < 0)
        return strix_fail(err, STRIX_E_ARG, "tracker: min_track_len %d must be >= 0", o->min_track_len);
    if (o->track_buffer < 0)
        return strix_fail(err, STRIX_E_ARG, "tracker: track_buffer %d must be >= 0", o->track_buffer);
    if (o->with_reid != 0 && o->with_reid != 1)
        return strix_fail(err, STRIX_E_ARG, "tracker: with_reid %d must be 0 or 1", o->with_reid);
    if (o->with_reid && o->tracker_type != STRIX_TRACKER_BOTSORT && o->tracker_type != STRIX_TRACKER_DEEPOCSORT &&
        o->tracker_type != STRIX_TRACKER_TRACKTRACK)
        return strix_fail(err, STRIX_E_ARG, "tracker: with_reid is for botsort, deepocsort and tracktrack, not %s",
                          strix_tracker_type_name(o->tracker_type));
    if (o->fuse_score != 0 && o->fuse_score != 1)
        return strix_fail(err, STRIX_E_ARG, "tracker: fuse_score %d must be 0 or 1", o->fuse_score);
    /* OC-SORT keeps delta_t + 2 observations per track */
    if (o->delta_t < 0 || o->delta_t > OCSORT_MAX_DELTA_T)
        return strix_fail(err, STRIX_E_ARG, "tracker: delta_t %d must be in 0..%d", o->delta_t, OCSORT_MAX_DELTA_T);
    if (!(o->inertia >= 0) || !isfinite(o->inertia))
        return strix_fail(err, STRIX_E_ARG, "tracker: inertia %g must be a number >= 0", (double)o->inertia);
    if (o->use_byte != 0 && o->use_byte != 1)
        return strix_fail(err, STRIX_E_ARG, "tracker: use_byte %d must be 0 or 1", o->use_byte);
    /* FastTrack keeps max(offsets) + 4 Kalman states per track */
    const int off[] = {o->reset_velocity_offset_occ, o->reset_pos_offset_occ};
    for (int i = 0; i < 2; i++)
        if (off[i] < 0 || off[i] > STRIX_FASTTRACK_MAX_OFFSET)
            return strix_fail(err, STRIX_E_ARG, "tracker: %s %d must be in 0..%d",
                              i ? "reset_pos_offset_occ" : "reset_velocity_offset_occ", off[i],
                              STRIX_FASTTRACK_MAX_OFFSET);
    if (!(o->enlarge_bbox_occ >= 0) || !isfinite(o->enlarge_bbox_occ))
        return strix_fail(err, STRIX_E_ARG, "tracker: enlarge_bbox_occ %g must be a number >= 0", o->enlarge_bbox_occ);
    if (o->active_occ_to_lost_thresh < 0 || o->occ_reappear_window < 0)
        return strix_fail(err, STRIX_E_ARG, "tracker: active_occ_to_lost_thresh %d and occ_reappear_window %d must be "
                          ">= 0", o->active_occ_to_lost_thresh, o->occ_reappear_window);
    strix_tracker *t = calloc(1, sizeof *t);
    if (!t) return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    t->o = *o;
    t->xywh = o->tracker_type == STRIX_TRACKER_BOTSORT;
    t->next_id = 1;
    t->obb = -1;
    t->feat_n = -1;
    t->rec_n = -1;
    const int deep = o->tracker_type == STRIX_TRACKER_DEEPOCSORT;
    const int gmc = t->xywh || deep || o->tracker_type == STRIX_TRACKER_TRACKTRACK;
    if (gmc && o->gmc_method == STRIX_GMC_SPARSE_OPTFLOW && !(t->gmc = strix_gmc_create())) {
        free(t);
        return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    }
    if (t->gmc) strix_gmc_set_grey(t->gmc, o->gmc_grey == STRIX_GREY_OPENCV4);
    if ((o->with_reid && !(t->reid = strix_reid_create())) ||
        ((o->tracker_type == STRIX_TRACKER_OCSORT || deep) && !(t->oc = strix_ocsort_create(o->delta_t))) ||
        (o->tracker_type == STRIX_TRACKER_FASTTRACK && !(t->ft = strix_fasttrack_create(o))) ||
        (o->tracker_type == STRIX_TRACKER_TRACKTRACK && !(t->tt = strix_tracktrack_create(o, t->reid)))) {
        strix_tracker_free(t);
        return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    }
    *out = t;
    return STRIX_OK;
}

void strix_tracker_free(strix_tracker *t)
{
    if (!t) return;
    strix_gmc_free(t->gmc);
    strix_ocsort_free(t->oc);
    strix_fasttrack_free(t->ft);
    strix_tracktrack_free(t->tt);
    strix_reid_free(t->reid);
    free(t->pool);
    free(t->tracked.v);
    free(t->lost.v);
    free(t->removed);
    free(t->boxes);
    free(t->rec);
    free(t->rec_xywhr);
    free(t->all_ids);
    free(t);
}

/* ----------------------------------------------------------------- kalman */

/* The Kalman steps (track_kalman.c) on a track's state. */
static void kalman_initiate(track *k, int xywh, const float m[4]) { strix_kf_initiate(k->mean, k->cov, xywh, m); }
static void kalman_predict(track *k, int xywh) { strix_kf_predict(k->mean, k->cov, xywh); }
static void kalman_predict_one(track *k) { strix_kf_predict_one(k->mean, k->cov); }
static void kalman_update(track *k, int xywh, const float m[4]) { strix_kf_update(k->mean, k->cov, xywh, m, 1); }
static void warp(track *k, const double H[6], int xyah) { strix_kf_warp(k->mean, k->cov, H, xyah); }

/* -------------------------------------------------------------------- IoU */

/* A track's (x1, y1, x2, y2) from its mean, as the reference's xyxy, in
 * float32 (its IoUs run on these; tracker.update's rows are these too:
 * STrack.result's doubles stored as float32). */
static void track_xyxy(const track *k, int xywh, float b[4]) { strix_kf_xyxy(k->mean, xywh, b); }

/* 1 - IoU in float32, as matching.iou_distance */
static inline float iou_dist(const float a[4], const float b[4]) { return 1 - strix_box_iou(a, b); }

/* A track's box as iou_distance compares it: xyxy, or xywha for oriented boxes. */
static void track_geom(const strix_tracker *t, const track *k, float g[5])
{
    if (t->obb == 1) strix_kf_xywha(k->mean, t->xywh, k->angle, g);
    else track_xyxy(k, t->xywh, g);
}

/* iou_distance of two boxes of track_geom's kind (a detection's: det_xyxy or strix_det_xywha). */
static float geom_dist(const strix_tracker *t, const float a[5], const float b[5])
{
    return t->obb == 1 ? 1 - strix_probiou(a, b) : iou_dist(a, b);
}

/* ------------------------------------------------------------------ update */

/* A free slot of the pool (growing it); -1 on OOM. */
static int new_slot(strix_tracker *t)
{
    for (int i = 0; i < t->n_pool; i++)
        if (t->pool[i].state == NEW) return i;
    int n = t->n_pool ? 2 * t->n_pool : 32;
    if ((t->oc && strix_ocsort_reserve(t->oc, n)) || (t->ft && strix_fasttrack_reserve(t->ft, n)) ||
        (t->reid && strix_reid_reserve(t->reid, n)))
        return -1;
    track *p = realloc(t->pool, sizeof *p * (size_t)n);
    if (!p) return -1;
    memset(p + t->n_pool, 0, sizeof *p * (size_t)(n - t->n_pool));
    t->pool = p;
    int slot = t->n_pool;
    t->n_pool = n;
    return slot;
}

/* OC-SORT: the detection's box is the track's observation, recorded before
 * its Kalman update (oc_sort.py's update and re_activate). */
static void ocsort_observe(strix_tracker *t, track *k, const det *d)
{
    float b[4];
    det_xyxy(d, b);
    strix_ocsort_observe(t->oc, (int)(k - t->pool), t->frame_id, b);
}

/* update_features of the track in k with detection d's feature (BOTrack:
 * alpha 0.9; DeepOCSortTrack: alpha_fixed_emb + (1 - alpha_fixed_emb) x
 * (1 - trust) above det_thresh (track_high_thresh), else 1, in float32 as
 * numpy computes it from the float32 score). */
static void reid_update(strix_tracker *t, track *k, const det *d)
{
    float a = 0.9f, b = (float)(1 - 0.9);
    if (t->oc) {
        const double th = strix_typed_double(t->o.track_high_thresh), afe = strix_typed_double(t->o.alpha_fixed_emb);
        a = 1;
        b = 0;
        if (d->score > (float)th) {
            float trust = (d->score - (float)th) / (float)(1 - th > 1e-9 ? 1 - th : 1e-9);
            a = (float)afe + (float)(1 - afe) * (1 - trust);
            b = 1 - a;
        }
    }
    strix_reid_update(t->reid, (int)(k - t->pool), d->index, a, b);
}

static void track_update(strix_tracker *t, track *k, const det *d)
{
    if (t->reid) reid_update(t, k, d);
    float m[4];
    det_measure(d, t->xywh, m);
    if (t->oc) ocsort_observe(t, k, d);
    k->frame_id = t->frame_id;
    k->tracklet_len++;
    kalman_update(k, t->xywh, m);
    k->state = TRACKED;
    k->activated = 1;
    k->score = d->score;
    k->idx = d->index;
    if (t->obb == 1) k->angle = strix_obb_angle(k->angle, d->angle);
    if (t->oc) strix_ocsort_settle(t->oc, (int)(k - t->pool), k->mean, k->cov);
    if (t->ft) strix_fasttrack_updated(t->ft, (int)(k - t->pool), 0, k->mean, k->cov);
}

static void track_reactivate(strix_tracker *t, track *k, const det *d)
{
    if (t->reid) reid_update(t, k, d);
    float m[4];
    det_measure(d, t->xywh, m);
    if (t->oc) ocsort_observe(t, k, d);
    kalman_update(k, t->xywh, m);
    k->tracklet_len = 0;
    k->state = TRACKED;
    k->activated = 1;
    k->frame_id = t->frame_id;
    k->score = d->score;
    k->idx = d->index;
    if (t->obb == 1) k->angle = strix_obb_angle(k->angle, d->angle);
    if (t->oc) strix_ocsort_settle(t->oc, (int)(k - t->pool), k->mean, k->cov);
    if (t->ft) strix_fasttrack_updated(t->ft, (int)(k - t->pool), 1, k->mean, k->cov);
}

/* OC-SORT's observation-centric re-update (apply_oru) of a lost track found
 * again by detection d: from the state saved at its last observation,
 * predict and update along the straight line from that observation to d,
 * one virtual observation a frame, then predict to this frame (the
 * single-track predict, without the lost track's zeroed height velocity). */
static void track_reupdate(strix_tracker *t, track *k, const det *d)
{
    const int slot = (int)(k - t->pool);
    const int gap = strix_ocsort_gap(t->oc, slot, t->frame_id, k->mean, k->cov);
    if (!gap) return;
    float b[4], m[4];
    det_xyxy(d, b);
    for (int step = 1; step < gap; step++) {
        strix_ocsort_virtual(t->oc, slot, b, step, gap, m);
        kalman_predict_one(k);
        kalman_update(k, 0, m);
    }
    kalman_predict_one(k);
}

/* Scratch of one update, freed together. */
typedef struct scratch {
    det *d;
    int *high, *low, *rec, *left, *match, *u_rows, *u_cols, *u_track;
    double *cost;
    size_t cost_cap;
    list unconfirmed, pool, activated, refind, lost_now, removed_now, r_tracked, ocr;
    char *ocr_done; /* OC-SORT's recovery: the unmatched tracks it matched */
    float *live;    /* FastTrack's live boxes [][4] */
} scratch;

static void scratch_free(scratch *s)
{
    free(s->d);
    free(s->high);
    free(s->low);
    free(s->rec);
    free(s->left);
    free(s->match);
    free(s->u_rows);
    free(s->u_cols);
    free(s->u_track);
    free(s->cost);
    free(s->ocr_done);
    free(s->live);
    list *l[] = {&s->unconfirmed, &s->pool, &s->activated, &s->refind, &s->lost_now, &s->removed_now,
                 &s->r_tracked, &s->ocr};
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) free(l[i]->v);
}

/* The costs of an association: plain iou_distance; the reference's
 * get_dists (with the score fusion when fuse_score; OC-SORT adds inertia x
 * its direction cost); OC-SORT's recovery (_ocr_associate: the IoU with the
 * track's last observation, score fused when fuse_score).  With ReID
 * (BoT-SORT, Deep OC-SORT) the last two take the smaller of that cost and
 * the appearance cost: half the embedding distance, 1 where it is above
 * 1 - appearance_thresh or the pair's plain IoU distance is above 1 -
 * proximity_thresh (those thresholds as float32, numpy comparing a float32
 * array with a Python float). */
enum { COST_IOU, COST_DISTS, COST_OCR };

/* The costs (a COST_*) of tracks ta [na] (pool slots) against detections
 * db [nb], then linear_assignment with thresh: lap.lapjv with cost_limit,
 * whose optimum (pairs cheaper than thresh, least total of cost - thresh)
 * is the rectangular optimum of the costs clamped at thresh.  s->match[i] =
 * the column of row i, or -1.  Returns -1 on OOM. */
static int associate(strix_tracker *t, scratch *s, const int *ta, int na, const int *db, int nb, int kind,
                     double thresh)
{
    for (int i = 0; i < na; i++) s->match[i] = -1;
    if (!na || !nb) return 0;
    size_t need = (size_t)na * (size_t)nb;
    if (need > s->cost_cap) {
        double *c = realloc(s->cost, sizeof *c * need);
        if (!c) return -1;
        s->cost = c;
        s->cost_cap = need;
    }
    const int fuse = kind != COST_IOU && t->o.fuse_score, ocm = kind == COST_DISTS && t->oc;
    const int app = kind != COST_IOU && t->reid;
    const float app_gate = (float)(1 - strix_typed_double(t->o.appearance_thresh)),
                prox_gate = (float)(1 - strix_typed_double(t->o.proximity_thresh));
    for (int i = 0; i < na; i++) {
        float a[5];
        /* OC-SORT's recovery: the last observation (oriented boxes: the predicted box, the reference keeps no
         * rotated observation) */
        if (kind != COST_OCR || t->obb == 1 || !strix_ocsort_last(t->oc, ta[i], a)) track_geom(t, &t->pool[ta[i]], a);
        for (int j = 0; j < nb; j++) {
            const det *d = &s->d[db[j]];
            float b[4], g[5];
            det_xyxy(d, b);
            if (t->obb == 1) strix_det_xywha(d, g);
            const float iou_c = geom_dist(t, a, t->obb == 1 ? g : b); /* IoU (oriented: probiou) distance */
            float c = iou_c;
            if (fuse) c = 1 - (1 - c) * d->score;
            if (ocm) c = c + t->o.inertia * strix_ocsort_direction_cost(t->oc, ta[i], b);
            if (app) {
                float e = strix_reid_embedding_distance(t->reid, ta[i], d->index) / 2;
                if (e > app_gate || iou_c > prox_gate) e = 1;
                c = e < c ? e : c; /* np.minimum: a NaN cost stays NaN */
            }
            s->cost[i * nb + j] = isfinite(c) ? (double)c : 1;
        }
    }
    for (size_t i = 0; i < need; i++)
        if (s->cost[i] > thresh) s->cost[i] = thresh;
    if (strix_assign(s->cost, na, nb, s->match)) return -1;
    for (int i = 0; i < na; i++)
        if (s->match[i] >= 0 && !(s->cost[i * nb + s->match[i]] < thresh)) s->match[i] = -1;
    return 0;
}

/* After associate(): the unmatched rows and columns, ascending (np.where). */
static void unmatched(const scratch *s, int rows, int cols, int *u_rows, int *n_rows, int *u_cols, int *n_cols,
                      char *taken)
{
    *n_rows = 0;
    for (int i = 0; i < rows; i++)
        if (s->match[i] < 0) u_rows[(*n_rows)++] = i;
    memset(taken, 0, (size_t)cols + 1);
    for (int i = 0; i < rows; i++)
        if (s->match[i] >= 0) taken[s->match[i]] = 1;
    *n_cols = 0;
    for (int j = 0; j < cols; j++)
        if (!taken[j]) u_cols[(*n_cols)++] = j;
}

/* OC-SORT's recovery (OCSORT._post_first_association): the detections the
 * first association left, s->left [*n_left], matched by COST_OCR with the
 * pool tracks it left, s->u_track [*n_ut] (positions in s->pool), the still
 * tracked ones first, then the lost ones on the detections that remain, so
 * a track lost a while cannot outbid an active one; a tracked track so
 * matched is updated, a lost one re-updated over its gap, then
 * re-activated.  Both lists lose what was matched, keeping their order.  0,
 * or -1 on OOM. */
static int recover(strix_tracker *t, scratch *s, int *n_ut, int *n_left, char *taken)
{
    if (!*n_left) return 0;
    free(s->ocr_done);
    if (!(s->ocr_done = calloc((size_t)*n_ut + 1, 1))) return -1;
    for (int pass = 0; pass < 2; pass++) {
        /* the tracks of this pass; a tracked one matched in the first stays tracked but is done */
        list *g = &s->ocr;
        g->n = 0;
        for (int i = 0; i < *n_ut; i++) {
            int slot = s->pool.v[s->u_track[i]];
            if (!s->ocr_done[i] && (t->pool[slot].state == TRACKED) == !pass && list_push(g, slot)) return -1;
        }
        if (associate(t, s, g->v, g->n, s->left, *n_left, COST_OCR, t->o.match_thresh)) return -1;
        memset(taken, 0, (size_t)*n_left + 1);
        for (int r = 0; r < g->n; r++) {
            if (s->match[r] < 0) continue;
            track *k = &t->pool[g->v[r]];
            const det *d = &s->d[s->left[s->match[r]]];
            taken[s->match[r]] = 1;
            for (int i = 0; i < *n_ut; i++)
                if (s->pool.v[s->u_track[i]] == g->v[r]) s->ocr_done[i] = 1;
            if (k->state == TRACKED) {
                track_update(t, k, d);
                if (list_push(&s->activated, g->v[r])) return -1;
            } else {
                track_reupdate(t, k, d);
                track_reactivate(t, k, d);
                if (list_push(&s->refind, g->v[r])) return -1;
            }
        }
        int m = 0;
        for (int j = 0; j < *n_left; j++)
            if (!taken[j]) s->left[m++] = s->left[j];
        *n_left = m;
    }
    int m = 0;
    for (int i = 0; i < *n_ut; i++)
        if (!s->ocr_done[i]) s->u_track[m++] = s->u_track[i];
    *n_ut = m;
    return 0;
}

/* FastTrack's _handle_occlusions: each tracked track the low-score
 * association left unmatched (s->r_tracked rows without a match), covered
 * by the largest fraction any track matched this frame (confirmed, not
 * occluded) covers of its box, may be rolled back, and is lost or stays
 * tracked.  0, or -1 on OOM. */
static int fasttrack_unmatched(strix_tracker *t, scratch *s)
{
    for (int i = 0; i < s->r_tracked.n; i++) {
        if (s->match[i] >= 0) continue;
        const int slot = s->r_tracked.v[i];
        track *k = &t->pool[slot];
        float u[4], cover = 0;
        track_xyxy(k, 0, u);
        for (int j = 0; j < s->activated.n; j++) {
            const track *x = &t->pool[s->activated.v[j]];
            if (!x->activated || strix_fasttrack_occluded(t->ft, s->activated.v[j]) || x->id == k->id) continue;
            float b[4];
            track_xyxy(x, 0, b);
            float c = strix_box_ioa(b, u);
            if (c > cover) cover = c;
        }
        if (strix_fasttrack_unmatched(t->ft, slot, t->frame_id, cover, k->mean, k->cov)) {
            k->state = LOST;
            if (list_push(&s->lost_now, slot)) return -1;
        }
    }
    return 0;
}

/* FastTrack's _init_new_tracks: the boxes (float32) a new track must not
 * overlap by init_iou_suppress: the tracks matched or found again this
 * frame (confirmed), and those still tracked; *n of them, room for extra
 * more.  NULL on OOM. */
static float *fasttrack_live(const strix_tracker *t, const scratch *s, int extra, int *n)
{
    float *b = malloc(sizeof *b * 4 * (size_t)(s->activated.n + s->refind.n + t->tracked.n + extra + 1));
    if (!b) return NULL;
    *n = 0;
    const list *l[] = {&s->activated, &s->refind, &t->tracked};
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < l[q]->n; i++) {
            const track *k = &t->pool[l[q]->v[i]];
            if (q < 2 ? k->activated : k->state == TRACKED) track_xyxy(k, 0, b + 4 * (*n)++);
        }
    return b;
}

/* 1 when detection d overlaps one of the n live boxes by init_iou_suppress or more. */
static int fasttrack_suppressed(const strix_tracker *t, const det *d, const float *live, int n)
{
    if (!(t->o.init_iou_suppress < 1) || !n) return 0;
    float b[4], most = -1;
    det_xyxy(d, b);
    for (int i = 0; i < n; i++) {
        float v = strix_box_iou(b, live + 4 * i);
        if (v > most) most = v;
    }
    return most >= t->o.init_iou_suppress;
}

/* A box with no area or a non-finite corner: nothing to match or predict. */
static int degenerate(const strix_detection *x, const det *d)
{
    return !isfinite(x->x1) || !isfinite(x->y1) || !isfinite(x->x2) || !isfinite(x->y2) || !(d->tlwh[2] > 0) ||
           !(d->tlwh[3] > 0);
}

static int removed_has(const strix_tracker *t, long id)
{
    for (int i = 0; i < t->n_removed; i++)
        if (t->removed[i] == id) return 1;
    return 0;
}

/* The reference's remove_duplicate_stracks over tracked x lost. */
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
        float p[5];
        track_geom(t, x, p);
        for (int j = 0; j < b->n; j++) {
            const track *y = &t->pool[b->v[j]];
            float q[5];
            track_geom(t, y, q);
            if (!(geom_dist(t, p, q) < DUPLICATE_IOU_DIST)) continue;
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

/* What GMC reads of a frame: the frame (RGB or BGR), or its grey half-size
 * image already made (strix_track_grey: grey [height / 2][width / 2]); no
 * camera motion this frame when both are NULL. */
typedef struct gmc_input {
    const strix_image *frame;
    const uint8_t *grey;
    int width, height;
} gmc_input;

/* The camera motion of this frame (GMC) into H: 1; 0 when none is
 * estimated (no GMC, or no frame); -1 on OOM. */
static int camera_motion(strix_tracker *t, const gmc_input *in, double H[6])
{
    if (!t->gmc || (!in->frame && !in->grey)) return 0;
    const strix_image *f = in->frame;
    if (f ? strix_gmc_apply(t->gmc, f->data, f->width, f->height, f->stride ? f->stride : 3 * f->width,
                            f->format == STRIX_BGR, H)
          : strix_gmc_apply_grey(t->gmc, in->grey, in->width, in->height, H))
        return -1;
    return 1;
}

/* Oriented detection r (cx, cy, w, h, angle) as STrack holds it: in its
 * long-edge form (w < h: the sides swapped and the angle + pi/2, in
 * double), tlwh = xywh2ltwh in double stored as float32.  1 when it is
 * degenerate (w or h not > 0, or a value not finite). */
static int obb_det(const float r[5], det *d)
{
    const int swap = r[2] < r[3];
    float w = swap ? r[3] : r[2], h = swap ? r[2] : r[3];
    d->tlwh[0] = (float)((double)r[0] - (double)w / 2);
    d->tlwh[1] = (float)((double)r[1] - (double)h / 2);
    d->tlwh[2] = w;
    d->tlwh[3] = h;
    d->angle = (double)r[4] + (swap ? 3.141592653589793 / 2 : 0);
    for (int k = 0; k < 5; k++)
        if (!isfinite(r[k])) return 1;
    return !(r[2] > 0) || !(r[3] > 0);
}

/* One frame (xywhr: the oriented boxes, or NULL) and n_given recovered
 * detections (TrackTrack's: t->rec, detections n .. n + n_given - 1); 0, or -1
 * when memory ran out (the tracker is then unusable). */
static int update(strix_tracker *t, const gmc_input *in, const strix_detection *dets, const float *xywhr, int n,
                  int n_given, int *ids, scratch *s)
{
    t->frame_id++;
    const int nt = n + n_given;
    size_t nn = (size_t)(nt > 0 ? nt : 1);
    t->n_boxes = t->n_rec_ids = 0;
    if (nt > t->boxes_cap) {
        float *b = realloc(t->boxes, sizeof *b * BOX * (size_t)nt);
        if (!b) return -1;
        t->boxes = b;
        t->boxes_cap = nt;
    }
    if (t->tt && nt > t->all_ids_cap) {
        int *a = realloc(t->all_ids, sizeof *a * (size_t)nt);
        if (!a) return -1;
        t->all_ids = a;
        t->all_ids_cap = nt;
    }
    t->n_boxes = nt;
    for (size_t i = 0; i < BOX * (size_t)nt; i++) t->boxes[i] = NAN;
    s->d = malloc(sizeof *s->d * nn);
    s->high = malloc(sizeof *s->high * nn);
    s->low = malloc(sizeof *s->low * nn);
    s->rec = malloc(sizeof *s->rec * nn);
    s->left = malloc(sizeof *s->left * nn);
    s->u_cols = malloc(sizeof *s->u_cols * nn);
    if (!s->d || !s->high || !s->low || !s->rec || !s->left || !s->u_cols) return -1;
    int n_high = 0, n_low = 0, n_rec = 0;
    float th = t->o.track_high_thresh, tl = t->o.track_low_thresh;
    int *out = t->tt ? t->all_ids : ids;
    for (int i = 0; i < nt; i++) {
        const strix_detection *x = i < n ? &dets[i] : &t->rec[i - n];
        det *d = &s->d[i];
        int bad;
        if (xywhr) {
            bad = obb_det(i < n ? xywhr + 5 * (size_t)i : t->rec_xywhr + 5 * (size_t)(i - n), d);
        } else {
            /* Boxes.xywh in float32, then x1 = cx - w / 2 in double, stored as float32 */
            float cx = (x->x1 + x->x2) / 2, cy = (x->y1 + x->y2) / 2, w = x->x2 - x->x1, h = x->y2 - x->y1;
            d->tlwh[0] = (float)((double)cx - (double)w / 2);
            d->tlwh[1] = (float)((double)cy - (double)h / 2);
            d->tlwh[2] = w;
            d->tlwh[3] = h;
            d->angle = 0;
            bad = degenerate(x, d);
        }
        d->score = x->score;
        d->index = i;
        out[i] = -1;
        if (bad) { /* never matched, never starts a track */
            t->degenerate++;
            continue;
        }
        if (i >= n) { /* recovered: only those above track_high_thresh */
            if (d->score > th) s->rec[n_rec++] = i;
        } else if (d->score >= th) s->high[n_high++] = i;
        else if (d->score > tl) s->low[n_low++] = i;
    }

    if (t->tt && t->reid) /* TrackTrack encodes its high-score detections only */
        for (int i = 0; i < n; i++)
            if (!(s->d[i].score >= th)) strix_reid_drop_det(t->reid, i);
    if (t->tt) { /* TrackTrack: its camera motion comes before its own predict */
        double H[6];
        int moved = camera_motion(t, in, H);
        if (moved < 0 || strix_tracktrack_update(t->tt, moved ? H : NULL, s->d, s->high, n_high, s->low, n_low, s->rec,
                                                 n_rec, out, t->boxes, t->obb == 1))
            return -1;
        if (n) memcpy(ids, out, sizeof *ids * (size_t)n);
        t->rec_ids = n_given ? out + n : NULL;
        t->n_rec_ids = n_given;
        return 0;
    }

    /* tracked tracks split into confirmed (with the lost ones: the pool) and unconfirmed */
    for (int i = 0; i < t->tracked.n; i++)
        if (list_push(t->pool[t->tracked.v[i]].activated ? &s->pool : &s->unconfirmed, t->tracked.v[i])) return -1;
    if (strix_slots_join(&s->pool, &t->lost)) return -1;
    for (int i = 0; i < s->pool.n; i++) {
        track *k = &t->pool[s->pool.v[i]];
        if (k->state != TRACKED) {
            k->mean[7] = 0;
            if (t->xywh) k->mean[6] = 0;
        }
        kalman_predict(k, t->xywh);
    }
    double H[6];
    int moved = camera_motion(t, in, H);
    if (moved < 0) return -1;
    if (moved) {
        const list *l[] = {&s->pool, &s->unconfirmed};
        for (int q = 0; q < 2; q++)
            for (int i = 0; i < l[q]->n; i++) {
                track *k = &t->pool[l[q]->v[i]];
                /* BoT-SORT's oriented tracks scale and turn (Deep OC-SORT's keep their size and angle) */
                const int turn = t->xywh && t->obb == 1;
                warp(k, H, turn ? STRIX_KF_WARP_OBB : !t->xywh);
                if (turn) k->angle += strix_kf_warp_angle(H);
                if (t->oc) strix_ocsort_warp(t->oc, l[q]->v[i], H); /* Deep OC-SORT's: its last detection too */
            }
    }
    int most = s->pool.n > s->unconfirmed.n ? s->pool.n : s->unconfirmed.n;
    s->match = malloc(sizeof *s->match * (size_t)(most + 1));
    s->u_rows = malloc(sizeof *s->u_rows * (size_t)(most + 1));
    s->u_track = malloc(sizeof *s->u_track * (size_t)(most + 1));
    char *taken = malloc(nn + 1);
    if (!s->match || !s->u_rows || !s->u_track || !taken) {
        free(taken);
        return -1;
    }
    int rc = -1;

    /* first association: high-score detections with the pool */
    if (associate(t, s, s->pool.v, s->pool.n, s->high, n_high, COST_DISTS, t->o.match_thresh)) goto out;
    for (int i = 0; i < s->pool.n; i++) {
        int j = s->match[i];
        if (j < 0) continue;
        track *k = &t->pool[s->pool.v[i]];
        const det *d = &s->d[s->high[j]];
        if (k->state == TRACKED) {
            track_update(t, k, d);
            if (list_push(&s->activated, s->pool.v[i])) goto out;
        } else {
            track_reactivate(t, k, d);
            if (list_push(&s->refind, s->pool.v[i])) goto out;
        }
        if (t->ft) strix_fasttrack_matched(t->ft, s->pool.v[i]);
    }
    int n_ut, n_left;
    unmatched(s, s->pool.n, n_high, s->u_track, &n_ut, s->u_cols, &n_left, taken);
    for (int j = 0; j < n_left; j++) s->left[j] = s->high[s->u_cols[j]];
    if (t->oc && recover(t, s, &n_ut, &n_left, taken)) goto out;
    /* second association: the unmatched pool tracks still tracked, with the low-score detections, plain IoU
     * (OC-SORT without use_byte: with none, so they are all lost) */
    for (int i = 0; i < n_ut; i++)
        if (t->pool[s->pool.v[s->u_track[i]]].state == TRACKED && list_push(&s->r_tracked, s->pool.v[s->u_track[i]]))
            goto out;
    if (associate(t, s, s->r_tracked.v, s->r_tracked.n, s->low, t->oc && !t->o.use_byte ? 0 : n_low, COST_IOU,
                  SECOND_MATCH_THRESH))
        goto out;
    for (int i = 0; i < s->r_tracked.n; i++) {
        if (s->match[i] < 0) continue;
        const det *d = &s->d[s->low[s->match[i]]];
        track *k = &t->pool[s->r_tracked.v[i]];
        track_update(t, k, d); /* every r_tracked track is tracked */
        if (t->ft) strix_fasttrack_matched(t->ft, s->r_tracked.v[i]);
        if (list_push(&s->activated, s->r_tracked.v[i])) goto out;
    }
    /* the rest are lost (FastTrack: unless occluded, or unmatched only once or twice) */
    if (t->ft && fasttrack_unmatched(t, s)) goto out;
    for (int i = 0; i < s->r_tracked.n && !t->ft; i++) {
        if (s->match[i] >= 0) continue;
        t->pool[s->r_tracked.v[i]].state = LOST;
        if (list_push(&s->lost_now, s->r_tracked.v[i])) goto out;
    }

    /* unconfirmed tracks (one frame old) with the leftover high detections */
    if (associate(t, s, s->unconfirmed.v, s->unconfirmed.n, s->left, n_left, COST_DISTS, UNCONFIRMED_MATCH_THRESH))
        goto out;
    for (int i = 0; i < s->unconfirmed.n; i++) {
        if (s->match[i] < 0) continue;
        track_update(t, &t->pool[s->unconfirmed.v[i]], &s->d[s->left[s->match[i]]]);
        if (list_push(&s->activated, s->unconfirmed.v[i])) goto out;
    }
    int n_u3, n_new;
    unmatched(s, s->unconfirmed.n, n_left, s->u_rows, &n_u3, s->u_cols, &n_new, taken);
    for (int i = 0; i < n_u3; i++) {
        t->pool[s->unconfirmed.v[s->u_rows[i]]].state = REMOVED;
        if (list_push(&s->removed_now, s->unconfirmed.v[s->u_rows[i]])) goto out;
    }

    /* new tracks from the leftovers that clear the start threshold (FastTrack: and overlap no live track) */
    int n_live = 0;
    if (t->ft && !(s->live = fasttrack_live(t, s, n_new, &n_live))) goto out;
    for (int j = 0; j < n_new; j++) {
        const det *d = &s->d[s->left[s->u_cols[j]]];
        if (d->score < t->o.new_track_thresh || (t->ft && fasttrack_suppressed(t, d, s->live, n_live))) continue;
        int slot = new_slot(t);
        if (slot < 0 || list_push(&s->activated, slot)) goto out;
        track *k = &t->pool[slot];
        memset(k, 0, sizeof *k);
        float m[4];
        det_measure(d, t->xywh, m);
        kalman_initiate(k, t->xywh, m);
        if (t->reid) strix_reid_start(t->reid, slot, d->index);
        if (t->oc) { /* its first observation: its box from the new state */
            float b[4];
            track_xyxy(k, 0, b);
            strix_ocsort_start(t->oc, slot, t->frame_id, b, k->mean, k->cov);
        }
        if (t->ft) {
            strix_fasttrack_start(t->ft, slot, k->mean, k->cov);
            track_xyxy(k, 0, s->live + 4 * n_live++);
        }
        k->id = t->next_id++;
        k->state = TRACKED;
        k->activated = t->frame_id == 1;
        k->frame_id = k->start_frame = t->frame_id;
        k->score = d->score;
        k->idx = d->index;
        k->angle = d->angle;
    }

    /* lost tracks past the buffer */
    for (int i = 0; i < t->lost.n; i++) {
        track *k = &t->pool[t->lost.v[i]];
        if (t->frame_id - k->frame_id > t->o.track_buffer &&
            !(t->ft && strix_fasttrack_grace(t->ft, t->lost.v[i], t->frame_id))) {
            k->state = REMOVED;
            if (list_push(&s->removed_now, t->lost.v[i])) goto out;
        }
    }

    /* merge_track_pools: the lists, in the reference's order */
    int m = 0;
    for (int i = 0; i < t->tracked.n; i++)
        if (t->pool[t->tracked.v[i]].state == TRACKED) t->tracked.v[m++] = t->tracked.v[i];
    t->tracked.n = m;
    if (strix_slots_join(&t->tracked, &s->activated) || strix_slots_join(&t->tracked, &s->refind)) goto out;
    strix_slots_sub(&t->lost, &t->tracked);
    for (int i = 0; i < s->lost_now.n; i++)
        if (list_push(&t->lost, s->lost_now.v[i])) goto out;
    m = 0;
    for (int i = 0; i < t->lost.n; i++)
        if (!removed_has(t, t->pool[t->lost.v[i]].id)) t->lost.v[m++] = t->lost.v[i];
    t->lost.n = m;
    if (remove_duplicates(t)) goto out;
    for (int i = 0; i < s->removed_now.n; i++) {
        if (t->n_removed == REMOVED_KEEP) {
            memmove(t->removed, t->removed + 1, sizeof *t->removed * (REMOVED_KEEP - 1));
            t->n_removed--;
        }
        if (!t->removed && !(t->removed = malloc(sizeof *t->removed * REMOVED_KEEP))) goto out;
        t->removed[t->n_removed++] = t->pool[s->removed_now.v[i]].id;
    }

    /* identities for the detections of confirmed, tracked tracks, and
     * their boxes: the reference's output rows, from the mean after this
     * frame's update (FastTrack's tracked tracks left unmatched have none) */
    for (int i = 0; i < t->tracked.n; i++) {
        const track *k = &t->pool[t->tracked.v[i]];
        if (!k->activated || k->frame_id != t->frame_id) continue;
        ids[k->idx] = (int)k->id;
        if (t->obb == 1) strix_kf_xywha(k->mean, t->xywh, k->angle, &t->boxes[BOX * k->idx]);
        else track_xyxy(k, t->xywh, &t->boxes[BOX * k->idx]);
    }
    /* slots no list holds any more are free (state NEW) */
    for (int i = 0; i < t->n_pool; i++)
        if (t->pool[i].state != NEW && !strix_slots_has(&t->tracked, i) && !strix_slots_has(&t->lost, i))
            t->pool[i].state = NEW;
    rc = 0;
out:
    free(taken);
    return rc;
}

/* The checks every update makes of its detections (xywhr: oriented
 * boxes, or NULL), then the update. */
static strix_status run_update(strix_tracker *t, const gmc_input *in, const strix_detection *dets, const float *xywhr,
                               int obb, int n, int *ids, strix_error *err)
{
    if (n < 0 || (n && (!dets || !ids || (obb && !xywhr))))
        return strix_fail(err, STRIX_E_ARG, "tracker: bad detection array");
    if (n && t->obb >= 0 && t->obb != obb)
        return strix_fail(err, STRIX_E_ARG, "tracker: %s detections for a tracker of %s ones (one tracker per kind)",
                          obb ? "oriented" : "axis-aligned", obb ? "axis-aligned" : "oriented");
    for (int i = 0; i < n; i++) {
        const strix_detection *x = &dets[i];
        if (!(x->score >= 0 && x->score <= 1))
            return strix_fail(err, STRIX_E_ARG, "tracker: detection %d has a score outside 0..1", i);
    }
    if (t->broken) return strix_fail(err, STRIX_E_NOMEM, "tracker: unusable after running out of memory");
    const int m = t->rec_n > 0 ? t->rec_n : 0; /* the recovered detections are this update's */
    t->rec_n = -1;
    if (m && t->rec_obb != obb)
        return strix_fail(err, STRIX_E_ARG, "tracker: %s recovered detections for an update of %s ones",
                          t->rec_obb ? "oriented" : "axis-aligned", obb ? "oriented" : "axis-aligned");
    if (n || m) t->obb = obb;
    if (t->feat_n >= 0 && t->feat_n != n) {
        int given = t->feat_n;
        t->feat_n = -1;
        strix_reid_set_dets(t->reid, NULL, 0, 0);
        return strix_fail(err, STRIX_E_ARG, "tracker: %d ReID features were given for an update of %d detections",
                          given, n);
    }
    scratch s;
    memset(&s, 0, sizeof s);
    int rc = update(t, in, dets, obb ? xywhr : NULL, n, m, ids, &s);
    scratch_free(&s);
    if (t->reid) { /* the features were this update's */
        t->feat_n = -1;
        strix_reid_set_dets(t->reid, NULL, 0, 0);
    }
    if (rc) {
        t->broken = 1;
        return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    }
    return STRIX_OK;
}

/* A frame GMC can read: RGB or BGR in memory the CPU reads. */
static strix_status check_frame(const strix_image *f, strix_error *err)
{
    if (f->format == STRIX_NV12 || f->memory == STRIX_DEVICE)
        return strix_fail(err, STRIX_E_ARG, "tracker: camera-motion compensation reads RGB or BGR frames in host "
                          "memory (got %s)", f->memory == STRIX_DEVICE ? "device memory" : "NV12");
    if (!f->data || f->width < 1 || f->height < 1 || (f->stride && f->stride < 3 * f->width))
        return strix_fail(err, STRIX_E_ARG, "tracker: bad frame (%dx%d, stride %d)", f->width, f->height, f->stride);
    return STRIX_OK;
}

strix_status strix_tracker_features(strix_tracker *t, const float *feats, int n, int dim, strix_error *err)
{
    if (!t->reid)
        return strix_fail(err, STRIX_E_ARG, "tracker: ReID features given to a tracker without with_reid");
    if (n < 0 || dim < 1 || (n && !feats))
        return strix_fail(err, STRIX_E_ARG, "tracker: bad feature array (%d x %d)", n, dim);
    if (t->feat_dim && dim != t->feat_dim)
        return strix_fail(err, STRIX_E_ARG, "tracker: ReID features of length %d, earlier ones of %d", dim,
                          t->feat_dim);
    for (size_t i = 0; i < (size_t)n * (size_t)dim; i++)
        if (!isfinite(feats[i]))
            return strix_fail(err, STRIX_E_ARG, "tracker: ReID feature %zu of detection %zu is not finite",
                              i % (size_t)dim, i / (size_t)dim);
    if (strix_reid_set_dets(t->reid, feats, n, dim)) {
        t->broken = 1;
        return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory");
    }
    t->feat_dim = dim;
    t->feat_n = n;
    return STRIX_OK;
}

strix_status strix_tracker_recovered(strix_tracker *t, const strix_detection *dets, const float *xywhr, int n,
                                     strix_error *err)
{
    if (!t->tt)
        return strix_fail(err, STRIX_E_ARG, "tracker: recovered detections are TrackTrack's; Ultralytics' %s takes "
                          "none (give them to a tracktrack tracker only)", strix_tracker_type_name(t->o.tracker_type));
    if (n < 0 || (n && !dets)) return strix_fail(err, STRIX_E_ARG, "tracker: bad recovered detection array");
    for (int i = 0; i < n; i++)
        if (!(dets[i].score >= 0 && dets[i].score <= 1))
            return strix_fail(err, STRIX_E_ARG, "tracker: recovered detection %d has a score outside 0..1", i);
    if (n > t->rec_cap) {
        strix_detection *r = realloc(t->rec, sizeof *r * (size_t)n);
        if (r) t->rec = r;
        float *x = r ? realloc(t->rec_xywhr, sizeof *x * 5 * (size_t)n) : NULL;
        if (x) t->rec_xywhr = x;
        if (!x) return strix_fail(err, STRIX_E_NOMEM, "tracker: out of memory for %d recovered detections", n);
        t->rec_cap = n;
    }
    if (n) memcpy(t->rec, dets, sizeof *dets * (size_t)n);
    if (n && xywhr) memcpy(t->rec_xywhr, xywhr, sizeof(float) * 5 * (size_t)n);
    t->rec_n = n;
    t->rec_obb = xywhr != NULL;
    return STRIX_OK;
}

int strix_tracker_recovered_id(const strix_tracker *t, int j)
{
    return j >= 0 && j < t->n_rec_ids ? t->rec_ids[j] : -1;
}

strix_status strix_tracker_update(strix_tracker *t, const strix_image *frame, const strix_detection *dets, int n,
                                  int *ids, strix_error *err)
{
    strix_status st = frame ? check_frame(frame, err) : STRIX_OK;
    gmc_input in = {frame, NULL, 0, 0};
    return st ? st : run_update(t, &in, dets, NULL, 0, n, ids, err);
}

strix_status strix_tracker_update_grey(strix_tracker *t, const uint8_t *grey, int width, int height,
                                       const strix_detection *dets, int n, int *ids, strix_error *err)
{
    if (!grey || width < 1 || height < 1)
        return strix_fail(err, STRIX_E_ARG, "tracker: bad grey frame (%dx%d%s)", width, height, grey ? "" : ", no pixels");
    gmc_input in = {NULL, grey, width, height};
    return run_update(t, &in, dets, NULL, 0, n, ids, err);
}

strix_status strix_tracker_update_obb(strix_tracker *t, const strix_image *frame, const uint8_t *grey, int width,
                                     int height, const strix_detection *dets, const float *xywhr, int n, int *ids,
                                     strix_error *err)
{
    if (grey && (width < 1 || height < 1))
        return strix_fail(err, STRIX_E_ARG, "tracker: bad grey frame (%dx%d)", width, height);
    strix_status st = !grey && frame ? check_frame(frame, err) : STRIX_OK;
    gmc_input in = {grey ? NULL : frame, grey, width, height};
    return st ? st : run_update(t, &in, dets, xywhr, 1, n, ids, err);
}

strix_status strix_track_grey(const strix_image *frame, int *done, int y1, uint8_t *grey, strix_grey_rounding kind,
                              strix_error *err)
{
    strix_status st = check_frame(frame, err);
    if (st) return st;
    const int h = frame->height;
    if (!grey || !done || *done < 0 || *done > y1 || y1 > h)
        return strix_fail(err, STRIX_E_ARG, "strix_track_grey: rows %d..%d of a frame of height %d%s",
                          done ? *done : -1, y1, h, grey ? "" : ", no grey buffer");
    /* whole row pairs (each band's grey rows are then the whole frame's); an odd height whole, at its end */
    const int y0 = *done, end = y1 == h ? h : y1 & ~1;
    if (y0 == h || (h % 2 ? y1 < h : end <= y0)) return STRIX_OK; /* complete, or no whole row pair yet */
    const int from = h % 2 ? 0 : y0;
    if (strix_gmc_grey(frame->data, frame->width, frame->stride ? frame->stride : 3 * frame->width,
                       frame->format == STRIX_BGR, kind == STRIX_GREY_OPENCV4, from, end, grey))
        return strix_fail(err, STRIX_E_NOMEM, "strix_track_grey: out of memory");
    *done = end;
    return STRIX_OK;
}

long strix_tracker_degenerate(const strix_tracker *t) { return t->degenerate; }

int strix_tracker_box(const strix_tracker *t, int i, float xyxy[4])
{
    if (i < 0 || i >= t->n_boxes || isnan(t->boxes[BOX * i])) return 0;
    if (t->obb != 1) {
        memcpy(xyxy, &t->boxes[BOX * i], sizeof(float) * 4);
        return 1;
    }
    float c[8]; /* OBB.xyxy: the corners' bounds */
    strix_xywhr_corners(&t->boxes[BOX * i], 1, c);
    xyxy[0] = xyxy[2] = c[0];
    xyxy[1] = xyxy[3] = c[1];
    for (int k = 1; k < 4; k++) {
        xyxy[0] = c[2 * k] < xyxy[0] ? c[2 * k] : xyxy[0];
        xyxy[2] = c[2 * k] > xyxy[2] ? c[2 * k] : xyxy[2];
        xyxy[1] = c[2 * k + 1] < xyxy[1] ? c[2 * k + 1] : xyxy[1];
        xyxy[3] = c[2 * k + 1] > xyxy[3] ? c[2 * k + 1] : xyxy[3];
    }
    return 1;
}

int strix_tracker_box_xywhr(const strix_tracker *t, int i, float xywhr[5])
{
    if (t->obb != 1 || i < 0 || i >= t->n_boxes || isnan(t->boxes[BOX * i])) return 0;
    memcpy(xywhr, &t->boxes[BOX * i], sizeof(float) * 5);
    return 1;
}
