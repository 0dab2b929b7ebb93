/* video_write.c — the video writer of video.h: RGB frames back to the
 * stored orientation, converted to YUV with libswscale (the input's colour
 * matrix and range), encoded (libx264 by default) and muxed into MP4 with
 * +faststart; audio packets from the reader are muxed unchanged when MP4
 * can hold their codec, else decoded, resampled (libswresample) and encoded
 * to AAC.  For video_cut.c a writer can instead carry one AAC stream fed
 * with decoded samples by its caller (strix_video_writer_open_pcm).
 *
 * Kept from the input: frame size, every frame's pts (the encoder's time
 * base is the input stream's, so no rounding), each frame's duration (the
 * encoder drops it, so a small ring maps pts -> duration for the packets
 * that come out), sample aspect ratio, display matrix (rotation), colour
 * description.  Odd widths or heights cannot be 4:2:0, so they are encoded
 * 4:4:4 (with a notice) to keep the size exact.
 */
#include "video_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/audio_fifo.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>

#include "util.h"

/* Frames inside the encoder at once stay far below this (x264's lookahead
 * and B-frames: a few dozen). */
#define DURATION_RING 1024

typedef struct audio_out {
    AVStream *st;          /* output stream */
    AVRational in_tb;      /* input stream time base */
    /* re-encoding to AAC; all NULL when the packets are copied */
    AVCodecContext *dec, *enc;
    SwrContext *swr;
    AVAudioFifo *fifo;
    AVFrame *dframe, *cframe, *eframe; /* decoded, converted, to encode */
    AVPacket *pkt;
    int64_t next_pts;      /* in samples */
    int started;
} audio_out;

struct strix_video_writer {
    AVFormatContext *oc;
    AVCodecContext *enc;
    AVStream *vst;
    struct SwsContext *sws;
    AVFrame *yuv;
    AVPacket *pkt;
    uint8_t *tmp;          /* RGB turned back to the stored orientation */
    size_t tmp_cap;
    int rotation, coded_w, coded_h;
    int64_t default_dur;   /* one frame at the average rate, encoder time base; 0 unknown */
    int64_t ring_pts[DURATION_RING], ring_dur[DURATION_RING];
    long ring_n;
    audio_out *audio;
    int n_audio;
    int *map;              /* input stream index -> audio index, or -1 */
    int n_map;
    int opened, finished;
    double segment;        /* write options' segment: seconds per file, 0 for one file */
    const AVOutputFormat *mp4; /* the muxer of what the files hold: MP4, or MPEG-TS for TS segments */
    const char *container;     /* its name in messages: "MP4" or "MPEG-TS" */
    double next_cut;       /* segment: the timeline's time where the next file begins */
    int pieces;            /* segment: files begun (by the frames given) */
    double piece_start;    /* segment: the frame time (strix_video_frame.time) the last one begins at */
    double ms;
    char name[1024];
    char codec[32];
    void (*notice)(void *, const char *);
    void *notice_ctx;
};

void strix_video_write_options_init(strix_video_write_options *o)
{
    memset(o, 0, sizeof *o);
    o->codec = "libx264";
    o->crf = -1;
    o->audio = 1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void notice(strix_video_writer *w, const char *fmt, ...)
{
    if (!w->notice) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    w->notice(w->notice_ctx, line);
}

static void free_audio(audio_out *a)
{
    avcodec_free_context(&a->dec);
    avcodec_free_context(&a->enc);
    swr_free(&a->swr);
    if (a->fifo) av_audio_fifo_free(a->fifo);
    a->fifo = NULL;
    av_frame_free(&a->dframe);
    av_frame_free(&a->cframe);
    av_frame_free(&a->eframe);
    av_packet_free(&a->pkt);
}

void strix_video_writer_free(strix_video_writer *w)
{
    if (!w) return;
    if (w->oc) {
        if (w->oc->pb) avio_closep(&w->oc->pb);
        avformat_free_context(w->oc);
    }
    avcodec_free_context(&w->enc);
    sws_freeContext(w->sws);
    av_frame_free(&w->yuv);
    av_packet_free(&w->pkt);
    for (int i = 0; i < w->n_audio; i++) free_audio(&w->audio[i]);
    free(w->audio);
    free(w->map);
    free(w->tmp);
    free(w);
}

double strix_video_writer_ms(const strix_video_writer *w) { return w->ms; }

int strix_video_writer_pieces(const strix_video_writer *w, double *start)
{
    *start = w->piece_start;
    return w->pieces;
}

const char *strix_video_writer_codec(const strix_video_writer *w) { return w->codec; }

static int supports_fmt(const AVCodec *c, enum AVPixelFormat f)
{
    if (!c->pix_fmts) return 1;
    for (const enum AVPixelFormat *p = c->pix_fmts; *p != AV_PIX_FMT_NONE; p++)
        if (*p == f) return 1;
    return 0;
}

/* Open encoder `enc` for the video; on failure err says why. */
static strix_status open_video_encoder(strix_video_writer *w, const AVCodec *enc, const strix_video_reader *src,
                                       const strix_video_write_options *o, strix_error *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    const AVStream *ist = src->fmt->streams[src->vidx];
    const AVCodecParameters *par = ist->codecpar;
    AVCodecContext *c = avcodec_alloc_context3(enc);
    if (!c) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", w->name);
    c->width = w->coded_w;
    c->height = w->coded_h;
    c->time_base = ist->time_base;
    AVRational fr = ist->avg_frame_rate.num && ist->avg_frame_rate.den ? ist->avg_frame_rate : ist->r_frame_rate;
    if (fr.num > 0 && fr.den > 0) c->framerate = fr;
    c->sample_aspect_ratio = (AVRational){src->info.sar_num, src->info.sar_den};
    int odd = (w->coded_w | w->coded_h) & 1;
    enum AVPixelFormat pf = !odd && supports_fmt(enc, AV_PIX_FMT_YUV420P) ? AV_PIX_FMT_YUV420P
                            : supports_fmt(enc, AV_PIX_FMT_YUV444P)       ? AV_PIX_FMT_YUV444P
                            : enc->pix_fmts                                ? enc->pix_fmts[0]
                                                                           : AV_PIX_FMT_YUV420P;
    c->pix_fmt = pf;
    c->color_primaries = par->color_primaries;
    c->color_trc = par->color_trc;
    c->colorspace = par->color_space;
    c->color_range = par->color_range == AVCOL_RANGE_JPEG || par->format == AV_PIX_FMT_YUVJ420P ||
                             par->format == AV_PIX_FMT_YUVJ422P || par->format == AV_PIX_FMT_YUVJ444P
                         ? AVCOL_RANGE_JPEG
                         : par->color_range;
    if (w->mp4->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary *opts = NULL;
    int nvenc = strstr(enc->name, "nvenc") != NULL;
    if (o->crf >= 0) av_dict_set_int(&opts, nvenc ? "cq" : "crf", o->crf, 0);
    if (o->preset) av_dict_set(&opts, "preset", o->preset, 0);
    int ret = avcodec_open2(c, enc, &opts);
    int unused = av_dict_count(opts);
    av_dict_free(&opts);
    if (ret < 0 || unused) {
        avcodec_free_context(&c);
        if (unused)
            return strix_fail(err, STRIX_E_ARG, "%s: the %s encoder has no %s option (drop it or choose "
                              "another --codec)", w->name, enc->name, o->crf >= 0 ? "--crf" : "--preset");
        return strix_fail(err, ret == AVERROR(EINVAL) ? STRIX_E_ARG : STRIX_E_UNSUPPORTED,
                          "%s: the %s encoder refused the settings (%dx%d %s%s%s): %s", w->name, enc->name,
                          w->coded_w, w->coded_h, av_get_pix_fmt_name(pf), o->preset ? ", --preset " : "",
                          o->preset ? o->preset : "", strix_video_averr(ret, eb));
    }
    if (pf != AV_PIX_FMT_YUV420P)
        notice(w, "%s: %dx%d has an odd side, which 4:2:0 video cannot have: encoding %s (some players "
               "need an even size)", w->name, w->coded_w, w->coded_h, av_get_pix_fmt_name(pf));
    w->enc = c;
    snprintf(w->codec, sizeof w->codec, "%s", enc->name);
    w->default_dur = c->framerate.num > 0 ? av_rescale_q(1, av_inv_q(c->framerate), c->time_base) : 0;
    return STRIX_OK;
}

/* Whether the files' container takes codec id as it is.  FFmpeg's MPEG-TS
 * muxer answers no query (it names only MPEG-2 and MP2 as defaults): the
 * codecs its stream types carry that strix writes or copies. */
static int holds(const strix_video_writer *w, enum AVCodecID id)
{
    static const enum AVCodecID ts[] = {AV_CODEC_ID_H264, AV_CODEC_ID_HEVC, AV_CODEC_ID_MPEG2VIDEO,
                                        AV_CODEC_ID_AAC, AV_CODEC_ID_MP3, AV_CODEC_ID_MP2, AV_CODEC_ID_AC3,
                                        AV_CODEC_ID_EAC3, AV_CODEC_ID_OPUS};
    if (strcmp(w->container, "MPEG-TS")) return avformat_query_codec(w->mp4, id, FF_COMPLIANCE_NORMAL) == 1;
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        if (ts[i] == id) return 1;
    return 0;
}

static strix_status open_video(strix_video_writer *w, const strix_video_reader *src,
                               const strix_video_write_options *o, strix_error *err)
{
    const char *name = o->codec && *o->codec ? o->codec : "libx264";
    const AVCodec *enc = avcodec_find_encoder_by_name(name);
    if (!enc || enc->type != AVMEDIA_TYPE_VIDEO)
        return strix_fail(err, STRIX_E_ARG, "--codec %s: %s (try libx264)", name,
                          enc ? "not a video encoder" : "no such encoder in this FFmpeg build");
    if (!holds(w, enc->id))
        return strix_fail(err, STRIX_E_ARG, "--codec %s: %s cannot hold %s video (try libx264)", name, w->container,
                          avcodec_get_name(enc->id));
    if (o->preset && !strcmp(enc->name, "libx264")) {
        /* x264 prints its own complaint about an unknown preset: check first */
        static const char *const presets[] = {"ultrafast", "superfast", "veryfast", "faster", "fast",
                                              "medium", "slow", "slower", "veryslow", "placebo"};
        int ok = 0;
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) ok |= !strcmp(o->preset, presets[i]);
        if (!ok)
            return strix_fail(err, STRIX_E_ARG, "--preset %s: not a libx264 preset (ultrafast, superfast, "
                              "veryfast, faster, fast, medium, slow, slower, veryslow, placebo)", o->preset);
    }
    strix_error e1;
    strix_status st = open_video_encoder(w, enc, src, o, &e1);
    if (st && strstr(name, "nvenc") && st != STRIX_E_NOMEM) {
        const AVCodec *x = avcodec_find_encoder_by_name("libx264");
        if (!x) return strix_fail(err, st, "%s", e1.message);
        size_t skip = strlen(w->name) + 2; /* the reason without "NAME: " */
        notice(w, "%s: %s cannot be used here (%s); encoding with libx264 instead", w->name, name,
               strlen(e1.message) > skip ? e1.message + skip : e1.message);
        strix_video_write_options o2 = *o;
        o2.preset = NULL; /* NVENC presets (p1..p7) mean nothing to x264 */
        st = open_video_encoder(w, x, src, &o2, &e1);
    }
    if (st) return strix_fail(err, st, "%s", e1.message);
    if (!(w->vst = avformat_new_stream(w->oc, NULL))) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    int ret = avcodec_parameters_from_context(w->vst->codecpar, w->enc);
    if (ret < 0) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    w->vst->time_base = w->enc->time_base;
    w->vst->sample_aspect_ratio = w->enc->sample_aspect_ratio;
    w->vst->avg_frame_rate = w->enc->framerate;
    const int32_t *m = strix_video_display_matrix(src->fmt->streams[src->vidx]);
    if (m) {
#ifdef STRIX_CODECPAR_SIDE_DATA
        AVPacketSideData *sd = av_packet_side_data_new(&w->vst->codecpar->coded_side_data,
                                                       &w->vst->codecpar->nb_coded_side_data,
                                                       AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t), 0);
        uint8_t *d = sd ? sd->data : NULL;
#else
        uint8_t *d = av_stream_new_side_data(w->vst, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
#endif
        if (!d) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
        memcpy(d, m, 9 * sizeof(int32_t));
    }
    av_dict_copy(&w->vst->metadata, src->fmt->streams[src->vidx]->metadata, 0);
    av_dict_set(&w->vst->metadata, "rotate", NULL, 0); /* the display matrix says it */

    enum AVPixelFormat pf = w->enc->pix_fmt;
    w->sws = sws_getContext(w->coded_w, w->coded_h, AV_PIX_FMT_RGB24, w->coded_w, w->coded_h, pf, SWS_BILINEAR,
                            NULL, NULL, NULL);
    w->yuv = av_frame_alloc();
    w->pkt = av_packet_alloc();
    if (!w->sws || !w->yuv || !w->pkt) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    int cs = w->enc->colorspace >= AVCOL_SPC_BT709 && w->enc->colorspace <= AVCOL_SPC_BT2020_CL
                 ? (int)w->enc->colorspace
                 : SWS_CS_DEFAULT;
    sws_setColorspaceDetails(w->sws, sws_getCoefficients(SWS_CS_DEFAULT), 1, sws_getCoefficients(cs),
                             w->enc->color_range == AVCOL_RANGE_JPEG, 0, 1 << 16, 1 << 16);
    w->yuv->format = pf;
    w->yuv->width = w->coded_w;
    w->yuv->height = w->coded_h;
    if (av_frame_get_buffer(w->yuv, 0) < 0) return strix_fail(err, STRIX_E_NOMEM, "out of memory for frames");
    return STRIX_OK;
}

static int has_layout(const AVCodec *c, const AVChannelLayout *l)
{
    if (!c->ch_layouts) return 1;
    for (const AVChannelLayout *p = c->ch_layouts; p->nb_channels; p++)
        if (!av_channel_layout_compare(p, l)) return 1;
    return 0;
}

strix_status strix_video_audio_decoder(const AVStream *st, AVCodecContext **out, strix_error *err)
{
    const AVCodecParameters *par = st->codecpar;
    const AVCodec *dc = avcodec_find_decoder(par->codec_id);
    if (!dc)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "no %s decoder in this FFmpeg build",
                          avcodec_get_name(par->codec_id));
    AVCodecContext *d = avcodec_alloc_context3(dc);
    if (!d) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    *out = d;
    if (avcodec_parameters_to_context(d, par) < 0) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    d->pkt_timebase = st->time_base;
    if (avcodec_open2(d, dc, NULL) < 0)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "the %s decoder refuses the stream", dc->name);
    if (d->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
        av_channel_layout_default(&d->ch_layout, d->ch_layout.nb_channels);
    return STRIX_OK;
}

/* The AAC encoder for samples at `rate` with `layout` (those of input
 * stream #index, named in notices), its FIFO and the frame it encodes from. */
static strix_status open_aac_encoder(strix_video_writer *w, audio_out *a, int rate, const AVChannelLayout *layout,
                                     int index, strix_error *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    const AVCodec *ec = avcodec_find_encoder(AV_CODEC_ID_AAC);
    if (!ec) return STRIX_E_UNSUPPORTED;
    if (!(a->enc = avcodec_alloc_context3(ec))) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    AVCodecContext *e = a->enc;
    e->sample_fmt = AV_SAMPLE_FMT_FLTP;
    e->sample_rate = 48000;
    for (const int *r = ec->supported_samplerates; r && *r; r++)
        if (*r == rate) e->sample_rate = *r;
    if (has_layout(ec, layout)) av_channel_layout_copy(&e->ch_layout, layout);
    else {
        av_channel_layout_default(&e->ch_layout, 2);
        notice(w, "%s: audio stream #%d: %d channels downmixed to stereo for AAC", w->name, index,
               layout->nb_channels);
    }
    e->bit_rate = 64000L * (e->ch_layout.nb_channels < 5 ? e->ch_layout.nb_channels : 5);
    e->time_base = (AVRational){1, e->sample_rate};
    if (w->mp4->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int ret = avcodec_open2(e, ec, NULL);
    if (ret < 0)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: cannot open the AAC encoder: %s", w->name,
                          strix_video_averr(ret, eb));
    a->fifo = av_audio_fifo_alloc(e->sample_fmt, e->ch_layout.nb_channels, e->frame_size * 4);
    a->eframe = av_frame_alloc();
    a->pkt = av_packet_alloc();
    if (!a->fifo || !a->eframe || !a->pkt) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    return STRIX_OK;
}

/* Set up decoding of input stream ist and re-encoding to AAC (the output
 * stream is made by the caller once this worked). */
static strix_status open_aac(strix_video_writer *w, audio_out *a, const AVStream *ist, strix_error *err)
{
    strix_status st = strix_video_audio_decoder(ist, &a->dec, err);
    if (!st) st = open_aac_encoder(w, a, a->dec->sample_rate, &a->dec->ch_layout, ist->index, err);
    if (st) return st;
    AVCodecContext *e = a->enc;
    int ret = swr_alloc_set_opts2(&a->swr, &e->ch_layout, e->sample_fmt, e->sample_rate, &a->dec->ch_layout,
                                  a->dec->sample_fmt, a->dec->sample_rate, 0, NULL);
    if (ret < 0 || swr_init(a->swr) < 0) return STRIX_E_UNSUPPORTED;
    a->dframe = av_frame_alloc();
    a->cframe = av_frame_alloc();
    if (!a->dframe || !a->cframe) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    return STRIX_OK;
}

static strix_status open_audio(strix_video_writer *w, const strix_video_reader *src, strix_error *err)
{
    const AVFormatContext *ic = src->fmt;
    w->n_map = (int)ic->nb_streams;
    if (!(w->map = malloc(sizeof *w->map * (size_t)(w->n_map ? w->n_map : 1))) ||
        !(w->audio = calloc((size_t)(w->n_map ? w->n_map : 1), sizeof *w->audio)))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    for (int i = 0; i < w->n_map; i++) {
        w->map[i] = -1;
        const AVStream *ist = ic->streams[i];
        if (!src->keep[i]) continue;
        const AVCodecParameters *par = ist->codecpar;
        const char *cname = avcodec_get_name(par->codec_id);
        audio_out *a = &w->audio[w->n_audio];
        a->in_tb = ist->time_base;
        if (holds(w, par->codec_id)) {
            if (!(a->st = avformat_new_stream(w->oc, NULL)) || avcodec_parameters_copy(a->st->codecpar, par) < 0)
                return strix_fail(err, STRIX_E_NOMEM, "out of memory");
            a->st->codecpar->codec_tag = 0;
            a->st->time_base = ist->time_base;
        } else {
            strix_status st = open_aac(w, a, ist, err);
            if (st == STRIX_E_NOMEM) return st;
            if (st) {
                notice(w, "%s: audio stream #%d (%s) can neither go into %s as it is nor be re-encoded: "
                       "dropped", w->name, i, cname, w->container);
                strix_error_clear(err);
                free_audio(a);
                memset(a, 0, sizeof *a);
                continue;
            }
            if (!(a->st = avformat_new_stream(w->oc, NULL)) ||
                avcodec_parameters_from_context(a->st->codecpar, a->enc) < 0)
                return strix_fail(err, STRIX_E_NOMEM, "out of memory");
            a->st->time_base = a->enc->time_base;
            notice(w, "%s: audio stream #%d (%s) cannot go into %s as it is: re-encoded to AAC", w->name, i, cname,
                   w->container);
        }
        a->st->disposition = ist->disposition;
        av_dict_copy(&a->st->metadata, ist->metadata, 0);
        w->map[i] = w->n_audio++;
    }
    return STRIX_OK;
}

/* The one AAC stream of a writer opened by strix_video_writer_open_pcm;
 * without an AAC encoder the file has no audio (with a notice). */
static strix_status open_pcm_audio(strix_video_writer *w, const AVStream *ist, const AVCodecContext *dec,
                                   strix_error *err)
{
    if (!(w->audio = calloc(1, sizeof *w->audio))) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    audio_out *a = &w->audio[0];
    w->n_audio = 1;
    strix_status st = open_aac_encoder(w, a, dec->sample_rate, &dec->ch_layout, ist->index, err);
    if (st == STRIX_E_NOMEM) return st;
    if (st) {
        notice(w, "%s: no AAC encoder can be opened: the video has no audio", w->name);
        strix_error_clear(err);
        free_audio(a);
        w->n_audio = 0;
        return STRIX_OK;
    }
    if (!(a->st = avformat_new_stream(w->oc, NULL)) || avcodec_parameters_from_context(a->st->codecpar, a->enc) < 0)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    a->st->time_base = a->enc->time_base;
    a->st->disposition = ist->disposition;
    av_dict_copy(&a->st->metadata, ist->metadata, 0);
    return STRIX_OK;
}

/* strix_video_writer_open (pcm 0) or strix_video_writer_open_pcm (pcm 1). */
static strix_status open_writer(strix_video_writer **out, const char *path, const strix_video_reader *src,
                                const strix_video_write_options *o, int pcm, const AVStream *ist,
                                const AVCodecContext *dec, strix_error *err)
{
    strix_error_clear(err);
    *out = NULL;
    strix_video_write_options def;
    if (!o) {
        strix_video_write_options_init(&def);
        o = &def;
    }
    strix_video_writer *w = calloc(1, sizeof *w);
    if (!w) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    snprintf(w->name, sizeof w->name, "%s", o->name ? o->name : path);
    w->notice = o->notice;
    w->notice_ctx = o->notice_ctx;
    w->rotation = src->info.rotation;
    w->coded_w = src->info.coded_width;
    w->coded_h = src->info.coded_height;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    w->segment = pcm ? 0 : o->segment;
    w->next_cut = w->segment;
    /* segments: FFmpeg's segment muxer cuts at the first keyframe past each
     * boundary (one is forced there, see strix_video_write) into
     * fragmented MP4s, which need no index at the end to play */
    const char *outer = w->segment > 0 ? "segment" : "mp4", *inner = w->segment > 0 && o->segment_ts ? "mpegts" : "mp4";
    w->mp4 = av_guess_format(inner, NULL, NULL);
    w->container = w->segment > 0 && o->segment_ts ? "MPEG-TS" : "MP4";
    /* a minimal FFmpeg (a custom static build) may lack the muxer */
    const char *lacks = !av_guess_format(outer, NULL, NULL) ? outer : !w->mp4 ? inner : NULL;
    int ret = lacks ? 0 : avformat_alloc_output_context2(&w->oc, NULL, outer, path);
    strix_status st = lacks ? strix_fail(err, STRIX_E_UNSUPPORTED, "%s: the FFmpeg infer is linked with has no %s muxer "
                                         "(build it with --enable-muxer=%s, or write one file without --segment)",
                                         w->name, lacks, lacks)
                    : ret < 0 ? strix_fail(err, STRIX_E_NOMEM, "%s: %s", w->name, strix_video_averr(ret, eb))
                              : open_video(w, src, o, err);
    if (!st && pcm && dec) st = open_pcm_audio(w, ist, dec, err);
    else if (!st && !pcm && o->audio) st = open_audio(w, src, err);
    if (!st && !w->segment && (ret = avio_open(&w->oc->pb, path, AVIO_FLAG_WRITE)) < 0)
        st = strix_fail(err, STRIX_E_IO, "%s: cannot create the file: %s (check that the directory is writable)",
                        w->name, strix_video_averr(ret, eb));
    if (!st) {
        AVDictionary *mo = NULL;
        if (w->segment > 0) {
            char t[32];
            snprintf(t, sizeof t, "%.6f", w->segment);
            av_dict_set(&mo, "segment_time", t, 0);
            av_dict_set(&mo, "segment_format", o->segment_ts ? "mpegts" : "mp4", 0);
            /* MP4: a fragment at each keyframe and at least every second,
             * each flushed to the file, so a killed run loses at most the
             * last second of the open file (and the frames in the encoder);
             * MPEG-TS needs no index: each packet is flushed as it is muxed */
            av_dict_set(&mo, "segment_format_options",
                        o->segment_ts ? "flush_packets=1"
                                      : "movflags=+frag_keyframe+empty_moov+default_base_moof:frag_duration=1000000:"
                                        "flush_packets=1", 0);
            av_dict_set(&mo, "reset_timestamps", "1", 0); /* each file starts at 0 */
        } else {
            av_dict_set(&mo, "movflags", "+faststart", 0);
        }
        ret = avformat_write_header(w->oc, &mo);
        av_dict_free(&mo);
        if (ret < 0)
            st = strix_fail(err, STRIX_E_IO, "%s: cannot write the %s header: %s", w->name, w->container,
                            strix_video_averr(ret, eb));
    }
    if (st) {
        strix_video_writer_free(w);
        return st;
    }
    w->opened = 1;
    *out = w;
    return STRIX_OK;
}

strix_status strix_video_writer_open(strix_video_writer **out, const char *path, const strix_video_reader *src,
                                     const strix_video_write_options *o, strix_error *err)
{
    return open_writer(out, path, src, o, 0, NULL, NULL, err);
}

strix_status strix_video_writer_open_pcm(strix_video_writer **out, const char *path, const strix_video_reader *src,
                                         const strix_video_write_options *o, const AVStream *ist,
                                         const AVCodecContext *dec, strix_error *err)
{
    return open_writer(out, path, src, o, 1, ist, dec, err);
}

/* The audio stream fed with samples: the only one, with an encoder and no decoder. */
static audio_out *pcm_audio(const strix_video_writer *w)
{
    return w->n_audio == 1 && w->audio[0].enc && !w->audio[0].dec ? &w->audio[0] : NULL;
}

const AVCodecContext *strix_video_writer_pcm_encoder(const strix_video_writer *w)
{
    const audio_out *a = pcm_audio(w);
    return a ? a->enc : NULL;
}

static strix_status write_failed(strix_video_writer *w, int ret, strix_error *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (ret == AVERROR(ENOMEM)) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory while encoding", w->name);
    return strix_fail(err, STRIX_E_IO, "%s: write failed: %s (check free disk space and the file size limit)",
                      w->name, strix_video_averr(ret, eb));
}

/* Send frame (NULL: flush) to the video encoder and mux what comes out. */
static strix_status encode_video(strix_video_writer *w, AVFrame *frame, strix_error *err)
{
    int ret = avcodec_send_frame(w->enc, frame);
    if (ret < 0 && ret != AVERROR_EOF) return write_failed(w, ret, err);
    for (;;) {
        ret = avcodec_receive_packet(w->enc, w->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return STRIX_OK;
        if (ret < 0) return write_failed(w, ret, err);
        AVPacket *p = w->pkt;
        if (p->duration <= 0) {
            p->duration = w->default_dur;
            for (long k = w->ring_n - 1; k >= 0 && k >= w->ring_n - DURATION_RING; k--)
                if (w->ring_pts[k % DURATION_RING] == p->pts) {
                    if (w->ring_dur[k % DURATION_RING] > 0) p->duration = w->ring_dur[k % DURATION_RING];
                    break;
                }
        }
        av_packet_rescale_ts(p, w->enc->time_base, w->vst->time_base);
        p->stream_index = w->vst->index;
        ret = av_interleaved_write_frame(w->oc, p);
        if (ret < 0) return write_failed(w, ret, err);
    }
}

/* Encode full AAC frames from the FIFO (all that is left when flushing). */
static strix_status drain_fifo(strix_video_writer *w, audio_out *a, int flush, strix_error *err)
{
    AVCodecContext *e = a->enc;
    while (av_audio_fifo_size(a->fifo) >= e->frame_size || (flush && av_audio_fifo_size(a->fifo) > 0)) {
        int n = av_audio_fifo_size(a->fifo) < e->frame_size ? av_audio_fifo_size(a->fifo) : e->frame_size;
        AVFrame *f = a->eframe;
        av_frame_unref(f);
        f->nb_samples = n;
        f->format = e->sample_fmt;
        f->sample_rate = e->sample_rate;
        if (av_channel_layout_copy(&f->ch_layout, &e->ch_layout) < 0 || av_frame_get_buffer(f, 0) < 0)
            return strix_fail(err, STRIX_E_NOMEM, "out of memory for audio");
        if (av_audio_fifo_read(a->fifo, (void **)f->data, n) != n)
            return strix_fail(err, STRIX_E_INTERNAL, "%s: audio FIFO underrun", w->name);
        f->pts = a->next_pts;
        a->next_pts += n;
        int ret = avcodec_send_frame(e, f);
        if (ret < 0) return write_failed(w, ret, err);
        while ((ret = avcodec_receive_packet(e, a->pkt)) == 0) {
            av_packet_rescale_ts(a->pkt, e->time_base, a->st->time_base);
            a->pkt->stream_index = a->st->index;
            if ((ret = av_interleaved_write_frame(w->oc, a->pkt)) < 0) return write_failed(w, ret, err);
        }
        if (ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) return write_failed(w, ret, err);
    }
    return STRIX_OK;
}

/* Resample decoded (or, with NULL, buffered) samples into the FIFO. */
static strix_status convert_audio(strix_video_writer *w, audio_out *a, const AVFrame *in, strix_error *err)
{
    int cap = swr_get_out_samples(a->swr, in ? in->nb_samples : 0);
    if (cap <= 0) return STRIX_OK;
    AVFrame *c = a->cframe;
    av_frame_unref(c);
    c->nb_samples = cap;
    c->format = a->enc->sample_fmt;
    c->sample_rate = a->enc->sample_rate;
    if (av_channel_layout_copy(&c->ch_layout, &a->enc->ch_layout) < 0 || av_frame_get_buffer(c, 0) < 0)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for audio");
    int n = swr_convert(a->swr, c->data, cap, in ? (const uint8_t **)in->extended_data : NULL,
                        in ? in->nb_samples : 0);
    if (n < 0) return STRIX_OK; /* a bad block: skip it */
    if (n && av_audio_fifo_write(a->fifo, (void **)c->data, n) < n)
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for audio");
    return drain_fifo(w, a, 0, err);
}

/* Decode pkt (NULL: flush) and re-encode its samples. */
static strix_status transcode_audio(strix_video_writer *w, audio_out *a, const AVPacket *pkt, strix_error *err)
{
    if (avcodec_send_packet(a->dec, pkt) < 0 && pkt) return STRIX_OK; /* undecodable: skipped */
    for (;;) {
        int ret = avcodec_receive_frame(a->dec, a->dframe);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return STRIX_OK;
        if (ret < 0) continue;
        if (!a->started) {
            int64_t t = a->dframe->best_effort_timestamp;
            a->next_pts = t == AV_NOPTS_VALUE ? 0 : av_rescale_q(t, a->in_tb, a->enc->time_base);
            a->started = 1;
        }
        strix_status st = convert_audio(w, a, a->dframe, err);
        av_frame_unref(a->dframe);
        if (st) return st;
    }
}

static strix_status write_audio(strix_video_writer *w, AVPacket *pkt, strix_error *err)
{
    int i = pkt->stream_index >= 0 && pkt->stream_index < w->n_map ? w->map[pkt->stream_index] : -1;
    if (i < 0) return STRIX_OK;
    audio_out *a = &w->audio[i];
    if (a->enc) return transcode_audio(w, a, pkt, err);
    av_packet_rescale_ts(pkt, a->in_tb, a->st->time_base);
    pkt->stream_index = a->st->index;
    pkt->pos = -1;
    int ret = av_interleaved_write_frame(w->oc, pkt);
    return ret < 0 ? write_failed(w, ret, err) : STRIX_OK;
}

strix_status strix_video_write(strix_video_writer *w, strix_video_frame *f, strix_error *err)
{
    strix_error_clear(err);
    if (w->finished) return strix_fail(err, STRIX_E_INTERNAL, "%s: write after finish", w->name);
    double t0 = strix_video_now_ms();
    strix_status st = STRIX_OK;
    if (f->rgb) {
        const uint8_t *src = f->rgb;
        int stride = f->stride;
        if (w->rotation) {
            int ts = (w->coded_w * 3 + 63) & ~63;
            size_t need = (size_t)ts * (size_t)w->coded_h + 64;
            if (w->tmp_cap < need) {
                free(w->tmp);
                w->tmp_cap = 0;
                if (!(w->tmp = malloc(need))) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
                w->tmp_cap = need;
            }
            strix_video_rotate(w->tmp, ts, f->rgb, f->stride, f->width, f->height, 360 - w->rotation, 3);
            src = w->tmp;
            stride = ts;
        }
        int ret = av_frame_make_writable(w->yuv);
        if (ret < 0) return write_failed(w, ret, err);
        sws_scale(w->sws, &src, &stride, 0, w->coded_h, w->yuv->data, w->yuv->linesize);
        w->yuv->pts = f->side ? f->side->pts : w->ring_n;
        /* segments: a keyframe where the next file is to begin */
        double t = (double)w->yuv->pts * av_q2d(w->enc->time_base);
        w->yuv->pict_type = AV_PICTURE_TYPE_NONE;
        /* (the segment muxer never cuts at the first packet: file 000 begins there) */
        if (w->segment > 0 && t >= w->next_cut - 1e-6) {
            w->yuv->pict_type = AV_PICTURE_TYPE_I;
            while (w->next_cut <= t + 1e-6) w->next_cut += w->segment;
            w->pieces += w->pieces > 0;
            w->piece_start = f->time;
        }
        if (!w->pieces) {
            w->pieces = 1;
            w->piece_start = f->time;
        }
        w->ring_pts[w->ring_n % DURATION_RING] = w->yuv->pts;
        w->ring_dur[w->ring_n % DURATION_RING] = f->side ? f->side->duration : 0;
        w->ring_n++;
        st = encode_video(w, w->yuv, err);
    }
    for (int i = 0; f->side && i < f->side->n_audio && !st; i++) st = write_audio(w, f->side->audio[i], err);
    if (f->side) strix_video_side_clear(f->side);
    w->ms += strix_video_now_ms() - t0;
    return st;
}

strix_status strix_video_writer_pcm(strix_video_writer *w, uint8_t *const *data, int n, strix_error *err)
{
    audio_out *a = pcm_audio(w);
    if (!a)
        return strix_fail(err, STRIX_E_INTERNAL, "%s: samples for a writer without such an audio stream", w->name);
    double t0 = strix_video_now_ms();
    strix_status st = av_audio_fifo_write(a->fifo, (void **)data, n) < n
                          ? strix_fail(err, STRIX_E_NOMEM, "out of memory for audio")
                          : drain_fifo(w, a, 0, err);
    w->ms += strix_video_now_ms() - t0;
    return st;
}

strix_status strix_video_writer_finish(strix_video_writer *w, strix_error *err)
{
    strix_error_clear(err);
    double t0 = strix_video_now_ms();
    strix_status st = encode_video(w, NULL, err);
    for (int i = 0; i < w->n_audio && !st; i++) {
        audio_out *a = &w->audio[i];
        if (!a->enc) continue;
        if (a->dec) st = transcode_audio(w, a, NULL, err);
        if (!st && a->swr) st = convert_audio(w, a, NULL, err);
        if (!st) st = drain_fifo(w, a, 1, err);
        if (!st) {
            avcodec_send_frame(a->enc, NULL);
            int ret;
            while (!st && (ret = avcodec_receive_packet(a->enc, a->pkt)) == 0) {
                av_packet_rescale_ts(a->pkt, a->enc->time_base, a->st->time_base);
                a->pkt->stream_index = a->st->index;
                if ((ret = av_interleaved_write_frame(w->oc, a->pkt)) < 0) st = write_failed(w, ret, err);
            }
        }
    }
    int ret;
    if (!st && (ret = av_write_trailer(w->oc)) < 0) st = write_failed(w, ret, err);
    if (!st && (ret = avio_closep(&w->oc->pb)) < 0) st = write_failed(w, ret, err);
    if (!st) w->finished = 1;
    w->ms += strix_video_now_ms() - t0;
    return st;
}
