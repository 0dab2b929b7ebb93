/* video_cut.c — strix_video_cut of video.h: chosen stretches of a video
 * written one after another as one MP4 (a highlight reel).  Video frames
 * come from the reader in order and go to the writer with new timestamps
 * (re-encoded, so cuts fall on any frame); the first audio stream is
 * decoded here, resampled to the AAC encoder's format, and the samples that
 * play with the kept frames are handed to the writer's AAC stream
 * (strix_video_writer_pcm, video_internal.h).
 *
 * Timelines.  Video: the input stream's time base, which is the encoder's
 * too; a frame of a segment at input pts p is written at p - shift, shift
 * putting the segment's first frame where the video written before it ends.
 * A frame is written one frame late, when the next frame's pts gives its
 * duration.  Audio: positions count samples at the encoder's rate, input
 * position P being input time P / rate.  Each segment's audio is a window:
 * the input position in0 of its first frame, and the output samples
 * [out0, out1) where out0 and out1 are the video's end before and after the
 * segment rounded to a sample -- so however many cuts, audio and video never
 * drift apart by more than half a sample.
 *
 * Audio packets arrive interleaved with the video in demux order, before or
 * after the frames they play with, so converted samples wait in a FIFO
 * (dropped once no window can want them) and a window waits for its samples;
 * where the input has none (before its audio starts, after it ends), the
 * window gets silence.
 */
#include "video_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/audio_fifo.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>

#include "util.h"

/* Audio timestamps further than this from the samples counted so far mark a
 * gap (filled with silence) or an overlap (dropped); jumps longer than
 * RESYNC_MAX_S are taken as a timestamp discontinuity and ignored. */
#define RESYNC_S 0.02
#define RESYNC_MAX_S 10.0
/* Samples handed to the encoder at once; the scratch buffer's first size. */
#define CHUNK 4096

typedef struct window {
    int64_t in0;        /* input position of the segment's first sample */
    int64_t out0, out1; /* its output samples [out0, out1); out1 grows with its frames */
} window;

typedef struct cut {
    const char *in_name;
    const strix_video_cut_options *o;
    strix_video_reader *r;
    strix_video_writer *w;
    AVRational tb;             /* video time base, input and output */
    strix_video_segment *seg;  /* the non-empty segments, in order */
    int n_seg;
    int k;                     /* the first segment the next frame may fall in */
    strix_video_frame fr[2];   /* read into the one not held */
    strix_video_frame *held;   /* a kept frame waiting for its duration, or NULL */
    int run;                   /* the segment of the held frame, -1 none */
    int64_t shift;             /* input pts - output pts in that segment */
    int64_t out_end;           /* end of the video written, tb */
    int64_t last_dur;          /* the last written frame's duration, tb */
    long frames;
    double last_time;          /* of the last frame read, seconds */
    /* audio; enc NULL: none */
    int aidx;                  /* input stream */
    AVCodecContext *dec;
    const AVCodecContext *enc; /* the writer's */
    SwrContext *swr;
    int swr_fmt, swr_rate;     /* what swr converts from */
    AVChannelLayout swr_layout;
    AVFrame *dframe;
    AVAudioFifo *buf;          /* converted samples at input positions [apos - size, apos) */
    int64_t apos;
    int astarted, aended;
    window *win;
    int n_win, head, open_win; /* windows made; the first not fully written; the growing one (-1 none) */
    int64_t a_out;             /* output samples written */
    uint8_t **tmp;             /* scratch in the encoder's format */
    int tmp_cap;               /* samples */
} cut;

void strix_video_cut_options_init(strix_video_cut_options *o)
{
    memset(o, 0, sizeof *o);
    strix_video_write_options_init(&o->write);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void notice(const cut *c, const char *fmt, ...)
{
    if (!c->o->write.notice) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->o->write.notice(c->o->write.notice_ctx, line);
}

/* Keep the non-empty segments, after checking they are usable. */
static strix_status take_segments(cut *c, const strix_video_segment *s, int n, strix_error *err)
{
    if (!s || n <= 0)
        return strix_fail(err, STRIX_E_ARG, "%s: no segments to cut (give at least one)", c->in_name);
    if (!(c->seg = malloc(sizeof *c->seg * (size_t)n))) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (!isfinite(s[i].start) || !isfinite(s[i].end))
            return strix_fail(err, STRIX_E_ARG, "%s: segment %d: start and end must be finite seconds", c->in_name,
                              i);
        if (s[i].start > s[i].end)
            return strix_fail(err, STRIX_E_ARG, "%s: segment %d starts at %.6g s, after its end (%.6g s)", c->in_name,
                              i, s[i].start, s[i].end);
        if (s[i].start == s[i].end) continue;
        if (c->n_seg && s[i].start < c->seg[c->n_seg - 1].end)
            return strix_fail(err, STRIX_E_ARG, "%s: segment %d (from %.6g s) starts before the one before it ends "
                              "(%.6g s): give segments sorted and not overlapping", c->in_name, i, s[i].start,
                              c->seg[c->n_seg - 1].end);
        c->seg[c->n_seg++] = s[i];
    }
    if (!c->n_seg) return strix_fail(err, STRIX_E_ARG, "%s: every segment is empty (start = end): nothing to keep",
                                     c->in_name);
    return STRIX_OK;
}

/* Video pts (tb) as a position in samples. */
static int64_t to_samples(const cut *c, int64_t pts)
{
    return av_rescale_q_rnd(pts, c->tb, (AVRational){1, c->enc->sample_rate},
                            AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
}

/* The earliest input position a window may still want. */
static int64_t need_from(const cut *c)
{
    if (c->head < c->n_win) return c->win[c->head].in0 + (c->a_out - c->win[c->head].out0);
    if (c->k >= c->n_seg) return INT64_MAX;
    /* the next segment's first frame is at or after its start (less the tolerance) */
    double p = floor((c->seg[c->k].start - 2 * STRIX_VIDEO_CUT_EPS) * c->enc->sample_rate) - 1;
    return p < -9e18 ? INT64_MIN : p > 9e18 ? INT64_MAX : (int64_t)p;
}

static void trim(cut *c)
{
    int size = av_audio_fifo_size(c->buf);
    int64_t drop = need_from(c) - (c->apos - size);
    if (drop > 0) av_audio_fifo_drain(c->buf, drop < size ? (int)drop : size);
}

/* Make the scratch buffer hold at least n samples. */
static strix_status grow_tmp(cut *c, int n, strix_error *err)
{
    if (n <= c->tmp_cap) return STRIX_OK;
    if (c->tmp) av_freep(&c->tmp[0]);
    av_freep(&c->tmp);
    c->tmp_cap = 0;
    if (av_samples_alloc_array_and_samples(&c->tmp, NULL, c->enc->ch_layout.nb_channels, n, c->enc->sample_fmt,
                                           0) < 0)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for audio");
    c->tmp_cap = n;
    return STRIX_OK;
}

/* Hand the writer every output sample whose input sample (or its absence)
 * is known. */
static strix_status emit(cut *c, strix_error *err)
{
    const AVCodecContext *e = c->enc;
    while (c->head < c->n_win) {
        const window *wn = &c->win[c->head];
        if (c->a_out >= wn->out1) {
            if (c->head == c->open_win) break; /* its segment may go on */
            c->head++;
            continue;
        }
        int64_t p = wn->in0 + (c->a_out - wn->out0), n = wn->out1 - c->a_out;
        int size = av_audio_fifo_size(c->buf);
        int64_t b0 = c->apos - size;
        int silent;
        if (c->astarted && p >= b0 && p < c->apos) { /* buffered */
            if (p > b0) av_audio_fifo_drain(c->buf, (int)(p - b0));
            if (n > c->apos - p) n = c->apos - p;
            silent = 0;
        } else if (c->astarted && p < b0) { /* before the input's audio */
            if (n > b0 - p) n = b0 - p;
            silent = 1;
        } else if (c->aended) { /* after it */
            silent = 1;
        } else {
            break; /* its samples are still to come */
        }
        if (n > c->tmp_cap) n = c->tmp_cap;
        if (silent) av_samples_set_silence(c->tmp, 0, (int)n, e->ch_layout.nb_channels, e->sample_fmt);
        else if (av_audio_fifo_read(c->buf, (void **)c->tmp, (int)n) != n)
            return strix_fail(err, STRIX_E_INTERNAL, "%s: audio FIFO underrun", c->in_name);
        strix_status st = strix_video_writer_pcm(c->w, c->tmp, (int)n, err);
        if (st) return st;
        c->a_out += n;
    }
    trim(c);
    return STRIX_OK;
}

/* Set the resampler up for frames like fr (the last one flushed first). */
static strix_status setup_swr(cut *c, const AVFrame *fr, strix_error *err);

/* Resample fr (NULL: what the resampler still holds) into the FIFO at its
 * input position. */
static strix_status convert(cut *c, const AVFrame *fr, strix_error *err)
{
    const AVCodecContext *e = c->enc;
    if (fr) {
        if (!c->swr || fr->format != c->swr_fmt || fr->sample_rate != c->swr_rate ||
            fr->ch_layout.nb_channels != c->swr_layout.nb_channels) {
            strix_status st = setup_swr(c, fr, err);
            if (st) return st;
        }
        int64_t ts = fr->best_effort_timestamp;
        int64_t pos = ts == AV_NOPTS_VALUE ? 0
                                           : av_rescale_q(ts, c->r->fmt->streams[c->aidx]->time_base,
                                                          (AVRational){1, e->sample_rate});
        if (!c->astarted) {
            c->apos = pos;
            c->astarted = 1;
        } else if (ts != AV_NOPTS_VALUE) {
            int64_t d = pos - (c->apos + swr_get_delay(c->swr, e->sample_rate));
            if (d > RESYNC_S * e->sample_rate && d < RESYNC_MAX_S * e->sample_rate)
                swr_inject_silence(c->swr, (int)av_rescale(d, fr->sample_rate, e->sample_rate));
            else if (d < -RESYNC_S * e->sample_rate && d > -RESYNC_MAX_S * e->sample_rate)
                swr_drop_output(c->swr, (int)-d);
        }
    }
    if (!c->swr) return STRIX_OK;
    int cap = swr_get_out_samples(c->swr, fr ? fr->nb_samples : 0);
    if (cap <= 0) return STRIX_OK;
    strix_status st = grow_tmp(c, cap, err);
    if (st) return st;
    int n = swr_convert(c->swr, c->tmp, cap, fr ? (const uint8_t **)fr->extended_data : NULL,
                        fr ? fr->nb_samples : 0);
    if (n <= 0) return STRIX_OK; /* a bad block: skipped (the next timestamps fill the gap) */
    if (av_audio_fifo_write(c->buf, (void **)c->tmp, n) < n)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for audio");
    c->apos += n;
    trim(c);
    return STRIX_OK;
}

static strix_status setup_swr(cut *c, const AVFrame *fr, strix_error *err)
{
    if (c->swr) {
        strix_status st = convert(c, NULL, err);
        if (st) return st;
        swr_free(&c->swr);
    }
    const AVCodecContext *e = c->enc;
    av_channel_layout_uninit(&c->swr_layout);
    if (fr->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
        av_channel_layout_default(&c->swr_layout, fr->ch_layout.nb_channels);
    else if (av_channel_layout_copy(&c->swr_layout, &fr->ch_layout) < 0)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for audio");
    c->swr_fmt = fr->format;
    c->swr_rate = fr->sample_rate;
    AVChannelLayout out = e->ch_layout; /* a shallow copy: FFmpeg 5 wants it non-const, and only reads it */
    int ret = swr_alloc_set_opts2(&c->swr, &out, e->sample_fmt, e->sample_rate, &c->swr_layout, fr->format,
                                  fr->sample_rate, 0, NULL);
    if (ret < 0 || swr_init(c->swr) < 0) {
        swr_free(&c->swr);
        return strix_fail(err, ret == AVERROR(ENOMEM) ? STRIX_E_NOMEM : STRIX_E_UNSUPPORTED,
                          "%s: cannot convert its audio (%d channels at %d Hz) for AAC", c->in_name,
                          fr->ch_layout.nb_channels, fr->sample_rate);
    }
    return STRIX_OK;
}

/* Decode pkt (NULL: flush the decoder) and convert what comes out. */
static strix_status decode(cut *c, const AVPacket *pkt, strix_error *err)
{
    if (avcodec_send_packet(c->dec, pkt) < 0 && pkt) return STRIX_OK; /* undecodable: a gap */
    for (;;) {
        int ret = avcodec_receive_frame(c->dec, c->dframe);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return STRIX_OK;
        if (ret < 0) continue; /* a broken frame: a gap */
        strix_status st = convert(c, c->dframe, err);
        av_frame_unref(c->dframe);
        if (st) return st;
    }
}

/* Decode the audio packets that came with a frame; the others are dropped. */
static strix_status feed(cut *c, struct strix_video_side *side, strix_error *err)
{
    strix_status st = STRIX_OK;
    for (int i = 0; side && c->enc && i < side->n_audio && !st; i++)
        if (side->audio[i]->stream_index == c->aidx) st = decode(c, side->audio[i], err);
    if (side) strix_video_side_clear(side);
    return st;
}

/* The input's end: flush the decoder and resampler; what is missing now is silence. */
static strix_status end_audio(cut *c, strix_error *err)
{
    strix_status st = decode(c, NULL, err);
    if (!st) st = convert(c, NULL, err);
    c->aended = 1;
    return st;
}

/* The duration of the input's final frame: its own, else one frame at the
 * average rate, else the frame before's. */
static int64_t final_duration(const cut *c)
{
    if (c->held->side->duration > 0) return c->held->side->duration;
    const AVStream *st = c->r->fmt->streams[c->r->vidx];
    AVRational fr = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? st->avg_frame_rate : st->r_frame_rate;
    int64_t d = fr.num > 0 && fr.den > 0 ? av_rescale_q(1, av_inv_q(fr), c->tb) : 0;
    return d > 0 ? d : c->last_dur > 0 ? c->last_dur : 1;
}

/* Encode the held frame, dur long, at its place on the output timeline. */
static strix_status write_held(cut *c, int64_t dur, strix_error *err)
{
    strix_video_frame *h = c->held;
    c->held = NULL;
    h->side->pts -= c->shift;
    h->side->duration = dur;
    c->out_end = h->side->pts + dur;
    c->last_dur = dur;
    c->frames++;
    if (c->open_win >= 0) c->win[c->open_win].out1 = to_samples(c, c->out_end);
    return strix_video_write(c->w, h, err);
}

/* A frame read (NULL: the end of the input): write the held one, hold f
 * when a segment keeps it. */
static strix_status take(cut *c, strix_video_frame *f, strix_error *err)
{
    int seg = -1;
    if (f) {
        c->last_time = f->time;
        while (c->k < c->n_seg && f->time >= c->seg[c->k].end - STRIX_VIDEO_CUT_EPS) c->k++;
        if (c->k < c->n_seg && f->time >= c->seg[c->k].start - STRIX_VIDEO_CUT_EPS) seg = c->k;
    }
    if (c->held) {
        strix_status st = write_held(c, f ? f->side->pts - c->held->side->pts : final_duration(c), err);
        if (st) return st;
        if (seg != c->run) { /* that frame ended its segment */
            c->run = -1;
            c->open_win = -1;
        }
    }
    if (seg < 0) return STRIX_OK;
    if (seg != c->run) { /* a segment's first frame */
        c->run = seg;
        c->shift = f->side->pts - c->out_end;
        if (c->enc) {
            window *wn = &c->win[c->n_win];
            wn->in0 = to_samples(c, f->side->pts);
            wn->out0 = wn->out1 = to_samples(c, c->out_end);
            c->open_win = c->n_win++;
        }
    }
    if (c->o->draw) {
        strix_error e;
        strix_error_clear(&e);
        if (c->o->draw(c->o->ctx, f, &e)) {
            if (!e.status)
                return strix_fail(err, STRIX_E_INTERNAL, "%s: the draw callback failed on frame %ld without "
                                  "saying why", c->in_name, f->index);
            *err = e;
            return e.status;
        }
    }
    c->held = f;
    return STRIX_OK;
}

static strix_status interrupted(const cut *c, strix_error *err)
{
    return strix_fail(err, STRIX_E_IO, "%s: interrupted: the cut is incomplete", c->in_name);
}

/* Read, keep, write, until the last segment's video and audio are out. */
static strix_status run(cut *c, strix_error *err)
{
    const strix_video_cut_options *o = c->o;
    for (;;) {
        if (o->interrupt && o->interrupt(o->interrupt_ctx)) return interrupted(c, err);
        strix_video_frame *f = c->held == &c->fr[0] ? &c->fr[1] : &c->fr[0];
        int got = strix_video_read(c->r, f, err);
        if (got < 0) return err->status;
        if (!got) {
            strix_video_read_stats rs;
            strix_video_reader_stats(c->r, &rs);
            if (rs.stopped) return interrupted(c, err);
            strix_video_read_tail(c->r, f);
        }
        strix_status st = feed(c, f->side, err);
        if (!st) st = take(c, got ? f : NULL, err);
        if (!st && !got && c->enc) st = end_audio(c, err);
        if (!st && c->enc) st = emit(c, err);
        if (st || !got) return st;
        if (c->k >= c->n_seg && !c->held && c->head >= c->n_win) return STRIX_OK;
    }
}

/* The reader, the first audio stream's decoder, the writer. */
static strix_status open_all(cut *c, const char *input, const char *output, strix_error *err)
{
    const strix_video_cut_options *o = c->o;
    strix_video_read_options ro;
    strix_video_read_options_init(&ro);
    ro.audio = o->write.audio;
    ro.interrupt = o->interrupt;
    ro.interrupt_ctx = o->interrupt_ctx;
    strix_status st = strix_video_open(&c->r, input, &ro, err);
    if (st) return st;
    AVFormatContext *fmt = c->r->fmt;
    c->tb = fmt->streams[c->r->vidx]->time_base;
    int others = 0;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        if (!c->r->keep[i]) continue;
        if (c->aidx < 0) {
            c->aidx = (int)i;
            continue;
        }
        c->r->keep[i] = 0; /* only the first audio stream is kept */
        fmt->streams[i]->discard = AVDISCARD_ALL;
        others++;
    }
    if (others)
        notice(c, "%s: %d more audio stream%s not kept (a cut keeps the first)", input, others,
               others > 1 ? "s are" : " is");
    const AVStream *ast = c->aidx >= 0 ? fmt->streams[c->aidx] : NULL;
    if (ast && (st = strix_video_audio_decoder(ast, &c->dec, err))) {
        if (st == STRIX_E_NOMEM) return st;
        notice(c, "%s: audio stream #%d (%s): %s: the cut has no audio", input, c->aidx,
               avcodec_get_name(ast->codecpar->codec_id), err->message);
        strix_error_clear(err);
        avcodec_free_context(&c->dec);
    }
    st = strix_video_writer_open_pcm(&c->w, output, c->r, &o->write, ast, c->dec, err);
    if (st) return st;
    if (!c->dec || !(c->enc = strix_video_writer_pcm_encoder(c->w))) return STRIX_OK;
    c->dframe = av_frame_alloc();
    c->buf = av_audio_fifo_alloc(c->enc->sample_fmt, c->enc->ch_layout.nb_channels, CHUNK);
    c->win = calloc((size_t)c->n_seg, sizeof *c->win);
    if (!c->dframe || !c->buf || !c->win) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    return grow_tmp(c, CHUNK, err);
}

static void cleanup(cut *c)
{
    strix_video_frame_free(&c->fr[0]);
    strix_video_frame_free(&c->fr[1]);
    strix_video_writer_free(c->w);
    strix_video_close(c->r);
    avcodec_free_context(&c->dec);
    swr_free(&c->swr);
    av_channel_layout_uninit(&c->swr_layout);
    av_frame_free(&c->dframe);
    if (c->buf) av_audio_fifo_free(c->buf);
    if (c->tmp) av_freep(&c->tmp[0]);
    av_freep(&c->tmp);
    free(c->win);
    free(c->seg);
}

strix_status strix_video_cut(const char *input, const char *output, const strix_video_segment *segs, int n,
                             const strix_video_cut_options *o, strix_video_cut_stats *stats, strix_error *err)
{
    strix_error e; /* err may be NULL; the reader reports through e */
    strix_error_clear(&e);
    strix_error_clear(err);
    if (stats) memset(stats, 0, sizeof *stats);
    strix_video_cut_options def;
    if (!o) {
        strix_video_cut_options_init(&def);
        o = &def;
    }
    if (!input || !output) return strix_fail(err, STRIX_E_ARG, "video cut: no input or no output path");
    cut c = {.in_name = input, .o = o, .run = -1, .open_win = -1, .aidx = -1};
    strix_status st = take_segments(&c, segs, n, &e);
    if (!st) st = open_all(&c, input, output, &e);
    if (!st) st = run(&c, &e);
    if (!st && !c.frames)
        st = strix_fail(&e, STRIX_E_ARG, "%s: no frame falls in the segments (the video has %ld frames, the last "
                        "at %.3f s)", input, c.r->stats.frames, c.last_time);
    if (!st) st = strix_video_writer_finish(c.w, &e);
    if (!st && stats) {
        stats->frames = c.frames;
        stats->duration = (double)c.out_end * av_q2d(c.tb);
        stats->audio_duration = c.enc ? (double)c.a_out / c.enc->sample_rate : 0;
    }
    cleanup(&c);
    if (err && st) *err = e;
    return st;
}
