/* moteval.h — multi-object-tracking evaluation (CLEAR MOT and identity
 * metrics) of a tracker's output against ground truth, with py-motmetrics'
 * conventions, so numbers compare with the MOTChallenge devkits and papers.
 *
 * Conventions (py-motmetrics 1.4, checked against it by
 * tools/reference/check_moteval.py and tests/golden/moteval/):
 *  - IoU of boxes (x, y, w, h) in pixels; a GT box and a hypothesis box may
 *    match when 1 - IoU <= 1 - iou_thresh (py-motmetrics' distance test with
 *    distth = 1 - iou_thresh; 0.5 is the MOTChallenge threshold).
 *  - Per frame (frames in increasing order, boxes within a frame in input
 *    order): first each GT object keeps the hypothesis id it was last matched
 *    to (in any earlier frame) when that id is present and may match; then
 *    the rest are matched optimally (most matches, then least total 1 - IoU).
 *    A match is an ID switch when the GT object was last matched to another
 *    hypothesis id.  tp counts matches including switches.
 *  - frag: per GT object, the times it goes from matched to missed between
 *    its first and last matched frame (frames where it is absent from the GT
 *    are skipped, not counted as misses).
 *  - mostly_tracked: matched in >= 80% of the frames where it is present;
 *    mostly_lost: < 20%; partly_tracked: the rest.
 *  - IDF1 (Ristani et al. 2016): one-to-one global matching of GT and
 *    hypothesis trajectories maximising idtp, the frames in which a matched
 *    pair may match (IoU test above, whatever the per-frame matching did);
 *    idfn = gt - idtp, idfp = hyp - idtp.
 *  - MOTP here is the mean IoU of the tp matches (higher is better, as
 *    MOTChallenge/TrackEval report it); py-motmetrics' "motp" is 1 - this.
 *  - Divisions by zero give what py-motmetrics gives: with no GT boxes
 *    mota = -inf (NaN when there are no hypotheses either), idr = NaN,
 *    idf1 = idp = 0 (NaN with no hypotheses); with no hypotheses mota = 0
 *    (GT present), idp = NaN, idf1 = idr = 0; motp = NaN when tp == 0.
 *  - frames counts the distinct frame numbers in GT and hypotheses together.
 * conf is read but not used: filter rows before evaluating if needed.
 */
#ifndef STRIX_MOTEVAL_H
#define STRIX_MOTEVAL_H

#include "strix.h"

/* One MOTChallenge row: frame (1-based in MOTChallenge files), track id,
 * bb_left, bb_top, bb_width, bb_height in pixels, confidence. */
typedef struct strix_mot_box {
    int frame;
    int id;
    float x, y, w, h;
    float conf;
} strix_mot_box;

typedef struct strix_mot_metrics {
    long frames, gt, hyp;        /* distinct frames seen, GT boxes, hypothesis boxes */
    long tp, fp, fn, idsw, frag; /* CLEAR MOT counts (tp includes the idsw matches) */
    double mota, motp;           /* mota = 1 - (fn + fp + idsw) / gt; motp = mean IoU of tp */
    long idtp, idfp, idfn;       /* identity counts */
    double idf1, idp, idr;       /* 2 idtp / (gt + hyp), idtp / hyp, idtp / gt */
    int gt_ids, hyp_ids;         /* distinct track ids */
    int mostly_tracked, partly_tracked, mostly_lost;
} strix_mot_metrics;

/* Evaluate hyp against gt (rows in any order; grouped by frame internally,
 * keeping input order within a frame).  iou_thresh in (0, 1].  A (frame, id)
 * present twice in gt or in hyp, a non-finite box or one with a negative
 * width or height, is STRIX_E_ARG naming
 * it.  Time O(n log n + per-frame gt x hyp + identity matching of the
 * trajectories that overlap each other); memory O(n + overlapping pairs). */
strix_status strix_mot_evaluate(const strix_mot_box *gt, long n_gt, const strix_mot_box *hyp, long n_hyp,
                                double iou_thresh, strix_mot_metrics *m, strix_error *err);

/* Read a MOTChallenge text file: one box per line,
 * "frame,id,bb_left,bb_top,bb_width,bb_height[,conf[,x,y,z...]]", fields
 * separated by a comma and/or whitespace; columns after conf are ignored,
 * conf defaults to 1, blank lines are skipped.  frame and id must be integers
 * (1 and 1.0 both read), the box finite with bb_width, bb_height >= 0; a
 * control byte (a binary file) is an error that echoes none of the bytes.  On success *out is a malloc'd array
 * of *n boxes (NULL when *n == 0) for the caller to free().  Errors
 * (STRIX_E_IO) name file:line, including a (frame, id) given twice. */
strix_status strix_mot_read(const char *path, strix_mot_box **out, long *n, strix_error *err);

/* The same from size bytes in memory (the file's contents); name stands for
 * the file in messages.  data is only read. */
strix_status strix_mot_parse(const char *name, const void *data, size_t size, strix_mot_box **out, long *n,
                             strix_error *err);

#endif
