/* highlight.c — highlight segments from per-frame activity (rules in
 * highlight.h).  Segments are worked on as frame index ranges in one array,
 * rewritten in place by each rule, so the times are always exact frame
 * boundaries and the only allocations are O(segments). */
#include "highlight.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "util.h"

void strix_highlight_options_init(strix_highlight_options *o)
{
    o->gap = 1.0;
    o->pad = 0.5;
    o->min_len = 0.0;
    o->max_total = 0.0;
}

typedef struct frames {
    const double *pts, *act;
    long n;
    double end_time;
} frames;

/* When frame i ends: the next frame's pts, end_time for the last. */
static double frame_end(const frames *f, long i) { return i + 1 < f->n ? f->pts[i + 1] : f->end_time; }

static strix_status check_option(const char *name, double v, strix_error *err)
{
    if (isnan(v) || v < 0)
        return strix_fail(err, STRIX_E_ARG, "highlight: %s = %g is invalid (give a number of seconds >= 0)", name,
                          v);
    return STRIX_OK;
}

static strix_status check_inputs(const frames *f, const strix_highlight_options *o, strix_error *err)
{
    strix_status st;
    if ((st = check_option("gap", o->gap, err)) || (st = check_option("pad", o->pad, err)) ||
        (st = check_option("min_len", o->min_len, err)) || (st = check_option("max_total", o->max_total, err)))
        return st;
    if (f->n < 0) return strix_fail(err, STRIX_E_ARG, "highlight: frame count %ld is negative", f->n);
    if (f->n == 0) return STRIX_OK;
    if (!f->pts || !f->act) return strix_fail(err, STRIX_E_ARG, "highlight: pts and activity are required");
    for (long i = 0; i < f->n; i++) {
        if (!isfinite(f->pts[i]))
            return strix_fail(err, STRIX_E_ARG, "highlight: pts[%ld] = %g is not a finite time", i, f->pts[i]);
        if (i && !(f->pts[i] > f->pts[i - 1]))
            return strix_fail(err, STRIX_E_ARG,
                              "highlight: pts[%ld] = %.17g is not after pts[%ld] = %.17g (frame times must increase)",
                              i, f->pts[i], i - 1, f->pts[i - 1]);
        if (!isfinite(f->act[i]) || f->act[i] < 0)
            return strix_fail(err, STRIX_E_ARG, "highlight: activity[%ld] = %g is invalid (must be finite and >= 0)",
                              i, f->act[i]);
    }
    if (!isfinite(f->end_time) || !(f->end_time > f->pts[f->n - 1]))
        return strix_fail(err, STRIX_E_ARG,
                          "highlight: end_time %.17g must be finite and after the last frame's pts %.17g", f->end_time,
                          f->pts[f->n - 1]);
    return STRIX_OK;
}

/* Rule 3's outward snapping: the frame containing time t (t > pts[0]),
 * searched in [0, hi]: the largest i with pts[i] <= t. */
static long frame_at_start(const frames *f, long hi, double t)
{
    long lo = 0; /* pts[lo] <= t always */
    while (lo < hi) {
        long mid = lo + (hi - lo + 1) / 2;
        if (f->pts[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The frame whose end is the first at or after time t (t < end_time),
 * searched in [lo, n-1]: the smallest i with end(i) >= t. */
static long frame_at_end(const frames *f, long lo, double t)
{
    long hi = f->n - 1; /* end(hi) >= t always */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (frame_end(f, mid) >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static double seg_len(const frames *f, const strix_highlight_segment *s)
{
    return frame_end(f, s->last) - f->pts[s->first];
}

/* Rule 1, then rule 2 while collecting: returns the segment count. */
static long runs_merged(const frames *f, double gap, strix_highlight_segment *seg)
{
    long k = 0;
    for (long i = 0; i < f->n;) {
        if (!(f->act[i] > 0)) {
            i++;
            continue;
        }
        long j = i;
        while (j + 1 < f->n && f->act[j + 1] > 0) j++;
        if (k && f->pts[i] - frame_end(f, seg[k - 1].last) < gap) {
            seg[k - 1].last = j;
        } else {
            seg[k].first = i;
            seg[k].last = j;
            k++;
        }
        i = j + 1;
    }
    return k;
}

/* Rule 3: pad, snap outward, merge what overlaps or touches. */
static long pad_merge(const frames *f, double pad, strix_highlight_segment *seg, long k)
{
    long m = 0;
    for (long s = 0; s < k; s++) {
        double t0 = f->pts[seg[s].first] - pad, t1 = frame_end(f, seg[s].last) + pad;
        long a = t0 > f->pts[0] ? frame_at_start(f, seg[s].first, t0) : 0;
        long b = t1 < f->end_time ? frame_at_end(f, seg[s].last, t1) : f->n - 1;
        if (m && a <= seg[m - 1].last + 1) {
            if (b > seg[m - 1].last) seg[m - 1].last = b;
        } else {
            seg[m].first = a;
            seg[m].last = b;
            m++;
        }
    }
    return m;
}

typedef struct ranked {
    double activity;
    long index;
} ranked;

static int by_activity(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->activity != b->activity) return a->activity > b->activity ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Rule 5's trim: the window of seg with length <= cap and the most activity
 * (ties: the earliest), by a two-pointer sweep.  Returns 0 when no single
 * frame fits. */
static int best_window(const frames *f, strix_highlight_segment *seg, double cap)
{
    long bi = -1, bj = -1, j = seg->first - 1;
    double best = -1, sum = 0; /* sum = activity[i..j], 0 when j < i */
    for (long i = seg->first; i <= seg->last; i++) {
        while (j < seg->last && frame_end(f, j + 1) - f->pts[i] <= cap) sum += f->act[++j];
        if (j >= i && sum > best) {
            best = sum;
            bi = i;
            bj = j;
        }
        if (j > i) {
            sum -= f->act[i];
        } else {
            j = i;
            sum = 0;
        }
    }
    if (bi < 0) return 0;
    seg->first = bi;
    seg->last = bj;
    seg->activity = 0; /* exact, in frame order: the running sum may have drifted */
    for (long i = bi; i <= bj; i++) seg->activity += f->act[i];
    return 1;
}

/* Rule 5: marks the kept segments in keep[]; returns how many, or -1 when
 * out of memory.  seg[].activity must be set. */
static long cap_total(const frames *f, double cap, strix_highlight_segment *seg, long k, unsigned char *keep)
{
    ranked *order = malloc((size_t)k * sizeof *order);
    if (!order) return -1;
    for (long s = 0; s < k; s++) {
        order[s].activity = seg[s].activity;
        order[s].index = s;
        keep[s] = 0;
    }
    qsort(order, (size_t)k, sizeof *order, by_activity);
    long top = order[0].index, kept = 0;
    if (seg_len(f, &seg[top]) > cap) {
        kept = best_window(f, &seg[top], cap);
        keep[top] = (unsigned char)kept;
    } else {
        double used = 0;
        for (long r = 0; r < k; r++) {
            long s = order[r].index;
            double len = seg_len(f, &seg[s]);
            if (used + len <= cap) {
                used += len;
                keep[s] = 1;
                kept++;
            }
        }
    }
    free(order);
    return kept;
}

strix_status strix_highlight_segments(const double *pts, const double *activity, long n, double end_time,
                                      const strix_highlight_options *o, strix_highlight_segment **out,
                                      long *n_out, strix_error *err)
{
    strix_highlight_options defaults;
    if (!o) {
        strix_highlight_options_init(&defaults);
        o = &defaults;
    }
    if (!out || !n_out) return strix_fail(err, STRIX_E_ARG, "highlight: out and n_out are required");
    *out = NULL;
    *n_out = 0;
    frames f = {pts, activity, n, end_time};
    strix_status st = check_inputs(&f, o, err);
    if (st) return st;

    long runs = 0;
    for (long i = 0; i < n; i++) runs += activity[i] > 0 && (i == 0 || !(activity[i - 1] > 0));
    if (runs == 0) return STRIX_OK;
    if ((uint64_t)runs > SIZE_MAX / sizeof(strix_highlight_segment))
        return strix_fail(err, STRIX_E_NOMEM, "highlight: %ld segments do not fit in memory", runs);
    strix_highlight_segment *seg = malloc((size_t)runs * sizeof *seg);
    if (!seg) return strix_fail(err, STRIX_E_NOMEM, "highlight: out of memory for %ld segments", runs);

    long k = runs_merged(&f, o->gap, seg);
    k = pad_merge(&f, o->pad, seg, k);
    long m = 0; /* rule 4 */
    for (long s = 0; s < k; s++)
        if (!(seg_len(&f, &seg[s]) < o->min_len)) seg[m++] = seg[s];
    k = m;
    double total = 0;
    for (long s = 0; s < k; s++) {
        double a = 0;
        for (long i = seg[s].first; i <= seg[s].last; i++) a += activity[i];
        seg[s].activity = a;
        total += seg_len(&f, &seg[s]);
    }
    if (k && o->max_total > 0 && total > o->max_total) {
        unsigned char *keep = malloc((size_t)k);
        long kept = keep ? cap_total(&f, o->max_total, seg, k, keep) : -1;
        if (kept < 0) {
            free(keep);
            free(seg);
            return strix_fail(err, STRIX_E_NOMEM, "highlight: out of memory ranking %ld segments", k);
        }
        m = 0;
        for (long s = 0; s < k; s++)
            if (keep[s]) seg[m++] = seg[s];
        free(keep);
        k = m;
    }
    if (k == 0) {
        free(seg);
        return STRIX_OK;
    }
    for (long s = 0; s < k; s++) {
        seg[s].start = pts[seg[s].first];
        seg[s].end = frame_end(&f, seg[s].last);
    }
    strix_highlight_segment *shrunk = realloc(seg, (size_t)k * sizeof *seg);
    *out = shrunk ? shrunk : seg;
    *n_out = k;
    return STRIX_OK;
}
