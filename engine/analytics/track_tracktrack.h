/* track_tracktrack.h — TrackTrack (Shim et al., "Focusing on Tracks for
 * Online Multi-Object Tracking", CVPR 2025) as Ultralytics 8.4.190's
 * trackers/track_tracker.py TRACKTRACK runs it (ReID with model: auto's
 * native features; the loose-NMS detections, dets_del): its own track pool,
 * associations and track-aware initialisation, behind the strix_tracker of engine/analytics/track.c,
 * which reads the detections, splits them by score and estimates the
 * camera motion. */
#ifndef STRIX_TRACK_TRACKTRACK_H
#define STRIX_TRACK_TRACKTRACK_H

#include "strix.h"
#include "track_kalman.h"
#include "track_reid.h"

typedef struct strix_tracktrack strix_tracktrack;

/* o: checked options of type STRIX_TRACKER_TRACKTRACK; reid: the
 * tracker's appearance state with with_reid (its detections set for each
 * update, the high-score ones only), NULL without.  NULL when memory runs
 * out. */
strix_tracktrack *strix_tracktrack_create(const strix_track_options *o, strix_reid *reid);
void strix_tracktrack_free(strix_tracktrack *tt);

/* One frame.  d: the frame's detections; high [n_high] the indices of those
 * scoring >= track_high_thresh, low [n_low] of those in (track_low_thresh,
 * track_high_thresh), both ascending, rec [n_rec] of the recovered ones
 * scoring above track_high_thresh (associated with the pool only, never
 * starting a track); H: the camera motion from the last
 * frame (2x3 affine, row-major), NULL for none.  ids [d's count], preset to
 * -1, and boxes [5 x d's count] receive, for each detection a confirmed
 * track took this frame, the track's identity and its box (the reference's
 * row: the Kalman state after the update, float32 x1 y1 x2 y2 and a fifth
 * float unused, or with obb, the detections' oriented boxes, x y w h and
 * the track's angle).  0, or -1 when memory ran out (the tracker is then
 * unusable). */
int strix_tracktrack_update(strix_tracktrack *tt, const double *H, const strix_track_det *d, const int *high,
                            int n_high, const int *low, int n_low, const int *rec, int n_rec, int *ids, float *boxes,
                            int obb);

#endif
