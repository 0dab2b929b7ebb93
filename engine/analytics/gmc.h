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

/* NULL when memory runs out. */
strix_gmc *strix_gmc_create(void);
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
 * fixed-point grey, then INTER_LINEAR to (width / 2) x (height / 2)), or
 * part of it: frame rows y0..y1-1 into grey rows y0 / 2..y1 / 2 - 1, with y0
 * and y1 even when the frame's height is (each band's rows are then the
 * same bytes as the whole frame's); a frame of odd height only whole (y0 =
 * 0, y1 = its height: its half-size rows mix three rows).  In the widest
 * build this CPU runs.  Returns 0, or -1 when memory runs out. */
int strix_gmc_grey(const uint8_t *pix, int width, int stride, int bgr, int y0, int y1, uint8_t *grey);

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
