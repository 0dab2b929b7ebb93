/* test_moteval.c — the MOT evaluator (engine/eval/moteval.h): small hand-worked
 * cases (each derivation in its comment), random properties (perfect
 * tracking, relabelling, dropped and added boxes, a 100k-box stream),
 * py-motmetrics goldens (tests/golden/moteval/, made by
 * tools/reference/check_moteval.py with py-motmetrics 1.4.0, scipy solver),
 * and the MOTChallenge reader on good and malformed files.
 *
 * Boxes are (x, y, w, h).  Unit boxes are 10 x 10 so IoUs are simple
 * fractions; IoU >= 0.5 matches unless a test says otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "moteval.h"
#include "testlib.h"

#define GOLDEN_DIR "tests/golden/moteval"

#define B(f, i, x, y, w, h) ((strix_mot_box){(f), (i), (x), (y), (w), (h), 1.0f})
#define N(a) ((long)(sizeof(a) / sizeof(a)[0]))

static strix_mot_metrics M; /* the last evaluation */

#define EVAL(gt, ngt, hyp, nhyp, thr)                                                             \
    do {                                                                                          \
        strix_error e_;                                                                           \
        strix_status st_ = strix_mot_evaluate((gt), (ngt), (hyp), (nhyp), (thr), &M, &e_);        \
        TL_CHECK(st_ == STRIX_OK, "strix_mot_evaluate: %s", e_.message);                          \
    } while (0)
#define EXPECT_L(field, v)                                                                        \
    TL_CHECK((long)M.field == (long)(v), #field " = %ld, want %ld", (long)M.field, (long)(v))
/* equal within 1e-12, NaN == NaN, inf == inf */
#define EXPECT_D(field, v)                                                                        \
    TL_CHECK(same_d(M.field, (v), 1e-12), #field " = %.17g, want %.17g", M.field, (double)(v))

static int same_d(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= tol;
}

/* Two objects, three frames, tracked perfectly under other ids:
 * tp 6, no errors: MOTA 1, MOTP 1 (every IoU 1), IDF1 = 2*6/(6+6) = 1. */
static void perfect_tracking(void)
{
    strix_mot_box gt[] = {B(1, 1, 0, 0, 10, 10), B(1, 2, 50, 0, 10, 10), B(2, 1, 2, 0, 10, 10),
                          B(2, 2, 48, 0, 10, 10), B(3, 1, 4, 0, 10, 10), B(3, 2, 46, 0, 10, 10)};
    strix_mot_box hyp[] = {B(1, 7, 0, 0, 10, 10), B(1, 9, 50, 0, 10, 10), B(2, 7, 2, 0, 10, 10),
                           B(2, 9, 48, 0, 10, 10), B(3, 7, 4, 0, 10, 10), B(3, 9, 46, 0, 10, 10)};
    EVAL(gt, N(gt), hyp, N(hyp), 0.5);
    EXPECT_L(frames, 3);
    EXPECT_L(gt, 6);
    EXPECT_L(hyp, 6);
    EXPECT_L(tp, 6);
    EXPECT_L(fp, 0);
    EXPECT_L(fn, 0);
    EXPECT_L(idsw, 0);
    EXPECT_L(frag, 0);
    EXPECT_D(mota, 1);
    EXPECT_D(motp, 1);
    EXPECT_L(idtp, 6);
    EXPECT_D(idf1, 1);
    EXPECT_D(idp, 1);
    EXPECT_D(idr, 1);
    EXPECT_L(gt_ids, 2);
    EXPECT_L(hyp_ids, 2);
    EXPECT_L(mostly_tracked, 2);
    EXPECT_L(partly_tracked, 0);
    EXPECT_L(mostly_lost, 0);
}

/* One object over frames 1-4, its box missed in frame 3:
 * tp 3, fn 1: MOTA = 1 - 1/4 = 0.75; matched, missed, matched again: frag 1;
 * idtp 3, idfn 1: IDF1 = 2*3/(4+3) = 6/7, IDP 1, IDR 3/4;
 * matched 3/4 = 75% of its frames: partly tracked. */
static void one_missed_box(void)
{
    strix_mot_box gt[] = {B(1, 1, 0, 0, 10, 10), B(2, 1, 0, 0, 10, 10), B(3, 1, 0, 0, 10, 10), B(4, 1, 0, 0, 10, 10)};
    strix_mot_box hyp[] = {B(1, 5, 0, 0, 10, 10), B(2, 5, 0, 0, 10, 10), B(4, 5, 0, 0, 10, 10)};
    EVAL(gt, N(gt), hyp, N(hyp), 0.5);
    EXPECT_L(tp, 3);
    EXPECT_L(fn, 1);
    EXPECT_L(fp, 0);
    EXPECT_L(idsw, 0);
    EXPECT_L(frag, 1);
    EXPECT_D(mota, 0.75);
    EXPECT_L(idtp, 3);
    EXPECT_L(idfn, 1);
    EXPECT_L(idfp, 0);
    EXPECT_D(idf1, 6.0 / 7.0);
    EXPECT_D(idp, 1);
    EXPECT_D(idr, 0.75);
    EXPECT_L(mostly_tracked, 0);
    EXPECT_L(partly_tracked, 1);
}

/* One object in frames 1-2, tracked, plus a stray box far away in frame 2:
 * tp 2, fp 1: MOTA = 1 - 1/2 = 0.5; idtp 2, idfp 1: IDF1 = 4/5, IDP 2/3. */
static void one_false_positive(void)
{
    strix_mot_box gt[] = {B(1, 1, 0, 0, 10, 10), B(2, 1, 0, 0, 10, 10)};
    strix_mot_box hyp[] = {B(1, 3, 0, 0, 10, 10), B(2, 3, 0, 0, 10, 10), B(2, 4, 100, 100, 10, 10)};
    EVAL(gt, N(gt), hyp, N(hyp), 0.5);
    EXPECT_L(tp, 2);
    EXPECT_L(fp, 1);
    EXPECT_L(fn, 0);
    EXPECT_D(mota, 0.5);
    EXPECT_L(idtp, 2);
    EXPECT_L(idfp, 1);
    EXPECT_D(idf1, 0.8);
    EXPECT_D(idp, 2.0 / 3.0);
    EXPECT_D(idr, 1);
    EXPECT_L(hyp_ids, 2);
}

/* Two objects cross: A goes right (x = 0, 20, ..., 100), B left (x = 100,
 * 80, ..., 0), one row apart so boxes never overlap.  The tracker follows
 * them as 1 and 2 in frames 1-3 and swaps the ids at the crossing (frames
 * 4-6).  Frame 4: A's last id 1 now sits on B's box (IoU 0), so step 1 keeps
 * nothing and both are matched anew to the other id: 2 ID switches.
 * tp 12, MOTA = 1 - 2/12 = 5/6, MOTP 1.  Identity: each of the four (gt, hyp)
 * pairs overlaps in 3 frames, a one-to-one matching gets 3 + 3: idtp 6,
 * IDF1 = 2*6/(12+12) = 0.5. */
static void id_switch_at_crossing(void)
{
    strix_mot_box gt[12], hyp[12];
    for (int f = 1; f <= 6; f++) {
        float xa = 20.0f * (f - 1), xb = 100.0f - 20.0f * (f - 1);
        gt[2 * f - 2] = B(f, 1, xa, 0, 10, 10);
        gt[2 * f - 1] = B(f, 2, xb, 12, 10, 10);
        hyp[2 * f - 2] = B(f, f <= 3 ? 1 : 2, xa, 0, 10, 10);
        hyp[2 * f - 1] = B(f, f <= 3 ? 2 : 1, xb, 12, 10, 10);
    }
    EVAL(gt, 12, hyp, 12, 0.5);
    EXPECT_L(tp, 12);
    EXPECT_L(idsw, 2);
    EXPECT_L(fp, 0);
    EXPECT_L(fn, 0);
    EXPECT_L(frag, 0);
    EXPECT_D(mota, 5.0 / 6.0);
    EXPECT_D(motp, 1);
    EXPECT_L(idtp, 6);
    EXPECT_L(idfp, 6);
    EXPECT_L(idfn, 6);
    EXPECT_D(idf1, 0.5);
    EXPECT_L(mostly_tracked, 2);
}

/* One object over 6 frames, tracked as 1 in frames 1-3 and as 2 in 4-6
 * (a split track): frame 4 matches it to 2, last matched to 1: 1 switch.
 * tp 6, MOTA = 1 - 1/6; identity: best single hyp track covers 3 frames:
 * idtp 3, idfn 3, idfp 3, IDF1 = 6/12 = 0.5. */
static void track_split(void)
{
    strix_mot_box gt[6], hyp[6];
    for (int f = 1; f <= 6; f++) {
        gt[f - 1] = B(f, 1, 5.0f * f, 0, 10, 10);
        hyp[f - 1] = B(f, f <= 3 ? 1 : 2, 5.0f * f, 0, 10, 10);
    }
    EVAL(gt, 6, hyp, 6, 0.5);
    EXPECT_L(tp, 6);
    EXPECT_L(idsw, 1);
    EXPECT_D(mota, 5.0 / 6.0);
    EXPECT_L(idtp, 3);
    EXPECT_L(idfn, 3);
    EXPECT_L(idfp, 3);
    EXPECT_D(idf1, 0.5);
    EXPECT_L(hyp_ids, 2);
}

/* A GT box 10 x 10 at the origin; the tracker's box grows in height.
 * Frame 1: 10 x 20, IoU = 100/200 = 0.5 exactly: matches at 0.5 (1 - IoU =
 * 0.5 <= 1 - 0.5).  Frame 2: 10 x 20.25, IoU = 100/202.5 = 0.4938: no match,
 * one fn and one fp.  tp 1, MOTA = 1 - 2/2 = 0.  At 0.49 both match; at 0.7
 * a 7 x 10 box (IoU 0.7 exactly) matches and a 6.75 x 10 one (0.675) not. */
static void iou_threshold_edges(void)
{
    strix_mot_box gt[] = {B(1, 1, 0, 0, 10, 10), B(2, 1, 0, 0, 10, 10)};
    strix_mot_box hyp[] = {B(1, 1, 0, 0, 10, 20), B(2, 1, 0, 0, 10, 20.25f)};
    EVAL(gt, 2, hyp, 2, 0.5);
    EXPECT_L(tp, 1);
    EXPECT_L(fn, 1);
    EXPECT_L(fp, 1);
    EXPECT_D(mota, 0);
    EXPECT_D(motp, 0.5);
    EXPECT_L(idtp, 1);
    EVAL(gt, 2, hyp, 2, 0.49);
    EXPECT_L(tp, 2);
    EXPECT_D(motp, (0.5 + 100 / 202.5) / 2);
    strix_mot_box hyp7[] = {B(1, 1, 0, 0, 7, 10), B(2, 1, 0, 0, 6.75f, 10)};
    EVAL(gt, 2, hyp7, 2, 0.7);
    EXPECT_L(tp, 1);
    EXPECT_L(fn, 1);
    EXPECT_D(motp, 0.7);
}

/* Frame 1: the object is matched to hyp 1 (IoU 1).  Frame 2: hyp 1 still
 * covers it with IoU 0.6 (a 6 x 10 box), a new hyp 2 covers it exactly.
 * py-motmetrics keeps the last correspondence (1) before the optimal
 * assignment, which alone would pick 2 (cost 0 < 0.4) and count a switch:
 * tp 2, fp 1 (hyp 2), idsw 0, MOTA = 1 - 1/2, MOTP = (1 + 0.6)/2 = 0.8.
 * Frame 3: the object is missed.  Frame 4: only hyp 2 covers it (IoU 1):
 * last matched to 1 (frames ago), so a switch.  tp 3, idsw 1, fn 1, fp 1:
 * MOTA = 1 - 3/4; frag 1.  Identity: (1, hyp 1) share 2 frames, (1, hyp 2) 2
 * (frames 2 and 4): idtp 2, IDF1 = 2*2/(4+4) = 0.5. */
static void keeps_last_match(void)
{
    strix_mot_box gt[] = {B(1, 1, 0, 0, 10, 10), B(2, 1, 0, 0, 10, 10), B(3, 1, 0, 0, 10, 10), B(4, 1, 0, 0, 10, 10)};
    strix_mot_box hyp[] = {B(1, 1, 0, 0, 10, 10), B(2, 2, 0, 0, 10, 10), B(2, 1, 0, 0, 6, 10), B(4, 2, 0, 0, 10, 10)};
    EVAL(gt, 2, hyp, 3, 0.5);
    EXPECT_L(tp, 2);
    EXPECT_L(fp, 1);
    EXPECT_L(idsw, 0);
    EXPECT_D(mota, 0.5);
    EXPECT_D(motp, 0.8);
    EVAL(gt, 4, hyp, 4, 0.5);
    EXPECT_L(frames, 4);
    EXPECT_L(tp, 3);
    EXPECT_L(idsw, 1);
    EXPECT_L(fn, 1);
    EXPECT_L(fp, 1);
    EXPECT_L(frag, 1);
    EXPECT_D(mota, 0.25);
    EXPECT_L(idtp, 2);
    EXPECT_D(idf1, 0.5);
}

/* Within a frame, boxes are taken in input order (py-motmetrics' order):
 * it decides which of two objects keeps a hyp id both were last matched to.
 * Hyp 9 (x = 1) covers A (x = 0, frames 1, 3, 4) in frame 1 and B (x = 2,
 * frames 2, 3) in frame 2 (IoU 90/110 each; B new, no switch).  Frame 3:
 * both are last matched to 9, the first listed keeps it, the other is
 * missed; frame 4: A is missed.  A first: A 2/3, B 1/2: both partly
 * tracked; B first: B 2/2 mostly tracked, A 1/3 partly.  Either way tp 3,
 * fn 2, no switch, idtp 2 (checked with py-motmetrics). */
static void input_order_breaks_ties(void)
{
    strix_mot_box ab[] = {B(1, 1, 0, 0, 10, 10), B(2, 2, 2, 0, 10, 10), B(3, 1, 0, 0, 10, 10), B(3, 2, 2, 0, 10, 10),
                          B(4, 1, 0, 0, 10, 10)};
    strix_mot_box ba[] = {B(1, 1, 0, 0, 10, 10), B(2, 2, 2, 0, 10, 10), B(3, 2, 2, 0, 10, 10), B(3, 1, 0, 0, 10, 10),
                          B(4, 1, 0, 0, 10, 10)};
    strix_mot_box hyp[] = {B(3, 9, 1, 0, 10, 10), B(1, 9, 1, 0, 10, 10), B(2, 9, 1, 0, 10, 10)};
    EVAL(ab, 5, hyp, 3, 0.5);
    EXPECT_L(tp, 3);
    EXPECT_L(fn, 2);
    EXPECT_L(idsw, 0);
    EXPECT_L(idtp, 2);
    EXPECT_L(mostly_tracked, 0);
    EXPECT_L(partly_tracked, 2);
    EVAL(ba, 5, hyp, 3, 0.5);
    EXPECT_L(tp, 3);
    EXPECT_L(idsw, 0);
    EXPECT_L(mostly_tracked, 1);
    EXPECT_L(partly_tracked, 1);
}

/* py-motmetrics' fragmentation and track-ratio conventions.  Object 1 is in
 * frames 1, 2, 3, 5, 6 (absent in 4): matched, missed, matched, matched,
 * missed.  Fragmentations count matched -> missed inside the span of its
 * matched frames (1..5): the miss in 2 counts, absence in 4 does not, the
 * trailing miss in 6 does not: frag 1; 3/5 matched: partly tracked.
 * Objects 2, 3, 4 in frames 1-5, matched in 4, 1 and 0 of them: 4/5 = 80%
 * is mostly tracked, 1/5 = 20% partly tracked, 0 mostly lost. */
static void fragmentation_and_ratios(void)
{
    strix_mot_box gt[32], hyp[32];
    int ng = 0, nh = 0;
    const int f1[] = {1, 2, 3, 5, 6}, m1[] = {1, 0, 1, 1, 0};
    for (int k = 0; k < 5; k++) {
        gt[ng++] = B(f1[k], 1, 0, 0, 10, 10);
        if (m1[k]) hyp[nh++] = B(f1[k], 1, 0, 0, 10, 10);
    }
    for (int o = 2; o <= 4; o++)
        for (int f = 1; f <= 5; f++) {
            gt[ng++] = B(f, o, 50.0f * o, 0, 10, 10);
            int matched = o == 2 ? f <= 4 : o == 3 ? f == 3 : 0;
            if (matched) hyp[nh++] = B(f, o, 50.0f * o, 0, 10, 10);
        }
    EVAL(gt, ng, hyp, nh, 0.5);
    EXPECT_L(frames, 6);
    EXPECT_L(frag, 1);
    EXPECT_L(tp, 3 + 4 + 1);
    EXPECT_L(fn, 2 + 1 + 4 + 5);
    EXPECT_L(mostly_tracked, 1);
    EXPECT_L(partly_tracked, 2);
    EXPECT_L(mostly_lost, 1);
}

/* Empty inputs give what py-motmetrics gives (checked against it):
 * no hyp: every GT box missed: MOTA = 1 - 3/3 = 0, MOTP NaN (no match),
 * idtp 0: IDF1 = 0/(3+0) = 0, IDP = 0/0 = NaN, IDR 0, all mostly lost;
 * no gt: MOTA = 1 - 2/0 = -inf, IDF1 = 0, IDP 0, IDR NaN;
 * neither: 0 frames, MOTA = 1 - 0/0 = NaN, IDF1 NaN. */
static void empty_inputs(void)
{
    strix_mot_box gt[] = {B(1, 1, 0, 0, 10, 10), B(1, 2, 50, 0, 10, 10), B(3, 1, 0, 0, 10, 10)};
    EVAL(gt, 3, NULL, 0, 0.5);
    EXPECT_L(frames, 2);
    EXPECT_L(fn, 3);
    EXPECT_L(tp, 0);
    EXPECT_D(mota, 0);
    EXPECT_D(motp, NAN);
    EXPECT_D(idf1, 0);
    EXPECT_D(idp, NAN);
    EXPECT_D(idr, 0);
    EXPECT_L(idfn, 3);
    EXPECT_L(mostly_lost, 2);
    EXPECT_L(hyp_ids, 0);
    EVAL(NULL, 0, gt, 2, 0.5);
    EXPECT_L(frames, 1);
    EXPECT_L(fp, 2);
    EXPECT_D(mota, -INFINITY);
    EXPECT_D(idf1, 0);
    EXPECT_D(idp, 0);
    EXPECT_D(idr, NAN);
    EXPECT_L(gt_ids, 0);
    EVAL(NULL, 0, NULL, 0, 0.5);
    EXPECT_L(frames, 0);
    EXPECT_D(mota, NAN);
    EXPECT_D(idf1, NAN);
}

static void bad_arguments(void)
{
    strix_mot_box ok[] = {B(1, 1, 0, 0, 10, 10), B(2, 1, 0, 0, 10, 10)};
    strix_mot_box dup[] = {B(2, 7, 0, 0, 10, 10), B(3, 7, 0, 0, 10, 10), B(3, 8, 0, 0, 10, 10), B(3, 7, 5, 5, 10, 10)};
    strix_mot_box inf[] = {B(1, 1, 0, 0, INFINITY, 10)};
    strix_mot_metrics m;
    strix_error e;
    strix_status st = strix_mot_evaluate(ok, 2, dup, 4, 0.5, &m, &e);
    TL_CHECK(st == STRIX_E_ARG && strstr(e.message, "hyp frame 3") && strstr(e.message, "id 7"),
             "duplicate hyp: status %d '%s'", st, e.message);
    st = strix_mot_evaluate(dup, 4, ok, 2, 0.5, &m, &e);
    TL_CHECK(st == STRIX_E_ARG && strstr(e.message, "gt frame 3") && strstr(e.message, "id 7"),
             "duplicate gt: status %d '%s'", st, e.message);
    st = strix_mot_evaluate(ok, 2, inf, 1, 0.5, &m, &e);
    TL_CHECK(st == STRIX_E_ARG && strstr(e.message, "not finite"), "infinite box: status %d '%s'", st, e.message);
    strix_mot_box neg[] = {B(1, 1, 0, 0, 10, -2)};
    st = strix_mot_evaluate(neg, 1, ok, 2, 0.5, &m, &e);
    TL_CHECK(st == STRIX_E_ARG && strstr(e.message, "gt frame 1 id 1") && strstr(e.message, "negative"),
             "negative height: status %d '%s'", st, e.message);
    const double bad_thr[] = {0, -0.5, 1.5, NAN};
    for (int i = 0; i < 4; i++) {
        st = strix_mot_evaluate(ok, 2, ok, 2, bad_thr[i], &m, &e);
        TL_CHECK(st == STRIX_E_ARG && strstr(e.message, "IoU threshold"), "threshold %g: status %d", bad_thr[i], st);
    }
    TL_CHECK(strix_mot_evaluate(ok, 2, ok, 2, 1.0, &m, &e) == STRIX_OK && m.tp == 2, "threshold 1 (exact boxes only)");
}

/* ---- random properties ---- */

/* A random stream of up to 64 objects: random lifespans, constant
 * velocities and sizes, random distinct ids, rows in frame order but
 * shuffled within frames.  Boxes are random floats (no two alike). */
static long random_stream(strix_mot_box *out, long cap, int frames, int objects)
{
    float (*p)[8] = malloc(sizeof *p * (size_t)objects);
    int *ids = malloc(sizeof *ids * (size_t)objects);
    if (!p || !ids || objects > 64) {
        free(p);
        free(ids);
        return -1;
    }
    for (int o = 0; o < objects; o++) {
        ids[o] = tl_int(-1000, 100000) * 64 + o; /* distinct */
        for (int k = 0; k < 8; k++) p[o][k] = tl_uniform(0, 1);
    }
    long n = 0;
    for (int f = 1; f <= frames; f++) {
        long f0 = n;
        for (int o = 0; o < objects && n < cap; o++) {
            int start = 1 + (int)(p[o][0] * frames / 2), end = start + 2 + (int)(p[o][1] * frames);
            if (f < start || f > end) continue;
            float t = (float)(f - start);
            out[n++] = B(f, ids[o], 400 * p[o][2] + t * (p[o][4] * 8 - 4), 300 * p[o][3] + t * (p[o][5] * 8 - 4),
                         10 + 50 * p[o][6], 10 + 80 * p[o][7]);
        }
        for (long i = n - 1; i > f0; i--) { /* shuffle within the frame */
            long j = f0 + (long)(tl_u64() % (uint64_t)(i - f0 + 1));
            strix_mot_box t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
    }
    free(p);
    free(ids);
    return n;
}

static int same_metrics(const strix_mot_metrics *a, const strix_mot_metrics *b)
{
    const double da[] = {a->mota, a->motp, a->idf1, a->idp, a->idr}, db[] = {b->mota, b->motp, b->idf1, b->idp, b->idr};
    for (int i = 0; i < 5; i++)
        if (!(da[i] == db[i] || (isnan(da[i]) && isnan(db[i])))) return 0;
    return a->frames == b->frames && a->gt == b->gt && a->hyp == b->hyp && a->tp == b->tp && a->fp == b->fp &&
           a->fn == b->fn && a->idsw == b->idsw && a->frag == b->frag && a->idtp == b->idtp && a->idfp == b->idfp &&
           a->idfn == b->idfn && a->gt_ids == b->gt_ids && a->hyp_ids == b->hyp_ids &&
           a->mostly_tracked == b->mostly_tracked && a->partly_tracked == b->partly_tracked &&
           a->mostly_lost == b->mostly_lost;
}

/* tracker output = ground truth (other ids): everything perfect */
static void random_perfect(void)
{
    enum { CAP = 4000 };
    strix_mot_box *gt = malloc(sizeof *gt * CAP), *hyp = malloc(sizeof *hyp * CAP);
    TL_CHECK(gt && hyp, "out of memory");
    for (int rep = 0; rep < 20 && !tl_g.failed; rep++) {
        long n = random_stream(gt, CAP, tl_int(1, 60), tl_int(1, 40));
        if (n < 0) {
            tl_fail("out of memory");
            break;
        }
        memcpy(hyp, gt, sizeof *gt * (size_t)n);
        for (long i = 0; i < n; i++) hyp[i].id = -3 * gt[i].id + 11;
        strix_mot_metrics m;
        strix_error e;
        if (strix_mot_evaluate(gt, n, hyp, n, 0.5, &m, &e)) tl_fail("evaluate: %s", e.message);
        else if (m.tp != n || m.fp || m.fn || m.idsw || m.frag || m.idtp != n || m.mota != 1 || m.idf1 != 1 ||
                 fabs(m.motp - 1) > 1e-12 || m.mostly_tracked != m.gt_ids || m.hyp_ids != m.gt_ids)
            tl_fail("rep %d, %ld boxes: tp %ld fp %ld fn %ld idsw %ld frag %ld idtp %ld mota %g idf1 %g", rep, n, m.tp,
                    m.fp, m.fn, m.idsw, m.frag, m.idtp, m.mota, m.idf1);
    }
    free(gt);
    free(hyp);
}

/* Jitter every box a little (most IoUs stay above the threshold, some
 * fall under), drop some, and give ids that merge, split and switch gt
 * tracks; then relabelling gt and hyp ids by any bijection changes nothing,
 * bit for bit. */
static void random_relabel_invariance(void)
{
    enum { CAP = 4000 };
    strix_mot_box *gt = malloc(sizeof *gt * CAP), *hyp = malloc(sizeof *hyp * CAP);
    TL_CHECK(gt && hyp, "out of memory");
    long switches = 0;
    for (int rep = 0; rep < 20 && !tl_g.failed; rep++) {
        long n = random_stream(gt, CAP, tl_int(2, 60), tl_int(2, 40)), nh = 0, fstart = 0;
        if (n < 0) {
            tl_fail("out of memory");
            break;
        }
        int period = tl_int(3, 20);
        for (long i = 0; i < n; i++) {
            if (i > 0 && gt[i].frame != gt[i - 1].frame) fstart = nh;
            if (tl_uniform(0, 1) < 0.1f) continue;
            strix_mot_box h = gt[i];
            h.x += tl_uniform(-4, 4);
            h.y += tl_uniform(-4, 4);
            h.w *= tl_uniform(0.8f, 1.2f);
            h.id = (int)((unsigned)gt[i].id % 7u) + gt[i].frame / period * 7;
            int dup = 0; /* the id scheme gives some (frame, id) twice: keep the first */
            for (long j = fstart; j < nh && !dup; j++) dup = hyp[j].id == h.id;
            if (!dup) hyp[nh++] = h;
        }
        strix_mot_metrics a, b;
        strix_error e;
        double thr = tl_uniform(0.3f, 0.8f);
        if (strix_mot_evaluate(gt, n, hyp, nh, thr, &a, &e)) {
            tl_fail("evaluate: %s", e.message);
            break;
        }
        unsigned mul = 2u * (unsigned)tl_int(1, 1000) + 1, add = (unsigned)tl_u64(); /* odd mul: a bijection */
        for (long i = 0; i < n; i++) gt[i].id = (int)((unsigned)gt[i].id * mul + add);
        for (long i = 0; i < nh; i++) hyp[i].id = (int)(~(unsigned)hyp[i].id * 2654435761u);
        if (strix_mot_evaluate(gt, n, hyp, nh, thr, &b, &e)) {
            tl_fail("evaluate: %s", e.message);
            break;
        }
        if (!same_metrics(&a, &b))
            tl_fail("rep %d: relabelled ids changed the metrics: mota %.17g -> %.17g, idf1 %.17g -> %.17g, idsw %ld -> %ld",
                    rep, a.mota, b.mota, a.idf1, b.idf1, a.idsw, b.idsw);
        switches += a.idsw;
    }
    free(gt);
    free(hyp);
    TL_CHECK(switches > 0, "the streams never produced an ID switch: the test is too weak");
}

/* hyp = gt minus k random boxes, plus j boxes that overlap nothing:
 * fn = k, fp = j, tp = n - k, no switches, idtp = n - k, MOTA = 1 - (k+j)/n. */
static void random_drop_and_add(void)
{
    enum { CAP = 4000 };
    strix_mot_box *gt = malloc(sizeof *gt * CAP), *hyp = malloc(sizeof *hyp * (CAP + 100));
    TL_CHECK(gt && hyp, "out of memory");
    for (int rep = 0; rep < 20 && !tl_g.failed; rep++) {
        long n = random_stream(gt, CAP, tl_int(1, 60), tl_int(1, 40)), nh = 0, k = 0;
        if (n < 0) {
            tl_fail("out of memory");
            break;
        }
        double p = tl_uniform(0, 0.5f);
        for (long i = 0; i < n; i++) {
            if (tl_uniform(0, 1) < p) {
                k++;
                continue;
            }
            hyp[nh] = gt[i];
            hyp[nh++].id += 5;
        }
        int j = tl_int(0, 100);
        for (int i = 0; i < j; i++) /* far from every gt box (x < 1000), ids unlike theirs */
            hyp[nh++] = B(tl_int(1, 70), -2000000000 + i, 5000 + 20 * i, 0, 10, 10);
        strix_mot_metrics m;
        strix_error e;
        if (strix_mot_evaluate(gt, n, hyp, nh, 0.5, &m, &e)) {
            tl_fail("evaluate: %s", e.message);
            break;
        }
        if (m.fn != k || m.fp != j || m.tp != n - k || m.idsw || m.idtp != n - k || m.idfn != k || m.idfp != j ||
            !same_d(m.mota, n ? 1 - (double)(k + j) / n : (j ? -INFINITY : NAN), 1e-12))
            tl_fail("rep %d: %ld boxes, dropped %ld, added %d: fn %ld fp %ld tp %ld idsw %ld idtp %ld mota %g", rep,
                    n, k, j, m.fn, m.fp, m.tp, m.idsw, m.idtp, m.mota);
    }
    free(gt);
    free(hyp);
}

/* 100k boxes (2000 frames x 50 objects, apart from each other) with
 * jittered tracker output, 5% dropped, each object under a new id every 500
 * frames: finishes (no whole-sequence quadratic work) and the counts are
 * exact.  Jitter <= 2 px on a 40 px box keeps IoU >= 36/44 > 0.5: every
 * tracker box matches its object; 3 id changes per object: 150 switches;
 * identity: each gt track best matches the id covering most of its matched
 * frames (id o + 1000 k only ever overlaps object o). */
static void large_stream(void)
{
    enum { FRAMES = 2000, OBJ = 50, CAP = FRAMES * OBJ, SPAN = 500 };
    strix_mot_box *gt = malloc(sizeof *gt * CAP), *hyp = malloc(sizeof *hyp * CAP);
    TL_CHECK(gt && hyp, "out of memory");
    long n = 0, nh = 0, hits[OBJ][FRAMES / SPAN] = {{0}}, idtp = 0;
    for (int f = 1; f <= FRAMES; f++)
        for (int o = 0; o < OBJ; o++) {
            gt[n] = B(f, o, 100.0f * (o % 10) + 0.01f * f, 100.0f * (o / 10), 40, 60);
            if (tl_uniform(0, 1) < 0.05f) {
                n++;
                continue;
            }
            hyp[nh] = gt[n++];
            hyp[nh].x += tl_uniform(-2, 2);
            hyp[nh++].id = o + 1000 * ((f - 1) / SPAN);
            hits[o][(f - 1) / SPAN]++;
        }
    for (int o = 0; o < OBJ; o++) {
        long best = 0;
        for (int k = 0; k < FRAMES / SPAN; k++)
            if (hits[o][k] > best) best = hits[o][k];
        idtp += best;
    }
    strix_mot_metrics m;
    strix_error e;
    strix_status st = strix_mot_evaluate(gt, n, hyp, nh, 0.5, &m, &e);
    free(gt);
    free(hyp);
    TL_CHECK(st == STRIX_OK, "evaluate: %s", e.message);
    TL_CHECK(m.frames == FRAMES && m.tp == nh && m.fn == n - nh && m.fp == 0, "frames %ld tp %ld fn %ld fp %ld",
             m.frames, m.tp, m.fn, m.fp);
    TL_CHECK(m.idsw == 3 * OBJ, "idsw %ld, want %d", m.idsw, 3 * OBJ);
    TL_CHECK(m.hyp_ids == 4 * OBJ && m.gt_ids == OBJ && m.mostly_tracked == OBJ, "ids %d / %d, mostly tracked %d",
             m.hyp_ids, m.gt_ids, m.mostly_tracked);
    TL_CHECK(m.idtp == idtp && m.idfn == n - idtp && m.idfp == nh - idtp, "idtp %ld, want %ld", m.idtp, idtp);
}

/* ---- py-motmetrics goldens ---- */

static int golden_value(const char *path, const char *key, double *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256], k[64];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = line[0] != '#' && sscanf(line, "%63s %lf", k, v) == 2 && !strcmp(k, key);
    fclose(f);
    return found;
}

static void run_golden(int k)
{
    char gp[256], hp[256], ep[256];
    snprintf(gp, sizeof gp, GOLDEN_DIR "/case%d.gt.txt", k);
    snprintf(hp, sizeof hp, GOLDEN_DIR "/case%d.hyp.txt", k);
    snprintf(ep, sizeof ep, GOLDEN_DIR "/case%d.expected.txt", k);
    strix_mot_box *gt = NULL, *hyp = NULL;
    long ng = 0, nh = 0;
    strix_error e;
    if (strix_mot_read(gp, &gt, &ng, &e) || strix_mot_read(hp, &hyp, &nh, &e)) {
        free(gt);
        tl_fail("%s (run from the repository root)", e.message);
        return;
    }
    double iou = 0;
    strix_status st = golden_value(ep, "iou", &iou) ? strix_mot_evaluate(gt, ng, hyp, nh, iou, &M, &e) : STRIX_E_IO;
    free(gt);
    free(hyp);
    TL_CHECK(st == STRIX_OK, "%s: %s", ep, st == STRIX_E_IO ? "missing or has no iou" : e.message);
    /* py-motmetrics name, ours; counts exact, ratios to 1e-9 */
    struct {
        const char *key;
        double got;
        int ratio;
    } want[] = {
        {"num_frames", (double)M.frames, 0},        {"num_objects", (double)M.gt, 0},
        {"num_predictions", (double)M.hyp, 0},      {"num_switches", (double)M.idsw, 0},
        {"num_false_positives", (double)M.fp, 0},   {"num_misses", (double)M.fn, 0},
        {"num_fragmentations", (double)M.frag, 0},  {"mota", M.mota, 1},
        {"motp", 1 - M.motp, 1},                    {"idtp", (double)M.idtp, 0},
        {"idfp", (double)M.idfp, 0},                {"idfn", (double)M.idfn, 0},
        {"idf1", M.idf1, 1},                        {"idp", M.idp, 1},
        {"idr", M.idr, 1},                          {"num_unique_objects", (double)M.gt_ids, 0},
        {"mostly_tracked", (double)M.mostly_tracked, 0}, {"partially_tracked", (double)M.partly_tracked, 0},
        {"mostly_lost", (double)M.mostly_lost, 0},  {"num_matches", (double)(M.tp - M.idsw), 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double v;
        TL_CHECK(golden_value(ep, want[i].key, &v), "%s: no '%s'", ep, want[i].key);
        TL_CHECK(same_d(want[i].got, v, want[i].ratio ? 1e-9 : 0), "case%d %s: strix %.17g, py-motmetrics %.17g", k,
                 want[i].key, want[i].got, v);
    }
}

static void golden_case1(void) { run_golden(1); }
static void golden_case2(void) { run_golden(2); }
static void golden_case3(void) { run_golden(3); }
static void golden_case4(void) { run_golden(4); }

/* ---- the reader ---- */

static int write_temp(char *path, size_t n, const char *text)
{
    snprintf(path, n, "/tmp/strix-moteval-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    size_t len = strlen(text);
    int ok = write(fd, text, len) == (ssize_t)len;
    close(fd);
    return ok;
}

/* expect a read of text to fail naming path:line and containing what */
static int read_fails(const char *text, int line, const char *what)
{
    char path[64], where[96];
    if (!write_temp(path, sizeof path, text)) {
        tl_fail("cannot write a temp file");
        return 0;
    }
    strix_mot_box *b = (strix_mot_box *)&b;
    long n = -1;
    strix_error e;
    strix_status st = strix_mot_read(path, &b, &n, &e);
    unlink(path);
    snprintf(where, sizeof where, "%s:%d:", path, line);
    if (st != STRIX_E_IO || !strstr(e.message, where) || !strstr(e.message, what) || b || n) {
        tl_fail("'%.40s': status %d, '%s' (want %s ... %s)", text, st, st ? e.message : "", where, what);
        if (!st) free(b);
        return 0;
    }
    return 1;
}

static void read_good_file(void)
{
    const char *text = "1,1,10.5,20,30,40,0.9,-1,-1,-1\n"
                       "\n"
                       "1, 2 , 1,2,3,4\r\n"        /* spaces around commas, CRLF, no conf */
                       "  2\t3\t-1.25\t2e1\t3\t4\t1\n" /* tabs */
                       "2 4 0 0 5 5 0.5 x y z,\n"  /* spaces; non-numeric extra columns ignored */
                       "3.0,-7,0,0,1,1,\n";        /* integral float frame, trailing comma */
    char path[64];
    TL_CHECK(write_temp(path, sizeof path, text), "cannot write a temp file");
    strix_mot_box *b = NULL;
    long n = 0;
    strix_error e;
    strix_status st = strix_mot_read(path, &b, &n, &e);
    unlink(path);
    TL_CHECK(st == STRIX_OK, "read: %s", e.message);
    strix_mot_box want[] = {{1, 1, 10.5f, 20, 30, 40, 0.9f}, {1, 2, 1, 2, 3, 4, 1}, {2, 3, -1.25f, 20, 3, 4, 1},
                            {2, 4, 0, 0, 5, 5, 0.5f},         {3, -7, 0, 0, 1, 1, 1}};
    int ok = n == 5;
    for (long i = 0; ok && i < n; i++) ok = !memcmp(&b[i], &want[i], sizeof want[i]);
    free(b);
    TL_CHECK(ok, "read %ld boxes, want 5 as written", n);

    TL_CHECK(write_temp(path, sizeof path, "\n  \n"), "cannot write a temp file");
    b = (strix_mot_box *)&b;
    st = strix_mot_read(path, &b, &n, &e);
    unlink(path);
    TL_CHECK(st == STRIX_OK && n == 0 && !b, "blank file: status %d n %ld", st, n);
}

static void read_malformed_file(void)
{
    if (!read_fails("1,1,0,0,10,10\n2,1,0,0,10\n", 2, "5 fields")) return;
    if (!read_fails("1,1,0,0,10,10\n\n1,2,abc,0,10,10\n", 3, "field 3 'abc'")) return;
    if (!read_fails("1.5,1,0,0,10,10\n", 1, "frame 1.5 is not an integer")) return;
    if (!read_fails("1,1,,0,10,10\n", 1, "field 3 is empty")) return;
    if (!read_fails("1,1,0,0,nan,10\n", 1, "not a finite number")) return;
    if (!read_fails("1,1,0,0,1e300,10\n", 1, "too large")) return;
    if (!read_fails("1,1,0,0,10,10\n2,1,0,0,10,10\n1,2,0,0,10,10\n1,1,5,5,10,10\n", 4, "frame 1 id 1 again (first at line 1")) return;
    strix_mot_box *b;
    long n;
    strix_error e;
    strix_status st = strix_mot_read("/nonexistent/strix/gt.txt", &b, &n, &e);
    TL_CHECK(st == STRIX_E_IO && strstr(e.message, "/nonexistent/strix/gt.txt: cannot open"), "missing file: %d '%s'",
             st, e.message);
    st = strix_mot_read("/tmp", &b, &n, &e);
    TL_CHECK(st == STRIX_E_IO && strstr(e.message, "/tmp: is a directory"), "a directory: %d '%s'", st, e.message);
}

/* A binary file gets one line naming file:line and the offending byte, and
 * echoes none of its bytes; a negative width or height is refused. */
static void read_binary_and_negative(void)
{
    static const char bin[] = "1,1,0,0,10,10\n2,1,\x89PNG\x1a\x01\xff,0,10,10\n";
    static const char high[] = "1,1,0,0,10,10\n\n3,1,\xff\xfe\x80,0,10,10\n";
    static const char nul[] = "1,1,0,0,10,10\n1,2\0,0,0,10,10\n";
    struct {
        const char *data;
        size_t size;
        const char *want;
    } cases[] = {
        {bin, sizeof bin - 1, "t.txt:2: byte 0x1a at column 9 is not text (is this a binary file?"},
        {high, sizeof high - 1, "t.txt:3: field 3 '\\xff\\xfe\\x80' is not a finite number"},
        {nul, sizeof nul - 1, "t.txt:2: byte 0x00 at column 4 is not text"},
        {"1,1,0,0,-3,10\n", 14, "t.txt:1: bb_width -3 is negative"},
        {"1,1,0,0,10,10\n1,2,0,0,10,-0.5\n", 30, "t.txt:2: bb_height -0.5 is negative"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strix_mot_box *b = (strix_mot_box *)&b;
        long n = -1;
        strix_error e;
        strix_status st = strix_mot_parse("t.txt", cases[i].data, cases[i].size, &b, &n, &e);
        int printable = 1;
        for (const char *c = e.message; st && *c; c++) printable &= *c >= 0x20 && *c < 0x7f;
        TL_CHECK(st == STRIX_E_IO && strstr(e.message, cases[i].want) && printable && !b && !n,
                 "case %zu: status %d '%s' (want '%s')", i, st, st ? e.message : "", cases[i].want);
    }
    /* a zero-sized box is allowed; the file reader refuses the same line */
    strix_mot_box *b = NULL;
    long n = 0;
    strix_error e;
    TL_CHECK(strix_mot_parse("t.txt", "1,1,0,0,0,0\n", 12, &b, &n, &e) == STRIX_OK && n == 1, "zero box: %s", e.message);
    free(b);
    read_fails("1,1,0,0,10,10\n7,1,5,5,10,-1\n", 2, "bb_height -1 is negative");
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(perfect_tracking);
    TL_RUN(one_missed_box);
    TL_RUN(one_false_positive);
    TL_RUN(id_switch_at_crossing);
    TL_RUN(track_split);
    TL_RUN(iou_threshold_edges);
    TL_RUN(keeps_last_match);
    TL_RUN(input_order_breaks_ties);
    TL_RUN(fragmentation_and_ratios);
    TL_RUN(empty_inputs);
    TL_RUN(bad_arguments);
    TL_RUN(random_perfect);
    TL_RUN(random_relabel_invariance);
    TL_RUN(random_drop_and_add);
    TL_RUN(large_stream);
    TL_RUN(golden_case1);
    TL_RUN(golden_case2);
    TL_RUN(golden_case3);
    TL_RUN(golden_case4);
    TL_RUN(read_good_file);
    TL_RUN(read_malformed_file);
    TL_RUN(read_binary_and_negative);
    TL_MAIN_END();
}
