/* images.c — the infer job's image run, wired from its stages through
 * tools/infer/pipeline.h like the videos (one stream: a reader thread, the
 * detection stage on the calling thread, a writer thread): the image-list
 * source (stills.c) decodes the images in order; the detector (detector.c)
 * takes up to --batch of them per call, images of one size per call; on the
 * writer thread, in the list's order, each image is printed, annotated and
 * written (stills.c) beside its labels and added to the JSON report
 * (writers.c).  An image that cannot be decoded keeps its place: it is
 * reported there, listed under "errors" and skipped.  Then the report is
 * published and the summary printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "pipeline.h"
#include "tasks.h"
#include "worker.h"

/* "3 detections: 2 person, 1 dog" (the first few classes by best score);
 * classify: its top-1 class and probability */
static void describe(const run *r, const strix_pipe_frame *f, char *buf, size_t cap)
{
    enum { MAX_CLASSES = 6 };
    const strix_detection *d = f->dets;
    int n = f->n_dets;
    const task_frame *t = f->task;
    if (t && t->task == STRIX_TASK_CLASSIFY) { /* "top-1: dog 0.87" */
        int top;
        if (strix_topk_probs(t->probs, t->nc, 1, &top) == 1)
            snprintf(buf, cap, "top-1: %s %.2f", name_of(r->sink.c.names, r->sink.c.n_names, top),
                     (double)t->probs[top]);
        else
            snprintf(buf, cap, "no classes");
        return;
    }
    size_t at = (size_t)snprintf(buf, cap, "%d detection%s", n, n == 1 ? "" : "s");
    int listed = 0;
    for (int i = 0; i < n && at < cap; i++) {
        int c = d[i].class_id, seen = 0, count = 0;
        for (int k = 0; k < i; k++) seen |= d[k].class_id == c;
        if (seen) continue;
        if (listed++ == MAX_CLASSES) {
            snprintf(buf + at, cap - at, ", ...");
            break;
        }
        for (int k = i; k < n; k++) count += d[k].class_id == c;
        at += (size_t)snprintf(buf + at, cap - at, "%s%d %s", i ? ", " : ": ", count,
                               name_of(r->sink.c.names, r->sink.c.n_names, c));
    }
}

/* The reader thread's stage: the next image, or a placeholder (skip) for
 * one that could not be decoded, so its failure is reported in its place. */
static int image_read(void *ctx, strix_pipe_frame *f, strix_error *err)
{
    run *r = ctx;
    still *s = f->user;
    if (!s && !(s = f->user = calloc(1, sizeof *s))) {
        set_error(err, STRIX_E_NOMEM, "out of memory");
        return -1;
    }
    int got = still_source_read(&r->src, s);
    if (got < 0) {
        f->skip = 1;
        return 1;
    }
    if (got) {
        f->rgb = s->img.data;
        f->width = s->img.width;
        f->height = s->img.height;
        f->stride = 3 * s->img.width;
    }
    return got;
}

/* A failure that stops the run, already printed: -1 with err for the pipeline. */
static int stop_run(run *r, int rc, strix_status st, strix_error *err)
{
    r->fail_rc = rc;
    set_error(err, st, "image run stopped");
    return -1;
}

/* The writer thread's stage, images in the list's order: a failed one is
 * reported; a decoded one printed, annotated and written, its labels
 * written, its detections added to the report.  Its pixels are freed, so a
 * slot waiting for the next image holds none. */
static int image_write(void *ctx, strix_pipe_frame *f, strix_error *err)
{
    run *r = ctx;
    const options *o = r->o;
    still *s = f->user;
    int rc = 0;
    if (f->skip) {
        fprintf(stderr, "infer: %s\n", s->err.message);
        if (!r->first_fail) r->first_fail = strix_exit_code(s->err.status);
        rc = report_failure(&r->rep, s->name, s->err.message);
        if (!rc && s->err.status == STRIX_E_NOMEM) rc = EXIT_NOMEM;
        return rc ? stop_run(r, rc, STRIX_E_NOMEM, err) : 0;
    }
    const plan_entry *p = &r->plan[f->index];
    r->images++;
    r->detections += f->n_dets;
    if (!o->quiet) {
        char what[512];
        describe(r, f, what, sizeof what);
        printf("%ld/%ld %s: %dx%d, %s, %.1f ms\n", f->index + 1, r->total, s->name, f->width, f->height, what,
               f->detect_ms);
    }
    if (p->image_out) {
        strix_error e;
        strix_status st = still_sink_write(&r->sink, p->image_out, s, f->dets, f->n_dets, f->task, &e);
        if (st) {
            fprintf(stderr, "infer: %s\n", e.message);
            still_free(s);
            return stop_run(r, st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT, st, err);
        }
    }
    double t0 = now_ms();
    if (p->label_out) rc = write_labels(o, f->width, f->height, f->dets, f->n_dets, f->task, p->label_out);
    if (!rc) {
        strix_detections d = {f->n_dets, f->dets};
        report_image(&r->rep, s->name, f->width, f->height, &d, f->task);
    }
    r->t_write += now_ms() - t0;
    still_free(s);
    return rc ? stop_run(r, rc, STRIX_E_IO, err) : 0;
}

/* A signal: finish the batch being detected, drop the images read after it. */
static int image_stop(void *ctx)
{
    (void)ctx;
    return g_stop != 0;
}

static void image_release(void *ctx, void *user)
{
    (void)ctx;
    still_free(user);
    free(user);
}

int run_images(const options *o, const strlist *images, const plan_entry *plan, const detector *det,
               const char *json_path, double t_start)
{
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.plan = plan;
    r.total = images->n;
    report_config rc_cfg = {o, json_path, det->names, det->n_names};
    int rc = report_open(&r.rep, &rc_cfg);
    if (rc) {
        report_close(&r.rep);
        return rc;
    }
    still_source_config sc = {images, stop_requested, NULL};
    still_source_open(&r.src, &sc);
    still_sink_config kc = {det->names, det->n_names, o->overwrite};
    still_sink_init(&r.sink, &kc);

    strix_pipe_stream stream = {1, 0, &r, image_read, image_write, image_release};
    strix_pipe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = o->batch;
    cfg.max_det = o->max_det;
    cfg.streams = &stream;
    cfg.n_streams = 1;
    cfg.ctx = (void *)det;
    if (det->async) {
        cfg.submit = detector_submit;
        cfg.collect = detector_collect;
        cfg.finish = detector_finish;
    } else {
        cfg.detect = detector_run;
    }
    if (det->task != STRIX_TASK_DETECT) {
        cfg.take = task_take;
        cfg.task_free = task_frame_free;
    }
    cfg.format = STRIX_RGB;
    cfg.stop = image_stop;
    strix_pipe_stats ps;
    strix_error e;
    if (strix_pipe_run(&cfg, &ps, &e)) {
        rc = r.fail_rc; /* a sink's failure, printed there */
        if (!rc) {
            fprintf(stderr, "infer: %s\n", e.message);
            rc = strix_exit_code(e.status);
        }
    }
    if (!rc) rc = report_finish(&r.rep);

    double t_decode = ps.read_ms, t_detect = ps.detect_ms, t_annotate = r.sink.annotate_ms,
           t_write = r.sink.write_ms + r.t_write;
    int failed = r.rep.err_names.n;
    if (!o->quiet || rc || r.first_fail || g_stop) {
        FILE *s = rc || r.first_fail || g_stop ? stderr : stdout;
        fprintf(s, "infer: %ld image%s, %ld detection%s in %.2f s (decode %.0f ms, detect %.0f ms, "
                "annotate %.0f ms, write %.0f ms)",
                r.images, r.images == 1 ? "" : "s", r.detections, r.detections == 1 ? "" : "s",
                (now_ms() - t_start) / 1e3, t_decode, t_detect, t_annotate, t_write);
        if (failed) fprintf(s, "; %d image%s failed", failed, failed == 1 ? "" : "s");
        if (g_stop) fprintf(s, "; interrupted after %ld of %d", r.images + failed, images->n);
        if (!rc) fprintf(s, "; results in %s", o->save || o->txt ? o->out : json_path);
        fputc('\n', s);
    }
    metrics_frames(o->metrics, r.images, failed);
    metrics_stage(o->metrics, STAGE_DECODE, t_decode);
    metrics_stage(o->metrics, STAGE_DETECT, t_detect);
    metrics_stage(o->metrics, STAGE_ANNOTATE, t_annotate);
    metrics_stage(o->metrics, STAGE_WRITE, t_write);
    if (!rc && g_stop) rc = EXIT_INTERRUPTED;
    if (!rc) rc = r.first_fail;
    report_close(&r.rep);
    return rc;
}
