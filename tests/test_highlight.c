/* test_highlight.c — highlight segments (engine/analytics/highlight.h): each rule on
 * hand-made inputs with exact expected frames, times and activity (times are
 * binary fractions, so every comparison is exact), option and input
 * validation, random inputs checked against a brute-force reference that
 * applies the rules frame by frame (no binary search, no in-place merging)
 * plus the invariants, and two million frames at 30 fps; the frame log that
 * --highlights keeps (tools/infer/framelog.h): contents and a flat heap. */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/infer/framelog.h"
#include "highlight.h"
#include "testlib.h"

typedef strix_highlight_segment seg_t;

static strix_highlight_options opts(double gap, double pad, double min_len, double max_total)
{
    strix_highlight_options o;
    strix_highlight_options_init(&o);
    o.gap = gap;
    o.pad = pad;
    o.min_len = min_len;
    o.max_total = max_total;
    return o;
}

/* pts 0, 1, 2, ... (one-second frames), end n. */
static void unit_pts(double *pts, int n)
{
    for (int i = 0; i < n; i++) pts[i] = i;
}

/* Runs the function and compares with `want` (first, last, start, end,
 * activity each); returns 0 (and fails the test) on a difference. */
static int expect(const char *what, const double *pts, const double *act, long n, double end,
                  strix_highlight_options o, const seg_t *want, long n_want)
{
    seg_t *s = NULL;
    long ns = -1;
    strix_error e = {STRIX_OK, ""};
    strix_status st = strix_highlight_segments(pts, act, n, end, &o, &s, &ns, &e);
    if (st != STRIX_OK) {
        tl_fail("%s: status %d: %s", what, (int)st, e.message);
        return 0;
    }
    int ok = ns == n_want && (ns == 0) == (s == NULL);
    for (long i = 0; ok && i < ns; i++)
        ok = s[i].first == want[i].first && s[i].last == want[i].last && s[i].start == want[i].start &&
             s[i].end == want[i].end && s[i].activity == want[i].activity;
    if (!ok) {
        char got[256] = "";
        for (long i = 0; i < ns && strlen(got) < 200; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " [%ld,%ld %g-%g a=%g]", s[i].first, s[i].last,
                     s[i].start, s[i].end, s[i].activity);
        tl_fail("%s: got %ld segments:%s (want %ld)", what, ns, got, n_want);
    }
    free(s);
    return ok;
}

static void test_defaults(void)
{
    strix_highlight_options o;
    memset(&o, 0xff, sizeof o);
    strix_highlight_options_init(&o);
    TL_CHECK(o.gap == 1.0 && o.pad == 0.5 && o.min_len == 0 && o.max_total == 0, "defaults %g %g %g %g", o.gap,
             o.pad, o.min_len, o.max_total);
    /* NULL options mean the defaults: run at 7, silence 1.5 s, run at 9 */
    double pts[12], act[12] = {0, 0, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0};
    for (int i = 0; i < 12; i++) pts[i] = i * 0.75;
    seg_t *s;
    long ns;
    strix_error e = {STRIX_OK, ""};
    TL_CHECK(strix_highlight_segments(pts, act, 12, 9.0, NULL, &s, &ns, &e) == STRIX_OK, "%s", e.message);
    /* runs [5.25,6) and [6.75,7.5): silence 0.75 < 1 merges; pad 0.5 -> [4.75, 8]
     * snapped to frames 6 (4.5) .. 10 (ends 8.25) */
    TL_CHECK(ns == 1 && s[0].first == 6 && s[0].last == 10 && s[0].start == 4.5 && s[0].end == 8.25 &&
                 s[0].activity == 5,
             "got %ld segments, first [%ld,%ld]", ns, ns ? s[0].first : -1, ns ? s[0].last : -1);
    free(s);
}

static void test_runs(void)
{
    double pts[10], act[10] = {0, 1, 2, 0, 0, 3, 0, 1, 1, 0};
    unit_pts(pts, 10);
    const seg_t want[] = {{1, 2, 1, 3, 3}, {5, 5, 5, 6, 3}, {7, 8, 7, 9, 2}};
    if (!expect("unit frames", pts, act, 10, 10, opts(0, 0, 0, 0), want, 3)) return;
    /* variable frame durations; an active last frame ends at end_time;
     * tiny activity still counts as active */
    double p2[8] = {0, 0.5, 1.5, 1.75, 3, 3.25, 5, 5.5}, a2[8] = {1, 0.25, 0, 0x1p-40, 0, 0, 0.5, 4};
    const seg_t w2[] = {{0, 1, 0, 1.5, 1.25}, {3, 3, 1.75, 3, 0x1p-40}, {6, 7, 5, 6.25, 4.5}};
    if (!expect("variable durations", p2, a2, 8, 6.25, opts(0, 0, 0, 0), w2, 3)) return;
    /* nothing active: zero segments, NULL array */
    double a3[4] = {0, 0, 0, 0};
    if (!expect("silent", pts, a3, 4, 4, opts(0, 2, 0, 0), NULL, 0)) return;
    /* everything active: one segment */
    double a4[4] = {1, 1, 1, 1};
    const seg_t w4[] = {{0, 3, 0, 4, 4}};
    expect("all active", pts, a4, 4, 4, opts(0, 0, 0, 0), w4, 1);
}

static void test_gap(void)
{
    /* runs [1,3) and [5,6): silence exactly 2 s */
    double pts[8], act[8] = {0, 1, 1, 0, 0, 1, 0, 0};
    unit_pts(pts, 8);
    const seg_t apart[] = {{1, 2, 1, 3, 2}, {5, 5, 5, 6, 1}};
    const seg_t merged[] = {{1, 5, 1, 6, 3}};
    if (!expect("gap == silence keeps apart", pts, act, 8, 8, opts(2, 0, 0, 0), apart, 2)) return;
    if (!expect("gap just above silence merges", pts, act, 8, 8, opts(nextafter(2.0, 3.0), 0, 0, 0), merged, 1))
        return;
    if (!expect("gap 0 keeps runs", pts, act, 8, 8, opts(0, 0, 0, 0), apart, 2)) return;
    /* chained: silences 1, 1, 3 with gap 1.5: the first three merge */
    double a2[12] = {1, 0, 2, 0, 3, 0, 0, 0, 4, 0, 0, 0};
    double p2[12];
    unit_pts(p2, 12);
    const seg_t w2[] = {{0, 4, 0, 5, 6}, {8, 8, 8, 9, 4}};
    if (!expect("chained", p2, a2, 12, 12, opts(1.5, 0, 0, 0), w2, 2)) return;
    /* variable durations: silence = 2.75 - 1.25 = 1.5 (frames 2 and 3) */
    double p3[6] = {0, 1, 1.25, 2.5, 2.75, 4}, a3[6] = {0, 1, 0, 0, 1, 0};
    const seg_t w3a[] = {{1, 1, 1, 1.25, 1}, {4, 4, 2.75, 4, 1}};
    const seg_t w3b[] = {{1, 4, 1, 4, 2}};
    if (!expect("variable gap equal", p3, a3, 6, 5, opts(1.5, 0, 0, 0), w3a, 2)) return;
    expect("variable gap above", p3, a3, 6, 5, opts(1.5 + 0x1p-20, 0, 0, 0), w3b, 1);
}

static void test_pad(void)
{
    double pts[10], act[10] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    unit_pts(pts, 10);
    /* [4.5, 6.5] snaps outward to frames 4..6 = [4, 7) */
    const seg_t w1[] = {{4, 6, 4, 7, 1}};
    if (!expect("pad 0.5", pts, act, 10, 10, opts(0, 0.5, 0, 0), w1, 1)) return;
    /* [4, 7] lies on boundaries: nothing more is added */
    if (!expect("pad on boundaries", pts, act, 10, 10, opts(0, 1, 0, 0), w1, 1)) return;
    const seg_t w2[] = {{3, 7, 3, 8, 1}};
    if (!expect("pad 1.25", pts, act, 10, 10, opts(0, 1.25, 0, 0), w2, 1)) return;
    /* variable durations: active frame 3 = [2.5, 2.75); pad 0.5 -> [2, 3.25]:
     * 2 falls in frame 2 = [1, 2.5), 3.25 in frame 4 = [2.75, 4) */
    double p3[6] = {0, 0.25, 1, 2.5, 2.75, 4}, a3[6] = {0, 0, 0, 1, 0, 0};
    const seg_t w3[] = {{2, 4, 1, 4, 1}};
    if (!expect("variable pad", p3, a3, 6, 5, opts(0, 0.5, 0, 0), w3, 1)) return;
    /* edges: a video starting at 10 s; clamped to [10, 15] */
    double p4[5] = {10, 11, 12, 13, 14}, a4[5] = {1, 0, 0, 0, 2};
    const seg_t w4[] = {{0, 1, 10, 12, 1}, {3, 4, 13, 15, 2}};
    if (!expect("edges", p4, a4, 5, 15, opts(0, 0.5, 0, 0), w4, 2)) return;
    const seg_t w5[] = {{0, 4, 10, 15, 3}};
    if (!expect("pad beyond both edges", p4, a4, 5, 15, opts(0, 100, 0, 0), w5, 1)) return;
    if (!expect("infinite pad", p4, a4, 5, 15, opts(0, INFINITY, 0, 0), w5, 1)) return;
    /* padded segments touching at 12 merge, even with gap 0 */
    double a6[4] = {1, 0, 0, 1};
    const seg_t w6[] = {{0, 3, 10, 14, 2}};
    if (!expect("touching merge", p4, a6, 4, 14, opts(0, 0.5, 0, 0), w6, 1)) return;
    /* overlapping after padding merge too; activity counted once */
    double a7[5] = {1, 0, 1, 0, 1};
    const seg_t w7[] = {{0, 4, 10, 15, 3}};
    expect("overlap merge", p4, a7, 5, 15, opts(0, 1.5, 0, 0), w7, 1);
}

static void test_min_len(void)
{
    /* runs of 1, 2 and 3 seconds */
    double pts[10], act[10] = {1, 0, 1, 1, 0, 1, 1, 1, 0, 0};
    unit_pts(pts, 10);
    const seg_t w1[] = {{2, 3, 2, 4, 2}, {5, 7, 5, 8, 3}};
    if (!expect("min_len == length kept", pts, act, 10, 10, opts(0, 0, 2, 0), w1, 2)) return;
    const seg_t w2[] = {{5, 7, 5, 8, 3}};
    if (!expect("min_len above", pts, act, 10, 10, opts(0, 0, nextafter(2.0, 3.0), 0), w2, 1)) return;
    /* after padding: frame 0 padded by 0.5 -> [0, 2) (clamped at the start), 2 s long */
    double a3[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const seg_t w3[] = {{0, 1, 0, 2, 1}};
    if (!expect("after padding", pts, a3, 10, 10, opts(0, 0.5, 2, 0), w3, 1)) return;
    if (!expect("infinite min_len", pts, act, 10, 10, opts(0, 0, INFINITY, 0), NULL, 0)) return;
}

static void test_cap(void)
{
    /* A: 1..2 (2 s, activity 2)  B: 4..7 (4 s, 5)  C: 9 (1 s, 5)
     * D: 11..13 (3 s, 3)  E: 15 (1 s, 1); total 11 s */
    double pts[20], act[20] = {0, 1, 1, 0, 1, 2, 1, 1, 0, 5, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0};
    unit_pts(pts, 20);
    const seg_t A = {1, 2, 1, 3, 2}, B = {4, 7, 4, 8, 5}, C = {9, 9, 9, 10, 5}, D = {11, 13, 11, 14, 3},
                E = {15, 15, 15, 16, 1};
    const seg_t all[] = {A, B, C, D, E};
    if (!expect("no cap", pts, act, 20, 20, opts(0, 0, 0, 0), all, 5)) return;
    if (!expect("cap == total", pts, act, 20, 20, opts(0, 0, 0, 11), all, 5)) return;
    if (!expect("infinite cap", pts, act, 20, 20, opts(0, 0, 0, INFINITY), all, 5)) return;
    /* 6 s: B (tie with C, earlier first) 4, C 5, D would be 8: skipped,
     * A would be 7: skipped, E fits exactly: 6 */
    const seg_t w6[] = {B, C, E};
    if (!expect("cap 6", pts, act, 20, 20, opts(0, 0, 0, 6), w6, 3)) return;
    /* 4 s: B takes it all; had the tie gone to C, C and D would fit */
    const seg_t w4[] = {B};
    if (!expect("cap 4 tie", pts, act, 20, 20, opts(0, 0, 0, 4), w4, 1)) return;
    /* 3.5 s: B does not fit; it is trimmed (rule: not even the most active fits) */
    const seg_t w35[] = {{4, 6, 4, 7, 4}};
    if (!expect("cap 3.5 trims the top", pts, act, 20, 20, opts(0, 0, 0, 3.5), w35, 1)) return;
    /* ties inside the trim: windows of 2 frames sum 3, 2, 3: the earliest */
    double a2[6] = {2, 1, 1, 2, 0, 1};
    double p2[6];
    unit_pts(p2, 6);
    const seg_t w2[] = {{0, 1, 0, 2, 3}};
    if (!expect("trim tie", p2, a2, 6, 6, opts(0, 0, 0, 2.5), w2, 1)) return;
    /* variable durations: windows of <= 2 s from each frame: 0..2 (exactly
     * 2 s, sum 3), 1..2, 2..2, 3..3, 4..4 */
    double p3[5] = {0, 1, 1.5, 2, 4}, a3[5] = {1, 1, 1, 1, 1};
    const seg_t w3[] = {{0, 2, 0, 2, 3}};
    if (!expect("trim variable", p3, a3, 5, 5, opts(0, 0, 0, 2), w3, 1)) return;
    /* the best window is later, and a long frame inside breaks windows */
    double p4[6] = {0, 1, 2, 6, 7, 8}, a4[6] = {1, 1, 1, 1, 3, 2};
    const seg_t w4b[] = {{4, 5, 7, 9, 5}};
    if (!expect("trim later", p4, a4, 6, 9, opts(0, 0, 0, 2), w4b, 1)) return;
    /* no frame is short enough: empty */
    double p5[2] = {0, 2}, a5[2] = {1, 1};
    if (!expect("trim nothing fits", p5, a5, 2, 4, opts(0, 0, 0, 1), NULL, 0)) return;
    /* the cap applies after padding: pad 0.5 snaps A to 0..3, B 3..8, C 8..10,
     * D 10..14, E 14..16, all overlapping or touching: one 17 s segment; a cap
     * of 5 s trims it to its best 5 frames, 5..9 (2+1+1+0+5) */
    const seg_t wp[] = {{0, 16, 0, 17, 16}};
    if (!expect("padding merges all", pts, act, 20, 20, opts(0, 0.5, 0, 0), wp, 1)) return;
    const seg_t wq[] = {{5, 9, 5, 10, 9}};
    expect("cap after padding", pts, act, 20, 20, opts(0, 0.5, 0, 5), wq, 1);
}

static void test_cap_after_min_len(void)
{
    /* min_len drops the short segments before the cap counts the total */
    double pts[12], act[12] = {1, 0, 0, 9, 0, 0, 2, 2, 0, 0, 3, 3};
    unit_pts(pts, 12);
    const seg_t w[] = {{10, 11, 10, 12, 6}};
    expect("min_len then cap", pts, act, 12, 12, opts(0, 0, 2, 3), w, 1);
    const seg_t w2[] = {{3, 3, 3, 4, 9}, {10, 11, 10, 12, 6}};
    expect("cap without min_len", pts, act, 12, 12, opts(0, 0, 0, 3), w2, 2);
}

static void test_validation(void)
{
    double pts[3] = {0, 1, 2}, act[3] = {1, 0, 1};
    seg_t *s = (seg_t *)&s;
    long ns = 7;
    strix_error e = {STRIX_OK, ""};
    const char *names[4] = {"gap", "pad", "min_len", "max_total"};
    for (int k = 0; k < 4; k++) {
        for (int bad = 0; bad < 2; bad++) {
            strix_highlight_options o = opts(0, 0, 0, 0);
            double *f[4] = {&o.gap, &o.pad, &o.min_len, &o.max_total};
            *f[k] = bad ? NAN : -0.5;
            strix_status st = strix_highlight_segments(pts, act, 3, 3, &o, &s, &ns, &e);
            TL_CHECK(st == STRIX_E_ARG && strstr(e.message, names[k]) && s == NULL && ns == 0,
                     "%s = %g: status %d, message '%s'", names[k], *f[k], (int)st, e.message);
        }
    }
    strix_highlight_options o = opts(0, 0, 0, 0);
    double p2[3] = {0, 1, 1};
    TL_CHECK(strix_highlight_segments(p2, act, 3, 3, &o, &s, &ns, &e) == STRIX_E_ARG &&
                 strstr(e.message, "pts[2]") && strstr(e.message, "increase"),
             "equal pts: %s", e.message);
    double p3[3] = {0, NAN, 2};
    TL_CHECK(strix_highlight_segments(p3, act, 3, 3, &o, &s, &ns, &e) == STRIX_E_ARG && strstr(e.message, "pts[1]"),
             "NaN pts: %s", e.message);
    double a2[3] = {0, -1, 0}, a3[3] = {0, 0, NAN}, a4[3] = {INFINITY, 0, 0};
    TL_CHECK(strix_highlight_segments(pts, a2, 3, 3, &o, &s, &ns, &e) == STRIX_E_ARG &&
                 strstr(e.message, "activity[1]"),
             "negative activity: %s", e.message);
    TL_CHECK(strix_highlight_segments(pts, a3, 3, 3, &o, &s, &ns, &e) == STRIX_E_ARG &&
                 strstr(e.message, "activity[2]"),
             "NaN activity: %s", e.message);
    TL_CHECK(strix_highlight_segments(pts, a4, 3, 3, &o, &s, &ns, &e) == STRIX_E_ARG &&
                 strstr(e.message, "activity[0]"),
             "infinite activity: %s", e.message);
    TL_CHECK(strix_highlight_segments(pts, act, 3, 2, &o, &s, &ns, &e) == STRIX_E_ARG &&
                 strstr(e.message, "end_time"),
             "end_time == last pts: %s", e.message);
    TL_CHECK(strix_highlight_segments(pts, act, 3, INFINITY, &o, &s, &ns, &e) == STRIX_E_ARG &&
                 strstr(e.message, "end_time"),
             "infinite end_time: %s", e.message);
    TL_CHECK(strix_highlight_segments(pts, act, -1, 3, &o, &s, &ns, &e) == STRIX_E_ARG, "n < 0 accepted");
    TL_CHECK(strix_highlight_segments(NULL, NULL, 0, 0, &o, &s, &ns, &e) == STRIX_OK && s == NULL && ns == 0,
             "n == 0: %s", e.message);
    TL_CHECK(strix_highlight_segments(pts, act, 3, 3, &o, NULL, &ns, &e) == STRIX_E_ARG, "NULL out accepted");
}

/* ---------------------------------------------------------- reference */

/* The rules applied frame by frame in O(n * segments), without the
 * library's binary searches or in-place merging.  Returns the count. */
static long reference(const double *pts, const double *act, long n, double end, strix_highlight_options o,
                      seg_t *out)
{
    unsigned char *in = calloc((size_t)n, 1), *pad = calloc((size_t)n, 1);
    long *f = malloc((size_t)n * sizeof *f), *l = malloc((size_t)n * sizeof *l);
#define FE(i) ((i) + 1 < n ? pts[(i) + 1] : end)
    long k = 0;
    for (long i = 0; i < n; i++) { /* runs */
        if (act[i] > 0 && (i == 0 || !(act[i - 1] > 0))) f[k] = i, l[k] = i, k++;
        if (act[i] > 0) l[k - 1] = i;
    }
    for (long s = 0; s < k; s++) { /* gap: fill the silence frames */
        for (long i = f[s]; i <= l[s]; i++) in[i] = 1;
        if (s + 1 < k && pts[f[s + 1]] - FE(l[s]) < o.gap)
            for (long i = l[s] + 1; i < f[s + 1]; i++) in[i] = 1;
    }
    k = 0; /* merged segments, then padding marks every frame its interval touches */
    for (long i = 0; i < n; i++) {
        if (in[i] && (i == 0 || !in[i - 1])) f[k] = i, k++;
        if (in[i]) l[k - 1] = i;
    }
    for (long s = 0; s < k; s++) {
        double t0 = pts[f[s]] - o.pad, t1 = FE(l[s]) + o.pad;
        for (long i = 0; i < n; i++)
            if (pts[i] < t1 && FE(i) > t0) pad[i] = 1;
    }
    long m = 0;
    for (long i = 0; i < n; i++) {
        if (pad[i] && (i == 0 || !pad[i - 1])) f[m] = i, m++;
        if (pad[i]) l[m - 1] = i;
    }
    long c = 0; /* min_len, activity, total */
    double total = 0;
    for (long s = 0; s < m; s++) {
        if (FE(l[s]) - pts[f[s]] < o.min_len) continue;
        seg_t g = {f[s], l[s], pts[f[s]], FE(l[s]), 0};
        for (long i = g.first; i <= g.last; i++) g.activity += act[i];
        total += g.end - g.start;
        out[c++] = g;
    }
    if (c && o.max_total > 0 && total > o.max_total) {
        unsigned char *taken = calloc((size_t)c, 1), *keep = calloc((size_t)c, 1);
        double used = 0;
        for (long r = 0; r < c; r++) { /* selection by rank, O(c^2) */
            long b = -1;
            for (long s = 0; s < c; s++)
                if (!taken[s] && (b < 0 || out[s].activity > out[b].activity)) b = s;
            taken[b] = 1;
            double len = out[b].end - out[b].start;
            if (r == 0 && len > o.max_total) { /* trim: every window, by brute force */
                double best = -1;
                long bi = -1, bj = -1;
                for (long i = out[b].first; i <= out[b].last; i++)
                    for (long j = i; j <= out[b].last && FE(j) - pts[i] <= o.max_total; j++) {
                        double a = 0;
                        for (long q = i; q <= j; q++) a += act[q];
                        if (a > best && (j == out[b].last || FE(j + 1) - pts[i] > o.max_total))
                            best = a, bi = i, bj = j;
                    }
                if (bi >= 0) {
                    seg_t g = {bi, bj, pts[bi], FE(bj), best};
                    out[0] = g;
                    c = 1;
                } else {
                    c = 0;
                }
                free(taken);
                free(keep);
                goto done;
            }
            if (used + len <= o.max_total) used += len, keep[b] = 1;
        }
        long q = 0;
        for (long s = 0; s < c; s++)
            if (keep[s]) out[q++] = out[s];
        c = q;
        free(taken);
        free(keep);
    }
done:
#undef FE
    free(in);
    free(pad);
    free(f);
    free(l);
    return c;
}

/* Random video: durations on a 1/64 s grid (ties and exact boundaries
 * happen), activity sparse small integers or fractions. */
static long random_video(double *pts, double *act, double *end, long max_n)
{
    long n = tl_int(1, (int)max_n);
    double t = tl_int(0, 64) / 64.0;
    int density = tl_int(1, 9), ints = tl_int(0, 1);
    for (long i = 0; i < n; i++) {
        pts[i] = t;
        t += tl_int(1, 48) / 64.0;
        act[i] = tl_int(0, 9) < density ? (ints ? tl_int(0, 4) : tl_uniform(0, 3)) : 0;
    }
    *end = t;
    return n;
}

static double random_opt(double scale)
{
    switch (tl_int(0, 3)) {
    case 0: return 0;
    case 1: return tl_int(1, 16) / 16.0 * scale; /* grid: lands on boundaries */
    default: return tl_uniform(0, (float)scale);
    }
}

static void test_random_reference(void)
{
    enum { MAXN = 400 };
    static double pts[MAXN], act[MAXN];
    static seg_t want[MAXN];
    for (int it = 0; it < 600; it++) {
        double end;
        long n = random_video(pts, act, &end, MAXN);
        strix_highlight_options o = opts(random_opt(2), random_opt(1.5), random_opt(2), random_opt(20));
        long nw = reference(pts, act, n, end, o, want);
        char what[160];
        snprintf(what, sizeof what, "iteration %d (n %ld, gap %g pad %g min_len %g max_total %g)", it, n, o.gap,
                 o.pad, o.min_len, o.max_total);
        if (!expect(what, pts, act, n, end, o, want, nw)) return;
    }
}

/* Invariants on bigger inputs: sorted, disjoint, not touching, frame
 * aligned, activity = the frame sum; coverage without cap or min_len;
 * total within the cap; exactly the runs with gap = pad = 0. */
static void test_random_invariants(void)
{
    enum { MAXN = 20000 };
    double *pts = malloc(MAXN * sizeof *pts), *act = malloc(MAXN * sizeof *act);
    TL_CHECK(pts && act, "out of memory");
    for (int it = 0; it < 60 && !tl_g.failed; it++) {
        double end;
        long n = random_video(pts, act, &end, MAXN);
        int mode = it % 3; /* 0: plain, 1: cap and min_len, 2: gap = pad = 0 */
        strix_highlight_options o =
            opts(mode == 2 ? 0 : random_opt(2), mode == 2 ? 0 : random_opt(1), mode == 1 ? random_opt(1) : 0,
                 mode == 1 ? tl_uniform(0.01f, 200) : 0);
        seg_t *s;
        long ns;
        strix_error e = {STRIX_OK, ""};
        if (strix_highlight_segments(pts, act, n, end, &o, &s, &ns, &e) != STRIX_OK) {
            tl_fail("iteration %d: %s", it, e.message);
            break;
        }
        double total = 0;
        for (long k = 0; k < ns && !tl_g.failed; k++) {
            double fe = s[k].last + 1 < n ? pts[s[k].last + 1] : end, a = 0;
            for (long i = s[k].first; i <= s[k].last; i++) a += act[i];
            if (!(s[k].first >= 0 && s[k].first <= s[k].last && s[k].last < n && s[k].start == pts[s[k].first] &&
                  s[k].end == fe && s[k].activity == a))
                tl_fail("iteration %d: segment %ld [%ld,%ld] not frame aligned or wrong activity", it, k,
                        s[k].first, s[k].last);
            if (k && s[k].first <= s[k - 1].last + 1)
                tl_fail("iteration %d: segments %ld and %ld overlap or touch", it, k - 1, k);
            total += s[k].end - s[k].start;
        }
        if (mode != 1) { /* every active frame is covered */
            long k = 0;
            for (long i = 0; i < n && !tl_g.failed; i++) {
                while (k < ns && s[k].last < i) k++;
                if (act[i] > 0 && !(k < ns && s[k].first <= i))
                    tl_fail("iteration %d: active frame %ld not covered", it, i);
            }
        } else if (o.max_total > 0 && !(total <= o.max_total * (1 + 1e-12))) {
            tl_fail("iteration %d: total %.17g above max_total %.17g", it, total, o.max_total);
        }
        if (mode == 2) { /* exactly the runs */
            long k = 0;
            for (long i = 0; i < n && !tl_g.failed; i++) {
                if (!(act[i] > 0) || (i && act[i - 1] > 0)) continue;
                long j = i;
                while (j + 1 < n && act[j + 1] > 0) j++;
                if (!(k < ns && s[k].first == i && s[k].last == j))
                    tl_fail("iteration %d: run [%ld,%ld] is not segment %ld", it, i, j, k);
                k++;
            }
            if (!tl_g.failed && k != ns) tl_fail("iteration %d: %ld segments for %ld runs", it, ns, k);
        }
        free(s);
    }
    free(pts);
    free(act);
}

/* Two million frames at 30 fps, activity in every other frame (a million
 * runs), a pad of 100 s (3000 frames each side: a linear walk per segment
 * would be quadratic) and a cap that ranks 10^5 segments and keeps a quarter:
 * all those of activity 11 (1/11 of them) must be among the kept. */
static void test_large(void)
{
    const long n = 2000000;
    double *pts = malloc((size_t)n * sizeof *pts), *act = malloc((size_t)n * sizeof *act);
    TL_CHECK(pts && act, "out of memory");
    for (long i = 0; i < n; i++) {
        pts[i] = i / 30.0;
        act[i] = (i & 1) ? (double)(i % 7) : 0;
    }
    double end = n / 30.0;
    clock_t t0 = clock();
    seg_t *s = NULL;
    long ns = 0;
    strix_error e = {STRIX_OK, ""};
    strix_highlight_options o = opts(0, 100, 0, 0);
    strix_status st = strix_highlight_segments(pts, act, n, end, &o, &s, &ns, &e);
    int ok1 = st == STRIX_OK && ns == 1 && s[0].first == 0 && s[0].last == n - 1;
    free(s);
    /* every 20th frame active: 10^5 one-frame runs; cap a quarter of their total */
    long n11 = 0;
    for (long i = 0; i < n; i++) {
        act[i] = i % 20 == 3 ? (double)(1 + i % 11) : 0;
        n11 += act[i] == 11;
    }
    double cap = n / 20 / 30.0 / 4;
    o = opts(0, 0, 0, cap);
    st = strix_highlight_segments(pts, act, n, end, &o, &s, &ns, &e);
    double total = 0;
    long k11 = 0, low = 0;
    for (long k = 0; st == STRIX_OK && k < ns; k++) {
        total += s[k].end - s[k].start;
        k11 += s[k].activity == 11;
        low += s[k].activity < 9;
    }
    int ok2 = st == STRIX_OK && ns > 20000 && total <= cap * (1 + 1e-12) && k11 == n11 && low == 0;
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    free(s);
    free(pts);
    free(act);
    TL_CHECK(ok1, "pad 100: %ld segments, status %d: %s", ns, (int)st, e.message);
    TL_CHECK(ok2, "cap: %ld segments, total %g (cap %g), %ld of %ld at activity 11, %ld below 9", ns, total, cap,
             k11, n11, low);
    TL_CHECK(secs < 30, "took %.1f s (quadratic?)", secs);
}

/* ---------------------------------------------------------- frame log */

/* glibc's count of heap bytes in use; -1 where malloc is not glibc's (ASan) */
static long heap_in_use(void)
{
    struct mallinfo2 a = mallinfo2();
    void *probe = malloc(1 << 16);
    struct mallinfo2 b = mallinfo2();
    free(probe);
    long before = (long)(a.uordblks + a.hblkhd), after = (long)(b.uordblks + b.hblkhd);
    return probe && after - before >= (1 << 16) ? before : -1;
}

/* 300k frames of 0..40 items each: read back exactly (twice), and the heap
 * does not grow with the frames (the log lives in a temporary file). */
static void test_frame_log(void)
{
    strix_frame_log *l;
    strix_error e;
    TL_CHECK(!strix_frame_log_open(&l, &e), "%s", e.message);
    enum { FRAMES = 300000, WARM = 1000 };
    strix_frame_item items[40];
    long heap_warm = -1, heap_end = -1;
    for (long f = 0; f < FRAMES; f++) {
        int n = (int)(f * 7 % 41);
        for (int i = 0; i < n; i++) items[i] = (strix_frame_item){(int)(f + i) % 80, (int)(f / 3 + i)};
        if (strix_frame_log_add(l, f / 30.0, items, n, &e)) break;
        if (f == WARM) heap_warm = heap_in_use();
    }
    heap_end = heap_in_use();
    TL_CHECK(strix_frame_log_frames(l) == FRAMES, "%ld frames logged: %s", strix_frame_log_frames(l), e.message);
    TL_CHECK(strix_frame_log_first_pts(l) == 0 && strix_frame_log_last_pts(l) == (FRAMES - 1) / 30.0, "first/last");
    for (int pass = 0; pass < 2; pass++) {
        TL_CHECK(!strix_frame_log_rewind(l, &e), "%s", e.message);
        long f = 0;
        double pts;
        const strix_frame_item *it;
        int n, got;
        while ((got = strix_frame_log_next(l, &pts, &it, &n, &e)) == 1) {
            int want = (int)(f * 7 % 41), ok = n == want && pts == f / 30.0;
            for (int i = 0; ok && i < n; i++) ok = it[i].class_id == (int)(f + i) % 80 && it[i].id == (int)(f / 3 + i);
            TL_CHECK(ok, "pass %d frame %ld: %d items at %g, want %d at %g", pass, f, n, pts, want, f / 30.0);
            f++;
        }
        TL_CHECK(got == 0 && f == FRAMES, "pass %d: read %ld frames (%s)", pass, f, got ? e.message : "end");
    }
    TL_CHECK(strix_frame_log_add(l, 1e9, items, 1, &e) == STRIX_E_ARG, "an add after rewind must be refused");
    strix_frame_log_free(l);
    strix_frame_log_free(NULL);
    if (heap_warm < 0) {
        tl_skip("heap not measurable here (malloc is not glibc's, e.g. under ASan); contents checked");
        return;
    }
    TL_CHECK(heap_end - heap_warm < 64 * 1024, "heap grew %ld bytes over %d frames", heap_end - heap_warm,
             FRAMES - WARM);
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(test_defaults);
    TL_RUN(test_runs);
    TL_RUN(test_gap);
    TL_RUN(test_pad);
    TL_RUN(test_min_len);
    TL_RUN(test_cap);
    TL_RUN(test_cap_after_min_len);
    TL_RUN(test_validation);
    TL_RUN(test_random_reference);
    TL_RUN(test_random_invariants);
    TL_RUN(test_large);
    TL_RUN(test_frame_log);
    TL_MAIN_END();
}
