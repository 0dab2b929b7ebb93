/* postprocess.h — Ultralytics' non_max_suppression and scale_boxes on one
 * image's decoded head. */
#ifndef STRIX_POSTPROCESS_H
#define STRIX_POSTPROCESS_H

#include <stddef.h>
#include "strix.h"
#include "letterbox.h"

typedef struct strix_nms_params {
    float conf;   /* keep anchors whose best class score is > conf */
    float iou;    /* suppress when IoU > iou */
    int max_det;  /* keep at most this many */
    int max_nms;  /* at most this many candidates enter NMS (Ultralytics: 30000; 0 = 30000) */
    int agnostic; /* 1: ignore classes when suppressing */
    int nc;
    const unsigned char *classes; /* NULL keeps all; else nc flags: drop an anchor whose best
                                     class c has classes[c] == 0 (before NMS, as Ultralytics) */
    int row;         /* floats per anchor of head: 4 + nc + the task's channels; 0 means 4 + nc */
    float *rows_out; /* NULL, or room for max_det rows of `row` floats: each detection's whole
                        head row (its mask coefficients, keypoints or angle), in output order */
    int *anchors_out; /* NULL, or room for max_det ints: each detection's anchor (its row in head),
                         in output order (Ultralytics' return_idxs) */
    /* NULL, or a second selection of the same candidates at IoU loose_iou (TrackTrack's recovered
     * detections, strix_recovered_dedup): per image max_det detections in loose_out, their rows in
     * loose_rows (NULL: not wanted), the count in loose_counts[image]; a one-to-one head, whose selection
     * ignores the IoU, gives none */
    strix_detection *loose_out;
    float *loose_rows;
    int *loose_counts;
    float loose_iou;
} strix_nms_params;

/* Workspace bytes for strix_nms with A anchors and p->max_det. */
size_t strix_nms_workspace(size_t anchors, const strix_nms_params *p);

/* head: [A, 4 + nc] (cx, cy, w, h, scores...) of one image.  Writes at most
 * max_det detections to out in tensor pixels (x1 y1 x2 y2), sorted by
 * decreasing score, ties broken by lower anchor index; returns the count. */
int strix_nms(strix_detection *out, const float *head, size_t anchors,
              const strix_nms_params *p, void *workspace);

/* Oriented boxes (OBB heads): head rows [A, 4 + nc + 1] (cx, cy, w, h of the
 * rotated box in tensor pixels, scores, the angle r in radians).  As
 * Ultralytics' non_max_suppression(rotated=True): the candidates as in
 * strix_nms, their centres offset by class, then strix_nms_rotated; out's
 * boxes are the axis-aligned bounds of the rotated boxes (Ultralytics'
 * OBB.xyxy), rows_out (p->row = 4 + nc + 1) their xywhr. */
size_t strix_nms_obb_workspace(size_t anchors, const strix_nms_params *p);
int strix_nms_obb(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p,
                  void *workspace);

/* A one-to-one head's selection instead of NMS (YOLO26 with nms_free:
 * Ultralytics' Detect.postprocess, then the end2end branch of
 * non_max_suppression; p->iou unused): the k = min(max(max_det, 300), A)
 * anchors of highest best-class score, then the k highest (anchor, class)
 * scores among those (a box may come back once per class; agnostic: each
 * anchor's best class only), then those above conf (and in classes), at most
 * max_det, by decreasing score. */
size_t strix_topk_workspace(size_t anchors, const strix_nms_params *p);
int strix_topk(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p, void *workspace);

/* Map boxes from tensor pixels back to source pixels and clip to the source,
 * as Ultralytics' scale_boxes(padding=True) + clip_boxes: only info's source
 * and tensor sizes are used, the geometry being recomputed from them as
 * Ultralytics does. */
void strix_scale_boxes(strix_detection *dets, int n, const strix_letterbox_info *info);

/* The geometry scale_boxes and scale_coords undo, from the tensor (dst)
 * and source sizes: x_src = (x - pad_x) / gain_x in float32, likewise y. */
typedef struct strix_scale_geom {
    float gain_x, gain_y, pad_x, pad_y;
} strix_scale_geom;
void strix_scale_geometry(int dst_w, int dst_h, int src_w, int src_h, strix_scale_geom *g);

/* Ultralytics' rotated NMS (TorchNMS.fast_nms with batch_probiou): boxes
 * xywhr [n, 5] (with the caller's per-class offset on cx, cy), scores [n].
 * In decreasing score (ties: lower index first) a box is dropped when any
 * box before it, kept or not, has probiou > iou_thr (fast NMS does not
 * let dropped boxes stop suppressing).  keep [n] gets the kept indices in
 * that order; returns their count (-1 when out of memory). */
int strix_nms_rotated(const float *xywhr, const float *scores, int n, float iou_thr, int *keep);

/* Ultralytics' compute_dets_del (trackers/track_tracker.py): of the n_loose
 * detections a looser NMS kept (source pixels, by decreasing score), keep
 * those whose largest box_iou (float32, inter / (area_loose + area_tight -
 * inter + 1e-7)) with the n_tight detections is below 0.97, in order;
 * none when n_tight is 0.  Oriented boxes (loose_xywhr, tight_xywhr not
 * NULL, 5 floats each): the IoU of their corners' bounds (OBB.xyxy, not
 * clipped), loose_xywhr compacted with loose.  Returns the count kept. */
int strix_recovered_dedup(strix_detection *loose, float *loose_xywhr, int n_loose, const strix_detection *tight,
                          const float *tight_xywhr, int n_tight);

/* A task head's row layout: [4 + nc + extra], the task's channels last. */
typedef struct strix_task_layout {
    strix_task task;
    int nc, extra, kpt_d;
} strix_task_layout;

/* Floats per detection of strix_scale_task_values: segment 4 + extra (the
 * box, then the mask coefficients), pose extra (keypoints x dims), obb 5
 * (xywhr); 0 otherwise. */
int strix_task_stride(const strix_task_layout *t);

/* The task values of n detections in source pixels, from their head rows
 * (rows_out, tensor pixels) as Ultralytics' predictors make them: segment's
 * box x1 y1 x2 y2 in tensor pixels (not clipped: process_mask's crop), then
 * its coefficients as they are; pose's keypoints through scale_coords (the
 * letterbox undone, clipped to the source; visibility as it is); obb's
 * xywhr through scale_boxes(xywh=True) (not clipped), whose corners' bounds
 * (clipped) then replace dets[i]'s box.  vals: n x strix_task_stride. */
void strix_scale_task_values(float *vals, strix_detection *dets, const float *rows, int n, const strix_task_layout *t,
                             const strix_letterbox_info *info);

#endif
