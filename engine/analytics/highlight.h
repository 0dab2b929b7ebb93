/* highlight.h — turns per-frame activity (how much of interest each frame of
 * a video holds, e.g. its detection count) into highlight segments: time
 * ranges worth keeping in a highlight reel, frame aligned so that a cutter
 * can copy whole frames.
 *
 * Times are seconds.  Frame i spans [pts[i], end(i)) where end(i) = pts[i+1],
 * and end(n-1) = end_time.  A segment spans whole frames first..last, i.e.
 * [pts[first], end(last)); its length is end(last) - pts[first].
 *
 * The rules, applied in this order:
 *  1. Runs: each maximal run of consecutive frames with activity > 0 is a
 *     segment.
 *  2. Gap merge: walking in time order, a segment merges into the one before
 *     it when the silence between them, next.start - prev.end, is < gap
 *     (strictly: a silence of exactly gap keeps them apart).  Two runs never
 *     touch (an inactive frame lies between), so gap 0 keeps the runs as
 *     they are; segments that touch after padding always merge (rule 3).
 *  3. Padding: each segment becomes [start - pad, end + pad], clamped to
 *     [pts[0], end_time], then snapped outward to frame boundaries: the start
 *     moves back to the pts of the frame it falls in, the end forward to the
 *     end of the frame it falls in (a time exactly on a boundary stays put).
 *     Segments that now overlap or touch merge.
 *  4. min_len: segments shorter than min_len (after padding) are dropped;
 *     length == min_len is kept.
 *  5. Cap (max_total > 0 and the total length is above it): segments are
 *     taken by decreasing activity (ties: the earlier first) while the kept
 *     total plus the segment's length is <= max_total; one that does not fit
 *     is skipped and the next ones are still tried.  When not even the most
 *     active segment fits, the result is that segment alone, trimmed to its
 *     frame-aligned window of length <= max_total with the most activity
 *     (ties: the earliest window; a window runs from a frame's start to as
 *     many whole frames as fit; window sums are running sums, exact for
 *     integer or binary-fraction activity, so near-equal windows of other
 *     values may tie-break either way).  If no single frame of it fits in
 *     max_total, the result is empty.  The trimmed segment is kept even when
 *     shorter than min_len.
 * The output is in time order; segments are disjoint and never touch (rule 3
 * merges touching ones).  activity is the sum of activity[first..last],
 * accumulated in frame order (frames between merged runs add 0).
 *
 * Cost: O(n) time over the frames plus O(S log n + S log S) for S segments;
 * memory: the caller's arrays plus O(S) (no per-frame allocation), so ten
 * million frames are fine.
 */
#ifndef STRIX_HIGHLIGHT_H
#define STRIX_HIGHLIGHT_H

#include "strix.h"

typedef struct strix_highlight_options {
    double gap;       /* seconds; merge segments separated by less than this (default 1.0) */
    double pad;       /* seconds added on both sides of each segment (default 0.5) */
    double min_len;   /* seconds; drop segments shorter than this, after padding (default 0) */
    double max_total; /* seconds; 0: no cap; else the reel's total length (default 0) */
} strix_highlight_options;

/* Defaults: gap 1.0, pad 0.5, min_len 0, max_total 0.  Every option must be
 * >= 0 and not NaN (+infinity is allowed: gap = inf merges everything,
 * pad = inf covers the whole video, max_total = inf caps nothing). */
void strix_highlight_options_init(strix_highlight_options *o);

typedef struct strix_highlight_segment {
    long first, last;  /* first and last frame index (inclusive) */
    double start, end; /* seconds: pts[first] and the end of frame `last` */
    double activity;   /* sum of activity over frames first..last */
} strix_highlight_segment;

/* pts[n]: each frame's presentation time, finite and strictly increasing;
 * end_time: when the last frame ends (finite, > pts[n-1]);
 * activity[n]: finite and >= 0 (0: nothing of interest).  o NULL means the
 * defaults.  Writes the segments in time order to a malloc'd array *out
 * (*n_out of them; *out is NULL when there are none; free() it).  n == 0
 * gives zero segments (pts and activity may then be NULL).
 * Errors: STRIX_E_ARG for a bad option or input (the message names the
 * option or the frame), STRIX_E_NOMEM; *out is then NULL and *n_out 0. */
strix_status strix_highlight_segments(const double *pts, const double *activity, long n, double end_time,
                                      const strix_highlight_options *o, strix_highlight_segment **out,
                                      long *n_out, strix_error *err);

#endif
