/* writers.c — the infer job's files besides images and videos: YOLO txt
 * labels, the images' JSON report (the report sink), the videos' JSON Lines (the detection
 * objects and the header line), the --track OUT/NAME.tracks.json, and the
 * --highlights reel with its JSON and CSV segment lists.  The formats are
 * described in tools/infer.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "highlight.h"
#include "job.h"
#include "outfile.h"

/* YOLO txt labels for a w x h image or frame, per task as save_txt writes them (task NULL: detect). */
int write_labels(const options *o, int w_px, int h_px, const strix_detection *d, int n, const task_frame *task,
                 const char *path)
{
    char *tmp = NULL;
    FILE *t = strix_temp_open(path, &tmp);
    if (!t) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n", path,
                strerror(errno));
        return EXIT_OUTPUT;
    }
    task_txt_probs(t, task);
    for (int i = 0; i < n; i++) {
        if (!task_txt(t, task, i, &d[i], w_px, h_px)) continue;
        if (o->save_conf) fprintf(t, " %g", (double)d[i].score);
        fputc('\n', t);
    }
    return commit_temp(t, tmp, path, o->overwrite);
}

const char *name_of(const char *const *names, int n_names, int id)
{
    return id >= 0 && id < n_names ? names[id] : "?";
}

static void json_box(FILE *j, const strix_detection *b)
{
    strix_json_float(j, b->x1);
    fputs(", ", j);
    strix_json_float(j, b->y1);
    fputs(", ", j);
    strix_json_float(j, b->x2);
    fputs(", ", j);
    strix_json_float(j, b->y2);
}

/* The detection objects of a JSON "detections" array: `first` before the
 * first one, `next` before each of the others.  A tracked one (ids[i] >=
 * 0) has its "track_id" and, with raw, its own box as "detection_box" (its
 * "box" is then the tracker's). */
static void json_dets(FILE *j, const char *const *names, int n_names, const strix_detection *d,
                      const strix_detection *raw, const int *ids, int n, int n_own, const task_frame *task,
                      const char *first, const char *next)
{
    for (int i = 0; i < n; i++) {
        const strix_detection *b = &d[i];
        fprintf(j, "%s{\"class_id\": %d, \"class_name\": ", i ? next : first, b->class_id);
        strix_json_str(j, name_of(names, n_names, b->class_id));
        fputs(", \"score\": ", j);
        strix_json_float(j, b->score);
        fputs(", \"box\": [", j);
        json_box(j, b);
        fputs("]", j);
        task_json(j, task, i);
        if (ids && ids[i] >= 0) {
            fprintf(j, ", \"track_id\": %d", ids[i]);
            if (raw) {
                fputs(", \"detection_box\": [", j);
                json_box(j, &raw[i]);
                fputs("]", j);
                task_json_detection(j, task, i);
            }
        }
        if (i >= n_own) fputs(", \"recovered\": true", j);
        fputs("}", j);
    }
}

int report_open(report *r, const report_config *c)
{
    memset(r, 0, sizeof *r);
    r->c = *c;
    r->json = strix_temp_open(c->path, &r->tmp);
    if (!r->json) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory exists and is "
                "writable)\n", c->path, strerror(errno));
        return EXIT_OUTPUT;
    }
    const options *o = c->o;
    fprintf(r->json, "{\n  \"strix_version\": ");
    strix_json_str(r->json, STRIX_VERSION);
    fputs(",\n  \"model\": ", r->json);
    if (o->model) strix_json_str(r->json, o->model);
    else fputs("null", r->json); /* the graph a .pt embeds */
    fputs(",\n  \"weights\": ", r->json);
    strix_json_str(r->json, o->weights);
    fprintf(r->json, ",\n  \"imgsz\": %d,\n  \"conf\": ", o->imgsz);
    strix_json_double(r->json, o->conf);
    fputs(",\n  \"iou\": ", r->json);
    strix_json_double(r->json, o->iou);
    fputs(",\n  \"images\": [", r->json);
    r->first_image = 1;
    return 0;
}

void report_image(report *r, const char *name, int width, int height, const strix_detections *d,
                  const task_frame *task)
{
    FILE *j = r->json;
    fputs(r->first_image ? "\n    " : ",\n    ", j);
    r->first_image = 0;
    fputs("{\"image\": ", j);
    strix_json_str(j, name);
    fprintf(j, ", \"width\": %d, \"height\": %d, \"detections\": [", width, height);
    json_dets(j, r->c.names, r->c.n_names, d->items, NULL, NULL, d->count, d->count, task, "\n      ", ",\n      ");
    fputs(d->count ? "\n    ]" : "]", j);
    task_json_probs(j, task);
    fputs("}", j);
}

int report_failure(report *r, const char *name, const char *why)
{
    if (!list_add(&r->err_names, name)) return EXIT_NOMEM;
    if (!list_add(&r->err_msgs, why)) {
        free(r->err_names.v[--r->err_names.n]);
        return EXIT_NOMEM;
    }
    return 0;
}

int report_finish(report *r)
{
    FILE *j = r->json;
    fputs(r->first_image ? "],\n  \"errors\": [" : "\n  ],\n  \"errors\": [", j);
    for (int i = 0; i < r->err_names.n; i++) {
        fputs(i ? ",\n    {\"image\": " : "\n    {\"image\": ", j);
        strix_json_str(j, r->err_names.v[i]);
        fputs(", \"error\": ", j);
        strix_json_str(j, r->err_msgs.v[i]);
        fputs("}", j);
    }
    fputs(r->err_names.n ? "\n  ]\n}\n" : "]\n}\n", j);
    r->json = NULL;
    int rc = commit_temp(j, r->tmp, r->c.path, r->c.o->overwrite);
    r->tmp = NULL;
    return rc;
}

void report_close(report *r)
{
    if (r->json) abandon_temp(r->json, r->tmp);
    list_free(&r->err_names);
    list_free(&r->err_msgs);
    memset(r, 0, sizeof *r);
}

const char *class_name_of(const vrun *v, int id) { return name_of(v->names, v->n_names, id); }

/* One frame's JSON Lines record (the format: tools/infer.c): its
 * detections with their identities (ids: NULL without) and, for the
 * tracked ones, their own boxes (raw: NULL without), then the --line
 * crossings, the first n_cross of v->trk.cross. */
void jsonl_frame(const vrun *v, long index, double pts, double latency, int inferred, const strix_detection *dets,
                 const strix_detection *raw, const int *ids, int n, int n_own, int n_cross, const task_frame *task)
{
    FILE *j = v->jl;
    fprintf(j, "{\"frame\": %ld, \"pts\": ", index);
    strix_json_double(j, pts);
    if (latency >= 0) fprintf(j, ", \"latency_s\": %.3f", latency);
    fprintf(j, ", \"inferred\": %s, \"detections\": [", inferred ? "true" : "false");
    json_dets(j, v->names, v->n_names, dets, raw, ids, n, n_own, task, "", ", ");
    fputs("]", j);
    task_json_probs(j, task);
    for (int i = 0; i < n_cross; i++)
        fprintf(j, "%s{\"track_id\": %d, \"direction\": \"%s\"}", i ? ", " : ", \"crossings\": [", v->trk.cross[i].id,
                v->trk.cross[i].in ? "in" : "out");
    fputs(n_cross ? "]}\n" : "}\n", j);
}

/* One frame's lines of OUT/NAME.mot.txt, its tracked detections (ids >= 0). */
void mot_frame(FILE *mot, long index, const strix_detection *dets, const int *ids, int n)
{
    for (int i = 0; i < n; i++) /* MOTChallenge: frames from 1, the tracker's box */
        if (ids[i] >= 0)
            fprintf(mot, "%ld,%d,%.2f,%.2f,%.2f,%.2f,%.4f,-1,-1,-1\n", index + 1, ids[i], (double)dets[i].x1,
                    (double)dets[i].y1, (double)(dets[i].x2 - dets[i].x1), (double)(dets[i].y2 - dets[i].y1),
                    (double)dets[i].score);
}

/* OUT/NAME.tracks.json: every track, unique tracks per class, line totals. */
int write_tracks_json(vrun *v, long frames, double fps)
{
    const options *o = v->o;
    char *tmp = NULL;
    FILE *j = strix_temp_open(v->p->tracks, &tmp);
    if (!j) {
        fprintf(stderr, "infer: %s: cannot create the file: %s\n", v->p->tracks, strerror(errno));
        return EXIT_OUTPUT;
    }
    const strix_track_info *t;
    int n = strix_counter_tracks(v->trk.counter, &t);
    if (n < 0) {
        abandon_temp(j, tmp);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    fputs("{\n  \"video\": ", j);
    strix_json_str(j, v->p->input);
    fprintf(j, ",\n  \"frames\": %ld,\n  \"fps\": ", frames);
    strix_json_double(j, fps);
    fprintf(j, ",\n  \"degenerate_boxes\": %ld", strix_tracker_degenerate(v->trk.tracker));
    const strix_track_options *to = &o->track_opts;
    fprintf(j, ",\n  \"tracker\": {\"name\": \"%s\", \"track_high_thresh\": ",
            strix_tracker_type_name(to->tracker_type));
    strix_json_float(j, to->track_high_thresh);
    fputs(", \"track_low_thresh\": ", j);
    strix_json_float(j, to->track_low_thresh);
    fputs(", \"new_track_thresh\": ", j);
    strix_json_float(j, to->new_track_thresh);
    fputs(", \"match_thresh\": ", j);
    strix_json_float(j, to->match_thresh);
    fprintf(j, ", \"track_buffer\": %d", to->track_buffer);
    if (to->tracker_type != STRIX_TRACKER_TRACKTRACK) /* tracktrack.yaml has no fuse_score */
        fprintf(j, ", \"fuse_score\": %s", to->fuse_score ? "true" : "false");
    if (to->tracker_type == STRIX_TRACKER_BOTSORT || to->tracker_type == STRIX_TRACKER_DEEPOCSORT ||
        to->tracker_type == STRIX_TRACKER_TRACKTRACK)
        fprintf(j, ", \"gmc_method\": \"%s\"%s", to->gmc_method == STRIX_GMC_NONE ? "none" : "sparseOptFlow",
                to->gmc_method == STRIX_GMC_NONE          ? ""
                : to->gmc_grey == STRIX_GREY_OPENCV4 ? ", \"gmc_grey\": \"opencv4\""
                                                          : ", \"gmc_grey\": \"opencv5\"");
    if (to->tracker_type == STRIX_TRACKER_OCSORT || to->tracker_type == STRIX_TRACKER_DEEPOCSORT) {
        fprintf(j, ", \"delta_t\": %d, \"inertia\": ", to->delta_t);
        strix_json_float(j, to->inertia);
        fprintf(j, ", \"use_byte\": %s", to->use_byte ? "true" : "false");
    }
    if (to->tracker_type == STRIX_TRACKER_FASTTRACK) {
        fprintf(j, ", \"reset_velocity_offset_occ\": %d, \"reset_pos_offset_occ\": %d, \"enlarge_bbox_occ\": ",
                to->reset_velocity_offset_occ, to->reset_pos_offset_occ);
        strix_json_double(j, to->enlarge_bbox_occ);
        fputs(", \"dampen_motion_occ\": ", j);
        strix_json_double(j, to->dampen_motion_occ);
        fprintf(j, ", \"active_occ_to_lost_thresh\": %d, \"occ_cover_thresh\": ", to->active_occ_to_lost_thresh);
        strix_json_float(j, to->occ_cover_thresh);
        fprintf(j, ", \"occ_reappear_window\": %d, \"init_iou_suppress\": ", to->occ_reappear_window);
        strix_json_float(j, to->init_iou_suppress);
    }
    if (to->tracker_type == STRIX_TRACKER_TRACKTRACK) {
        const char *key[] = {"lost_match_thr", "conf_weight", "angle_weight", "penalty_p", "reduce_step", "tai_thr"};
        const float val[] = {to->lost_match_thr, to->conf_weight, to->angle_weight, to->penalty_p, to->reduce_step,
                           to->tai_thr};
        for (size_t i = 0; i < sizeof val / sizeof val[0]; i++) {
            fprintf(j, ", \"%s\": ", key[i]);
            strix_json_float(j, val[i]);
        }
        fprintf(j, ", \"min_track_len\": %d", to->min_track_len);
    }
    if (to->with_reid) { /* ReID's keys, as the tracker reads them */
        const int tt = to->tracker_type == STRIX_TRACKER_TRACKTRACK;
        const char *key[] = {tt ? "iou_weight" : "proximity_thresh", tt ? "reid_weight" : "appearance_thresh",
                             "alpha_fixed_emb"};
        const float val[] = {tt ? to->iou_weight : to->proximity_thresh, tt ? to->reid_weight : to->appearance_thresh,
                             to->alpha_fixed_emb};
        fputs(", \"with_reid\": true, \"model\": \"auto\"", j);
        for (int i = 0; i < (to->tracker_type == STRIX_TRACKER_DEEPOCSORT ? 3 : 2); i++) {
            fprintf(j, ", \"%s\": ", key[i]);
            strix_json_float(j, val[i]);
        }
    }
    fputs(", \"conf\": ", j);
    strix_json_double(j, o->conf);
    fputs("},\n  \"counts\": {", j);
    int first = 1;
    for (int c = 0; c < v->n_names; c++) {
        int k = strix_counter_class_tracks(v->trk.counter, c);
        if (!k) continue;
        fputs(first ? "" : ", ", j);
        first = 0;
        strix_json_str(j, class_name_of(v, c));
        fprintf(j, ": %d", k);
    }
    fputs("}", j);
    if (o->has_line) {
        int in, out;
        strix_counter_line(v->trk.counter, &in, &out);
        fputs(",\n  \"line\": {\"points\": [", j);
        for (int k = 0; k < 4; k++) {
            if (k) fputs(", ", j);
            strix_json_float(j, o->line[k]);
        }
        fprintf(j, "], \"in\": %d, \"out\": %d}", in, out);
    }
    fputs(",\n  \"tracks\": [", j);
    for (int i = 0; i < n; i++) {
        fprintf(j, "%s{\"track_id\": %d, \"class_id\": %d, \"class_name\": ", i ? ",\n    " : "\n    ", t[i].id,
                t[i].class_id);
        strix_json_str(j, class_name_of(v, t[i].class_id));
        fprintf(j, ", \"first_frame\": %ld, \"last_frame\": %ld, \"frames\": %ld, \"start\": ", t[i].first,
                t[i].last, t[i].frames);
        strix_json_double(j, t[i].start);
        fputs(", \"end\": ", j);
        strix_json_double(j, t[i].end);
        if (o->has_line) fprintf(j, ", \"in\": %d, \"out\": %d", t[i].line_in, t[i].line_out);
        fputs("}", j);
    }
    fputs(n ? "\n  ]\n}\n" : "]\n}\n", j);
    return commit_temp(j, tmp, v->p->tracks, o->overwrite);
}

static int cmp_hl_item(const void *a, const void *b)
{
    const strix_frame_item *x = a, *y = b;
    return x->class_id != y->class_id ? (x->class_id > y->class_id) - (x->class_id < y->class_id)
                                      : (x->id > y->id) - (x->id < y->id);
}

/* What appeared in a highlight segment, per class (count[n_names]): with
 * tracking the unique identities seen, without the most boxes in one frame.
 * Reads the frame log on from frame *at (segments come in frame order). */
static strix_status segment_appeared(const vrun *v, const strix_highlight_segment *sg, long *at, int *count,
                                     strix_error *err)
{
    memset(count, 0, sizeof *count * (size_t)(v->n_names ? v->n_names : 1));
    int *now = calloc((size_t)(v->n_names ? v->n_names : 1), sizeof *now);
    strix_frame_item *seen = NULL; /* with tracking: the segment's items */
    long n_seen = 0, cap = 0;
    strix_status st = STRIX_OK;
    if (!now) set_error(err, st = STRIX_E_NOMEM, "out of memory");
    for (; !st && *at <= sg->last; ++*at) {
        double pts;
        const strix_frame_item *it;
        int n, got = strix_frame_log_next(v->hl, &pts, &it, &n, err);
        if (got <= 0) {
            if (got) st = err->status;
            else set_error(err, st = STRIX_E_INTERNAL, "highlights: frame %ld missing from the frame log", *at);
            break;
        }
        if (*at < sg->first) continue;
        if (v->o->track) {
            if (n_seen + n > cap) {
                long c = n_seen + n > 2 * cap ? n_seen + n : 2 * cap;
                strix_frame_item *s = realloc(seen, sizeof *s * (size_t)c);
                if (!s) {
                    set_error(err, st = STRIX_E_NOMEM, "out of memory");
                    break;
                }
                seen = s;
                cap = c;
            }
            if (n) memcpy(seen + n_seen, it, sizeof *it * (size_t)n);
            n_seen += n;
            continue;
        }
        for (int i = 0; i < n; i++) now[it[i].class_id]++;
        for (int c = 0; c < v->n_names; c++) {
            if (now[c] > count[c]) count[c] = now[c];
            now[c] = 0;
        }
    }
    if (!st && v->o->track) { /* unique (class, id) pairs */
        if (n_seen) qsort(seen, (size_t)n_seen, sizeof *seen, cmp_hl_item);
        for (long i = 0; i < n_seen; i++)
            if (!i || seen[i].class_id != seen[i - 1].class_id || seen[i].id != seen[i - 1].id)
                count[seen[i].class_id]++;
    }
    free(seen);
    free(now);
    return st;
}

/* The reel's frames are drawn as the annotated video's: from the JSON Lines
 * just written, every record fed to a counter of its own for the trails,
 * a task model's fields drawn as task_draw draws them (a segment's mask is
 * its polygon filled, task_from_record: without the holes the live mask
 * has). */
typedef struct reel {
    vrun *v;
    strix_jsonl_reader *rd;
    strix_counter *counter;
    task_frame *task; /* the record's task fields, NULL until one has them */
} reel;

static int reel_draw(void *ctx, strix_video_frame *f, strix_error *err)
{
    reel *r = ctx;
    strix_jsonl_record rec;
    for (;;) {
        int got = strix_jsonl_next(r->rd, &rec, err);
        if (got < 0) return -1;
        if (!got || rec.frame > f->index) {
            set_error(err, STRIX_E_INTERNAL, "%s: no record for frame %ld", r->v->p->jsonl, f->index);
            return -1;
        }
        if (strix_counter_add(r->counter, rec.frame, rec.pts, rec.dets, rec.track_ids, rec.n, NULL, NULL, err))
            return -1;
        if (rec.frame == f->index) break;
    }
    if (rec.task != STRIX_TASK_DETECT &&
        ((!r->task && !(r->task = calloc(1, sizeof *r->task))) ||
         task_from_record(r->task, &rec, NULL, rec.n, 0, f->width, f->height, 1, r->v->names, r->v->n_names))) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory for a frame's task fields", r->v->p->jsonl);
        return -1;
    }
    draw_frame(r->v->o, r->counter, r->v->names, r->v->n_names, f->rgb, f->width, f->height, f->stride, f->index,
               rec.dets, rec.track_ids, rec.n, rec.task != STRIX_TASK_DETECT ? r->task : NULL);
    return 0;
}

/* --highlights: segments from the logged frames, the reel, the JSON and
 * CSV segment lists; an exit code. */
void highlight_options(const options *o, strix_highlight_options *ho)
{
    strix_highlight_options_init(ho);
    ho->gap = o->hl_gap;
    ho->pad = o->hl_pad;
    ho->min_len = o->hl_min_len;
    ho->max_total = o->hl_max_len;
}

void reel_cut_options(vrun *v, const char *name, strix_video_cut_options *co)
{
    const options *o = v->o;
    strix_video_cut_options_init(co);
    if (o->codec) co->write.codec = o->codec;
    co->write.crf = o->crf;
    co->write.preset = o->preset;
    co->write.audio = o->audio;
    co->write.name = name;
    co->write.notice = print_notice;
    co->write.notice_ctx = v;
    co->interrupt = stop_requested;
}

int write_highlights(vrun *v, double end_time)
{
    const options *o = v->o;
    const video_plan *p = v->p;
    long frames = strix_frame_log_frames(v->hl), next = 0; /* the frame log's next frame */
    double first_pts = strix_frame_log_first_pts(v->hl);
    int rc = 0;
    /* the segmenter takes whole arrays: 16 bytes a frame, only while it runs */
    double *pts = malloc(sizeof *pts * (size_t)(frames ? frames : 1));
    double *activity = calloc((size_t)(frames ? frames : 1), sizeof *activity);
    int *count = calloc((size_t)(v->n_names ? v->n_names : 1), sizeof *count);
    strix_video_segment *cut = NULL;
    strix_highlight_segment *sg = NULL;
    long n_sg = 0;
    char *tmp_v = NULL, *tmp_j = NULL, *tmp_c = NULL;
    FILE *j = NULL, *c = NULL;
    reel rl;
    memset(&rl, 0, sizeof rl);
    strix_error e;
    if (!pts || !activity || !count) goto nomem;
    const strix_track_info *ti = NULL;
    int n_ti = v->trk.counter ? strix_counter_tracks(v->trk.counter, &ti) : 0;
    if (n_ti < 0) goto nomem;
    if (strix_frame_log_rewind(v->hl, &e)) goto failed;
    for (long f = 0; f < frames; f++) {
        const strix_frame_item *it;
        int n, got = strix_frame_log_next(v->hl, &pts[f], &it, &n, &e);
        if (got < 0) goto failed;
        if (!got) {
            set_error(&e, STRIX_E_INTERNAL, "highlights: frame %ld missing from the frame log", f);
            goto failed;
        }
        for (int i = 0; i < n; i++) {
            if (o->hl_min_frames > 1) { /* tracks of at least N frames (ti is sorted by identity) */
                int lo = 0, hi = n_ti, id = it[i].id;
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (ti[mid].id < id) lo = mid + 1;
                    else hi = mid;
                }
                if (lo == n_ti || ti[lo].id != id || ti[lo].frames < o->hl_min_frames) continue;
            }
            activity[f] += 1;
        }
    }
    strix_highlight_options ho;
    highlight_options(o, &ho);
    if (strix_highlight_segments(pts, activity, frames, end_time, &ho, &sg, &n_sg, &e)) {
        fprintf(stderr, "infer: %s\n", e.message);
        rc = strix_exit_code(e.status);
        goto out;
    }
    free(pts);
    free(activity);
    pts = activity = NULL;
    if (strix_frame_log_rewind(v->hl, &e)) goto failed;
    double total = 0;
    for (long i = 0; i < n_sg; i++) total += sg[i].end - sg[i].start;

    if (n_sg) {
        if (!(cut = malloc(sizeof *cut * (size_t)n_sg))) goto nomem;
        for (long i = 0; i < n_sg; i++) {
            cut[i].start = sg[i].start;
            cut[i].end = sg[i].end;
        }
        FILE *t = strix_temp_open(p->hl_video, &tmp_v);
        if (!t) {
            fprintf(stderr, "infer: %s: cannot create the file: %s\n", p->hl_video, strerror(errno));
            rc = EXIT_OUTPUT;
            goto out;
        }
        fclose(t);
        if (strix_jsonl_open(&rl.rd, p->jsonl, &e) ||
            strix_counter_create(&rl.counter, o->has_line ? o->line : NULL, o->trail, &e)) {
            fprintf(stderr, "infer: %s\n", e.message);
            rc = strix_exit_code(e.status);
            goto out;
        }
        rl.v = v;
        strix_video_cut_options co;
        reel_cut_options(v, p->hl_video, &co);
        co.draw = reel_draw;
        co.ctx = &rl;
        strix_video_cut_stats cs;
        strix_status st = strix_video_cut(p->input, tmp_v, cut, (int)n_sg, &co, &cs, &e);
        if (st) {
            fprintf(stderr, "infer: %s\n", g_stop ? "highlight reel interrupted: not written" : e.message);
            rc = g_stop ? EXIT_INTERRUPTED : st == STRIX_E_NOMEM ? EXIT_NOMEM : st == STRIX_E_IMAGE ? EXIT_IMAGE
                                                                                                  : EXIT_OUTPUT;
            goto out;
        }
    }

    if (!(j = strix_temp_open(p->hl_json, &tmp_j)) || !(c = strix_temp_open(p->hl_csv, &tmp_c))) {
        fprintf(stderr, "infer: %s: cannot create the file: %s\n", j ? p->hl_csv : p->hl_json, strerror(errno));
        rc = EXIT_OUTPUT;
        goto out;
    }
    fputs("{\n  \"video\": ", j);
    strix_json_str(j, p->input);
    fputs(",\n  \"reel\": ", j);
    if (n_sg) strix_json_str(j, p->hl_video);
    else fputs("null", j);
    fputs(",\n  \"classes\": [", j);
    for (int k = 0, first = 1; k < v->n_names; k++)
        if (v->hl_mask[k]) {
            fputs(first ? "" : ", ", j);
            first = 0;
            strix_json_str(j, class_name_of(v, k));
        }
    fputs("],\n  \"options\": {\"score\": ", j);
    strix_json_double(j, o->hl_score);
    fprintf(j, ", \"min_frames\": %d, \"gap\": ", o->hl_min_frames);
    strix_json_double(j, o->hl_gap);
    fputs(", \"pad\": ", j);
    strix_json_double(j, o->hl_pad);
    fputs(", \"min_len\": ", j);
    strix_json_double(j, o->hl_min_len);
    fputs(", \"max_len\": ", j);
    strix_json_double(j, o->hl_max_len);
    fputs("},\n  \"video_duration\": ", j);
    strix_json_double(j, end_time - first_pts);
    fputs(",\n  \"reel_duration\": ", j);
    strix_json_double(j, total);
    fputs(",\n  \"segments\": [", j);
    fputs("start,end,duration,reel_start,first_frame,last_frame,appeared\n", c);
    double at = 0;
    for (long i = 0; i < n_sg; i++) {
        if (segment_appeared(v, &sg[i], &next, count, &e)) goto failed;
        fputs(i ? ",\n    {\"start\": " : "\n    {\"start\": ", j);
        strix_json_double(j, sg[i].start);
        fputs(", \"end\": ", j);
        strix_json_double(j, sg[i].end);
        fputs(", \"duration\": ", j);
        strix_json_double(j, sg[i].end - sg[i].start);
        fputs(", \"reel_start\": ", j);
        strix_json_double(j, at);
        fprintf(j, ", \"first_frame\": %ld, \"last_frame\": %ld, \"activity\": ", sg[i].first, sg[i].last);
        strix_json_double(j, sg[i].activity);
        fputs(", \"appeared\": {", j);
        fprintf(c, "%.6f,%.6f,%.6f,%.6f,%ld,%ld,\"", sg[i].start, sg[i].end, sg[i].end - sg[i].start, at, sg[i].first,
                sg[i].last);
        for (int k = 0, first = 1; k < v->n_names; k++) {
            if (!count[k]) continue;
            fputs(first ? "" : ", ", j);
            strix_json_str(j, class_name_of(v, k));
            fprintf(j, ": %d", count[k]);
            fprintf(c, "%s%d %s", first ? "" : "; ", count[k], class_name_of(v, k));
            first = 0;
        }
        fputs("}}", j);
        fputs("\"\n", c);
        at += sg[i].end - sg[i].start;
    }
    fputs(n_sg ? "\n  ]\n}\n" : "]\n}\n", j);
    if (tmp_v) {
        rc = commit_file(tmp_v, p->hl_video, o->overwrite);
        tmp_v = NULL;
    }
    if (!rc) rc = commit_temp(j, tmp_j, p->hl_json, o->overwrite);
    else abandon_temp(j, tmp_j);
    j = NULL;
    tmp_j = NULL;
    if (!rc) rc = commit_temp(c, tmp_c, p->hl_csv, o->overwrite);
    else abandon_temp(c, tmp_c);
    c = NULL;
    tmp_c = NULL;
    if (!rc && !o->quiet) {
        if (n_sg)
            printf("infer: %s: highlights: %ld segment%s, %.2f s of %.2f s in %s\n", p->input, n_sg,
                   n_sg == 1 ? "" : "s", total, end_time - first_pts, p->hl_video);
        else
            printf("infer: %s: highlights: nothing matched, no reel written (segment list in %s)\n", p->input,
                   p->hl_json);
    }
    goto out;
nomem:
    fprintf(stderr, "infer: out of memory\n");
    rc = EXIT_NOMEM;
    goto out;
failed: /* the frame log: its temporary file or memory */
    fprintf(stderr, "infer: %s\n", e.message);
    rc = e.status == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
out:
    if (j || tmp_j) abandon_temp(j, tmp_j);
    if (c || tmp_c) abandon_temp(c, tmp_c);
    if (tmp_v) {
        unlink(tmp_v);
        free(tmp_v);
    }
    strix_jsonl_close(rl.rd);
    if (rl.task) task_frame_free(NULL, rl.task);
    strix_counter_free(rl.counter);
    free(pts);
    free(activity);
    free(count);
    free(cut);
    free(sg);
    return rc;
}

/* The JSON Lines' first line: what the run found in the whole input, e.g.
 *   {"header": {"video": "clip.mp4", "frames": 300, "damage": {"skipped_packets": 0,
 *    "corrupt_packets": 0, "concealed_frames": 2, "tainted_frames": 47, "decode_errors": 3,
 *    "frames_lost": 1}, "degenerate_boxes": 0}}
 * (degenerate_boxes: null without --track; the damage counts are
 * strix_video_read_stats').  The counts are known only at
 * the end, so it is written first with zeros and rewritten in place: every
 * number takes a fixed width, padded with spaces (JSON allows them), so the
 * line keeps its length. */
void jsonl_header(FILE *j, const vrun *v, long frames, const strix_video_read_stats *rs)
{
    char degen[24] = "null";
    if (v->trk.tracker) snprintf(degen, sizeof degen, "%ld", strix_tracker_degenerate(v->trk.tracker));
    fputs("{\"header\": {\"video\": ", j);
    strix_json_str(j, v->p->input);
    char nframes[24] = "null";
    if (frames >= 0) snprintf(nframes, sizeof nframes, "%ld", frames);
    fprintf(j, ", \"frames\": %-12s, \"damage\": {\"skipped_packets\": %-12ld, \"corrupt_packets\": %-12ld, "
            "\"concealed_frames\": %-12ld, \"tainted_frames\": %-12ld, \"decode_errors\": %-12ld, "
            "\"frames_lost\": %-12ld}, \"degenerate_boxes\": %-12s}}\n", nframes, rs->bad_packets,
            rs->corrupt_packets, rs->concealed, rs->tainted, rs->decode_errors, rs->frames_lost, degen);
}

void jsonl_gap(FILE *j, const source_gap *g, long next_frame, double pts, int missed, int tracks_ended)
{
    fprintf(j, "{\"event\": {\"type\": \"reconnect\", \"reason\": \"%s\", \"lost_at\": \"%s\", \"back_at\": \"%s\", "
            "\"gap_s\": %.3f, \"attempts\": %d, \"next_frame\": %ld, \"next_pts\": %.6f", g->why, g->lost_at,
            g->back_at, g->seconds, g->attempts, next_frame, pts);
    if (missed >= 0)
        fprintf(j, ", \"missed_frames\": %d, \"tracks_ended\": %s", missed, tracks_ended ? "true" : "false");
    fputs("}}\n", j);
}
