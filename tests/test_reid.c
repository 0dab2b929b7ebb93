/* test_reid.c — ReID with model: auto: the detector's native features
 * (strix_model_keep_features, strix_model_features) and the appearance
 * cues of BoT-SORT, Deep OC-SORT and TrackTrack (with_reid,
 * engine/analytics/track_reid.c).
 *
 * References (tools/reference/reid_goldens.py):
 *   tests/golden/track/reid_dog.txt: Ultralytics 8.4.190's get_obj_feats
 *     (PyTorch) for the detections of dog.jpg by yolov8n with strix's
 *     synthetic weights (seed 7, conf 0.1): strix's features of the same
 *     detections must agree within FEAT_TOL (the convolutions' float32
 *     sums run in another order);
 *   tests/golden/track/reid.{jsonl,feat.txt,ids.txt}: strix's detections and
 *     features on the first 30 frames of vtest.avi, and the identities
 *     Ultralytics' BOTSORT, DeepOCSORT and TRACKTRACK (with_reid: True,
 *     model: auto) gave each detection fed them: strix's must be the same,
 *     exactly, and BOTSORT's tracked boxes bit-equal (the columns without
 *     camera-motion compensation; tests/cli_track.sh runs the GMC ones
 *     through infer);
 *   tests/golden/track/reid_cross.{jsonl,ids.txt}: a synthetic stream of
 *     look-alike boxes walking through each other, each detection's
 *     feature computed from its class_id (the object), frame and index
 *     (synth_feature, as the script computes it), with the same three
 *     trackers' identities.
 * Also TrackTrack's recovered detections from strix_model_detect
 * (strix_model_recovered) against its NMS at IoU 0.95.
 * Run from the repository root; dog.jpg from $STRIX_DATA or ../shared/data
 * (skipped when absent). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "postprocess.h"
#include "strix.h"
#include "testlib.h"

#define GOLDEN "tests/golden/track/"
#define DIM 64          /* yolov8n's features: min(64, 128, 256) */
#define FEAT_TOL 1e-4f  /* |strix - Ultralytics| <= FEAT_TOL x (1 + |Ultralytics|) */

/* ---------------------------------------------------- trackers vs golden */

/* A golden stream: NAME.jsonl, NAME.ids.txt with cols identity columns (the
 * first bot_box of them followed by its box), and the features from
 * NAME.feat.txt (dim floats a line) or, without one, synth_feature's. */
typedef struct stream {
    const char *name;
    int cols, dim, has_feat, bot_box;
} stream;

static const stream real = {"reid", 6, 64, 1, 1}, cross = {"reid_cross", 4, 16, 0, 0};

typedef struct column {
    const char *name;
    const stream *s;
    int col; /* in NAME.ids.txt, after frame and index */
    strix_tracker_type type;
    int reid, tt_low;
} column;

/* the columns without GMC (the golden's frames are not here) */
static const column columns[] = {
    {"botsort reid, gmc none", &real, 1, STRIX_TRACKER_BOTSORT, 1, 0},
    {"deepocsort reid", &real, 2, STRIX_TRACKER_DEEPOCSORT, 1, 0},
    {"tracktrack reid low thresholds, gmc none", &real, 4, STRIX_TRACKER_TRACKTRACK, 1, 1},
    {"botsort, gmc none, no reid", &real, 5, STRIX_TRACKER_BOTSORT, 0, 0},
    {"cross: botsort reid", &cross, 0, STRIX_TRACKER_BOTSORT, 1, 0},
    {"cross: deepocsort reid", &cross, 1, STRIX_TRACKER_DEEPOCSORT, 1, 0},
    {"cross: tracktrack reid", &cross, 2, STRIX_TRACKER_TRACKTRACK, 1, 0},
    {"cross: botsort, no reid", &cross, 3, STRIX_TRACKER_BOTSORT, 0, 0},
};

/* reid_goldens.py's hash and synth_feature: an object's look from its
 * class_id plus per-detection noise, every term exact in float32 */
static uint32_t hash32(uint32_t x)
{
    x *= 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return x;
}

static void synth_feature(int cls, long frame, int k, int dim, float *f)
{
    for (int j = 0; j < dim; j++) {
        float base = (float)(hash32((uint32_t)(cls * 64 + j)) >> 8) / 16777216.0f - 0.5f;
        float noise = (float)(hash32((uint32_t)(frame * 4096 + k * 64 + j + 0x5BD1E995)) >> 8) / 16777216.0f - 0.5f;
        f[j] = base + 0.25f * noise;
    }
}

/* The features of frame rec's detections into feats: from NAME.feat.txt
 * ("frame index f0 ..") or synth_feature.  0, or -1 (failed). */
static int frame_features(const stream *s, FILE *feat_f, const strix_jsonl_record *rec, float *feats)
{
    char line[2048];
    for (int i = 0; i < rec->n; i++) {
        if (!s->has_feat) {
            synth_feature(rec->dets[i].class_id, rec->frame, i, s->dim, feats + (size_t)i * s->dim);
            continue;
        }
        long fr;
        int k, n;
        const char *p = line;
        int ok = fgets(line, sizeof line, feat_f) && sscanf(p, "%ld %d%n", &fr, &k, &n) == 2 && fr == rec->frame &&
                 k == i;
        for (int q = 0; q < s->dim && ok; q++) {
            p += n;
            ok = sscanf(p, "%f%n", &feats[(size_t)i * s->dim + q], &n) == 1;
        }
        if (!ok) {
            tl_fail("%s.feat.txt: out of step at frame %ld detection %d", s->name, rec->frame, i);
            return -1;
        }
    }
    return 0;
}

/* One column over its golden stream: 0, or -1 (failed). */
static int run_column(const column *c, long *compared, long *differ, long *boxes, long *tracked)
{
    const stream *s = c->s;
    strix_error e;
    strix_jsonl_reader *rd = NULL;
    char path[256], line[2048];
    snprintf(path, sizeof path, GOLDEN "%s.ids.txt", s->name);
    FILE *ids_f = fopen(path, "r"), *feat_f = NULL;
    if (s->has_feat) {
        snprintf(path, sizeof path, GOLDEN "%s.feat.txt", s->name);
        feat_f = fopen(path, "r");
    }
    snprintf(path, sizeof path, GOLDEN "%s.jsonl", s->name);
    strix_tracker *t = NULL;
    int *ids = NULL, ids_cap = 0, rc = -1, got;
    float *feats = NULL;
    *compared = *differ = *boxes = *tracked = 0;
    strix_track_options o;
    strix_track_options_init(&o, c->type);
    o.with_reid = c->reid;
    o.gmc_method = STRIX_GMC_NONE;
    if (c->tt_low) { /* reid_goldens.py's TT_LOW */
        o.track_high_thresh = 0.3f;
        o.track_low_thresh = 0.2f;
        o.new_track_thresh = 0.4f;
    }
    if (!ids_f || (s->has_feat && (!feat_f || !fgets(line, sizeof line, feat_f))) ||
        strix_jsonl_open(&rd, path, &e) || strix_tracker_create(&t, &o, &e) || !fgets(line, sizeof line, ids_f)) {
        tl_fail("%s: cannot open the goldens or make the tracker", c->name);
        goto out;
    }
    strix_jsonl_record rec;
    while ((got = strix_jsonl_next(rd, &rec, &e)) > 0) {
        if (rec.n > ids_cap) {
            int *v = realloc(ids, sizeof *v * (size_t)rec.n);
            float *f = realloc(feats, sizeof *f * (size_t)s->dim * (size_t)rec.n);
            if (v) ids = v;
            if (f) feats = f;
            if (!v || !f) {
                tl_fail("out of memory");
                goto out;
            }
            ids_cap = rec.n;
        }
        if (frame_features(s, feat_f, &rec, feats)) goto out;
        if ((c->reid && strix_tracker_features(t, feats, rec.n, s->dim, &e)) ||
            strix_tracker_update(t, NULL, rec.dets, rec.n, ids, &e)) {
            tl_fail("%s frame %ld: %s", c->name, rec.frame, e.message);
            goto out;
        }
        for (int i = 0; i < rec.n; i++) { /* "frame index id x cols [x1 y1 x2 y2]" */
            long fr;
            int k, n, want = -2, v;
            const char *p = line;
            int ok = fgets(line, sizeof line, ids_f) && sscanf(p, "%ld %d%n", &fr, &k, &n) == 2 && fr == rec.frame &&
                     k == i;
            for (int q = 0; q < s->cols && ok; q++) {
                p += n;
                ok = sscanf(p, "%d%n", &v, &n) == 1;
                if (q == c->col) want = v;
            }
            char tok[4][32];
            p += n;
            if (!ok || (s->bot_box && sscanf(p, "%31s %31s %31s %31s", tok[0], tok[1], tok[2], tok[3]) != 4)) {
                tl_fail("%s.ids.txt: out of step at frame %ld detection %d", s->name, rec.frame, i);
                goto out;
            }
            (*compared)++;
            *tracked += want >= 0;
            if (ids[i] != want && (*differ)++ < 3)
                printf("  %s frame %ld detection %d (score %.3f): identity %d, Ultralytics %d\n", c->name, rec.frame,
                       i, (double)rec.dets[i].score, ids[i], want);
            float sb[4];
            if (!s->bot_box || c->col != s->bot_box || ids[i] != want || !strix_tracker_box(t, i, sb) ||
                !strcmp(tok[0], "-"))
                continue;
            (*boxes)++;
            for (int q = 0; q < 4; q++)
                if (sb[q] != strtof(tok[q], NULL)) {
                    tl_fail("%s frame %ld detection %d: box %.9g %.9g %.9g %.9g, Ultralytics %s %s %s %s", c->name,
                            rec.frame, i, (double)sb[0], (double)sb[1], (double)sb[2], (double)sb[3], tok[0], tok[1],
                            tok[2], tok[3]);
                    goto out;
                }
        }
    }
    if (got < 0) tl_fail("%s", e.message);
    else rc = 0;
out:
    if (ids_f) fclose(ids_f);
    if (feat_f) fclose(feat_f);
    strix_jsonl_close(rd);
    strix_tracker_free(t);
    free(ids);
    free(feats);
    return rc;
}

/* Every identity (and BoT-SORT's tracked boxes on the real footage) equal to Ultralytics'. */
static void trackers_match_ultralytics(void)
{
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++) {
        long n, d, b, tracked;
        if (run_column(&columns[i], &n, &d, &b, &tracked)) return;
        printf("  %-42s %ld detections (%ld tracked by Ultralytics), %ld identities differ, %ld boxes compared\n",
               columns[i].name, n, tracked, d, b);
        TL_CHECK(!d, "%s: %ld of %ld identities differ from Ultralytics'", columns[i].name, d, n);
        TL_CHECK(tracked >= 30, "%s: only %ld tracked detections: a weak golden", columns[i].name, tracked);
        TL_CHECK(!columns[i].s->bot_box || columns[i].col != columns[i].s->bot_box || b >= 30,
                 "%s: only %ld boxes compared", columns[i].name, b);
    }
}

/* ------------------------------------------------------- native features */

static char g_tmpdir[64];

/* yolov8n with the goldens' synthetic weights (seed 7); NULL after tl_fail. */
/* weights/NAME.yaml at scale n with strix's synthetic weights (seed 7). */
static strix_model *load_synthetic(const char *name)
{
    strix_model_options o;
    strix_model_options_init(&o);
    char ypath[128], wpath[128];
    snprintf(ypath, sizeof ypath, "weights/%s.yaml", name);
    o.yaml_path = ypath;
    o.scale = 'n';
    o.threads = 2;
    strix_model *m = NULL;
    strix_error e;
    snprintf(wpath, sizeof wpath, "%s/%s.safetensors", g_tmpdir, name);
    if (access(wpath, F_OK)) {
        strix_status st = strix_model_load(&m, &o, &e);
        if (!st) st = strix_model_write_synthetic_weights(m, wpath, 7, 0, 0, 1, &e);
        strix_model_free(m);
        m = NULL;
        if (st) {
            tl_fail("%s", e.message);
            return NULL;
        }
    }
    o.weights_path = wpath;
    if (strix_model_load(&m, &o, &e)) tl_fail("%s", e.message);
    return m;
}

static strix_model *load_yolov8n(void) { return load_synthetic("yolov8"); }

/* strix's features of the golden detections of dog.jpg equal Ultralytics'
 * get_obj_feats within FEAT_TOL. */
static void features_match_ultralytics(void)
{
    char path[512];
    const char *dir = getenv("STRIX_DATA") ? getenv("STRIX_DATA") : "../shared/data";
    snprintf(path, sizeof path, "%s/dog.jpg", dir);
    if (access(path, R_OK)) {
        tl_skip("%s is absent (the project's sample media; set STRIX_DATA)", path);
        return;
    }
    FILE *g = fopen(GOLDEN "reid_dog.txt", "r");
    TL_CHECK(g, GOLDEN "reid_dog.txt: cannot open it");
    strix_model *m = load_yolov8n();
    strix_owned_image img = {0};
    strix_error e;
    if (!m || strix_image_load(path, 0, &img, &e)) {
        if (m) tl_fail("%s", e.message);
        fclose(g);
        strix_model_free(m);
        return;
    }
    strix_detect_options d;
    strix_detect_options_init(&d);
    d.conf = 0.1f;
    strix_image v = strix_image_view(&img);
    strix_detections r;
    strix_task_values tv;
    int compared = 0;
    float worst = 0;
    char line[4096];
    if (strix_model_keep_features(m, 1, &e) || strix_model_detect(m, &v, 1, &d, &r, &e) ||
        strix_model_features(m, 0, &tv, &e)) {
        tl_fail("%s", e.message);
        goto out;
    }
    if (tv.count != r.count || tv.stride != DIM) {
        tl_fail("%d features of %d floats for %d detections", tv.count, tv.stride, r.count);
        goto out;
    }
    if (!fgets(line, sizeof line, g)) goto out;
    while (fgets(line, sizeof line, g)) {
        float b[5], f[DIM];
        int k, n;
        const char *p = line;
        int ok = sscanf(p, "%d %f %f %f %f %f%n", &k, &b[0], &b[1], &b[2], &b[3], &b[4], &n) == 6;
        for (int q = 0; q < DIM && ok; q++) {
            p += n;
            ok = sscanf(p, "%f%n", &f[q], &n) == 1;
        }
        if (!ok) {
            tl_fail("reid_dog.txt: bad line %d", compared + 2);
            goto out;
        }
        /* the same detection: the box within a pixel, the score within 1e-3 (near ties may swap places) */
        int j = -1;
        for (int i = 0; i < r.count && j < 0; i++) {
            const strix_detection *x = &r.items[i];
            if (fabsf(x->x1 - b[0]) < 1 && fabsf(x->y1 - b[1]) < 1 && fabsf(x->x2 - b[2]) < 1 &&
                fabsf(x->y2 - b[3]) < 1 && fabsf(x->score - b[4]) < 1e-3f)
                j = i;
        }
        if (j < 0) {
            tl_fail("Ultralytics' detection %d (%g %g %g %g, %g) is not among strix's %d", k, (double)b[0],
                    (double)b[1], (double)b[2], (double)b[3], (double)b[4], r.count);
            goto out;
        }
        for (int q = 0; q < DIM; q++) {
            float s = tv.values[j * DIM + q], off = fabsf(s - f[q]) / (1 + fabsf(f[q]));
            worst = fmaxf(worst, off);
            if (!(off <= FEAT_TOL)) {
                tl_fail("detection %d feature %d: strix %.7g, Ultralytics %.7g", k, q, (double)s, (double)f[q]);
                goto out;
            }
        }
        compared++;
    }
    printf("  %d detections' features compared, worst |difference| / (1 + |Ultralytics|) %.2g\n", compared,
           (double)worst);
    if (compared < 20) tl_fail("only %d detections compared", compared);
out:
    fclose(g);
    strix_image_free(&img);
    strix_model_free(m);
}

enum { PW = 96, PH = 64 }; /* the random pictures' size */

/* Two random PW x PH pictures, fresh each run, in px, as im; d: the
 * default options at conf 0.05 and imgsz 96 (random weights find boxes). */
static void random_pictures(uint8_t (*px)[PW * PH * 3], strix_image im[2], strix_detect_options *d)
{
    for (int i = 0; i < 2; i++) {
        for (int q = 0; q < PW * PH * 3; q++) px[i][q] = (uint8_t)tl_int(0, 255);
        im[i] = (strix_image){.data = px[i], .width = PW, .height = PH};
    }
    strix_detect_options_init(d);
    d->conf = 0.05f;
    d->imgsz = 96;
}

/* The features of a batch are each image's alone, count for count; off
 * again, none; the calls' refusals. */
static void feature_calls(void)
{
    strix_model *m = load_yolov8n();
    if (!m) return;
    strix_error e;
    strix_task_values tv;
    TL_CHECK(strix_model_features(m, 0, &tv, &e) == STRIX_E_ARG, "features before keep_features: not refused");
    static uint8_t px[2][PW * PH * 3];
    strix_image im[2];
    strix_detect_options d;
    random_pictures(px, im, &d);
    strix_detections r[2];
    float *one = NULL;
    int n1 = 0;
    if (strix_model_keep_features(m, 1, &e) || strix_model_detect(m, &im[1], 1, &d, r, &e) ||
        strix_model_features(m, 0, &tv, &e)) {
        tl_fail("%s", e.message);
        goto out;
    }
    n1 = tv.count;
    if (!(one = malloc(sizeof *one * DIM * (size_t)(n1 + 1)))) goto out;
    memcpy(one, tv.values, sizeof *one * DIM * (size_t)n1);
    if (strix_model_detect(m, im, 2, &d, r, &e) || strix_model_features(m, 1, &tv, &e)) {
        tl_fail("%s", e.message);
        goto out;
    }
    if (tv.count != r[1].count || tv.count != n1 || memcmp(tv.values, one, sizeof *one * DIM * (size_t)n1)) {
        tl_fail("image 1's %d features in a batch of 2 differ from its %d alone", tv.count, n1);
        goto out;
    }
    if (strix_model_features(m, 2, &tv, &e) != STRIX_E_ARG) {
        tl_fail("image 2 of a batch of 2: not refused");
        goto out;
    }
    strix_batch *b = NULL;
    if (strix_model_submit(m, im, 1, &d, &b, &e) != STRIX_E_UNSUPPORTED) {
        tl_fail("submit while keeping features: not refused");
        strix_batch_release(b);
        goto out;
    }
    if (strix_model_keep_features(m, 0, &e) || strix_model_detect(m, im, 1, &d, r, &e) ||
        strix_model_features(m, 0, &tv, &e) != STRIX_E_ARG)
        tl_fail("features after keep_features(0): not refused");
    printf("  %d detections with features in a %dx%d picture\n", n1, PW, PH);
out:
    free(one);
    strix_model_free(m);
    /* an end-to-end head (YOLO26): Ultralytics runs a separate ReID model then */
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = "weights/yolo26.yaml";
    o.scale = 'n';
    if (tl_g.failed || strix_model_load(&m, &o, &e)) {
        if (!tl_g.failed) tl_fail("%s", e.message);
        return;
    }
    strix_status st = strix_model_keep_features(m, 1, &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_E_UNSUPPORTED && strstr(e.message, "separate ReID model"),
             "YOLO26's end-to-end head: %s", st ? e.message : "not refused");
}

/* TrackTrack's recovered detections through strix_model_detect (detect
 * and obb models, two fresh random pictures in one batch): each image's
 * are its detections at IoU 0.95 less those within IoU 0.97 of its
 * detections at 0.7 (strix_recovered_dedup, checked against Ultralytics
 * in test_tasks), boxes and obb xywhr as the detections'; the refusals. */
static void recovered_calls(void)
{
    const char *models[] = {"yolov8", "yolov8-obb"};
    enum { MAXD = 300 };
    static uint8_t px[2][PW * PH * 3];
    static strix_detection tight[2][MAXD], loose[2][MAXD];
    static float tx[2][MAXD * 5], lx[2][MAXD * 5];
    int total = 0;
    for (int mi = 0; mi < 2 && !tl_g.failed; mi++) {
        strix_model *m = load_synthetic(models[mi]);
        if (!m) return;
        const int obb = mi == 1;
        strix_error e;
        strix_image im[2];
        strix_detect_options d;
        random_pictures(px, im, &d);
        strix_detections r[2], rec;
        strix_task_values tv, rv;
        int nt[2], nl[2];
        d.iou = 0.95f;
        if (strix_model_detect(m, im, 2, &d, r, &e)) goto fail;
        for (int i = 0; i < 2; i++) {
            nl[i] = r[i].count;
            memcpy(loose[i], r[i].items, sizeof *r[i].items * (size_t)nl[i]);
            if (obb && strix_model_task_values(m, i, &tv, &e)) goto fail;
            if (obb) memcpy(lx[i], tv.values, sizeof(float) * 5 * (size_t)nl[i]);
        }
        TL_CHECK(strix_model_recovered(m, 0, &rec, NULL, &e) == STRIX_E_ARG, "recovered without asking: not refused");
        d.iou = 0.7f;
        d.recovered = 1;
        if (strix_model_detect(m, im, 2, &d, r, &e)) goto fail;
        for (int i = 0; i < 2 && !tl_g.failed; i++) {
            nt[i] = r[i].count;
            memcpy(tight[i], r[i].items, sizeof *r[i].items * (size_t)nt[i]);
            if (obb && strix_model_task_values(m, i, &tv, &e)) goto fail;
            if (obb) memcpy(tx[i], tv.values, sizeof(float) * 5 * (size_t)nt[i]);
            int want = strix_recovered_dedup(loose[i], obb ? lx[i] : NULL, nl[i], tight[i], obb ? tx[i] : NULL, nt[i]);
            if (strix_model_recovered(m, i, &rec, &rv, &e)) goto fail;
            total += rec.count;
            TL_CHECK(rec.count == want && !memcmp(rec.items, loose[i], sizeof *rec.items * (size_t)want) &&
                         (obb ? rv.count == want && rv.stride == 5 &&
                                    !memcmp(rv.values, lx[i], sizeof(float) * 5 * (size_t)want)
                              : !rv.values),
                     "%s image %d: %d recovered of %d at IoU 0.95 (%d at 0.7); want %d", models[mi], i, rec.count,
                     nl[i], nt[i], want);
        }
        TL_CHECK(strix_model_recovered(m, 2, &rec, NULL, &e) == STRIX_E_ARG, "image 2 of a batch of 2: not refused");
        strix_batch *b = NULL;
        TL_CHECK(strix_model_submit(m, im, 1, &d, &b, &e) == STRIX_E_UNSUPPORTED,
                 "submit with recovered: not refused");
        strix_batch_release(b);
        strix_model_free(m);
        continue;
    fail:
        tl_fail("%s: %s", models[mi], e.message);
        strix_model_free(m);
    }
    TL_CHECK(total > 0, "no recovered detections in any picture: nothing was compared");
    printf("  %d recovered detections compared\n", total);
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = "weights/yolov8-seg.yaml";
    o.scale = 'n';
    strix_model *m = NULL;
    strix_error e;
    if (tl_g.failed || strix_model_load(&m, &o, &e)) {
        if (!tl_g.failed) tl_fail("%s", e.message);
        return;
    }
    uint8_t p[32 * 32 * 3] = {0};
    strix_image one = {.data = p, .width = 32, .height = 32};
    strix_detect_options d;
    strix_detect_options_init(&d);
    d.recovered = 1;
    strix_detections r;
    strix_status st = strix_model_detect(m, &one, 1, &d, &r, &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_E_ARG, "recovered from a segment model: not refused");
}

/* What the tracker refuses of the features it is given. */
static void tracker_feature_checks(void)
{
    strix_track_options o;
    strix_track_options_init(&o, STRIX_TRACKER_BYTETRACK);
    o.with_reid = 1;
    strix_tracker *t = NULL;
    strix_error e;
    TL_CHECK(strix_tracker_create(&t, &o, &e) == STRIX_E_ARG, "with_reid on ByteTrack: not refused");
    strix_track_options_init(&o, STRIX_TRACKER_BOTSORT);
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "%s", e.message);
    float f[2 * 8];
    for (int i = 0; i < 16; i++) f[i] = tl_uniform(-1, 1);
    strix_status st = strix_tracker_features(t, f, 2, 8, &e);
    strix_tracker_free(t);
    TL_CHECK(st == STRIX_E_ARG, "features to a tracker without with_reid: not refused");
    o.with_reid = 1;
    TL_CHECK(!strix_tracker_create(&t, &o, &e), "%s", e.message);
    strix_detection d[2] = {{10, 10, 50, 90, 0.9f, 0}, {200, 10, 240, 90, 0.8f, 0}};
    int ids[2];
    int ok = !strix_tracker_features(t, f, 2, 8, &e) && !strix_tracker_update(t, NULL, d, 2, ids, &e);
    ok = ok && strix_tracker_features(t, f, 2, 4, &e) == STRIX_E_ARG;  /* another length */
    ok = ok && !strix_tracker_features(t, f, 1, 8, &e) && strix_tracker_update(t, NULL, d, 2, ids, &e) == STRIX_E_ARG;
    ok = ok && !strix_tracker_update(t, NULL, d, 2, ids, &e); /* no features: featureless detections */
    f[3] = NAN;
    ok = ok && strix_tracker_features(t, f, 2, 8, &e) == STRIX_E_ARG;
    strix_tracker_free(t);
    TL_CHECK(ok, "a bad feature call was not refused, or a good one was: %s", e.message);
}

int main(int argc, char **argv)
{
    tl_init();
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/strix-reid-XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        printf("FAIL reid_tmpdir: cannot create a temporary directory\n");
        return 1;
    }
    TL_RUN(trackers_match_ultralytics);
    TL_RUN(features_match_ultralytics);
    TL_RUN(feature_calls);
    TL_RUN(recovered_calls);
    TL_RUN(tracker_feature_checks);
    const char *written[] = {"yolov8", "yolov8-obb"}; /* load_synthetic's weights */
    for (int i = 0; i < 2; i++) {
        char wpath[128];
        snprintf(wpath, sizeof wpath, "%s/%s.safetensors", g_tmpdir, written[i]);
        unlink(wpath);
    }
    rmdir(g_tmpdir);
    TL_MAIN_END();
}
