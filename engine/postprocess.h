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
} strix_nms_params;

/* Workspace bytes for strix_nms with A anchors and p->max_det. */
size_t strix_nms_workspace(size_t anchors, const strix_nms_params *p);

/* head: [A, 4 + nc] (cx, cy, w, h, scores...) of one image.  Writes at most
 * max_det detections to out in tensor pixels (x1 y1 x2 y2), sorted by
 * decreasing score, ties broken by lower anchor index; returns the count. */
int strix_nms(strix_detection *out, const float *head, size_t anchors,
              const strix_nms_params *p, void *workspace);

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

#endif
