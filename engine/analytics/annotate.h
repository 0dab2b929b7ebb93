/* annotate.h — draw detections onto RGB frames: a box and a "name score"
 * label per detection, a colour per class, line width and text size scaled
 * with the frame.  Used for images and, later, every video frame. */
#ifndef STRIX_ANNOTATE_H
#define STRIX_ANNOTATE_H

#include <stdint.h>
#include "strix.h"

typedef struct strix_annotate_style {
    int line_width;  /* 0 = from the frame size, as Ultralytics: max(round((h+w+3)/2*0.003), 2)
                        (the sum of the HWC shape, channels included) */
    int show_score;  /* 1 (default): "dog 0.87"; 0: "dog" */
    int show_label;  /* 1 (default) */
    const int *track_ids; /* NULL (default), or per detection its track identity (-1: none):
                             boxes then take the colour of their identity and labels
                             read "#7 dog 0.87" */
} strix_annotate_style;

void strix_annotate_style_init(strix_annotate_style *s);

/* The colour of a class id (Ultralytics' 20-colour palette, cycled): rgb[3]. */
void strix_class_color(int class_id, uint8_t rgb[3]);

/* Draw dets on an RGB image (rows of stride bytes).  label(i) supplies the
 * class name of detection i (may be NULL: "class<id>"); text is clipped to
 * the frame, never written outside it. */
void strix_annotate(uint8_t *rgb, int width, int height, int stride,
                    const strix_detection *dets, int n, const char *const *class_names,
                    int n_names, const strix_annotate_style *style);

/* strix_annotate for oriented boxes: corners [n, 4, 2] (strix_xywhr_corners
 * in source pixels) drawn as closed polygons, the label at the first corner
 * (Ultralytics' box_label of xyxyxyxy); dets give each box's class and score.
 * corners NULL: the axis-aligned boxes of dets (strix_annotate). */
void strix_annotate_rotated(uint8_t *rgb, int width, int height, int stride, const strix_detection *dets,
                            const float *corners, int n, const char *const *class_names, int n_names,
                            const strix_annotate_style *style);

/* Classification: k lines "name 0.87" for the classes top[k] (strix_topk_probs;
 * Ultralytics draws k = 5) with their probs[class], white on translucent grey
 * from (x, x), x = round(0.03 height), as Results.plot places them. */
void strix_annotate_probs(uint8_t *rgb, int width, int height, int stride, const int *top, const float *probs,
                          int k, const char *const *class_names, int n_names);

/* Translucent instance masks, as Annotator.masks (alpha 0.5 in Results.plot):
 * masks [n, height, width] (0/1, at the frame: strix_mask_to_source for
 * the default ones), colour of mask i strix_class_color(class_ids[i]) (NULL:
 * of n - 1 - i, Ultralytics' order without boxes).  Per pixel, over the
 * masks covering it: out = trunc((in/255 * prod(1 - alpha) + max(alpha *
 * colour/255)) * 255).  Draw them before the boxes. */
void strix_draw_masks(uint8_t *rgb, int width, int height, int stride, const uint8_t *masks, int n,
                      const int *class_ids, float alpha);

/* Keypoints of one detection, kpts [nk, ndim] (ndim 2: x y, 3: x y
 * visibility) in frame pixels, as Annotator.kpts: a filled disc of radius
 * (Results.plot: 5) per keypoint whose visibility is >= conf_thr (0.25;
 * ndim 2: not at (0, 0)); when nk is 17 (COCO), the skeleton's 19 limbs in
 * COCO's colours, ceil(line_width / 2) thick (0: from the frame size), a
 * limb drawn when both ends pass and none is negative.  color NULL: the
 * pose palette (17 points) or the class palette by keypoint index; else
 * every point and limb in color (track colours). */
void strix_draw_keypoints(uint8_t *rgb, int width, int height, int stride, const float *kpts, int nk, int ndim,
                          int line_width, int radius, float conf_thr, const uint8_t *color);

/* The colour of a track identity (the same palette, cycled by identity). */
void strix_track_color(int id, uint8_t rgb[3]);

/* A straight line of the given thickness from (x0, y0) to (x1, y1), blended
 * over the frame with opacity alpha in 0..1; clipped to the frame. */
void strix_draw_line(uint8_t *rgb, int width, int height, int stride, float x0, float y0, float x1, float y1,
                     int thickness, const uint8_t color[3], float alpha);

/* A fading trail through n points xy[n][2], oldest first: each segment more
 * opaque than the one before, the newest fully. */
void strix_draw_trail(uint8_t *rgb, int width, int height, int stride, const float *xy, int n, int thickness,
                      const uint8_t color[3]);

/* Draw text with the embedded bitmap font at (x, y) (top-left), scale >= 1
 * pixels per font pixel, in colour fg on an optional background box bg
 * (NULL for none).  Clipped to the frame. */
void strix_draw_text(uint8_t *rgb, int width, int height, int stride, int x, int y,
                     const char *text, int scale, const uint8_t fg[3], const uint8_t *bg);
int strix_text_width(const char *text, int scale);
int strix_text_height(int scale);

#endif
