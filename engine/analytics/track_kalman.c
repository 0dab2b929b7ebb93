/* track_kalman.c — the Kalman filters of Ultralytics 8.4.190's
 * utils/kalman_filter.py (XYAH and XYWH, NSA's confidence-scaled
 * measurement noise) and stracks.py's multi_gmc warp, step for step in
 * double so the trackers' states equal the reference's bit for bit (layouts
 * in track_kalman.h); the track lists. */
#include "track_kalman.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int strix_slots_push(strix_slots *l, int x)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        int *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

int strix_slots_has(const strix_slots *l, int x)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == x) return 1;
    return 0;
}

int strix_slots_join(strix_slots *a, const strix_slots *b)
{
    int n = a->n;
    for (int i = 0; i < b->n; i++) {
        int dup = 0;
        for (int j = 0; j < n && !dup; j++) dup = a->v[j] == b->v[i];
        if (!dup && strix_slots_push(a, b->v[i])) return -1;
    }
    return 0;
}

void strix_slots_sub(strix_slots *a, const strix_slots *b)
{
    int m = 0;
    for (int i = 0; i < a->n; i++)
        if (!strix_slots_has(b, a->v[i])) a->v[m++] = a->v[i];
    a->n = m;
}

#define STD_POS (1.0 / 20)
#define STD_VEL (1.0 / 160)

/* Position and velocity noise scales of a mean: xywh follows width and height, xyah height only. */
static void noise(const double *mean, int xywh, double wp, double wv, double std[8])
{
    double w = mean[2], h = mean[3];
    if (xywh) {
        double s[8] = {wp * w, wp * h, wp * w, wp * h, wv * w, wv * h, wv * w, wv * h};
        memcpy(std, s, sizeof s);
    } else {
        double s[8] = {wp * h, wp * h, 1e-2, wp * h, wv * h, wv * h, 1e-5, wv * h};
        memcpy(std, s, sizeof s);
    }
}

void strix_kf_initiate(double *mean, double *cov, int xywh, const float m[4])
{
    for (int i = 0; i < 4; i++) {
        mean[i] = m[i];
        mean[4 + i] = 0;
    }
    double std[8];
    noise(mean, xywh, 2 * STD_POS, 10 * STD_VEL, std);
    memset(cov, 0, sizeof(double) * 64);
    for (int i = 0; i < 8; i++) cov[i * 9] = std[i] * std[i];
}

/* x' = F x, P' = F P F^T + Q with F = [[I, I], [0, I]]: multi_predict's
 * (F P) F^T */
void strix_kf_predict(double *mean, double *cov, int xywh)
{
    double q[8];
    noise(mean, xywh, STD_POS, STD_VEL, q);
    for (int i = 0; i < 4; i++) mean[i] += mean[4 + i];
    double left[64], *p = cov;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) left[i * 8 + j] = i < 4 ? p[i * 8 + j] + p[(i + 4) * 8 + j] : p[i * 8 + j];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            p[i * 8 + j] = j < 4 ? left[i * 8 + j] + left[i * 8 + j + 4] : left[i * 8 + j];
    for (int i = 0; i < 8; i++) p[i * 9] += q[i] * q[i];
}

/* The same step as the single-track predict (KalmanFilterXYAH.predict,
 * OC-SORT's re-update) computes it: its multi_dot takes F (P F^T), which
 * sums the four terms of a position entry in another order. */
void strix_kf_predict_one(double *mean, double *cov)
{
    double q[8];
    noise(mean, 0, STD_POS, STD_VEL, q);
    for (int i = 0; i < 4; i++) mean[i] += mean[4 + i];
    double right[64], *p = cov;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) right[i * 8 + j] = j < 4 ? p[i * 8 + j] + p[i * 8 + j + 4] : p[i * 8 + j];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            p[i * 8 + j] = i < 4 ? right[i * 8 + j] + right[(i + 4) * 8 + j] : right[i * 8 + j];
    for (int i = 0; i < 8; i++) p[i * 9] += q[i] * q[i];
}

/* Correct with measurement m: S = H P H^T + R, K^T = S^-1 H P (Gaussian
 * elimination with partial pivoting, as numpy.linalg.solve), x += K (m - H x),
 * P -= K (S K^T). */
void strix_kf_update(double *mean, double *cov, int xywh, const float m[4], double r_scale)
{
    double r[8], *p = cov;
    noise(mean, xywh, STD_POS, STD_VEL, r);
    if (!xywh) r[2] = 1e-1;
    double s[16], a[4][12];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) s[i * 4 + j] = p[i * 8 + j] + (i == j ? r[i] * r[i] * r_scale : 0);
    /* [S | H P] reduced to [I | K^T] */
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) a[i][j] = s[i * 4 + j];
        for (int c = 0; c < 8; c++) a[i][4 + c] = p[i * 8 + c];
    }
    for (int c = 0; c < 4; c++) {
        int piv = c;
        for (int i = c + 1; i < 4; i++)
            if (fabs(a[i][c]) > fabs(a[piv][c])) piv = i;
        if (piv != c)
            for (int j = 0; j < 12; j++) {
                double tmp = a[c][j];
                a[c][j] = a[piv][j];
                a[piv][j] = tmp;
            }
        for (int i = c + 1; i < 4; i++) {
            double f = a[i][c] / a[c][c];
            for (int j = c; j < 12; j++) a[i][j] -= f * a[c][j];
        }
    }
    double kt[32]; /* K^T, 4 x 8 */
    for (int c = 0; c < 8; c++)
        for (int i = 3; i >= 0; i--) {
            double v = a[i][4 + c];
            for (int q = i + 1; q < 4; q++) v -= a[i][q] * kt[q * 8 + c];
            kt[i * 8 + c] = v / a[i][i];
        }
    double innov[4];
    for (int i = 0; i < 4; i++) innov[i] = (double)m[i] - mean[i];
    for (int c = 0; c < 8; c++) {
        double v = 0;
        for (int i = 0; i < 4; i++) v += innov[i] * kt[i * 8 + c];
        mean[c] += v;
    }
    double skt[32]; /* S K^T, 4 x 8 */
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 8; c++) {
            double v = 0;
            for (int j = 0; j < 4; j++) v += s[i * 4 + j] * kt[j * 8 + c];
            skt[i * 8 + c] = v;
        }
    for (int a8 = 0; a8 < 8; a8++)
        for (int b = 0; b < 8; b++) {
            double v = 0;
            for (int j = 0; j < 4; j++) v += kt[j * 8 + a8] * skt[j * 8 + b];
            p[a8 * 8 + b] -= v;
        }
}

/* The camera-motion warp of stracks.py's multi_gmc: centre and its velocity
 * rotate with R and shift by t, sizes and their velocities scale by |R|
 * (xyah: stay, I; oriented boxes: by np.linalg.norm(R[:, 0]) I): x := R8 x
 * + (t, 0...), P := R8 P R8^T. */
void strix_kf_warp(double *mean, double *cov, const double H[6], int xyah)
{
    double r8[64] = {0};
    double R[4] = {H[0], H[1], H[3], H[4]}, A[4] = {fabs(H[0]), fabs(H[1]), fabs(H[3]), fabs(H[4])}, I[4] = {1, 0, 0, 1};
    const double s = sqrt(H[0] * H[0] + H[3] * H[3]), N[4] = {s, 0, 0, s};
    for (int b = 0; b < 4; b++) {
        const double *m = b & 1 ? xyah == STRIX_KF_WARP_OBB ? N : xyah ? I : A : R;
        int o = 2 * b;
        r8[o * 8 + o] = m[0];
        r8[o * 8 + o + 1] = m[1];
        r8[(o + 1) * 8 + o] = m[2];
        r8[(o + 1) * 8 + o + 1] = m[3];
    }
    double x[8], t[64];
    for (int i = 0; i < 8; i++) {
        double v = 0;
        for (int j = 0; j < 8; j++) v += r8[i * 8 + j] * mean[j];
        x[i] = v;
    }
    x[0] += H[2];
    x[1] += H[5];
    memcpy(mean, x, sizeof x);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            double v = 0;
            for (int q = 0; q < 8; q++) v += r8[i * 8 + q] * cov[q * 8 + j];
            t[i * 8 + j] = v;
        }
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            double v = 0;
            for (int q = 0; q < 8; q++) v += t[i * 8 + q] * r8[j * 8 + q];
            cov[i * 8 + j] = v;
        }
}

void strix_kf_xyxy(const double *mean, int xywh, float b[4])
{
    double w = xywh ? mean[2] : mean[2] * mean[3], h = mean[3];
    double x1 = mean[0] - w / 2, y1 = mean[1] - h / 2;
    b[0] = (float)x1;
    b[1] = (float)y1;
    b[2] = (float)(w + x1);
    b[3] = (float)(h + y1);
}

void strix_kf_xywha(const double *mean, int xywh, double angle, float r[5])
{
    double w = xywh ? mean[2] : mean[2] * mean[3], h = mean[3];
    double x1 = mean[0] - w / 2, y1 = mean[1] - h / 2;
    r[0] = (float)(x1 + w / 2);
    r[1] = (float)(y1 + h / 2);
    r[2] = (float)w;
    r[3] = (float)h;
    r[4] = (float)angle;
}
