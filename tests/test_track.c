/* test_track.c — the tracker (engine/analytics/track.c), its assignment solver
 * (engine/analytics/assign.c) and the per-track counting (engine/analytics/count.c).
 *
 * Reference: tests/golden/track/NAME.{jsonl,gt.txt,ref.txt}, six synthetic
 * detection streams with ground truth (objects that move, cross, get
 * occluded, miss detections, jitter, enter and leave, false positives) and
 * two camera clips (NAME.scene.txt: a textured world seen by a panning or
 * shaking camera, objects walking in it, drawn here byte for byte as the
 * reference drew them), with the identities Ultralytics 8.4.190's
 * BYTETracker, BOTSORT and BOTSORT without GMC gave every detection
 * (tools/reference/track_goldens.py), and NAME.ocsort.txt the identities and
 * boxes of its OCSORT (ocsort.yaml; identities also with use_byte, and with
 * other delta_t, inertia and fuse_score), which strix's OC-SORT must equal
 * exactly, NAME.fasttrack.txt, NAME.deepocsort.txt and NAME.tracktrack.txt
 * the same for its FASTTracker, DeepOCSORT and TRACKTRACK (defaults and
 * one other configuration each; DeepOCSORT's with sparseOptFlow GMC on the
 * camera clips, TRACKTRACK's both; boxes bit-equal, GMC or not).
 * strix's three configurations must
 * give the same identities (>= 99% of detections) and score within 0.01
 * of Ultralytics in MOTA and IDF1 with the project's evaluator
 * (engine/eval/moteval.c) against the ground truth; NAME.boxes.txt (six of
 * the streams) holds the box of each of BYTETracker's and BOTSORT's output
 * rows, which strix_tracker_box must equal.  NAME.obb.txt (obb_cross,
 * obb_crowd, obb_pan; tools/reference/track_obb_goldens.py): rotated boxes
 * through all six of Ultralytics' trackers, whose identities and xywhr
 * rows strix_tracker_update_obb and strix_tracker_box_xywhr must equal.
 * tests/golden/gmc/: OpenCV 5's grey of a real frame
 * (tools/reference/grey_golden.py).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assign.h"
#include "count.h"
#include "gmc_steps.h"
#include "jsonl.h"
#include "moteval.h"
#include "strix.h"
#include "testlib.h"

#define GOLDEN "tests/golden/track/"

/* ------------------------------------------------------------- assignment */

/* brute force: least total cost over all injective maps of the smaller side */
static double best_cost(const double *c, int rows, int cols)
{
    int n = rows < cols ? rows : cols, m = rows < cols ? cols : rows, perm[8], used[8] = {0};
    double best = INFINITY;
    /* depth-first over choices of the larger side for each element of the smaller */
    int depth = 0;
    perm[0] = -1;
    while (depth >= 0) {
        if (depth == n) {
            double s = 0;
            for (int k = 0; k < n; k++) s += rows <= cols ? c[k * cols + perm[k]] : c[perm[k] * cols + k];
            if (s < best) best = s;
            depth--;
            if (depth >= 0) used[perm[depth]] = 0;
            continue;
        }
        int next = perm[depth] + 1;
        while (next < m && used[next]) next++;
        if (next == m) {
            perm[depth] = -1;
            depth--;
            if (depth >= 0) used[perm[depth]] = 0;
            continue;
        }
        perm[depth] = next;
        used[next] = 1;
        depth++;
        if (depth < n) perm[depth] = -1;
    }
    return best;
}

static void assign_is_optimal(void)
{
    for (int trial = 0; trial < 400; trial++) {
        int rows = tl_int(1, 7), cols = tl_int(1, 7);
        double c[49];
        int integer = trial % 3 == 0; /* many ties */
        for (int i = 0; i < rows * cols; i++) c[i] = integer ? tl_int(0, 3) : tl_uniform(0, 1);
        int match[7];
        TL_CHECK(strix_assign(c, rows, cols, match) == 0, "strix_assign failed");
        double s = 0;
        int seen[7] = {0}, n = 0;
        for (int r = 0; r < rows; r++) {
            if (match[r] < 0) continue;
            TL_CHECK(match[r] < cols && !seen[match[r]], "trial %d: column %d assigned twice", trial, match[r]);
            seen[match[r]] = 1;
            s += c[r * cols + match[r]];
            n++;
        }
        TL_CHECK(n == (rows < cols ? rows : cols), "trial %d (%dx%d): %d pairs", trial, rows, cols, n);
        double b = best_cost(c, rows, cols);
        TL_CHECK(fabs(s - b) < 1e-9, "trial %d (%dx%d): cost %.12g, optimum %.12g", trial, rows, cols, s, b);
    }
}

static void assign_beats_greedy_at_a_crossing(void)
{
    /* greedy by lowest cost takes (0,0) at 0.1 and then must pay 0.9 for (1,1);
     * the optimum pairs crosswise for 0.2 + 0.2 */
    double c[4] = {0.1, 0.2, 0.2, 0.9};
    int m[2];
    TL_CHECK(strix_assign(c, 2, 2, m) == 0 && m[0] == 1 && m[1] == 0, "got %d %d, want 1 0", m[0], m[1]);
    double big = 1e300;
    double d[2] = {big, 1};
    TL_CHECK(strix_assign(d, 2, 1, m) == 0 && m[0] == -1 && m[1] == 0, "tall matrix: got %d %d", m[0], m[1]);
    double bad[1] = {NAN};
    TL_CHECK(strix_assign(bad, 1, 1, m) == -1, "a NaN cost must be refused");
}

/* --------------------------------------------------------------- goldens */

typedef struct stream {
    const char *name;
    int camera; /* frames drawn from NAME.scene.txt (BoT-SORT's GMC runs on them) */
    int boxes;  /* NAME.boxes.txt holds the reference's tracked boxes (not every stream: size) */
} stream;

static const stream streams[] = {{"cross", 0, 1},    {"occlusion", 0, 1}, {"crowd", 0, 0}, {"enter_exit", 0, 1},
                                 {"slow_fps", 0, 1}, {"burst", 0, 0},     {"pan", 1, 1},   {"shake", 1, 1}};

/* The tracked boxes must equal the reference's rows bit for bit (float32
 * both; the Kalman filter runs in double on both sides, in the same order
 * of operations), where BoT-SORT's GMC runs on frames too: its transforms
 * are OpenCV's to the bit (engine/analytics/gmc.c; they were up to 5.5e-6
 * px off, and boxes up to 0.0031 px, before its fit took OpenCV's
 * refinement step for step). */

/* The three configurations of NAME.ref.txt's columns. */
/* BOTSORT_GREY: BoT-SORT given each frame as its grey half-size image, made
 * in random bands (strix_track_grey, strix_tracker_update_grey): it must
 * give BOTSORT's identities exactly, so it is compared with Ultralytics'
 * BOTSORT column and with a frame-fed BoT-SORT run beside it. */
enum { BYTETRACK, BOTSORT, BOTSORT_NOGMC, N_REF, BOTSORT_GREY = N_REF, N_CONF };
static const char *const conf_name[N_CONF] = {"bytetrack", "botsort", "botsort gmc none", "botsort grey bands"};

/* frame's grey half-size image into grey through strix_track_grey, fed
 * top down in bands of random heights, odd ones too (the rows a decoder
 * would have written by each call); 0, or -1 (test failed). */
static int grey_in_bands(const strix_image *frame, strix_grey_rounding kind, uint8_t *grey)
{
    int h = frame->height, done = 0;
    strix_error e;
    for (int y1 = 0; y1 < h;) {
        int step = tl_int(1, 40);
        y1 = y1 + step < h ? y1 + step : h;
        if (strix_track_grey(frame, &done, y1, grey, kind, &e)) {
            tl_fail("strix_track_grey up to row %d of %dx%d: %s", y1, frame->width, h, e.message);
            return -1;
        }
    }
    if (done != h) tl_fail("strix_track_grey: %d of %d rows made", done, h);
    return done == h ? 0 : -1;
}

/* The frame of a camera clip: the texture hash of tools/reference/track_goldens.py
 * (8x8 cells, unsigned 32-bit), then the objects of the scene line; RGB. */
static int draw_scene(FILE *scene, long frame, uint8_t *rgb, int w, int h)
{
    long f;
    int cx, cy, k;
    if (fscanf(scene, "%ld %d %d %d", &f, &cx, &cy, &k) != 4 || f != frame) return -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t X = (uint32_t)((cx + x) / 8), Y = (uint32_t)((cy + y) / 8); /* cameras stay at >= 0 */
            uint32_t v = (X * 73856093u) ^ (Y * 19349663u);
            v ^= v >> 13;
            v *= 0x5BD1E995u;
            v ^= v >> 15;
            uint8_t *p = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
            p[0] = (uint8_t)v;
            p[1] = (uint8_t)(v >> 8);
            p[2] = (uint8_t)(v >> 16);
        }
    for (int i = 0; i < k; i++) {
        int x1, y1, x2, y2, c[3];
        if (fscanf(scene, "%d %d %d %d %d %d %d", &x1, &y1, &x2, &y2, &c[0], &c[1], &c[2]) != 7 || x1 < 0 ||
            y1 < 0 || x2 > w || y2 > h)
            return -1;
        for (int y = y1; y < y2; y++)
            for (int x = x1; x < x2; x++)
                for (int ch = 0; ch < 3; ch++) rgb[3 * ((size_t)y * (size_t)w + (size_t)x) + ch] = (uint8_t)c[ch];
    }
    return 0;
}

/* MOT rows of one tracker's identities, grown as needed; -1 on OOM. */
static int add_row(strix_mot_box **v, long *n, long *cap, long frame, int id, const strix_detection *d)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        strix_mot_box *g = realloc(*v, sizeof *g * (size_t)*cap);
        if (!g) return -1;
        *v = g;
    }
    (*v)[(*n)++] = (strix_mot_box){(int)frame + 1, id, d->x1, d->y1, d->x2 - d->x1, d->y2 - d->y1, d->score};
    return 0;
}

typedef struct result {
    long compared, differ;
    long boxes, box_exact, box_bad; /* tracked boxes compared, bit-equal, further apart than allowed */
    float box_max;                  /* the largest difference */
    strix_mot_metrics strix, ref; /* each against the ground truth */
} result;

/* The reference's box of detection k of frame fr for column col (BYTETRACK
 * or BOTSORT) from NAME.boxes.txt (its lines in detection order, only the
 * tracked ones): 1 with b, 0 when it returned none; -1 on a bad file.
 * *next holds the file's next line (frame -1 once at its end). */
static int ref_box(FILE *f, long *next, int *next_k, char *line, size_t cap, long fr, int k, int col, float b[4])
{
    if (*next < 0 || *next != fr || *next_k != k) return *next >= 0 && (*next < fr || (*next == fr && *next_k < k)) ? -1 : 0;
    char tok[8][32];
    if (sscanf(line, "%*d %*d %31s %31s %31s %31s %31s %31s %31s %31s", tok[0], tok[1], tok[2], tok[3], tok[4],
               tok[5], tok[6], tok[7]) != 8)
        return -1;
    int o = col == BYTETRACK ? 0 : 4, have = strcmp(tok[o], "-") != 0;
    for (int i = 0; i < 4 && have; i++) b[i] = strtof(tok[o + i], NULL);
    if (!fgets(line, (int)cap, f) || sscanf(line, "%ld %d", next, next_k) != 2) *next = -1;
    return have;
}

/* Run strix's tracker in configuration c over a golden stream and compare
 * its identities with Ultralytics' (column c of NAME.ref.txt), and, where
 * the stream has NAME.boxes.txt, its tracked boxes (strix_tracker_box) with
 * the reference's; both are scored against the ground truth.  Returns 0,
 * or -1 (test failed). */
static int run_stream(const stream *s, int c, result *r)
{
    char path[256];
    snprintf(path, sizeof path, GOLDEN "%s.jsonl", s->name);
    strix_jsonl_reader *rd = NULL;
    strix_error e;
    memset(r, 0, sizeof *r);
    if (strix_jsonl_open(&rd, path, &e)) {
        tl_fail("%s", e.message);
        return -1;
    }
    snprintf(path, sizeof path, GOLDEN "%s.ref.txt", s->name);
    FILE *ref = fopen(path, "r"), *scene = NULL, *boxes = NULL;
    const int col = c == BOTSORT_GREY ? BOTSORT : c; /* its column of NAME.ref.txt */
    char bline[512];
    long bnext = -1;
    int bnext_k = -1;
    if (s->boxes && col != BOTSORT_NOGMC) {
        snprintf(path, sizeof path, GOLDEN "%s.boxes.txt", s->name);
        if (!(boxes = fopen(path, "r"))) {
            tl_fail("%s: cannot open it", path);
            fclose(ref);
            strix_jsonl_close(rd);
            return -1;
        }
        if (fgets(bline, sizeof bline, boxes) && sscanf(bline, "%ld %d", &bnext, &bnext_k) != 2) bnext = -1;
    }
    if (s->camera) {
        snprintf(path, sizeof path, GOLDEN "%s.scene.txt", s->name);
        scene = fopen(path, "r");
    }
    strix_track_options o;
    strix_track_options_init(&o, c == BYTETRACK ? STRIX_TRACKER_BYTETRACK : STRIX_TRACKER_BOTSORT);
    if (c == BOTSORT_NOGMC) o.gmc_method = STRIX_GMC_NONE;
    strix_tracker *t = NULL, *t2 = NULL;             /* t2: BOTSORT_GREY's frame-fed twin */
    int *ids2 = NULL;
    uint8_t *grey = NULL;
    strix_mot_box *hyp = NULL, *rhyp = NULL, *gt = NULL;
    long n_hyp = 0, n_rhyp = 0, cap = 0, rcap = 0, n_gt = 0;
    int *ids = NULL, ids_cap = 0, rc = -1, w = 0, h = 0;
    uint8_t *rgb = NULL;
    char line[512];
    if (!ref || (s->camera && !scene) || strix_tracker_create(&t, &o, &e) ||
        (c == BOTSORT_GREY && strix_tracker_create(&t2, &o, &e))) {
        tl_fail("%s: %s", s->name, ref && (scene || !s->camera) ? e.message : "cannot open a golden file");
        goto out;
    }
    if (!fgets(line, sizeof line, ref) || line[0] != '#') { /* the header names the reference */
        tl_fail("%s: no header", path);
        goto out;
    }
    if (scene && (fscanf(scene, "# %d x %d", &w, &h) != 2 || w < 16 || h < 16 ||
                  !(rgb = malloc((size_t)w * (size_t)h * 3)) || !(grey = malloc((size_t)(w / 2) * (size_t)(h / 2))))) {
        tl_fail("%s: bad scene header", s->name);
        goto out;
    }
    strix_jsonl_record rec;
    int got;
    while ((got = strix_jsonl_next(rd, &rec, &e)) > 0) {
        if (rec.n > ids_cap) {
            ids_cap = 2 * rec.n;
            int *v = realloc(ids, sizeof *v * (size_t)ids_cap), *v2 = v ? realloc(ids2, sizeof *v2 * (size_t)ids_cap) : NULL;
            if (v) ids = v;
            if (v2) ids2 = v2;
            if (!v || !v2) {
                tl_fail("out of memory");
                goto out;
            }
        }
        strix_image img = {.data = rgb, .width = w, .height = h, .format = STRIX_RGB};
        if (scene && draw_scene(scene, rec.frame, rgb, w, h)) {
            tl_fail("%s: scene out of step at frame %ld", s->name, rec.frame);
            goto out;
        }
        if (c == BOTSORT_GREY && scene) {
            if (grey_in_bands(&img, STRIX_GREY_OPENCV5, grey)) goto out;
            if (strix_tracker_update_grey(t, grey, w, h, rec.dets, rec.n, ids, &e) ||
                strix_tracker_update(t2, &img, rec.dets, rec.n, ids2, &e)) {
                tl_fail("%s frame %ld: %s", s->name, rec.frame, e.message);
                goto out;
            }
            if (memcmp(ids, ids2, sizeof *ids * (size_t)rec.n)) {
                tl_fail("%s frame %ld: the grey-fed BoT-SORT's identities differ from the frame-fed one's", s->name,
                        rec.frame);
                goto out;
            }
        } else if (strix_tracker_update(t, scene ? &img : NULL, rec.dets, rec.n, ids, &e)) {
            tl_fail("%s frame %ld: %s", s->name, rec.frame, e.message);
            goto out;
        }
        for (int i = 0; i < rec.n; i++) {
            long fr;
            int k, want[N_REF];
            if (fscanf(ref, "%ld %d %d %d %d", &fr, &k, &want[0], &want[1], &want[2]) != 5 || fr != rec.frame ||
                k != i) {
                tl_fail("%s: reference out of step at frame %ld detection %d", s->name, rec.frame, i);
                goto out;
            }
            if (ids[i] != want[col] && r->differ++ < 3)
                printf("  %s %s frame %ld detection %d (score %.3f): identity %d, Ultralytics %d\n", s->name,
                       conf_name[c], rec.frame, i, (double)rec.dets[i].score, ids[i], want[col]);
            r->compared++;
            float rb[4], sb[4];
            int has_ref = boxes ? ref_box(boxes, &bnext, &bnext_k, bline, sizeof bline, rec.frame, i, col, rb) : 0;
            int has = strix_tracker_box(t, i, sb);
            if (has_ref < 0) {
                tl_fail("%s.boxes.txt: out of step at frame %ld detection %d", s->name, rec.frame, i);
                goto out;
            }
            if (has != (ids[i] >= 0)) {
                tl_fail("%s frame %ld detection %d: identity %d but strix_tracker_box says %d", s->name, rec.frame, i,
                        ids[i], has);
                goto out;
            }
            if (has && has_ref && ids[i] == want[col]) {
                float d = 0;
                for (int q = 0; q < 4; q++) d = fabsf(sb[q] - rb[q]) > d ? fabsf(sb[q] - rb[q]) : d;
                int exact = !memcmp(sb, rb, sizeof sb);
                r->boxes++;
                r->box_exact += exact;
                r->box_max = d > r->box_max ? d : r->box_max;
                if (!exact && r->box_bad++ < 3)
                    printf("  %s %s frame %ld detection %d: box %.9g %.9g %.9g %.9g, Ultralytics %.9g %.9g %.9g %.9g\n",
                           s->name, conf_name[c], rec.frame, i, (double)sb[0], (double)sb[1], (double)sb[2],
                           (double)sb[3], (double)rb[0], (double)rb[1], (double)rb[2], (double)rb[3]);
            }
            if ((ids[i] >= 0 && add_row(&hyp, &n_hyp, &cap, rec.frame, ids[i], &rec.dets[i])) ||
                (want[col] >= 0 && add_row(&rhyp, &n_rhyp, &rcap, rec.frame, want[col], &rec.dets[i]))) {
                tl_fail("out of memory");
                goto out;
            }
        }
    }
    if (got < 0) {
        tl_fail("%s", e.message);
        goto out;
    }
    snprintf(path, sizeof path, GOLDEN "%s.gt.txt", s->name);
    if (strix_mot_read(path, &gt, &n_gt, &e) || strix_mot_evaluate(gt, n_gt, hyp, n_hyp, 0.5, &r->strix, &e) ||
        strix_mot_evaluate(gt, n_gt, rhyp, n_rhyp, 0.5, &r->ref, &e)) {
        tl_fail("%s", e.message);
        goto out;
    }
    rc = 0;
out:
    if (ref) fclose(ref);
    if (boxes) fclose(boxes);
    if (scene) fclose(scene);
    strix_jsonl_close(rd);
    strix_tracker_free(t);
    strix_tracker_free(t2);
    free(ids);
    free(ids2);
    free(grey);
    free(rgb);
    free(hyp);
    free(rhyp);
    free(gt);
    return rc;
}

/* Every stream in every configuration: identities equal to Ultralytics' on
 * >= 99% of the detections, MOTA and IDF1 (engine/eval/moteval.c, against
 * the ground truth) within 0.01 of Ultralytics', and the tracked boxes of
 * the streams with NAME.boxes.txt bit-equal to Ultralytics' where the
 * identities agree. */
static void matches_ultralytics(void)
{
    for (int c = 0; c < N_CONF; c++) {
        long total = 0, differ = 0, boxes = 0, exact = 0;
        float box_max = 0;
        for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
            const stream *s = &streams[i];
            result r;
            if (run_stream(s, c, &r)) return;
            TL_CHECK(r.compared > 50, "%s: only %ld detections compared", s->name, r.compared);
            printf("  %-16s %-10s %5ld detections, %ld differ; MOTA %.3f (Ultralytics %.3f) IDF1 %.3f (%.3f) "
                   "idsw %ld (%ld)",
                   conf_name[c], s->name, r.compared, r.differ, r.strix.mota, r.ref.mota, r.strix.idf1, r.ref.idf1,
                   r.strix.idsw, r.ref.idsw);
            if (r.boxes) printf("; boxes %ld, %ld bit-equal, max %g px off", r.boxes, r.box_exact, (double)r.box_max);
            printf("\n");
            if (r.differ > r.compared / 100)
                tl_fail("%s %s: %ld of %ld identities differ from Ultralytics' (more than 1%%)", conf_name[c], s->name,
                        r.differ, r.compared);
            if (!(fabs(r.strix.mota - r.ref.mota) <= 0.01 && fabs(r.strix.idf1 - r.ref.idf1) <= 0.01))
                tl_fail("%s %s: MOTA %.4f IDF1 %.4f, Ultralytics %.4f %.4f (more than 0.01 apart)", conf_name[c],
                        s->name, r.strix.mota, r.strix.idf1, r.ref.mota, r.ref.idf1);
            if (r.box_bad)
                tl_fail("%s %s: %ld of %ld tracked boxes differ from Ultralytics' (up to %g px; allowed: none)",
                        conf_name[c], s->name, r.box_bad, r.boxes, (double)r.box_max);
            if (s->boxes && c != BOTSORT_NOGMC && r.boxes < 50)
                tl_fail("%s %s: only %ld tracked boxes compared", conf_name[c], s->name, r.boxes);
            total += r.compared;
            differ += r.differ;
            boxes += r.boxes;
            exact += r.box_exact;
            box_max = r.box_max > box_max ? r.box_max : box_max;
        }
        printf("  %s: %ld detections, %ld identities differ from Ultralytics'", conf_name[c], total, differ);
        if (boxes) printf("; %ld tracked boxes, %ld bit-equal to Ultralytics', the rest at most %g px off", boxes, exact,
                          (double)box_max);
        printf("\n");
    }
}

/* The goldens of one tracker each, NAME.KIND.txt: per detection "frame
 * index" then the identity of each configuration (the column's), then
 * the defaults' tracked box ("- - - -": none), and where alt_box >= 0 the
 * tracked box of that configuration. */
typedef struct golden {
    const char *kind;                  /* ocsort, fasttrack, deepocsort, tracktrack */
    strix_tracker_type type;
    int cols;
    const char *name[3];               /* of each column's configuration */
    void (*configure)(strix_track_options *o, int col); /* column col's changes to the defaults */
    int frames;                        /* bit c: column c is given the camera clips' frames (GMC) */
    int alt_box;                       /* the column whose boxes follow the defaults' (-1: none) */
} golden;

/* NAME.ocsort.txt: ocsort.yaml's defaults, with use_byte: True, with
 * delta_t: 1, inertia: 0.5, fuse_score: False. */
static void ocsort_columns(strix_track_options *o, int col)
{
    o->use_byte = col == 1;
    if (col == 2) {
        o->delta_t = 1;
        o->inertia = 0.5f;
        o->fuse_score = 0;
    }
}

/* NAME.fasttrack.txt: fasttrack.yaml's defaults, and track_goldens.py's FASTTRACK_ALT. */
static void fasttrack_columns(strix_track_options *o, int col)
{
    if (col != 1) return;
    o->occ_cover_thresh = 0.5f;
    o->init_iou_suppress = 0.5f;
    o->reset_velocity_offset_occ = 2;
    o->reset_pos_offset_occ = 1;
    o->enlarge_bbox_occ = 1.3;
    o->dampen_motion_occ = 0.8;
    o->active_occ_to_lost_thresh = 4;
    o->occ_reappear_window = 10;
    o->track_buffer = 5;
}

/* NAME.deepocsort.txt: deepocsort.yaml's defaults, and track_goldens.py's
 * DEEPOCSORT_ALT (sparseOptFlow on the camera clips' frames, use_byte). */
static void deepocsort_columns(strix_track_options *o, int col)
{
    if (col != 1) return;
    o->gmc_method = STRIX_GMC_SPARSE_OPTFLOW;
    o->use_byte = 1;
}

/* NAME.tracktrack.txt: tracktrack.yaml's defaults, and with lost_match_thr
 * 0.9, min_track_len 1, reduce_step 0.1, penalty_p 0.3, tai_thr 0.4. */
static void tracktrack_columns(strix_track_options *o, int col)
{
    if (col != 1) return;
    o->lost_match_thr = 0.9f;
    o->min_track_len = 1;
    o->reduce_step = 0.1f;
    o->penalty_p = 0.3f;
    o->tai_thr = 0.4f;
}

static const golden goldens[] = {
    {"ocsort", STRIX_TRACKER_OCSORT, 3, {"ocsort", "ocsort use_byte", "ocsort delta_t 1 inertia 0.5 no fuse"},
     ocsort_columns, 0, -1},
    {"fasttrack", STRIX_TRACKER_FASTTRACK, 2, {"fasttrack", "fasttrack occlusion knobs"}, fasttrack_columns, 0, -1},
    {"deepocsort", STRIX_TRACKER_DEEPOCSORT, 2, {"deepocsort", "deepocsort sparseOptFlow use_byte"},
     deepocsort_columns, 1 << 1, 1},
    {"tracktrack", STRIX_TRACKER_TRACKTRACK, 2, {"tracktrack", "tracktrack alt"}, tracktrack_columns, 3, -1},
};

/* strix's tracker g over a golden stream in configuration c (a column):
 * the detections compared, those whose identity differs from
 * Ultralytics', and where the golden holds the column's boxes the tracked
 * boxes compared and those not bit-equal to its rows' (the state is
 * Kalman's in double and the rest float32 on both sides, in the same order
 * of operations; camera motion estimated or not), *box_max the largest
 * difference.  0, or -1 (test failed). */
static int run_golden(const golden *g, const stream *s, int c, long *compared, long *differ, long *boxes,
                      long *box_bad, float *box_max)
{
    char path[256], line[512];
    snprintf(path, sizeof path, GOLDEN "%s.jsonl", s->name);
    strix_jsonl_reader *rd = NULL;
    strix_error e;
    *compared = *differ = *boxes = *box_bad = 0;
    *box_max = 0;
    if (strix_jsonl_open(&rd, path, &e)) {
        tl_fail("%s", e.message);
        return -1;
    }
    FILE *scene = NULL;
    uint8_t *rgb = NULL;
    int w = 0, h = 0;
    if (s->camera && (g->frames >> c & 1)) {
        snprintf(path, sizeof path, GOLDEN "%s.scene.txt", s->name);
        if (!(scene = fopen(path, "r")) || fscanf(scene, "# %d x %d", &w, &h) != 2 || w < 16 || h < 16 ||
            !(rgb = malloc((size_t)w * (size_t)h * 3))) {
            tl_fail("%s: cannot open it, bad header or out of memory", path);
            if (scene) fclose(scene);
            strix_jsonl_close(rd);
            return -1;
        }
    }
    snprintf(path, sizeof path, GOLDEN "%s.%s.txt", s->name, g->kind);
    FILE *ref = fopen(path, "r");
    strix_track_options o;
    strix_track_options_init(&o, g->type);
    g->configure(&o, c);
    strix_tracker *t = NULL;
    int *ids = NULL, ids_cap = 0, rc = -1, got;
    if (!ref || strix_tracker_create(&t, &o, &e) || !fgets(line, sizeof line, ref) || line[0] != '#') {
        tl_fail("%s: %s", path, ref ? "no tracker or no header" : "cannot open it");
        goto out;
    }
    strix_jsonl_record rec;
    while ((got = strix_jsonl_next(rd, &rec, &e)) > 0) {
        if (rec.n > ids_cap) {
            int *v = realloc(ids, sizeof *v * (size_t)(2 * rec.n));
            if (!v) {
                tl_fail("out of memory");
                goto out;
            }
            ids = v;
            ids_cap = 2 * rec.n;
        }
        strix_image img = {.data = rgb, .width = w, .height = h, .format = STRIX_RGB};
        if (scene && draw_scene(scene, rec.frame, rgb, w, h)) {
            tl_fail("%s: scene out of step at frame %ld", s->name, rec.frame);
            goto out;
        }
        if (strix_tracker_update(t, scene ? &img : NULL, rec.dets, rec.n, ids, &e)) {
            tl_fail("%s frame %ld: %s", s->name, rec.frame, e.message);
            goto out;
        }
        for (int i = 0; i < rec.n; i++) {
            long fr = -1;
            int k = -1, want = 0, n = 0;
            char tok[8][32];
            int ok = fgets(line, sizeof line, ref) && sscanf(line, "%ld %d%n", &fr, &k, &n) == 2;
            const char *p = line + n;
            for (int q = 0; q < g->cols && ok; q++) {
                int v;
                ok = sscanf(p, "%d%n", &v, &n) == 1;
                p += n;
                if (q == c) want = v;
            }
            const int ntok = g->alt_box >= 0 ? 8 : 4;
            if (!ok ||
                sscanf(p, "%31s %31s %31s %31s %31s %31s %31s %31s", tok[0], tok[1], tok[2], tok[3], tok[4], tok[5],
                       tok[6], tok[7]) != ntok ||
                fr != rec.frame || k != i) {
                tl_fail("%s: out of step at frame %ld detection %d", path, rec.frame, i);
                goto out;
            }
            if (ids[i] != want && (*differ)++ < 3)
                printf("  %s %s frame %ld detection %d (score %.3f): identity %d, Ultralytics %d\n", s->name,
                       g->name[c], rec.frame, i, (double)rec.dets[i].score, ids[i], want);
            (*compared)++;
            float sb[4], rb[4];
            int has = strix_tracker_box(t, i, sb);
            if (has != (ids[i] >= 0)) {
                tl_fail("%s frame %ld detection %d: identity %d but strix_tracker_box says %d", s->name, rec.frame, i,
                        ids[i], has);
                goto out;
            }
            const int bo = c ? 4 : 0; /* the column's box */
            if ((c && c != g->alt_box) || !has || ids[i] != want || !strcmp(tok[bo], "-")) continue;
            float far = 0;
            for (int q = 0; q < 4; q++) {
                rb[q] = strtof(tok[bo + q], NULL);
                far = fmaxf(far, fabsf(sb[q] - rb[q]));
            }
            (*boxes)++;
            *box_max = fmaxf(*box_max, far);
            if (memcmp(sb, rb, sizeof sb) != 0 && (*box_bad)++ < 3)
                printf("  %s %s frame %ld detection %d: box %.9g %.9g %.9g %.9g, Ultralytics %.9g %.9g %.9g %.9g\n",
                       s->name, g->name[c], rec.frame, i, (double)sb[0], (double)sb[1], (double)sb[2], (double)sb[3],
                       (double)rb[0], (double)rb[1], (double)rb[2], (double)rb[3]);
        }
    }
    if (got < 0) {
        tl_fail("%s", e.message);
        goto out;
    }
    rc = 0;
out:
    if (ref) fclose(ref);
    if (scene) fclose(scene);
    free(rgb);
    strix_jsonl_close(rd);
    strix_tracker_free(t);
    free(ids);
    return rc;
}

/* Tracker g on every stream in every configuration of its goldens: every
 * identity equal to Ultralytics', and every tracked box the golden holds
 * bit-equal to its rows' (camera motion estimated on frames or not). */
static void golden_matches_ultralytics(const golden *g)
{
    for (int c = 0; c < g->cols; c++) {
        const int has_boxes = !c || c == g->alt_box;
        long total = 0, differ = 0, boxes = 0, bad_boxes = 0;
        float most = 0;
        for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
            const stream *s = &streams[i];
            long n, d, b, bad;
            float far;
            if (run_golden(g, s, c, &n, &d, &b, &bad, &far)) return;
            printf("  %-36s %-10s %5ld detections, %ld differ", g->name[c], s->name, n, d);
            if (has_boxes) printf("; boxes %ld, %ld off, at most %g px apart", b, bad, (double)far);
            printf("\n");
            if (d) tl_fail("%s %s: %ld of %ld identities differ from Ultralytics'", g->name[c], s->name, d, n);
            if (bad) tl_fail("%s %s: %ld of %ld tracked boxes differ from Ultralytics'", g->name[c], s->name, bad, b);
            if (has_boxes && b < 50) tl_fail("%s %s: only %ld tracked boxes compared", g->name[c], s->name, b);
            total += n;
            differ += d;
            boxes += b;
            bad_boxes += bad;
            most = fmaxf(most, far);
        }
        printf("  %s: %ld detections, %ld identities differ from Ultralytics'", g->name[c], total, differ);
        if (has_boxes)
            printf("; %ld tracked boxes, %ld not bit-equal, at most %g px apart", boxes, bad_boxes, (double)most);
        printf("\n");
    }
}

static void ocsort_matches_ultralytics(void) { golden_matches_ultralytics(&goldens[0]); }
static void fasttrack_matches_ultralytics(void) { golden_matches_ultralytics(&goldens[1]); }
static void deepocsort_matches_ultralytics(void) { golden_matches_ultralytics(&goldens[2]); }
static void tracktrack_matches_ultralytics(void) { golden_matches_ultralytics(&goldens[3]); }

/* ------------------------------------------------------- oriented boxes */

/* tests/golden/track/NAME.obb.txt (tools/reference/track_obb_goldens.py):
 * rotated boxes through Ultralytics' six trackers; per column its tracker,
 * its options (a golden's configure and column) and whether it read the
 * frames (GMC). */
typedef struct obb_column {
    const char *name;
    strix_tracker_type type;
    void (*configure)(strix_track_options *o, int col);
    int col, frames;
} obb_column;

static void no_columns(strix_track_options *o, int col) { (void)o, (void)col; }

static const obb_column obb_columns[] = {
    {"bytetrack", STRIX_TRACKER_BYTETRACK, no_columns, 0, 0},
    {"botsort", STRIX_TRACKER_BOTSORT, no_columns, 0, 1},
    {"ocsort", STRIX_TRACKER_OCSORT, ocsort_columns, 0, 0},
    {"deepocsort", STRIX_TRACKER_DEEPOCSORT, deepocsort_columns, 0, 0},
    {"deepocsort_gmc", STRIX_TRACKER_DEEPOCSORT, deepocsort_columns, 1, 1},
    {"fasttrack", STRIX_TRACKER_FASTTRACK, fasttrack_columns, 0, 0},
    {"tracktrack", STRIX_TRACKER_TRACKTRACK, tracktrack_columns, 0, 1},
};
#define OBB_COLS (int)(sizeof obb_columns / sizeof obb_columns[0])

typedef struct obb_row {
    long frame;
    int index; /* in its frame */
    float box[5], score;
    int id[OBB_COLS];
    float ref[OBB_COLS][5]; /* the row's x y w h r (NaN: none) */
} obb_row;

/* The rows of NAME.obb.txt (*n of them, malloc'd), or NULL (test failed). */
static obb_row *obb_read(const char *name, long *n)
{
    char path[256], line[2048];
    snprintf(path, sizeof path, GOLDEN "%s.obb.txt", name);
    FILE *f = fopen(path, "r");
    obb_row *v = NULL;
    long cap = 0;
    *n = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            obb_row *g = realloc(v, sizeof *g * (size_t)cap);
            if (!g) break;
            v = g;
        }
        obb_row *r = &v[*n];
        int used;
        char *p = line;
        if (sscanf(p, "%ld %d %f %f %f %f %f %f%n", &r->frame, &r->index, &r->box[0], &r->box[1], &r->box[2], &r->box[3],
                   &r->box[4], &r->score, &used) != 8)
            break;
        p += used;
        int ok = 1;
        for (int c = 0; c < OBB_COLS && ok; c++) {
            char tok[5][32];
            ok = sscanf(p, "%d %31s %31s %31s %31s %31s%n", &r->id[c], tok[0], tok[1], tok[2], tok[3], tok[4],
                        &used) == 6;
            p += used;
            for (int q = 0; q < 5; q++) r->ref[c][q] = strcmp(tok[q], "-") ? strtof(tok[q], NULL) : NAN;
        }
        if (!ok) break;
        (*n)++;
    }
    int bad = !f || !feof(f);
    if (f) fclose(f);
    if (bad || !*n) {
        tl_fail("%s: cannot open it, a bad line, or out of memory", path);
        free(v);
        return NULL;
    }
    return v;
}

/* Column c of stream name (camera: its frames are pan.scene.txt's): strix's
 * identities and rotated boxes (strix_tracker_box_xywhr) against
 * Ultralytics' rows: identities equal, boxes bit-equal (camera motion
 * estimated or not).  0, or -1. */
static int obb_column_run(const char *name, int camera, const obb_row *rows, long n, int c)
{
    const obb_column *col = &obb_columns[c];
    strix_track_options o;
    strix_track_options_init(&o, col->type);
    col->configure(&o, col->col);
    strix_tracker *t = NULL;
    strix_error e;
    FILE *scene = NULL;
    uint8_t *rgb = NULL;
    int w = 0, h = 0, rc = -1;
    strix_detection *d = malloc(sizeof *d * (size_t)n);
    float *xywhr = malloc(sizeof *xywhr * 5 * (size_t)n);
    int *ids = malloc(sizeof *ids * (size_t)n);
    if (camera && col->frames) {
        scene = fopen(GOLDEN "pan.scene.txt", "r");
        if (!scene || fscanf(scene, "# %d x %d", &w, &h) != 2 || w < 16 || h < 16 ||
            !(rgb = malloc((size_t)w * (size_t)h * 3))) {
            tl_fail("pan.scene.txt: cannot open it, bad header or out of memory");
            goto out;
        }
    }
    if (!d || !xywhr || !ids || strix_tracker_create(&t, &o, &e)) {
        tl_fail("out of memory");
        goto out;
    }
    long differ = 0, boxes = 0, off = 0;
    float far = 0;
    for (long i = 0, f = 0; i < n; f++) {
        long j = i;
        if (rows[i].frame < f) {
            tl_fail("%s.obb.txt: frame %ld out of order", name, rows[i].frame);
            goto out;
        }
        for (; j < n && rows[j].frame == f; j++) {
            if (rows[j].index != j - i) {
                tl_fail("%s.obb.txt: frame %ld detection %d out of step", name, f, rows[j].index);
                goto out;
            }
            memset(&d[j - i], 0, sizeof *d);
            d[j - i].score = rows[j].score;
            memcpy(xywhr + 5 * (j - i), rows[j].box, sizeof rows[j].box);
        }
        strix_image img = {.data = rgb, .width = w, .height = h, .format = STRIX_RGB};
        if (scene && draw_scene(scene, f, rgb, w, h)) {
            tl_fail("%s: scene out of step at frame %ld", name, f);
            goto out;
        }
        if (strix_tracker_update_obb(t, scene ? &img : NULL, NULL, 0, 0, d, xywhr, (int)(j - i), ids, &e)) {
            tl_fail("%s frame %ld: %s", name, f, e.message);
            goto out;
        }
        for (long k = i; k < j; k++) {
            const obb_row *r = &rows[k];
            int got = ids[k - i];
            float sb[5], xyxy[4];
            if (got != r->id[c] && differ++ < 3)
                printf("  %s %s frame %ld detection %ld: identity %d, Ultralytics %d\n", name, col->name, f, k - i,
                       got, r->id[c]);
            int has = strix_tracker_box_xywhr(t, (int)(k - i), sb);
            if (has != (got >= 0) || has != strix_tracker_box(t, (int)(k - i), xyxy) || has == isnan(r->ref[c][0])) {
                if (got == r->id[c])
                    tl_fail("%s %s frame %ld detection %ld: identity %d, a box %d (Ultralytics' %s)", name, col->name,
                            f, k - i, got, has, isnan(r->ref[c][0]) ? "none" : "one");
                continue;
            }
            if (!has) continue;
            float apart = 0;
            for (int q = 0; q < 4; q++) apart = fmaxf(apart, fabsf(sb[q] - r->ref[c][q]));
            boxes++;
            far = fmaxf(far, apart);
            int bad = memcmp(sb, r->ref[c], sizeof sb) != 0;
            if (bad && off++ < 3)
                printf("  %s %s frame %ld detection %ld: box %.9g %.9g %.9g %.9g %.9g, Ultralytics %.9g %.9g %.9g "
                       "%.9g %.9g\n", name, col->name, f, k - i, (double)sb[0], (double)sb[1], (double)sb[2],
                       (double)sb[3], (double)sb[4], (double)r->ref[c][0], (double)r->ref[c][1],
                       (double)r->ref[c][2], (double)r->ref[c][3], (double)r->ref[c][4]);
        }
        i = j;
    }
    printf("  %-14s %-9s %5ld detections, %ld identities differ; %ld boxes, %ld off, at most %g px apart\n",
           col->name, name, n, differ, boxes, off, (double)far);
    if (differ) tl_fail("%s %s: %ld of %ld identities differ from Ultralytics'", col->name, name, differ, n);
    if (off) tl_fail("%s %s: %ld of %ld tracked boxes differ from Ultralytics'", col->name, name, off, boxes);
    if (boxes < 50) tl_fail("%s %s: only %ld tracked boxes compared", col->name, name, boxes);
    rc = 0;
out:
    if (scene) fclose(scene);
    free(rgb);
    free(d);
    free(xywhr);
    free(ids);
    strix_tracker_free(t);
    return rc;
}

/* Every tracker on oriented boxes (strix_tracker_update_obb): identities
 * and rotated boxes equal to Ultralytics' on crossing, spinning (the
 * regularised angle wrapping at a quarter turn, the track's angle kept in
 * the nearest half-turn form), crowded and camera-panned (GMC turning the
 * angles) streams. */
static void obb_matches_ultralytics(void)
{
    static const struct {
        const char *name;
        int camera;
    } s[] = {{"obb_cross", 0}, {"obb_crowd", 0}, {"obb_pan", 1}};
    for (size_t i = 0; i < sizeof s / sizeof s[0] && !tl_g.failed; i++) {
        long n;
        obb_row *rows = obb_read(s[i].name, &n);
        for (int c = 0; rows && c < OBB_COLS; c++)
            if (obb_column_run(s[i].name, s[i].camera, rows, n, c)) break;
        free(rows);
    }
}

/* One box turning at a random rate, each frame given in a random one of its
 * equivalent forms (r + k pi, or the sides swapped and a quarter turn
 * more): the track keeps one identity, its long-edge sides, and an angle
 * that is the true one plus the same multiple of pi on every frame (the
 * half-turn form nearest the track's: it never flips). */
static void obb_angle_follows_turns(void)
{
    const double pi = 3.14159265358979323846;
    strix_track_options o;
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    strix_tracker *t = NULL;
    strix_error e;
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "create");
    const double theta = tl_uniform(-3, 3), spin = tl_uniform(-0.15f, 0.15f);
    long turns = 0;
    for (int f = 0; f < 60 && !tl_g.failed; f++) {
        const double th = theta + spin * f;
        const int k = tl_int(-2, 2), swap = tl_int(0, 1);
        float r[5] = {300.0f + 2 * f, 200.0f + f, swap ? 40 : 120, swap ? 120 : 40,
                      (float)(th + k * pi + (swap ? pi / 2 : 0))};
        strix_detection d = {.score = 0.9f};
        int id = -2;
        float b[5] = {0};
        if (strix_tracker_update_obb(t, NULL, NULL, 0, 0, &d, r, 1, &id, &e) || id != 1 ||
            !strix_tracker_box_xywhr(t, 0, b)) {
            tl_fail("frame %d: identity %d (%s)", f, id, e.message);
            break;
        }
        double q = (b[4] - th) / pi;
        long m = lround(q);
        if (!f) turns = m;
        if (fabs(q - (double)m) > 1e-4 || m != turns || fabsf(b[2] - 120) > 5 || fabsf(b[3] - 40) > 5)
            tl_fail("frame %d (spin %.3f, given with %d half turns%s): w %g h %g, angle %.6f = the true %.6f + %.4f pi "
                    "(frame 0: + %ld pi)", f, spin, k, swap ? ", sides swapped" : "", (double)b[2], (double)b[3],
                    (double)b[4], th, q, turns);
    }
    strix_tracker_free(t);
}

/* A tracker takes one kind of box: oriented detections after axis-aligned
 * ones (and the reverse) are refused; updates without detections fit both. */
static void obb_kind_is_fixed(void)
{
    strix_track_options o;
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    strix_tracker *t = NULL;
    strix_error e;
    strix_detection d = {.x1 = 10, .y1 = 10, .x2 = 50, .y2 = 90, .score = 0.9f};
    float r[5] = {30, 50, 40, 80, 0.3f};
    int id;
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "create");
    if (!t) return;
    TL_CHECK(!strix_tracker_update_obb(t, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, &e) &&
             !strix_tracker_update(t, NULL, &d, 1, &id, &e), "an empty oriented update, then axis-aligned boxes");
    TL_CHECK(strix_tracker_update_obb(t, NULL, NULL, 0, 0, &d, r, 1, &id, &e) == STRIX_E_ARG,
             "oriented boxes after axis-aligned ones must be refused");
    strix_tracker_free(t);
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "create");
    if (!t) return;
    TL_CHECK(!strix_tracker_update_obb(t, NULL, NULL, 0, 0, &d, r, 1, &id, &e) && id == 1, "an oriented track: %d",
             id);
    float b[5];
    TL_CHECK(strix_tracker_box_xywhr(t, 0, b) && b[2] == 80 && b[3] == 40 && fabsf(b[4] - (0.3f + 1.5707963f)) < 1e-6f,
             "the long-edge form: %g %g %g", (double)b[2], (double)b[3], (double)b[4]);
    TL_CHECK(strix_tracker_update(t, NULL, &d, 1, &id, &e) == STRIX_E_ARG,
             "axis-aligned boxes after oriented ones must be refused");
    strix_tracker_free(t);
}

/* The handheld clip (jumps of up to 20 px a frame): camera-motion
 * compensation keeps identities that the Kalman prediction alone loses. */
static void gmc_beats_no_gmc(void)
{
    result r[N_REF];
    for (int c = 0; c < N_REF; c++)
        if (run_stream(&streams[7], c, &r[c])) return;
    printf("  shake: IDF1 botsort %.3f, bytetrack %.3f, botsort gmc none %.3f (idsw %ld, %ld, %ld)\n",
           r[BOTSORT].strix.idf1, r[BYTETRACK].strix.idf1, r[BOTSORT_NOGMC].strix.idf1, r[BOTSORT].strix.idsw,
           r[BYTETRACK].strix.idsw, r[BOTSORT_NOGMC].strix.idsw);
    TL_CHECK(r[BOTSORT].strix.idf1 > r[BYTETRACK].strix.idf1 + 0.2 &&
                 r[BOTSORT].strix.idf1 > r[BOTSORT_NOGMC].strix.idf1 + 0.2,
             "BoT-SORT with GMC should beat the trackers without it by a wide margin on the shaking clip");
}

/* A world [wh][ww] RGB of 8x8 cells of hashed colour (perf/bench_track.c's
 * texture): corners at every cell corner. */
static void cell_world(uint8_t *world, int ww, int wh)
{
    for (int y = 0; y < wh; y++)
        for (int x = 0; x < ww; x++) {
            uint32_t v = ((uint32_t)(x / 8) * 73856093u) ^ ((uint32_t)(y / 8) * 19349663u);
            v ^= v >> 13;
            v *= 0x5BD1E995u;
            v ^= v >> 15;
            uint8_t *p = world + 3 * ((size_t)y * (size_t)ww + (size_t)x);
            p[0] = (uint8_t)v;
            p[1] = (uint8_t)(v >> 8);
            p[2] = (uint8_t)(v >> 16);
        }
}

/* GMC alone on the camera clips' texture: a camera moved by (dx, dy) whole
 * pixels between two frames gives H = [1 0 -dx; 0 1 -dy] (the frame's
 * corners land within half a pixel of where the shift puts them, a pixel at
 * odd sizes), at even sizes (2x2 average) and odd ones (bilinear half size), RGB
 * and BGR alike; the first frame and the first after a size change give the
 * identity. */
static void gmc_recovers_camera_shift(void)
{
    static const int sizes[][2] = {{640, 360}, {641, 363}, {1280, 720}};
    for (int si = 0; si < 3; si++) {
        int w = sizes[si][0], h = sizes[si][1], ww = w + 80, wh = h + 80;
        uint8_t *world = malloc((size_t)ww * (size_t)wh * 3);
        strix_gmc *g = strix_gmc_create();
        TL_CHECK(world && g, "out of memory");
        cell_world(world, ww, wh);
        /* odd sizes: the bilinear half-size frame aliases the sharp-edged texture differently at each
         * shift (OpenCV's resize does the same), so the estimate is looser there */
        double tol = w % 2 || h % 2 ? 1.0 : 0.5;
        int cam[8][2] = {{40, 40}, {52, 33}, {31, 47}, {40, 40}, {40, 40}, {21, 60}, {45, 58}, {46, 57}}, ok = 1;
        for (int f = 0; f < 8 && ok; f++) { /* frames 0-3 as RGB, 4-7 as BGR (a fresh start: the size changes) */
            double H[6];
            const uint8_t *view = world + 3 * ((size_t)cam[f][1] * (size_t)ww + (size_t)cam[f][0]);
            if (strix_gmc_apply(g, view, f < 4 ? w : w - 2, h, 3 * ww, f >= 4, H)) {
                ok = 0;
                break;
            }
            double want[6] = {1, 0, 0, 0, 1, 0};
            if (f % 4) {
                want[2] = cam[f - 1][0] - cam[f][0];
                want[5] = cam[f - 1][1] - cam[f][1];
            }
            for (int k = 0; k < 6; k++) /* the linear part, then where the frame's corners land */
                if (k != 2 && k != 5 && !(fabs(H[k] - want[k]) <= 0.002)) ok = 0;
            for (int c = 0; c < 4; c++) {
                double x = c & 1 ? w : 0, y = c & 2 ? h : 0;
                double ex = H[0] * x + H[1] * y + H[2] - (x + want[2]), ey = H[3] * x + H[4] * y + H[5] - (y + want[5]);
                if (!(ex * ex + ey * ey <= tol * tol)) ok = 0;
            }
            if (!ok)
                printf("  %dx%d frame %d: H %.4f %.4f %.3f / %.4f %.4f %.3f, want shift %.0f %.0f\n", w, h, f, H[0], H[1],
                       H[2], H[3], H[4], H[5], want[2], want[5]);
        }
        strix_gmc_free(g);
        free(world);
        TL_CHECK(ok, "%dx%d: camera shifts not recovered (see above)", w, h);
    }
}

/* The corner search starts its floor at a guess from the frame before
 * (gmc_kernels.h, corners): a frame whose corners are all far weaker than
 * the last one's (low contrast after high) must be searched again from 0,
 * and get the corners a fresh start finds.  Two GMCs of every build see the
 * same frames B and C (C: B with the camera moved by a random shift), one
 * after a strong frame A, the other after a blank one (no corners: no
 * guess); C's transform must be the same to the last bit, and the shift. */
static void gmc_corner_guess_redone(void)
{
    int w = 640, h = 360, ww = w + 80, wh = h + 80, nb = strix_gmc_best_isa() + 1;
    int dx = tl_int(-6, 6), dy = tl_int(-6, 6);
    uint8_t *world = malloc((size_t)ww * (size_t)wh * 3), *faint = malloc((size_t)ww * (size_t)wh * 3);
    uint8_t *blank = calloc((size_t)w * (size_t)h, 3);
    TL_CHECK(world && faint && blank, "out of memory");
    cell_world(world, ww, wh);
    for (size_t i = 0; i < (size_t)ww * (size_t)wh * 3; i++) /* a twentieth of the contrast, about mid grey */
        faint[i] = (uint8_t)(120 + world[i] / 20);
    for (int isa = 0; isa < nb; isa++) {
        strix_gmc *g[2] = {strix_gmc_create_isa(isa), strix_gmc_create_isa(isa)};
        TL_CHECK(g[0] && g[1], "out of memory");
        double H[2][6];
        const uint8_t *b = faint + 3 * ((size_t)40 * (size_t)ww + 40);
        const uint8_t *c = faint + 3 * ((size_t)(40 + dy) * (size_t)ww + (size_t)(40 + dx));
        int rc = strix_gmc_apply(g[0], world + 3 * ((size_t)40 * (size_t)ww + 40), w, h, 3 * ww, 0, H[0]) |
                 strix_gmc_apply(g[1], blank, w, h, 3 * w, 0, H[1]);
        for (int k = 0; k < 2; k++) rc |= strix_gmc_apply(g[k], b, w, h, 3 * ww, 0, H[k]) | strix_gmc_apply(g[k], c, w, h, 3 * ww, 0, H[k]);
        TL_CHECK(!rc, "strix_gmc_apply failed");
        TL_CHECK(!memcmp(H[0], H[1], sizeof H[0]),
                 "build %d, shift %d %d: after a strong frame %.9g %.9g %.9g / %.9g %.9g %.9g, after a blank one %.9g "
                 "%.9g %.9g / %.9g %.9g %.9g",
                 isa, dx, dy, H[0][0], H[0][1], H[0][2], H[0][3], H[0][4], H[0][5], H[1][0], H[1][1], H[1][2], H[1][3],
                 H[1][4], H[1][5]);
        TL_CHECK(fabs(H[0][2] + dx) < 0.5 && fabs(H[0][5] + dy) < 0.5 && fabs(H[0][0] - 1) < 0.002,
                 "build %d: the faint frames' shift %d %d not recovered: H %.4f %.4f %.3f / %.4f %.4f %.3f", isa, dx, dy,
                 H[0][0], H[0][1], H[0][2], H[0][3], H[0][4], H[0][5]);
        strix_gmc_free(g[0]);
        strix_gmc_free(g[1]);
    }
    free(world);
    free(faint);
    free(blank);
}

/* GMC's builds (gmc_steps.h: generic, AVX2, AVX-512) give the same
 * transform to the last bit: random textures (cells of random colour plus per-pixel noise),
 * random even and odd sizes, RGB and BGR, a camera moving by up to 8 whole
 * pixels a frame, each frame through every build this CPU runs. */
static void gmc_builds_agree(void)
{
    static const char *names[GMC_ISA_COUNT] = {"generic", "AVX2", "AVX-512"};
    int nb = strix_gmc_best_isa() + 1;
    if (nb < 2) {
        tl_skip("no AVX2 or AVX-512 build on this CPU: only the generic one runs here");
        return;
    }
    strix_gmc *g[GMC_ISA_COUNT] = {0};
    int ok = 1;
    for (int i = 0; i < nb; i++)
        if (!(g[i] = strix_gmc_create_isa(i))) ok = 0;
    if (!ok) tl_fail("out of memory");
    for (int si = 0; si < 3 && ok; si++) {
        int w = tl_int(200, 700), h = tl_int(120, 400), ww = w + 64, wh = h + 64, cell = tl_int(3, 12);
        int noise = tl_int(0, 60), bgr = tl_int(0, 1);
        uint8_t *world = malloc((size_t)ww * (size_t)wh * 3);
        if (!world) {
            tl_fail("out of memory");
            break;
        }
        uint64_t key = tl_u64();
        for (int y = 0; y < wh; y++)
            for (int x = 0; x < ww; x++) {
                uint64_t v = ((uint64_t)(x / cell) * 73856093u ^ (uint64_t)(y / cell) * 19349663u ^ key) *
                             0x9E3779B97F4A7C15ull;
                for (int c = 0; c < 3; c++) {
                    int q = (int)((v >> (16 * c + 8)) & 255) + (noise ? tl_int(-noise, noise) : 0);
                    world[3 * ((size_t)y * (size_t)ww + (size_t)x) + c] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
                }
            }
        int cx = 32, cy = 32;
        for (int f = 0; f < 6 && ok; f++) {
            cx += tl_int(-8, 8); /* within LK's reach, so most corners are followed */
            cy += tl_int(-8, 8);
            cx = cx < 0 ? 0 : cx > 63 ? 63 : cx;
            cy = cy < 0 ? 0 : cy > 63 ? 63 : cy;
            const uint8_t *view = world + 3 * ((size_t)cy * (size_t)ww + (size_t)cx);
            double ha[6], hb[6];
            int ra = strix_gmc_apply(g[0], view, w, h, 3 * ww, bgr, ha);
            for (int i = 1; i < nb && ok; i++) {
                int rb = strix_gmc_apply(g[i], view, w, h, 3 * ww, bgr, hb);
                if (ra || rb || memcmp(ha, hb, sizeof ha)) {
                    tl_fail("%dx%d (cells %d, noise %d, bgr %d) frame %d: generic %.9g %.9g %.9g %.9g %.9g %.9g, %s "
                            "%.9g %.9g %.9g %.9g %.9g %.9g",
                            w, h, cell, noise, bgr, f, ha[0], ha[1], ha[2], ha[3], ha[4], ha[5], names[i], hb[0], hb[1],
                            hb[2], hb[3], hb[4], hb[5]);
                    ok = 0;
                }
            }
        }
        free(world);
    }
    for (int i = 0; i < nb; i++) strix_gmc_free(g[i]);
}

/* The grey half-size frame, GMC's first step, from every build this CPU
 * runs: random pixels, random sizes (even: against the definition, OpenCV's
 * fixed-point grey of each pixel, OpenCV 5's (R 9798 + G 19235 + B 3735 +
 * 2^14) >> 15 or OpenCV 4's (R 4899 + G 9617 + B 1868 + 2^13) >> 14, then
 * the rounded mean of each 2x2 block; odd: the same bytes as the generic
 * build's bilinear), RGB and BGR, both roundings, rows with slack. */
static void gmc_grey_builds_agree(void)
{
    static const char *names[GMC_ISA_COUNT] = {"generic", "AVX2", "AVX-512"};
    const gmc_steps *steps[GMC_ISA_COUNT] = {&strix_gmc_steps_generic};
#if defined(__x86_64__)
    steps[GMC_ISA_AVX2] = &strix_gmc_steps_avx2;
    steps[GMC_ISA_AVX512] = &strix_gmc_steps_avx512;
#endif
    int nb = strix_gmc_best_isa() + 1;
    for (int si = 0; si < 24; si++) {
        int w = si < 16 ? 2 * tl_int(3, 400) : tl_int(6, 800), h = si < 16 ? 2 * tl_int(3, 40) : tl_int(6, 80);
        int stride = 3 * w + tl_int(0, 40), bgr = tl_int(0, 1), cv4 = tl_int(0, 1), ow = w / 2, oh = h / 2;
        uint8_t *pix = malloc((size_t)stride * (size_t)h), *want = malloc((size_t)ow * (size_t)oh);
        gmc_scratch sc = {.grey = malloc((size_t)ow * (size_t)oh), .rows = malloc(sizeof(uint16_t) * 2 * (size_t)w)};
        if (!pix || !want || !sc.grey || !sc.rows) {
            tl_fail("out of memory");
            free(pix), free(want), free(sc.grey), free(sc.rows);
            return;
        }
        for (size_t i = 0; i < (size_t)stride * (size_t)h; i++) pix[i] = (uint8_t)tl_int(0, 255);
        if (w % 2 == 0 && h % 2 == 0)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    int sum = 2;
                    for (int k = 0; k < 4; k++) {
                        const uint8_t *q = pix + (size_t)(2 * y + k / 2) * (size_t)stride + 3 * (size_t)(2 * x + k % 2);
                        int r = q[bgr ? 2 : 0], g = q[1], b = q[bgr ? 0 : 2];
                        sum += cv4 ? (r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14
                                   : (r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15;
                    }
                    want[(size_t)y * (size_t)ow + (size_t)x] = (uint8_t)(sum >> 2);
                }
        else {
            steps[0]->grey(pix, w, h, stride, bgr, cv4, sc.grey, sc.rows);
            memcpy(want, sc.grey, (size_t)ow * (size_t)oh);
        }
        for (int i = 0; i < nb; i++) {
            memset(sc.grey, 0, (size_t)ow * (size_t)oh);
            steps[i]->grey(pix, w, h, stride, bgr, cv4, sc.grey, sc.rows);
            for (size_t k = 0; k < (size_t)ow * (size_t)oh; k++)
                if (sc.grey[k] != want[k]) {
                    tl_fail("%dx%d (stride %d, bgr %d, OpenCV %d): %s build's grey at (%zu, %zu) is %d, want %d", w, h,
                            stride, bgr, cv4 ? 4 : 5, names[i], k % (size_t)ow, k / (size_t)ow, sc.grey[k], want[k]);
                    si = 24;
                    break;
                }
        }
        free(pix), free(want), free(sc.grey), free(sc.rows);
    }
}

/* A binary PPM (P6, 3 channels) or PGM (P5) of tests/golden/gmc/ as
 * tools/reference/grey_golden.py writes it: its pixels (malloc'd) and size,
 * or NULL. */
static uint8_t *read_pnm(const char *path, int channels, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    int maxv = 0;
    uint8_t *px = NULL;
    if (fscanf(f, channels == 3 ? "P6 %d %d %d" : "P5 %d %d %d", w, h, &maxv) == 3 && maxv == 255 && fgetc(f) == '\n' &&
        *w > 0 && *h > 0 && *w <= 4096 && *h <= 4096) {
        size_t n = (size_t)*w * (size_t)*h * (size_t)channels;
        px = malloc(n);
        if (px && fread(px, 1, n, f) != n) {
            free(px);
            px = NULL;
        }
    }
    fclose(f);
    return px;
}

/* One build (a GMC_ISA_*) against tests/golden/gmc/, OpenCV 5's greys of a
 * 160 x 120 crop of a vtest.avi frame where OpenCV 4's rounding differs on
 * 328 pixels (tools/reference/grey_golden.py): the crop made twice as large
 * (each pixel a 2x2 block) has the golden full-size grey as its half-size
 * grey, so every pixel's grey is checked, not only 2x2 means; the crop
 * itself gives the golden half-size frame (cv2.resize), as RGB and as BGR;
 * and with OpenCV 4's rounding the greys are the 14-bit formula's, 328
 * pixels off the golden (the golden tells the two apart).  A 77 x 59 crop
 * of it gives cv2.resize's INTER_LINEAR half-size frame of odd sizes. */
static void grey_golden_check(int isa)
{
    static const char *names[GMC_ISA_COUNT] = {"generic", "AVX2", "AVX-512"};
    const gmc_steps *steps = &strix_gmc_steps_generic;
#if defined(__x86_64__)
    if (isa == GMC_ISA_AVX2) steps = &strix_gmc_steps_avx2;
    if (isa == GMC_ISA_AVX512) steps = &strix_gmc_steps_avx512;
#endif
    int w = 0, h = 0, fw = 0, fh = 0, hw = 0, hh = 0;
    uint8_t *src = read_pnm("tests/golden/gmc/grey_src.ppm", 3, &w, &h);
    uint8_t *full = read_pnm("tests/golden/gmc/grey_full.pgm", 1, &fw, &fh);
    uint8_t *half = read_pnm("tests/golden/gmc/grey_half.pgm", 1, &hw, &hh);
    size_t n = (size_t)w * (size_t)h;
    uint8_t *big = malloc(4 * 3 * n), *bgr = malloc(3 * n), *out = malloc(n);
    gmc_scratch sc = {.rows = malloc(sizeof(uint16_t) * 4 * (size_t)w)};
    if (!src || !full || !half || fw != w || fh != h || hw != w / 2 || hh != h / 2 || !big || !bgr || !out || !sc.rows) {
        tl_fail("cannot read tests/golden/gmc/grey_{src.ppm,full.pgm,half.pgm} (or out of memory)");
        goto out;
    }
    for (int y = 0; y < 2 * h; y++)
        for (int x = 0; x < 2 * w; x++) memcpy(big + 3 * ((size_t)y * 2 * (size_t)w + (size_t)x), src + 3 * ((size_t)(y / 2) * (size_t)w + (size_t)(x / 2)), 3);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) bgr[3 * i + (size_t)c] = src[3 * i + (size_t)(2 - c)];
    for (int cv4 = 0; cv4 < 2; cv4++) {
        steps->grey(big, 2 * w, 2 * h, 6 * w, 0, cv4, out, sc.rows);
        int differ = 0;
        for (size_t i = 0; i < n; i++) {
            int r = src[3 * i], g = src[3 * i + 1], b = src[3 * i + 2];
            int want = cv4 ? (r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14 : full[i];
            if (out[i] != want) {
                tl_fail("%s build, OpenCV %d rounding: the grey of pixel (%zu, %zu) (RGB %d %d %d) is %d, want %d",
                        names[isa], cv4 ? 4 : 5, i % (size_t)w, i / (size_t)w, r, g, b, out[i], want);
                goto out;
            }
            differ += out[i] != full[i];
        }
        if (cv4 && differ != 328) {
            tl_fail("OpenCV 4's rounding differs from the golden on %d pixels, want 328", differ);
            goto out;
        }
    }
    int ow = 0, oh = 0, qw = 0, qh = 0;
    uint8_t *odd = read_pnm("tests/golden/gmc/grey_odd.ppm", 3, &ow, &oh);
    uint8_t *oddh = read_pnm("tests/golden/gmc/grey_odd_half.pgm", 1, &qw, &qh);
    if (!odd || !oddh || qw != ow / 2 || qh != oh / 2 || ow % 2 == 0 || oh % 2 == 0 || ow > w || oh > h) {
        tl_fail("cannot read tests/golden/gmc/grey_odd{.ppm,_half.pgm} (or they are not odd sizes)");
        free(odd), free(oddh);
        goto out;
    }
    steps->grey(odd, ow, oh, 3 * ow, 0, 0, out, sc.rows);
    for (size_t i = 0; i < (size_t)qw * (size_t)qh; i++)
        if (out[i] != oddh[i]) {
            tl_fail("%s build, %dx%d: the half-size grey at (%zu, %zu) is %d, OpenCV 5's INTER_LINEAR %d", names[isa], ow,
                    oh, i % (size_t)qw, i / (size_t)qw, out[i], oddh[i]);
            break;
        }
    free(odd), free(oddh);
    for (int b = 0; b < 2 && !tl_g.failed; b++) {
        steps->grey(b ? bgr : src, w, h, 3 * w, b, 0, out, sc.rows);
        for (size_t i = 0; i < (size_t)hw * (size_t)hh; i++)
            if (out[i] != half[i]) {
                tl_fail("%s build (%s): the half-size grey at (%zu, %zu) is %d, OpenCV 5's %d", names[isa],
                        b ? "BGR" : "RGB", i % (size_t)hw, i / (size_t)hw, out[i], half[i]);
                goto out;
            }
    }
out:
    free(src), free(full), free(half), free(big), free(bgr), free(out), free(sc.rows);
}

/* OpenCV 5's grey on the golden, from the generic build and (x86-64 with
 * AVX2) the AVX2 one. */
static void gmc_grey_opencv5_golden(void)
{
    int best = strix_gmc_best_isa();
    for (int isa = GMC_ISA_GENERIC; isa <= best && isa <= GMC_ISA_AVX2 && !tl_g.failed; isa++) grey_golden_check(isa);
}

/* The same from the AVX-512 build, on a CPU that runs it. */
static void gmc_grey_opencv5_golden_avx512(void)
{
    if (strix_gmc_best_isa() < GMC_ISA_AVX512) {
        tl_skip("this CPU has no AVX-512 F/BW/VL/VNNI: the AVX-512 build cannot run here");
        return;
    }
    grey_golden_check(GMC_ISA_AVX512);
}

/* GMC's RANSAC against OpenCV's estimateAffinePartial2D (tests/golden/gmc/
 * ransac.txt, tools/reference/ransac_golden.py: point sets where the way a
 * sample is drawn and the float32 errors decide the inliers, and four of
 * 59 to 320 inliers, whose J^T r OpenCV leaves to OpenBLAS in one to three
 * K blocks): the same inliers, and the transform after OpenCV's
 * Levenberg-Marquardt refinement equal to OpenCV's to the bit (the file
 * keeps 17 digits, which give every double back). */
static void gmc_ransac_matches_opencv(void)
{
    FILE *f = fopen("tests/golden/gmc/ransac.txt", "r");
    TL_CHECK(f, "cannot open tests/golden/gmc/ransac.txt");
    char line[256];
    int cases = 0, n;
    double *p = malloc(sizeof(double) * 2 * GMC_MAX_CORNERS), *q = malloc(sizeof(double) * 2 * GMC_MAX_CORNERS);
    unsigned char inl[GMC_MAX_CORNERS];
    char want[408]; /* %407s below: a longer mask reads short and fails */
    while (p && q && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        if (sscanf(line, "%d", &n) != 1 || n < 2 || n > GMC_MAX_CORNERS) break;
        int ok = 1;
        for (int i = 0; i < n && ok; i++) {
            float v[4];
            ok = fgets(line, sizeof line, f) && sscanf(line, "%f %f %f %f", &v[0], &v[1], &v[2], &v[3]) == 4;
            p[2 * i] = v[0], p[2 * i + 1] = v[1], q[2 * i] = v[2], q[2 * i + 1] = v[3];
        }
        double Hw[6], H[6];
        ok = ok && fscanf(f, "%407s %lf %lf %lf %lf %lf %lf ", want, &Hw[0], &Hw[1], &Hw[2], &Hw[3], &Hw[4], &Hw[5]) == 7 &&
             (int)strlen(want) == n;
        if (!ok) break;
        cases++;
        if (strix_gmc_ransac(p, q, n, inl, H)) {
            tl_fail("case %d: no model (OpenCV has one)", cases);
            break;
        }
        for (int i = 0; i < n; i++)
            if (inl[i] != (want[i] == '1')) {
                tl_fail("case %d (%d points): point %d is %s, an %s for OpenCV", cases, n, i, inl[i] ? "an inlier" : "an outlier",
                        want[i] == '1' ? "inlier" : "outlier");
                goto out;
            }
        for (int j = 0; j < 6; j++)
            if (H[j] != Hw[j]) {
                tl_fail("case %d (%d points): H[%d] is %.17g, OpenCV's %.17g", cases, n, j, H[j], Hw[j]);
                goto out;
            }
    }
    if (!tl_g.failed && cases != 104) tl_fail("read %d cases of tests/golden/gmc/ransac.txt, want 104", cases);
    printf("  %d point sets: OpenCV's inliers and transform, to the bit, in each\n", cases);
out:
    fclose(f);
    free(p);
    free(q);
}

/* strix_track_grey: bands of random heights, top down, give the whole
 * frame's bytes, and strix_gmc_apply_grey on them the same H as
 * strix_gmc_apply on the frame (random textures, sizes even and odd, RGB
 * and BGR, either rounding, rows with slack, a moving camera); bad calls
 * are refused with STRIX_E_ARG and a message. */
static void track_grey_bands(void)
{
    strix_gmc *ga = strix_gmc_create(), *gb = strix_gmc_create();
    if (!ga || !gb) tl_fail("out of memory");
    for (int si = 0; si < 4 && ga && gb && !tl_g.failed; si++) {
        int w = tl_int(40, 500), h = tl_int(40, 300), ww = w + 40, wh = h + 40, bgr = tl_int(0, 1), cell = tl_int(3, 9);
        int stride = 3 * ww + tl_int(0, 9);
        strix_grey_rounding kind = tl_int(0, 1) ? STRIX_GREY_OPENCV4 : STRIX_GREY_OPENCV5;
        strix_gmc_set_grey(ga, kind == STRIX_GREY_OPENCV4);
        strix_gmc_set_grey(gb, kind == STRIX_GREY_OPENCV4); /* it reads the grey given: no grey of its own */
        uint8_t *world = malloc((size_t)stride * (size_t)wh), *whole = malloc((size_t)(w / 2) * (size_t)(h / 2)),
                *bands = malloc((size_t)(w / 2) * (size_t)(h / 2));
        if (!world || !whole || !bands) {
            tl_fail("out of memory");
            free(world), free(whole), free(bands);
            break;
        }
        uint64_t key = tl_u64();
        for (int y = 0; y < wh; y++)
            for (int x = 0; x < 3 * ww; x++)
                world[(size_t)y * (size_t)stride + (size_t)x] =
                    (uint8_t)((((uint64_t)(x / 3 / cell) * 73856093u ^ (uint64_t)(y / cell) * 19349663u ^ key) *
                               0x9E3779B97F4A7C15ull) >> (8 * (x % 3) + 20)) + (uint8_t)tl_int(0, 9);
        strix_error e;
        for (int f = 0; f < 4 && !tl_g.failed; f++) {
            int cx = tl_int(0, 40), cy = tl_int(0, 40);
            strix_image img = {.data = world + (size_t)cy * (size_t)stride + 3 * (size_t)cx, .width = w, .height = h,
                               .stride = stride, .format = bgr ? STRIX_BGR : STRIX_RGB};
            memset(bands, 0, (size_t)(w / 2) * (size_t)(h / 2));
            int done = 0;
            if (strix_track_grey(&img, &done, h, whole, kind, &e) || done != h) {
                tl_fail("%dx%d: %s", w, h, e.message);
                break;
            }
            if (grey_in_bands(&img, kind, bands)) break;
            TL_CHECK(!memcmp(whole, bands, (size_t)(w / 2) * (size_t)(h / 2)), "%dx%d (stride %d, bgr %d): bands differ "
                     "from the whole frame's grey", w, h, stride, bgr);
            double ha[6], hb[6];
            if (strix_gmc_apply(ga, img.data, w, h, stride, bgr, ha) || strix_gmc_apply_grey(gb, bands, w, h, hb)) {
                tl_fail("out of memory");
                break;
            }
            TL_CHECK(!memcmp(ha, hb, sizeof ha), "%dx%d frame %d: H from the grey %.9g %.9g %.9g, from the frame "
                     "%.9g %.9g %.9g", w, h, f, hb[0], hb[1], hb[2], ha[0], ha[1], ha[2]);
        }
        free(world), free(whole), free(bands);
    }
    strix_gmc_free(ga);
    strix_gmc_free(gb);
    /* an odd height waits for its last row; refusals */
    uint8_t px[12 * 7 * 3] = {0}, grey[6 * 3];
    strix_image odd = {.data = px, .width = 12, .height = 7}, nv = {.data = px, .width = 12, .height = 6, .format = STRIX_NV12},
                dev = {.data = px, .width = 12, .height = 6, .memory = STRIX_DEVICE};
    strix_image even = {.data = px, .width = 12, .height = 6};
    strix_error e = {0};
    int done = 0;
    TL_CHECK(strix_track_grey(&odd, &done, 4, grey, STRIX_GREY_OPENCV5, &e) == STRIX_OK && done == 0 &&
                 strix_track_grey(&odd, &done, 7, grey, STRIX_GREY_OPENCV5, &e) == STRIX_OK && done == 7,
             "an odd-height frame: rows made %d (%s)", done, e.message);
    memset(grey, 0xAB, sizeof grey); /* a complete image is not made again */
    TL_CHECK(strix_track_grey(&odd, &done, 7, grey, STRIX_GREY_OPENCV5, &e) == STRIX_OK && done == 7 && grey[0] == 0xAB,
             "a call after the odd-height frame was complete made it again");
    done = 0;
    TL_CHECK(strix_track_grey(&even, &done, 5, grey, STRIX_GREY_OPENCV5, &e) == STRIX_OK && done == 4, "rows 0..4 of 6: %d made", done);
    int d5 = 5, d0 = 0, d4 = 4;
    struct { const strix_image *im; int *done, y1; uint8_t *g; const char *what; } bad[] = {
        {&even, &d0, 8, grey, "rows past the frame"}, {&even, &d5, 4, grey, "rows made past the rows written"},
        {&even, NULL, 6, grey, "no row count"}, {&even, &d4, 6, NULL, "no grey buffer"},
        {&nv, &d0, 6, grey, "an NV12 frame"}, {&dev, &d0, 6, grey, "device memory"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e = (strix_error){0};
        strix_status st = strix_track_grey(bad[i].im, bad[i].done, bad[i].y1, bad[i].g, STRIX_GREY_OPENCV5, &e);
        TL_CHECK(st == STRIX_E_ARG && e.message[0], "%s: status %d, want STRIX_E_ARG with a message", bad[i].what, st);
    }
}

/* GMC's transforms over a fixed clip, pinned to the last bit: a hash of
 * every frame's H at three sizes (even, odd, smaller than a pyramid
 * level), the same for every build.  A change that is meant to keep the
 * numbers (a faster kernel, a new build) must keep these; one that is
 * meant to change them updates the hashes and says why (the identities
 * against Ultralytics in the goldens above are the arbiter).  Pinned at
 * main 64c5546 (2026-11-27) with OpenCV 4's grey, then again for OpenCV 5's
 * grey when it became the default (2026-11-29: the transforms of the two
 * larger sizes changed, as a grey level moved corners), and for odd sizes
 * when their half-size frame became OpenCV's fixed-point INTER_LINEAR
 * (2026-11-29: 321x181 changed with either grey), and when Lucas-Kanade
 * came to add its window sums in OpenCV's float order (2026-11-29: the
 * points now equal OpenCV's to the bit, where they were a last bit off on
 * about half of them; both larger sizes changed, with either grey), and
 * when the corner strengths took every rounding of OpenCV's AVX2 Sobel and
 * double box filter (2026-11-29: 321x181 changed, with either grey: a tie
 * of strengths broken otherwise), and when the fit after RANSAC became
 * OpenCV's Levenberg-Marquardt refinement step for step (2026-11-29: both
 * larger sizes changed, with either grey; the transforms now equal
 * OpenCV's to the bit on every golden frame, where the least-squares fit
 * was up to ~5e-6 px off); the clip: a world of 8x8 cells of hashed
 * colour (perf/bench_track.c's), the camera drifting 2 px a frame with up
 * to 20 px of shake. */
static uint64_t gmc_clip_hash(strix_gmc *g, int w, int h, int frames)
{
    int ww = w + 2 * 40 + 2 * frames + 64, wh = h + 2 * 40 + 64;
    uint8_t *world = malloc((size_t)ww * (size_t)wh * 3);
    if (!world) return 0;
    cell_world(world, ww, wh);
    uint64_t s = 42, hash = 1469598103934665603ull;
    for (int f = 0; f < frames; f++) {
        int shake[2];
        for (int k = 0; k < 2; k++) {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            shake[k] = (int)((s * 0x2545F4914F6CDD1Dull) >> 58) % (k ? 29 : 41) - (k ? 14 : 20);
        }
        double H[6];
        unsigned char b[sizeof H];
        if (strix_gmc_apply(g, world + 3 * ((size_t)(40 + shake[1]) * (size_t)ww + (size_t)(40 + 2 * f + shake[0])), w,
                            h, 3 * ww, 0, H))
            hash = 0;
        memcpy(b, H, sizeof H);
        for (size_t i = 0; i < sizeof b && hash; i++) hash = (hash ^ b[i]) * 1099511628211ull; /* FNV-1a */
    }
    free(world);
    return hash;
}

static void gmc_transforms_pinned(void)
{
    /* hash: OpenCV 5's grey (the default); hash4: OpenCV 4's (640x360: the numbers pinned before OpenCV 5's
     * became the default) */
    static const struct {
        int w, h;
        uint64_t hash, hash4;
    } clip[] = {{640, 360, 0xec0fda2bedae6448ull, 0xab2ec9d648d8e6d2ull},
                {321, 181, 0x46f354ec8bd899a4ull, 0x3f68bb503cb8d052ull},
                {25, 23, 0x1ef7fb763ecd5d83ull, 0x1ef7fb763ecd5d83ull}};
    static const char *names[GMC_ISA_COUNT] = {"generic", "AVX2", "AVX-512"};
    for (int isa = 0; isa <= strix_gmc_best_isa(); isa++)
        for (size_t k = 0; k < sizeof clip / sizeof clip[0]; k++)
            for (int cv4 = 0; cv4 < 2; cv4++) {
                strix_gmc *g = strix_gmc_create_isa(isa);
                if (g) strix_gmc_set_grey(g, cv4);
                uint64_t got = g ? gmc_clip_hash(g, clip[k].w, clip[k].h, 40) : 0, want = cv4 ? clip[k].hash4 : clip[k].hash;
                strix_gmc_free(g);
                TL_CHECK(got == want, "%s build, %dx%d, OpenCV %d's grey: transforms hash to %016llx, pinned %016llx",
                         names[isa], clip[k].w, clip[k].h, cv4 ? 4 : 5, (unsigned long long)got, (unsigned long long)want);
            }
}

/* ------------------------------------------- GMC on wild handheld clips */

/* A wild handheld clip of tests/golden/gmc/wild_NAME.txt
 * (tools/reference/gmc_wild_golden.py says how it is made: a 480 x 320
 * window of a photograph shaken by up to 30 px a frame on a slow pan,
 * motion blur, optionally flattened to low texture), frame f of it into
 * out [320][480][3] RGB, as that script makes it; *s the path's generator
 * state (advanced three times a frame, from the clip's seed). */
enum { WILD_W = 480, WILD_H = 320 };

static int wild_tri(int f, int p) { return abs(f % (2 * p) - p) - p / 2; }

static int wild_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void wild_frame(const uint8_t *ph, int w0, int h0, int f, int shake, int blur, uint32_t *s, uint8_t *out)
{
    uint32_t u[3];
    for (int k = 0; k < 3; k++) {
        *s = *s * 1664525u + 1013904223u;
        u[k] = *s >> 16;
    }
    int ox = wild_clamp((w0 - WILD_W) / 2 + wild_tri(f, 60) + (int)(u[0] % (uint32_t)(2 * shake + 1)) - shake, 0,
                        w0 - WILD_W);
    int oy = wild_clamp((h0 - WILD_H) / 2 + wild_tri(f, 44) + (int)(u[1] % (uint32_t)(2 * shake + 1)) - shake, 0,
                        h0 - WILD_H);
    int L = 1 + (int)(u[2] % (uint32_t)blur);
    for (int y = 0; y < WILD_H; y++)
        for (int x = 0; x < WILD_W; x++)
            for (int c = 0; c < 3; c++) {
                int sum = 0;
                for (int k = 0; k < L; k++) {
                    int d = k - L / 2;
                    int px = f % 2 ? wild_clamp(ox + x + d, 0, w0 - 1) : ox + x;
                    int py = f % 2 ? oy + y : wild_clamp(oy + y + d, 0, h0 - 1);
                    sum += ph[((size_t)py * (size_t)w0 + (size_t)px) * 3 + (size_t)c];
                }
                out[((size_t)y * WILD_W + (size_t)x) * 3 + (size_t)c] = (uint8_t)((sum + L / 2) / L);
            }
}

/* strix's GMC against OpenCV 5's (Ultralytics' GMC with opencv-python 5.0.0.93,
 * tools/reference/gmc_wild_golden.py) on every frame of the wild handheld
 * clips, made from ../shared/data's photographs (or $STRIX_DATA's).  The
 * corners and the Lucas-Kanade points are OpenCV's to the bit, so RANSAC
 * draws the same samples and keeps the same inliers, and the refinement
 * after it takes OpenCV's Levenberg-Marquardt steps in OpenCV's arithmetic.
 * Checked: every frame's transform equal to OpenCV's to the bit (the
 * goldens keep 17 digits), the low-texture clip (dog_flat, 8 grey levels,
 * where many corner strengths tie or nearly tie) included: the strengths
 * are OpenCV's to the bit (gmc_kernels.h, its Sobel's fused multiply-adds
 * and its box filter's double running sums), so the corners come in
 * OpenCV's order.  The goldens were made on an x86-64 CPU with AVX2 and
 * FMA (tests/golden/README.md): OpenCV's corner strengths, and so these
 * transforms, are those of the filter build its CPU dispatch picks, and
 * strix computes that one on every CPU. */
static void gmc_wild_clips_match_opencv(void)
{
    static const char *const clips[] = {"dog_shake", "horses_blur", "person_blur", "eagle_flat", "dog_flat"};
    const char *dir = getenv("STRIX_DATA") ? getenv("STRIX_DATA") : "../shared/data";
    uint8_t *frame = malloc((size_t)WILD_W * WILD_H * 3);
    TL_CHECK(frame, "out of memory");
    for (size_t c = 0; c < sizeof clips / sizeof clips[0] && frame && !tl_g.failed; c++) {
        char path[512], photo[64];
        snprintf(path, sizeof path, "tests/golden/gmc/wild_%s.txt", clips[c]);
        FILE *f = fopen(path, "r");
        unsigned seed;
        int n, shake, blur, flat;
        if (!f || fscanf(f, "# %63s %u %d %d %d %d", photo, &seed, &n, &shake, &blur, &flat) != 6 || n < 2 ||
            shake < 0 || blur < 1 || flat < 0 || flat > 7) {
            tl_fail("%s: cannot read its header (tools/reference/gmc_wild_golden.py writes it)", path);
            if (f) fclose(f);
            break;
        }
        char img_path[600];
        snprintf(img_path, sizeof img_path, "%s/%s", dir, photo);
        strix_owned_image im = {0};
        strix_error e = {0};
        if (strix_image_load(img_path, 0, &im, &e) != STRIX_OK) {
            fclose(f);
            tl_skip("%s (the wild clips are made from the project's photographs; set STRIX_DATA)", e.message);
            break;
        }
        if (im.width < WILD_W || im.height < WILD_H) {
            tl_fail("%s is %dx%d, smaller than a %dx%d frame", img_path, im.width, im.height, WILD_W, WILD_H);
            strix_image_free(&im);
            fclose(f);
            break;
        }
        if (flat)
            for (size_t i = 0; i < (size_t)im.width * (size_t)im.height * 3; i++)
                im.data[i] = (uint8_t)(128 - (128 >> flat) + (im.data[i] >> flat));
        strix_gmc *g = strix_gmc_create();
        TL_CHECK(g, "out of memory");
        uint32_t s = seed;
        for (int k = 0; k < n && g && !tl_g.failed; k++) {
            double want[6], H[6];
            for (int j = 0; j < 6; j++)
                if (fscanf(f, "%lf", &want[j]) != 1) {
                    tl_fail("%s: frame %d has fewer than 6 numbers", path, k);
                    break;
                }
            if (tl_g.failed) break;
            wild_frame(im.data, im.width, im.height, k, shake, blur, &s, frame);
            if (strix_gmc_apply(g, frame, WILD_W, WILD_H, 3 * WILD_W, 0, H)) {
                tl_fail("strix_gmc_apply failed (out of memory)");
                break;
            }
            for (int j = 0; j < 6; j++)
                if (H[j] != want[j]) {
                    tl_fail("%s frame %d: strix's transform [%.17g %.17g %.17g; %.17g %.17g %.17g] is not OpenCV's "
                            "[%.17g %.17g %.17g; %.17g %.17g %.17g] (H[%d] differs; the goldens are OpenCV's on an "
                            "AVX2 + FMA CPU)",
                            clips[c], k, H[0], H[1], H[2], H[3], H[4], H[5], want[0], want[1], want[2], want[3],
                            want[4], want[5], j);
                    break;
                }
        }
        if (!tl_g.failed)
            printf("  %s (%s, shake %d px, blur up to %d, flat %d): %d frames, every transform OpenCV's to the bit\n",
                   clips[c], photo, shake, blur, flat, n);
        strix_gmc_free(g);
        strix_image_free(&im);
        fclose(f);
    }
    free(frame);
}

/* strix_gmc_time_steps: off, every step time is 0; on, the first frame
 * times the grey frame, corners and pyramid (no Lucas-Kanade or fit: no
 * previous frame), the next ones every step, each above 0 and together no
 * more than the thread's CPU time around the call. */
static void gmc_step_times(void)
{
    int w = tl_int(160, 400), h = tl_int(120, 300), ww = w + 32;
    uint8_t *world = malloc((size_t)ww * (size_t)h * 3);
    strix_gmc *g = strix_gmc_create();
    if (!world || !g) {
        tl_fail("out of memory");
        free(world);
        strix_gmc_free(g);
        return;
    }
    uint64_t key = tl_u64();
    for (size_t i = 0; i < (size_t)ww * (size_t)h; i++) {
        uint64_t v = ((uint64_t)(i % (size_t)ww / 6) * 73856093u ^ (uint64_t)(i / (size_t)ww / 6) * 19349663u ^ key) *
                     0x9E3779B97F4A7C15ull;
        for (int c = 0; c < 3; c++) world[3 * i + (size_t)c] = (uint8_t)(v >> (16 * c + 8));
    }
    double H[6], t[GMC_NSTEPS];
    strix_gmc_apply(g, world, w, h, 3 * ww, 0, H);
    strix_gmc_step_times(g, t);
    for (int k = 0; k < GMC_NSTEPS; k++) TL_CHECK(t[k] == 0, "timing off: step %d took %g s", k, t[k]);
    strix_gmc_time_steps(g, 1);
    for (int f = 0; f < 3; f++) {
        if (f == 0) strix_gmc_apply(g, world, w + 2, h, 3 * ww, 0, H); /* a new size: a first frame again */
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        int rc = strix_gmc_apply(g, world + 3 * (f + 1), w, h, 3 * ww, 0, H);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        double total = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec), sum = 0;
        strix_gmc_step_times(g, t);
        TL_CHECK(rc == 0, "frame %d: rc %d", f, rc);
        for (int k = 0; k < GMC_NSTEPS; k++) {
            int ran = f > 0 || k < GMC_STEP_LK;
            TL_CHECK(ran ? t[k] > 0 : t[k] == 0, "%dx%d frame %d: step %d took %g s", w, h, f, k, t[k]);
            sum += t[k];
        }
        TL_CHECK(sum <= total, "%dx%d frame %d: steps %g s, the call %g s", w, h, f, sum, total);
    }
    strix_gmc_free(g);
    free(world);
}

/* ------------------------------------------------------ random streams */

/* K objects on separate horizontal lanes, constant velocity, detected every
 * frame with a little jitter: one identity each from the first frame,
 * MOTA = IDF1 = 1 against the truth. */
static void perfect_detections_keep_identities(void)
{
    for (int trial = 0; trial < 20; trial++) {
        int k = tl_int(1, 12), frames = tl_int(20, 120);
        float x[12], vx[12], w[12], h[12];
        for (int i = 0; i < k; i++) {
            x[i] = tl_uniform(0, 800);
            vx[i] = tl_uniform(-8, 8);
            w[i] = tl_uniform(30, 60);
            h[i] = tl_uniform(40, 50);
        }
        strix_track_options o;
        strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
        strix_tracker *t;
        strix_error e;
        TL_CHECK(!strix_tracker_create(&t, &o, &e), "%s", e.message);
        strix_mot_box *gt = malloc(sizeof *gt * (size_t)(k * frames)), *hyp = malloc(sizeof *hyp * (size_t)(k * frames));
        int first_id[12], ok = gt && hyp;
        long n = 0;
        for (int f = 0; f < frames && ok; f++) {
            strix_detection d[12];
            int ids[12];
            for (int i = 0; i < k; i++) {
                float cx = x[i] + vx[i] * f, cy = 60.0f + 70.0f * i; /* lanes 70 px apart: never overlapping */
                float jx = tl_uniform(-1, 1), jy = tl_uniform(-1, 1);
                d[i] = (strix_detection){cx + jx, cy + jy, cx + w[i] + jx, cy + h[i] + jy, tl_uniform(0.7f, 0.95f), 0};
                gt[n + i] = (strix_mot_box){f + 1, i + 1, cx, cy, w[i], h[i], 1};
            }
            if (strix_tracker_update(t, NULL, d, k, ids, &e)) {
                strix_tracker_free(t);
                free(gt);
                free(hyp);
                TL_CHECK(0, "%s", e.message);
            }
            for (int i = 0; i < k; i++, n++) {
                if (f == 0) first_id[i] = ids[i];
                ok &= ids[i] == first_id[i] && ids[i] == i + 1;
                hyp[n] = (strix_mot_box){f + 1, ids[i], d[i].x1, d[i].y1, d[i].x2 - d[i].x1, d[i].y2 - d[i].y1, 1};
            }
        }
        strix_tracker_free(t);
        strix_mot_metrics m;
        int bad = !ok || strix_mot_evaluate(gt, n, hyp, n, 0.5, &m, &e);
        free(gt);
        free(hyp);
        TL_CHECK(ok, "trial %d: identities changed or not 1..%d in detection order", trial, k);
        TL_CHECK(!bad, "%s", e.message);
        TL_CHECK(m.mota == 1 && m.idf1 == 1, "trial %d: MOTA %g IDF1 %g, want 1", trial, m.mota, m.idf1);
    }
}

static void lost_track_buffer(void)
{
    /* one object hidden for B frames comes back with its identity when B <=
     * the buffer (+1 frame: the reference drops a lost track a frame late),
     * with a new one after */
    for (int gap = 1; gap <= 14; gap++) {
        strix_track_options o;
        strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
        o.track_buffer = 10;
        strix_tracker *t;
        strix_error e;
        TL_CHECK(!strix_tracker_create(&t, &o, &e), "%s", e.message);
        int id0 = -2, id1 = -2, ids[1];
        for (int f = 0; f < 10 + gap + 3; f++) {
            int hidden = f >= 10 && f < 10 + gap;
            strix_detection d = {100.0f + f, 100, 150.0f + f, 200, 0.9f, 0};
            if (strix_tracker_update(t, NULL, &d, hidden ? 0 : 1, ids, &e)) break;
            if (f == 9) id0 = ids[0];
            if (f == 10 + gap + 2) id1 = ids[0];
        }
        strix_tracker_free(t);
        int same = gap <= 11;
        TL_CHECK(id0 == 1 && (same ? id1 == 1 : id1 > 1), "gap %d: identity %d then %d (%s)", gap, id0, id1,
                 same ? "want the same" : "want a new one");
    }
}

static void tracker_arguments(void)
{
    strix_track_options o;
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    strix_tracker *t = NULL;
    strix_error e;
    o.track_high_thresh = 1.5f;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "0..1"), "track_high_thresh 1.5");
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    o.track_buffer = -1;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG, "track_buffer -1");
    strix_track_options_init(&o, STRIX_TRACKER_OCSORT); /* ocsort.yaml's own keys */
    TL_CHECK(o.delta_t == 3 && o.inertia == 0.2f && !o.use_byte &&
                 !strcmp(strix_tracker_type_name(o.tracker_type), "ocsort"),
             "ocsort.yaml's defaults");
    o.delta_t = -1;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "delta_t"), "delta_t -1");
    strix_track_options_init(&o, STRIX_TRACKER_OCSORT);
    o.inertia = NAN;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "inertia"), "inertia NaN");
    strix_track_options_init(&o, STRIX_TRACKER_OCSORT);
    o.use_byte = 2;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "use_byte"), "use_byte 2");
    strix_track_options_init(&o, STRIX_TRACKER_DEEPOCSORT); /* deepocsort.yaml's own values */
    TL_CHECK(o.track_high_thresh == 0.3f && o.new_track_thresh == 0.3f && o.gmc_method == STRIX_GMC_NONE &&
                 o.appearance_thresh == 0.9f && o.alpha_fixed_emb == 0.95f && o.delta_t == 3 &&
                 !strcmp(strix_tracker_type_name(o.tracker_type), "deepocsort"),
             "deepocsort.yaml's defaults");
    strix_track_options_init(&o, STRIX_TRACKER_FASTTRACK); /* fasttrack.yaml's */
    TL_CHECK(o.reset_velocity_offset_occ == 5 && o.reset_pos_offset_occ == 3 && o.enlarge_bbox_occ == 1.1 &&
                 o.dampen_motion_occ == 0.5 && o.active_occ_to_lost_thresh == 10 && o.occ_cover_thresh == 0.7f &&
                 o.occ_reappear_window == 40 && o.init_iou_suppress == 0.7f && o.track_high_thresh == 0.25f &&
                 !strcmp(strix_tracker_type_name(o.tracker_type), "fasttrack"),
             "fasttrack.yaml's defaults");
    o.reset_pos_offset_occ = 101;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "reset_pos_offset_occ"),
             "reset_pos_offset_occ 101");
    strix_track_options_init(&o, STRIX_TRACKER_FASTTRACK);
    o.enlarge_bbox_occ = INFINITY;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "enlarge_bbox_occ"),
             "enlarge_bbox_occ inf");
    strix_track_options_init(&o, STRIX_TRACKER_FASTTRACK);
    o.occ_cover_thresh = -0.5f;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "occ_cover_thresh"),
             "occ_cover_thresh -0.5");
    strix_track_options_init(&o, STRIX_TRACKER_FASTTRACK);
    o.occ_reappear_window = -1;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "occ_reappear_window"),
             "occ_reappear_window -1");
    strix_track_options_init(&o, STRIX_TRACKER_TRACKTRACK); /* tracktrack.yaml's own keys */
    TL_CHECK(o.track_high_thresh == 0.6f && o.track_low_thresh == 0.25f && o.new_track_thresh == 0.7f &&
                 o.match_thresh == 0.7f && o.track_buffer == 30 && o.lost_match_thr == 0 && o.conf_weight == 0.1f &&
                 o.angle_weight == 0.05f && o.penalty_p == 0.2f && o.penalty_q == 0.4f && o.reduce_step == 0.05f &&
                 o.tai_thr == 0.55f && o.min_track_len == 3 && o.gmc_method == STRIX_GMC_SPARSE_OPTFLOW &&
                 !strcmp(strix_tracker_type_name(o.tracker_type), "tracktrack"),
             "tracktrack.yaml's defaults");
    o.angle_weight = -0.1f;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "angle_weight"),
             "angle_weight -0.1");
    strix_track_options_init(&o, STRIX_TRACKER_TRACKTRACK);
    o.tai_thr = 1.5f;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "tai_thr"), "tai_thr 1.5");
    strix_track_options_init(&o, STRIX_TRACKER_TRACKTRACK);
    o.min_track_len = -1;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "min_track_len"),
             "min_track_len -1");
    o.tracker_type = (strix_tracker_type)99;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG && !t && strstr(e.message, "tracker type 99"),
             "tracker type 99");
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "%s", e.message);
    strix_detection d = {10, 10, 20, 20, NAN, 0};
    int id;
    TL_CHECK(strix_tracker_update(t, NULL, &d, 1, &id, &e) == STRIX_E_ARG && strstr(e.message, "detection 0"),
             "a NaN score must be refused");
    TL_CHECK(strix_tracker_update(t, NULL, NULL, 0, NULL, &e) == STRIX_OK, "an empty frame is fine");
    strix_tracker_free(t);
    strix_tracker_free(NULL);
}

/* Boxes with no area (inverted, zero width, clipped into the padding) or a
 * non-finite corner are ignored and counted, never fail the frame; the
 * other detections are tracked as they would be without them. */
static void degenerate_boxes_ignored(void)
{
    strix_track_options o;
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    strix_tracker *t = NULL, *ref = NULL;
    strix_error e;
    TL_CHECK(!strix_tracker_create(&t, &o, &e) && !strix_tracker_create(&ref, &o, &e), "%s", e.message);
    if (!t || !ref) return;
    for (int f = 0; f < 5; f++) {
        float x = 10 + 3 * (float)f;
        strix_detection d[5] = {{10, 10, 5, 20, 0.9f, 0}, /* x2 < x1 */
                                {x, 40, x + 30, 80, 0.9f, 0}, /* the real object */
                                {0, 50, 0, 60, 0.8f, 0}, /* zero width */
                                {30, 70, 40, 70, 0.7f, 0}, /* zero height */
                                {INFINITY, 1, 2, NAN, 0.9f, 0}}; /* non-finite corners */
        int ids[5] = {7, 7, 7, 7, 7}, rid = 7;
        strix_status st = strix_tracker_update(t, NULL, d, 5, ids, &e);
        TL_CHECK(st == STRIX_OK, "frame %d: %s", f, st ? e.message : "");
        TL_CHECK(!strix_tracker_update(ref, NULL, &d[1], 1, &rid, &e), "reference frame %d", f);
        TL_CHECK(ids[0] == -1 && ids[2] == -1 && ids[3] == -1 && ids[4] == -1,
                 "frame %d: degenerate boxes got ids %d %d %d %d", f, ids[0], ids[2], ids[3], ids[4]);
        TL_CHECK(ids[1] == rid && ids[1] == 1, "frame %d: the object's id %d, %d without the degenerate boxes", f,
                 ids[1], rid);
    }
    TL_CHECK(strix_tracker_degenerate(t) == 20 && strix_tracker_degenerate(ref) == 0,
             "counted %ld and %ld (want 20, 0)", strix_tracker_degenerate(t), strix_tracker_degenerate(ref));
    strix_tracker_free(t);
    strix_tracker_free(ref);
}

/* ------------------------------------------------------------- counting */

static void counter_line_and_tracks(void)
{
    /* a line drawn left to right at y = 100: moving down crosses "in" */
    float line[4] = {0, 100, 200, 100};
    strix_counter *c;
    strix_error e;
    TL_CHECK(!strix_counter_create(&c, line, 3, &e), "%s", e.message);
    /* track 1 (dog, class 16) moves down across the line at x ~ 50, then back up;
     * track 2 (person) moves down at x ~ 300: beside the segment, no crossing;
     * track 3 touches the line (centre on it) and returns: no crossing */
    float y1[] = {60, 80, 95, 105, 120, 90, 70}, y3[] = {80, 90, 100, 90, 80, 70, 60};
    int ins = 0, outs = 0;
    for (int f = 0; f < 7; f++) {
        strix_detection d[3] = {{40, y1[f] - 10, 60, y1[f] + 10, 0.9f, f == 2 ? 0 : 16},
                                {290, y1[f] - 10, 310, y1[f] + 10, 0.8f, 0},
                                {120, y3[f] - 10, 140, y3[f] + 10, 0.7f, 0}};
        int ids[3] = {1, 2, 3};
        strix_crossing cr[3];
        int n;
        if (strix_counter_add(c, f, f / 25.0, d, ids, 3, cr, &n, &e)) break;
        for (int k = 0; k < n; k++) {
            TL_CHECK(cr[k].id == 1, "frame %d: track %d crossed", f, cr[k].id);
            ins += cr[k].in;
            outs += !cr[k].in;
            TL_CHECK(cr[k].in == (f == 3), "frame %d: direction %s", f, cr[k].in ? "in" : "out");
        }
    }
    int in, out;
    strix_counter_line(c, &in, &out);
    TL_CHECK(in == 1 && out == 1 && ins == 1 && outs == 1, "line: in %d out %d", in, out);
    const strix_track_info *t;
    int n = strix_counter_tracks(c, &t);
    TL_CHECK(n == 3 && t[0].id == 1 && t[0].class_id == 16 && t[0].frames == 7 && t[0].first == 0 && t[0].last == 6,
             "track 1: class %d frames %ld (%ld..%ld)", t[0].class_id, t[0].frames, t[0].first, t[0].last);
    TL_CHECK(t[0].line_in == 1 && t[0].line_out == 1 && t[1].line_in == 0 && t[2].line_in == 0, "per-track crossings");
    TL_CHECK(strix_counter_class_tracks(c, 0) == 2 && strix_counter_class_tracks(c, 16) == 1, "class counts");
    const float *xy;
    int k = strix_counter_trail(c, 1, 6, &xy);
    TL_CHECK(k == 3 && xy[1] == 120 && xy[3] == 90 && xy[5] == 70, "trail of 3: %d points", k);
    TL_CHECK(strix_counter_trail(c, 1, 9, &xy) == 0 && strix_counter_trail(c, 7, 6, &xy) == 0,
             "stale or unknown tracks have no trail");
    strix_counter_free(c);
    float same[4] = {5, 5, 5, 5};
    TL_CHECK(strix_counter_create(&c, same, 0, &e) == STRIX_E_ARG, "a line with two equal points must be refused");
}

/* ------------------------------------- TrackTrack's recovered detections */

#define LOOSE_MAX 64 /* detections a frame of loose.tracktrack.txt has at most */

/* One frame's rows of loose[_obb].tracktrack.txt from line li: detections
 * (tag "det") into d (obb: their xywhr into x), ref ids, ids without
 * recovered (nodel) and row boxes; then the recovered ones ("rec") after
 * them.  The next frame's line index, or -1. */
static int loose_frame(char **v, int nl, int li, int obb, strix_detection *d, float (*x)[5], int *nd, int *nr,
                       int *ref, int *nodel, float (*box)[5])
{
    *nd = *nr = 0;
    for (; li < nl && strncmp(v[li], "frame", 5); li++) {
        int rec = !strncmp(v[li], "rec", 3), k = *nd + *nr, nv = obb ? 5 : 4, used;
        char nod[16], b[32];
        const char *p = v[li] + 4;
        if (k == LOOSE_MAX) return -1;
        for (int q = 0; q < nv; q++, p += used)
            if (sscanf(p, "%f%n", &x[k][q], &used) != 1) return -1;
        if (sscanf(p, "%f %d %15s%n", &d[k].score, &ref[k], nod, &used) != 3) return -1;
        p += used;
        for (int q = 0; q < nv; q++, p += used) {
            if (sscanf(p, "%31s%n", b, &used) != 1) return -1;
            box[k][q] = strcmp(b, "-") ? strtof(b, NULL) : NAN;
        }
        d[k].x1 = x[k][0], d[k].y1 = x[k][1], d[k].x2 = x[k][2], d[k].y2 = x[k][3]; /* obb: unread */
        d[k].class_id = 0;
        nodel[k] = rec ? -1 : atoi(nod);
        if (rec) ++*nr;
        else if (*nr) return -1; /* detections first */
        else ++*nd;
    }
    return li;
}

/* TRACKTRACK given the boxes a looser NMS recovered (dets_del), on a stream
 * of people crossing whose detections and recovered boxes come from
 * Ultralytics' non_max_suppression (tests/golden/track/loose.tracktrack.txt,
 * loose_obb.tracktrack.txt with rotated boxes; tools/reference/loose_goldens.py):
 * strix_tracker_recovered then the update give every detection, and every
 * recovered one (strix_tracker_recovered_id, strix_tracker_box or _xywhr
 * at n + j), Ultralytics' identity and row box exactly; without them,
 * Ultralytics' identities without them (which differ: the recovered boxes
 * matter here). */
static void loose_stream(const char *path, int obb)
{
    FILE *f = fopen(path, "r");
    static char buf[1 << 17];
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    if (!len || len == sizeof buf - 1) {
        tl_fail("%s: cannot read it (or larger than %zu bytes)", path, sizeof buf - 1);
        return;
    }
    buf[len] = 0;
    static char *v[8192];
    int nl = 0;
    for (char *p = strtok(buf, "\n"); p && nl < 8192; p = strtok(NULL, "\n")) v[nl++] = p;
    strix_track_options o;
    strix_track_options_init(&o, STRIX_TRACKER_TRACKTRACK);
    strix_tracker *t = NULL, *plain = NULL;
    strix_error e;
    if (strix_tracker_create(&t, &o, &e) || strix_tracker_create(&plain, &o, &e)) {
        tl_fail("tracker: %s", e.message);
        return;
    }
    strix_detection d[LOOSE_MAX];
    int ref[LOOSE_MAX], nodel[LOOSE_MAX], ids[LOOSE_MAX], frames = 0, recovered_ids = 0, differ = 0, nv = obb ? 5 : 4;
    float box[LOOSE_MAX][5], x[LOOSE_MAX][5];
    for (int li = 0; li < nl && !tl_g.failed; frames++) {
        int nd, nr, next = loose_frame(v, nl, li + 1, obb, d, x, &nd, &nr, ref, nodel, box);
        if (next < 0 || strncmp(v[li], "frame", 5)) {
            tl_fail("%s: a bad line after line %d", path, li + 1);
            break;
        }
        li = next;
        if ((nr && strix_tracker_recovered(t, d + nd, obb ? x[nd] : NULL, nr, &e)) ||
            (obb ? strix_tracker_update_obb(t, NULL, NULL, 0, 0, d, x[0], nd, ids, &e)
                 : strix_tracker_update(t, NULL, d, nd, ids, &e))) {
            tl_fail("frame %d: %s", frames, e.message);
            break;
        }
        for (int i = 0; i < nd + nr && !tl_g.failed; i++) {
            int id = i < nd ? ids[i] : strix_tracker_recovered_id(t, i - nd);
            float b[5] = {NAN, NAN, NAN, NAN, NAN};
            int has = obb ? strix_tracker_box_xywhr(t, i, b) : strix_tracker_box(t, i, b);
            recovered_ids += i >= nd && id >= 0;
            if (id != ref[i] || has != !isnan(box[i][0]) || (has && memcmp(b, box[i], sizeof(float) * nv)))
                tl_fail("%s frame %d, %s %d: id %d box %.9g %.9g %.9g %.9g %.9g; Ultralytics id %d box %.9g %.9g "
                        "%.9g %.9g %.9g", path, frames, i < nd ? "detection" : "recovered", i < nd ? i : i - nd, id,
                        b[0], b[1], b[2], b[3], b[4], ref[i], box[i][0], box[i][1], box[i][2], box[i][3], box[i][4]);
        }
        if (obb ? strix_tracker_update_obb(plain, NULL, NULL, 0, 0, d, x[0], nd, ids, &e)
                : strix_tracker_update(plain, NULL, d, nd, ids, &e)) {
            tl_fail("frame %d: %s", frames, e.message);
            break;
        }
        for (int i = 0; i < nd && !tl_g.failed; i++) {
            differ += ids[i] != ref[i];
            TL_CHECK(ids[i] == nodel[i], "frame %d, detection %d without recovered: id %d, Ultralytics %d", frames,
                     i, ids[i], nodel[i]);
        }
    }
    TL_CHECK(frames == 80 && recovered_ids > 0 && differ > 0,
             "%s: %d frames (want 80), %d recovered with an identity, %d identities changed by them (want > 0 each)",
             path, frames, recovered_ids, differ);
    strix_tracker_free(t);
    strix_tracker_free(plain);
}

static void tracktrack_recovered_matches_ultralytics(void)
{
    loose_stream(GOLDEN "loose.tracktrack.txt", 0);
    if (!tl_g.failed) loose_stream(GOLDEN "loose_obb.tracktrack.txt", 1);
}

/* Only TrackTrack takes recovered detections; they are the next update's
 * only, and of that update's kind. */
static void recovered_arguments(void)
{
    strix_track_options o;
    strix_error e;
    strix_tracker *t = NULL;
    strix_detection r = {10, 10, 50, 90, 0.9f, 0};
    float xywhr[5] = {30, 50, 40, 80, 0};
    int ids[1];
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "bytetrack: %s", e.message);
    TL_CHECK(t && strix_tracker_recovered(t, &r, NULL, 1, &e) == STRIX_E_ARG, "bytetrack must refuse them");
    strix_tracker_free(t);
    strix_track_options_init(&o, STRIX_TRACKER_TRACKTRACK);
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "tracktrack: %s", e.message);
    if (!t) return;
    r.score = 1.5f;
    TL_CHECK(strix_tracker_recovered(t, &r, NULL, 1, &e) == STRIX_E_ARG, "a score outside 0..1 must be refused");
    r.score = 0.9f;
    TL_CHECK(!strix_tracker_recovered(t, &r, xywhr, 1, &e), "%s", e.message);
    TL_CHECK(strix_tracker_update(t, NULL, &r, 1, ids, &e) == STRIX_E_ARG, "oriented ones for an axis-aligned update");
    TL_CHECK(!strix_tracker_update(t, NULL, &r, 1, ids, &e) && strix_tracker_recovered_id(t, 0) == -1,
             "the refused update's recovered detections must not carry over: %s", e.message);
    strix_tracker_free(t);
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(assign_is_optimal);
    TL_RUN(assign_beats_greedy_at_a_crossing);
    TL_RUN(matches_ultralytics);
    TL_RUN(ocsort_matches_ultralytics);
    TL_RUN(fasttrack_matches_ultralytics);
    TL_RUN(deepocsort_matches_ultralytics);
    TL_RUN(tracktrack_matches_ultralytics);
    TL_RUN(tracktrack_recovered_matches_ultralytics);
    TL_RUN(recovered_arguments);
    TL_RUN(obb_matches_ultralytics);
    TL_RUN(obb_kind_is_fixed);
    TL_RUN(obb_angle_follows_turns);
    TL_RUN(gmc_beats_no_gmc);
    TL_RUN(gmc_recovers_camera_shift);
    TL_RUN(gmc_corner_guess_redone);
    TL_RUN(gmc_builds_agree);
    TL_RUN(gmc_grey_builds_agree);
    TL_RUN(gmc_grey_opencv5_golden);
    TL_RUN(gmc_grey_opencv5_golden_avx512);
    TL_RUN(gmc_ransac_matches_opencv);
    TL_RUN(track_grey_bands);
    TL_RUN(gmc_transforms_pinned);
    TL_RUN(gmc_wild_clips_match_opencv);
    TL_RUN(gmc_step_times);
    TL_RUN(perfect_detections_keep_identities);
    TL_RUN(lost_track_buffer);
    TL_RUN(tracker_arguments);
    TL_RUN(degenerate_boxes_ignored);
    TL_RUN(counter_line_and_tracks);
    TL_MAIN_END();
}
