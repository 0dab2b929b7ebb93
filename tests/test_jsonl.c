/* test_jsonl.c — the JSON Lines reader (loaders/jsonl.h): lines written
 * exactly as tools/infer.c writes them (its string and float writers are
 * copied here) read back bit-exactly, with names holding quotes,
 * backslashes, control characters, UTF-8 and invalid bytes; every \u
 * escape form; compact JSON and whitespace everywhere; unknown keys with
 * nested values; key order; track_id present, absent, null; empty
 * detections; the task fields (segments, keypoints, obb, detection_obb,
 * probs) and their errors; CRLF, blank lines, a byte order mark, a missing final newline;
 * 5000 detections on one line; every error with its exact "path:line: "
 * (and the detection or the column where there is one); and random files
 * (random formatting, key order, escapes and unknown keys) read back
 * bit-exactly.  Files live in a fresh mkdtemp directory, removed at the end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "testlib.h"

static char g_dir[64];
static char g_path[128]; /* the file the current test writes */

static const char *put_file(const char *name, const char *content, size_t len)
{
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, name);
    FILE *f = fopen(g_path, "wb");
    if (!f) return NULL;
    int ok = fwrite(content, 1, len, f) == len;
    return fclose(f) == 0 && ok ? g_path : NULL;
}

/* ------------------------------------------------------------ helpers */

static int same_float(float a, float b) { return !memcmp(&a, &b, sizeof a); }
static int same_double(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static int same_det(const strix_detection *a, const strix_detection *b)
{
    return same_float(a->x1, b->x1) && same_float(a->y1, b->y1) && same_float(a->x2, b->x2) &&
           same_float(a->y2, b->y2) && same_float(a->score, b->score) && a->class_id == b->class_id;
}

/* Opens `content` as a file and reads `n` records into g.  With keep NULL
 * the reader is closed after checking that no record follows (returns 0,
 * else 1); with keep it stays open at record n (returns 1).  -1: next()
 * failed; -2: the file could not be written or opened. */
typedef struct got {
    long frame;
    double pts;
    int inferred, n;
    strix_detection d[8];
    int track[8];
} got;

static int read_n(const char *content, got *g, int n, strix_jsonl_reader **keep, strix_error *e)
{
    const char *path = put_file("t.jsonl", content, strlen(content));
    strix_jsonl_reader *r;
    if (!path || strix_jsonl_open(&r, path, e) != STRIX_OK) return -2;
    int rc = 1;
    for (int i = 0; i < n && rc == 1; i++) {
        strix_jsonl_record rec;
        rc = strix_jsonl_next(r, &rec, e);
        if (rc != 1) break;
        g[i].frame = rec.frame;
        g[i].pts = rec.pts;
        g[i].inferred = rec.inferred;
        g[i].n = rec.n;
        for (int k = 0; k < rec.n && k < 8; k++) {
            g[i].d[k] = rec.dets[k];
            g[i].track[k] = rec.track_ids[k];
        }
    }
    if (rc == 1 && !keep) {
        strix_jsonl_record rec;
        rc = strix_jsonl_next(r, &rec, e) == 0 ? 0 : 1; /* 0: exactly n records */
    }
    if (keep)
        *keep = r;
    else
        strix_jsonl_close(r);
    return rc;
}

/* ------------------------------------------------------------- tests */

static void test_infer_format(void)
{
    /* class names with everything json_str escapes; 7: an invalid byte and
     * a truncated sequence, written as U+FFFD */
    const char *names[8] = {"person", "say \"hi\"", "back\\slash/", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
                            "\xf0\x9f\x98\x80 emoji", "tab\there\x01\x1f", "\x7f del", "bad\xff\xe6\x97"};
    const char *want[8] = {"person", "say \"hi\"", "back\\slash/", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
                           "\xf0\x9f\x98\x80 emoji", "tab\there\x01\x1f", "\x7f del",
                           "bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"};
    snprintf(g_path, sizeof g_path, "%s/infer.jsonl", g_dir);
    FILE *f = fopen(g_path, "wb");
    TL_CHECK(f, "cannot write %s", g_path);
    strix_detection d[8][3];
    double pts[8];
    for (int i = 0; i < 8; i++) {
        pts[i] = i * (1001.0 / 30000.0);
        int nd = i == 3 ? 0 : 1 + i % 3; /* classes 0..7 all met, frame 3 empty */
        for (int k = 0; k < nd; k++) {
            strix_detection b = {tl_uniform(0, 640), tl_uniform(0, 480), tl_uniform(0, 640), tl_uniform(0, 480),
                                 tl_uniform(0.25f, 1), (i + k) % 8};
            d[i][k] = b;
        }
        /* as video_write does */
        fprintf(f, "{\"frame\": %d, \"pts\": ", i * 2);
        strix_json_double(f, pts[i]);
        fprintf(f, ", \"inferred\": %s, \"detections\": [", i % 2 ? "false" : "true");
        for (int k = 0; k < nd; k++) {
            const strix_detection *b = &d[i][k];
            fprintf(f, "%s{\"class_id\": %d, \"class_name\": ", k ? ", " : "", b->class_id);
            strix_json_str(f, names[b->class_id]);
            fputs(", \"score\": ", f);
            strix_json_float(f, b->score);
            fputs(", \"box\": [", f);
            strix_json_float(f, b->x1);
            fputs(", ", f);
            strix_json_float(f, b->y1);
            fputs(", ", f);
            strix_json_float(f, b->x2);
            fputs(", ", f);
            strix_json_float(f, b->y2);
            fputs("]}", f);
        }
        fputs("]}\n", f);
    }
    TL_CHECK(fclose(f) == 0, "write failed");
    strix_jsonl_reader *r;
    strix_error e = {STRIX_OK, ""};
    TL_CHECK(strix_jsonl_open(&r, g_path, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(strix_jsonl_class_count(r) == 0 && !strix_jsonl_class_name(r, 0), "names before reading");
    strix_jsonl_record rec;
    for (int i = 0; i < 8; i++) {
        int rc = strix_jsonl_next(r, &rec, &e);
        int nd = i == 3 ? 0 : 1 + i % 3;
        int ok = rc == 1 && rec.frame == i * 2 && same_double(rec.pts, pts[i]) && rec.inferred == !(i % 2) &&
                 rec.n == nd;
        for (int k = 0; ok && k < nd; k++) ok = same_det(&rec.dets[k], &d[i][k]) && rec.track_ids[k] == -1;
        if (!ok) {
            tl_fail("record %d differs (rc %d: %s)", i, rc, rc < 0 ? e.message : "");
            strix_jsonl_close(r);
            return;
        }
    }
    int end = strix_jsonl_next(r, &rec, &e), again = strix_jsonl_next(r, &rec, &e);
    int count = strix_jsonl_class_count(r), names_ok = 1;
    for (int c = 0; c < 8; c++) {
        const char *n = strix_jsonl_class_name(r, c);
        if (!n || strcmp(n, want[c])) names_ok = 0;
    }
    int out_of_range = !strix_jsonl_class_name(r, -1) && !strix_jsonl_class_name(r, 8) &&
                       !strix_jsonl_class_name(r, 1 << 30);
    strix_jsonl_close(r);
    TL_CHECK(end == 0 && again == 0, "end of file: %d then %d", end, again);
    TL_CHECK(count == 8, "class_count %d", count);
    TL_CHECK(names_ok, "class names differ");
    TL_CHECK(out_of_range, "names out of range");
}

/* A column "k": [v0, v1, ...] of n floats stride apart, as infer writes it. */
static void put_column(FILE *f, const char *key, const float *v, int n, int stride)
{
    fprintf(f, "\"%s\": [", key);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        strix_json_float(f, v[i * stride]);
    }
    fputc(']', f);
}

static void put_corners(FILE *f, const char *key, const float *c)
{
    fprintf(f, ", \"%s\": {", key);
    for (int k = 0; k < 8; k++) {
        fprintf(f, "%s\"%c%d\": ", k ? ", " : "", k % 2 ? 'y' : 'x', k / 2 + 1);
        strix_json_float(f, c[k]);
    }
    fputc('}', f);
}

/* The task fields as infer's task_writers.c writes them, random values read
 * back bit-exactly: segments (a polygon of 0 points too), keypoints (a
 * frame without detections between), obb with and without
 * "detection_obb", classify's probs (their names join the class names);
 * then the keypoint shape (with "visible" or without) held across
 * detections and lines. */
static void test_task_fields(void)
{
    enum { N = 3, P = 6 };
    float v[N][3 * P], ob[N][8], rob[N][8], conf[5];
    int np[N] = {P, 0, 4};
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 3 * P; k++) v[i][k] = tl_uniform(-100, 900);
        for (int k = 0; k < 8; k++) ob[i][k] = tl_uniform(-50, 700), rob[i][k] = tl_uniform(-50, 700);
    }
    for (int k = 0; k < 5; k++) conf[k] = tl_uniform(0, 1);
    static const char *const tasks[4] = {"seg", "pose", "obb", "cls"};
    for (int t = 0; t < 4 && !tl_g.failed; t++) {
        snprintf(g_path, sizeof g_path, "%s/t.jsonl", g_dir);
        FILE *f = fopen(g_path, "wb");
        TL_CHECK(f, "cannot write %s", g_path);
        for (int line = 0; line < 3; line++) {
            int nd = t == 3 || line == 1 ? 0 : N;
            fprintf(f, "{\"frame\": %d, \"pts\": %d, \"detections\": [", line, line);
            for (int i = 0; i < nd; i++) {
                fprintf(f, "%s{\"class_id\": %d, \"score\": 0.5, \"box\": [1, 2, 3, 4]", i ? ", " : "", i);
                if (t == 0) {
                    fputs(", \"segments\": {", f);
                    put_column(f, "x", v[i], np[i], 2);
                    fputs(", \"junk\": [{}], ", f);
                    put_column(f, "y", v[i] + 1, np[i], 2);
                    fputs("}", f);
                } else if (t == 1) {
                    int kd = 3;
                    fputs(", \"keypoints\": {", f);
                    put_column(f, "x", v[i], P, kd);
                    fputs(", ", f);
                    put_column(f, "y", v[i] + 1, P, kd);
                    if (kd == 3) {
                        fputs(", ", f);
                        put_column(f, "visible", v[i] + 2, P, kd);
                    }
                    fputs("}", f);
                } else {
                    put_corners(f, "obb", ob[i]);
                    if (i != 1) put_corners(f, "detection_obb", rob[i]);
                }
                fputs("}", f);
            }
            fputs("]", f);
            if (t == 3) {
                fputs(", \"probs\": [", f);
                for (int k = 0; k < 5; k++) {
                    fprintf(f, "%s{\"name\": \"c%d\", \"class\": %d, \"confidence\": ", k ? ", " : "", 7 - k, 7 - k);
                    strix_json_float(f, conf[k]);
                    fputs("}", f);
                }
                fputs("]", f);
            }
            fputs("}\n", f);
        }
        TL_CHECK(fclose(f) == 0, "write failed");
        strix_jsonl_reader *r;
        strix_error e = {STRIX_OK, ""};
        TL_CHECK(strix_jsonl_open(&r, g_path, &e) == STRIX_OK, "%s", e.message);
        for (int line = 0; line < 3 && !tl_g.failed; line++) {
            strix_jsonl_record rec;
            int rc = strix_jsonl_next(r, &rec, &e), nd = t == 3 || line == 1 ? 0 : N, ok = rc == 1 && rec.n == nd;
            strix_task want = nd == 0 && t != 3 ? STRIX_TASK_DETECT
                              : (strix_task[]){STRIX_TASK_SEGMENT, STRIX_TASK_POSE, STRIX_TASK_OBB, STRIX_TASK_CLASSIFY}[t];
            ok = ok && rec.task == want;
            int kd = 3;
            if (ok && t == 1 && nd) ok = rec.nk == P && rec.kd == kd;
            for (int i = 0; ok && i < nd; i++) {
                if (t == 0) {
                    ok = rec.seg_at[i + 1] - rec.seg_at[i] == np[i];
                    for (int k = 0; ok && k < 2 * np[i]; k++) ok = same_float(rec.seg_xy[2 * rec.seg_at[i] + k], v[i][k]);
                } else if (t == 1) {
                    for (int k = 0; ok && k < P * kd; k++) ok = same_float(rec.kpts[i * P * kd + k], v[i][k]);
                } else {
                    for (int k = 0; ok && k < 8; k++)
                        ok = same_float(rec.obb[8 * i + k], ob[i][k]) &&
                             same_float(rec.raw_obb[8 * i + k], i == 1 ? ob[i][k] : rob[i][k]);
                }
            }
            if (ok && t == 3) {
                ok = rec.n_probs == 5;
                for (int k = 0; ok && k < 5; k++) ok = rec.prob_class[k] == 7 - k && same_float(rec.prob_conf[k], conf[k]);
                const char *n3 = strix_jsonl_class_name(r, 3);
                ok = ok && n3 && !strcmp(n3, "c3") && strix_jsonl_class_count(r) == 8;
            }
            if (!ok) tl_fail("%s line %d differs (rc %d: %s)", tasks[t], line + 1, rc, rc < 0 ? e.message : "");
        }
        strix_jsonl_close(r);
    }
    /* pose: the keypoint shape, detection to detection and line to line */
    static const struct {
        const char *text, *want;
    } shape[2] = {
        {"{\"frame\": 0, \"pts\": 0, \"detections\": ["
         "{\"class_id\": 0, \"score\": 1, \"box\": [1, 2, 3, 4], \"keypoints\": {\"x\": [1], \"y\": [2], \"visible\": [1]}}, "
         "{\"class_id\": 0, \"score\": 1, \"box\": [1, 2, 3, 4], \"keypoints\": {\"x\": [1, 2], \"y\": [2, 3]}}]}\n",
         ":1: detection 1: \"keypoints\" has 2 points of 2 values but detection 0 has 1 of 3 (one shape per file)"},
        {"{\"frame\": 0, \"pts\": 0, \"detections\": ["
         "{\"class_id\": 0, \"score\": 1, \"box\": [1, 2, 3, 4], \"keypoints\": {\"x\": [1], \"y\": [2]}}]}\n"
         "{\"frame\": 1, \"pts\": 0, \"detections\": ["
         "{\"class_id\": 0, \"score\": 1, \"box\": [1, 2, 3, 4], \"keypoints\": {\"x\": [1, 2], \"y\": [2, 3]}}]}\n",
         ":2: \"keypoints\" have 2 points of 2 values but 1 of 2 on line 1 (one shape per file)"},
    };
    for (int c = 0; c < 2 && !tl_g.failed; c++) {
        got g[2];
        strix_error e = {STRIX_OK, ""};
        int rc = read_n(shape[c].text, g, 2, NULL, &e);
        char want[512];
        snprintf(want, sizeof want, "%s%s", g_path, shape[c].want);
        TL_CHECK(rc == -1 && !strcmp(e.message, want), "keypoint shape %d: rc %d, '%s', want '%s'", c, rc, e.message,
                 want);
    }
}

static void test_escapes(void)
{
    const char *line = "{\"frame\": 0, \"pts\": 0, \"detections\": [{\"class_id\": 2, \"score\": 1, \"box\": [0, 0, 1, 1],"
                       " \"class_name\": \"A\\u00e9\\u00E9\\ud83d\\ude00\\uD83D\\uDE00\\/\\\"\\\\\\b\\f\\n\\r\\t"
                       "\\u20ac\\u0041\\u007f\\uffff\\udbff\\udfff \\u0001\"}]}\n";
    strix_jsonl_reader *r;
    strix_error e = {STRIX_OK, ""};
    got g[1];
    int rc = read_n(line, g, 1, &r, &e);
    TL_CHECK(rc == 1, "rc %d: %s", rc, e.message);
    const char *n = strix_jsonl_class_name(r, 2);
    const char *want = "A\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80\xf0\x9f\x98\x80/\"\\\b\f\n\r\t\xe2\x82\xac"
                       "A\x7f\xef\xbf\xbf\xf4\x8f\xbf\xbf \x01";
    int ok = n && !strcmp(n, want) && strix_jsonl_class_count(r) == 3 && !strix_jsonl_class_name(r, 0) &&
             g[0].inferred == 1;
    strix_jsonl_close(r);
    TL_CHECK(ok, "decoded name differs: '%s'", n ? n : "(null)");
}

static void test_compact_and_spacing(void)
{
    const char *text =
        "{\"frame\":0,\"pts\":0.5,\"inferred\":false,\"detections\":[{\"class_id\":1,\"class_name\":\"car\","
        "\"score\":0.5,\"box\":[1,2.5,-3e2,4E-1]},{\"class_id\":0,\"score\":0,\"box\":[0,-0,0.0,1e+1]}]}\n"
        " \t{ \"frame\" :\t3 ,\r\"pts\"\t: -1.25e-3 , \"detections\" :\t[ { \"class_id\" : 1 , \"score\" : 1.0 ,"
        " \"box\" : [ 1 , 2 , 3 , 4 ] } ] , \"inferred\" : true } \t\r\n";
    got g[2];
    strix_error e = {STRIX_OK, ""};
    int rc = read_n(text, g, 2, NULL, &e);
    TL_CHECK(rc == 0, "rc %d: %s", rc, e.message);
    strix_detection a = {1, 2.5f, -300, 0.4f, 0.5f, 1}, b = {0, -0.0f, 0, 10, 0, 0}, c = {1, 2, 3, 4, 1, 1};
    TL_CHECK(g[0].frame == 0 && g[0].pts == 0.5 && g[0].inferred == 0 && g[0].n == 2 && same_det(&g[0].d[0], &a) &&
                 same_det(&g[0].d[1], &b),
             "compact line differs");
    TL_CHECK(g[1].frame == 3 && g[1].pts == -1.25e-3 && g[1].inferred == 1 && g[1].n == 1 && same_det(&g[1].d[0], &c),
             "spaced line differs");
}

static void test_unknown_keys_and_order(void)
{
    const char *text =
        "{\"meta\": {\"a\": [1, {\"b\": null, \"c\": [true, false, []]}], \"s\": \"}]\\\"{\", \"e\": {}},"
        " \"detections\": [{\"box\": [4, 3, 2, 1], \"mask\": [[1, 2], [3, 4]], \"score\": 0.25, \"attrs\": {},"
        " \"class_name\": \"dog\", \"track_id\": 7, \"class_id\": 16, \"z\": -0.5e-7}],"
        " \"n\": -1.5e-3, \"pts\": 2, \"frame\": 5, \"inferred\": false, \"\\u0066rame2\": \"x\","
        " \"Frame\": \"not frame\", \"x\": null}\n";
    got g[1];
    strix_jsonl_reader *r;
    strix_error e = {STRIX_OK, ""};
    int rc = read_n(text, g, 1, &r, &e);
    TL_CHECK(rc == 1, "rc %d: %s", rc, e.message);
    strix_detection a = {4, 3, 2, 1, 0.25f, 16};
    const char *n = strix_jsonl_class_name(r, 16);
    int ok = n && !strcmp(n, "dog") && strix_jsonl_class_count(r) == 17;
    strix_jsonl_close(r);
    TL_CHECK(g[0].frame == 5 && g[0].pts == 2 && g[0].inferred == 0 && g[0].n == 1 && same_det(&g[0].d[0], &a) &&
                 g[0].track[0] == 7,
             "record differs");
    TL_CHECK(ok, "class name");
}

/* "detection_box" (infer --track's detection's own box beside the
 * tracker's "box"): the record's raw has it, dets the box; without it raw
 * is dets.  "recovered" (a TrackTrack row from a recovered detection):
 * recovered[k] 1 only where true. */
static void test_detection_box(void)
{
    const char *text = "{\"frame\": 0, \"pts\": 0, \"detections\": ["
                       "{\"class_id\": 3, \"score\": 0.5, \"box\": [1.5, 2, 3, 4], \"track_id\": 7, "
                       "\"detection_box\": [1.25, 2.5, 3.75, 4.125], \"recovered\": false},"
                       "{\"detection_box\": [9, 9, 19, 19], \"class_id\": 1, \"score\": 0.25, \"box\": [10, 10, 20, 20]},"
                       "{\"class_id\": 0, \"score\": 0.75, \"recovered\": true, \"box\": [5, 6, 7, 8]}]}\n";
    const char *path = put_file("t.jsonl", text, strlen(text));
    strix_jsonl_reader *r;
    strix_error e = {STRIX_OK, ""};
    TL_CHECK(path && strix_jsonl_open(&r, path, &e) == STRIX_OK, "open: %s", e.message);
    strix_jsonl_record rec;
    int rc = strix_jsonl_next(r, &rec, &e);
    const strix_detection want[3] = {{1.5f, 2, 3, 4, 0.5f, 3}, {10, 10, 20, 20, 0.25f, 1}, {5, 6, 7, 8, 0.75f, 0}},
                          raw[3] = {{1.25f, 2.5f, 3.75f, 4.125f, 0.5f, 3}, {9, 9, 19, 19, 0.25f, 1}, {5, 6, 7, 8, 0.75f, 0}};
    int ok = rc == 1 && rec.n == 3;
    for (int k = 0; ok && k < 3; k++)
        ok = same_det(&rec.dets[k], &want[k]) && same_det(&rec.raw[k], &raw[k]) && rec.recovered[k] == (k == 2);
    strix_jsonl_close(r);
    TL_CHECK(ok, "rc %d (%s): the boxes, detection boxes or recovered flags read back wrong", rc, e.message);
}

static void test_track_ids(void)
{
    const char *text = "{\"frame\": 0, \"pts\": 0, \"detections\": ["
                       "{\"class_id\": 0, \"score\": 0.5, \"box\": [0, 0, 1, 1], \"track_id\": 0},"
                       "{\"class_id\": 0, \"score\": 0.5, \"box\": [0, 0, 1, 1]},"
                       "{\"class_id\": 0, \"score\": 0.5, \"box\": [0, 0, 1, 1], \"track_id\": null},"
                       "{\"track_id\": 2147483647, \"class_id\": 0, \"score\": 0.5, \"box\": [0, 0, 1, 1]}]}\n"
                       "{\"frame\": 1, \"pts\": 1, \"detections\": ["
                       "{\"class_id\": 0, \"score\": 0.5, \"box\": [0, 0, 1, 1]},"
                       "{\"class_id\": 0, \"score\": 0.5, \"box\": [0, 0, 1, 1], \"track_id\": 12}]}\n";
    got g[2];
    strix_error e = {STRIX_OK, ""};
    int rc = read_n(text, g, 2, NULL, &e);
    TL_CHECK(rc == 0, "rc %d: %s", rc, e.message);
    TL_CHECK(g[0].n == 4 && g[0].track[0] == 0 && g[0].track[1] == -1 && g[0].track[2] == -1 &&
                 g[0].track[3] == 2147483647,
             "frame 0 track ids %d %d %d %d", g[0].track[0], g[0].track[1], g[0].track[2], g[0].track[3]);
    TL_CHECK(g[1].n == 2 && g[1].track[0] == -1 && g[1].track[1] == 12, "frame 1 track ids %d %d", g[1].track[0],
             g[1].track[1]);
}

static void test_empty_and_line_ends(void)
{
    /* BOM, CRLF, blank lines (also with spaces) in the middle and at the end */
    const char *text = "\xef\xbb\xbf{\"frame\": 0, \"pts\": 0, \"inferred\": true, \"detections\": []}\r\n"
                       "\r\n"
                       "  \t \n"
                       "{\"frame\": 1, \"pts\": 0.04, \"inferred\": true, \"detections\": [ \t]}\r\n"
                       "\n";
    got g[2];
    strix_error e = {STRIX_OK, ""};
    int rc = read_n(text, g, 2, NULL, &e);
    TL_CHECK(rc == 0, "rc %d: %s", rc, e.message);
    TL_CHECK(g[0].frame == 0 && g[0].n == 0 && g[1].frame == 1 && g[1].pts == 0.04 && g[1].n == 0, "records differ");
    /* no final newline */
    const char *t2 = "{\"frame\": 0, \"pts\": 0, \"detections\": []}\n{\"frame\": 9, \"pts\": 1, \"detections\": []}";
    rc = read_n(t2, g, 2, NULL, &e);
    TL_CHECK(rc == 0 && g[1].frame == 9, "no final newline: rc %d: %s", rc, e.message);
    /* an empty file: no records */
    rc = read_n("", g, 0, NULL, &e);
    TL_CHECK(rc == 0, "empty file: rc %d", rc);
}

/* infer's header line (first, one "header" object) is checked and skipped;
 * anywhere else, or mixed with frame keys, it is an error naming the line */
static void test_header_line(void)
{
    const char *text = "{\"header\": {\"video\": \"a.mp4\", \"frames\": 2           , \"damage\": "
                       "{\"concealed_frames\": 1  }, \"degenerate_boxes\": null   }}\n"
                       "{\"frame\": 0, \"pts\": 0, \"detections\": []}\n"
                       "{\"frame\": 1, \"pts\": 0.04, \"detections\": []}\n";
    got g[2];
    strix_error e = {STRIX_OK, ""};
    int rc = read_n(text, g, 2, NULL, &e);
    TL_CHECK(rc == 0 && g[0].frame == 0 && g[1].frame == 1, "with a header: rc %d: %s", rc, e.message);
    const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"frame\": 0, \"pts\": 0, \"detections\": []}\n{\"header\": {}}\n",
         "t.jsonl:2: a \"header\" line must come first"},
        {"{\"header\": {}}\n{\"header\": {}}\n", "t.jsonl:2: a \"header\" line must come first"},
        {"{\"header\": {}, \"frame\": 0}\n", "t.jsonl:1: a \"header\" line holds no frame keys"},
        {"{\"header\": 3}\n", "t.jsonl:1: \"header\" must be an object"},
        {"{\"header\": {\"frames\": 01}}\n", "t.jsonl:1: column"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.message[0] = 0;
        rc = read_n(bad[i].text, g, 2, NULL, &e);
        TL_CHECK(rc != 0 && strstr(e.message, bad[i].want), "case %zu: rc %d, message '%s', want '%s'", i, rc,
                 e.message, bad[i].want);
    }
}

/* a live run's event lines (a reconnect between frames) are checked and
 * skipped; mixed with frame keys, or not an object, they are errors */
static void test_event_line(void)
{
    const char *text = "{\"header\": {\"frames\": null        }}\n"
                       "{\"frame\": 0, \"pts\": 0, \"detections\": []}\n"
                       "{\"event\": {\"type\": \"reconnect\", \"reason\": \"stalled\", \"gap_s\": 1.5, "
                       "\"next_frame\": 1}}\n"
                       "{\"frame\": 1, \"pts\": 0.04, \"detections\": []}\n";
    got g[2];
    strix_error e = {STRIX_OK, ""};
    int rc = read_n(text, g, 2, NULL, &e);
    TL_CHECK(rc == 0 && g[0].frame == 0 && g[1].frame == 1, "with an event: rc %d: %s", rc, e.message);
    e.message[0] = 0;
    rc = read_n("{\"event\": {}, \"frame\": 0}\n", g, 2, NULL, &e);
    TL_CHECK(rc != 0 && strstr(e.message, "t.jsonl:1: an \"event\" line holds no frame keys"), "mixed: '%s'",
             e.message);
    e.message[0] = 0;
    rc = read_n("{\"event\": 3}\n", g, 2, NULL, &e);
    TL_CHECK(rc != 0 && strstr(e.message, "t.jsonl:1: \"event\" must be an object"), "not an object: '%s'",
             e.message);
}

static void test_long_line(void)
{
    enum { N = 5000 };
    size_t cap = 64 + (size_t)N * 160;
    char *text = malloc(cap);
    strix_detection *want = malloc(N * sizeof *want);
    TL_CHECK(text && want, "out of memory");
    size_t len = (size_t)snprintf(text, cap, "{\"frame\": 0, \"pts\": 0, \"inferred\": true, \"detections\": [");
    for (int i = 0; i < N; i++) {
        strix_detection b = {tl_uniform(-1e4f, 1e4f), tl_uniform(-1e4f, 1e4f), tl_uniform(-1e4f, 1e4f),
                             tl_uniform(-1e4f, 1e4f), tl_uniform(0, 1), i % 80};
        want[i] = b;
        len += (size_t)snprintf(text + len, cap - len,
                                "%s{\"class_id\": %d, \"class_name\": \"c%d\", \"score\": %.9g, \"box\": [%.9g, "
                                "%.9g, %.9g, %.9g], \"track_id\": %d}",
                                i ? ", " : "", b.class_id, b.class_id, (double)b.score, (double)b.x1, (double)b.y1,
                                (double)b.x2, (double)b.y2, i);
    }
    snprintf(text + len, cap - len, "]}\n");
    const char *path = put_file("long.jsonl", text, strlen(text));
    free(text);
    strix_jsonl_reader *r = NULL;
    strix_error e = {STRIX_OK, ""};
    strix_jsonl_record rec;
    int ok = path && strix_jsonl_open(&r, path, &e) == STRIX_OK && strix_jsonl_next(r, &rec, &e) == 1 && rec.n == N;
    for (int i = 0; ok && i < N; i++) ok = same_det(&rec.dets[i], &want[i]) && rec.track_ids[i] == i;
    ok = ok && strix_jsonl_class_count(r) == 80 && !strcmp(strix_jsonl_class_name(r, 79), "c79");
    strix_jsonl_close(r);
    free(want);
    TL_CHECK(ok, "5000 detections did not read back: %s", e.message);
}

/* ---------------------------------------------------------------- errors */

#define GOOD_DET "{\"class_id\": 0, \"class_name\": \"person\", \"score\": 0.5, \"box\": [1, 2, 3, 4]}"
/* Lines 1-3 are good (CRLF, a blank line); the bad one is line 4. */
#define PREFIX                                                                                              \
    "{\"frame\": 0, \"pts\": 0, \"inferred\": true, \"detections\": [" GOOD_DET "]}\n"                      \
    "{\"frame\": 1, \"pts\": 0.04, \"inferred\": true, \"detections\": []}\r\n"                             \
    "   \n"
#define BAD_DET(d) PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": [" GOOD_DET ", " d "]}\n"
#define BAD_TOP(kv) PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": []" kv "}\n"

typedef struct bad_case {
    const char *text;
    const char *want; /* exact text after "path:4: " (a prefix of the rest of the message) */
} bad_case;

static const bad_case bad_cases[] = {
    /* frames */
    {PREFIX "{\"frame\": 1, \"pts\": 1, \"detections\": []}\n", "frame 1 is not after frame 1 (line 2)"},
    {PREFIX "{\"frame\": 0, \"pts\": 1, \"detections\": []}\n", "frame 0 is not after frame 1 (line 2)"},
    {PREFIX "{\"frame\": -3, \"pts\": 1, \"detections\": []}\n", "\"frame\" -3 is out of range (0.."},
    {PREFIX "{\"frame\": 2.0, \"pts\": 1, \"detections\": []}\n", "\"frame\" must be an integer (got 2.0)"},
    {PREFIX "{\"frame\": 1e3, \"pts\": 1, \"detections\": []}\n", "\"frame\" must be an integer (got 1e3)"},
    {PREFIX "{\"frame\": 99999999999999999999, \"pts\": 1, \"detections\": []}\n",
     "\"frame\" 99999999999999999999 is out of range"},
    {PREFIX "{\"frame\": \"2\", \"pts\": 1, \"detections\": []}\n", "\"frame\" must be an integer"},
    {PREFIX "{\"pts\": 1, \"detections\": []}\n", "\"frame\" is missing"},
    {PREFIX "{\"frame\": 2, \"detections\": []}\n", "\"pts\" is missing"},
    {PREFIX "{\"frame\": 2, \"pts\": 1}\n", "\"detections\" is missing"},
    {PREFIX "{\"frame\": 2, \"frame\": 3, \"pts\": 1, \"detections\": []}\n", "\"frame\" appears twice"},
    {BAD_TOP(", \"pts\": 2"), "\"pts\" appears twice"},
    {PREFIX "{\"frame\": 2, \"pts\": 1e400, \"detections\": []}\n", "\"pts\" 1e400 is not finite"},
    {PREFIX "{\"frame\": 2, \"pts\": null, \"detections\": []}\n", "\"pts\" must be a number"},
    {BAD_TOP(", \"inferred\": 1"), "\"inferred\" must be true or false"},
    {PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": {}}\n", "\"detections\" must be an array"},
    /* detections (the second of the line: detection 1) */
    {BAD_DET("7"), "detection 1: must be an object"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3]}"),
     "detection 1: \"box\" must be an array of 4 numbers"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4, 5]}"),
     "detection 1: \"box\" must be an array of 4 numbers"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, null, 3, 4]}"),
     "detection 1: \"box\" must be an array of 4 numbers"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": \"1 2 3 4\"}"),
     "detection 1: \"box\" must be an array of 4 numbers"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 1e39]}"),
     "detection 1: \"box\" number 1e39 is not finite"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"detection_box\": [1, 2, 3]}"),
     "detection 1: \"detection_box\" must be an array of 4 numbers"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"detection_box\": [1, 2, 3, 4], "
             "\"detection_box\": [1, 2, 3, 4]}"),
     "detection 1: \"detection_box\" appears twice"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"recovered\": 1}"),
     "detection 1: \"recovered\" must be true or false"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"recovered\": true, \"recovered\": true}"),
     "detection 1: \"recovered\" appears twice"},
    {BAD_DET("{\"class_id\": -1, \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"class_id\" -1 is out of range (0..999999)"},
    {BAD_DET("{\"class_id\": 1000000, \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"class_id\" 1000000 is out of range (0..999999)"},
    {BAD_DET("{\"class_id\": 1.5, \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"class_id\" must be an integer (got 1.5)"},
    {BAD_DET("{\"class_id\": 0, \"score\": 1.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"score\" 1.5 is outside [0, 1]"},
    {BAD_DET("{\"class_id\": 0, \"score\": -0.1, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"score\" -0.1 is outside [0, 1]"},
    {BAD_DET("{\"class_id\": 0, \"score\": null, \"box\": [1, 2, 3, 4]}"), "detection 1: \"score\" must be a number"},
    {BAD_DET("{\"class_id\": 0, \"class_name\": \"dog\", \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: class_id 0 is \"dog\" here but \"person\" on line 1"},
    {BAD_DET("{\"class_id\": 0, \"class_name\": 3, \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"class_name\" must be a string or null"},
    {BAD_DET("{\"class_id\": 5, \"class_name\": \"a\\u0000b\", \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"class_name\" contains a NUL character"},
    {BAD_DET("{\"score\": 0.5, \"box\": [1, 2, 3, 4]}"), "detection 1: \"class_id\" is missing"},
    {BAD_DET("{\"class_id\": 0, \"box\": [1, 2, 3, 4]}"), "detection 1: \"score\" is missing"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5}"), "detection 1: \"box\" is missing"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"score\": 0.5, \"box\": [1, 2, 3, 4]}"),
     "detection 1: \"score\" appears twice"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"track_id\": -1}"),
     "detection 1: \"track_id\" -1 is out of range (0..2147483647)"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"track_id\": 2147483648}"),
     "detection 1: \"track_id\" 2147483648 is out of range"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"track_id\": \"7\"}"),
     "detection 1: \"track_id\" must be an integer or null"},
    /* task fields */
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": [1, 2]}"),
     "detection 1: \"segments\" must be an object {\"x\": [...], \"y\": [...]}"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [1]}}"),
     "detection 1: \"segments\" needs both \"x\" and \"y\""},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [1, 2], \"y\": [1]}}"),
     "detection 1: \"segments\" has columns of different lengths (2 x, 1 y)"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [1e39], \"y\": [1]}}"),
     "detection 1: \"segments.x\" number 1e39 is not finite"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [null], \"y\": [1]}}"),
     "detection 1: \"segments.x\" must be a number"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": 1, \"y\": [1]}}"),
     "detection 1: \"segments.x\" must be an array of numbers"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"y\": [1], \"y\": [1]}}"),
     "detection 1: \"segments.y\" appears twice"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [1, 2,], \"y\": [1]}}"),
     "detection 1: \"segments.x\" must be a number"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"keypoints\": {\"x\": [], \"y\": []}}"),
     "detection 1: \"keypoints\" has no points"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], "
             "\"keypoints\": {\"x\": [1], \"y\": [1], \"visible\": [1, 0]}}"),
     "detection 1: \"keypoints\" has columns of different lengths (1 x, 1 y, 2 visible)"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], "
             "\"obb\": {\"x1\": 1, \"y1\": 1, \"x2\": 1, \"y2\": 1, \"x3\": 1, \"y3\": 1, \"x4\": 1}}"),
     "detection 1: \"obb\" needs the 4 corners x1 y1 ... x4 y4"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"obb\": {\"x1\": \"1\"}}"),
     "detection 1: \"obb.x1\" must be a number"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"obb\": {\"y3\": 1, \"y3\": 2}}"),
     "detection 1: \"obb.y3\" appears twice"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"obb\": 5}"),
     "detection 1: \"obb\" must be an object {\"x1\": ., \"y1\": ., ..., \"y4\": .}"},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"detection_obb\": {\"x1\": 1, \"y1\": 1, "
             "\"x2\": 1, \"y2\": 1, \"x3\": 1, \"y3\": 1, \"x4\": 1, \"y4\": 1}}"),
     "detection 1: \"detection_obb\" without \"obb\""},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [], \"y\": []}, "
             "\"keypoints\": {\"x\": [1], \"y\": [1]}}"),
     "detection 1: a detection carries one of \"segments\", \"keypoints\" and \"obb\""},
    {BAD_DET("{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], \"segments\": {\"x\": [], \"y\": []}}"),
     "detection 1: carries \"segments\" but detection 0 carries no task field (one task per file)"},
    {PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": [{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], "
            "\"segments\": {\"x\": [], \"y\": []}}]}\n",
     "this frame carries \"segments\" but line 1 carries no task field (one task per file)"},
    {BAD_TOP(", \"probs\": {}"), "\"probs\" must be an array"},
    {BAD_TOP(", \"probs\": [1]"), "\"probs\" entry 0 must be an object"},
    {BAD_TOP(", \"probs\": [{\"class\": 1}]"), "\"probs\" entry 0 needs \"class\" and \"confidence\""},
    {BAD_TOP(", \"probs\": [{\"class\": 1, \"confidence\": 2}]"), "\"probs.confidence\" 2 is outside [0, 1]"},
    {BAD_TOP(", \"probs\": [{\"class\": -1, \"confidence\": 1}]"), "\"probs.class\" -1 is out of range (0..999999)"},
    {BAD_TOP(", \"probs\": [{\"class\": 0, \"name\": 7, \"confidence\": 1}]"),
     "\"probs.name\" must be a string or null"},
    {BAD_TOP(", \"probs\": [{\"class\": 0, \"name\": \"dog\", \"confidence\": 1}]"),
     "class_id 0 is \"dog\" here but \"person\" on line 1"},
    {BAD_TOP(", \"probs\": [{\"class\": 1, \"confidence\": 0.5}]"),
     "this frame carries \"probs\" but line 1 carries no task field (one task per file)"},
    {PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": [{\"class_id\": 0, \"score\": 0.5, \"box\": [1, 2, 3, 4], "
            "\"obb\": {\"x1\": 1, \"y1\": 1, \"x2\": 1, \"y2\": 1, \"x3\": 1, \"y3\": 1, \"x4\": 1, \"y4\": 1}}], "
            "\"probs\": []}\n",
     "\"probs\" beside detections that carry \"obb\" (one task per file)"},
    /* JSON syntax, with the column (1-based bytes) */
    {PREFIX "{\"frame\": 2,}\n", "column 13: expected a string"},
    {PREFIX "{\"frame\": 2 \"pts\": 1}\n", "column 13: expected ',' or '}'"},
    {PREFIX "{frame: 2}\n", "column 2: expected a string"},
    {PREFIX "{'frame': 2}\n", "column 2: expected a string"},
    {PREFIX "{\"frame\" 2}\n", "column 10: expected ':'"},
    {PREFIX "{\"frame\": 2, \"pts\": 0", "column 22: expected ',' or '}'"},
    {PREFIX "{\"frame\": 2, \"pts\": 01}\n", "column 21: invalid number"},
    {PREFIX "{\"frame\": 2, \"pts\": 1.}\n", "column 21: invalid number (digits must follow '.')"},
    {PREFIX "{\"frame\": 2, \"pts\": .5}\n", "\"pts\" must be a number"},
    {PREFIX "{\"frame\": 2, \"pts\": +1}\n", "\"pts\" must be a number"},
    {PREFIX "{\"frame\": 2, \"pts\": 1e}\n", "column 21: invalid number (digits must follow the exponent)"},
    {PREFIX "{\"frame\": 2, \"pts\": -}\n", "column 21: expected a number"},
    {PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": []} x\n", "column 42: unexpected text after the object"},
    {PREFIX "{\"frame\": 2, \"pts\": 1, \"detections\": []}{}\n", "column 41: unexpected text after the object"},
    {PREFIX "[{\"frame\": 2, \"pts\": 1, \"detections\": []}]\n", "a line must hold one JSON object"},
    {BAD_TOP(", \"x\": [1, 2,]"), "column 53: expected a JSON value"},
    {BAD_TOP(", \"x\": {\"a\": 1,}"), "column 55: expected a string"},
    {BAD_TOP(", \"x\": [1 2]"), "column 50: expected ',' or ']'"},
    {BAD_TOP(", \"x\": tru"), "column 47: expected a JSON value"},
    {BAD_TOP(", \"x\": \"abc"), "column 52: unterminated string"},
    {BAD_TOP(", \"x\": \"a\\xb\""), "column 49: invalid escape in a string"},
    {BAD_TOP(", \"x\": \"a\\u12g4\""), "column 49: \\u must be followed by 4 hex digits"},
    {BAD_TOP(", \"x\": \"a\\ud800\""), "column 49: unpaired surrogate"},
    {BAD_TOP(", \"x\": \"a\\ud800\\u0041\""), "column 49: unpaired surrogate"},
    {BAD_TOP(", \"x\": \"a\\udc00\\ud800\""), "column 49: unpaired surrogate"},
    {BAD_TOP(", \"x\": \"a\tb\""), "column 49: control character in a string"},
    {BAD_TOP(", \"x\": \"a\xff\""), "column 49: invalid UTF-8 in a string"},
    {BAD_TOP(", \"x\": \"a\xc0\xaf\""), "column 49: invalid UTF-8 in a string"},
    {BAD_TOP(", \"x\": \"a\xed\xa0\x80\""), "column 49: invalid UTF-8 in a string"},
    {BAD_TOP(", \"x\": \"a\xe6\x97\""), "column 49: invalid UTF-8 in a string"},
    {BAD_TOP(", \"x\": "
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "]]"),
     "column 175: values nested too deeply"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        const bad_case *c = &bad_cases[i];
        got g[2];
        strix_jsonl_reader *r;
        strix_error e = {STRIX_OK, ""};
        int rc = read_n(c->text, g, 2, &r, &e);
        if (rc != 1) {
            tl_fail("case %zu (%s): the good lines did not read (rc %d)", i, c->want, rc);
            if (rc != -2) strix_jsonl_close(r);
            return;
        }
        strix_jsonl_record rec;
        char want[512];
        snprintf(want, sizeof want, "%s:4: %s", g_path, c->want);
        int bad = strix_jsonl_next(r, &rec, &e);
        strix_error e2 = {STRIX_OK, ""};
        int again = strix_jsonl_next(r, &rec, &e2);
        strix_jsonl_close(r);
        TL_CHECK(bad == -1 && e.status == STRIX_E_IO && !strncmp(e.message, want, strlen(want)),
                 "case %zu: rc %d, message '%s', want '%s...'", i, bad, e.message, want);
        TL_CHECK(again == -1 && e2.status == STRIX_E_IO, "case %zu: read on after an error", i);
    }
}

static void test_open_and_nul(void)
{
    strix_jsonl_reader *r = (strix_jsonl_reader *)&r;
    strix_error e = {STRIX_OK, ""};
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.jsonl", g_dir);
    strix_status st = strix_jsonl_open(&r, missing, &e);
    TL_CHECK(st == STRIX_E_IO && r == NULL && strstr(e.message, missing) && strstr(e.message, "cannot open"),
             "missing file: %d '%s'", (int)st, e.message);
    static const char nul[] = "{\"frame\": 0, \"pts\": 0, \"detections\": []}\n{\"frame\": 1,\0 \"pts\": 0}\n";
    const char *path = put_file("nul.jsonl", nul, sizeof nul - 1);
    TL_CHECK(path && strix_jsonl_open(&r, path, &e) == STRIX_OK, "%s", e.message);
    strix_jsonl_record rec;
    int a = strix_jsonl_next(r, &rec, &e), b = strix_jsonl_next(r, &rec, &e);
    strix_jsonl_close(r);
    char want[160];
    snprintf(want, sizeof want, "%s:2: the line contains a NUL byte", path);
    TL_CHECK(a == 1 && b == -1 && !strncmp(e.message, want, strlen(want)), "NUL: %d %d '%s'", a, b, e.message);
}

/* -------------------------------------------------------------- random */

/* Pieces of random class names: every escape class json_str and the reader
 * know, valid UTF-8 of each length, U+FFFF and U+10FFFF. */
static const char *const pieces[] = {"a", "Z", "0", " ", "\"", "\\", "/", "\x01", "\x1f", "\t", "\n", "\x7f",
                                     "\xc3\xa9", "\xe2\x82\xac", "\xef\xbf\xbf", "\xf0\x9f\x98\x80",
                                     "\xf4\x8f\xbf\xbf", "{", "]", ",", ":"};

static void rws(FILE *f) /* random JSON whitespace (never a newline) */
{
    static const char *const w[] = {"", "", " ", "\t", "\r", "  \t"};
    fputs(w[tl_int(0, 5)], f);
}

/* A string with random but valid escapes: short forms, \u in either case,
 * surrogate pairs, or raw bytes. */
static void rand_str(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, cp;
        int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        for (int k = 1; k < len; k++) cp = cp << 6 | (p[k] & 0x3F);
        const char *shortf = strchr("\"\\/\b\f\n\r\t", (int)c);
        if (c < 0x20 || c == '"' || c == '\\' || tl_int(0, 3) == 0) {
            if (shortf && c && tl_int(0, 1))
                fprintf(f, "\\%c", "\"\\/bfnrt"[shortf - "\"\\/\b\f\n\r\t"]);
            else if (cp >= 0x10000)
                fprintf(f, "\\u%04x\\u%04X", 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF));
            else
                fprintf(f, tl_int(0, 1) ? "\\u%04x" : "\\u%04X", cp);
        } else {
            fwrite(p, 1, (size_t)len, f);
        }
        p += len;
    }
    fputc('"', f);
}

static void rand_value(FILE *f, int depth)
{
    int k = tl_int(0, depth < 3 ? 6 : 4);
    switch (k) {
    case 0: fprintf(f, "%.17g", (double)tl_uniform(-1e6f, 1e6f) * 1e-3); break;
    case 1: fprintf(f, "%d", tl_int(-100, 100)); break;
    case 2: rand_str(f, pieces[tl_int(0, (int)(sizeof pieces / sizeof *pieces) - 1)]); break;
    case 3: fputs(tl_int(0, 1) ? "true" : "false", f); break;
    case 4: fputs("null", f); break;
    case 5:
        fputc('[', f);
        for (int i = 0, n = tl_int(0, 3); i < n; i++) {
            if (i) fputc(',', f);
            rws(f);
            rand_value(f, depth + 1);
            rws(f);
        }
        fputc(']', f);
        break;
    default:
        fputc('{', f);
        for (int i = 0, n = tl_int(0, 3); i < n; i++) {
            if (i) fputc(',', f);
            rws(f);
            rand_str(f, i ? "k\xc3\xa9y" : "frame"); /* a nested "frame" is not the record's */
            rws(f);
            fputc(':', f);
            rws(f);
            rand_value(f, depth + 1);
        }
        fputc('}', f);
    }
}

static float rand_float(void) /* any finite float, from random bits */
{
    for (;;) {
        uint32_t u = (uint32_t)tl_u64();
        float v;
        memcpy(&v, &u, sizeof v);
        if (isfinite(v)) return v;
    }
}

static float rand_score(void)
{
    switch (tl_int(0, 3)) {
    case 0: return tl_int(0, 1) ? 1.0f : 0.0f;
    case 1: return ldexpf((float)tl_int(1, 1 << 20), -tl_int(20, 140)); /* tiny, subnormal too */
    default: return tl_uniform(0, 1);
    }
}

/* Writes one object with the given members in random order (member m is
 * written by emit(f, m, ctx)), unknown members mixed in. */
static void rand_object(FILE *f, const int *members, int n, void (*emit)(FILE *, int, void *), void *ctx)
{
    int order[8];
    memcpy(order, members, (size_t)n * sizeof *order);
    for (int i = n - 1; i > 0; i--) {
        int j = tl_int(0, i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    fputc('{', f);
    for (int i = 0; i < n; i++) {
        if (tl_int(0, 4) == 0) { /* an unknown key before this one */
            fputs(i ? "," : "", f);
            rws(f);
            rand_str(f, tl_int(0, 1) ? "extra" : "box_");
            rws(f);
            fputc(':', f);
            rws(f);
            rand_value(f, 0);
            rws(f);
            fputc(',', f);
        } else if (i) {
            fputc(',', f);
        }
        rws(f);
        emit(f, order[i], ctx);
        rws(f);
    }
    fputc('}', f);
}

typedef struct rdet {
    strix_detection d;
    int track;
    int name_mode; /* 0: name, 1: absent, 2: null */
    const char *name;
} rdet;

static void emit_det(FILE *f, int i, void *ctx)
{
    rdet *r = ctx;
    switch (i) {
    case 0: fprintf(f, "\"class_id\":%d", r->d.class_id); break;
    case 1: fprintf(f, "\"score\": %.9g", (double)r->d.score); break;
    case 2:
        fprintf(f, "\"box\":[");
        rws(f);
        fprintf(f, "%.9g,", (double)r->d.x1);
        rws(f);
        fprintf(f, "%.9g", (double)r->d.y1);
        rws(f);
        fprintf(f, ", %.9g,\t%.9g", (double)r->d.x2, (double)r->d.y2);
        rws(f);
        fputc(']', f);
        break;
    case 3:
        if (r->track >= 0)
            fprintf(f, "\"track_id\" : %d", r->track);
        else
            fputs("\"track_id\": null", f);
        break;
    default:
        fputs("\"class_name\":", f);
        rws(f);
        if (r->name_mode == 2)
            fputs("null", f);
        else
            rand_str(f, r->name);
    }
}

typedef struct rrec {
    long frame;
    double pts;
    int inferred, n;
    rdet *dets;
} rrec;

static void emit_rec(FILE *f, int i, void *ctx)
{
    rrec *r = ctx;
    switch (i) {
    case 0: fprintf(f, "\"frame\": %ld", r->frame); break;
    case 1: fprintf(f, "\"pts\":%.17g", r->pts); break;
    case 2: fprintf(f, "\"inferred\": %s", r->inferred ? "true" : "false"); break;
    default:
        fputs("\"detections\":[", f);
        for (int k = 0; k < r->n; k++) {
            rdet *d = &r->dets[k];
            /* class_id, score, box always; track_id when there is one (else
             * absent or null); class_name unless absent */
            int members[5] = {0, 1, 2}, n = 3;
            if (d->track >= 0 || tl_int(0, 1)) members[n++] = 3;
            if (d->name_mode != 1) members[n++] = 4;
            if (k) fputc(',', f);
            rws(f);
            rand_object(f, members, n, emit_det, d);
        }
        rws(f);
        fputc(']', f);
    }
}

static void test_random_roundtrip(void)
{
    enum { NAMES = 12, MAXF = 40, MAXD = 24 };
    char names[NAMES][64];
    static rdet dets[MAXF][MAXD];
    static rrec recs[MAXF];
    for (int it = 0; it < 40 && !tl_g.failed; it++) {
        for (int c = 0; c < NAMES; c++) {
            names[c][0] = 0;
            for (int k = 0, n = tl_int(1, 8); k < n; k++)
                strcat(names[c], pieces[tl_int(0, (int)(sizeof pieces / sizeof *pieces) - 1)]);
        }
        int given[NAMES] = {0}, max_class = -1;
        int nf = tl_int(0, MAXF), crlf = tl_int(0, 1);
        snprintf(g_path, sizeof g_path, "%s/random.jsonl", g_dir);
        FILE *f = fopen(g_path, "wb");
        TL_CHECK(f, "cannot write");
        long frame = tl_int(0, 3) - 1;
        for (int i = 0; i < nf; i++) {
            rrec *r = &recs[i];
            r->frame = frame += tl_int(1, 3);
            uint64_t bits = tl_u64();
            memcpy(&r->pts, &bits, sizeof r->pts);
            if (!isfinite(r->pts) || tl_int(0, 1)) r->pts = i * 0.04 + tl_uniform(0, 1e-3f);
            r->inferred = tl_int(0, 1);
            r->n = tl_int(0, 3) ? tl_int(0, MAXD) : 0;
            r->dets = dets[i];
            for (int k = 0; k < r->n; k++) {
                rdet *d = &dets[i][k];
                strix_detection b = {rand_float(), rand_float(), rand_float(), rand_float(), rand_score(),
                                     tl_int(0, NAMES - 1)};
                d->d = b;
                d->track = tl_int(0, 2) ? -1 : tl_int(0, 2147483646); /* tl_int needs hi - lo + 1 to fit */
                d->name_mode = tl_int(0, 5) == 0 ? tl_int(1, 2) : 0;
                d->name = names[b.class_id];
                if (d->name_mode == 0) given[b.class_id] = 1;
                if (b.class_id > max_class) max_class = b.class_id;
            }
            rws(f);
            static const int members[4] = {0, 1, 2, 3};
            rand_object(f, members, 4, emit_rec, r);
            rws(f);
            fputs(crlf ? "\r\n" : "\n", f);
            if (tl_int(0, 9) == 0) fputs(crlf ? "\r\n" : " \n", f);
        }
        TL_CHECK(fclose(f) == 0, "write failed");
        strix_jsonl_reader *rd;
        strix_error e = {STRIX_OK, ""};
        TL_CHECK(strix_jsonl_open(&rd, g_path, &e) == STRIX_OK, "%s", e.message);
        strix_jsonl_record rec;
        for (int i = 0; i < nf && !tl_g.failed; i++) {
            rrec *r = &recs[i];
            int rc = strix_jsonl_next(rd, &rec, &e);
            if (rc != 1) {
                tl_fail("iteration %d, record %d: rc %d: %s", it, i, rc, e.message);
                break;
            }
            int ok = rec.frame == r->frame && same_double(rec.pts, r->pts) && rec.inferred == r->inferred &&
                     rec.n == r->n;
            for (int k = 0; ok && k < r->n; k++)
                ok = same_det(&rec.dets[k], &r->dets[k].d) && rec.track_ids[k] == r->dets[k].track;
            if (!ok) {
                int k = 0;
                while (k < r->n && k < rec.n && same_det(&rec.dets[k], &r->dets[k].d) &&
                       rec.track_ids[k] == r->dets[k].track)
                    k++;
                tl_fail("iteration %d, record %d (frame %ld/%ld, pts %.17g/%.17g, inferred %d/%d, n %d/%d) differs at "
                        "detection %d",
                        it, i, rec.frame, r->frame, rec.pts, r->pts, rec.inferred, r->inferred, rec.n, r->n, k);
            }
        }
        if (!tl_g.failed && strix_jsonl_next(rd, &rec, &e) != 0) tl_fail("iteration %d: records past the end", it);
        if (!tl_g.failed && strix_jsonl_class_count(rd) != max_class + 1)
            tl_fail("iteration %d: class_count %d, want %d", it, strix_jsonl_class_count(rd), max_class + 1);
        for (int c = 0; c < NAMES && !tl_g.failed; c++) {
            const char *n = strix_jsonl_class_name(rd, c);
            if (given[c] ? !n || strcmp(n, names[c]) : n != NULL)
                tl_fail("iteration %d: class %d name '%s', want '%s'", it, c, n ? n : "(null)",
                        given[c] ? names[c] : "(null)");
        }
        strix_jsonl_close(rd);
    }
}

int main(int argc, char **argv)
{
    tl_init();
    snprintf(g_dir, sizeof g_dir, "/tmp/strix-jsonl-XXXXXX");
    if (!mkdtemp(g_dir)) {
        printf("FAIL jsonl_tmpdir: cannot create a temporary directory\n");
        return 1;
    }
    TL_RUN(test_infer_format);
    TL_RUN(test_task_fields);
    TL_RUN(test_escapes);
    TL_RUN(test_compact_and_spacing);
    TL_RUN(test_unknown_keys_and_order);
    TL_RUN(test_track_ids);
    TL_RUN(test_detection_box);
    TL_RUN(test_empty_and_line_ends);
    TL_RUN(test_header_line);
    TL_RUN(test_event_line);
    TL_RUN(test_long_line);
    TL_RUN(test_errors);
    TL_RUN(test_open_and_nul);
    TL_RUN(test_random_roundtrip);
    const char *files[] = {"t.jsonl", "infer.jsonl", "long.jsonl", "nul.jsonl", "random.jsonl"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", g_dir, files[i]);
        unlink(p);
    }
    rmdir(g_dir);
    TL_MAIN_END();
}
