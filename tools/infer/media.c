/* media.c — the infer job's FFmpeg stages of one video (loaders/video.h):
 * the source (demux, decode, conversion to RGB and/or NV12 on the video's
 * reader thread, into the model's page-locked frame memory with
 * STRIX_CUDA_ASYNC=1) and the annotated-video sink (conversion back, encoder, muxer on
 * its writer thread, through a temporary file published at the end). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    strix_video_read_options ro;
    strix_video_read_options_init(&ro);
    ro.audio = c->audio;
    ro.rgb = c->rgb;
    ro.nv12 = c->nv12;
    ro.nvdec = c->nvdec;
    ro.nvtx = c->nvtx; /* the reader marks its "decode" and "preprocess" (conversion) apart */
    ro.interrupt = c->interrupt;
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

int source_read(source *s, strix_video_frame *vf, strix_error *err)
{
    return strix_video_read(s->rd, vf, err);
}

void source_close(source *s)
{
    strix_video_close(s->rd);
    memset(s, 0, sizeof *s);
}

int video_sink_open(video_sink *s, const video_sink_config *c, const source *src)
{
    memset(s, 0, sizeof *s);
    s->path = c->path;
    s->nvtx = c->nvtx;
    FILE *t = strix_temp_open(c->path, &s->tmp);
    if (!t) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n", c->path,
                strerror(errno));
        return EXIT_OUTPUT;
    }
    fclose(t);
    strix_video_write_options wo;
    strix_video_write_options_init(&wo);
    if (c->codec) wo.codec = c->codec;
    wo.crf = c->crf;
    wo.preset = c->preset;
    wo.audio = c->audio;
    wo.name = c->path;
    wo.notice = c->notice;
    wo.notice_ctx = c->notice_ctx;
    strix_error e;
    strix_status st = strix_video_writer_open(&s->wr, s->tmp, src->rd, &wo, &e);
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
    memset(s, 0, sizeof *s);
}
