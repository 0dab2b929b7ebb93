/* images.c — the infer job's image run: the images are read one by one
 * (stb, loaders/image.h), detected --batch at a time, annotated and written
 * beside their labels, each added to the JSON report (writers.c); images
 * that cannot be decoded are reported, listed under "errors", and skipped.
 * Image frames come from a frame_source (one image per file), processed in
 * batches of --batch frames per strix_model_detect call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "image.h"
#include "job.h"
#include "worker.h"

/* Frames one after another: next() returns 1 with a frame, 0 at the end,
 * -1 when this frame could not be read (err says why; the source has moved
 * on, so the caller may continue). */
typedef struct frame_source {
    int (*next)(struct frame_source *s, frame *f, strix_error *err);
    void *state;
} frame_source;

typedef struct image_list {
    const strlist *paths;
    int pos;
} image_list;

static int image_list_next(frame_source *s, frame *f, strix_error *err)
{
    image_list *l = s->state;
    if (l->pos >= l->paths->n) return 0;
    f->index = l->pos;
    f->name = l->paths->v[l->pos++];
    return strix_image_load(f->name, 0, &f->img, err) == STRIX_OK ? 1 : -1;
}

static const char *class_name(const run *r, int id) { return name_of(r->names, r->n_names, id); }

/* "3 detections: 2 person, 1 dog" (the first few classes by best score) */
static void describe(const run *r, const strix_detections *d, char *buf, size_t cap)
{
    enum { MAX_CLASSES = 6 };
    size_t n = (size_t)snprintf(buf, cap, "%d detection%s", d->count, d->count == 1 ? "" : "s");
    int listed = 0;
    for (int i = 0; i < d->count && n < cap; i++) {
        int c = d->items[i].class_id, seen = 0, count = 0;
        for (int k = 0; k < i; k++) seen |= d->items[k].class_id == c;
        if (seen) continue;
        if (listed++ == MAX_CLASSES) {
            snprintf(buf + n, cap - n, ", ...");
            break;
        }
        for (int k = i; k < d->count; k++) count += d->items[k].class_id == c;
        n += (size_t)snprintf(buf + n, cap - n, "%s%d %s", i ? ", " : ": ", count, class_name(r, c));
    }
}

/* Returns 0, or EXIT_NOMEM when even the bookkeeping fails. */
static int record_failure(run *r, const char *name, const strix_error *e)
{
    fprintf(stderr, "infer: %s\n", e->message);
    if (!r->first_fail) r->first_fail = strix_exit_code(e->status);
    if (!list_add(&r->err_names, name)) return EXIT_NOMEM;
    if (!list_add(&r->err_msgs, e->message)) {
        free(r->err_names.v[--r->err_names.n]);
        return EXIT_NOMEM;
    }
    return 0;
}

/* Detect, annotate and write one batch; returns 0 or a fatal exit code. */
static int process_batch(run *r, frame *fr, int n, long total, strix_image *im, strix_detections *dets)
{
    const options *o = r->o;
    for (int i = 0; i < n; i++) im[i] = strix_image_view(&fr[i].img);
    strix_error e;
    double t0 = now_ms();
    strix_status st = detector_run((void *)r->det, im, n, dets, &e);
    double per = (now_ms() - t0) / n;
    r->t_detect += now_ms() - t0;
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
    }
    for (int i = 0; i < n; i++) {
        const frame *f = &fr[i];
        const plan_entry *p = &r->plan[f->index];
        r->images++;
        r->detections += dets[i].count;
        if (!o->quiet) {
            char what[512];
            describe(r, &dets[i], what, sizeof what);
            printf("%ld/%ld %s: %dx%d, %s, %.1f ms\n", f->index + 1, total, f->name, f->img.width,
                   f->img.height, what, per);
        }
        if (p->image_out) {
            double t1 = now_ms();
            strix_annotate_style style;
            strix_annotate_style_init(&style);
            strix_annotate(f->img.data, f->img.width, f->img.height, 0, dets[i].items, dets[i].count,
                           r->names, r->n_names, &style);
            double t2 = now_ms();
            st = strix_image_write(p->image_out, f->img.data, f->img.width, f->img.height, 0, 0,
                                   o->overwrite, &e);
            r->t_annotate += t2 - t1;
            r->t_write += now_ms() - t2;
            if (st) {
                fprintf(stderr, "infer: %s\n", e.message);
                return st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
            }
        }
        double t3 = now_ms();
        if (p->label_out) {
            int rc = write_labels(o, f->img.width, f->img.height, dets[i].items, dets[i].count, p->label_out);
            if (rc) return rc;
        }
        json_image(r, f, &dets[i]);
        r->t_write += now_ms() - t3;
    }
    return 0;
}

/* Decode frames in batches and process them until the source ends, a
 * signal asks us to stop, or a fatal error; returns 0 or a fatal exit code. */
static int process_all(run *r, frame_source *src, long total)
{
    int b = r->o->batch;
    frame *fr = calloc((size_t)b, sizeof *fr);
    strix_image *im = calloc((size_t)b, sizeof *im);
    strix_detections *dets = calloc((size_t)b, sizeof *dets);
    if (!fr || !im || !dets) {
        free(fr);
        free(im);
        free(dets);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    int rc = 0, done = 0;
    while (!done && !rc && !g_stop) {
        int n = 0;
        while (n < b && !g_stop) {
            strix_error e;
            double t0 = now_ms();
            int got = src->next(src, &fr[n], &e);
            r->t_decode += now_ms() - t0;
            if (got == 0) {
                done = 1;
                break;
            }
            if (got < 0) {
                rc = record_failure(r, fr[n].name, &e);
                if (!rc && e.status == STRIX_E_NOMEM) rc = EXIT_NOMEM;
                if (rc) break;
                continue;
            }
            n++;
        }
        if (n && !rc) rc = process_batch(r, fr, n, total, im, dets);
        for (int i = 0; i < n; i++) strix_image_free(&fr[i].img);
    }
    free(fr);
    free(im);
    free(dets);
    return rc;
}

/* The run's images, --batch at a time: detect, annotate and write each,
 * then the JSON report and the summary line; an exit code (EXIT_IMAGE when
 * some images could not be decoded and the others were done).  t_start:
 * when the run began, for the summary. */
int run_images(const options *o, const strlist *images, const plan_entry *plan, const detector *det,
               const char *json_path, double t_start)
{
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.plan = plan;
    r.det = det;
    r.names = det->names;
    r.n_names = det->n_names;
    int rc = start_json(&r, json_path);
    if (rc) return rc;

    image_list il = {images, 0};
    frame_source src = {image_list_next, &il};
    rc = process_all(&r, &src, images->n);
    if (!rc) rc = finish_json(&r, json_path);

    if (!o->quiet || rc || r.first_fail || g_stop) {
        FILE *s = rc || r.first_fail || g_stop ? stderr : stdout;
        fprintf(s, "infer: %ld image%s, %ld detection%s in %.2f s (decode %.0f ms, detect %.0f ms, "
                "annotate %.0f ms, write %.0f ms)",
                r.images, r.images == 1 ? "" : "s", r.detections, r.detections == 1 ? "" : "s",
                (now_ms() - t_start) / 1e3, r.t_decode, r.t_detect, r.t_annotate, r.t_write);
        int failed = r.err_names.n;
        if (failed) fprintf(s, "; %d image%s failed", failed, failed == 1 ? "" : "s");
        if (g_stop) fprintf(s, "; interrupted after %ld of %d", r.images + failed, images->n);
        if (!rc) fprintf(s, "; results in %s", o->save || o->txt ? o->out : json_path);
        fputc('\n', s);
    }
    metrics_frames(o->metrics, r.images, r.err_names.n);
    metrics_stage(o->metrics, STAGE_DECODE, r.t_decode);
    metrics_stage(o->metrics, STAGE_DETECT, r.t_detect);
    metrics_stage(o->metrics, STAGE_ANNOTATE, r.t_annotate);
    metrics_stage(o->metrics, STAGE_WRITE, r.t_write);
    if (!rc && g_stop) rc = EXIT_INTERRUPTED;
    if (!rc) rc = r.first_fail;
    if (r.json) abandon_temp(r.json, r.json_tmp);
    list_free(&r.err_names);
    list_free(&r.err_msgs);
    return rc;
}
