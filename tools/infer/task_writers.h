/* task_writers.h — the task fields of infer's JSON and JSON Lines, named
 * and laid out as Ultralytics' Results.summary() writes them, and the
 * per-task parts of the YOLO txt labels Results.save_txt writes.  Each
 * writes one self-contained piece after which the caller continues its
 * object or line; numbers as strix_json_float writes them (the shortest
 * decimal that reads back as the same float; Ultralytics rounds to 5
 * decimals). */
#ifndef STRIX_TASK_WRITERS_H
#define STRIX_TASK_WRITERS_H

#include <stdio.h>

/* "segments": {"x": [...], "y": [...]}: a polygon xy [n, 2] in source
 * pixels (Results.masks.xy: strix_mask_segment + strix_scale_coords). */
void strix_json_segments(FILE *f, const float *xy, int n);

/* "keypoints": {"x": [...], "y": [...], "visible": [...]}: kpts [nk, ndim]
 * in source pixels; "visible" only when ndim is 3. */
void strix_json_keypoints(FILE *f, const float *kpts, int nk, int ndim);

/* "obb": {"x1": ., "y1": ., ..., "x4": ., "y4": .}: the 4 corners [4, 2]
 * of an oriented box in source pixels (summary's "box" of an OBB result). */
void strix_json_obb(FILE *f, const float corners[8]);
/* "detection_obb": {...}, the same of a tracked detection's own box (its
 * "obb" is then the tracker's). */
void strix_json_detection_obb(FILE *f, const float corners[8]);

/* "probs": [{"name": ., "class": ., "confidence": .}, ...]: the k classes
 * top[k] (strix_topk_probs, k = 5 as summary) and their probs[class];
 * class names from names (n_names; a class outside them: its number). */
void strix_json_probs(FILE *f, const int *top, const float *probs, int k, const char *const *names, int n_names);

/* save_txt's coordinates: for each of n points (stride floats, x y first)
 * " x y" normalized by the source size (float32 division, "%g"), then
 * " v" when with_visibility (keypoints with ndim 3).  A segment's line is
 * its class then strix_txt_points(polygon) (Ultralytics omits a polygon of
 * fewer than 3 points); a pose line adds strix_txt_points(kpts) after the
 * box; an OBB line is the class then strix_txt_points(corners, 4). */
void strix_txt_points(FILE *f, const float *xy, int n, int stride, int with_visibility, int src_w, int src_h);

/* save_txt of a classification: k lines "0.87 name" (probability "%.2f"). */
void strix_txt_probs(FILE *f, const int *top, const float *probs, int k, const char *const *names, int n_names);

#endif
