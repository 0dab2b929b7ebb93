/* track_ocsort.h — OC-SORT's own state and numbers (Ultralytics 8.4.190
 * oc_sort.py: OCSortTrack's observations and velocity, OCSORT's direction
 * cost and the virtual observations of its re-update), one entry per track
 * slot of the tracker in engine/analytics/track.c, which runs the
 * associations and the Kalman filter around them. */
#ifndef STRIX_TRACK_OCSORT_H
#define STRIX_TRACK_OCSORT_H

typedef struct strix_ocsort strix_ocsort;

/* delta_t: oc_sort.py's delta_t (>= 0).  NULL when memory runs out. */
strix_ocsort *strix_ocsort_create(int delta_t);
void strix_ocsort_free(strix_ocsort *o);
/* Room for track slots 0..slots-1 (grown with the tracker's pool); 0, or -1
 * on OOM (the state kept). */
int strix_ocsort_reserve(strix_ocsort *o, int slots);

/* OCSortTrack.activate: slot holds a new track from frame on, with its
 * Kalman state (mean[8], cov[64]) and xyxy, its box from that state as
 * float32 (the track's first observation). */
void strix_ocsort_start(strix_ocsort *o, int slot, long frame, const float xyxy[4], const double *mean,
                        const double *cov);
/* The detection box xyxy (float32 x1, y1, x2, y2) matched to the track of
 * slot at frame, before its Kalman update (_record_observation). */
void strix_ocsort_observe(strix_ocsort *o, int slot, long frame, const float xyxy[4]);
/* After that update: the state kept for a re-update, the velocity taken anew. */
void strix_ocsort_settle(strix_ocsort *o, int slot, const double *mean, const double *cov);

/* The direction cost of the track of slot against detection box det
 * (_velocity_direction_cost, before the inertia weight): acos of the cosine
 * between the track's velocity and the direction from its last observation
 * to det's centre, / pi; 0 without a velocity. */
float strix_ocsort_direction_cost(const strix_ocsort *o, int slot, const float det[4]);
/* The track's last observation into xyxy: 1; 0 when its x1 is negative
 * (_ocr_distance then takes the Kalman box). */
int strix_ocsort_last(const strix_ocsort *o, int slot, float xyxy[4]);

/* Deep OC-SORT's camera-motion warp of the track's last observation
 * (DeepOCSortTrack.multi_gmc): its centre moved by the 2x3 affine H, its
 * width and height kept; nothing when its x1 is negative.  The other
 * observations (the velocity's, the re-update's) stay as detected. */
void strix_ocsort_warp(strix_ocsort *o, int slot, const double H[6]);

/* The re-update (apply_oru) of the track of slot found again at frame: the
 * frames since its last observation, with mean and cov set back to the
 * state saved then, when more than one; 0 (nothing to do) otherwise. */
int strix_ocsort_gap(const strix_ocsort *o, int slot, long frame, double *mean, double *cov);
/* Virtual observation step (1..gap-1) of that gap towards detection box
 * det, as a measurement (cx, cy, w / h, h) in float32. */
void strix_ocsort_virtual(const strix_ocsort *o, int slot, const float det[4], int step, int gap, float m[4]);

#endif
