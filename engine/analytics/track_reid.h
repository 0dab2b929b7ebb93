/* track_reid.h — the appearance (ReID) state BoT-SORT, Deep OC-SORT and
 * TrackTrack share with with_reid and model: auto (Ultralytics 8.4.190's
 * trackers/utils/reid.py smooth_feature, utils/matching.py
 * embedding_distance, track_tracker.py _cosine_distance): per track slot
 * its current and smoothed feature, per detection of the frame its
 * feature normalised.  Features are float32 vectors of one length, dim. */
#ifndef STRIX_TRACK_REID_H
#define STRIX_TRACK_REID_H

typedef struct strix_reid strix_reid;

/* NULL when memory runs out. */
strix_reid *strix_reid_create(void);
void strix_reid_free(strix_reid *r);
/* Room for track slots 0..slots-1 (grown with a tracker's pool); 0, or -1 on OOM (the state kept). */
int strix_reid_reserve(strix_reid *r, int slots);

/* The frame's detection features, feats [n][dim] as the detector gives
 * them (not normalised), or none (feats NULL: the detections carry no
 * feature, as Ultralytics' trackers given no feats).  dim must stay the
 * same over a stream.  0, or -1 on OOM. */
int strix_reid_set_dets(strix_reid *r, const float *feats, int n, int dim);
/* Detection i carries no feature this frame (TrackTrack's low-score ones). */
void strix_reid_drop_det(strix_reid *r, int i);
/* 1 when detection i carries a feature (its norm was not below 1e-12). */
int strix_reid_det_has(const strix_reid *r, int i);

/* A new track in slot from detection i: its features are the detection's
 * (none when it has none). */
void strix_reid_start(strix_reid *r, int slot, int i);
/* update_features of the track in slot with detection i's feature, when it
 * has one: smooth_feature with the weights a on the old smoothed feature
 * and b on the new one (float32 alpha and 1 - alpha as the reference
 * types them). */
void strix_reid_update(strix_reid *r, int slot, int i, float a, float b);

/* embedding_distance of the track in slot and detection i: 1 - cosine,
 * at least 0, float32; 2 when either has no feature. */
float strix_reid_embedding_distance(const strix_reid *r, int slot, int i);
/* TrackTrack's _cosine_distance: 1 - dot (the features are unit length),
 * clipped to 0..1; NaN when either has no feature. */
float strix_reid_cosine_distance(const strix_reid *r, int slot, int i);

#endif
