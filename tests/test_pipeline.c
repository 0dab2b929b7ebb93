/* test_pipeline.c — the frame pipeline (tools/infer/pipeline.h) with fake
 * readers, detector (one call, or submit/collect with two batches in
 * flight) and writers over one or several streams: every frame
 * reaches its stream's writer once, in order; batches never exceed
 * --batch and never mix frame sizes, and do mix streams; with a stride only
 * every s-th frame is detected and the others carry its detections; a
 * reader or writer failure stops its stream alone with that stage's error,
 * a detection failure stops them all, no hang; the frame memory is a fixed
 * pool however long the stream, and a slow writer holds its reader back
 * (back-pressure); a frame the reader could not read keeps its place
 * (skip) and is written without detections; each detected frame carries
 * its share of its call's time; a stop (config.stop) writes what is
 * detected, drops the rest and ends early.  With submit/collect the
 * frames are marked STRIX_PINNED, as infer's are with STRIX_CUDA_ASYNC=1 (a
 * CUDA model DMAs them from the slot while the batch runs): the detector
 * sees that memory kind, and a slot never reaches its reader again before
 * its ticket is finished (its pixels at collect are those submitted), on
 * normal ends, failures and stops alike.  A realtime stream whose detector
 * is slower than its reader drops frames instead of holding the reader
 * back: the frames written are read ones in increasing order, the newest
 * last, and written + late add up to the frames read.  Random sizes and
 * random sleeps shake the thread interleavings.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/infer/pipeline.h"
#include "testlib.h"

enum { MAX_PER_FRAME = 4, N_CLASSES = 7, MAX_STREAMS = 8 };

/* One stream's reader and writer. */
typedef struct fake {
    int k;              /* the stream's index */
    long n;             /* frames to produce */
    long fail_read_at;  /* -1: never */
    long fail_write_at;
    int stride, jitter, width; /* frames are width x 2 */
    double min_detect_ms; /* what each detected frame's detect_ms must reach */
    int skip_mod;       /* frames i with i % skip_mod == 2 are placeholders (skip); 0: none */
    long read_sleep_ns, write_sleep_ns; /* a slow reader or writer */
    int pinned;         /* mark the frames STRIX_PINNED (the submit/collect runs) */
    int realtime;       /* the stream drops frames: indices rise with holes */
    /* reader thread */
    atomic_long produced;
    atomic_int reused;  /* a slot came back to the reader while its batch was in flight */
    atomic_long max_in_flight; /* most frames read and not yet written */
    int allocs;
    uint64_t rng_r;
    /* detect (calling thread) */
    long next_inferred;
    /* writer thread */
    atomic_long next_written;
    int write_bad;
    char why[256];
    uint64_t rng_w;
    /* release (calling thread, after the join) */
    int releases;
} fake;

/* The detector over every stream. */
typedef struct fdet {
    fake *s;
    int n_streams, batch, jitter;
    long fail_detect_at; /* of stream 0; -1: never */
    long sleep_ns;      /* each detect call takes at least this long */
    long stop_after;    /* stop() says stop once stream 0 wrote this many frames; -1: never */
    strix_detection out[64 * MAX_PER_FRAME];
    long max_batch, calls, mixed_calls;
    int async;          /* submit/collect/finish instead of detect */
    int tickets_out, max_tickets, ticket_bad;
    int detect_bad;     /* first inconsistency seen by detect, as a code */
    char why[256];
    uint64_t rng_d;
} fdet;

typedef struct slot_state {
    uint8_t px[5 * 2 * 3]; /* first: a 4x2 or 5x2 RGB frame; pixel 0 holds the index, byte 3 the stream */
    long index;
    atomic_int in_flight;  /* submitted, its ticket not yet finished */
} slot_state;

static uint64_t step(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 31);
}

static void maybe_sleep(int jitter, uint64_t *rng)
{
    if (!jitter) return;
    uint64_t r = step(rng) % 8;
    if (r < 3) {
        struct timespec t = {0, (long)(r * 40000)};
        nanosleep(&t, NULL);
    }
}

static long px_index(const uint8_t *p) { return (long)p[0] | (long)p[1] << 8 | (long)p[2] << 16; }

static int is_skip(const fake *f, long i) { return f->skip_mod && i % f->skip_mod == 2; }

/* The frame whose detections frame i carries: the last one detected
 * (stride, not a placeholder) at or before it; -1: none (no detections). */
static long carried(const fake *f, long i)
{
    for (long j = i - i % f->stride; j >= 0; j -= f->stride)
        if (!is_skip(f, j)) return j;
    return -1;
}

/* What detect reports for frame i: i % MAX_PER_FRAME boxes, classes i+k. */
static int fake_count(long i) { return (int)(i % MAX_PER_FRAME); }
static int fake_class(long i, int k) { return (int)((i + k) % N_CLASSES); }

static int fake_read(void *ctx, strix_pipe_frame *fr, strix_error *err)
{
    fake *f = ctx;
    maybe_sleep(f->jitter, &f->rng_r);
    if (f->read_sleep_ns) {
        struct timespec t = {0, f->read_sleep_ns};
        nanosleep(&t, NULL);
    }
    long i = atomic_load(&f->produced);
    if (i == f->fail_read_at) {
        err->status = STRIX_E_IO;
        snprintf(err->message, sizeof err->message, "read failed at %ld", i);
        return -1;
    }
    if (i >= f->n) return 0;
    if (is_skip(f, i)) { /* no pixels: keeps its place */
        fr->skip = 1;
        fr->rgb = NULL;
        atomic_store(&f->produced, i + 1);
        return 1;
    }
    slot_state *s = fr->user;
    if (!s) {
        if (!(s = fr->user = calloc(1, sizeof *s))) return -1;
        f->allocs++;
    }
    if (atomic_load(&s->in_flight)) atomic_store(&f->reused, 1);
    fr->memory = f->pinned ? STRIX_PINNED : STRIX_HOST;
    s->index = i;
    s->px[0] = (uint8_t)i;
    s->px[1] = (uint8_t)(i >> 8);
    s->px[2] = (uint8_t)(i >> 16);
    s->px[3] = (uint8_t)f->k;
    fr->rgb = s->px;
    fr->width = f->width;
    fr->height = 2;
    fr->stride = 3 * f->width;
    atomic_store(&f->produced, i + 1);
    long in_flight = i + 1 - atomic_load(&f->next_written);
    if (in_flight > atomic_load(&f->max_in_flight)) atomic_store(&f->max_in_flight, in_flight);
    return 1;
}

static strix_status fake_detect(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err)
{
    fdet *d = ctx;
    maybe_sleep(d->jitter, &d->rng_d);
    if (d->sleep_ns) {
        struct timespec t = {0, d->sleep_ns};
        nanosleep(&t, NULL);
    }
    if (n > d->max_batch) d->max_batch = n;
    d->calls++;
    if (n > d->batch && !d->detect_bad) d->detect_bad = 1;
    int mixed = 0;
    for (int j = 0; j < n; j++) {
        long i = px_index(im[j].data);
        int k = im[j].data[3];
        fake *f = &d->s[k];
        mixed |= k != im[0].data[3];
        if (k == 0 && i == d->fail_detect_at) {
            err->status = STRIX_E_DEVICE;
            snprintf(err->message, sizeof err->message, "detect failed at %ld", i);
            return STRIX_E_DEVICE;
        }
        if (im[j].width != im[0].width && !d->detect_bad) d->detect_bad = 3;
        if (im[j].memory != (f->pinned ? STRIX_PINNED : STRIX_HOST) && !d->detect_bad) d->detect_bad = 4;
        if ((f->realtime ? i < f->next_inferred : i != f->next_inferred) && !d->detect_bad) {
            d->detect_bad = 2;
            snprintf(d->why, sizeof d->why, "stream %d: frame %ld detected, expected %ld", k, i, f->next_inferred);
        }
        f->next_inferred = i + f->stride;
        while (is_skip(f, f->next_inferred)) f->next_inferred += f->stride;
        strix_detection *o = d->out + j * MAX_PER_FRAME;
        for (int b = 0; b < fake_count(i); b++)
            o[b] = (strix_detection){(float)i, (float)b, (float)i + 1, (float)b + 1, 1.0f - 0.1f * b, fake_class(i, b)};
        out[j].count = fake_count(i);
        out[j].items = o;
    }
    d->mixed_calls += mixed;
    return STRIX_OK;
}

/* submit/collect/finish over fake_detect: a ticket keeps its own copy, and
 * its frames' slots with the index each held when submitted. */
typedef struct ticket {
    int n, collected;
    strix_detection dets[64 * MAX_PER_FRAME];
    int counts[64];
    slot_state *slot[64];
    long index[64];
} ticket;

static strix_status fake_submit(void *ctx, const strix_image *im, int n, void **out, strix_error *err)
{
    fdet *d = ctx;
    strix_detections r[64];
    strix_status st = fake_detect(ctx, im, n, r, err);
    if (st) return st;
    ticket *t = calloc(1, sizeof *t);
    if (!t) return STRIX_E_NOMEM;
    t->n = n;
    for (int j = 0; j < n; j++) {
        t->slot[j] = (slot_state *)(void *)im[j].data; /* px is the slot's first member */
        t->index[j] = px_index(im[j].data);
        atomic_store(&t->slot[j]->in_flight, 1);
        t->counts[j] = r[j].count;
        memcpy(t->dets + j * MAX_PER_FRAME, r[j].items, sizeof *r[j].items * (size_t)r[j].count);
    }
    memset(d->out, 0xff, sizeof d->out); /* a result read from detect's buffer instead of the ticket shows */
    if (++d->tickets_out > d->max_tickets) d->max_tickets = d->tickets_out;
    *out = t;
    return STRIX_OK;
}

static strix_status fake_collect(void *ctx, void *tk, strix_detections *out, strix_error *err)
{
    fdet *d = ctx;
    ticket *t = tk;
    if (t->collected++) d->ticket_bad = 1;
    for (int j = 0; j < t->n; j++) /* what a DMA from the slot would read now */
        if (px_index(t->slot[j]->px) != t->index[j]) d->ticket_bad = 2;
    for (int j = 0; j < t->n; j++) out[j] = (strix_detections){t->counts[j], t->dets + j * MAX_PER_FRAME};
    return STRIX_OK;
}

static void fake_finish(void *ctx, void *tk)
{
    fdet *d = ctx;
    ticket *t = tk;
    for (int j = 0; j < t->n; j++) atomic_store(&t->slot[j]->in_flight, 0);
    d->tickets_out--;
    free(tk);
}

static int fake_write(void *ctx, strix_pipe_frame *fr, strix_error *err)
{
    fake *f = ctx;
    maybe_sleep(f->jitter, &f->rng_w);
    if (f->write_sleep_ns) {
        struct timespec t = {0, f->write_sleep_ns};
        nanosleep(&t, NULL);
    }
    long i = fr->index;
    if (i == f->fail_write_at) {
        err->status = STRIX_E_IO;
        snprintf(err->message, sizeof err->message, "write failed at %ld", i);
        return -1;
    }
    if (f->write_bad) return 0;
    const slot_state *s = fr->user;
    long src = carried(f, i); /* the frame whose detections this one carries */
    int want = src < 0 || is_skip(f, i) ? 0 : fake_count(src);
    long expect = atomic_load(&f->next_written);
    if (f->realtime ? i < expect : i != expect)
        snprintf(f->why, sizeof f->why, "stream %d: frame %ld arrived, expected %ld", f->k, i, expect);
    else if (fr->skip != is_skip(f, i)) snprintf(f->why, sizeof f->why, "frame %ld: skip=%d", i, fr->skip);
    else if (fr->stream != f->k || (!fr->skip && fr->rgb[3] != f->k))
        snprintf(f->why, sizeof f->why, "stream %d: frame %ld of stream %d", f->k, i, fr->skip ? -1 : fr->rgb[3]);
    else if (!fr->skip && (s->index != i || px_index(fr->rgb) != i))
        snprintf(f->why, sizeof f->why, "frame %ld has the pixels of %ld", i, s->index);
    else if (fr->inferred != (!fr->skip && i % f->stride == 0))
        snprintf(f->why, sizeof f->why, "frame %ld: inferred=%d", i, fr->inferred);
    else if (fr->n_dets != want) snprintf(f->why, sizeof f->why, "frame %ld: %d detections, want %d", i, fr->n_dets, want);
    else if (fr->inferred ? !(fr->detect_ms >= f->min_detect_ms) : fr->detect_ms != 0)
        snprintf(f->why, sizeof f->why, "frame %ld (inferred %d): detect_ms %g", i, fr->inferred, fr->detect_ms);
    for (int k = 0; !f->why[0] && k < want; k++) {
        const strix_detection *d = &fr->dets[k];
        if (d->x1 != (float)src || d->y1 != (float)k || d->class_id != fake_class(src, k))
            snprintf(f->why, sizeof f->why, "frame %ld: detection %d is not frame %ld's box %d", i, k, src, k);
    }
    if (f->why[0]) f->write_bad = 1;
    atomic_store(&f->next_written, i + 1);
    return 0;
}

static void fake_release(void *ctx, void *user)
{
    fake *f = ctx;
    f->releases++;
    free(user);
}

static void fake_init(fake *f, int k, long n, int stride)
{
    memset(f, 0, sizeof *f);
    f->k = k;
    f->n = n;
    f->stride = stride;
    f->width = 4;
    f->fail_read_at = f->fail_write_at = -1;
    atomic_init(&f->produced, 0);
    atomic_init(&f->max_in_flight, 0);
    atomic_init(&f->next_written, 0);
    atomic_init(&f->reused, 0);
    f->rng_r = tl_u64();
    f->rng_w = tl_u64();
}

static void fdet_init(fdet *d, fake *s, int n_streams, int batch)
{
    memset(d, 0, sizeof *d);
    d->s = s;
    d->n_streams = n_streams;
    d->batch = batch;
    d->fail_detect_at = d->stop_after = -1;
    d->rng_d = tl_u64();
}

static int fake_stop(void *ctx)
{
    const fdet *d = ctx;
    return d->stop_after >= 0 && atomic_load(&d->s[0].next_written) >= d->stop_after;
}

static strix_pipe_config config(fdet *d, strix_pipe_stream *ps)
{
    strix_pipe_config c;
    memset(&c, 0, sizeof c);
    for (int k = 0; k < d->n_streams; k++)
        ps[k] = (strix_pipe_stream){d->s[k].stride, d->s[k].realtime, &d->s[k], fake_read, fake_write,
                                    fake_release};
    c.batch = d->batch;
    c.max_det = MAX_PER_FRAME;
    c.streams = ps;
    c.n_streams = d->n_streams;
    c.ctx = d;
    for (int k = 0; k < d->n_streams; k++) d->s[k].pinned = d->async;
    if (d->async) {
        c.submit = fake_submit;
        c.collect = fake_collect;
        c.finish = fake_finish;
    } else {
        c.detect = fake_detect;
    }
    c.stop = fake_stop;
    return c;
}

/* Every stream's frames in order, complete, with their own detections;
 * batches within --batch, one frame size per detect call. */
static void test_pipe_order_batch_stride(void)
{
    for (int rep = 0; rep < 24; rep++) {
        int S = rep < 8 ? 1 : tl_int(2, MAX_STREAMS), jitter = rep % 3 != 0;
        fake f[MAX_STREAMS];
        fdet d;
        for (int k = 0; k < S; k++) {
            fake_init(&f[k], k, tl_int(0, 160), tl_int(1, 5));
            f[k].jitter = jitter;
            f[k].width = rep % 2 ? 4 + k % 2 : 4; /* odd reps: two frame sizes */
        }
        fdet_init(&d, f, S, tl_int(1, 6));
        d.jitter = jitter;
        d.async = rep % 4 >= 2;
        strix_pipe_stream ps[MAX_STREAMS];
        strix_pipe_config c = config(&d, ps);
        strix_pipe_stats st[MAX_STREAMS];
        strix_error e;
        strix_status s = strix_pipe_run(&c, st, &e);
        TL_CHECK(s == STRIX_OK, "%d streams, batch=%d: status %d: %s", S, d.batch, s, e.message);
        TL_CHECK(!d.detect_bad, "%d streams, batch=%d: detect saw %s %s", S, d.batch,
                 d.detect_bad == 1 ? "a batch above --batch" : d.detect_bad == 2 ? "frames out of order or skipped"
                 : d.detect_bad == 3 ? "two frame sizes in one call" : "a frame without its memory kind", d.why);
        TL_CHECK(d.max_batch <= d.batch, "a batch of %ld with --batch %d", d.max_batch, d.batch);
        TL_CHECK(d.tickets_out == 0 && d.max_tickets <= 2 && !d.ticket_bad,
                 "submit/collect: %d tickets left, %d out at once, %s", d.tickets_out, d.max_tickets,
                 d.ticket_bad == 1 ? "one collected twice" : d.ticket_bad == 2 ? "pixels changed in flight" : "");
        for (int k = 0; k < S; k++)
            TL_CHECK(!atomic_load(&f[k].reused), "stream %d: a slot was read into while its batch was in flight", k);
        for (int k = 0; k < S; k++) {
            TL_CHECK(!f[k].why[0], "%d streams, batch=%d, stride=%d%s: %s", S, d.batch, f[k].stride,
                     d.async ? ", submit/collect" : "", f[k].why);
            long want_inf = (f[k].n + f[k].stride - 1) / f[k].stride;
            TL_CHECK(st[k].frames == f[k].n && atomic_load(&f[k].next_written) == f[k].n,
                     "stream %d: %ld frames written of %ld", k, st[k].frames, f[k].n);
            TL_CHECK(st[k].inferred == want_inf, "stream %d: %ld frames detected, want %ld", k, st[k].inferred,
                     want_inf);
            TL_CHECK(f[k].allocs <= st[k].slots && f[k].releases == f[k].allocs,
                     "stream %d: %d slot states made, %d released, %d slots", k, f[k].allocs, f[k].releases,
                     st[k].slots);
            TL_CHECK(st[k].failed == STRIX_PIPE_NONE && st[k].error.status == STRIX_OK,
                     "stream %d: failed stage %d on success", k, st[k].failed);
        }
    }
}

/* Full batches when the stream allows: stride 1, n a multiple of batch; two
 * streams of one size decoding at the same pace fill batches together. */
static void test_pipe_full_batches(void)
{
    fake f[2];
    fdet d;
    int b = tl_int(2, 6);
    fake_init(&f[0], 0, 30L * b, 1);
    fdet_init(&d, f, 1, b);
    strix_pipe_stream ps[2];
    strix_pipe_config c = config(&d, ps);
    strix_pipe_stats st[2];
    strix_error e;
    TL_CHECK(strix_pipe_run(&c, st, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(st[0].batches == 30 && d.max_batch == b, "%ld detect calls for 30 batches of %d (largest %ld)",
             st[0].batches, b, d.max_batch);

    /* submit/collect: the same batches, two of them in flight */
    fake_init(&f[0], 0, 30L * b, 1);
    fdet_init(&d, f, 1, b);
    d.async = 1;
    c = config(&d, ps);
    TL_CHECK(strix_pipe_run(&c, st, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(st[0].batches == 30 && d.max_tickets == 2 && d.tickets_out == 0 && !f[0].why[0],
             "submit/collect: %ld calls for 30 batches, %d tickets out at most, %d left: %s", st[0].batches,
             d.max_tickets, d.tickets_out, f[0].why);

    for (int k = 0; k < 2; k++) {
        fake_init(&f[k], k, 10L * b, 1);
        f[k].read_sleep_ns = 500000; /* 0.5 ms a frame: the detector waits for both */
    }
    fdet_init(&d, f, 2, b);
    c = config(&d, ps);
    TL_CHECK(strix_pipe_run(&c, st, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(d.mixed_calls > 0 && st[0].frames == f[0].n && st[1].frames == f[1].n,
             "two streams of %ld frames, batch %d: %ld detect calls, %ld of them mixing the streams", f[0].n, b,
             d.calls, d.mixed_calls);
}

/* Memory: the slot states (all the pixel memory) stay a fixed pool however
 * many frames flow. */
static void test_pipe_flat_memory(void)
{
    int b = tl_int(1, 4), s = tl_int(1, 3);
    int slots[2], allocs[2];
    long n[2] = {50, 20000};
    for (int k = 0; k < 2; k++) {
        fake f;
        fdet d;
        fake_init(&f, 0, n[k], s);
        fdet_init(&d, &f, 1, b);
        strix_pipe_stream ps[1];
        strix_pipe_config c = config(&d, ps);
        strix_pipe_stats st;
        strix_error e;
        TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_OK, "%s", e.message);
        TL_CHECK(!f.why[0], "%s", f.why);
        slots[k] = st.slots;
        allocs[k] = f.allocs;
    }
    TL_CHECK(slots[0] == slots[1] && allocs[1] <= slots[1], "50 frames: %d slots; 20000 frames: %d slots, %d made",
             slots[0], slots[1], allocs[1]);
    TL_CHECK(slots[1] <= 7 * b + 1, "%d slots for batch %d", slots[1], b);
}

/* Memory with several streams: each stream's pool is sized for its part of
 * the batch, so all the pools together grow with the batch, not with
 * batch x streams (sized each as if alone, 8 streams of 1080p at batch 64
 * held 9.4 GB); and streams going at one pace still fill whole batches. */
static void test_pipe_shared_memory(void)
{
    for (int rep = 0; rep < 16; rep++) {
        int S = tl_int(1, MAX_STREAMS), b = tl_int(1, 64), m = rep % 2 ? 2 : 1; /* m: flushes in flight */
        fake f[MAX_STREAMS];
        fdet d;
        for (int k = 0; k < S; k++) fake_init(&f[k], k, tl_int(0, 3), 1);
        fdet_init(&d, f, S, b);
        d.async = m == 2;
        strix_pipe_stream ps[MAX_STREAMS];
        strix_pipe_config c = config(&d, ps);
        strix_pipe_stats st[MAX_STREAMS];
        strix_error e;
        TL_CHECK(strix_pipe_run(&c, st, &e) == STRIX_OK, "%s", e.message);
        long total = 0;
        for (int k = 0; k < S; k++) total += st[k].slots;
        /* a lone stream: its pending list and a batch each for its reader and writer */
        if (S == 1) TL_CHECK(total == (long)m * b + 2 * b + 1, "one stream, batch %d: %ld slots", b, total);
        TL_CHECK(total <= (long)m * (2 * b + 2 * S) + 2 * b + 3 * S, "%d streams, batch %d%s: %ld slots in all", S, b,
                 m == 2 ? ", submit/collect" : "", total);
    }

    int S = tl_int(3, MAX_STREAMS), b = tl_int(S, 16);
    fake f[MAX_STREAMS];
    fdet d;
    for (int k = 0; k < S; k++) {
        fake_init(&f[k], k, 6L * b, 1);
        f[k].read_sleep_ns = 1000000; /* one pace: 1 ms a frame */
    }
    fdet_init(&d, f, S, b);
    strix_pipe_stream ps[MAX_STREAMS];
    strix_pipe_config c = config(&d, ps);
    strix_pipe_stats st[MAX_STREAMS];
    strix_error e;
    TL_CHECK(strix_pipe_run(&c, st, &e) == STRIX_OK, "%s", e.message);
    for (int k = 0; k < S; k++) TL_CHECK(!f[k].why[0] && st[k].frames == f[k].n, "stream %d: %s", k, f[k].why);
    /* 6 S full batches; a pending list sized for just the average part
     * flushes early whenever its stream runs ahead (53 calls for 36 seen) */
    TL_CHECK(d.calls <= 7L * S, "%d streams of %ld frames at one pace, batch %d: %ld detect calls for %d "
             "batches", S, f[0].n, b, d.calls, 6 * S);
}

/* Back-pressure: a slow writer holds its reader back (never more frames
 * read and unwritten than its pool), while a fast stream beside it runs
 * to its end. */
static void test_pipe_back_pressure(void)
{
    fake f[2];
    fdet d;
    fake_init(&f[0], 0, 300, 1);
    fake_init(&f[1], 1, 300, tl_int(1, 3));
    f[0].write_sleep_ns = 300000; /* 0.3 ms a frame: 90 ms in all */
    fdet_init(&d, f, 2, tl_int(1, 4));
    strix_pipe_stream ps[2];
    strix_pipe_config c = config(&d, ps);
    strix_pipe_stats st[2];
    strix_error e;
    TL_CHECK(strix_pipe_run(&c, st, &e) == STRIX_OK, "%s", e.message);
    for (int k = 0; k < 2; k++) {
        TL_CHECK(!f[k].why[0], "%s", f[k].why);
        TL_CHECK(st[k].frames == 300, "stream %d: %ld frames of 300", k, st[k].frames);
        TL_CHECK(atomic_load(&f[k].max_in_flight) <= st[k].slots && f[k].allocs <= st[k].slots,
                 "stream %d: %ld frames in flight at once, %d slot states, %d slots", k,
                 atomic_load(&f[k].max_in_flight), f[k].allocs, st[k].slots);
    }
}

/* --realtime: a detector ten times slower than the reader; frames are
 * dropped (late), never queued: the writer sees read frames in increasing
 * order, the last one read among them, and nothing is lost unaccounted. */
static void test_pipe_realtime(void)
{
    for (int rep = 0; rep < 6; rep++) {
        fake f;
        fdet d;
        fake_init(&f, 0, 400, 1);
        f.realtime = 1;
        f.jitter = rep % 2;
        f.read_sleep_ns = 50000; /* 0.05 ms a frame */
        fdet_init(&d, &f, 1, tl_int(1, 3));
        d.async = rep >= 3;
        d.sleep_ns = 500000; /* 0.5 ms a call */
        strix_pipe_stream ps[1];
        strix_pipe_config c = config(&d, ps);
        strix_pipe_stats st;
        strix_error e;
        TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_OK, "%s", e.message);
        TL_CHECK(!f.why[0] && !d.detect_bad, "%s%s", f.why, d.why);
        TL_CHECK(st.late > 0 && st.frames > 0, "batch %d: %ld late, %ld written of 400", d.batch, st.late, st.frames);
        TL_CHECK(st.frames + st.late == 400, "%ld written + %ld late, 400 read", st.frames, st.late);
        TL_CHECK(atomic_load(&f.next_written) == 400, "the newest frame was not written (last: %ld)",
                 atomic_load(&f.next_written) - 1);
        TL_CHECK(f.allocs <= st.slots, "%d slot states, %d slots", f.allocs, st.slots);
    }
}

/* A failure in each stage: that stage's status and message come back, the
 * run ends (no hang), every slot state is released; a reader or writer
 * failure leaves the other streams whole, a detection failure stops all. */
static void test_pipe_failures(void)
{
    for (int stage = STRIX_PIPE_READ; stage <= STRIX_PIPE_WRITE; stage++)
        for (int rep = 0; rep < 8; rep++) {
            int S = rep < 4 ? 1 : tl_int(2, MAX_STREAMS);
            fake f[MAX_STREAMS];
            fdet d;
            for (int k = 0; k < S; k++) {
                fake_init(&f[k], k, tl_int(1, 120), stage == STRIX_PIPE_DETECT ? 1 : tl_int(1, 3));
                f[k].jitter = rep % 2;
            }
            fdet_init(&d, f, S, tl_int(1, 5));
            d.jitter = rep % 2;
            d.async = rep % 4 >= 2;
            long at = tl_int(0, (int)f[0].n - 1);
            if (stage == STRIX_PIPE_READ) f[0].fail_read_at = at;
            if (stage == STRIX_PIPE_DETECT) d.fail_detect_at = at;
            if (stage == STRIX_PIPE_WRITE) f[0].fail_write_at = at;
            strix_pipe_stream ps[MAX_STREAMS];
            strix_pipe_config c = config(&d, ps);
            strix_pipe_stats st[MAX_STREAMS];
            strix_error e;
            strix_status s = strix_pipe_run(&c, st, &e);
            strix_status want = stage == STRIX_PIPE_DETECT ? STRIX_E_DEVICE : STRIX_E_IO;
            TL_CHECK(s == want && e.status == want, "stage %d failing at %ld: status %d", stage, at, s);
            TL_CHECK(st[0].failed == (strix_pipe_stage)stage, "stage %d failed, stats say %d", stage, st[0].failed);
            TL_CHECK(strstr(e.message, "failed at") != NULL && !strcmp(e.message, st[0].error.message),
                     "message '%s'", e.message);
            TL_CHECK(st[0].frames <= at, "%ld frames written after a failure at %ld", st[0].frames, at);
            TL_CHECK(d.tickets_out == 0, "%d tickets not given back after a failure", d.tickets_out);
            TL_CHECK(d.ticket_bad != 2, "stage %d failing at %ld: pixels changed while their batch was in flight",
                     stage, at);
            for (int k = 0; k < S; k++)
                TL_CHECK(!atomic_load(&f[k].reused), "stage %d failing at %ld: stream %d's slot read into in flight",
                         stage, at, k);
            for (int k = 0; k < S; k++) {
                TL_CHECK(!f[k].why[0], "%s", f[k].why);
                TL_CHECK(f[k].releases == f[k].allocs, "stream %d: %d of %d slot states released", k,
                         f[k].releases, f[k].allocs);
                if (k && stage != STRIX_PIPE_DETECT)
                    TL_CHECK(st[k].failed == STRIX_PIPE_NONE && st[k].frames == f[k].n,
                             "stream %d beside a failed one: stage %d failed, %ld of %ld frames", k, st[k].failed,
                             st[k].frames, f[k].n);
                if (k && stage == STRIX_PIPE_DETECT)
                    TL_CHECK(st[k].failed == STRIX_PIPE_DETECT, "stream %d: not stopped by a detection failure", k);
            }
        }
}

/* Placeholders (skip) among the frames, with strides, several streams and
 * both detect paths: each reaches its writer in its place with no
 * detections, is never detected, and the frames after it carry the last
 * detected frame's detections; a detected frame carries its share of its
 * call's time (each call sleeps 0.2 ms). */
static void test_pipe_skip(void)
{
    for (int rep = 0; rep < 12; rep++) {
        int S = rep < 4 ? 1 : tl_int(2, MAX_STREAMS);
        fake f[MAX_STREAMS];
        fdet d;
        fdet_init(&d, f, S, tl_int(1, 5));
        d.jitter = rep % 2;
        d.async = rep % 4 >= 2;
        d.sleep_ns = 200000;
        for (int k = 0; k < S; k++) {
            fake_init(&f[k], k, tl_int(1, 80), tl_int(1, 3));
            f[k].skip_mod = tl_int(3, 6);
            f[k].jitter = rep % 2;
            f[k].width = 4 + k % 2;
            f[k].min_detect_ms = 0.2 / d.batch;
        }
        strix_pipe_stream ps[MAX_STREAMS];
        strix_pipe_config c = config(&d, ps);
        strix_pipe_stats st[MAX_STREAMS];
        strix_error e;
        strix_status s = strix_pipe_run(&c, st, &e);
        TL_CHECK(s == STRIX_OK, "status %d: %s", s, e.message);
        TL_CHECK(!d.detect_bad, "detect saw %d: %s", d.detect_bad, d.why);
        TL_CHECK(!d.ticket_bad, "submit/collect: ticket problem %d", d.ticket_bad);
        for (int k = 0; k < S; k++) {
            TL_CHECK(!atomic_load(&f[k].reused), "stream %d: a slot read into while in flight", k);
            long want_inf = 0;
            for (long i = 0; i < f[k].n; i += f[k].stride) want_inf += !is_skip(&f[k], i);
            TL_CHECK(!f[k].why[0], "stream %d, batch %d, stride %d, skip_mod %d%s: %s", k, d.batch, f[k].stride,
                     f[k].skip_mod, d.async ? ", submit/collect" : "", f[k].why);
            TL_CHECK(st[k].frames == f[k].n && st[k].inferred == want_inf && st[k].dropped == 0,
                     "stream %d: %ld of %ld frames written, %ld detected (want %ld), %ld dropped", k, st[k].frames,
                     f[k].n, st[k].inferred, want_inf, st[k].dropped);
        }
    }
}

/* A stop (config.stop, here once stream 0 wrote a few frames): the run ends
 * early and cleanly: what was detected is written in order, the rest read
 * is dropped, every frame read is one or the other, every slot released;
 * without a stop nothing is dropped. */
static void test_pipe_stop(void)
{
    for (int rep = 0; rep < 12; rep++) {
        int S = rep < 4 ? 1 : tl_int(2, MAX_STREAMS);
        fake f[MAX_STREAMS];
        fdet d;
        fdet_init(&d, f, S, tl_int(1, 5));
        d.jitter = rep % 2;
        d.async = rep % 4 >= 2;
        d.stop_after = tl_int(0, 20);
        for (int k = 0; k < S; k++) {
            fake_init(&f[k], k, 100000, tl_int(1, 3));
            f[k].jitter = rep % 2;
            f[k].skip_mod = rep % 3 ? 0 : 5;
        }
        strix_pipe_stream ps[MAX_STREAMS];
        strix_pipe_config c = config(&d, ps);
        strix_pipe_stats st[MAX_STREAMS];
        strix_error e;
        strix_status s = strix_pipe_run(&c, st, &e);
        TL_CHECK(s == STRIX_OK, "status %d: %s", s, e.message);
        TL_CHECK(d.tickets_out == 0, "%d tickets not given back after a stop", d.tickets_out);
        TL_CHECK(d.ticket_bad != 2, "a stop: pixels changed while their batch was in flight");
        for (int k = 0; k < S; k++)
            TL_CHECK(!atomic_load(&f[k].reused), "a stop: stream %d's slot read into while in flight", k);
        for (int k = 0; k < S; k++) {
            long read = atomic_load(&f[k].produced);
            TL_CHECK(!f[k].why[0], "stream %d: %s", k, f[k].why);
            TL_CHECK(st[k].frames + st[k].dropped == read && read < f[k].n,
                     "stream %d, stop after %ld: %ld written + %ld dropped, %ld read of %ld", k, d.stop_after,
                     st[k].frames, st[k].dropped, read, f[k].n);
            TL_CHECK(k || st[k].frames >= d.stop_after, "stream 0: %ld written, the stop came after %ld",
                     st[k].frames, d.stop_after);
            TL_CHECK(f[k].releases == f[k].allocs, "stream %d: %d of %d slot states released", k, f[k].releases,
                     f[k].allocs);
        }
    }
}

static void test_pipe_bad_config(void)
{
    fake f;
    fdet d;
    fake_init(&f, 0, 3, 1);
    fdet_init(&d, &f, 1, 1);
    strix_pipe_stream ps[1];
    strix_pipe_config c = config(&d, ps);
    strix_pipe_stats st;
    strix_error e;
    c.batch = 0;
    TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_E_ARG, "batch 0 accepted");
    c = config(&d, ps);
    ps[0].write = NULL;
    TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_E_ARG, "no writer accepted");
    c = config(&d, ps);
    c.n_streams = 0;
    TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_E_ARG, "no stream accepted");
    TL_CHECK(atomic_load(&f.produced) == 0, "frames read despite a bad configuration");
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(test_pipe_order_batch_stride);
    TL_RUN(test_pipe_full_batches);
    TL_RUN(test_pipe_flat_memory);
    TL_RUN(test_pipe_shared_memory);
    TL_RUN(test_pipe_back_pressure);
    TL_RUN(test_pipe_realtime);
    TL_RUN(test_pipe_failures);
    TL_RUN(test_pipe_skip);
    TL_RUN(test_pipe_stop);
    TL_RUN(test_pipe_bad_config);
    TL_MAIN_END();
}
