/* gmc.c — camera motion between consecutive frames for BoT-SORT, the steps of
 * Ultralytics' GMC "sparseOptFlow" (ultralytics/trackers/utils/gmc.py), each
 * as the OpenCV call it makes defines it:
 *   cvtColor BGR2GRAY + resize to half size (INTER_LINEAR at exactly half
 *   size is OpenCV's 2x2 area average), fixed point as OpenCV rounds;
 *   goodFeaturesToTrack(maxCorners 400, qualityLevel 0.01, minDistance 0,
 *   blockSize 3): minimum eigenvalue of the 3x3-summed Sobel structure
 *   tensor, kept above 1% of the maximum and at 3x3 local maxima, strongest
 *   400 (ties: later pixel first, as OpenCV's sort);
 *   calcOpticalFlowPyrLK(winSize 21, maxLevel 3, 30 iterations, eps 0.01,
 *   minEigThreshold 1e-4): Gaussian pyramid (pyrDown), Scharr gradients,
 *   iterative Lucas-Kanade per level in OpenCV's units (images x 32,
 *   gradients as Scharr sums, sums scaled by 2^-20);
 *   estimateAffinePartial2D(RANSAC, threshold 3, confidence 0.99, 2000
 *   iterations) then the least-squares similarity over the inliers (what
 *   OpenCV's Levenberg-Marquardt refinement converges to: the residuals are
 *   linear in the four parameters).
 * Written here rather than linked: the runtime has no OpenCV, and these
 * four steps are a few hundred lines.  Bilinear weights are float rather
 * than OpenCV's 14-bit fixed point and RANSAC draws its own samples, so a
 * transform can differ from OpenCV's in the last fractions of a pixel.
 *
 * Layouts: grey images uint8 [h][w]; pyramid levels are stored with a
 * border of PAD pixels on each side (reflected as OpenCV's BORDER_REFLECT_101
 * for the image, zero for the gradients), so a window read never checks
 * bounds. */
#include "gmc.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CORNERS 400
#define QUALITY 0.01f
#define WIN 21
#define HALF_WIN 10
#define MAX_LEVEL 3
#define LK_ITERS 30
#define LK_EPS 0.01f
#define MIN_EIG 1e-4f
#define WINP 24 /* a window row as read: 21 columns padded to 3 x 8 floats, the 3 extra weighted 0 */
#define PAD (WINP + 2)
#define RANSAC_THRESH 3.0
#define RANSAC_CONF 0.99
#define RANSAC_ITERS 2000

/* One pyramid level: image and gradients, each [(h + 2 PAD)][(w + 2 PAD)] float. */
typedef struct level {
    int w, h, pw; /* pw: padded row length */
    float *img;   /* grey x 32 (OpenCV's 5 fractional bits) */
    float *dx, *dy;
} level;

typedef struct pyramid {
    int n;
    level lv[MAX_LEVEL + 1];
} pyramid;

struct strix_gmc {
    int fw, fh;           /* full frame size of the previous frame */
    int have_prev;
    pyramid prev, cur;
    float *prev_pts;      /* [n_prev][2] corners of the previous frame (half size) */
    int n_prev;
    float *pts, *next;    /* [MAX_CORNERS][2] */
    unsigned char *status;
    uint8_t *grey, *tmp8; /* half-size grey frame, pyrDown scratch */
    size_t grey_cap;
    float *eig, *box;     /* corner scratch */
    int *cand;
    size_t eig_cap;
};

strix_gmc *strix_gmc_create(void)
{
    strix_gmc *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->prev_pts = malloc(sizeof(float) * 2 * MAX_CORNERS);
    g->pts = malloc(sizeof(float) * 2 * MAX_CORNERS);
    g->next = malloc(sizeof(float) * 2 * MAX_CORNERS);
    g->status = malloc(MAX_CORNERS);
    if (!g->prev_pts || !g->pts || !g->next || !g->status) {
        strix_gmc_free(g);
        return NULL;
    }
    return g;
}

static void pyramid_free(pyramid *p)
{
    for (int i = 0; i <= MAX_LEVEL; i++) {
        free(p->lv[i].img);
        free(p->lv[i].dx);
        free(p->lv[i].dy);
    }
    memset(p, 0, sizeof *p);
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
    free(g->grey);
    free(g->tmp8);
    free(g->eig);
    free(g->box);
    free(g->cand);
    free(g);
}

/* OpenCV's BORDER_REFLECT_101 index (n >= 2) */
static int reflect(int i, int n)
{
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

/* ----------------------------------------------------------- grey frame */

/* Grey (OpenCV's fixed point: (R 4899 + G 9617 + B 1868 + 2^13) >> 14), then
 * half size: the rounded mean of each 2x2 block where the size halves
 * exactly (OpenCV's INTER_LINEAR becomes INTER_AREA there), else bilinear
 * with OpenCV's pixel-centre mapping. */
/* One row of grey values (OpenCV's fixed point); bgr: B comes first.  Two
 * loops with constant offsets, so the compiler vectorises them. */
static void grey_row(const uint8_t *p, int n, int bgr, uint16_t *g)
{
    if (!bgr)
        for (int x = 0; x < n; x++)
            g[x] = (uint16_t)(((uint32_t)p[3 * x] * 4899 + (uint32_t)p[3 * x + 1] * 9617 +
                               (uint32_t)p[3 * x + 2] * 1868 + 8192) >> 14);
    else
        for (int x = 0; x < n; x++)
            g[x] = (uint16_t)(((uint32_t)p[3 * x + 2] * 4899 + (uint32_t)p[3 * x + 1] * 9617 +
                               (uint32_t)p[3 * x] * 1868 + 8192) >> 14);
}

/* Grey (OpenCV's fixed point: (R 4899 + G 9617 + B 1868 + 2^13) >> 14), then
 * half size: the rounded mean of each 2x2 block where the size halves
 * exactly (OpenCV's INTER_LINEAR becomes INTER_AREA there), else bilinear
 * with OpenCV's pixel-centre mapping.  rows: [2][w] scratch. */
static void grey_half(const uint8_t *pix, int w, int h, int stride, int bgr, uint8_t *out, int ow, int oh,
                      uint16_t *rows)
{
    uint16_t *g0 = rows, *g1 = rows + w;
    if (ow * 2 == w && oh * 2 == h) {
        for (int y = 0; y < oh; y++) {
            const uint8_t *r0 = pix + (size_t)(2 * y) * (size_t)stride;
            grey_row(r0, w, bgr, g0);
            grey_row(r0 + stride, w, bgr, g1);
            uint8_t *o = out + (size_t)y * (size_t)ow;
            for (int x = 0; x < ow; x++) o[x] = (uint8_t)((g0[2 * x] + g0[2 * x + 1] + g1[2 * x] + g1[2 * x + 1] + 2) >> 2);
        }
        return;
    }
    double sx = (double)w / ow, sy = (double)h / oh;
    for (int y = 0; y < oh; y++) {
        double fy = (y + 0.5) * sy - 0.5;
        int y0 = (int)floor(fy);
        double b = fy - y0;
        if (y0 < 0) y0 = 0, b = 0;
        int y1 = y0 + 1 < h ? y0 + 1 : h - 1;
        grey_row(pix + (size_t)y0 * (size_t)stride, w, bgr, g0);
        grey_row(pix + (size_t)y1 * (size_t)stride, w, bgr, g1);
        for (int x = 0; x < ow; x++) {
            double fx = (x + 0.5) * sx - 0.5;
            int x0 = (int)floor(fx);
            double a = fx - x0;
            if (x0 < 0) x0 = 0, a = 0;
            int x1 = x0 + 1 < w ? x0 + 1 : w - 1;
            double v = (1 - b) * ((1 - a) * g0[x0] + a * g0[x1]) + b * ((1 - a) * g1[x0] + a * g1[x1]);
            out[(size_t)y * (size_t)ow + x] = (uint8_t)lrint(v);
        }
    }
}

/* ---------------------------------------------------------------- corners */

typedef struct cand {
    float v;
    int at; /* y * w + x */
} cand;

/* OpenCV's order: larger response first; on a tie the later pixel first. */
static int cand_before(const cand *a, const cand *b) { return a->v > b->v || (a->v == b->v && a->at > b->at); }

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    return cand_before(a, b) ? -1 : cand_before(b, a);
}

/* Move the k first candidates in OpenCV's order to the front (quickselect). */
static void select_first(cand *c, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        cand piv = c[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (cand_before(&c[i], &piv)) i++;
            while (cand_before(&piv, &c[j])) j--;
            if (i <= j) {
                cand t = c[i];
                c[i++] = c[j];
                c[j--] = t;
            }
        }
        if (k - 1 <= j) hi = j;
        else if (k - 1 >= i) lo = i;
        else break;
    }
}

/* Sum of three neighbours along a row with reflected ends: o[x] = r[x-1] + r[x] + r[x+1]. */
static void sum3(const float *r, float *o, int w)
{
    o[0] = r[1] + r[0] + r[1];
    for (int x = 1; x < w - 1; x++) o[x] = r[x - 1] + r[x] + r[x + 1];
    o[w - 1] = r[w - 2] + r[w - 1] + r[w - 2];
}

/* goodFeaturesToTrack on img [h][w] (w, h >= 3): up to MAX_CORNERS (x, y)
 * into pts.  Planar scratch: the structure tensor's three products, summed
 * along rows, then down columns into the minimum eigenvalue.  Returns the
 * count, or -1 on OOM. */
static int corners(strix_gmc *g, const uint8_t *img, int w, int h, float *pts)
{
    size_t n = (size_t)w * (size_t)h;
    if (n > g->eig_cap) {
        float *e = realloc(g->eig, sizeof *e * n), *b = realloc(g->box, sizeof *b * n * 3);
        if (e) g->eig = e;
        if (b) g->box = b;
        int *c = realloc(g->cand, sizeof(cand) * n);
        if (c) g->cand = c;
        if (!e || !b || !c) return -1;
        g->eig_cap = n;
    }
    float *sa = g->box, *sb = sa + n, *sc = sb + n, *eig = g->eig; /* row sums of dx^2, dx dy, dy^2 */
    const float scale = (float)(1.0 / (4 * 3 * 255.0)); /* OpenCV: 1 / (2^(ksize-1) blockSize 255) */
    float *pa = malloc(sizeof *pa * 3 * (size_t)w);
    if (!pa) return -1;
    float *pb = pa + w, *pc = pb + w;
    for (int y = 0; y < h; y++) {
        const uint8_t *r0 = img + (size_t)reflect(y - 1, h) * (size_t)w, *r1 = img + (size_t)y * (size_t)w,
                      *r2 = img + (size_t)reflect(y + 1, h) * (size_t)w;
        /* interior columns without border logic (vectorised), then the two edges */
        for (int x = 1; x < w - 1; x++) {
            int dx = (r0[x + 1] - r0[x - 1]) + 2 * (r1[x + 1] - r1[x - 1]) + (r2[x + 1] - r2[x - 1]);
            int dy = (r2[x - 1] + 2 * r2[x] + r2[x + 1]) - (r0[x - 1] + 2 * r0[x] + r0[x + 1]);
            float fx = (float)dx * scale, fy = (float)dy * scale;
            pa[x] = fx * fx;
            pb[x] = fx * fy;
            pc[x] = fy * fy;
        }
        for (int x = 0; x < w; x += w - 1) {
            int xl = x ? x - 1 : 1, xr = x + 1 < w ? x + 1 : w - 2;
            int dx = (r0[xr] - r0[xl]) + 2 * (r1[xr] - r1[xl]) + (r2[xr] - r2[xl]);
            int dy = (r2[xl] + 2 * r2[x] + r2[xr]) - (r0[xl] + 2 * r0[x] + r0[xr]);
            float fx = (float)dx * scale, fy = (float)dy * scale;
            pa[x] = fx * fx;
            pb[x] = fx * fy;
            pc[x] = fy * fy;
        }
        size_t o = (size_t)y * (size_t)w;
        sum3(pa, sa + o, w);
        sum3(pb, sb + o, w);
        sum3(pc, sc + o, w);
    }
    free(pa);
    float maxv = 0;
    for (int y = 0; y < h; y++) {
        size_t o0 = (size_t)reflect(y - 1, h) * (size_t)w, o1 = (size_t)y * (size_t)w,
               o2 = (size_t)reflect(y + 1, h) * (size_t)w;
        float *e = eig + o1;
        for (int x = 0; x < w; x++) {
            float a = (sa[o0 + x] + sa[o1 + x] + sa[o2 + x]) * 0.5f;
            float b = sb[o0 + x] + sb[o1 + x] + sb[o2 + x];
            float c = (sc[o0 + x] + sc[o1 + x] + sc[o2 + x]) * 0.5f;
            e[x] = (a + c) - sqrtf((a - c) * (a - c) + b * b);
        }
        for (int x = 0; x < w; x++) maxv = e[x] > maxv ? e[x] : maxv;
    }
    /* kept: above 1% of the maximum and no neighbour above it (OpenCV:
     * threshold to zero, 3x3 dilate, equal), image border excluded */
    float thresh = maxv * QUALITY;
    cand *cd = (cand *)g->cand;
    int nc = 0;
    /* hm: each row's 3-wide maxima (rows y-1, y, y+1 in turn); ok: the peak test, branch-free */
    float *hm = malloc(sizeof *hm * 3 * (size_t)w);
    unsigned char *ok = malloc((size_t)w);
    if (!hm || !ok) {
        free(hm);
        free(ok);
        return -1;
    }
#define MAX3(a, b, c) ((a) > (b) ? ((a) > (c) ? (a) : (c)) : ((b) > (c) ? (b) : (c))) /* no NaN here: maxps */
    for (int r = 0; r < 2; r++) {
        const float *e = eig + (size_t)r * (size_t)w;
        for (int x = 1; x < w - 1; x++) hm[r * w + x] = MAX3(e[x - 1], e[x], e[x + 1]);
    }
    for (int y = 1; y < h - 1; y++) {
        const float *p = eig + (size_t)y * (size_t)w, *dn = p + w;
        float *hu = hm + ((y - 1) % 3) * w, *hc = hm + (y % 3) * w, *hd = hm + ((y + 1) % 3) * w;
        for (int x = 1; x < w - 1; x++) hd[x] = MAX3(dn[x - 1], dn[x], dn[x + 1]);
        for (int x = 1; x < w - 1; x++) {
            float v = p[x];
            ok[x] = (v > thresh) & (v >= hu[x]) & (v >= hc[x]) & (v >= hd[x]);
        }
        for (int x = 1; x < w - 1; x++)
            if (ok[x]) cd[nc++] = (cand){p[x], y * w + x};
    }
#undef MAX3
    free(hm);
    free(ok);
    if (nc > MAX_CORNERS) {
        select_first(cd, nc, MAX_CORNERS);
        nc = MAX_CORNERS;
    }
    qsort(cd, (size_t)nc, sizeof *cd, cand_cmp);
    for (int i = 0; i < nc; i++) {
        pts[2 * i] = (float)(cd[i].at % w);
        pts[2 * i + 1] = (float)(cd[i].at / w);
    }
    return nc;
}

/* ---------------------------------------------------------------- pyramid */

static int level_alloc(level *l, int w, int h)
{
    int pw = w + 2 * PAD;
    size_t n = (size_t)pw * (size_t)(h + 2 * PAD);
    if (l->w == w && l->h == h && l->img) return 0;
    free(l->img);
    free(l->dx);
    free(l->dy);
    l->img = malloc(sizeof *l->img * n);
    l->dx = calloc(n, sizeof *l->dx);
    l->dy = calloc(n, sizeof *l->dy);
    l->w = w;
    l->h = h;
    l->pw = pw;
    return l->img && l->dx && l->dy ? 0 : -1;
}

/* pyrDown: 5x5 Gaussian [1 4 6 4 1]^2 / 256, reflected borders, rounded
 * (w, h >= 3).  row: [w] scratch. */
static void pyr_down(const uint8_t *src, int w, int h, uint8_t *dst, int ow, int oh, int *row)
{
    for (int y = 0; y < oh; y++) {
        const uint8_t *r[5];
        for (int i = 0; i < 5; i++) r[i] = src + (size_t)reflect(2 * y + i - 2, h) * (size_t)w;
        for (int x = 0; x < w; x++) row[x] = r[0][x] + 4 * r[1][x] + 6 * r[2][x] + 4 * r[3][x] + r[4][x];
        uint8_t *o = dst + (size_t)y * (size_t)ow;
        for (int x = 0; x < ow; x++) {
            int c = 2 * x, s;
            if (c >= 2 && c + 2 < w) s = row[c - 2] + 4 * row[c - 1] + 6 * row[c] + 4 * row[c + 1] + row[c + 2];
            else
                s = row[reflect(c - 2, w)] + 4 * row[reflect(c - 1, w)] + 6 * row[c] + 4 * row[reflect(c + 1, w)] +
                    row[reflect(c + 2, w)];
            o[x] = (uint8_t)((s + 128) >> 8);
        }
    }
}

/* Fill a level from grey img [h][w]: image x 32 with reflected border,
 * Scharr gradients (OpenCV's calcSharrDeriv: [3 10 3] smoothing, central
 * difference) with a zero border. */
static void level_fill(level *l, const uint8_t *img)
{
    int w = l->w, h = l->h, pw = l->pw;
    for (int y = 0; y < h; y++) {
        const uint8_t *r = img + (size_t)y * (size_t)w;
        float *o = l->img + (size_t)(y + PAD) * (size_t)pw + PAD;
        for (int x = 0; x < w; x++) o[x] = (float)(r[x] * 32);
        for (int x = 1; x <= PAD; x++) {
            o[-x] = o[reflect(-x, w)];
            o[w - 1 + x] = o[reflect(w - 1 + x, w)];
        }
    }
    for (int y = 1; y <= PAD; y++) {
        memcpy(l->img + (size_t)(PAD - y) * (size_t)pw, l->img + (size_t)(PAD + reflect(-y, h)) * (size_t)pw,
               sizeof(float) * (size_t)pw);
        memcpy(l->img + (size_t)(PAD + h - 1 + y) * (size_t)pw,
               l->img + (size_t)(PAD + reflect(h - 1 + y, h)) * (size_t)pw, sizeof(float) * (size_t)pw);
    }
    for (int y = 0; y < h; y++) {
        const uint8_t *r0 = img + (size_t)reflect(y - 1, h) * (size_t)w, *r1 = img + (size_t)y * (size_t)w,
                      *r2 = img + (size_t)reflect(y + 1, h) * (size_t)w;
        float *ox = l->dx + (size_t)(y + PAD) * (size_t)pw + PAD, *oy = l->dy + (size_t)(y + PAD) * (size_t)pw + PAD;
        for (int x = 1; x < w - 1; x++) { /* interior (vectorised), then the two edges */
            int t0l = (r0[x - 1] + r2[x - 1]) * 3 + r1[x - 1] * 10, t0r = (r0[x + 1] + r2[x + 1]) * 3 + r1[x + 1] * 10;
            int t1l = r2[x - 1] - r0[x - 1], t1c = r2[x] - r0[x], t1r = r2[x + 1] - r0[x + 1];
            ox[x] = (float)(t0r - t0l);
            oy[x] = (float)((t1r + t1l) * 3 + t1c * 10);
        }
        for (int x = 0; x < w; x += w - 1) {
            int xl = x ? x - 1 : 1, xr = x + 1 < w ? x + 1 : w - 2;
            int t0l = (r0[xl] + r2[xl]) * 3 + r1[xl] * 10, t0r = (r0[xr] + r2[xr]) * 3 + r1[xr] * 10;
            int t1l = r2[xl] - r0[xl], t1c = r2[x] - r0[x], t1r = r2[xr] - r0[xr];
            ox[x] = (float)(t0r - t0l);
            oy[x] = (float)((t1r + t1l) * 3 + t1c * 10);
        }
    }
}

/* The pyramid of grey img [h][w]; tmp: scratch for the smaller levels.
 * Returns -1 on OOM. */
static int pyramid_build(pyramid *p, const uint8_t *img, int w, int h, uint8_t *tmp, int *row)
{
    p->n = 0;
    const uint8_t *src = img;
    uint8_t *bufs[2] = {tmp, tmp + (size_t)w * (size_t)h / 2 + 1};
    for (int lv = 0; lv <= MAX_LEVEL; lv++) {
        if (w <= WIN || h <= WIN) break; /* OpenCV stops where the window no longer fits */
        if (level_alloc(&p->lv[lv], w, h)) return -1;
        level_fill(&p->lv[lv], src);
        p->n = lv + 1;
        int ow = (w + 1) / 2, oh = (h + 1) / 2;
        if (lv == MAX_LEVEL) break;
        uint8_t *dst = bufs[lv & 1];
        pyr_down(src, w, h, dst, ow, oh, row);
        src = dst;
        w = ow;
        h = oh;
    }
    return 0;
}

/* -------------------------------------------------------- Lucas-Kanade */

/* A window's top-left corner (px, py) on level L: its whole pixel (ix, iy)
 * and bilinear weights w (top-left, top-right, bottom-left, bottom-right);
 * 0 when it lies too far outside the level (OpenCV's test). */
static int window_at(const level *L, float px, float py, int *ix, int *iy, float w[4])
{
    *ix = (int)floorf(px);
    *iy = (int)floorf(py);
    if (*ix < -WIN || *ix >= L->w || *iy < -WIN || *iy >= L->h) return 0;
    float a = px - (float)*ix, b = py - (float)*iy;
    w[0] = (1 - a) * (1 - b);
    w[1] = a * (1 - b);
    w[2] = (1 - a) * b;
    w[3] = a * b;
    return 1;
}

/* Track prev's points pts [n][2] into cur: next [n][2], status[n]. */
static void lk(const pyramid *prev, const pyramid *cur, const float *pts, int n, float *next, unsigned char *status)
{
    /* the previous frame's window, [WIN][WINP]; gradients 0 in the padding columns */
    float iwin[WIN * WINP], ixw[WIN * WINP], iyw[WIN * WINP], keep[WINP];
    for (int x = 0; x < WINP; x++) keep[x] = x < WIN;
    const float fscale = 1.0f / (1 << 20);
    int top = prev->n - 1;
    for (int i = 0; i < n; i++) {
        status[i] = 1;
        float nx = 0, ny = 0;
        for (int lv = top; lv >= 0; lv--) {
            const level *L = &prev->lv[lv], *J = &cur->lv[lv];
            float s = 1.0f / (float)(1 << lv);
            float px = pts[2 * i] * s, py = pts[2 * i + 1] * s;
            if (lv == top) nx = px, ny = py;
            else nx *= 2, ny *= 2;
            next[2 * i] = nx;
            next[2 * i + 1] = ny;
            px -= HALF_WIN;
            py -= HALF_WIN;
            int ix, iy;
            float wt[4];
            if (!window_at(L, px, py, &ix, &iy, wt)) {
                if (lv == 0) status[i] = 0;
                continue;
            }
            float w00 = wt[0], w01 = wt[1], w10 = wt[2], w11 = wt[3];
            int pw = L->pw;
            /* per-column sums over the rows, added up at the end (stays in vector registers) */
            float s11[WINP] = {0}, s12[WINP] = {0}, s22[WINP] = {0};
            for (int y = 0; y < WIN; y++) {
                size_t o = (size_t)(iy + y + PAD) * (size_t)pw + (size_t)(ix + PAD);
                const float *r0 = L->img + o, *r1 = r0 + pw;
                const float *dx0 = L->dx + o, *dx1 = dx0 + pw, *dy0 = L->dy + o, *dy1 = dy0 + pw;
                for (int x = 0; x < WINP; x++) {
                    float v = r0[x] * w00 + r0[x + 1] * w01 + r1[x] * w10 + r1[x + 1] * w11;
                    float gx = (dx0[x] * w00 + dx0[x + 1] * w01 + dx1[x] * w10 + dx1[x + 1] * w11) * keep[x];
                    float gy = (dy0[x] * w00 + dy0[x + 1] * w01 + dy1[x] * w10 + dy1[x + 1] * w11) * keep[x];
                    iwin[y * WINP + x] = v;
                    ixw[y * WINP + x] = gx;
                    iyw[y * WINP + x] = gy;
                    s11[x] += gx * gx;
                    s12[x] += gx * gy;
                    s22[x] += gy * gy;
                }
            }
            double a11 = 0, a12 = 0, a22 = 0;
            for (int x = 0; x < WINP; x++) {
                a11 += s11[x];
                a12 += s12[x];
                a22 += s22[x];
            }
            float A11 = (float)a11 * fscale, A12 = (float)a12 * fscale, A22 = (float)a22 * fscale;
            float D = A11 * A22 - A12 * A12;
            float min_eig = (A22 + A11 - sqrtf((A11 - A22) * (A11 - A22) + 4.f * A12 * A12)) / (2 * WIN * WIN);
            if (min_eig < MIN_EIG || D < FLT_EPSILON) {
                if (lv == 0) status[i] = 0;
                continue;
            }
            D = 1.f / D;
            nx -= HALF_WIN;
            ny -= HALF_WIN;
            float pdx = 0, pdy = 0;
            for (int it = 0; it < LK_ITERS; it++) {
                int jx, jy;
                if (!window_at(J, nx, ny, &jx, &jy, wt)) {
                    if (lv == 0) status[i] = 0;
                    break;
                }
                float v00 = wt[0], v01 = wt[1], v10 = wt[2], v11 = wt[3];
                float s1[WINP] = {0}, s2[WINP] = {0};
                int jw = J->pw;
                for (int y = 0; y < WIN; y++) {
                    const float *r0 = J->img + (size_t)(jy + y + PAD) * (size_t)jw + (size_t)(jx + PAD), *r1 = r0 + jw;
                    const float *iw = iwin + y * WINP, *gx = ixw + y * WINP, *gy = iyw + y * WINP;
                    for (int x = 0; x < WINP; x++) {
                        float d = r0[x] * v00 + r0[x + 1] * v01 + r1[x] * v10 + r1[x + 1] * v11 - iw[x];
                        s1[x] += d * gx[x];
                        s2[x] += d * gy[x];
                    }
                }
                double b1 = 0, b2 = 0;
                for (int x = 0; x < WINP; x++) {
                    b1 += s1[x];
                    b2 += s2[x];
                }
                float B1 = (float)b1 * fscale, B2 = (float)b2 * fscale;
                float ddx = (A12 * B2 - A22 * B1) * D, ddy = (A12 * B1 - A11 * B2) * D;
                nx += ddx;
                ny += ddy;
                next[2 * i] = nx + HALF_WIN;
                next[2 * i + 1] = ny + HALF_WIN;
                if (ddx * ddx + ddy * ddy <= LK_EPS * LK_EPS) break;
                if (it > 0 && fabsf(ddx + pdx) < 0.01f && fabsf(ddy + pdy) < 0.01f) {
                    next[2 * i] -= ddx * 0.5f;
                    next[2 * i + 1] -= ddy * 0.5f;
                    break;
                }
                pdx = ddx;
                pdy = ddy;
            }
            nx = next[2 * i];
            ny = next[2 * i + 1];
        }
    }
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

static int inliers(const double *p, const double *q, int n, const double H[6], unsigned char *mask)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        double ex = H[0] * p[2 * i] + H[1] * p[2 * i + 1] + H[2] - q[2 * i];
        double ey = H[3] * p[2 * i] + H[4] * p[2 * i + 1] + H[5] - q[2 * i + 1];
        mask[i] = ex * ex + ey * ey <= RANSAC_THRESH * RANSAC_THRESH;
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

/* estimateAffinePartial2D(p -> q, RANSAC).  Returns -1 when no model. */
static int ransac_similarity(const double *p, const double *q, int n, unsigned char *best, unsigned char *mask,
                             double H[6])
{
    uint64_t rng = (uint64_t)-1; /* OpenCV's RNG state and step (multiply with carry) */
    int best_k = -1, iters = RANSAC_ITERS;
    for (int it = 0; it < iters; it++) {
        int i0 = 0, i1 = 0;
        for (int tries = 0; tries < 100 && i0 == i1; tries++) {
            rng = (uint64_t)(uint32_t)rng * 4164903690u + (rng >> 32);
            i0 = (int)((uint32_t)rng % (uint32_t)n);
            rng = (uint64_t)(uint32_t)rng * 4164903690u + (rng >> 32);
            i1 = (int)((uint32_t)rng % (uint32_t)n);
        }
        if (i0 == i1) continue;
        double sp[4] = {p[2 * i0], p[2 * i0 + 1], p[2 * i1], p[2 * i1 + 1]};
        double sq[4] = {q[2 * i0], q[2 * i0 + 1], q[2 * i1], q[2 * i1 + 1]};
        double h[6];
        if (fit_similarity(sp, sq, 2, NULL, h)) continue;
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

/* ------------------------------------------------------------------ apply */

int strix_gmc_apply(strix_gmc *g, const uint8_t *pix, int width, int height, int stride, int bgr, double H[6])
{
    static const double eye[6] = {1, 0, 0, 0, 1, 0};
    memcpy(H, eye, sizeof eye);
    int w = width / 2, h = height / 2;
    if (w < 3 || h < 3) return 0;
    if (width != g->fw || height != g->fh) g->have_prev = 0;
    size_t n = (size_t)w * (size_t)h;
    if (n > g->grey_cap) {
        uint8_t *a = realloc(g->grey, n), *b = realloc(g->tmp8, n + 2);
        if (a) g->grey = a;
        if (b) g->tmp8 = b;
        if (!a || !b) return -1;
        g->grey_cap = n;
    }
    uint16_t *rows = malloc(sizeof *rows * 2 * (size_t)width);
    if (!rows) return -1;
    grey_half(pix, width, height, stride, bgr, g->grey, w, h, rows);
    free(rows);
    int nc = corners(g, g->grey, w, h, g->pts);
    if (nc < 0) return -1;
    int *row = malloc(sizeof *row * (size_t)w);
    if (!row || pyramid_build(&g->cur, g->grey, w, h, g->tmp8, row)) {
        free(row);
        return -1;
    }
    free(row);
    int rc = 0;
    /* Ultralytics treats a frame after one without corners as a first frame */
    if (g->have_prev && g->n_prev > 0 && g->cur.n == g->prev.n && g->cur.n > 0) {
        lk(&g->prev, &g->cur, g->prev_pts, g->n_prev, g->next, g->status);
        double *pq = malloc(sizeof *pq * 4 * (size_t)g->n_prev);
        unsigned char *m = malloc(2 * (size_t)g->n_prev);
        int k = 0;
        if (!pq || !m) rc = -1;
        else
            for (int i = 0; i < g->n_prev; i++) {
                if (!g->status[i]) continue;
                pq[2 * k] = g->prev_pts[2 * i];
                pq[2 * k + 1] = g->prev_pts[2 * i + 1];
                pq[2 * (size_t)g->n_prev + 2 * k] = g->next[2 * i];
                pq[2 * (size_t)g->n_prev + 2 * k + 1] = g->next[2 * i + 1];
                k++;
            }
        double e[6];
        if (!rc && k > 4 && !ransac_similarity(pq, pq + 2 * (size_t)g->n_prev, k, m, m + g->n_prev, e)) {
            memcpy(H, e, sizeof e);
            H[2] *= 2; /* back to full-size pixels */
            H[5] *= 2;
        }
        free(pq);
        free(m);
    }
    /* the current frame becomes the previous one */
    pyramid t = g->prev;
    g->prev = g->cur;
    g->cur = t;
    memcpy(g->prev_pts, g->pts, sizeof(float) * 2 * (size_t)nc);
    g->n_prev = nc;
    g->have_prev = nc > 0;
    g->fw = width;
    g->fh = height;
    return rc;
}
