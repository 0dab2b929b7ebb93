/* count.h — what a tracked video adds up to: per track its class (the most
 * frequent class of its detections), first and last frame, frames seen;
 * unique tracks per class; crossings of a counting line, in and out; and
 * each track's recent centres for drawing trails.  Fed one frame at a
 * time with the tracker's identities (engine/strix.h strix_tracker). */
#ifndef STRIX_COUNT_H
#define STRIX_COUNT_H

#include "strix.h"

typedef struct strix_counter strix_counter;

/* One track's totals. */
typedef struct strix_track_info {
    int id;
    int class_id;            /* the class it was detected as most often (ties: the lowest id) */
    long first, last;        /* frame indices */
    long frames;             /* frames with a detection */
    double start, end;       /* times of the first and last frame, seconds */
    int line_in, line_out;   /* its crossings of the counting line */
} strix_track_info;

/* A crossing of the counting line by a track's box centre. */
typedef struct strix_crossing {
    int id, class_id;
    int in;                  /* 1: in, 0: out (see strix_counter_create) */
} strix_crossing;

/* line: NULL, or x1, y1, x2, y2 in frame pixels: a segment; the centre of a
 * track's box moving across it from the left to the right of the direction
 * (x1, y1) -> (x2, y2), as seen on screen (y down), counts "in", the other
 * way "out" (a line drawn left to right: moving down is in).  trail: how
 * many recent centres to keep per track (0: none). */
strix_status strix_counter_create(strix_counter **out, const float *line, int trail, strix_error *err);
void strix_counter_free(strix_counter *c);

/* Add one frame: dets[n] with ids[n] (-1: untracked, ignored).  The
 * crossings this frame caused go to cross[] (room for n; *n_cross of them;
 * cross may be NULL when there is no line). */
strix_status strix_counter_add(strix_counter *c, long frame, double time, const strix_detection *dets,
                               const int *ids, int n, strix_crossing *cross, int *n_cross, strix_error *err);

/* Tracks seen so far, in identity order (the array lives until the next
 * call or free); -1 on OOM. */
int strix_counter_tracks(strix_counter *c, const strix_track_info **tracks);
/* Unique tracks of class_id so far. */
int strix_counter_class_tracks(const strix_counter *c, int class_id);
/* Line totals so far. */
void strix_counter_line(const strix_counter *c, int *in, int *out);
/* The recent centres of track id, oldest first: *xy = [n][2]; 0 when none.
 * Only centres of the last `trail` frames count (a track unseen for longer
 * has no trail). */
int strix_counter_trail(const strix_counter *c, int id, long frame, const float **xy);

#endif
