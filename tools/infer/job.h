/* job.h — what the parts of the infer job share (tools/infer/, internal to
 * the `infer` tool): the parsed options, the input lists, the planned output
 * paths, the stages' typed configs and state, the state of the image run
 * and of one video's run, and the functions each part offers the others.
 * tools/infer.c parses the options and wires the parts: inputs.c expands
 * INPUTs, outputs.c plans and checks the output paths and publishes files,
 * images.c runs the images and video.c the videos (both through
 * tools/infer/pipeline.h; their stages in stills.c, media.c, detector.c,
 * tracking.c), writers.c writes the JSON, JSON
 * Lines, MOT, labels, tracks and highlights files; framelog.c keeps what
 * --highlights needs of every frame. */
#ifndef STRIX_INFER_JOB_H
#define STRIX_INFER_JOB_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "count.h"
#include "framelog.h"
#include "highlight.h"
#include "image.h"
#include "jsonl.h"
#include "strix.h"
#include "tools/exitcodes.h"
#include "video.h"

static inline double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

typedef struct options {
    const char *model, *weights, *names, *device, *out, *json;
    const char *classes, *codec, *preset;
    const char *detections, *highlights; /* --detections FILE, --highlights LIST */
    char scale;
    int nc, max_det, imgsz, batch, threads, vid_stride, crf;
    int jobs;                            /* --jobs: videos decoded and detected at once */
    int nvtx;                            /* STRIX_CUDA_NVTX=1: NVTX ranges per stage (infer/trace.h) */
    int async;                           /* STRIX_CUDA_ASYNC=1: two batches in flight */
    int cpu;                             /* the model runs on the cpu (load_model) */
    double conf, iou;
    int txt, save_conf, save, overwrite, quiet, audio, half, nms_free;
    int nv12;                            /* --nv12: videos reach the model as NV12 planes */
    int nvdec;                           /* --decode nvdec: the CUDA device NVDEC decodes on, else -1 */
    int precision;                       /* --precision: a strix_precision (int8: calibrated on --calibrate) */
    int exact_conv;                      /* --exact-conv: no Winograd (CPU) */
    const char *calibrate;               /* --calibrate: images, a directory or a quoted glob */
    int conf_set;                        /* --conf given (tracking lowers the default) */
    int imgsz_set;                       /* --imgsz given (a static ONNX export has its own) */
    int track, track_buffer, trail, hl_min_frames, has_line;
    double track_thresh, match_thresh;   /* --track-thresh etc.: -1 unless given */
    const char *tracker;                 /* --tracker tracktrack|botsort|bytetrack|ocsort|fasttrack|deepocsort|FILE.yaml */
    strix_track_options track_opts;      /* what --tracker and the overrides above make */
    double hl_score, hl_gap, hl_pad, hl_min_len, hl_max_len;
    float line[4];                       /* --line x1,y1,x2,y2 */
    char **inputs;
    int n_inputs;
    /* --manifest FILE, --shard I/N, --shards N, --metrics-port, --metrics-file (infer/worker.h) */
    const char *manifest, *shard, *metrics_file;
    long shards;
    int metrics_port;                    /* -1: none */
    int live;                            /* --live: every video input is live */
    double stall_timeout;                /* --stall-timeout: seconds a live source may send nothing */
    int reconnect;                       /* 0: --no-reconnect */
    int max_reconnects;                  /* --max-reconnects: attempts after one drop; -1: no limit */
    double segment;                      /* --segment: seconds per annotated file, 0: one file */
    int segment_ts, segment_format_set;  /* --segment-format ts: the pieces as MPEG-TS */
    const char *rtsp_transport;          /* --rtsp-transport tcp|udp; NULL: FFmpeg's default */
    int realtime;                        /* --realtime: drop frames detection has no time for */
    int retina;                          /* --retina-masks: segment masks at the source's size */
    struct metrics *metrics;             /* NULL: no metrics to update */
} options;

typedef struct strlist {
    char **v;
    int n, cap;
} strlist;

/* The inputs, split: images go to stb, videos to FFmpeg, each list in order. */
typedef struct inputs {
    strlist images, videos;
} inputs;

typedef struct plan_entry {
    const char *input;
    char *image_out; /* NULL with --no-save */
    char *label_out; /* NULL without --txt */
} plan_entry;

/* The image-list source stage (stills.c): the run's images decoded one by
 * one, in the list's order, on the pipeline's reader thread. */
typedef struct still_source_config {
    const strlist *paths;
    int (*interrupt)(void *ctx);      /* polled before each image: nonzero ends the list there */
    void *interrupt_ctx;
} still_source_config;

typedef struct still_source {
    still_source_config c;
    int pos;                          /* the next image's index in c.paths */
} still_source;

/* One image of the list (a pipeline slot's state): its pixels, or why it
 * could not be decoded. */
typedef struct still {
    const char *name;                 /* the path as given */
    strix_owned_image img;            /* [height, width, 3] RGB; data NULL when it failed */
    strix_error err;                  /* why it failed (status STRIX_OK when it did not) */
} still;

/* The annotated-image sink (stills.c), on the pipeline's writer thread. */
typedef struct still_sink_config {
    const char *const *names;
    int n_names;
    int overwrite;
} still_sink_config;

typedef struct still_sink {
    still_sink_config c;
    double annotate_ms, write_ms;     /* time spent drawing and writing */
} still_sink;

/* The JSON report sink (writers.c): each image's detections in order, then
 * the images that failed; written to a temporary file, published by
 * report_finish. */
typedef struct report_config {
    const options *o;                 /* the model, weights, imgsz, conf, iou it records; overwrite */
    const char *path;
    const char *const *names;
    int n_names;
} report_config;

typedef struct report {
    report_config c;
    FILE *json;
    char *tmp;
    int first_image;
    strlist err_names, err_msgs;      /* the images that failed, and why */
} report;

/* The state of the image run, shared by the pipeline callbacks: read on its
 * reader thread (src), write on its writer thread (the sinks and counts),
 * the rest on the calling thread once the pipeline has returned. */
typedef struct run {
    const options *o;
    const plan_entry *plan;
    long total;                       /* images in the list */
    still_source src;
    still_sink sink;
    report rep;
    int first_fail;                   /* exit code of the first per-image failure */
    int fail_rc;                      /* exit code of the failure that stopped the run (printed) */
    long images, detections;
    double t_write;                   /* labels and report, beside the sink's own */
} run;

typedef struct video_plan {
    const char *input;
    char *video_out;  /* OUT/<stem>.mp4; NULL with --no-save */
    char *jsonl;      /* --json FILE or OUT/<stem>.jsonl */
    char *label_base; /* OUT/labels/<stem>: files <base>_<n>.txt; NULL without --txt */
    char *first_label; /* <label_base>_1.txt: stands for them in the checks before the run */
    char *mot, *tracks; /* --track: OUT/<stem>.mot.txt, OUT/<stem>.tracks.json */
    char *hl_video, *hl_json, *hl_csv; /* --highlights: OUT/<stem>.highlights.{mp4,json,csv} */
} video_plan;

/* The detector stage (detector.c): the model with the run's detect
 * options, shared by every input; called on the pipeline's calling thread
 * only.  Its typed config is the options' conf, iou, max_det, imgsz and
 * --classes (mask). */
typedef struct detector {
    strix_model *model;
    int nvtx;                    /* an NVTX range around each call (infer/trace.h) */
    int async;                   /* the pipeline uses submit/collect (two batches in flight) */
    int pinned;                  /* with async: each video's frame pool is the model's page-locked
                                    frame memory (STRIX_PINNED), DMA'd without a CPU copy */          /* NULL with --detections (nothing to detect) */
    strix_detect_options dopt;
    const char *const *names;
    int n_names;
    const unsigned char *mask;   /* --classes: keep class c when mask[c]; NULL keeps all */
    strix_task task;             /* the model's (detect with --detections) */
    int retina;                  /* --retina-masks: segment masks at the source's size */
    int kpt_n, kpt_dims;         /* pose: kpt_shape */
    int reid;                    /* the tracker's with_reid: each frame takes its detections' ReID features */
    int recovered;               /* TrackTrack: each frame takes its recovered detections (strix_model_recovered) */
    struct task_scratch *scratch; /* a task model's buffers on the detection thread (taskframe.c) */
} detector;

/* A task model's outputs of one frame beside its boxes (taskframe.c), one
 * per pipeline slot (strix_pipe_frame.task), for the frame's n_dets
 * detections in their order (a tracked frame keeps that order). */
typedef struct task_frame {
    strix_task task;
    int n;               /* detections it holds outputs for */
    int stride, kd;      /* floats per detection in values; pose: dims per keypoint (2 or 3) */
    float *values;       /* [n, stride]: pose keypoints [nk, kd] and obb xywhr, in source pixels; segment
                            strix_model_task_values' box (input pixels) and mask coefficients */
    float *corners;      /* obb: [n, 4, 2] corners in source pixels */
    uint8_t *masks;      /* segment: [n, mh, mw] 0/1, at the letterboxed input (or the source with
                            --retina-masks) */
    int mh, mw;
    float *xy;           /* segment: Results.masks.xy, polygon i = points poly_at[i] .. poly_at[i + 1] */
    int *poly_at;        /* [n + 1] */
    float *probs;        /* classify: [nc] */
    int nc;
    const char *const *names; /* the class names (the detector's) */
    int n_names;
    float *feats;        /* with_reid: [n, feat_dim] the detections' ReID features (strix_model_features) */
    int feat_dim;        /* 0: none */
    strix_detection *rec; /* the detector's recovered: [n_rec] TrackTrack's recovered detections, rec_xywhr
                             [n_rec, 5] (obb) their rotated boxes; n_rec -1: none taken */
    float *rec_xywhr;
    int n_rec;
    size_t rec_cap, rec_xywhr_cap;
    size_t values_cap, corners_cap, masks_cap, xy_cap, poly_cap, probs_cap, feats_cap;
    const float *raw_corners; /* obb, tracked (a view, see write_frame): the detections' own corners, corners the
                                 tracker's; else NULL */
} task_frame;

/* The source stage (media.c): one video's demux and decode, on its reader thread. */
typedef struct source_config {
    const char *url;
    int audio;                        /* keep the audio packets for the video sink */
    int (*interrupt)(void *ctx);      /* polled during blocking I/O: nonzero ends the input */
    int nvtx;                         /* NVTX ranges around each frame's decode and conversion
                                         ("decode", "preprocess": the reader's own) */
    int rgb, nv12;                    /* what the frames carry (strix_video_read_options) */
    int nvdec;                        /* strix_video_read_options.nvdec */
    strix_model *pinned;              /* non-NULL: the frames' pixels are this model's frame memory
                                         (strix_model_alloc_pinned), swscale writing straight into
                                         it, and reach it as STRIX_PINNED */
    /* strix_video_read_options.rows: called as swscale writes each RGB frame (NULL: not) */
    int (*rows)(void *ctx, const strix_video_frame *f, int y0, int y1, strix_error *err);
    void *rows_ctx;

    double stall_timeout;             /* > 0: strix_video_read_options.stall_timeout */
    int reconnect;                    /* reopen the input after a drop (a stall, a read error) */
    int end_drops;                    /* the input's end is a drop too (a live network source: a
                                         camera never ends) */
    int max_reconnects;               /* reopen attempts after one drop; -1: no limit */
    int quiet;                        /* no line on stderr for a drop and its reconnect */
    const char *rtsp_transport;       /* strix_video_read_options.rtsp_transport */
} source_config;

/* A drop of a live source and the reconnect that ended it, for the JSON
 * Lines' event line (the first frame after it carries it to the writer). */
typedef struct source_gap {
    const char *why;                  /* "end of stream", "stalled", "read error" */
    char lost_at[32], back_at[32];    /* wall clock, UTC, ISO 8601 with milliseconds */
    double seconds;                   /* from the drop to the reopened input */
    int attempts;                     /* reopen attempts it took */
} source_gap;

typedef struct source {
    strix_video_reader *rd;
    source_config c;
    int gap_pending;                  /* gap is new: the next frame read takes it */
    source_gap gap;
    int gave_up;                      /* the reconnects were used up: the input ended there */
} source;

/* The annotated-video sink (media.c): encode and mux on the writer thread
 * into a temporary file, published under `path` at the end. */
typedef struct video_sink_config {
    const char *path;
    const char *codec, *preset;       /* NULL: libx264 / the encoder's default */
    int crf, audio;                   /* crf -1: the encoder's default */
    void (*notice)(void *ctx, const char *line); /* an encoder fallback, say */
    void *notice_ctx;
    int nvtx;                         /* an NVTX range around each frame's encode */
    double segment;                   /* > 0: rolling files NAME-000.mp4, ... of this many seconds,
                                         written in place (strix_video_write_options.segment) */
    int overwrite;                    /* segments: replace an existing NAME-000.mp4 */
    int ts;                           /* segments as MPEG-TS: NAME-000.ts, ... */
} video_sink_config;

typedef struct video_sink {
    strix_video_writer *wr;           /* NULL: no annotated video (--no-save) */
    char *tmp;                        /* the temporary file until published (not with segments) */
    const char *path;
    char *shown;                      /* segments: "OUT/NAME-NNN.mp4" (.ts) for messages, else NULL */
    int nvtx;
} video_sink;

/* The tracking stage (tracking.c): one per video, on its writer thread. */
typedef struct tracking_config {
    const strix_track_options *track; /* --tracker and the overrides */
    const float *line;                /* --line x1,y1,x2,y2; NULL: no line */
    int trail;                        /* --trail N: centres kept per track */
    int nvtx;                         /* an NVTX range around each update */
} tracking_config;

typedef struct tracking {
    strix_tracker *tracker;           /* NULL: no --track */
    strix_counter *counter;           /* totals, trails, --line crossings */
    /* The last frame's rows: its n_last detections in their order, then n_rows - n_last recovered detections
     * (TrackTrack's) that a track took, as Ultralytics' tracked results hold them (rows of idx -1) */
    int *ids;                         /* [cap]: the rows' identities (-1: none) */
    strix_detection *boxes;           /* [cap]: the rows, the tracker's boxes where tracked */
    strix_detection *raw;             /* [cap]: the rows' own boxes (the detections') */
    strix_crossing *cross;            /* [cap]: its line crossings */
    float *corners;                   /* [cap][4][2]: obb: the rows' corners, the tracker's where tracked */
    float *raw_corners;               /* [cap][4][2]: obb: the detections' own corners */
    int obb;                          /* the last frame's detections were tracked as oriented boxes (corners) */
    int cap, nvtx;
    int n_last;                       /* detections of the last frame tracked */
    int n_rows;                       /* its rows (n_last + recovered ones) */
} tracking;

/* --highlights with --segment (reels.c): a piece whose reel is not cut yet:
 * the time its first frame has on the source's timeline, and per frame its
 * time in the piece and its activity (qualifying detections). */
typedef struct reel_piece {
    double start;
    double *pts, *act;
    long n, cap;
} reel_piece;

/* The pieces not yet cut, oldest first (the last one being written). */
typedef struct reels {
    char *stem;                  /* OUT/NAME: pieces STEM-000.EXT, reels STEM-000.highlights.mp4; NULL: none */
    const char *ext;             /* "mp4" or "ts" */
    reel_piece *q;
    int n, cap;
    long first;                  /* q[0]'s piece number */
    long written;                /* reels written */
    time_t since;                /* when the run began: a piece file older than that is an earlier run's */
} reels;

/* The state of one video's run, shared by the pipeline callbacks: read on
 * its decode thread, write on its annotate/encode thread, the rest on the
 * calling thread. */
typedef struct vrun {
    const options *o;
    const video_plan *p;
    const char *shown;           /* the input's name in messages */
    const char *const *names;
    int n_names;
    source src;
    video_sink vs;               /* --no-save: none (vs.wr NULL) */
    FILE *jl;
    char *jl_tmp;                /* the JSON Lines' temporary file until published (not live) */
    int live;                    /* a live source: JSON Lines at the final name, flushed per frame */
    long jl_frames;              /* frame lines written (live: none, the file goes at the end) */
    long reconnects;             /* the source's drops reconnected so far (writer thread) */
    /* reader thread: the reconnects so far and the last one (each frame's slot copies them); the
     * clock offset that places a frame's pts at its moment at the source (live latency) */
    long gap_seq;
    source_gap gap;
    double anchor_ms;
    int anchored;
    /* writer thread: the reconnects written; the last frame's read time; frames --realtime
     * dropped (the holes in the frame numbers); the live latency: last, sum, max, frames */
    long gap_written;
    double last_read_ms;
    long late;
    double lat_last, lat_sum, lat_max;
    long lat_n;
    char *label_path;            /* room for <label_base>_<n>.txt */
    long expected;               /* frames, -1 when unknown */
    double t0, last_progress, track_ms, annotate_ms, side_ms;
    int tty, reported;           /* reported: the failure was already printed */
    int concurrent;              /* inputs in the same pipeline run (1: alone) */
    double nvdec_util;           /* --decode nvdec: NVDEC's mean utilisation (%) over the pipeline
                                    run, from NVML; -1 when not read (nvdec_why says why) */
    const char *nvdec_why;
    int fail_rc;                 /* exit code of a failure the writer knows better (bad --detections) */
    long replayed;               /* detections replayed (after the filters) */
    const unsigned char *mask;   /* --classes (applied here to replayed detections) */
    /* --detections: the records replayed instead of detections, filtered into rdets/rids (rraw: with
     * their "detection_box" where given) */
    strix_jsonl_reader *replay;
    strix_detection *rdets, *rraw;
    int *rids, rcap;
    int *rsel;                   /* [rcap] the record's detections kept by the filters */
    task_frame *rtask;           /* the record's task fields (NULL until one has them) */
    task_frame *rrec;            /* a detect record's recovered rows, for TrackTrack (NULL until one has them) */
    int r_own;                   /* the record's kept rows before its recovered ones */
    tracking trk;                /* --track */
    FILE *mot;
    char *mot_tmp;
    /* --highlights: each frame's time and its detections of the chosen classes
     * above --hl-score (with their identities), kept in a file until the end */
    const unsigned char *hl_mask;
    strix_frame_log *hl;
    strix_frame_item *hl_items; /* [rcap]: this frame's */
    reels reels;                /* --highlights with --segment: a reel per piece instead (writer thread) */
} vrun;

/* Set from the signal handler (tools/infer.c); a flag is all a handler may
 * safely touch.  Counts signals (capped at 2): 1 finishes cleanly, 2 stops
 * at once. */
extern volatile sig_atomic_t g_stop;

struct strix_pipe_frame; /* pipeline.h */
/* taskframe.c: detector_task_init after detector_init (0 or an exit code);
 * detector_task_run is a task model's detect call, task_take the
 * pipeline's take, task_frame_free its task_free */
int detector_task_init(detector *d, int retina);
void detector_free(detector *d);
strix_status detector_task_run(const detector *d, const strix_image *im, int n, strix_detections *out,
                               strix_error *err);
int task_take(void *ctx, int image, struct strix_pipe_frame *f, const struct strix_pipe_frame *from,
              strix_error *err);
void task_frame_free(void *ctx, void *task);
/* A frame's task outputs (w x h) from a JSON Lines record, its detections
 * sel[0 .. n) (sel NULL: the first n): its task fields as the writers and
 * task_draw take them (with masks, for drawing, a segment's mask filled
 * from its polygon); an obb's corners its "obb" and raw_corners its
 * "detection_obb", or with retrack (the replay tracks again) the corners
 * its "detection_obb".  0 or EXIT_NOMEM. */
int task_from_record(task_frame *t, const strix_jsonl_record *rec, const int *sel, int n, int retrack, int w,
                     int h, int masks, const char *const *names, int n_names);
/* TrackTrack's recovered detections of a re-tracked replay (t->rec, rec_xywhr, n_rec): the record's rows
 * sel[0 .. n), its "recovered" ones.  0 or EXIT_NOMEM. */
int task_recovered_rows(task_frame *t, const strix_jsonl_record *rec, const int *sel, int n);
void task_json(FILE *j, const task_frame *t, int i);
void task_json_detection(FILE *j, const task_frame *t, int i);
void task_json_probs(FILE *j, const task_frame *t);
void task_txt_probs(FILE *f, const task_frame *t);
int task_txt(FILE *f, const task_frame *t, int i, const strix_detection *b, int w, int h);
int task_draw(const task_frame *t, uint8_t *rgb, int w, int h, int stride, const strix_detection *d, int n,
              const int *ids, const char *const *names, int n_names);

/* inputs.c */
int list_add(strlist *l, const char *s);
void list_free(strlist *l);
int is_ffmpeg_source(const char *s);
int expand_inputs(const options *o, inputs *l);
int add_sequence_files(const char *pattern, strlist *l);

/* outputs.c */
int plan_run_outputs(const options *o, const inputs *in, char **json_path_out, plan_entry **plan_out,
                     video_plan **vplan_out, char **labels_dir_out, strlist *created);
void remove_created(strlist *created);
int commit_file(char *tmp, const char *path, int overwrite);
int commit_temp(FILE *f, char *tmp, const char *path, int overwrite);
void abandon_temp(FILE *f, char *tmp);
/* Everything plan_run_outputs and expand_inputs allocated (any may be NULL
 * or empty). */
void free_run_outputs(inputs *in, plan_entry *plan, video_plan *vplan, char *json_path, char *labels_dir,
                      strlist *created);

/* images.c: the images through the pipeline, --batch at a time; the
 * report and the summary; an exit code */
int run_images(const options *o, const strlist *images, const plan_entry *plan, const struct detector *det,
               const char *json_path, double t_start);

/* video.c */
int stop_requested(void *ctx);
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void set_error(strix_error *e, strix_status st, const char *fmt, ...);
void draw_frame(const options *o, strix_counter *counter, const char *const *names, int n_names,
                uint8_t *rgb, int w, int h, int stride, long index, const strix_detection *d,
                const int *ids, int n, const task_frame *task);
void print_notice(void *ctx, const char *line);
/* The videos, up to o->jobs at a time through one pipeline (frames of
 * several inputs batched into one detect call); an exit code (the first
 * failure's; 130 when interrupted). */
int run_videos(const options *o, const video_plan *vp, int n, const detector *det, const unsigned char *hl_mask);

/* media.c: each open prints its failure and returns an exit code */
int source_open(source *s, const source_config *c);
/* 1, 0 at the end, -1; with c.reconnect a drop is followed by reopen
 * attempts (gap_pending set when one works, gave_up when none did) */
int source_read(source *s, strix_video_frame *vf, strix_error *err);
void source_close(source *s);
int video_sink_open(video_sink *s, const video_sink_config *c, const source *src);
strix_status video_sink_frame(video_sink *s, strix_video_frame *vf, strix_error *err);
/* the audio after the last frame, the trailer, then publish: an exit code */
int video_sink_finish(video_sink *s, const source *src, int overwrite);
void video_sink_close(video_sink *s);

/* reels.c: each an exit code (printed) */
int reels_open(reels *r, const char *video_out, int ts);
/* After the frame went to the video sink: note it; cut the reels of the pieces closed since. */
int reels_frame(vrun *v, double time, double activity);
/* After the sink finished: the reels of the pieces left. */
int reels_finish(vrun *v);
void reels_free(reels *r);

/* tracking.c */
strix_status tracking_open(tracking *t, const tracking_config *c, strix_error *err);
/* One frame, in order: the identities of its n detections into t->ids and
 * the detections as tracked into t->boxes (a frame --vid-stride skipped,
 * inferred 0, keeps the last ones), after them (t->n_rows) the recovered
 * detections of task->rec a track took this frame (with their identity and
 * the tracker's box: Ultralytics writes them, idx -1), then the counter (on
 * those rows), its crossings in t->cross[0..*n_cross).  A tracked detection's box there is
 * the tracker's, as Ultralytics' tracked results carry it: the Kalman
 * state after the update (strix_tracker_box), clipped to the w x h frame
 * (Results.update's clip_boxes); the others keep theirs.  img: the frame
 * (for camera-motion compensation; NULL without pixels); grey:
 * its grey half-size image when the reader made it (strix_track_grey),
 * which GMC then reads instead, else NULL. */
/* The updates without detections after which a track of this tracker may
 * still be found again after one more (tests/test_tracking_gap.c checks
 * both sides): track_buffer (a lost track is dropped after track_buffer
 * updates and stays matchable one more); for FastTrack at least
 * occ_reappear_window (an occluded track, once lost, is kept that long
 * after its occlusion even past track_buffer) and the updates an unmatched
 * track stays tracked before it goes lost (two more, or
 * active_occ_to_lost_thresh + 1 while occluded) plus one. */
long tracking_gap_span(const strix_track_options *o);
/* A live source's gap of `missed` frames: as many updates without
 * detections, at most tracking_gap_span + 2 (more change nothing: no track
 * is left), so a gap longer than the span + 1 ends every track and a
 * shorter one leaves them lost, to be found again. */
strix_status tracking_gap(tracking *t, long missed, const strix_track_options *o, strix_error *err);
/* task: the frame's task outputs (NULL: none); an obb model's
 * detections are tracked on their rotated boxes (strix_tracker_update_obb),
 * t->corners then the tracker's corners where tracked; its feats (with_reid)
 * go to strix_tracker_features first. */
strix_status tracking_frame(tracking *t, const strix_image *img, const uint8_t *grey, int w, int h, long index,
                            double time, int inferred, const strix_detection *d, int n, const task_frame *task,
                            int *n_cross, strix_error *err);
void tracking_close(tracking *t);

/* detector.c */
void detector_init(detector *d, const options *o, strix_model *model, const char *const *names, int n_names,
                   const unsigned char *mask);
/* pipeline detect callbacks (ctx: a detector): one call, or submit, collect
 * and finish (strix_model_submit, strix_batch_collect, strix_batch_release) */
strix_status detector_run(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err);
strix_status detector_submit(void *ctx, const strix_image *im, int n, void **ticket, strix_error *err);
strix_status detector_collect(void *ctx, void *ticket, strix_detections *out, strix_error *err);
void detector_finish(void *ctx, void *ticket);

/* writers.c */
int write_labels(const options *o, int w_px, int h_px, const strix_detection *d, int n, const task_frame *task,
                 const char *path);
const char *name_of(const char *const *names, int n_names, int id);
int report_open(report *r, const report_config *c); /* an exit code (printed) */
void report_image(report *r, const char *name, int width, int height, const strix_detections *d,
                  const task_frame *task);
int report_failure(report *r, const char *name, const char *why); /* 0 or EXIT_NOMEM */
int report_finish(report *r); /* publish: an exit code (printed) */
void report_close(report *r); /* an unpublished report's temporary file goes */

/* stills.c */
void still_source_open(still_source *s, const still_source_config *c);
/* The next image into out (its last pixels freed): 1, 0 at the end (or
 * when c.interrupt says so), -1 when it could not be decoded (out->err says
 * why; the source has moved on) */
int still_source_read(still_source *s, still *out);
void still_free(still *s);
void still_sink_init(still_sink *s, const still_sink_config *c);
/* Draw d (and a task model's outputs, task; NULL: none) on the image and
 * write it to path (a temporary file renamed) */
strix_status still_sink_write(still_sink *s, const char *path, still *img, const strix_detection *d, int n,
                              const task_frame *task, strix_error *err);
const char *class_name_of(const vrun *v, int id);
/* latency: seconds from the frame at the source to this line (live runs), < 0: none; rows n_own .. n - 1 are
 * recovered detections ("recovered": true) */
void jsonl_frame(const vrun *v, long index, double pts, double latency, int inferred, const strix_detection *dets,
                 const strix_detection *raw, const int *ids, int n, int n_own, int n_cross, const task_frame *task);
void mot_frame(FILE *mot, long index, const strix_detection *dets, const int *ids, int n);
int write_tracks_json(vrun *v, long frames, double fps);
int write_highlights(vrun *v, double end_time);
/* The --hl-* options as the segmenter's; the reel's encoder options (--codec, --crf, --preset, audio),
 * its name in messages, notices printed, interrupted by a stop */
void highlight_options(const options *o, strix_highlight_options *ho);
void reel_cut_options(vrun *v, const char *name, strix_video_cut_options *co);
/* frames -1: not known (a live run's header, never rewritten) */
void jsonl_header(FILE *j, const vrun *v, long frames, const strix_video_read_stats *rs);
/* A live source's drop and reconnect, before the first frame after it;
 * missed: the frames the tracker was told it missed (tracks_ended: every
 * track ended), < 0 without --track. */
void jsonl_gap(FILE *j, const source_gap *g, long next_frame, double pts, int missed, int tracks_ended);

#endif
