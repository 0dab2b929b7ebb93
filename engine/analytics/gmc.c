/* gmc.c — camera motion between consecutive frames for BoT-SORT, the steps of
 * Ultralytics' GMC "sparseOptFlow" (ultralytics/trackers/utils/gmc.py):
 * grey half-size frame, corners, pyramid and pyramidal Lucas-Kanade
 * (gmc_kernels.h, built per instruction set: gmc_steps.h), then here
 * estimateAffinePartial2D(RANSAC, threshold 3, confidence 0.99, 2000
 * iterations, 10 refinement iterations) as OpenCV 5.0.0 computes it.
 * Written here rather than linked: the runtime has no OpenCV, and these
 * steps are a few hundred lines.  RANSAC is OpenCV's step for step (its
 * generator, its way of drawing a sample, its closed-form 2-point model,
 * its float32 errors), so it picks OpenCV's inliers from the same points;
 * the Levenberg-Marquardt refinement over them is OpenCV's step for step
 * too, in the arithmetic its x86-64 wheel runs on an AVX2 + FMA CPU, so the
 * transform is OpenCV's to the bit (where the corners and points are:
 * gmc_kernels.h says where the corners can differ).  This file relies on
 * the compiler not fusing multiply-adds (-std=c11: -ffp-contract=off); it
 * asks for the fused ones OpenCV does with fma().
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
    double *work;         /* RANSAC's refinement: [8 * GMC_MAX_CORNERS] */
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
    g->work = malloc(sizeof(double) * 8 * GMC_MAX_CORNERS);
    if (!g->prev_pts || !g->pts || !g->next || !g->status || !g->mask || !g->pq || !g->work) {
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
    free(g->work);
    scratch_free(&g->s);
    free(g);
}

/* ------------------------------------------------------------- refinement */

/* OpenCV 5.0.0's refinement at the end of estimateAffinePartial2D
 * (modules/geometry/src/ptsetreg.cpp and levmarq.cpp in the sources of
 * opencv-python 5.0.0.93): LevMarq with its dense backend, 10 iterations
 * and geodesic acceleration, over the inliers in their order, on the
 * parameters h = (a, b, tx, ty) of q = [a -b; b a] p + t.  The residuals
 * are linear in h, so the steps head for the least-squares optimum, but
 * they stop after a few (relative energy change under 1e-6) and the
 * geodesic term is rounding noise scaled by 1e8: where they stop, a few
 * 1e-6 px from the optimum, follows from OpenCV's arithmetic to the bit.
 * So each step is OpenCV's in its order, as that wheel computes it on an
 * x86-64 CPU with AVX2 and FMA: the residuals, J^T J and the 4x4 solve in
 * plain double (its baseline build; the solve's hypot is OpenCV's own);
 * J^T r by its own gemm below 100 rows of J (a baseline-only build where
 * OpenCV has LAPACK) and by OpenBLAS 0.3.15's dgemm from there; the
 * geodesic term by its AVX2 scaleAdd and addWeighted (fused); the squared
 * norm by its AVX2 norm (fused).  The norms and the dot products of the
 * geodesic term's check only steer decisions (a step taken or not, the
 * stop): done otherwise, their bits changed none of 2300 random point
 * sets, where every other order here, done otherwise, changed hundreds.
 * J's rows for point i (x, y) are (x, -y, 1, 0) and (y, x, 0, 1); r, J^T r:
 * [2m] and [4]. */

enum { LM_ITERS = 10, LM_BLAS_ROWS = 100, LM_BLAS_Q = 256 };
#define LM_HGEO 1e-4 /* LevMarq::Settings' geodesic step, hGeo */

/* The residuals r [2m] of h: the callback's xi - qx, yi - qy. */
static void lm_residuals(const double *src, const double *dst, int m, const double h[4], double *r)
{
    for (int i = 0; i < m; i++) {
        double x = src[2 * i], y = src[2 * i + 1];
        r[2 * i] = h[0] * x - h[1] * y + h[2] - dst[2 * i];
        r[2 * i + 1] = h[1] * x + h[0] * y + h[3] - dst[2 * i + 1];
    }
}

/* cv::norm(r, NORM_L2SQR) of OpenCV's AVX2 build: four 4-lane
 * fused-multiply-add accumulators over blocks of 16, summed lane-wise
 * and reduced pairwise, then the tail one by one. */
static double lm_sqnorm(const double *r, int len)
{
    double acc[16] = {0}, t[4];
    int k = 0;
    for (; k <= len - 16; k += 16)
        for (int l = 0; l < 16; l++) acc[l] = fma(r[k + l], r[k + l], acc[l]);
    for (int l = 0; l < 4; l++) t[l] = acc[l] + acc[4 + l] + acc[8 + l] + acc[12 + l];
    double s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; k < len; k++) s = fma(r[k], r[k], s);
    return s;
}

/* J^T r as cv::gemm(J, r, GEMM_1_T) gives it: OpenCV's own loop below
 * LM_BLAS_ROWS rows of J (four partial sums over the rows k mod 4, the
 * rows past the last multiple of 4 on the first, no fused multiply-add),
 * OpenBLAS's dgemm from there (fused multiply-adds down the rows in the K
 * blocks of its level-3 driver, each block's sum added to the result).
 * J's zeros are left out: their products add an exact +-0 to a sum that
 * is never -0, which changes nothing. */
static void lm_jtr(const double *src, const double *r, int m, double out[4])
{
    int len = 2 * m;
    if (len < LM_BLAS_ROWS) {
        double s[4][4] = {{0}};
        for (int i = 0; i < m; i++) {
            double x = src[2 * i], y = src[2 * i + 1], r0 = r[2 * i], r1 = r[2 * i + 1];
            int body = 2 * i < (len & ~3), w0 = body ? (2 * i) & 3 : 0, w1 = body ? w0 + 1 : 0; /* rows 2i, 2i + 1 */
            s[0][w0] += x * r0;
            s[0][w1] += y * r1;
            s[1][w0] += -y * r0;
            s[1][w1] += x * r1;
            s[2][w0] += r0;
            s[3][w1] += r1;
        }
        for (int c = 0; c < 4; c++) out[c] = s[c][0] + s[c][1] + s[c][2] + s[c][3];
        return;
    }
    memset(out, 0, 4 * sizeof *out);
    for (int ls = 0, bl; ls < len; ls += bl) {
        bl = len - ls;
        if (bl >= 2 * LM_BLAS_Q) bl = LM_BLAS_Q;
        else if (bl > LM_BLAS_Q) bl = (bl / 2 + 3) / 4 * 4; /* even, as every block start */
        double acc[4] = {0, 0, 0, 0};
        for (int i = ls / 2; i < (ls + bl) / 2; i++) {
            double x = src[2 * i], y = src[2 * i + 1], r0 = r[2 * i], r1 = r[2 * i + 1];
            acc[0] = fma(r1, y, fma(r0, x, acc[0]));
            acc[1] = fma(r1, x, fma(r0, -y, acc[1]));
            acc[2] += r0;
            acc[3] += r1;
        }
        for (int c = 0; c < 4; c++) out[c] += acc[c];
    }
}

/* OpenCV's hypot (lapack.cpp's own, not libm's) */
static double cv_hypot(double a, double b)
{
    a = fabs(a);
    b = fabs(b);
    if (a > b) {
        b /= a;
        return a * sqrt(1 + b * b);
    }
    if (b > 0) {
        a /= b;
        return b * sqrt(1 + a * a);
    }
    return 0;
}

/* cv::solve(A, b, x, DECOMP_SVD) for a symmetric positive definite 4x4 A
 * comes in two parts: OpenCV's one-sided Jacobi SVD of A^T (JacobiSVDImpl_:
 * its rotations, its sort), here At = U^T, W, Vt, and its back-substitution
 * (SVBkSbImpl_, lm_backsub).  LevMarq solves twice a step with the same A,
 * so the decomposition is made once (it is deterministic: the same bits).
 * A is damped (LevMarq clamps the added diagonal to >= 1e-6), so no singular
 * value is zero and OpenCV's random completion of a null space never runs. */
static void lm_svd(const double A[4][4], double At[4][4], double W[4], double Vt[4][4])
{
    memset(Vt, 0, 16 * sizeof **Vt);
    for (int i = 0; i < 4; i++) {
        double sd = 0;
        Vt[i][i] = 1;
        for (int k = 0; k < 4; k++) {
            At[i][k] = A[k][i];
            sd += At[i][k] * At[i][k];
        }
        W[i] = sd;
    }
    for (int iter = 0; iter < 30; iter++) {
        int changed = 0;
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 4; j++) {
                double a = W[i], bb = W[j], p = 0, c, s;
                for (int k = 0; k < 4; k++) p += At[i][k] * At[j][k];
                if (fabs(p) <= DBL_EPSILON * 10 * sqrt(a * bb)) continue;
                p *= 2;
                double beta = a - bb, gamma = cv_hypot(p, beta);
                if (beta < 0) {
                    s = sqrt((gamma - beta) * 0.5 / gamma);
                    c = p / (gamma * s * 2);
                } else {
                    c = sqrt((gamma + beta) / (gamma * 2));
                    s = p / (gamma * c * 2);
                }
                a = bb = 0;
                for (int k = 0; k < 4; k++) {
                    double t0 = c * At[i][k] + s * At[j][k], t1 = -s * At[i][k] + c * At[j][k];
                    At[i][k] = t0;
                    At[j][k] = t1;
                    a += t0 * t0;
                    bb += t1 * t1;
                }
                W[i] = a;
                W[j] = bb;
                changed = 1;
                for (int k = 0; k < 4; k++) {
                    double t0 = c * Vt[i][k] + s * Vt[j][k], t1 = -s * Vt[i][k] + c * Vt[j][k];
                    Vt[i][k] = t0;
                    Vt[j][k] = t1;
                }
            }
        if (!changed) break;
    }
    for (int i = 0; i < 4; i++) {
        double sd = 0;
        for (int k = 0; k < 4; k++) sd += At[i][k] * At[i][k];
        W[i] = sqrt(sd);
    }
    for (int i = 0; i < 3; i++) {
        int j = i;
        for (int k = i + 1; k < 4; k++)
            if (W[j] < W[k]) j = k;
        if (i != j) {
            double t = W[i], r[4];
            W[i] = W[j], W[j] = t;
            memcpy(r, At[i], sizeof r), memcpy(At[i], At[j], sizeof r), memcpy(At[j], r, sizeof r);
            memcpy(r, Vt[i], sizeof r), memcpy(Vt[i], Vt[j], sizeof r), memcpy(Vt[j], r, sizeof r);
        }
    }
    for (int i = 0; i < 4; i++) {
        double s = 1 / W[i];
        for (int k = 0; k < 4; k++) At[i][k] *= s;
    }
}

/* SVBkSbImpl_ for one right side: x = V diag(1 / W) U^T b, skipping
 * singular values at or under its threshold. */
static void lm_backsub(const double U[4][4], const double W[4], const double Vt[4][4], const double b[4], double x[4])
{
    double threshold = 0;
    for (int i = 0; i < 4; i++) threshold += W[i];
    threshold *= DBL_EPSILON * 2;
    memset(x, 0, 4 * sizeof *x);
    for (int i = 0; i < 4; i++) {
        if (fabs(W[i]) <= threshold) continue;
        double s = 0;
        for (int j = 0; j < 4; j++) s += U[i][j] * b[j];
        s *= 1 / W[i];
        for (int j = 0; j < 4; j++) x[j] = x[j] + s * Vt[i][j];
    }
}

/* LevMarq::optimize from h (RANSAC's model) over the m pairs src -> dst
 * [m][2]; r, rv: [2m] scratch (the probe's and the geodesic point's
 * residuals). */
static void lm_refine(const double *src, const double *dst, int m, double h[4], double *r, double *rv)
{
    const double hinv = 1. / (LM_HGEO * LM_HGEO);
    double jtb[4], s[10] = {0}; /* J^T J by mulTransposed: sums down the rows of J (exact products: float points) */
    for (int i = 0; i < m; i++) {
        double x = src[2 * i], y = src[2 * i + 1];
        s[0] += x * x, s[0] += y * y;
        s[1] += x * -y, s[1] += y * x;
        s[2] += x;
        s[3] += y;
        s[4] += -y * -y, s[4] += x * x;
        s[5] += -y;
        s[6] += x;
        s[7] += 1;
        s[8] += 1;
    }
    const double jtj[4][4] = {{s[0], s[1], s[2], s[3]}, {s[1], s[4], s[5], s[6]}, {s[2], s[5], s[7], s[9]},
                              {s[3], s[6], s[9], s[8]}};
    lm_residuals(src, dst, m, h, r);
    double old = lm_sqnorm(r, 2 * m), lambda = 1e-4, up = 2;
    lm_jtr(src, r, m, jtb);
    int iter = 0, done = 0;
    while (!done) {
        double gmax = 0;
        for (int i = 0; i < 4; i++) gmax = fmax(gmax, fabs(jtb[i]));
        int small = 0, enough = 0;
        while (!enough && !done) {
            double A[4][4], lmd[4], nb[4], x[4], t[4];
            memcpy(A, jtj, sizeof A);
            for (int i = 0; i < 4; i++) { /* J^T J + the clamped damping diagonal; the right side -J^T r */
                lmd[i] = fmin(fmax(jtj[i][i] * lambda, 1e-6), 1e32);
                A[i][i] = lmd[i] + jtj[i][i];
                nb[i] = -jtb[i];
            }
            double U[4][4], W[4], Vt[4][4];
            lm_svd(A, U, W, Vt);
            lm_backsub(U, W, Vt, nb, x);
            /* the energy change the linear model predicts (calcJacCostChangeLm) and |x|^2 */
            for (int i = 0; i < 4; i++) t[i] = x[i] * (jtb[i] - lmd[i] * x[i]);
            double jcc = -0.5 * (t[0] + t[1] + t[2] + t[3]), xnorm = 0;
            for (int i = 0; i < 4; i++) xnorm = fma(x[i], x[i], xnorm);
            /* the geodesic correction: J^T of the second directional derivative along x */
            double g[4], jtbv[4], xg[4];
            for (int i = 0; i < 4; i++) g[i] = h[i] + x[i] * LM_HGEO;
            lm_residuals(src, dst, m, g, rv);
            lm_jtr(src, rv, m, jtbv);
            for (int i = 0; i < 4; i++) { /* scaleAdd, multiply by a scale, addWeighted: OpenCV's MatExpr order */
                double m1 = fma(jtb[i], LM_HGEO - 1.0, jtbv[i]), m2 = lmd[i] * LM_HGEO * x[i];
                nb[i] = -fma(m1, hinv, m2 * hinv);
            }
            lm_backsub(U, W, Vt, nb, xg);
            double xx = 0, gg = 0;
            for (int i = 0; i < 4; i++) xx += x[i] * x[i], gg += xg[i] * xg[i];
            if (sqrt(gg / xx) < 1.0)
                for (int i = 0; i < 4; i++) x[i] += xg[i] * 0.5;
            double probe[4];
            for (int i = 0; i < 4; i++) probe[i] = h[i] + x[i];
            lm_residuals(src, dst, m, probe, r);
            double energy = lm_sqnorm(r, 2 * m);
            if (energy < 0 || isnan(energy)) return;
            double cost = old - energy, quality = cost / jcc;
            if (cost < 0) { /* refused: more damping, the factor doubling each time */
                lambda *= up;
                up *= 2;
            } else {
                enough = 1; /* taken: less damping by the step's quality (OpenCV's energy is |r|^2, the
                             * model's change half of it, so about 2 here: lambda / 3) */
                double f = 1.0 - pow(2.0 * quality - 1.0, 3);
                lambda *= 1.0 / 3.0 < f ? f : 1.0 / 3.0;
                up = 2;
                small = gmax < 1e-6 || xnorm < 1e-6 || cost / energy < 1e-6;
                memcpy(h, probe, sizeof probe);
                old = energy;
            }
            iter++;
            done = iter >= LM_ITERS || lambda >= 1e32 || small;
        }
        if (!done) lm_jtr(src, r, m, jtb);
    }
}

/* ----------------------------------------------------------------- RANSAC */

/* OpenCV's AffinePartial2DEstimatorCallback::runKernel: the similarity
 * through two pairs, in its closed form. */
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

/* estimateAffinePartial2D(p -> q, RANSAC), n >= 2; work: [8n] scratch.
 * Returns -1 when no model.  Samples as OpenCV's
 * RANSACPointSetRegistrator::getSubset: the first index, then the second
 * drawn again until it differs (redrawing both would shift the generator:
 * other samples, another best model).  Then OpenCV's refinement over the
 * inliers, moved to the front in their order as its compressElems does. */
static int ransac_similarity(const double *p, const double *q, int n, unsigned char *best, unsigned char *mask,
                             double *work, double H[6])
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
    double *src = work, *dst = work + 2 * n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (best[i]) {
            memcpy(src + 2 * m, p + 2 * i, 2 * sizeof *p);
            memcpy(dst + 2 * m, q + 2 * i, 2 * sizeof *q);
            m++;
        }
    double h[4] = {H[0], H[3], H[2], H[5]};
    lm_refine(src, dst, m, h, work + 4 * n, work + 6 * n);
    H[0] = H[4] = h[0];
    H[1] = -h[1];
    H[2] = h[2];
    H[3] = h[1];
    H[5] = h[3];
    return 0;
}

int strix_gmc_ransac(const double *p, const double *q, int n, unsigned char *inl, double H[6])
{
    unsigned char *mask = n > 1 ? malloc((size_t)n) : NULL;
    double *work = n > 1 ? malloc(sizeof(double) * 8 * (size_t)n) : NULL;
    int r = mask && work ? ransac_similarity(p, q, n, inl, mask, work, H) : -1;
    free(mask);
    free(work);
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
        if (k > 4 && !ransac_similarity(pq, pq + 2 * GMC_MAX_CORNERS, k, m, m + GMC_MAX_CORNERS, g->work, e)) {
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
