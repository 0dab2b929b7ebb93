/* gmc_steps.h — the per-frame steps of GMC (engine/analytics/gmc.c), built
 * once per instruction set: gmc_kernels.h compiled by gmc_generic.c (the
 * compiler's default target: SSE2 on x86-64, NEON on aarch64) and, on
 * x86-64, by gmc_avx2.c with -mavx2 -mfma (8-wide float vectors, 16-wide int16
 * ones for Lucas-Kanade, and the grey pass's byte shuffles) and by
 * gmc_avx512.c with AVX-512 F/BW/VL/VNNI (twice those widths, a window
 * row of Lucas-Kanade in one 32-lane vector); gmc.c picks the
 * widest the CPU runs when it is created.  Every build gives the same
 * numbers to the last bit (no multiply-add is fused but where the corner
 * pass asks, whose operands make the fused one equal to the generic
 * build's double sum: -ffp-contract=off; float lanes never change an order
 * of summation; integer sums are exact in any order; test_track pins
 * them), so the choice only changes the speed.  Internal to
 * engine/analytics and its tests. */
#ifndef STRIX_GMC_STEPS_H
#define STRIX_GMC_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "gmc.h"

#define GMC_MAX_CORNERS 400
#define GMC_MAX_LEVEL 3
#define GMC_CAND_CAP (4 * GMC_MAX_CORNERS) /* corner candidates held before a selection */
#define GMC_PAD 26 /* border of each pyramid level: a window row as read (24 columns) + 2 */

/* One pyramid level, each plane [(h + 2 GMC_PAD)][pw] int16 with pw = w + 2
 * GMC_PAD: the grey image v (0..255, held as 128 v + 2: gmc_kernels.h's
 * IMG, for Lucas-Kanade's interpolation) with its border reflected as OpenCV's
 * BORDER_REFLECT_101, and its Scharr gradients (OpenCV's calcSharrDeriv
 * sums, |v| <= 4080) with a border of 0 (OpenCV pads them with
 * BORDER_CONSTANT).  int16 throughout, as OpenCV's Lucas-Kanade reads
 * them: the 16-bit multiply-adds take the bilinear weights directly.  The
 * gradients are made with the level, for the frame after, when it is the
 * previous frame; level 0 has none (dx = dy = NULL): its windows start at
 * whole pixels, and Lucas-Kanade makes their gradients as it reads them. */
typedef struct gmc_level {
    int w, h, pw;
    int16_t *img, *dx, *dy; /* one allocation, img first */
} gmc_level;

typedef struct gmc_pyramid {
    int n;
    gmc_level lv[GMC_MAX_LEVEL + 1];
} gmc_pyramid;

typedef struct gmc_cand {
    float v;
    int at; /* y * w + x */
} gmc_cand;

/* doubles in one of corners' row buffers (w + 2 at least: whole 16-lane
 * blocks and one more), and how many rows (gmc_kernels.h, corner_rows) */
#define GMC_CS_ROW(w) ((size_t)((w) + 15) / 16 * 16 + 16)
#define GMC_CS_ROWS 20

/* Scratch sized by the frame (grown when a larger one comes, never
 * per frame): the grey frame and everything the steps work in. */
typedef struct gmc_scratch {
    int width, w; /* full width and half width it was sized for */
    size_t n;     /* half-size pixels it was sized for */
    uint8_t *grey;        /* half-size grey frame [n], made by the grey step */
    const uint8_t *img;   /* the half-size grey frame the steps after grey read: grey, or the
                             caller's (strix_gmc_apply_grey) */
    uint16_t *rows;       /* grey rows of the full frame [2][width] */
    int *row;             /* pyrDown's vertical sums [w + 4] (the AVX2 build's: int16) */
    int16_t *sch;         /* the Scharr pass's column sums and differences [2][w + 2] */
    double *cs;           /* corners' row buffers [GMC_CS_ROWS][GMC_CS_ROW(w)] */
    unsigned char *ok;    /* corners' peak flags [w + 8] */
    gmc_cand *cand;       /* corner candidates [GMC_CAND_CAP] */
    float hint;           /* where the next frame's corners start their floor (corners) */
} gmc_scratch;

/* One build's steps, in the order strix_gmc_apply runs them on a frame
 * (each reads what the one before left in s, sized for the frame by gmc.c;
 * w x h the half size). */
typedef struct gmc_steps {
    /* the grey half-size frame of pix (uint8 HWC, 3 channels, bgr: B
     * first, rows stride bytes apart) into out [height / 2][width / 2],
     * with OpenCV 5's grey (opencv4: OpenCV 4's, gmc.h); rows: [2][width]
     * scratch */
    void (*grey)(const uint8_t *pix, int width, int height, int stride, int bgr, int opencv4, uint8_t *out,
                 uint16_t *rows);
    /* the corners (x, y) of s->img into pts [GMC_MAX_CORNERS][2]: the count */
    int (*corners)(gmc_scratch *s, int w, int h, float *pts);
    /* s->img's pyramid into cur; -1 when memory runs out */
    int (*pyramid)(gmc_scratch *s, gmc_pyramid *cur, int w, int h);
    /* pyramidal Lucas-Kanade of prev's points pts [n][2] (n <= GMC_MAX_CORNERS) into cur: next
     * [n][2] and status[n] (0: lost) */
    void (*lk)(const gmc_pyramid *prev, const gmc_pyramid *cur, const float *pts, int n, float *next,
               unsigned char *status);
} gmc_steps;

extern const gmc_steps strix_gmc_steps_generic;
#if defined(__x86_64__)
extern const gmc_steps strix_gmc_steps_avx2, strix_gmc_steps_avx512;
#endif

enum { GMC_ISA_GENERIC, GMC_ISA_AVX2, GMC_ISA_AVX512, GMC_ISA_COUNT };

/* The widest build this CPU runs (a GMC_ISA_*). */
int strix_gmc_best_isa(void);

/* GMC's last step alone, for tests: estimateAffinePartial2D(p -> q,
 * RANSAC) over n >= 2 pairs (p, q: [n][2], float values): inl[n] the
 * inliers, H after OpenCV's refinement over them; 0, or -1 (no model,
 * or out of memory). */
int strix_gmc_ransac(const double *p, const double *q, int n, unsigned char *inl, double H[6]);

/* strix_gmc_create with a chosen build (a GMC_ISA_*): NULL where the CPU
 * cannot run it (or it is not x86-64), or memory runs out.  For tests and
 * benchmarks. */
strix_gmc *strix_gmc_create_isa(int isa);

#endif
