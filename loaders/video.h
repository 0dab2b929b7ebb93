/* video.h — video in and out through FFmpeg (libavformat, libavcodec,
 * libswscale, libswresample): read any input libavformat opens (a file of
 * any container and codec, an image-sequence pattern such as
 * frames/%04d.png, a URL) as RGB frames in display orientation, and write
 * frames back as MP4 (H.264 by default) with the input's timestamps,
 * rotation and sample aspect ratio, and its audio copied packet for packet;
 * cut chosen stretches of a video into one (strix_video_cut, at the end).
 *
 * This is the only FFmpeg code in strix; it is built into its own archive
 * (libstrix_video.a) so libstrix.a never needs FFmpeg.  No type here exposes
 * FFmpeg's: the callers (tools) include only this header.
 *
 * Threads: a reader and a writer may run on two different threads (the
 * writer copies what it needs from the reader when it is opened); each one
 * is used by one thread at a time.
 */
#ifndef STRIX_VIDEO_H
#define STRIX_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#include "strix.h"

typedef struct strix_video_reader strix_video_reader;
typedef struct strix_video_writer strix_video_writer;
struct strix_video_side;

/* One decoded frame.  Buffers are kept between reads (a frame struct is
 * meant to be reused); free with strix_video_frame_free. */
typedef struct strix_video_frame {
    uint8_t *rgb;        /* [height, stride] RGB24, display orientation (rotation applied) */
    int width, height, stride;
    long index;          /* 0, 1, 2, ... in presentation order */
    double time;         /* presentation time, seconds from the start of the input */
    struct strix_video_side *side; /* for the writer: timestamps and the audio
                                      packets demuxed since the previous frame */
    size_t cap;          /* bytes allocated at rgb */
    /* Where rgb and nv12 were allocated (strix_video_read_options.pixel_alloc:
     * NULL for malloc): memory the kind the images of
     * strix_video_frame_image say; pixel_free, pixel_ctx how they go. */
    strix_memory memory;
    void (*pixel_free)(void *ctx, void *p);
    void *pixel_ctx;
    /* With strix_video_read_options.nv12: the picture as NV12, display
     * orientation: Y [height][nv12_stride], then the interleaved U,V plane
     * [(height + 1) / 2][nv12_stride] at nv12 + nv12_stride * height.
     * 4:2:0 inputs are copied as decoded (no conversion, their range kept);
     * other formats (4:2:2, 4:4:4, RGB, ...) and mid-stream size changes go
     * through swscale to limited range.  colorspace: BT.709 when the stream
     * says BT.709, else BT.601 (what swscale assumes for untagged video;
     * BT.2020 and the rarer matrices are approximated by BT.709/601). */
    uint8_t *nv12;
    int nv12_stride;
    strix_colorspace colorspace;
    int full_range;
    size_t nv12_cap;
    /* With strix_video_read_options.nvdec and .nv12: the NVDEC frame's NV12
     * planes in device memory (memory STRIX_DEVICE; data NULL for a frame
     * that was not kept there: 10-bit, rotated or resized, or decoded on the
     * CPU), valid until f is read into again or freed; hw is its reference. */
    strix_image device;
    void *hw;
} strix_video_frame;

/* The frame as an image for strix_model_detect: with nv12 set (the reader
 * opened with the nv12 option) its device planes when it has them, else its
 * NV12 planes in host memory; without, its RGB pixels.  Host planes have
 * the frame's memory kind (STRIX_PINNED from a reader whose pixel_alloc
 * gives pinned memory). */
strix_image strix_video_frame_image(const strix_video_frame *f, int nv12);

void strix_video_frame_free(strix_video_frame *f);

typedef struct strix_video_info {
    int width, height;             /* frames as delivered (display orientation) */
    int coded_width, coded_height; /* as stored */
    int rotation;                  /* degrees clockwise a player turns the stored
                                      picture: 0, 90, 180 or 270 */
    int sar_num, sar_den;          /* sample aspect ratio (0/1 when unknown) */
    double fps;                    /* average frame rate, 0 when unknown */
    long frames;                   /* expected frame count, -1 when unknown */
    int frames_exact;              /* 1: `frames` is the container's count, not an estimate */
    double duration;               /* seconds, 0 when unknown */
    int audio_streams;
    char format[32], codec[32];    /* container and video codec names */
} strix_video_info;

typedef struct strix_video_read_options {
    int audio;                      /* 1 (default): keep audio packets for a writer */
    int rgb;                        /* 1 (default): frames carry RGB pixels (f->rgb) */
    int nv12;                       /* 1: frames carry NV12 planes (f->nv12); default 0.  NV12
                                       is half of RGB's bytes and, from 4:2:0 video, needs no
                                       colour conversion on the CPU: a CUDA model converts it
                                       while letterboxing (rgb 0, nv12 1) */
    int nvdec;                      /* >= 0: decode with NVDEC (FFmpeg's CUDA hwaccel) on this
                                       CUDA device, frames kept in device memory (f->device)
                                       where nv12 is set; -1 (default): on the CPU.  Errors:
                                       STRIX_E_UNSUPPORTED (no NVDEC for the codec in this
                                       FFmpeg), STRIX_E_DEVICE (no driver or device) */
    int nvtx;                       /* 1: NVTX ranges "decode" (demux + decode) and "preprocess"
                                       (the conversion: swscale, rotation, NVDEC's hand-over) on
                                       the calling thread, for Nsight Systems (CUDA builds;
                                       nothing otherwise); default 0 */
    /* Polled during blocking I/O (a FIFO's wait for a writer and for its
     * bytes included, every 100 ms) and between packets; nonzero ends the
     * input early (strix_video_read then returns 0 and stats.stopped is set;
     * strix_video_open fails with STRIX_E_IO, "interrupted while opening"). */
    int (*interrupt)(void *ctx);
    void *interrupt_ctx;
    /* > 0: a network input that delivers no packet for this many seconds
     * (while opening, or between packets) is given up as stalled: the open
     * fails with STRIX_E_IO, a read ends the input (stats.stalled set), as
     * a server that stops sending without closing would otherwise block the
     * read for good.  0 (default): no limit. */
    double stall_timeout;
    /* RTSP inputs: "tcp" (RTP interleaved in the RTSP connection) or "udp"
     * (RTP over UDP ports); NULL (default): FFmpeg's choice, UDP first and
     * TCP when no UDP packet comes.  Other inputs ignore it. */
    const char *rtsp_transport;
    /* Where the frames' pixel buffers (rgb, nv12) come from: NULL (default)
     * malloc and free, memory STRIX_HOST; else pixel_alloc(pixel_ctx, bytes,
     * &p, err) (STRIX_OK and p, or a status with err filled, which the read
     * returns) and pixel_free(pixel_ctx, p), memory pixel_memory: e.g.
     * strix_model_alloc_pinned's frame memory, STRIX_PINNED, which a CUDA
     * model DMAs straight from where swscale wrote the frame.  Called on the
     * reading thread (and pixel_free by strix_video_frame_free); a frame
     * struct keeps its buffers across reads, growing one only when a frame
     * needs more, so the allocations are one or two per frame struct. */
    strix_status (*pixel_alloc)(void *ctx, size_t bytes, void **out, strix_error *err);
    void (*pixel_free)(void *ctx, void *p);
    void *pixel_ctx;
    strix_memory pixel_memory;
    /* RGB frames: rows(rows_ctx, f, y0, y1, err) is called on the reading
     * thread as the conversion writes each frame, once rows y0..y1-1 of
     * f->rgb are final, while they are still in the CPU's caches: in order,
     * covering the frame once, in bands of about STRIX_VIDEO_ROWS_BAND rows
     * (any count: swscale says how many it wrote) when the conversion keeps
     * the frame's size and turns nothing, else one call for the whole frame.
     * For work on every pixel that costs less then than later, when the
     * frame has gone to memory (BoT-SORT's grey frame, strix_track_grey).
     * Nonzero (err filled) fails the read.  NULL (default): no calls. */
    int (*rows)(void *ctx, const strix_video_frame *f, int y0, int y1, strix_error *err);
    void *rows_ctx;
} strix_video_read_options;
#define STRIX_VIDEO_ROWS_BAND 32

void strix_video_read_options_init(strix_video_read_options *o);

/* Open an input.  Errors: STRIX_E_IO (missing, unreadable, unreachable URL),
 * STRIX_E_IMAGE (not a video: unknown format, no video stream, a codec this
 * FFmpeg cannot decode, no frame size), STRIX_E_NOMEM. */
strix_status strix_video_open(strix_video_reader **out, const char *url, const strix_video_read_options *o,
                              strix_error *err);
const strix_video_info *strix_video_reader_info(const strix_video_reader *r);

/* The next frame into f: 1, or 0 at the end of the input, or -1 on a fatal
 * error (err).  Packets the decoder rejects are skipped and counted, so a
 * corrupt or truncated stream yields the frames that still decode. */
int strix_video_read(strix_video_reader *r, strix_video_frame *f, strix_error *err);
/* After the end: move the audio packets demuxed after the last frame into f
 * (no picture: f->rgb untouched, f->side carries them) for the writer. */
void strix_video_read_tail(strix_video_reader *r, strix_video_frame *f);

typedef struct strix_video_read_stats {
    long frames;          /* frames returned */
    long bad_packets;     /* video packets or frames the decoder rejected (skipped) */
    long concealed;       /* frames delivered that the decoder marked damaged (it filled in what was lost) */
    long tainted;         /* other frames delivered after damage, before the next keyframe: they decode
                           * from damaged or missing references */
    long corrupt_packets; /* video packets the demuxer flagged corrupt (e.g. MPEG-TS continuity errors) */
    long decode_errors;   /* error messages FFmpeg's decoder logged for this input (a slice it could
                           * not decode, say): damage it recovered from without flagging a packet or
                           * frame.  Counted once the process's FFmpeg log goes through strix (see
                           * strix_video_log_level) */
    long frames_lost;     /* after the end: video packets given to the decoder that yielded no frame
                           * (damage it dropped whole), at most as many as met a decoder error (logged
                           * or returned); 0 before the end (frames may still be in the decoder) */
    char decoder_error[160]; /* the first error message, the decoder's name first: "h264: A non-intra
                              * slice in an IDR NAL unit"; "" if none */
    int stopped;          /* the interrupt callback ended the input early */
    int stalled;          /* options.stall_timeout ended the input (no packet for that long) */
    int read_failed;      /* a read error ended the input (a connection reset, say), not its end */
    double decode_ms;     /* demux + decode */
    double convert_ms;    /* pixel format conversion to RGB and/or NV12, rotation (NVDEC:
                             downloads included) */
    long device_frames;   /* NVDEC frames handed out in device memory */
    char problem[256];    /* the first decode or read problem, "" if none */
} strix_video_read_stats;

void strix_video_reader_stats(const strix_video_reader *r, strix_video_read_stats *s);

/* After the end of an input (strix_video_read returned 0, not -1): open its
 * URL again, for a live source that dropped or stalled, and go on reading
 * on the same timeline: frame indices continue, the next frame's time is
 * the last one's plus its duration (the gap is not in the timeline), frames
 * keep the first open's size (scaled when the source comes back in
 * another) and time base, so a writer opened on r takes them as they come.
 * Audio goes on when the source comes back with the same audio streams
 * (codec, time base), else it is dropped from then on.  The stats go on
 * counting (stopped, stalled, read_failed and a read error's problem are
 * cleared).  On
 * failure r stays at its end (read returns 0) and may be reopened again.
 * Errors: as strix_video_open. */
strix_status strix_video_reopen(strix_video_reader *r, strix_error *err);
void strix_video_close(strix_video_reader *r);

typedef struct strix_video_write_options {
    const char *codec;   /* encoder name (default "libx264"); "h264_nvenc" falls back
                            to libx264 with a notice when it cannot be opened */
    int crf;             /* quality, lower is better; -1 (default): the encoder's own */
    const char *preset;  /* encoder preset; NULL (default): the encoder's own */
    int audio;           /* 1 (default): copy audio streams (AAC when MP4 cannot hold
                            the codec); 0: none */
    const char *name;    /* the path to name in messages (the final one when writing
                            to a temporary file); NULL: the path written */
    double segment;      /* > 0: rolling files of about this many seconds each:
                            the path is a pattern with one %03d (NAME-%03d.mp4),
                            files 000, 001, ... written in place as fragmented MP4
                            (a keyframe forced every `segment` seconds of the
                            timeline starts each file; a fragment at least every
                            second), each complete when the next begins and
                            playable up to its last fragment while it is written;
                            0 (default): one MP4 with +faststart */
    int segment_ts;      /* with segment: the files are MPEG-TS (NAME-%03d.ts),
                            each packet flushed as it is muxed, each file
                            starting with a keyframe and its own headers */
    /* Called with one line for each change the writer had to make (encoder
     * fallback, audio re-encoded, 4:4:4 for odd sizes, streams dropped). */
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
} strix_video_write_options;

void strix_video_write_options_init(strix_video_write_options *o);

/* Create an MP4 at path for frames read from src (same size, timestamps,
 * rotation, sample aspect ratio, colour description; src's audio streams).
 * Nothing of src is used after this call.  Errors: STRIX_E_ARG (unknown
 * encoder, bad crf or preset), STRIX_E_IO (cannot create or write the
 * file), STRIX_E_UNSUPPORTED (no usable H.264 encoder), STRIX_E_NOMEM. */
strix_status strix_video_writer_open(strix_video_writer **out, const char *path, const strix_video_reader *src,
                                     const strix_video_write_options *o, strix_error *err);
/* Encode f's picture (when f->rgb is set: display orientation, the reader's
 * size) and mux the audio packets it carries; they are consumed. */
strix_status strix_video_write(strix_video_writer *w, strix_video_frame *f, strix_error *err);
/* Flush the encoders and finish the file (with +faststart: the index moves
 * to the front).  The file is complete only after this returns STRIX_OK. */
strix_status strix_video_writer_finish(strix_video_writer *w, strix_error *err);
/* With segments: the files begun so far by the frames given (file k is
 * complete once file k + 1 exists), and in *start the time
 * (strix_video_frame.time) of the frame the last one begins with. */
int strix_video_writer_pieces(const strix_video_writer *w, double *start);
/* Encoding time so far: colour conversion, rotation, encoders, muxing. */
double strix_video_writer_ms(const strix_video_writer *w);
const char *strix_video_writer_codec(const strix_video_writer *w);
/* Free the writer; an unfinished file is closed as it is (the caller deletes it). */
void strix_video_writer_free(strix_video_writer *w);

/* FFmpeg logs through a process-wide callback; tools call this once at
 * start: 0 silences it (strix reports problems itself), 1 shows warnings.
 * Either way it installs strix's callback, which counts each reader's
 * decoder errors (strix_video_read_stats.decode_errors) and prints what the
 * level lets through as FFmpeg would (it replaces a callback the program
 * set itself); strix_video_open installs it too when a program never calls
 * this.  Call it before any other thread uses FFmpeg: FFmpeg's callback
 * pointer is not atomic. */
void strix_video_log_level(int verbose);

/* ------------------------------------------------------------------------
 * Cutting: a highlight reel of chosen stretches of a video (video_cut.c).
 */

/* A stretch of the input to keep: the frames whose presentation time t (the
 * reader's strix_video_frame.time timeline, seconds) has start <= t < end.
 * A time within STRIX_VIDEO_CUT_EPS of a boundary counts as on it (float
 * rounding of the input's timestamps). */
typedef struct strix_video_segment {
    double start, end;
} strix_video_segment;

#define STRIX_VIDEO_CUT_EPS 1e-6

typedef struct strix_video_cut_options {
    strix_video_write_options write; /* codec, crf, preset, audio, name, notice: as for
                                        strix_video_writer_open (audio 0: no audio) */
    /* Called for every kept frame, in order, before it is encoded; may draw
     * on f->rgb (display orientation).  f->index and f->time are the input's
     * frame index and time.  Returns 0, or -1 with err filled to stop the cut
     * (its status is returned).  NULL: frames unchanged. */
    int (*draw)(void *ctx, strix_video_frame *f, strix_error *err);
    void *ctx;
    /* Polled between frames and during blocking reads; nonzero stops the cut
     * with STRIX_E_IO ("interrupted"; the caller knows it asked). */
    int (*interrupt)(void *ctx);
    void *interrupt_ctx;
} strix_video_cut_options;

void strix_video_cut_options_init(strix_video_cut_options *o);

typedef struct strix_video_cut_stats {
    long frames;           /* frames written */
    double duration;       /* seconds of video written */
    double audio_duration; /* seconds of audio written (0 without audio) */
} strix_video_cut_stats;

/* Write to `output` (MP4, H.264 by default, +faststart) the segments of
 * `input` one after another on one continuous timeline: segment k's frames
 * keep their spacing and start where segment k-1's video ended.  Video is
 * decoded in order and re-encoded, so cuts are frame accurate; rotation,
 * sample aspect ratio and colour description are kept as by the writer.
 *
 * Segments: sorted and not overlapping; empty ones (start == end) are
 * skipped, and so are those in which no frame falls (past the end of the
 * input: a segment is clamped to the frames there are).  A segment's video
 * lasts the sum of its frames' durations, a frame lasting until the next
 * input frame (the final frame of the input: its own duration, else one
 * frame at the average rate).
 *
 * Audio (the first audio stream, when there is one and o->write.audio):
 * decoded, and for each segment the samples that play with its frames --
 * from its first frame's time, exactly as long as its video, to the sample
 * -- are concatenated and encoded to AAC; where the input has no audio
 * there, silence.  Audio and video stay in sync across every cut: the audio
 * written up to the end of segment k is the video's duration so far rounded
 * to a sample, so offsets never add up.  Gaps and overlaps of 20 ms to
 * 10 s in the input's audio timestamps are filled with silence or dropped
 * (longer jumps are taken as timestamp discontinuities).
 * Further audio streams are not kept (with a notice).
 *
 * The input is read once, in order, up to the end of the last segment (on
 * to the end of the file while its audio is behind).  o NULL: defaults.
 * stats (may be NULL) is filled on STRIX_OK.  The file is complete only on
 * STRIX_OK; on failure it may exist, incomplete: the caller deletes it.
 * Errors: STRIX_E_ARG (no segments, a segment with a non-finite time or
 * start > end, unsorted or overlapping segments, every segment empty, no
 * frame of the input in any segment; bad encoder options as for
 * strix_video_writer_open), STRIX_E_IO (input missing or unreadable, output
 * not writable, interrupted), STRIX_E_IMAGE (not a video), STRIX_E_UNSUPPORTED
 * (no usable H.264 encoder), STRIX_E_NOMEM, or the draw callback's status. */
strix_status strix_video_cut(const char *input, const char *output, const strix_video_segment *segs, int n,
                             const strix_video_cut_options *o, strix_video_cut_stats *stats, strix_error *err);

#endif
