/* video.c — the infer job's video run: up to --jobs videos at once through
 * tools/infer/pipeline.h (per video a decode thread and an annotate/encode
 * thread, detection batched across the videos on the calling thread), each
 * video wired from its stages: the source and the annotated-video sink
 * (media.c), the detector (detector.c), tracking (tracking.c), the
 * --detections replay, the JSON Lines, MOT and labels written per frame
 * (writers.c), what --highlights needs of each frame logged (framelog.h);
 * live sources (their JSON Lines flushed per frame with each frame's
 * latency, their reconnects' event lines, the tracker told of each gap,
 * --realtime's dropped frames); --highlights with --segment (reels.c); the
 * progress line and the summary. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate.h"
#include "job.h"
#include "nvml.h"
#include "outfile.h"
#include "pipeline.h"
#include "trace.h"
#include "worker.h"

/* A live run's JSON Lines buffer: larger than a frame's lines at the
 * default --max-det 300 (under 64 kB with tracks and crossings), so a
 * frame's flush writes whole lines at once (one write(2)). */
#define JSONL_LIVE_BUFFER (1 << 20)

int stop_requested(void *ctx)
{
    (void)ctx;
    return g_stop != 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void set_error(strix_error *e, strix_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    e->status = st;
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

/* A frame slot's state (strix_pipe_frame.user): the decoded frame and, for
 * the motion compensation of BoT-SORT, Deep OC-SORT or TrackTrack, its grey half-size image, made by
 * grey_band as swscale writes the frame (the frame's rows are still in the
 * caches then; the writer thread would read the whole frame back from
 * memory, 6 MB at 1080p). */
typedef struct vslot {
    strix_video_frame vf; /* first: the reader's callbacks get &vf */
    uint8_t *grey;        /* [height / 2][width / 2] */
    size_t grey_cap;
    int grey_rows;        /* frame rows made into grey so far */
    long gap_seq;         /* the live source's reconnects before this frame: one more than the
                             writer has written means gap is new */
    source_gap gap;       /* the last reconnect */
    double read_ms;       /* now_ms() when the frame was read */
    double glass_ms;      /* now_ms() when the frame was at the source (live: see video_read) */
} vslot;

/* The reader's rows callback (strix_video_read_options.rows) with GMC
 * (BoT-SORT, Deep OC-SORT, TrackTrack): rows y0..y1-1 of the frame are final; their grey rows.  Frames
 * --vid-stride leaves out are not tracked: none made for them (by the
 * reader's count; the writer falls back to the frame where grey_rows does
 * not cover it). */
static int grey_band(void *ctx, const strix_video_frame *vf, int y0, int y1, strix_error *err)
{
    const vrun *v = ctx;
    vslot *s = (vslot *)vf; /* vf is the first member of its slot */
    if (y0 == 0) s->grey_rows = 0;
    if (vf->index % v->o->vid_stride) return 0;
    size_t need = (size_t)(vf->width / 2) * (size_t)(vf->height / 2);
    if (need > s->grey_cap) {
        free(s->grey);
        s->grey_cap = (s->grey = malloc(need)) ? need : 0;
        if (!s->grey) {
            set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
            return -1;
        }
    }
    strix_image img = {.data = vf->rgb, .width = vf->width, .height = vf->height, .stride = vf->stride};
    return strix_track_grey(&img, &s->grey_rows, y1, s->grey, v->o->track_opts.gmc_grey, err) ? -1 : 0;
}

static int video_read(void *ctx, strix_pipe_frame *f, strix_error *err)
{
    vrun *v = ctx;
    if (g_stop) return 0;
    vslot *slot = f->user;
    if (!slot && !(slot = f->user = calloc(1, sizeof *slot))) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
        return -1;
    }
    strix_video_frame *vf = &slot->vf;
    slot->grey_rows = 0;
    int r = source_read(&v->src, vf, err);
    if (r == 1) {
        /* every frame carries the last reconnect: the first one written after it says so (with
         * --realtime the frame read first after it may be dropped) */
        if (v->src.gap_pending) {
            v->gap_seq++;
            v->gap = v->src.gap;
            v->src.gap_pending = 0;
            v->anchored = 0;
        }
        slot->gap_seq = v->gap_seq;
        slot->gap = v->gap;
        /* The moment the frame was at the source ("glass"): its pts on our clock, placed by the
         * frame that came soonest after its pts so far (since the last reconnect), so network,
         * demux and decode delays beyond that frame's count as latency */
        slot->read_ms = now_ms();
        double at = slot->read_ms - vf->time * 1e3;
        if (!v->anchored || at < v->anchor_ms) v->anchor_ms = at;
        v->anchored = 1;
        slot->glass_ms = v->anchor_ms + vf->time * 1e3;
        f->rgb = vf->rgb;
        f->memory = vf->memory;
        f->width = vf->width;
        f->height = vf->height;
        f->stride = vf->stride;
        f->nv12 = vf->nv12 ? strix_video_frame_image(vf, 1) : (strix_image){0};
    }
    return r;
}

/* --detections: nothing to detect; the writer replays the records. */
static strix_status replay_detect(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err)
{
    for (int i = 0; i < n; i++) out[i].count = 0;
    return STRIX_OK;
}

static void video_release(void *ctx, void *user)
{
    (void)ctx;
    vslot *slot = user;
    if (slot) {
        strix_video_frame_free(&slot->vf);
        free(slot->grey);
    }
    free(slot);
}

/* "1:02:03" or "2:03" */
static void fmt_time(char *buf, size_t n, double sec)
{
    long t = sec > 0 && sec < 1e8 ? (long)(sec + 0.5) : 0;
    if (t >= 3600) snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

/* On a terminal one bar, redrawn at most 5 times a second; otherwise a
 * line every 5 s.  --quiet: nothing. */
static void progress(vrun *v, long done, int final)
{
    if (v->o->quiet || (final && !v->tty)) return;
    double now = now_ms();
    if (!final && now - v->last_progress < (v->tty ? 200 : 5000)) return;
    v->last_progress = now;
    double el = (now - v->t0) / 1e3, fps = el > 0 ? done / el : 0;
    if (v->live) { /* no end to count down to: frames, rate, latency, drops and reconnects */
        const char *rs = v->reconnects == 1 ? "" : "s";
        if (v->tty)
            fprintf(stderr, "\r%s [live] %ld frames  %.1f fps  latency %.2f s  %ld dropped  %ld reconnect%s\033[K%s",
                    v->shown, done, fps, v->lat_last, v->late, v->reconnects, rs, final ? "\n" : "");
        else
            fprintf(stderr, "infer: %s: live, %ld frames, %.1f fps, latency %.2f s, %ld dropped, %ld reconnect%s\n",
                    v->shown, done, fps, v->lat_last, v->late, v->reconnects, rs);
        fflush(stderr);
        return;
    }
    long total = v->expected >= done ? v->expected : -1;
    char eta[32] = "?", tot[32] = "?";
    if (total > 0) snprintf(tot, sizeof tot, "%ld", total);
    if (total > 0 && fps > 0) fmt_time(eta, sizeof eta, (double)(total - done) / fps);
    if (final) snprintf(eta, sizeof eta, "0:00");
    if (v->tty) {
        enum { W = 30 };
        char bar[W + 1];
        int fill = total > 0 ? (int)((double)W * (double)done / (double)total) : 0;
        for (int i = 0; i < W; i++) bar[i] = i < fill ? '#' : '-';
        bar[W] = 0;
        fprintf(stderr, "\r%s [%s] %ld/%s frames  %.1f fps  ETA %s\033[K%s", v->shown, total > 0 ? bar : "",
                done, tot, fps, eta, final ? "\n" : "");
    } else {
        fprintf(stderr, "infer: %s: %ld/%s frames, %.1f fps, ETA %s\n", v->shown, done, tot, fps, eta);
    }
    fflush(stderr);
}

/* Trails, boxes, labels (with a task model's masks, keypoints, rotated
 * boxes or top-5: task, NULL for none) and the counting line with its
 * totals: one frame's drawing, shared by the annotated video and the
 * highlight reel. */
void draw_frame(const options *o, strix_counter *counter, const char *const *names, int n_names,
                uint8_t *rgb, int w, int h, int stride, long index, const strix_detection *d,
                const int *ids, int n, const task_frame *task)
{
    strix_annotate_style style;
    strix_annotate_style_init(&style);
    style.track_ids = ids;
    int lw = (int)((double)(w + h + 3) / 2 * 0.003 + 0.5);
    if (lw < 2) lw = 2;
    for (int i = 0; i < n && ids && o->trail; i++) {
        const float *xy;
        int k = ids[i] >= 0 ? strix_counter_trail(counter, ids[i], index, &xy) : 0;
        uint8_t c[3];
        strix_track_color(ids[i], c);
        if (k > 1) strix_draw_trail(rgb, w, h, stride, xy, k, lw, c);
    }
    if (task) task_draw(task, rgb, w, h, stride, d, n, ids, names, n_names);
    else strix_annotate(rgb, w, h, stride, d, n, names, n_names, &style);
    if (o->has_line) {
        static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
        strix_draw_line(rgb, w, h, stride, o->line[0], o->line[1], o->line[2], o->line[3], lw, white, 1);
        int in, out;
        strix_counter_line(counter, &in, &out);
        char text[64];
        snprintf(text, sizeof text, "in %d  out %d", in, out);
        int x = (int)(o->line[0] < o->line[2] ? o->line[0] : o->line[2]);
        int y = (int)(o->line[1] < o->line[3] ? o->line[1] : o->line[3]) - strix_text_height(lw) - 2 * lw;
        if (x < 0) x = 0;
        if (y < 0) y = 0;
        strix_draw_text(rgb, w, h, stride, x, y, text, lw, white, black);
    }
}

/* room for n detections in the replay and highlight buffers */
static int grow_frame_buffers(vrun *v, int n)
{
    if (n <= v->rcap) return 0;
    int cap = n > 2 * v->rcap ? n : 2 * v->rcap;
    strix_detection *d = realloc(v->rdets, sizeof *d * (size_t)cap);
    if (d) v->rdets = d;
    strix_detection *raw = realloc(v->rraw, sizeof *raw * (size_t)cap);
    if (raw) v->rraw = raw;
    int *r = realloc(v->rids, sizeof *r * (size_t)cap);
    if (r) v->rids = r;
    strix_frame_item *hi = realloc(v->hl_items, sizeof *hi * (size_t)cap);
    if (hi) v->hl_items = hi;
    int *sel = realloc(v->rsel, sizeof *sel * (size_t)cap);
    if (sel) v->rsel = sel;
    if (!d || !raw || !r || !hi || !sel) return -1;
    v->rcap = cap;
    return 0;
}

/* --detections: this frame's record, checked against the video and
 * filtered by --classes (and --conf when given); 0 or -1 with err.  *dets:
 * the boxes as written ("box"), or with --track the detections' own
 * ("detection_box" where a tracked run wrote it: re-tracking starts from
 * what the detector gave; an obb's "detection_obb" likewise); *raw: the
 * detections' own boxes; *task: the task fields of a segment, pose, obb or
 * classify run's record (else NULL), passed through to the outputs;
 * *track_task: for TrackTrack, a detect record's recovered detections (else
 * NULL: *task holds them).  v->r_own: the rows before the recovered ones
 * passed through. */
static int replay_frame(vrun *v, strix_pipe_frame *f, double time, const strix_detection **dets,
                        const strix_detection **raw, int *n, const int **rec_ids, int *inferred,
                        const task_frame **task, const task_frame **track_task, strix_error *err)
{
    strix_jsonl_record rec;
    int r = strix_jsonl_next(v->replay, &rec, err);
    v->fail_rc = EXIT_INPUT; /* until this record proves good */
    if (r < 0) return -1;
    if (r == 0 || rec.frame != f->index) {
        set_error(err, STRIX_E_ARG, "%s: %s frame %ld of %s (were these detections made from this video?)",
                  v->o->detections, r ? "the next record is not for" : "has no record for", f->index, v->shown);
        return -1;
    }
    double fps = strix_video_reader_info(v->src.rd)->fps, tol = fps > 0 ? 0.5 / fps : 0.02;
    if (fabs(rec.pts - time) > tol) {
        set_error(err, STRIX_E_ARG, "%s: frame %ld is at %.3f s there but at %.3f s in %s (were these detections "
                  "made from this video?)", v->o->detections, f->index, rec.pts, time, v->shown);
        return -1;
    }
    v->fail_rc = 0;
    if (grow_frame_buffers(v, rec.n)) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
        return -1;
    }
    /* the detections, then the rows of recovered detections: passed through after them, or re-tracked by
     * TrackTrack as its recovered detections (their record indices after the kept ones in rsel); the other
     * trackers take none */
    const int retrack = v->trk.tracker != NULL;
    const int tt = retrack && v->o->track_opts.tracker_type == STRIX_TRACKER_TRACKTRACK;
    int m = 0, any_id = 0, nr = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) v->r_own = m;
        for (int i = 0; i < rec.n; i++) {
            const strix_detection *d = &rec.dets[i];
            if (rec.recovered[i] != pass) continue;
            if (v->o->conf_set && d->score < v->o->conf) continue;
            if (v->mask && (d->class_id >= v->n_names || !v->mask[d->class_id])) continue;
            if (pass && retrack) {
                if (tt) v->rsel[v->r_own + nr++] = i;
                continue;
            }
            v->rdets[m] = *d;
            v->rraw[m] = rec.raw[i];
            v->rsel[m] = i;
            v->rids[m++] = rec.track_ids[i];
            any_id |= rec.track_ids[i] >= 0;
        }
    }
    *task = *track_task = NULL;
    if (rec.task != STRIX_TASK_DETECT) {
        if ((!v->rtask && !(v->rtask = calloc(1, sizeof *v->rtask))) ||
            task_from_record(v->rtask, &rec, v->rsel, m, retrack, f->width, f->height, v->vs.wr != NULL, v->names,
                             v->n_names)) {
            set_error(err, STRIX_E_NOMEM, "%s: out of memory for a frame's task fields", v->shown);
            return -1;
        }
        *task = v->rtask;
    } else if (tt) {
        if (!v->rrec && !(v->rrec = calloc(1, sizeof *v->rrec))) {
            set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
            return -1;
        }
        v->rrec->task = STRIX_TASK_DETECT;
        *track_task = v->rrec;
    }
    task_frame *rt = *task ? v->rtask : v->rrec;
    if (tt && task_recovered_rows(rt, &rec, v->rsel + m, nr)) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory for a frame's recovered detections", v->shown);
        return -1;
    }
    *dets = v->trk.tracker ? v->rraw : v->rdets;
    *raw = v->rraw;
    *n = m;
    v->replayed += m;
    *rec_ids = any_id ? v->rids : NULL;
    *inferred = rec.inferred;
    return 0;
}

/* The exit code of a tracker or counter failure, by its cause: out of
 * memory, or detections it refuses (from a replayed file: a bad input;
 * from the model: a bug). */
static int track_exit_code(const vrun *v, strix_status st)
{
    if (st == STRIX_E_NOMEM) return EXIT_NOMEM;
    return v->replay ? EXIT_INPUT : EXIT_INTERNAL;
}

static int write_frame(vrun *v, strix_pipe_frame *f, strix_error *err);

/* The writer thread's stage (an NVTX range "postprocess" around it, with
 * tracking, annotate and encode nested in it). */
static int video_write(void *ctx, strix_pipe_frame *f, strix_error *err)
{
    vrun *v = ctx;
    stage_push(v->o->nvtx, "postprocess");
    int r = write_frame(v, f, err);
    stage_pop(v->o->nvtx);
    return r;
}

static int write_frame(vrun *v, strix_pipe_frame *f, strix_error *err)
{
    const options *o = v->o;
    vslot *slot = f->user;
    strix_video_frame *vf = &slot->vf;
    if (g_stop > 1) {
        set_error(err, STRIX_E_INTERNAL, "%s: stopped at once (a second signal, or one with --manifest)", v->shown);
        return -1;
    }
    double t0 = now_ms();
    const strix_detection *dets = f->dets, *raw = NULL; /* raw: the detections' own boxes, when dets are tracked */
    const int *ids = NULL;
    task_frame tracked;
    int n = f->n_dets, inferred = f->inferred;
    /* f->task: a task model's outputs, or a detect model's ReID features only (with_reid); a replay's task
     * fields come from its records */
    const task_frame *tf = f->task, *task = tf && tf->task != STRIX_TASK_DETECT ? tf : NULL;
    int n_own = n; /* the rows after those are recovered detections */
    if (v->replay) {
        const task_frame *rtf = NULL;
        if (replay_frame(v, f, vf->time, &dets, &raw, &n, &ids, &inferred, &task, &rtf, err)) return -1;
        tf = rtf;
        n_own = v->r_own;
    }
    if (grow_frame_buffers(v, n)) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
        return -1;
    }
    /* a reconnect before this frame: with --track the time without frames,
     * at the source's rate, counts as frames without detections */
    int gap = slot->gap_seq > v->gap_written, missed = -1;
    if (gap && v->trk.tracker) {
        double fps = strix_video_reader_info(v->src.rd)->fps;
        double k = v->jl_frames ? (slot->read_ms - v->last_read_ms) / 1e3 * (fps > 0 ? fps : 30) - 1 : 0;
        missed = k < 0 ? 0 : k > 1e9 ? 1000000000 : (int)(k + 0.5);
        strix_status tst = tracking_gap(&v->trk, missed, &o->track_opts, err);
        if (tst) {
            v->fail_rc = track_exit_code(v, tst);
            return -1;
        }
    }
    v->last_read_ms = slot->read_ms;
    int n_cross = 0;
    if (v->trk.tracker) {
        /* for the GMC of BoT-SORT, Deep OC-SORT and TrackTrack */
        strix_image img = {.data = f->rgb, .width = f->width, .height = f->height, .stride = f->stride};
        const uint8_t *grey = f->rgb && slot->grey_rows == f->height ? slot->grey : NULL;
        strix_status tst = tracking_frame(&v->trk, f->rgb ? &img : NULL, grey, f->width, f->height, f->index, vf->time,
                                          inferred, dets, n, task ? task : tf, &n_cross, err); /* tf: ReID */
        if (tst) {
            v->fail_rc = track_exit_code(v, tst);
            return -1;
        }
        ids = v->trk.ids;
        /* from here on, as Ultralytics' tracked results: the tracker's boxes (drawn, written, counted), the
         * recovered detections a track took after the frame's; an obb model's rotated ones too (a view of the
         * frame's task outputs: the detection thread may be copying them for a frame --vid-stride skips) */
        n_own = n;
        n = v->trk.n_rows;
        raw = v->trk.raw;
        dets = v->trk.boxes;
        if (v->trk.obb) {
            tracked = *task;
            tracked.n = n;
            tracked.raw_corners = v->trk.raw_corners;
            tracked.corners = v->trk.corners;
            task = &tracked;
        }
        if (grow_frame_buffers(v, n)) {
            set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
            return -1;
        }
    }
    double t_track = now_ms();
    v->track_ms += t_track - t0;
    if (v->vs.wr) {
        stage_push(o->nvtx, "annotate");
        draw_frame(o, v->trk.counter, v->names, v->n_names, f->rgb, f->width, f->height, f->stride, f->index, dets, ids,
                   n, task);
        stage_pop(o->nvtx);
    }
    double t1 = now_ms();
    v->annotate_ms += t1 - t_track;
    if (gap) {
        jsonl_gap(v->jl, &slot->gap, f->index, vf->time, missed, missed > tracking_gap_span(&o->track_opts) + 1);
        v->gap_written = slot->gap_seq;
        v->reconnects++;
    }
    double lat = -1;
    if (v->live) { /* latency: to this frame's line, written now */
        lat = (now_ms() - slot->glass_ms) / 1e3;
        v->lat_last = lat;
        v->lat_sum += lat;
        v->lat_max = lat > v->lat_max ? lat : v->lat_max;
        v->lat_n++;
        metrics_latency(o->metrics, lat);
    }
    jsonl_frame(v, f->index, vf->time, lat, inferred, dets, raw, ids, n, n_own, n_cross, task);
    v->jl_frames++;
    long late = f->index + 1 - v->jl_frames; /* --realtime's holes in the frame numbers */
    metrics_dropped(o->metrics, late - v->late);
    v->late = late;
    /* live: the frame's lines reach the file whole (one write: the stream's
     * buffer holds them, see video_open), for a reader following it */
    if (v->live) fflush(v->jl);
    if (ferror(v->jl)) {
        set_error(err, STRIX_E_IO, "%s: write failed: %s (check free disk space)", v->p->jsonl, strerror(errno));
        return -1;
    }
    if (v->mot) mot_frame(v->mot, f->index, dets, ids, n);
    if (v->mot && ferror(v->mot)) {
        set_error(err, STRIX_E_IO, "%s: write failed: %s (check free disk space)", v->p->mot, strerror(errno));
        return -1;
    }
    int k = 0; /* --highlights: this frame's qualifying detections */
    if (v->hl || v->reels.stem) {
        for (int i = 0; i < n; i++) {
            const strix_detection *d = &dets[i];
            if (d->class_id < v->n_names && v->hl_mask[d->class_id] && d->score >= o->hl_score &&
                (!o->track || ids[i] >= 0))
                v->hl_items[k++] = (strix_frame_item){d->class_id, ids ? ids[i] : -1};
        }
        if (v->hl && strix_frame_log_add(v->hl, vf->time, v->hl_items, k, err)) return -1;
    }
    if (v->label_path) {
        snprintf(v->label_path, strlen(v->p->label_base) + 32, "%s_%ld.txt", v->p->label_base, f->index + 1);
        if (write_labels(o, f->width, f->height, dets, n, task, v->label_path)) {
            v->reported = 1;
            set_error(err, STRIX_E_IO, "%s: cannot write labels", v->label_path);
            return -1;
        }
    }
    v->side_ms += now_ms() - t1;
    if (v->vs.wr && video_sink_frame(&v->vs, vf, err)) return -1;
    if (v->reels.stem && (v->fail_rc = reels_frame(v, vf->time, k))) {
        v->reported = 1;
        set_error(err, STRIX_E_IO, "%s: a highlight reel failed", v->shown);
        return -1;
    }
    progress(v, v->jl_frames, 0);
    metrics_frames(o->metrics, 1, 0);
    return 0;
}

void print_notice(void *ctx, const char *line)
{
    const vrun *v = ctx;
    if (!v->o->quiet) fprintf(stderr, "infer: notice: %s\n", line);
}

static long peak_rss_mb(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_maxrss / 1024 : -1; /* Linux: KiB */
}

/* Exit code of a failed pipeline. */
static int pipe_exit_code(strix_pipe_stage stage, strix_status st)
{
    if (st == STRIX_E_NOMEM) return EXIT_NOMEM;
    if (stage == STRIX_PIPE_WRITE) return EXIT_OUTPUT;
    return strix_exit_code(st);
}

/* What the decoder met in a damaged input, e.g. "2 corrupt packets skipped,
 * 2 errors logged by FFmpeg's decoder, 1 frame lost, 1 frame concealed by
 * the decoder, 28 more frames decoded from damaged references before the
 * next keyframe"; "" for a clean input. */
static void describe_damage(const strix_video_read_stats *rs, char *buf, size_t n)
{
    const struct {
        long k;
        const char *one, *many;
    } part[] = {
        {rs->bad_packets, "corrupt packet skipped", "corrupt packets skipped"},
        {rs->corrupt_packets, "packet flagged corrupt by the demuxer", "packets flagged corrupt by the demuxer"},
        {rs->decode_errors, "error logged by FFmpeg's decoder", "errors logged by FFmpeg's decoder"},
        {rs->frames_lost, "frame lost", "frames lost"},
        {rs->concealed, "frame concealed by the decoder", "frames concealed by the decoder"},
        {rs->tainted, "more frame decoded from damaged references before the next keyframe",
         "more frames decoded from damaged references before the next keyframe"},
    };
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof part / sizeof part[0]; i++)
        if (part[i].k && at < n)
            at += (size_t)snprintf(buf + at, n - at, "%s%ld %s", at ? ", " : "", part[i].k,
                                   part[i].k == 1 ? part[i].one : part[i].many);
}

/* A URL of one of FFmpeg's network protocols: a server at the other end,
 * which may drop, stall, or never end. */
static int network_url(const char *s)
{
    static const char *const net[] = {"http", "https", "rtsp", "rtsps", "rtmp", "rtmps", "rtmpt", "udp", "rtp",
                                      "srt", "tcp", "tls", "mmsh", "mmst", "rist"};
    size_t k = strcspn(s, ":/");
    if (strncmp(s + k, "://", 3)) return 0;
    for (size_t i = 0; i < sizeof net / sizeof net[0]; i++)
        if (strlen(net[i]) == k && !strncmp(s, net[i], k)) return 1;
    return 0;
}

/* A capture device (/dev/video0): a character device, live by nature. */
static int device_path(const char *s)
{
    struct stat sb;
    return !stat(s, &sb) && S_ISCHR(sb.st_mode);
}

/* Open one video's reader, writer and output files (temporary until the
 * end); an exit code (the failure printed).  video_close frees what it
 * opened either way. */
static int video_open(vrun *v, const options *o, const video_plan *p, const detector *det,
                      const unsigned char *hl_mask)
{
    memset(v, 0, sizeof *v);
    v->o = o;
    v->p = p;
    v->shown = p->input;
    v->names = det->names;
    v->n_names = det->n_names;
    v->mask = det->mask;
    v->hl_mask = hl_mask;
    strix_error e;

    /* RGB only where something reads it: the annotated video and BoT-SORT's,
     * Deep OC-SORT's and TrackTrack's camera-motion compensation (with --nv12 the model reads NV12) */
    const int gmc = o->track &&
                    (o->track_opts.tracker_type == STRIX_TRACKER_BOTSORT ||
                     o->track_opts.tracker_type == STRIX_TRACKER_DEEPOCSORT ||
                     o->track_opts.tracker_type == STRIX_TRACKER_TRACKTRACK) &&
                    o->track_opts.gmc_method != STRIX_GMC_NONE;
    const int nv12 = o->nv12 || o->nvdec >= 0;
    /* live: said so, a network URL, a device; or no known duration where
     * there is no local file (a pipe: URL, say) */
    const int net = network_url(p->input), dev = device_path(p->input);
    struct stat sb;
    source_config sc = {p->input, o->save && o->audio, stop_requested, o->nvtx,
                        !nv12 || p->video_out || gmc, nv12, o->nvdec, det->pinned ? det->model : NULL,
                        gmc ? grey_band : NULL, v,
                        o->live || net || dev ? o->stall_timeout : 0, o->reconnect && (net || dev), 0,
                        o->max_reconnects, o->quiet, o->rtsp_transport};
    int rc = source_open(&v->src, &sc);
    if (rc) return rc;
    const strix_video_info *info = strix_video_reader_info(v->src.rd);
    v->expected = info->frames;
    v->live = o->live || net || dev || (info->duration <= 0 && stat(p->input, &sb));
    /* a network stream's end is a drop (a camera never ends); a file served
     * over the network (a known duration) ends at its end unless --live */
    v->src.c.end_drops = net && (o->live || info->duration <= 0);
    if (v->live && hl_mask && o->segment <= 0) { /* a file's reel is cut from the input, read again at the end */
        fprintf(stderr, "infer: %s: --highlights on a live source needs --segment D: its reels are cut from the "
                "pieces as they close\n", p->input);
        return EXIT_USAGE;
    }

    if (p->label_base && !(v->label_path = malloc(strlen(p->label_base) + 32))) {
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    if (p->video_out) {
        video_sink_config vc = {p->video_out, o->codec, o->preset, o->crf, o->audio, print_notice, v, o->nvtx,
                                o->segment, o->overwrite, o->segment_ts};
        if ((rc = video_sink_open(&v->vs, &vc, &v->src))) return rc;
    }
    strix_status st;
    if (v->live) {
        /* at its final name from the start, for readers following it (the
         * checks before the run refused an existing one without --overwrite);
         * a buffer that holds any frame's lines, so each frame's flush is
         * one write(2) of whole lines */
        if (!(v->jl = fopen(p->jsonl, "w"))) {
            fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n",
                    p->jsonl, strerror(errno));
            return EXIT_OUTPUT;
        }
        setvbuf(v->jl, NULL, _IOFBF, JSONL_LIVE_BUFFER);
    } else if (!(v->jl = strix_temp_open(p->jsonl, &v->jl_tmp))) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n",
                p->jsonl, strerror(errno));
        return EXIT_OUTPUT;
    }
    strix_video_read_stats none;
    memset(&none, 0, sizeof none);
    jsonl_header(v->jl, v, v->live ? -1 : 0, &none);
    if (v->live) fflush(v->jl);
    if (hl_mask && o->segment > 0 && (rc = reels_open(&v->reels, p->video_out, o->segment_ts))) return rc;
    if (hl_mask && o->segment <= 0 && (st = strix_frame_log_open(&v->hl, &e))) {
        fprintf(stderr, "infer: %s\n", e.message);
        return st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
    }
    if (o->detections && (st = strix_jsonl_open(&v->replay, o->detections, &e))) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
    }
    if (o->track) {
        tracking_config tc = {&o->track_opts, o->has_line ? o->line : NULL, o->trail, o->nvtx};
        if ((st = tracking_open(&v->trk, &tc, &e))) {
            fprintf(stderr, "infer: %s\n", e.message);
            return strix_exit_code(st);
        }
        if (!(v->mot = strix_temp_open(p->mot, &v->mot_tmp))) {
            fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n",
                    p->mot, strerror(errno));
            return EXIT_OUTPUT;
        }
    }
    return 0;
}

/* Free what video_open opened; the temporary files of unpublished outputs go. */
static void video_close(vrun *v)
{
    video_sink_close(&v->vs);
    source_close(&v->src);
    if (v->live && v->jl) { /* a live run's lines stay where readers saw them; a file of no frame goes */
        fclose(v->jl);
        if (!v->jl_frames) unlink(v->p->jsonl);
    } else if (v->jl || v->jl_tmp) {
        abandon_temp(v->jl, v->jl_tmp);
    }
    if (v->mot || v->mot_tmp) abandon_temp(v->mot, v->mot_tmp);
    free(v->label_path);
    strix_jsonl_close(v->replay);
    tracking_close(&v->trk);
    free(v->rdets);
    free(v->rids);
    free(v->rraw);
    free(v->rsel);
    if (v->rtask) task_frame_free(NULL, v->rtask);
    if (v->rrec) task_frame_free(NULL, v->rrec);
    strix_frame_log_free(v->hl);
    free(v->hl_items);
    reels_free(&v->reels);
    memset(v, 0, sizeof *v);
}

/* After the pipeline: publish one video's outputs (or report why not) and
 * print its summary; an exit code. */
static int video_finish(vrun *v, const strix_pipe_stats *ps)
{
    const options *o = v->o;
    const video_plan *p = v->p;
    strix_status st = ps->failed ? ps->error.status : STRIX_OK;
    strix_video_read_stats rs;
    strix_video_reader_stats(v->src.rd, &rs);
    if (st) {
        if (g_stop > 1) {
            fprintf(stderr, "infer: %s: stopped at once (a second signal, or one with --manifest): unfinished outputs "
                    "discarded\n",
                    p->input);
            return EXIT_INTERRUPTED;
        }
        if (!v->reported) fprintf(stderr, "%sinfer: %s\n", v->tty && !o->quiet ? "\n" : "", ps->error.message);
        return v->fail_rc ? v->fail_rc : pipe_exit_code(ps->failed, st);
    }
    if (!ps->frames) {
        if (g_stop) {
            fprintf(stderr, "infer: %s: interrupted before the first frame: nothing written\n", p->input);
            return EXIT_INTERRUPTED;
        }
        fprintf(stderr, "infer: %s: no frames could be decoded (%s)\n", p->input,
                rs.problem[0] ? rs.problem : "the video is empty");
        return EXIT_IMAGE;
    }
    progress(v, ps->frames, 1);
    int rc = v->vs.wr ? video_sink_finish(&v->vs, &v->src, o->overwrite) : 0;
    if (!rc && v->reels.stem && !g_stop) rc = reels_finish(v); /* stopped: the pending pieces get no reel */
    if (rc) return rc;
    /* the header's counts, now known (same length: see jsonl_header); a
     * live run's header stays as readers saw it, the counts are in the
     * summary */
    int unwritten = v->live ? fflush(v->jl) : fflush(v->jl) || fseek(v->jl, 0, SEEK_SET);
    if (!unwritten && !v->live) {
        jsonl_header(v->jl, v, ps->frames, &rs);
        unwritten = fflush(v->jl) || fseek(v->jl, 0, SEEK_END);
    }
    if (unwritten) {
        fprintf(stderr, "infer: %s: write failed: %s (check free disk space)\n", p->jsonl, strerror(errno));
        return EXIT_OUTPUT;
    }
    if (v->live) {
        rc = fclose(v->jl) ? EXIT_OUTPUT : 0;
        if (rc) fprintf(stderr, "infer: %s: write failed: %s (check free disk space)\n", p->jsonl, strerror(errno));
    } else {
        rc = commit_temp(v->jl, v->jl_tmp, p->jsonl, o->overwrite);
    }
    v->jl = NULL;
    v->jl_tmp = NULL;
    if (rc) return rc;
    if (v->mot) {
        rc = commit_temp(v->mot, v->mot_tmp, p->mot, o->overwrite);
        v->mot = NULL;
        v->mot_tmp = NULL;
        if (!rc) rc = write_tracks_json(v, ps->frames, strix_video_reader_info(v->src.rd)->fps);
        if (rc) return rc;
    }

    double wall = (now_ms() - v->t0) / 1e3, enc = v->vs.wr ? strix_video_writer_ms(v->vs.wr) : 0;
    double stage_ms[STAGE_COUNT] = {rs.decode_ms + rs.convert_ms, ps->detect_ms, ps->post_ms + v->side_ms,
                                    v->track_ms, v->annotate_ms, enc};
    for (int k = 0; k < STAGE_COUNT; k++) metrics_stage(o->metrics, k, stage_ms[k]);
    char damage[400], said[224] = "", lead[520] = "";
    describe_damage(&rs, damage, sizeof damage);
    /* the first problem strix met, and the decoder's first error message
     * ("h264: decode_slice_header error": the decoder's name, FFmpeg's words) */
    const char *colon = strchr(rs.decoder_error, ':');
    if (colon)
        snprintf(said, sizeof said, "FFmpeg's %.*s decoder first said '%s'", (int)(colon - rs.decoder_error),
                 rs.decoder_error, colon + 1 + (colon[1] == ' '));
    if (rs.problem[0] || said[0])
        snprintf(lead, sizeof lead, " (%s%s%s%s)", rs.problem[0] ? "first: " : "", rs.problem,
                 rs.problem[0] && said[0] ? "; " : "", said);
    if (damage[0])
        fprintf(stderr, "infer: %s: damaged input: %s%s; the %ld frames that decoded are in the output\n",
                p->input, damage, lead, ps->frames);
    else if (rs.problem[0])
        fprintf(stderr, "infer: %s: %s; the %ld frames before it are in the output\n", p->input, rs.problem,
                ps->frames);
    /* the container's frame count (or the duration's estimate) against what
     * decoded: damage and early ends were reported above from what failed to
     * read or decode; with none, the count in the header is what is off
     * (an AVI's stream header, say): trust the frames, note it neutrally */
    const strix_video_info *info = strix_video_reader_info(v->src.rd);
    long missing = info->frames - ps->frames;
    if (!g_stop && !o->quiet && !damage[0] && !rs.problem[0] && info->frames > 0 &&
        missing > (info->frames_exact ? 0 : info->frames / 50 > 2 ? info->frames / 50 : 2))
        fprintf(stderr, "infer: notice: %s: the %s %ld frames; %ld decoded, with no read or decode error\n",
                p->input, info->frames_exact ? "container's header counts" : "duration suggests about", info->frames,
                ps->frames);
    FILE *s = g_stop ? stderr : stdout;
    /* NVDEC's share of the time, with --decode nvdec only (NVML present or not) */
    char nvdec[224] = "";
    if (o->nvdec >= 0 && v->nvdec_util >= 0)
        snprintf(nvdec, sizeof nvdec, "; NVDEC %.0f%% busy (NVML, mean over the run%s)", v->nvdec_util,
                 v->concurrent > 1 ? " of the inputs beside it" : "");
    else if (o->nvdec >= 0)
        snprintf(nvdec, sizeof nvdec, "; NVDEC utilisation n/a (%s)", v->nvdec_why ? v->nvdec_why : "no NVML sample");
    if (!o->quiet || g_stop)
        fprintf(s, "infer: %s: %ld frames (%ld %s), %ld detections in %.2f s, %.1f fps; decode %.2f s, "
                "preprocess %.2f s, inference %.2f s, postprocess %.2f s, tracking %.2f s, annotate %.2f s, "
                "encode %.2f s (stages overlap%s)%s; peak memory %ld MB; %s%s%s%s\n",
                p->input, ps->frames, ps->inferred, o->detections ? "replayed" : "detected",
                o->detections ? v->replayed : ps->detections, wall, wall > 0 ? (double)ps->frames / wall : 0,
                rs.decode_ms / 1e3, rs.convert_ms / 1e3, ps->detect_ms / 1e3, (ps->post_ms + v->side_ms) / 1e3,
                v->track_ms / 1e3, v->annotate_ms / 1e3, enc / 1e3,
                v->concurrent > 1 ? "; inference shared with the inputs beside it" : "", nvdec, peak_rss_mb(),
                g_stop ? "interrupted: kept the frames read so far in " : "wrote ",
                v->vs.shown ? v->vs.shown : p->video_out ? p->video_out : "",
                p->video_out ? " and " : "", p->jsonl);
    if (v->live && v->lat_n && (!o->quiet || g_stop))
        fprintf(s, "infer: %s: live: latency mean %.3f s, max %.3f s (from the frame at the source to its JSON line); "
                "%ld frame%s dropped%s; %ld reconnect%s\n", p->input, v->lat_sum / (double)v->lat_n, v->lat_max,
                v->late, v->late == 1 ? "" : "s", o->realtime ? " to keep up (--realtime)" : "", v->reconnects,
                v->reconnects == 1 ? "" : "s");
    if (v->trk.counter && (!o->quiet || g_stop)) {
        const strix_track_info *ti;
        int n_ti = strix_counter_tracks(v->trk.counter, &ti);
        fprintf(s, "infer: %s: %d track%s", p->input, n_ti, n_ti == 1 ? "" : "s");
        for (int c = 0, first = 1; c < v->n_names; c++) {
            int k = strix_counter_class_tracks(v->trk.counter, c);
            if (!k) continue;
            fprintf(s, "%s%d %s", first ? ": " : ", ", k, class_name_of(v, c));
            first = 0;
        }
        if (o->has_line) {
            int in, out;
            strix_counter_line(v->trk.counter, &in, &out);
            fprintf(s, "; line: %d in, %d out", in, out);
        }
        fprintf(s, "; wrote %s and %s\n", p->mot, p->tracks);
    }
    long degen = v->trk.tracker ? strix_tracker_degenerate(v->trk.tracker) : 0;
    if (degen)
        fprintf(stderr, "infer: %s: %ld detection%s with an empty or non-finite box (no area) not tracked\n", p->input,
                degen, degen == 1 ? "" : "s");
    if (v->reels.stem && (!o->quiet || g_stop))
        fprintf(s, "infer: %s: %ld highlight reel%s (%s-NNN.highlights.mp4, one per piece with activity)\n", p->input,
                v->reels.written, v->reels.written == 1 ? "" : "s", v->reels.stem);
    if (g_stop) return EXIT_INTERRUPTED;
    if (v->src.gave_up) return EXIT_INPUT; /* said when it gave up; the outputs are kept */
    if (v->hl) {
        /* the end of the last frame: the next frame's time is unknown, so one average frame */
        double fps = info->fps > 0 ? info->fps : 25, last = strix_frame_log_last_pts(v->hl);
        long logged = strix_frame_log_frames(v->hl);
        double end = logged ? last + 1 / fps : 0;
        if (info->duration > 0 && logged && info->duration > last && info->duration < end) end = info->duration;
        return write_highlights(v, end);
    }
    return 0;
}

/* Fold one video's exit code into the run's (the first failure's, an
 * interruption's above all); 1 when the run must stop: an interruption,
 * or a failure the next inputs would meet too. */
static int fold_exit(int *rc, int vrc)
{
    if (!*rc || vrc == EXIT_INTERRUPTED) *rc = vrc;
    return vrc == EXIT_INTERRUPTED || vrc == EXIT_NOMEM || vrc == EXIT_DEVICE || vrc == EXIT_INTERNAL;
}

int run_videos(const options *o, const video_plan *vp, int n, const detector *det, const unsigned char *hl_mask)
{
    int jobs = o->jobs < n ? o->jobs : n, rc = 0, stop = 0;
    vrun *vs = calloc((size_t)jobs, sizeof *vs);
    strix_pipe_stream *streams = calloc((size_t)jobs, sizeof *streams);
    strix_pipe_stats *stats = calloc((size_t)jobs, sizeof *stats);
    if (!vs || !streams || !stats) {
        free(vs);
        free(streams);
        free(stats);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    /* up to --jobs videos at a time through one pipeline; their outputs
     * published, and their summaries printed, in input order */
    for (int first = 0; first < n && !stop && !g_stop; first += jobs) {
        int m = n - first < jobs ? n - first : jobs, open = 0;
        for (int i = 0; i < m && !stop; i++) {
            int vrc = video_open(&vs[open], o, &vp[first + i], det, hl_mask);
            if (vrc) {
                video_close(&vs[open]);
                stop = fold_exit(&rc, vrc);
                continue;
            }
            /* a replay has a record for every frame: no stride */
            streams[open] = (strix_pipe_stream){o->detections ? 1 : o->vid_stride, o->realtime && vs[open].live,
                                                &vs[open], video_read, video_write, video_release};
            open++;
        }
        if (stop || !open) {
            for (int i = 0; i < open; i++) video_close(&vs[i]);
            continue;
        }
        strix_pipe_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.batch = o->batch;
        cfg.max_det = o->max_det;
        cfg.streams = streams;
        cfg.n_streams = open;
        cfg.ctx = (void *)det;
        cfg.detect = o->detections ? replay_detect : det->async ? NULL : detector_run; /* a replay: no model */
        if (!cfg.detect) {
            cfg.submit = detector_submit;
            cfg.collect = detector_collect;
            cfg.finish = detector_finish;
        }
        if (!o->detections && (det->task != STRIX_TASK_DETECT || det->reid || det->recovered)) {
            cfg.take = task_take;
            cfg.task_free = task_frame_free;
        }
        cfg.format = STRIX_RGB;
        int tty = open == 1 && isatty(STDERR_FILENO); /* one bar; several inputs print lines */
        double t0 = now_ms();
        for (int i = 0; i < open; i++) {
            vs[i].tty = tty;
            vs[i].concurrent = open;
            vs[i].t0 = vs[i].last_progress = t0;
        }
        /* NVDEC's utilisation while these inputs decode on it (NVML, when present) */
        char why[160] = "";
        nvdec_sampler *dec = o->nvdec >= 0 ? nvdec_sampler_start(o->nvdec, why, sizeof why) : NULL;
        strix_error e;
        strix_pipe_run(&cfg, stats, &e);
        double util = nvdec_sampler_stop(dec);
        for (int i = 0; i < open; i++) {
            vs[i].nvdec_util = util;
            vs[i].nvdec_why = why[0] ? why : NULL;
        }
        for (int i = 0; i < open; i++) { /* every one ran: each is published or reported */
            stop |= fold_exit(&rc, video_finish(&vs[i], &stats[i]));
            video_close(&vs[i]);
        }
    }
    free(vs);
    free(streams);
    free(stats);
    return rc;
}
