/* pipeline.h — run detection over a stream of frames with three stages in
 * three threads: a reader thread (decode), the calling thread (detection,
 * batched) and a writer thread (annotate, encode), joined by bounded FIFO
 * queues.  Frames reach the writer in the order the reader produced them.
 *
 * Memory is flat however long the stream: frames live in a fixed pool of
 * slots (strix_pipe_stats.slots of them) that circulate
 *     free -> reader -> queue -> detection -> queue -> writer -> free,
 * and a slot's pixels are owned by the callbacks through its `user`
 * pointer, which survives reuse (so a decoder reuses its buffers).
 *
 * The pipeline knows nothing of files or codecs: the callbacks do the I/O.
 * Detection is a callback too (normally strix_model_detect), called on the
 * caller's thread only, so a model is never used from two threads.
 */
#ifndef STRIX_PIPELINE_H
#define STRIX_PIPELINE_H

#include <stdint.h>

#include "strix.h"

/* One frame slot. */
typedef struct strix_pipe_frame {
    /* set by read(): pixels, RGB or BGR as the detect callback expects,
     * [height, stride bytes]; write() may draw on them */
    uint8_t *rgb;
    int width, height, stride;
    void *user;     /* the callbacks' per-slot state (NULL at first), kept across reuse,
                       released by release() at the end */
    long index;     /* set by the pipeline: 0, 1, 2, ... in read order */
    int inferred;   /* 1: detections computed on this frame; 0: copied from the
                       last inferred frame (vid_stride > 1) */
    int n_dets;
    strix_detection *dets; /* [n_dets], owned by the pipeline (capacity max_det), by score */
} strix_pipe_frame;

typedef enum strix_pipe_stage {
    STRIX_PIPE_NONE = 0,
    STRIX_PIPE_READ,
    STRIX_PIPE_DETECT,
    STRIX_PIPE_WRITE
} strix_pipe_stage;

typedef struct strix_pipe_config {
    int batch;       /* frames per detect call, >= 1 */
    int vid_stride;  /* detect on frames 0, s, 2s, ...; the others reuse the
                        detections of the last detected frame; >= 1 */
    int max_det;     /* most detections per frame (the detect options' max_det) */
    void *ctx;       /* passed to every callback */
    /* reader thread: fill f (pixels, size) and return 1, or 0 at the end of
     * the stream, or -1 with err filled to stop the run */
    int (*read)(void *ctx, strix_pipe_frame *f, strix_error *err);
    /* calling thread: detect objects in n <= batch frames; out[i].items
     * stay valid until the next call */
    strix_status (*detect)(void *ctx, const strix_image *im, int n, strix_detections *out,
                           strix_error *err);
    /* writer thread, frames in order: 0, or -1 with err filled to stop the run */
    int (*write)(void *ctx, strix_pipe_frame *f, strix_error *err);
    /* free a slot's user state (may be NULL: nothing to free) */
    void (*release)(void *ctx, void *user);
    strix_pixel_format format; /* of the pixels read() delivers */
} strix_pipe_config;

typedef struct strix_pipe_stats {
    long frames;      /* frames the writer accepted */
    long inferred;    /* frames given to detect */
    long batches;     /* detect calls */
    long detections;  /* boxes over all written frames (after the class filter) */
    double read_ms, detect_ms, post_ms, write_ms; /* time inside each stage (they overlap) */
    double wall_ms;
    int slots;        /* frames in the pool: all the frame memory the run used */
    strix_pipe_stage failed; /* the stage that stopped the run, STRIX_PIPE_NONE if none */
} strix_pipe_stats;

/* Run until read() reports the end (every frame read is then detected and
 * written) or a stage fails (the run stops soon after; frames still in
 * flight are dropped).  Returns STRIX_OK, or the failing stage's status with
 * its message in err and the stage in stats->failed. */
strix_status strix_pipe_run(const strix_pipe_config *c, strix_pipe_stats *stats, strix_error *err);

#endif
