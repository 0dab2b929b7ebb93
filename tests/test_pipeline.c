/* test_pipeline.c — the three-thread frame pipeline (tools/infer/pipeline.h)
 * with fake reader, detector and writer: every frame reaches the writer
 * once, in order; batches never exceed --batch; with a stride only every
 * s-th frame is detected and the others carry its detections; the class
 * filter applies; a failure in any stage stops the run with that stage's
 * error and no hang; the frame memory is a fixed pool however long the
 * stream.  Random sizes and random sleeps shake the thread interleavings.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/infer/pipeline.h"
#include "testlib.h"

enum { MAX_PER_FRAME = 4, N_CLASSES = 7 };

typedef struct fake {
    long n;             /* frames to produce */
    long produced;
    long fail_read_at;  /* -1: never */
    long fail_detect_at;
    long fail_write_at;
    int batch, stride, jitter;
    /* reader thread */
    int allocs;
    uint64_t rng_r;
    /* detect (calling thread) */
    strix_detection out[64 * MAX_PER_FRAME];
    long next_inferred, max_batch;
    int detect_bad;     /* first inconsistency seen by detect, as a code */
    uint64_t rng_d;
    /* writer thread */
    long next_written;
    int write_bad;
    char why[256];
    uint64_t rng_w;
    /* release (calling thread, after the join) */
    int releases;
} fake;

typedef struct slot_state {
    uint8_t px[4 * 2 * 3]; /* a 4x2 RGB frame; the first pixel holds the index */
    long index;
} slot_state;

static uint64_t step(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 31);
}

static void maybe_sleep(fake *f, uint64_t *rng)
{
    if (!f->jitter) return;
    uint64_t r = step(rng) % 8;
    if (r < 3) {
        struct timespec t = {0, (long)(r * 40000)};
        nanosleep(&t, NULL);
    }
}

static long px_index(const uint8_t *p) { return (long)p[0] | (long)p[1] << 8 | (long)p[2] << 16; }

/* What detect reports for frame i: i % MAX_PER_FRAME boxes, classes i+k. */
static int fake_count(long i) { return (int)(i % MAX_PER_FRAME); }
static int fake_class(long i, int k) { return (int)((i + k) % N_CLASSES); }

static int fake_read(void *ctx, strix_pipe_frame *fr, strix_error *err)
{
    fake *f = ctx;
    maybe_sleep(f, &f->rng_r);
    if (f->produced == f->fail_read_at) {
        err->status = STRIX_E_IO;
        snprintf(err->message, sizeof err->message, "read failed at %ld", f->produced);
        return -1;
    }
    if (f->produced >= f->n) return 0;
    slot_state *s = fr->user;
    if (!s) {
        if (!(s = fr->user = calloc(1, sizeof *s))) return -1;
        f->allocs++;
    }
    long i = f->produced++;
    s->index = i;
    s->px[0] = (uint8_t)i;
    s->px[1] = (uint8_t)(i >> 8);
    s->px[2] = (uint8_t)(i >> 16);
    fr->rgb = s->px;
    fr->width = 4;
    fr->height = 2;
    fr->stride = 12;
    return 1;
}

static strix_status fake_detect(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err)
{
    fake *f = ctx;
    maybe_sleep(f, &f->rng_d);
    if (n > f->max_batch) f->max_batch = n;
    if (n > f->batch && !f->detect_bad) f->detect_bad = 1;
    for (int j = 0; j < n; j++) {
        long i = px_index(im[j].data);
        if (i == f->fail_detect_at) {
            err->status = STRIX_E_DEVICE;
            snprintf(err->message, sizeof err->message, "detect failed at %ld", i);
            return STRIX_E_DEVICE;
        }
        if (i != f->next_inferred && !f->detect_bad) f->detect_bad = 2;
        f->next_inferred = i + f->stride;
        strix_detection *d = f->out + j * MAX_PER_FRAME;
        for (int k = 0; k < fake_count(i); k++)
            d[k] = (strix_detection){(float)i, (float)k, (float)i + 1, (float)k + 1, 1.0f - 0.1f * k, fake_class(i, k)};
        out[j].count = fake_count(i);
        out[j].items = d;
    }
    return STRIX_OK;
}

static int fake_write(void *ctx, strix_pipe_frame *fr, strix_error *err)
{
    fake *f = ctx;
    maybe_sleep(f, &f->rng_w);
    long i = fr->index;
    if (i == f->fail_write_at) {
        err->status = STRIX_E_IO;
        snprintf(err->message, sizeof err->message, "write failed at %ld", i);
        return -1;
    }
    if (f->write_bad) return 0;
    const slot_state *s = fr->user;
    long src = i - i % f->stride; /* the frame whose detections this one carries */
    int want = fake_count(src);
    if (i != f->next_written) snprintf(f->why, sizeof f->why, "frame %ld arrived, expected %ld", i, f->next_written);
    else if (s->index != i || px_index(fr->rgb) != i) snprintf(f->why, sizeof f->why, "frame %ld has the pixels of %ld", i, s->index);
    else if (fr->inferred != (i % f->stride == 0)) snprintf(f->why, sizeof f->why, "frame %ld: inferred=%d", i, fr->inferred);
    else if (fr->n_dets != want) snprintf(f->why, sizeof f->why, "frame %ld: %d detections, want %d", i, fr->n_dets, want);
    for (int k = 0; !f->why[0] && k < fake_count(src); k++) {
        const strix_detection *d = &fr->dets[k];
        if (d->x1 != (float)src || d->y1 != (float)k || d->class_id != fake_class(src, k))
            snprintf(f->why, sizeof f->why, "frame %ld: detection %d is not frame %ld's box %d", i, k, src, k);
    }
    if (f->why[0]) f->write_bad = 1;
    f->next_written = i + 1;
    return 0;
}

static void fake_release(void *ctx, void *user)
{
    fake *f = ctx;
    f->releases++;
    free(user);
}

static void fake_init(fake *f, long n, int batch, int stride)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->batch = batch;
    f->stride = stride;
    f->fail_read_at = f->fail_detect_at = f->fail_write_at = -1;
    f->rng_r = tl_u64();
    f->rng_d = tl_u64();
    f->rng_w = tl_u64();
}

static strix_pipe_config config(fake *f)
{
    strix_pipe_config c;
    memset(&c, 0, sizeof c);
    c.batch = f->batch;
    c.vid_stride = f->stride;
    c.max_det = MAX_PER_FRAME;
    c.ctx = f;
    c.read = fake_read;
    c.detect = fake_detect;
    c.write = fake_write;
    c.release = fake_release;
    return c;
}

static void test_pipe_order_batch_stride(void)
{
    for (int rep = 0; rep < 12; rep++) {
        fake f;
        fake_init(&f, tl_int(0, 160), tl_int(1, 6), tl_int(1, 5));
        f.jitter = rep % 3 != 0;
        strix_pipe_config c = config(&f);
        strix_pipe_stats st;
        strix_error e;
        strix_status s = strix_pipe_run(&c, &st, &e);
        TL_CHECK(s == STRIX_OK, "n=%ld batch=%d stride=%d: status %d: %s", f.n, f.batch, f.stride, s, e.message);
        TL_CHECK(!f.why[0], "n=%ld batch=%d stride=%d: %s", f.n, f.batch, f.stride, f.why);
        TL_CHECK(!f.detect_bad, "n=%ld batch=%d stride=%d: detect saw %s", f.n, f.batch, f.stride,
                 f.detect_bad == 1 ? "a batch above --batch" : "frames out of order or skipped");
        long want_inf = (f.n + f.stride - 1) / f.stride;
        TL_CHECK(st.frames == f.n && f.next_written == f.n, "%ld frames written of %ld", st.frames, f.n);
        TL_CHECK(st.inferred == want_inf, "%ld frames detected, want %ld", st.inferred, want_inf);
        TL_CHECK(f.max_batch <= f.batch, "a batch of %ld with --batch %d", f.max_batch, f.batch);
        TL_CHECK(f.allocs <= st.slots && f.releases == f.allocs, "%d slot states made, %d released, %d slots",
                 f.allocs, f.releases, st.slots);
        TL_CHECK(st.failed == STRIX_PIPE_NONE, "failed stage %d on success", st.failed);
    }
}

/* Full batches when the stream allows: stride 1, n a multiple of batch. */
static void test_pipe_full_batches(void)
{
    fake f;
    int b = tl_int(2, 6);
    fake_init(&f, 30L * b, b, 1);
    strix_pipe_config c = config(&f);
    strix_pipe_stats st;
    strix_error e;
    TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(st.batches == 30 && f.max_batch == b, "%ld detect calls for 30 batches of %d (largest %ld)", st.batches,
             b, f.max_batch);
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
        fake_init(&f, n[k], b, s);
        strix_pipe_config c = config(&f);
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

/* A failure in each stage: that stage's status and message come back, the
 * run ends (no hang), every slot state is released. */
static void test_pipe_failures(void)
{
    for (int stage = STRIX_PIPE_READ; stage <= STRIX_PIPE_WRITE; stage++)
        for (int rep = 0; rep < 4; rep++) {
            fake f;
            fake_init(&f, tl_int(1, 120), tl_int(1, 5), stage == STRIX_PIPE_DETECT ? 1 : tl_int(1, 3));
            f.jitter = rep % 2;
            long at = tl_int(0, (int)f.n - 1);
            if (stage == STRIX_PIPE_READ) f.fail_read_at = at;
            if (stage == STRIX_PIPE_DETECT) f.fail_detect_at = at;
            if (stage == STRIX_PIPE_WRITE) f.fail_write_at = at;
            strix_pipe_config c = config(&f);
            strix_pipe_stats st;
            strix_error e;
            strix_status s = strix_pipe_run(&c, &st, &e);
            strix_status want = stage == STRIX_PIPE_DETECT ? STRIX_E_DEVICE : STRIX_E_IO;
            TL_CHECK(s == want && e.status == want, "stage %d failing at %ld: status %d", stage, at, s);
            TL_CHECK(st.failed == (strix_pipe_stage)stage, "stage %d failed, stats say %d", stage, st.failed);
            TL_CHECK(strstr(e.message, "failed at") != NULL, "message '%s'", e.message);
            TL_CHECK(st.frames <= at, "%ld frames written after a failure at %ld", st.frames, at);
            TL_CHECK(!f.why[0], "%s", f.why);
            TL_CHECK(f.releases == f.allocs, "%d of %d slot states released", f.releases, f.allocs);
        }
}

static void test_pipe_bad_config(void)
{
    fake f;
    fake_init(&f, 3, 1, 1);
    strix_pipe_config c = config(&f);
    strix_pipe_stats st;
    strix_error e;
    c.batch = 0;
    TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_E_ARG, "batch 0 accepted");
    c = config(&f);
    c.write = NULL;
    TL_CHECK(strix_pipe_run(&c, &st, &e) == STRIX_E_ARG, "no writer accepted");
    TL_CHECK(f.produced == 0, "frames read despite a bad configuration");
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(test_pipe_order_batch_stride);
    TL_RUN(test_pipe_full_batches);
    TL_RUN(test_pipe_flat_memory);
    TL_RUN(test_pipe_failures);
    TL_RUN(test_pipe_bad_config);
    TL_MAIN_END();
}
