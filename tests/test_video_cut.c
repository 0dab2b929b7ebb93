/* test_video_cut.c — strix_video_cut (loaders/video_cut.c) on synthetic
 * clips made here with the ffmpeg CLI (lavfi), 160x120: every frame carries
 * its index as an 8-bit code (white/black stripes in its top half) and some
 * frames flash white in their bottom half; the audio is a 1 kHz beep exactly
 * while frames flash, silence elsewhere.  The output is read back with
 * strix's reader (frames, their codes and times), ffprobe (stream durations)
 * and ffmpeg (audio as 48 kHz mono s16), and checked for: exactly the frames
 * of the segments, in order, at their expected output times; durations
 * (stats, container, decoded audio); audio in sync across every cut (each
 * output frame beeps iff it flashes, and each beep onset lies within a few
 * milliseconds of its flash); clamping, empty segments, input audio that
 * starts late and ends early (silence), no audio, a
 * 30000/1001 fps input with audio at a rate AAC lacks (resampled), many
 * short segments, rotation, the draw callback, interruption, bad arguments.
 * SKIPs every test when ffmpeg or ffprobe is missing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "video.h"

#define W 160
#define H 120
#define MAXF 300
#define RATE 48000     /* the decoded output audio */
#define BEEP_AMP 0.5   /* of full scale */
#define ONSET_TOL 0.002 /* seconds: a beep onset vs its flash (measured: 0.06 ms; 0.3 ms with MKV's
                          millisecond timestamps) */

static char g_dir[64];
static int g_tools = -1; /* ffmpeg and ffprobe found */

typedef struct run_ {
    int first, len; /* frames that flash (and beep) */
} run_;

typedef struct clip {
    const char *name;        /* file name in g_dir */
    int fps_num, fps_den, frames;
    int audio_rate;          /* 0: no audio */
    const char *audio_codec; /* aac, pcm_s16le */
    const char *layout;      /* mono, stereo */
    const char *extra;       /* more ffmpeg output options, or "" */
    const run_ *runs;
    int n_runs;
    double audio_from, audio_to; /* the audio's span in seconds; 0, 0: the video's */
    char path[160];
    int made;                /* 1 made, -1 failed */
} clip;

/* Frames as read back: time, the code in the stripes, flash, painted corner. */
typedef struct frames {
    int n, width, height, rotation;
    double t[MAXF];
    int code[MAXF], flash[MAXF], painted[MAXF];
} frames;

static const run_ MAIN_RUNS[] = {{30, 2}, {60, 3}, {100, 2}, {140, 4}, {180, 2}, {215, 3}, {240, 1}};
static clip g_main = {"main.mp4", 25, 1, 250, 48000, "aac", "stereo", "", MAIN_RUNS, 7, 0, 0, "", 0};
static const run_ NTSC_RUNS[] = {{20, 3}, {50, 2}, {90, 4}, {120, 2}, {150, 3}};
static clip g_ntsc = {"ntsc.mkv", 30000, 1001, 180, 30000, "pcm_s16le", "mono", "", NTSC_RUNS, 5, 0, 0, "", 0};
static clip g_mute = {"mute.mp4", 25, 1, 75, 0, "", "", "", MAIN_RUNS, 1, 0, 0, "", 0};
static clip g_rot = {"rot.mp4", 25, 1, 50, 0, "", "", "", MAIN_RUNS, 1, 0, 0, "", 0};
static const run_ LATE_RUNS[] = {{20, 3}, {55, 3}};
static clip g_late = {"late.mp4", 25, 1, 100, 44100, "aac", "mono", "", LATE_RUNS, 2, 0.5, 3.0, "", 0};

static int tools(void)
{
    if (g_tools < 0)
        g_tools = system("ffmpeg -version >/dev/null 2>&1") == 0 && system("ffprobe -version >/dev/null 2>&1") == 0;
    return g_tools;
}

static void path_in_dir(char *dst, size_t n, const char *name) { snprintf(dst, n, "%s/%s", g_dir, name); }

/* Make the clip once; 0 with a SKIP or FAIL reason set otherwise. */
static int make(clip *c)
{
    if (!tools()) {
        tl_skip("ffmpeg or ffprobe is not installed (sh tools/deps.sh)");
        return 0;
    }
    if (c->made) {
        if (c->made < 0) tl_fail("could not make %s", c->name);
        return c->made > 0;
    }
    c->made = -1;
    path_in_dir(c->path, sizeof c->path, c->name);
    double dur = (double)c->frames * c->fps_den / c->fps_num;
    double a0 = c->audio_from, a1 = c->audio_to > 0 ? c->audio_to : dur;
    char flash[1024] = "0", beep[2048] = "0";
    for (int i = 0; i < c->n_runs; i++) {
        const run_ *r = &c->runs[i];
        size_t l = strlen(flash);
        snprintf(flash + l, sizeof flash - l, "+between(N,%d,%d)", r->first, r->first + r->len - 1);
        l = strlen(beep);
        double t0 = (double)r->first * c->fps_den / c->fps_num;
        double t1 = (double)(r->first + r->len) * c->fps_den / c->fps_num;
        snprintf(beep + l, sizeof beep - l, "+gte(t,%.9f)*lt(t,%.9f)", t0 - a0, t1 - a0);
    }
    char cmd[8192], audio[3072] = "", acodec[64] = "";
    if (c->audio_rate) {
        /* audio from a0 to a1 of the video's time (-itsoffset), beeping at the flashes' times */
        snprintf(audio, sizeof audio, "-itsoffset %.6f -f lavfi -i \"aevalsrc='%g*sin(2*PI*1000*t)*(%s)':s=%d:c=%s:"
                 "d=%.6f\"", a0, BEEP_AMP, beep, c->audio_rate, c->layout, a1 - a0);
        snprintf(acodec, sizeof acodec, "-c:a %s", c->audio_codec);
    }
    snprintf(cmd, sizeof cmd,
             "ffmpeg -v error -nostdin -y -f lavfi -i \"color=c=black:s=%dx%d:r=%d/%d:d=%.6f,format=gray,"
             "geq=lum='if(lt(Y,%d),255*mod(floor(N/pow(2,floor(X/20))),2),255*(%s))'\" %s "
             "-c:v libx264 -preset veryfast -pix_fmt yuv420p %s %s %s",
             W, H, c->fps_num, c->fps_den, dur, H / 2, flash, audio, acodec, c->extra, c->path);
    if (system(cmd) != 0) {
        tl_fail("ffmpeg could not make %s", c->name);
        return 0;
    }
    c->made = 1;
    return 1;
}

/* G of the pixel the reader shows for coded pixel (x, y) of a W x H picture
 * it turned `rot` degrees clockwise (as strix_video_rotate does). */
static int pix(const strix_video_frame *f, int rot, int x, int y)
{
    int dx = rot == 90 ? H - 1 - y : rot == 180 ? W - 1 - x : rot == 270 ? y : x;
    int dy = rot == 90 ? x : rot == 180 ? H - 1 - y : rot == 270 ? W - 1 - x : y;
    return f->rgb[(size_t)dy * f->stride + (size_t)dx * 3 + 1];
}

/* Read every frame of path with the reader (codes sampled in the coded
 * orientation). */
static int read_frames(const char *path, frames *fs)
{
    memset(fs, 0, sizeof *fs);
    strix_video_reader *r;
    strix_error err;
    if (strix_video_open(&r, path, NULL, &err)) {
        tl_fail("cannot read back %s: %s", path, err.message);
        return 0;
    }
    const strix_video_info *in = strix_video_reader_info(r);
    fs->width = in->width;
    fs->height = in->height;
    fs->rotation = in->rotation;
    strix_video_frame f = {0};
    int got;
    while ((got = strix_video_read(r, &f, &err)) == 1 && fs->n < MAXF) {
        int i = fs->n++, rot = fs->rotation;
        fs->t[i] = f.time;
        for (int b = 0; b < 8; b++) fs->code[i] |= (pix(&f, rot, 20 * b + 10, 30) > 128) << b;
        fs->flash[i] = pix(&f, rot, 60, 90) > 128;
        fs->painted[i] = pix(&f, rot, 150, 110) > 128 && pix(&f, rot, 150, 70) < 128;
    }
    strix_video_frame_free(&f);
    strix_video_close(r);
    if (got < 0) {
        tl_fail("reading back %s: %s", path, err.message);
        return 0;
    }
    return 1;
}

static int in_segment(const strix_video_segment *s, int n, double t)
{
    for (int k = 0; k < n; k++)
        if (s[k].start < s[k].end && t >= s[k].start - STRIX_VIDEO_CUT_EPS && t < s[k].end - STRIX_VIDEO_CUT_EPS)
            return k;
    return -1;
}

/* The input frames the segments keep (idx), their output times and the
 * output's duration, the spec written out independently of the code. */
static int expected(const frames *in, double final_dur, const strix_video_segment *s, int n, int *idx,
                    double *out_t, double *total)
{
    int m = 0, prev = -1;
    double end = 0, base = 0;
    for (int i = 0; i < in->n; i++) {
        int k = in_segment(s, n, in->t[i]);
        if (k >= 0 && k != prev) base = end - in->t[i];
        prev = k;
        if (k < 0) continue;
        idx[m] = i;
        out_t[m] = in->t[i] + base;
        end = out_t[m] + (i + 1 < in->n ? in->t[i + 1] - in->t[i] : final_dur);
        m++;
    }
    *total = end;
    return m;
}

/* popen a command and read all its output (malloc'd, *n bytes). */
static unsigned char *slurp(const char *cmd, size_t *n)
{
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 1 << 20, len = 0;
    unsigned char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + len, 1, cap - len, p)) > 0) {
        len += k;
        if (len == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
    }
    if (pclose(p) != 0) {
        free(b);
        return NULL;
    }
    *n = len;
    return b;
}

/* ffprobe's `entry` (duration, sample_rate) of the first stream of a kind
 * ("v", "a"); -1 if none. */
static double probe(const char *path, const char *kind, const char *entry)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ffprobe -v error -select_streams %s:0 -show_entries stream=%s -of csv=p=0 '%s'", kind,
             entry, path);
    size_t n = 0;
    unsigned char *b = slurp(cmd, &n);
    double d = -1;
    if (b && n) {
        b[n - 1] = 0;
        char *end;
        double v = strtod((char *)b, &end);
        if (end != (char *)b) d = v;
    }
    free(b);
    return d;
}

/* The first audio stream decoded to RATE Hz mono s16; NULL when none. */
static int16_t *decode_audio(const char *path, long *n)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ffmpeg -v error -nostdin -i '%s' -map 0:a:0 -f s16le -ac 1 -ar %d - 2>/dev/null", path,
             RATE);
    size_t bytes = 0;
    int16_t *s = (int16_t *)slurp(cmd, &bytes);
    *n = (long)(bytes / 2);
    return s;
}

/* Beep onsets: the first loud sample after 30 ms without one. */
static int onsets(const int16_t *s, long n, double *t, int max)
{
    int m = 0;
    long last = -RATE;
    for (long i = 0; i < n; i++) {
        if (abs(s[i]) <= 0.3 * BEEP_AMP * 32767) continue;
        if (i - last > RATE * 3 / 100 && m < max) t[m++] = (double)i / RATE;
        last = i;
    }
    return m;
}

/* Check an output against the input and segments: frames, times, durations
 * and (when the output has audio) A/V sync.  Returns 0 after tl_fail. */
static int check_output(const clip *c, const frames *in, const char *out, const strix_video_segment *s, int n,
                        const strix_video_cut_stats *st, int want_audio)
{
    static int idx[MAXF];
    static double out_t[MAXF];
    static frames o;
    double total;
    int m = expected(in, (double)c->fps_den / c->fps_num, s, n, idx, out_t, &total);
    if (st->frames != m) {
        tl_fail("stats: %ld frames written, want %d", st->frames, m);
        return 0;
    }
    if (fabs(st->duration - total) > 1e-6) {
        tl_fail("stats: %.6f s of video, want %.6f", st->duration, total);
        return 0;
    }
    if (!read_frames(out, &o)) return 0;
    if (o.n != m) {
        tl_fail("%d frames in the output, want %d", o.n, m);
        return 0;
    }
    for (int j = 0; j < m; j++) {
        if (o.code[j] != in->code[idx[j]]) {
            tl_fail("output frame %d is input frame %d, want %d", j, o.code[j], in->code[idx[j]]);
            return 0;
        }
        if (fabs(o.t[j] - out_t[j]) > 5e-4) {
            tl_fail("output frame %d at %.6f s, want %.6f", j, o.t[j], out_t[j]);
            return 0;
        }
    }
    double vd = probe(out, "v", "duration");
    if (fabs(vd - total) > 1e-3) {
        tl_fail("the output's video stream lasts %.6f s, want %.6f", vd, total);
        return 0;
    }
    double ad = probe(out, "a", "duration");
    if (!want_audio) {
        if (ad >= 0 || st->audio_duration != 0) {
            tl_fail("the output has audio (%.3f s; stats %.3f s), want none", ad, st->audio_duration);
            return 0;
        }
        return 1;
    }
    /* the audio written is the video's length to the sample */
    if (fabs(st->audio_duration - total) > 1.0 / 8000) {
        tl_fail("stats: %.6f s of audio for %.6f s of video", st->audio_duration, total);
        return 0;
    }
    long ns = 0;
    int16_t *pcm = decode_audio(out, &ns);
    if (!pcm) {
        tl_fail("ffmpeg cannot decode the output's audio");
        return 0;
    }
    /* decoders keep the last AAC frame's padding: up to 1024 samples at the stream's rate */
    double rate = probe(out, "a", "sample_rate");
    if (rate <= 0 || fabs((double)ns - total * RATE) > 1024.0 * RATE / rate) {
        tl_fail("%ld audio samples decoded (at %d Hz), want %ld within one AAC frame of the %g Hz stream", ns, RATE,
                lround(total * RATE), rate);
        free(pcm);
        return 0;
    }
    /* every output frame beeps iff it flashes: RMS over its middle half */
    for (int j = 0; j < m; j++) {
        double t1 = j + 1 < m ? out_t[j + 1] : total, d = t1 - out_t[j];
        long a = lround((out_t[j] + d / 4) * RATE), b = lround((out_t[j] + 3 * d / 4) * RATE);
        double sum = 0;
        for (long i = a; i < b && i < ns; i++) sum += (double)pcm[i] * pcm[i];
        double rms = b > a ? sqrt(sum / (double)(b - a)) / 32767 : 0;
        int beeps = rms > 0.5 * BEEP_AMP / sqrt(2.0);
        if (beeps != in->flash[idx[j]]) {
            tl_fail("output frame %d (input %d, at %.3f s) %s but %s (audio RMS %.3f)", j, idx[j], out_t[j],
                    in->flash[idx[j]] ? "flashes" : "is dark", beeps ? "beeps" : "is silent", rms);
            free(pcm);
            return 0;
        }
    }
    /* beep onsets where flashes start, to a few milliseconds */
    double beep[64], fl[64];
    int nb = onsets(pcm, ns, beep, 64), nf = 0;
    free(pcm);
    for (int j = 0; j < m && nf < 64; j++)
        if (in->flash[idx[j]] && (j == 0 || !in->flash[idx[j - 1]])) fl[nf++] = out_t[j];
    if (nb != nf) {
        tl_fail("%d beep onsets in the output audio, %d flash onsets in its video", nb, nf);
        return 0;
    }
    for (int i = 0; i < nf; i++)
        if (fabs(beep[i] - fl[i]) > ONSET_TOL) {
            tl_fail("flash %d starts at %.4f s, its beep at %.4f s (%.1f ms apart)", i, fl[i], beep[i],
                    1e3 * (beep[i] - fl[i]));
            return 0;
        }
    return 1;
}

/* Read the input clip, cut it, check everything. */
static void cut_and_check(clip *c, const char *out_name, const strix_video_segment *s, int n, int want_audio)
{
    static frames in;
    if (!make(c) || !read_frames(c->path, &in)) return;
    TL_CHECK(in.n == c->frames, "%s: %d frames read, %d made", c->name, in.n, c->frames);
    for (int i = 0; i < in.n; i++) TL_CHECK(in.code[i] == i, "%s: frame %d carries code %d", c->name, i, in.code[i]);
    char out[160];
    path_in_dir(out, sizeof out, out_name);
    strix_video_cut_options o;
    strix_video_cut_options_init(&o);
    o.write.preset = "ultrafast";
    o.write.audio = want_audio;
    strix_video_cut_stats st;
    strix_error err;
    strix_status rc = strix_video_cut(c->path, out, s, n, &o, &st, &err);
    TL_CHECK(rc == STRIX_OK, "cut %s: %s", c->name, err.message);
    check_output(c, &in, out, s, n, &st, want_audio && c->audio_rate);
}

/* 25 fps, AAC: segments with boundaries between and on frames, one
 * starting on a flash (the beep must start with it), an empty one, one
 * running past the end (clamped), one wholly past it (skipped). */
static void cut_frames_and_sync(void)
{
    const strix_video_segment s[] = {{1.01, 2.6}, {4.0, 5.2}, {5.55, 8.0}, {8.5, 8.5}, {9.5, 20}, {30, 40}};
    cut_and_check(&g_main, "main_cut.mp4", s, 6, 1);
}

/* 30000/1001 fps in MKV (millisecond timestamps), mono PCM at 30 kHz, a
 * rate AAC lacks (resampled to 48 kHz): rounding on every side. */
static void cut_ntsc_resampled(void)
{
    const double f = 1001.0 / 30000;
    const strix_video_segment s[] = {{0, 10 * f}, {18 * f, 27.5 * f}, {48.2 * f, 60 * f},
                                     {89 * f, 100 * f}, {119.9 * f, 160 * f}};
    cut_and_check(&g_ntsc, "ntsc_cut.mp4", s, 5, 1);
}

/* Forty short segments: sync (and the audio's length) must not drift. */
static void cut_many_segments(void)
{
    strix_video_segment s[40];
    for (int i = 0; i < 40; i++) {
        double a = 0.25 * i + tl_uniform(0.0f, 0.05f);
        s[i] = (strix_video_segment){a, a + tl_uniform(0.05f, 0.19f)};
    }
    cut_and_check(&g_main, "many_cut.mp4", s, 40, 1);
}

/* Input audio from 0.5 s to 3 s of a 4 s video: silence before and after
 * (a segment starts before the audio, one runs past its end and the video's). */
static void cut_audio_late_and_short(void)
{
    const strix_video_segment s[] = {{0.1, 1.0}, {2.0, 5.0}};
    cut_and_check(&g_late, "late_cut.mp4", s, 2, 1);
}

static void cut_no_audio(void)
{
    const strix_video_segment s[] = {{0.5, 1.0}, {2.0, 9.0}};
    cut_and_check(&g_mute, "mute_cut.mp4", s, 2, 1);
}

/* o.write.audio = 0 on a clip with audio: none written. */
static void cut_audio_off(void)
{
    const strix_video_segment s[] = {{1.0, 2.0}, {3.0, 3.5}};
    cut_and_check(&g_main, "off_cut.mp4", s, 2, 0);
}

/* Rotation kept: the output turns like the input, codes read the same. */
static void cut_rotated(void)
{
    static frames in;
    if (!make(&g_rot)) return;
    /* a display matrix by remuxing: the rotate tag (FFmpeg 5), else -display_rotation (6 on) */
    clip rot = g_rot;
    rot.name = "rot90.mp4";
    path_in_dir(rot.path, sizeof rot.path, rot.name);
    static const char *const how[] = {"-i '%s' -c copy -metadata:s:v:0 rotate=90 '%s'",
                                      "-display_rotation:v:0 -90 -i '%s' -c copy '%s'"};
    for (int i = 0; i < 2 && in.rotation % 180 == 0; i++) {
        char args[512], cmd[640];
        snprintf(args, sizeof args, how[i], g_rot.path, rot.path);
        snprintf(cmd, sizeof cmd, "ffmpeg -v quiet -nostdin -y %s", args);
        if (system(cmd) == 0 && !read_frames(rot.path, &in)) return;
    }
    if (in.rotation % 180 == 0) {
        tl_skip("this ffmpeg cannot tag a rotation by remuxing (the reader sees %d degrees)", in.rotation);
        return;
    }
    const strix_video_segment s[] = {{0.2, 0.6}, {1.0, 1.4}};
    cut_and_check(&rot, "rot_cut.mp4", s, 2, 1);
    if (tl_g.failed) return;
    static frames o;
    char out[160];
    path_in_dir(out, sizeof out, "rot_cut.mp4");
    if (!read_frames(out, &o)) return;
    TL_CHECK(o.rotation == in.rotation && o.width == H && o.height == W, "output: %d degrees, %dx%d; want %d, %dx%d",
             o.rotation, o.width, o.height, in.rotation, H, W);
}

typedef struct draw_log {
    int n, fail_at;
    long index[MAXF];
    double time[MAXF];
} draw_log;

/* Record the frame, paint the bottom-right corner white (in the coded
 * orientation, which is the display one here). */
static int draw(void *ctx, strix_video_frame *f, strix_error *err)
{
    draw_log *l = ctx;
    if (l->n == l->fail_at) {
        err->status = STRIX_E_DEVICE;
        snprintf(err->message, sizeof err->message, "draw: device lost");
        return -1;
    }
    if (l->n < MAXF) {
        l->index[l->n] = f->index;
        l->time[l->n] = f->time;
    }
    l->n++;
    for (int y = 100; y < f->height; y++)
        for (int x = 140; x < f->width; x++) memset(f->rgb + (size_t)y * f->stride + (size_t)x * 3, 255, 3);
    return 0;
}

static void cut_draw_callback(void)
{
    static frames in, o;
    if (!make(&g_main) || !read_frames(g_main.path, &in)) return;
    const strix_video_segment s[] = {{0.3, 0.7}, {6.02, 6.5}};
    static int idx[MAXF];
    static double out_t[MAXF];
    double total;
    int m = expected(&in, 0.04, s, 2, idx, out_t, &total);
    char out[160];
    path_in_dir(out, sizeof out, "draw_cut.mp4");
    strix_video_cut_options opt;
    strix_video_cut_options_init(&opt);
    opt.write.preset = "ultrafast";
    static draw_log log;
    memset(&log, 0, sizeof log);
    log.fail_at = -1;
    opt.draw = draw;
    opt.ctx = &log;
    strix_video_cut_stats st;
    strix_error err;
    TL_CHECK(strix_video_cut(g_main.path, out, s, 2, &opt, &st, &err) == STRIX_OK, "cut: %s", err.message);
    TL_CHECK(log.n == m, "draw saw %d frames, want %d", log.n, m);
    for (int j = 0; j < m; j++)
        TL_CHECK(log.index[j] == idx[j] && fabs(log.time[j] - in.t[idx[j]]) < 1e-9,
                 "draw call %d saw frame %ld at %.6f s, want %d at %.6f", j, log.index[j], log.time[j], idx[j],
                 in.t[idx[j]]);
    if (!read_frames(out, &o)) return;
    TL_CHECK(o.n == m, "%d frames in the output, want %d", o.n, m);
    for (int j = 0; j < m; j++) TL_CHECK(o.painted[j], "output frame %d lacks the callback's drawing", j);
    /* a failing callback stops the cut with its own status and message */
    memset(&log, 0, sizeof log);
    log.fail_at = 3;
    strix_status rc = strix_video_cut(g_main.path, out, s, 2, &opt, &st, &err);
    TL_CHECK(rc == STRIX_E_DEVICE && strstr(err.message, "device lost"), "failing callback: status %d (%s)", rc,
             err.message);
    TL_CHECK(log.n == 3, "the callback was called %d times after failing at 3", log.n);
}

static int stop_after(void *ctx)
{
    int *n = ctx;
    return --*n < 0;
}

static void cut_interrupt(void)
{
    if (!make(&g_main)) return;
    char out[160];
    path_in_dir(out, sizeof out, "stop_cut.mp4");
    strix_video_cut_options o;
    strix_video_cut_options_init(&o);
    o.write.preset = "ultrafast";
    int polls = 20;
    o.interrupt = stop_after;
    o.interrupt_ctx = &polls;
    const strix_video_segment s[] = {{0, 10}};
    strix_error err;
    strix_status rc = strix_video_cut(g_main.path, out, s, 1, &o, NULL, &err);
    TL_CHECK(rc == STRIX_E_IO && strstr(err.message, "interrupted"), "interrupted cut: status %d (%s)", rc,
             err.message);
}

/* status want, one line of message, and (for argument errors) no output */
static int expect_error(const char *what, strix_status rc, strix_status want, const strix_error *err,
                        const char *out)
{
    if (rc != want) {
        tl_fail("%s: status %d (%s), want %d", what, rc, err->message, want);
        return 0;
    }
    if (!err->message[0] || strchr(err->message, '\n')) {
        tl_fail("%s: want one line of message, got \"%s\"", what, err->message);
        return 0;
    }
    if (want == STRIX_E_ARG && out && access(out, F_OK) == 0 && rc != STRIX_OK) {
        tl_fail("%s: an output file was created for bad arguments", what);
        return 0;
    }
    return 1;
}

static void cut_bad_args(void)
{
    if (!make(&g_main)) return;
    char out[160], txt[160], nodir[192];
    path_in_dir(out, sizeof out, "bad_cut.mp4");
    path_in_dir(txt, sizeof txt, "not_a_video.mp4");
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/out.mp4", g_dir);
    FILE *f = fopen(txt, "w");
    TL_CHECK(f, "cannot write %s", txt);
    fputs("this is not a video\n", f);
    fclose(f);
    const strix_video_segment ok[] = {{1, 2}};
    const strix_video_segment empty[] = {{1, 1}, {3, 3}};
    const strix_video_segment reversed[] = {{1, 2}, {4, 3}};
    const strix_video_segment overlap[] = {{1, 3}, {2, 4}};
    const strix_video_segment unsorted[] = {{5, 6}, {1, 2}};
    const strix_video_segment nan[] = {{NAN, 2}};
    const strix_video_segment past[] = {{20, 30}};
    strix_error err;
    unlink(out);
    if (!expect_error("n = 0", strix_video_cut(g_main.path, out, ok, 0, NULL, NULL, &err), STRIX_E_ARG, &err, out) ||
        !expect_error("segs NULL", strix_video_cut(g_main.path, out, NULL, 1, NULL, NULL, &err), STRIX_E_ARG, &err,
                      out) ||
        !expect_error("all empty", strix_video_cut(g_main.path, out, empty, 2, NULL, NULL, &err), STRIX_E_ARG, &err,
                      out) ||
        !expect_error("start > end", strix_video_cut(g_main.path, out, reversed, 2, NULL, NULL, &err), STRIX_E_ARG,
                      &err, out) ||
        !expect_error("overlapping", strix_video_cut(g_main.path, out, overlap, 2, NULL, NULL, &err), STRIX_E_ARG,
                      &err, out) ||
        !expect_error("unsorted", strix_video_cut(g_main.path, out, unsorted, 2, NULL, NULL, &err), STRIX_E_ARG,
                      &err, out) ||
        !expect_error("NaN", strix_video_cut(g_main.path, out, nan, 1, NULL, NULL, &err), STRIX_E_ARG, &err, out))
        return;
    /* wholly past the end: found out while reading (a file may be left for the caller to delete) */
    if (!expect_error("past the end", strix_video_cut(g_main.path, out, past, 1, NULL, NULL, &err), STRIX_E_ARG, &err,
                      NULL))
        return;
    char missing[192];
    snprintf(missing, sizeof missing, "%s/missing.mp4", g_dir);
    if (!expect_error("missing input", strix_video_cut(missing, out, ok, 1, NULL, NULL, &err), STRIX_E_IO, &err,
                      NULL) ||
        !expect_error("not a video", strix_video_cut(txt, out, ok, 1, NULL, NULL, &err), STRIX_E_IMAGE, &err, NULL) ||
        !expect_error("unwritable output", strix_video_cut(g_main.path, nodir, ok, 1, NULL, NULL, &err), STRIX_E_IO,
                      &err, NULL))
        return;
    /* err may be NULL */
    TL_CHECK(strix_video_cut(g_main.path, out, ok, 0, NULL, NULL, NULL) == STRIX_E_ARG, "n = 0 without err");
}

int main(int argc, char **argv)
{
    tl_init();
    strix_video_log_level(0);
    snprintf(g_dir, sizeof g_dir, "/tmp/strix_cut_XXXXXX");
    if (!mkdtemp(g_dir)) {
        printf("FAIL test_video_cut: cannot make a temporary directory\n");
        return 1;
    }
    TL_RUN(cut_frames_and_sync);
    TL_RUN(cut_ntsc_resampled);
    TL_RUN(cut_many_segments);
    TL_RUN(cut_audio_late_and_short);
    TL_RUN(cut_no_audio);
    TL_RUN(cut_audio_off);
    TL_RUN(cut_rotated);
    TL_RUN(cut_draw_callback);
    TL_RUN(cut_interrupt);
    TL_RUN(cut_bad_args);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (!getenv("STRIX_KEEP_TMP") && system(cmd) != 0)
        fprintf(stderr, "test_video_cut: could not remove %s\n", g_dir);
    TL_MAIN_END();
}
