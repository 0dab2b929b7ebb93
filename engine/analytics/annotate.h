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
