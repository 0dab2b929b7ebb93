/* test_imageproc.c — images in and out, letterbox, NMS, box scaling and
 * annotation, without a model.
 *
 *   letterbox geometry against hand-checked Ultralytics cases (rect and
 *   square, banker's rounding, 1-pixel-wide, the 1600x1201 rect case);
 *   NV12 to RGB against the exact colour matrices, an NV12 letterbox
 *   against the RGB letterbox of its converted pixels;
 *   bilinear resize against a naive per-pixel rewrite of OpenCV's
 *   fixed-point formula and against checksums of cv2.resize output
 *   (tools/reference/check_letterbox.py prints them);
 *   NMS against a naive torchvision-style O(n^2) reference (class-aware and
 *   agnostic, score ties, max_det, conf strictly greater, IoU equal to the
 *   threshold), and its speed on 8400 x 80 heads;
 *   scale_boxes + clipping; annotation never writes outside the frame
 *   (guard bytes, row padding) and does draw where a box is;
 *   image loading errors (missing, directory, empty, truncated and corrupt
 *   JPEG, a PNG header claiming 100000x100000, 0x0, over a custom limit),
 *   the sample JPEGs decoded to libjpeg-turbo's (OpenCV's) exact pixels,
 *   grey, CMYK and YCCK JPEGs (made here with libjpeg) to OpenCV's RGB,
 *   EXIF orientation, the writer (round trip, refusing to overwrite, no
 *   temporary files left behind).
 * Run from the repository root; sample JPEGs are read from $STRIX_DATA or
 * ../shared/data when present (tests needing them skip otherwise). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h> /* after stdio.h: it uses FILE and size_t without including them */
#include <stb_image_write.h>

#include "annotate.h"
#include "image.h"
#include "letterbox.h"
#include "postprocess.h"
#include "testlib.h"

/* ------------------------------------------------------------------ helpers */

static char g_dir[64]; /* per-run temporary directory */

static const char *tmp_path(const char *name)
{
    static char buf[4][256]; /* a few live at once in one test */
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 256, "%s/%s", g_dir, name);
    return p;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    return b;
}

static const char *data_dir(void)
{
    const char *d = getenv("STRIX_DATA");
    return d ? d : "../shared/data";
}

/* Number of entries in g_dir whose name contains ".tmp". */
static int temp_files_left(void)
{
    DIR *d = opendir(g_dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp")) n++;
    closedir(d);
    return n;
}

/* The synthetic image tools/reference/check_letterbox.py generates too. */
static void synth(uint8_t *p, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                p[((size_t)y * w + x) * 3 + c] =
                    (uint8_t)((x * 31 + y * 17 + c * 101 + ((x * y) % 23) * 11 + (x ^ y) * 3) & 255);
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x01000193u;
    return h;
}

static void random_pixels(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)tl_u64();
}

/* ---------------------------------------------------------------- letterbox */

static void test_letterbox_geometry_known(void)
{
    /* src w, h, imgsz, rect -> dst w, h, new w, h, left, top (Ultralytics'
     * LetterBox.get_params, checked by hand) */
    static const int cases[][10] = {
        {768, 576, 640, 1, 640, 480, 640, 480, 0, 0},
        {773, 512, 640, 1, 640, 448, 640, 424, 0, 12},
        {640, 424, 640, 1, 640, 448, 640, 424, 0, 12},
        {1, 1000, 640, 1, 32, 640, 1, 640, 15, 0},
        {768, 576, 640, 0, 640, 640, 640, 480, 0, 80},
        {1600, 1201, 640, 1, 640, 480, 640, 480, 0, 0},
        {1280, 5, 640, 1, 640, 32, 640, 2, 0, 15},   /* 2.5 rounds to 2 */
        {1280, 5, 640, 0, 640, 640, 640, 2, 0, 319},
        {3, 5, 640, 1, 384, 640, 384, 640, 0, 0},    /* scaled up */
        {1000, 1, 640, 0, 640, 640, 640, 1, 0, 319},
        {7, 7, 300, 1, 320, 320, 320, 320, 0, 0},    /* imgsz rounded up to 320 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int *c = cases[i];
        strix_letterbox_info in;
        strix_letterbox_plan(c[0], c[1], c[2], 32, c[3], &in);
        int got[6] = {in.dst_w, in.dst_h, in.new_w, in.new_h, in.left, in.top};
        for (int k = 0; k < 6; k++)
            TL_CHECK(got[k] == c[4 + k], "%dx%d imgsz %d rect %d: field %d is %d, want %d", c[0], c[1],
                     c[2], c[3], k, got[k], c[4 + k]);
        int w, h;
        strix_letterbox_shape(c[0], c[1], c[2], 32, c[3], &w, &h);
        TL_CHECK(w == c[4] && h == c[5], "shape %dx%d", w, h);
    }
    /* fitting into a given tensor is auto=False: 1600x1201 into 640x480 is 639 wide */
    strix_letterbox_info g;
    strix_letterbox_geometry(1600, 1201, 640, 480, &g);
    TL_CHECK(g.new_w == 639 && g.new_h == 480 && g.left == 0 && g.top == 0, "geometry %dx%d +%d+%d",
             g.new_w, g.new_h, g.left, g.top);
}

static void test_letterbox_geometry_invariants(void)
{
    for (int it = 0; it < 3000; it++) {
        int w = tl_int(1, 4000), h = tl_int(1, 4000), imgsz = 32 * tl_int(1, 40), rect = tl_int(0, 1);
        strix_letterbox_info in;
        strix_letterbox_plan(w, h, imgsz, 32, rect, &in);
        TL_CHECK(in.new_w >= 1 && in.new_h >= 1 && in.left >= 0 && in.top >= 0 &&
                     in.left + in.new_w <= in.dst_w && in.top + in.new_h <= in.dst_h,
                 "%dx%d at %d: image %dx%d+%d+%d outside %dx%d", w, h, imgsz, in.new_w, in.new_h,
                 in.left, in.top, in.dst_w, in.dst_h);
        TL_CHECK(in.dst_w <= imgsz && in.dst_h <= imgsz && (in.dst_w == imgsz || in.dst_h == imgsz),
                 "%dx%d at %d: tensor %dx%d", w, h, imgsz, in.dst_w, in.dst_h);
        /* centred: the two paddings differ by at most one */
        int pr = in.dst_w - in.new_w - in.left, pb = in.dst_h - in.new_h - in.top;
        TL_CHECK(abs(pr - in.left) <= 1 && abs(pb - in.top) <= 1, "%dx%d: padding %d/%d %d/%d", w, h,
                 in.left, pr, in.top, pb);
        if (rect) TL_CHECK(pr + in.left < 32 && pb + in.top < 32, "%dx%d: rect padding too big", w, h);
    }
}

/* OpenCV's INTER_LINEAR fixed-point formula, written per output pixel with
 * no tables or row cache, for comparison with the library's version. */
static uint8_t naive_px(const uint8_t *src, int sw, int sh, int stride, int dw, int dh, int dx, int dy, int c)
{
    double scx = 1.0 / ((double)dw / sw), scy = 1.0 / ((double)dh / sh);
    float fx = (float)((dx + 0.5) * scx - 0.5), fy = (float)((dy + 0.5) * scy - 0.5);
    int sx = (int)floorf(fx), sy = (int)floorf(fy);
    fx -= (float)sx;
    fy -= (float)sy;
    if (sx < 0) sx = 0, fx = 0;
    if (sx >= sw - 1) sx = sw - 1, fx = 0;
    int ax0 = (int)lrintf((1.f - fx) * 2048.f), ax1 = (int)lrintf(fx * 2048.f);
    int by0 = (int)lrintf((1.f - fy) * 2048.f), by1 = (int)lrintf(fy * 2048.f);
    int hv[2];
    for (int k = 0; k < 2; k++) {
        int y = sy + k;
        y = y < 0 ? 0 : y > sh - 1 ? sh - 1 : y;
        const uint8_t *row = src + (size_t)y * stride;
        int x1 = sx + 1 < sw ? sx + 1 : sx;
        hv[k] = row[sx * 3 + c] * ax0 + row[x1 * 3 + c] * ax1;
    }
    int v = ((((hv[0] >> 4) * by0) >> 16) + (((hv[1] >> 4) * by1) >> 16) + 2) >> 2;
    return (uint8_t)(v > 255 ? 255 : v);
}

static void test_resize_vs_naive(void)
{
    for (int it = 0; it < 60; it++) {
        int sw = tl_int(1, 90), sh = tl_int(1, 90), dw = tl_int(1, 120), dh = tl_int(1, 120);
        if (it % 6 == 0) dw = 2 * sw, dh = 2 * sh;          /* exact 2x up */
        if (it % 6 == 1) sw = 2 * dw, sh = 2 * dh;          /* exact 2x down */
        int stride = sw * 3 + tl_int(0, 7);
        uint8_t *src = malloc((size_t)stride * sh), *dst = malloc((size_t)dw * dh * 3);
        void *scratch = malloc(strix_resize_bilinear_u8_scratch_bytes(dw, dh, sw, sh) + 1);
        random_pixels(src, (size_t)stride * sh);
        strix_resize_bilinear_u8(dst, dw, dh, src, sw, sh, stride, scratch);
        int bad = -1;
        for (int y = 0; y < dh && bad < 0; y++)
            for (int x = 0; x < dw && bad < 0; x++)
                for (int c = 0; c < 3; c++)
                    if (dst[((size_t)y * dw + x) * 3 + c] != naive_px(src, sw, sh, stride, dw, dh, x, y, c))
                        bad = (y * dw + x) * 3 + c;
        free(src);
        free(dst);
        free(scratch);
        TL_CHECK(bad < 0, "%dx%d -> %dx%d: byte %d differs from the naive formula", sw, sh, dw, dh, bad);
    }
}

static void test_resize_golden_cv2(void)
{
    /* FNV-1a of cv2.resize(synth(sw, sh), (dw, dh), INTER_LINEAR), opencv-python 5.0.0 */
    static const struct { int sw, sh, dw, dh; uint32_t sum; } g[] = {
        {37, 23, 64, 40, 0x467780dbu},    {64, 48, 31, 17, 0x4e32e9abu},
        {5, 3, 17, 29, 0x936c2f19u},      {1, 1, 7, 5, 0x1cc85a72u},
        {13, 1, 4, 9, 0x1619d9d5u},       {100, 60, 50, 30, 0x5ee01002u},
        {20, 10, 40, 20, 0xccf4d866u},    {641, 479, 640, 478, 0x25711820u},
        {3, 200, 11, 13, 0xe7273650u},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        uint8_t *src = malloc((size_t)g[i].sw * g[i].sh * 3), *dst = malloc((size_t)g[i].dw * g[i].dh * 3);
        void *scratch = malloc(strix_resize_bilinear_u8_scratch_bytes(g[i].dw, g[i].dh, g[i].sw, g[i].sh));
        synth(src, g[i].sw, g[i].sh);
        strix_resize_bilinear_u8(dst, g[i].dw, g[i].dh, src, g[i].sw, g[i].sh, 0, scratch);
        uint32_t sum = fnv1a(dst, (size_t)g[i].dw * g[i].dh * 3);
        free(src);
        free(dst);
        free(scratch);
        TL_CHECK(sum == g[i].sum, "%dx%d -> %dx%d: checksum %08x, cv2 gives %08x", g[i].sw, g[i].sh,
                 g[i].dw, g[i].dh, sum, g[i].sum);
    }
}

static void test_letterbox_tensor(void)
{
    for (int it = 0; it < 12; it++) {
        int w = tl_int(1, 300), h = tl_int(1, 300), rect = it & 1;
        int stride = w * 3 + tl_int(0, 5);
        uint8_t *px = malloc((size_t)stride * h);
        random_pixels(px, (size_t)stride * h);
        strix_letterbox_info in;
        strix_letterbox_plan(w, h, 160, 32, rect, &in);
        float *t = malloc(sizeof(float) * in.dst_w * in.dst_h * 3);
        float *t2 = malloc(sizeof(float) * in.dst_w * in.dst_h * 3);
        uint8_t *ref = malloc((size_t)in.new_w * in.new_h * 3);
        void *s1 = malloc(strix_letterbox_scratch_bytes(&in) + 1);
        void *s2 = malloc(strix_resize_bilinear_u8_scratch_bytes(in.new_w, in.new_h, w, h));
        strix_image im = {.data = px, .width = w, .height = h, .stride = stride, .format = STRIX_RGB};
        strix_letterbox(t, &im, &in, s1);
        im.format = STRIX_BGR;
        strix_letterbox(t2, &im, &in, s1);
        strix_resize_bilinear_u8(ref, in.new_w, in.new_h, px, w, h, stride, s2);
        const char *bad = NULL;
        for (int y = 0; y < in.dst_h && !bad; y++)
            for (int x = 0; x < in.dst_w && !bad; x++)
                for (int c = 0; c < 3; c++) {
                    size_t i = ((size_t)y * in.dst_w + x) * 3;
                    int iy = y - in.top, ix = x - in.left;
                    float want = (float)114 / 255.f;
                    if (iy >= 0 && iy < in.new_h && ix >= 0 && ix < in.new_w)
                        want = (float)ref[((size_t)iy * in.new_w + ix) * 3 + c] / 255.f;
                    if (t[i + c] != want) bad = "value differs from resize / 255.f or the padding";
                    else if (t2[i + 2 - c] != want) bad = "BGR input not swapped to RGB";
                }
        free(px);
        free(t);
        free(t2);
        free(ref);
        free(s1);
        free(s2);
        TL_CHECK(!bad, "%dx%d rect %d: %s", w, h, rect, bad);
    }
}

/* ---------------------------------------------------------------------- NMS */

typedef struct ref_box { float x1, y1, x2, y2, s; int c, a; } ref_box;

static int ref_cmp(const void *a, const void *b)
{
    const ref_box *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return x->a - y->a;
}

/* torchvision-style NMS: sort, then every kept box suppresses every later one. */
/* classes: NULL, or nc flags applied to each anchor's best class as
 * Ultralytics' non_max_suppression(classes=) does: after the class max,
 * before sorting, NMS and max_det. */
static int naive_nms(strix_detection *out, const float *head, int A, int nc, float conf, double iou,
                     int max_det, int agnostic, const unsigned char *classes)
{
    ref_box *b = malloc(sizeof *b * (size_t)A);
    int n = 0;
    for (int a = 0; a < A; a++) {
        const float *r = head + (size_t)a * (4 + nc);
        int bc = 0;
        for (int c = 1; c < nc; c++)
            if (r[4 + c] > r[4 + bc]) bc = c;
        if (!(r[4 + bc] > conf) || (classes && !classes[bc])) continue;
        b[n] = (ref_box){r[0] - r[2] / 2, r[1] - r[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2, r[4 + bc], bc, a};
        n++;
    }
    qsort(b, (size_t)n, sizeof *b, ref_cmp);
    char *sup = calloc((size_t)n + 1, 1);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (sup[i]) continue;
        if (k < max_det) {
            out[k] = (strix_detection){b[i].x1, b[i].y1, b[i].x2, b[i].y2, b[i].s, b[i].c};
            k++;
        }
        float oi = agnostic ? 0.f : (float)b[i].c * 7680.f;
        for (int j = i + 1; j < n; j++) {
            float oj = agnostic ? 0.f : (float)b[j].c * 7680.f;
            float ix1 = b[i].x1 + oi, iy1 = b[i].y1 + oi, ix2 = b[i].x2 + oi, iy2 = b[i].y2 + oi;
            float jx1 = b[j].x1 + oj, jy1 = b[j].y1 + oj, jx2 = b[j].x2 + oj, jy2 = b[j].y2 + oj;
            float w = fmaxf(0.f, fminf(ix2, jx2) - fmaxf(ix1, jx1));
            float h = fmaxf(0.f, fminf(iy2, jy2) - fmaxf(iy1, jy1));
            float inter = w * h;
            float ov = inter / ((ix2 - ix1) * (iy2 - iy1) + (jx2 - jx1) * (jy2 - jy1) - inter);
            if ((double)ov > iou) sup[j] = 1;
        }
    }
    free(b);
    free(sup);
    return k;
}

/* A random head [A, 4 + nc]; coarse values make exact IoU and score ties. */
static float *random_head(int A, int nc, int coarse)
{
    float *h = malloc(sizeof(float) * (size_t)A * (4 + nc));
    for (int a = 0; a < A; a++) {
        float *r = h + (size_t)a * (4 + nc);
        r[0] = tl_uniform(0, 640);
        r[1] = tl_uniform(0, 640);
        r[2] = tl_uniform(1, 200);
        r[3] = tl_uniform(1, 200);
        if (coarse)
            for (int k = 0; k < 4; k++) r[k] = 8.f * floorf(r[k] / 8.f) + (k >= 2 ? 8.f : 0.f);
        for (int c = 0; c < nc; c++) {
            float u = tl_uniform(0, 1);
            r[4 + c] = coarse ? floorf(u * 20.f) / 20.f : u * u * u;
        }
    }
    return h;
}

/* NV12: the fixed-point conversion rounds the exact matrix to the nearest
 * level (within 0.51: its 16-bit coefficients are off by up to 2^-17 each;
 * exact at the range's black and white), and an NV12 letterbox equal
 * bit for bit to the RGB letterbox of its converted pixels. */
static void test_letterbox_nv12(void)
{
    for (int cs = 0; cs < 2; cs++)
        for (int full = 0; full < 2; full++) {
            strix_yuv_coeffs c;
            strix_yuv_coeffs_init(&c, cs ? STRIX_BT709 : STRIX_BT601, full);
            const double kr = cs ? 0.2126 : 0.299, kb = cs ? 0.0722 : 0.114, kg = 1 - kr - kb;
            const double ys = full ? 1 : 255 / 219.0, us = full ? 1 : 255 / 224.0;
            for (int t = 0; t < 4000; t++) {
                int Y = tl_int(0, 255), U = tl_int(0, 255), V = tl_int(0, 255);
                if (t < 2) Y = full ? 255 * t : 16 + 219 * t, U = V = 128; /* black, white */
                uint8_t y1[2] = {(uint8_t)Y, (uint8_t)Y}, uv[2] = {(uint8_t)U, (uint8_t)V}, rgb[6];
                strix_image im = {.data = y1, .width = 2, .height = 1, .format = STRIX_NV12, .uv = uv};
                strix_nv12_row_rgb(rgb, &im, &c, 0);
                double l = ys * (Y - (full ? 0 : 16)), u = us * (U - 128), v = us * (V - 128);
                double want[3] = {l + 2 * (1 - kr) * v, l - 2 * (1 - kb) * kb / kg * u - 2 * (1 - kr) * kr / kg * v,
                                  l + 2 * (1 - kb) * u};
                for (int k = 0; k < 3; k++) {
                    double w = want[k] < 0 ? 0 : want[k] > 255 ? 255 : want[k];
                    TL_CHECK(fabs(rgb[k] - w) <= (t < 2 ? 0 : 0.51) && rgb[k] == rgb[3 + k],
                             "%s %s YUV (%d,%d,%d) channel %d: %d, exact %.3f", cs ? "BT.709" : "BT.601",
                             full ? "full" : "limited", Y, U, V, k, rgb[k], want[k]);
                    if (tl_g.failed) return;
                }
            }
        }
    for (int it = 0; it < 16 && !tl_g.failed; it++) {
        int w = tl_int(1, 300), h = tl_int(1, 300), rect = it & 1, cw = (w + 1) / 2, ch = (h + 1) / 2;
        int ys = w + tl_int(0, 5), uvs = 2 * cw + tl_int(0, 5);
        uint8_t *Y = malloc((size_t)ys * h), *UV = malloc((size_t)uvs * ch), *rgb = malloc((size_t)w * 3 * h);
        random_pixels(Y, (size_t)ys * h);
        random_pixels(UV, (size_t)uvs * ch);
        strix_image nv = {Y, w, h, ys, STRIX_NV12, UV, uvs, it & 2 ? STRIX_BT709 : STRIX_BT601, it & 4 ? 1 : 0,
                          STRIX_HOST};
        strix_yuv_coeffs c;
        strix_yuv_coeffs_init(&c, nv.colorspace, nv.full_range);
        for (int y = 0; y < h; y++) strix_nv12_row_rgb(rgb + (size_t)y * w * 3, &nv, &c, y);
        strix_image im = {.data = rgb, .width = w, .height = h, .format = STRIX_RGB};
        strix_letterbox_info in;
        strix_letterbox_plan(w, h, it == 3 ? 640 : 160, 32, rect, &in);
        size_t len = (size_t)in.dst_w * in.dst_h * 3;
        float *a = malloc(sizeof(float) * len), *b = malloc(sizeof(float) * len);
        void *scratch = malloc(strix_letterbox_scratch_bytes(&in));
        strix_letterbox(a, &nv, &in, scratch);
        strix_letterbox(b, &im, &in, scratch);
        TL_CHECK(!memcmp(a, b, sizeof(float) * len), "NV12 %dx%d (%s, %s range) -> %dx%d: differs from the RGB letterbox "
                 "of its converted pixels", w, h, it & 2 ? "BT.709" : "BT.601", it & 4 ? "full" : "limited",
                 in.dst_w, in.dst_h);
        free(Y), free(UV), free(rgb), free(a), free(b), free(scratch);
    }
}

static void test_nms_vs_naive(void)
{
    static const double ious[] = {0.7, 0.45, 0.3, 0.5};
    for (int it = 0; it < 40; it++) {
        int A = tl_int(1, 1500), nc = it % 3 == 0 ? 1 : tl_int(2, 12), coarse = it % 2;
        int agnostic = (it / 2) % 2, max_det = it % 5 == 0 ? tl_int(1, 20) : 300;
        float conf = it % 4 == 0 ? 0.25f : 0.5f;
        double iou = ious[it % 4];
        float *head = random_head(A, nc, coarse);
        strix_detection *got = malloc(sizeof *got * (size_t)max_det), *want = malloc(sizeof *want * (size_t)max_det);
        unsigned char keep[12];
        for (int c = 0; c < nc; c++) keep[c] = tl_int(0, 1);
        const unsigned char *classes = it % 3 == 1 ? keep : NULL;
        strix_nms_params p = {conf, (float)iou, max_det, 30000, agnostic, nc, classes, 0, NULL, NULL,
                              NULL, NULL, NULL, 0};
        void *ws = malloc(strix_nms_workspace((size_t)A, &p));
        int n = strix_nms(got, head, (size_t)A, &p, ws);
        int m = naive_nms(want, head, A, nc, conf, iou, max_det, agnostic, classes);
        int same = n == m;
        for (int i = 0; i < n && same; i++)
            same = memcmp(&got[i], &want[i], sizeof got[i]) == 0;
        free(head);
        free(got);
        free(want);
        free(ws);
        TL_CHECK(same, "A=%d nc=%d coarse=%d agnostic=%d iou=%g max_det=%d classes=%s: %d boxes, naive %d or "
                 "different boxes", A, nc, coarse, agnostic, iou, max_det, classes ? "some" : "all", n, m);
    }
}

/* One anchor per row: cx cy w h then nc scores. */
static void set_row(float *h, int nc, int a, float x1, float y1, float x2, float y2, int cls, float s)
{
    float *r = h + (size_t)a * (4 + nc);
    r[0] = (x1 + x2) / 2;
    r[1] = (y1 + y2) / 2;
    r[2] = x2 - x1;
    r[3] = y2 - y1;
    for (int c = 0; c < nc; c++) r[4 + c] = 0;
    r[4 + cls] = s;
}

static void test_nms_edges(void)
{
    enum { NC = 3 };
    float h[8 * (4 + NC)];
    strix_detection d[8];
    strix_nms_params p = {0.25f, 0.7f, 300, 30000, 0, NC, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0};
    char ws[16384];
    TL_CHECK(strix_nms_workspace(8, &p) <= sizeof ws, "workspace");

    /* conf is strictly greater: a score equal to conf is dropped */
    set_row(h, NC, 0, 0, 0, 10, 10, 0, 0.25f);
    set_row(h, NC, 1, 100, 100, 110, 110, 1, nextafterf(0.25f, 1.f));
    TL_CHECK(strix_nms(d, h, 2, &p, ws) == 1 && d[0].class_id == 1, "score == conf must not pass");

    /* identical boxes of two classes: both kept class-aware, one agnostic */
    set_row(h, NC, 0, 0, 0, 10, 10, 0, 0.9f);
    set_row(h, NC, 1, 0, 0, 10, 10, 2, 0.8f);
    TL_CHECK(strix_nms(d, h, 2, &p, ws) == 2, "class-aware NMS merged two classes");
    p.agnostic = 1;
    TL_CHECK(strix_nms(d, h, 2, &p, ws) == 1 && d[0].class_id == 0, "agnostic NMS kept both");
    p.agnostic = 0;

    /* IoU exactly 0.7f with iou 0.7: 0.7f < 0.7, kept; exactly 0.3f with
     * iou 0.3: 0.3f > 0.3, suppressed (torchvision compares in double) */
    set_row(h, NC, 0, 0, 0, 10, 10, 0, 0.9f);
    set_row(h, NC, 1, 0, 0, 10, 7, 0, 0.8f);
    TL_CHECK(strix_nms(d, h, 2, &p, ws) == 2, "IoU 0.7f at threshold 0.7 must be kept");
    set_row(h, NC, 1, 0, 0, 10, 3, 0, 0.8f);
    p.iou = 0.3f;
    TL_CHECK(strix_nms(d, h, 2, &p, ws) == 1, "IoU 0.3f at threshold 0.3 must be suppressed");
    p.iou = 0.7f;

    /* ties: lower anchor first; first maximal class wins */
    set_row(h, NC, 0, 50, 50, 60, 60, 1, 0.6f);
    set_row(h, NC, 1, 0, 0, 10, 10, 0, 0.6f);
    h[1 * (4 + NC) + 4 + 2] = 0.6f; /* anchor 1: classes 0 and 2 tie */
    TL_CHECK(strix_nms(d, h, 2, &p, ws) == 2 && d[0].x1 == 50 && d[1].class_id == 0, "tie order");

    /* max_det and sorted output; NaN scores never pass */
    for (int a = 0; a < 8; a++) set_row(h, NC, a, 20.f * a, 0, 20.f * a + 10, 10, a % NC, 0.3f + 0.05f * a);
    h[7 * (4 + NC) + 4 + 1] = NAN;
    p.max_det = 3;
    int n = strix_nms(d, h, 8, &p, ws);
    TL_CHECK(n == 3 && d[0].score > d[1].score && d[1].score > d[2].score && fabsf(d[0].score - 0.6f) < 1e-6f,
             "max_det / order / NaN: n=%d first %g", n, n ? (double)d[0].score : 0.0);
    p.max_det = 0;
    TL_CHECK(strix_nms(d, h, 8, &p, ws) == 0, "max_det 0");
}

/* The class filter works inside NMS, before max_det (Ultralytics'
 * classes=): six strong class-0 boxes and three weaker class-1 boxes, all
 * apart, max_det 3, keep class 1: the three class-1 boxes, where filtering
 * the output of an unfiltered NMS would leave none. */
static void test_nms_classes_before_max_det(void)
{
    enum { A = 9, NC = 2 };
    float head[A * (4 + NC)];
    for (int a = 0; a < A; a++) {
        float *r = head + a * (4 + NC);
        r[0] = 20.f + 40.f * (float)a, r[1] = 20.f, r[2] = r[3] = 10.f;
        r[4] = a < 6 ? 0.9f - 0.01f * (float)a : 0.1f;
        r[5] = a < 6 ? 0.05f : 0.6f - 0.1f * (float)(a - 6);
    }
    const unsigned char keep[NC] = {0, 1};
    strix_nms_params p = {0.25f, 0.7f, 3, 30000, 0, NC, keep, 0, NULL, NULL, NULL, NULL, NULL, 0};
    strix_detection d[3];
    void *ws = malloc(strix_nms_workspace(A, &p));
    int n = strix_nms(d, head, A, &p, ws);
    TL_CHECK(n == 3, "3 class-1 boxes expected, got %d", n);
    for (int i = 0; i < n; i++)
        TL_CHECK(d[i].class_id == 1 && fabsf(d[i].score - (0.6f - 0.1f * (float)i)) < 1e-6f &&
                     fabsf(d[i].x1 - (15.f + 40.f * (float)(6 + i))) < 1e-4f,
                 "box %d: class %d score %g x1 %g", i, d[i].class_id, (double)d[i].score, (double)d[i].x1);
    p.classes = NULL;
    n = strix_nms(d, head, A, &p, ws);
    TL_CHECK(n == 3 && d[0].class_id == 0 && d[2].class_id == 0, "unfiltered: the three best class-0 boxes");
    free(ws);
}

static void test_nms_many_candidates(void)
{
    /* 8400 anchors x 80 classes with mostly low scores, then 5000 strong
     * candidates of small boxes that barely suppress each other: max_det
     * must cut the result.  Its speed is perf/bench_nms's (not timed here). */
    enum { A = 8400, NC = 80 };
    float *head = random_head(A, NC, 0);
    for (int a = 0; a < A; a++)
        for (int c = 0; c < NC; c++) head[(size_t)a * (4 + NC) + 4 + c] *= 0.3f;
    strix_detection *d = malloc(sizeof *d * 1000);
    strix_nms_params p = {0.25f, 0.7f, 1000, 30000, 0, NC, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0};
    void *ws = malloc(strix_nms_workspace(A, &p));
    p.max_det = 300;
    int weak = strix_nms(d, head, A, &p, ws);
    for (int a = 0; a < 5000; a++) {
        float *r = head + (size_t)a * (4 + NC);
        r[2] = r[3] = 4.f; /* small boxes: few suppress each other */
        r[4 + a % NC] = 0.5f + 0.4f * tl_uniform(0, 1);
    }
    p.max_det = 1000;
    int n = strix_nms(d, head, A, &p, ws);
    int sorted = 1;
    for (int i = 1; i < n; i++) sorted &= d[i - 1].score >= d[i].score;
    free(head);
    free(d);
    free(ws);
    TL_CHECK(weak >= 0 && weak <= 300, "max_det 300: got %d boxes", weak);
    TL_CHECK(n == 1000, "expected max_det boxes, got %d", n);
    TL_CHECK(sorted, "boxes not in descending score order");
}

/* -------------------------------------------------------------- scale_boxes */

static void test_scale_boxes(void)
{
    strix_letterbox_info in;
    /* 768x576 -> 640x480 rect: gain 5/6, no padding */
    strix_letterbox_plan(768, 576, 640, 32, 1, &in);
    strix_detection d[3] = {{64, 48, 320, 240, 0.9f, 1}, {-5, -5, 700, 500, 0.8f, 0}, {NAN, 10, 20, 30, 0.5f, 0}};
    strix_scale_boxes(d, 3, &in);
    TL_CHECK(d[0].x1 == 64.f / (float)(640.0 / 768) && d[0].y2 == 240.f / (float)(480.0 / 576),
             "box (%g %g %g %g)", (double)d[0].x1, (double)d[0].y1, (double)d[0].x2, (double)d[0].y2);
    TL_CHECK(fabsf(d[0].x1 - 76.8f) < 1e-3f && fabsf(d[0].y2 - 288.f) < 1e-3f, "box values");
    TL_CHECK(d[1].x1 == 0 && d[1].y1 == 0 && d[1].x2 == 768 && d[1].y2 == 576, "clip to the source");
    TL_CHECK(isnan(d[2].x1) && d[2].y1 == 12.f, "NaN must stay NaN like torch.clamp");

    /* square 640: 768x576 sits at top 80 */
    strix_letterbox_plan(768, 576, 640, 32, 0, &in);
    strix_detection e = {0, 80, 640, 560, 0.9f, 0};
    strix_scale_boxes(&e, 1, &in);
    TL_CHECK(e.x1 == 0 && e.y1 == 0 && fabsf(e.x2 - 768) < 1e-3f && fabsf(e.y2 - 576) < 1e-3f,
             "square: (%g %g %g %g)", (double)e.x1, (double)e.y1, (double)e.x2, (double)e.y2);

    /* Ultralytics recomputes the geometry from the two shapes: for 1600x1201
     * in a 640x480 tensor that is a 639-wide image (gain_x 639/1600) */
    strix_letterbox_plan(1600, 1201, 640, 32, 1, &in);
    strix_detection f = {639, 0, 639, 480, 0.9f, 0};
    strix_scale_boxes(&f, 1, &in);
    TL_CHECK(f.x1 == 639.f / (float)(639.0 / 1600) && f.y2 == 480.f / (float)(480.0 / 1201),
             "1600x1201: x %g", (double)f.x1);
}

/* ----------------------------------------------------------------- annotate */

static void test_annotate_bounds(void)
{
    enum { GUARD = 64 };
    static const int sizes[][2] = {{1, 1}, {2, 2}, {3, 50}, {50, 3}, {37, 29}, {200, 120}};
    static const char *names[] = {"person", "a very long class name that will not fit anywhere",
                                  "caf\xc3\xa9", "\x01\x7f"};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int w = sizes[s][0], h = sizes[s][1], stride = w * 3 + 5; /* row padding too */
        size_t bytes = (size_t)stride * h;
        uint8_t *mem = malloc(bytes + 2 * GUARD), *img = mem + GUARD;
        memset(mem, 0xA5, bytes + 2 * GUARD);
        for (int y = 0; y < h; y++) memset(img + (size_t)y * stride, 0, (size_t)w * 3);
        strix_detection d[9] = {
            {-50, -50, 1e9f, 1e9f, 0.9f, 0},        {(float)w - 1, (float)h - 1, (float)w + 40, (float)h + 40, 0.8f, 1},
            {-100, -100, -10, -10, 0.7f, 2},        {0, 0, 0, 0, 0.6f, 3},
            {NAN, NAN, INFINITY, -INFINITY, 0.5f, 4}, {1, 0, (float)w, 2, 0.4f, -7},
            {(float)w / 2, 0, (float)w, (float)h, 0.3f, 1000}, {-1e30f, -1e30f, 1e30f, 1e30f, 0.2f, 1},
            {0, (float)h, (float)w, (float)h, 0.1f, 19},
        };
        strix_annotate_style st;
        strix_annotate_style_init(&st);
        strix_annotate(img, w, h, stride, d, 9, names, 4, &st);
        st.line_width = 7;
        st.show_label = 0;
        strix_annotate(img, w, h, stride, d, 9, names, 4, &st);
        uint8_t fg[3] = {1, 2, 3}, bg[3] = {4, 5, 6};
        strix_draw_text(img, w, h, stride, -3, -4, "Hello, world! gjpqy", 3, fg, bg);
        strix_draw_text(img, w, h, stride, w - 2, h - 2, "clipped", 2, fg, bg);
        int ok = 1;
        for (size_t i = 0; i < GUARD; i++) ok &= mem[i] == 0xA5 && mem[GUARD + bytes + i] == 0xA5;
        for (int y = 0; y < h; y++)
            for (int i = w * 3; i < stride; i++) ok &= img[(size_t)y * stride + i] == 0xA5;
        free(mem);
        TL_CHECK(ok, "%dx%d: wrote outside the frame", w, h);
    }
}

static void test_annotate_draws(void)
{
    int w = 320, h = 240;
    uint8_t *img = calloc((size_t)w * h * 3, 1);
    strix_detection d = {100, 120, 200, 200, 0.87f, 16};
    const char *names[] = {"person"};
    strix_annotate(img, w, h, 0, &d, 1, names, 1, NULL); /* class 16 has no name: "class16 0.87" */
    uint8_t col[3];
    strix_class_color(16, col);
    const uint8_t *edge = img + ((size_t)160 * w + 100) * 3;    /* on the left edge */
    const uint8_t *inside = img + ((size_t)160 * w + 150) * 3;  /* inside the box */
    const uint8_t *label = img + ((size_t)(120 - 2) * w + 101) * 3; /* label box above, margin */
    int lw = 2, label_h = strix_text_height(lw) + 2;
    const uint8_t *above = img + ((size_t)(120 - label_h - 3) * w + 101) * 3;
    int ok_edge = !memcmp(edge, col, 3), ok_in = !inside[0] && !inside[1] && !inside[2];
    int ok_label = !memcmp(label, col, 3), ok_above = !above[0] && !above[1] && !above[2];
    /* the label text is white on this colour: some white pixels exist */
    int white = 0;
    for (int y = 120 - label_h; y < 120; y++)
        for (int x = 100; x < 100 + strix_text_width("class16 0.87", lw) + 2; x++)
            white += img[((size_t)y * w + x) * 3] == 255 && img[((size_t)y * w + x) * 3 + 1] == 255;
    free(img);
    TL_CHECK(col[0] == 123 && col[1] == 0 && col[2] == 104, "palette[16]");
    TL_CHECK(ok_edge && ok_in, "box outline missing or box filled");
    TL_CHECK(ok_label && ok_above, "label box not where expected");
    TL_CHECK(white > 20, "no label text drawn (%d white pixels)", white);
}

static void test_text_and_colors(void)
{
    uint8_t c[3];
    strix_class_color(0, c);
    TL_CHECK(c[0] == 4 && c[1] == 42 && c[2] == 255, "palette[0]");
    strix_class_color(20, c);
    TL_CHECK(c[0] == 4 && c[1] == 42 && c[2] == 255, "palette cycles");
    strix_class_color(-1, c);
    TL_CHECK(c[0] == 162 && c[1] == 255 && c[2] == 11, "negative ids wrap");
    TL_CHECK(strix_text_width("", 2) == 0 && strix_text_width("ab", 1) == 11 &&
                 strix_text_width("ab", 3) == 33 && strix_text_width("\xc3\xa9", 1) == 5,
             "text width");
    TL_CHECK(strix_text_height(2) == 18, "text height");
    /* every printable glyph but space draws something */
    uint8_t img[8 * 12 * 3];
    uint8_t fg[3] = {255, 255, 255};
    for (int ch = 33; ch < 127; ch++) {
        char s[2] = {(char)ch, 0};
        memset(img, 0, sizeof img);
        strix_draw_text(img, 8, 12, 0, 1, 1, s, 1, fg, NULL);
        int on = 0;
        for (size_t i = 0; i < sizeof img; i++) on += img[i] != 0;
        TL_CHECK(on > 0, "glyph '%c' is empty", ch);
    }
}

/* ------------------------------------------------------------------- images */

static strix_status load(const char *path, size_t limit, strix_owned_image *im, strix_error *e)
{
    strix_status st = strix_image_load(path, limit, im, e);
    if (st == STRIX_OK) return st;
    /* one line naming the file */
    if (!strstr(e->message, path) || strchr(e->message, '\n')) return STRIX_E_INTERNAL;
    return st;
}

/* A small JPEG (stb's encoder) in memory. */
typedef struct membuf { unsigned char *p; size_t n, cap; } membuf;
static void mem_write(void *ctx, void *data, int size)
{
    membuf *m = ctx;
    if (m->n + (size_t)size > m->cap) {
        m->cap = (m->n + (size_t)size) * 2;
        m->p = realloc(m->p, m->cap);
    }
    memcpy(m->p + m->n, data, (size_t)size);
    m->n += (size_t)size;
}

static membuf make_jpeg(const uint8_t *rgb, int w, int h)
{
    membuf m = {NULL, 0, 0};
    stbi_write_jpg_to_func(mem_write, &m, w, h, 3, rgb, 95);
    return m;
}

static void test_image_load_errors(void)
{
    strix_owned_image im;
    strix_error e;
    TL_CHECK(load(tmp_path("missing.jpg"), 0, &im, &e) == STRIX_E_IO, "missing file: %s", e.message);
    TL_CHECK(load(g_dir, 0, &im, &e) == STRIX_E_IO, "directory: %s", e.message);

    TL_CHECK(write_file(tmp_path("empty.jpg"), "", 0), "setup");
    TL_CHECK(load(tmp_path("empty.jpg"), 0, &im, &e) == STRIX_E_IMAGE, "empty: %s", e.message);

    TL_CHECK(write_file(tmp_path("text.png"), "hello, I am not a picture\n", 26), "setup");
    TL_CHECK(load(tmp_path("text.png"), 0, &im, &e) == STRIX_E_IMAGE, "garbage: %s", e.message);

    /* truncated JPEG: cut a valid one in half */
    uint8_t px[48 * 32 * 3];
    random_pixels(px, sizeof px);
    membuf j = make_jpeg(px, 48, 32);
    TL_CHECK(write_file(tmp_path("whole.jpg"), j.p, j.n) && write_file(tmp_path("half.jpg"), j.p, j.n / 2), "setup");
    free(j.p);
    TL_CHECK(load(tmp_path("whole.jpg"), 0, &im, &e) == STRIX_OK && im.width == 48 && im.height == 32,
             "valid JPEG: %s", e.message);
    strix_image_free(&im);
    TL_CHECK(load(tmp_path("half.jpg"), 0, &im, &e) == STRIX_E_IMAGE && strstr(e.message, ": truncated JPEG ("),
             "truncated JPEG: %s", e.message);
    TL_CHECK(!im.data && !im.width, "output not cleared on failure");
    /* corrupt JPEG: an end-of-image marker in the middle of the scan, where
     * libjpeg would conceal the rest; refused with libjpeg's message */
    j = make_jpeg(px, 48, 32);
    j.p[j.n / 2] = 0xFF;
    j.p[j.n / 2 + 1] = 0xD9;
    TL_CHECK(write_file(tmp_path("bad.jpg"), j.p, j.n), "setup");
    free(j.p);
    TL_CHECK(load(tmp_path("bad.jpg"), 0, &im, &e) == STRIX_E_IMAGE &&
                 strstr(e.message, ": corrupt JPEG (libjpeg: Corrupt JPEG data: premature end of data segment;"),
             "corrupt JPEG: %s", e.message);

    /* a PNG header claiming 100000 x 100000 (IHDR CRC left wrong: stb does
     * not check it); the limit must trigger before any allocation, which
     * under AddressSanitizer would abort.  Then one of 0 x 0, which stb
     * calls only "unknown image type". */
    unsigned char png[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13,
                           'I', 'H', 'D', 'R', 0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0, 8, 2, 0, 0, 0,
                           0, 0, 0, 0, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    TL_CHECK(write_file(tmp_path("huge.png"), png, sizeof png), "setup");
    TL_CHECK(load(tmp_path("huge.png"), 0, &im, &e) == STRIX_E_IMAGE && strstr(e.message, "100000x100000"),
             "huge PNG: %s", e.message);
    memset(png + 16, 0, 8); /* IHDR width and height */
    TL_CHECK(write_file(tmp_path("zero.png"), png, sizeof png), "setup");
    TL_CHECK(load(tmp_path("zero.png"), 0, &im, &e) == STRIX_E_IMAGE && strstr(e.message, "size of 0x0"),
             "0x0 PNG: %s", e.message);

    /* stb reports a PPM header of 0 x 0 as a valid image */
    TL_CHECK(write_file(tmp_path("zero.ppm"), "P6\n0 0\n255\n", 11), "setup");
    TL_CHECK(load(tmp_path("zero.ppm"), 0, &im, &e) == STRIX_E_IMAGE, "0x0: %s", e.message);

    /* a custom limit */
    TL_CHECK(load(tmp_path("whole.jpg"), 48 * 32 - 1, &im, &e) == STRIX_E_IMAGE, "limit: %s", e.message);

    /* the real sample, truncated */
    char path[512];
    snprintf(path, sizeof path, "%s/dog.jpg", data_dir());
    size_t n = 0;
    unsigned char *dog = read_file(path, &n);
    if (dog) {
        int ok = write_file(tmp_path("dog_cut.jpg"), dog, n * 2 / 3);
        free(dog);
        TL_CHECK(ok, "setup");
        TL_CHECK(load(tmp_path("dog_cut.jpg"), 0, &im, &e) == STRIX_E_IMAGE, "truncated dog.jpg: %s", e.message);
    }
}

/* Inputs the image fuzz target (tests/fuzz/fuzz_image.c) found crashing,
 * overflowing or exhausting memory in Debian's stb_image, kept in its
 * corpus: each is refused with a line naming the problem.  The JPEGs now go
 * to libjpeg, never to stb, and libjpeg refuses them itself; the others are
 * refused before stb sees them (the packaged stb is not instrumented, so
 * these check the refusal; `make fuzz` replays them with an instrumented
 * stb). */
static void test_image_fuzz_regressions(void)
{
    static const struct {
        const char *file, *want;
    } cases[] = {
        {"crash-dht-codes.jpg", "corrupt JPEG (libjpeg: Bogus Huffman table definition;"},
        {"crash-dht-codes-exif.jpg", "corrupt JPEG (libjpeg: Bogus Huffman table definition;"},
        {"crash-dht-fill-bytes.jpg", "corrupt JPEG (libjpeg: Not a JPEG file: starts with 0xff 0xff;"},
        {"crash-undefined-huffman.jpg", "corrupt JPEG (libjpeg: Didn't expect more than one scan;"},
        {"stb-jpeg-shift32.jpg", "corrupt JPEG (libjpeg: Quantization table 0x00 was not defined;"},
        {"crash-pnm-overflow.ppm", "corrupt PNM header"},
        {"crash-pgm16-grey.pgm", "16-bit greyscale PGM is not supported"},
        {"crash-pgm16-grey-2.pgm", "16-bit greyscale PGM is not supported"},
        {"oom-png-idat.png", "corrupt PNG: a 'IDAT' chunk of 1073741864 bytes, with 62 bytes left"},
        {"crash-png-empty-idat.png", "corrupt PNG: the first 'IDAT' chunk is empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fuzz/corpus/image/%s", cases[i].file);
        size_t n = 0;
        unsigned char *buf = read_file(path, &n);
        TL_CHECK(buf, "%s: cannot read (run from the repository root)", path);
        strix_owned_image im;
        strix_error e;
        strix_status st = strix_image_decode(path, buf, n, 0, &im, &e);
        free(buf);
        TL_CHECK(st == STRIX_E_IMAGE && strstr(e.message, cases[i].want) && !im.data, "%s: status %d '%s' (want '%s')",
                 path, st, st ? e.message : "", cases[i].want);
    }
}

static void test_image_load_sample(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dog.jpg", data_dir());
    if (access(path, R_OK) != 0) {
        tl_skip("%s not found (set STRIX_DATA)", path);
        return;
    }
    strix_owned_image im;
    strix_error e;
    TL_CHECK(strix_image_load(path, 0, &im, &e) == STRIX_OK, "%s", e.message);
    int w = im.width, h = im.height;
    strix_image v = strix_image_view(&im);
    int view_ok = v.data == im.data && v.stride == w * 3 && v.format == STRIX_RGB;
    strix_image_free(&im);
    TL_CHECK(w == 768 && h == 576 && view_ok, "dog.jpg is %dx%d", w, h);
}

/* FNV-1a 64 of the pixels of the sample JPEGs as libjpeg-turbo 2.1.5
 * decodes them with OpenCV's settings (RGB out, otherwise libjpeg's defaults),
 * the pixels cv2.imread gives Ultralytics: test_golden checks the same
 * pixels letterboxed against Ultralytics' own input tensors. */
static void test_jpeg_samples_opencv_pixels(void)
{
    static const struct {
        const char *name;
        int w, h;
        uint64_t fnv;
    } cases[] = {
        {"dog", 768, 576, 0x1f3251457142c378ull},
        {"eagle", 773, 512, 0x585c0d8c2f28c467ull},
        {"horses", 773, 512, 0x01ae6943d0cb3a6eull},
        {"person", 640, 424, 0x4aca51beea5554aeull},
    };
    int found = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.jpg", data_dir(), cases[i].name);
        if (access(path, R_OK) != 0) continue;
        found++;
        strix_owned_image im;
        strix_error e;
        TL_CHECK(strix_image_load(path, 0, &im, &e) == STRIX_OK, "%s", e.message);
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t k = 0; k < (size_t)im.width * im.height * 3; k++) h = (h ^ im.data[k]) * 0x100000001b3ull;
        int w = im.width, ht = im.height;
        strix_image_free(&im);
        TL_CHECK(w == cases[i].w && ht == cases[i].h && h == cases[i].fnv,
                 "%s: %dx%d, pixel hash %016llx, want %dx%d %016llx", path, w, ht, (unsigned long long)h,
                 cases[i].w, cases[i].h, (unsigned long long)cases[i].fnv);
    }
    if (!found) tl_skip("no sample JPEGs in %s (set STRIX_DATA)", data_dir());
}

/* A 16 x 16 JPEG in memory from libjpeg's encoder, quality 100 without
 * chroma subsampling, in colour space cs (JCS_GRAYSCALE, JCS_CMYK or
 * JCS_YCCK) from ncomp-byte pixels; four flat 8 x 8 quadrants q[4], so
 * every block is flat and codes (almost) exactly. */
static membuf make_libjpeg(J_COLOR_SPACE in, J_COLOR_SPACE cs, int ncomp, const uint8_t q[4][4])
{
    enum { S = 16 };
    uint8_t px[S * S * 4];
    for (int y = 0; y < S; y++)
        for (int x = 0; x < S; x++) memcpy(px + (y * S + x) * ncomp, q[(y >= S / 2) * 2 + (x >= S / 2)], (size_t)ncomp);
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    c.err = jpeg_std_error(&jerr); /* the encoder cannot fail on these inputs */
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &out, &n);
    c.image_width = c.image_height = S;
    c.input_components = ncomp;
    c.in_color_space = in;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, cs);
    jpeg_set_quality(&c, 100, TRUE);
    for (int i = 0; i < c.num_components; i++) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < S) {
        JSAMPROW row = px + c.next_scanline * S * ncomp;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    membuf m = {out, n, n};
    return m;
}

/* Decodes a 16 x 16 quadrant JPEG through strix_image_load and checks each
 * quadrant's centre pixel against want[4] (RGB) within tol levels. */
static void check_quadrants(const char *what, membuf j, const uint8_t want[4][3], int tol)
{
    const char *path = tmp_path("q.jpg");
    int ok = write_file(path, j.p, j.n);
    free(j.p);
    TL_CHECK(ok, "setup");
    strix_owned_image im;
    strix_error e;
    TL_CHECK(strix_image_load(path, 0, &im, &e) == STRIX_OK, "%s: %s", what, e.message);
    TL_CHECK(im.width == 16 && im.height == 16, "%s: %dx%d", what, im.width, im.height);
    for (int k = 0; k < 4 && !tl_g.failed; k++) {
        const uint8_t *p = im.data + ((size_t)(k / 2 * 8 + 4) * 16 + k % 2 * 8 + 4) * 3;
        int good = 1;
        for (int c = 0; c < 3; c++) good &= abs(p[c] - want[k][c]) <= tol;
        if (!good)
            tl_fail("%s quadrant %d: RGB %d %d %d, want %d %d %d (+-%d)", what, k, p[0], p[1], p[2], want[k][0],
                    want[k][1], want[k][2], tol);
    }
    strix_image_free(&im);
}

static void test_jpeg_grey_cmyk(void)
{
    /* grey: replicated into R, G and B */
    static const uint8_t g[4][4] = {{0}, {77}, {200}, {255}};
    static const uint8_t g_rgb[4][3] = {{0, 0, 0}, {77, 77, 77}, {200, 200, 200}, {255, 255, 255}};
    check_quadrants("grey JPEG", make_libjpeg(JCS_GRAYSCALE, JCS_GRAYSCALE, 1, g), g_rgb, 1);
    /* CMYK as stored (libjpeg writes an Adobe marker; values as Adobe's
     * inverted CMYK stores them) to RGB by OpenCV's formula
     * R = K - (255 - C) * K >> 8 (icvCvt_CMYK2BGR_8u_C4C3R): the last
     * quadrant gives 101 51 158, where a plain (255 - C)(255 - K) / 255
     * would give 27 12 43 */
    static const uint8_t k[4][4] = {{255, 255, 255, 255}, {0, 255, 255, 255}, {255, 255, 255, 0}, {128, 64, 200, 200}};
    static const uint8_t k_rgb[4][3] = {{255, 255, 255}, {1, 255, 255}, {0, 0, 0}, {101, 51, 158}};
    check_quadrants("CMYK JPEG", make_libjpeg(JCS_CMYK, JCS_CMYK, 4, k), k_rgb, 1);
    /* the same coded as YCCK (Adobe transform 2): libjpeg turns it back
     * into CMYK, with the YCbCr rounding */
    check_quadrants("YCCK JPEG", make_libjpeg(JCS_CMYK, JCS_YCCK, 4, k), k_rgb, 2);
}

/* Insert an EXIF APP1 segment with the given orientation after the SOI. */
static membuf with_orientation(membuf j, int orientation)
{
    static const unsigned char app1[] = {0xFF, 0xE1, 0, 34, 'E', 'x', 'i', 'f', 0, 0,
                                         'M', 'M', 0, 42, 0, 0, 0, 8, /* TIFF, IFD0 at 8 */
                                         0, 1,                        /* one entry */
                                         0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    membuf o = {malloc(j.n + sizeof app1), j.n + sizeof app1, j.n + sizeof app1};
    memcpy(o.p, j.p, 2);
    memcpy(o.p + 2, app1, sizeof app1);
    o.p[2 + 29] = (unsigned char)orientation; /* low byte of the big-endian SHORT value */
    memcpy(o.p + 2 + sizeof app1, j.p + 2, j.n - 2);
    return o;
}

static void test_exif_orientation(void)
{
    /* 64 x 32, four flat quadrant colours survive JPEG coding */
    enum { W = 64, H = 32 };
    static const uint8_t q[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
    uint8_t px[W * H * 3];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) memcpy(px + (y * W + x) * 3, q[(y >= H / 2) * 2 + (x >= W / 2)], 3);
    membuf j = make_jpeg(px, W, H);
    /* orientation -> expected quadrant at the new image's top-left, top-right */
    static const int expect[9][2] = {{0, 0}, {0, 1}, {1, 0}, {3, 2}, {2, 3}, {0, 2}, {2, 0}, {3, 1}, {1, 3}};
    for (int o = 1; o <= 8; o++) {
        membuf r = with_orientation(j, o);
        int ok = write_file(tmp_path("exif.jpg"), r.p, r.n);
        free(r.p);
        TL_CHECK(ok, "setup");
        strix_owned_image im;
        strix_error e;
        TL_CHECK(strix_image_load(tmp_path("exif.jpg"), 0, &im, &e) == STRIX_OK, "%s", e.message);
        int swap = o >= 5, w = im.width, h = im.height;
        const uint8_t *tl = im.data + ((size_t)4 * w + 4) * 3, *tr = im.data + ((size_t)4 * w + w - 5) * 3;
        int good = abs(tl[0] - q[expect[o][0]][0]) < 40 && abs(tl[1] - q[expect[o][0]][1]) < 40 &&
                   abs(tl[2] - q[expect[o][0]][2]) < 40 && abs(tr[0] - q[expect[o][1]][0]) < 40 &&
                   abs(tr[1] - q[expect[o][1]][1]) < 40 && abs(tr[2] - q[expect[o][1]][2]) < 40;
        strix_image_free(&im);
        TL_CHECK(w == (swap ? H : W) && h == (swap ? W : H), "orientation %d: %dx%d", o, w, h);
        TL_CHECK(good, "orientation %d: corners hold the wrong quadrants", o);
    }
    free(j.p);
}

static void test_image_write(void)
{
    enum { W = 23, H = 17 };
    int stride = W * 3 + 7;
    uint8_t px[(W * 3 + 7) * H];
    random_pixels(px, sizeof px);
    strix_error e;
    const char *png = tmp_path("out.png");
    TL_CHECK(strix_image_write(png, px, W, H, stride, 0, 0, &e) == STRIX_OK, "%s", e.message);
    strix_owned_image im;
    TL_CHECK(strix_image_load(png, 0, &im, &e) == STRIX_OK && im.width == W && im.height == H, "%s", e.message);
    int same = 1;
    for (int y = 0; y < H; y++) same &= !memcmp(im.data + (size_t)y * W * 3, px + (size_t)y * stride, W * 3);
    strix_image_free(&im);
    TL_CHECK(same, "PNG round trip changed pixels");

    /* refuse to overwrite; the old file stays as it was */
    uint8_t other[W * H * 3];
    memset(other, 7, sizeof other);
    size_t n0 = 0, n1 = 0;
    unsigned char *before = read_file(png, &n0);
    strix_status st = strix_image_write(png, other, W, H, 0, 0, 0, &e);
    unsigned char *after = read_file(png, &n1);
    int unchanged = before && after && n0 == n1 && !memcmp(before, after, n0);
    free(before);
    free(after);
    TL_CHECK(st == STRIX_E_IO && strstr(e.message, png) && unchanged, "overwrite refused: %d %s", st, e.message);
    TL_CHECK(strix_image_write(png, other, W, H, 0, 0, 1, &e) == STRIX_OK, "overwrite allowed: %s", e.message);
    TL_CHECK(strix_image_load(png, 0, &im, &e) == STRIX_OK, "%s", e.message);
    int sevens = im.data[0] == 7 && im.data[W * H * 3 - 1] == 7;
    strix_image_free(&im);
    TL_CHECK(sevens, "overwrite did not replace the file");

    /* JPEG (padded rows go through a dense copy), close to the source */
    for (int i = 0; i < W * H * 3; i++) other[i] = (uint8_t)(100 + (i / 3) % 50);
    const char *jpg = tmp_path("out.JPEG");
    TL_CHECK(strix_image_write(jpg, other, W, H, 0, 90, 0, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(strix_image_load(jpg, 0, &im, &e) == STRIX_OK && im.width == W, "%s", e.message);
    int maxd = 0;
    for (int i = 0; i < W * H * 3; i++) maxd = abs(im.data[i] - other[i]) > maxd ? abs(im.data[i] - other[i]) : maxd;
    strix_image_free(&im);
    TL_CHECK(maxd < 40, "JPEG round trip off by %d", maxd);

    TL_CHECK(strix_image_write(tmp_path("out.bmp"), px, W, H, stride, 0, 0, &e) == STRIX_E_ARG, "extension");
    TL_CHECK(strix_image_write(tmp_path("no/such/dir/x.png"), px, W, H, stride, 0, 0, &e) == STRIX_E_IO,
             "missing directory: %s", e.message);
    TL_CHECK(temp_files_left() == 0, "temporary files left behind");
}

/* Remove the flat temporary directory. */
static void cleanup(void)
{
    DIR *d = opendir(g_dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
}

int main(int argc, char **argv)
{
    tl_init();
    strcpy(g_dir, "/tmp/strix_imageproc_XXXXXX");
    if (!mkdtemp(g_dir)) {
        printf("FAIL setup: cannot create a temporary directory\n");
        return 1;
    }
    TL_RUN(test_letterbox_geometry_known);
    TL_RUN(test_letterbox_geometry_invariants);
    TL_RUN(test_resize_vs_naive);
    TL_RUN(test_resize_golden_cv2);
    TL_RUN(test_letterbox_tensor);
    TL_RUN(test_letterbox_nv12);
    TL_RUN(test_nms_vs_naive);
    TL_RUN(test_nms_edges);
    TL_RUN(test_nms_classes_before_max_det);
    TL_RUN(test_nms_many_candidates);
    TL_RUN(test_scale_boxes);
    TL_RUN(test_annotate_bounds);
    TL_RUN(test_annotate_draws);
    TL_RUN(test_text_and_colors);
    TL_RUN(test_image_load_errors);
    TL_RUN(test_image_fuzz_regressions);
    TL_RUN(test_image_load_sample);
    TL_RUN(test_jpeg_samples_opencv_pixels);
    TL_RUN(test_jpeg_grey_cmyk);
    TL_RUN(test_exif_orientation);
    TL_RUN(test_image_write);
    cleanup();
    TL_MAIN_END();
}
