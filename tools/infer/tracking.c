/* tracking.c — the infer job's tracking stage, one per video, run on its
 * writer thread with the frames in order: the tracker (--tracker: ByteTrack,
 * BoT-SORT, OC-SORT, FastTrack, Deep OC-SORT or TrackTrack,
 * engine/analytics/track.c) gives each
 * detection an identity and a tracked detection the tracker's box (an obb
 * model's: its rotated box, and as box the bounds of its corners, not
 * clipped, as Ultralytics' OBB.xyxy: counted from the rotated box's
 * centre, as its ObjectCounter counts), the counter
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

strix_status tracking_frame(tracking *t, const strix_image *img, const uint8_t *grey, int w, int h, long index,
                            double time, int inferred, const strix_detection *d, int n, const task_frame *task,
                            int *n_cross, strix_error *err)
{
    const int obb = task && task->task == STRIX_TASK_OBB && task->stride == 5 && task->n >= n;
    *n_cross = 0;
    t->obb = obb;
    if (n > t->cap) {
        int cap = n > 2 * t->cap ? n : 2 * t->cap;
        int *ids = realloc(t->ids, sizeof *ids * (size_t)cap); /* keeps the last frame's identities */
        if (ids) t->ids = ids;
        strix_detection *bx = realloc(t->boxes, sizeof *bx * (size_t)cap); /* and boxes */
        if (bx) t->boxes = bx;
        strix_crossing *cr = realloc(t->cross, sizeof *cr * (size_t)cap);
        if (cr) t->cross = cr;
        float *co = realloc(t->corners, sizeof *co * 8 * (size_t)cap);
        if (co) t->corners = co;
        if (!ids || !bx || !cr || !co) return strix_fail(err, STRIX_E_NOMEM, "out of memory for %d tracked detections", n);
        t->cap = cap;
    }
    /* a frame --vid-stride skipped repeats the last detections: same identities */
    stage_push(t->nvtx, "tracking");
    strix_status st = inferred && task && task->feat_dim
                          ? strix_tracker_features(t->tracker, task->feats, n, task->feat_dim, err)
                          : STRIX_OK;
    if (!st && inferred && task && task->n_rec >= 0) /* TrackTrack's recovered detections */
        st = strix_tracker_recovered(t->tracker, task->rec, obb ? task->rec_xywhr : NULL, task->n_rec, err);
    if (!st)
        st = !inferred ? STRIX_OK
             : obb     ? strix_tracker_update_obb(t->tracker, img, grey, w, h, d, task->values, n, t->ids, err)
             : grey    ? strix_tracker_update_grey(t->tracker, grey, w, h, d, n, t->ids, err)
                       : strix_tracker_update(t->tracker, img, d, n, t->ids, err);
    /* a skipped frame keeps the last frame's; detections past those (a replayed file can skip a frame with more,
     * or its first) have none */
    for (int i = inferred ? 0 : t->n_last; !st && i < n; i++) {
        strix_detection *b = &t->boxes[i];
        float xyxy[4];
        *b = d[i];
        if (obb) memcpy(t->corners + 8 * (size_t)i, task->corners + 8 * (size_t)i, sizeof(float) * 8);
        if (!inferred) t->ids[i] = -1;
        if (!inferred || !strix_tracker_box(t->tracker, i, xyxy)) continue;
        float r[5];
        if (obb && strix_tracker_box_xywhr(t->tracker, i, r)) { /* OBB.xyxy, not clipped: centred on the box */
            strix_xywhr_corners(r, 1, t->corners + 8 * (size_t)i);
            b->x1 = xyxy[0], b->y1 = xyxy[1], b->x2 = xyxy[2], b->y2 = xyxy[3];
            continue;
        }
        b->x1 = clip(xyxy[0], w);
        b->y1 = clip(xyxy[1], h);
        b->x2 = clip(xyxy[2], w);
        b->y2 = clip(xyxy[3], h);
    }
    if (inferred || n > t->n_last) t->n_last = n;
    stage_pop(t->nvtx);
    if (!st) st = strix_counter_add(t->counter, index, time, t->boxes, t->ids, n, t->cross, n_cross, err);
    return st;
}

void tracking_close(tracking *t)
{
    strix_tracker_free(t->tracker);
    strix_counter_free(t->counter);
    free(t->ids);
    free(t->boxes);
    free(t->cross);
    free(t->corners);
    memset(t, 0, sizeof *t);
}
