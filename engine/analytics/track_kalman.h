/* track_kalman.h — the Kalman filters, box geometry and track lists the
 * trackers of track.c and track_tracktrack.c share, as Ultralytics
 * 8.4.190's utils/kalman_filter.py (KalmanFilterXYAH, KalmanFilterXYWH),
 * stracks.py's multi_gmc, joint_stracks and sub_stracks, and
 * metrics.bbox_ioa compute them.
 *
 * State, doubles: mean[8] = (cx, cy, a, h, vcx, vcy, va, vh) with a = w / h
 * (xywh 0: measurements (cx, cy, w / h, h)) or (cx, cy, w, h, vcx, vcy, vw,
 * vh) (xywh 1: measurements (cx, cy, w, h)); cov[64], row-major 8 x 8.
 * Boxes are float32 (x1, y1, x2, y2). */
#ifndef STRIX_TRACK_KALMAN_H
#define STRIX_TRACK_KALMAN_H

#include <math.h>

/* A list of track slots (indices into a tracker's pool).  A live track has
 * one slot, so slots stand for identities. */
typedef struct strix_slots {
    int *v;
    int n, cap;
} strix_slots;

/* Append x: 0, or -1 on OOM. */
int strix_slots_push(strix_slots *l, int x);
int strix_slots_has(const strix_slots *l, int x);
/* a := a followed by the slots of b not already in a (joint_stracks): 0, or -1 on OOM. */
int strix_slots_join(strix_slots *a, const strix_slots *b);
/* a := a without the slots of b (sub_stracks). */
void strix_slots_sub(strix_slots *a, const strix_slots *b);

/* A detection as the reference holds it.  An oriented box (STrack from
 * xywha) is held in its long-edge form: w < h swapped, the angle + pi/2,
 * and tlwh its unrotated (cx - w / 2, cy - h / 2, w, h). */
typedef struct strix_track_det {
    float tlwh[4]; /* x1, y1, w, h, float32 */
    float score;
    int index;     /* in the caller's array */
    double angle;  /* oriented boxes: radians (float64, as the reference's); else unused */
} strix_track_det;

/* The measurement of a detection, float32 as the reference's convert_coords:
 * (cx, cy, w, h) for xywh, (cx, cy, w / h, h) otherwise. */
static inline void strix_det_measure(const strix_track_det *d, int xywh, float m[4])
{
    m[0] = d->tlwh[0] + d->tlwh[2] / 2;
    m[1] = d->tlwh[1] + d->tlwh[3] / 2;
    m[2] = xywh ? d->tlwh[2] : d->tlwh[2] / d->tlwh[3];
    m[3] = d->tlwh[3];
}

/* Its box (x1, y1, x1 + w, y1 + h) in float32, as the reference's xyxy. */
static inline void strix_det_xyxy(const strix_track_det *d, float b[4])
{
    b[0] = d->tlwh[0];
    b[1] = d->tlwh[1];
    b[2] = d->tlwh[0] + d->tlwh[2];
    b[3] = d->tlwh[1] + d->tlwh[3];
}

/* initiate: the state of a new track from measurement m (float32). */
void strix_kf_initiate(double *mean, double *cov, int xywh, const float m[4]);
/* multi_predict's step: x' = F x, P' = (F P) F^T + Q. */
void strix_kf_predict(double *mean, double *cov, int xywh);
/* The single-track predict (KalmanFilterXYAH.predict, xyah only): F (P F^T),
 * which sums the four terms of a position entry in another order. */
void strix_kf_predict_one(double *mean, double *cov);
/* update with measurement m; r_scale multiplies the measurement noise
 * (1: plain; NSA-Kalman's max(1 - score, 0.05) as project(confidence=)). */
void strix_kf_update(double *mean, double *cov, int xywh, const float m[4], double r_scale);
/* multi_gmc's warp by the 2x3 affine H (row-major); xyah 1: Deep OC-SORT's,
 * which moves only the centre and its velocity (aspect, height and their
 * velocities stay); xyah STRIX_KF_WARP_OBB: multi_gmc's for oriented boxes,
 * the sizes and their velocities scaled by |R's first column| (the angle,
 * the caller's, turns by strix_kf_warp_angle). */
#define STRIX_KF_WARP_OBB 2
void strix_kf_warp(double *mean, double *cov, const double H[6], int xyah);
/* The rotation multi_gmc adds to an oriented track's angle: atan2(R10, R00). */
static inline double strix_kf_warp_angle(const double H[6]) { return atan2(H[3], H[0]); }
/* The state's box as the reference's xyxy, in float32 (x1 = cx - w / 2 and
 * x2 = w + x1 in double, then stored). */
void strix_kf_xyxy(const double *mean, int xywh, float b[4]);
/* An oriented track's box as the reference's xywha, in float32: the
 * state's (x1 + w / 2, y1 + h / 2, w, h) in double (x1 = cx - w / 2), and
 * its angle. */
void strix_kf_xywha(const double *mean, int xywh, double angle, float r[5]);

/* A detection's oriented box as the reference's xywha, in float32 (its
 * centre x1 + w / 2 in float32). */
static inline void strix_det_xywha(const strix_track_det *d, float r[5])
{
    r[0] = d->tlwh[0] + d->tlwh[2] / 2;
    r[1] = d->tlwh[1] + d->tlwh[3] / 2;
    r[2] = d->tlwh[2];
    r[3] = d->tlwh[3];
    r[4] = (float)d->angle;
}

/* The angle an oriented track takes from detection angle a (update and
 * re_activate): the half-turn form of a (a or a +- pi) nearest the track's
 * angle old, so it never flips; Python's round, halves to even. */
static inline double strix_obb_angle(double old, double a)
{
    const double pi = 3.141592653589793;
    return a - pi * nearbyint((a - old) / pi);
}
/* The intersection of two float32 boxes, as metrics.bbox_ioa.  The boxes
 * are finite, so plain comparisons stand for fminf/fmaxf (not inlined). */
static inline float strix_box_inter(const float a[4], const float b[4])
{
#define MIN(x, y) ((x) < (y) ? (x) : (y))
#define MAX(x, y) ((x) > (y) ? (x) : (y))
    float iw = MIN(a[2], b[2]) - MAX(a[0], b[0]), ih = MIN(a[3], b[3]) - MAX(a[1], b[1]);
#undef MIN
#undef MAX
    return (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
}

/* IoU of box1 a and box2 b as metrics.bbox_ioa(iou=True): inter / (union +
 * 1e-7), in float32. */
static inline float strix_box_iou(const float a[4], const float b[4])
{
    float inter = strix_box_inter(a, b);
    float area_b = (b[2] - b[0]) * (b[3] - b[1]), area_a = (a[2] - a[0]) * (a[3] - a[1]);
    float uni = area_b + area_a - inter;
    return inter / (uni + 1e-7f);
}

/* The fraction of box2 b that box1 a covers, as metrics.bbox_ioa (iou=False). */
static inline float strix_box_ioa(const float a[4], const float b[4])
{
    return strix_box_inter(a, b) / ((b[2] - b[0]) * (b[3] - b[1]) + 1e-7f);
}

#endif
