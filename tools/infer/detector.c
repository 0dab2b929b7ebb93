/* detector.c — the infer job's detector stage: the model and the detect
 * options of the command line, one object shared by the image run and by
 * every video of the run (tools/infer/pipeline.h calls it with frames of
 * several inputs in one batch): one blocking call, or (STRIX_CUDA_ASYNC=1)
 * the asynchronous API's submit and collect, so the pipeline queues the
 * next batch before it waits for the last, and the videos' frames are the
 * model's page-locked frame memory (STRIX_PINNED). */
#include <string.h>

#include "job.h"
#include "trace.h"

/* --classes (mask) is applied inside NMS, as Ultralytics does. */
void detector_init(detector *d, const options *o, strix_model *model, const char *const *names, int n_names,
                   const unsigned char *mask)
{
    memset(d, 0, sizeof *d);
    d->model = model;
    d->names = names;
    d->n_names = n_names;
    d->mask = mask;
    d->nvtx = o->nvtx;
    d->async = o->async;
    /* the opt-in of the not yet GPU-verified async path (cuda_async) takes
     * this one too: on the CPU the model's frame memory is plain memory, so
     * CPU runs with STRIX_CUDA_ASYNC=1 go through the same code */
    d->pinned = o->async && model;
    strix_detect_options_init(&d->dopt);
    d->dopt.conf = (float)o->conf;
    d->dopt.iou = (float)o->iou;
    d->dopt.max_det = o->max_det;
    d->dopt.imgsz = o->imgsz;
    d->dopt.classes = mask;
}

strix_status detector_run(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err)
{
    const detector *d = ctx;
    stage_push(d->nvtx, "inference");
    strix_status st = d->task != STRIX_TASK_DETECT ? detector_task_run(d, im, n, out, err)
                                                   : strix_model_detect(d->model, im, n, &d->dopt, out, err);
    stage_pop(d->nvtx);
    return st;
}

strix_status detector_submit(void *ctx, const strix_image *im, int n, void **ticket, strix_error *err)
{
    const detector *d = ctx;
    strix_batch *b = NULL;
    stage_push(d->nvtx, "inference submit");
    strix_status st = strix_model_submit(d->model, im, n, &d->dopt, &b, err);
    stage_pop(d->nvtx);
    *ticket = b;
    return st;
}

strix_status detector_collect(void *ctx, void *ticket, strix_detections *out, strix_error *err)
{
    const detector *d = ctx;
    stage_push(d->nvtx, "inference collect");
    strix_status st = strix_batch_collect(ticket, out, err);
    stage_pop(d->nvtx);
    return st;
}

void detector_finish(void *ctx, void *ticket)
{
    (void)ctx;
    strix_batch_release(ticket);
}
