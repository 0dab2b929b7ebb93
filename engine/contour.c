/* contour.c — the polygons of Results.masks.xy: cv2.findContours(mask,
 * RETR_EXTERNAL, CHAIN_APPROX_SIMPLE) and Ultralytics' masks2segments /
 * merge_multi_segment.  A hand-written border follower, because strix does
 * not link OpenCV: it is OpenCV's legacy Suzuki-Abe tracer (icvFetchContour
 * and the raster scan of cvFindNextContour) restricted to what RETR_EXTERNAL
 * and CHAIN_APPROX_SIMPLE use, so contours, their order (the last found
 * first), starting points and vertices are OpenCV's.
 *
 * The mask is copied into a frame one pixel wider on every side (what
 * cv::findContours' copyMakeBorder does), as int8: 0 background, 1
 * foreground, then the tracer's marks: MARK on a traced border pixel, or
 * MARK | -128 (negative) where the trace examined its right neighbour (the
 * right edge of a component).  The scan skips a new outer border when the
 * last mark left of it on its row is positive: it lies inside a traced
 * component (RETR_EXTERNAL keeps only the outermost). */
#include "tasks.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MARK 2

/* chain codes: 0 right, 1 up-right, 2 up, 3 up-left, 4 left, ... (y down) */
static const int code_dx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int code_dy[8] = {0, -1, -1, -1, 0, 1, 1, 1};

void strix_polygon_free(strix_polygon *p)
{
    if (!p) return;
    free(p->xy);
    p->xy = NULL;
    p->n = p->cap = 0;
}

static int poly_push(strix_polygon *p, float x, float y)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        float *xy = cap > p->cap ? realloc(p->xy, sizeof(float) * 2 * (size_t)cap) : NULL;
        if (!xy) return 0;
        p->xy = xy;
        p->cap = cap;
    }
    p->xy[2 * p->n] = x;
    p->xy[2 * p->n + 1] = y;
    p->n++;
    return 1;
}

static int starts_push(int **starts, int *cap, int n, int v)
{
    if (n >= *cap) {
        int c = *cap ? 2 * *cap : 16;
        int *s = c > *cap ? realloc(*starts, sizeof(int) * (size_t)c) : NULL;
        if (!s) return 0;
        *starts = s;
        *cap = c;
    }
    (*starts)[n] = v;
    return 1;
}

/* icvFetchContour for an outer border starting at i0 (stride W), the
 * CHAIN_APPROX_SIMPLE points (those where the chain turns) appended to out
 * in mask coordinates: the frame's minus one, plus (ox, oy). */
static int fetch_contour(signed char *img, size_t W, size_t i0, int ox, int oy, strix_polygon *out)
{
    const ptrdiff_t w = (ptrdiff_t)W;
    const ptrdiff_t delta[16] = {1, -w + 1, -w, -w - 1, -1, w - 1, w, w + 1,
                                 1, -w + 1, -w, -w - 1, -1, w - 1, w, w + 1};
    int px = (int)(i0 % W) - 1 + ox, py = (int)(i0 / W) - 1 + oy;
    int s = 4, s_end = 4;
    size_t i1;
    do {
        s = (s - 1) & 7;
        i1 = (size_t)((ptrdiff_t)i0 + delta[s]);
    } while (img[i1] == 0 && s != s_end);
    if (s == s_end) { /* a single pixel */
        img[i0] = (signed char)(MARK | -128);
        return poly_push(out, (float)px, (float)py);
    }
    size_t i3 = i0, i4;
    int prev_s = s ^ 4;
    for (;;) {
        s_end = s;
        while (s < 15) {
            i4 = (size_t)((ptrdiff_t)i3 + delta[++s]);
            if (img[i4] != 0) break;
        }
        s &= 7;
        if ((unsigned)(s - 1) < (unsigned)s_end) /* the right neighbour was examined: a right edge */
            img[i3] = (signed char)(MARK | -128);
        else if (img[i3] == 1)
            img[i3] = MARK;
        if (s != prev_s) {
            if (!poly_push(out, (float)px, (float)py)) return 0;
            prev_s = s;
        }
        px += code_dx[s];
        py += code_dy[s];
        if (i4 == i0 && i3 == i1) break;
        i3 = i4;
        s = (s + 4) & 7;
    }
    return 1;
}

strix_status strix_mask_contours(const uint8_t *mask, int h, int w, strix_polygon *all, int **starts,
                                 int *starts_cap, int *n_contours, strix_error *err)
{
    if (!mask || !all || !starts || !starts_cap || !n_contours || h <= 0 || w <= 0 ||
        (size_t)(h + 2) * (size_t)(w + 2) > ((size_t)1 << 31))
        return strix_fail(err, STRIX_E_ARG, "findContours: invalid mask (%dx%d)", w, h);
    /* only the rows and columns that hold foreground: contours do not change
     * when the mask moves inside its frame of zeros */
    int x0 = w, x1 = -1, y0 = h, y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (mask[(size_t)y * w + x]) {
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
                y0 = y < y0 ? y : y0, y1 = y;
            }
    all->n = 0;
    *n_contours = 0;
    if (x1 < 0) { /* no foreground, no contour */
        if (!starts_push(starts, starts_cap, 0, 0))
            return strix_fail(err, STRIX_E_NOMEM, "findContours: out of memory");
        return STRIX_OK;
    }
    size_t W = (size_t)(x1 - x0 + 1) + 2, H = (size_t)(y1 - y0 + 1) + 2;
    signed char *img = calloc(W * H, 1);
    strix_polygon found = {0};
    int *fstart = NULL, fcap = 0, nf = 0;
    if (!img) return strix_fail(err, STRIX_E_NOMEM, "findContours: out of memory for a %dx%d mask", w, h);
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++)
            img[(size_t)(y - y0 + 1) * W + (size_t)(x - x0) + 1] = mask[(size_t)y * w + x] != 0;

    int ok = 1;
    for (size_t y = 1; ok && y + 1 < H; y++) {
        size_t lnbd = y * W; /* the last border pixel met on this row */
        signed char prev = 0;
        for (size_t x = 1; ok && x + 1 < W; x++) {
            size_t i = y * W + x;
            signed char p = img[i];
            if (p == prev) continue;
            if (prev == 0 && p == 1 && img[lnbd] <= 0) { /* an outermost outer border */
                ok = starts_push(&fstart, &fcap, nf, found.n) && fetch_contour(img, W, i, x0, y0, &found);
                nf++;
                prev = img[i]; /* the scan resumes past it; lnbd stays where it was */
                continue;
            }
            prev = p;
            if (prev & -2) lnbd = i;
        }
    }
    free(img);
    /* OpenCV hands them back last found first */
    for (int k = nf - 1; ok && k >= 0; k--) {
        int a = fstart[k], b = k + 1 < nf ? fstart[k + 1] : found.n;
        ok = starts_push(starts, starts_cap, *n_contours, all->n);
        for (int j = a; ok && j < b; j++) ok = poly_push(all, found.xy[2 * j], found.xy[2 * j + 1]);
        if (ok) (*n_contours)++;
    }
    if (ok) ok = starts_push(starts, starts_cap, *n_contours, all->n);
    free(fstart);
    strix_polygon_free(&found);
    if (!ok) return strix_fail(err, STRIX_E_NOMEM, "findContours: out of memory for the contours of a %dx%d mask",
                               w, h);
    return STRIX_OK;
}

/* min_index: the closest pair of points of a [na] and b [nb], the first in
 * row-major order among equals (np.argmin). */
static void min_index(const float *a, int na, const float *b, int nb, int *ia, int *ib)
{
    double best = -1;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) {
            double dx = (double)a[2 * i] - b[2 * j], dy = (double)a[2 * i + 1] - b[2 * j + 1];
            double d = dx * dx + dy * dy;
            if (best < 0 || d < best) {
                best = d;
                *ia = i;
                *ib = j;
            }
        }
}

/* Append points [from, to) of seg (a contour of len points, reversed or
 * not, rolled left by roll, then closed by repeating its first point:
 * len + 1 points) to out. */
static int push_rolled(strix_polygon *out, const float *seg, int len, int reversed, int roll, int from, int to)
{
    for (int k = from; k < to; k++) {
        int r = (k % len + roll) % len; /* index into the reversed-or-not contour */
        int src = reversed ? len - 1 - r : r;
        if (!poly_push(out, seg[2 * src], seg[2 * src + 1])) return 0;
    }
    return 1;
}

/* merge_multi_segment (ultralytics/data/converter.py) of n contours. */
static int merge_segments(const strix_polygon *all, const int *starts, int n, strix_polygon *out)
{
    int *idx = malloc(sizeof(int) * 2 * (size_t)n); /* idx[2i], idx[2i+1]: the indexes recorded for segment i */
    int *cnt = calloc((size_t)n, sizeof(int));
    if (!idx || !cnt) {
        free(idx);
        free(cnt);
        return 0;
    }
    for (int i = 1; i < n; i++) {
        int a = 0, b = 0;
        min_index(all->xy + 2 * starts[i - 1], starts[i] - starts[i - 1], all->xy + 2 * starts[i],
                  starts[i + 1] - starts[i], &a, &b);
        idx[2 * (i - 1) + cnt[i - 1]++] = a;
        idx[2 * i + cnt[i]++] = b;
    }
    int ok = 1;
    /* first round: each segment reversed when its two indexes run backwards,
     * rolled to start at its first index and closed; the ends whole, the
     * middle ones up to their second index */
    for (int i = 0; ok && i < n; i++) {
        const float *seg = all->xy + 2 * starts[i];
        int len = starts[i + 1] - starts[i];
        int rev = cnt[i] == 2 && idx[2 * i] > idx[2 * i + 1];
        int i0 = rev ? len - 1 - idx[2 * i] : idx[2 * i];
        if (i == 0 || i == n - 1) {
            ok = push_rolled(out, seg, len, rev, i0, 0, len + 1);
        } else {
            int i1 = rev ? len - 1 - idx[2 * i + 1] : idx[2 * i + 1];
            ok = push_rolled(out, seg, len, rev, i0, 0, i1 - i0 + 1);
        }
    }
    /* second round, backwards: the rest of each middle segment */
    for (int i = n - 2; ok && i >= 1; i--) {
        const float *seg = all->xy + 2 * starts[i];
        int len = starts[i + 1] - starts[i];
        int rev = idx[2 * i] > idx[2 * i + 1];
        int i0 = rev ? len - 1 - idx[2 * i] : idx[2 * i];
        int d = idx[2 * i + 1] - idx[2 * i];
        ok = push_rolled(out, seg, len, rev, i0, d < 0 ? -d : d, len + 1);
    }
    free(idx);
    free(cnt);
    return ok;
}

strix_status strix_mask_segment(const uint8_t *mask, int h, int w, strix_segment_strategy strategy,
                                strix_polygon *out, strix_error *err)
{
    if (!out) return strix_fail(err, STRIX_E_ARG, "masks2segments: no output polygon");
    strix_polygon all = {0};
    int *starts = NULL, cap = 0, n = 0;
    strix_status st = strix_mask_contours(mask, h, w, &all, &starts, &cap, &n, err);
    out->n = 0;
    int ok = 1;
    if (st == STRIX_OK && n == 1) {
        for (int j = 0; ok && j < all.n; j++) ok = poly_push(out, all.xy[2 * j], all.xy[2 * j + 1]);
    } else if (st == STRIX_OK && n > 1 && strategy == STRIX_SEGMENT_LARGEST) {
        int best = 0;
        for (int k = 1; k < n; k++)
            if (starts[k + 1] - starts[k] > starts[best + 1] - starts[best]) best = k;
        for (int j = starts[best]; ok && j < starts[best + 1]; j++)
            ok = poly_push(out, all.xy[2 * j], all.xy[2 * j + 1]);
    } else if (st == STRIX_OK && n > 1) {
        ok = merge_segments(&all, starts, n, out);
    }
    strix_polygon_free(&all);
    free(starts);
    if (st != STRIX_OK) return st;
    if (!ok) return strix_fail(err, STRIX_E_NOMEM, "masks2segments: out of memory for a %dx%d mask", w, h);
    return STRIX_OK;
}
