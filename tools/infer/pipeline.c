/* pipeline.c — the frame pipeline of pipeline.h: per stream a reader
 * thread, a writer thread and three FIFO rings of slot pointers (free,
 * read, detected); one detection stage on the calling thread over all the
 * streams; one mutex over every ring.
 *
 * Sizing.  Per stream, detection gathers frames in a pending list.  A lone
 * stream fills whole batches; of S streams each gives about batch/S frames
 * of a batch, so its list is sized for its share, 2*ceil(batch/S) (at most
 * batch), twice the average for streams that go at different paces.
 * With vid_stride s the frames between two detected ones ride along, so a
 * list holds up to (share-1)*s + 1 frames, capped at 4*share so a large
 * stride does not hold many frames.  A batch is flushed when the pending
 * lists of all streams together hold `batch` frames to detect, when one
 * list reaches its cap, or when no stream has more to give.  Each stream's
 * pool has cap + 2*ceil(batch/S) + 1 slots, so while one batch is detected
 * its reader can fill its part of the next and its writer drain its part
 * of the previous one.  The frames in memory then grow with the batch, not
 * with batch x streams: 8 streams of 1080p at batch 64 held 8 x 193 frames
 * (9.4 GB peak) when each was sized as if alone, 8 x 33 now (1.7 GB;
 * perf/rss_streams.sh).  Every slot is
 * somewhere in free/read/pending/detected/writer, and the pool is larger
 * than the pending cap, so each reader always finds a slot eventually: no
 * deadlock, and a stalled writer stalls only its own reader (its frames
 * wait in its own pool).
 *
 * Slot lifecycle with submit/collect.  A submitted batch's pixels may still
 * be read after submit returns (STRIX_PINNED frames are DMA'd from the slot
 * while the batch runs, STRIX_DEVICE ones read in place), so a slot must not
 * reach its reader again before its ticket is collected or finished.  It
 * cannot: a flush's frames move from `pend` to `prev` when submitted and
 * leave `prev` only through complete_prev (collect, then finish, then the
 * writers' queues, and only the writers give slots back to `free_q`); a
 * stop drops `pend` and the read queues, never `prev`; after a detection
 * failure the slots in `prev` are never handed over (finish waits for the
 * ticket, the readers are aborted); and a stream's pool is released
 * (release) only after the detection stage has collected or finished every
 * ticket.  The frames `pend` gives back to `free_q` (a stop, an aborted
 * stream) were never submitted.
 *
 * Realtime streams.  Their reader never waits for detection: a frame read
 * replaces the one still in its read queue (given back to free_q, counted
 * late), and with free_q empty it takes that frame's slot; so the read
 * queue holds at most one frame, the newest, and detection never works on
 * a backlog.  Frames already pending or detected are kept.
 *
 * Stopping.  A reader or writer failure marks its stream aborted and wakes
 * every waiter: its reader and writer leave at their next wait, detection
 * drops its pending frames, the other streams go on.  A detection failure
 * aborts every stream.  A normal end flows downstream: each reader sets its
 * `read_done`, detection drains every stream and sets `detect_done`, each
 * writer drains and exits.  A stop (config.stop) ends the readers at their
 * next frame and drops the frames not yet in a detect call; the detected
 * ones are written as at a normal end.
 */
#include "pipeline.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

typedef struct ring {
    strix_pipe_frame **v;
    int cap, head, n;
} ring;

static void ring_push(ring *r, strix_pipe_frame *f)
{
    r->v[(r->head + r->n++) % r->cap] = f;
}

static strix_pipe_frame *ring_pop(ring *r)
{
    strix_pipe_frame *f = r->v[r->head];
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return f;
}

struct pipe;

typedef struct stream {
    const strix_pipe_stream *s;
    struct pipe *p;
    int k;
    pthread_cond_t cv_free, cv_done; /* its reader waits for a slot; its writer for a frame */
    ring free_q, read_q, done_q;
    int read_done, abort;
    long next_index;
    strix_pipe_frame **pend; /* detection's pending list, [pending_cap] */
    int n_pend, n_inf, pending_cap;
    strix_pipe_frame **prev; /* with submit/collect: the flush in flight, [pending_cap] */
    int n_prev;
    strix_pipe_frame *last;  /* the detections of its last detected frame */
    strix_pipe_stats *st;    /* read_ms: reader only; write_ms, frames, detections: writer only */
    pthread_t reader, writer;
    int have_reader, have_writer;
} stream;

typedef struct pipe {
    const strix_pipe_config *c;
    pthread_mutex_t mu;
    pthread_cond_t cv_read; /* detection waits for a frame of any stream */
    stream *ss;
    int detect_done;
    int stopping;           /* config.stop said so: read no more, drop what is not detected */
} pipe;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Record the stream's first failure, stop it and wake every stage that may
 * wait on it.  Call with mu held. */
static void fail_locked(stream *s, strix_pipe_stage stage, const strix_error *e)
{
    if (!s->st->failed) {
        s->st->failed = stage;
        s->st->error = *e;
        if (!s->st->error.status) s->st->error.status = STRIX_E_INTERNAL;
        if (!s->st->error.message[0])
            strix_fail(&s->st->error, s->st->error.status, "a pipeline stage failed without saying why");
    }
    s->abort = 1;
    pthread_cond_broadcast(&s->cv_free);
    pthread_cond_broadcast(&s->cv_done);
    pthread_cond_broadcast(&s->p->cv_read);
}

static void *reader_main(void *arg)
{
    stream *s = arg;
    pipe *p = s->p;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!s->free_q.n && !s->abort && !p->stopping) {
            if (s->s->realtime && s->read_q.n) { /* no time to wait: the waiting frame's slot */
                ring_push(&s->free_q, ring_pop(&s->read_q));
                s->st->late++;
                break;
            }
            pthread_cond_wait(&s->cv_free, &p->mu);
        }
        if (s->abort || p->stopping) {
            s->read_done = 1;
            pthread_cond_broadcast(&p->cv_read);
            pthread_mutex_unlock(&p->mu);
            break;
        }
        strix_pipe_frame *f = ring_pop(&s->free_q);
        pthread_mutex_unlock(&p->mu);

        strix_error e;
        strix_error_clear(&e);
        f->skip = 0;
        double t0 = now_ms();
        int r = s->s->read(s->s->ctx, f, &e);
        s->st->read_ms += now_ms() - t0;

        pthread_mutex_lock(&p->mu);
        if (r == 1 && !f->skip && !f->nv12.data && (!f->rgb || f->width < 1 || f->height < 1 || f->stride < 3 * f->width)) {
            strix_fail(&e, STRIX_E_INTERNAL, "the frame reader returned a frame without pixels");
            r = -1;
        }
        if (r == 1 && !s->abort) {
            for (; s->s->realtime && s->read_q.n; s->st->late++) /* replaced by the newer frame */
                ring_push(&s->free_q, ring_pop(&s->read_q));
            f->index = s->next_index++;
            f->stream = s->k;
            ring_push(&s->read_q, f);
            pthread_cond_signal(&p->cv_read);
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        ring_push(&s->free_q, f);
        if (r < 0) fail_locked(s, STRIX_PIPE_READ, &e);
        s->read_done = 1;
        pthread_cond_broadcast(&p->cv_read);
        pthread_mutex_unlock(&p->mu);
        if (r != 1) break;
    }
    return NULL;
}

static void *writer_main(void *arg)
{
    stream *s = arg;
    pipe *p = s->p;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!s->done_q.n && !p->detect_done && !s->abort) pthread_cond_wait(&s->cv_done, &p->mu);
        if (s->abort || !s->done_q.n) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        strix_pipe_frame *f = ring_pop(&s->done_q);
        pthread_mutex_unlock(&p->mu);

        strix_error e;
        strix_error_clear(&e);
        double t0 = now_ms();
        int r = s->s->write(s->s->ctx, f, &e);
        s->st->write_ms += now_ms() - t0;
        if (r == 0) {
            s->st->frames++;
            s->st->detections += f->n_dets;
        }

        pthread_mutex_lock(&p->mu);
        ring_push(&s->free_q, f);
        pthread_cond_signal(&s->cv_free);
        if (r) fail_locked(s, STRIX_PIPE_WRITE, &e);
        pthread_mutex_unlock(&p->mu);
        if (r) break;
    }
    return NULL;
}

/* Copy dets into f, capped at max_det. */
static void copy_dets(const strix_pipe_config *c, strix_pipe_frame *f, const strix_detection *d, int n)
{
    int k = n < c->max_det ? n : c->max_det;
    if (k < 0) k = 0;
    if (k) memcpy(f->dets, d, sizeof *d * (size_t)k); /* d may be NULL when n is 0 */
    f->n_dets = k;
}

/* The detection stage's scratch, and with submit/collect the flush
 * submitted last and not yet collected ("prev"). */
typedef struct dstage {
    strix_pipe_frame **call;  /* [batch]: the frames of the current call */
    strix_image *im;          /* [batch] */
    strix_detections *out;    /* [batch] */
    int *per;                 /* [n_streams]: frames of each stream in the current call */
    int prev_active;          /* the streams' prev lists hold a submitted flush */
    void *prev_ticket;        /* its one call (NULL: nothing in it to detect) */
    strix_pipe_frame **prev_call; /* [batch] */
    int prev_n;
    int *prev_per;            /* [n_streams] */
} dstage;

/* Mark every pending frame undetected; the count of pending frames. */
static int mark_pending(pipe *p)
{
    int total = 0;
    for (int k = 0; k < p->c->n_streams; k++)
        for (int i = 0; i < p->ss[k].n_pend; i++) {
            p->ss[k].pend[i]->n_dets = -1;
            total++;
        }
    return total;
}

/* The next frame size with pending frames to detect, and all of them, into
 * d->call/im/per; how many (0: none left). */
static int next_group(pipe *p, dstage *d)
{
    const strix_pipe_config *c = p->c;
    int n = 0, w = 0, h = 0;
    memset(d->per, 0, sizeof *d->per * (size_t)c->n_streams);
    for (int k = 0; k < c->n_streams; k++)
        for (int i = 0; i < p->ss[k].n_pend; i++) {
            strix_pipe_frame *f = p->ss[k].pend[i];
            if (!f->inferred || f->n_dets != -1) continue;
            if (!n) {
                w = f->width;
                h = f->height;
            }
            if (f->width != w || f->height != h) continue;
            d->call[n] = f;
            d->im[n++] = f->nv12.data ? f->nv12
                                      : (strix_image){.data = f->rgb, .width = f->width, .height = f->height,
                                                      .stride = f->stride, .format = c->format,
                                                      .memory = f->memory};
            d->per[k]++;
        }
    return n;
}

static void account(pipe *p, const int *per, int n, double ms, int calls)
{
    for (int k = 0; k < p->c->n_streams; k++) {
        if (!per[k]) continue;
        p->ss[k].st->detect_ms += ms * per[k] / n;
        p->ss[k].st->inferred += calls ? per[k] : 0;
        p->ss[k].st->batches += calls;
    }
}

/* A detection failure stops every stream; -1. */
static int detect_failed(pipe *p, strix_error *e, strix_status st)
{
    if (!e->status) e->status = st;
    pthread_mutex_lock(&p->mu);
    for (int k = 0; k < p->c->n_streams; k++) fail_locked(&p->ss[k], STRIX_PIPE_DETECT, e);
    pthread_mutex_unlock(&p->mu);
    return -1;
}

/* One call over d's n frames, waited for: detect, or submit + collect.
 * 0, or -1 after a failure. */
static int run_call(pipe *p, dstage *d, int n)
{
    const strix_pipe_config *c = p->c;
    strix_error e;
    strix_error_clear(&e);
    void *ticket = NULL;
    double t0 = now_ms();
    strix_status st = c->detect ? c->detect(c->ctx, d->im, n, d->out, &e)
                                : c->submit(c->ctx, d->im, n, &ticket, &e);
    if (!st && !c->detect) st = c->collect(c->ctx, ticket, d->out, &e);
    double ms = now_ms() - t0;
    account(p, d->per, n, ms, 1);
    for (int i = 0; i < n; i++) d->call[i]->detect_ms = ms / n;
    if (!st)
        for (int i = 0; i < n; i++) copy_dets(c, d->call[i], d->out[i].items, d->out[i].count);
    for (int i = 0; i < n && !st && c->take; i++)
        if (c->take(c->ctx, i, d->call[i], NULL, &e)) st = e.status ? e.status : STRIX_E_INTERNAL;
    if (ticket) c->finish(c->ctx, ticket);
    return st ? detect_failed(p, &e, st) : 0;
}

/* Give every frame of the streams' lists (pend, or prev) its detections in
 * its stream's order (a frame --vid-stride skips carries the last detected
 * one's, task outputs included), hand them to the writers, empty the lists.
 * 0, or -1 when a task output could not be copied (every stream aborted). */
static int fill_and_hand_over(pipe *p, int prev)
{
    const strix_pipe_config *c = p->c;
    int total = 0;
    for (int k = 0; k < c->n_streams; k++) total += prev ? p->ss[k].n_prev : p->ss[k].n_pend;
    double t0 = now_ms();
    for (int k = 0; k < c->n_streams; k++) {
        stream *s = &p->ss[k];
        strix_pipe_frame **list = prev ? s->prev : s->pend;
        int n = prev ? s->n_prev : s->n_pend;
        for (int i = 0; i < n; i++) {
            strix_pipe_frame *f = list[i];
            strix_pipe_frame *to = f->inferred ? s->last : f;
            const strix_pipe_frame *from = f->skip ? NULL : f->inferred ? f : s->last;
            if (f->skip) {
                f->n_dets = 0;
            } else if (f->inferred) {
                memcpy(s->last->dets, f->dets, sizeof *f->dets * (size_t)f->n_dets);
                s->last->n_dets = f->n_dets;
            } else {
                memcpy(f->dets, s->last->dets, sizeof *f->dets * (size_t)s->last->n_dets);
                f->n_dets = s->last->n_dets;
            }
            strix_error e;
            strix_error_clear(&e);
            if (c->take && c->take(c->ctx, -1, to, from, &e))
                return detect_failed(p, &e, e.status ? e.status : STRIX_E_NOMEM);
        }
    }
    double ms = now_ms() - t0;
    pthread_mutex_lock(&p->mu);
    for (int k = 0; k < c->n_streams; k++) {
        stream *s = &p->ss[k];
        strix_pipe_frame **list = prev ? s->prev : s->pend;
        int n = prev ? s->n_prev : s->n_pend;
        s->st->post_ms += total ? ms * n / total : 0;
        for (int i = 0; i < n; i++) ring_push(&s->done_q, list[i]);
        if (n) pthread_cond_signal(&s->cv_done);
        if (prev) s->n_prev = 0;
        else s->n_pend = s->n_inf = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return 0;
}

/* Detect the pending frames that need it (one call per frame size), fill
 * every pending frame's detections, hand them to the writers.  Returns 0,
 * or -1 after a detection failure (every stream aborted). */
static int flush_sync(pipe *p, dstage *d)
{
    mark_pending(p);
    for (int n; (n = next_group(p, d));)
        if (run_call(p, d, n)) return -1;
    return fill_and_hand_over(p, 0);
}

/* With submit/collect: collect the previous flush and hand it over. */
static int complete_prev(pipe *p, dstage *d)
{
    const strix_pipe_config *c = p->c;
    if (!d->prev_active) return 0;
    d->prev_active = 0;
    if (d->prev_ticket) {
        strix_error e;
        strix_error_clear(&e);
        double t0 = now_ms();
        strix_status st = c->collect(c->ctx, d->prev_ticket, d->out, &e);
        double ms = now_ms() - t0;
        account(p, d->prev_per, d->prev_n, ms, 0);
        for (int i = 0; i < d->prev_n; i++) d->prev_call[i]->detect_ms += ms / d->prev_n;
        for (int i = 0; i < d->prev_n && !st; i++)
            copy_dets(c, d->prev_call[i], d->out[i].items, d->out[i].count);
        c->finish(c->ctx, d->prev_ticket);
        d->prev_ticket = NULL;
        if (st) return detect_failed(p, &e, st);
    }
    return fill_and_hand_over(p, 1);
}

/* With submit/collect: submit this flush (one frame size: one call), then
 * collect the previous one, so the two overlap; a flush of several frame
 * sizes runs its calls one after the other, after the previous flush. */
static int flush_async(pipe *p, dstage *d)
{
    const strix_pipe_config *c = p->c;
    mark_pending(p);
    int n = next_group(p, d);
    for (int i = 0; i < n; i++) d->call[i]->n_dets = -2; /* claimed: is there a second size? */
    int second = 0;
    for (int k = 0; k < c->n_streams && !second; k++)
        for (int i = 0; i < p->ss[k].n_pend; i++)
            second |= p->ss[k].pend[i]->inferred && p->ss[k].pend[i]->n_dets == -1;
    if (second) {
        if (complete_prev(p, d)) return -1;
        return flush_sync(p, d);
    }
    void *ticket = NULL;
    if (n) {
        strix_error e;
        strix_error_clear(&e);
        double t0 = now_ms();
        strix_status st = c->submit(c->ctx, d->im, n, &ticket, &e);
        double ms = now_ms() - t0;
        account(p, d->per, n, ms, 1);
        for (int i = 0; i < n; i++) d->call[i]->detect_ms = ms / n;
        if (st) return detect_failed(p, &e, st);
    }
    if (complete_prev(p, d)) {
        if (ticket) c->finish(c->ctx, ticket);
        return -1;
    }
    for (int k = 0; k < c->n_streams; k++) { /* this flush becomes the previous one */
        stream *s = &p->ss[k];
        memcpy(s->prev, s->pend, sizeof *s->pend * (size_t)s->n_pend);
        s->n_prev = s->n_pend;
        s->n_pend = s->n_inf = 0;
    }
    memcpy(d->prev_call, d->call, sizeof *d->call * (size_t)n);
    memcpy(d->prev_per, d->per, sizeof *d->per * (size_t)c->n_streams);
    d->prev_n = n;
    d->prev_ticket = ticket;
    d->prev_active = 1;
    return 0;
}

/* Once config.stop said so: drop every frame read and not yet in a detect
 * call (the pending lists, the read queues).  Call with mu held. */
static void drop_locked(pipe *p)
{
    for (int k = 0; k < p->c->n_streams; k++) {
        stream *s = &p->ss[k];
        for (int i = 0; i < s->n_pend; i++) ring_push(&s->free_q, s->pend[i]);
        s->st->dropped += s->n_pend + s->read_q.n;
        s->n_pend = s->n_inf = 0;
        while (s->read_q.n) ring_push(&s->free_q, ring_pop(&s->read_q));
        pthread_cond_broadcast(&s->cv_free);
    }
}

/* The detection stage, on the calling thread: takes the streams' frames in
 * turn (one from each stream that has one), so a batch mixes the streams. */
static void detect_loop(pipe *p, dstage *d)
{
    const strix_pipe_config *c = p->c;
    int next = 0, failed = 0; /* next: the stream to take from first */
    for (;;) {
        pthread_mutex_lock(&p->mu);
        strix_pipe_frame *f = NULL;
        int reading, queued;
        for (;;) {
            if (!p->stopping && c->stop && c->stop(c->ctx)) p->stopping = 1;
            if (p->stopping) drop_locked(p); /* and what the readers add until they see it */
            reading = queued = 0;
            for (int k = 0; k < c->n_streams; k++) {
                stream *s = &p->ss[k];
                if (s->abort && s->n_pend) { /* a stopped stream: its pending frames go back */
                    for (int i = 0; i < s->n_pend; i++) ring_push(&s->free_q, s->pend[i]);
                    s->n_pend = s->n_inf = 0;
                }
                if (s->abort) continue;
                queued += s->read_q.n;
                reading |= !s->read_done;
            }
            if (queued || !reading) break;
            pthread_cond_wait(&p->cv_read, &p->mu);
        }
        stream *from = NULL;
        for (int j = 0; j < c->n_streams && queued; j++) {
            stream *s = &p->ss[(next + j) % c->n_streams];
            if (s->abort || !s->read_q.n) continue;
            f = ring_pop(&s->read_q);
            from = s;
            next = (s->k + 1) % c->n_streams;
            break;
        }
        int more = queued > 1 || reading;
        pthread_mutex_unlock(&p->mu);
        if (f) {
            f->inferred = !f->skip && f->index % from->s->vid_stride == 0;
            f->n_dets = 0;
            f->detect_ms = 0;
            from->pend[from->n_pend++] = f;
            from->n_inf += f->inferred;
        }
        int n = 0, n_inf = 0;
        for (int k = 0; k < c->n_streams; k++) {
            n += p->ss[k].n_pend;
            n_inf += p->ss[k].n_inf;
        }
        if (n && (n_inf == c->batch || (from && from->n_pend == from->pending_cap) || !more) &&
            (c->detect ? flush_sync(p, d) : flush_async(p, d))) {
            failed = 1;
            break;
        }
        if (!f && !more) break;
    }
    if (!failed) complete_prev(p, d);
    else if (d->prev_active && d->prev_ticket) c->finish(c->ctx, d->prev_ticket); /* dropped */
    pthread_mutex_lock(&p->mu);
    p->detect_done = 1;
    for (int k = 0; k < c->n_streams; k++) {
        pthread_cond_broadcast(&p->ss[k].cv_done);
        pthread_cond_broadcast(&p->ss[k].cv_free);
    }
    pthread_mutex_unlock(&p->mu);
}

strix_status strix_pipe_run(const strix_pipe_config *c, strix_pipe_stats *stats, strix_error *err)
{
    strix_error_clear(err);
    int async = c && !c->detect && c->submit && c->collect && c->finish;
    int ok = c && (c->detect || async) && (!c->take || (c->detect && c->task_free)) && c->batch >= 1 && c->max_det >= 1 && c->n_streams >= 1 && c->streams;
    for (int k = 0; ok && k < c->n_streams; k++)
        ok = c->streams[k].read && c->streams[k].write && c->streams[k].vid_stride >= 1;
    if (!ok)
        return strix_fail(err, STRIX_E_ARG, "pipeline: missing callback or stream (take needs detect and "
                          "task_free), or batch, vid_stride or max_det below 1");
    double t_start = now_ms();
    int S = c->n_streams;
    memset(stats, 0, sizeof *stats * (size_t)S);
    pipe p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.ss = calloc((size_t)S, sizeof *p.ss);
    size_t slots = 0, ring_slots = 0;
    int part = (c->batch + S - 1) / S; /* a stream's part of a batch, on average */
    int share = S == 1 || 2 * part >= c->batch ? c->batch : 2 * part;
    for (int k = 0; p.ss && k < S; k++) {
        stream *s = &p.ss[k];
        long span = (long)(share - 1) * c->streams[k].vid_stride + 1;
        s->pending_cap = span < 4L * share ? (int)span : 4 * share;
        /* submit/collect: one more flush in flight */
        stats[k].slots = s->pending_cap * (async ? 2 : 1) + 2 * part + 1;
        slots += (size_t)stats[k].slots + 1; /* + 1: `last` */
        ring_slots += (size_t)stats[k].slots * 3 + (size_t)s->pending_cap * 2;
    }
    strix_pipe_frame *pool = calloc(slots, sizeof *pool);
    strix_pipe_frame **rings = calloc(ring_slots, sizeof *rings);
    strix_detection *dets = calloc(slots * (size_t)c->max_det, sizeof *dets);
    dstage d;
    memset(&d, 0, sizeof d);
    d.call = calloc((size_t)c->batch * 2, sizeof *d.call); /* call, prev_call */
    d.im = calloc((size_t)c->batch, sizeof *d.im);
    d.out = calloc((size_t)c->batch, sizeof *d.out);
    d.per = calloc((size_t)S * 2, sizeof *d.per); /* per, prev_per */
    if (!p.ss || !pool || !rings || !dets || !d.call || !d.im || !d.out || !d.per) {
        free(p.ss);
        free(pool);
        free(rings);
        free(dets);
        free(d.call);
        free(d.im);
        free(d.out);
        free(d.per);
        return strix_fail(err, STRIX_E_NOMEM, "pipeline: out of memory for %zu frame slots", slots);
    }
    d.prev_call = d.call + c->batch;
    d.prev_per = d.per + S;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv_read, NULL);
    strix_pipe_frame *fr = pool;
    strix_pipe_frame **rg = rings;
    strix_detection *dt = dets;
    for (int k = 0; k < S; k++) {
        stream *s = &p.ss[k];
        int n = stats[k].slots;
        s->s = &c->streams[k];
        s->p = &p;
        s->k = k;
        s->st = &stats[k];
        ring *rs[3] = {&s->free_q, &s->read_q, &s->done_q};
        for (int i = 0; i < 3; i++, rg += n) *rs[i] = (ring){rg, n, 0, 0};
        s->pend = rg;
        s->prev = rg + s->pending_cap;
        rg += 2 * s->pending_cap;
        for (int i = 0; i <= n; i++, dt += c->max_det) fr[i].dets = dt;
        for (int i = 0; i < n; i++) ring_push(&s->free_q, &fr[i]);
        s->last = &fr[n];
        fr += n + 1;
        pthread_cond_init(&s->cv_free, NULL);
        pthread_cond_init(&s->cv_done, NULL);
    }

    /* Workers block asynchronous signals, so a handler the caller installed
     * (SIGINT, SIGTERM) runs on the caller's thread; they inherit this mask. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int started = 1;
    for (int k = 0; k < S && started; k++) {
        stream *s = &p.ss[k];
        s->have_reader = pthread_create(&s->reader, NULL, reader_main, s) == 0;
        s->have_writer = s->have_reader && pthread_create(&s->writer, NULL, writer_main, s) == 0;
        started = s->have_writer;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!started) {
        strix_error e;
        strix_fail(&e, STRIX_E_NOMEM, "pipeline: cannot start a thread (too many processes or out of memory)");
        pthread_mutex_lock(&p.mu);
        for (int k = 0; k < S; k++) fail_locked(&p.ss[k], STRIX_PIPE_READ, &e);
        p.detect_done = 1;
        pthread_mutex_unlock(&p.mu);
    } else {
        detect_loop(&p, &d);
    }
    for (int k = 0; k < S; k++) {
        if (p.ss[k].have_writer) pthread_join(p.ss[k].writer, NULL);
        if (p.ss[k].have_reader) pthread_join(p.ss[k].reader, NULL);
    }
    strix_status st = STRIX_OK;
    fr = pool;
    double wall = now_ms() - t_start;
    for (int k = 0; k < S; k++) {
        stream *s = &p.ss[k];
        if (stats[k].failed && !st) {
            st = stats[k].error.status;
            *err = stats[k].error;
        }
        if (s->s->release)
            for (int i = 0; i < stats[k].slots; i++)
                if (fr[i].user) s->s->release(s->s->ctx, fr[i].user);
        for (int i = 0; c->task_free && i <= stats[k].slots; i++) /* <=: `last` too */
            if (fr[i].task) c->task_free(c->ctx, fr[i].task);
        fr += stats[k].slots + 1;
        stats[k].wall_ms = wall;
        pthread_cond_destroy(&s->cv_free);
        pthread_cond_destroy(&s->cv_done);
    }
    pthread_cond_destroy(&p.cv_read);
    pthread_mutex_destroy(&p.mu);
    free(p.ss);
    free(pool);
    free(rings);
    free(dets);
    free(d.call);
    free(d.im);
    free(d.out);
    free(d.per);
    return st;
}
