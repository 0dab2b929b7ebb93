/* video_read.c — the video reader of video.h: demux with libavformat,
 * decode with libavcodec, convert to RGB24 with libswscale (the input's
 * colour matrix and range; frames that change size mid-stream are scaled to
 * the first size, so every frame has one size), turn to display
 * orientation, and carry the audio packets along with the frames for the
 * writer.  Also the helpers video_internal.h shares with video_write.c.
 *
 * Timestamps: every stream's timestamps have the input's start time
 * removed when it is positive (as ffmpeg does), so the first frame of most
 * inputs is at 0 and audio keeps its offset to the video.  Frame times are
 * made strictly increasing (a repeated or missing pts becomes the previous
 * one plus one frame), which the encoder needs.
 *
 * A FIFO (mkfifo, a shell's <(...)) is not opened by FFmpeg's file
 * protocol, whose open(2) blocks until a writer comes and whose read(2)
 * blocks while it writes nothing, neither of them looking at the interrupt
 * callback: strix opens it non-blocking and feeds FFmpeg from it through
 * its own AVIOContext, which waits in poll() a slice at a time and asks the
 * interrupt callback between slices.
 */
#include "video_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#include <libavutil/time.h>
#ifdef STRIX_HAVE_AVDEVICE
#include <libavdevice/avdevice.h>
#endif

#include "image.h"
#include "util.h"

/* NVTX ranges around the reader's two stages (options.nvtx); NVTX 3 is
 * header-only in the CUDA toolkit, so only CUDA builds have them. */
#ifdef STRIX_WITH_CUDA
#include <nvtx3/nvToolsExt.h>
static void range_push(const strix_video_reader *r, const char *name)
{
    if (r->opt.nvtx) nvtxRangePushA(name);
}
static void range_pop(const strix_video_reader *r)
{
    if (r->opt.nvtx) nvtxRangePop();
}
#else
static void range_push(const strix_video_reader *r, const char *name) { (void)r, (void)name; }
static void range_pop(const strix_video_reader *r) { (void)r; }
#endif

double strix_video_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

const char *strix_video_averr(int code, char buf[AV_ERROR_MAX_STRING_SIZE])
{
    if (av_strerror(code, buf, AV_ERROR_MAX_STRING_SIZE) < 0)
        snprintf(buf, AV_ERROR_MAX_STRING_SIZE, "error %d", code);
    return buf;
}

int strix_video_side_add(struct strix_video_side *s, AVPacket *pkt)
{
    if (s->n_audio == s->cap_audio) {
        int cap = s->cap_audio ? 2 * s->cap_audio : 16;
        AVPacket **v = realloc(s->audio, sizeof *v * (size_t)cap);
        if (!v) return AVERROR(ENOMEM);
        s->audio = v;
        s->cap_audio = cap;
    }
    s->audio[s->n_audio++] = pkt;
    return 0;
}

void strix_video_side_clear(struct strix_video_side *s)
{
    for (int i = 0; i < s->n_audio; i++) av_packet_free(&s->audio[i]);
    s->n_audio = 0;
}

/* Free f's pixel buffers the way they were allocated (see
 * strix_video_read_options.pixel_alloc). */
static void free_pixels(strix_video_frame *f)
{
    uint8_t *buf[2] = {f->rgb, f->nv12};
    for (int i = 0; i < 2; i++) {
        if (!buf[i]) continue;
        if (f->pixel_free) f->pixel_free(f->pixel_ctx, buf[i]);
        else free(buf[i]);
    }
    f->rgb = f->nv12 = NULL;
    f->cap = f->nv12_cap = 0;
}

void strix_video_frame_free(strix_video_frame *f)
{
    if (!f) return;
    if (f->side) {
        strix_video_side_clear(f->side);
        free(f->side->audio);
        free(f->side);
    }
    free_pixels(f);
    av_frame_free((AVFrame **)&f->hw);
    memset(f, 0, sizeof *f);
}

const int32_t *strix_video_display_matrix(const AVStream *st)
{
#ifdef STRIX_CODECPAR_SIDE_DATA
    const AVPacketSideData *sd = av_packet_side_data_get(st->codecpar->coded_side_data,
                                                         st->codecpar->nb_coded_side_data,
                                                         AV_PKT_DATA_DISPLAYMATRIX);
    return sd && sd->size >= 9 * sizeof(int32_t) ? (const int32_t *)sd->data : NULL;
#else
    size_t size = 0;
    const uint8_t *d = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    return d && size >= 9 * sizeof(int32_t) ? (const int32_t *)d : NULL;
#endif
}

int strix_video_rotation(const int32_t *m)
{
    if (!m) return 0;
    /* as ffmpeg's autorotate: the matrix rotates counter-clockwise */
    double theta = -round(av_display_rotation_get(m));
    if (!isfinite(theta)) return 0;
    theta -= 360 * floor(theta / 360 + 0.9 / 360);
    for (int deg = 90; deg <= 270; deg += 90)
        if (fabs(theta - deg) < 1) return deg;
    return 0;
}

void strix_video_rotate(uint8_t *dst, int dst_stride, const uint8_t *src, int src_stride, int w, int h, int deg,
                        int bpp)
{
    for (int y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * src_stride;
        for (int x = 0; x < w; x++, s += bpp) {
            int dx, dy; /* where source pixel (x, y) lands */
            if (deg == 90) dx = h - 1 - y, dy = x;
            else if (deg == 180) dx = w - 1 - x, dy = h - 1 - y;
            else dx = y, dy = w - 1 - x;
            memcpy(dst + (size_t)dy * dst_stride + (size_t)dx * bpp, s, (size_t)bpp);
        }
    }
}

strix_image strix_video_frame_image(const strix_video_frame *f, int nv12)
{
    if (nv12 && f->device.data) return f->device;
    if (!nv12)
        return (strix_image){.data = f->rgb, .width = f->width, .height = f->height, .stride = f->stride,
                             .memory = f->memory};
    return (strix_image){.data = f->nv12, .width = f->width, .height = f->height, .stride = f->nv12_stride,
                         .format = STRIX_NV12, .uv = f->nv12 + (size_t)f->nv12_stride * f->height,
                         .uv_stride = f->nv12_stride, .colorspace = f->colorspace, .full_range = f->full_range,
                         .memory = f->memory};
}

void strix_video_read_options_init(strix_video_read_options *o)
{
    memset(o, 0, sizeof *o);
    o->audio = 1;
    o->rgb = 1;
    o->nvdec = -1;
}

/* FFmpeg's decoders report much of the damage they meet only in their log
 * ("decode_slice_header error": the slice, maybe the whole frame, dropped,
 * with no packet or frame flagged), so strix reads that log: this callback
 * counts the error-level messages of each reader's decoder, on whatever
 * decoder thread logs them, and passes every message on to FFmpeg's own
 * callback, which prints what av_log_set_level lets through as it always
 * did.  A message is a reader's when it comes from a codec context (class
 * avcodec_get_class(), the class of every AVCodecContext and of the frame
 * threads' copies, which libavcodec makes with memdup and refreshes from
 * the user's context, opaque included: pthread_frame.c) that decodes and
 * has an opaque: strix sets opaque only on its readers' decoders.  Messages
 * during avformat_find_stream_info (its own decoders, opaque NULL) are not
 * counted: the reader decodes those frames again. */
static void log_cb(void *avcl, int level, const char *fmt, va_list vl)
{
    const AVClass *cls = avcl ? *(const AVClass *const *)avcl : NULL;
    if (level <= AV_LOG_ERROR && cls && cls == avcodec_get_class()) {
        const AVCodecContext *c = avcl;
        strix_video_reader *r = c->opaque;
        if (r && c->codec && av_codec_is_decoder(c->codec)) {
            atomic_fetch_add_explicit(&r->log_errors, 1, memory_order_relaxed);
            int none = 0; /* the first message: one thread claims log_first, writes it, publishes it */
            if (atomic_compare_exchange_strong(&r->log_first_state, &none, 1)) {
                char msg[sizeof r->log_first];
                va_list copy;
                va_copy(copy, vl);
                vsnprintf(msg, sizeof msg, fmt, copy);
                va_end(copy);
                size_t n = strlen(msg);
                while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.')) msg[--n] = 0;
                for (size_t i = 0; i < n; i++) /* one line, no terminal controls: it is printed */
                    if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f) msg[i] = ' ';
                snprintf(r->log_first, sizeof r->log_first, "%s: %s", c->codec->name, msg);
                atomic_store_explicit(&r->log_first_state, 2, memory_order_release);
            }
        }
    }
    av_log_default_callback(avcl, level, fmt, vl);
}

/* FFmpeg's log callback is one pointer for the whole process: strix's is
 * installed once (the only process-wide state strix touches; the counts
 * live in each reader), by strix_video_log_level, which tools call at start
 * before any thread uses FFmpeg, or else by the first strix_video_open. */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
#ifdef STRIX_HAVE_AVDEVICE
static pthread_once_t avdevice_once = PTHREAD_ONCE_INIT; /* libavdevice's formats registered, once */
#endif
static void install_log(void) { av_log_set_callback(log_cb); }

/* FFmpeg asks this between waits during blocking I/O: the caller's
 * interrupt, or no data for stall_timeout: since the read (or open) began
 * waiting, or since the input's byte position last moved (an open's
 * probing reads for seconds while data flows). */
static int interrupt_cb(void *opaque)
{
    strix_video_reader *r = opaque;
    if (r->opt.interrupt && r->opt.interrupt(r->opt.interrupt_ctx)) return 1;
    if (r->opt.stall_timeout <= 0) return 0;
    double now = strix_video_now_ms();
    if (r->fmt && r->fmt->pb && r->fmt->pb->pos != r->seen_pos) {
        r->seen_pos = r->fmt->pb->pos;
        r->wait_from_ms = now;
    }
    if (now - r->wait_from_ms > r->opt.stall_timeout * 1e3) r->stall_hit = 1;
    return r->stall_hit;
}

static int stop_requested(strix_video_reader *r)
{
    return r->opt.interrupt && r->opt.interrupt(r->opt.interrupt_ctx);
}

#define FIFO_BUF_BYTES 32768 /* the AVIOContext's buffer over a FIFO (FFmpeg's own IO_BUFFER_SIZE) */
#define FIFO_POLL_MS 100     /* the longest a FIFO read waits before it asks the interrupt callback */

/* The AVIOContext's read over a FIFO: the bytes there are, else EOF once a
 * writer has come and gone (POLLHUP, read 0); waits FIFO_POLL_MS at a time
 * (for a writer to come, or to write) and between waits gives up when the
 * interrupt callback says so. */
static int fifo_read(void *opaque, uint8_t *buf, int size)
{
    strix_video_reader *r = opaque;
    for (;;) {
        struct pollfd pf = {r->fifo, POLLIN, 0};
        int n = poll(&pf, 1, FIFO_POLL_MS);
        if (n > 0) {
            ssize_t got = read(r->fifo, buf, (size_t)size);
            if (got > 0) return (int)got;
            if (got == 0) return AVERROR_EOF;
            if (errno != EAGAIN && errno != EINTR) return AVERROR(errno);
        } else if (n < 0 && errno != EINTR) {
            return AVERROR(errno);
        }
        if (stop_requested(r)) return AVERROR_EXIT;
    }
}

/* url, when it names a FIFO: opened non-blocking (no wait for a writer) and
 * made r->fmt's input (fifo_read); nothing for anything else. */
static strix_status open_fifo(strix_video_reader *r, const char *url, strix_error *err)
{
    struct stat sb;
    if (stat(url, &sb) || !S_ISFIFO(sb.st_mode)) return STRIX_OK;
    if ((r->fifo = open(url, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return strix_fail(err, STRIX_E_IO, "%s: cannot open the FIFO: %s (check its permissions)", url,
                          strerror(errno));
    uint8_t *buf = av_malloc(FIFO_BUF_BYTES);
    if (!buf || !(r->avio = avio_alloc_context(buf, FIFO_BUF_BYTES, 0, r, fifo_read, NULL, NULL))) {
        av_free(buf);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    }
    r->fmt->pb = r->avio;
    r->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    return STRIX_OK;
}

/* Close the input and its decoder (the reader's conversion state, frames,
 * stats and timeline stay). */
static void close_input(strix_video_reader *r)
{
    avcodec_free_context(&r->dec);
    avformat_close_input(&r->fmt);
    if (r->avio) av_freep(&r->avio->buffer); /* custom IO: FFmpeg frees neither */
    avio_context_free(&r->avio);
    if (r->fifo >= 0) close(r->fifo);
    r->fifo = -1;
    av_buffer_unref(&r->hw_dev);
    free(r->offset);
    free(r->keep);
    r->offset = NULL;
    r->keep = NULL;
}

void strix_video_close(strix_video_reader *r)
{
    if (!r) return;
    close_input(r);
    sws_freeContext(r->sws);
    sws_freeContext(r->sws_nv12);
    av_packet_free(&r->pkt);
    av_frame_free(&r->frame);
    av_frame_free(&r->sw);
    strix_video_side_clear(&r->pending);
    free(r->pending.audio);
    free(r->tmp);
    free(r->url);
    free(r->sig);
    free(r);
}

static int is_io_error(int ret)
{
    return ret == AVERROR(ENOENT) || ret == AVERROR(EACCES) || ret == AVERROR(EPERM) || ret == AVERROR(EISDIR) ||
           ret == AVERROR(EIO) || ret == AVERROR(ENOTDIR) || ret == AVERROR(ECONNREFUSED) ||
           ret == AVERROR(ETIMEDOUT) || ret == AVERROR(EHOSTUNREACH) || ret == AVERROR(ENETUNREACH) ||
           ret == AVERROR_PROTOCOL_NOT_FOUND || ret == AVERROR_EXIT || ret == AVERROR(ENAMETOOLONG) ||
           ret == AVERROR_HTTP_BAD_REQUEST || ret == AVERROR_HTTP_UNAUTHORIZED || ret == AVERROR_HTTP_FORBIDDEN ||
           ret == AVERROR_HTTP_NOT_FOUND || ret == AVERROR_HTTP_OTHER_4XX || ret == AVERROR_HTTP_SERVER_ERROR ||
           ret == AVERROR(EPROTONOSUPPORT); /* an RTSP server refusing the transport (461) */
}

/* Short container name: "mov,mp4,m4a,..." -> "mov". */
static void short_name(char *dst, size_t n, const char *s)
{
    size_t k = strcspn(s, ",");
    snprintf(dst, n, "%.*s", (int)(k < n ? k : n - 1), s);
}

/* NVDEC's output format when the decoder offers it; otherwise (a profile or
 * size NVDEC cannot take) the decoder's software format: those frames are
 * decoded on the CPU, and stats.device_frames shows it. */
static enum AVPixelFormat pick_cuda(AVCodecContext *c, const enum AVPixelFormat *fmts)
{
    for (const enum AVPixelFormat *p = fmts; *p != AV_PIX_FMT_NONE; p++)
        if (*p == AV_PIX_FMT_CUDA) return *p;
    return avcodec_default_get_format(c, fmts);
}

/* Decode through NVDEC (FFmpeg's CUDA hwaccel) on CUDA device
 * r->opt.nvdec, in the device's primary context: the one the CUDA runtime,
 * and so the engine, uses, so device pointers pass between them. */
static strix_status open_nvdec(strix_video_reader *r, const AVCodec *codec, const char *url, strix_error *err)
{
    int ok = 0;
    const AVCodecHWConfig *cfg;
    for (int i = 0; (cfg = avcodec_get_hw_config(codec, i)); i++)
        ok |= cfg->device_type == AV_HWDEVICE_TYPE_CUDA && (cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX);
    if (!ok)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: this FFmpeg build cannot decode %s with NVDEC (decode on "
                          "the CPU: leave out --decode nvdec)", url, codec->name);
    char dev[16], eb[AV_ERROR_MAX_STRING_SIZE];
    snprintf(dev, sizeof dev, "%d", r->opt.nvdec);
    AVDictionary *o = NULL;
    av_dict_set(&o, "primary_ctx", "1", 0);
    int ret = av_hwdevice_ctx_create(&r->hw_dev, AV_HWDEVICE_TYPE_CUDA, dev, o, 0);
    av_dict_free(&o);
    if (ret < 0)
        return strix_fail(err, STRIX_E_DEVICE, "%s: cannot open CUDA device %d for NVDEC: %s (check the NVIDIA driver "
                          "and the device index, or decode on the CPU)", url, r->opt.nvdec, strix_video_averr(ret, eb));
    if (!(r->dec->hw_device_ctx = av_buffer_ref(r->hw_dev))) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    r->dec->get_format = pick_cuda;
    return STRIX_OK;
}

static strix_status open_streams(strix_video_reader *r, const char *url, strix_error *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    AVFormatContext *fmt = r->fmt;
    int ret = avformat_find_stream_info(fmt, NULL);
    if (ret == AVERROR_EOF)
        return strix_fail(err, STRIX_E_IMAGE, "%s: the input ends before its first frame (an empty or truncated "
                          "video)", url);
    if (ret < 0)
        return strix_fail(err, STRIX_E_IMAGE, "%s: cannot read the stream headers (%s): not a video, or damaged",
                          url, strix_video_averr(ret, eb));
    int v = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (v < 0 || (fmt->streams[v]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        char fname[32];
        short_name(fname, sizeof fname, fmt->iformat->name);
        return strix_fail(err, STRIX_E_IMAGE, "%s: no video stream (%s input %s): give a video file", url, fname,
                          fmt->nb_streams ? "with audio or data only" : "without streams");
    }
    r->vidx = v;
    AVStream *st = fmt->streams[v];
    const AVCodecParameters *par = st->codecpar;
    const char *cname = avcodec_get_name(par->codec_id);
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    if (!codec)
        return strix_fail(err, STRIX_E_IMAGE, "%s: the video codec '%s' cannot be decoded by this FFmpeg build "
                          "(transcode it first, e.g. to H.264)", url, par->codec_id ? cname : "unknown");
    if (par->width < 1 || par->height < 1)
        return strix_fail(err, STRIX_E_IMAGE, "%s: the video stream has no frame size (damaged header?)", url);
    if ((size_t)par->width * (size_t)par->height > STRIX_IMAGE_MAX_PIXELS)
        return strix_fail(err, STRIX_E_IMAGE, "%s: %dx%d frames exceed the limit of %zu pixels", url, par->width,
                          par->height, (size_t)STRIX_IMAGE_MAX_PIXELS);
    if (!(r->dec = avcodec_alloc_context3(codec))) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    if ((ret = avcodec_parameters_to_context(r->dec, par)) < 0)
        return strix_fail(err, STRIX_E_NOMEM, "%s: %s", url, strix_video_averr(ret, eb));
    r->dec->pkt_timebase = st->time_base;
    r->dec->opaque = r; /* before opening: the frame threads copy the context then (see log_cb) */
    strix_status st_hw = r->opt.nvdec >= 0 ? open_nvdec(r, codec, url, err) : STRIX_OK;
    if (st_hw) return st_hw;
    if ((ret = avcodec_open2(r->dec, codec, NULL)) < 0)
        return strix_fail(err, STRIX_E_IMAGE, "%s: cannot open the %s decoder: %s", url, cname,
                          strix_video_averr(ret, eb));

    r->offset = calloc(fmt->nb_streams, sizeof *r->offset);
    r->keep = calloc(fmt->nb_streams, 1);
    if (!r->offset || !r->keep) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    int64_t start = fmt->start_time != AV_NOPTS_VALUE && fmt->start_time > 0 ? fmt->start_time : 0;
    strix_video_info *in = &r->info;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        AVStream *s = fmt->streams[i];
        r->offset[i] = av_rescale_q(start, AV_TIME_BASE_Q, s->time_base);
        r->keep[i] = r->opt.audio && s->codecpar->codec_type == AVMEDIA_TYPE_AUDIO;
        in->audio_streams += s->codecpar->codec_type == AVMEDIA_TYPE_AUDIO;
        if ((int)i != v && !r->keep[i]) s->discard = AVDISCARD_ALL;
    }

    in->coded_width = par->width;
    in->coded_height = par->height;
    in->rotation = strix_video_rotation(strix_video_display_matrix(st));
    int turned = in->rotation == 90 || in->rotation == 270;
    in->width = turned ? par->height : par->width;
    in->height = turned ? par->width : par->height;
    AVRational sar = av_guess_sample_aspect_ratio(fmt, st, NULL);
    in->sar_num = sar.num;
    in->sar_den = sar.num ? sar.den : 1;
    AVRational fr = st->avg_frame_rate.num && st->avg_frame_rate.den ? st->avg_frame_rate : st->r_frame_rate;
    in->fps = fr.num && fr.den ? av_q2d(fr) : 0;
    if (st->duration != AV_NOPTS_VALUE && st->duration > 0) in->duration = (double)st->duration * av_q2d(st->time_base);
    else if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0) in->duration = (double)fmt->duration / AV_TIME_BASE;
    in->frames_exact = st->nb_frames > 0;
    in->frames = st->nb_frames > 0 ? (long)st->nb_frames
                 : in->duration > 0 && in->fps > 0 ? (long)llround(in->duration * in->fps) : -1;
    short_name(in->format, sizeof in->format, fmt->iformat->name);
    snprintf(in->codec, sizeof in->codec, "%s", cname);
    return STRIX_OK;
}

/* r->fmt opened on r->url, its streams found and the decoder opened;
 * on failure the caller closes r (close_input). */
static strix_status open_url(strix_video_reader *r, strix_error *err)
{
    const char *url = r->url;
    if (!(r->fmt = avformat_alloc_context())) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    if (r->opt.interrupt || r->opt.stall_timeout > 0) {
        r->fmt->interrupt_callback.callback = interrupt_cb;
        r->fmt->interrupt_callback.opaque = r;
    }
    r->stall_hit = 0;
    r->wait_from_ms = strix_video_now_ms();
    r->seen_pos = -1;
    strix_status fst = open_fifo(r, url, err);
    if (fst) return fst;
    AVDictionary *fo = NULL;
    if (r->opt.rtsp_transport && !strncmp(url, "rtsp", 4))
        av_dict_set(&fo, "rtsp_transport", r->opt.rtsp_transport, 0);
    /* a character device is a V4L2 camera: libavdevice's demuxer, which no
     * probe finds (the file protocol cannot read a camera) */
    const AVInputFormat *ifmt = NULL;
    struct stat sb;
    if (!stat(url, &sb) && S_ISCHR(sb.st_mode)) {
#ifdef STRIX_HAVE_AVDEVICE
        pthread_once(&avdevice_once, avdevice_register_all);
        ifmt = av_find_input_format("video4linux2");
#endif
        if (!ifmt) {
            avformat_free_context(r->fmt);
            r->fmt = NULL;
            return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: a capture device, and this build's FFmpeg has no V4L2 "
                              "input (libavdevice): use a build linked with Debian's FFmpeg", url);
        }
    }
    int ret = avformat_open_input(&r->fmt, url, ifmt, &fo); /* frees fmt on failure */
    av_dict_free(&fo);
    if (ret < 0) {
        char eb[AV_ERROR_MAX_STRING_SIZE];
        strix_status st = ret == AVERROR(ENOMEM) ? STRIX_E_NOMEM : is_io_error(ret) ? STRIX_E_IO : STRIX_E_IMAGE;
        if (stop_requested(r)) return strix_fail(err, STRIX_E_IO, "%s: interrupted while opening: nothing read", url);
        if (r->stall_hit)
            return strix_fail(err, STRIX_E_IO, "%s: nothing came for %g s while opening: the source is not sending "
                              "(check it, or allow a longer stall timeout)", url, r->opt.stall_timeout);
        if (ret == AVERROR_EOF)
            return strix_fail(err, st, "%s: the input ends before its first frame (an empty or truncated video)",
                              url);
        return strix_fail(err, st, st == STRIX_E_IO ? "%s: cannot open: %s (check the path or URL)"
                                                    : "%s: not a video FFmpeg can read, or a damaged one (%s)",
                          url, strix_video_averr(ret, eb));
    }
    strix_status st = open_streams(r, url, err);
    if (st && stop_requested(r)) st = strix_fail(err, STRIX_E_IO, "%s: interrupted while opening: nothing read", url);
    else if (st && r->stall_hit)
        st = strix_fail(err, STRIX_E_IO, "%s: nothing came for %g s while opening: the source is not sending "
                        "(check it, or allow a longer stall timeout)", url, r->opt.stall_timeout);
    return st;
}

strix_status strix_video_open(strix_video_reader **out, const char *url, const strix_video_read_options *o,
                              strix_error *err)
{
    strix_error_clear(err);
    *out = NULL;
    pthread_once(&log_once, install_log);
    strix_video_reader *r = calloc(1, sizeof *r);
    if (!r) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    r->fifo = -1;
    if (o) r->opt = *o;
    else strix_video_read_options_init(&r->opt);
    if (r->opt.pixel_alloc && !r->opt.pixel_free) {
        free(r);
        return strix_fail(err, STRIX_E_ARG, "%s: a pixel allocator without its pixel_free: give both", url);
    }
    if (!r->opt.pixel_alloc) { /* malloc and free: what a frame's NULL pixel_free means */
        r->opt.pixel_free = NULL;
        r->opt.pixel_ctx = NULL;
        r->opt.pixel_memory = STRIX_HOST;
    }
    r->last_pts = AV_NOPTS_VALUE;
    r->sws_fmt = r->nv12_fmt = -1;
    r->url = strdup(url);
    r->pkt = av_packet_alloc();
    r->frame = av_frame_alloc();
    r->sw = av_frame_alloc();
    if (!r->url || !r->pkt || !r->frame || !r->sw) {
        strix_video_close(r);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
    }
    strix_status st = open_url(r, err);
    if (!st) {
        r->tb = r->fmt->streams[r->vidx]->time_base;
        r->n_sig = r->fmt->nb_streams;
        if (!(r->sig = calloc(r->n_sig, sizeof *r->sig))) st = strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", url);
        for (unsigned i = 0; !st && i < r->n_sig; i++) {
            const AVStream *s = r->fmt->streams[i];
            r->sig[i] = (struct strix_video_stream_sig){s->codecpar->codec_type, s->codecpar->codec_id, s->time_base};
        }
    }
    if (st) {
        strix_video_close(r);
        return st;
    }
    *out = r;
    return STRIX_OK;
}

strix_status strix_video_reopen(strix_video_reader *r, strix_error *err)
{
    strix_error_clear(err);
    const strix_video_info first = r->info; /* what the timeline and a writer were set up with */
    close_input(r);
    av_packet_unref(r->pkt);
    av_frame_unref(r->frame);
    memset(&r->info, 0, sizeof r->info);
    strix_status st = open_url(r, err);
    r->info = first;
    if (st) {
        close_input(r);
        r->ended = 1;
        return st;
    }
    /* the new input's first frame continues the timeline where the last
     * frame ended */
    AVFormatContext *fmt = r->fmt;
    int64_t start = fmt->start_time != AV_NOPTS_VALUE && fmt->start_time > 0 ? fmt->start_time : 0;
    int64_t next = r->last_pts == AV_NOPTS_VALUE ? 0 : r->last_pts + (r->last_dur > 0 ? r->last_dur : 1);
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        AVStream *s = fmt->streams[i];
        r->offset[i] = av_rescale_q(start, AV_TIME_BASE_Q, s->time_base) - av_rescale_q(next, r->tb, s->time_base);
        if (r->keep[i] && (i >= r->n_sig || r->sig[i].type != s->codecpar->codec_type ||
                           r->sig[i].codec != s->codecpar->codec_id || av_cmp_q(r->sig[i].tb, s->time_base))) {
            r->keep[i] = 0; /* not the audio the writer was set up for */
            s->discard = AVDISCARD_ALL;
        }
    }
    r->flushing = r->ended = r->tainted = 0;
    r->stats.stopped = r->stats.stalled = r->stats.read_failed = 0;
    if (r->read_problem) r->stats.problem[0] = 0;
    r->read_problem = 0;
    return STRIX_OK;
}

const strix_video_info *strix_video_reader_info(const strix_video_reader *r) { return &r->info; }

/* Errors so far: logged by the decoder and returned by it (bad_packets). */
static long error_seen(const strix_video_reader *r)
{
    return atomic_load_explicit(&r->log_errors, memory_order_relaxed) + r->stats.bad_packets;
}

void strix_video_reader_stats(const strix_video_reader *r, strix_video_read_stats *s)
{
    *s = r->stats;
    s->decode_errors = atomic_load_explicit(&r->log_errors, memory_order_relaxed);
    if (atomic_load_explicit(&r->log_first_state, memory_order_acquire) == 2)
        snprintf(s->decoder_error, sizeof s->decoder_error, "%s", r->log_first);
    /* Frames lost: once the decoder is drained (ended: the final flush has
     * returned every frame it held, so decoder delay no longer hides any),
     * the packets given to it that made no frame, but no more than the
     * packets that met an error (error_packets, and the last one's, still
     * uncounted): a packet whose slices all failed, a refused packet, a
     * frame receive_frame failed.  Some streams legitimately decode packets
     * into no frame (VP9's hidden frames, which FFmpeg splits into packets
     * of their own; H.264 fields sent one per packet, two to a frame): the
     * bound keeps those out unless they met an error.  Packets flagged
     * AV_PKT_FLAG_DISCARD (the decoder drops their frames on purpose: MP4
     * edit lists) are not in packets_in. */
    long lost = r->packets_in - r->stats.frames, hit = r->error_packets + (error_seen(r) != r->errors_seen);
    s->frames_lost = r->ended && lost > 0 ? lost < hit ? lost : hit : 0;
}

static void note_problem(strix_video_reader *r, const char *what, int ret)
{
    if (r->stats.problem[0]) return;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    snprintf(r->stats.problem, sizeof r->stats.problem, "%s near frame %ld: %s", what, r->stats.frames,
             strix_video_averr(ret, eb));
}

/* Grow the pixel buffer *buf of f (f->rgb or f->nv12; *cap its bytes) to
 * need bytes with r's allocator (options.pixel_alloc, else malloc).  A frame
 * struct last read into by a reader of another allocator gives its buffers
 * back to that one first, so f->pixel_free and f->memory always describe
 * both buffers. */
static int pixel_reserve(const strix_video_reader *r, strix_video_frame *f, uint8_t **buf, size_t *cap, size_t need,
                         strix_error *err)
{
    if (f->pixel_free != r->opt.pixel_free || f->pixel_ctx != r->opt.pixel_ctx) {
        free_pixels(f);
        f->pixel_free = r->opt.pixel_free;
        f->pixel_ctx = r->opt.pixel_ctx;
    }
    f->memory = r->opt.pixel_memory;
    if (*cap >= need) return 0;
    if (*buf) {
        if (f->pixel_free) f->pixel_free(f->pixel_ctx, *buf);
        else free(*buf);
    }
    *buf = NULL;
    *cap = 0;
    if (r->opt.pixel_alloc) {
        void *p = NULL;
        if (r->opt.pixel_alloc(r->opt.pixel_ctx, need, &p, err)) return -1;
        *buf = p;
    } else if (!(*buf = malloc(need))) {
        strix_fail(err, STRIX_E_NOMEM, "out of memory for a %dx%d frame", r->info.width, r->info.height);
        return -1;
    }
    *cap = need;
    return 0;
}

/* Grow *buf to need bytes. */
static int reserve(uint8_t **buf, size_t *cap, size_t need, const strix_video_info *in, strix_error *err)
{
    if (*cap >= need) return 0;
    free(*buf);
    *cap = 0;
    if (!(*buf = malloc(need))) {
        strix_fail(err, STRIX_E_NOMEM, "out of memory for a %dx%d frame", in->width, in->height);
        return -1;
    }
    *cap = need;
    return 0;
}

static void no_free(void *opaque, uint8_t *data) { (void)opaque, (void)data; }

/* convert()'s swscale pass with the rows callback: the whole source given
 * at once, the output asked for in bands (sws_receive_slice), each band's
 * rows computed from the whole source and so the same bytes as one
 * sws_scale of the frame (slices of *input*, as sws_scale takes them, give
 * other bytes at their edges: the chroma rows past a slice are not there
 * yet), the callback run on each band as soon as it is written. */
static int convert_in_bands(strix_video_reader *r, struct SwsContext *s, const AVFrame *fr, strix_video_frame *f,
                            strix_error *err)
{
    AVFrame *dst = av_frame_alloc();
    AVBufferRef *buf = av_buffer_create(f->rgb, (size_t)f->stride * (size_t)f->height, no_free, NULL, 0);
    int rc = dst && buf ? 0 : AVERROR(ENOMEM);
    if (!rc) {
        dst->buf[0] = buf; /* the frame's own pixels, wrapped: sws_frame_start wants reference-counted ones */
        buf = NULL;
        dst->data[0] = f->rgb;
        dst->linesize[0] = f->stride;
        dst->width = f->width;
        dst->height = f->height;
        dst->format = AV_PIX_FMT_RGB24;
        rc = sws_frame_start(s, dst, fr);
    }
    int refused = 0; /* by the callback, err filled */
    if (!rc) {
        rc = sws_send_slice(s, 0, (unsigned)fr->height);
        const int align = (int)sws_receive_slice_alignment(s);
        int band = (STRIX_VIDEO_ROWS_BAND + align - 1) / align * align;
        for (int y = 0; rc >= 0 && !refused && y < f->height; y += band) {
            int h = f->height - y < band ? f->height - y : band;
            rc = sws_receive_slice(s, (unsigned)y, (unsigned)h);
            refused = rc >= 0 && r->opt.rows(r->opt.rows_ctx, f, y, y + h, err);
        }
        sws_frame_end(s);
    }
    av_buffer_unref(&buf);
    av_frame_free(&dst);
    if (rc < 0) {
        char msg[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(rc, msg, sizeof msg);
        strix_fail(err, STRIX_E_IMAGE, "cannot convert a %dx%d %s frame to RGB: %s", fr->width, fr->height,
                   av_get_pix_fmt_name(fr->format) ? av_get_pix_fmt_name(fr->format) : "?", msg);
    }
    return rc < 0 || refused ? -1 : 0;
}

/* RGB24 in display orientation from fr (a decoded frame in host memory)
 * into f: swscale writes straight into f->rgb (into r->tmp first only to
 * be turned for a rotated input). */
static int convert(strix_video_reader *r, const AVFrame *fr, strix_video_frame *f, strix_error *err)
{
    const strix_video_info *in = &r->info;
    int cw = in->coded_width, ch = in->coded_height;
    int range = fr->color_range == AVCOL_RANGE_JPEG || fr->format == AV_PIX_FMT_YUVJ420P ||
                fr->format == AV_PIX_FMT_YUVJ422P || fr->format == AV_PIX_FMT_YUVJ444P;
    int cs = fr->colorspace >= AVCOL_SPC_BT709 && fr->colorspace <= AVCOL_SPC_BT2020_CL ? (int)fr->colorspace
                                                                                          : SWS_CS_DEFAULT;
    struct SwsContext *s = sws_getCachedContext(r->sws, fr->width, fr->height, fr->format, cw, ch,
                                                AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
    if (!s) {
        strix_fail(err, STRIX_E_IMAGE, "cannot convert %s frames of %dx%d to RGB",
                   av_get_pix_fmt_name(fr->format) ? av_get_pix_fmt_name(fr->format) : "?", fr->width, fr->height);
        return -1;
    }
    if (s != r->sws || r->sws_cs != cs || r->sws_range != range || r->sws_w != fr->width ||
        r->sws_h != fr->height || r->sws_fmt != fr->format) {
        sws_setColorspaceDetails(s, sws_getCoefficients(cs), range, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                                 1 << 16, 1 << 16);
        r->sws = s;
        r->sws_cs = cs;
        r->sws_range = range;
        r->sws_w = fr->width;
        r->sws_h = fr->height;
        r->sws_fmt = fr->format;
    }
    /* rows padded to 64 bytes, + 64: swscale may write whole vectors */
    int stride = (in->width * 3 + 63) & ~63;
    if (pixel_reserve(r, f, &f->rgb, &f->cap, (size_t)stride * (size_t)in->height + 64, err)) return -1;
    f->width = in->width;
    f->height = in->height;
    f->stride = stride;
    uint8_t *dst = f->rgb;
    int dst_stride = stride;
    if (in->rotation) {
        dst_stride = (cw * 3 + 63) & ~63;
        if (reserve(&r->tmp, &r->tmp_cap, (size_t)dst_stride * (size_t)ch + 64, in, err)) return -1;
        dst = r->tmp;
    }
    uint8_t *planes[4] = {dst, NULL, NULL, NULL};
    int strides[4] = {dst_stride, 0, 0, 0};
    if (r->opt.rows && !in->rotation) return convert_in_bands(r, s, fr, f, err);
    sws_scale(s, (const uint8_t *const *)fr->data, fr->linesize, 0, fr->height, planes, strides);
    if (in->rotation) strix_video_rotate(f->rgb, stride, r->tmp, dst_stride, cw, ch, in->rotation, 3);
    return r->opt.rows && r->opt.rows(r->opt.rows_ctx, f, 0, f->height, err) ? -1 : 0;
}

/* NV12 in display orientation from fr (in host memory) into f (see strix_video_frame). */
static int convert_nv12(strix_video_reader *r, const AVFrame *fr, strix_video_frame *f, strix_error *err)
{
    const strix_video_info *in = &r->info;
    const int cw = in->coded_width, ch = in->coded_height, ccw = (cw + 1) / 2, cch = (ch + 1) / 2;
    const int yuv420 = fr->format == AV_PIX_FMT_YUV420P || fr->format == AV_PIX_FMT_YUVJ420P;
    const int direct = (yuv420 || fr->format == AV_PIX_FMT_NV12) && fr->width == cw && fr->height == ch;
    /* the planes in coded orientation: straight into f, or into r->tmp to be turned */
    const int stride = (2 * ((in->width + 1) / 2) + 63) & ~63;
    const int cstride = in->rotation ? (2 * ccw + 63) & ~63 : stride;
    if (pixel_reserve(r, f, &f->nv12, &f->nv12_cap, (size_t)stride * (in->height + (in->height + 1) / 2) + 64, err) ||
        (in->rotation && reserve(&r->tmp, &r->tmp_cap, (size_t)cstride * (ch + cch) + 64, in, err)))
        return -1;
    uint8_t *Y = in->rotation ? r->tmp : f->nv12, *UV = Y + (size_t)cstride * ch;
    f->colorspace = fr->colorspace == AVCOL_SPC_BT709 ? STRIX_BT709 : STRIX_BT601;
    if (direct) {
        f->full_range = fr->color_range == AVCOL_RANGE_JPEG || fr->format == AV_PIX_FMT_YUVJ420P;
        for (int y = 0; y < ch; y++) memcpy(Y + (size_t)y * cstride, fr->data[0] + (size_t)y * fr->linesize[0], (size_t)cw);
        for (int y = 0; y < cch; y++) {
            uint8_t *d = UV + (size_t)y * cstride;
            if (!yuv420) {
                memcpy(d, fr->data[1] + (size_t)y * fr->linesize[1], (size_t)2 * ccw);
                continue;
            }
            const uint8_t *u = fr->data[1] + (size_t)y * fr->linesize[1], *v = fr->data[2] + (size_t)y * fr->linesize[2];
            for (int x = 0; x < ccw; x++) d[2 * x] = u[x], d[2 * x + 1] = v[x];
        }
    } else {
        /* swscale to limited-range NV12 with the stream's matrix (what the
         * RGB path assumes for it) */
        const int cs = f->colorspace == STRIX_BT709 ? SWS_CS_ITU709 : SWS_CS_DEFAULT;
        const int range = fr->color_range == AVCOL_RANGE_JPEG || fr->format == AV_PIX_FMT_YUVJ422P ||
                          fr->format == AV_PIX_FMT_YUVJ444P;
        struct SwsContext *s = sws_getCachedContext(r->sws_nv12, fr->width, fr->height, fr->format, cw, ch,
                                                    AV_PIX_FMT_NV12, SWS_BILINEAR, NULL, NULL, NULL);
        if (!s) {
            strix_fail(err, STRIX_E_IMAGE, "cannot convert %s frames of %dx%d to NV12",
                       av_get_pix_fmt_name(fr->format) ? av_get_pix_fmt_name(fr->format) : "?", fr->width, fr->height);
            return -1;
        }
        if (s != r->sws_nv12 || r->nv12_w != fr->width || r->nv12_h != fr->height || r->nv12_fmt != fr->format ||
            r->nv12_cs != cs) {
            sws_setColorspaceDetails(s, sws_getCoefficients(cs), range, sws_getCoefficients(cs), 0, 0, 1 << 16,
                                     1 << 16);
            r->sws_nv12 = s;
            r->nv12_w = fr->width;
            r->nv12_h = fr->height;
            r->nv12_fmt = fr->format;
            r->nv12_cs = cs;
        }
        f->full_range = 0;
        uint8_t *planes[4] = {Y, UV, NULL, NULL};
        int strides[4] = {cstride, cstride, 0, 0};
        sws_scale(s, (const uint8_t *const *)fr->data, fr->linesize, 0, fr->height, planes, strides);
    }
    f->nv12_stride = stride;
    if (in->rotation) {
        strix_video_rotate(f->nv12, stride, Y, cstride, cw, ch, in->rotation, 1);
        strix_video_rotate(f->nv12 + (size_t)stride * in->height, stride, UV, cstride, ccw, cch, in->rotation, 2);
    }
    return 0;
}

/* An NVDEC frame (device memory, AV_PIX_FMT_CUDA) into f.  8-bit 4:2:0 in
 * the coded size and orientation stays where it is: f->device points at
 * its planes and f->hw holds a reference, so the decoder's pool does not
 * reuse them before f is read into again or freed.  Whatever else f must
 * carry (RGB; NV12 in host memory for 10-bit, rotated or resized frames) is
 * downloaded and converted as a CPU-decoded frame would be. */
static int deliver_device(strix_video_reader *r, const AVFrame *fr, strix_video_frame *f, strix_error *err)
{
    const strix_video_info *in = &r->info;
    const AVHWFramesContext *fc = (const AVHWFramesContext *)fr->hw_frames_ctx->data;
    const int keep = r->opt.nv12 && fc->sw_format == AV_PIX_FMT_NV12 && !in->rotation &&
                     fr->width == in->coded_width && fr->height == in->coded_height;
    if (keep) {
        if (!f->hw && !(f->hw = av_frame_alloc())) {
            strix_fail(err, STRIX_E_NOMEM, "out of memory");
            return -1;
        }
        AVFrame *ref = f->hw;
        int ret = av_frame_ref(ref, fr);
        if (ret < 0) {
            char eb[AV_ERROR_MAX_STRING_SIZE];
            strix_fail(err, STRIX_E_DEVICE, "cannot keep an NVDEC frame: %s", strix_video_averr(ret, eb));
            return -1;
        }
        f->device = (strix_image){.data = ref->data[0], .width = fr->width, .height = fr->height,
                                  .stride = ref->linesize[0], .format = STRIX_NV12, .uv = ref->data[1],
                                  .uv_stride = ref->linesize[1],
                                  .colorspace = fr->colorspace == AVCOL_SPC_BT709 ? STRIX_BT709 : STRIX_BT601,
                                  .full_range = fr->color_range == AVCOL_RANGE_JPEG, .memory = STRIX_DEVICE};
        r->stats.device_frames++;
    }
    if (!r->opt.rgb && (keep || !r->opt.nv12)) return 0;
    av_frame_unref(r->sw);
    int ret = av_hwframe_transfer_data(r->sw, fr, 0);
    if (ret >= 0) ret = av_frame_copy_props(r->sw, fr);
    if (ret < 0) {
        char eb[AV_ERROR_MAX_STRING_SIZE];
        strix_fail(err, STRIX_E_DEVICE, "cannot download an NVDEC frame: %s", strix_video_averr(ret, eb));
        return -1;
    }
    return (r->opt.rgb && convert(r, r->sw, f, err)) || (r->opt.nv12 && !keep && convert_nv12(r, r->sw, f, err))
               ? -1
               : 0;
}

/* Hand r->frame out as f: timestamps, audio packets, pixels. */
static int deliver(strix_video_reader *r, strix_video_frame *f, strix_error *err)
{
    AVFrame *fr = r->frame;
    const AVStream *st = r->fmt->streams[r->vidx];
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 7, 100)
    int key = (fr->flags & AV_FRAME_FLAG_KEY) != 0;
#else
    int key = fr->key_frame;
#endif
    if (fr->decode_error_flags || (fr->flags & AV_FRAME_FLAG_CORRUPT)) {
        r->stats.concealed++;
        r->tainted = 1;
        if (!r->stats.problem[0])
            snprintf(r->stats.problem, sizeof r->stats.problem, "damaged frame %ld (concealed by the decoder)",
                     r->stats.frames);
    } else if (key) {
        r->tainted = 0;
    } else if (r->tainted) {
        r->stats.tainted++;
    }
    /* in the timeline's time base (the stream's, but for a reopened input's
     * other one) */
    int64_t pts = fr->best_effort_timestamp;
    if (pts == AV_NOPTS_VALUE) pts = r->last_pts == AV_NOPTS_VALUE ? 0 : r->last_pts + (r->last_dur > 0 ? r->last_dur : 1);
    else pts = av_rescale_q(pts - r->offset[r->vidx], st->time_base, r->tb);
    if (r->last_pts != AV_NOPTS_VALUE && pts <= r->last_pts) pts = r->last_pts + (r->last_dur > 0 ? r->last_dur : 1);
    int64_t dur = STRIX_FRAME_DURATION(fr) > 0 ? av_rescale_q(STRIX_FRAME_DURATION(fr), st->time_base, r->tb) : 0;
    r->last_pts = pts;
    r->last_dur = dur;
    f->side->pts = pts;
    f->side->duration = dur;
    f->time = (double)pts * r->tb.num / r->tb.den;
    f->index = r->stats.frames++;
    /* the pending audio packets move to the frame: swap the arrays */
    struct strix_video_side t = r->pending;
    r->pending.audio = f->side->audio;
    r->pending.cap_audio = f->side->cap_audio;
    r->pending.n_audio = 0;
    f->side->audio = t.audio;
    f->side->cap_audio = t.cap_audio;
    f->side->n_audio = t.n_audio;
    range_push(r, "preprocess");
    double t0 = strix_video_now_ms();
    f->width = r->info.width;
    f->height = r->info.height;
    if (f->hw) av_frame_unref(f->hw); /* the previous NVDEC frame goes back to the decoder's pool */
    f->device = (strix_image){0};
    int rc = fr->format == AV_PIX_FMT_CUDA ? deliver_device(r, fr, f, err)
                                           : (r->opt.rgb && convert(r, fr, f, err)) ||
                                                 (r->opt.nv12 && convert_nv12(r, fr, f, err));
    r->stats.convert_ms += strix_video_now_ms() - t0;
    range_pop(r);
    av_frame_unref(fr);
    return rc ? -1 : 1;
}

int strix_video_read(strix_video_reader *r, strix_video_frame *f, strix_error *err)
{
    strix_error_clear(err);
    if (!f->side && !(f->side = calloc(1, sizeof *f->side))) {
        strix_fail(err, STRIX_E_NOMEM, "out of memory");
        return -1;
    }
    strix_video_side_clear(f->side);
    range_push(r, "decode");
    double t0 = strix_video_now_ms();
    int rc = 0, errors = 0;
    while (!r->ended) {
        int ret = avcodec_receive_frame(r->dec, r->frame);
        if (ret == 0) {
            r->stats.decode_ms += strix_video_now_ms() - t0;
            range_pop(r);
            return deliver(r, f, err);
        }
        if (ret == AVERROR_EOF || (r->flushing && ret == AVERROR(EAGAIN))) {
            r->ended = 1;
            break;
        }
        if (ret != AVERROR(EAGAIN)) { /* a broken frame: count it, go on */
            r->stats.bad_packets++;
            r->tainted = 1;
            note_problem(r, "decode error", ret);
            if (++errors > 1000) { /* a decoder stuck in errors: give up on the rest */
                r->ended = 1;
                break;
            }
            if (r->flushing) continue;
        }
        if (r->flushing) continue;
        r->wait_from_ms = strix_video_now_ms(); /* a stall is counted from here, not from the last packet */
        ret = stop_requested(r) ? AVERROR_EXIT : av_read_frame(r->fmt, r->pkt);
        if (ret == AVERROR(EAGAIN)) {
            av_usleep(10000);
            continue;
        }
        if (ret < 0) {
            /* a stall may have hit a read that still returned buffered
             * packets: the input's AVIOContext keeps the error for later */
            if (r->stall_hit || (ret == AVERROR_EXIT && !stop_requested(r))) {
                r->stats.stalled = 1;
            } else if (ret == AVERROR_EXIT || stop_requested(r)) {
                r->stats.stopped = 1;
            } else if (ret != AVERROR_EOF) {
                r->stats.read_failed = 1;
                r->read_problem = !r->stats.problem[0];
                note_problem(r, "read error (input ends here)", ret);
            }
            avcodec_send_packet(r->dec, NULL);
            r->flushing = 1;
            continue;
        }
        AVPacket *pkt = r->pkt;
        if (pkt->stream_index == r->vidx) {
            if (pkt->flags & AV_PKT_FLAG_CORRUPT) {
                r->stats.corrupt_packets++;
                r->tainted = 1;
            }
            /* errors since the previous packet was sent: it met them (its
             * decode ran in that send: strix's decoders run on the reading
             * thread, libavcodec's default of one thread) */
            long seen = error_seen(r);
            r->error_packets += seen != r->errors_seen;
            r->errors_seen = seen;
            int discard = (pkt->flags & AV_PKT_FLAG_DISCARD) != 0;
            ret = avcodec_send_packet(r->dec, pkt);
            av_packet_unref(pkt);
            r->packets_in += ret != AVERROR(EAGAIN) && !discard;
            if (ret < 0 && ret != AVERROR(EAGAIN)) {
                r->stats.bad_packets++;
                r->tainted = 1;
                note_problem(r, "corrupt packet", ret);
            }
        } else if (pkt->stream_index >= 0 && (unsigned)pkt->stream_index < r->fmt->nb_streams &&
                   r->keep[pkt->stream_index]) {
            int64_t off = r->offset[pkt->stream_index];
            if (pkt->pts != AV_NOPTS_VALUE) pkt->pts -= off;
            if (pkt->dts != AV_NOPTS_VALUE) pkt->dts -= off;
            AVPacket *keep = av_packet_alloc();
            if (!keep || strix_video_side_add(&r->pending, keep)) {
                av_packet_free(&keep);
                av_packet_unref(pkt);
                strix_fail(err, STRIX_E_NOMEM, "out of memory for audio packets");
                rc = -1;
                break;
            }
            av_packet_move_ref(keep, pkt);
        } else {
            av_packet_unref(pkt);
        }
    }
    r->stats.decode_ms += strix_video_now_ms() - t0;
    range_pop(r);
    return rc;
}

void strix_video_read_tail(strix_video_reader *r, strix_video_frame *f)
{
    if (!f->side && !(f->side = calloc(1, sizeof *f->side))) return;
    strix_video_side_clear(f->side);
    struct strix_video_side t = r->pending;
    r->pending = *f->side;
    *f->side = t;
    f->side->pts = AV_NOPTS_VALUE;
    f->side->duration = 0;
}

void strix_video_log_level(int verbose)
{
    pthread_once(&log_once, install_log);
    av_log_set_level(verbose ? AV_LOG_WARNING : AV_LOG_QUIET);
}
