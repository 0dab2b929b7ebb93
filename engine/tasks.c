/* tasks.c — masks, keypoint and polygon coordinates, oriented boxes and
 * top-k of the task heads, reproducing the float32 arithmetic of
 * ultralytics/utils/ops.py, utils/metrics.py and utils/nms.py (8.4) and of
 * torch's bilinear F.interpolate (align_corners=False) on the CPU.  The
 * contours are in contour.c.  Layouts: tasks.h. */
#include "tasks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "postprocess.h"
#include "util.h"

/* ---- bilinear resize, as aten's upsample_bilinear2d on the CPU ---------
 * Per output index d: src = max(scale (d + 0.5) - 0.5, 0) in float, i0 =
 * min(floor(src), in - 1), i1 = i0 + (i0 < in - 1), l1 = clamp(src - i0),
 * l0 = 1 - l1; a value is (x00 l0w + x01 l1w) l0h + (x10 l0w + x11 l1w) l1h.
 * scale is in / out, or 1 / scale_factor when one is given. */
typedef struct axis {
    int *i0, *step; /* step: 0 or 1 (i1 - i0) */
    float *l0, *l1;
} axis;

/* The tables of both axes of a resize to oh x ow. */
typedef struct resize {
    axis y, x;
} resize;

static void resize_free(resize *r)
{
    free(r->y.i0);
    free(r->y.l0);
    free(r->x.i0);
    free(r->x.l0);
    memset(r, 0, sizeof *r);
}

/* 0 when out of memory (then nothing is held). */
static int resize_alloc(resize *r, int oh, int ow)
{
    axis *a[2] = {&r->y, &r->x};
    int n[2] = {oh, ow};
    memset(r, 0, sizeof *r);
    for (int k = 0; k < 2; k++) {
        a[k]->i0 = malloc(sizeof(int) * 2 * (size_t)n[k]);
        a[k]->l0 = malloc(sizeof(float) * 2 * (size_t)n[k]);
        if (!a[k]->i0 || !a[k]->l0) {
            resize_free(r);
            return 0;
        }
        a[k]->step = a[k]->i0 + n[k];
        a[k]->l1 = a[k]->l0 + n[k];
    }
    return 1;
}

static void axis_fill(axis *a, int in, int out, float scale)
{
    for (int d = 0; d < out; d++) {
        float src = scale * ((float)d + 0.5f) - 0.5f;
        if (src < 0.f) src = 0.f;
        int i = (int)floorf(src);
        if (i > in - 1) i = in - 1;
        float l = src - (float)i;
        l = l < 0.f ? 0.f : l > 1.f ? 1.f : l;
        a->i0[d] = i;
        a->step[d] = i < in - 1;
        a->l0[d] = 1.f - l;
        a->l1[d] = l;
    }
}

static inline float bilinear(const float *in, size_t in_stride, const resize *r, int y, int x)
{
    const axis *ay = &r->y, *ax = &r->x;
    const float *r0 = in + (size_t)ay->i0[y] * in_stride, *r1 = r0 + (size_t)ay->step[y] * in_stride;
    int c0 = ax->i0[x], c1 = c0 + ax->step[x];
    float t0 = r0[c0] * ax->l0[x] + r0[c1] * ax->l1[x];
    float t1 = r1[c0] * ax->l0[x] + r1[c1] * ax->l1[x];
    return t0 * ay->l0[y] + t1 * ay->l1[y];
}

/* The columns x1 <= x < x2 (x integer, compared in float as crop_mask does)
 * within [0, limit): [*lo, *hi). */
static void crop_span(float a, float b, int limit, int *lo, int *hi)
{
    double l = ceil((double)a), h = ceil((double)b);
    if (!(l == l) || !(h == h)) l = h = 0; /* NaN boxes crop everything */
    l = l < 0 ? 0 : l > limit ? limit : l;
    h = h < 0 ? 0 : h > limit ? limit : h;
    *lo = (int)l;
    *hi = (int)h < *lo ? *lo : (int)h;
}

/* logits [mh * mw] = coeffs [c] x protos [c, mh * mw], summed over c in order. */
static void mask_logits(const float *protos, int c, size_t hw, const float *coeff, float *logits)
{
    for (size_t p = 0; p < hw; p++) logits[p] = 0.f;
    for (int k = 0; k < c; k++) {
        const float *pk = protos + (size_t)k * hw;
        float ck = coeff[k];
        for (size_t p = 0; p < hw; p++) logits[p] += ck * pk[p];
    }
}

static int bad_mask_args(const float *protos, int c, int mh, int mw, const float *coeffs, const float *boxes,
                         int n, int h, int w, const uint8_t *masks)
{
    return !protos || c <= 0 || mh <= 0 || mw <= 0 || n < 0 || (n && (!coeffs || !boxes || !masks)) || h <= 0 ||
           w <= 0 || (size_t)h * (size_t)w > ((size_t)1 << 31);
}

/* Threshold (> 0) and crop: the box's window of the resize of src [sh, sw]
 * (row stride src_stride) to out [h, w]; zero elsewhere.  Returns 1 when
 * any pixel is set. */
static int crop_resized(const float *src, size_t src_stride, const resize *r, const float *box, int h, int w,
                        uint8_t *out)
{
    int x0, x1, y0, y1, any = 0;
    crop_span(box[0], box[2], w, &x0, &x1);
    crop_span(box[1], box[3], h, &y0, &y1);
    memset(out, 0, (size_t)h * (size_t)w);
    for (int y = y0; y < y1; y++) {
        uint8_t *row = out + (size_t)y * (size_t)w;
        for (int x = x0; x < x1; x++) {
            row[x] = bilinear(src, src_stride, r, y, x) > 0.f;
            any |= row[x];
        }
    }
    return any;
}

strix_status strix_process_mask(const float *protos, int c, int mh, int mw, const float *coeffs,
                                const float *boxes, int n, int in_h, int in_w, uint8_t *masks,
                                uint8_t *nonempty, strix_error *err)
{
    if (bad_mask_args(protos, c, mh, mw, coeffs, boxes, n, in_h, in_w, masks))
        return strix_fail(err, STRIX_E_ARG, "process_mask: invalid shapes (protos %dx%dx%d, %d boxes, input %dx%d)",
                          c, mh, mw, n, in_w, in_h);
    size_t hw = (size_t)mh * (size_t)mw;
    float *logits = malloc(sizeof(float) * hw);
    resize rz;
    if (!resize_alloc(&rz, in_h, in_w) || !logits) {
        free(logits);
        resize_free(&rz);
        return strix_fail(err, STRIX_E_NOMEM, "process_mask: out of memory for a %dx%d mask", mw, mh);
    }
    axis_fill(&rz.y, mh, in_h, (float)mh / (float)in_h);
    axis_fill(&rz.x, mw, in_w, (float)mw / (float)in_w);
    for (int i = 0; i < n; i++) {
        mask_logits(protos, c, hw, coeffs + (size_t)i * (size_t)c, logits);
        int any = crop_resized(logits, (size_t)mw, &rz, boxes + 4 * (size_t)i, in_h, in_w,
                               masks + (size_t)i * (size_t)in_h * (size_t)in_w);
        if (nonempty) nonempty[i] = (uint8_t)any;
    }
    free(logits);
    resize_free(&rz);
    return STRIX_OK;
}

/* scale_masks(ratio_pad=None, padding=True)'s window of an [ih, iw] mask
 * that holds a letterboxed [oh, ow] image: rows [*top, *bottom), columns
 * [*left, *right), clamped to the mask. */
static void unpad_window(int ih, int iw, int oh, int ow, int *top, int *bottom, int *left, int *right)
{
    double gh = (double)ih / oh, gw = (double)iw / ow, gain = gh < gw ? gh : gw;
    int nh = (int)nearbyint(oh * gain), nw = (int)nearbyint(ow * gain);
    if (nh < 1) nh = 1;
    if (nw < 1) nw = 1;
    double pad_h = (ih - nh) / 2.0, pad_w = (iw - nw) / 2.0;
    int t = (int)nearbyint(pad_h - 0.1), l = (int)nearbyint(pad_w - 0.1);
    int b = t + nh, r = l + nw;
    /* a slice past the end stops at the end, as Python's does */
    *top = t < 0 ? 0 : t > ih ? ih : t;
    *left = l < 0 ? 0 : l > iw ? iw : l;
    *bottom = b > ih ? ih : b < *top ? *top : b;
    *right = r > iw ? iw : r < *left ? *left : r;
}

strix_status strix_process_mask_native(const float *protos, int c, int mh, int mw, const float *coeffs,
                                       const float *boxes, int n, int src_h, int src_w, uint8_t *masks,
                                       uint8_t *nonempty, strix_error *err)
{
    if (bad_mask_args(protos, c, mh, mw, coeffs, boxes, n, src_h, src_w, masks) || mh > (1 << 14) ||
        mw > (1 << 14))
        return strix_fail(err, STRIX_E_ARG,
                          "process_mask_native: invalid shapes (protos %dx%dx%d, %d boxes, image %dx%d)", c, mh, mw,
                          n, src_w, src_h);
    /* f: the smallest upsample (1, 2 or 4) of the logits that crops the
     * input's letterbox padding on whole pixels (the input is 4 mh x 4 mw) */
    double g4h = 4.0 * mh / src_h, g4w = 4.0 * mw / src_w, g4 = g4h < g4w ? g4h : g4w;
    int nh = (int)nearbyint(src_h * g4), nw = (int)nearbyint(src_w * g4);
    int pad = (4 * mh - (nh < 1 ? 1 : nh)) | (4 * mw - (nw < 1 ? 1 : nw));
    if (pad < 0) pad = 0; /* never for a letterbox: round(side * gain) <= 4 mh */
    int v = pad | pad / 2, f = v % 4 == 0 ? 1 : v % 2 == 0 ? 2 : 4; /* 4 // gcd(4, v) */
    int uh = f * mh, uw = f * mw; /* the upsampled logits */
    size_t hw = (size_t)mh * (size_t)mw, uhw = (size_t)uh * (size_t)uw;
    float *logits = malloc(sizeof(float) * (hw + (f > 1 ? uhw : 0)));
    resize rf = {0}, rz;     /* rf: the upsample by f, rz: the window to the source */
    int ok = resize_alloc(&rz, src_h, src_w) && logits && (f == 1 || resize_alloc(&rf, uh, uw));
    if (!ok) {
        free(logits);
        resize_free(&rz);
        resize_free(&rf);
        return strix_fail(err, STRIX_E_NOMEM, "process_mask_native: out of memory for a %dx%d mask", src_w,
                          src_h);
    }
    float *up = f > 1 ? logits + hw : logits;
    if (f > 1) {
        axis_fill(&rf.y, mh, uh, 1.f / (float)f);
        axis_fill(&rf.x, mw, uw, 1.f / (float)f);
    }
    /* scale_masks: unchanged when already at the source size, else the
     * padding cropped and the window resized to the source */
    int top = 0, bottom = uh, left = 0, right = uw;
    if (uh != src_h || uw != src_w) unpad_window(uh, uw, src_h, src_w, &top, &bottom, &left, &right);
    int wh = bottom - top, ww = right - left;
    if (wh < 1 || ww < 1) wh = ww = 0; /* an empty window: no mask (degenerate shapes only) */
    if (wh) {
        axis_fill(&rz.y, wh, src_h, (uh == src_h && uw == src_w) ? 1.f : (float)wh / (float)src_h);
        axis_fill(&rz.x, ww, src_w, (uh == src_h && uw == src_w) ? 1.f : (float)ww / (float)src_w);
    }
    for (int i = 0; i < n; i++) {
        uint8_t *m = masks + (size_t)i * (size_t)src_h * (size_t)src_w;
        int any = 0;
        if (!wh) {
            memset(m, 0, (size_t)src_h * (size_t)src_w);
        } else {
            mask_logits(protos, c, hw, coeffs + (size_t)i * (size_t)c, logits);
            if (f > 1)
                for (int y = 0; y < uh; y++)
                    for (int x = 0; x < uw; x++) up[(size_t)y * uw + x] = bilinear(logits, (size_t)mw, &rf, y, x);
            any = crop_resized(up + (size_t)top * uw + left, (size_t)uw, &rz, boxes + 4 * (size_t)i, src_h, src_w,
                               m);
        }
        if (nonempty) nonempty[i] = (uint8_t)any;
    }
    free(logits);
    resize_free(&rz);
    resize_free(&rf);
    return STRIX_OK;
}

strix_status strix_mask_to_source(const uint8_t *mask, int mh, int mw, uint8_t *out, int src_h, int src_w,
                                  strix_error *err)
{
    if (!mask || !out || mh <= 0 || mw <= 0 || src_h <= 0 || src_w <= 0)
        return strix_fail(err, STRIX_E_ARG, "scale_masks: invalid shapes (%dx%d to %dx%d)", mw, mh, src_w, src_h);
    if (mh == src_h && mw == src_w) {
        memcpy(out, mask, (size_t)mh * (size_t)mw);
        return STRIX_OK;
    }
    int top, bottom, left, right;
    unpad_window(mh, mw, src_h, src_w, &top, &bottom, &left, &right);
    int wh = bottom - top, ww = right - left;
    if (wh < 1 || ww < 1) {
        memset(out, 0, (size_t)src_h * (size_t)src_w);
        return STRIX_OK;
    }
    float *win = malloc(sizeof(float) * (size_t)wh * (size_t)ww);
    resize rz;
    if (!resize_alloc(&rz, src_h, src_w) || !win) {
        free(win);
        resize_free(&rz);
        return strix_fail(err, STRIX_E_NOMEM, "scale_masks: out of memory for a %dx%d mask", src_w, src_h);
    }
    for (int y = 0; y < wh; y++)
        for (int x = 0; x < ww; x++) win[(size_t)y * ww + x] = mask[(size_t)(y + top) * mw + x + left] ? 1.f : 0.f;
    axis_fill(&rz.y, wh, src_h, (float)wh / (float)src_h);
    axis_fill(&rz.x, ww, src_w, (float)ww / (float)src_w);
    for (int y = 0; y < src_h; y++)
        for (int x = 0; x < src_w; x++) out[(size_t)y * src_w + x] = bilinear(win, (size_t)ww, &rz, y, x) > 0.5f;
    free(win);
    resize_free(&rz);
    return STRIX_OK;
}

/* ---- coordinates ---------------------------------------------------- */

static float clampf(float v, float hi) { return v < 0.f ? 0.f : v > hi ? hi : v; }

void strix_scale_coords(float *coords, int n, int stride, int in_w, int in_h, int src_w, int src_h,
                        int normalize)
{
    if (!coords || n <= 0 || stride < 2 || in_w <= 0 || in_h <= 0 || src_w <= 0 || src_h <= 0) return;
    strix_scale_geom g;
    strix_scale_geometry(in_w, in_h, src_w, src_h, &g);
    for (int i = 0; i < n; i++) {
        float *p = coords + (size_t)i * (size_t)stride;
        p[0] = clampf((p[0] - g.pad_x) / g.gain_x, (float)src_w);
        p[1] = clampf((p[1] - g.pad_y) / g.gain_y, (float)src_h);
        if (normalize) {
            p[0] /= (float)src_w;
            p[1] /= (float)src_h;
        }
    }
}

/* ---- oriented boxes ------------------------------------------------- */

/* _get_covariance_matrix: the Gaussian of a box, [[a, c], [c, b]]. */
static void covariance(const float *r, float *a, float *b, float *c)
{
    float ga = r[2] * r[2] / 12.f, gb = r[3] * r[3] / 12.f;
    float cs = cosf(r[4]), sn = sinf(r[4]);
    float cos2 = cs * cs, sin2 = sn * sn;
    *a = ga * cos2 + gb * sin2;
    *b = ga * sin2 + gb * cos2;
    *c = (ga - gb) * cs * sn;
}

float strix_probiou(const float p[5], const float q[5])
{
    const float eps = 1e-7f;
    float a1, b1, c1, a2, b2, c2;
    covariance(p, &a1, &b1, &c1);
    covariance(q, &a2, &b2, &c2);
    float dy = p[1] - q[1], dx = p[0] - q[0];
    float sa = a1 + a2, sb = b1 + b2, sc = c1 + c2;
    float den = sa * sb - sc * sc;
    float t1 = ((sa * (dy * dy) + sb * (dx * dx)) / (den + eps)) * 0.25f;
    float t2 = ((sc * (q[0] - p[0]) * dy) / (den + eps)) * 0.5f;
    float d1 = a1 * b1 - c1 * c1, d2 = a2 * b2 - c2 * c2;
    d1 = d1 < 0.f ? 0.f : d1;
    d2 = d2 < 0.f ? 0.f : d2;
    float t3 = logf(den / (4.f * sqrtf(d1 * d2) + eps) + eps) * 0.5f;
    float bd = t1 + t2 + t3;
    bd = bd < eps ? eps : bd > 100.f ? 100.f : bd; /* clamp: NaN stays NaN, as torch's */
    float hd = sqrtf(1.f - expf(-bd) + eps);
    return 1.f - hd;
}

/* torch.remainder in float32: fmod, moved to the divisor's sign. */
static float remainder_f(float a, float b)
{
    float m = fmodf(a, b);
    if (m != 0.f && ((b < 0.f) != (m < 0.f))) m += b;
    return m;
}

void strix_polygon_fill(const float *xy, int n, float *xs, uint8_t *mask, int h, int w)
{
    memset(mask, 0, (size_t)h * (size_t)w);
    for (int y = 0; y < h; y++) {
        int m = 0; /* the row's crossings in xs, in order (insertion: a row has few) */
        for (int i = 0; i < n; i++) {
            float x0 = xy[2 * i], y0 = xy[2 * i + 1];
            float x1 = xy[2 * ((i + 1) % n)], y1 = xy[2 * ((i + 1) % n) + 1];
            if ((y0 <= (float)y) == (y1 <= (float)y)) continue; /* half-open: a vertex counts once */
            float x = x0 + ((float)y - y0) * (x1 - x0) / (y1 - y0);
            int k = m++;
            for (; k > 0 && xs[k - 1] > x; k--) xs[k] = xs[k - 1];
            xs[k] = x;
        }
        for (int k = 0; k + 1 < m; k += 2) { /* fmaxf, fminf: in the row even for an overflowed (NaN) crossing */
            float a = fmaxf(ceilf(xs[k]), 0), b = fminf(floorf(xs[k + 1]), (float)(w - 1));
            if (a <= b) memset(mask + (size_t)y * w + (size_t)a, 1, (size_t)(b - a + 1));
        }
    }
    /* the edges themselves, a pixel per row they cross (a horizontal one whole): a contour runs through its
     * boundary pixels, the bottom rows and one-pixel spurs that the spans leave out among them */
    for (int i = 0; i < n; i++) {
        float x0 = xy[2 * i], y0 = xy[2 * i + 1], x1 = xy[2 * ((i + 1) % n)], y1 = xy[2 * ((i + 1) % n) + 1];
        float ya = fmaxf(ceilf(fminf(y0, y1)), 0), yb = fminf(floorf(fmaxf(y0, y1)), (float)(h - 1));
        for (float y = ya; y <= yb; y++) {
            float xa = y1 != y0 ? x0 + (y - y0) * (x1 - x0) / (y1 - y0) : fminf(x0, x1);
            float xb = y1 != y0 ? xa : fmaxf(x0, x1);
            float a = fmaxf(nearbyintf(xa), 0), b = fminf(nearbyintf(xb), (float)(w - 1));
            if (a <= b) memset(mask + (size_t)y * w + (size_t)a, 1, (size_t)(b - a + 1));
        }
    }
}

void strix_regularize_rboxes(float *xywhr, int n)
{
    const double pi = 3.14159265358979323846;
    for (int i = 0; xywhr && i < n; i++) {
        float *r = xywhr + 5 * (size_t)i;
        float t = r[4];
        if (remainder_f(t, (float)pi) >= (float)(pi / 2)) {
            float w = r[2];
            r[2] = r[3];
            r[3] = w;
        }
        r[4] = remainder_f(t, (float)(pi / 2));
    }
}

void strix_xywhr_corners(const float *xywhr, int n, float *corners)
{
    for (int i = 0; xywhr && corners && i < n; i++) {
        const float *r = xywhr + 5 * (size_t)i;
        float cs = cosf(r[4]), sn = sinf(r[4]);
        float v1x = r[2] / 2 * cs, v1y = r[2] / 2 * sn;
        float v2x = -r[3] / 2 * sn, v2y = r[3] / 2 * cs;
        float *o = corners + 8 * (size_t)i;
        o[0] = r[0] + v1x + v2x;
        o[1] = r[1] + v1y + v2y;
        o[2] = r[0] + v1x - v2x;
        o[3] = r[1] + v1y - v2y;
        o[4] = r[0] - v1x - v2x;
        o[5] = r[1] - v1y - v2y;
        o[6] = r[0] - v1x + v2x;
        o[7] = r[1] - v1y + v2y;
    }
}

void strix_corners_xywhr(const float *corners, int n, float *xywhr)
{
    for (int i = 0; corners && xywhr && i < n; i++) {
        const float *o = corners + 8 * (size_t)i;
        float *r = xywhr + 5 * (size_t)i;
        /* corners c + v1 + v2, c + v1 - v2, c - v1 - v2, c - v1 + v2 (strix_xywhr_corners) */
        float v1x = (o[2] - o[4]) / 2, v1y = (o[3] - o[5]) / 2, v2x = (o[0] - o[2]) / 2, v2y = (o[1] - o[3]) / 2;
        r[0] = (o[0] + o[4]) / 2;
        r[1] = (o[1] + o[5]) / 2;
        r[2] = 2 * hypotf(v1x, v1y);
        r[3] = 2 * hypotf(v2x, v2y);
        r[4] = atan2f(v1y, v1x);
    }
}

void strix_scale_rboxes(float *xywhr, int n, int in_w, int in_h, int src_w, int src_h)
{
    if (!xywhr || n <= 0 || in_w <= 0 || in_h <= 0 || src_w <= 0 || src_h <= 0) return;
    strix_scale_geom g;
    strix_scale_geometry(in_w, in_h, src_w, src_h, &g);
    for (int i = 0; i < n; i++) {
        float *r = xywhr + 5 * (size_t)i;
        r[0] = (r[0] - g.pad_x) / g.gain_x;
        r[1] = (r[1] - g.pad_y) / g.gain_y;
        r[2] /= g.gain_x;
        r[3] /= g.gain_y;
    }
}

/* ---- classification ------------------------------------------------- */

int strix_topk_probs(const float *probs, int n, int k, int *top)
{
    if (!probs || !top || n <= 0 || k <= 0) return 0;
    if (k > n) k = n;
    /* selection by insertion: k is 5 in practice */
    int m = 0;
    for (int i = 0; i < n; i++) {
        float v = probs[i];
        if (!(v == v)) continue; /* NaN: below every number, placed last */
        if (m == k && !(v > probs[top[m - 1]])) continue;
        int j = m < k ? m++ : m - 1;
        while (j > 0 && v > probs[top[j - 1]]) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = i;
    }
    for (int i = 0; i < n && m < k; i++) /* torch sorts NaN after every number */
        if (!(probs[i] == probs[i])) top[m++] = i;
    return m;
}
