/* pipeline.h — run detection over the frames of one or more streams (the
 * inputs of one infer run) at once: a reader thread (decode) and a writer
 * thread (annotate, encode, write) per stream, and one detection stage on
 * the calling thread that batches frames across the streams into one
 * model call (DeepStream's stream-muxer idea), joined by bounded FIFO
 * queues.  Each stream's frames reach its writer in the order its reader
 * produced them.
 *
 * Memory is flat however long the streams: each stream's frames live in a
 * fixed pool of slots (strix_pipe_stats.slots of them) that circulate
 *     free -> reader -> queue -> detection -> queue -> writer -> free,
 * so a slow writer stalls its own reader (back-pressure), never grows a
 * queue; a slot's pixels are owned by the callbacks through its `user`
 * pointer, which survives reuse (so a decoder reuses its buffers).
 *
 * A realtime stream trades frames for latency instead: at most one frame
 * waits for detection, the newest.
 *
 * A frame the reader could not read may still keep its place (skip): the
 * writer meets it, in order, without detections.
 *
 * A stream whose reader or writer fails stops alone: the others run on.
 * A detection failure stops every stream.
 *
 * The pipeline knows nothing of files or codecs: the callbacks do the I/O.
 * Detection is a callback too (normally strix_model_detect), called on the
 * caller's thread only, so a model is never used from two threads.  Frames
 * of different sizes never share a detect call (a batch of one size gets
 * Ultralytics' minimal letterbox padding, a mixed one would not), so a
 * stream's detections do not depend on the streams beside it.
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
    strix_memory memory; /* set by read(): where rgb lies (STRIX_HOST, or STRIX_PINNED:
                            page-locked memory the detector DMAs from while the batch
                            runs); the detect callback's image says so */
    strix_image nv12; /* set by read() for the detect callback instead of rgb
                         when its data is set (NV12 planes); rgb may then be NULL */
    int skip;       /* set by read() (0 before each read): 1 for a placeholder
                       of a frame that could not be read, kept for its place in
                       the stream's order: no pixels, never detected, reaches
                       write() with no detections */
    void *user;     /* the callbacks' per-slot state (NULL at first), kept across reuse,
                       released by release() at the end */
    long index;     /* set by the pipeline: 0, 1, 2, ... in the stream's read order */
    int stream;     /* set by the pipeline: the stream it belongs to */
    int inferred;   /* 1: detections computed on this frame; 0: copied from the
                       last inferred frame of its stream (vid_stride > 1) */
    double detect_ms; /* set by the pipeline: its share of its detect call's time
                         (0 when not detected) */
    int n_dets;
    strix_detection *dets; /* [n_dets], owned by the pipeline (capacity max_det), by score */
    void *task;     /* config.take's per-slot state (a task model's masks, keypoints, ...;
                       NULL at first), kept across reuse, freed by config.task_free */
} strix_pipe_frame;

typedef enum strix_pipe_stage {
    STRIX_PIPE_NONE = 0,
    STRIX_PIPE_READ,
    STRIX_PIPE_DETECT,
    STRIX_PIPE_WRITE
} strix_pipe_stage;

/* One input's callbacks. */
typedef struct strix_pipe_stream {
    int vid_stride;  /* detect on frames 0, s, 2s, ...; the others reuse the
                        detections of the last detected frame; >= 1 */
    int realtime;    /* 1: the reader never waits for detection (a live source
                        that must not queue): a frame read while an earlier one
                        still waits for a detect call replaces it, and with no
                        free slot the reader takes the waiting frame's; the
                        frames so replaced are never written (stats.late) and
                        their indices are skipped, so index still counts the
                        frames read.  A slow writer still stalls the reader. */
    void *ctx;       /* passed to read, write and release */
    /* reader thread: fill f (pixels, size) and return 1, or 0 at the end of
     * the stream, or -1 with err filled to stop this stream */
    int (*read)(void *ctx, strix_pipe_frame *f, strix_error *err);
    /* writer thread, frames in order: 0, or -1 with err filled to stop this stream */
    int (*write)(void *ctx, strix_pipe_frame *f, strix_error *err);
    /* free a slot's user state (may be NULL: nothing to free) */
    void (*release)(void *ctx, void *user);
} strix_pipe_stream;

typedef struct strix_pipe_config {
    int batch;       /* most frames per detect call (over all streams), >= 1 */
    int max_det;     /* most detections per frame (the detect options' max_det) */
    const strix_pipe_stream *streams;
    int n_streams;   /* >= 1 */
    void *ctx;       /* passed to detect, submit, collect, finish */
    /* calling thread: detect objects in n <= batch frames of one size;
     * out[i].items stay valid until the next call */
    strix_status (*detect)(void *ctx, const strix_image *im, int n, strix_detections *out,
                           strix_error *err);
    /* Or, with detect NULL, detection in two halves (strix_model_submit and
     * strix_batch_collect), so that the next batch is queued before the
     * previous one is awaited: submit queues n <= batch frames of one size
     * and gives a ticket; collect waits for a ticket's detections (out valid
     * until finish); finish gives a ticket back, collected or not.  At most
     * two tickets are out at once; each stream's pool then holds one batch
     * more.  A submitted frame's slot goes back to its reader only after
     * its ticket was collected or finished, so the detector may read the
     * pixels while the batch runs (pinned and device frames are DMA'd or
     * read in place, not copied at submit). */
    strix_status (*submit)(void *ctx, const strix_image *im, int n, void **ticket, strix_error *err);
    strix_status (*collect)(void *ctx, void *ticket, strix_detections *out, strix_error *err);
    void (*finish)(void *ctx, void *ticket);
    /* calling thread, may be NULL (detect only, not submit/collect): what a
     * task model gives beside the boxes, into f->task.  image >= 0: right
     * after the detect call, from its image `image`, which is f; it may drop
     * detections (f->n_dets, f->dets: a segment box whose mask is empty).
     * image < 0: a copy of from->task (a frame --vid-stride skips, and the
     * stream's store of its last detected frame), or, from NULL, none (a
     * skipped frame).  0, or -1 with err filled (stops every stream). */
    int (*take)(void *ctx, int image, strix_pipe_frame *f, const strix_pipe_frame *from, strix_error *err);
    void (*task_free)(void *ctx, void *task);
    strix_pixel_format format; /* of the pixels read() delivers */
    /* calling thread, may be NULL: polled (with the pipeline's lock held:
     * a flag's read) as frames arrive; once nonzero
     * the run winds down: the readers stop, the frames read but not yet in
     * a detect call are dropped (never written), the rest are written (an
     * interrupted run finishes the batch it is detecting) */
    int (*stop)(void *ctx);
} strix_pipe_config;

/* One stream's account of the run. */
typedef struct strix_pipe_stats {
    long frames;      /* frames the writer accepted */
    long dropped;     /* frames read but dropped by config.stop */
    long late;        /* frames read but replaced by a newer one (realtime) */
    long inferred;    /* frames given to detect */
    long batches;     /* detect calls that held frames of this stream */
    long detections;  /* boxes over all written frames (after the class filter) */
    double read_ms, write_ms;  /* time inside this stream's reader and writer */
    double detect_ms, post_ms; /* its share of the detection stage (by frames) */
    double wall_ms;
    int slots;        /* frames in its pool: all the frame memory the stream used */
    strix_pipe_stage failed; /* the stage that stopped it, STRIX_PIPE_NONE if none */
    strix_error error;       /* why (status STRIX_OK if it did not fail) */
} strix_pipe_stats;

/* Run until every reader reports its end (every frame read is then
 * detected and written) or fails.  stats: [n_streams].  Returns STRIX_OK
 * when no stream failed, or the first failed stream's status with its
 * message in err (each stream's own in its stats). */
strix_status strix_pipe_run(const strix_pipe_config *c, strix_pipe_stats *stats, strix_error *err);

#endif
