/* conv_lab.c — the kernel lab of the convolution family (llm.c dev/cuda
 * style): every kept version of strix_cuda_conv2d on every distinct
 * convolution shape of a model, checked against the CPU op, then timed.
 *
 * Versions (the kernels live in the library, kernels/conv.cu and
 * kernels/conv_mma.cu; this file selects them):
 *   1  v1 without cuBLAS: conv_igemm_f16_wmma_tile64x64 (WMMA 16x16x16) for
 *      every dense layer, the stem included (its 3 channels take the
 *      element-wise loader);
 *   2  v1 as a model runs it (cuda_kernels 1): 1x1 layers through cuBLAS +
 *      conv1x1_cublas_epilogue, the rest as version 1;
 *   3  v2 (cuda_kernels 2): conv_mma_f16<BM,BN,...> (mma.sync m16n8k16,
 *      ldmatrix, 3-stage cp.async, epilogue in registers) for every layer
 *      with Cin % 8 == 0, conv_stem_direct for the stem;
 *   4  v3 (cuda_kernels 3, not yet verified on a GPU): v2 with split-K
 *      where the tile's grid has fewer blocks than the GPU has SMs
 *      (conv_mma_f16<..., true> on K slices + conv_splitk_reduce); its
 *      lines name the slice count of the timing batch ("x3"; conv_plan.h);
 *      the stem through conv_stem_smem (its input tile read once into
 *      shared memory), so the stem's v3 line against its v2 line is that
 *      kernel's first timing.
 *
 * Build and run (a CUDA build, on a machine with an NVIDIA GPU):
 *   make kernel-lab                        # builds build/perf/cuda/conv_lab
 *   build/perf/cuda/conv_lab               # yolov8n 640, batch 64, versions 1,2,3,4
 *   build/perf/cuda/conv_lab --model weights/yolo11.yaml --batch 256 --versions 2,3
 *   build/perf/cuda/conv_lab --batch 1 --runs 50 --versions 3,4  # split-K against v2
 *   build/perf/cuda/conv_lab --batch 1 --runs 50 --split-sweep   # v3's slice target
 *   build/perf/cuda/conv_lab --variants          # every v2 tile configuration
 *   build/perf/cuda/conv_lab --random 500 --seed 7 --runs 5  # the check on 500 random shapes too
 *
 * --variants: instead of the versions, every tile configuration of the v2
 * table (strix_cuda_conv2d_mma_variant; kernels/conv_plan.h lists them) on
 * every shape it applies to, each checked and timed; one line per shape with
 * the time of the configuration the shape gets by default (strix_mma_pick),
 * the fastest one and all of them: the data behind strix_mma_pick.
 * --split-sweep: v2 and v3 on every shape the mma path takes, v3 told 1, 2
 * and 4 times the SM count (so aiming at 1, 2, 4 blocks per SM), each
 * checked and timed, with its slice count: the data behind
 * strix_splitk_count (conv_plan.h).
 *
 * Tensors are dense NHWC fp16: in [N, H, W, Cin], w [Cout, KH, KW, Cin]
 * (OHWI), bias [Cout] fp32, residual and out [N, OH, OW, Cout].  The check
 * runs batch --check-batch (default 2) of random inputs through each version
 * and through strix_cpu_conv2d (fp32 on the same fp16-rounded inputs and
 * weights) and bounds the relative L2 error (2e-3, the op tests' fp16
 * bound) and requires every output written (outputs poisoned with NaN
 * first).  --random N (default 0) adds N random shapes to the check, seeded
 * by --seed (default: the clock; printed in the first line and in every
 * failure): batch 1-2, 1x1 to 40x40, 1-96 channels (half of them multiples
 * of 8, which the mma path takes), kernels 1-5 with strides 1-2, dilation
 * 1-2 and any padding, one in eight depthwise, with or without SiLU and a
 * residual; they are checked with every selected version, not timed.
 * The timing runs batch --batch: warm-up, then the median of --runs
 * launches timed with CUDA events.  TFLOP/s = 2 x MACs / time, as % of the
 * H100 SXM's dense fp16 tensor rate (989 TFLOP/s); GB/s counts the fewest
 * bytes (input, weights, output and residual once), as % of 3350 GB/s.  The
 * last lines add up a forward pass (each shape times its uses).
 * Options, helpers and exit codes shared with the other labs: lab.h.
 * Exit status: 0, 1 a check failed, 2 usage, 8 out of memory, 9 no CUDA
 * device or a CUDA call failed. */
#define LAB_NAME "conv_lab"

#include <cublas_v2.h>
#include <unistd.h>

#include "../conv_shapes.h"
#include "cpu/ops.h"
#include "kernels/conv_plan.h"
#include "lab.h"

#define N_VERSIONS 4
#define CHECK_TOL 2e-3

static const char *version_name[N_VERSIONS + 1] = {"", "v1 wmma", "v1 wmma+cublas", "v2 mma", "v3 split-K"};

/* The SM count the launchers are told (tiles, v3's slices): the device's, or a
 * multiple of it in --split-sweep. */
static int lab_sms;

/* n random values rounded to fp16: host fp32 copy in *h, device fp16 in *d */
static void make_tensor(size_t n, float range, float **h, void **d)
{
    uint16_t *bits = lab_alloc(n * 2);
    *h = lab_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        bits[i] = lab_to_half(lab_uniform(-range, range));
        (*h)[i] = lab_from_half(bits[i]);
    }
    CU(cudaMalloc(d, n * 2));
    CU(cudaMemcpy(*d, bits, n * 2, cudaMemcpyHostToDevice));
    free(bits);
}

static strix_dview dense_view(void *d, int n, int h, int w, int c)
{
    strix_dview v = {d, n, h, w, c, (size_t)c, (size_t)h * w * c};
    return v;
}

typedef struct layer_bufs {
    int n;
    float *hin, *hw, *hbias, *hres;
    void *din, *dw, *dres, *dout, *ws;
    float *dbias;
    size_t out_len, ws_cap;
} layer_bufs;

static void bufs_make(layer_bufs *b, const shape *s, int n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    size_t in_len = (size_t)n * s->h * s->w * s->cin, w_len = (size_t)s->cout * s->p.kh * s->p.kw * (s->cin / s->p.groups);
    b->out_len = (size_t)n * s->oh * s->ow * s->cout;
    make_tensor(in_len, 1.0f, &b->hin, &b->din);
    make_tensor(w_len, 1.0f / sqrtf((float)(w_len / s->cout)), &b->hw, &b->dw);
    if (s->residual) make_tensor(b->out_len, 1.0f, &b->hres, &b->dres);
    b->hbias = lab_alloc(s->cout * sizeof(float));
    for (int i = 0; i < s->cout; i++) b->hbias[i] = lab_uniform(-0.5f, 0.5f);
    CU(cudaMalloc((void **)&b->dbias, s->cout * sizeof(float)));
    CU(cudaMemcpy(b->dbias, b->hbias, s->cout * sizeof(float), cudaMemcpyHostToDevice));
    CU(cudaMalloc(&b->dout, b->out_len * 2));
}

static void bufs_free(layer_bufs *b)
{
    free(b->hin), free(b->hw), free(b->hbias), free(b->hres);
    cudaFree(b->din), cudaFree(b->dw), cudaFree(b->dres), cudaFree(b->dout), cudaFree(b->dbias), cudaFree(b->ws);
}

/* The K slices v3 cuts the shape into at batch n (1: none; conv_plan.h),
 * for a shape its mma.sync path takes. */
static int lab_splits(const shape *s, int n)
{
    if (s->p.groups != 1 || s->cin % 8) return 1;
    return strix_mma_plan_make(n * s->oh * s->ow, s->cout, s->p.kh * s->p.kw * s->cin, lab_sms, 0, 1).splits;
}

/* Enqueue version v of the shape on b (v > N_VERSIONS: v2 tile
 * configuration v - N_VERSIONS); returns the launcher's error. */
static int run_version(int v, const shape *s, layer_bufs *b, cublasHandle_t blas, cudaStream_t st)
{
    strix_dview in = dense_view(b->din, b->n, s->h, s->w, s->cin), out = dense_view(b->dout, b->n, s->oh, s->ow, s->cout);
    strix_dview res = dense_view(b->dres, b->n, s->oh, s->ow, s->cout);
    if (v > N_VERSIONS)
        return strix_cuda_conv2d_mma_variant(&out, &in, b->dw, b->dbias, s->residual ? &res : NULL, &s->p,
                                             v - N_VERSIONS, (strix_stream)st);
    int kernels = v == 4 ? STRIX_CUDA_KERNELS_V3 : v == 3 ? STRIX_CUDA_KERNELS_V2 : STRIX_CUDA_KERNELS_V1;
    size_t need = strix_cuda_conv2d_workspace(&out, &in, &s->p, STRIX_F16, kernels, lab_sms);
    if (need > b->ws_cap) {
        cudaFree(b->ws);
        CU(cudaMalloc(&b->ws, need));
        b->ws_cap = need;
    }
    return strix_cuda_conv2d(&out, &in, b->dw, b->dbias, s->residual ? &res : NULL, &s->p, STRIX_F16, kernels, lab_sms,
                             v == 1 ? NULL : blas, b->ws, (strix_stream)st);
}

/* Relative L2 error of version v against the CPU on batch b->n; -1 when an
 * output was left unwritten (NaN poison) or is not finite, -2 when the launch
 * failed, -3 when the version does not take the shape. */
static double check_version(int v, const shape *s, layer_bufs *b, const float *ref, cublasHandle_t blas,
                            cudaStream_t st)
{
    CU(cudaMemsetAsync(b->dout, 0xff, b->out_len * 2, st)); /* 0xffff: an fp16 NaN */
    int rc = run_version(v, s, b, blas, st);
    if (rc) return rc == cudaErrorNotSupported ? -3 : -2;
    uint16_t *got = lab_alloc(b->out_len * 2);
    CU(cudaMemcpyAsync(got, b->dout, b->out_len * 2, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    double num = 0, den = 0;
    for (size_t i = 0; i < b->out_len; i++) {
        float g = lab_from_half(got[i]);
        if (!isfinite(g)) {
            free(got);
            return -1;
        }
        num += ((double)g - ref[i]) * ((double)g - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    free(got);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

typedef struct conv_run {
    const shape *s;
    layer_bufs *b;
    cublasHandle_t blas;
    cudaStream_t st;
} conv_run;

static int launch(void *ctx, int v)
{
    const conv_run *r = ctx;
    return run_version(v, r->s, r->b, r->blas, r->st);
}

static double time_version(int v, const shape *s, layer_bufs *b, cublasHandle_t blas, cudaStream_t st, int runs)
{
    conv_run r = {s, b, blas, st};
    return lab_time(launch, &r, v, st, runs);
}

/* The CPU's output for cb (its inputs), in a new buffer. */
static float *cpu_reference(const shape *s, const layer_bufs *cb)
{
    int n = cb->n;
    float *ref = lab_alloc(cb->out_len * sizeof(float));
    strix_view hin = {cb->hin, n, s->h, s->w, s->cin, (size_t)s->cin, (size_t)s->h * s->w * s->cin};
    strix_view hout = {ref, n, s->oh, s->ow, s->cout, (size_t)s->cout, (size_t)s->oh * s->ow * s->cout};
    strix_view hres = {cb->hres, n, s->oh, s->ow, s->cout, (size_t)s->cout, (size_t)s->oh * s->ow * s->cout};
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    threads = threads < 1 ? 1 : threads;
    void *cws = lab_alloc(strix_cpu_conv2d_workspace(&hout, &hin, &s->p, threads) + 1);
    strix_cpu_team *team = NULL;
    strix_error e;
    if (strix_cpu_team_create(&team, threads, 0, &e)) {
        fprintf(stderr, "conv_lab: out of memory\n");
        exit(EXIT_NOMEM);
    }
    strix_cpu_conv2d(STRIX_CPU_ISA_AUTO, &hout, &hin, cb->hw, cb->hbias, s->residual ? &hres : NULL, &s->p, cws, team);
    strix_cpu_team_free(team);
    free(cws);
    return ref;
}

/* --variants: every v2 tile configuration on every shape it takes. */
static int sweep_variants(const shape *shapes, int n_shapes, int check_batch, int batch, int runs,
                          cublasHandle_t blas, cudaStream_t st)
{
    int nv = strix_cuda_conv2d_mma_variants(), failed = 0;
    double total_pick = 0, total_best = 0;
    printf("%-5s %-4s %-24s %-6s %9s %9s %-5s  all variants (ms; x: check failed, -: not applicable)\n", "layer", "uses",
           "shape (HxW Cin->Cout)", "k/s", "pick ms", "best ms", "best");
    for (int si = 0; si < n_shapes; si++) {
        const shape *s = &shapes[si];
        layer_bufs cb, tb;
        bufs_make(&cb, s, check_batch);
        float *ref = cpu_reference(s, &cb);
        bufs_make(&tb, s, batch);
        char desc[64], ks[16], all[1024] = "";
        snprintf(desc, sizeof desc, "%dx%d %d->%d%s", s->h, s->w, s->cin, s->cout, s->residual ? " +res" : "");
        snprintf(ks, sizeof ks, "%d/%d", s->p.kh, s->p.sh);
        double pick = time_version(3, s, &tb, blas, st, runs), best = 1e30;
        int best_v = 0;
        for (int v = 1; v <= nv; v++) {
            double err = check_version(N_VERSIONS + v, s, &cb, ref, blas, st);
            size_t len = strlen(all);
            if (err == -3) { /* not applicable (Cin % 8, groups) */
                snprintf(all + len, sizeof all - len, " %d:-", v);
                cudaGetLastError();
                continue;
            }
            if (err < 0 || err > CHECK_TOL) {
                failed++;
                snprintf(all + len, sizeof all - len, " %d:x", v);
                continue;
            }
            double ms = time_version(N_VERSIONS + v, s, &tb, blas, st, runs);
            snprintf(all + len, sizeof all - len, " %d:%.4f", v, ms);
            if (ms > 0 && ms < best) best = ms, best_v = v;
        }
        if (best_v) {
            total_pick += pick * s->uses;
            total_best += best * s->uses;
            printf("%-5d %-4d %-24s %-6s %9.4f %9.4f %-5d %s\n", s->first_layer, s->uses, desc, ks, pick, best, best_v, all);
        } else {
            printf("%-5d %-4d %-24s %-6s %9s %9s %-5s %s\n", s->first_layer, s->uses, desc, ks, "-", "-", "-", all);
        }
        free(ref);
        bufs_free(&cb);
        bufs_free(&tb);
    }
    printf("\n# convolutions the v2 GEMM takes, batch %d: %.3f ms with the picked tiles, %.3f ms with the best per shape\n",
           batch, total_pick, total_best);
    printf("%s: %d failed checks\n", failed ? "FAIL" : "ok", failed);
    return failed ? 1 : 0;
}

/* --split-sweep: v3 on every shape its mma path takes, told 1, 2 and 4
 * times the device's SM count (its plan then aims at 1, 2 or 4 blocks per
 * SM, kernels/conv_plan.h; told more SMs, a shape between the two tile
 * choices of strix_mma_pick also gets the small-grid tile), against v2;
 * each checked, then timed.  The data behind strix_splitk_count's target
 * and STRIX_SPLITK_MIN_STEPS: run it at batch 1. */
static int sweep_splits(const shape *shapes, int n_shapes, int check_batch, int batch, int runs, cublasHandle_t blas,
                        cudaStream_t st)
{
    static const int mult[] = {1, 2, 4};
    enum { N_MULT = sizeof mult / sizeof *mult };
    const int device_sms = lab_sms;
    double total_v2 = 0, total[N_MULT] = {0};
    int failed = 0;
    printf("%-5s %-4s %-24s %-6s %9s  v3 told 1x, 2x, 4x the SMs (slices:ms; x: check failed)\n", "layer", "uses",
           "shape (HxW Cin->Cout)", "k/s", "v2 ms");
    for (int si = 0; si < n_shapes; si++) {
        const shape *s = &shapes[si];
        if (s->p.groups != 1 || s->cin % 8) continue;
        layer_bufs cb, tb;
        bufs_make(&cb, s, check_batch);
        float *ref = cpu_reference(s, &cb);
        bufs_make(&tb, s, batch);
        char desc[64], ks[16], all[256] = "";
        snprintf(desc, sizeof desc, "%dx%d %d->%d%s", s->h, s->w, s->cin, s->cout, s->residual ? " +res" : "");
        snprintf(ks, sizeof ks, "%d/%d", s->p.kh, s->p.sh);
        const double v2 = time_version(3, s, &tb, blas, st, runs);
        total_v2 += v2 * s->uses;
        for (int j = 0; j < N_MULT; j++) {
            lab_sms = device_sms * mult[j];
            const double err = check_version(4, s, &cb, ref, blas, st);
            const double ms = err < 0 || err > CHECK_TOL ? -1 : time_version(4, s, &tb, blas, st, runs);
            size_t len = strlen(all);
            if (ms < 0) {
                failed++;
                snprintf(all + len, sizeof all - len, "  %d:x", lab_splits(s, batch));
            } else {
                total[j] += ms * s->uses;
                snprintf(all + len, sizeof all - len, "  %d:%.4f", lab_splits(s, batch), ms);
            }
        }
        lab_sms = device_sms;
        printf("%-5d %-4d %-24s %-6s %9.4f %s\n", s->first_layer, s->uses, desc, ks, v2, all);
        free(ref);
        bufs_free(&cb);
        bufs_free(&tb);
    }
    printf("\n# convolutions the mma path takes, batch %d: v2 %.3f ms; v3 told 1x, 2x, 4x the SMs: %.3f, %.3f, %.3f ms\n",
           batch, total_v2, total[0], total[1], total[2]);
    printf("%s: %d failed checks\n", failed ? "FAIL" : "ok", failed);
    return failed ? 1 : 0;
}

/* A random convolution for --random (see the header). */
static shape random_shape(void)
{
    static const int ks[] = {1, 1, 3, 3, 3, 5};
    shape s;
    memset(&s, 0, sizeof s);
    const int depthwise = lab_int(0, 7) == 0;
    s.h = lab_int(1, 40), s.w = lab_int(1, 40);
    s.cin = lab_int(0, 1) ? 8 * lab_int(1, 12) : lab_int(1, 96);
    s.cout = depthwise ? s.cin : lab_int(0, 1) ? 8 * lab_int(1, 12) : lab_int(1, 96);
    strix_conv_params *p = &s.p;
    p->kh = ks[lab_int(0, 5)], p->kw = lab_int(0, 3) ? p->kh : ks[lab_int(0, 5)];
    p->sh = lab_int(1, 2), p->sw = lab_int(0, 3) ? p->sh : lab_int(1, 2);
    p->dh = p->dw = lab_int(0, 5) ? 1 : 2;
    p->ph = lab_int(0, 3) ? p->dh * (p->kh / 2) : lab_int(0, p->dh * (p->kh - 1));
    p->pw = lab_int(0, 3) ? p->dw * (p->kw / 2) : lab_int(0, p->dw * (p->kw - 1));
    if (s.h + 2 * p->ph < p->dh * (p->kh - 1) + 1) p->ph = p->dh * (p->kh - 1); /* at least one output row */
    if (s.w + 2 * p->pw < p->dw * (p->kw - 1) + 1) p->pw = p->dw * (p->kw - 1);
    p->groups = depthwise ? s.cin : 1;
    p->act = lab_int(0, 3) ? STRIX_ACT_SILU : STRIX_ACT_NONE;
    s.oh = (s.h + 2 * p->ph - p->dh * (p->kh - 1) - 1) / p->sh + 1;
    s.ow = (s.w + 2 * p->pw - p->dw * (p->kw - 1) - 1) / p->sw + 1;
    s.residual = lab_int(0, 3) == 0;
    s.first_layer = -1;
    return s;
}

/* --random: `count` random shapes through every selected version, each
 * against the CPU on a random batch of 1-2; the failures. */
static int check_random(int count, const lab_opts *o, cublasHandle_t blas, cudaStream_t st)
{
    int failed = 0, checks = 0;
    for (int r = 0; r < count; r++) {
        const shape s = random_shape();
        const strix_conv_params *p = &s.p;
        layer_bufs cb;
        bufs_make(&cb, &s, lab_int(1, 2));
        float *ref = cpu_reference(&s, &cb);
        for (int v = 1; v <= N_VERSIONS; v++) {
            if (!o->on[v]) continue;
            const double err = check_version(v, &s, &cb, ref, blas, st);
            checks++;
            if (err >= 0 && err <= CHECK_TOL) continue;
            failed++;
            cudaGetLastError();
            printf("FAIL random %d: n%d %dx%d %d->%d k%dx%d s%dx%d p%dx%d d%dx%d g%d%s%s %s: %s (seed %" PRIu64 ")\n", r,
                   cb.n, s.h, s.w, s.cin, s.cout, p->kh, p->kw, p->sh, p->sw, p->ph, p->pw, p->dh, p->dw, p->groups,
                   p->act == STRIX_ACT_SILU ? " silu" : "", s.residual ? " +res" : "", version_name[v],
                   err == -1 ? "an output unwritten or not finite" : err == -2 ? "launch error" : "relative L2 error over 2e-3",
                   o->seed);
        }
        free(ref);
        bufs_free(&cb);
    }
    printf("# random shapes: %d, %d checks, %d failed (seed %" PRIu64 ")\n", count, checks, failed, o->seed);
    return failed;
}

static void usage(void)
{
    fprintf(stderr, "usage: conv_lab " LAB_OPTS_USAGE "\n"
                    "        [--versions 1,2,3,4 | --variants | --split-sweep]\n");
    exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
    lab_opts o;
    lab_opts_init(&o, N_VERSIONS, 0);
    int sweep = 0; /* 1: --variants, 2: --split-sweep */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--variants") || !strcmp(a, "--split-sweep")) {
            sweep = a[2] == 'v' ? 1 : 2;
            continue;
        }
        if (lab_opt(a, i + 1 < argc ? argv[i + 1] : NULL, &o, N_VERSIONS) != 1) usage();
        i++;
    }
    const int *on = o.on, batch = o.batch, check_batch = o.check_batch, runs = o.runs;
    struct cudaDeviceProp prop;
    lab_device(&prop);
    lab_sms = prop.multiProcessorCount;
    strix_model *m = lab_model(&o);
    shape *shapes;
    int n_shapes, rc = collect_shapes(m, o.imgsz, "conv_lab", &shapes, &n_shapes);
    strix_model_free(m);
    if (rc) return rc;
    cudaStream_t st;
    cublasHandle_t blas;
    CU(cudaStreamCreate(&st));
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(blas, st) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "conv_lab: cuBLAS could not be initialised\n");
        return EXIT_DEVICE;
    }
    printf("# conv_lab: %s scale %c at %dx%d on %s (%d SMs); seed %" PRIu64 "; check batch %d and %d random shapes, "
           "timing batch %d, median of %d\n",
           o.yaml, o.scale, o.imgsz, o.imgsz, prop.name, prop.multiProcessorCount, o.seed, check_batch, o.random, batch,
           runs);
    lab_seed(o.seed);
    const int random_failed = o.random ? check_random(o.random, &o, blas, st) : 0;
    if (sweep) {
        rc = sweep == 1 ? sweep_variants(shapes, n_shapes, check_batch, batch, runs, blas, st)
                        : sweep_splits(shapes, n_shapes, check_batch, batch, runs, blas, st);
        return rc || random_failed ? 1 : 0;
    }
    printf("%-5s %-4s %-24s %-6s %-15s %9s %9s %7s %9s %7s %9s\n", "layer", "uses", "shape (HxW Cin->Cout)", "k/s",
           "version", "rel err", "ms", "TFLOP/s", "%peak", "GB/s", "%HBM");
    double total[N_VERSIONS + 1] = {0};
    int failed = random_failed;
    for (int si = 0; si < n_shapes; si++) {
        const shape *s = &shapes[si];
        /* the CPU reference on the check batch */
        layer_bufs cb;
        bufs_make(&cb, s, check_batch);
        float *ref = cpu_reference(s, &cb);
        layer_bufs tb;
        bufs_make(&tb, s, batch);
        double macs = (double)batch * s->oh * s->ow * s->cout * s->p.kh * s->p.kw * (s->cin / s->p.groups);
        double bytes = 2.0 * ((double)batch * s->h * s->w * s->cin + (double)s->cout * s->p.kh * s->p.kw * s->cin +
                              (double)(1 + s->residual) * batch * s->oh * s->ow * s->cout);
        char desc[64], ks[16];
        snprintf(desc, sizeof desc, "%dx%d %d->%d%s", s->h, s->w, s->cin, s->cout, s->residual ? " +res" : "");
        snprintf(ks, sizeof ks, "%d/%d", s->p.kh, s->p.sh);
        for (int v = 1; v <= N_VERSIONS; v++) {
            if (!on[v]) continue;
            double err = check_version(v, s, &cb, ref, blas, st);
            double ms = time_version(v, s, &tb, blas, st, runs);
            int bad = err < 0 || err > CHECK_TOL || ms < 0;
            failed += bad;
            total[v] += ms * s->uses;
            char vname[32];
            int splits = v == 4 ? lab_splits(s, batch) : 1;
            snprintf(vname, sizeof vname, splits > 1 ? "%s x%d" : "%s", version_name[v], splits);
            printf("%-5d %-4d %-24s %-6s %-15s %9.2e %9.4f %7.1f %8.1f%% %7.0f %8.1f%%%s\n", s->first_layer, s->uses,
                   desc, ks, vname, err, ms, 2 * macs / (ms * 1e9), 100 * 2 * macs / (ms * 1e9) / LAB_PEAK_TFLOPS,
                   lab_gbs(bytes, ms), lab_pct_hbm(bytes, ms),
                   bad ? (err == -1 ? "  FAIL unwritten/non-finite" : err == -2 ? "  FAIL launch" : "  FAIL") : "");
        }
        free(ref);
        bufs_free(&cb);
        bufs_free(&tb);
    }
    printf("\n# forward pass (all convolution layers, batch %d): ms per batch, images/s from the convolutions alone\n",
           batch);
    for (int v = 1; v <= N_VERSIONS; v++)
        if (on[v]) printf("%-15s %9.3f ms  %9.0f images/s\n", version_name[v], total[v], batch / (total[v] / 1e3));
    printf("%s: %d failed checks\n", failed ? "FAIL" : "ok", failed);
    cublasDestroy(blas);
    cudaStreamDestroy(st);
    free(shapes);
    return failed ? 1 : 0;
}
