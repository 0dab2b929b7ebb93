/* tasks.h — Ultralytics 8.4's post-processing of the segment, pose, obb and
 * classify heads, after detection and NMS, on plain host arrays:
 *   masks     process_mask(upsample=True) (the default) and
 *             process_mask_native (--retina-masks), then the Annotator's
 *             scale_masks to bring a mask to the source image for drawing;
 *   polygons  masks2segments (cv2.findContours RETR_EXTERNAL,
 *             CHAIN_APPROX_SIMPLE; strategy "all" as Results.masks.xy, or
 *             "largest") and scale_coords;
 *   keypoints scale_coords (clipped, visibility kept);
 *   obb       batch_probiou (the rotated NMS over it, strix_nms_rotated,
 *             is in postprocess.h), regularize_rboxes, xywhr2xyxyxyxy,
 *             scale_boxes(xywh=True);
 *   classify  Probs.top5.
 * Layouts are stated per function; every array is row-major. */
#ifndef STRIX_TASKS_H
#define STRIX_TASKS_H

#include <stddef.h>
#include <stdint.h>
#include "strix.h"

/* strix.h's "task post-processing" block declares the rest (public, for
 * the Python binding and C callers): strix_process_mask,
 * strix_process_mask_native, strix_polygon, strix_mask_segment,
 * strix_scale_coords and strix_xywhr_corners. */

/* ---- masks ---------------------------------------------------------- */

/* One mask [mh, mw] (0/1, at the letterboxed input) to the source image
 * [src_h, src_w] as Annotator.masks draws it: scale_masks (the padding
 * cropped, bilinear resize of the 0/1 values) then > 0.5.  A mask already
 * at the source size is copied.  Errors: STRIX_E_ARG, STRIX_E_NOMEM. */
strix_status strix_mask_to_source(const uint8_t *mask, int mh, int mw, uint8_t *out, int src_h, int src_w,
                                  strix_error *err);

/* ---- polygons ------------------------------------------------------- */

/* The external contours themselves, in cv2's order: points in all->xy,
 * contour k from starts[k] to starts[k + 1] (points); *n_contours set.
 * starts is grown like all->xy (*starts_cap ints).  For the tests and
 * strix_mask_segment. */
strix_status strix_mask_contours(const uint8_t *mask, int h, int w, strix_polygon *all, int **starts,
                                 int *starts_cap, int *n_contours, strix_error *err);

/* A mask [h, w] (0/1) from a polygon of n points xy[2 * n] in mask
 * pixels, the inverse of strix_mask_segment for masks redrawn from the
 * JSON Lines: a pixel is in when its integer coordinates lie between two
 * of the polygon's crossings of its row (even-odd rule, ends included) or
 * an edge passes it (rounded), so a contour traced through a mask's
 * boundary pixels fills them back (a polygon of 1 or 2 points, a
 * one-pixel-thin mask's, is its dot or line).  xs: scratch of n floats. */
void strix_polygon_fill(const float *xy, int n, float *xs, uint8_t *mask, int h, int w);

/* ---- oriented boxes ------------------------------------------------- */

/* Probabilistic IoU (batch_probiou) of two boxes cx cy w h r (radians). */
float strix_probiou(const float a[5], const float b[5]);

/* regularize_rboxes: angle into [0, pi/2), w and h swapped when the angle
 * mod pi is >= pi/2.  xywhr [n, 5] in place. */
void strix_regularize_rboxes(float *xywhr, int n);

/* The inverse of strix_xywhr_corners for a rectangle's corners [n, 4, 2]
 * (read back from the JSON Lines): xywhr [n, 5], the angle in [-pi, pi]
 * (atan2 of the first edge): the box the corners came from up to float
 * rounding, its angle mod 2 pi (the OBB head's, [-pi/4, 3pi/4), as it was). */
void strix_corners_xywhr(const float *corners, int n, float *xywhr);

/* The OBB predictor's scale_boxes(xywh=True): cx cy w h of xywhr [n, 5]
 * from the input (in_w x in_h) to the source, in place, not clipped; the
 * angle is kept. */
void strix_scale_rboxes(float *xywhr, int n, int in_w, int in_h, int src_w, int src_h);

/* ---- classification ------------------------------------------------- */

/* Probs.top5 for k = 5 (any k here): the indices of the k highest of
 * probs [n] in decreasing order, ties by lower index (torch's argsort of
 * -probs keeps that order up to 16 classes and orders ties arbitrarily
 * beyond); top[0] is Probs.top1 (argmax: the first of equals).  NaN ranks
 * below every number.  Returns min(k, n). */
int strix_topk_probs(const float *probs, int n, int k, int *top);

#endif
