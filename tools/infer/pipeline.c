/* pipeline.c — the three-stage frame pipeline of pipeline.h: a reader
 * thread, detection on the calling thread, a writer thread, and three
 * FIFO rings of slot pointers (free, read, detected) under one mutex.
 *
 * Sizing.  Detection gathers frames in a pending list until it holds
 * `batch` frames to detect (with vid_stride s, the frames between them ride
 * along: (batch-1)*s + 1 frames), capped at 4*batch so a large stride does
 * not hold many frames; a capped list is detected as a smaller batch.  The
 * pool has pending + 2*batch + 1 slots, so while one batch is detected the
 * reader can fill the next and the writer drain the previous one.  Every
 * slot is somewhere in free/read/pending/detected/writer, and the pool is
 * larger than the pending cap, so the reader always finds a slot eventually:
 * no deadlock.
 *
 * Stopping.  The first failure sets `abort` and wakes every waiter; each
 * stage leaves its loop at its next wait.  A normal end flows downstream:
 * the reader sets `read_done`, detection drains and sets `detect_done`, the
 * writer drains and exits.
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

typedef struct pipe {
    const strix_pipe_config *c;
    pthread_mutex_t mu;
    pthread_cond_t cv_free, cv_read, cv_done;
    ring free_q, read_q, done_q;
    int read_done, detect_done, abort;
    strix_pipe_stage failed;
    strix_error err;
    long next_index;
    strix_pipe_stats st; /* read_ms: reader only; write_ms, frames, detections: writer only */
} pipe;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Record the first failure and wake every stage.  Call with mu held. */
static void fail_locked(pipe *p, strix_pipe_stage stage, const strix_error *e)
{
    if (!p->failed) {
        p->failed = stage;
        p->err = *e;
        if (!p->err.status) p->err.status = STRIX_E_INTERNAL;
        if (!p->err.message[0]) strix_fail(&p->err, p->err.status, "a pipeline stage failed without saying why");
    }
    p->abort = 1;
    pthread_cond_broadcast(&p->cv_free);
    pthread_cond_broadcast(&p->cv_read);
    pthread_cond_broadcast(&p->cv_done);
}

static void *reader_main(void *arg)
{
    pipe *p = arg;
    const strix_pipe_config *c = p->c;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->free_q.n && !p->abort) pthread_cond_wait(&p->cv_free, &p->mu);
        if (p->abort) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        strix_pipe_frame *f = ring_pop(&p->free_q);
        pthread_mutex_unlock(&p->mu);

        strix_error e;
        strix_error_clear(&e);
        double t0 = now_ms();
        int r = c->read(c->ctx, f, &e);
        p->st.read_ms += now_ms() - t0;

        pthread_mutex_lock(&p->mu);
        if (r == 1 && (!f->rgb || f->width < 1 || f->height < 1 || f->stride < 3 * f->width)) {
            strix_fail(&e, STRIX_E_INTERNAL, "the frame reader returned a frame without pixels");
            r = -1;
        }
        if (r == 1) {
            f->index = p->next_index++;
            ring_push(&p->read_q, f);
            pthread_cond_signal(&p->cv_read);
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        ring_push(&p->free_q, f);
        if (r < 0) fail_locked(p, STRIX_PIPE_READ, &e);
        p->read_done = 1;
        pthread_cond_broadcast(&p->cv_read);
        pthread_mutex_unlock(&p->mu);
        break;
    }
    return NULL;
}

static void *writer_main(void *arg)
{
    pipe *p = arg;
    const strix_pipe_config *c = p->c;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->done_q.n && !p->detect_done && !p->abort) pthread_cond_wait(&p->cv_done, &p->mu);
        if (p->abort || !p->done_q.n) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        strix_pipe_frame *f = ring_pop(&p->done_q);
        pthread_mutex_unlock(&p->mu);

        strix_error e;
        strix_error_clear(&e);
        double t0 = now_ms();
        int r = c->write(c->ctx, f, &e);
        p->st.write_ms += now_ms() - t0;
        if (r == 0) {
            p->st.frames++;
            p->st.detections += f->n_dets;
        }

        pthread_mutex_lock(&p->mu);
        ring_push(&p->free_q, f);
        pthread_cond_signal(&p->cv_free);
        if (r) fail_locked(p, STRIX_PIPE_WRITE, &e);
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

/* Detect the pending frames that need it, fill every pending frame's
 * detections in order, hand them to the writer.  Returns 0, or -1 after a
 * detection failure (recorded). */
static int flush_pending(pipe *p, strix_pipe_frame **pend, int n, strix_image *im, strix_detections *out,
                         strix_pipe_frame *last)
{
    const strix_pipe_config *c = p->c;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (pend[i]->inferred)
            im[k++] = (strix_image){pend[i]->rgb, pend[i]->width, pend[i]->height, pend[i]->stride, c->format};
    if (k) {
        strix_error e;
        strix_error_clear(&e);
        double t0 = now_ms();
        strix_status s = c->detect(c->ctx, im, k, out, &e);
        p->st.detect_ms += now_ms() - t0;
        p->st.inferred += k;
        p->st.batches++;
        if (s) {
            if (!e.status) e.status = s;
            pthread_mutex_lock(&p->mu);
            fail_locked(p, STRIX_PIPE_DETECT, &e);
            pthread_mutex_unlock(&p->mu);
            return -1;
        }
    }
    double t0 = now_ms();
    for (int i = 0, j = 0; i < n; i++) {
        strix_pipe_frame *f = pend[i];
        if (f->inferred) {
            copy_dets(c, f, out[j].items, out[j].count);
            j++;
            memcpy(last->dets, f->dets, sizeof *f->dets * (size_t)f->n_dets);
            last->n_dets = f->n_dets;
        } else {
            memcpy(f->dets, last->dets, sizeof *f->dets * (size_t)last->n_dets);
            f->n_dets = last->n_dets;
        }
    }
    p->st.post_ms += now_ms() - t0;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < n; i++) ring_push(&p->done_q, pend[i]);
    pthread_cond_signal(&p->cv_done);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

/* The detection stage, on the calling thread. */
static void detect_loop(pipe *p, int pending_cap, strix_pipe_frame **pend, strix_image *im,
                        strix_detections *out, strix_pipe_frame *last)
{
    const strix_pipe_config *c = p->c;
    int n = 0, n_inf = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->read_q.n && !p->read_done && !p->abort) pthread_cond_wait(&p->cv_read, &p->mu);
        if (p->abort) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        strix_pipe_frame *f = p->read_q.n ? ring_pop(&p->read_q) : NULL;
        int more = p->read_q.n > 0 || !p->read_done;
        pthread_mutex_unlock(&p->mu);
        if (f) {
            f->inferred = f->index % c->vid_stride == 0;
            f->n_dets = 0;
            pend[n++] = f;
            n_inf += f->inferred;
        }
        if (n && (n_inf == c->batch || n == pending_cap || !more)) {
            if (flush_pending(p, pend, n, im, out, last)) break;
            n = n_inf = 0;
        }
        if (!f && !more) break;
    }
    pthread_mutex_lock(&p->mu);
    /* frames still pending after a failure go back to the pool */
    for (int i = 0; i < n && p->abort; i++) ring_push(&p->free_q, pend[i]);
    p->detect_done = 1;
    pthread_cond_broadcast(&p->cv_done);
    pthread_cond_broadcast(&p->cv_free);
    pthread_mutex_unlock(&p->mu);
}

strix_status strix_pipe_run(const strix_pipe_config *c, strix_pipe_stats *stats, strix_error *err)
{
    strix_error_clear(err);
    memset(stats, 0, sizeof *stats);
    if (!c || !c->read || !c->detect || !c->write || c->batch < 1 || c->vid_stride < 1 || c->max_det < 1)
        return strix_fail(err, STRIX_E_ARG, "pipeline: missing callback, or batch, vid_stride or max_det below 1");
    double t_start = now_ms();
    long span = (long)(c->batch - 1) * c->vid_stride + 1;
    int pending_cap = span < 4L * c->batch ? (int)span : 4 * c->batch;
    int slots = pending_cap + 2 * c->batch + 1;

    pipe p;
    memset(&p, 0, sizeof p);
    p.c = c;
    strix_pipe_frame *pool = calloc((size_t)slots + 1, sizeof *pool); /* + 1: `last` */
    strix_pipe_frame **rings = calloc((size_t)slots * 3 + (size_t)pending_cap, sizeof *rings);
    strix_detection *dets = calloc(((size_t)slots + 1) * (size_t)c->max_det, sizeof *dets);
    strix_image *im = calloc((size_t)c->batch, sizeof *im);
    strix_detections *out = calloc((size_t)c->batch, sizeof *out);
    if (!pool || !rings || !dets || !im || !out) {
        free(pool);
        free(rings);
        free(dets);
        free(im);
        free(out);
        return strix_fail(err, STRIX_E_NOMEM, "pipeline: out of memory for %d frame slots", slots);
    }
    ring *rs[3] = {&p.free_q, &p.read_q, &p.done_q};
    for (int i = 0; i < 3; i++) *rs[i] = (ring){rings + (size_t)i * slots, slots, 0, 0};
    strix_pipe_frame **pend = rings + (size_t)3 * slots;
    for (int i = 0; i <= slots; i++) pool[i].dets = dets + (size_t)i * c->max_det;
    for (int i = 0; i < slots; i++) ring_push(&p.free_q, &pool[i]);
    strix_pipe_frame *last = &pool[slots];

    strix_status st = STRIX_OK;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv_free, NULL);
    pthread_cond_init(&p.cv_read, NULL);
    pthread_cond_init(&p.cv_done, NULL);
    /* Workers block asynchronous signals, so a handler the caller installed
     * (SIGINT, SIGTERM) runs on the caller's thread; they inherit this mask. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t reader, writer;
    int have_reader = pthread_create(&reader, NULL, reader_main, &p) == 0;
    int have_writer = have_reader && pthread_create(&writer, NULL, writer_main, &p) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!have_writer) {
        strix_error e;
        strix_fail(&e, STRIX_E_NOMEM, "pipeline: cannot start a thread (too many processes or out of memory)");
        pthread_mutex_lock(&p.mu);
        fail_locked(&p, STRIX_PIPE_READ, &e);
        pthread_mutex_unlock(&p.mu);
    } else {
        detect_loop(&p, pending_cap, pend, im, out, last);
    }
    if (have_writer) pthread_join(writer, NULL);
    if (have_reader) pthread_join(reader, NULL);
    pthread_cond_destroy(&p.cv_done);
    pthread_cond_destroy(&p.cv_read);
    pthread_cond_destroy(&p.cv_free);
    pthread_mutex_destroy(&p.mu);

    if (p.failed) {
        st = p.err.status;
        if (err) *err = p.err;
    }
    if (c->release)
        for (int i = 0; i < slots; i++)
            if (pool[i].user) c->release(c->ctx, pool[i].user);
    *stats = p.st;
    stats->slots = slots;
    stats->failed = p.failed;
    stats->wall_ms = now_ms() - t_start;
    free(pool);
    free(rings);
    free(dets);
    free(im);
    free(out);
    return st;
}
