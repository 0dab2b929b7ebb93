/* framelog.h — an append-only log of per-frame records kept in an
 * anonymous temporary file (tmpfile(): gone when closed or when the
 * process dies), read back in order once the stream has ended.  It holds
 * what `infer --highlights` must remember of every frame until the end of
 * a video (each frame's time and its qualifying detections), so memory
 * stays flat however long the video or stream: the file grows by
 * 12 + 8 * items bytes a frame, the heap by nothing after the first frames.
 * It is the infer job's, not the engine's: the engine does no file I/O.
 *
 * Use: strix_frame_log_open, strix_frame_log_add per frame, then
 * strix_frame_log_rewind and strix_frame_log_next until it returns 0
 * (rewind again to read it once more).  Adding after a rewind is an error.
 * Errors: STRIX_E_IO (the temporary file cannot be created, written or
 * read: the message says so and names the directory), STRIX_E_NOMEM,
 * STRIX_E_ARG (bad arguments, an add after a rewind). */
#ifndef STRIX_FRAMELOG_H
#define STRIX_FRAMELOG_H

#include "strix.h"

typedef struct strix_frame_item {
    int class_id, id; /* id: track identity, -1 without tracking */
} strix_frame_item;

typedef struct strix_frame_log strix_frame_log;

strix_status strix_frame_log_open(strix_frame_log **out, strix_error *err);
/* Appends one frame: its time and n >= 0 items (copied). */
strix_status strix_frame_log_add(strix_frame_log *l, double pts, const strix_frame_item *items, int n,
                                 strix_error *err);
long strix_frame_log_frames(const strix_frame_log *l);
/* The first and the last frame's time (0 before any frame). */
double strix_frame_log_first_pts(const strix_frame_log *l);
double strix_frame_log_last_pts(const strix_frame_log *l);
/* Ends writing (the first time) and goes back to the first frame. */
strix_status strix_frame_log_rewind(strix_frame_log *l, strix_error *err);
/* 1 with the next frame (*items valid until the next call), 0 after the
 * last, -1 on error (err says what). */
int strix_frame_log_next(strix_frame_log *l, double *pts, const strix_frame_item **items, int *n, strix_error *err);
void strix_frame_log_free(strix_frame_log *l);

#endif
