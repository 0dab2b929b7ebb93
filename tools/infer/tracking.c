/* tracking.c — the infer job's tracking stage, one per video, run on its
 * writer thread with the frames in order: the tracker (--tracker: ByteTrack,
 * BoT-SORT, OC-SORT, FastTrack, Deep OC-SORT or TrackTrack,
 * engine/analytics/track.c) gives each
 * detection an identity and a tracked detection the tracker's box (an obb
 * model's: its rotated box, and as box the bounds of its corners, not
 * clipped, as Ultralytics' OBB.xyxy: counted from the rotated box's
 * centre, as its ObjectCounter counts), TrackTrack's recovered detections
 * that a track took become rows after the detections, the counter
 * (engine/analytics/count.c) keeps each track's totals and trail and counts
 * --line crossings. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "tasks.h"
#include "trace.h"
#include "util.h"

strix_status tracking_open(tracking *t, const tracking_config *c, strix_error *err)
{
    memset(t, 0, sizeof *t);
    t->nvtx = c->nvtx;
    strix_status st = strix_tracker_create(&t->tracker, c->track, err);
    if (!st) st = strix_counter_create(&t->counter, c->line, c->trail, err);
    return st;
}

long tracking_gap_span(const strix_track_options *o)
{
    long span = o->track_buffer;
    if (o->tracker_type == STRIX_TRACKER_FASTTRACK) {
        long tracked = o->active_occ_to_lost_thresh + 2L > 3 ? o->active_occ_to_lost_thresh + 2L : 3;
        if (o->occ_reappear_window > span) span = o->occ_reappear_window;
        if (tracked > span) span = tracked;
    }
    return span;
}

strix_status tracking_gap(tracking *t, long missed, const strix_track_options *o, strix_error *err)
{
    long cap = tracking_gap_span(o) + 2;
    long k = missed < cap ? missed : cap;
    strix_status st = STRIX_OK;
    for (long i = 0; i < k && !st; i++) st = strix_tracker_update(t->tracker, NULL, NULL, 0, NULL, err);
    return st;
}

/* Ultralytics' ops.clip_boxes on a float32 tensor: clamp_(0, size) */
static float clip(float v, int size) { return v < 0 ? 0 : v > (float)size ? (float)size : v; }

/* Room for cap rows in every per-row array (the old rows kept: a skipped frame repeats them). */
static strix_status tracking_grow(tracking *t, int need, strix_error *err)
{
    if (need <= t->cap) return STRIX_OK;
    int cap = need > 2 * t->cap ? need : 2 * t->cap;
    int *ids = realloc(t->ids, sizeof *ids * (size_t)cap);
    if (ids) t->ids = ids;
    strix_detection *bx = realloc(t->boxes, sizeof *bx * (size_t)cap);
    if (bx) t->boxes = bx;
    strix_detection *raw = realloc(t->raw, sizeof *raw * (size_t)cap);
    if (raw) t->raw = raw;
    strix_crossing *cr = realloc(t->cross, sizeof *cr * (size_t)cap);
    if (cr) t->cross = cr;
    float *co = realloc(t->corners, sizeof *co * 8 * (size_t)cap);
    if (co) t->corners = co;
    float *rco = realloc(t->raw_corners, sizeof *rco * 8 * (size_t)cap);
    if (rco) t->raw_corners = rco;
    if (!ids || !bx || !raw || !cr || !co || !rco)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for %d tracked detections", need);
    t->cap = cap;
    return STRIX_OK;
}

/* Row k as the tracker left detection (or recovered detection) j of the update: its box (an obb's rotated
 * one: corners, and as box their bounds, not clipped: OBB.xyxy, centred on the box), else the box clipped to
 * the frame (Results.update's clip_boxes).  0 when the tracker has no box for it. */
static int tracked_box(tracking *t, int j, int k, int obb, int w, int h)
{
    float xyxy[4], r[5];
    if (!strix_tracker_box(t->tracker, j, xyxy)) return 0;
    strix_detection *b = &t->boxes[k];
    if (obb && strix_tracker_box_xywhr(t->tracker, j, r)) {
        strix_xywhr_corners(r, 1, t->corners + 8 * (size_t)k);
        b->x1 = xyxy[0], b->y1 = xyxy[1], b->x2 = xyxy[2], b->y2 = xyxy[3];
        return 1;
    }
    b->x1 = clip(xyxy[0], w);
    b->y1 = clip(xyxy[1], h);
    b->x2 = clip(xyxy[2], w);
    b->y2 = clip(xyxy[3], h);
    return 1;
}

strix_status tracking_frame(tracking *t, const strix_image *img, const uint8_t *grey, int w, int h, long index,
                            double time, int inferred, const strix_detection *d, int n, const task_frame *task,
                            int *n_cross, strix_error *err)
{
    const int obb = task && task->task == STRIX_TASK_OBB && task->stride == 5 && task->n >= n;
    const int n_rec = inferred && task && task->n_rec > 0 ? task->n_rec : 0; /* TrackTrack's recovered detections */
    *n_cross = 0;
    t->obb = obb;
    strix_status st = tracking_grow(t, n + n_rec, err);
    if (st) return st;
    /* a frame --vid-stride skipped repeats the last detections: same identities */
    stage_push(t->nvtx, "tracking");
    st = inferred && task && task->feat_dim ? strix_tracker_features(t->tracker, task->feats, n, task->feat_dim, err)
                                            : STRIX_OK;
    if (!st && inferred && task && task->n_rec >= 0)
        st = strix_tracker_recovered(t->tracker, task->rec, obb ? task->rec_xywhr : NULL, task->n_rec, err);
    if (!st)
        st = !inferred ? STRIX_OK
             : obb     ? strix_tracker_update_obb(t->tracker, img, grey, w, h, d, task->values, n, t->ids, err)
             : grey    ? strix_tracker_update_grey(t->tracker, grey, w, h, d, n, t->ids, err)
                       : strix_tracker_update(t->tracker, img, d, n, t->ids, err);
    /* a skipped frame keeps the last frame's rows (its recovered ones too when the detections are the same
     * count); detections past those (a replayed file can skip a frame with more, or its first) have none */
    int rows = !inferred && n == t->n_last ? t->n_rows : n;
    for (int i = inferred ? 0 : t->n_last; !st && i < n; i++) {
        t->boxes[i] = t->raw[i] = d[i];
        if (obb) {
            memcpy(t->corners + 8 * (size_t)i, task->corners + 8 * (size_t)i, sizeof(float) * 8);
            memcpy(t->raw_corners + 8 * (size_t)i, task->corners + 8 * (size_t)i, sizeof(float) * 8);
        }
        if (!inferred) t->ids[i] = -1;
        else tracked_box(t, i, i, obb, w, h);
    }
    for (int j = 0; !st && j < n_rec; j++) {
        int id = strix_tracker_recovered_id(t->tracker, j);
        if (id < 0) continue;
        /* the row's score and class are the recovered detection's, as the track's after the update */
        t->boxes[rows] = t->raw[rows] = task->rec[j];
        if (obb) strix_xywhr_corners(task->rec_xywhr + 5 * (size_t)j, 1, t->raw_corners + 8 * (size_t)rows);
        if (!tracked_box(t, n + j, rows, obb, w, h)) continue;
        t->ids[rows++] = id;
    }
    if (inferred || n > t->n_last) {
        t->n_last = n;
        t->n_rows = rows;
    }
    stage_pop(t->nvtx);
    if (!st) st = strix_counter_add(t->counter, index, time, t->boxes, t->ids, rows, t->cross, n_cross, err);
    return st;
}

void tracking_close(tracking *t)
{
    strix_tracker_free(t->tracker);
    strix_counter_free(t->counter);
    free(t->ids);
    free(t->boxes);
    free(t->raw);
    free(t->cross);
    free(t->corners);
    free(t->raw_corners);
    memset(t, 0, sizeof *t);
}
