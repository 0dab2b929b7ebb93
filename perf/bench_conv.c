/* bench_conv.c — per-kernel harness for the CPU convolution (llm.c dev/ style):
 * every distinct convolution shape of a model (yolov8n at 640x640 by
 * default, read from the planned graph, so the list follows the YAML), run
 * through the library's strix_cpu_conv2d_packed (weights packed beforehand,
 * as the CPU backend does at load), checked against a naive
 * double-precision reference on sampled output pixels, then timed.
 *
 * Build and run (from the repo root, after `make`):
 *   make build/perf/bench_conv
 *   build/perf/bench_conv                               # yolov8n, 640, all CPUs
 *   build/perf/bench_conv --model weights/yolo11.yaml --scale n --threads 1,2 --imgsz 320
 *
 * Tensors are dense NHWC (in the network some inputs and outputs are channel
 * slices of wider buffers; the arithmetic is the same): in [1, H, W, Cin],
 * w [Cout, KH, KW, Cin/g] (OHWI), bias [Cout], residual and out
 * [1, OH, OW, Cout].  Each shape is timed with each instruction set and
 * thread count given (the columns; their runs interleaved, so a shared
 * machine's load swings hit them alike): the checked call warms up, then the
 * median of --runs calls; GFLOP/s = 2 x MACs / time.
 * --exact-too adds a column per instruction set without its Winograd path
 * (STRIX_CPU_CONV_EXACT, engine/cpu/ops.h): the kernel it replaces, timed in
 * the same interleaved runs.
 * The last lines add up a whole forward pass (each shape times the number of
 * times the network uses it) and the packed weights' size.  Exit status 1 if
 * any check fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/ops.h"
#include "model_internal.h" /* the model's program: its convolution nodes */
#include "strix.h"
#include "tools/exitcodes.h"
#include "bench_util.h"
#include "conv_shapes.h"

#define MAX_LIST 8 /* thread counts, instruction sets, and their product (columns) */
#define CHECK_PIXELS 192 /* output pixels checked per shape (all channels), corners included */

static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* uniform in [-1, 1) */
static float next_sym(uint64_t *s) { return (float)(next_u64(s) >> 40) / 8388608.0f - 1.0f; }

/* Output pixel (oy, ox), channel co, computed naively in double:
 * *ref = act(sum + bias) + residual, *mag = sum of |terms| (the error scale). */
static void reference(const shape *s, const float *in, const float *w, const float *bias, const float *res,
                      int oy, int ox, int co, double *ref, double *mag)
{
    const strix_conv_params *p = &s->p;
    int cg = s->cin / p->groups, ng = s->cout / p->groups, g = co / ng;
    double acc = bias[co], m = fabs(bias[co]);
    for (int ky = 0; ky < p->kh; ky++)
        for (int kx = 0; kx < p->kw; kx++) {
            int iy = oy * p->sh - p->ph + ky * p->dh, ix = ox * p->sw - p->pw + kx * p->dw;
            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w) continue;
            for (int ci = 0; ci < cg; ci++) {
                double t = (double)in[((size_t)iy * s->w + ix) * s->cin + g * cg + ci] *
                           w[(((size_t)co * p->kh + ky) * p->kw + kx) * cg + ci];
                acc += t;
                m += fabs(t);
            }
        }
    if (p->act == STRIX_ACT_SILU) acc = acc / (1.0 + exp(-acc));
    if (res) {
        double r = res[((size_t)oy * s->ow + ox) * s->cout + co];
        acc += r;
        m += fabs(r);
    }
    *ref = acc;
    *mag = m;
}

/* Worst |got - ref| / (1e-5 * (mag + 1)) over the checked pixels: <= 1 passes
 * (fp32 accumulation of K terms stays far inside 1e-5 of their magnitude). */
static double check(const shape *s, const float *in, const float *w, const float *bias, const float *res,
                    const float *out, uint64_t *rng)
{
    double worst = 0;
    for (int i = 0; i < CHECK_PIXELS; i++) {
        int oy, ox;
        if (i < 4) { /* the corners: every padding branch */
            oy = i & 1 ? s->oh - 1 : 0;
            ox = i & 2 ? s->ow - 1 : 0;
        } else {
            oy = (int)(next_u64(rng) % (uint64_t)s->oh);
            ox = (int)(next_u64(rng) % (uint64_t)s->ow);
        }
        for (int co = 0; co < s->cout; co++) {
            double ref, mag;
            reference(s, in, w, bias, res, oy, ox, co, &ref, &mag);
            double got = out[((size_t)oy * s->ow + ox) * s->cout + co];
            double r = fabs(got - ref) / (1e-5 * (mag + 1.0));
            if (!(r <= worst)) worst = r; /* NaN propagates as a failure */
        }
    }
    return worst;
}

/* CPU time of the whole process (all its threads), seconds. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A column's instruction set, "-exact" with STRIX_CPU_CONV_EXACT. */
static const char *isa_label(strix_cpu_isa isa)
{
    static char label[STRIX_CPU_ISA_COUNT][24];
    strix_cpu_isa base = (strix_cpu_isa)(isa & ~STRIX_CPU_CONV_EXACT);
    if (!(isa & STRIX_CPU_CONV_EXACT)) return strix_cpu_isa_name(base);
    snprintf(label[base], sizeof label[base], "%s-exact", strix_cpu_isa_name(base));
    return label[base];
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_conv [--model YAML] [--scale n|s|m|l|x] [--imgsz N] [--threads LIST]\n"
            "                  [--runs N] [--seed N] [--isa LIST] [--cpu-time] [--exact-too]\n"
            "  --model YAML   default weights/yolov8.yaml with --scale n\n"
            "  --imgsz N      square network input (default 640)\n"
            "  --threads LIST thread counts to time side by side, e.g. 1,2 (default: all CPUs)\n"
            "  --runs N       timed calls per shape and thread count (default 20; median kept)\n"
            "  --isa LIST     micro-kernels to time side by side, e.g. avx2,avx512: auto, generic,\n"
            "                 avx2, avx512, neon (default: the widest this CPU runs)\n"
            "  --cpu-time     time with the process's CPU time instead of the wall clock: on a\n"
            "                 shared machine the time other processes hold the core is not\n"
            "                 counted (meaningful with --threads 1 only)\n"
            "  --exact-too    each instruction set also without its Winograd path (STRIX_CPU_CONV_EXACT:\n"
            "                 the GEMM or direct kernel it replaces), as a column 'ISA-exact'\n");
}

int main(int argc, char **argv)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = "weights/yolov8.yaml";
    o.scale = 'n';
    int imgsz = 640, runs = 20, threads[MAX_LIST] = {0}, n_threads = 1, n_isas = 0;
    strix_cpu_isa isas[MAX_LIST];
    unsigned long long seed = 1;
    int cpu_time = 0, exact_too = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--cpu-time")) {
            cpu_time = 1;
            continue;
        }
        if (!strcmp(a, "--exact-too")) {
            exact_too = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_conv: %s: needs a value (see --help)\n", a);
            return EXIT_USAGE;
        }
        i++;
        int ok = 1;
        if (!strcmp(a, "--model")) o.yaml_path = v;
        else if (!strcmp(a, "--scale") && strlen(v) == 1) o.scale = v[0];
        else if (!strcmp(a, "--imgsz")) ok = (imgsz = (int)strtol(v, &end, 10)) >= 32 && imgsz <= 4096 && !*end;
        else if (!strcmp(a, "--runs")) ok = (runs = (int)strtol(v, &end, 10)) >= 1 && runs <= 100000 && !*end;
        else if (!strcmp(a, "--seed")) ok = (seed = strtoull(v, &end, 0), *v && !*end);
        else if (!strcmp(a, "--isa")) {
            n_isas = 0;
            for (const char *t = v; ok && *t; t = *end ? end + 1 : end) {
                end = strchr(t, ',');
                if (!end) end = (char *)t + strlen(t);
                int found = -1;
                for (int k = 0; k < STRIX_CPU_ISA_COUNT; k++) {
                    const char *nm = strix_cpu_isa_name((strix_cpu_isa)k);
                    if (strlen(nm) == (size_t)(end - t) && !strncmp(t, nm, (size_t)(end - t))) found = k;
                }
                ok = found >= 0 && n_isas < MAX_LIST && end != t;
                if (ok) isas[n_isas++] = (strix_cpu_isa)found;
            }
        } else if (!strcmp(a, "--threads")) {
            n_threads = 0;
            for (const char *t = v; ok && *t; t = *end ? end + 1 : end) {
                long x = strtol(t, &end, 10);
                ok = end != t && x >= 1 && x <= 4096 && n_threads < MAX_LIST && (*end == ',' || !*end);
                if (ok) threads[n_threads++] = (int)x;
            }
            ok = ok && n_threads > 0;
        } else ok = 0;
        if (!ok) {
            fprintf(stderr, "bench_conv: %s %s: unknown option or bad value (see --help)\n", a, v);
            return EXIT_USAGE;
        }
    }
    for (int k = 0; k < n_isas; k++)
        if (!strix_cpu_isa_supported(isas[k])) {
            fprintf(stderr, "bench_conv: --isa %s: this build or CPU cannot run it\n", strix_cpu_isa_name(isas[k]));
            return EXIT_USAGE;
        }
    strix_model *m;
    strix_error e;
    strix_status st = strix_model_load(&m, &o, &e);
    if (st) {
        fprintf(stderr, "bench_conv: %s\n", e.message);
        return strix_exit_code(st);
    }
    if (!threads[0]) threads[0] = m->threads; /* the library's default: all online CPUs */
    if (!n_isas) isas[n_isas++] = strix_model_cpu_isa(m); /* the library's choice */
    if (exact_too) {
        int k0 = n_isas;
        for (int k = 0; k < k0 && n_isas < MAX_LIST; k++)
            isas[n_isas++] = (strix_cpu_isa)(isas[k] | STRIX_CPU_CONV_EXACT);
    }
    if (n_isas * n_threads > MAX_LIST) {
        fprintf(stderr, "bench_conv: at most %d instruction set x thread count columns\n", MAX_LIST);
        strix_model_free(m);
        return EXIT_USAGE;
    }
    /* column c: isas[c / n_threads] with threads[c % n_threads] (teams[c % n_threads]) */
    int n_cols = n_isas * n_threads;
    strix_cpu_team *teams[MAX_LIST] = {0};
    for (int t = 0; t < n_threads; t++)
        if (strix_cpu_team_create(&teams[t], threads[t], 0, &e)) {
            fprintf(stderr, "bench_conv: %s\n", e.message);
            for (int u = 0; u < t; u++) strix_cpu_team_free(teams[u]);
            strix_model_free(m);
            return EXIT_NOMEM;
        }
    shape *shapes = NULL;
    int n_shapes = 0, rc = collect_shapes(m, imgsz, "bench_conv", &shapes, &n_shapes);
    if (rc) {
        for (int t = 0; t < n_threads; t++) strix_cpu_team_free(teams[t]);
        strix_model_free(m);
        return rc;
    }
    printf("strix_cpu_conv2d_packed on the %d distinct convolution shapes of %s scale %c at %dx%d; median of %d "
           "runs, the columns' runs interleaved%s\n",
           n_shapes, o.yaml_path, m->graph.scale, imgsz, imgsz, runs, cpu_time ? " (process CPU time)" : "");
    printf("%5s %-30s %4s %4s %8s %7s", "layer", "in HxWxC -> out HxWxC", "k/s", "uses", "MFLOP", "check");
    for (int c = 0; c < n_cols; c++) {
        char col[32];
        snprintf(col, sizeof col, "%s %dT", isa_label(isas[c / n_threads]), threads[c % n_threads]);
        printf(" %12s ms %6s", col, "GF/s");
    }
    printf("\n");
    double total_ms[MAX_LIST] = {0}, total_flop = 0, packed_mb[MAX_LIST] = {0};
    int failed = 0;
    uint64_t rng = seed * 0x9E3779B97F4A7C15ULL | 1;
    for (int si = 0; si < n_shapes && !rc; si++) {
        const shape *s = &shapes[si];
        size_t n_in = (size_t)s->h * s->w * s->cin, n_out = (size_t)s->oh * s->ow * s->cout;
        size_t n_w = (size_t)s->cout * s->p.kh * s->p.kw * (s->cin / s->p.groups);
        float *in = malloc(n_in * sizeof(float)), *w = malloc(n_w * sizeof(float));
        float *bias = malloc((size_t)s->cout * sizeof(float)), *out = malloc(n_out * sizeof(float));
        float *res = s->residual ? malloc(n_out * sizeof(float)) : NULL;
        float *packed[MAX_LIST] = {0};
        strix_view vin = strix_view_dense(in, 1, s->h, s->w, s->cin), vout = strix_view_dense(out, 1, s->oh, s->ow, s->cout);
        size_t ws_bytes = 0;
        int ok = 1;
        for (int t = 0; t < n_threads; t++) {
            size_t b = strix_cpu_conv2d_workspace(&vout, &vin, &s->p, threads[t]);
            if (b > ws_bytes) ws_bytes = b;
        }
        for (int k = 0; k < n_isas; k++) {
            size_t floats = strix_cpu_conv2d_packed_floats(isas[k], s->cin, s->cout, &s->p);
            packed_mb[k] += (double)floats * sizeof(float) * s->uses / 1e6;
            ok &= (packed[k] = malloc(floats * sizeof(float))) != NULL;
        }
        void *ws = malloc(ws_bytes);
        double *times = malloc(sizeof(double) * (size_t)runs * n_cols);
        if (!ok || !in || !w || !bias || !out || (s->residual && !res) || !ws || !times) {
            fprintf(stderr, "bench_conv: out of memory for layer %d's shape\n", s->first_layer);
            rc = EXIT_NOMEM;
        } else {
            /* weights scaled by 1/sqrt(K) keep outputs O(1), as in a trained network */
            float ws_scale = 1.0f / sqrtf((float)(n_w / (size_t)s->cout));
            for (size_t i = 0; i < n_in; i++) in[i] = next_sym(&rng);
            for (size_t i = 0; i < n_w; i++) w[i] = next_sym(&rng) * ws_scale;
            for (int i = 0; i < s->cout; i++) bias[i] = 0.1f * next_sym(&rng);
            for (size_t i = 0; res && i < n_out; i++) res[i] = next_sym(&rng);
            for (int k = 0; k < n_isas; k++) strix_cpu_conv2d_pack(isas[k], packed[k], w, s->cin, s->cout, &s->p);
            strix_view vres = res ? strix_view_dense(res, 1, s->oh, s->ow, s->cout) : vout;
            double flop = 2.0 * (double)n_out * (double)(n_w / (size_t)s->cout);
            char dims[64], ks[16];
            snprintf(dims, sizeof dims, "%dx%dx%d -> %dx%dx%d%s", s->h, s->w, s->cin, s->oh, s->ow, s->cout,
                     s->p.groups > 1 ? " dw" : "");
            snprintf(ks, sizeof ks, "%d/%d", s->p.kh, s->p.sh);
            printf("%5d %-30s %4s %4d %8.1f", s->first_layer, dims, ks, s->uses, flop / 1e6);
            /* every instruction set's result checked (with its first thread count) */
            double worst = 0;
            for (int k = 0; k < n_isas; k++) {
                strix_cpu_conv2d_packed(isas[k], &vout, &vin, packed[k], bias, res ? &vres : NULL, &s->p, ws,
                                        teams[0]);
                double wk = check(s, in, w, bias, res, out, &rng);
                if (!(wk <= worst)) worst = wk;
            }
            failed += !(worst <= 1.0);
            printf(" %7s", worst <= 1.0 ? "ok" : "FAIL");
            for (int r = 0; r < runs; r++)
                for (int c = 0; c < n_cols; c++) {
                    int k = c / n_threads;
                    double t0 = cpu_time ? cpu_s() : now_s();
                    strix_cpu_conv2d_packed(isas[k], &vout, &vin, packed[k], bias, res ? &vres : NULL, &s->p, ws,
                                            teams[c % n_threads]);
                    times[(size_t)c * runs + r] = (cpu_time ? cpu_s() : now_s()) - t0;
                }
            for (int c = 0; c < n_cols; c++) {
                double *tc = times + (size_t)c * runs;
                qsort(tc, (size_t)runs, sizeof *tc, cmp_double);
                double med = runs % 2 ? tc[runs / 2] : 0.5 * (tc[runs / 2 - 1] + tc[runs / 2]);
                total_ms[c] += 1e3 * med * s->uses;
                printf(" %15.3f %6.1f", 1e3 * med, flop / med / 1e9);
            }
            printf("\n");
            fflush(stdout);
            total_flop += flop * s->uses;
        }
        free(in);
        free(w);
        free(bias);
        free(out);
        free(res);
        free(ws);
        free(times);
        for (int k = 0; k < n_isas; k++) free(packed[k]);
    }
    if (!rc) {
        printf("all convolutions of one forward pass: %.2f GFLOP", total_flop / 1e9);
        for (int c = 0; c < n_cols; c++)
            printf("; %s %d thread%s %.2f ms, %.1f GFLOP/s", isa_label(isas[c / n_threads]),
                   threads[c % n_threads], threads[c % n_threads] > 1 ? "s" : "", total_ms[c],
                   total_flop / (total_ms[c] / 1e3) / 1e9);
        printf("\npacked weights (strix_cpu_conv2d_packed_floats, every convolution):");
        for (int k = 0; k < n_isas; k++) printf(" %s %.2f MB", isa_label(isas[k]), packed_mb[k]);
        printf("\n%s: %d of %d shapes checked against the naive reference\n", failed ? "FAIL" : "ok",
               n_shapes - failed, n_shapes);
    }
    free(shapes);
    for (int t = 0; t < n_threads; t++) strix_cpu_team_free(teams[t]);
    strix_model_free(m);
    return rc ? rc : failed ? 1 : 0;
}
