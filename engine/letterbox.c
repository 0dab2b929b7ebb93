/* letterbox.c — Ultralytics' LetterBox for predict, bit-exact.
 *
 * Geometry follows ultralytics/data/augment.py LetterBox.get_params: scale
 * r = min(H/h, W/w) (up or down), resized size max(round(w r), 1) x
 * max(round(h r), 1) with Python's round (ties to even: nearbyint() in the
 * default rounding mode), padding split as round(d/2 - 0.1) before and the
 * rest after.  In rect mode (LetterBox(auto=True), used by the predictor
 * when all images of a batch share one size) the padding is only the
 * remainder modulo the stride.
 *
 * The resize is cv2.resize(INTER_LINEAR) on uint8 as opencv-python computes
 * it on x86 (checked pixel for pixel by
 * tools/reference/check_letterbox.py):
 *   - source coordinate of output column dx: fx = (float)((dx + 0.5) * s - 0.5)
 *     with s = 1 / (new_w / src_w) in double, sx = floor(fx), fx -= sx;
 *     columns left of the image clamp to (sx 0, fx 0), right of it to
 *     (sx src_w - 1, fx 0); rows use the same formula but only the row
 *     indices are clamped, the weights keep the unclamped fraction;
 *   - weights are 11-bit fixed point: a0 = rint((1 - f) * 2048), a1 = rint(f * 2048);
 *   - horizontal pass: H = S[sx] * a0 + S[sx + 1] * a1 (exact int32);
 *   - vertical pass, as OpenCV's SIMD kernel (VResizeLinearVec_32s8u) rounds:
 *     out = ((((H0 >> 4) * b0) >> 16) + (((H1 >> 4) * b1) >> 16) + 2) >> 2,
 *     for every byte of the row, tail included (the scalar formula
 *     (H0 b0 + H1 b1 + 2^21) >> 22 of OpenCV's C fallback differs by one in
 *     places).  opencv-python 4.10 and 5.0 give exactly these bytes.
 *   An exact 2x downscale is INTER_AREA in OpenCV ((a + b + c + d + 2) >> 2);
 *   the formula above gives the same bytes there, so it needs no special case.
 * Then copyMakeBorder(114), BGR -> RGB and x / 255.f (a division, as torch's
 * div_(255) on float32; x * (1/255.f) differs for 126 of the 256 values).
 *
 * NV12 sources are converted to RGB a source row at a time (the rows the
 * resize reads, each once) and then take exactly the RGB path.
 */
#include "letterbox.h"

#include <math.h>
#include <string.h>

#define COEF_SCALE 2048.f /* OpenCV's INTER_RESIZE_COEF_SCALE */
#define PAD_VALUE 114
#define ALIGN 64

static size_t align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* Python's round() of a double: ties to even. */
static int py_round(double x) { return (int)nearbyint(x); }

static int floor_mod(int a, int b)
{
    int m = a % b;
    return m < 0 ? m + b : m;
}

/* ---------------------------------------------------------------- geometry */

/* Fill everything but dst_w/dst_h from the scale r and the tensor size. */
static void place(strix_letterbox_info *info, double r)
{
    info->new_w = py_round((double)info->src_w * r);
    info->new_h = py_round((double)info->src_h * r);
    if (info->new_w < 1) info->new_w = 1;
    if (info->new_h < 1) info->new_h = 1;
    /* round(w r) never exceeds the tensor; this only guards a 0-sized one */
    if (info->new_w > info->dst_w) info->new_w = info->dst_w;
    if (info->new_h > info->dst_h) info->new_h = info->dst_h;
    info->left = py_round((info->dst_w - info->new_w) / 2.0 - 0.1);
    info->top = py_round((info->dst_h - info->new_h) / 2.0 - 0.1);
    info->gain = (float)r;
}

void strix_letterbox_geometry(int src_w, int src_h, int dst_w, int dst_h, strix_letterbox_info *info)
{
    info->src_w = src_w;
    info->src_h = src_h;
    info->dst_w = dst_w;
    info->dst_h = dst_h;
    double rh = (double)dst_h / src_h, rw = (double)dst_w / src_w;
    place(info, rh < rw ? rh : rw);
}

void strix_letterbox_plan(int src_w, int src_h, int imgsz, int stride, int rect,
                          strix_letterbox_info *info)
{
    if (stride < 1) stride = 1;
    int s = (imgsz + stride - 1) / stride * stride; /* check_imgsz: up to a stride multiple */
    if (s < stride) s = stride;
    if (!rect) {
        strix_letterbox_geometry(src_w, src_h, s, s, info);
        return;
    }
    /* LetterBox(new_shape=s, auto=True): the scale comes from s, the tensor
     * is the resized image plus the padding modulo the stride */
    double rh = (double)s / src_h, rw = (double)s / src_w;
    double r = rh < rw ? rh : rw;
    int nw = py_round((double)src_w * r), nh = py_round((double)src_h * r);
    if (nw < 1) nw = 1;
    if (nh < 1) nh = 1;
    info->src_w = src_w;
    info->src_h = src_h;
    info->dst_w = nw + floor_mod(s - nw, stride);
    info->dst_h = nh + floor_mod(s - nh, stride);
    place(info, r);
}

void strix_letterbox_shape(int src_w, int src_h, int imgsz, int stride, int rect, int *dst_w,
                           int *dst_h)
{
    strix_letterbox_info info;
    strix_letterbox_plan(src_w, src_h, imgsz, stride, rect, &info);
    *dst_w = info.dst_w;
    *dst_h = info.dst_h;
}

/* ------------------------------------------------------------------ resize */

/* ------------------------------------------------------------------ NV12 */

void strix_yuv_coeffs_init(strix_yuv_coeffs *c, strix_colorspace cs, int full_range)
{
    /* Kr, Kb of the matrix; limited range stretches Y by 255/219 and the
     * chroma by 255/224 around their offsets 16 and 128 */
    const double kr = cs == STRIX_BT709 ? 0.2126 : 0.299, kb = cs == STRIX_BT709 ? 0.0722 : 0.114;
    const double kg = 1.0 - kr - kb;
    const double ys = full_range ? 1.0 : 255.0 / 219.0, cs_ = full_range ? 1.0 : 255.0 / 224.0;
    const double one = 65536.0;
    c->cy = (int)lrint(ys * one);
    c->crv = (int)lrint(cs_ * 2.0 * (1.0 - kr) * one);
    c->cbu = (int)lrint(cs_ * 2.0 * (1.0 - kb) * one);
    c->cgu = (int)lrint(cs_ * 2.0 * (1.0 - kb) * kb / kg * one);
    c->cgv = (int)lrint(cs_ * 2.0 * (1.0 - kr) * kr / kg * one);
    c->yoff = full_range ? 0 : 16;
}

/* (v + 2^15) >> 16 clamped to [0, 255], without shifting a negative value. */
static uint8_t fix_to_u8(int v)
{
    v += 1 << 15;
    if (v < 0) return 0;
    v >>= 16;
    return (uint8_t)(v > 255 ? 255 : v);
}

void strix_nv12_row_rgb(uint8_t *rgb, const strix_image *src, const strix_yuv_coeffs *c, int y)
{
    const int ys = src->stride ? src->stride : src->width;
    const int uvs = src->uv_stride ? src->uv_stride : 2 * ((src->width + 1) / 2);
    const uint8_t *Y = src->data + (size_t)y * ys, *UV = src->uv + (size_t)(y / 2) * uvs;
    for (int x = 0; x < src->width; x++) {
        const int l = c->cy * (Y[x] - c->yoff), u = UV[x & ~1] - 128, v = UV[(x & ~1) + 1] - 128;
        rgb[3 * x + 0] = fix_to_u8(l + c->crv * v);
        rgb[3 * x + 1] = fix_to_u8(l - c->cgu * u - c->cgv * v);
        rgb[3 * x + 2] = fix_to_u8(l + c->cbu * u);
    }
}

/* A source image's rows as packed 3-channel bytes: RGB/BGR rows are read in
 * place, NV12 rows converted into `conv` ([width * 3], one row at a time:
 * a pointer returned is valid until the next call). */
typedef struct src_rows {
    const strix_image *im;
    strix_yuv_coeffs yuv;
    uint8_t *conv;
} src_rows;

static void src_rows_init(src_rows *r, const strix_image *im, uint8_t *conv)
{
    r->im = im;
    r->conv = conv;
    if (im->format == STRIX_NV12) strix_yuv_coeffs_init(&r->yuv, im->colorspace, im->full_range);
}

static const uint8_t *src_row(const src_rows *r, int y)
{
    const strix_image *im = r->im;
    if (im->format != STRIX_NV12) return im->data + (size_t)y * (im->stride ? im->stride : im->width * 3);
    strix_nv12_row_rgb(r->conv, im, &r->yuv, y);
    return r->conv;
}

/* Tables and the two cached horizontally-resized rows, carved from scratch. */
typedef struct resize_plan {
    int src_w, src_h, new_w, new_h;
    double scale_y;
    int *x0, *x1;    /* [new_w] byte offsets of the two source pixels of a column */
    short *ax;       /* [new_w][2] horizontal weights */
    int *row[2];     /* [new_w * 3] horizontally resized source rows */
    int row_y[2];    /* the source row each holds, -1 for none */
} resize_plan;

static size_t plan_bytes(int new_w)
{
    return 2 * align_up((size_t)new_w * sizeof(int)) + align_up((size_t)new_w * 2 * sizeof(short)) +
           2 * align_up((size_t)new_w * 3 * sizeof(int));
}

/* One output coordinate's source index and fraction, as OpenCV computes them. */
static int src_coord(int d, double scale, float *frac)
{
    float f = (float)((d + 0.5) * scale - 0.5);
    int s = (int)floorf(f);
    *frac = f - (float)s;
    return s;
}

static short weight(float w) { return (short)lrintf(w * COEF_SCALE); }

static void plan_init(resize_plan *p, int new_w, int new_h, int src_w, int src_h, void *scratch)
{
    unsigned char *b = scratch;
    p->src_w = src_w;
    p->src_h = src_h;
    p->new_w = new_w;
    p->new_h = new_h;
    p->x0 = (int *)b;
    b += align_up((size_t)new_w * sizeof(int));
    p->x1 = (int *)b;
    b += align_up((size_t)new_w * sizeof(int));
    p->ax = (short *)b;
    b += align_up((size_t)new_w * 2 * sizeof(short));
    p->row[0] = (int *)b;
    b += align_up((size_t)new_w * 3 * sizeof(int));
    p->row[1] = (int *)b;
    p->row_y[0] = p->row_y[1] = -1;

    /* OpenCV receives inv_scale = dst/src and inverts it: keep both roundings */
    double scale_x = 1.0 / ((double)new_w / src_w);
    p->scale_y = 1.0 / ((double)new_h / src_h);
    for (int dx = 0; dx < new_w; dx++) {
        float fx;
        int sx = src_coord(dx, scale_x, &fx);
        if (sx < 0) sx = 0, fx = 0.f;
        if (sx >= src_w - 1) sx = src_w - 1, fx = 0.f;
        p->x0[dx] = sx * 3;
        p->x1[dx] = (sx + 1 < src_w ? sx + 1 : sx) * 3; /* weight 0 at the right edge */
        p->ax[2 * dx] = weight(1.f - fx);
        p->ax[2 * dx + 1] = weight(fx);
    }
}

static void hresize(const resize_plan *p, const uint8_t *s, int *out)
{
    for (int dx = 0; dx < p->new_w; dx++) {
        const uint8_t *a = s + p->x0[dx], *b = s + p->x1[dx];
        int a0 = p->ax[2 * dx], a1 = p->ax[2 * dx + 1];
        out[3 * dx + 0] = a[0] * a0 + b[0] * a1;
        out[3 * dx + 1] = a[1] * a0 + b[1] * a1;
        out[3 * dx + 2] = a[2] * a0 + b[2] * a1;
    }
}

/* The horizontally resized source row y, computed unless cached; never
 * evicts the slot holding row `keep`. */
static const int *hrow(resize_plan *p, const src_rows *src, int y, int keep)
{
    for (int i = 0; i < 2; i++)
        if (p->row_y[i] == y) return p->row[i];
    int slot = p->row_y[0] == keep ? 1 : 0;
    hresize(p, src_row(src, y), p->row[slot]);
    p->row_y[slot] = y;
    return p->row[slot];
}

/* Output row dy ([new_w * 3] uint8). */
static void resize_row(resize_plan *p, const src_rows *src, int dy, uint8_t *out)
{
    float fy;
    int sy = src_coord(dy, p->scale_y, &fy);
    int y0 = sy < 0 ? 0 : sy >= p->src_h ? p->src_h - 1 : sy;
    int y1 = sy + 1 < 0 ? 0 : sy + 1 >= p->src_h ? p->src_h - 1 : sy + 1;
    int b0 = weight(1.f - fy), b1 = weight(fy);
    const int *h0 = hrow(p, src, y0, -1);
    const int *h1 = hrow(p, src, y1, y0);
    int n = p->new_w * 3;
    for (int i = 0; i < n; i++) {
        /* OpenCV packs H >> 4 to int16 and keeps the high half of the
         * 16 x 16-bit products (v_mul_hi), then rounds off two bits */
        int v = ((((h0[i] >> 4) * b0) >> 16) + (((h1[i] >> 4) * b1) >> 16) + 2) >> 2;
        out[i] = (uint8_t)(v > 255 ? 255 : v);
    }
}

size_t strix_resize_bilinear_u8_scratch_bytes(int new_w, int new_h, int src_w, int src_h)
{
    (void)new_h;
    (void)src_w;
    (void)src_h;
    return plan_bytes(new_w);
}

void strix_resize_bilinear_u8(uint8_t *dst, int new_w, int new_h, const uint8_t *src, int src_w,
                              int src_h, int src_stride, void *scratch)
{
    if (src_stride == 0) src_stride = src_w * 3;
    if (new_w == src_w && new_h == src_h) { /* cv::resize copies in this case */
        for (int y = 0; y < new_h; y++)
            memcpy(dst + (size_t)y * new_w * 3, src + (size_t)y * src_stride, (size_t)new_w * 3);
        return;
    }
    resize_plan p;
    plan_init(&p, new_w, new_h, src_w, src_h, scratch);
    const strix_image im = {.data = src, .width = src_w, .height = src_h, .stride = src_stride};
    src_rows rows;
    src_rows_init(&rows, &im, NULL);
    for (int dy = 0; dy < new_h; dy++)
        resize_row(&p, &rows, dy, dst + (size_t)dy * new_w * 3);
}

/* --------------------------------------------------------------- letterbox */

static int needs_resize(const strix_letterbox_info *info)
{
    return info->new_w != info->src_w || info->new_h != info->src_h;
}

/* The resize's tables and output row, then the row an NV12 source is
 * converted into (asked for whatever the format: the size is the geometry's). */
size_t strix_letterbox_scratch_bytes(const strix_letterbox_info *info)
{
    size_t conv = align_up((size_t)info->src_w * 3);
    if (!needs_resize(info)) return conv;
    return plan_bytes(info->new_w) + align_up((size_t)info->new_w * 3) + conv;
}

void strix_letterbox(float *dst, const strix_image *src, const strix_letterbox_info *info,
                     void *scratch)
{
    float lut[256]; /* x / 255.f exactly as torch divides */
    for (int i = 0; i < 256; i++) lut[i] = (float)i / 255.f;
    const float pad = lut[PAD_VALUE];
    int r = src->format == STRIX_BGR ? 2 : 0, b = 2 - r; /* source channel of R and B */
    int resize = needs_resize(info);
    resize_plan p;
    uint8_t *row = NULL, *conv = scratch;
    if (resize) {
        plan_init(&p, info->new_w, info->new_h, info->src_w, info->src_h, scratch);
        row = (uint8_t *)scratch + plan_bytes(info->new_w);
        conv = row + align_up((size_t)info->new_w * 3);
    }
    src_rows rows;
    src_rows_init(&rows, src, conv);
    size_t row_floats = (size_t)info->dst_w * 3;
    for (int y = 0; y < info->dst_h; y++) {
        float *o = dst + (size_t)y * row_floats;
        int iy = y - info->top;
        if (iy < 0 || iy >= info->new_h) {
            for (size_t i = 0; i < row_floats; i++) o[i] = pad;
            continue;
        }
        const uint8_t *s;
        if (resize) {
            resize_row(&p, &rows, iy, row);
            s = row;
        } else {
            s = src_row(&rows, iy);
        }
        int x = 0;
        for (; x < info->left; x++) o[3 * x] = o[3 * x + 1] = o[3 * x + 2] = pad;
        for (int i = 0; i < info->new_w; i++, x++) {
            o[3 * x + 0] = lut[s[3 * i + r]];
            o[3 * x + 1] = lut[s[3 * i + 1]];
            o[3 * x + 2] = lut[s[3 * i + b]];
        }
        for (; x < info->dst_w; x++) o[3 * x] = o[3 * x + 1] = o[3 * x + 2] = pad;
    }
}
