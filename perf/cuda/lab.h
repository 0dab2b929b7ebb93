/* lab.h — what the kernel lab's programs (perf/cuda/NAME_lab.c) share: the
 * common options, the seeded random numbers, fp16 bits on the host, the
 * "no CUDA device" exit, CUDA-event timing (warm-up, then the median of
 * --runs launches) and, for the data-movement labs (pool, resize,
 * letterbox), the exact check, a model node's views laid out as the backend
 * lays them out (lab_layout) and the loops that check every case and time
 * the model's (lab_family).
 *
 * The exact check (lab_span): one host copy of a device buffer holding every
 * view an op reads and writes.  Everything outside the inputs starts as NaN
 * poison (all bytes 0xff: an fp16 and an fp32 NaN), the inputs as random
 * values representable in the dtype.  The CPU op runs in place on the fp32
 * copy; the expected device bytes are the initial ones with every output
 * element replaced by the CPU's value in the dtype.  A version passes when
 * the whole buffer comes back equal to that byte for byte: each output
 * written with the CPU's value, nothing else touched.  That is the right
 * bound only for ops that move or pick values (max-pool, upsample, copy,
 * the letterbox's exact integer arithmetic).
 *
 * A lab defines LAB_NAME (its program name, for messages) before including
 * this header.  Exit status of every lab: 0 ok, 1 a check failed, 2 usage,
 * 8 out of memory (host), 9 no CUDA device or a CUDA call failed. */
#ifndef STRIX_LAB_H
#define STRIX_LAB_H

#include <cuda_runtime.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench_util.h"
#include "kernels/kernels.h"
#include "model_internal.h" /* the model's program and plan: the views a node reads and writes */
#include "tools/exitcodes.h"

#ifndef LAB_NAME
#error "define LAB_NAME (the lab's program name) before including lab.h"
#endif

#define LAB_PEAK_TFLOPS 989.0 /* H100 SXM dense fp16 with fp32 accumulation, datasheet */
#define LAB_PEAK_GBS 3350.0   /* H100 SXM HBM3, datasheet */
#define LAB_MAX_VERSIONS 8
#define LAB_MAX_VIEWS 10      /* views of one op: an SPPF cascade's input and up to 8 outputs */

#define CU(call)                                                                                     \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, LAB_NAME ": %s: %s (line %d)\n", #call, cudaGetErrorString(e_), __LINE__); \
            exit(EXIT_DEVICE);                                                                       \
        }                                                                                            \
    } while (0)

static inline void *lab_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, LAB_NAME ": out of memory (%zu bytes)\n", bytes);
        exit(EXIT_NOMEM);
    }
    return p;
}

/* ---- random numbers: xorshift64*, one stream per program, seeded by --seed */
static uint64_t lab_rng = 0x9E3779B97F4A7C15ULL;

static inline void lab_seed(uint64_t seed) { lab_rng = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL; }

static inline uint64_t lab_next(void)
{
    if (!lab_rng) lab_rng = 0x9E3779B97F4A7C15ULL;
    lab_rng ^= lab_rng >> 12, lab_rng ^= lab_rng << 25, lab_rng ^= lab_rng >> 27;
    return lab_rng * 0x2545F4914F6CDD1DULL;
}

/* uniform in [lo, hi) */
static inline float lab_uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)(lab_next() >> 40) / 16777216.0f;
}

/* uniform integer in [lo, hi] */
static inline int lab_int(int lo, int hi) { return lo + (int)(lab_next() % (uint64_t)(hi - lo + 1)); }

/* ---- fp16 bits on the host: fp32 -> fp16 (round to nearest even) and back,
 * so a CPU reference sees exactly the device's inputs. */
static inline uint16_t lab_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ex = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (ex == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)ex - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static inline float lab_from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, ex = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
    if (ex == 0) {
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    x = ex == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((ex - 15 + 127) << 23) | (man << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static inline size_t lab_esz(strix_dtype dt) { return dt == STRIX_F16 ? 2 : 4; }
static inline const char *lab_dtype_name(strix_dtype dt) { return dt == STRIX_F16 ? "fp16" : "fp32"; }

/* ---- options every lab takes */
typedef struct lab_opts {
    const char *yaml; /* --model: the model whose shapes are timed */
    char scale;       /* --scale */
    int imgsz;        /* --imgsz */
    int batch;        /* --batch: the timing batch */
    int check_batch;  /* --check-batch: the model's shapes are checked at this batch */
    int runs;         /* --runs: timed launches, the median reported */
    int random;       /* --random: random shapes checked besides the model's */
    uint64_t seed;    /* --seed: of every random shape and value */
    int on[LAB_MAX_VERSIONS + 1]; /* --versions */
    int no_model;     /* set by a lab that reads no model: --model, --scale, --check-batch refused */
} lab_opts;

#define LAB_OPTS_USAGE                                                                                 \
    "[--model YAML] [--scale n|s|m|l|x] [--imgsz N] [--batch N] [--check-batch N] [--runs N]\n"        \
    "        [--random N] [--seed S]"

/* "1,3" -> on[1] = on[3] = 1 (versions 1..n); 0 when malformed. */
static inline int lab_parse_versions(const char *s, int n, int *on)
{
    memset(on, 0, (LAB_MAX_VERSIONS + 1) * sizeof *on);
    if (!*s) return 0;
    for (const char *p = s; *p;) {
        if (*p < '1' || *p > '0' + n) return 0;
        on[*p - '0'] = 1;
        p++;
        if (*p == ',') p++;
        else if (*p) return 0;
    }
    return 1;
}

/* Defaults: yolov8n at 640, batch 64, check batch 2, 20 runs, the given
 * random-shape count, every one of n versions, the seed from the clock. */
static inline void lab_opts_init(lab_opts *o, int n_versions, int random)
{
    memset(o, 0, sizeof *o);
    o->yaml = "weights/yolov8.yaml";
    o->scale = 'n';
    o->imgsz = 640;
    o->batch = 64;
    o->check_batch = 2;
    o->runs = 20;
    o->random = random;
    o->seed = (uint64_t)time(NULL);
    for (int v = 1; v <= n_versions; v++) o->on[v] = 1;
}

/* Option a with value v (may be NULL) if it is one of LAB_OPTS_USAGE or
 * --versions: 1 taken (v consumed), -1 a bad or missing value, 0 not one. */
static inline int lab_opt(const char *a, const char *v, lab_opts *o, int n_versions)
{
    static const char *const known[] = {"--model", "--scale",  "--imgsz", "--batch",   "--check-batch",
                                        "--runs",  "--random", "--seed",  "--versions"};
    int k = 0;
    while (k < (int)(sizeof known / sizeof *known) && strcmp(a, known[k])) k++;
    if (k == (int)(sizeof known / sizeof *known) || (o->no_model && (k <= 1 || k == 4))) return 0;
    if (!v) return -1;
    switch (k) {
    case 0: o->yaml = v; return 1;
    case 1: return strlen(v) == 1 && strchr("nslmx", *v) ? (o->scale = *v, 1) : -1;
    case 2: return parse_int(v, 32, 4096, &o->imgsz) && o->imgsz % 32 == 0 ? 1 : -1;
    case 3: return parse_int(v, 1, 1024, &o->batch) ? 1 : -1;
    case 4: return parse_int(v, 1, 16, &o->check_batch) ? 1 : -1;
    case 5: return parse_int(v, 1, 10000, &o->runs) ? 1 : -1;
    case 6: return parse_int(v, 0, 1000000, &o->random) ? 1 : -1;
    case 7: {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(v, &end, 10);
        if (!*v || *v == '-' || *end || errno) return -1;
        o->seed = (uint64_t)s;
        return 1;
    }
    default: return lab_parse_versions(v, n_versions, o->on) ? 1 : -1;
    }
}

/* The device's properties, or exit 9 with one line when there is none. */
static inline void lab_device(struct cudaDeviceProp *prop)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, LAB_NAME ": no CUDA device: run it on a machine with an NVIDIA GPU\n");
        exit(EXIT_DEVICE);
    }
    CU(cudaGetDeviceProperties(prop, 0));
}

/* A data-movement lab's start: o's defaults (n versions, `random` random
 * shapes; no_model: a lab that reads no model), the arguments (exit 2 with
 * the usage on a bad one), then the device (exit 9 without one). */
static inline void lab_start(int argc, char **argv, lab_opts *o, int n_versions, int random, int no_model,
                             struct cudaDeviceProp *prop)
{
    lab_opts_init(o, n_versions, random);
    o->no_model = no_model;
    for (int i = 1; i < argc; i += 2)
        if (lab_opt(argv[i], i + 1 < argc ? argv[i + 1] : NULL, o, n_versions) != 1) {
            fprintf(stderr, "usage: " LAB_NAME " %s [--versions 1", no_model ? "[--imgsz N] [--batch N] [--runs N]\n"
                            "        [--random N] [--seed S]" : LAB_OPTS_USAGE);
            for (int v = 2; v <= n_versions; v++) fprintf(stderr, ",%d", v);
            fprintf(stderr, "]\n");
            exit(EXIT_USAGE);
        }
    lab_device(prop);
}

/* The first line of a lab on a model's ops (what it checks and times, the
 * seed), and the random numbers seeded. */
static inline void lab_banner(const lab_opts *o, const struct cudaDeviceProp *prop, int n_ops, const char *ops)
{
    printf("# " LAB_NAME ": %s scale %c at %dx%d on %s (%d SMs); seed %" PRIu64 "; check: the model's %d %s at batch "
           "%d and %d random shapes, fp16 and fp32, exact; timing batch %d, median of %d\n",
           o->yaml, o->scale, o->imgsz, o->imgsz, prop->name, prop->multiProcessorCount, o->seed, n_ops, ops,
           o->check_batch, o->random, o->batch, o->runs);
    lab_seed(o->seed);
}

/* The last line, and the exit status: 1 when anything failed. */
static inline int lab_end(int failed)
{
    printf("%s: %d failed checks\n", failed ? "FAIL" : "ok", failed);
    return failed ? 1 : 0;
}

/* The model of o (its YAML and scale), or exit 2 with the loader's line. */
static inline strix_model *lab_model(const lab_opts *o)
{
    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.yaml_path = o->yaml;
    mo.scale = o->scale;
    strix_model *m;
    strix_error e;
    if (strix_model_load(&m, &mo, &e)) {
        fprintf(stderr, LAB_NAME ": %s\n", e.message);
        exit(EXIT_USAGE);
    }
    return m;
}

/* ---- running versions: `launch(ctx, v)` enqueues version v of the lab's
 * op on its case and returns the launcher's error, or LAB_NA when version
 * v does not take the case (it then enqueues nothing). */
#define LAB_NA (-1)
typedef int (*lab_launch_fn)(void *ctx, int version);

/* Three warm-up runs, then `runs` runs each between two CUDA events on st:
 * the median in ms; -1 when a launch failed, -2 for LAB_NA. */
static inline double lab_time(lab_launch_fn launch, void *ctx, int version, cudaStream_t st, int runs)
{
    for (int i = 0; i < 3; i++) {
        const int rc = launch(ctx, version);
        if (rc) return rc == LAB_NA ? -2 : -1;
    }
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    double *t = lab_alloc(runs * sizeof *t), med = -1;
    int r = 0;
    for (; r < runs; r++) {
        CU(cudaEventRecord(e0, st));
        if (launch(ctx, version)) break;
        CU(cudaEventRecord(e1, st));
        CU(cudaEventSynchronize(e1));
        float ms;
        CU(cudaEventElapsedTime(&ms, e0, e1));
        t[r] = ms;
    }
    if (r == runs) {
        qsort(t, runs, sizeof *t, cmp_double);
        med = t[runs / 2];
    }
    free(t);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return med;
}

/* GB/s of `bytes` moved in `ms`, and that as % of the H100's HBM rate. */
static inline double lab_gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0; }
static inline double lab_pct_hbm(double bytes, double ms) { return 100 * lab_gbs(bytes, ms) / LAB_PEAK_GBS; }

/* ---- the exact check's buffer (see the top of this file) */
typedef struct lab_span {
    strix_dtype dt;
    size_t len;    /* elements */
    float *host;   /* fp32 values: the inputs, then the CPU's outputs in place (NaN elsewhere) */
    void *init;    /* the device's starting bytes: poison, the inputs */
    void *want;    /* the expected bytes after a version ran */
    void *got;     /* what came back */
    void *dev;
} lab_span;

static inline void lab_span_make(lab_span *s, size_t len, strix_dtype dt)
{
    const size_t esz = lab_esz(dt);
    s->dt = dt;
    s->len = len;
    s->host = lab_alloc(len * sizeof(float));
    s->init = lab_alloc(len * esz);
    s->want = lab_alloc(len * esz);
    s->got = lab_alloc(len * esz);
    for (size_t i = 0; i < len; i++) s->host[i] = NAN;
    memset(s->init, 0xff, len * esz);
    CU(cudaMalloc(&s->dev, len * esz + 16));
}

static inline void lab_span_free(lab_span *s)
{
    free(s->host), free(s->init), free(s->want), free(s->got);
    cudaFree(s->dev);
    memset(s, 0, sizeof *s);
}

/* Offset from v->data of flat element i of v ([n, h, w, c] order). */
static inline size_t lab_view_elem(const strix_view *v, size_t i)
{
    const size_t c = i % (size_t)v->c, pix = i / (size_t)v->c, x = pix % (size_t)v->w, yn = pix / (size_t)v->w;
    return (yn / (size_t)v->h) * v->batch_stride + ((yn % (size_t)v->h) * (size_t)v->w + x) * v->pix_stride + c;
}

static inline size_t lab_view_count(const strix_view *v) { return (size_t)v->n * v->h * v->w * v->c; }

/* Element i of the span's device bytes b, set to f (exact for the dtype's values). */
static inline void lab_span_set(const lab_span *s, void *b, size_t i, float f)
{
    if (s->dt == STRIX_F16) ((uint16_t *)b)[i] = lab_to_half(f);
    else memcpy((float *)b + i, &f, 4);
}

/* Random values in [-range, range), rounded to the dtype, into view v (its
 * data points into s->host). */
static inline void lab_span_fill(lab_span *s, const strix_view *v, float range)
{
    const size_t base = (size_t)(v->data - s->host), total = lab_view_count(v);
    for (size_t i = 0; i < total; i++) {
        const size_t at = base + lab_view_elem(v, i);
        float f = lab_uniform(-range, range);
        if (s->dt == STRIX_F16) f = lab_from_half(lab_to_half(f));
        s->host[at] = f;
        lab_span_set(s, s->init, at, f);
    }
}

/* Call once the inputs are filled, before the CPU op runs on s->host. */
static inline void lab_span_start_expect(lab_span *s) { memcpy(s->want, s->init, s->len * lab_esz(s->dt)); }

/* The CPU op has written view v of s->host: expect its values there. */
static inline void lab_span_expect(lab_span *s, const strix_view *v)
{
    const size_t base = (size_t)(v->data - s->host), total = lab_view_count(v);
    for (size_t i = 0; i < total; i++) {
        const size_t at = base + lab_view_elem(v, i);
        lab_span_set(s, s->want, at, s->host[at]);
    }
}

/* The device view of host view v. */
static inline strix_dview lab_span_dview(const lab_span *s, const strix_view *v)
{
    strix_dview d = {(char *)s->dev + (size_t)(v->data - s->host) * lab_esz(s->dt), v->n, v->h, v->w, v->c,
                     v->pix_stride, v->batch_stride};
    return d;
}

/* Upload the starting bytes (poison and inputs) on st. */
static inline void lab_span_reset(lab_span *s, cudaStream_t st)
{
    CU(cudaMemcpyAsync(s->dev, s->init, s->len * lab_esz(s->dt), cudaMemcpyHostToDevice, st));
}

/* Download and compare with the expected bytes: the number of elements that
 * differ (0: the version passed), the first in *first. */
static inline size_t lab_span_compare(lab_span *s, cudaStream_t st, size_t *first)
{
    const size_t esz = lab_esz(s->dt);
    CU(cudaMemcpyAsync(s->got, s->dev, s->len * esz, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    size_t bad = 0;
    for (size_t i = 0; i < s->len; i++)
        if (memcmp((char *)s->got + i * esz, (char *)s->want + i * esz, esz) && !bad++) *first = i;
    return bad;
}

/* ---- a lab's cases and the loops over them.  A lab's case struct starts
 * with a lab_case; the family says how to lay a case out, run the CPU op on
 * it and count its bytes, and the driver below checks every case and times
 * the first `timed` ones. */
typedef struct lab_case {
    strix_dtype dt;
    cudaStream_t st;
    lab_span s;
} lab_case;

typedef struct lab_family {
    const lab_opts *o;
    int n_versions;
    const char *const *names;  /* names[1..n_versions] */
    lab_launch_fn launch;      /* launch(c, v) */
    const char *(*note)(void *c, int v); /* a remark for a timing line, or NULL */
    const char *shape_title;   /* the timing table's shape column */
    int fixed;                 /* cases 0..fixed-1 the lab's own (the model's ops), then o->random random ones */
    int timed;                 /* cases 0..timed-1 are timed */
    void *lab, *c;             /* the lab's state and its one case struct (a lab_case first) */
    /* Case k laid out in c for dtype dt, for the check (timing 0) or the
     * timing (1), its span made and its inputs filled; label: how failures
     * and the timing table name it, cols: its timing-table shape column. */
    void (*make)(struct lab_family *f, int k, strix_dtype dt, int timing, char *label, char *cols);
    /* The CPU op on c's span, each output passed to lab_span_expect; desc:
     * the case in a failure line. */
    void (*expect)(struct lab_family *f, char *desc, size_t cap);
    double (*bytes)(const void *c); /* the fewest bytes a run moves */
    void (*drop)(void *c);          /* frees what make made */
} lab_family;

enum { LAB_LABEL = 32, LAB_SHAPE = 64 };

/* Every case through every selected version that takes it, from its
 * starting bytes, against the expected ones; fp16, then fp32.  A failure
 * prints one FAIL line naming the case and the seed.  Returns the failures. */
static inline int lab_check_all(lab_family *f)
{
    const lab_opts *o = f->o;
    int failed = 0;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < f->fixed + o->random; k++) {
            char label[LAB_LABEL], cols[LAB_SHAPE], desc[192];
            f->make(f, k, d ? STRIX_F32 : STRIX_F16, 0, label, cols);
            lab_case *c = f->c;
            lab_span_start_expect(&c->s);
            f->expect(f, desc, sizeof desc);
            for (int v = 1; v <= f->n_versions; v++) {
                if (!o->on[v]) continue;
                lab_span_reset(&c->s, c->st);
                const int rc = f->launch(c, v);
                if (rc == LAB_NA) continue;
                size_t first = 0, bad = rc ? 0 : lab_span_compare(&c->s, c->st, &first);
                if (!rc && !bad) continue;
                if (rc)
                    printf("FAIL %s %s %s: launch error %d (%s) (seed %" PRIu64 ")\n", label, desc, f->names[v], rc,
                           cudaGetErrorString((cudaError_t)rc), o->seed);
                else
                    printf("FAIL %s %s %s: %zu of %zu elements differ from the CPU's, first at element %zu (seed %" PRIu64
                           ")\n", label, desc, f->names[v], bad, c->s.len, first, o->seed);
                cudaGetLastError();
                failed++;
            }
            f->drop(c);
        }
    return failed;
}

/* The timing table: cases 0..timed-1, fp16 and fp32, one line per version
 * that takes the case (lab_time's median; GB/s from f->bytes).  Returns the
 * launches that failed. */
static inline int lab_time_all(lab_family *f)
{
    const lab_opts *o = f->o;
    int failed = 0;
    printf("%-9s %-32s %-5s %-15s %9s %9s %8s\n", "op", f->shape_title, "dtype", "version", "ms", "GB/s", "%HBM");
    for (int k = 0; k < f->timed; k++)
        for (int d = 0; d < 2; d++) {
            char label[LAB_LABEL], cols[LAB_SHAPE];
            f->make(f, k, d ? STRIX_F32 : STRIX_F16, 1, label, cols);
            lab_case *c = f->c;
            lab_span_reset(&c->s, c->st);
            const double bytes = f->bytes(c);
            for (int v = 1; v <= f->n_versions; v++) {
                if (!o->on[v]) continue;
                const double ms = lab_time(f->launch, c, v, c->st, o->runs);
                if (ms == -2) continue;
                printf("%-9s %-32s %-5s %-15s ", label, cols, lab_dtype_name(c->dt), f->names[v]);
                if (ms < 0) {
                    failed++;
                    cudaGetLastError();
                    printf("FAIL launch\n");
                    continue;
                }
                printf("%9.4f %9.1f %7.1f%%%s\n", ms, lab_gbs(bytes, ms), lab_pct_hbm(bytes, ms),
                       f->note ? f->note(c, v) : "");
            }
            f->drop(c);
        }
    return failed;
}

/* ---- a node of the model's planned graph, laid out as the backend lays it
 * out: the views of `count` values, each a slice of its buffer, every buffer
 * placed once in one span (64-element aligned, in the order first named).
 * view[i].data is NULL until lab_layout_span. */
typedef struct lab_layout {
    int count;
    strix_view view[LAB_MAX_VIEWS];
    size_t off[LAB_MAX_VIEWS];
    size_t span;
} lab_layout;

/* Values vals[0..count) of m's program planned at batch n, imgsz x imgsz;
 * exits 2 when the plan fails (an image size the model cannot take). */
static inline void lab_layout_make(lab_layout *L, const strix_model *m, const int *vals, int count, int n, int imgsz)
{
    strix_plan pl;
    strix_error e;
    if (strix_plan_build(&pl, &m->prog, n, imgsz, imgsz, 1, &e)) {
        fprintf(stderr, LAB_NAME ": %s\n", e.message);
        exit(EXIT_USAGE);
    }
    int bufs[LAB_MAX_VIEWS];
    size_t buf_at[LAB_MAX_VIEWS];
    int n_bufs = 0;
    memset(L, 0, sizeof *L);
    L->count = count;
    for (int i = 0; i < count; i++) {
        size_t off;
        const int buf = m->prog.values[vals[i]].buf;
        L->view[i] = strix_plan_layout(&pl, &m->prog, vals[i], &off);
        int b = 0;
        while (b < n_bufs && bufs[b] != buf) b++;
        if (b == n_bufs) {
            bufs[n_bufs] = buf;
            buf_at[n_bufs++] = L->span;
            L->span += ((size_t)n * L->view[i].batch_stride + 63) / 64 * 64;
        }
        L->off[i] = buf_at[b] + (off - pl.buf_off[buf]);
    }
    strix_plan_free(&pl);
}

/* Whether views 0..count-1 of L are whole 16-byte channel groups of dtype
 * dt at 16-byte aligned offsets (strides included): the condition of the
 * vectorised kernels (pool.cu's sppf_vec_ok, resize.cu's vec16_ok), for a
 * span whose base cudaMalloc aligns. */
static inline int lab_layout_vec16(const lab_layout *L, int count, strix_dtype dt)
{
    const size_t ch = 16 / lab_esz(dt);
    for (int i = 0; i < count; i++) {
        const strix_view *v = &L->view[i];
        if (v->c % ch || v->pix_stride % ch || v->batch_stride % ch || L->off[i] % ch) return 0;
    }
    return 1;
}

/* The span of L in dtype dt, L's views pointed into its host copy, views
 * 0..inputs-1 (the op's inputs) filled with random values in [-4, 4). */
static inline void lab_layout_span(lab_layout *L, lab_span *s, strix_dtype dt, int inputs)
{
    lab_span_make(s, L->span, dt);
    for (int i = 0; i < L->count; i++) L->view[i].data = s->host + L->off[i];
    for (int i = 0; i < inputs; i++) lab_span_fill(s, &L->view[i], 4.0f);
}

#endif
