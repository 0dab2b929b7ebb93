/* gmc.h — global motion compensation for BoT-SORT (engine/analytics/track.c):
 * the camera's frame-to-frame motion as a 2x3 similarity transform, as
 * Ultralytics' GMC(method="sparseOptFlow") estimates it
 * (ultralytics/trackers/utils/gmc.py): grey frame downscaled by 2, up to
 * 400 Shi-Tomasi corners, pyramidal Lucas-Kanade from the previous frame's
 * corners, RANSAC similarity fit, translation scaled back to full size. */
#ifndef STRIX_GMC_H
#define STRIX_GMC_H

#include <stdint.h>

typedef struct strix_gmc strix_gmc;

/* NULL when memory runs out.  The grey frame is OpenCV 5's until
 * strix_gmc_set_grey says otherwise. */
strix_gmc *strix_gmc_create(void);
/* opencv4 != 0: the grey frame as OpenCV 4's cv2.cvtColor makes it, (R 4899
 * + G 9617 + B 1868 + 2^13) >> 14; 0 (the default): as OpenCV 5's, (R 9798
 * + G 19235 + B 3735 + 2^14) >> 15, what `pip install ultralytics` brings
 * today.  One grey level apart on some colours, which moves corners. */
void strix_gmc_set_grey(strix_gmc *g, int opencv4);
void strix_gmc_free(strix_gmc *g);

/* One frame, uint8 HWC with 3 channels (bgr: 1 when B comes first), rows
 * stride bytes apart.  H (row-major [2][3]) receives the motion from the
 * previous frame given to this one: x' = H[0] x + H[1] y + H[2], y' = H[3] x
 * + H[4] y + H[5]; the identity on the first frame, when too few corners
 * were followed, or when the frame size changed.  Returns 0, or -1 when
 * memory runs out. */
int strix_gmc_apply(strix_gmc *g, const uint8_t *pix, int width, int height, int stride, int bgr, double H[6]);

/* strix_gmc_apply on a frame whose grey half-size image (strix_gmc_grey)
 * is already made: grey [height / 2][width / 2], dense rows, read until
 * the call returns.  The same H as strix_gmc_apply on the frame. */
int strix_gmc_apply_grey(strix_gmc *g, const uint8_t *grey, int width, int height, double H[6]);

/* The grey half-size image strix_gmc_apply makes of a frame (OpenCV's
 * fixed-point grey, OpenCV 4's when opencv4 != 0 (strix_gmc_set_grey), then
 * INTER_LINEAR to (width / 2) x (height / 2)), or
 * part of it: frame rows y0..y1-1 into grey rows y0 / 2..y1 / 2 - 1, with y0
 * and y1 even when the frame's height is (each band's rows are then the
 * same bytes as the whole frame's); a frame of odd height only whole (y0 =
 * 0, y1 = its height: its half-size rows mix three rows).  In the widest
 * build this CPU runs.  Returns 0, or -1 when memory runs out. */
int strix_gmc_grey(const uint8_t *pix, int width, int stride, int bgr, int opencv4, int y0, int y1, uint8_t *grey);

/* The steps of strix_gmc_apply, for benchmarks: the grey half-size frame,
 * corners, pyramid, Lucas-Kanade, the RANSAC fit. */
enum { GMC_STEP_GREY, GMC_STEP_CORNERS, GMC_STEP_PYRAMID, GMC_STEP_LK, GMC_STEP_FIT, GMC_NSTEPS };

/* on != 0: each strix_gmc_apply from now on records the CPU time (this
 * thread's) its steps take, read with strix_gmc_step_times; off by default
 * (the clock costs a system call or a vDSO read per step). */
void strix_gmc_time_steps(strix_gmc *g, int on);

/* The last frame's step times in seconds (GMC_STEP_* order); 0 for a step
 * that did not run (Lucas-Kanade and the fit on a first frame) and while
 * timing is off. */
void strix_gmc_step_times(const strix_gmc *g, double t[GMC_NSTEPS]);

#endif
