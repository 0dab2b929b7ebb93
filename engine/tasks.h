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

/* ---- masks ---------------------------------------------------------- */

/* Masks at the letterboxed input, as SegmentationPredictor's default path:
 * process_mask(protos, coeffs, boxes, (in_h, in_w), upsample=True).
 *   protos [c, mh, mw] fp32: one image of the Proto output (NCHW, mh = in_h/4)
 *   coeffs [n, c]: each kept box's mask coefficients
 *   boxes  [n, 4]: x1 y1 x2 y2 in input (tensor) pixels, before scale_boxes
 *   masks  [n, in_h, in_w] uint8 out: 1 inside the mask, else 0
 * Per box: logits = coeffs x protos, bilinear upsample to the input
 * (F.interpolate, align_corners=False), > 0, then cropped to the box
 * (columns x1 <= x < x2, rows likewise).  Ultralytics then drops the
 * boxes whose mask came out empty; nonempty (may be NULL) gets a 0/1 per box
 * for that.  Errors: STRIX_E_ARG, STRIX_E_NOMEM. */
strix_status strix_process_mask(const float *protos, int c, int mh, int mw, const float *coeffs,
                                const float *boxes, int n, int in_h, int in_w, uint8_t *masks,
                                uint8_t *nonempty, strix_error *err);

/* Masks at the source image (--retina-masks): process_mask_native.
 *   boxes [n, 4]: x1 y1 x2 y2 already in source pixels (strix_scale_boxes)
 *   masks [n, src_h, src_w] uint8 out
 * The logits are upsampled by f (1, 2 or 4, the smallest that crops the
 * letterbox padding on whole pixels), the padding cropped and the rest
 * resized to the source (scale_masks), > 0, cropped to the box. */
strix_status strix_process_mask_native(const float *protos, int c, int mh, int mw, const float *coeffs,
                                       const float *boxes, int n, int src_h, int src_w, uint8_t *masks,
                                       uint8_t *nonempty, strix_error *err);

/* One mask [mh, mw] (0/1, at the letterboxed input) to the source image
 * [src_h, src_w] as Annotator.masks draws it: scale_masks (the padding
 * cropped, bilinear resize of the 0/1 values) then > 0.5.  A mask already
 * at the source size is copied.  Errors: STRIX_E_ARG, STRIX_E_NOMEM. */
strix_status strix_mask_to_source(const uint8_t *mask, int mh, int mw, uint8_t *out, int src_h, int src_w,
                                  strix_error *err);

/* ---- polygons ------------------------------------------------------- */

/* Contours or polygons: n points xy[2 * n] (growable, owned). */
typedef struct strix_polygon {
    float *xy;
    int n, cap;
} strix_polygon;
void strix_polygon_free(strix_polygon *p);

typedef enum strix_segment_strategy {
    STRIX_SEGMENT_ALL = 0, /* Results.masks.xy: every contour, merged by merge_multi_segment */
    STRIX_SEGMENT_LARGEST  /* the contour with the most points */
} strix_segment_strategy;

/* masks2segments of one mask [h, w] (nonzero = inside): the external
 * contours as cv2.findContours(RETR_EXTERNAL, CHAIN_APPROX_SIMPLE) finds
 * them, then one polygon per strategy, in mask pixels (integers).  No
 * contour: out->n = 0.  Errors: STRIX_E_ARG, STRIX_E_NOMEM. */
strix_status strix_mask_segment(const uint8_t *mask, int h, int w, strix_segment_strategy strategy,
                                strix_polygon *out, strix_error *err);

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

/* ---- coordinates ---------------------------------------------------- */

/* scale_coords(img1=(in_h, in_w), coords, img0=(src_h, src_w)): n points
 * of stride floats each (x, y first: polygons stride 2, keypoints 2 or 3),
 * in place: minus the letterbox padding, divided by the per-axis gain,
 * clipped to [0, src_w] x [0, src_h]; other channels (visibility) kept.
 * normalize: then divided by src_w, src_h (the xyn of save_txt). */
void strix_scale_coords(float *coords, int n, int stride, int in_w, int in_h, int src_w, int src_h,
                        int normalize);

/* ---- oriented boxes ------------------------------------------------- */

/* Probabilistic IoU (batch_probiou) of two boxes cx cy w h r (radians). */
float strix_probiou(const float a[5], const float b[5]);

/* regularize_rboxes: angle into [0, pi/2), w and h swapped when the angle
 * mod pi is >= pi/2.  xywhr [n, 5] in place. */
void strix_regularize_rboxes(float *xywhr, int n);

/* xywhr2xyxyxyxy: the 4 corners of each box, corners [n, 4, 2] (pt1 =
 * c + v1 + v2, pt2 = c + v1 - v2, pt3 = c - v1 - v2, pt4 = c - v1 + v2,
 * v1 = w/2 (cos r, sin r), v2 = h/2 (-sin r, cos r)). */
void strix_xywhr_corners(const float *xywhr, int n, float *corners);

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
