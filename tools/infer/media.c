/* media.c — the infer job's FFmpeg stages of one video (loaders/video.h):
 * the source (demux, decode, conversion to RGB and/or NV12 on the video's
 * reader thread, into the model's page-locked frame memory with
 * STRIX_CUDA_ASYNC=1; a live source reopened after a drop) and the annotated-video sink (conversion back, encoder, muxer on
 * its writer thread, through a temporary file published at the end). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "outfile.h"
#include "trace.h"

/* The reader's pixel allocator over the model's frame memory (any thread). */
static strix_status pinned_alloc(void *ctx, size_t bytes, void **out, strix_error *err)
{
    return strix_model_alloc_pinned(ctx, bytes, out, err);
}

static void pinned_free(void *ctx, void *p) { strix_model_free_pinned(ctx, p); }

int source_open(source *s, const source_config *c)
{
    memset(s, 0, sizeof *s);
    s->c = *c;
    strix_video_read_options ro;
    strix_video_read_options_init(&ro);
    ro.audio = c->audio;
    ro.rgb = c->rgb;
    ro.nv12 = c->nv12;
    ro.nvdec = c->nvdec;
    ro.nvtx = c->nvtx; /* the reader marks its "decode" and "preprocess" (conversion) apart */
    ro.interrupt = c->interrupt;
    ro.stall_timeout = c->stall_timeout;
    ro.rtsp_transport = c->rtsp_transport;
    ro.rows = c->rows;
    ro.rows_ctx = c->rows_ctx;
    if (c->pinned) {
        ro.pixel_alloc = pinned_alloc;
        ro.pixel_free = pinned_free;
        ro.pixel_ctx = c->pinned;
        ro.pixel_memory = STRIX_PINNED;
    }
    strix_error e;
    strix_status st = strix_video_open(&s->rd, c->url, &ro, &e);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return c->interrupt && c->interrupt(NULL) ? EXIT_INTERRUPTED : strix_exit_code(st);
    }
    return 0;
}

/* Now on the wall clock, UTC: "2026-11-29T04:30:01.123Z". */
static void wall_clock(char *buf, size_t n)
{
    struct timespec t;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &t);
    gmtime_r(&t.tv_sec, &tm);
    char day[24];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03ldZ", day, t.tv_nsec / 1000000);
}

/* Sleep ms, in slices so a signal's stop is seen within 50 ms; 1 when stopped. */
static int nap(const source *s, double ms)
{
    for (double t0 = now_ms(); now_ms() - t0 < ms;) {
        if (s->c.interrupt(NULL)) return 1;
        struct timespec d = {0, 50 * 1000000L};
        nanosleep(&d, NULL);
    }
    return s->c.interrupt(NULL);
}

#define RECONNECT_FIRST_MS 500 /* the first reopen's wait: a server restart is often that quick */
#define RECONNECT_MAX_MS 8000  /* the back-off's cap: a source that comes back is seen within 8 s */

/* The input dropped (why): reopen it, waiting RECONNECT_FIRST_MS, then
 * twice as long each time up to RECONNECT_MAX_MS; 1 when it is back (the
 * gap noted), 0 when stopped or the attempts are used up (gave_up). */
static int reconnect(source *s, const char *why, long frames)
{
    source_gap g = {why, "", "", 0, 0};
    wall_clock(g.lost_at, sizeof g.lost_at);
    double t0 = now_ms(), wait = RECONNECT_FIRST_MS;
    char at[48] = "before its first frame";
    if (frames) snprintf(at, sizeof at, "after frame %ld", frames - 1);
    if (!s->c.quiet) fprintf(stderr, "infer: %s: the stream dropped (%s) %s; reconnecting\n", s->c.url, why, at);
    strix_error e;
    e.message[0] = 0;
    for (;;) {
        if (s->c.max_reconnects >= 0 && g.attempts >= s->c.max_reconnects) {
            fprintf(stderr, "infer: %s: gave up after %d reconnect attempt%s (allow more with --max-reconnects, or "
                    "check the source); the outputs keep the %ld frames read%s%s\n", s->c.url, g.attempts,
                    g.attempts == 1 ? "" : "s", frames, e.message[0] ? "; the last attempt: " : "", e.message);
            s->gave_up = 1;
            return 0;
        }
        if (nap(s, wait)) return 0;
        g.attempts++;
        if (!strix_video_reopen(s->rd, &e)) break;
        if (s->c.interrupt(NULL)) return 0;
        wait = wait * 2 < RECONNECT_MAX_MS ? wait * 2 : RECONNECT_MAX_MS;
    }
    wall_clock(g.back_at, sizeof g.back_at);
    g.seconds = (now_ms() - t0) / 1e3;
    s->gap = g;
    s->gap_pending = 1;
    if (!s->c.quiet)
        fprintf(stderr, "infer: %s: reconnected after %.1f s (%d attempt%s); frames go on from %ld\n", s->c.url,
                g.seconds, g.attempts, g.attempts == 1 ? "" : "s", frames);
    return 1;
}

int source_read(source *s, strix_video_frame *vf, strix_error *err)
{
    for (;;) {
        int r = strix_video_read(s->rd, vf, err);
        if (r || !s->c.reconnect) return r;
        strix_video_read_stats rs;
        strix_video_reader_stats(s->rd, &rs);
        if (rs.stopped || s->c.interrupt(NULL)) return 0;
        const char *why = rs.stalled ? "stalled" : rs.read_failed ? "read error" : "end of stream";
        if (!rs.stalled && !rs.read_failed && !s->c.end_drops) return 0;
        if (!reconnect(s, why, rs.frames)) return 0;
    }
}

void source_close(source *s)
{
    strix_video_close(s->rd);
    memset(s, 0, sizeof *s);
}

/* --segment: OUT/NAME.mp4 -> the pattern OUT/NAME-%03d.mp4 (.ts with
 * --segment-format ts; a % of the name doubled) in s->tmp's place, written
 * in place; and s->shown; an exit code */
static int segment_paths(video_sink *s, const video_sink_config *c, char **pattern)
{
    const char *ext = c->ts ? "ts" : "mp4";
    size_t n = strlen(c->path), stem = n > 4 && !strcmp(c->path + n - 4, ".mp4") ? n - 4 : n;
    char *p = malloc(2 * n + 16), *shown = malloc(n + 16);
    if (!p || !shown) {
        free(p);
        free(shown);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < stem; i++) {
        if (c->path[i] == '%') p[k++] = '%';
        p[k++] = c->path[i];
    }
    snprintf(p + k, 2 * n + 16 - k, "-%%03d.%s", ext);
    snprintf(shown, n + 16, "%.*s-NNN.%s", (int)stem, c->path, ext);
    s->shown = shown;
    *pattern = p;
    char first[4096];
    snprintf(first, sizeof first, "%.*s-000.%s", (int)stem, c->path, ext);
    if (!c->overwrite && !access(first, F_OK)) {
        fprintf(stderr, "infer: %s: exists; give --overwrite to replace it, or another --out\n", first);
        return EXIT_OUTPUT;
    }
    return 0;
}

int video_sink_open(video_sink *s, const video_sink_config *c, const source *src)
{
    memset(s, 0, sizeof *s);
    s->path = c->path;
    s->nvtx = c->nvtx;
    char *pattern = NULL;
    if (c->segment > 0) {
        int rc = segment_paths(s, c, &pattern);
        if (rc) {
            free(pattern);
            return rc;
        }
    }
    FILE *t = pattern ? NULL : strix_temp_open(c->path, &s->tmp);
    if (!pattern && !t) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n", c->path,
                strerror(errno));
        return EXIT_OUTPUT;
    }
    if (t) fclose(t);
    strix_video_write_options wo;
    strix_video_write_options_init(&wo);
    if (c->codec) wo.codec = c->codec;
    wo.crf = c->crf;
    wo.preset = c->preset;
    wo.audio = c->audio;
    wo.name = s->shown ? s->shown : c->path;
    wo.segment = c->segment;
    wo.segment_ts = c->ts;
    wo.notice = c->notice;
    wo.notice_ctx = c->notice_ctx;
    strix_error e;
    strix_status st = strix_video_writer_open(&s->wr, pattern ? pattern : s->tmp, src->rd, &wo, &e);
    free(pattern);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return st == STRIX_E_ARG ? EXIT_USAGE : st == STRIX_E_IO ? EXIT_OUTPUT : strix_exit_code(st);
    }
    return 0;
}

strix_status video_sink_frame(video_sink *s, strix_video_frame *vf, strix_error *err)
{
    stage_push(s->nvtx, "encode");
    strix_status st = strix_video_write(s->wr, vf, err);
    stage_pop(s->nvtx);
    return st;
}

int video_sink_finish(video_sink *s, const source *src, int overwrite)
{
    strix_video_frame tail;
    memset(&tail, 0, sizeof tail);
    strix_video_read_tail(src->rd, &tail);
    strix_error e;
    strix_status st = strix_video_write(s->wr, &tail, &e);
    strix_video_frame_free(&tail);
    if (!st) st = strix_video_writer_finish(s->wr, &e);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
    }
    if (!s->tmp) return 0; /* segments: written in place */
    int rc = commit_file(s->tmp, s->path, overwrite);
    s->tmp = NULL;
    return rc;
}

void video_sink_close(video_sink *s)
{
    strix_video_writer_free(s->wr);
    if (s->tmp) {
        unlink(s->tmp);
        free(s->tmp);
    }
    free(s->shown);
    memset(s, 0, sizeof *s);
}
