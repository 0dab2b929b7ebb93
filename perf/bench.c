/* bench.c — model-only latency and throughput of strix for a YAML + weights:
 * for every (input size, batch) asked for, warm-up runs then --runs
 * (default 20) timed strix_model_forward calls (input tensor in, decoded head out),
 * each on the next of several input buffers so that no run finds its input
 * already in cache.  Prints a table and, with --json, one JSON object per
 * configuration (the raw log perf/bench.sh keeps).
 *
 * Beside the times it reports where they stand against the machine:
 *   - FLOPs per image of the planned graph (strix_model_summarize, the
 *     Ultralytics convention: 2 x convolution MACs) and the achieved GFLOP/s;
 *   - minimal bytes per image: every planned buffer written once (the input
 *     read once) plus the weights read once per batch;
 *   - a measured CPU roofline: peak GEMM rate of the library's own
 *     convolution on a large 1x1 layer, and memcpy bandwidth (bytes read +
 *     written) over buffers far larger than the caches, both with the same
 *     thread count; attainable = min(peak, intensity x bandwidth).
 *
 *   build/perf/bench --model weights/yolov8.yaml --scale n [--weights W]
 *                    [--batch 1,8] [--imgsz 320,640,1280] [--threads N] [--json FILE]
 *
 * Without --weights, deterministic synthetic weights (--seed) are written to
 * a temporary file and loaded, as `mkweights` would make them.
 *
 * --layers FILE (CPU): after the timings, --runs more forward passes of the
 * first configuration node by node (strix_cpu_backend_layer_times), the
 * median wall time of each YAML layer printed and written to FILE as JSON
 * lines (tools/reference/layer_peers.py sets them beside ONNX Runtime's).
 *
 * --precision P passes strix_model_options.precision through (fp32, bf16,
 * fp16, int8, auto; one the CPU or device cannot run: the library's line,
 * exit status 9); int8 needs --calibrate IMG[,IMG...], the images
 * strix_model_quantize calibrates on.  "precision" in the JSON says which
 * ran (auto resolved).
 *
 * --device cuda[:N] / --half / --cuda-graphs 0 pass through to the library
 * (a CPU-only build refuses the device with exit status 9); times are then
 * host to host (input uploaded, head downloaded), and the roofline probes,
 * which measure the CPU, are skipped.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu/backend.h"
#include "cpu/ops.h"
#include "image.h"
#include "model_internal.h" /* the planned program behind a strix_model (minimal bytes) */
#include "strix.h"
#include "tools/exitcodes.h"
#include "bench_util.h"

/* OpenMP is optional: without it the directive vanishes and the copy runs serially. */
#ifdef _OPENMP
#define OMP(directive) _Pragma(#directive)
#else
#define OMP(directive)
#endif

#define MAX_LIST 16      /* sizes / batches per run */
#define PROBE_RUNS 7     /* timed repetitions of each roofline probe (the fastest kept: a peak) */
#define COPY_BYTES ((size_t)256 << 20) /* memcpy probe buffer: far beyond any LLC */

typedef struct bench_opts {
    strix_model_options model;
    const char *json;       /* append JSON lines here; "-" = stdout */
    const char *inputs;     /* raw f32 NHWC images, or NULL for random ones */
    const char *label;      /* free text copied into each JSON object */
    const char *save_head;  /* write the first configuration's head for input batch 0 here */
    const char *calibrate;  /* --calibrate: comma-separated calibration images (--precision int8) */
    const char *layers;     /* --layers: per-layer medians (JSON lines) here, or NULL */
    int on_cpu;             /* --device is the cpu */
    int cuda_graphs;        /* CUDA graph replay on a CUDA device */
    unsigned long long seed;
    int batches[MAX_LIST], n_batches;
    int sizes[MAX_LIST], n_sizes;
    int runs, warmup, rotate;
    int roofline;
} bench_opts;

typedef struct roofline {
    double gemm_gflops;     /* peak: the library's conv on a large 1x1 layer */
    double copy_gbps;       /* memcpy: (read + written) bytes / s */
} roofline;

/* Sorts v; nearest-rank quantile q in [0, 1] (0: the minimum). */
static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)ceil(q * n) - 1;
    return v[k < 0 ? 0 : k];
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* xorshift64*: a local generator, so runs with the same seed see the same inputs. */
static float next_uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (float)((*s * 0x2545F4914F6CDD1DULL) >> 40) / 16777216.0f;
}

/* "1,8,32" -> list; 0 on a bad or too long list. */
static int parse_list(const char *s, int lo, int hi, int *out, int *n)
{
    char buf[256], *save = NULL;
    if (strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    *n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST || !parse_int(t, lo, hi, &out[*n])) return 0;
        (*n)++;
    }
    return *n > 0;
}

/* An instruction set by name (strix_cpu_isa_name). */
static int parse_isa(const char *v, strix_cpu_isa *isa)
{
    for (int i = 0; i < STRIX_CPU_ISA_COUNT; i++)
        if (!strcmp(v, strix_cpu_isa_name((strix_cpu_isa)i))) {
            *isa = (strix_cpu_isa)i;
            return 1;
        }
    return 0;
}

static int parse_precision(const char *v, strix_precision *p)
{
    for (int i = 0; i < STRIX_PRECISION_COUNT; i++)
        if (!strcmp(v, strix_precision_name((strix_precision)i))) {
            *p = (strix_precision)i;
            return 1;
        }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench --model YAML [--scale n|s|m|l|x] [--nc N] [--weights FILE | --seed N]\n"
            "             [--batch LIST] [--imgsz LIST] [--threads N] [--runs N] [--warmup N]\n"
            "             [--rotate K] [--inputs FILE] [--json FILE] [--label TEXT] [--no-roofline]\n"
            "             [--save-head FILE] [--precision P [--calibrate IMG[,IMG...]]] [--layers FILE]\n"
            "             [--device NAME] [--half] [--cuda-graphs 0|1] [--cpu-isa NAME] [--cpu-spin-us N]\n"
            "  --weights F    safetensors; without it synthetic weights from --seed (default 1)\n"
            "  --batch LIST   batch sizes, e.g. 1,8,32 (default 1)\n"
            "  --imgsz LIST   square input sizes, multiples of the stride (default 640)\n"
            "  --threads N    CPU threads (default 0: all online CPUs)\n"
            "  --runs N       timed runs per configuration (default 20); median and p90 reported\n"
            "  --warmup N     untimed runs first (default 3)\n"
            "  --rotate K     input buffers cycled through (default 4)\n"
            "  --inputs FILE  raw little-endian float32 images [H, W, 3] (RGB, 0..1) back to back,\n"
            "                 for a single --imgsz; used instead of random inputs\n"
            "  --json FILE    append one JSON object per configuration ('-': stdout)\n"
            "  --label TEXT   copied into each JSON object (e.g. the OMP_WAIT_POLICY tried)\n"
            "  --no-roofline  skip the peak GEMM and copy bandwidth probes\n"
            "  --precision P  fp32 (default), bf16, fp16, int8 or auto (strix_model_options.precision)\n"
            "  --calibrate IMGS  --precision int8: calibrate on these images (comma-separated;\n"
            "                 strix_model_quantize)\n"
            "  --layers FILE  CPU: also time each YAML layer of the first configuration (--runs\n"
            "                 node-by-node passes, medians) and write them to FILE as JSON lines\n"
            "  --save-head F  write the first configuration's output for its first input batch\n"
            "                 (raw float32 [N, A, 4 + nc]: cx cy w h, class scores) to compare with peers\n"
            "  --device NAME  cpu (default), cuda or cuda:N (a CPU-only build refuses cuda, exit 9);\n"
            "                 on a device the roofline probes (CPU ones) are skipped\n"
            "  --half         fp16 on the CUDA device (the cpu computes in fp32 only)\n"
            "  --cuda-graphs 0|1  replay the forward as a CUDA graph (default 1; the model\n"
            "                 option cuda_graphs)\n"
            "  --cpu-isa NAME the CPU convolution's micro-kernels: auto (default: the widest this\n"
            "                 CPU runs), generic, avx2, avx512 or neon (the model option cpu_isa)\n"
            "  --cpu-spin-us N  idle CPU threads poll N microseconds before blocking (default 0;\n"
            "                 the model option cpu_spin_us)\n" STRIX_EXIT_CODES_HELP);
}

/* 0: go on; otherwise the exit status (help printed: -1 -> exit 0). */
static int parse_args(int argc, char **argv, bench_opts *b)
{
    memset(b, 0, sizeof *b);
    strix_model_options_init(&b->model);
    b->seed = 1;
    b->batches[0] = 1, b->n_batches = 1;
    b->sizes[0] = 640, b->n_sizes = 1;
    b->runs = 20, b->warmup = 3, b->rotate = 4, b->roofline = 1, b->cuda_graphs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "--no-roofline")) {
            b->roofline = 0;
            continue;
        }
        if (!strcmp(a, "--half")) {
            b->model.half = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench: %s: needs a value (see --help)\n", a);
            return EXIT_USAGE;
        }
        i++;
        if (!strcmp(a, "--model")) b->model.yaml_path = v;
        else if (!strcmp(a, "--weights")) b->model.weights_path = v;
        else if (!strcmp(a, "--device")) b->model.device = v;
        else if (!strcmp(a, "--json")) b->json = v;
        else if (!strcmp(a, "--inputs")) b->inputs = v;
        else if (!strcmp(a, "--label")) b->label = v;
        else if (!strcmp(a, "--cuda-graphs") && parse_int(v, 0, 1, &b->cuda_graphs)) {}
        else if (!strcmp(a, "--save-head")) b->save_head = v;
        else if (!strcmp(a, "--calibrate")) b->calibrate = v;
        else if (!strcmp(a, "--precision") && parse_precision(v, &b->model.precision)) {}
        else if (!strcmp(a, "--layers")) b->layers = v;
        else if (!strcmp(a, "--cpu-isa") && parse_isa(v, &b->model.cpu_isa)) {}
        else if (!strcmp(a, "--cpu-spin-us") && parse_int(v, 0, 1000000, &b->model.cpu_spin_us)) {}
        else if (!strcmp(a, "--scale") && strlen(v) == 1 && strchr("nslmx", v[0])) b->model.scale = v[0];
        else if (!strcmp(a, "--nc") && parse_int(v, 1, 100000, &b->model.nc)) {}
        else if (!strcmp(a, "--threads") && parse_int(v, 0, 4096, &b->model.threads)) {}
        else if (!strcmp(a, "--runs") && parse_int(v, 1, 1000000, &b->runs)) {}
        else if (!strcmp(a, "--warmup") && parse_int(v, 0, 1000000, &b->warmup)) {}
        else if (!strcmp(a, "--rotate") && parse_int(v, 1, 64, &b->rotate)) {}
        else if (!strcmp(a, "--batch") && parse_list(v, 1, 4096, b->batches, &b->n_batches)) {}
        else if (!strcmp(a, "--imgsz") && parse_list(v, 32, 16384, b->sizes, &b->n_sizes)) {}
        else if (!strcmp(a, "--seed") && (b->seed = strtoull(v, &end, 0), *v && !*end)) {}
        else {
            fprintf(stderr, "bench: %s %s: unknown option or bad value (see --help)\n", a, v);
            return EXIT_USAGE;
        }
    }
    if (!b->model.yaml_path) {
        fprintf(stderr, "bench: --model YAML is required (see --help)\n");
        return EXIT_USAGE;
    }
    const char *dev = b->model.device;
    b->on_cpu = !dev || !*dev || !strcmp(dev, "cpu");
    if (b->on_cpu && b->model.half) {
        fprintf(stderr, "bench: --half: fp16 runs on a CUDA device only (the cpu computes in fp32)\n");
        return EXIT_USAGE;
    }
    if (!b->cuda_graphs && b->on_cpu) {
        fprintf(stderr, "bench: --cuda-graphs: applies to a CUDA device only\n");
        return EXIT_USAGE;
    }
    b->model.cuda_graphs = b->cuda_graphs;
    if (!b->on_cpu) b->roofline = 0;
    if ((b->model.precision == STRIX_PRECISION_INT8) != (b->calibrate != NULL)) {
        fprintf(stderr, "bench: %s\n", b->calibrate ? "--calibrate sets up --precision int8: add it"
                                                    : "--precision int8 needs --calibrate IMG[,IMG...]");
        return EXIT_USAGE;
    }
    if (b->layers && !b->on_cpu) {
        fprintf(stderr, "bench: --layers: per-layer times are for the cpu (gpu_bench --mode layers on a GPU)\n");
        return EXIT_USAGE;
    }
    if (b->inputs && b->n_sizes != 1) {
        fprintf(stderr, "bench: --inputs holds images of one size: give a single --imgsz\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* Load the model; without a weights path, write synthetic weights for its
 * graph to a temporary file first (removed once loaded). */
static int load_model(const bench_opts *b, strix_model **m)
{
    strix_error e;
    strix_model_options o = b->model;
    char tmp[] = "/tmp/strix-bench-XXXXXX";
    int fd = -1;
    if (!o.weights_path) {
        strix_model *g;
        strix_status st = strix_model_load(&g, &o, &e);
        if (st) {
            fprintf(stderr, "bench: %s\n", e.message);
            return strix_exit_code(st);
        }
        fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "bench: %s: cannot create a temporary weights file: %s (set TMPDIR or pass --weights)\n",
                    tmp, strerror(errno));
            strix_model_free(g);
            return EXIT_OUTPUT;
        }
        close(fd);
        st = strix_model_write_synthetic_weights(g, tmp, b->seed, 0, 0, 1, &e);
        strix_model_free(g);
        if (st) {
            unlink(tmp);
            fprintf(stderr, "bench: %s\n", e.message);
            return strix_exit_code(st);
        }
        o.weights_path = tmp;
    }
    strix_status st = strix_model_load(m, &o, &e);
    if (fd >= 0) unlink(tmp);
    if (st) {
        fprintf(stderr, "bench: %s\n", e.message);
        return strix_exit_code(st);
    }
    return 0;
}

/* --calibrate: load the comma-separated images and calibrate m on them. */
static int quantize(const bench_opts *b, strix_model *m)
{
    enum { MAX_CALIB = 16 };
    strix_owned_image img[MAX_CALIB];
    strix_image view[MAX_CALIB];
    int n = 0, rc = 0;
    strix_error e;
    char *list = strdup(b->calibrate), *save = NULL;
    if (!list) {
        fprintf(stderr, "bench: out of memory\n");
        return EXIT_NOMEM;
    }
    for (char *t = strtok_r(list, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        if (n == MAX_CALIB) {
            fprintf(stderr, "bench: --calibrate: at most %d calibration images\n", MAX_CALIB);
            rc = EXIT_USAGE;
        } else if (strix_image_load(t, 0, &img[n], &e)) {
            fprintf(stderr, "bench: --calibrate: %s\n", e.message);
            rc = strix_exit_code(e.status);
        } else {
            view[n] = strix_image_view(&img[n]);
            n++;
        }
    }
    strix_detect_options d;
    strix_detect_options_init(&d);
    if (!rc && strix_model_quantize(m, view, n, &d, &e)) {
        fprintf(stderr, "bench: %s\n", e.message);
        rc = strix_exit_code(e.status);
    }
    for (int i = 0; i < n; i++) strix_image_free(&img[i]);
    free(list);
    return rc;
}

/* Peak GEMM rate: the library's convolution on a 1x1 layer of 512 -> 512
 * channels over 80x80 pixels (3.4 GFLOP; every operand streams through the
 * blocked GEMM as a big layer's would), no activation. */
static int probe_gemm(strix_cpu_isa isa, int threads, int spin_us, double *gflops)
{
    const int hw = 80, c = 512;
    size_t px = (size_t)hw * hw;
    strix_conv_params p = {1, 1, 1, 1, 0, 0, 1, 1, 1, STRIX_ACT_NONE};
    float *in = malloc(px * c * sizeof(float)), *out = malloc(px * c * sizeof(float));
    float *w = malloc((size_t)c * c * sizeof(float)), *bias = calloc((size_t)c, sizeof(float));
    strix_view vin = strix_view_dense(in, 1, hw, hw, c), vout = strix_view_dense(out, 1, hw, hw, c);
    size_t wsb = strix_cpu_conv2d_workspace(&vout, &vin, &p, threads);
    void *ws = malloc(wsb);
    strix_cpu_team *team = NULL;
    strix_error e;
    int ok = in && out && w && bias && ws && !strix_cpu_team_create(&team, threads, spin_us, &e);
    if (ok) {
        uint64_t s = 0x9E3779B97F4A7C15ULL;
        for (size_t i = 0; i < px * c; i++) in[i] = next_uniform(&s) - 0.5f;
        for (size_t i = 0; i < (size_t)c * c; i++) w[i] = (next_uniform(&s) - 0.5f) * 0.1f;
        double t[PROBE_RUNS];
        strix_cpu_conv2d(isa, &vout, &vin, w, bias, NULL, &p, ws, team);
        for (int r = 0; r < PROBE_RUNS; r++) {
            double t0 = now_s();
            strix_cpu_conv2d(isa, &vout, &vin, w, bias, NULL, &p, ws, team);
            t[r] = now_s() - t0;
        }
        *gflops = 2.0 * (double)px * c * c / quantile(t, PROBE_RUNS, 0.0) / 1e9;
    }
    free(in);
    free(out);
    free(w);
    free(bias);
    free(ws);
    strix_cpu_team_free(team);
    return ok;
}

/* Copy bandwidth: memcpy of COPY_BYTES split among the threads; bytes read
 * plus bytes written per second. */
static int probe_copy(int threads, double *gbps)
{
    char *src = malloc(COPY_BYTES), *dst = malloc(COPY_BYTES);
    int ok = src && dst;
    if (ok) {
        memset(src, 1, COPY_BYTES);
        memset(dst, 2, COPY_BYTES);
        size_t chunk = COPY_BYTES / (size_t)threads;
        double t[PROBE_RUNS];
        for (int r = 0; r <= PROBE_RUNS; r++) {
            double t0 = now_s();
            OMP(omp parallel for num_threads(threads) schedule(static))
            for (int i = 0; i < threads; i++) {
                size_t off = (size_t)i * chunk, len = i == threads - 1 ? COPY_BYTES - off : chunk;
                memcpy(dst + off, src + off, len);
            }
            if (r) t[r - 1] = now_s() - t0; /* the first pass only faults the pages in */
        }
        *gbps = 2.0 * (double)COPY_BYTES / quantile(t, PROBE_RUNS, 0.0) / 1e9;
    }
    free(src);
    free(dst);
    return ok;
}

/* Bytes a perfect run of batch n at h x w must move per image: every planned
 * buffer written once (the input read once), the weights read once per batch. */
static int minimal_bytes(const strix_model *m, int n, int h, int w, double *bytes)
{
    strix_plan pl;
    strix_error e;
    if (strix_plan_build(&pl, &m->prog, 1, h, w, 1, &e)) {
        fprintf(stderr, "bench: %s\n", e.message);
        return 0;
    }
    double act = 0;
    for (int i = 0; i < m->prog.n_bufs; i++) act += (double)pl.buf_elems[i] * sizeof(float);
    strix_plan_free(&pl);
    *bytes = act + (double)m->prog.weight_floats * sizeof(float) / n;
    return 1;
}

/* n*k input batches of [n, s, s, 3] into *out: from the --inputs file
 * (batch k, image i = file image (k*n + i) mod count), or random.  Returns
 * 0 or an exit status. */
static int make_inputs(const bench_opts *b, int n, int s, int k, uint64_t seed, float **out)
{
    size_t per = (size_t)s * s * 3, batch = per * (size_t)n;
    float *x = malloc(batch * (size_t)k * sizeof(float));
    *out = NULL;
    if (!x) {
        fprintf(stderr, "bench: out of memory for %d input batches of %d at %dx%d\n", k, n, s, s);
        return EXIT_NOMEM;
    }
    if (!b->inputs) {
        uint64_t st = seed | 1;
        for (size_t i = 0; i < batch * (size_t)k; i++) x[i] = next_uniform(&st);
        *out = x;
        return 0;
    }
    FILE *f = fopen(b->inputs, "rb");
    long size = -1;
    if (f && !fseek(f, 0, SEEK_END)) size = ftell(f);
    size_t images = size > 0 ? (size_t)size / (per * sizeof(float)) : 0;
    if (!f || size < 0 || images == 0 || (size_t)size % (per * sizeof(float))) {
        fprintf(stderr, "bench: %s: %s (expected float32 images of %dx%dx3)\n", b->inputs,
                !f ? strerror(errno) : "size is not a whole, non-zero number of images", s, s);
        if (f) fclose(f);
        free(x);
        return EXIT_INPUT;
    }
    for (size_t i = 0; i < (size_t)n * k; i++) {
        if (fseek(f, (long)((i % images) * per * sizeof(float)), SEEK_SET) ||
            fread(x + i * per, sizeof(float), per, f) != per) {
            fprintf(stderr, "bench: %s: read error\n", b->inputs);
            fclose(f);
            free(x);
            return EXIT_INPUT;
        }
    }
    fclose(f);
    *out = x;
    return 0;
}

/* JSON string body: the characters JSON requires escaped, others as they are. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

typedef struct result {
    int n, s, runs;
    double *times_ms;       /* every timed run, in run order */
    double median_ms, p90_ms, min_ms, mean_ms;
    double gflop_img, bytes_img;
    size_t arena_bytes;
    char load_start[64], load_end[64];
} result;

static void write_json(FILE *f, const bench_opts *b, const strix_model *m, const result *r,
                       const roofline *rl)
{
    double ips = r->n / (r->median_ms / 1e3), achieved = r->gflop_img * ips;
    double intensity = r->gflop_img * 1e9 / r->bytes_img;
    const char *wait = getenv("OMP_WAIT_POLICY");
    char scale[2] = {m->graph.scale, 0};
    fprintf(f, "{\"tool\": \"strix\", \"strix_version\": \"%s\", \"model\": ", STRIX_VERSION);
    json_str(f, b->model.yaml_path);
    fprintf(f, ", \"scale\": ");
    json_str(f, scale);
    fprintf(f, ", \"weights\": ");
    if (b->model.weights_path) json_str(f, b->model.weights_path);
    else fprintf(f, "\"synthetic seed %llu\"", b->seed);
    fprintf(f, ", \"inputs\": ");
    json_str(f, b->inputs ? b->inputs : "random");
    fprintf(f, ", \"device\": ");
    json_str(f, b->on_cpu ? "cpu" : b->model.device);
    fprintf(f, ", \"dtype\": \"%s\"", b->model.half ? "fp16" : "fp32");
    if (!b->on_cpu) fprintf(f, ", \"cuda_graphs\": %s", b->cuda_graphs ? "true" : "false");
    fprintf(f, ", \"batch\": %d, \"imgsz\": %d, \"threads\": %d", r->n, r->s, m->threads);
    fprintf(f, ", \"openmp\": %s, \"omp_wait_policy\": ",
#ifdef _OPENMP
            "true"
#else
            "false"
#endif
    );
    json_str(f, wait ? wait : "default");
    fprintf(f, ", \"precision\": \"%s\"", strix_precision_name(strix_model_precision(m)));
    fprintf(f, ", \"label\": ");
    json_str(f, b->label ? b->label : "");
    fprintf(f, ", \"warmup\": %d, \"runs\": %d, \"rotate\": %d", b->warmup, r->runs, b->rotate);
    fprintf(f, ", \"median_ms\": %.4f, \"p90_ms\": %.4f, \"min_ms\": %.4f, \"mean_ms\": %.4f", r->median_ms,
            r->p90_ms, r->min_ms, r->mean_ms);
    fprintf(f, ", \"images_per_s\": %.3f, \"gflops_per_image\": %.4f, \"achieved_gflops\": %.3f", ips, r->gflop_img,
            achieved);
    fprintf(f, ", \"min_bytes_per_image\": %.0f, \"flop_per_byte\": %.3f", r->bytes_img, intensity);
    fprintf(f, ", \"arena_bytes\": %zu, \"weight_bytes\": %zu", r->arena_bytes,
            m->prog.weight_floats * sizeof(float));
    if (rl) {
        double roof = rl->gemm_gflops < intensity * rl->copy_gbps ? rl->gemm_gflops : intensity * rl->copy_gbps;
        fprintf(f, ", \"peak_gemm_gflops\": %.3f, \"copy_gbps\": %.3f, \"roofline_gflops\": %.3f, "
                   "\"roofline_fraction\": %.4f",
                rl->gemm_gflops, rl->copy_gbps, roof, achieved / roof);
    }
    fprintf(f, ", \"loadavg_start\": \"%s\", \"loadavg_end\": \"%s\", \"times_ms\": [", r->load_start, r->load_end);
    for (int i = 0; i < r->runs; i++) fprintf(f, "%s%.4f", i ? ", " : "", r->times_ms[i]);
    fprintf(f, "]}\n");
    fflush(f);
}

/* Raw float32 [n, A, 4 + nc] to path. */
static int save_head(const char *path, const float *head, size_t floats)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(head, sizeof(float), floats, f) == floats;
    if (f && fclose(f)) ok = 0;
    if (!ok) fprintf(stderr, "bench: %s: cannot write the head: %s\n", path, strerror(errno));
    return ok;
}

/* Warm-up, then b->runs timed forwards of batch n at s x s; r->times_ms is
 * the caller's to free.  save: also write the head for input batch 0. */
static int run_config(const bench_opts *b, strix_model *m, int n, int s, int save, result *r)
{
    strix_error e;
    memset(r, 0, sizeof *r);
    r->n = n, r->s = s, r->runs = b->runs;
    loadavg(r->load_start, sizeof r->load_start);
    strix_model_summary sum;
    if (strix_model_summarize(m, s, s, &sum, &e)) {
        fprintf(stderr, "bench: %s\n", e.message);
        return EXIT_USAGE;
    }
    r->gflop_img = sum.gflops_fused;
    if (!minimal_bytes(m, n, s, s, &r->bytes_img)) return EXIT_INTERNAL;
    size_t per_in = (size_t)n * s * s * 3;
    size_t per_out = (size_t)n * strix_model_anchor_count(m, s, s) * (4 + (size_t)strix_model_class_count(m));
    float *x = NULL;
    int rc = make_inputs(b, n, s, b->rotate, b->seed * 1000003u + (uint64_t)s * 31u + (uint64_t)n, &x);
    float *head = malloc(per_out * sizeof(float));
    double *t = malloc(sizeof(double) * (size_t)b->runs);
    r->times_ms = malloc(sizeof(double) * (size_t)b->runs);
    if (rc) goto done;
    if (!head || !t || !r->times_ms) {
        fprintf(stderr, "bench: out of memory for batch %d at %dx%d\n", n, s, s);
        rc = EXIT_NOMEM;
        goto done;
    }
    for (int i = 0; i < b->warmup + b->runs; i++) {
        const float *in = x + per_in * (size_t)(i % b->rotate);
        double t0 = now_s();
        strix_status st = strix_model_forward(m, in, n, s, s, head, &e);
        double dt = now_s() - t0;
        if (st) {
            fprintf(stderr, "bench: batch %d at %dx%d: %s\n", n, s, s, e.message);
            rc = strix_exit_code(st);
            goto done;
        }
        if (i >= b->warmup) t[i - b->warmup] = r->times_ms[i - b->warmup] = dt * 1e3;
    }
    if (save) {
        strix_status st = strix_model_forward(m, x, n, s, s, head, &e);
        if (st) {
            fprintf(stderr, "bench: batch %d at %dx%d: %s\n", n, s, s, e.message);
            rc = strix_exit_code(st);
            goto done;
        }
        if (!save_head(b->save_head, head, per_out)) {
            rc = EXIT_OUTPUT;
            goto done;
        }
    }
    double sum_ms = 0;
    for (int i = 0; i < b->runs; i++) sum_ms += t[i];
    r->mean_ms = sum_ms / b->runs;
    r->p90_ms = quantile(t, b->runs, 0.9);
    r->median_ms = median(t, b->runs);
    r->min_ms = t[0];
    r->arena_bytes = m->plan.arena_floats * sizeof(float);
    loadavg(r->load_end, sizeof r->load_end);
done:
    free(x);
    free(head);
    free(t);
    if (rc) {
        free(r->times_ms);
        r->times_ms = NULL;
    }
    return rc;
}

/* --layers: b->runs node-by-node passes of batch n at s x s (after one
 * forward that plans it), each layer's median to the table and, as JSON
 * lines, to b->layers (truncated first). */
static int layer_profile(const bench_opts *b, strix_model *m, int n, int s, FILE *table)
{
    int layers = m->graph.n_layers, rc = 0;
    size_t per_out = (size_t)n * strix_model_anchor_count(m, s, s) * (4 + (size_t)strix_model_class_count(m));
    float *x = NULL, *head = malloc(per_out * sizeof(float));
    double *all = malloc(sizeof *all * (size_t)layers * b->runs), *col = malloc(sizeof *col * (size_t)b->runs);
    FILE *f = NULL;
    strix_error e;
    if ((rc = make_inputs(b, n, s, 1, b->seed, &x))) goto done;
    if (!head || !all || !col) {
        fprintf(stderr, "bench: out of memory for the per-layer profile\n");
        rc = EXIT_NOMEM;
        goto done;
    }
    strix_status st = strix_model_forward(m, x, n, s, s, head, &e);
    for (int k = 0; !st && k < b->runs; k++)
        st = strix_cpu_backend_layer_times(m->backend, all + (size_t)k * layers, layers, &e);
    if (st) {
        fprintf(stderr, "bench: per-layer profile: %s\n", e.message);
        rc = strix_exit_code(st);
        goto done;
    }
    if (!(f = fopen(b->layers, "w"))) {
        fprintf(stderr, "bench: %s: cannot open for writing: %s\n", b->layers, strerror(errno));
        rc = EXIT_OUTPUT;
        goto done;
    }
    fprintf(table, "per layer, batch %d at %dx%d, median of %d node-by-node passes:\n", n, s, s, b->runs);
    for (int l = 0; l < layers; l++) {
        for (int k = 0; k < b->runs; k++) col[k] = all[(size_t)k * layers + l];
        double med = median(col, b->runs);
        strix_layer_info li;
        if ((st = strix_model_layer_info(m, l, s, s, &li, &e))) {
            fprintf(stderr, "bench: per-layer profile: %s\n", e.message);
            rc = strix_exit_code(st);
            goto done;
        }
        fprintf(table, "  layer %3d %-12s %9.3f ms\n", l, li.module, med);
        fprintf(f, "{\"layer\": %d, \"module\": \"%s\", \"batch\": %d, \"imgsz\": %d, \"threads\": %d, "
                   "\"runs\": %d, \"median_ms\": %.4f}\n",
                l, li.module, n, s, m->threads, b->runs, med);
    }
done:
    if (f && fclose(f) && !rc) {
        fprintf(stderr, "bench: %s: write error\n", b->layers);
        rc = EXIT_OUTPUT;
    }
    free(x), free(head), free(all), free(col);
    return rc;
}

int main(int argc, char **argv)
{
    bench_opts b;
    int rc = parse_args(argc, argv, &b);
    if (rc) return rc < 0 ? 0 : rc;
    FILE *json = NULL;
    if (b.json) {
        json = strcmp(b.json, "-") ? fopen(b.json, "a") : stdout;
        if (!json) {
            fprintf(stderr, "bench: %s: cannot open for appending: %s\n", b.json, strerror(errno));
            return EXIT_OUTPUT;
        }
    }
    FILE *table = json == stdout ? stderr : stdout;
    strix_model *m = NULL;
    if ((rc = load_model(&b, &m))) goto out;
    if (b.calibrate && (rc = quantize(&b, m))) goto out;

    char load[64];
    loadavg(load, sizeof load);
    fprintf(table, "strix %s bench: %s scale %c, weights %s, %s%s%s %s, %d threads, OMP_WAIT_POLICY=%s, load average %s\n",
            STRIX_VERSION, b.model.yaml_path, m->graph.scale,
            b.model.weights_path ? b.model.weights_path : "synthetic", b.on_cpu ? "cpu" : b.model.device,
            b.on_cpu ? " " : "", b.on_cpu ? strix_cpu_isa_name(strix_model_cpu_isa(m)) : "",
            strix_precision_name(strix_model_precision(m)), m->threads,
            getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "default", load);
    roofline rl = {0, 0};
    if (b.roofline) {
        if (!probe_gemm(m->cpu_isa, m->threads, b.model.cpu_spin_us, &rl.gemm_gflops) || !probe_copy(m->threads, &rl.copy_gbps)) {
            fprintf(stderr, "bench: out of memory for the roofline probes (try --no-roofline)\n");
            rc = EXIT_NOMEM;
            goto out;
        }
        fprintf(table, "roofline: peak GEMM %.1f GFLOP/s (1x1 conv 512->512 on 80x80), copy %.1f GB/s "
                       "(memcpy, read + write)\n",
                rl.gemm_gflops, rl.copy_gbps);
    }
    fprintf(table, "%6s %5s %10s %10s %10s %9s %9s %8s %9s\n", "imgsz", "batch", "median ms", "p90 ms", "images/s",
            "GFLOP/im", "GFLOP/s", "MB/im", "roofline");
    for (int si = 0; si < b.n_sizes && !rc; si++)
        for (int bi = 0; bi < b.n_batches && !rc; bi++) {
            result r;
            if ((rc = run_config(&b, m, b.batches[bi], b.sizes[si], b.save_head && !si && !bi, &r))) break;
            double ips = r.n / (r.median_ms / 1e3), achieved = r.gflop_img * ips;
            double roof = 0, intensity = r.gflop_img * 1e9 / r.bytes_img;
            if (b.roofline)
                roof = rl.gemm_gflops < intensity * rl.copy_gbps ? rl.gemm_gflops : intensity * rl.copy_gbps;
            char frac[16] = "-";
            if (roof > 0) snprintf(frac, sizeof frac, "%.1f%%", 100.0 * achieved / roof);
            fprintf(table, "%6d %5d %10.2f %10.2f %10.2f %9.2f %9.1f %8.1f %9s\n", r.s, r.n, r.median_ms, r.p90_ms,
                    ips, r.gflop_img, achieved, r.bytes_img / 1e6, frac);
            fflush(table);
            if (json) write_json(json, &b, m, &r, b.roofline ? &rl : NULL);
            free(r.times_ms);
        }
    if (!rc && b.layers) rc = layer_profile(&b, m, b.batches[0], b.sizes[0], table);
out:
    strix_model_free(m);
    if (json && json != stdout && fclose(json) && !rc) {
        fprintf(stderr, "bench: %s: write error\n", b.json);
        rc = EXIT_OUTPUT;
    }
    return rc;
}
