/* gmc.c — camera motion between consecutive frames for BoT-SORT, the steps of
 * Ultralytics' GMC "sparseOptFlow" (ultralytics/trackers/utils/gmc.py):
 * grey half-size frame, corners, pyramid and pyramidal Lucas-Kanade
 * (gmc_kernels.h, built per instruction set: gmc_steps.h), then here
 * estimateAffinePartial2D(RANSAC, threshold 3, confidence 0.99, 2000
 * iterations) and the least-squares similarity over the inliers (what
 * OpenCV's Levenberg-Marquardt refinement converges to: the residuals are
 * linear in the four parameters).
 * Written here rather than linked: the runtime has no OpenCV, and these
 * steps are a few hundred lines.  RANSAC is OpenCV's step for step (its
 * generator, its way of drawing a sample, its closed-form 2-point model,
 * its float32 errors), so it picks OpenCV's inliers from the same points;
 * the least-squares fit over them is what OpenCV's refinement converges to,
 * within a few 1e-6 px (the one step not bit-equal on frames whose corners
 * and points are; gmc_kernels.h says where the corners can differ).
 *
 * The frame's buffers live in the handle and grow with the frame, never per
 * frame; the current frame's pyramid becomes the previous one by a swap.
 * strix_gmc_apply_grey starts from a grey frame made elsewhere
 * (strix_gmc_grey, e.g. by a video reader as it converts the frame), the
 * steps after the grey one reading it where it is (gmc_scratch.img). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_steps.h"

#define RANSAC_THRESH 3.0
#define RANSAC_CONF 0.99
#define RANSAC_ITERS 2000

struct strix_gmc {
    int fw, fh;           /* full frame size of the previous frame */
    int have_prev;
    gmc_pyramid prev, cur;
    const gmc_steps *steps; /* of the build this CPU runs (gmc_steps.h) */
    int timed;              /* strix_gmc_time_steps */
    int grey_cv4;           /* strix_gmc_set_grey */
    double t0, times[GMC_NSTEPS];
    float *prev_pts;      /* [n_prev][2] corners of the previous frame (half size) */
    int n_prev;
    float *pts, *next;    /* [GMC_MAX_CORNERS][2] */
    unsigned char *status, *mask; /* [GMC_MAX_CORNERS], RANSAC's inlier masks [2][GMC_MAX_CORNERS] */
    double *pq;           /* followed pairs for RANSAC: [2][GMC_MAX_CORNERS][2] */
    gmc_scratch s;
};

int strix_gmc_best_isa(void)
{
#if defined(__x86_64__)
    /* __builtin_cpu_supports also checks that the OS saves the ymm / zmm state */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512vnni"))
        return GMC_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return GMC_ISA_AVX2;
#endif
    return GMC_ISA_GENERIC;
}

/* The steps of build isa (a GMC_ISA_* this CPU runs). */
static const gmc_steps *steps_of(int isa)
{
#if defined(__x86_64__)
    if (isa == GMC_ISA_AVX2) return &strix_gmc_steps_avx2;
    if (isa == GMC_ISA_AVX512) return &strix_gmc_steps_avx512;
#else
    (void)isa;
#endif
    return &strix_gmc_steps_generic;
}

strix_gmc *strix_gmc_create_isa(int isa)
{
    if (isa < GMC_ISA_GENERIC || isa > strix_gmc_best_isa()) return NULL; /* each build runs where a wider one does */
    strix_gmc *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->steps = steps_of(isa);
    g->prev_pts = malloc(sizeof(float) * 2 * GMC_MAX_CORNERS);
    g->pts = malloc(sizeof(float) * 2 * GMC_MAX_CORNERS);
    g->next = malloc(sizeof(float) * 2 * GMC_MAX_CORNERS);
    g->status = malloc(GMC_MAX_CORNERS);
    g->mask = malloc(2 * GMC_MAX_CORNERS);
    g->pq = malloc(sizeof(double) * 4 * GMC_MAX_CORNERS);
    if (!g->prev_pts || !g->pts || !g->next || !g->status || !g->mask || !g->pq) {
        strix_gmc_free(g);
        return NULL;
    }
    return g;
}

strix_gmc *strix_gmc_create(void) { return strix_gmc_create_isa(strix_gmc_best_isa()); }

void strix_gmc_set_grey(strix_gmc *g, int opencv4) { g->grey_cv4 = opencv4 != 0; }

static void pyramid_free(gmc_pyramid *p)
{
    for (int i = 0; i <= GMC_MAX_LEVEL; i++) free(p->lv[i].img); /* the level's one allocation */
    memset(p, 0, sizeof *p);
}

static void scratch_free(gmc_scratch *s)
{
    free(s->grey);
    free(s->rows);
    free(s->row);
    free(s->sch);
    free(s->cs);
    free(s->ok);
    free(s->cand);
    memset(s, 0, sizeof *s);
}

/* Scratch for a width x height frame (half size w x h); -1 on OOM. */
static int scratch_reserve(gmc_scratch *s, int width, int w, int h)
{
    size_t n = (size_t)w * (size_t)h;
    if (width <= s->width && w <= s->w && n <= s->n) return 0;
    scratch_free(s);
    s->grey = malloc(n);
    s->rows = malloc(sizeof *s->rows * 2 * (size_t)width);
    s->row = malloc(sizeof *s->row * ((size_t)w + 4));
    s->sch = malloc(sizeof *s->sch * 2 * ((size_t)w + 2));
    s->cs = malloc(sizeof *s->cs * GMC_CS_ROWS * GMC_CS_ROW(w));
    s->ok = malloc((size_t)w + 8);
    s->cand = malloc(sizeof *s->cand * GMC_CAND_CAP);
    if (!s->grey || !s->rows || !s->row || !s->sch || !s->cs || !s->ok || !s->cand) {
        scratch_free(s);
        return -1;
    }
    memset(s->ok, 0, (size_t)w + 8);
    s->width = width;
    s->w = w;
    s->n = n;
    return 0;
}

void strix_gmc_free(strix_gmc *g)
{
    if (!g) return;
    pyramid_free(&g->prev);
    pyramid_free(&g->cur);
    free(g->prev_pts);
    free(g->pts);
    free(g->next);
    free(g->status);
    free(g->mask);
    free(g->pq);
    scratch_free(&g->s);
    free(g);
}

/* ----------------------------------------------------------------- RANSAC */

/* Least-squares similarity q = [a -b; b a] p + t over the pairs flagged in
 * use (NULL: all).  Returns -1 when the points coincide. */
static int fit_similarity(const double *p, const double *q, int n, const unsigned char *use, double H[6])
{
    double mpx = 0, mpy = 0, mqx = 0, mqy = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (use && !use[i]) continue;
        mpx += p[2 * i];
        mpy += p[2 * i + 1];
        mqx += q[2 * i];
        mqy += q[2 * i + 1];
        k++;
    }
    if (k < 2) return -1;
    mpx /= k;
    mpy /= k;
    mqx /= k;
    mqy /= k;
    double sa = 0, sb = 0, sp = 0;
    for (int i = 0; i < n; i++) {
        if (use && !use[i]) continue;
        double px = p[2 * i] - mpx, py = p[2 * i + 1] - mpy, qx = q[2 * i] - mqx, qy = q[2 * i + 1] - mqy;
        sa += px * qx + py * qy;
        sb += px * qy - py * qx;
        sp += px * px + py * py;
    }
    if (!(sp > DBL_EPSILON)) return -1;
    double a = sa / sp, b = sb / sp;
    H[0] = a;
    H[1] = -b;
    H[2] = mqx - (a * mpx - b * mpy);
    H[3] = b;
    H[4] = a;
    H[5] = mqy - (b * mpx + a * mpy);
    return 0;
}

/* OpenCV's AffinePartial2DEstimatorCallback::runKernel: the similarity
 * through two pairs, in its closed form (the same model as fit_similarity
 * on the two, rounded differently). */
static void kernel2(const double *p, const double *q, int i0, int i1, double H[6])
{
    double x1 = p[2 * i0], y1 = p[2 * i0 + 1], x2 = p[2 * i1], y2 = p[2 * i1 + 1];
    double X1 = q[2 * i0], Y1 = q[2 * i0 + 1], X2 = q[2 * i1], Y2 = q[2 * i1 + 1];
    double d = 1. / ((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2));
    double S0 = d * ((X1 - X2) * (x1 - x2) + (Y1 - Y2) * (y1 - y2));
    double S1 = d * ((Y1 - Y2) * (x1 - x2) - (X1 - X2) * (y1 - y2));
    double S2 = d * ((Y1 - Y2) * (x1 * y2 - x2 * y1) - (X1 * y2 - X2 * y1) * (y1 - y2) - (X1 * x2 - X2 * x1) * (x1 - x2));
    double S3 = d * (-(X1 - X2) * (x1 * y2 - x2 * y1) - (Y1 * x2 - Y2 * x1) * (x1 - x2) - (Y1 * y2 - Y2 * y1) * (y1 - y2));
    H[0] = H[4] = S0;
    H[1] = -S1;
    H[2] = S2;
    H[3] = S1;
    H[5] = S3;
}

/* The inliers of H, as OpenCV's Affine2DEstimatorCallback::computeError
 * and findInliers decide them: the model rounded to float, the squared
 * error in float, <= (float)(thresh^2).  In float because a point about
 * RANSAC_THRESH off is in or out by the last bits (double arithmetic
 * flipped such points: a different inlier set, a different transform). */
static int inliers(const double *p, const double *q, int n, const double H[6], unsigned char *mask)
{
    const float h[6] = {(float)H[0], (float)H[1], (float)H[2], (float)H[3], (float)H[4], (float)H[5]};
    const float t = (float)(RANSAC_THRESH * RANSAC_THRESH);
    int k = 0;
    for (int i = 0; i < n; i++) {
        float fx = (float)p[2 * i], fy = (float)p[2 * i + 1]; /* the points are floats (Lucas-Kanade's) */
        float a = h[0] * fx + h[1] * fy + h[2] - (float)q[2 * i];
        float b = h[3] * fx + h[4] * fy + h[5] - (float)q[2 * i + 1];
        mask[i] = a * a + b * b <= t;
        k += mask[i];
    }
    return k;
}

/* OpenCV's RANSACUpdateNumIters for 2-point samples */
static int update_iters(double outliers, int iters)
{
    double num = log(1 - RANSAC_CONF), denom = 1 - (1 - outliers) * (1 - outliers);
    if (denom < DBL_MIN) return 0;
    denom = log(denom);
    return denom >= 0 || -num >= iters * -denom ? iters : (int)lrint(num / denom);
}

/* OpenCV's RNG::uniform(0, n): one multiply-with-carry step */
static int rng_uniform(uint64_t *rng, int n)
{
    *rng = (uint64_t)(uint32_t)*rng * 4164903690u + (*rng >> 32);
    return (int)((uint32_t)*rng % (uint32_t)n);
}

/* estimateAffinePartial2D(p -> q, RANSAC), n >= 2.  Returns -1 when no
 * model.  Samples as OpenCV's RANSACPointSetRegistrator::getSubset: the
 * first index, then the second drawn again until it differs (redrawing
 * both would shift the generator: other samples, another best model). */
static int ransac_similarity(const double *p, const double *q, int n, unsigned char *best, unsigned char *mask,
                             double H[6])
{
    uint64_t rng = (uint64_t)-1; /* OpenCV's RNG state */
    int best_k = -1, iters = RANSAC_ITERS;
    for (int it = 0; it < iters; it++) {
        int i0 = rng_uniform(&rng, n), i1;
        do i1 = rng_uniform(&rng, n);
        while (i1 == i0);
        if (p[2 * i0] == p[2 * i1] && p[2 * i0 + 1] == p[2 * i1 + 1]) continue; /* no model (OpenCV: d = inf) */
        double h[6];
        kernel2(p, q, i0, i1, h);
        int k = inliers(p, q, n, h, mask);
        if (k > best_k && k > 1) {
            best_k = k;
            memcpy(best, mask, (size_t)n);
            memcpy(H, h, sizeof h);
            iters = update_iters((double)(n - k) / n, iters);
        }
    }
    if (best_k < 2) return -1;
    double h[6];
    if (!fit_similarity(p, q, n, best, h)) memcpy(H, h, sizeof h);
    return 0;
}

int strix_gmc_ransac(const double *p, const double *q, int n, unsigned char *inl, double H[6])
{
    unsigned char *mask = n > 1 ? malloc((size_t)n) : NULL;
    int r = mask ? ransac_similarity(p, q, n, inl, mask, H) : -1;
    free(mask);
    return r;
}

/* ------------------------------------------------------------------ apply */

/* This thread's CPU time in seconds. */
static double thread_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* With step timing on, the time since the last mark goes to step k. */
static void mark(strix_gmc *g, int k)
{
    if (!g->timed) return;
    double t = thread_s();
    if (k >= 0) g->times[k] = t - g->t0;
    g->t0 = t;
}

void strix_gmc_time_steps(strix_gmc *g, int on)
{
    g->timed = on != 0;
    memset(g->times, 0, sizeof g->times);
}

void strix_gmc_step_times(const strix_gmc *g, double t[GMC_NSTEPS]) { memcpy(t, g->times, sizeof g->times); }

/* The steps after the grey frame, on s->img (w x h, the half size of a
 * width x height frame). */
static int apply_img(strix_gmc *g, int width, int height, double H[6])
{
    int w = width / 2, h = height / 2;
    const gmc_steps *st = g->steps;
    int nc = st->corners(&g->s, w, h, g->pts);
    mark(g, GMC_STEP_CORNERS);
    if (st->pyramid(&g->s, &g->cur, w, h)) return -1;
    mark(g, GMC_STEP_PYRAMID);
    /* Ultralytics treats a frame after one without corners as a first frame */
    if (g->have_prev && g->n_prev > 0 && g->cur.n == g->prev.n && g->cur.n > 0) {
        st->lk(&g->prev, &g->cur, g->prev_pts, g->n_prev, g->next, g->status);
        mark(g, GMC_STEP_LK);
        double *pq = g->pq;
        unsigned char *m = g->mask;
        int k = 0;
        for (int i = 0; i < g->n_prev; i++) {
            if (!g->status[i]) continue;
            pq[2 * k] = g->prev_pts[2 * i];
            pq[2 * k + 1] = g->prev_pts[2 * i + 1];
            pq[2 * GMC_MAX_CORNERS + 2 * k] = g->next[2 * i];
            pq[2 * GMC_MAX_CORNERS + 2 * k + 1] = g->next[2 * i + 1];
            k++;
        }
        double e[6];
        if (k > 4 && !ransac_similarity(pq, pq + 2 * GMC_MAX_CORNERS, k, m, m + GMC_MAX_CORNERS, e)) {
            memcpy(H, e, sizeof e);
            H[2] *= 2; /* back to full-size pixels */
            H[5] *= 2;
        }
        mark(g, GMC_STEP_FIT);
    }
    /* the current frame becomes the previous one */
    gmc_pyramid t = g->prev;
    g->prev = g->cur;
    g->cur = t;
    memcpy(g->prev_pts, g->pts, sizeof(float) * 2 * (size_t)nc);
    g->n_prev = nc;
    g->have_prev = nc > 0;
    g->fw = width;
    g->fh = height;
    return 0;
}

/* The start of a frame: H the identity, the step times cleared; 1 when the
 * frame is too small to track (H stays the identity), 0 to go on, -1 on OOM. */
static int apply_begin(strix_gmc *g, int width, int height, double H[6])
{
    static const double eye[6] = {1, 0, 0, 0, 1, 0};
    memcpy(H, eye, sizeof eye);
    memset(g->times, 0, sizeof g->times);
    int w = width / 2, h = height / 2;
    if (w < 3 || h < 3) return 1;
    if (width != g->fw || height != g->fh) g->have_prev = 0;
    if (scratch_reserve(&g->s, width, w, h)) return -1;
    mark(g, -1);
    return 0;
}

int strix_gmc_apply(strix_gmc *g, const uint8_t *pix, int width, int height, int stride, int bgr, double H[6])
{
    int r = apply_begin(g, width, height, H);
    if (r) return r < 0 ? -1 : 0;
    g->steps->grey(pix, width, height, stride, bgr, g->grey_cv4, g->s.grey, g->s.rows);
    mark(g, GMC_STEP_GREY);
    g->s.img = g->s.grey;
    return apply_img(g, width, height, H);
}

int strix_gmc_apply_grey(strix_gmc *g, const uint8_t *grey, int width, int height, double H[6])
{
    int r = apply_begin(g, width, height, H);
    if (r) return r < 0 ? -1 : 0;
    g->s.img = grey;
    return apply_img(g, width, height, H);
}

int strix_gmc_grey(const uint8_t *pix, int width, int stride, int bgr, int opencv4, int y0, int y1, uint8_t *grey)
{
    const gmc_steps *st = steps_of(strix_gmc_best_isa());
    uint16_t *rows = malloc(sizeof *rows * 2 * (size_t)width); /* a few kB; the caller holds no handle */
    if (!rows) return -1;
    /* rows y0..y1-1 alone: an even band's grey rows are the frame's (each reads its two rows, and
     * the half width is the frame's), and the whole frame is itself */
    st->grey(pix + (size_t)y0 * (size_t)stride, width, y1 - y0, stride, bgr, opencv4,
             grey + (size_t)(y0 / 2) * (size_t)(width / 2), rows);
    free(rows);
    return 0;
}
