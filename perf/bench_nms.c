/* bench_nms.c — per-kernel harness for strix_nms (llm.c dev/ style): synthetic
 * decoded heads of 8400 anchors x 80 classes (yolov8n at 640x640) with a
 * chosen number of candidates (anchors whose best score passes conf),
 * checked against a naive greedy NMS, then timed per image.
 *
 * Build and run (from the repo root, after `make`):
 *   make build/perf/bench_nms
 *   build/perf/bench_nms                              # candidates 0,10,100,1000,4000,8400
 *   build/perf/bench_nms --anchors 33600 --candidates 100,30000 --agnostic
 *
 * A head is [A, 4 + nc] fp32: cx, cy, w, h in input pixels, then nc scores.
 * Candidates gather around objects (one per 20 candidates): each is its
 * object's box jittered by up to 15% with the object's class scoring in
 * (conf, 1], so suppression does real work as on a real image; every other
 * score of the head lies below conf.  Several heads are cycled through so no
 * run finds its head in cache.  Exit status 1 if any check fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "postprocess.h"
#include "tools/exitcodes.h"
#include "bench_util.h"

#define MAX_LIST 16
#define HEADS 4           /* distinct heads cycled through */
#define CANDS_PER_OBJECT 20
#define INPUT_SIZE 640.0f /* boxes lie in a 640x640 input */

static float next_uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (float)((*s * 0x2545F4914F6CDD1DULL) >> 40) / 16777216.0f;
}

/* A head with exactly `cands` candidates at random anchors. */
static void make_head(float *head, size_t anchors, int nc, size_t cands, float conf, uint64_t *rng)
{
    size_t row = 4 + (size_t)nc;
    for (size_t a = 0; a < anchors; a++) {
        float *r = head + a * row;
        r[0] = next_uniform(rng) * INPUT_SIZE;
        r[1] = next_uniform(rng) * INPUT_SIZE;
        r[2] = 4 + next_uniform(rng) * 60;
        r[3] = 4 + next_uniform(rng) * 60;
        for (int c = 0; c < nc; c++) r[4 + c] = next_uniform(rng) * conf * 0.99f;
    }
    size_t objects = cands / CANDS_PER_OBJECT + 1;
    for (size_t i = 0; i < cands; i++) {
        /* candidates take anchors spread over the head (a stride coprime with it) */
        size_t a = (i * 7919) % anchors;
        uint64_t o = (uint64_t)(i % objects) * 0x9E3779B97F4A7C15ULL | 1; /* the object's own generator */
        float cx = 32 + next_uniform(&o) * (INPUT_SIZE - 64), cy = 32 + next_uniform(&o) * (INPUT_SIZE - 64);
        float w = 16 + next_uniform(&o) * 280, h = 16 + next_uniform(&o) * 280;
        int cls = (int)(next_uniform(&o) * (float)nc);
        float *r = head + a * row;
        r[0] = cx + (next_uniform(rng) - 0.5f) * 0.3f * w;
        r[1] = cy + (next_uniform(rng) - 0.5f) * 0.3f * h;
        r[2] = w * (0.85f + 0.3f * next_uniform(rng));
        r[3] = h * (0.85f + 0.3f * next_uniform(rng));
        r[4 + cls] = conf + (1.0f - conf) * (0.001f + 0.999f * next_uniform(rng));
    }
}

typedef struct ref_cand {
    float x1, y1, x2, y2, score;
    int cls, anchor;
} ref_cand;

static int by_score(const void *a, const void *b)
{
    const ref_cand *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

/* The definition, naively: best class > conf, score order (lower anchor
 * first on ties), drop a box whose IoU (in double) with a kept box exceeds
 * iou (the decimal as typed, as torchvision compares it), stop at max_det.
 * Class-aware NMS is Ultralytics' trick: boxes shifted by class * 7680 in
 * float32 (which rounds them, to 1/16 pixel for class 79) and one NMS over
 * all; the same shifted boxes are used here. */
#define MAX_WH 7680.0f
static int naive_nms(strix_detection *out, const float *head, size_t anchors, const strix_nms_params *p,
                     double iou, ref_cand *c)
{
    size_t row = 4 + (size_t)p->nc, n = 0;
    for (size_t a = 0; a < anchors; a++) {
        const float *r = head + a * row;
        int bi = 0;
        for (int j = 1; j < p->nc; j++)
            if (r[4 + j] > r[4 + bi]) bi = j;
        if (!(r[4 + bi] > p->conf)) continue;
        c[n++] = (ref_cand){r[0] - r[2] / 2, r[1] - r[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2, r[4 + bi], bi, (int)a};
    }
    qsort(c, n, sizeof *c, by_score);
    int k = 0;
    for (size_t i = 0; i < n && k < p->max_det; i++) {
        int keep = 1;
        float oi = p->agnostic ? 0.0f : (float)c[i].cls * MAX_WH;
        float bx1 = c[i].x1 + oi, by1 = c[i].y1 + oi, bx2 = c[i].x2 + oi, by2 = c[i].y2 + oi;
        for (int j = 0; j < k && keep; j++) {
            const strix_detection *d = &out[j];
            float oj = p->agnostic ? 0.0f : (float)d->class_id * MAX_WH;
            float dx1 = d->x1 + oj, dy1 = d->y1 + oj, dx2 = d->x2 + oj, dy2 = d->y2 + oj;
            double iw = fmin(dx2, bx2) - fmax(dx1, bx1), ih = fmin(dy2, by2) - fmax(dy1, by1);
            if (iw <= 0 || ih <= 0) continue;
            double inter = iw * ih;
            double uni = ((double)dx2 - dx1) * ((double)dy2 - dy1) + ((double)bx2 - bx1) * ((double)by2 - by1) - inter;
            keep = !(inter / uni > iou);
        }
        if (keep) out[k++] = (strix_detection){c[i].x1, c[i].y1, c[i].x2, c[i].y2, c[i].score, c[i].cls};
    }
    return k;
}

/* Same count, classes and scores; boxes equal to a few ulps (the library
 * offsets boxes by class before its IoU, which may round differently). */
static int same_dets(const strix_detection *a, int na, const strix_detection *b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; i++)
        if (a[i].class_id != b[i].class_id || a[i].score != b[i].score || fabsf(a[i].x1 - b[i].x1) > 1e-3f ||
            fabsf(a[i].y1 - b[i].y1) > 1e-3f || fabsf(a[i].x2 - b[i].x2) > 1e-3f || fabsf(a[i].y2 - b[i].y2) > 1e-3f)
            return 0;
    return 1;
}

static int parse_list(const char *s, long lo, long hi, long *out, int *n)
{
    *n = 0;
    char *end;
    for (const char *t = s; *t; t = *end ? end + 1 : end) {
        long x = strtol(t, &end, 10);
        if (end == t || x < lo || x > hi || *n == MAX_LIST || (*end != ',' && *end)) return 0;
        out[(*n)++] = x;
    }
    return *n > 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_nms [--anchors N] [--nc N] [--candidates LIST] [--runs N] [--agnostic]\n"
            "                 [--conf F] [--iou F] [--max-det N] [--seed N]\n"
            "  defaults: 8400 anchors, 80 classes, candidates 0,10,100,1000,4000,8400, 200 runs,\n"
            "            conf 0.25, iou 0.7, max_det 300 (Ultralytics' predict defaults)\n");
}

int main(int argc, char **argv)
{
    long anchors = 8400, nc = 80, runs = 200, max_det = 300;
    long cands[MAX_LIST] = {0, 10, 100, 1000, 4000, 8400};
    int n_cands = 6, agnostic = 0;
    float conf = 0.25f;
    double iou = 0.7;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        int n1 = 0, ok = 1;
        long one[MAX_LIST];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--agnostic")) {
            agnostic = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_nms: %s: needs a value (see --help)\n", a);
            return EXIT_USAGE;
        }
        i++;
        if (!strcmp(a, "--anchors")) ok = parse_list(v, 1, 10000000, one, &n1) && n1 == 1 && (anchors = one[0]);
        else if (!strcmp(a, "--nc")) ok = parse_list(v, 1, 100000, one, &n1) && n1 == 1 && (nc = one[0]);
        else if (!strcmp(a, "--runs")) ok = parse_list(v, 1, 10000000, one, &n1) && n1 == 1 && (runs = one[0]);
        else if (!strcmp(a, "--max-det")) ok = parse_list(v, 1, 100000, one, &n1) && n1 == 1 && (max_det = one[0]);
        else if (!strcmp(a, "--candidates")) ok = parse_list(v, 0, 10000000, cands, &n_cands);
        else if (!strcmp(a, "--conf")) ok = (conf = strtof(v, &end)) >= 0 && conf < 1 && !*end;
        else if (!strcmp(a, "--iou")) ok = (iou = strtod(v, &end)) >= 0 && iou <= 1 && !*end;
        else if (!strcmp(a, "--seed")) ok = (seed = strtoull(v, &end, 0), *v && !*end);
        else ok = 0;
        if (!ok) {
            fprintf(stderr, "bench_nms: %s %s: unknown option or bad value (see --help)\n", a, v);
            return EXIT_USAGE;
        }
    }
    for (int i = 0; i < n_cands; i++)
        if (cands[i] > anchors) {
            fprintf(stderr, "bench_nms: --candidates %ld exceeds --anchors %ld\n", cands[i], anchors);
            return EXIT_USAGE;
        }
    strix_nms_params p = {conf, (float)iou, (int)max_det, 30000, agnostic, (int)nc, NULL, 0, NULL, NULL,
                          NULL, NULL, NULL, 0};
    size_t row = 4 + (size_t)nc, head_floats = (size_t)anchors * row;
    float *heads = malloc(sizeof(float) * head_floats * HEADS);
    void *ws = malloc(strix_nms_workspace((size_t)anchors, &p));
    ref_cand *rc = malloc(sizeof *rc * (size_t)anchors);
    strix_detection *got = malloc(sizeof *got * (size_t)max_det), *want = malloc(sizeof *want * (size_t)max_det);
    double *t = malloc(sizeof(double) * (size_t)runs);
    if (!heads || !ws || !rc || !got || !want || !t) {
        fprintf(stderr, "bench_nms: out of memory for %d heads of %ld x %zu\n", HEADS, anchors, row);
        return EXIT_NOMEM;
    }
    printf("strix_nms: %ld anchors x %ld classes, conf %g, iou %g, max_det %ld, %s, median of %ld runs over %d heads\n",
           anchors, nc, conf, iou, max_det, agnostic ? "class-agnostic" : "class-aware", runs, HEADS);
    printf("%10s %8s %7s %10s %10s %12s\n", "candidates", "kept", "check", "median us", "p90 us", "images/s");
    uint64_t rng = seed * 0x9E3779B97F4A7C15ULL | 1;
    int failed = 0;
    for (int ci = 0; ci < n_cands; ci++) {
        for (int h = 0; h < HEADS; h++)
            make_head(heads + (size_t)h * head_floats, (size_t)anchors, (int)nc, (size_t)cands[ci], conf, &rng);
        int kept = 0, ok = 1;
        for (int h = 0; h < HEADS; h++) {
            const float *hd = heads + (size_t)h * head_floats;
            int k = strix_nms(got, hd, (size_t)anchors, &p, ws);
            int kr = naive_nms(want, hd, (size_t)anchors, &p, iou, rc);
            ok &= same_dets(got, k, want, kr);
            kept += k;
        }
        failed += !ok;
        for (long r = 0; r < runs; r++) {
            const float *hd = heads + (size_t)(r % HEADS) * head_floats;
            double t0 = now_s();
            strix_nms(got, hd, (size_t)anchors, &p, ws);
            t[r] = now_s() - t0;
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        double med = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
        double p90 = t[(size_t)ceil(0.9 * (double)runs) - 1];
        printf("%10ld %8.1f %7s %10.1f %10.1f %12.0f\n", cands[ci], (double)kept / HEADS, ok ? "ok" : "FAIL", med * 1e6,
               p90 * 1e6, 1.0 / med);
    }
    printf("%s: %d of %d candidate counts agree with the naive NMS\n", failed ? "FAIL" : "ok", n_cands - failed, n_cands);
    free(heads);
    free(ws);
    free(rc);
    free(got);
    free(want);
    free(t);
    return failed ? 1 : 0;
}
