/* taskframe.c — what a segment, pose, obb or classify model gives beside
 * the boxes, and the detections' ReID features with the tracker's
 * with_reid, per frame (task_frame, job.h): taken on the detection thread
 * right after each detect call (the model's task values are valid only
 * until the next one), then written (JSON, JSON Lines, txt labels) and
 * drawn on the writer thread.  Classify has no boxes: its detect call is
 * strix_model_classify (Ultralytics' ClassificationPredictor). */
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "job.h"
#include "pipeline.h"
#include "task_writers.h"
#include "tasks.h"
#include "util.h"

/* The detection thread's buffers (detector.scratch). */
struct task_scratch {
    float *protos;   /* the batch's protos [n, ph, pw, nm] (NHWC) */
    size_t protos_cap;
    int ph, pw;
    float *chw;      /* one image's protos [nm, ph, pw] */
    float *boxes;    /* [n, 4] the boxes the masks are cropped to */
    float *coeffs;   /* [n, nm] their mask coefficients */
    uint8_t *keep;   /* [n] nonempty masks */
    size_t chw_cap, boxes_cap, coeffs_cap, keep_cap;
    float *probs;    /* classify: [n, nc] */
    size_t probs_cap;
};

/* Grow *p to hold n elements of size bytes; 0 when out of memory. */
static int grow(void *pp, size_t *cap, size_t n, size_t size)
{
    void **p = pp;
    if (n <= *cap && *p) return 1;
    void *q = realloc(*p, (n ? n : 1) * size);
    if (!q) return 0;
    *p = q;
    *cap = n;
    return 1;
}

void task_frame_free(void *ctx, void *task)
{
    (void)ctx;
    task_frame *t = task;
    free(t->values);
    free(t->corners);
    free(t->masks);
    free(t->xy);
    free(t->poly_at);
    free(t->probs);
    free(t->feats);
    free(t->rec);
    free(t->rec_xywhr);
    free(t);
}

void detector_free(detector *d)
{
    struct task_scratch *s = d->scratch;
    if (!s) return;
    free(s->protos);
    free(s->chw);
    free(s->boxes);
    free(s->coeffs);
    free(s->keep);
    free(s->probs);
    free(s);
    d->scratch = NULL;
}

int detector_task_init(detector *d, int retina)
{
    d->task = d->model ? strix_model_task(d->model) : STRIX_TASK_DETECT;
    d->retina = retina;
    if (d->model) strix_model_kpt_shape(d->model, &d->kpt_n, &d->kpt_dims);
    if (d->task == STRIX_TASK_DETECT) return 0;
    d->async = d->pinned = 0; /* strix_model_submit runs detect models only */
    return (d->scratch = calloc(1, sizeof *d->scratch)) ? 0 : EXIT_NOMEM;
}

static strix_status classify_run(const detector *d, const strix_image *im, int n, strix_detections *out,
                                 strix_error *err)
{
    struct task_scratch *s = d->scratch;
    int nc = strix_model_class_count(d->model);
    if (!grow(&s->probs, &s->probs_cap, (size_t)nc * n, sizeof *s->probs))
        return strix_fail(err, STRIX_E_NOMEM, "classify: out of memory for %d images' probabilities", n);
    for (int i = 0; i < n; i++) {
        if (im[i].format != STRIX_RGB || im[i].memory == STRIX_DEVICE)
            return strix_fail(err, STRIX_E_ARG, "classify: its preprocessing reads RGB frames in host memory; "
                              "drop --nv12 and --decode nvdec");
        out[i].count = 0;
        out[i].items = NULL;
    }
    return strix_model_classify(d->model, im, n, d->dopt.imgsz, s->probs, err);
}

strix_status detector_task_run(const detector *d, const strix_image *im, int n, strix_detections *out,
                               strix_error *err)
{
    if (d->task == STRIX_TASK_CLASSIFY) return classify_run(d, im, n, out, err);
    strix_status st = strix_model_detect(d->model, im, n, &d->dopt, out, err);
    if (st || d->task != STRIX_TASK_SEGMENT) return st;
    struct task_scratch *s = d->scratch;
    int nm = strix_model_task_channels(d->model);
    /* the batch's protos, read back once for all its images */
    st = strix_model_protos(d->model, s->protos, s->protos_cap, &s->ph, &s->pw, err);
    size_t need = (size_t)n * s->ph * s->pw * nm;
    if (st == STRIX_E_ARG && need > s->protos_cap) {
        if (!grow(&s->protos, &s->protos_cap, need, sizeof *s->protos))
            return strix_fail(err, STRIX_E_NOMEM, "segment: out of memory for the protos");
        st = strix_model_protos(d->model, s->protos, s->protos_cap, &s->ph, &s->pw, err);
    }
    return st;
}

/* ---- per frame, on the detection thread ---- */

static int copy_floats(float **dst, size_t *cap, const float *src, size_t n)
{
    if (!grow(dst, cap, n, sizeof **dst)) return 0;
    if (n) memcpy(*dst, src, n * sizeof *src);
    return 1;
}

static int task_copy(task_frame *t, const task_frame *f)
{
    t->task = f->task;
    t->n = f->n;
    t->stride = f->stride;
    t->kd = f->kd;
    t->names = f->names;
    t->n_names = f->n_names;
    t->mh = f->mh;
    t->mw = f->mw;
    t->nc = f->nc;
    t->feat_dim = f->feat_dim;
    t->n_rec = -1; /* a repeated frame does not update the tracker */
    int seg = f->task == STRIX_TASK_SEGMENT;
    size_t masks = (size_t)f->n * f->mh * f->mw, pts = seg ? (size_t)f->poly_at[f->n] : 0;
    int ok = copy_floats(&t->values, &t->values_cap, f->values, (size_t)f->n * f->stride) &&
             copy_floats(&t->corners, &t->corners_cap, f->corners, f->task == STRIX_TASK_OBB ? (size_t)f->n * 8 : 0) &&
             copy_floats(&t->xy, &t->xy_cap, f->xy, 2 * pts) &&
             copy_floats(&t->probs, &t->probs_cap, f->probs, f->task == STRIX_TASK_CLASSIFY ? (size_t)f->nc : 0) &&
             copy_floats(&t->feats, &t->feats_cap, f->feats, (size_t)f->n * f->feat_dim) &&
             grow(&t->masks, &t->masks_cap, masks, 1) && grow(&t->poly_at, &t->poly_cap, (size_t)f->n + 1, sizeof(int));
    if (!ok) return 0;
    if (masks) memcpy(t->masks, f->masks, masks);
    if (seg) memcpy(t->poly_at, f->poly_at, sizeof(int) * ((size_t)f->n + 1));
    else t->poly_at[0] = 0;
    return 1;
}

/* Segment: the masks of f's detections (process_mask, or process_mask_native
 * with --retina-masks), the detections whose mask is empty dropped as
 * Ultralytics drops them, and each kept mask's polygon (Results.masks.xy).
 * t->values [n, 4 + nm]: strix_model_task_values' box (input pixels, not
 * clipped) and coefficients. */
static strix_status take_masks(const detector *d, int image, strix_pipe_frame *f, task_frame *t, strix_error *err)
{
    struct task_scratch *s = d->scratch;
    int nm = t->stride - 4, n = f->n_dets, in_h = 4 * s->ph, in_w = 4 * s->pw;
    int mh = d->retina ? f->height : in_h, mw = d->retina ? f->width : in_w;
    size_t hw = (size_t)s->ph * s->pw;
    if (!grow(&s->chw, &s->chw_cap, hw * nm, sizeof *s->chw) ||
        !grow(&s->boxes, &s->boxes_cap, (size_t)n + 1, 4 * sizeof *s->boxes) ||
        !grow(&s->coeffs, &s->coeffs_cap, (size_t)n * nm + 1, sizeof *s->coeffs) ||
        !grow(&s->keep, &s->keep_cap, (size_t)n + 1, 1) || !grow(&t->masks, &t->masks_cap, (size_t)n * mh * mw, 1) ||
        !grow(&t->poly_at, &t->poly_cap, (size_t)n + 1, sizeof(int)))
        return strix_fail(err, STRIX_E_NOMEM, "segment: out of memory for %d masks of %dx%d", n, mw, mh);
    const float *p = s->protos + hw * nm * image;
    for (size_t k = 0; k < hw; k++) /* NHWC -> NCHW */
        for (int c = 0; c < nm; c++) s->chw[(size_t)c * hw + k] = p[k * nm + c];
    /* the crop boxes: process_mask's in the input's pixels, before scale_boxes clips them; process_mask_native's
     * the detections' own (scale_boxes', clipped: the same source pixels) */
    for (int i = 0; i < n; i++) {
        const strix_detection *b = &f->dets[i];
        const float *v = t->values + (size_t)i * t->stride;
        float *o = s->boxes + 4 * i;
        if (d->retina) o[0] = b->x1, o[1] = b->y1, o[2] = b->x2, o[3] = b->y2;
        else memcpy(o, v, 4 * sizeof *o);
        memcpy(s->coeffs + (size_t)i * nm, v + 4, sizeof *s->coeffs * (size_t)nm);
    }
    strix_status st = d->retina ? strix_process_mask_native(s->chw, nm, s->ph, s->pw, s->coeffs, s->boxes, n, mh,
                                                            mw, t->masks, s->keep, err)
                                : strix_process_mask(s->chw, nm, s->ph, s->pw, s->coeffs, s->boxes, n, in_h, in_w,
                                                     t->masks, s->keep, err);
    if (st) return st;
    size_t area = (size_t)mh * mw;
    int k = 0;
    t->poly_at[0] = 0;
    strix_polygon poly = {0};
    for (int i = 0; i < n && !st; i++) {
        if (!s->keep[i]) continue;
        f->dets[k] = f->dets[i];
        if (k != i) {
            memmove(t->masks + area * k, t->masks + area * i, area);
            memmove(t->values + (size_t)k * t->stride, t->values + (size_t)i * t->stride,
                    sizeof *t->values * (size_t)t->stride);
        }
        st = strix_mask_segment(t->masks + area * k, mh, mw, STRIX_SEGMENT_ALL, &poly, err);
        if (st) break;
        strix_scale_coords(poly.xy, poly.n, 2, mw, mh, f->width, f->height, 0);
        size_t at = (size_t)t->poly_at[k];
        if (!grow(&t->xy, &t->xy_cap, 2 * (at + poly.n), sizeof *t->xy)) {
            st = strix_fail(err, STRIX_E_NOMEM, "segment: out of memory for a polygon");
            break;
        }
        if (poly.n) memcpy(t->xy + 2 * at, poly.xy, sizeof *poly.xy * 2 * (size_t)poly.n);
        t->poly_at[++k] = (int)(at + poly.n);
    }
    strix_polygon_free(&poly);
    f->n_dets = t->n = k;
    t->mh = mh;
    t->mw = mw;
    return st;
}

int task_take(void *ctx, int image, strix_pipe_frame *f, const strix_pipe_frame *from, strix_error *err)
{
    const detector *d = ctx;
    task_frame *t = f->task;
    if (!t && !(t = f->task = calloc(1, sizeof *t))) {
        strix_fail(err, STRIX_E_NOMEM, "out of memory for a frame's task outputs");
        return -1;
    }
    if (image < 0) {
        if (from && from->task) {
            if (task_copy(t, from->task)) return 0;
            strix_fail(err, STRIX_E_NOMEM, "out of memory copying a frame's task outputs");
            return -1;
        }
        t->task = d->task;
        t->n = t->mh = t->mw = t->nc = t->feat_dim = 0;
        t->n_rec = -1;
        return 0;
    }
    t->task = d->task;
    t->n = f->n_dets;
    t->kd = d->kpt_dims;
    t->names = d->names;
    t->n_names = d->n_names;
    t->mh = t->mw = t->nc = t->feat_dim = 0;
    t->n_rec = -1;
    if (d->recovered) {
        strix_detections r;
        strix_task_values rv;
        const int obb = d->task == STRIX_TASK_OBB;
        if (strix_model_recovered(d->model, image, &r, &rv, err)) return -1;
        if (!grow(&t->rec, &t->rec_cap, (size_t)r.count, sizeof *t->rec) ||
            !copy_floats(&t->rec_xywhr, &t->rec_xywhr_cap, rv.values, obb ? (size_t)r.count * 5 : 0)) {
            strix_fail(err, STRIX_E_NOMEM, "out of memory for a frame's recovered detections");
            return -1;
        }
        if (r.count) memcpy(t->rec, r.items, sizeof *t->rec * (size_t)r.count);
        t->n_rec = r.count;
        if (d->task == STRIX_TASK_DETECT && !d->reid) return 0;
    }
    if (d->reid) {
        strix_task_values fv;
        if (strix_model_features(d->model, image, &fv, err)) return -1;
        if (!copy_floats(&t->feats, &t->feats_cap, fv.values, (size_t)fv.count * fv.stride)) {
            strix_fail(err, STRIX_E_NOMEM, "out of memory for a frame's ReID features");
            return -1;
        }
        t->feat_dim = fv.stride;
        if (d->task == STRIX_TASK_DETECT) return 0;
    }
    if (d->task == STRIX_TASK_CLASSIFY) {
        t->nc = strix_model_class_count(d->model);
        if (copy_floats(&t->probs, &t->probs_cap, d->scratch->probs + (size_t)image * t->nc, (size_t)t->nc)) return 0;
        strix_fail(err, STRIX_E_NOMEM, "out of memory for the probabilities");
        return -1;
    }
    strix_task_values tv;
    if (strix_model_task_values(d->model, image, &tv, err)) return -1;
    if (tv.count < t->n) t->n = f->n_dets = tv.count;
    t->stride = tv.stride;
    if (!copy_floats(&t->values, &t->values_cap, tv.values, (size_t)t->n * tv.stride) ||
        (d->task == STRIX_TASK_OBB && !grow(&t->corners, &t->corners_cap, (size_t)t->n * 8 + 1, sizeof *t->corners))) {
        strix_fail(err, STRIX_E_NOMEM, "out of memory for a frame's task outputs");
        return -1;
    }
    if (d->task == STRIX_TASK_OBB) strix_xywhr_corners(t->values, t->n, t->corners);
    if (d->task == STRIX_TASK_SEGMENT && take_masks(d, image, f, t, err)) return -1;
    return 0;
}

/* ---- from the JSON Lines: a --detections replay, a reel ---- */

int task_from_record(task_frame *t, const strix_jsonl_record *rec, const int *sel, int n, int retrack, int w, int h,
                     int masks, const char *const *names, int n_names)
{
    t->task = rec->task;
    t->n = n;
    t->names = names;
    t->n_names = n_names;
    t->mh = t->mw = t->nc = t->stride = t->kd = t->feat_dim = 0;
    t->n_rec = -1; /* a replay carries no ReID features and no recovered detections */
    t->raw_corners = NULL;
    if (!grow(&t->poly_at, &t->poly_cap, (size_t)n + 1, sizeof(int))) return EXIT_NOMEM;
    t->poly_at[0] = 0;
    if (rec->task == STRIX_TASK_CLASSIFY) { /* the top-5 in a probability vector, the other classes 0 */
        t->nc = n_names;
        for (int k = 0; k < rec->n_probs; k++)
            if (rec->prob_class[k] >= t->nc) t->nc = rec->prob_class[k] + 1;
        if (!grow(&t->probs, &t->probs_cap, (size_t)t->nc, sizeof *t->probs)) return EXIT_NOMEM;
        memset(t->probs, 0, sizeof *t->probs * (size_t)t->nc);
        for (int k = 0; k < rec->n_probs; k++) t->probs[rec->prob_class[k]] = rec->prob_conf[k];
        return 0;
    }
    if (rec->task == STRIX_TASK_POSE) {
        t->kd = rec->kd;
        t->stride = rec->nk * rec->kd;
        if (!grow(&t->values, &t->values_cap, (size_t)n * t->stride, sizeof *t->values)) return EXIT_NOMEM;
        for (int i = 0; i < n; i++)
            memcpy(t->values + (size_t)i * t->stride, rec->kpts + (size_t)(sel ? sel[i] : i) * t->stride,
                   sizeof *t->values * (size_t)t->stride);
    } else if (rec->task == STRIX_TASK_OBB) {
        /* corners [n, 4, 2] then, in the same buffer, the detections' own [n, 4, 2] (raw_corners); re-tracking
         * starts from the detections' own, as the live run's tracker did */
        t->stride = 5;
        if (!grow(&t->corners, &t->corners_cap, (size_t)n * 16 + 1, sizeof *t->corners) ||
            !grow(&t->values, &t->values_cap, (size_t)n * 5 + 1, sizeof *t->values))
            return EXIT_NOMEM;
        for (int i = 0; i < n; i++) {
            size_t j = (size_t)(sel ? sel[i] : i);
            memcpy(t->corners + 8 * (size_t)i, (retrack ? rec->raw_obb : rec->obb) + 8 * j, 8 * sizeof(float));
            memcpy(t->corners + 8 * ((size_t)n + i), rec->raw_obb + 8 * j, 8 * sizeof(float));
        }
        strix_corners_xywhr(t->corners, n, t->values);
        if (!retrack) t->raw_corners = t->corners + 8 * (size_t)n;
    } else if (rec->task == STRIX_TASK_SEGMENT) {
        /* the polygon (Results.masks.xy: the mask's outer contours, merge_multi_segment joining them by
         * there-and-back bridges, which the even-odd fill cancels) filled at the frame's size: the mask the live
         * run drew less its holes, which the polygon does not hold */
        size_t area = (size_t)w * h, pts = 0, most = 1;
        for (int i = 0; i < n; i++) {
            int j = sel ? sel[i] : i, k = rec->seg_at[j + 1] - rec->seg_at[j];
            pts += (size_t)k;
            most = (size_t)k > most ? (size_t)k : most;
            t->poly_at[i + 1] = (int)pts;
        }
        float *xs = masks ? malloc(sizeof *xs * most) : NULL;
        if ((masks && !xs) || !grow(&t->xy, &t->xy_cap, 2 * pts + 1, sizeof *t->xy) ||
            (masks && !grow(&t->masks, &t->masks_cap, area * (size_t)n + 1, 1))) {
            free(xs);
            return EXIT_NOMEM;
        }
        for (int i = 0; i < n; i++) {
            int j = sel ? sel[i] : i, k = rec->seg_at[j + 1] - rec->seg_at[j];
            float *xy = t->xy + 2 * (size_t)t->poly_at[i];
            memcpy(xy, rec->seg_xy + 2 * (size_t)rec->seg_at[j], sizeof *xy * 2 * (size_t)k);
            if (masks) strix_polygon_fill(xy, k, xs, t->masks + area * i, h, w);
        }
        free(xs);
        t->mh = masks ? h : 0;
        t->mw = masks ? w : 0;
    }
    return 0;
}

/* TrackTrack's recovered detections from a record's recovered rows: their own boxes (an obb's xywhr from its
 * own corners), as strix_model_recovered gives them. */
int task_recovered_rows(task_frame *t, const strix_jsonl_record *rec, const int *sel, int n)
{
    int obb = rec->task == STRIX_TASK_OBB;
    if (!grow(&t->rec, &t->rec_cap, (size_t)n + 1, sizeof *t->rec) ||
        !grow(&t->rec_xywhr, &t->rec_xywhr_cap, obb ? (size_t)n * 5 + 1 : 1, sizeof *t->rec_xywhr))
        return EXIT_NOMEM;
    for (int i = 0; i < n; i++) {
        t->rec[i] = rec->raw[sel[i]];
        if (obb) strix_corners_xywhr(rec->raw_obb + 8 * (size_t)sel[i], 1, t->rec_xywhr + 5 * (size_t)i);
    }
    t->n_rec = n;
    return 0;
}

/* ---- writing and drawing, on the writer thread ---- */

/* The task field of detection i of a "detections" array (none for detect
 * and classify). */
void task_json(FILE *j, const task_frame *t, int i)
{
    if (!t || i >= t->n) return;
    if (t->task == STRIX_TASK_SEGMENT) {
        fputs(", ", j);
        strix_json_segments(j, t->xy + 2 * (size_t)t->poly_at[i], t->poly_at[i + 1] - t->poly_at[i]);
    } else if (t->task == STRIX_TASK_POSE) {
        fputs(", ", j);
        strix_json_keypoints(j, t->values + (size_t)i * t->stride, t->stride / t->kd, t->kd);
    } else if (t->task == STRIX_TASK_OBB) {
        fputs(", ", j);
        strix_json_obb(j, t->corners + 8 * (size_t)i);
    }
}

/* A tracked obb detection's own rotated box (its "obb" is the tracker's). */
void task_json_detection(FILE *j, const task_frame *t, int i)
{
    if (!t || i >= t->n || !t->raw_corners) return;
    fputs(", ", j);
    strix_json_detection_obb(j, t->raw_corners + 8 * (size_t)i);
}

/* Classify: ", \"probs\": [top-5]" of an image or frame record. */
void task_json_probs(FILE *j, const task_frame *t)
{
    if (!t || t->task != STRIX_TASK_CLASSIFY) return;
    int top[5], k = strix_topk_probs(t->probs, t->nc, 5, top);
    fputs(", ", j);
    strix_json_probs(j, top, t->probs, k, t->names, t->n_names);
}

/* Classify's txt lines: the top-5, "0.87 name" each. */
void task_txt_probs(FILE *f, const task_frame *t)
{
    if (!t || t->task != STRIX_TASK_CLASSIFY) return;
    int top[5], k = strix_topk_probs(t->probs, t->nc, 5, top);
    strix_txt_probs(f, top, t->probs, k, t->names, t->n_names);
}

/* One detection's txt line after its class (Results.save_txt): the box, or
 * a segment's polygon (0 when it has fewer than 3 points: no line), or an
 * OBB's corners, then a pose's keypoints; normalised by the image size. */
int task_txt(FILE *f, const task_frame *t, int i, const strix_detection *b, int w, int h)
{
    if (t && i < t->n && t->task == STRIX_TASK_SEGMENT) {
        int n = t->poly_at[i + 1] - t->poly_at[i];
        if (n < 3) return 0;
        fprintf(f, "%d", b->class_id);
        strix_txt_points(f, t->xy + 2 * (size_t)t->poly_at[i], n, 2, 0, w, h);
        return 1;
    }
    fprintf(f, "%d", b->class_id);
    if (t && i < t->n && t->task == STRIX_TASK_OBB) {
        strix_txt_points(f, t->corners + 8 * (size_t)i, 4, 2, 0, w, h);
        return 1;
    }
    /* Ultralytics: xyxy2xywh in float32, then divided by the image size */
    float cx = (b->x1 + b->x2) / 2 / (float)w, cy = (b->y1 + b->y2) / 2 / (float)h;
    float bw = (b->x2 - b->x1) / (float)w, bh = (b->y2 - b->y1) / (float)h;
    fprintf(f, " %g %g %g %g", (double)cx, (double)cy, (double)bw, (double)bh);
    if (t && i < t->n && t->task == STRIX_TASK_POSE)
        strix_txt_points(f, t->values + (size_t)i * t->stride, t->stride / t->kd, t->kd, t->kd == 3, w, h);
    return 1;
}

/* Masks, keypoints and rotated boxes of a frame [h, w] (rows of stride
 * bytes), as Results.plot draws them: the masks under the boxes, then the
 * boxes (rotated for obb) and labels, then the keypoints; classify's top-5
 * at the top left.  ids: per detection its track (NULL: none). */
int task_draw(const task_frame *t, uint8_t *rgb, int w, int h, int stride, const strix_detection *d, int n,
              const int *ids, const char *const *names, int n_names)
{
    strix_annotate_style style;
    strix_annotate_style_init(&style);
    style.track_ids = ids;
    if (t && t->task == STRIX_TASK_CLASSIFY) {
        int top[5], k = strix_topk_probs(t->probs, t->nc, 5, top);
        strix_annotate_probs(rgb, w, h, stride, top, t->probs, k, names, n_names);
        return 0;
    }
    if (n > 0 && t && t->task == STRIX_TASK_SEGMENT && t->n >= n) {
        size_t area = (size_t)w * h, in = (size_t)t->mh * t->mw;
        uint8_t *m = malloc(area * (size_t)n);
        int *cls = malloc(sizeof *cls * (size_t)n);
        if (!m || !cls) {
            free(m);
            free(cls);
            return EXIT_NOMEM;
        }
        strix_error e;
        for (int i = 0; i < n; i++) {
            cls[i] = ids && ids[i] >= 0 ? ids[i] : d[i].class_id; /* a track's colour, as its box */
            if (strix_mask_to_source(t->masks + in * i, t->mh, t->mw, m + area * i, h, w, &e)) {
                free(m);
                free(cls);
                return EXIT_NOMEM;
            }
        }
        strix_draw_masks(rgb, w, h, stride, m, n, cls, 0.5f);
        free(m);
        free(cls);
    }
    if (t && t->task == STRIX_TASK_OBB && t->n >= n)
        strix_annotate_rotated(rgb, w, h, stride, d, t->corners, n, names, n_names, &style);
    else
        strix_annotate(rgb, w, h, stride, d, n, names, n_names, &style);
    for (int i = 0; t && t->task == STRIX_TASK_POSE && i < n && i < t->n; i++) {
        uint8_t c[3];
        if (ids && ids[i] >= 0) strix_track_color(ids[i], c);
        strix_draw_keypoints(rgb, w, h, stride, t->values + (size_t)i * t->stride, t->stride / t->kd, t->kd, 0, 5,
                             0.25f, ids && ids[i] >= 0 ? c : NULL);
    }
    return 0;
}
