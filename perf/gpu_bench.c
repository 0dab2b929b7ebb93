/* gpu_bench.c — strix's GPU timings for tools/gpu-check.sh, one JSON object
 * per measurement (the row schema of perf/bench.c and make bench: tool,
 * model, device, dtype, batch, imgsz, mode, median_ms, p90_ms, min_ms,
 * mean_ms, images_per_s, runs, warmup, times_ms).  Modes:
 *
 *   forward  the forward with its input already on the device and the
 *            decoded head left there (the figure PyTorch users quote):
 *            graph replay, synchronised after each run; mode
 *            "forward-device".  Uses an internal hook of the CUDA backend
 *            (engine/cuda/backend.h), not the public API.
 *   detect   the public API as a program gets it: n uint8 frames (--frame
 *            WxH, random pixels) in host memory -> strix_model_detect ->
 *            boxes in host memory; mode "detect-WxH", plus dets_per_img.
 *   device   the same with the frames already in device memory
 *            (STRIX_DEVICE, pitched rows as NVDEC hands them out): what an
 *            NVDEC decode feeds the engine; mode "device-WxH".  CUDA only.
 *   pinned   the same with the frames in the model's page-locked frame
 *            memory (strix_model_alloc_pinned, STRIX_PINNED, one
 *            allocation: one copy per batch), DMA'd without the copy into
 *            the staging: what infer's video frames are with
 *            STRIX_CUDA_ASYNC=1; mode "pinned-WxH".
 *
 *   --pixels nv12 (detect, device, pinned): the frames as NV12 planes (a video
 *            decoder's output, converted on the device while letterboxing)
 *            instead of packed RGB; the mode gains "-nv12".
 *   --async (detect, device, pinned): the asynchronous API with the model option
 *            cuda_async: strix_model_submit / strix_batch_collect /
 *            strix_batch_release with STRIX_MAX_IN_FLIGHT (2) batches in
 *            flight, the next batch submitted before the oldest is
 *            collected; the mode gains "-async".  median_ms is then the
 *            steady-state period (time between successive collects, --runs
 *            of them), images_per_s the batch over that period,
 *            wall_images_per_s the images of all --runs batches over their
 *            wall time, and latency_*_ms submit to collect of one batch with
 *            none other in flight (--runs of them).
 *   layers   GPU time per YAML layer for the first --batch, from CUDA events
 *            around each layer of an eager forward (median of --runs), sorted,
 *            with the % of their sum; mode "layer", one row per layer.
 *   cold     process start (from /proc/self/stat) to the first detection
 *            of one --frame written to --out, with max RSS; mode
 *            "cold-start".  Run it as a fresh process.
 *
 *   build/perf/gpu_bench --mode forward|detect|device|pinned|layers|cold --model YAML
 *       --scale n --weights FILE [--name yolov8n] [--half] [--device cuda:0]
 *       [--batch 1,8,64,256] [--frame 1280x720] [--pixels rgb|nv12] [--async]
 *       [--runs 20] [--warmup 3] [--out FILE] [--json FILE]
 *
 * Weights: a safetensors file (the script writes synthetic ones with
 * build/mkweights, the same file the peers load).  Exit codes as every
 * strix tool (tools/exitcodes.h): 9 when there is no CUDA device or the
 * build has none.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "model_internal.h" /* the model's CUDA backend and YAML layers (internal hooks) */
#include "strix.h"
#include "tools/cudaenv.h"
#include "tools/exitcodes.h"
#ifdef STRIX_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/backend.h"
#endif

#define MAX_LIST 16
#define MAX_RUNS 1000

typedef struct opts {
    const char *mode, *yaml, *weights, *name, *device, *out, *json;
    char scale;
    int half, runs, warmup;
    int async; /* --async: submit/collect, two batches in flight (model option cuda_async) */
    int nv12;  /* --pixels nv12: frames as NV12 planes, else packed RGB */
    int kernels; /* model option cuda_kernels: --kernels, else STRIX_CUDA_KERNELS, else the default */
    int batches[MAX_LIST], n_batches;
    int fw, fh;
} opts;

static void usage(FILE *f)
{
    fprintf(f, "usage: gpu_bench --mode forward|detect|device|pinned|layers|cold --model YAML --scale n|s|m|l|x\n"
               "                 --weights FILE [--name NAME] [--half] [--device cuda[:N]] [--batch 1,8,64,256]\n"
               "                 [--frame WxH] [--pixels rgb|nv12] [--async] [--runs N] [--warmup N]\n"
               "                 [--out FILE] [--json FILE]\n"
               "                 [--kernels 1|2|3] (the CUDA kernel set; over STRIX_CUDA_KERNELS)\n"
               "  device: as detect, the frames already in device memory; pinned: as detect, the frames\n"
               "  in the model's page-locked frame memory (STRIX_PINNED); --async (detect, device, pinned):\n"
               "  two batches in flight through strix_model_submit, the model option cuda_async on\n"
               STRIX_CUDA_ENV_HELP STRIX_EXIT_CODES_HELP);
}

static int parse_list(const char *s, int *out, int *n)
{
    char buf[256], *save = NULL;
    if (strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    *n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (*n == MAX_LIST || !parse_int(t, 1, 4096, &out[(*n)++])) return 0;
    return *n > 0;
}

static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = "cuda";
    o->runs = 20, o->warmup = 3;
    o->batches[0] = 1, o->n_batches = 1;
    o->fw = 1280, o->fh = 720;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--half")) {
            o->half = 1;
            continue;
        }
        if (!strcmp(a, "--async")) {
            o->async = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gpu_bench: %s needs a value (see --help)\n", a);
            return 0;
        }
        const char *v = argv[++i];
        int ok = 1;
        if (!strcmp(a, "--mode")) o->mode = v;
        else if (!strcmp(a, "--model")) o->yaml = v;
        else if (!strcmp(a, "--scale")) ok = strlen(v) == 1 && strchr("nslmx", v[0]), o->scale = v[0];
        else if (!strcmp(a, "--weights")) o->weights = v;
        else if (!strcmp(a, "--name")) o->name = v;
        else if (!strcmp(a, "--device")) o->device = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--json")) o->json = v;
        else if (!strcmp(a, "--batch")) ok = parse_list(v, o->batches, &o->n_batches);
        else if (!strcmp(a, "--runs")) ok = parse_int(v, 1, MAX_RUNS, &o->runs);
        else if (!strcmp(a, "--warmup")) ok = parse_int(v, 0, MAX_RUNS, &o->warmup);
        else if (!strcmp(a, "--kernels")) ok = parse_int(v, 1, 3, &o->kernels);
        else if (!strcmp(a, "--pixels")) ok = !strcmp(v, "rgb") || !strcmp(v, "nv12"), o->nv12 = !strcmp(v, "nv12");
        else if (!strcmp(a, "--frame")) ok = sscanf(v, "%dx%d", &o->fw, &o->fh) == 2 && o->fw > 0 && o->fh > 0 &&
                                                o->fw <= 8192 && o->fh <= 8192;
        else {
            fprintf(stderr, "gpu_bench: unknown option %s (see --help)\n", a);
            return 0;
        }
        if (!ok) {
            fprintf(stderr, "gpu_bench: bad value '%s' for %s (see --help)\n", v, a);
            return 0;
        }
    }
    static const char *modes[] = {"forward", "detect", "device", "pinned", "layers", "cold"};
    int known = 0;
    for (size_t k = 0; o->mode && k < sizeof modes / sizeof *modes; k++) known |= !strcmp(o->mode, modes[k]);
    if (!known || !o->yaml || !o->weights || !o->scale) {
        fprintf(stderr, "gpu_bench: --mode (forward, detect, device, pinned, layers or cold), --model, --scale and --weights are required (see --help)\n");
        return 0;
    }
    if ((o->async || o->nv12) && strcmp(o->mode, "detect") && strcmp(o->mode, "device") && strcmp(o->mode, "pinned")) {
        fprintf(stderr, "gpu_bench: --async and --pixels apply to --mode detect, device and pinned only\n");
        return 0;
    }
    if (!strcmp(o->mode, "cold") && !o->out) {
        fprintf(stderr, "gpu_bench: --mode cold needs --out FILE (the detections it writes)\n");
        return 0;
    }
    if (!o->name) o->name = o->yaml;
    if (!o->kernels) { /* the set a model gets without the option: its default, or the environment's */
        strix_model_options mo;
        strix_model_options_init(&mo);
        strix_cuda_env_apply(&mo);
        o->kernels = mo.cuda_kernels;
    }
    return 1;
}

/* ---------------------------------------------------------------- output */

static FILE *json_open(const opts *o)
{
    if (!o->json || !strcmp(o->json, "-")) return stdout;
    FILE *f = fopen(o->json, "a");
    if (!f) fprintf(stderr, "gpu_bench: %s: cannot open for appending: %s\n", o->json, strerror(errno));
    return f;
}

/* The fields every row opens with; the caller adds its own and the closing brace. */
static void row_head(FILE *f, const opts *o, const char *mode, int batch)
{
    fprintf(f, "{\"tool\": \"strix\", \"model\": \"%s\", \"yaml\": \"%s\", \"scale\": \"%c\", \"device\": \"%s\", "
               "\"dtype\": \"%s\", \"batch\": %d, \"imgsz\": 640, \"mode\": \"%s\", \"kernels\": %d",
            o->name, o->yaml, o->scale, o->device, o->half ? "fp16" : "fp32", batch, mode, o->kernels);
}

/* Timing fields from n run times in ms (sorted in place). */
static void row_times(FILE *f, double *ms, int n, int warmup, int batch)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += ms[i];
    fprintf(f, ", \"runs\": %d, \"warmup\": %d, \"times_ms\": [", n, warmup);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.4f", i ? ", " : "", ms[i]);
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    double med = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    int k90 = (9 * n + 9) / 10 - 1; /* nearest rank */
    fprintf(f, "], \"median_ms\": %.4f, \"p90_ms\": %.4f, \"min_ms\": %.4f, \"mean_ms\": %.4f, \"images_per_s\": %.2f",
            med, ms[k90 < 0 ? 0 : k90], ms[0], sum / n, batch / (med / 1e3));
}

static int fail(const char *what, const strix_error *e, strix_status st)
{
    fprintf(stderr, "gpu_bench: %s: %s\n", what, e->message);
    return strix_exit_code(st);
}

static int load(const opts *o, strix_model **m)
{
    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.yaml_path = o->yaml;
    mo.weights_path = o->weights;
    mo.scale = o->scale;
    mo.device = o->device;
    mo.half = o->half;
    strix_cuda_env_apply(&mo);
    mo.cuda_kernels = o->kernels;
    if (o->async) mo.cuda_async = 1;
    strix_error e;
    strix_status st = strix_model_load(m, &mo, &e);
    return st ? fail(o->yaml, &e, st) : 0;
}

/* Bytes of one dense frame: RGB [h][3w], or NV12 Y [h][w] then U,V
 * [(h + 1) / 2][2 * ((w + 1) / 2)]. */
static size_t frame_size(int w, int h, int nv12)
{
    return nv12 ? (size_t)w * h + (size_t)2 * ((w + 1) / 2) * ((h + 1) / 2) : (size_t)w * h * 3;
}

/* n frames of w x h random uint8 pixels (RGB, or NV12 planes read as
 * limited-range BT.601, the strix_image defaults), dense, one allocation. */
static uint8_t *make_frames(strix_image *im, int n, int w, int h, int nv12)
{
    size_t one = frame_size(w, h, nv12);
    uint8_t *px = malloc(one * (size_t)n);
    if (!px) return NULL;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < one * (size_t)n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        px[i] = (uint8_t)(s >> 56);
    }
    for (int i = 0; i < n; i++) {
        uint8_t *f = px + one * (size_t)i;
        im[i] = (strix_image){.data = f, .width = w, .height = h, .format = nv12 ? STRIX_NV12 : STRIX_RGB,
                              .uv = nv12 ? f + (size_t)w * h : NULL};
    }
    return px;
}

/* ------------------------------------------------------------------ modes */

static int mode_forward(const opts *o, strix_model *m, FILE *f)
{
#ifdef STRIX_WITH_CUDA
    for (int bi = 0; bi < o->n_batches; bi++) {
        int n = o->batches[bi];
        size_t in_len = (size_t)n * 640 * 640 * 3, out_len = (size_t)n * strix_model_anchor_count(m, 640, 640) *
                                                               (4 + strix_model_class_count(m));
        float *in = malloc(in_len * sizeof *in), *head = malloc(out_len * sizeof *head);
        double *ms = malloc(sizeof *ms * (size_t)o->runs);
        strix_error e;
        strix_status st = in && head && ms ? STRIX_OK : STRIX_E_NOMEM;
        if (st) snprintf(e.message, sizeof e.message, "out of host memory for batch %d", n);
        for (size_t i = 0; !st && i < in_len; i++) in[i] = (float)(i % 251) / 250.0f;
        /* plan the shape and put the input on the device: an eager run, then the graph capture */
        for (int k = 0; !st && k < 2; k++) st = strix_model_forward(m, in, n, 640, 640, head, &e);
        strix_cuda_backend *cb = strix_cuda_backend_of(m->backend);
        for (int k = 0; !st && k < o->warmup; k++) st = strix_cuda_backend_run_resident(cb, &e);
        for (int k = 0; !st && k < o->runs; k++) {
            double t0 = now_s();
            st = strix_cuda_backend_run_resident(cb, &e);
            ms[k] = (now_s() - t0) * 1e3;
        }
        if (!st) {
            row_head(f, o, "forward-device", n);
            row_times(f, ms, o->runs, o->warmup, n);
            fprintf(f, "}\n");
            fflush(f);
        }
        free(in), free(head), free(ms);
        if (st) return fail("forward", &e, st);
    }
    return 0;
#else
    (void)o, (void)m, (void)f;
    fprintf(stderr, "gpu_bench: this build has no CUDA backend (rebuild with CUDA=1)\n");
    return EXIT_DEVICE;
#endif
}

/* The frames of one detect measurement: n images in host memory, or
 * (pinned) copied once into the model's frame memory, dense, or (device)
 * copied once into device memory, each row starting at a 256-byte aligned
 * pitch as NVDEC's surfaces do. */
typedef struct frames {
    strix_image *im;
    uint8_t *host;
    uint8_t *dev;    /* NULL for host and pinned frames */
    uint8_t *pinned; /* strix_model_alloc_pinned memory of m, or NULL */
    strix_model *m;
} frames;

static void frames_free(frames *fr)
{
#ifdef STRIX_WITH_CUDA
    if (fr->dev) cudaFree(fr->dev);
#endif
    strix_model_free_pinned(fr->m, fr->pinned);
    free(fr->host), free(fr->im);
    memset(fr, 0, sizeof *fr);
}

/* memory: STRIX_HOST, STRIX_PINNED (m's frame memory) or STRIX_DEVICE. */
static strix_status frames_make(const opts *o, int n, strix_memory memory, strix_model *m, frames *fr,
                                strix_error *e)
{
    memset(fr, 0, sizeof *fr);
    fr->im = malloc(sizeof *fr->im * (size_t)n);
    fr->host = fr->im ? make_frames(fr->im, n, o->fw, o->fh, o->nv12) : NULL;
    if (!fr->host) {
        frames_free(fr);
        snprintf(e->message, sizeof e->message, "out of host memory for %d frames of %dx%d", n, o->fw, o->fh);
        return STRIX_E_NOMEM;
    }
    if (memory == STRIX_PINNED) {
        const size_t one = frame_size(o->fw, o->fh, o->nv12);
        strix_status st = strix_model_alloc_pinned(m, one * (size_t)n, (void **)&fr->pinned, e);
        if (st) {
            frames_free(fr);
            return st;
        }
        fr->m = m;
        memcpy(fr->pinned, fr->host, one * (size_t)n);
        for (int i = 0; i < n; i++) { /* the same offsets as in fr->host */
            fr->im[i].data = fr->pinned + (fr->im[i].data - fr->host);
            if (fr->im[i].uv) fr->im[i].uv = fr->pinned + (fr->im[i].uv - fr->host);
            fr->im[i].memory = STRIX_PINNED;
        }
    }
    if (memory != STRIX_DEVICE) return STRIX_OK;
#ifdef STRIX_WITH_CUDA
    const int w = o->fw, h = o->fh, uv_rows = (h + 1) / 2;
    const size_t row = o->nv12 ? (size_t)w : (size_t)w * 3, uv_row = (size_t)2 * ((w + 1) / 2);
    const size_t pitch = (row + 255) / 256 * 256, one = pitch * (size_t)(h + (o->nv12 ? uv_rows : 0));
    int dev_index = 0;
    if (!strncmp(o->device, "cuda:", 5)) dev_index = atoi(o->device + 5);
    cudaError_t ce = cudaSetDevice(dev_index);
    if (!ce) ce = cudaMalloc((void **)&fr->dev, one * (size_t)n);
    for (int i = 0; !ce && i < n; i++) {
        uint8_t *d = fr->dev + one * (size_t)i;
        const uint8_t *y = fr->im[i].data, *uv = fr->im[i].uv;
        ce = cudaMemcpy2D(d, pitch, y, row, row, (size_t)h, cudaMemcpyHostToDevice);
        if (!ce && o->nv12) ce = cudaMemcpy2D(d + pitch * h, pitch, uv, uv_row, uv_row, (size_t)uv_rows,
                                             cudaMemcpyHostToDevice);
        fr->im[i].data = d;
        fr->im[i].stride = (int)pitch;
        fr->im[i].uv = o->nv12 ? d + pitch * h : NULL;
        fr->im[i].uv_stride = o->nv12 ? (int)pitch : 0;
        fr->im[i].memory = STRIX_DEVICE;
    }
    if (ce) {
        snprintf(e->message, sizeof e->message, "%s: cannot put %d frames of %dx%d in device memory: %s", o->device,
                 n, o->fw, o->fh, cudaGetErrorString(ce));
        frames_free(fr);
        return ce == cudaErrorMemoryAllocation ? STRIX_E_NOMEM : STRIX_E_DEVICE;
    }
    return STRIX_OK;
#else
    frames_free(fr);
    snprintf(e->message, sizeof e->message, "this build has no CUDA backend (rebuild with CUDA=1)");
    return STRIX_E_UNSUPPORTED;
#endif
}

/* count batches through submit/collect with up to STRIX_MAX_IN_FLIGHT out:
 * the next submitted before the oldest is collected.  period (count - 1
 * entries, or NULL): ms between successive collects; *wall_s: first submit
 * to last collect. */
static strix_status pipelined(strix_model *m, const strix_image *im, int n, const strix_detect_options *d,
                              strix_detections *r, int count, double *period, double *wall_s, strix_error *e)
{
    strix_batch *q[STRIX_MAX_IN_FLIGHT];
    int submitted = 0, collected = 0;
    strix_status st = STRIX_OK;
    double t0 = now_s(), last = t0;
    while (!st && collected < count) {
        if (submitted < count && submitted - collected < STRIX_MAX_IN_FLIGHT) {
            st = strix_model_submit(m, im, n, d, &q[submitted % STRIX_MAX_IN_FLIGHT], e);
            submitted += !st;
            continue;
        }
        strix_batch *b = q[collected++ % STRIX_MAX_IN_FLIGHT];
        st = strix_batch_collect(b, r, e);
        double t = now_s();
        strix_batch_release(b);
        if (period && collected > 1) period[collected - 2] = (t - last) * 1e3;
        last = t;
    }
    while (collected < submitted) strix_batch_release(q[collected++ % STRIX_MAX_IN_FLIGHT]);
    if (wall_s) *wall_s = last - t0;
    return st;
}

/* One batch submitted with none other in flight, and collected. */
static strix_status one_batch(strix_model *m, const strix_image *im, int n, const strix_detect_options *d,
                              strix_detections *r, strix_error *e)
{
    strix_batch *b;
    strix_status st = strix_model_submit(m, im, n, d, &b, e);
    if (st) return st;
    st = strix_batch_collect(b, r, e);
    strix_batch_release(b);
    return st;
}

/* detect, device and pinned: the frames to host boxes, synchronously or (--async)
 * with two batches in flight. */
static int mode_detect(const opts *o, strix_model *m, FILE *f)
{
    const int device = !strcmp(o->mode, "device"), pinned = !strcmp(o->mode, "pinned");
    strix_detect_options d;
    strix_detect_options_init(&d);
    char mode[64];
    snprintf(mode, sizeof mode, "%s-%dx%d%s%s", o->mode, o->fw, o->fh, o->nv12 ? "-nv12" : "",
             o->async ? "-async" : "");
    for (int bi = 0; bi < o->n_batches; bi++) {
        int n = o->batches[bi];
        frames fr = {0};
        strix_error e;
        strix_detections *r = malloc(sizeof *r * (size_t)n);
        double *ms = malloc(sizeof *ms * (size_t)o->runs), *lat = malloc(sizeof *lat * (size_t)o->runs);
        strix_status st = r && ms && lat ? frames_make(o, n, device ? STRIX_DEVICE : pinned ? STRIX_PINNED : STRIX_HOST,
                                                       m, &fr, &e)
                                         : STRIX_E_NOMEM;
        if (!(r && ms && lat)) snprintf(e.message, sizeof e.message, "out of host memory for batch %d", n);
        long dets = 0;
        double wall = 0;
        if (!o->async) {
            /* the first call plans and runs eagerly, the second captures the graph */
            for (int k = 0; !st && k < 2 + o->warmup; k++) st = strix_model_detect(m, fr.im, n, &d, r, &e);
            for (int k = 0; !st && k < o->runs; k++) {
                double t0 = now_s();
                st = strix_model_detect(m, fr.im, n, &d, r, &e);
                ms[k] = (now_s() - t0) * 1e3;
                for (int i = 0; !st && k == 0 && i < n; i++) dets += r[i].count;
            }
        } else {
            /* plan and capture one batch at a time, then warm the lanes up in flight */
            for (int k = 0; !st && k < 2; k++) st = one_batch(m, fr.im, n, &d, r, &e);
            if (!st && o->warmup) st = pipelined(m, fr.im, n, &d, r, o->warmup + 1, NULL, NULL, &e);
            for (int k = 0; !st && k < o->runs; k++) {
                double t0 = now_s();
                st = one_batch(m, fr.im, n, &d, r, &e);
                lat[k] = (now_s() - t0) * 1e3;
                for (int i = 0; !st && k == 0 && i < n; i++) dets += r[i].count;
            }
            if (!st) st = pipelined(m, fr.im, n, &d, r, o->runs + 1, ms, &wall, &e);
        }
        if (!st) {
            row_head(f, o, mode, n);
            row_times(f, ms, o->runs, o->warmup, n);
            fprintf(f, ", \"frame\": \"%dx%d\", \"pixels\": \"%s\", \"memory\": \"%s\", \"dets_per_img\": %.1f", o->fw,
                    o->fh, o->nv12 ? "nv12" : "rgb", device ? "device" : pinned ? "pinned" : "host", (double)dets / n);
            if (o->async) {
                qsort(lat, (size_t)o->runs, sizeof *lat, cmp_double);
                int k90 = (9 * o->runs + 9) / 10 - 1;
                fprintf(f, ", \"in_flight\": %d, \"wall_images_per_s\": %.2f, \"latency_median_ms\": %.4f, "
                           "\"latency_p90_ms\": %.4f, \"latency_min_ms\": %.4f",
                        STRIX_MAX_IN_FLIGHT, wall > 0 ? (double)n * (o->runs + 1) / wall : 0,
                        o->runs % 2 ? lat[o->runs / 2] : 0.5 * (lat[o->runs / 2 - 1] + lat[o->runs / 2]),
                        lat[k90 < 0 ? 0 : k90], lat[0]);
            }
            fprintf(f, "}\n");
            fflush(f);
        }
        frames_free(&fr);
        free(r), free(ms), free(lat);
        if (st) return fail(o->mode, &e, st);
    }
    return 0;
}

#ifdef STRIX_WITH_CUDA
typedef struct layer_time {
    int layer;
    double ms;
} layer_time;

static int by_time_desc(const void *a, const void *b)
{
    double x = ((const layer_time *)a)->ms, y = ((const layer_time *)b)->ms;
    return (x < y) - (x > y);
}
#endif

static int mode_layers(const opts *o, strix_model *m, FILE *f)
{
#ifdef STRIX_WITH_CUDA
    int n = o->batches[0], layers = m->graph.n_layers;
    size_t in_len = (size_t)n * 640 * 640 * 3, out_len = (size_t)n * strix_model_anchor_count(m, 640, 640) *
                                                           (4 + strix_model_class_count(m));
    float *in = calloc(in_len, sizeof *in), *head = malloc(out_len * sizeof *head);
    double *all = malloc(sizeof *all * (size_t)layers * o->runs), *one = malloc(sizeof *one * (size_t)layers);
    double *col = malloc(sizeof *col * (size_t)o->runs);
    layer_time *lt = malloc(sizeof *lt * (size_t)layers);
    strix_error e;
    strix_status st = in && head && all && one && col && lt ? STRIX_OK : STRIX_E_NOMEM;
    if (st) snprintf(e.message, sizeof e.message, "out of host memory");
    if (!st) st = strix_model_forward(m, in, n, 640, 640, head, &e);
    for (int k = 0; !st && k < o->warmup + o->runs; k++) {
        st = strix_cuda_backend_layer_times(strix_cuda_backend_of(m->backend), one, layers, &e);
        if (k >= o->warmup) memcpy(all + (size_t)(k - o->warmup) * layers, one, sizeof *one * (size_t)layers);
    }
    double total = 0;
    for (int l = 0; !st && l < layers; l++) {
        for (int k = 0; k < o->runs; k++) col[k] = all[(size_t)k * layers + l];
        qsort(col, (size_t)o->runs, sizeof *col, cmp_double);
        lt[l] = (layer_time){l, col[o->runs / 2]};
        total += lt[l].ms;
    }
    if (!st) {
        qsort(lt, (size_t)layers, sizeof *lt, by_time_desc);
        for (int i = 0; i < layers; i++) {
            strix_layer_info li;
            if ((st = strix_model_layer_info(m, lt[i].layer, 640, 640, &li, &e))) break;
            row_head(f, o, "layer", n);
            fprintf(f, ", \"layer\": %d, \"module\": \"%s\", \"runs\": %d, \"median_ms\": %.4f, \"percent\": %.2f, "
                       "\"forward_ms\": %.4f}\n",
                    lt[i].layer, li.module, o->runs, lt[i].ms, total > 0 ? 100 * lt[i].ms / total : 0, total);
        }
        fflush(f);
    }
    free(in), free(head), free(all), free(one), free(col), free(lt);
    return st ? fail("layers", &e, st) : 0;
#else
    (void)o, (void)m, (void)f;
    fprintf(stderr, "gpu_bench: this build has no CUDA backend (rebuild with CUDA=1)\n");
    return EXIT_DEVICE;
#endif
}

/* Seconds since this process started (its start time in /proc/self/stat,
 * clock ticks after boot, against CLOCK_BOOTTIME); -1 when unreadable. */
static double since_process_start(void)
{
    FILE *p = fopen("/proc/self/stat", "r");
    if (!p) return -1;
    char buf[1024];
    size_t len = fread(buf, 1, sizeof buf - 1, p);
    fclose(p);
    buf[len] = 0;
    char *s = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long start = 0;
    /* after ") ": state is field 3; starttime is field 22 */
    if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                     &start) != 1)
        return -1;
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec - (double)start / (double)sysconf(_SC_CLK_TCK);
}

static int mode_cold(const opts *o, FILE *f)
{
    double t0 = now_s();
    strix_model *m;
    int rc = load(o, &m);
    if (rc) return rc;
    double t_load = now_s() - t0;
    strix_image im;
    uint8_t *px = make_frames(&im, 1, o->fw, o->fh, 0);
    if (!px) {
        strix_model_free(m);
        fprintf(stderr, "gpu_bench: out of host memory for a %dx%d frame\n", o->fw, o->fh);
        return EXIT_NOMEM;
    }
    strix_detect_options d;
    strix_detect_options_init(&d);
    strix_detections r;
    strix_error e;
    strix_status st = strix_model_detect(m, &im, 1, &d, &r, &e);
    double t_detect = now_s() - t0 - t_load;
    if (st) {
        free(px), strix_model_free(m);
        return fail("detect", &e, st);
    }
    FILE *out = fopen(o->out, "w");
    int ok = out != NULL;
    for (int i = 0; ok && i < r.count; i++) {
        const strix_detection *q = &r.items[i];
        ok = fprintf(out, "{\"class\": %d, \"score\": %.5f, \"box\": [%.2f, %.2f, %.2f, %.2f]}\n", q->class_id,
                     q->score, q->x1, q->y1, q->x2, q->y2) > 0;
    }
    if (out && fclose(out)) ok = 0;
    double total = since_process_start();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    free(px), strix_model_free(m);
    if (!ok) {
        remove(o->out);
        fprintf(stderr, "gpu_bench: %s: cannot write the detections: %s\n", o->out, strerror(errno));
        return EXIT_OUTPUT;
    }
    row_head(f, o, "cold-start", 1);
    fprintf(f, ", \"frame\": \"%dx%d\", \"process_to_detection_s\": %.4f, \"load_s\": %.4f, \"first_detect_s\": %.4f, "
               "\"max_rss_mb\": %.1f, \"detections\": %d}\n",
            o->fw, o->fh, total, t_load, t_detect, ru.ru_maxrss / 1024.0, r.count);
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (!parse_args(argc, argv, &o)) return EXIT_USAGE;
    FILE *f = json_open(&o);
    if (!f) return EXIT_OUTPUT;
    int rc;
    if (!strcmp(o.mode, "cold")) {
        rc = mode_cold(&o, f);
    } else {
        strix_model *m;
        rc = load(&o, &m);
        if (!rc) {
            if (!strcmp(o.mode, "forward")) rc = mode_forward(&o, m, f);
            else if (!strcmp(o.mode, "detect") || !strcmp(o.mode, "device") || !strcmp(o.mode, "pinned"))
                rc = mode_detect(&o, m, f);
            else rc = mode_layers(&o, m, f);
            strix_model_free(m);
        }
    }
    if (f != stdout && fclose(f) && !rc) {
        fprintf(stderr, "gpu_bench: %s: write error\n", o.json);
        rc = EXIT_OUTPUT;
    }
    return rc;
}
