/* video_internal.h — what video_read.c, video_write.c and video_cut.c
 * share: the reader struct (the writer copies stream parameters from it), the
 * per-frame side data (timestamps and audio packets travelling with a frame),
 * rotation of RGB pictures, FFmpeg version shims, and audio re-encoding to
 * AAC (the writer's, fed by the cutter).  Never installed. */
#ifndef STRIX_VIDEO_INTERNAL_H
#define STRIX_VIDEO_INTERNAL_H

#include <stdatomic.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libswscale/swscale.h>

#include "video.h"

/* FFmpeg 6.0 renamed AVFrame.pkt_duration to duration (lavu 58); 6.1 moved
 * stream side data into codecpar (lavf 60.15). */
#if LIBAVUTIL_VERSION_MAJOR >= 58
#define STRIX_FRAME_DURATION(fr) ((fr)->duration)
#else
#define STRIX_FRAME_DURATION(fr) ((fr)->pkt_duration)
#endif
#if LIBAVFORMAT_VERSION_INT >= AV_VERSION_INT(60, 15, 100)
#define STRIX_CODECPAR_SIDE_DATA 1
#endif

/* Timestamps of a frame and the audio packets demuxed before it, all in
 * their input stream's time base with the input's start offset removed;
 * each packet's stream_index is its input stream index. */
struct strix_video_side {
    int64_t pts, duration; /* video, input stream time base; duration 0 when unknown */
    AVPacket **audio;
    int n_audio, cap_audio;
};

/* Append pkt (ownership moves) to s; returns 0 or AVERROR(ENOMEM). */
int strix_video_side_add(struct strix_video_side *s, AVPacket *pkt);
/* Unref and forget s's packets (buffers kept). */
void strix_video_side_clear(struct strix_video_side *s);

struct strix_video_reader {
    AVFormatContext *fmt;
    int fifo;                 /* a FIFO input's descriptor (non-blocking), read through avio; -1 otherwise */
    AVIOContext *avio;        /* a FIFO input's: FFmpeg reads it through fifo_read (video_read.c) */
    AVCodecContext *dec;
    int vidx;                 /* the video stream */
    int64_t *offset;          /* per input stream: subtracted from every timestamp */
    unsigned char *keep;      /* per input stream: 1 for audio packets kept for a writer */
    strix_video_info info;
    struct SwsContext *sws;
    int sws_w, sws_h, sws_fmt, sws_cs, sws_range; /* what sws was set up for */
    struct SwsContext *sws_nv12; /* to NV12 (formats other than 4:2:0, size changes) */
    int nv12_w, nv12_h, nv12_fmt, nv12_cs;        /* what sws_nv12 was set up for */
    uint8_t *tmp;             /* coded-orientation RGB or NV12 before rotation */
    AVBufferRef *hw_dev;      /* NVDEC: the CUDA device context, else NULL */
    AVFrame *sw;              /* NVDEC: a frame downloaded for RGB or host NV12 */
    size_t tmp_cap;
    AVPacket *pkt;
    AVFrame *frame;
    struct strix_video_side pending; /* audio packets waiting for the next frame */
    int flushing, ended;
    int tainted;                  /* damage seen since the last keyframe: frames now decode from it */
    /* Errors FFmpeg's decoder logs (video_read.c's log callback, on any of
     * the decoder's threads: atomics).  It finds the reader through
     * dec->opaque, which is set to the reader before the decoder opens
     * (frame threads' copies of the context keep it); nothing else in strix
     * sets a codec context's opaque. */
    atomic_long log_errors;       /* error-level messages (<= AV_LOG_ERROR) */
    atomic_int log_first_state;   /* 0: no message yet, 1: log_first being written, 2: written */
    char log_first[160];          /* the first of them, "h264: decode_slice_header error" */
    long packets_in;              /* video packets handed to the decoder, AV_PKT_FLAG_DISCARD ones aside */
    long error_packets;           /* of those, the ones during whose decoding errors came (frames_lost) */
    long errors_seen;             /* errors (logged + returned) when the last packet was sent */
    int64_t last_pts, last_dur;   /* in tb */
    AVRational tb;                /* the timeline's: the first open's video time base (strix_video_reopen) */
    char *url;                    /* as opened, for strix_video_reopen */
    /* The first open's streams, which a reopened input's must match for
     * its audio to go on (the writer maps audio by stream index) */
    struct strix_video_stream_sig {
        enum AVMediaType type;
        enum AVCodecID codec;
        AVRational tb;
    } *sig;
    unsigned n_sig;
    double wait_from_ms;          /* when the read (or the open) now waiting began (stall_timeout) */
    int64_t seen_pos;             /* the input's byte position when the callback last looked */
    int stall_hit;                /* the interrupt callback gave up for stall_timeout */
    int read_problem;             /* stats.problem is a read error's (a reopen clears it) */
    strix_video_read_stats stats;
    strix_video_read_options opt;
};

/* The rotation a display matrix asks for, as degrees clockwise in
 * {0, 90, 180, 270} (other angles and mirroring are not applied: 0). */
int strix_video_rotation(const int32_t *matrix);

/* dst = src turned `deg` degrees clockwise (deg in {90, 180, 270}); src is
 * w x h pixels of bpp bytes (3: RGB, 1: a Y plane, 2: a U,V plane), dst is
 * h x w (90, 270) or w x h (180). */
void strix_video_rotate(uint8_t *dst, int dst_stride, const uint8_t *src, int src_stride, int w, int h, int deg,
                        int bpp);

/* The display matrix of stream st, or NULL. */
const int32_t *strix_video_display_matrix(const AVStream *st);

/* "No such file or directory" for an AVERROR code. */
const char *strix_video_averr(int code, char buf[AV_ERROR_MAX_STRING_SIZE]);

double strix_video_now_ms(void);

/* ---- audio re-encoding, shared by video_write.c and video_cut.c ---- */

/* *out = a decoder opened for audio stream st, its channel layout made
 * explicit when the stream leaves it unspecified; on failure *out may be set
 * (the caller frees it).  Errors (err without a file name): STRIX_E_UNSUPPORTED
 * (no decoder, or it refuses the stream), STRIX_E_NOMEM. */
strix_status strix_video_audio_decoder(const AVStream *st, AVCodecContext **out, strix_error *err);

/* As strix_video_writer_open, but src's audio packets are never written:
 * with dec (the opened decoder of src's audio stream ist) the file gets one
 * AAC stream instead, its rate and channels chosen from dec's as when the
 * writer re-encodes audio, which strix_video_writer_pcm feeds; dec NULL (or
 * no AAC encoder, with a notice): no audio. */
strix_status strix_video_writer_open_pcm(strix_video_writer **out, const char *path, const strix_video_reader *src,
                                         const strix_video_write_options *o, const AVStream *ist,
                                         const AVCodecContext *dec, strix_error *err);
/* The AAC encoder of such a writer (the sample format, rate and layout
 * strix_video_writer_pcm takes), or NULL when it has no audio. */
const AVCodecContext *strix_video_writer_pcm_encoder(const strix_video_writer *w);
/* Append n samples in the encoder's format (data: one pointer per plane) to
 * the AAC stream, which starts at time 0 and runs without gaps. */
strix_status strix_video_writer_pcm(strix_video_writer *w, uint8_t *const *data, int n, strix_error *err);

#endif
