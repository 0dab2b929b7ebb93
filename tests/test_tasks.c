/* test_tasks.c — the task post-processing (engine/tasks.c, contour.c)
 * against Ultralytics 8.4.190 (tests/golden/tasks/, made by
 * tools/reference/task_goldens.py from the same generated inputs), and on
 * fresh random inputs against naive references and invariants.
 *
 * Tolerances: masks by IoU >= 0.99 per mask and >= 99.9% of all pixels
 * equal (torch's sgemm and bilinear kernel round differently from a plain
 * float loop, which flips logits within ~1e-6 of 0); polygons vertex for
 * vertex (1e-3 px) from the golden mask itself, and from our own mask when
 * it equals the golden one; probiou 2e-6; rotated NMS kept sets exactly (their order
 * too, but among equal scores);
 * obb corners and scaled boxes 1e-4 px; keypoints 1e-3 px; top-5 exactly
 * (values where torch orders ties arbitrarily); the one-to-one selection
 * exactly (boxes 1e-4 px). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "postprocess.h"
#include "tasks.h"
#include "testlib.h"
#include "tools/infer/task_writers.h"

#define GOLDEN "tests/golden/tasks/"

/* ------------------------------------------------ the shared generator */

typedef struct gen {
    uint64_t x;
} gen;

static uint64_t g_u64(gen *g)
{
    uint64_t z = (g->x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint32_t g_u24(gen *g) { return (uint32_t)(g_u64(g) >> 40); }
static float g_unit(gen *g) { return (float)(g_u24(g) / 16777216.0); }

/* task_goldens.py's mask_inputs */
static void mask_inputs(gen *g, int c, int mh, int mw, int n, int in_h, int in_w, float *protos, float *coeffs,
                        float *boxes)
{
    int bh = (mh + 3) / 4, bw = (mw + 3) / 4;
    float *coarse = malloc(sizeof(float) * (size_t)(c * bh * bw));
    for (int i = 0; i < c * bh * bw; i++) coarse[i] = (g_unit(g) - 0.5f) * 4.f;
    for (int k = 0; k < c; k++)
        for (int y = 0; y < mh; y++)
            for (int x = 0; x < mw; x++)
                protos[((size_t)k * mh + y) * mw + x] = coarse[((size_t)k * bh + y / 4) * bw + x / 4];
    free(coarse);
    for (int i = 0; i < n * c; i++) coeffs[i] = (g_unit(g) - 0.5f) * 2.f;
    for (int i = 0; i < n; i++) {
        double x1 = g_u24(g) % (uint32_t)(in_w * 8) / 8.0 - 8;
        double y1 = g_u24(g) % (uint32_t)(in_h * 8) / 8.0 - 8;
        double x2 = x1 + 2 + g_u24(g) % (uint32_t)(in_w * 4) / 8.0;
        double y2 = y1 + 2 + g_u24(g) % (uint32_t)(in_h * 4) / 8.0;
        boxes[4 * i] = (float)x1, boxes[4 * i + 1] = (float)y1, boxes[4 * i + 2] = (float)x2,
        boxes[4 * i + 3] = (float)y2;
    }
}

/* ------------------------------------------------ golden file reading */

typedef struct lines {
    char *buf;
    char **v;
    int n;
} lines;

static int read_lines(const char *path, lines *l)
{
    memset(l, 0, sizeof *l);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    l->buf = malloc((size_t)size + 1);
    size_t got = fread(l->buf, 1, (size_t)size, f);
    fclose(f);
    l->buf[got] = 0;
    int cap = 0;
    for (char *p = l->buf; *p;) {
        char *e = strchr(p, '\n');
        if (e) *e = 0;
        if (l->n == cap) {
            cap = cap ? 2 * cap : 256;
            l->v = realloc(l->v, sizeof(char *) * (size_t)cap);
        }
        l->v[l->n++] = p;
        if (!e) break;
        p = e + 1;
    }
    return 1;
}

static void free_lines(lines *l)
{
    free(l->buf);
    free(l->v);
}

/* The numbers after the tag of a line (at most max). */
static int numbers(const char *line, double *out, int max)
{
    const char *p = strchr(line, ' ');
    int n = 0;
    while (p && n < max) {
        char *e;
        double v = strtod(p, &e);
        if (e == p) break;
        out[n++] = v;
        p = e;
    }
    return n;
}

static int starts(const char *line, const char *tag)
{
    size_t k = strlen(tag);
    return strncmp(line, tag, k) == 0 && line[k] == ' ';
}

/* Decode run lengths (zeros first) into m [npix]; 0 when they do not add up. */
static int unrle(const double *r, int nr, uint8_t *m, size_t npix)
{
    size_t at = 0;
    for (int k = 0; k < nr; k++) {
        if (at + (size_t)r[k] > npix) return 0;
        memset(m + at, k & 1, (size_t)r[k]);
        at += (size_t)r[k];
    }
    return at == npix;
}

static int same_polygon(const strix_polygon *p, const double *g, int ng, double tol)
{
    if (p->n != ng) return 0;
    for (int i = 0; i < 2 * ng; i++)
        if (fabs(p->xy[i] - g[i]) > tol) return 0;
    return 1;
}

#define MAXN (1 << 20)
static double nums[MAXN];

/* -------------------------------------------------------- mask goldens */

static void test_masks_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "masks.txt", &l)) {
        tl_fail("cannot read " GOLDEN "masks.txt");
        return;
    }
    int in_h = 0, in_w = 0, src_h = 0, src_w = 0, c = 0, n = 0, cases = 0, exact_polys = 0;
    float *protos = NULL, *coeffs = NULL, *boxes = NULL;
    uint8_t *def = NULL, *ret = NULL, *gold = NULL, *ne = NULL;
    size_t diff_total = 0, pix_total = 0;
    strix_polygon poly = {0};
    strix_error err;
    for (int li = 0; li < l.n && !tl_g.failed; li++) {
        const char *s = l.v[li];
        int k = numbers(s, nums, MAXN);
        if (starts(s, "case")) {
            in_h = (int)nums[1], in_w = (int)nums[2], src_h = (int)nums[3], src_w = (int)nums[4];
            c = (int)nums[5], n = (int)nums[6];
            gen g = {(uint64_t)nums[7]};
            int mh = in_h / 4, mw = in_w / 4;
            free(protos), free(coeffs), free(boxes), free(def), free(ret), free(gold), free(ne);
            protos = malloc(sizeof(float) * (size_t)(c * mh * mw));
            coeffs = malloc(sizeof(float) * (size_t)(n * c));
            boxes = malloc(sizeof(float) * 4 * (size_t)n);
            def = malloc((size_t)n * in_h * in_w);
            ret = malloc((size_t)n * src_h * src_w);
            gold = malloc((size_t)(in_h * in_w > src_h * src_w ? in_h * in_w : src_h * src_w));
            ne = malloc((size_t)n);
            mask_inputs(&g, c, mh, mw, n, in_h, in_w, protos, coeffs, boxes);
            if (strix_process_mask(protos, c, mh, mw, coeffs, boxes, n, in_h, in_w, def, ne, &err) != STRIX_OK)
                tl_fail("process_mask: %s", err.message);
            /* retina: the boxes to the source first, as the predictor does */
            strix_detection *d = calloc((size_t)n, sizeof *d);
            for (int i = 0; i < n; i++)
                d[i].x1 = boxes[4 * i], d[i].y1 = boxes[4 * i + 1], d[i].x2 = boxes[4 * i + 2],
                d[i].y2 = boxes[4 * i + 3];
            strix_letterbox_info info = {.src_w = src_w, .src_h = src_h, .dst_w = in_w, .dst_h = in_h};
            strix_scale_boxes(d, n, &info);
            float *sb = malloc(sizeof(float) * 4 * (size_t)n);
            for (int i = 0; i < n; i++)
                sb[4 * i] = d[i].x1, sb[4 * i + 1] = d[i].y1, sb[4 * i + 2] = d[i].x2, sb[4 * i + 3] = d[i].y2;
            if (strix_process_mask_native(protos, c, mh, mw, coeffs, sb, n, src_h, src_w, ret, NULL, &err) !=
                STRIX_OK)
                tl_fail("process_mask_native: %s", err.message);
            free(d);
            free(sb);
            cases++;
        } else if (starts(s, "box")) {
            int i = (int)nums[0];
            for (int j = 0; j < 4; j++)
                if ((float)nums[1 + j] != boxes[4 * i + j])
                    tl_fail("case %d box %d: the generator differs from the script's (%g vs %g)", cases - 1, i,
                            (double)boxes[4 * i + j], nums[1 + j]);
        } else if (starts(s, "def") || starts(s, "ret") || starts(s, "draw")) {
            int i = (int)nums[0], is_def = starts(s, "def"), is_draw = starts(s, "draw");
            size_t npix = is_def ? (size_t)in_h * in_w : (size_t)src_h * src_w;
            if (!unrle(nums + 1, k - 1, gold, npix)) {
                tl_fail("%s: bad run lengths", s);
                break;
            }
            uint8_t *mine = is_def ? def + (size_t)i * npix : ret + (size_t)i * npix;
            uint8_t *drawn = NULL;
            if (is_draw) { /* the Annotator's scale_masks of our default mask */
                drawn = malloc(npix);
                strix_mask_to_source(def + (size_t)i * in_h * in_w, in_h, in_w, drawn, src_h, src_w, &err);
                mine = drawn;
            }
            size_t inter = 0, uni = 0, diff = 0, any = 0;
            for (size_t p = 0; p < npix; p++) {
                inter += mine[p] & gold[p];
                uni += mine[p] | gold[p];
                diff += mine[p] != gold[p];
                any |= gold[p];
            }
            free(drawn);
            diff_total += diff;
            pix_total += npix;
            double iou = uni ? (double)inter / (double)uni : 1.0;
            if (iou < 0.99)
                tl_fail("case %d %s mask %d: IoU %.4f with Ultralytics' (< 0.99)", cases - 1, is_draw ? "drawn" :
                        is_def ? "default" : "retina", i, iou);
            if (is_def && ne[i] != (any != 0)) tl_fail("case %d mask %d: nonempty %d, Ultralytics %d", cases - 1, i,
                                                       ne[i], (int)(any != 0));
        } else if (starts(s, "xy") || starts(s, "rxy")) {
            /* Results.masks.xy: our contours of the golden mask must be Ultralytics' polygon exactly */
            int i = (int)nums[0], ng = (int)nums[1], is_def = starts(s, "xy");
            int mh = is_def ? in_h : src_h, mw = is_def ? in_w : src_w;
            for (int pass = 0; pass < 2; pass++) {
                const uint8_t *m;
                if (pass == 0) { /* the golden mask: decode it again from its line */
                    const char *tag = is_def ? "def" : "ret";
                    int found = 0;
                    for (int lj = li - 1; lj >= 0 && !found; lj--)
                        if (starts(l.v[lj], tag) && atoi(l.v[lj] + strlen(tag) + 1) == i) {
                            static double rr[MAXN];
                            int kr = numbers(l.v[lj], rr, MAXN);
                            unrle(rr + 1, kr - 1, gold, (size_t)mh * mw);
                            found = 1;
                        }
                    m = gold;
                } else {
                    m = (is_def ? def : ret) + (size_t)i * mh * mw;
                    if (memcmp(m, gold, (size_t)mh * mw) != 0) continue; /* masks differ: IoU checked above */
                }
                if (strix_mask_segment(m, mh, mw, STRIX_SEGMENT_ALL, &poly, &err) != STRIX_OK) {
                    tl_fail("masks2segments: %s", err.message);
                    break;
                }
                strix_scale_coords(poly.xy, poly.n, 2, mw, mh, src_w, src_h, 0);
                if (!same_polygon(&poly, nums + 2, ng, 1e-3)) {
                    tl_fail("case %d %s mask %d (%s mask): polygon of %d points, Ultralytics' %d (or a vertex off)",
                            cases - 1, is_def ? "default" : "retina", i, pass ? "our" : "golden", poly.n, ng);
                    break;
                }
                exact_polys += pass;
            }
        }
    }
    double agree = pix_total ? 1.0 - (double)diff_total / (double)pix_total : 0;
    if (!tl_g.failed && agree < 0.999) tl_fail("masks: %.5f of pixels equal Ultralytics' (< 0.999)", agree);
    if (!tl_g.failed && cases != 4) tl_fail("masks.txt: %d cases, expected 4", cases);
    if (!tl_g.failed && exact_polys == 0) tl_fail("no mask of ours equalled the golden one exactly");
    strix_polygon_free(&poly);
    free(protos), free(coeffs), free(boxes), free(def), free(ret), free(gold), free(ne);
    free_lines(&l);
}

/* ---------------------------------------------------- contour goldens */

static void ring_mask(uint8_t *m) /* task_goldens.py's ring_mask, 24 x 30 */
{
    memset(m, 0, 24 * 30);
    for (int y = 1; y < 22; y++)
        for (int x = 1; x < 22; x++) m[y * 30 + x] = 1;
    for (int y = 3; y < 20; y++)
        for (int x = 3; x < 20; x++) m[y * 30 + x] = 0;
    for (int y = 5; y < 18; y++)
        for (int x = 5; x < 18; x++) m[y * 30 + x] = 1;
    for (int y = 7; y < 16; y++)
        for (int x = 7; x < 16; x++) m[y * 30 + x] = 0;
    for (int y = 10; y < 12; y++)
        for (int x = 10; x < 12; x++) m[y * 30 + x] = 1;
    for (int k = 0; k < 6; k++) m[(2 + k) * 30 + 23 + k % 7] = 1;
    m[23 * 30 + 29] = 1;
    for (int x = 25; x < 30; x++) m[x] = 1;
}

static void test_contours_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "contours.txt", &l)) {
        tl_fail("cannot read " GOLDEN "contours.txt");
        return;
    }
    uint8_t m[64 * 64];
    int h = 0, w = 0, masks = 0, nc = 0, at = 0;
    strix_polygon all = {0}, seg = {0};
    int *st = NULL, cap = 0;
    strix_error err;
    for (int li = 0; li < l.n && !tl_g.failed; li++) {
        const char *s = l.v[li];
        int k = numbers(s, nums, MAXN);
        if (starts(s, "mask")) {
            if (masks && at != nc) tl_fail("mask %d: %d contours, OpenCV %d", masks - 1, nc, at);
            h = (int)nums[1], w = (int)nums[2];
            if ((int)nums[3] < 0) {
                ring_mask(m);
            } else {
                gen g = {(uint64_t)nums[4]};
                for (int p = 0; p < h * w; p++) m[p] = g_u24(&g) % 100 < (uint32_t)nums[3];
            }
            if (strix_mask_contours(m, h, w, &all, &st, &cap, &nc, &err) != STRIX_OK) tl_fail("%s", err.message);
            masks++;
            at = 0;
        } else if (starts(s, "contour")) {
            int np = (int)nums[0];
            int ours = at < nc ? st[at + 1] - st[at] : -1;
            int same = ours == np;
            for (int j = 0; same && j < 2 * np; j++) same = all.xy[2 * st[at] + j] == (float)nums[1 + j];
            if (!same)
                tl_fail("mask %d (%dx%d) contour %d: %d points, OpenCV's %d (or a vertex differs)", masks - 1, w, h,
                        at, ours, np);
            at++;
        } else if (starts(s, "all") || starts(s, "largest")) {
            strix_segment_strategy sg = starts(s, "all") ? STRIX_SEGMENT_ALL : STRIX_SEGMENT_LARGEST;
            if (strix_mask_segment(m, h, w, sg, &seg, &err) != STRIX_OK) tl_fail("%s", err.message);
            if (!same_polygon(&seg, nums + 1, (int)nums[0], 0))
                tl_fail("mask %d: masks2segments(%s) %d points, Ultralytics' %d (or a vertex differs)", masks - 1,
                        sg == STRIX_SEGMENT_ALL ? "all" : "largest", seg.n, (int)nums[0]);
        }
        (void)k;
    }
    if (!tl_g.failed && masks < 30) tl_fail("contours.txt: only %d masks", masks);
    strix_polygon_free(&all);
    strix_polygon_free(&seg);
    free(st);
    free_lines(&l);
}

/* -------------------------------------------------------- obb goldens */

static void obb_inputs(gen *g, int n, float *b, float *s)
{
    for (int i = 0; i < n; i++) {
        b[5 * i] = g_unit(g) * 64.f;
        b[5 * i + 1] = g_unit(g) * 64.f;
        b[5 * i + 2] = 1.f + g_unit(g) * 32.f;
        b[5 * i + 3] = 1.f + g_unit(g) * 32.f;
        b[5 * i + 4] = (g_unit(g) - 0.5f) * 16.f;
        s[i] = g_unit(g);
    }
    s[5] = s[3];
}

static void test_obb_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "obb.txt", &l)) {
        tl_fail("cannot read " GOLDEN "obb.txt");
        return;
    }
    enum { N = 40 };
    float b[5 * N], s[N], reg[5 * N], cor[8 * N], sc[5 * N];
    int keep[N], checked = 0;
    gen g = {21};
    obb_inputs(&g, N, b, s);
    memcpy(reg, b, sizeof b);
    strix_regularize_rboxes(reg, N);
    strix_xywhr_corners(b, N, cor);
    memcpy(sc, b, sizeof b);
    strix_scale_rboxes(sc, N, 96, 64, 111, 150);
    for (int li = 0; li < l.n && !tl_g.failed; li++) {
        const char *t = l.v[li];
        int k = numbers(t, nums, MAXN);
        if (starts(t, "probiou")) {
            int i = (int)nums[0], j = (int)nums[1];
            float v = strix_probiou(b + 5 * i, b + 5 * j);
            if (fabs(v - nums[2]) > 2e-6) tl_fail("probiou(%d, %d) = %.9g, Ultralytics %.9g", i, j, (double)v, nums[2]);
        } else if (starts(t, "nms")) {
            /* the same boxes kept, in the same order but for equal scores (torch
             * orders ties arbitrarily past 16 boxes; strix: lower index first) */
            int m = strix_nms_rotated(b, s, N, (float)nums[0], keep);
            int same = m == (int)nums[1];
            for (int j = 0; same && j < m; j++) {
                int in = 0;
                for (int q = 0; q < m; q++) in |= keep[q] == (int)nums[2 + j];
                same = in && s[keep[j]] == s[(int)nums[2 + j]];
            }
            if (!same) tl_fail("nms_rotated(iou %.2f): %d kept, Ultralytics %d (or another set or order)", nums[0], m,
                               (int)nums[1]);
        } else if (starts(t, "reg") || starts(t, "corners") || starts(t, "scaled")) {
            int i = (int)nums[0], dim = starts(t, "corners") ? 8 : 5;
            const float *v = starts(t, "reg") ? reg + 5 * i : starts(t, "corners") ? cor + 8 * i : sc + 5 * i;
            double tol = starts(t, "reg") ? 2e-6 : 1e-4;
            for (int j = 0; j < dim && k == dim + 1; j++)
                if (fabs(v[j] - nums[1 + j]) > tol * (1 + fabs(nums[1 + j])))
                    tl_fail("%.7s box %d value %d: %.9g, Ultralytics %.9g", t, i, j, (double)v[j], nums[1 + j]);
        }
        checked++;
    }
    if (!tl_g.failed && checked < N * N + 5 + 3 * N) tl_fail("obb.txt: only %d lines", checked);
    free_lines(&l);
}

/* --------------------------------------------------- keypoint goldens */

/* task_goldens.py's kpt_inputs: 3 x 17 keypoints in a 128x160 input,
 * scaled to a 250x333 source as the pose predictor does; pts [17, 2] the
 * first detection's unscaled points. */
static void pose_inputs(float *k, float *pts)
{
    gen g = {31};
    for (int i = 0; i < 3 * 17; i++) {
        k[3 * i] = (float)(g_u24(&g) % (192 * 8) / 8.0 - 16);
        k[3 * i + 1] = (float)(g_u24(&g) % (192 * 8) / 8.0 - 16);
        k[3 * i + 2] = g_unit(&g);
    }
    for (int j = 0; j < 17; j++) pts[2 * j] = k[3 * j], pts[2 * j + 1] = k[3 * j + 1];
    strix_scale_coords(k, 3 * 17, 3, 128, 160, 250, 333, 0);
}

static void test_keypoints_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "kpts.txt", &l)) {
        tl_fail("cannot read " GOLDEN "kpts.txt");
        return;
    }
    float k[3 * 17 * 3], pts[17 * 2];
    pose_inputs(k, pts);
    strix_scale_coords(pts, 17, 2, 160, 96, 211, 90, 1);
    int seen = 0;
    for (int li = 0; li < l.n && !tl_g.failed; li++) {
        const char *t = l.v[li];
        numbers(t, nums, 8);
        if (starts(t, "kpt")) {
            const float *p = k + 3 * (17 * (int)nums[0] + (int)nums[1]);
            if (fabs(p[0] - nums[2]) > 1e-3 || fabs(p[1] - nums[3]) > 1e-3 || p[2] != (float)nums[4])
                tl_fail("keypoint %d.%d: %g %g %g, Ultralytics %g %g %g", (int)nums[0], (int)nums[1], (double)p[0],
                        (double)p[1], (double)p[2], nums[2], nums[3], nums[4]);
            seen++;
        } else if (starts(t, "xyn")) {
            const float *p = pts + 2 * (int)nums[0];
            if (fabs(p[0] - nums[1]) > 1e-6 || fabs(p[1] - nums[2]) > 1e-6)
                tl_fail("normalized point %d: %.9g %.9g, Ultralytics %.9g %.9g", (int)nums[0], (double)p[0],
                        (double)p[1], nums[1], nums[2]);
            seen++;
        }
    }
    if (!tl_g.failed && seen != 3 * 17 + 17) tl_fail("kpts.txt: %d lines of %d", seen, 3 * 17 + 17);
    free_lines(&l);
}

/* ------------------------------------------------------ probs goldens */

static void test_top5_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "probs.txt", &l)) {
        tl_fail("cannot read " GOLDEN "probs.txt");
        return;
    }
    gen g = {41};
    float p[30], q[1000];
    for (int i = 0; i < 30; i++) p[i] = (float)(g_u24(&g) % 16) / 16.f;
    for (int i = 0; i < 1000; i++) q[i] = g_unit(&g);
    int top[5], seen = 0;
    for (int li = 0; li < l.n && !tl_g.failed; li++) {
        const char *t = l.v[li];
        numbers(t, nums, 64);
        if (starts(t, "probs")) {
            for (int i = 0; i < 30; i++)
                if (p[i] != (float)nums[1 + i]) tl_fail("probability %d: the generator differs", i);
        } else if (starts(t, "top5") || starts(t, "top5q")) {
            int ties = starts(t, "top5");
            const float *v = ties ? p : q;
            int m = strix_topk_probs(v, ties ? 30 : 1000, 5, top);
            for (int j = 0; j < 5 && m == 5; j++)
                if (ties ? v[top[j]] != v[(int)nums[1 + j]] : top[j] != (int)nums[1 + j])
                    tl_fail("%s: rank %d is class %d (%g), Ultralytics class %d", ties ? "top5" : "top5q", j, top[j],
                            (double)v[top[j]], (int)nums[1 + j]);
            if (m != 5) tl_fail("top-5 of %d gave %d", ties ? 30 : 1000, m);
            seen++;
        } else if (starts(t, "top1") || starts(t, "top1q")) {
            int ties = starts(t, "top1");
            strix_topk_probs(ties ? p : q, ties ? 30 : 1000, 1, top);
            if (top[0] != (int)nums[0]) tl_fail("top1: class %d, Ultralytics %d", top[0], (int)nums[0]);
            seen++;
        }
    }
    if (!tl_g.failed && seen != 4) tl_fail("probs.txt: %d results of 4", seen);
    free_lines(&l);
}

/* ----------------------------------------------- fresh random inputs */

/* Naive: the outermost 8-connected components of a mask (those whose
 * surrounding background, 4-connected, reaches the frame). */
static int naive_outer_components(const uint8_t *m, int h, int w)
{
    int W = w + 2, H = h + 2, count = 0;
    int *lab = calloc((size_t)(W * H), sizeof(int)), *stack = malloc(sizeof(int) * (size_t)(W * H) * 8);
    uint8_t *ext = calloc((size_t)(W * H), 1);
#define PIX(x, y) ((x) >= 1 && (y) >= 1 && (x) <= w && (y) <= h && m[((y)-1) * w + (x)-1])
    int sp = 0;
    stack[sp++] = 0;
    ext[0] = 1;
    while (sp) { /* the exterior: background 4-connected to the frame */
        int p = stack[--sp], x = p % W, y = p / W;
        const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
        for (int d = 0; d < 4; d++) {
            int nx = x + dx[d], ny = y + dy[d];
            if (nx < 0 || ny < 0 || nx >= W || ny >= H || ext[ny * W + nx] || PIX(nx, ny)) continue;
            ext[ny * W + nx] = 1;
            stack[sp++] = ny * W + nx;
        }
    }
    for (int y = 1; y <= h; y++)
        for (int x = 1; x <= w; x++) {
            if (!PIX(x, y) || lab[y * W + x]) continue;
            int outer = 0;
            lab[y * W + x] = 1;
            sp = 0;
            stack[sp++] = y * W + x;
            while (sp) {
                int p = stack[--sp], px = p % W, py = p / W;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int nx = px + dx, ny = py + dy;
                        if (PIX(nx, ny) && !lab[ny * W + nx]) {
                            lab[ny * W + nx] = 1;
                            stack[sp++] = ny * W + nx;
                        }
                        if ((dx == 0) != (dy == 0) && ext[ny * W + nx]) outer = 1;
                    }
            }
            count += outer;
        }
#undef PIX
    free(lab);
    free(stack);
    free(ext);
    return count;
}

static void test_contours_random(void)
{
    strix_polygon all = {0};
    int *st = NULL, cap = 0, nc = 0;
    strix_error err;
    for (int it = 0; it < 300 && !tl_g.failed; it++) {
        int h = tl_int(1, 40), w = tl_int(1, 40), density = tl_int(5, 95);
        uint8_t *m = malloc((size_t)(h * w));
        for (int p = 0; p < h * w; p++) m[p] = (uint8_t)(tl_int(0, 99) < density ? tl_int(1, 255) : 0);
        if (strix_mask_contours(m, h, w, &all, &st, &cap, &nc, &err) != STRIX_OK) tl_fail("%s", err.message);
        int want = naive_outer_components(m, h, w);
        if (nc != want) tl_fail("%dx%d mask, density %d%%: %d contours, %d outermost components", w, h, density, nc,
                                want);
        for (int j = 0; j < all.n && !tl_g.failed; j++) { /* every vertex a foreground pixel */
            int x = (int)all.xy[2 * j], y = (int)all.xy[2 * j + 1];
            if (x < 0 || y < 0 || x >= w || y >= h || !m[y * w + x])
                tl_fail("%dx%d mask: vertex (%d, %d) is not a foreground pixel", w, h, x, y);
        }
        free(m);
    }
    strix_polygon_free(&all);
    free(st);
}

static void test_masks_random(void)
{
    /* against a double-precision direct evaluation of the same definition */
    strix_error err;
    for (int it = 0; it < 6 && !tl_g.failed; it++) {
        int mh = tl_int(2, 24), mw = tl_int(2, 24), c = tl_int(1, 12), n = tl_int(1, 4);
        int in_h = 4 * mh, in_w = 4 * mw;
        float *protos = malloc(sizeof(float) * (size_t)(c * mh * mw)), *co = malloc(sizeof(float) * (size_t)(n * c));
        float *boxes = malloc(sizeof(float) * 4 * (size_t)n);
        uint8_t *m = malloc((size_t)(n * in_h * in_w));
        for (int i = 0; i < c * mh * mw; i++) protos[i] = tl_uniform(-2, 2);
        for (int i = 0; i < n * c; i++) co[i] = tl_uniform(-1, 1);
        for (int i = 0; i < n; i++) {
            boxes[4 * i] = tl_uniform(-10, (float)in_w), boxes[4 * i + 1] = tl_uniform(-10, (float)in_h);
            boxes[4 * i + 2] = boxes[4 * i] + tl_uniform(0, (float)in_w);
            boxes[4 * i + 3] = boxes[4 * i + 1] + tl_uniform(0, (float)in_h);
        }
        if (strix_process_mask(protos, c, mh, mw, co, boxes, n, in_h, in_w, m, NULL, &err) != STRIX_OK)
            tl_fail("%s", err.message);
        size_t diff = 0, total = (size_t)(n * in_h * in_w);
        for (int i = 0; i < n && !tl_g.failed; i++)
            for (int y = 0; y < in_h; y++)
                for (int x = 0; x < in_w; x++) {
                    double sy = fmax((y + 0.5) * mh / in_h - 0.5, 0), sx = fmax((x + 0.5) * mw / in_w - 0.5, 0);
                    int y0 = (int)sy, x0 = (int)sx, y1 = y0 + (y0 < mh - 1), x1 = x0 + (x0 < mw - 1);
                    double ly = sy - y0, lx = sx - x0, v = 0;
                    for (int k = 0; k < c; k++) {
                        const float *pk = protos + (size_t)k * mh * mw;
                        double t0 = pk[y0 * mw + x0] * (1 - lx) + pk[y0 * mw + x1] * lx;
                        double t1 = pk[y1 * mw + x0] * (1 - lx) + pk[y1 * mw + x1] * lx;
                        v += co[i * c + k] * (t0 * (1 - ly) + t1 * ly);
                    }
                    const float *b = boxes + 4 * i;
                    int inside = x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
                    int want = inside && v > 0, got = m[((size_t)i * in_h + y) * in_w + x];
                    if (got && !inside) tl_fail("mask %d: pixel (%d, %d) set outside its box", i, x, y);
                    diff += want != got;
                }
        if (!tl_g.failed && diff > total / 500)
            tl_fail("%d masks %dx%d: %zu of %zu pixels differ from the direct evaluation", n, in_w, in_h, diff, total);
        free(protos), free(co), free(boxes), free(m);
    }
}

static void test_nms_rotated_random(void)
{
    for (int it = 0; it < 50 && !tl_g.failed; it++) {
        int n = tl_int(1, 60);
        float *b = malloc(sizeof(float) * 5 * (size_t)n), *s = malloc(sizeof(float) * (size_t)n);
        int *keep = malloc(sizeof(int) * (size_t)n), *rank = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++) {
            b[5 * i] = tl_uniform(0, 50), b[5 * i + 1] = tl_uniform(0, 50);
            b[5 * i + 2] = tl_uniform(1, 30), b[5 * i + 3] = tl_uniform(1, 30), b[5 * i + 4] = tl_uniform(-4, 4);
            s[i] = (float)tl_int(0, 20) / 20.f; /* ties */
        }
        float thr = tl_uniform(0.05f, 0.95f);
        int m = strix_nms_rotated(b, s, n, thr, keep);
        /* naive: rank by (score desc, index asc); dropped iff an earlier-ranked box overlaps > thr */
        for (int i = 0; i < n; i++) {
            rank[i] = 0;
            for (int j = 0; j < n; j++) rank[i] += s[j] > s[i] || (s[j] == s[i] && j < i);
        }
        int want = 0;
        for (int r = 0; r < n && !tl_g.failed; r++) {
            int i = 0;
            while (rank[i] != r) i++;
            int dropped = 0;
            for (int j = 0; j < n; j++)
                if (rank[j] < r && strix_probiou(b + 5 * j, b + 5 * i) > thr) dropped = 1;
            if (!dropped) {
                if (want >= m || keep[want] != i) tl_fail("n %d iou %.3f: kept #%d should be box %d", n, (double)thr,
                                                          want, i);
                want++;
            }
        }
        if (!tl_g.failed && want != m) tl_fail("n %d: %d kept, naive %d", n, m, want);
        for (int i = 0; i < n && !tl_g.failed; i++) { /* probiou: symmetric, in [0, 1], near 1 on itself */
            int j = tl_int(0, n - 1);
            float a = strix_probiou(b + 5 * i, b + 5 * j), c = strix_probiou(b + 5 * j, b + 5 * i);
            if (a != c || a < 0 || a > 1) tl_fail("probiou(%d, %d) = %g, reversed %g", i, j, (double)a, (double)c);
            if (strix_probiou(b + 5 * i, b + 5 * i) < 0.99f) tl_fail("probiou of box %d with itself < 0.99", i);
        }
        free(b), free(s), free(keep), free(rank);
    }
}

static void test_rboxes_random(void)
{
    /* regularize_rboxes keeps the rectangle: the same 4 corners, in some order */
    for (int it = 0; it < 500 && !tl_g.failed; it++) {
        float r[5] = {tl_uniform(-100, 100), tl_uniform(-100, 100), tl_uniform(1, 50), tl_uniform(1, 50),
                      tl_uniform(-10, 10)};
        float q[5], a[8], b[8];
        memcpy(q, r, sizeof r);
        strix_regularize_rboxes(q, 1);
        if (!(q[4] >= 0 && q[4] < 1.5707964f)) tl_fail("angle %g regularized to %g", (double)r[4], (double)q[4]);
        strix_xywhr_corners(r, 1, a);
        strix_xywhr_corners(q, 1, b);
        for (int i = 0; i < 4; i++) {
            double best = 1e9;
            for (int j = 0; j < 4; j++) best = fmin(best, hypot(a[2 * i] - b[2 * j], a[2 * i + 1] - b[2 * j + 1]));
            if (best > 1e-3 * (1 + fabs(r[2]) + fabs(r[3])))
                tl_fail("box (%g %g %g %g %g): corner %d moved %g after regularizing", (double)r[0], (double)r[1],
                        (double)r[2], (double)r[3], (double)r[4], i, best);
        }
        /* and back from its corners (as the JSON Lines give them): the same box up to rounding, the angle mod
         * 2 pi (away from +-pi, where it may wrap) */
        float back[5];
        strix_corners_xywhr(a, 1, back);
        double tol = 1e-4 * (1 + fabs(r[0]) + fabs(r[1]) + r[2] + r[3]), t = remainder(r[4], 2 * 3.14159265358979323846);
        for (int k = 0; k < 5 && fabs(t) < 3.14; k++)
            if (fabs(back[k] - (k == 4 ? t : r[k])) > (k == 4 ? 1e-4 : tol))
                tl_fail("box (%g %g %g %g %g): value %d back from its corners is %.9g", (double)r[0], (double)r[1],
                        (double)r[2], (double)r[3], (double)r[4], k, (double)back[k]);
    }
}

/* strix_polygon_fill gives back, pixel for pixel, the mask whose largest
 * contour the polygon is, for convex shapes (random rectangles and discs). */
static void test_polygon_fill_random(void)
{
    strix_polygon poly = {0};
    strix_error err;
    for (int it = 0; it < 200 && !tl_g.failed; it++) {
        int h = tl_int(3, 48), w = tl_int(3, 48);
        uint8_t *m = calloc((size_t)(h * w), 1), *back = malloc((size_t)(h * w));
        float cx = tl_uniform(0, (float)w), cy = tl_uniform(0, (float)h), rx = tl_uniform(1, (float)w / 2),
              ry = tl_uniform(1, (float)h / 2);
        int disc = it % 2;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                float dx = ((float)x - cx) / rx, dy = ((float)y - cy) / ry;
                m[y * w + x] = disc ? dx * dx + dy * dy <= 1 : fabsf(dx) <= 1 && fabsf(dy) <= 1;
            }
        if (strix_mask_segment(m, h, w, STRIX_SEGMENT_LARGEST, &poly, &err)) tl_fail("%s", err.message);
        float *xs = malloc(sizeof *xs * (size_t)(poly.n + 1));
        strix_polygon_fill(poly.xy, poly.n, xs, back, h, w);
        int diff = 0, any = 0;
        for (int p = 0; p < h * w; p++) {
            diff += m[p] != back[p];
            any += m[p];
        }
        if (diff)
            tl_fail("%dx%d %s at (%g, %g) radii (%g, %g): %d of %d pixels differ after the round trip (%d points)", w,
                    h, disc ? "disc" : "rectangle", (double)cx, (double)cy, (double)rx, (double)ry, diff, any, poly.n);
        free(xs);
        free(m);
        free(back);
    }
    strix_polygon_free(&poly);
}

static void test_topk_random(void)
{
    for (int it = 0; it < 200 && !tl_g.failed; it++) {
        int n = tl_int(1, 50), k = tl_int(1, 8), top[8];
        float p[50];
        for (int i = 0; i < n; i++) p[i] = (float)tl_int(0, 9) / 9.f;
        int m = strix_topk_probs(p, n, k, top);
        if (m != (k < n ? k : n)) tl_fail("top-%d of %d gave %d", k, n, m);
        for (int j = 0; j < m && !tl_g.failed; j++) { /* naive: rank by (value desc, index asc) */
            int want = -1;
            for (int i = 0; i < n; i++) {
                int r = 0;
                for (int q = 0; q < n; q++) r += p[q] > p[i] || (p[q] == p[i] && q < i);
                if (r == j) want = i;
            }
            if (top[j] != want) tl_fail("top-%d of %d: rank %d is %d, naive %d", k, n, j, top[j], want);
        }
    }
}

/* ------------------------------------------ one-to-one selection golden */

/* The class scores of rows [a, w] (from column 4): (p + 1) / (a nc + 1)
 * for p a Fisher-Yates permutation of 0 .. a nc - 1, all distinct
 * (task_goldens.py's distinct_scores). */
static void distinct_scores(gen *g, int a, int nc, int w, float *rows)
{
    int n = a * nc, *perm = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(g_u64(g) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int i = 0; i < n; i++) rows[(size_t)(i / nc) * w + 4 + i % nc] = (float)(perm[i] + 1) / (float)(n + 1);
    free(perm);
}

/* task_goldens.py's topk_inputs: rows [a, 4 + nc + extra] */
static void topk_inputs(gen *g, int a, int nc, int extra, float *rows)
{
    int w = 4 + nc + extra;
    for (int i = 0; i < a; i++) {
        float *r = rows + (size_t)i * w;
        r[0] = (float)(g_u24(g) % 2048) / 8.f;
        r[1] = (float)(g_u24(g) % 2048) / 8.f;
        r[2] = 1 + (float)(g_u24(g) % 512) / 8.f;
        r[3] = 1 + (float)(g_u24(g) % 512) / 8.f;
    }
    distinct_scores(g, a, nc, w, rows);
    for (int i = 0; extra && i < a; i++) {
        float *x = rows + (size_t)i * w + 4 + nc;
        x[0] = (float)i;
        for (int k = 1; k < extra; k++) x[k] = g_unit(g);
    }
}

/* strix_topk with rows_out (YOLO26's one-to-one head feeding a task's
 * values) against Ultralytics' Detect.postprocess + non_max_suppression
 * (end2end): the same detections in order, boxes within 1e-4 px (x1 y1 x2
 * y2 of eighths: exact), scores and classes exactly, each carrying its
 * anchor's whole row. */
static void test_topk_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "topk.txt", &l)) {
        tl_fail("cannot read " GOLDEN "topk.txt");
        return;
    }
    int cases = 0;
    for (int li = 0; li < l.n && !tl_g.failed; li++) {
        if (!starts(l.v[li], "case")) continue;
        int k = numbers(l.v[li], nums, MAXN), id = (int)nums[0], a = (int)nums[1], nc = (int)nums[2];
        int w = 4 + nc + (int)nums[3];
        unsigned char *cls = NULL;
        if (k > 8) { /* the classes kept */
            cls = calloc((size_t)nc, 1);
            for (int j = 8; j < k; j++) cls[(int)nums[j]] = 1;
        }
        strix_nms_params p = {(float)nums[5], 0.7f, (int)nums[4], 0, (int)nums[6], nc, cls, w, NULL, NULL,
                              NULL, NULL, NULL, 0};
        gen g = {(uint64_t)nums[7]};
        float *rows = malloc(sizeof(float) * (size_t)a * w), *out_rows = malloc(sizeof(float) * (size_t)p.max_det * w);
        strix_detection *d = malloc(sizeof *d * (size_t)p.max_det);
        void *ws = malloc(strix_topk_workspace((size_t)a, &p));
        topk_inputs(&g, a, nc, (int)nums[3], rows);
        p.rows_out = out_rows;
        int n = strix_topk(d, rows, (size_t)a, &p, ws), want = 0;
        for (int lj = li + 1; lj < l.n && starts(l.v[lj], "det") && !tl_g.failed; lj++, want++) {
            numbers(l.v[lj], nums, MAXN);
            int i = (int)nums[0], anchor = (int)nums[7];
            if (i >= n) continue; /* the count is checked below */
            const strix_detection *q = &d[i];
            if (fabs(q->x1 - nums[1]) > 1e-4 || fabs(q->y1 - nums[2]) > 1e-4 || fabs(q->x2 - nums[3]) > 1e-4 ||
                fabs(q->y2 - nums[4]) > 1e-4 || q->score != (float)nums[5] || q->class_id != (int)nums[6])
                tl_fail("topk case %d, detection %d: box %.4f %.4f %.4f %.4f, score %.9g, class %d; Ultralytics: %s",
                        id, i, q->x1, q->y1, q->x2, q->y2, (double)q->score, q->class_id, l.v[lj]);
            else if (memcmp(out_rows + (size_t)i * w, rows + (size_t)anchor * w, sizeof(float) * (size_t)w))
                tl_fail("topk case %d, detection %d: its row is not anchor %d's", id, i, anchor);
        }
        if (!tl_g.failed && n != want) tl_fail("topk case %d: %d detections, Ultralytics %d", id, n, want);
        free(cls);
        free(rows);
        free(out_rows);
        free(d);
        free(ws);
        cases++;
    }
    if (!tl_g.failed && cases != 4) tl_fail(GOLDEN "topk.txt: %d cases, want 4", cases);
    free_lines(&l);
}

/* ------------------------------------ TrackTrack's recovered detections */

/* loose_goldens.py's recovered_inputs: rows [a, 4 + nc + obb], clusters of
 * jittered boxes */
static void recovered_inputs(gen *g, int a, int nc, int obb, float *rows)
{
    int k = a / 8 > 1 ? a / 8 : 1, w = 4 + nc + obb;
    float *cl = malloc(sizeof(float) * 4 * (size_t)k);
    for (int c = 0; c < k; c++) {
        cl[4 * c] = (float)(g_u24(g) % 2048) / 8.f;
        cl[4 * c + 1] = (float)(g_u24(g) % 2048) / 8.f;
        cl[4 * c + 2] = 8 + (float)(g_u24(g) % 512) / 8.f;
        cl[4 * c + 3] = 8 + (float)(g_u24(g) % 512) / 8.f;
    }
    for (int i = 0; i < a; i++) {
        const float *c = cl + 4 * (g_u24(g) % (uint32_t)k);
        for (int q = 0; q < 4; q++) rows[(size_t)i * w + q] = c[q] + (float)((int)(g_u24(g) % 33) - 16) / 8.f;
    }
    distinct_scores(g, a, nc, w, rows);
    for (int i = 0; obb && i < a; i++) rows[(size_t)i * w + 4 + nc] = (g_unit(g) - 0.5f) * 1.5f;
    free(cl);
}

/* The NMS of rows at iou (strix_nms, or strix_nms_obb with the detections'
 * regularised xywhr into x): the count. */
static int recovered_nms(const float *rows, int a, strix_nms_params *p, float iou, int obb, strix_detection *d,
                         float *out_rows, float *x)
{
    p->iou = iou;
    p->rows_out = out_rows;
    void *ws = malloc(obb ? strix_nms_obb_workspace((size_t)a, p) : strix_nms_workspace((size_t)a, p));
    int n = obb ? strix_nms_obb(d, rows, (size_t)a, p, ws) : strix_nms(d, rows, (size_t)a, p, ws);
    free(ws);
    for (int i = 0; obb && i < n; i++) {
        memcpy(x + 5 * (size_t)i, out_rows + (size_t)i * p->row, sizeof(float) * 4);
        x[5 * (size_t)i + 4] = out_rows[(size_t)i * p->row + p->row - 1];
    }
    if (obb) strix_regularize_rboxes(x, n);
    return n;
}

/* strix_recovered_dedup after NMS at 0.7 and at 0.95 (what
 * strix_model_detect does with recovered = 1, in tensor pixels) against
 * Ultralytics' compute_dets_del on the same rows
 * (tests/golden/tasks/recovered.txt, tools/reference/loose_goldens.py):
 * the same detections in order, boxes (obb: xywhr) within 1e-4, scores and
 * classes exactly. */
static void test_recovered_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "recovered.txt", &l)) {
        tl_fail("cannot read " GOLDEN "recovered.txt");
        return;
    }
    int cases = 0;
    for (int li = 0; li + 1 < l.n && !tl_g.failed; li++) {
        if (!starts(l.v[li], "case")) continue;
        numbers(l.v[li], nums, MAXN);
        int id = (int)nums[0], a = (int)nums[1], nc = (int)nums[2], obb = (int)nums[3], w = 4 + nc + obb;
        strix_nms_params p = {(float)nums[5], 0.7f, (int)nums[4], 30000, (int)nums[6], nc, NULL, w,
                              NULL, NULL, NULL, NULL, NULL, 0};
        gen g = {(uint64_t)nums[7]};
        size_t md = (size_t)p.max_det;
        float *rows = malloc(sizeof(float) * (size_t)a * w), *out_rows = malloc(sizeof(float) * md * w);
        float *tx = malloc(sizeof(float) * 5 * md), *lx = malloc(sizeof(float) * 5 * md);
        strix_detection *td = malloc(sizeof *td * md), *ld = malloc(sizeof *ld * md);
        recovered_inputs(&g, a, nc, obb, rows);
        int nt = recovered_nms(rows, a, &p, 0.7f, obb, td, out_rows, tx);
        int nl = recovered_nms(rows, a, &p, 0.95f, obb, ld, out_rows, lx);
        int n = strix_recovered_dedup(ld, obb ? lx : NULL, nl, td, obb ? tx : NULL, nt), want = 0;
        numbers(l.v[li + 1], nums, MAXN);
        if (nt != (int)nums[0]) tl_fail("recovered case %d: %d detections at IoU 0.7, Ultralytics %d", id, nt,
                                        (int)nums[0]);
        for (int lj = li + 2; lj < l.n && starts(l.v[lj], "rec") && !tl_g.failed; lj++, want++) {
            numbers(l.v[lj], nums, MAXN);
            int i = (int)nums[0], k = obb ? 5 : 4;
            if (i >= n) continue; /* the count is checked below */
            float v[5] = {ld[i].x1, ld[i].y1, ld[i].x2, ld[i].y2, 0};
            if (obb) memcpy(v, lx + 5 * (size_t)i, sizeof v);
            int bad = ld[i].score != (float)nums[1 + k] || ld[i].class_id != (int)nums[2 + k];
            for (int q = 0; q < k; q++) bad |= fabs(v[q] - nums[1 + q]) > 1e-4;
            if (bad)
                tl_fail("recovered case %d, detection %d: %.4f %.4f %.4f %.4f %.4f, score %.9g, class %d; "
                        "Ultralytics: %s", id, i, v[0], v[1], v[2], v[3], v[4], (double)ld[i].score, ld[i].class_id,
                        l.v[lj]);
        }
        if (!tl_g.failed && n != want) tl_fail("recovered case %d: %d recovered, Ultralytics %d", id, n, want);
        free(rows);
        free(out_rows);
        free(tx);
        free(lx);
        free(td);
        free(ld);
        cases++;
    }
    if (!tl_g.failed && cases != 4) tl_fail(GOLDEN "recovered.txt: %d cases, want 4", cases);
    free_lines(&l);
}

static void test_scale_coords_random(void)
{
    /* source -> letterbox (the geometry's forward map) -> back: the same point, within the clip */
    for (int it = 0; it < 300 && !tl_g.failed; it++) {
        int sw = tl_int(1, 2000), sh = tl_int(1, 2000), iw = 32 * tl_int(1, 20), ih = 32 * tl_int(1, 20);
        strix_scale_geom g;
        strix_scale_geometry(iw, ih, sw, sh, &g);
        float x = tl_uniform(0, (float)sw), y = tl_uniform(0, (float)sh), v = tl_uniform(0, 1);
        float p[3] = {x * g.gain_x + g.pad_x, y * g.gain_y + g.pad_y, v};
        strix_scale_coords(p, 1, 3, iw, ih, sw, sh, 0);
        if (fabsf(p[0] - x) > 1e-3f * (1 + x) || fabsf(p[1] - y) > 1e-3f * (1 + y) || p[2] != v)
            tl_fail("%dx%d in %dx%d: (%g, %g) came back as (%g, %g)", sw, sh, iw, ih, (double)x, (double)y,
                    (double)p[0], (double)p[1]);
        float far[2] = {-1e6f, 1e6f};
        strix_scale_coords(far, 1, 2, iw, ih, sw, sh, 0);
        if (far[0] != 0 || far[1] != (float)sh) tl_fail("not clipped: (%g, %g)", (double)far[0], (double)far[1]);
    }
}

static void test_segment_values_random(void)
{
    /* a segment model's task values: NMS's box in the tensor's pixels, not clipped (process_mask crops with
     * it before scale_boxes clips the detection's), then the coefficients; the detection's box is left as
     * strix_scale_boxes made it */
    enum { NC = 3, NM = 5, ROW = 4 + NC + NM, N = 40 };
    strix_task_layout t = {STRIX_TASK_SEGMENT, NC, NM, 0};
    if (strix_task_stride(&t) != 4 + NM) tl_fail("stride %d, want %d", strix_task_stride(&t), 4 + NM);
    int outside = 0;
    for (int it = 0; it < 50 && !tl_g.failed; it++) {
        strix_letterbox_info li;
        strix_letterbox_plan(tl_int(16, 1500), tl_int(16, 1500), 32 * tl_int(2, 20), 32, tl_int(0, 1), &li);
        float rows[N * ROW], vals[N * (4 + NM)];
        strix_detection d[N], before[N];
        for (int i = 0; i < N; i++) {
            float *r = rows + i * ROW;
            for (int c = 0; c < ROW; c++) r[c] = tl_uniform(-1, 1);
            /* centres anywhere in the tensor, sides up to its size: many boxes reach into the padding */
            r[0] = tl_uniform(0, (float)li.dst_w), r[1] = tl_uniform(0, (float)li.dst_h);
            r[2] = tl_uniform(0, (float)li.dst_w), r[3] = tl_uniform(0, (float)li.dst_h);
            d[i] = (strix_detection){r[0] - r[2] / 2, r[1] - r[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2, 0.5f, 0};
        }
        strix_scale_boxes(d, N, &li);
        memcpy(before, d, sizeof d);
        strix_scale_task_values(vals, d, rows, N, &t, &li);
        for (int i = 0; i < N && !tl_g.failed; i++) {
            const float *r = rows + i * ROW, *v = vals + i * (4 + NM);
            float want[4] = {r[0] - r[2] / 2, r[1] - r[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2};
            if (memcmp(v, want, sizeof want) || memcmp(v + 4, r + 4 + NC, sizeof(float) * NM))
                tl_fail("%dx%d in %dx%d, box %d: values (%g %g %g %g) %g..., want (%g %g %g %g) %g...", li.src_w,
                        li.src_h, li.dst_w, li.dst_h, i, (double)v[0], (double)v[1], (double)v[2], (double)v[3],
                        (double)v[4], (double)want[0], (double)want[1], (double)want[2], (double)want[3],
                        (double)r[4 + NC]);
            if (memcmp(&d[i], &before[i], sizeof d[i])) tl_fail("box %d: the detection changed", i);
            outside += want[0] < li.left || want[2] > li.left + li.new_w || want[1] < li.top ||
                       want[3] > li.top + li.new_h;
        }
    }
    if (!tl_g.failed && outside < 100) tl_fail("only %d boxes reached into the padding", outside);
}

static void test_bad_shapes(void)
{
    /* hostile shapes: refused with an error, never a crash */
    float protos[4] = {1, 1, 1, 1}, co[1] = {1}, box[4] = {NAN, 0, 1e30f, 1};
    uint8_t m[16];
    strix_error err;
    if (strix_process_mask(protos, 1, 2, 2, co, box, 1, 0, 4, m, NULL, &err) != STRIX_E_ARG)
        tl_fail("a 4x0 input was accepted");
    if (strix_process_mask(protos, 1, 2, 2, co, box, 1, 4, 4, m, NULL, &err) != STRIX_OK) tl_fail("%s", err.message);
    for (int i = 0; i < 16; i++)
        if (m[i]) tl_fail("a NaN box left pixel %d set", i);
    if (strix_process_mask_native(protos, 1, 2, 2, co, box, 1, 4, 4, m, NULL, &err) != STRIX_OK)
        tl_fail("%s", err.message);
    strix_polygon p = {0};
    if (strix_mask_segment(m, 0, 3, STRIX_SEGMENT_ALL, &p, &err) != STRIX_E_ARG) tl_fail("a 3x0 mask was accepted");
    int keep[1];
    if (strix_nms_rotated(NULL, NULL, 0, 0.5f, keep) != 0) tl_fail("nms of nothing kept something");
}

/* ------------------------------------------------ writers vs summary */

/* The strings and numbers of a JSON text, in order (structure dropped). */
typedef struct tokens {
    int n;
    char *str[8192]; /* NULL: a number */
    double num[8192];
} tokens;

static void tokenize(char *text, tokens *t)
{
    t->n = 0;
    for (char *p = text; *p && t->n < 8192;) {
        if (*p == '"') {
            char *e = strchr(p + 1, '"');
            if (!e) break;
            *e = 0;
            t->str[t->n] = p + 1;
            t->num[t->n++] = 0;
            p = e + 1;
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            char *e;
            t->num[t->n] = strtod(p, &e);
            t->str[t->n++] = NULL;
            p = e > p ? e : p + 1;
        } else {
            p++;
        }
    }
}

/* The index of the last (or first) string token equal to key, -1 if none. */
static int find_key(const tokens *t, const char *key, int last)
{
    int at = -1;
    for (int i = 0; i < t->n; i++)
        if (t->str[i] && !strcmp(t->str[i], key)) {
            at = i;
            if (!last) break;
        }
    return at;
}

/* Compare tokens a[a0..] with b[b0, b1): strings equal, numbers within
 * 6e-6 + 1e-6 |v| (summary rounds to 5 decimals).  0 and the reason in why. */
static int same_tokens(const tokens *a, int a0, int a1, const tokens *b, int b0, int b1, char *why, size_t n)
{
    if (a1 - a0 != b1 - b0) {
        snprintf(why, n, "%d tokens, Ultralytics %d", a1 - a0, b1 - b0);
        return 0;
    }
    for (int i = 0; i < a1 - a0; i++) {
        const char *x = a->str[a0 + i], *y = b->str[b0 + i];
        double u = a->num[a0 + i], v = b->num[b0 + i];
        if ((x == NULL) != (y == NULL) || (x && strcmp(x, y)) || (!x && fabs(u - v) > 6e-6 + 1e-6 * fabs(v))) {
            snprintf(why, n, "token %d: %s %g, Ultralytics %s %g", i, x ? x : "", u, y ? y : "", v);
            return 0;
        }
    }
    return 1;
}

/* What f holds, as a string (f rewound and closed). */
static char *slurp(FILE *f)
{
    long size = ftell(f);
    char *s = malloc((size_t)size + 1);
    rewind(f);
    size_t got = fread(s, 1, (size_t)size, f);
    s[got] = 0;
    fclose(f);
    return s;
}

/* Case 0 of masks.txt: its default masks, boxes and nonempty flags. */
enum { C0_IN = 160, C0_SRC_H = 77, C0_SRC_W = 101, C0_C = 32, C0_N = 5 };
static void case0_masks(uint8_t *masks, uint8_t *nonempty)
{
    gen g = {11};
    float *protos = malloc(sizeof(float) * C0_C * (C0_IN / 4) * (C0_IN / 4)), co[C0_N * C0_C], boxes[4 * C0_N];
    mask_inputs(&g, C0_C, C0_IN / 4, C0_IN / 4, C0_N, C0_IN, C0_IN, protos, co, boxes);
    strix_process_mask(protos, C0_C, C0_IN / 4, C0_IN / 4, co, boxes, C0_N, C0_IN, C0_IN, masks, nonempty, NULL);
    free(protos);
}

static void test_writers_summary(void)
{
    lines l;
    if (!read_lines(GOLDEN "summary.json", &l) || l.n < 1) {
        tl_fail("cannot read " GOLDEN "summary.json");
        return;
    }
    static tokens gold, mine;
    tokenize(l.v[0], &gold);
    FILE *f = tmpfile();
    FILE *txt = tmpfile();
    if (!f || !txt) {
        tl_fail("tmpfile failed");
        return;
    }
    /* segment: the kept masks' polygons (masks.xy) */
    uint8_t *masks = malloc((size_t)C0_N * C0_IN * C0_IN), ne[C0_N];
    case0_masks(masks, ne);
    strix_polygon poly = {0};
    for (int i = 0; i < C0_N; i++) {
        if (!ne[i]) continue;
        strix_mask_segment(masks + (size_t)i * C0_IN * C0_IN, C0_IN, C0_IN, STRIX_SEGMENT_ALL, &poly, NULL);
        strix_scale_coords(poly.xy, poly.n, 2, C0_IN, C0_IN, C0_SRC_W, C0_SRC_H, 0);
        strix_json_segments(f, poly.xy, poly.n);
        fputc('\n', f);
        if (poly.n >= 3) {
            fputs("0", txt);
            strix_txt_points(txt, poly.xy, poly.n, 2, 0, C0_SRC_W, C0_SRC_H);
            fputc('\n', txt);
        }
    }
    strix_polygon_free(&poly);
    free(masks);
    fputs("\"@pose\"\n", f); /* section markers: strings that are no key */
    fputs("@pose\n", txt);
    float k[3 * 17 * 3], pts[17 * 2];
    pose_inputs(k, pts);
    for (int i = 0; i < 3; i++) {
        strix_json_keypoints(f, k + 51 * i, 17, 3);
        fputc('\n', f);
        strix_txt_points(txt, k + 51 * i, 17, 3, 1, 250, 333);
        fputc('\n', txt);
    }
    fputs("\"@obb\"\n", f);
    fputs("@obb\n", txt);
    enum { N = 40 };
    float b[5 * N], sc[N], cor[8 * N];
    gen g = {21};
    obb_inputs(&g, N, b, sc);
    strix_xywhr_corners(b, 4, cor);
    for (int i = 0; i < 4; i++) {
        strix_json_obb(f, cor + 8 * i);
        fputc('\n', f);
        fputs("0", txt);
        strix_txt_points(txt, cor + 8 * i, 4, 2, 0, 250, 333);
        fputc('\n', txt);
    }
    fputs("\"@classify\"\n", f);
    fputs("@classify\n", txt);
    gen gp = {41};
    float q[1000];
    for (int i = 0; i < 30; i++) g_u24(&gp);
    for (int i = 0; i < 1000; i++) q[i] = g_unit(&gp);
    char *names[1000], store[1000][8];
    for (int i = 0; i < 1000; i++) snprintf(store[i], sizeof store[i], "c%d", i), names[i] = store[i];
    int top[5];
    strix_topk_probs(q, 1000, 5, top);
    strix_json_probs(f, top, q, 5, (const char *const *)names, 1000);
    strix_txt_probs(txt, top, q, 5, (const char *const *)names, 1000);
    char *js = slurp(f), *tx = slurp(txt);
    tokenize(js, &mine);
    /* the JSON: each section's tokens, less our field names, against summary's */
    const char *sec[4] = {"segment", "pose", "obb", "classify"}, *mark[4] = {NULL, "@pose", "@obb", "@classify"};
    const char *field[4] = {"segments", "keypoints", "obb", "probs"};
    const char *gend[4] = {"segment_kept", "obb", "classify", NULL};
    char why[200];
    for (int si = 0; si < 4 && !tl_g.failed; si++) {
        int g0 = find_key(&gold, sec[si], 1) + 1, g1 = gend[si] ? find_key(&gold, gend[si], 1) : gold.n;
        int m0 = mark[si] ? find_key(&mine, mark[si], 0) + 1 : 0;
        int m1 = si < 3 ? find_key(&mine, mark[si + 1], 0) : mine.n;
        /* drop our field names */
        static tokens strip;
        strip.n = 0;
        for (int i = m0; i < m1; i++)
            if (!(mine.str[i] && !strcmp(mine.str[i], field[si]))) {
                strip.str[strip.n] = mine.str[i];
                strip.num[strip.n++] = mine.num[i];
            }
        if (g0 <= 0 || g1 < g0 || !same_tokens(&strip, 0, strip.n, &gold, g0, g1, why, sizeof why))
            tl_fail("JSON %s: %s", field[si], g0 <= 0 ? "missing in summary.json" : why);
    }
    /* save_txt: the golden lines are strings of the first "save_txt" section */
    int t0 = find_key(&gold, "save_txt", 0);
    int line = 0;
    char *save = NULL;
    for (char *ln = strtok_r(tx, "\n", &save); ln && !tl_g.failed; ln = strtok_r(NULL, "\n", &save)) {
        if (ln[0] == '@') continue;
        /* the next golden line (skip the section keys) */
        int gi = t0 + 1, seen = -1;
        for (; gi < gold.n; gi++) {
            if (!gold.str[gi]) break;
            if (!strcmp(gold.str[gi], "segment") || !strcmp(gold.str[gi], "pose") || !strcmp(gold.str[gi], "obb") ||
                !strcmp(gold.str[gi], "classify"))
                continue;
            if (++seen == line) break;
        }
        if (gi >= gold.n || !gold.str[gi]) {
            tl_fail("save_txt: line %d has no golden line", line);
            break;
        }
        const char *want = gold.str[gi];
        int is_pose = strchr(ln, ' ') == NULL || ln[0] == ' ';
        if (is_pose) { /* ours is the keypoints only: skip the golden class and box */
            for (int sp = 0; sp < 5 && want; sp++) want = strchr(want + 1, ' ');
            if (!want) want = "";
        }
        double a[128], c[128];
        char bufa[4096], bufb[4096];
        snprintf(bufa, sizeof bufa, "x %s", ln);
        snprintf(bufb, sizeof bufb, "x %s", want);
        int na = numbers(bufa, a, 128), nb = numbers(bufb, c, 128);
        int same = na == nb && strcmp(ln + strcspn(ln, "c"), want + strcspn(want, "c")) == 0;
        for (int i = 0; same && i < na; i++) same = fabs(a[i] - c[i]) <= 1e-6 + 2e-5 * fabs(c[i]);
        if (!same) tl_fail("save_txt line %d: \"%.60s\", Ultralytics \"%.60s\"", line, ln, want);
        line++;
    }
    if (!tl_g.failed && line < 10) tl_fail("save_txt: only %d lines", line);
    free(js);
    free(tx);
    free_lines(&l);
}

/* ------------------------------------------------------------ drawing */

/* A frame inside guard bytes: a row above and below, and padding at the end
 * of every row, all 0xA5; the frame itself filled with v. */
typedef struct framebuf {
    uint8_t *mem, *px;
    int w, h, stride;
} framebuf;

static void frame_new(framebuf *f, int w, int h, uint8_t v)
{
    f->w = w, f->h = h, f->stride = 3 * w + 7;
    f->mem = malloc((size_t)f->stride * (size_t)(h + 2));
    memset(f->mem, 0xA5, (size_t)f->stride * (size_t)(h + 2));
    f->px = f->mem + f->stride;
    for (int y = 0; y < h; y++) memset(f->px + (size_t)y * f->stride, v, (size_t)(3 * w));
}

static int frame_guard_ok(const framebuf *f)
{
    for (int y = -1; y <= f->h; y++) {
        const uint8_t *row = f->px + (ptrdiff_t)y * f->stride;
        int from = (y < 0 || y == f->h) ? 0 : 3 * f->w;
        for (int x = from; x < f->stride; x++)
            if (row[x] != 0xA5) return 0;
    }
    return 1;
}

static const uint8_t *px_at(const framebuf *f, int x, int y) { return f->px + (size_t)y * f->stride + (size_t)x * 3; }

static void test_draw_masks_golden(void)
{
    lines l;
    if (!read_lines(GOLDEN "draw_masks.txt", &l) || l.n < 1) {
        tl_fail("cannot read " GOLDEN "draw_masks.txt");
        return;
    }
    int k = numbers(l.v[0], nums, MAXN), h = (int)nums[0], w = (int)nums[1];
    TL_CHECK(k == 2 + h * w * 3, "draw_masks.txt: %d numbers", k);
    gen g = {51};
    framebuf f;
    frame_new(&f, w, h, 0);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < 3 * w; x++) f.px[(size_t)y * f.stride + x] = (uint8_t)(g_u24(&g) % 256);
    uint8_t *m = malloc((size_t)(3 * h * w));
    for (int i = 0; i < 3 * h * w; i++) m[i] = g_u24(&g) % 100 < 40;
    const int cls[3] = {0, 5, 7};
    strix_draw_masks(f.px, w, h, f.stride, m, 3, cls, 0.5f);
    int diff = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < 3 * w; x++) diff += f.px[(size_t)y * f.stride + x] != (uint8_t)nums[2 + y * 3 * w + x];
    if (diff) tl_fail("%d of %d bytes differ from Annotator.masks'", diff, 3 * h * w);
    if (!frame_guard_ok(&f)) tl_fail("wrote outside the frame");
    free(m);
    free(f.mem);
    free_lines(&l);
}

static void test_draw_masks_random(void)
{
    /* one mask over a random frame: covered pixels become trunc(p/2 + c/2) (alpha 0.5), others stay */
    for (int it = 0; it < 20 && !tl_g.failed; it++) {
        int w = tl_int(1, 41), h = tl_int(1, 33), cls = tl_int(0, 40);
        framebuf f;
        frame_new(&f, w, h, 0);
        uint8_t *orig = malloc((size_t)(3 * w * h)), *m = malloc((size_t)(w * h));
        for (int y = 0; y < h; y++)
            for (int x = 0; x < 3 * w; x++)
                f.px[(size_t)y * f.stride + x] = orig[y * 3 * w + x] = (uint8_t)tl_int(0, 255);
        for (int i = 0; i < w * h; i++) m[i] = (uint8_t)tl_int(0, 1);
        strix_draw_masks(f.px, w, h, f.stride, m, 1, &cls, 0.5f);
        uint8_t c[3];
        strix_class_color(cls, c);
        for (int y = 0; y < h && !tl_g.failed; y++)
            for (int x = 0; x < w; x++)
                for (int ch = 0; ch < 3; ch++) {
                    int p = orig[y * 3 * w + 3 * x + ch], want = m[y * w + x] ? (p + c[ch]) / 2 : p;
                    int got = px_at(&f, x, y)[ch];
                    if (abs(got - want) > 1) /* float rounding of p/255 * 0.5 + c/255 * 0.5 */
                        tl_fail("%dx%d: pixel (%d, %d) channel %d is %d, want %d", w, h, x, y, ch, got, want);
                }
        if (!frame_guard_ok(&f)) tl_fail("%dx%d: wrote outside the frame", w, h);
        free(orig), free(m), free(f.mem);
    }
}

static void test_draw_keypoints(void)
{
    /* a COCO skeleton on an odd-sized frame: shown points in the pose palette,
     * hidden ones (visibility < 0.25) absent, a limb between two shown points,
     * none to a hidden one; points off the frame write nothing outside it */
    framebuf f;
    frame_new(&f, 101, 67, 0);
    float k[17 * 3];
    for (int i = 0; i < 17; i++) {
        k[3 * i] = 5.f + 5.f * (float)i, k[3 * i + 1] = 10.f + 3.f * (float)(i % 5), k[3 * i + 2] = 0.9f;
    }
    k[3 * 6] = 90.f, k[3 * 6 + 1] = 40.f, k[3 * 6 + 2] = 0.1f; /* keypoint 7 hidden, away from every limb */
    /* keypoints 12 and 13 (1-based) far apart on one row: the limb {12, 13} between them */
    k[3 * 11] = 20.f, k[3 * 11 + 1] = 60.f, k[3 * 12] = 80.f, k[3 * 12 + 1] = 60.f;
    k[3 * 16] = -30.f, k[3 * 16 + 1] = 200.f; /* off the frame */
    strix_draw_keypoints(f.px, f.w, f.h, f.stride, k, 17, 3, 2, 2, 0.25f, NULL);
    const uint8_t *p = px_at(&f, 5, 10); /* keypoint 1: colour 16 (0, 255, 0) */
    TL_CHECK(p[0] == 0 && p[1] == 255 && p[2] == 0, "keypoint 1 drawn as (%d %d %d)", p[0], p[1], p[2]);
    p = px_at(&f, 90, 40); /* keypoint 7, hidden */
    TL_CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0, "hidden keypoint 7 drawn");
    p = px_at(&f, 50, 60); /* the middle of limb {12, 13} (the 5th): pose colour 7, (255, 51, 255) */
    TL_CHECK(p[0] == 255 && p[1] == 51 && p[2] == 255, "limb 12-13 missing: (%d %d %d)", p[0], p[1], p[2]);
    TL_CHECK(frame_guard_ok(&f), "wrote outside the frame");
    /* not COCO: points only, in the class palette reversed, no limbs */
    framebuf g;
    frame_new(&g, 33, 21, 0);
    float k2[4 * 2] = {3, 3, 30, 3, 0, 0, 16, 18};
    strix_draw_keypoints(g.px, g.w, g.h, g.stride, k2, 4, 2, 2, 1, 0.25f, NULL);
    uint8_t c[3];
    strix_class_color(1, c);
    p = px_at(&g, 30, 3);
    TL_CHECK(p[0] == c[2] && p[1] == c[1] && p[2] == c[0], "point 2 drawn as (%d %d %d)", p[0], p[1], p[2]);
    p = px_at(&g, 16, 3); /* between points 1 and 2: no limb */
    TL_CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0, "a limb drawn for a non-COCO shape");
    p = px_at(&g, 0, 0); /* (0, 0) marks a missing point */
    TL_CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0, "the missing (0, 0) point drawn");
    TL_CHECK(frame_guard_ok(&g), "wrote outside the frame");
    free(f.mem);
    free(g.mem);
}

static void test_draw_rotated_and_probs(void)
{
    for (int it = 0; it < 30 && !tl_g.failed; it++) {
        int w = tl_int(1, 80), h = tl_int(1, 60);
        framebuf f;
        frame_new(&f, w, h, 0);
        int n = tl_int(1, 4);
        float r[5 * 4], cor[8 * 4];
        strix_detection d[4];
        for (int i = 0; i < n; i++) {
            r[5 * i] = tl_uniform(-20, (float)w + 20), r[5 * i + 1] = tl_uniform(-20, (float)h + 20);
            r[5 * i + 2] = tl_uniform(1, 60), r[5 * i + 3] = tl_uniform(1, 60), r[5 * i + 4] = tl_uniform(-4, 4);
            d[i] = (strix_detection){0};
            d[i].class_id = tl_int(0, 30), d[i].score = tl_uniform(0, 1);
        }
        strix_xywhr_corners(r, n, cor);
        strix_annotate_rotated(f.px, w, h, f.stride, d, cor, n, NULL, 0, NULL);
        int probs_top[2] = {3, 1};
        float probs[4] = {0.1f, 0.2f, 0.3f, 0.4f};
        strix_annotate_probs(f.px, w, h, f.stride, probs_top, probs, 2, NULL, 0);
        if (!frame_guard_ok(&f)) tl_fail("%dx%d: wrote outside the frame", w, h);
        free(f.mem);
    }
    /* a box well inside a frame: its first corner's edge is drawn in its class colour */
    framebuf f;
    frame_new(&f, 120, 90, 0);
    float r[5] = {60, 50, 40, 20, 0.3f}, cor[8];
    strix_detection d = {0};
    d.class_id = 2;
    strix_xywhr_corners(r, 1, cor);
    strix_annotate_style st;
    strix_annotate_style_init(&st);
    st.show_label = st.show_score = 0;
    strix_annotate_rotated(f.px, f.w, f.h, f.stride, &d, cor, 1, NULL, 0, &st);
    uint8_t c[3];
    strix_class_color(2, c);
    int mx = (int)((cor[2] + cor[4]) / 2), my = (int)((cor[3] + cor[5]) / 2); /* middle of edge 2-3 */
    int found = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) found |= !memcmp(px_at(&f, mx + dx, my + dy), c, 3);
    TL_CHECK(found, "edge 2-3 of the rotated box not drawn near (%d, %d)", mx, my);
    TL_CHECK(!memcmp(px_at(&f, 60, 50), "\0\0\0", 3), "the box's centre was filled");
    TL_CHECK(frame_guard_ok(&f), "wrote outside the frame");
    free(f.mem);
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(test_masks_golden);
    TL_RUN(test_contours_golden);
    TL_RUN(test_obb_golden);
    TL_RUN(test_keypoints_golden);
    TL_RUN(test_top5_golden);
    TL_RUN(test_contours_random);
    TL_RUN(test_masks_random);
    TL_RUN(test_nms_rotated_random);
    TL_RUN(test_rboxes_random);
    TL_RUN(test_polygon_fill_random);
    TL_RUN(test_topk_random);
    TL_RUN(test_topk_golden);
    TL_RUN(test_recovered_golden);
    TL_RUN(test_scale_coords_random);
    TL_RUN(test_segment_values_random);
    TL_RUN(test_bad_shapes);
    TL_RUN(test_writers_summary);
    TL_RUN(test_draw_masks_golden);
    TL_RUN(test_draw_masks_random);
    TL_RUN(test_draw_keypoints);
    TL_RUN(test_draw_rotated_and_probs);
    TL_MAIN_END();
}
