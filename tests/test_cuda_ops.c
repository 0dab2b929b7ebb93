/* test_cuda_ops.c — the CUDA backend against the CPU backend, in the style of
 * ggml's test-backend-ops: every launcher of kernels/kernels.h on fresh
 * random inputs and tail shapes (channels 1/3/17/33/65, odd H and W, batch
 * 3, strided channel slices in and out), then the whole network (yolov8n and
 * yolo11n on synthetic weights) through the public API on "cpu" and "cuda".
 *
 * Every device output lives in a buffer with GUARD sentinel elements before
 * and after it; the buffer, guards and the channels outside the view under
 * test are poisoned with a NaN pattern no kernel produces, and must come
 * back bit-identical; every value inside the view must be finite.
 * Tolerances, as max |gpu - cpu| / max |cpu| over a tensor: fp32 1e-5 (cuBLAS
 * with TF32 off), fp16 2e-3 (the CPU reference runs on the fp16-rounded
 * inputs); data movement, max-pooling, fp32 letterbox and NMS must be
 * exact, fp16 letterbox within half an fp16 ulp of the CPU's fp32 value.
 * Whole network: fp32 within 1e-4 relative L2 of the CPU with the same
 * detections (same class, IoU >= 0.99, both ways); fp16 >= 98% of the CPU's
 * boxes matched (same class, IoU >= 0.9), both running F16-stored weights.  Boxes scoring within 1e-3 (fp32)
 * or 5e-3 (fp16) of the threshold may fall on either side of it and are not
 * required.
 *
 * Without a CUDA build every GPU test prints "SKIP name: built without CUDA",
 * without a usable device "SKIP name: no CUDA device"; the program exits 0.
 * Six tests run everywhere: device_selection (the device names and their
 * errors), letterbox_batch_plan (the per-batch letterbox's grid and frame
 * descriptors of kernels/lb_batch.h against per-frame launches, emulated
 * on the CPU), stage_plan (the detect path's frame layout and pinned
 * copies of engine/cuda/stage_plan.h, emulated with memcpy), conv_mma_plan (the tile and split-K arithmetic of
 * kernels/conv_plan.h, with the split-K dataflow emulated on the CPU, and
 * in CUDA builds each set's workspace: set 3 never stages for cuBLAS),
 * sppf_plan (SPPF's pools as wider windows, set 3's SPPF kernel emulated
 * with kernels/pool_plan.h, and set 3's stem tile) and upsample_fold_plan
 * (set 3's folded-upsample loader emulated with kernels/fold_plan.h).
 * Kernel sets: the op_ tests run sets 1, 2 and 3 (3: split-K, the
 * shared-memory stem, the one-pass SPPF and the folded upsample, written
 * without a GPU; its op_ and net_ tests are the first check it gets).
 * Run from the repository root (the network tests read the YAMLs in weights/):
 *   test_cuda_ops [--seeds N] [--quick] [NAME[,NAME...]]
 * --seeds N runs each op_ test on N consecutive seeds; --quick runs fewer,
 * smaller cases (compute-sanitizer); NAME selects tests by substring. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/ops.h"
#include "kernels/conv_plan.h"
#include "kernels/fold_plan.h"
#include "kernels/lb_batch.h"
#include "kernels/pool_plan.h"
#include "cuda/stage_plan.h"
#include "letterbox.h"
#include "strix.h"
#include "oplayout.h"
#include "testlib.h"

/* The tests that need a GPU, in order. */
#define GPU_TESTS(X)          \
    X(op_convert)             \
    X(op_conv2d_f32)          \
    X(op_conv2d_f16)          \
    X(op_conv2d_f32_v2)       \
    X(op_conv2d_f16_v2)       \
    X(op_conv2d_f32_v3)       \
    X(op_conv2d_f16_v3)       \
    X(op_conv2d_f16_tiles)    \
    X(op_conv2d_stem_v3)      \
    X(op_conv2d_fold_v3)      \
    X(op_maxpool2d)           \
    X(op_maxpool_cascade)     \
    X(op_maxpool_cascade_stress) \
    X(op_maxpool_cascade_v3)  \
    X(op_upsample_copy)       \
    X(op_attention_f32)       \
    X(op_attention_f16)       \
    X(op_detect_decode)       \
    X(op_letterbox)           \
    X(op_letterbox_batch)     \
    X(op_nms)                 \
    X(net_forward_f32)        \
    X(net_detect_f32)         \
    X(net_detect_f16)         \
    X(net_graph_replay)       \
    X(net_detect_f16_v1)      \
    X(net_graph_replay_v1)    \
    X(net_detect_f16_v3)      \
    X(net_graph_replay_v3)    \
    X(net_upsample_fold_v3)   \
    X(net_detect_async)       \
    X(net_detect_async_batch_letterbox) \
    X(net_detect_pinned)      \
    X(net_graph_cache)

/* ------------------------------------------------- device names and errors */

static void device_selection(void)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = "weights/yolov8.yaml";
    o.scale = 'n';
    strix_model *m = NULL;
    strix_error e;
    static const char *bad[] = {"gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "CUDA"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o.device = bad[i];
        strix_status st = strix_model_load(&m, &o, &e);
        TL_CHECK(st == STRIX_E_ARG && m == NULL, "device '%s' gave status %d, want STRIX_E_ARG", bad[i], st);
    }
    static const char *cpu[] = {"cpu", "", NULL};
    for (size_t i = 0; i < sizeof cpu / sizeof *cpu; i++) {
        o.device = cpu[i];
        TL_CHECK(strix_model_load(&m, &o, &e) == STRIX_OK, "device '%s': %s", cpu[i] ? cpu[i] : "(null)", e.message);
        strix_model_free(m);
    }
    int count = strix_device_count();
    char name[32];
    snprintf(name, sizeof name, "cuda:%d", count);
    o.device = count ? name : "cuda";
#ifdef STRIX_WITH_CUDA
    /* a device index past the last one (or any, with none) */
    TL_CHECK(strix_model_load(&m, &o, &e) == STRIX_E_DEVICE && m == NULL, "device '%s' gave status %d (%s), want STRIX_E_DEVICE",
             o.device, e.status, e.message);
    TL_CHECK(strstr(e.message, "cuda") != NULL, "the message does not name the device: %s", e.message);
    if (count) {
        o.device = "cuda";
        o.half = 1;
        TL_CHECK(strix_model_load(&m, &o, &e) == STRIX_OK, "device 'cuda': %s", e.message);
        strix_model_free(m);
    }
#else
    TL_CHECK(count == 0, "a CPU-only build reports %d CUDA devices", count);
    TL_CHECK(strix_model_load(&m, &o, &e) == STRIX_E_UNSUPPORTED && m == NULL, "device 'cuda' gave status %d, want STRIX_E_UNSUPPORTED",
             e.status);
    TL_CHECK(strstr(e.message, "CUDA=1") != NULL, "the message does not say how to get CUDA: %s", e.message);
#endif
}

#ifndef STRIX_WITH_CUDA

#define SKIP_TEST(name) \
    static void name(void) { tl_skip("built without CUDA"); }
GPU_TESTS(SKIP_TEST)

#else /* STRIX_WITH_CUDA */

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda/backend.h" /* strix_cuda_backend_upsample_folds, strix_cuda_backend_graph_stats */
#include "kernels/kernels.h"
#include "model_internal.h" /* the model's backend */
#include "postprocess.h"

#define GUARD 256             /* sentinel elements before and after each device buffer */
#define SENT32 0x7fc5a5a5u    /* fp32 sentinel: a quiet NaN no kernel produces */
#define SENT16 0x7e5bu        /* fp16 sentinel */
#define TOL32 1e-5
#define TOL16 2e-3
#define MAX_TRACKED 4096
#define NET_YAMLS 2
#define CASES(full, few) (T.quick ? (few) : (full)) /* random cases per op test */

/* The device, a stream and a cuBLAS handle (fp32: pedantic, no TF32), and
 * every allocation of the running test, released after it whatever happens. */
static struct {
    int ready;
    int quick; /* --quick: fewer and smaller cases, for the sanitizer runs */
    int kernels; /* the kernel set the net_ tests load models with (model option cuda_kernels) */
    int sms;     /* the device's SM count, handed to the convolution launchers */
    int async;   /* model option cuda_async of the models they load */
    cudaStream_t s;
    cublasHandle_t blas;
    void *dev[MAX_TRACKED], *host[MAX_TRACKED];
    int n_dev, n_host;
    char tmpdir[64];
} T;

static void release_all(void)
{
    if (T.ready) cudaStreamSynchronize(T.s);
    for (int i = 0; i < T.n_dev; i++) cudaFree(T.dev[i]);
    for (int i = 0; i < T.n_host; i++) free(T.host[i]);
    T.n_dev = T.n_host = 0;
}

static int need_device(void)
{
    if (T.ready) return 1;
    tl_skip("no CUDA device");
    return 0;
}

static void *dmalloc(size_t bytes)
{
    void *p = NULL;
    if (T.n_dev == MAX_TRACKED || cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        tl_fail("cudaMalloc of %zu bytes failed", bytes);
        return NULL;
    }
    return T.dev[T.n_dev++] = p;
}

static void *hmalloc(size_t bytes)
{
    void *p = T.n_host == MAX_TRACKED ? NULL : calloc(1, bytes ? bytes : 1);
    if (!p) {
        tl_fail("out of host memory (%zu bytes)", bytes);
        return NULL;
    }
    return T.host[T.n_host++] = p;
}

static const char *err_text(int code)
{
    if (code >= STRIX_CUDA_ERR_CUBLAS) return cublasGetStatusName((cublasStatus_t)(code - STRIX_CUDA_ERR_CUBLAS));
    return cudaGetErrorName((cudaError_t)code);
}

/* A CUDA call or launcher: on error fail the test and return. */
#define CK(call)                                                                                   \
    do {                                                                                           \
        int code_ = (int)(call);                                                                   \
        if (code_) {                                                                               \
            tl_fail("%s:%d: %s: %s", __FILE__, __LINE__, #call, err_text(code_));                  \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* The same inside a helper returning 0 on failure. */
#define CK0(call)                                                                                  \
    do {                                                                                           \
        int code_ = (int)(call);                                                                   \
        if (code_) {                                                                               \
            tl_fail("%s:%d: %s: %s", __FILE__, __LINE__, #call, err_text(code_));                  \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)

/* Every host <-> device copy of this program: on T.s, then T.s synchronised.
 * Not plain cudaMemcpy: that runs on the legacy default stream, which T.s
 * (cudaStreamNonBlocking) is not ordered against, and from pageable memory
 * it may return before its DMA has landed; a kernel on T.s could then run
 * before the poison or the input it should see, or be overwritten by them. */
static int copy_sync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    CK0(cudaMemcpyAsync(dst, src, bytes, kind, T.s));
    CK0(cudaStreamSynchronize(T.s));
    return 1;
}

static int h2d(void *dst, const void *src, size_t bytes) { return copy_sync(dst, src, bytes, cudaMemcpyHostToDevice); }
static int d2h(void *dst, const void *src, size_t bytes) { return copy_sync(dst, src, bytes, cudaMemcpyDeviceToHost); }

/* IEEE binary16 -> float, exact. */
static float half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float f = ldexpf((float)m, -24);
        return s ? -f : f;
    }
    if (e == 31) return bits_f32(s | 0x7f800000u | (m << 13));
    return bits_f32(s | ((e + 112) << 23) | (m << 13));
}

/* Half an fp16 ulp at x: 2^(e - 11) for |x| in [2^e, 2^(e+1)), normal range;
 * 2^-25 for subnormals (their ulp is 2^-24). */
static double half_ulp16(float x)
{
    int e = 0;
    if (x != 0) frexp(fabs((double)x), &e); /* |x| in [2^(e-1), 2^e) */
    return ldexp(1.0, (x == 0 || e - 1 < -14 ? -14 : e - 1) - 11);
}

static size_t esz(strix_dtype dt) { return dt == STRIX_F16 ? 2 : 4; }

/* ------------------------------------------------------- guarded buffers */

/* A device tensor buffer of len elements between two guards, and its host
 * fp32 mirror (inputs: the values as rounded to the dtype). */
typedef struct tbuf {
    strix_dtype dt;
    size_t len;
    float *h;
    void *d; /* GUARD + len + GUARD elements */
} tbuf;

static void *tb_data(const tbuf *b) { return (char *)b->d + GUARD * esz(b->dt); }

/* Fill the whole allocation, guards included, with the sentinel. */
static int tb_poison(const tbuf *b)
{
    size_t all = b->len + 2 * GUARD, bytes = all * esz(b->dt);
    void *raw = hmalloc(bytes);
    if (!raw) return 0;
    for (size_t i = 0; i < all; i++) {
        if (b->dt == STRIX_F16) ((uint16_t *)raw)[i] = SENT16;
        else ((uint32_t *)raw)[i] = SENT32;
    }
    return h2d(b->d, raw, bytes);
}

/* Upload b->h (fp32) into the buffer, converting on the device for fp16, and
 * read the stored values back into b->h. */
static int tb_upload(tbuf *b)
{
    if (b->dt == STRIX_F32) {
        return h2d(tb_data(b), b->h, b->len * 4);
    }
    float *tmp = dmalloc(b->len * 4);
    uint16_t *raw = hmalloc(b->len * 2);
    if (!tmp || !raw) return 0;
    if (!h2d(tmp, b->h, b->len * 4)) return 0;
    CK0(strix_cuda_convert(tb_data(b), STRIX_F16, tmp, STRIX_F32, b->len, (strix_stream)T.s));
    if (!d2h(raw, tb_data(b), b->len * 2)) return 0;
    for (size_t i = 0; i < b->len; i++) b->h[i] = half_to_float(raw[i]);
    return 1;
}

/* A buffer of len elements: range > 0 an input uniform in [-range, range);
 * range == 0 an output, poisoned. */
static int tb_new(tbuf *b, size_t len, strix_dtype dt, float range)
{
    b->dt = dt;
    b->len = len;
    b->h = hmalloc(len * sizeof(float));
    b->d = dmalloc((len + 2 * GUARD) * esz(dt));
    if (!b->h || !b->d || !tb_poison(b)) return 0;
    if (range <= 0) return 1;
    for (size_t i = 0; i < len; i++) b->h[i] = tl_uniform(-range, range);
    return tb_upload(b);
}

/* Download the whole allocation; raw receives its bits ((len + 2 GUARD) *
 * esz bytes), the guards are checked. */
static int tb_fetch(const tbuf *b, void **raw_out, const char *what)
{
    size_t all = b->len + 2 * GUARD, bytes = all * esz(b->dt);
    void *raw = hmalloc(bytes);
    if (!raw) return 0;
    if (!d2h(raw, b->d, bytes)) return 0;
    for (size_t i = 0; i < all; i++) {
        if (i == GUARD) i = GUARD + b->len;
        int ok = b->dt == STRIX_F16 ? ((uint16_t *)raw)[i] == SENT16 : ((uint32_t *)raw)[i] == SENT32;
        if (!ok) {
            tl_fail("%s: guard element %s the buffer overwritten", what, i < GUARD ? "before" : "after");
            return 0;
        }
    }
    *raw_out = (char *)raw + GUARD * esz(b->dt);
    return 1;
}

static float raw_value(const void *raw, strix_dtype dt, size_t i)
{
    return dt == STRIX_F16 ? half_to_float(((const uint16_t *)raw)[i]) : ((const float *)raw)[i];
}

static int raw_is_sentinel(const void *raw, strix_dtype dt, size_t i)
{
    return dt == STRIX_F16 ? ((const uint16_t *)raw)[i] == SENT16 : ((const uint32_t *)raw)[i] == SENT32;
}

/* ----------------------------------------------------------------- layouts */

static strix_dview dev_view(const layout *l, const tbuf *b)
{
    size_t ps = (size_t)l->c + l->extra;
    strix_dview v = {(char *)tb_data(b) + (size_t)l->c0 * esz(b->dt), l->n, l->h, l->w, l->c, ps,
                     (size_t)l->h * l->w * ps + l->batch_extra};
    return v;
}

/* A layout and its guarded buffer. */
typedef struct tensor {
    layout l;
    tbuf b;
} tensor;

/* An output (range 0: all poisoned) or an input whose view holds uniform
 * values in [-range, range) and whose other elements hold the NaN
 * sentinel, so a read outside the view shows up as a NaN in the output. */
static int tensor_new(tensor *t, layout l, strix_dtype dt, float range)
{
    t->l = l;
    if (!tb_new(&t->b, layout_len(&l), dt, 0)) return 0;
    if (range <= 0) return 1;
    for (size_t i = 0; i < t->b.len; i++) t->b.h[i] = bits_f32(SENT32);
    for (int n = 0; n < l.n; n++)
        for (int y = 0; y < l.h; y++)
            for (int x = 0; x < l.w; x++)
                for (int c = 0; c < l.c; c++) t->b.h[layout_index(&l, n, y, x, c)] = tl_uniform(-range, range);
    return tb_upload(&t->b);
}

/* float -> fp16 bits for values fp16 represents exactly (normal or zero). */
static uint16_t half_exact(float f)
{
    uint32_t u = f32_bits(f), s = (u >> 16) & 0x8000u;
    if (!(u & 0x7fffffffu)) return (uint16_t)s;
    return (uint16_t)(s | ((((u >> 23) & 0xffu) - 112) << 10) | ((u >> 13) & 0x3ffu));
}

/* Give the elements of t's view values k/256, |k| <= 256 (exact in fp16,
 * so no host rounding is needed), the rest of the buffer staying poisoned;
 * t->b.h receives them. */
static int tensor_fill_view(tensor *t)
{
    size_t bytes = t->b.len * esz(t->b.dt);
    unsigned char *raw = hmalloc(bytes);
    if (!raw) return 0;
    if (!d2h(raw, tb_data(&t->b), bytes)) return 0;
    const layout *l = &t->l;
    for (int n = 0; n < l->n; n++)
        for (int y = 0; y < l->h; y++)
            for (int x = 0; x < l->w; x++)
                for (int c = 0; c < l->c; c++) {
                    size_t i = layout_index(l, n, y, x, c);
                    float v = (float)tl_int(-256, 256) / 256.0f;
                    t->b.h[i] = v;
                    if (t->b.dt == STRIX_F16) ((uint16_t *)raw)[i] = half_exact(v);
                    else memcpy(raw + i * 4, &v, 4);
                }
    return h2d(tb_data(&t->b), raw, bytes);
}

/* Compare the device view of t with the host reference `ref` laid out like
 * t (only the view's elements are read): guards and everything outside the
 * view must hold the sentinel, the view finite values with
 * max|gpu - ref| <= tol * max|ref| (tol 0: bit-exact values). */
static int tensor_check(const tensor *t, const float *ref, double tol, const char *what)
{
    void *raw;
    if (!tb_fetch(&t->b, &raw, what)) return 0;
    const layout *l = &t->l;
    unsigned char *in_view = hmalloc(t->b.len);
    if (!in_view) return 0;
    double max_ref = 0, max_diff = 0;
    size_t worst = 0;
    for (int n = 0; n < l->n; n++)
        for (int y = 0; y < l->h; y++)
            for (int x = 0; x < l->w; x++)
                for (int c = 0; c < l->c; c++) {
                    size_t i = layout_index(l, n, y, x, c);
                    in_view[i] = 1;
                    float g = raw_value(raw, t->b.dt, i), r = ref[i];
                    if (!isfinite(g)) {
                        tl_fail("%s: non-finite output %g at (%d,%d,%d,%d)", what, g, n, y, x, c);
                        return 0;
                    }
                    double d = fabs((double)g - r);
                    if (fabs(r) > max_ref) max_ref = fabs(r);
                    if (d > max_diff) max_diff = d, worst = i;
                }
    for (size_t i = 0; i < t->b.len; i++)
        if (!in_view[i] && !raw_is_sentinel(raw, t->b.dt, i)) {
            tl_fail("%s: element %zu outside the view was written", what, i);
            return 0;
        }
    if (tol == 0 ? max_diff != 0 : max_diff > tol * (max_ref + 1e-6)) {
        tl_fail("%s: max |gpu - cpu| = %.3g (gpu %.9g, cpu %.9g at element %zu), max |cpu| = %.3g, tolerance %.0e", what,
                max_diff, raw_value(raw, t->b.dt, worst), ref[worst], worst, max_ref, tol);
        return 0;
    }
    return 1;
}

/* --------------------------------------------------------------- op tests */

static void op_convert(void)
{
    if (!need_device()) return;
    size_t len = 4096 + (size_t)tl_int(0, 99);
    tbuf src, half, back;
    if (!tb_new(&src, len, STRIX_F32, 0) || !tb_new(&half, len, STRIX_F16, 0) || !tb_new(&back, len, STRIX_F32, 0))
        return;
    /* magnitudes from subnormal fp16 to past its range, both signs, exact ties */
    for (size_t i = 0; i < len; i++) {
        float m = ldexpf(tl_uniform(1.0f, 2.0f), tl_int(-26, 17));
        if (i % 7 == 0) m = ldexpf((float)(2 * tl_int(0, 1023) + 1), tl_int(-25, 4)) / 2048.0f; /* halfway cases */
        src.h[i] = tl_int(0, 1) ? -m : m;
    }
    src.h[0] = 0.0f, src.h[1] = -0.0f, src.h[2] = 65504.0f, src.h[3] = 65520.0f, src.h[4] = INFINITY;
    if (!h2d(tb_data(&src), src.h, len * 4)) return;
    CK(strix_cuda_convert(tb_data(&half), STRIX_F16, tb_data(&src), STRIX_F32, len, (strix_stream)T.s));
    CK(strix_cuda_convert(tb_data(&back), STRIX_F32, tb_data(&half), STRIX_F16, len, (strix_stream)T.s));
    void *hraw, *braw;
    if (!tb_fetch(&half, &hraw, "fp16") || !tb_fetch(&back, &braw, "fp32 back")) return;
    for (size_t i = 0; i < len; i++) {
        uint16_t h = ((uint16_t *)hraw)[i];
        float x = src.h[i], r = half_to_float(h);
        TL_CHECK(f32_bits(((float *)braw)[i]) == f32_bits(r), "fp16 %04x back to fp32: %g, exactly %g", h, ((float *)braw)[i], r);
        if (isinf(x)) {
            TL_CHECK(isinf(r) && (r > 0) == (x > 0), "%g became %g", x, r);
            continue;
        }
        /* nearest representable, ties to even: no neighbour is closer */
        uint16_t mag = h & 0x7fffu;
        double d = fabs((double)r - x);
        for (int k = -1; k <= 1; k += 2) {
            if ((mag == 0 && k < 0) || mag >= 0x7c00u) continue;
            float nb = half_to_float((uint16_t)((h & 0x8000u) | (mag + k)));
            double dn = fabs((double)nb - x);
            TL_CHECK(dn > d || (dn == d && (h & 1) == 0), "%.9g rounded to %.9g (%04x); %.9g is nearer or even", x, r, h, nb);
        }
    }
}

/* One random convolution (or a given shape when fixed != NULL). */
typedef struct conv_case {
    int n, h, w, cin, cout, k, s, pad, d, groups, act, res, alias, strided, blas;
    int align; /* strided layouts: channel offset and padding multiples of this (0: any) */
} conv_case;

static conv_case conv_random(void)
{
    static const int chans[] = {1, 3, 17, 33, 65, 8, 16, 32, 64};
    conv_case c;
    c.n = tl_int(1, 3);
    c.h = 2 * tl_int(0, 9) + 1 + (tl_int(0, 3) == 0);
    c.w = 2 * tl_int(0, 9) + 1 + (tl_int(0, 3) == 0);
    int kind = tl_int(0, 2); /* 0 dense, 1 two groups, 2 depthwise */
    c.cin = chans[tl_int(0, 8)];
    c.cout = chans[tl_int(0, 8)];
    c.groups = 1;
    if (kind == 1) {
        c.cin = 2 * tl_int(1, 20), c.cout = 2 * tl_int(1, 20), c.groups = 2;
    } else if (kind == 2) {
        c.cout = c.cin, c.groups = c.cin;
    }
    static const int ks[] = {1, 3, 5};
    c.k = ks[tl_int(0, 2)];
    c.s = tl_int(1, 2);
    c.d = c.k == 3 && tl_int(0, 5) == 0 ? 2 : 1;
    c.pad = tl_int(0, 3) ? c.d * (c.k - 1) / 2 : 0;
    while ((c.h + 2 * c.pad - c.d * (c.k - 1) - 1) < 0) c.h++;
    while ((c.w + 2 * c.pad - c.d * (c.k - 1) - 1) < 0) c.w++;
    c.act = tl_int(0, 1);
    c.res = tl_int(0, 1);
    c.alias = c.res && tl_int(0, 2) == 0;
    c.strided = tl_int(0, 1);
    c.blas = tl_int(0, 1);
    c.align = 0;
    return c;
}

/* variant > 0: the v2 implicit GEMM with that tile configuration (fp16,
 * shapes it takes), instead of strix_cuda_conv2d with `kernels`; sms: the
 * SM count the launchers are told (the device's, or a made-up one: it only
 * steers the tile and split choice). */
static void conv_run_variant(const conv_case *c, strix_dtype dt, int kernels, int variant, int sms)
{
    char what[224];
    snprintf(what, sizeof what,
             "conv n%d %dx%d %d->%d k%d s%d p%d d%d g%d act%d res%d alias%d strided%d blas%d %s v%d tile%d sms%d", c->n,
             c->h, c->w, c->cin, c->cout, c->k, c->s, c->pad, c->d, c->groups, c->act, c->res, c->alias, c->strided,
             c->blas, dt == STRIX_F16 ? "f16" : "f32", kernels, variant, sms);
    strix_conv_params p = {c->k, c->k, c->s, c->s, c->pad, c->pad, c->d, c->d, c->groups,
                           c->act ? STRIX_ACT_SILU : STRIX_ACT_NONE};
    int oh = (c->h + 2 * c->pad - c->d * (c->k - 1) - 1) / c->s + 1;
    int ow = (c->w + 2 * c->pad - c->d * (c->k - 1) - 1) / c->s + 1;
    tensor in, out, res;
    tbuf w, bias;
    size_t wlen = (size_t)c->cout * c->k * c->k * (c->cin / c->groups);
    if (!tensor_new(&in, layout_make_aligned(c->n, c->h, c->w, c->cin, c->strided, c->align), dt, 1.0f) ||
        !tensor_new(&out, layout_make_aligned(c->n, oh, ow, c->cout, c->strided, c->align), dt, 0) ||
        !tb_new(&w, wlen, dt, 0.5f) ||
        !tb_new(&bias, (size_t)c->cout, STRIX_F32, 0.5f))
        return;
    float *ref = hmalloc(out.b.len * sizeof(float));
    if (!ref) return;
    strix_view hin = host_view(&in.l, in.b.h), hout = host_view(&out.l, ref), hres;
    strix_dview din = dev_view(&in.l, &in.b), dout = dev_view(&out.l, &out.b), dres;
    if (c->alias) {
        /* the residual is the output view itself, holding its values */
        if (!tensor_fill_view(&out)) return;
        memcpy(ref, out.b.h, out.b.len * sizeof(float));
        hres = hout;
        dres = dout;
    } else if (c->res) {
        if (!tensor_new(&res, layout_make_aligned(c->n, oh, ow, c->cout, c->strided, c->align), dt, 1.0f)) return;
        hres = host_view(&res.l, res.b.h);
        dres = dev_view(&res.l, &res.b);
    }
    size_t cws = strix_cpu_conv2d_workspace(&hout, &hin, &p, 1);
    void *cpu_ws = hmalloc(cws);
    size_t gws = strix_cuda_conv2d_workspace(&dout, &din, &p, dt, kernels, sms);
    void *gpu_ws = gws ? dmalloc(gws) : NULL;
    if (!cpu_ws || (gws && !gpu_ws)) return;
    strix_cpu_conv2d(STRIX_CPU_ISA_AUTO, &hout, &hin, w.h, bias.h, c->res ? &hres : NULL, &p, cpu_ws, NULL);
    if (variant)
        CK(strix_cuda_conv2d_mma_variant(&dout, &din, tb_data(&w), tb_data(&bias), c->res ? &dres : NULL, &p, variant,
                                         (strix_stream)T.s));
    else
        CK(strix_cuda_conv2d(&dout, &din, tb_data(&w), tb_data(&bias), c->res ? &dres : NULL, &p, dt, kernels, sms,
                             c->blas ? T.blas : NULL, gpu_ws, (strix_stream)T.s));
    tensor_check(&out, ref, dt == STRIX_F16 ? TOL16 : TOL32, what);
}

static void conv_run(const conv_case *c, strix_dtype dt, int kernels) { conv_run_variant(c, dt, kernels, 0, T.sms); }

static void conv_suite(strix_dtype dt, int kernels)
{
    if (!need_device()) return;
    /* the shapes every path must get right, then random ones */
    static const conv_case fixed[] = {
        {3, 7, 9, 33, 65, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 0},   /* cuBLAS 1x1, strided, residual */
        {3, 7, 9, 65, 33, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0},   /* cuBLAS 1x1, residual aliasing out */
        {1, 13, 11, 3, 17, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0},  /* the stem: 3 channels, stride 2 */
        {2, 9, 9, 65, 65, 5, 1, 2, 1, 65, 0, 0, 0, 1, 0, 0},  /* depthwise 5x5 */
        {3, 5, 7, 34, 18, 3, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0},   /* two groups */
        {1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0},     /* 1x1 image, one channel */
        {2, 19, 17, 64, 128, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1, 0},/* wide tile tails */
    };
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && !tl_g.failed; i++) conv_run(&fixed[i], dt, kernels);
    for (int i = 0; i < CASES(40, 6) && !tl_g.failed; i++) {
        conv_case c = conv_random();
        conv_run(&c, dt, kernels);
    }
}

/* The v2 set's own shapes: every tile width (Cout up to 16, 32, 64, 128 and
 * past it), both tile heights (images large enough for 128-row tiles on any
 * GPU up to 160 SMs, and small ones), Cin % 8 == 0 with 1x1 and 3x3 s1/s2,
 * K tails (Cin 8, 24: K not a multiple of the 32-deep slice), odd Cout, and
 * stems of 1 to 4 channels; then random shapes that qualify. */
static void conv_suite_v2(strix_dtype dt)
{
    if (!need_device()) return;
    static const conv_case fixed[] = {
        {2, 130, 130, 32, 16, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0},  /* 128 x 16 tiles, residual */
        {2, 130, 130, 16, 32, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0},  /* 128 x 32, stride 2 (M = 2*65*65) */
        {1, 200, 180, 64, 64, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0},  /* 128 x 64, 1x1, residual aliasing out */
        {1, 190, 190, 24, 200, 3, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0}, /* 128 x 128, K = 216 (a tail slice) */
        {3, 7, 9, 8, 9, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0},        /* 64-row tiles, Cin 8, odd Cout */
        {2, 19, 17, 64, 128, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1, 0},   /* 64 x 128 */
        {1, 11, 13, 256, 255, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0},  /* the detect head's 1x1 shape */
        {2, 21, 23, 3, 16, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0},     /* the stem */
        {1, 64, 48, 3, 40, 3, 2, 1, 1, 1, 1, 1, 0, 1, 0, 0},     /* stem, 3 chunks of 16 channels, residual */
        {2, 9, 8, 1, 5, 5, 1, 2, 1, 1, 0, 0, 0, 0, 0, 0},        /* stem, 1 channel, 5x5 */
        {1, 10, 10, 4, 8, 7, 2, 3, 1, 1, 1, 0, 0, 1, 0, 0},      /* stem, 4 channels, 7x7 */
    };
    /* strided views aligned as the network's channel slices are (multiples
     * of 8 channels), so the mma path takes them; the random cases mix in
     * unaligned ones, which must fall back */
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && !tl_g.failed; i++) {
        conv_case c = fixed[i];
        c.align = 8;
        if (!T.quick || (long long)c.n * c.h * c.w < 20000) conv_run(&c, dt, STRIX_CUDA_KERNELS_V2);
    }
    for (int i = 0; i < CASES(40, 6) && !tl_g.failed; i++) {
        conv_case c = conv_random();
        if (tl_int(0, 3)) { /* mostly shapes the mma path takes */
            c.groups = 1;
            c.cin = 8 * tl_int(1, 12);
            c.cout = tl_int(1, 140);
            c.align = 8;
        }
        conv_run(&c, dt, STRIX_CUDA_KERNELS_V2);
    }
}

/* Every tile configuration of the v2 table on random shapes it takes (the
 * model runs only those its shapes pick; the kernel lab times them all). */
static void op_conv2d_f16_tiles(void)
{
    if (!need_device()) return;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess || major < 8) {
        tl_skip("the v2 implicit GEMM needs compute capability 8.0 (this GPU keeps the v1 path)");
        return;
    }
    for (int v = 1; v <= strix_cuda_conv2d_mma_variants() && !tl_g.failed; v++)
        for (int i = 0; i < CASES(3, 1) && !tl_g.failed; i++) {
            conv_case c = conv_random();
            c.groups = 1;
            c.cin = 8 * tl_int(1, 12);
            c.cout = tl_int(1, 140);
            c.n = tl_int(1, 2), c.h = tl_int(6, 40), c.w = tl_int(6, 40);
            c.align = 8;
            conv_run_variant(&c, STRIX_F16, STRIX_CUDA_KERNELS_V2, v, T.sms);
        }
}

static void op_conv2d_f32(void) { conv_suite(STRIX_F32, STRIX_CUDA_KERNELS_V1); }
static void op_conv2d_f16(void) { conv_suite(STRIX_F16, STRIX_CUDA_KERNELS_V1); }
static void op_conv2d_f32_v2(void) { conv_suite_v2(STRIX_F32); }
static void op_conv2d_f16_v2(void) { conv_suite_v2(STRIX_F16); }
static void op_conv2d_f32_v3(void) { conv_suite(STRIX_F32, STRIX_CUDA_KERNELS_V3); }

/* Kernel set 3 (split-K, not yet run on a GPU when written): shapes the mma
 * path takes, mostly 3x3 and 5x5 ones deep enough to split, small enough
 * that the grid is, on this GPU's SM count and on made-up counts (the plan
 * follows the count it is given, so slice counts up to STRIX_SPLITK_MAX run
 * whatever the GPU), plus a few that take the other paths.  Fails when too
 * few cases split: then it would not be testing split-K. */
static void op_conv2d_f16_v3(void)
{
    if (!need_device()) return;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess || major < 8) {
        tl_skip("split-K is part of the mma.sync path, which needs compute capability 8.0");
        return;
    }
    const int cases = CASES(60, 10);
    int split = 0;
    for (int i = 0; i < cases && !tl_g.failed; i++) {
        conv_case c = conv_random();
        int sms = tl_int(0, 2) ? T.sms : tl_int(1, 1024);
        if (i % 8) { /* the mma path */
            static const int ks[] = {1, 3, 3, 5};
            c.groups = 1;
            c.cin = 8 * tl_int(1, 16);
            c.cout = tl_int(1, 140);
            c.k = ks[tl_int(0, 3)];
            c.pad = c.d * (c.k - 1) / 2;
            c.align = 8;
        }
        int oh = (c.h + 2 * c.pad - c.d * (c.k - 1) - 1) / c.s + 1, ow = (c.w + 2 * c.pad - c.d * (c.k - 1) - 1) / c.s + 1;
        if (c.groups == 1 && c.cin % 8 == 0 &&
            strix_mma_plan_make(c.n * oh * ow, c.cout, c.k * c.k * c.cin, sms, 0, 1).splits > 1)
            split++;
        conv_run_variant(&c, STRIX_F16, STRIX_CUDA_KERNELS_V3, 0, sms);
    }
    if (!tl_g.failed && split < cases / 4)
        tl_fail("only %d of %d cases split K: the cases no longer exercise split-K", split, cases);
}

/* Kernel set 3's folded upsample (strix_cuda_conv2d_fold; written without
 * a GPU): a convolution of X [n, h, w, cx] whose channels [c0, c0 + c) are
 * the nearest upsample by `scale` of S, read through the loads, against
 * the CPU's upsample into X's slice, then its convolution of X.  On the
 * device those channels of X hold the NaN sentinel, so a load that reads
 * them instead of S shows up as a non-finite output.  Shapes as the necks
 * have them (the slice first, 1x1) and random ones (the slice anywhere,
 * 3x3, strides, residuals, strided views), on this GPU's SM count and on
 * made-up ones (so that K splits: the FOLD split kernels).  Fails when too
 * few cases split. */
static void op_conv2d_fold_v3(void)
{
    if (!need_device()) return;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess || major < 8) {
        tl_skip("the folded upsample is part of the mma.sync path, which needs compute capability 8.0");
        return;
    }
    const int cases = CASES(40, 8);
    int split = 0;
    for (int i = 0; i < cases && !tl_g.failed; i++) {
        int n = tl_int(1, 2), sh = tl_int(1, 12), sw = tl_int(1, 12), scale = tl_int(0, 3) ? 2 : tl_int(1, 3);
        int c = 8 * tl_int(1, 12), other = 8 * tl_int(0, 12), c0 = i < 2 ? 0 : 8 * tl_int(0, other / 8);
        int cx = c + other, k = i < 2 || tl_int(0, 1) ? 1 : 3, st = i < 2 ? 1 : tl_int(1, 2), pad = k / 2;
        int cout = i == 0 ? cx / 3 : tl_int(1, 140), res = i >= 2 && tl_int(0, 1), strided = tl_int(0, 1);
        int sms = tl_int(0, 2) ? T.sms : tl_int(1, 1024);
        int h = sh * scale, w = sw * scale, oh = (h + 2 * pad - k) / st + 1, ow = (w + 2 * pad - k) / st + 1;
        char what[192];
        snprintf(what, sizeof what, "fold n%d S %dx%dx%d x%d into X[%d, %d) of %d, k%d s%d -> %d res%d strided%d sms%d", n,
                 sh, sw, c, scale, c0, c0 + c, cx, k, st, cout, res, strided, sms);
        strix_conv_params p = {k, k, st, st, pad, pad, 1, 1, 1, STRIX_ACT_SILU};
        tensor src, x, out, rt;
        tbuf wt, bias;
        if (!tensor_new(&src, layout_make_aligned(n, sh, sw, c, strided, 8), STRIX_F16, 1.0f) ||
            !tensor_new(&x, layout_make_aligned(n, h, w, cx, strided, 8), STRIX_F16, 1.0f) ||
            !tensor_new(&out, layout_make_aligned(n, oh, ow, cout, strided, 8), STRIX_F16, 0) ||
            !tb_new(&wt, (size_t)cout * k * k * cx, STRIX_F16, 0.5f) || !tb_new(&bias, (size_t)cout, STRIX_F32, 0.5f))
            return;
        if (res && !tensor_new(&rt, layout_make_aligned(n, oh, ow, cout, strided, 8), STRIX_F16, 1.0f)) return;
        /* X's slice: the sentinel on the device, the CPU's upsample of S on the host */
        layout ls = x.l;
        ls.c = c, ls.c0 = x.l.c0 + c0, ls.extra = x.l.c + x.l.extra - c;
        for (int b = 0; b < n; b++)
            for (int y = 0; y < h; y++)
                for (int q = 0; q < w; q++)
                    for (int ch = 0; ch < c; ch++) x.b.h[layout_index(&ls, b, y, q, ch)] = bits_f32(SENT32);
        if (!tb_upload(&x.b)) return;
        float *xr = hmalloc(x.b.len * sizeof(float)), *ref = hmalloc(out.b.len * sizeof(float));
        if (!xr || !ref) return;
        memcpy(xr, x.b.h, x.b.len * sizeof(float));
        strix_view hs = host_view(&src.l, src.b.h), hslice = host_view(&ls, xr), hx = host_view(&x.l, xr);
        strix_view hout = host_view(&out.l, ref), hres;
        strix_cpu_upsample_nearest(&hslice, &hs, scale, NULL);
        if (res) hres = host_view(&rt.l, rt.b.h);
        void *cpu_ws = hmalloc(strix_cpu_conv2d_workspace(&hout, &hx, &p, 1));
        if (!cpu_ws) return;
        strix_cpu_conv2d(STRIX_CPU_ISA_AUTO, &hout, &hx, wt.h, bias.h, res ? &hres : NULL, &p, cpu_ws, NULL);
        strix_dview ds = dev_view(&src.l, &src.b), dx = dev_view(&x.l, &x.b), dout = dev_view(&out.l, &out.b), dres;
        if (res) dres = dev_view(&rt.l, &rt.b);
        size_t gws = strix_cuda_conv2d_workspace(&dout, &dx, &p, STRIX_F16, STRIX_CUDA_KERNELS_V3, sms);
        void *gpu_ws = gws ? dmalloc(gws) : NULL;
        if (gws && !gpu_ws) return;
        if (!strix_cuda_conv2d_fold_ok(&dout, &dx, &ds, c0, scale, tb_data(&wt), tb_data(&bias), res ? &dres : NULL, &p,
                                       STRIX_F16, STRIX_CUDA_KERNELS_V3)) {
            tl_fail("%s: strix_cuda_conv2d_fold_ok refuses an aligned shape", what);
            return;
        }
        split += strix_mma_plan_make(n * oh * ow, cout, k * k * cx, sms, 0, 1).splits > 1;
        CK(strix_cuda_conv2d_fold(&dout, &dx, &ds, c0, scale, tb_data(&wt), tb_data(&bias), res ? &dres : NULL, &p,
                                  STRIX_F16, STRIX_CUDA_KERNELS_V3, sms, gpu_ws, (strix_stream)T.s));
        tensor_check(&out, ref, TOL16, what);
    }
    if (!tl_g.failed && split < cases / 5)
        tl_fail("only %d of %d cases split K: the folded split kernels go untested", split, cases);
}

/* Stem c (one group, no residual) through kernel sets 2 and 3 into the same
 * output buffer: the outputs must agree bit for bit (conv_stem_smem makes
 * the same FMAs in the same order as conv_stem_direct). */
static void stem_same_bits(const conv_case *c, strix_dtype dt)
{
    strix_conv_params p = {c->k, c->k, c->s, c->s, c->pad, c->pad, c->d, c->d, 1, c->act ? STRIX_ACT_SILU : STRIX_ACT_NONE};
    int oh = (c->h + 2 * c->pad - c->d * (c->k - 1) - 1) / c->s + 1;
    int ow = (c->w + 2 * c->pad - c->d * (c->k - 1) - 1) / c->s + 1;
    tensor in, out;
    tbuf w, bias;
    if (!tensor_new(&in, layout_make_aligned(c->n, c->h, c->w, c->cin, c->strided, c->align), dt, 1.0f) ||
        !tensor_new(&out, layout_make_aligned(c->n, oh, ow, c->cout, c->strided, c->align), dt, 0) ||
        !tb_new(&w, (size_t)c->cout * c->k * c->k * c->cin, dt, 0.5f) || !tb_new(&bias, (size_t)c->cout, STRIX_F32, 0.5f))
        return;
    strix_dview din = dev_view(&in.l, &in.b), dout = dev_view(&out.l, &out.b);
    void *raw[2];
    for (int set = 0; set < 2; set++) {
        CK(strix_cuda_conv2d(&dout, &din, tb_data(&w), tb_data(&bias), NULL, &p, dt,
                             set ? STRIX_CUDA_KERNELS_V3 : STRIX_CUDA_KERNELS_V2, T.sms, NULL, NULL, (strix_stream)T.s));
        if (!tb_fetch(&out.b, &raw[set], "stem")) return;
    }
    if (memcmp(raw[0], raw[1], out.b.len * esz(dt)))
        tl_fail("stem n%d %dx%d %d->%d k%d s%d p%d d%d %s: kernel set 3 differs from set 2", c->n, c->h, c->w, c->cin,
                c->cout, c->k, c->s, c->pad, c->d, dt == STRIX_F16 ? "f16" : "f32");
}

/* Kernel set 3's stem through shared memory (conv_mma.cu, conv_stem_smem;
 * written without a GPU): yolov8's stem (3 -> 16/32/48/64, 3x3 s2 at a
 * letterboxed 640 and odd sizes), then random stems (1-4 channels, kernels
 * 1-7, strides 1-3, dilation 1-2, images from 1x1, output tiles cut at every
 * edge), each against the CPU op and bit for bit against set 2's stem. */
static void op_conv2d_stem_v3(void)
{
    if (!need_device()) return;
    static const conv_case fixed[] = {
        {1, 640, 640, 3, 16, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0},  /* yolov8n at 640 */
        {2, 384, 640, 3, 64, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0},  /* yolov8l, a letterboxed rect */
        {3, 17, 33, 3, 48, 3, 2, 1, 1, 1, 1, 1, 0, 1, 0, 8},    /* partial tiles, residual, strided */
        {1, 9, 30, 4, 8, 7, 2, 3, 1, 1, 0, 0, 0, 1, 0, 0},      /* 7x7 */
    };
    for (int i = 0; i < (int)(sizeof fixed / sizeof *fixed) + CASES(40, 8) && !tl_g.failed; i++) {
        conv_case c;
        if (i < (int)(sizeof fixed / sizeof *fixed)) {
            c = fixed[i];
            if (T.quick && (long long)c.n * c.h * c.w > 20000) continue;
        } else {
            c = conv_random();
            c.groups = 1;
            c.cin = tl_int(1, 4);
            c.cout = tl_int(1, 70);
            c.k = tl_int(1, 7);
            c.s = tl_int(1, 3);
            c.d = tl_int(0, 3) ? 1 : 2;
            c.pad = tl_int(0, c.d * (c.k - 1) / 2);
            c.h = tl_int(1, 45), c.w = tl_int(1, 45);
            while (c.h + 2 * c.pad < c.d * (c.k - 1) + 1) c.h++;
            while (c.w + 2 * c.pad < c.d * (c.k - 1) + 1) c.w++;
        }
        for (int f16 = 0; f16 < 2 && !tl_g.failed; f16++) {
            conv_run(&c, f16 ? STRIX_F16 : STRIX_F32, STRIX_CUDA_KERNELS_V3);
            if (!tl_g.failed) stem_same_bits(&c, f16 ? STRIX_F16 : STRIX_F32);
        }
    }
}

static void op_maxpool2d(void)
{
    if (!need_device()) return;
    for (int t = 0; t < CASES(30, 6) && !tl_g.failed; t++) {
        strix_dtype dt = t % 2 ? STRIX_F16 : STRIX_F32;
        strix_pool_params p = {tl_int(1, 5), tl_int(1, 3), 0};
        p.pad = tl_int(0, p.k / 2);
        int n = tl_int(1, 3), h = tl_int(1, 23), w = tl_int(1, 23), c = tl_int(1, 70);
        while (h + 2 * p.pad < p.k) h++;
        while (w + 2 * p.pad < p.k) w++;
        int oh = (h + 2 * p.pad - p.k) / p.stride + 1, ow = (w + 2 * p.pad - p.k) / p.stride + 1;
        tensor in, out;
        if (!tensor_new(&in, layout_make(n, h, w, c, tl_int(0, 1)), dt, 2.0f) ||
            !tensor_new(&out, layout_make(n, oh, ow, c, tl_int(0, 1)), dt, 0))
            return;
        float *ref = hmalloc(out.b.len * sizeof(float));
        if (!ref) return;
        strix_view hin = host_view(&in.l, in.b.h), hout = host_view(&out.l, ref);
        strix_dview din = dev_view(&in.l, &in.b), dout = dev_view(&out.l, &out.b);
        strix_cpu_maxpool2d(&hout, &hin, &p, NULL);
        CK(strix_cuda_maxpool2d(&dout, &din, &p, dt, (strix_stream)T.s));
        char what[96];
        snprintf(what, sizeof what, "maxpool k%d s%d p%d n%d %dx%dx%d", p.k, p.stride, p.pad, n, h, w, c);
        tensor_check(&out, ref, 0, what);
    }
}

/* One SPPF cascade as the planner lays it out: input and stage outputs are
 * channel slices of one concat buffer (pix_stride = (cascade + 1) * c +
 * extra, batch_extra more elements per image).  The input slice is copied in
 * by the device copy, then pooled; `rounds` times on the same allocation,
 * the buffer re-poisoned before each. */
static void cascade_case(strix_dtype dt, int kernels, int k, int cascade, int n, int h, int w, int c, int extra,
                         int batch_extra, int rounds)
{
    strix_pool_params p = {k, 1, k / 2};
    layout whole = {n, h, w, (cascade + 1) * c + extra, 0, 0, batch_extra};
    tensor buf;
    if (!tensor_new(&buf, whole, dt, 0)) return;
    /* the input slice holds data, the rest of the buffer the sentinel */
    layout sl[9];
    for (int i = 0; i <= cascade; i++) sl[i] = (layout){n, h, w, c, (cascade + 1) * c + extra - c, i * c, batch_extra};
    float *vals = hmalloc(buf.b.len * sizeof(float));
    if (!vals) return;
    for (int i = 0; i < n * h * w * c; i++) {
        int nn = i / (h * w * c), y = i / (w * c) % h, x = i / c % w, ch = i % c;
        vals[layout_index(&sl[0], nn, y, x, ch)] = tl_uniform(-3, 3);
    }
    tbuf in;
    size_t in_len = buf.b.len;
    if (!tb_new(&in, in_len, dt, 0)) return;
    memcpy(in.h, vals, in_len * sizeof(float));
    if (!tb_upload(&in)) return;
    float *ref = hmalloc(buf.b.len * sizeof(float));
    if (!ref) return;
    memcpy(ref, in.h, in_len * sizeof(float));
    strix_dview outs[8];
    for (int i = 0; i < cascade; i++) {
        strix_view a = host_view(&sl[i], ref), b = host_view(&sl[i + 1], ref);
        strix_cpu_maxpool2d(&b, &a, &p, NULL);
        outs[i] = dev_view(&sl[i + 1], &buf.b);
    }
    strix_dview src = dev_view(&sl[0], &in), dst = dev_view(&sl[0], &buf.b), din = dst;
    /* check every stage, and the buffer around all of them */
    tensor all = buf;
    all.l = (layout){n, h, w, (cascade + 1) * c, extra, 0, batch_extra};
    char what[112];
    for (int r = 0; r < rounds && !tl_g.failed; r++) {
        if (r && !tb_poison(&buf.b)) return;
        CK(strix_cuda_copy(&dst, &src, dt, (strix_stream)T.s));
        CK(strix_cuda_maxpool_cascade(outs, cascade, &din, &p, dt, kernels, (strix_stream)T.s));
        snprintf(what, sizeof what, "cascade k%d x%d n%d %dx%dx%d +%d/%d %s set %d round %d", k, cascade, n, h, w, c,
                 extra, batch_extra, dt == STRIX_F16 ? "f16" : "f32", kernels, r);
        tensor_check(&all, ref, 0, what);
    }
}

static void op_maxpool_cascade(void)
{
    if (!need_device()) return;
    static const int sizes[][2] = {{1, 1}, {7, 9}, {20, 20}, {37, 23}, {16, 16}, {17, 33}};
    static const int chans[] = {1, 3, 17, 33, 65};
    for (int t = 0; t < 16 && !tl_g.failed; t++) {
        int k = t < 12 ? 5 : t < 14 ? 3 : 9, cascade = t < 12 ? 3 : t < 14 ? 2 : 3; /* k 9: the unfused fallback */
        int n = tl_int(1, 3), c = chans[tl_int(0, 4)];
        int extra = tl_int(0, 3), batch_extra = tl_int(0, 3);
        cascade_case(t % 2 ? STRIX_F16 : STRIX_F32, STRIX_CUDA_KERNELS_V2, k, cascade, n, sizes[t % 6][0],
                     sizes[t % 6][1], c, extra, batch_extra, 1);
    }
}

/* The failing case of the first H100 run (NaN at batch >= 2, 3 seeds of 12):
 * batch 2 and 3, SPPF's 20x20 and 40x40 at yolov8n/s widths and odd ones,
 * fused k5 and the k9 fallback, both dtypes, each buffer re-poisoned and
 * pooled 6 times in a row (--quick: fewer, narrower cases). */
static void op_maxpool_cascade_stress(void)
{
    if (!need_device()) return;
    static const int chans[] = {128, 256, 65, 33};
    for (int t = 0; t < CASES(16, 4) && !tl_g.failed; t++) {
        int k = t % 4 < 2 ? 5 : 9, n = 2 + t / 4 % 2, hw = t % 8 < 4 ? 20 : 40;
        int c = T.quick ? 33 : chans[t / 4 % 4];
        cascade_case(t % 2 ? STRIX_F16 : STRIX_F32, STRIX_CUDA_KERNELS_V2, k, 3, n, hw, hw, c, tl_int(0, 3),
                     tl_int(0, 3), CASES(6, 2));
    }
}

/* Kernel set 3's one-pass SPPF kernel (pool.cu, maxpool_sppf_v3; written
 * without a GPU): channel counts, concat padding and image padding that are
 * whole 16-byte groups (8 fp16 or 4 fp32 channels), so that it runs, on
 * images from 1x1 (smaller than the halo) through one tile (20x20, 24x24)
 * to several with partial edge tiles (25x49, 61x37), k 5 x 3 (SPPF), k 3 x
 * 2 and k 5 x 1; then unaligned views and k 9 x 3 (halo 12), which must
 * fall back to the other kernels; each twice on the same buffer. */
static void op_maxpool_cascade_v3(void)
{
    if (!need_device()) return;
    static const int sizes[][2] = {{1, 1}, {2, 3}, {5, 7}, {13, 11}, {20, 20}, {24, 24}, {25, 49}, {61, 37}};
    for (int t = 0; t < CASES(32, 8) && !tl_g.failed; t++) {
        const strix_dtype dt = t % 2 ? STRIX_F16 : STRIX_F32;
        const int g = dt == STRIX_F16 ? 8 : 4, fallback = t % 8 == 7;
        const int k = t % 16 == 15 ? 9 : t % 4 == 1 ? 3 : 5, cascade = k == 3 ? 2 : t % 8 == 2 ? 1 : 3;
        int c = g * tl_int(1, 6), extra = g * tl_int(0, 2), batch_extra = g * tl_int(0, 1);
        if (fallback && k != 9) c += tl_int(1, g - 1), extra = tl_int(0, 3);
        const int *hw = sizes[t % 8 == 7 ? tl_int(0, 7) : t / 2 % 8];
        cascade_case(dt, STRIX_CUDA_KERNELS_V3, k, cascade, tl_int(1, 3), hw[0], hw[1], c, extra, batch_extra, 2);
    }
}

static void op_upsample_copy(void)
{
    if (!need_device()) return;
    for (int t = 0; t < CASES(20, 6) && !tl_g.failed; t++) {
        strix_dtype dt = t % 2 ? STRIX_F16 : STRIX_F32;
        /* channels often a multiple of 8: the 16-byte path of sets 2 and 3 */
        int n = tl_int(1, 3), h = tl_int(1, 13), w = tl_int(1, 13), c = tl_int(0, 1) ? 8 * tl_int(1, 9) : tl_int(1, 70);
        int s = tl_int(1, 3), kernels = tl_int(STRIX_CUDA_KERNELS_V1, STRIX_CUDA_KERNELS_V3);
        int up = t < CASES(20, 6) / 2;
        tensor in, out;
        if (!tensor_new(&in, layout_make(n, h, w, c, tl_int(0, 1)), dt, 4.0f) ||
            !tensor_new(&out, layout_make(n, up ? h * s : h, up ? w * s : w, c, tl_int(0, 1)), dt, 0))
            return;
        float *ref = hmalloc(out.b.len * sizeof(float));
        if (!ref) return;
        strix_view hin = host_view(&in.l, in.b.h), hout = host_view(&out.l, ref);
        strix_dview din = dev_view(&in.l, &in.b), dout = dev_view(&out.l, &out.b);
        if (up) {
            strix_cpu_upsample_nearest(&hout, &hin, s, NULL);
            CK(strix_cuda_upsample_nearest(&dout, &din, s, dt, kernels, (strix_stream)T.s));
        } else {
            strix_cpu_copy(&hout, &hin, NULL);
            CK(strix_cuda_copy(&dout, &din, dt, (strix_stream)T.s));
        }
        char what[64];
        snprintf(what, sizeof what, "%s x%d n%d %dx%dx%d v%d", up ? "upsample" : "copy", s, n, h, w, c, kernels);
        tensor_check(&out, ref, 0, what);
    }
}

static void attention_suite(strix_dtype dt)
{
    if (!need_device()) return;
    for (int t = 0; t < CASES(12, 3) && !tl_g.failed; t++) {
        strix_attn_params p;
        p.heads = tl_int(1, 3);
        p.key_dim = t < 4 ? 32 : tl_int(1, 20);
        p.head_dim = t < 4 ? 64 : tl_int(1, 40);
        p.scale = 1.0f / sqrtf((float)p.key_dim);
        int n = tl_int(1, 3), h = tl_int(1, 9), w = tl_int(1, 11);
        if (t == 0 && !T.quick) h = 20, w = 20; /* a 640 input's PSA */
        int c = p.heads * p.head_dim;
        tensor qkv, out, vout;
        if (!tensor_new(&qkv, layout_make(n, h, w, p.heads * (2 * p.key_dim + p.head_dim), t % 2), dt, 1.0f) ||
            !tensor_new(&out, layout_make(n, h, w, c, tl_int(0, 1)), dt, 0) ||
            !tensor_new(&vout, layout_make(n, h, w, c, tl_int(0, 1)), dt, 0))
            return;
        float *ref = hmalloc(out.b.len * sizeof(float)), *vref = hmalloc(vout.b.len * sizeof(float));
        if (!ref || !vref) return;
        strix_view hq = host_view(&qkv.l, qkv.b.h), ho = host_view(&out.l, ref), hv = host_view(&vout.l, vref);
        void *cws = hmalloc(strix_cpu_attention_workspace(&hq, &p, 1));
        strix_dview dq = dev_view(&qkv.l, &qkv.b), d_o = dev_view(&out.l, &out.b), dv = dev_view(&vout.l, &vout.b);
        void *gws = dmalloc(strix_cuda_attention_workspace(&dq, &p, dt));
        if (!cws || !gws) return;
        strix_cpu_attention(&ho, &hv, &hq, &p, cws, NULL);
        CK(strix_cuda_attention(&d_o, &dv, &dq, &p, dt, T.blas, gws, (strix_stream)T.s));
        char what[96];
        snprintf(what, sizeof what, "attention n%d %dx%d heads %d kd %d hd %d %s", n, h, w, p.heads, p.key_dim,
                 p.head_dim, dt == STRIX_F16 ? "f16" : "f32");
        if (!tensor_check(&out, ref, dt == STRIX_F16 ? TOL16 : TOL32, what)) return;
        tensor_check(&vout, vref, 0, what);
    }
}

static void op_attention_f32(void) { attention_suite(STRIX_F32); }
static void op_attention_f16(void) { attention_suite(STRIX_F16); }

static void op_detect_decode(void)
{
    if (!need_device()) return;
    static const int regs[] = {16, 1, 4}, ncs[] = {80, 1, 3};
    for (int t = 0; t < CASES(12, 4) && !tl_g.failed; t++) {
        strix_dtype dt = t % 2 ? STRIX_F16 : STRIX_F32;
        strix_decode_params p;
        memset(&p, 0, sizeof p);
        p.reg_max = regs[t / 2 % 3];
        p.nc = ncs[t / 4 % 3];
        p.levels = tl_int(1, 3);
        size_t anchors = 0;
        for (int l = 0; l < p.levels; l++) {
            p.level_h[l] = tl_int(1, 9);
            p.level_w[l] = tl_int(1, 9);
            p.level_stride[l] = 8 << l;
            anchors += (size_t)p.level_h[l] * p.level_w[l];
        }
        int n = tl_int(1, 3);
        size_t in_w = 4 * (size_t)p.reg_max + p.nc, out_w = 4 + (size_t)p.nc;
        tbuf head, out;
        if (!tb_new(&head, n * anchors * in_w, dt, 6.0f) || !tb_new(&out, n * anchors * out_w, STRIX_F32, 0)) return;
        float *ref = hmalloc(out.len * sizeof(float));
        if (!ref) return;
        strix_cpu_detect_decode(ref, head.h, n, &p, NULL);
        CK(strix_cuda_detect_decode(tb_data(&out), tb_data(&head), dt, n, &p, (strix_stream)T.s));
        void *raw;
        if (!tb_fetch(&out, &raw, "decode")) return;
        const float *g = raw;
        double box_ref = 0, box_diff = 0, score_diff = 0;
        for (size_t i = 0; i < out.len; i++) {
            TL_CHECK(isfinite(g[i]), "decode: non-finite output at %zu", i);
            double d = fabs((double)g[i] - ref[i]);
            if (i % out_w < 4) {
                box_ref = fabs(ref[i]) > box_ref ? fabs(ref[i]) : box_ref;
                box_diff = d > box_diff ? d : box_diff;
            } else {
                score_diff = d > score_diff ? d : score_diff;
            }
        }
        TL_CHECK(box_diff <= TOL32 * box_ref && score_diff <= TOL32,
                 "decode reg_max %d nc %d levels %d n %d: box error %.3g of %.3g, score error %.3g", p.reg_max, p.nc,
                 p.levels, n, box_diff, box_ref, score_diff);
    }
}

/* A random uint8 image with a row stride past width*3. */
static uint8_t *random_image(int w, int h, int stride)
{
    uint8_t *im = hmalloc((size_t)stride * h);
    if (!im) return NULL;
    for (size_t i = 0; i < (size_t)stride * h; i++) im[i] = (uint8_t)tl_int(0, 255);
    return im;
}

static void op_letterbox(void)
{
    if (!need_device()) return;
    for (int t = 0; t < CASES(40, 8) && !tl_g.failed; t++) {
        strix_dtype dt = t % 2 ? STRIX_F16 : STRIX_F32;
        int w = tl_int(1, 130), h = tl_int(1, 130), imgsz = tl_int(1, 6) * 32, rect = tl_int(0, 1);
        if (t == 0) w = 64, h = 48, imgsz = 64;   /* no resize */
        if (t == 2) w = 128, h = 96, imgsz = 64;  /* exact 2x down */
        if (t == 4) w = 1, h = 1;                 /* from one pixel */
        /* every third case NV12 (odd sizes included: the last chroma
         * column and row cover one pixel), any matrix and range */
        const int nv12 = t % 3 == 1;
        int stride = w * (nv12 ? 1 : 3) + tl_int(0, 13), cw = (w + 1) / 2, ch = (h + 1) / 2;
        int uv_stride = 2 * cw + tl_int(0, 9);
        strix_image img = {.data = random_image(w, h, stride), .width = w, .height = h, .stride = stride, .format = tl_int(0, 1) ? STRIX_BGR : STRIX_RGB};
        if (nv12) {
            img.format = STRIX_NV12;
            img.uv = random_image(cw, ch, uv_stride);
            img.uv_stride = uv_stride;
            img.colorspace = tl_int(0, 1) ? STRIX_BT709 : STRIX_BT601;
            img.full_range = tl_int(0, 1);
            if (!img.uv) return;
        }
        if (!img.data) return;
        strix_letterbox_info info;
        strix_letterbox_plan(w, h, imgsz, 32, rect, &info);
        size_t len = (size_t)info.dst_w * info.dst_h * 3;
        float *ref = hmalloc(len * sizeof(float));
        void *scratch = hmalloc(strix_letterbox_scratch_bytes(&info));
        uint8_t *dsrc = dmalloc((size_t)stride * h), *duv = nv12 ? dmalloc((size_t)uv_stride * ch) : NULL;
        tbuf out;
        if (!ref || !scratch || !dsrc || (nv12 && !duv) || !tb_new(&out, len, dt, 0)) return;
        strix_letterbox(ref, &img, &info, scratch);
        if (!h2d(dsrc, img.data, (size_t)stride * h) || (nv12 && !h2d(duv, img.uv, (size_t)uv_stride * ch))) return;
        strix_lb_params lp = {w, h, stride, img.format == STRIX_BGR, info.dst_w, info.dst_h,
                              info.new_w, info.new_h, info.left, info.top, nv12, uv_stride, {0}};
        if (nv12) {
            strix_yuv_coeffs c;
            strix_yuv_coeffs_init(&c, img.colorspace, img.full_range);
            const int yuv[6] = {c.cy, c.crv, c.cgu, c.cgv, c.cbu, c.yoff};
            memcpy(lp.yuv, yuv, sizeof yuv);
        }
        CK(strix_cuda_letterbox(tb_data(&out), dt, dsrc, duv, &lp, (strix_stream)T.s));
        void *raw;
        if (!tb_fetch(&out, &raw, "letterbox")) return;
        /* fp32: bit-exact.  fp16: the device computes in fp32 and rounds once,
         * so |gpu - cpu| <= half an fp16 ulp of the CPU's value (ties allowed
         * either way). */
        for (size_t i = 0; i < len; i++) {
            double g = raw_value(raw, dt, i), bound = dt == STRIX_F16 ? half_ulp16(ref[i]) : 0;
            int ok = dt == STRIX_F16 ? fabs(g - ref[i]) <= bound : f32_bits(((float *)raw)[i]) == f32_bits(ref[i]);
            TL_CHECK(ok, "letterbox %dx%d%s -> %dx%d (new %dx%d at %d,%d) %s: element %zu (pixel %zu) is %.9g, the CPU's %.9g (bound %.3g)",
                     w, h, nv12 ? " NV12" : img.format == STRIX_BGR ? " BGR" : "", info.dst_w, info.dst_h, info.new_w, info.new_h,
                     info.left, info.top, dt == STRIX_F16 ? "f16" : "f32", i, i / 3, g, ref[i], bound);
        }
    }
}

/* The asynchronous path's per-batch letterbox (strix_cuda_letterbox_batch):
 * random batches of frames of mixed sizes and formats (RGB, BGR, NV12 of
 * either matrix and range, each in device memory with its own row pitch),
 * one launch, bit-identical, fp32 and fp16, to one strix_cuda_letterbox
 * launch per frame into its slot (op_letterbox checks those against the
 * CPU); the tensor's guards intact. */
static void op_letterbox_batch(void)
{
    if (!need_device()) return;
    enum { MAXN = 7 };
    for (int t = 0; t < CASES(20, 4) && !tl_g.failed; t++) {
        const strix_dtype dt = t % 2 ? STRIX_F16 : STRIX_F32;
        const int n = tl_int(1, MAXN), imgsz = tl_int(1, 5) * 32;
        strix_lb_frame desc[MAXN];
        strix_lb_params lp[MAXN];
        const uint8_t *dy[MAXN], *duv[MAXN];
        int dw = 0, dh = 0;
        for (int i = 0; i < n; i++) {
            const int w = tl_int(1, 150), h = tl_int(1, 150), fmt = tl_int(0, 2), nv12 = fmt == STRIX_NV12;
            const int stride = w * (nv12 ? 1 : 3) + tl_int(0, 13), cw = (w + 1) / 2, ch = (h + 1) / 2;
            const int uvs = 2 * cw + tl_int(0, 9);
            uint8_t *y = random_image(w, h, stride), *uv = nv12 ? random_image(cw, ch, uvs) : NULL;
            uint8_t *d_y = dmalloc((size_t)stride * h), *d_uv = nv12 ? dmalloc((size_t)uvs * ch) : NULL;
            if (!y || !d_y || (nv12 && (!uv || !d_uv))) return;
            if (!h2d(d_y, y, (size_t)stride * h) || (nv12 && !h2d(d_uv, uv, (size_t)uvs * ch))) return;
            strix_letterbox_info info;
            strix_letterbox_plan(w, h, imgsz, 32, 0, &info);
            dw = info.dst_w, dh = info.dst_h;
            lp[i] = (strix_lb_params){w, h, stride, fmt == STRIX_BGR, info.dst_w, info.dst_h, info.new_w, info.new_h,
                                      info.left, info.top, nv12, uvs, {0}};
            if (nv12) {
                strix_yuv_coeffs c;
                strix_yuv_coeffs_init(&c, tl_int(0, 1) ? STRIX_BT709 : STRIX_BT601, tl_int(0, 1));
                const int yuv[6] = {c.cy, c.crv, c.cgu, c.cgv, c.cbu, c.yoff};
                memcpy(lp[i].yuv, yuv, sizeof yuv);
            }
            dy[i] = d_y, duv[i] = d_uv;
            strix_lb_frame_init(&desc[i], &lp[i], d_y, d_uv);
        }
        const size_t per = (size_t)dw * dh * 3, len = per * n;
        tbuf one, all;
        strix_lb_frame *ddesc = dmalloc(sizeof desc);
        if (!ddesc || !h2d(ddesc, desc, sizeof desc) || !tb_new(&one, len, dt, 0) || !tb_new(&all, len, dt, 0)) return;
        for (int i = 0; i < n; i++)
            CK(strix_cuda_letterbox((char *)tb_data(&one) + per * i * esz(dt), dt, dy[i], duv[i], &lp[i],
                                    (strix_stream)T.s));
        CK(strix_cuda_letterbox_batch(tb_data(&all), dt, ddesc, n, dw, dh, (strix_stream)T.s));
        void *r1, *r2;
        if (!tb_fetch(&one, &r1, "letterbox per frame") || !tb_fetch(&all, &r2, "letterbox per batch")) return;
        const size_t bytes = (len + 2 * GUARD) * esz(dt);
        for (size_t k = 0; k < bytes && !tl_g.failed; k++)
            TL_CHECK(((uint8_t *)r1)[k] == ((uint8_t *)r2)[k],
                     "batch of %d -> %dx%d %s: byte %zu (element %zu of the guarded buffer) differs from the per-frame launches",
                     n, dw, dh, dt == STRIX_F16 ? "f16" : "f32", k, k / esz(dt));
    }
}

/* A decoded head [A, 4 + nc] with clustered boxes, tied and NaN scores. */
static void random_decoded(float *head, int anchors, int nc)
{
    float cx[6], cy[6];
    for (int k = 0; k < 6; k++) cx[k] = tl_uniform(0, 640), cy[k] = tl_uniform(0, 480);
    for (int a = 0; a < anchors; a++) {
        float *r = head + (size_t)a * (4 + nc);
        int k = tl_int(0, 5);
        r[0] = cx[k] + tl_uniform(-30, 30);
        r[1] = cy[k] + tl_uniform(-30, 30);
        r[2] = tl_uniform(2, 120);
        r[3] = tl_uniform(2, 120);
        for (int c = 0; c < nc; c++) {
            float s = tl_uniform(0, 1);
            r[4 + c] = tl_int(0, 3) == 0 ? roundf(s * 8) / 8 : s; /* exact ties */
        }
        if (tl_int(0, 60) == 0) r[4 + tl_int(0, nc - 1)] = NAN;
    }
}

static void op_nms(void)
{
    if (!need_device()) return;
    for (int t = 0; t < CASES(24, 6) && !tl_g.failed; t++) {
        strix_nms_gpu_params gp;
        gp.n = tl_int(1, 3);
        gp.anchors = t == 0 ? 8400 : tl_int(1, 3000);
        gp.nc = t % 3 == 0 ? 80 : tl_int(1, 5);
        gp.conf = t % 4 == 0 ? 0.0f : tl_uniform(0.05f, 0.9f);
        static const float ious[] = {0.7f, 0.45f, 0.0f, 1.0f, 0.5f};
        gp.iou = t < 5 ? ious[t] : tl_uniform(0, 1);
        gp.max_det = t % 5 == 1 ? tl_int(1, 10) : 300;
        gp.max_nms = t % 6 == 2 ? tl_int(1, 100) : 30000;
        gp.agnostic = t % 7 == 3;
        unsigned char keep[80]; /* a class filter in every fourth case */
        for (int c = 0; c < gp.nc; c++) keep[c] = tl_int(0, 1);
        gp.classes = t % 4 == 1 ? keep : NULL;
        size_t per = (size_t)gp.anchors * (4 + gp.nc);
        tbuf dec, dets, counts;
        if (!tb_new(&dec, gp.n * per, STRIX_F32, 0)) return;
        for (int i = 0; i < gp.n; i++) random_decoded(dec.h + i * per, gp.anchors, gp.nc);
        if (!tb_upload(&dec) || !tb_new(&dets, (size_t)gp.n * gp.max_det * 6, STRIX_F32, 0) ||
            !tb_new(&counts, (size_t)gp.n, STRIX_F32, 0))
            return;
        size_t wsb = strix_cuda_nms_workspace(&gp);
        TL_CHECK(wsb != SIZE_MAX, "the NMS workspace cannot be sized");
        void *ws = dmalloc(wsb);
        if (!ws) return;
        CK(strix_cuda_nms(tb_data(&dets), tb_data(&counts), tb_data(&dec), &gp, ws, (strix_stream)T.s));
        void *draw, *craw;
        if (!tb_fetch(&dets, &draw, "nms dets") || !tb_fetch(&counts, &craw, "nms counts")) return;
        strix_nms_params np = {gp.conf, gp.iou, gp.max_det, gp.max_nms, gp.agnostic, gp.nc, gp.classes, 0, NULL, NULL,
                               NULL, NULL, NULL, 0};
        void *cws = hmalloc(strix_nms_workspace((size_t)gp.anchors, &np));
        strix_detection *want = hmalloc(sizeof *want * (size_t)gp.max_det);
        if (!cws || !want) return;
        int total = 0;
        for (int i = 0; i < gp.n; i++) {
            int k = strix_nms(want, dec.h + i * per, (size_t)gp.anchors, &np, cws);
            int got = ((int *)craw)[i];
            total += k;
            TL_CHECK(got == k, "nms case %d image %d (A %d nc %d conf %g iou %g max_det %d max_nms %d agnostic %d): %d boxes, the CPU %d",
                     t, i, gp.anchors, gp.nc, gp.conf, gp.iou, gp.max_det, gp.max_nms, gp.agnostic, got, k);
            const float *g = (const float *)draw + (size_t)i * gp.max_det * 6;
            for (int j = 0; j < k; j++) {
                const float *d = g + j * 6;
                float w6[6] = {want[j].x1, want[j].y1, want[j].x2, want[j].y2, want[j].score, (float)want[j].class_id};
                for (int f = 0; f < 6; f++)
                    TL_CHECK(f32_bits(d[f]) == f32_bits(w6[f]), "nms case %d image %d box %d field %d: %.9g, the CPU %.9g", t,
                             i, j, f, d[f], w6[f]);
            }
            for (int j = k * 6; j < gp.max_det * 6; j++)
                TL_CHECK(f32_bits(g[j]) == 0, "nms case %d image %d: row %d past the count is not zeroed", t, i, j / 6);
        }
        TL_CHECK(t != 0 || total > 0, "the 8400-anchor case kept no box: the test checks nothing");
    }
}

/* ---------------------------------------------------------- network tests */

static const char *yamls[NET_YAMLS] = {"weights/yolov8.yaml", "weights/yolo11.yaml"};
/* synthetic-weight seeds whose calibrated networks give tens of boxes on
 * smooth_image frames at moderate thresholds (others saturate or stay empty) */
static const uint64_t net_seeds[NET_YAMLS] = {3, 4};

/* Synthetic weights for yamls[i] (scale n), written once per program,
 * stored as F32 or (f16) F16.  The fp16 comparisons use F16 weights, as
 * Ultralytics' own checkpoints are: CPU and GPU then hold the same weights
 * and differ only by the fp16 arithmetic under test. */
static const char *net_weights(int i, int f16)
{
    static char path[NET_YAMLS][2][128];
    if (path[i][f16][0]) return path[i][f16];
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = yamls[i];
    o.scale = 'n';
    strix_model *m;
    strix_error e;
    char p[128];
    snprintf(p, sizeof p, "%s/%d%s.safetensors", T.tmpdir, i, f16 ? "-f16" : "");
    if (strix_model_load(&m, &o, &e) != STRIX_OK) {
        tl_fail("%s: %s", yamls[i], e.message);
        return NULL;
    }
    strix_status st = strix_model_write_synthetic_weights(m, p, net_seeds[i], 1, f16, 1, &e);
    strix_model_free(m);
    if (st) {
        tl_fail("%s: %s", yamls[i], e.message);
        return NULL;
    }
    snprintf(path[i][f16], sizeof path[i][f16], "%s", p);
    return path[i][f16];
}

/* Model i on `device`, fp16 when half, with F16-stored weights when
 * f16_weights. */
/* graphs: the cuda_graphs model option (1 as by default, 0 eager). */
static strix_model *net_load_graphs(int i, int f16_weights, const char *device, int half, int graphs)
{
    const char *w = net_weights(i, f16_weights);
    if (!w) return NULL;
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = yamls[i];
    o.scale = 'n';
    o.weights_path = w;
    o.device = device;
    o.half = half;
    o.cuda_graphs = graphs;
    o.cuda_kernels = T.kernels;
    o.cuda_async = T.async;
    strix_model *m;
    strix_error e;
    if (strix_model_load(&m, &o, &e) != STRIX_OK) {
        tl_fail("%s on %s: %s", yamls[i], device, e.message);
        return NULL;
    }
    return m;
}

static strix_model *net_load(int i, int f16_weights, const char *device, int half)
{
    return net_load_graphs(i, f16_weights, device, half, 1);
}

/* A smooth image-like RGB frame (gradients and waves plus noise). */
static uint8_t *smooth_image(int w, int h)
{
    uint8_t *im = hmalloc((size_t)w * h * 3);
    if (!im) return NULL;
    float f[3][4];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 4; k++) f[c][k] = tl_uniform(0.01f, 0.15f);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                float v = 128 + 60 * sinf(x * f[c][0] + f[c][1] * 40) + 50 * cosf(y * f[c][2] + f[c][3] * 40) +
                          tl_uniform(-12, 12);
                im[((size_t)y * w + x) * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    return im;
}

static double rel_l2(const float *a, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static void net_forward_f32(void)
{
    if (!need_device()) return;
    for (int i = 0; i < NET_YAMLS && !tl_g.failed; i++) {
        strix_model *cpu = net_load(i, 0, "cpu", 0), *gpu = cpu ? net_load(i, 0, "cuda", 0) : NULL;
        if (!gpu) {
            strix_model_free(cpu);
            return;
        }
        int n = 2, h = 160 + 32 * tl_int(0, 2), w = 224 + 32 * tl_int(0, 2);
        size_t in_len = (size_t)n * h * w * 3, out_len = (size_t)n * strix_model_anchor_count(cpu, h, w) *
                                                         (4 + strix_model_class_count(cpu));
        float *in = hmalloc(in_len * sizeof(float)), *a = hmalloc(out_len * sizeof(float)),
              *b = hmalloc(out_len * sizeof(float));
        strix_error e;
        int ok = in && a && b;
        for (size_t k = 0; ok && k < in_len; k++) in[k] = tl_uniform(0, 1);
        if (ok && strix_model_forward(cpu, in, n, h, w, a, &e)) ok = 0, tl_fail("cpu forward: %s", e.message);
        if (ok && strix_model_forward(gpu, in, n, h, w, b, &e)) ok = 0, tl_fail("cuda forward: %s", e.message);
        for (size_t k = 0; ok && k < out_len; k++)
            if (!isfinite(b[k])) ok = 0, tl_fail("%s: non-finite cuda output at %zu", yamls[i], k);
        double r = ok ? rel_l2(b, a, out_len) : 0;
        if (ok && r > 1e-4) tl_fail("%s %dx%d: cuda fp32 differs from the cpu by %.3g relative L2 (limit 1e-4)", yamls[i], w, h, r);
        strix_model_free(cpu);
        strix_model_free(gpu);
    }
}

/* The IoU of two boxes; a box clipped to zero width or height (one lying
 * in the letterbox padding) has none, so such pairs score 1 when every
 * coordinate agrees within a pixel, else 0. */
static double box_similarity(const strix_detection *p, const strix_detection *q)
{
    double ap = (double)(p->x2 - p->x1) * (p->y2 - p->y1), aq = (double)(q->x2 - q->x1) * (q->y2 - q->y1);
    if (!(ap > 0) || !(aq > 0))
        return fabs(p->x1 - q->x1) <= 1 && fabs(p->y1 - q->y1) <= 1 && fabs(p->x2 - q->x2) <= 1 &&
               fabs(p->y2 - q->y2) <= 1;
    double iw = fmin(p->x2, q->x2) - fmax(p->x1, q->x1), ih = fmin(p->y2, q->y2) - fmax(p->y1, q->y1);
    if (iw <= 0 || ih <= 0) return 0;
    return iw * ih / (ap + aq - iw * ih);
}

/* Boxes of `want` (per image) scoring >= min_score, matched one to one in
 * `got`: same class and IoU >= min_iou.  Returns the matched count; *total
 * the boxes of want considered. */
static int match_boxes(const strix_detections *want, const strix_detections *got, int n, double min_iou,
                       double min_score, int *total)
{
    int matched = 0;
    *total = 0;
    for (int i = 0; i < n; i++) {
        unsigned char *used = hmalloc((size_t)got[i].count + 1);
        if (!used) return 0;
        for (int a = 0; a < want[i].count; a++) {
            const strix_detection *p = &want[i].items[a];
            if (p->score < min_score) continue;
            (*total)++;
            int best = -1;
            double best_iou = min_iou;
            for (int b = 0; b < got[i].count; b++) {
                const strix_detection *q = &got[i].items[b];
                if (used[b] || q->class_id != p->class_id) continue;
                double sim = box_similarity(p, q);
                if (sim >= best_iou) best_iou = sim, best = b;
            }
            if (best >= 0) used[best] = 1, matched++;
        }
    }
    return matched;
}

/* Detections of a copy: a model's results live only until its next call. */
static int copy_dets(strix_detections *dst, const strix_detections *src, int n)
{
    for (int i = 0; i < n; i++) {
        strix_detection *d = hmalloc(sizeof *d * (size_t)(src[i].count ? src[i].count : 1));
        if (!d) return 0;
        memcpy(d, src[i].items, sizeof *d * (size_t)src[i].count);
        dst[i].count = src[i].count;
        dst[i].items = d;
    }
    return 1;
}

/* Synthetic weights give anything from no box to a box per anchor,
 * depending on the image, so each batch picks its threshold from these
 * (high to low), never one giving an image over NET_MAX_BOXES CPU boxes
 * (well under max_det: no list is truncated): the first giving the batch
 * `target` boxes, or with target 0 the lowest.  Fewer boxes make fewer
 * near-ties that fp32 rounding could break differently (fp32 compares every
 * box); more make fp16's 98% meaningful. */
static const float net_confs[] = {0.9f, 0.75f, 0.6f, 0.45f, 0.3f, 0.2f, 0.12f, 0.06f};
#define NET_MAX_DET 1000
#define NET_MAX_BOXES 400

typedef struct net_tally {
    int total, matched;   /* CPU boxes clear of the threshold, and those found on CUDA */
    int rtotal, rmatched; /* the same from the CUDA side */
} net_tally;

/* Both models detect on a rect batch of 3 and a mixed-size batch of 2.
 * Boxes scoring within `margin` of the threshold are not required on the
 * other side (a tiny score difference may cross it). */
static int net_detect_compare(int yaml, int half, int target, double min_iou, double margin, net_tally *t)
{
    strix_model *cpu = net_load(yaml, half, "cpu", 0), *gpu = cpu ? net_load(yaml, half, "cuda", half) : NULL;
    if (!gpu) {
        strix_model_free(cpu);
        return 0;
    }
    int ok = 1;
    for (int batch = 0; batch < 2 && ok; batch++) {
        int n = batch ? 2 : 3;
        strix_image im[3];
        for (int k = 0; k < n && ok; k++) {
            int w = batch ? 150 + 70 * k : 320, h = batch ? 260 - 50 * k : 200;
            im[k] = (strix_image){.data = smooth_image(w, h), .width = w, .height = h, .format = k % 2 ? STRIX_BGR : STRIX_RGB};
            ok = im[k].data != NULL;
        }
        strix_detect_options d;
        strix_detect_options_init(&d);
        d.imgsz = 320;
        d.max_det = NET_MAX_DET;
        strix_detections a[3], b[3], want[3];
        strix_error e;
        float conf = -1;
        for (size_t c = 0; ok && c < sizeof net_confs / sizeof *net_confs; c++) {
            d.conf = net_confs[c];
            if (strix_model_detect(cpu, im, n, &d, a, &e)) {
                ok = 0, tl_fail("cpu detect: %s", e.message);
                break;
            }
            int most = 0, all = 0;
            for (int k = 0; k < n; k++) most = a[k].count > most ? a[k].count : most, all += a[k].count;
            if (most > NET_MAX_BOXES) break;
            conf = d.conf;
            ok = copy_dets(want, a, n);
            if (target && all >= target) break;
        }
        if (!ok || conf < 0) continue; /* saturated at every threshold: nothing comparable */
        d.conf = conf;
        if (strix_model_detect(gpu, im, n, &d, b, &e)) {
            ok = 0, tl_fail("cuda detect: %s", e.message);
            break;
        }
        int tot, rtot;
        t->matched += match_boxes(want, b, n, min_iou, conf + margin, &tot);
        t->rmatched += match_boxes(b, want, n, min_iou, conf + margin, &rtot);
        t->total += tot;
        t->rtotal += rtot;
    }
    strix_model_free(cpu);
    strix_model_free(gpu);
    return ok;
}

static void net_detect_f32(void)
{
    if (!need_device()) return;
    net_tally t = {0, 0, 0, 0};
    for (int i = 0; i < NET_YAMLS; i++)
        if (!net_detect_compare(i, 0, 15, 0.99, 1e-3, &t)) return;
    TL_CHECK(t.total >= 5, "the cpu found only %d boxes: the comparison checks nothing", t.total);
    TL_CHECK(t.matched == t.total && t.rmatched == t.rtotal,
             "fp32: %d of the cpu's %d boxes found on cuda, %d of cuda's %d on the cpu (same class, IoU >= 0.99)",
             t.matched, t.total, t.rmatched, t.rtotal);
}

static void net_detect_f16(void)
{
    if (!need_device()) return;
    net_tally t = {0, 0, 0, 0};
    for (int i = 0; i < NET_YAMLS; i++)
        if (!net_detect_compare(i, 1, 0, 0.9, 5e-3, &t)) return;
    TL_CHECK(t.total >= 20, "the cpu found only %d boxes: the comparison checks little", t.total);
    TL_CHECK(t.matched >= 0.98 * t.total, "fp16: %d of the cpu's %d boxes matched (same class, IoU >= 0.9), need 98%%",
             t.matched, t.total);
}

/* The eager first run, a replayed graph, a re-capture after a shape change
 * and the eager path (model option cuda_graphs 0) all give the same bits. */
static void net_graph_replay_run(int half)
{
    if (!need_device()) return;
    int i = tl_int(0, NET_YAMLS - 1);
    strix_model *g = net_load(i, half, "cuda", half);
    if (!g) return;
    strix_model *eager = net_load_graphs(i, half, "cuda", half, 0);
    if (!eager) {
        strix_model_free(g);
        return;
    }
    int n = 1, h = 128, w = 192;
    size_t in_len = (size_t)3 * 224 * 224 * 3, out_len = (size_t)3 * strix_model_anchor_count(g, 224, 224) *
                                                         (4 + strix_model_class_count(g));
    float *in = hmalloc(in_len * sizeof(float)), *r[4];
    int ok = in != NULL;
    for (int k = 0; k < 4; k++) ok &= (r[k] = hmalloc(out_len * sizeof(float))) != NULL;
    for (size_t k = 0; ok && k < in_len; k++) in[k] = tl_uniform(0, 1);
    strix_error e;
    size_t len = (size_t)n * strix_model_anchor_count(g, h, w) * (4 + strix_model_class_count(g));
    /* per shape: an eager warm-up, a capture, then replays */
    if (ok && (strix_model_forward(g, in, n, h, w, r[0], &e) || strix_model_forward(g, in, n, h, w, r[1], &e) ||
               strix_model_forward(g, in, n, h, w, r[1], &e) || strix_model_forward(g, in, 3, 224, 224, r[3], &e) ||
               strix_model_forward(g, in, 3, 224, 224, r[3], &e) || strix_model_forward(g, in, n, h, w, r[2], &e) ||
               strix_model_forward(g, in, n, h, w, r[2], &e)))
        ok = 0, tl_fail("cuda forward: %s", e.message);
    if (ok && memcmp(r[0], r[1], len * sizeof(float))) ok = 0, tl_fail("a replayed graph gave different results");
    if (ok && memcmp(r[0], r[2], len * sizeof(float))) ok = 0, tl_fail("the graph re-captured after a shape change differs");
    if (ok && strix_model_forward(eager, in, n, h, w, r[1], &e)) ok = 0, tl_fail("eager forward: %s", e.message);
    if (ok && memcmp(r[0], r[1], len * sizeof(float))) tl_fail("eager execution and the graph differ");
    strix_model_free(g);
    strix_model_free(eager);
}

static void net_graph_replay(void) { net_graph_replay_run(0); }

/* The same checks with the first kernel set (model option cuda_kernels 1;
 * the others run the default, 2); the replay in fp16, where they differ most. */
static void net_detect_f16_v1(void)
{
    T.kernels = STRIX_CUDA_KERNELS_V1;
    net_detect_f16();
    T.kernels = STRIX_CUDA_KERNELS_V2;
}

static void net_graph_replay_v1(void)
{
    T.kernels = STRIX_CUDA_KERNELS_V1;
    net_graph_replay_run(1);
    T.kernels = STRIX_CUDA_KERNELS_V2;
}

/* And with kernel set 3 (split-K): the detections, and the replayed graph
 * bit-identical to eager execution (the slices are summed in a fixed order;
 * the partials' workspace is reserved when planning, not during capture). */
static void net_detect_f16_v3(void)
{
    T.kernels = STRIX_CUDA_KERNELS_V3;
    net_detect_f16();
    T.kernels = STRIX_CUDA_KERNELS_V2;
}

static void net_graph_replay_v3(void)
{
    T.kernels = STRIX_CUDA_KERNELS_V3;
    net_graph_replay_run(1);
    T.kernels = STRIX_CUDA_KERNELS_V2;
}

/* Kernel set 3 folds both neck upsamples of yolov8n and yolo11n into their
 * convolutions on this GPU (fp16; the views of a planned shape are aligned
 * for it), so the net_ tests above run the folded kernels; set 2 and fp32
 * fold none. */
static void net_upsample_fold_v3(void)
{
    if (!need_device()) return;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess || major < 8) {
        tl_skip("the folded upsample is part of the mma.sync path, which needs compute capability 8.0");
        return;
    }
    static const struct {
        int kernels, half, folds;
    } runs[] = {{STRIX_CUDA_KERNELS_V3, 1, 2}, {STRIX_CUDA_KERNELS_V2, 1, 0}, {STRIX_CUDA_KERNELS_V3, 0, 0}};
    float *in = hmalloc((size_t)2 * 128 * 192 * 3 * sizeof(float));
    if (!in) return;
    for (size_t k = 0; k < (size_t)2 * 128 * 192 * 3; k++) in[k] = tl_uniform(0, 1);
    for (int i = 0; i < NET_YAMLS && !tl_g.failed; i++)
        for (size_t r = 0; r < sizeof runs / sizeof *runs && !tl_g.failed; r++) {
            T.kernels = runs[r].kernels;
            strix_model *m = net_load(i, 0, "cuda", runs[r].half);
            T.kernels = STRIX_CUDA_KERNELS_V2;
            if (!m) return;
            float *out = hmalloc((size_t)2 * strix_model_anchor_count(m, 128, 192) * (4 + strix_model_class_count(m)) *
                                 sizeof(float));
            strix_error e;
            if (!out || strix_model_forward(m, in, 2, 128, 192, out, &e)) {
                if (out) tl_fail("%s: %s", yamls[i], e.message);
                strix_model_free(m);
                return;
            }
            int folds = strix_cuda_backend_upsample_folds(strix_cuda_backend_of(m->backend));
            strix_model_free(m);
            TL_CHECK(folds == runs[r].folds, "%s, kernel set %d, %s: %d upsamples folded, want %d", yamls[i],
                     runs[r].kernels, runs[r].half ? "fp16" : "fp32", folds, runs[r].folds);
        }
}

/* The asynchronous path (model option cuda_async): batch B submitted
 * before batch A is collected, the two collected in reverse order, then a
 * batch of another shape (which waits for them), find the boxes the
 * synchronous path finds on the same device. */
static void net_detect_async(void)
{
    if (!need_device()) return;
    int y = tl_int(0, NET_YAMLS - 1);
    strix_model *sync = net_load(y, 0, "cuda", 0), *as = NULL;
    T.async = 1;
    if (sync) as = net_load(y, 0, "cuda", 0);
    T.async = 0;
    if (!as) {
        strix_model_free(sync);
        return;
    }
    enum { SETS = 3 };
    const int n[SETS] = {3, 3, 2};
    strix_image im[SETS][3];
    int ok = 1;
    for (int s = 0; s < SETS; s++)
        for (int k = 0; k < n[s] && ok; k++) {
            int w = s < 2 ? 320 : 150 + 70 * k, h = s < 2 ? 200 : 260 - 50 * k;
            im[s][k] = (strix_image){.data = smooth_image(w, h), .width = w, .height = h, .format = (s + k) % 2 ? STRIX_BGR : STRIX_RGB};
            ok = im[s][k].data != NULL;
        }
    strix_detect_options d;
    strix_detect_options_init(&d);
    d.imgsz = 320;
    d.conf = 0.3f;
    d.max_det = NET_MAX_DET;
    strix_detections want[SETS][3], got[3];
    strix_error e;
    for (int s = 0; s < SETS && ok; s++)
        if (strix_model_detect(sync, im[s], n[s], &d, got, &e) || !copy_dets(want[s], got, n[s]))
            ok = 0, tl_fail("synchronous detect: %s", e.message);
    strix_batch *b[SETS] = {NULL, NULL, NULL};
    /* the order of events: submit 0, submit 1, collect 1, collect 0, release 0, submit 2, collect 2 */
    static const struct { char op; int s; } steps[] = {{'s', 0}, {'s', 1}, {'c', 1}, {'c', 0}, {'r', 0},
                                                        {'s', 2}, {'c', 2}};
    for (size_t k = 0; k < sizeof steps / sizeof *steps && ok; k++) {
        int s = steps[k].s;
        if (steps[k].op == 'r') {
            strix_batch_release(b[s]);
            b[s] = NULL;
        } else if (steps[k].op == 's') {
            if (strix_model_submit(as, im[s], n[s], &d, &b[s], &e)) ok = 0, tl_fail("submit %d: %s", s, e.message);
        } else if (strix_batch_collect(b[s], got, &e)) {
            ok = 0, tl_fail("collect %d: %s", s, e.message);
        } else {
            int total, matched = match_boxes(want[s], got, n[s], 0.9999, 0, &total);
            for (int i = 0; i < n[s] && ok; i++)
                if (got[i].count != want[s][i].count)
                    ok = 0, tl_fail("batch %d image %d: %d boxes asynchronously, %d synchronously", s, i,
                                    got[i].count, want[s][i].count);
            if (ok && matched != total)
                ok = 0, tl_fail("batch %d: %d of %d boxes found again asynchronously", s, matched, total);
        }
    }
    for (int s = 0; s < SETS; s++) strix_batch_release(b[s]);
    strix_model_free(as);
    strix_model_free(sync);
}

/* An NV12 frame in host memory from a smooth RGB one: Y its first
 * channel, U and V its second and third at every other pixel. */
static strix_image smooth_nv12(int w, int h)
{
    uint8_t *rgb = smooth_image(w, h), *y = hmalloc((size_t)w * h), *uv = hmalloc((size_t)2 * ((w + 1) / 2) * ((h + 1) / 2));
    strix_image im = {.width = w, .height = h, .format = STRIX_NV12, .colorspace = STRIX_BT709};
    if (!rgb || !y || !uv) return im;
    for (int r = 0; r < h; r++)
        for (int x = 0; x < w; x++) {
            const uint8_t *p = rgb + ((size_t)r * w + x) * 3;
            y[(size_t)r * w + x] = p[0];
            if (!(r & 1) && !(x & 1)) {
                uint8_t *q = uv + (size_t)(r / 2) * 2 * ((w + 1) / 2) + x;
                q[0] = p[1], q[1] = p[2];
            }
        }
    im.data = y, im.uv = uv;
    return im;
}

/* The asynchronous path letterboxes a batch in one launch
 * (strix_cuda_letterbox_batch) and runs each lane on its own compute
 * stream and activation memory: 4 batches of 5 frames of mixed sizes and
 * formats (RGB, BGR, NV12 in host memory), fp32 and fp16, submitted in a
 * rolling pipeline (batch s + 1 submitted before batch s is collected, so
 * two lanes compute at once), give exactly the synchronous path's boxes
 * (one launch per frame, the same bits in the input tensor). */
static void net_detect_async_batch_letterbox(void)
{
    if (!need_device()) return;
    enum { SETS = 4, N = 5 };
    for (int half = 0; half < 2 && !tl_g.failed; half++) {
        int y = tl_int(0, NET_YAMLS - 1);
        strix_model *sync = net_load(y, half, "cuda", half), *as = NULL;
        T.async = 1;
        if (sync) as = net_load(y, half, "cuda", half);
        T.async = 0;
        if (!as) {
            strix_model_free(sync);
            return;
        }
        strix_image im[SETS][N];
        int ok = 1;
        for (int s = 0; s < SETS; s++)
            for (int k = 0; k < N && ok; k++) {
                const int w = tl_int(60, 400), h = tl_int(60, 400), fmt = (s + k) % 3;
                if (fmt == STRIX_NV12) {
                    im[s][k] = smooth_nv12(w, h);
                    im[s][k].full_range = k % 2;
                } else {
                    im[s][k] = (strix_image){.data = smooth_image(w, h), .width = w, .height = h,
                                             .format = (strix_pixel_format)fmt};
                }
                ok = im[s][k].data != NULL;
            }
        strix_detect_options d;
        strix_detect_options_init(&d);
        d.imgsz = 256;
        d.conf = 0.3f;
        d.max_det = NET_MAX_DET;
        strix_detections want[SETS][N], got[N];
        strix_error e;
        for (int s = 0; s < SETS && ok; s++)
            if (strix_model_detect(sync, im[s], N, &d, got, &e) || !copy_dets(want[s], got, N))
                ok = 0, tl_fail("synchronous detect: %s", e.message);
        strix_batch *b[SETS] = {NULL, NULL, NULL, NULL};
        for (int k = 0; k <= SETS && ok; k++) {
            if (k < SETS && strix_model_submit(as, im[k], N, &d, &b[k], &e)) {
                ok = 0, tl_fail("submit %d: %s", k, e.message);
                break;
            }
            const int s = k - 1; /* collected once its successor is in flight */
            if (s < 0) continue;
            if (strix_batch_collect(b[s], got, &e)) {
                ok = 0, tl_fail("collect %d: %s", s, e.message);
                break;
            }
            int total, matched = match_boxes(want[s], got, N, 0.9999, 0, &total);
            for (int i = 0; i < N && ok; i++)
                if (got[i].count != want[s][i].count)
                    ok = 0, tl_fail("%s batch %d image %d (%dx%d, format %d): %d boxes asynchronously, %d synchronously",
                                    half ? "fp16" : "fp32", s, i, im[s][i].width, im[s][i].height, im[s][i].format,
                                    got[i].count, want[s][i].count);
            if (ok && matched != total)
                ok = 0, tl_fail("%s batch %d: %d of %d boxes found again asynchronously", half ? "fp16" : "fp32", s,
                                matched, total);
            strix_batch_release(b[s]);
            b[s] = NULL;
        }
        for (int s = 0; s < SETS; s++) strix_batch_release(b[s]);
        strix_model_free(as);
        strix_model_free(sync);
    }
}

/* One batch of net_detect_pinned: N frames of w x h, format (set + k) % 3
 * (RGB, BGR, NV12), as STRIX_HOST in memory of their own (host[k]) and the
 * same pixels as the set lays them out (pin[k]): set 0 pinned, tight rows,
 * back to back in one allocation of m's (NV12's U,V plane right after its
 * Y plane: the whole set is one contiguous run, one copy); set 1 pinned,
 * rows padded (every plane a copy of its own); set 2 pinned, host and
 * device frames mixed; set 3 tight but laid out in reverse order (an NV12
 * frame's two planes one run, no run across frames).  *block: the set's
 * pinned allocation (free with strix_model_free_pinned).  0 after a failure. */
#define PIN_N 6
static int pinned_set(strix_model *m, int set, int w, int h, strix_image *host, strix_image *pin, void **block)
{
    static const strix_memory mixed[PIN_N] = {STRIX_PINNED, STRIX_HOST, STRIX_DEVICE,
                                              STRIX_PINNED, STRIX_PINNED, STRIX_HOST};
    const int pad = set == 1 ? tl_int(1, 80) : 0, rows1 = (h + 1) / 2, row1 = 2 * ((w + 1) / 2);
    size_t off[PIN_N], bytes[PIN_N], need = 0;
    for (int k = 0; k < PIN_N; k++) {
        const int nv12 = (set + k) % 3 == STRIX_NV12, pitch0 = (nv12 ? w : 3 * w) + pad;
        bytes[k] = (size_t)pitch0 * h + (nv12 ? (size_t)(row1 + pad) * rows1 : 0);
        need += bytes[k];
    }
    for (int j = 0, at = 0; j < PIN_N; j++) { /* set 3: frame PIN_N - 1 first */
        const int k = set == 3 ? PIN_N - 1 - j : j;
        off[k] = (size_t)at;
        at += (int)bytes[k];
    }
    strix_error e;
    if (strix_model_alloc_pinned(m, need, block, &e)) {
        tl_fail("alloc_pinned of %zu bytes: %s", need, e.message);
        return 0;
    }
    for (int k = 0; k < PIN_N; k++) {
        const strix_pixel_format fmt = (strix_pixel_format)((set + k) % 3);
        const int nv12 = fmt == STRIX_NV12, row0 = nv12 ? w : 3 * w, pitch0 = row0 + pad, pitch1 = row1 + pad;
        strix_image src = nv12 ? smooth_nv12(w, h) : (strix_image){.data = smooth_image(w, h), .width = w, .height = h};
        uint8_t *hb = hmalloc(bytes[k]);
        if (!src.data || !hb) return 0;
        for (int r = 0; r < h; r++) memcpy(hb + (size_t)r * pitch0, src.data + (size_t)r * row0, (size_t)row0);
        for (int r = 0; nv12 && r < rows1; r++)
            memcpy(hb + (size_t)pitch0 * h + (size_t)r * pitch1, src.uv + (size_t)r * row1, (size_t)row1);
        host[k] = (strix_image){.data = hb, .width = w, .height = h, .stride = pitch0, .format = fmt,
                                .uv = nv12 ? hb + (size_t)pitch0 * h : NULL, .uv_stride = nv12 ? pitch1 : 0,
                                .colorspace = STRIX_BT709, .full_range = k % 2};
        const strix_memory kind = set == 2 ? mixed[k] : STRIX_PINNED;
        uint8_t *px = kind == STRIX_HOST ? hb : kind == STRIX_PINNED ? (uint8_t *)*block + off[k] : dmalloc(bytes[k]);
        if (!px) return 0;
        if (kind == STRIX_PINNED) memcpy(px, hb, bytes[k]);
        if (kind == STRIX_DEVICE && cudaMemcpy(px, hb, bytes[k], cudaMemcpyHostToDevice) != cudaSuccess) {
            tl_fail("cudaMemcpy of a device frame failed");
            return 0;
        }
        pin[k] = host[k];
        pin[k].data = px;
        pin[k].uv = nv12 ? px + (size_t)pitch0 * h : NULL;
        pin[k].memory = kind;
    }
    return 1;
}

/* Bit for bit the same boxes; 0 after a failure, which names what. */
static int same_boxes(const strix_detections *want, const strix_detections *got, int n, const char *what, int set)
{
    for (int i = 0; i < n; i++)
        if (got[i].count != want[i].count ||
            (got[i].count && memcmp(got[i].items, want[i].items, sizeof *got[i].items * (size_t)got[i].count))) {
            tl_fail("%s, set %d, image %d: %d boxes, the same pixels as STRIX_HOST %d or other boxes", what, set, i,
                    got[i].count, want[i].count);
            return 0;
        }
    return 1;
}

/* STRIX_PINNED frames (strix_model_alloc_pinned memory, DMA'd straight
 * from it: backend.c's place_pinned / upload_pinned) give bit for bit the
 * boxes of the same pixels as STRIX_HOST, fp32 and fp16: with cuda_async 0
 * through detect and submit; with cuda_async 1 through the lanes, batch
 * s + 1 submitted before batch s is collected (both lanes' pinned frames in
 * flight at once), a batch's pinned memory overwritten with noise as soon
 * as it is collected (as a decoder reusing it would), against the same
 * rolling pipeline on the host frames (each batch on the same lane).  The
 * sets of pinned_set: contiguous runs, padded rows, pinned/host/device
 * mixed in one batch.  Not yet run on a GPU. */
static void net_detect_pinned(void)
{
    if (!need_device()) return;
    enum { SETS = 4 };
    for (int run = 0; run < 4 && !tl_g.failed; run++) {
        const int half = run / 2, async = run % 2, y = tl_int(0, NET_YAMLS - 1);
        const int w = tl_int(90, 400), h = tl_int(90, 400);
        const char *what = async ? (half ? "fp16 async lanes" : "fp32 async lanes") : (half ? "fp16" : "fp32");
        T.async = async;
        strix_model *m = net_load(y, half, "cuda", half);
        T.async = 0;
        if (!m) return;
        strix_image host[SETS][PIN_N], pin[SETS][PIN_N];
        void *block[SETS] = {NULL, NULL, NULL, NULL};
        int ok = 1;
        for (int s = 0; s < SETS && ok; s++) ok = pinned_set(m, s, w, h, host[s], pin[s], &block[s]);
        strix_detect_options d;
        strix_detect_options_init(&d);
        d.imgsz = 320;
        d.conf = 0.3f;
        d.max_det = NET_MAX_DET;
        strix_detections want[SETS][PIN_N], got[PIN_N];
        strix_error e;
        int boxes = 0;
        if (!async) {
            for (int s = 0; s < SETS && ok; s++) {
                strix_batch *b = NULL;
                ok = !strix_model_detect(m, host[s], PIN_N, &d, got, &e) && copy_dets(want[s], got, PIN_N);
                for (int i = 0; ok && i < PIN_N; i++) boxes += want[s][i].count;
                ok = ok && !strix_model_detect(m, pin[s], PIN_N, &d, got, &e);
                ok = ok && same_boxes(want[s], got, PIN_N, what, s);
                ok = ok && !strix_model_submit(m, pin[s], PIN_N, &d, &b, &e) && !strix_batch_collect(b, got, &e);
                ok = ok && same_boxes(want[s], got, PIN_N, what, s);
                strix_batch_release(b);
                if (!ok && !tl_g.failed) tl_fail("%s, set %d: %s", what, s, e.message);
            }
        } else {
            strix_image (*sets[2])[PIN_N] = {host, pin};
            for (int kind = 0; kind < 2 && ok; kind++) {
                strix_batch *b[SETS] = {NULL, NULL, NULL, NULL};
                for (int k = 0; k <= SETS && ok; k++) {
                    if (k < SETS && strix_model_submit(m, sets[kind][k], PIN_N, &d, &b[k], &e)) {
                        ok = 0, tl_fail("%s, submit %d: %s", what, k, e.message);
                        break;
                    }
                    const int s = k - 1; /* collected once its successor is in flight */
                    if (s < 0) continue;
                    if (strix_batch_collect(b[s], got, &e)) {
                        ok = 0, tl_fail("%s, collect %d: %s", what, s, e.message);
                        break;
                    }
                    if (!kind) {
                        ok = copy_dets(want[s], got, PIN_N);
                        for (int i = 0; ok && i < PIN_N; i++) boxes += want[s][i].count;
                    } else {
                        ok = same_boxes(want[s], got, PIN_N, what, s);
                        for (int i = 0; i < PIN_N; i++)
                            if (pin[s][i].memory == STRIX_PINNED) /* the reader's next frame */
                                memset((void *)pin[s][i].data, tl_int(0, 255), (size_t)pin[s][i].stride * h);
                    }
                    strix_batch_release(b[s]);
                    b[s] = NULL;
                }
                for (int s = 0; s < SETS; s++) strix_batch_release(b[s]);
            }
        }
        for (int s = 0; s < SETS; s++) strix_model_free_pinned(m, block[s]);
        strix_model_free(m);
        release_all();
        if (ok && !boxes) tl_fail("%s: no boxes to compare (conf %.2f)", what, d.conf);
    }
}

/* The asynchronous path's CUDA graphs per batch shape (backend.c,
 * park_graph), with cuda_async, shapes A <= B < C in every dimension:
 * each shape runs eagerly first, then captures; B's first plan grows the
 * arena, which destroys every graph (A's too), so A runs eagerly again;
 * then forwards alternating B, A, B, A replay their graphs (no capture, no
 * invalidation, one launch each); C grows the arena again, so A after it
 * runs eagerly, then captures, and C (parked warm) captures next.  Every
 * result is bit-identical to eager execution (cuda_graphs 0). */
static void net_graph_cache(void)
{
    if (!need_device()) return;
    int i = tl_int(0, NET_YAMLS - 1), half = tl_int(0, 1);
    T.async = 1;
    strix_model *g = net_load(i, half, "cuda", half);
    T.async = 0;
    strix_model *eager = g ? net_load_graphs(i, half, "cuda", half, 0) : NULL;
    if (!eager) {
        strix_model_free(g);
        return;
    }
    static const int shape[3][3] = {{1, 128, 128}, {2, 160, 160}, {3, 256, 256}}; /* n, h, w: A, B, C */
    size_t in_len = (size_t)3 * 256 * 256 * 3, out_len = (size_t)3 * strix_model_anchor_count(g, 256, 256) *
                                                         (4 + strix_model_class_count(g));
    float *in = hmalloc(in_len * sizeof(float)), *ref[3], *got = hmalloc(out_len * sizeof(float));
    int ok = in && got;
    for (int k = 0; k < 3; k++) ok &= (ref[k] = hmalloc(out_len * sizeof(float))) != NULL;
    for (size_t k = 0; ok && k < in_len; k++) in[k] = tl_uniform(0, 1);
    strix_error e;
    for (int k = 0; k < 3 && ok; k++)
        if (strix_model_forward(eager, in, shape[k][0], shape[k][1], shape[k][2], ref[k], &e))
            ok = 0, tl_fail("eager forward: %s", e.message);
    strix_cuda_backend *cb = ok ? strix_cuda_backend_of(g->backend) : NULL;
    /* each step: its shape, and the captures, launches and invalidations it adds */
    static const struct { int s, cap, launch, inval; } steps[] = {
        {0, 0, 0, 1}, {0, 1, 1, 0}, {1, 0, 0, 1}, {1, 1, 1, 0}, {0, 0, 0, 0}, {0, 1, 1, 0}, {1, 0, 1, 0},
        {0, 0, 1, 0}, {1, 0, 1, 0}, {0, 0, 1, 0}, {2, 0, 0, 1}, {0, 0, 0, 0}, {0, 1, 1, 0}, {2, 1, 1, 0}};
    for (size_t k = 0; cb && k < sizeof steps / sizeof *steps && !tl_g.failed; k++) {
        const int s = steps[k].s, n = shape[s][0], h = shape[s][1], w = shape[s][2];
        strix_cuda_graph_stats a = strix_cuda_backend_graph_stats(cb);
        if (strix_model_forward(g, in, n, h, w, got, &e)) {
            tl_fail("step %zu: forward %dx%dx%d: %s", k, n, h, w, e.message);
            break;
        }
        strix_cuda_graph_stats z = strix_cuda_backend_graph_stats(cb);
        const long cap = (long)(z.captures - a.captures), launch = (long)(z.launches - a.launches),
                   inval = (long)(z.invalidations - a.invalidations);
        const size_t len = (size_t)n * strix_model_anchor_count(g, h, w) * (4 + strix_model_class_count(g));
        if (cap != steps[k].cap || launch != steps[k].launch || inval != steps[k].inval)
            tl_fail("step %zu (%dx%dx%d, %s): %ld captures, %ld launches, %ld invalidations; want %d, %d, %d", k, n, h,
                    w, half ? "fp16" : "fp32", cap, launch, inval, steps[k].cap, steps[k].launch, steps[k].inval);
        else if (memcmp(got, ref[s], len * sizeof(float)))
            tl_fail("step %zu (%dx%dx%d, %s): differs from eager execution", k, n, h, w, half ? "fp16" : "fp32");
    }
    strix_model_free(g);
    strix_model_free(eager);
}

static void gpu_setup(void)
{
    T.kernels = STRIX_CUDA_KERNELS_V2; /* the model default */
    snprintf(T.tmpdir, sizeof T.tmpdir, "/tmp/strix-cuda-XXXXXX");
    if (strix_device_count() < 1 || !mkdtemp(T.tmpdir)) return;
    if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreateWithFlags(&T.s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaDeviceGetAttribute(&T.sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess)
        return;
    if (cublasCreate(&T.blas) != CUBLAS_STATUS_SUCCESS) return;
    if (cublasSetStream(T.blas, T.s) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(T.blas, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(T.blas);
        return;
    }
    T.ready = 1;
}

static void gpu_teardown(void)
{
    release_all();
    if (!T.ready) return;
    cublasDestroy(T.blas);
    cudaStreamDestroy(T.s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", T.tmpdir);
    if (system(cmd)) printf("note: could not remove %s\n", T.tmpdir);
}

#endif /* STRIX_WITH_CUDA */

/* ------------------- the per-batch letterbox's grid, checked on the CPU */

/* Staged size of a frame, as engine/cuda/backend.c's stage_frames packs it:
 * dense rows (RGB/BGR w * 3, or NV12's Y plane then its U,V plane), each
 * frame from a 256-byte boundary. */
static size_t lb_staged_bytes(const strix_image *im)
{
    size_t b = im->format == STRIX_NV12 ? (size_t)im->width * im->height + (size_t)2 * ((im->width + 1) / 2) * ((im->height + 1) / 2)
                                        : (size_t)im->width * 3 * im->height;
    return (b + 255) / 256 * 256;
}

/* The CPU letterbox (engine/letterbox.c, which strix_cuda_letterbox equals
 * bit for bit: op_letterbox) of the frame a descriptor points at, taking
 * geometry, pitches, format and YUV matrix from the descriptor alone; 0 when
 * its YUV integers are no matrix's. */
static int lb_desc_reference(float *out, const strix_lb_frame *d)
{
    const strix_lb_params *p = &d->g.p;
    strix_image im = {.data = d->src, .width = p->src_w, .height = p->src_h, .stride = p->src_pitch,
                      .format = p->nv12 ? STRIX_NV12 : p->bgr ? STRIX_BGR : STRIX_RGB};
    int found = !p->nv12;
    for (int k = 0; k < 4 && !found; k++) {
        strix_yuv_coeffs c;
        strix_yuv_coeffs_init(&c, k / 2 ? STRIX_BT709 : STRIX_BT601, k % 2);
        const int yuv[6] = {c.cy, c.crv, c.cgu, c.cgv, c.cbu, c.yoff};
        if (!memcmp(yuv, p->yuv, sizeof yuv))
            found = 1, im.colorspace = k / 2 ? STRIX_BT709 : STRIX_BT601, im.full_range = k % 2;
    }
    if (!found) return 0;
    im.uv = d->uv;
    im.uv_stride = p->uv_pitch;
    strix_letterbox_info info = {p->src_w, p->src_h, p->dst_w, p->dst_h, p->new_w, p->new_h, p->left, p->top, 0};
    void *scratch = malloc(strix_letterbox_scratch_bytes(&info));
    if (!scratch) return 0;
    strix_letterbox(out, &im, &info, scratch);
    free(scratch);
    return 1;
}

/* Random batches of 1-9 frames of mixed sizes and formats (RGB, BGR, NV12
 * with either matrix and range, padded rows), letterboxed to one square
 * shape: the per-batch launch (every thread of its grid, with
 * strix_lb_batch_pixel, writing the CPU letterbox of the frame its
 * descriptor describes, the descriptors built from the packed staging
 * buffer as the asynchronous path builds them) writes every element of the
 * batch tensor exactly once, with the same value as the per-frame launches
 * (strix_lb_frame_pixel over each frame's slot, the CPU letterbox of the
 * original image). */
static void letterbox_batch_plan(void)
{
    enum { MAXN = 9 };
    for (int t = 0; t < 40 && !tl_g.failed; t++) {
        const int n = tl_int(1, MAXN), imgsz = tl_int(1, 4) * 32;
        strix_image im[MAXN];
        strix_letterbox_info info[MAXN];
        uint8_t *owned[2 * MAXN] = {0};
        size_t staged = 0;
        int ok = 1;
        for (int i = 0; i < n; i++) {
            const int w = tl_int(1, 100), h = tl_int(1, 100), fmt = tl_int(0, 2);
            const int stride = w * (fmt == STRIX_NV12 ? 1 : 3) + tl_int(0, 7), uvs = 2 * ((w + 1) / 2) + tl_int(0, 5);
            im[i] = (strix_image){.width = w, .height = h, .stride = stride, .format = (strix_pixel_format)fmt};
            owned[2 * i] = malloc((size_t)stride * h);
            ok &= owned[2 * i] != NULL;
            if (fmt == STRIX_NV12) {
                owned[2 * i + 1] = malloc((size_t)uvs * ((h + 1) / 2));
                ok &= owned[2 * i + 1] != NULL;
                im[i].uv = owned[2 * i + 1];
                im[i].uv_stride = uvs;
                im[i].colorspace = tl_int(0, 1) ? STRIX_BT709 : STRIX_BT601;
                im[i].full_range = tl_int(0, 1);
                for (size_t k = 0; ok && k < (size_t)uvs * ((h + 1) / 2); k++) owned[2 * i + 1][k] = (uint8_t)tl_int(0, 255);
            }
            for (size_t k = 0; ok && k < (size_t)stride * h; k++) owned[2 * i][k] = (uint8_t)tl_int(0, 255);
            im[i].data = owned[2 * i];
            strix_letterbox_plan(w, h, imgsz, 32, 0, &info[i]);
            staged += lb_staged_bytes(&im[i]);
        }
        const int dw = info[0].dst_w, dh = info[0].dst_h;
        const size_t per = (size_t)dw * dh * 3, len = per * n;
        uint8_t *stage = malloc(staged ? staged : 1);
        float *ref = malloc(sizeof *ref * len), *byframe = malloc(sizeof *byframe * len),
              *bybatch = malloc(sizeof *bybatch * len), *dref = malloc(sizeof *dref * per);
        int *hits = calloc(len / 3, sizeof *hits);
        strix_lb_frame desc[MAXN];
        ok &= stage && ref && byframe && bybatch && dref && hits;
        /* pack as stage_frames does; descriptors as backend.c's upload_descs */
        for (int i = 0, off = 0; ok && i < n; i++) {
            const strix_image *m = &im[i];
            const int nv12 = m->format == STRIX_NV12, row = nv12 ? m->width : m->width * 3, uvrow = 2 * ((m->width + 1) / 2);
            TL_CHECK(info[i].dst_w == dw && info[i].dst_h == dh, "frame %d letterboxed to %dx%d, frame 0 to %dx%d", i,
                     info[i].dst_w, info[i].dst_h, dw, dh);
            for (int y = 0; y < m->height; y++) memcpy(stage + off + (size_t)y * row, m->data + (size_t)y * m->stride, row);
            for (int y = 0; nv12 && y < (m->height + 1) / 2; y++)
                memcpy(stage + off + (size_t)row * m->height + (size_t)y * uvrow, m->uv + (size_t)y * m->uv_stride, uvrow);
            strix_lb_params lb = {m->width, m->height, row, m->format == STRIX_BGR, dw, dh, info[i].new_w, info[i].new_h,
                                  info[i].left, info[i].top, nv12, uvrow, {0}};
            if (nv12) {
                strix_yuv_coeffs c;
                strix_yuv_coeffs_init(&c, m->colorspace, m->full_range);
                const int yuv[6] = {c.cy, c.crv, c.cgu, c.cgv, c.cbu, c.yoff};
                memcpy(lb.yuv, yuv, sizeof yuv);
            }
            const uint8_t *y0 = stage + off, *uv0 = nv12 ? y0 + (size_t)row * m->height : NULL;
            TL_CHECK(strix_lb_params_ok(&lb, 1, uv0 != NULL), "frame %d (%dx%d): parameters refused", i, m->width, m->height);
            strix_lb_frame_init(&desc[i], &lb, y0, uv0);
            TL_CHECK(desc[i].g.resize == (info[i].new_w != m->width || info[i].new_h != m->height),
                     "frame %d: resize flag %d for %dx%d -> %dx%d", i, desc[i].g.resize, m->width, m->height,
                     info[i].new_w, info[i].new_h);
            off += (int)lb_staged_bytes(m);
            /* the per-frame reference: the original (strided) image */
            void *scratch = malloc(strix_letterbox_scratch_bytes(&info[i]));
            if (!scratch) ok = 0;
            else strix_letterbox(ref + per * i, m, &info[i], scratch);
            free(scratch);
        }
        ok &= !tl_g.failed;
        /* the per-frame launches */
        for (int i = 0; ok && i < n; i++)
            for (unsigned by = 0; by < strix_lb_blocks_y(dh); by++)
                for (unsigned bx = 0; bx < strix_lb_blocks_x(dw); bx++)
                    for (unsigned ty = 0; ty < STRIX_LB_TY; ty++)
                        for (unsigned tx = 0; tx < STRIX_LB_TX; tx++) {
                            int x, y;
                            size_t o;
                            if (!strix_lb_frame_pixel(bx, by, tx, ty, dw, dh, &x, &y, &o)) continue;
                            memcpy(byframe + per * i + o, ref + per * i + ((size_t)y * dw + x) * 3, 3 * sizeof(float));
                        }
        /* the per-batch launch: block z reads descriptor z */
        size_t in_range = 0;
        for (unsigned bz = 0; ok && bz < (unsigned)n; bz++) {
            if (!lb_desc_reference(dref, &desc[bz])) {
                tl_fail("frame %u: its descriptor's YUV integers are no matrix's", bz);
                break;
            }
            for (unsigned by = 0; by < strix_lb_blocks_y(dh); by++)
                for (unsigned bx = 0; bx < strix_lb_blocks_x(dw); bx++)
                    for (unsigned ty = 0; ty < STRIX_LB_TY; ty++)
                        for (unsigned tx = 0; tx < STRIX_LB_TX; tx++) {
                            int f, x, y;
                            size_t o;
                            if (!strix_lb_batch_pixel(bx, by, bz, tx, ty, dw, dh, &f, &x, &y, &o)) continue;
                            in_range++;
                            if (f != (int)bz || o + 3 > len || o % 3) {
                                ok = 0;
                                continue;
                            }
                            hits[o / 3]++;
                            memcpy(bybatch + o, dref + ((size_t)y * dw + x) * 3, 3 * sizeof(float));
                        }
        }
        if (ok && !tl_g.failed) {
            size_t once = 0;
            for (size_t k = 0; k < len / 3; k++) once += hits[k] == 1;
            TL_CHECK(in_range == len / 3 && once == len / 3,
                     "batch of %d at %dx%d: %zu threads in range, %zu of %zu pixels written exactly once", n, dw, dh,
                     in_range, once, len / 3);
            for (size_t k = 0; k < len && !tl_g.failed; k++)
                TL_CHECK(f32_bits(bybatch[k]) == f32_bits(byframe[k]),
                         "batch of %d at %dx%d: element %zu (frame %zu, pixel %zu) is %.9g per batch, %.9g per frame", n,
                         dw, dh, k, k / per, k % per / 3, bybatch[k], byframe[k]);
        } else if (!tl_g.failed) {
            tl_fail("batch of %d at %dx%d: a thread mapped outside its frame's slot, or out of memory", n, dw, dh);
        }
        for (int k = 0; k < 2 * n; k++) free(owned[k]);
        free(stage), free(ref), free(byframe), free(bybatch), free(dref), free(hits);
    }
}

/* ---------------- the detect path's frame layout (stage_plan.h), on the CPU */

/* One frame of a stage_plan batch in the source arena: plane bytes as the
 * caller lays them (pitch, the last row without padding). */
static int sp_pitch(const strix_image *im, int plane)
{
    const int given = plane ? im->uv_stride : im->stride;
    return given ? given : strix_stage_row_bytes(im, plane);
}

static size_t sp_span(const strix_image *im, int plane, int pitch)
{
    const int rows = plane ? (im->height + 1) / 2 : im->height;
    return (size_t)pitch * (size_t)(rows - 1) + (size_t)strix_stage_row_bytes(im, plane);
}

/* Random batches of 1-9 frames (RGB, BGR, NV12; odd sizes, padded rows or
 * not; host, pinned and device memory mixed), the pinned planes in one
 * arena allocated to the byte (ASan catches a copy past a plane's last
 * pixel), each plane either right after the previous pinned plane or
 * after a gap: the layout of strix_stage_place_frames and the copies of
 * strix_stage_next_run, emulated with memcpy (the host frames packed as
 * stage_frames packs them), put every pixel of every host and pinned frame
 * where its place says; the host frames exactly where the layout before
 * pinned frames put them (lb_staged_bytes, 256-byte steps); pinned planes
 * inside [staged, total), disjoint, 256-byte aligned unless they join the
 * previous plane; one copy per run of joined planes, no more. */
static void stage_plan(void)
{
    enum { MAXN = 9 };
    for (int t = 0; t < 300 && !tl_g.failed; t++) {
        const int n = tl_int(1, MAXN);
        strix_image im[MAXN];
        int gap[MAXN][2];
        size_t arena_bytes = 0;
        for (int i = 0; i < n; i++) {
            const strix_pixel_format fmt = (strix_pixel_format)tl_int(0, 2);
            const int w = tl_int(1, 40), h = tl_int(1, 40), pad = tl_int(0, 3) ? 0 : tl_int(1, 9);
            const strix_memory kind = (strix_memory)tl_int(0, 2);
            im[i] = (strix_image){.width = w, .height = h, .format = fmt, .memory = kind};
            if (pad) im[i].stride = strix_stage_row_bytes(&im[i], 0) + pad;
            if (fmt == STRIX_NV12 && pad) im[i].uv_stride = strix_stage_row_bytes(&im[i], 1) + pad;
            for (int pl = 0; pl < strix_stage_planes(&im[i]); pl++) {
                gap[i][pl] = tl_int(0, 2) ? 0 : tl_int(1, 300);
                if (kind == STRIX_PINNED) arena_bytes += (size_t)gap[i][pl] + sp_span(&im[i], pl, sp_pitch(&im[i], pl));
            }
        }
        uint8_t *arena = malloc(arena_bytes ? arena_bytes : 1), *own[MAXN] = {NULL};
        int ok = arena != NULL, joins = 0, planes = 0;
        const uint8_t *prev_end = NULL;
        for (size_t i = 0, at = 0; ok && i < (size_t)n; i++) {
            const int np = strix_stage_planes(&im[i]);
            size_t span[2] = {0, 0};
            uint8_t *p[2] = {NULL, NULL};
            for (int pl = 0; pl < np; pl++) span[pl] = sp_span(&im[i], pl, sp_pitch(&im[i], pl));
            if (im[i].memory == STRIX_PINNED) {
                for (int pl = 0; pl < np; pl++) {
                    at += (size_t)gap[i][pl];
                    p[pl] = arena + at;
                    at += span[pl];
                    joins += p[pl] == prev_end;
                    planes++;
                    prev_end = p[pl] + span[pl];
                }
            } else { /* host (and device: never read) frames in a block of their own, [Y | U,V] */
                if (!(own[i] = malloc(span[0] + span[1]))) {
                    ok = 0, tl_fail("out of memory");
                    break;
                }
                p[0] = own[i], p[1] = own[i] + span[0];
            }
            for (int pl = 0; pl < np; pl++)
                for (size_t k = 0; k < span[pl]; k++) p[pl][k] = (uint8_t)tl_int(0, 255);
            im[i].data = p[0];
            if (np == 2) im[i].uv = p[1];
        }
        strix_stage_place place[MAXN];
        size_t staged = 0, total = ok ? strix_stage_place_frames(im, n, place, &staged) : 0, want_staged = 0;
        for (int i = 0; ok && i < n; i++) {
            if (im[i].memory != STRIX_HOST) continue;
            if (place[i].y != want_staged)
                ok = 0, tl_fail("batch %d, host frame %d at %zu, the layout before pinned frames put it at %zu", t, i,
                                place[i].y, want_staged);
            want_staged += lb_staged_bytes(&im[i]);
        }
        if (ok && staged != want_staged)
            ok = 0, tl_fail("batch %d: %zu staged bytes, want %zu", t, staged, want_staged);
        uint8_t *dev = ok ? malloc(total + 1) : NULL, *stage = ok ? malloc(staged + 1) : NULL;
        if (ok && (!dev || !stage)) ok = 0, tl_fail("out of memory");
        if (ok) memset(dev, 0xA5, total + 1);
        for (int i = 0; ok && i < n; i++) /* as stage_frames packs them */
            for (int r = 0; im[i].memory == STRIX_HOST && r < strix_stage_rows(&im[i]); r++) {
                size_t off, len;
                const uint8_t *src = strix_stage_row(&im[i], r, &off, &len);
                memcpy(stage + place[i].y + off, src, len);
            }
        if (ok) memcpy(dev, stage, staged);
        int runs = 0, cursor = 0;
        strix_stage_run run = {NULL, 0, 0};
        while (ok && strix_stage_next_run(im, n, place, &cursor, &run)) {
            if (run.dev < staged || run.dev + run.len > total || !run.len)
                ok = 0, tl_fail("batch %d: copy %d to [%zu, %zu), outside [%zu, %zu)", t, runs, run.dev,
                                run.dev + run.len, staged, total);
            else if (run.dev % STRIX_STAGE_ALIGN)
                ok = 0, tl_fail("batch %d: copy %d at %zu, not aligned", t, runs, run.dev);
            else
                memcpy(dev + run.dev, run.src, run.len), runs++;
        }
        if (ok && runs != planes - joins)
            ok = 0, tl_fail("batch %d: %d copies for %d pinned planes of which %d join the previous one", t, runs,
                            planes, joins);
        if (ok && dev[total] != 0xA5) ok = 0, tl_fail("batch %d: a write past the device buffer", t);
        /* every pixel where its place says */
        for (int i = 0; ok && i < n; i++) {
            if (im[i].memory == STRIX_DEVICE) continue;
            for (int pl = 0; ok && pl < strix_stage_planes(&im[i]); pl++) {
                const uint8_t *src = pl ? im[i].uv : im[i].data;
                const int pitch = sp_pitch(&im[i], pl);
                const size_t base = pl ? place[i].uv : place[i].y;
                const int dpitch = pl ? place[i].uv_pitch : place[i].pitch, row = strix_stage_row_bytes(&im[i], pl);
                const int rows = pl ? (im[i].height + 1) / 2 : im[i].height;
                if (im[i].memory == STRIX_PINNED && (base < staged || base + sp_span(&im[i], pl, dpitch) > total))
                    ok = 0, tl_fail("batch %d frame %d plane %d: placed outside the pinned part", t, i, pl);
                for (int r = 0; ok && r < rows; r++)
                    if (memcmp(dev + base + (size_t)r * dpitch, src + (size_t)r * pitch, (size_t)row))
                        ok = 0, tl_fail("batch %d frame %d (%s, memory %d, %dx%d) plane %d row %d: not its pixels", t,
                                        i, im[i].format == STRIX_NV12 ? "NV12" : "RGB/BGR", im[i].memory,
                                        im[i].width, im[i].height, pl, r);
            }
        }
        /* pinned planes disjoint */
        for (int i = 0; ok && i < 2 * n; i++)
            for (int j = i + 1; ok && j < 2 * n; j++) {
                const strix_image *a = &im[i / 2], *b = &im[j / 2];
                if (a->memory != STRIX_PINNED || b->memory != STRIX_PINNED || i % 2 >= strix_stage_planes(a) ||
                    j % 2 >= strix_stage_planes(b))
                    continue;
                const size_t a0 = i % 2 ? place[i / 2].uv : place[i / 2].y, b0 = j % 2 ? place[j / 2].uv : place[j / 2].y;
                const size_t a1 = a0 + sp_span(a, i % 2, i % 2 ? place[i / 2].uv_pitch : place[i / 2].pitch);
                const size_t b1 = b0 + sp_span(b, j % 2, j % 2 ? place[j / 2].uv_pitch : place[j / 2].pitch);
                if (a0 < b1 && b0 < a1) ok = 0, tl_fail("batch %d: pinned planes %d and %d overlap", t, i, j);
            }
        free(dev);
        free(stage);
        free(arena);
        for (int i = 0; i < n; i++) free(own[i]);
    }
}

/* ------------------------------------ the mma path's plan, checked on the CPU */

/* One plan of kernels/conv_plan.h against its invariants (tl_fail on the
 * first broken one): the grid covers M and Ng with one partial tile at
 * most; K is split only for a split tile of kernel set 3 whose grid is
 * smaller than the SM count, into at most STRIX_SPLITK_MAX slices of at
 * least STRIX_SPLITK_MIN_STEPS steps, no more slices than it takes to fill
 * the SMs, and always when that grid could take two; the slices are
 * non-empty, whole BK steps but the last, and cover K once in order; the
 * workspace is exactly [splits][M][ldp] fp32. */
static void plan_check(int m, int ng, int k, int sms, int variant, int splitk)
{
    const strix_mma_plan p = strix_mma_plan_make(m, ng, k, sms, variant, splitk);
    char what[128];
    snprintf(what, sizeof what, "M %d Ng %d K %d sms %d variant %d splitk %d", m, ng, k, sms, variant, splitk);
    TL_CHECK(p.tile >= 1 && p.tile <= STRIX_MMA_N_TILES && (!variant || p.tile == variant), "%s: tile %d", what, p.tile);
    const strix_mma_tile *t = &strix_mma_tiles[p.tile];
    const long long blocks = (long long)p.grid_m * p.grid_n;
    TL_CHECK((long long)p.grid_m * t->bm >= m && (long long)(p.grid_m - 1) * t->bm < m &&
                 (long long)p.grid_n * t->bn >= ng && (long long)(p.grid_n - 1) * t->bn < ng,
             "%s: grid %d x %d of %dx%d tiles", what, p.grid_m, p.grid_n, t->bm, t->bn);
    TL_CHECK(p.m == m && p.steps == (k + t->bk - 1) / t->bk, "%s: m %d, %d steps", what, p.m, p.steps);
    TL_CHECK(p.splits >= 1 && p.splits <= STRIX_SPLITK_MAX, "%s: %d slices", what, p.splits);
    const int may = splitk && t->splitk && blocks < sms;
    TL_CHECK(p.splits == 1 || may, "%s: %d slices of a grid of %lld blocks that must not split", what, p.splits, blocks);
    TL_CHECK(p.splits == 1 || p.slice_steps >= STRIX_SPLITK_MIN_STEPS, "%s: slices of %d steps", what, p.slice_steps);
    TL_CHECK((long long)(p.splits - 1) * blocks < sms, "%s: %d slices of %lld blocks: one fewer fills %d SMs", what,
             p.splits, blocks, sms);
    TL_CHECK(!may || p.steps < 2 * STRIX_SPLITK_MIN_STEPS || p.splits >= 2,
             "%s: a grid of %lld blocks with %d steps not split", what, blocks, p.steps);
    long long next = 0;
    for (int s = 0; s < p.splits; s++) {
        long long k0 = (long long)s * p.slice_steps * t->bk, k1 = k0 + (long long)p.slice_steps * t->bk;
        if (k1 > k) k1 = k;
        TL_CHECK(k0 == next && k1 > k0, "%s: slice %d of %d covers [%lld, %lld)", what, s, p.splits, k0, k1);
        TL_CHECK(s == p.splits - 1 || (k1 - k0) % t->bk == 0, "%s: slice %d is %lld deep", what, s, k1 - k0);
        next = k1;
    }
    TL_CHECK(next == k, "%s: the slices end at %lld", what, next);
    TL_CHECK(p.ldp % 8 == 0 && p.ldp >= ng && p.ldp < ng + 8, "%s: partial rows of %d floats", what, p.ldp);
    const size_t floats = p.splits > 1 ? (size_t)p.splits * (size_t)m * (size_t)p.ldp : 0;
    TL_CHECK(p.ws_bytes == floats * sizeof(float), "%s: workspace %zu bytes, want %zu", what, p.ws_bytes,
             floats * sizeof(float));
    TL_CHECK(p.splits == 1 || strix_splitk_index(m, p.ldp, p.splits - 1, m - 1, p.ldp - 1) + 1 == floats,
             "%s: the last partial is not the workspace's last float", what);
}

/* The split-K dataflow of conv_mma.cu on the CPU, for a GEMM of small
 * integers (every fp32 sum exact): block (bx, by, slice) writes the sums of
 * its tile over its slice where strix_splitk_index says, for rows < M and
 * columns < ldp as the kernel's store loop does (columns past Ng: B is zero
 * there); the workspace is NaN before.  Every float of it must be written
 * exactly once, and the reduction's sum in slice order (conv_splitk_reduce)
 * must equal the unsplit product. */
static void splitk_emulate(int m, int ng, int k, int sms)
{
    const strix_mma_plan p = strix_mma_plan_make(m, ng, k, sms, 0, 1);
    const strix_mma_tile *t = &strix_mma_tiles[p.tile];
    const size_t floats = p.ws_bytes / sizeof(float);
    float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)ng * k * sizeof *b);
    float *ws = malloc(floats * sizeof *ws);
    unsigned char *writes = calloc(floats ? floats : 1, 1);
    if (!a || !b || !ws || !writes) {
        tl_fail("out of memory");
    } else {
        for (size_t i = 0; i < (size_t)m * k; i++) a[i] = (float)tl_int(-3, 3);
        for (size_t i = 0; i < (size_t)ng * k; i++) b[i] = (float)tl_int(-3, 3); /* [Ng][K], as OHWI weights */
        for (size_t i = 0; i < floats; i++) ws[i] = NAN;
        for (int bx = 0; bx < p.grid_m; bx++)
            for (int by = 0; by < p.grid_n; by++)
                for (int s = 0; s < p.splits; s++) {
                    const int k0 = s * p.slice_steps * t->bk;
                    const int k1 = k0 + p.slice_steps * t->bk < k ? k0 + p.slice_steps * t->bk : k;
                    for (int r = bx * t->bm; r < (bx + 1) * t->bm && r < m; r++)
                        for (int c = by * t->bn; c < (by + 1) * t->bn && c < p.ldp; c++) {
                            float acc = 0.0f;
                            for (int kk = k0; c < ng && kk < k1; kk++) acc += a[(size_t)r * k + kk] * b[(size_t)c * k + kk];
                            const size_t i = strix_splitk_index(m, p.ldp, s, r, c);
                            if (i >= floats) {
                                tl_fail("M %d Ng %d K %d: slice %d row %d column %d at %zu of %zu floats", m, ng, k, s,
                                        r, c, i, floats);
                                goto done;
                            }
                            writes[i]++;
                            ws[i] = acc;
                        }
                }
        for (size_t i = 0; i < floats && !tl_g.failed; i++)
            if (writes[i] != 1) tl_fail("M %d Ng %d K %d: workspace float %zu written %d times", m, ng, k, i, writes[i]);
        for (int r = 0; r < m && !tl_g.failed; r++)
            for (int c = 0; c < ng; c++) {
                float sum = 0.0f, want = 0.0f;
                for (int s = 0; s < p.splits; s++) sum += ws[strix_splitk_index(m, p.ldp, s, r, c)];
                for (int kk = 0; kk < k; kk++) want += a[(size_t)r * k + kk] * b[(size_t)c * k + kk];
                if (sum != want) {
                    tl_fail("M %d Ng %d K %d in %d slices: C[%d][%d] = %g, want %g", m, ng, k, p.splits, r, c, sum, want);
                    goto done;
                }
            }
    }
done:
    free(a), free(b), free(ws), free(writes);
}

/* kernels/conv_plan.h, which the v2/v3 convolutions run by (no GPU needed):
 * every invariant of plan_check on random shapes (M up to 2^24, Ng up to
 * 4096, K up to 50000, 1 to 300 SMs, every tile); yolov8n's 20x20 layer at
 * batch 1 split on an H100's 132 SMs and not at batch 64; the dataflow
 * emulated on small GEMMs that split; and, in a CUDA build,
 * strix_cuda_conv2d_workspace asking for exactly the plan's partials. */
static void conv_mma_plan(void)
{
    for (int i = 0; i < 20000 && !tl_g.failed; i++) {
        int m = (int)(tl_u64() % ((1u << tl_int(0, 24)))) + 1, ng = tl_int(1, tl_int(0, 3) ? 300 : 4096);
        int k = tl_int(1, tl_int(0, 1) ? 1200 : 50000), sms = tl_int(1, 300);
        plan_check(m, ng, k, sms, tl_int(0, 3) ? 0 : tl_int(1, STRIX_MMA_N_TILES), tl_int(0, 1));
    }
    if (tl_g.failed) return;
    /* 20x20, 128 -> 256 channels, 3x3 (yolov8n's layer 7 output size) */
    strix_mma_plan b1 = strix_mma_plan_make(400, 256, 9 * 128, 132, 0, 1), b64 = strix_mma_plan_make(64 * 400, 256, 9 * 128, 132, 0, 1);
    TL_CHECK(b1.splits > 1 && (long long)b1.splits * b1.grid_m * b1.grid_n >= 132,
             "batch 1: %d slices of %d x %d blocks", b1.splits, b1.grid_m, b1.grid_n);
    TL_CHECK(b64.splits == 1, "batch 64: %d slices", b64.splits);
    /* the boundary: a grid of exactly as many blocks as SMs is not split, one block fewer is */
    const strix_mma_tile *t1 = &strix_mma_tiles[1];
    strix_mma_plan filled = strix_mma_plan_make(3 * t1->bm, 4 * t1->bn, 4096, 12, 1, 1);
    strix_mma_plan unfilled = strix_mma_plan_make(3 * t1->bm, 4 * t1->bn, 4096, 13, 1, 1);
    TL_CHECK(filled.splits == 1 && unfilled.splits == 2, "12 blocks on 12 SMs: %d slices; on 13 SMs: %d", filled.splits,
             unfilled.splits);
    int emulated = 0;
    for (int i = 0; i < 150 && !tl_g.failed; i++) {
        int m = tl_int(1, 200), ng = tl_int(1, 40), k = tl_int(1, 60000 / m), sms = tl_int(1, 400);
        if (strix_mma_plan_make(m, ng, k, sms, 0, 1).splits < 2) continue;
        splitk_emulate(m, ng, k, sms);
        emulated++;
    }
    TL_CHECK(tl_g.failed || emulated >= 30, "only %d of 150 random GEMMs split: the emulation checks little", emulated);
#ifdef STRIX_WITH_CUDA
    for (int i = 0; i < 2000 && !tl_g.failed; i++) {
        int n = tl_int(1, 4), h = tl_int(1, 50), w = tl_int(1, 50), kk = 2 * tl_int(0, 2) + 1, sms = tl_int(1, 300);
        int cin = tl_int(0, 3) ? 8 * tl_int(1, 40) : tl_int(1, 70), cout = tl_int(1, 300);
        strix_conv_params p = {kk, kk, 1, 1, kk / 2, kk / 2, 1, 1, 1, STRIX_ACT_SILU};
        strix_dview in = {NULL, n, h, w, cin, (size_t)cin, (size_t)h * w * cin};
        strix_dview out = {NULL, n, h, w, cout, (size_t)cout, (size_t)h * w * cout};
        /* set 3: split-K partials, and never path 5's fp32 staging (no cuBLAS: every epilogue fused) */
        size_t v3 = strix_cuda_conv2d_workspace(&out, &in, &p, STRIX_F16, STRIX_CUDA_KERNELS_V3, sms);
        size_t want = cin % 8 ? 0 : strix_mma_plan_make(n * h * w, cout, kk * kk * cin, sms, 0, 1).ws_bytes;
        TL_CHECK(v3 == want, "%dx%dx%dx%d -> %d k%d on %d SMs: workspace %zu bytes, want %zu", n, h, w, cin, cout, kk, sms,
                 v3, want);
        size_t stage = kk == 1 && cin >= 32 && cout >= 32 ? (size_t)n * h * w * cout * sizeof(float) : 0; /* path 5 */
        size_t v2 = strix_cuda_conv2d_workspace(&out, &in, &p, STRIX_F16, STRIX_CUDA_KERNELS_V2, sms);
        TL_CHECK(v2 == (cin % 8 ? stage : 0), "kernel set 2, fp16 %dx%dx%dx%d -> %d k%d: workspace %zu bytes, want %zu",
                 n, h, w, cin, cout, kk, v2, cin % 8 ? stage : 0);
        size_t f2 = strix_cuda_conv2d_workspace(&out, &in, &p, STRIX_F32, STRIX_CUDA_KERNELS_V2, sms);
        size_t f3 = strix_cuda_conv2d_workspace(&out, &in, &p, STRIX_F32, STRIX_CUDA_KERNELS_V3, sms);
        TL_CHECK(f2 == stage && f3 == 0, "fp32 %dx%dx%dx%d -> %d k%d: workspace %zu bytes in set 2 (want %zu), %zu in set 3 "
                 "(want 0: no cuBLAS path)", n, h, w, cin, cout, kk, f2, stage, f3);
    }
#endif
}

/* ------------------------------ kernel set 3's folded upsample, on the CPU */

/* conv_mma_f16<..., FOLD = true>'s A loader (conv_mma.cu) emulated over
 * every (row, 16-byte chunk) of every tile and K step of a random
 * convolution whose input X [n, h, w, cx] holds, in channels [c0, c0 + c),
 * the nearest upsample by `scale` of S [n, h / scale, w / scale, c]: the
 * folded loads (X with those channels poisoned, S read through
 * kernels/fold_plan.h) must fetch exactly the values of the reference
 * (upsample into X, then the plain im2col), zeros for padding taps and
 * tails, and from 16-byte aligned chunks.  Integer values, strided views;
 * shapes that strix_fold_fits refuses (misaligned slices, strides) are
 * counted and skipped. */
static int fold_emulate(int n, int sh, int sw, int scale, int cx, int c0, int c, int kk, int st, int pad, int dil,
                        int tile, size_t xpad, size_t spad, size_t sbpad)
{
    const int h = sh * scale, w = sw * scale;
    const size_t xpix = (size_t)cx + xpad, xbat = (size_t)h * w * xpix + xpad;
    const size_t spix = (size_t)c + spad, sbat = (size_t)sh * sw * spix + sbpad;
    if (!strix_fold_fits(cx, c0, c, scale, sh, sw, h, w, spix, sbat)) return 0;
    const int oh = (h + 2 * pad - dil * (kk - 1) - 1) / st + 1, ow = (w + 2 * pad - dil * (kk - 1) - 1) / st + 1;
    if (oh < 1 || ow < 1) return 0;
    int32_t *x = malloc(sizeof *x * (size_t)n * xbat), *xr = malloc(sizeof *xr * (size_t)n * xbat);
    int32_t *sv = malloc(sizeof *sv * (size_t)n * sbat);
    if (!x || !xr || !sv) {
        free(x), free(xr), free(sv);
        tl_fail("out of memory");
        return 0;
    }
    for (size_t i = 0; i < (size_t)n * xbat; i++) x[i] = (int32_t)i + 1;
    for (size_t i = 0; i < (size_t)n * sbat; i++) sv[i] = 10000000 + (int32_t)i;
    /* the reference: the upsample written into X's slice; the folded X: the slice poisoned */
    memcpy(xr, x, sizeof *x * (size_t)n * xbat);
    for (int b = 0; b < n; b++)
        for (int y = 0; y < h; y++)
            for (int q = 0; q < w; q++)
                for (int ch = 0; ch < c; ch++) {
                    size_t o = (size_t)b * xbat + ((size_t)y * w + q) * xpix + (size_t)(c0 + ch);
                    xr[o] = sv[(size_t)b * sbat + ((size_t)(y / scale) * sw + q / scale) * spix + (size_t)ch];
                    x[o] = -7;
                }
    const strix_up_fold f = {sv, spix, sbat, sw, c0, c0 + c, scale};
    const strix_mma_tile *t = &strix_mma_tiles[tile];
    const int m_total = n * oh * ow, ohw = oh * ow, k_total = kk * kk * cx;
    const int rows = (m_total + t->bm - 1) / t->bm * t->bm, depth = (k_total + t->bk - 1) / t->bk * t->bk;
    for (int m = 0; m < rows && !tl_g.failed; m++) {
        /* the row's precomputed origin, as the kernel keeps it */
        size_t a_base = 0;
        int a_n = 0, a_iy = INT32_MIN / 2, a_ix = 0;
        if (m < m_total) {
            int b = m / ohw, pix = m - b * ohw, oy = pix / ow, ox = pix - oy * ow;
            a_n = b, a_base = (size_t)b * xbat, a_iy = oy * st - pad, a_ix = ox * st - pad;
        }
        for (int k = 0; k < depth; k += 8) {
            int tap = k / cx, ci = k - tap * cx, ky = tap / kk, kx = tap - ky * kk;
            const int kin = k < k_total, up = strix_fold_hit(&f, ci);
            int iy = a_iy + ky * dil, ix = a_ix + kx * dil;
            int ok = kin && iy >= 0 && iy < h && ix >= 0 && ix < w;
            const int32_t *src = ok ? x + a_base + ((size_t)iy * w + ix) * xpix + ci : x;
            if (ok && up) src = sv + strix_fold_offset(&f, a_n, iy, ix, ci);
            if (ok && (src - (up ? sv : x)) % 8) { /* cp.async: 16-byte aligned sources (fp16) */
                tl_fail("X %dx%dx%dx%d, S channels [%d, %d): A[%d][%d]'s chunk at element %td, not a multiple of 8", n, h,
                        w, cx, c0, c0 + c, m, k, src - (up ? sv : x));
                break;
            }
            for (int e = 0; e < 8; e++) {
                int32_t got = ok ? src[e] : 0, want = 0;
                if (m < m_total && k + e < k_total) {
                    int b = m / ohw, pix = m - b * ohw, oy = pix / ow, ox = pix - oy * ow;
                    int kt = (k + e) / cx, ch = (k + e) % cx, y = oy * st - pad + kt / kk * dil, q = ox * st - pad + kt % kk * dil;
                    if (y >= 0 && y < h && q >= 0 && q < w) want = xr[(size_t)b * xbat + ((size_t)y * w + q) * xpix + ch];
                }
                if (got != want) {
                    tl_fail("X %dx%dx%dx%d, S channels [%d, %d) x%d, k%d s%d p%d d%d, tile %d: A[%d][%d] = %d, want %d",
                            n, h, w, cx, c0, c0 + c, scale, kk, st, pad, dil, tile, m, k + e, got, want);
                    break;
                }
            }
            if (tl_g.failed) break;
        }
    }
    free(x), free(xr), free(sv);
    return 1;
}

/* kernels/fold_plan.h, which kernel set 3's folded upsample loads by (no
 * GPU needed): the loader emulated on random shapes, tiles and strides
 * (fold_emulate), yolov8n's two neck folds among them; and in a CUDA build
 * strix_cuda_conv2d_fold_ok refusing every kernel set but 3, fp32 and
 * misaligned slices. */
static void upsample_fold_plan(void)
{
    int checked = 0, refused = 0;
    /* yolov8n at 64 x 96: layer 12's cv1 (upsampled 256 + 128 channels at
     * 4 x 6), layer 15's (128 + 64 at 8 x 12) */
    checked += fold_emulate(1, 2, 3, 2, 384, 0, 256, 1, 1, 0, 1, 1, 0, 0, 0);
    checked += fold_emulate(2, 4, 6, 2, 192, 0, 128, 1, 1, 0, 1, 17, 0, 0, 0);
    for (int i = 0; i < 600 && !tl_g.failed; i++) {
        /* aligned, or one thing off: the slice's width, its first channel,
         * S's pixel or image stride, Cin */
        const int mode = tl_int(0, 9);
        int c = 8 * tl_int(1, 6), rest = 8 * tl_int(0, 5), c0 = 8 * tl_int(0, rest / 8);
        size_t spad = 8 * (size_t)tl_int(0, 2), sbpad = 8 * (size_t)tl_int(0, 2);
        if (mode == 5) { /* c % 8 != 0, Cin and S's strides still multiples of 8 */
            int d = tl_int(1, 7);
            c -= d, rest += d, spad += (size_t)d;
        } else if (mode == 6) {
            c0 += tl_int(1, 7), rest += 8;
        } else if (mode == 7) {
            spad = (size_t)tl_int(1, 7);
            sbpad = 8 - spad; /* sh * sw * spix + sbpad: a multiple of 8 where sh * sw is */
        } else if (mode == 8) {
            sbpad = (size_t)tl_int(1, 7);
        } else if (mode == 9) {
            rest += tl_int(1, 7);
        }
        int kk = tl_int(0, 1) ? 1 : 3, pad = kk == 3 ? tl_int(0, 2) : tl_int(0, 1);
        int r = fold_emulate(tl_int(1, 2), tl_int(1, 5), tl_int(1, 5), tl_int(1, 3), c + rest, c0, c, kk, tl_int(1, 2),
                             pad, tl_int(1, 2), tl_int(1, STRIX_MMA_N_TILES), 8 * (size_t)tl_int(0, 2), spad, sbpad);
        checked += r;
        refused += !r;
    }
    TL_CHECK(tl_g.failed || (checked >= 200 && refused >= 100), "%d shapes emulated, %d refused: the test checks little",
             checked, refused);
#ifdef STRIX_WITH_CUDA
    /* the launcher's own refusals (no GPU needed: they come before any device query) */
    strix_conv_params p = {1, 1, 1, 1, 0, 0, 1, 1, 1, STRIX_ACT_SILU};
    static _Alignas(16) uint16_t buf[64];
    static float bias[64];
    strix_dview in = {buf, 1, 4, 4, 32, 32, 512}, out = {buf, 1, 4, 4, 16, 16, 256}, up = {buf, 1, 2, 2, 16, 16, 64};
    for (int k = STRIX_CUDA_KERNELS_V1; k <= STRIX_CUDA_KERNELS_V2; k++)
        TL_CHECK(!strix_cuda_conv2d_fold_ok(&out, &in, &up, 16, 2, buf, bias, NULL, &p, STRIX_F16, k),
                 "kernel set %d folds", k);
    TL_CHECK(!strix_cuda_conv2d_fold_ok(&out, &in, &up, 16, 2, buf, bias, NULL, &p, STRIX_F32, STRIX_CUDA_KERNELS_V3),
             "fp32 folds");
    TL_CHECK(!strix_cuda_conv2d_fold_ok(&out, &in, &up, 12, 2, buf, bias, NULL, &p, STRIX_F16, STRIX_CUDA_KERNELS_V3),
             "a slice at channel 12 folds");
    TL_CHECK(!strix_cuda_conv2d_fold_ok(&out, &in, &up, 16, 3, buf, bias, NULL, &p, STRIX_F16, STRIX_CUDA_KERNELS_V3),
             "a scale that does not give the input's size folds");
#endif
}

/* ------------------------- kernel set 3's SPPF and stem tiles, on the CPU */

/* max(m, v) as the pools compute it (elem.cuh's nan_max): a NaN wins. */
static float sppf_nan_max(float m, float v) { return (v > m || v != v) ? v : m; }

/* maxpool_sppf_v3's passes (pool.cu) for one channel of one image, run
 * sequentially with pool_plan.h's functions: block by block, the region
 * load, then per stage the rows pass into b and the columns pass into
 * outs[s - 1] ([h][w]).  Fails on a shared index out of its array or of the
 * region, or an output written other than once per stage. */
static void sppf_emulate(const float *x, int h, int w, int k, int stages, float **outs)
{
    static float a[STRIX_SPPF_A_CELLS], b[STRIX_SPPF_B_CELLS];
    const int r = k / 2, halo = stages * r, tiles = strix_sppf_tiles(h) * strix_sppf_tiles(w);
    unsigned char *writes = calloc((size_t)h * w * stages, 1);
    if (!writes) {
        tl_fail("out of memory");
        return;
    }
    for (int bi = 0; bi < tiles && !tl_g.failed; bi++) {
        const strix_sppf_tile t = strix_sppf_tile_make(h, w, bi, halo);
        const int rw = t.rx1 - t.rx0, cells = (t.ry1 - t.ry0) * rw;
        TL_CHECK(t.y0 < t.y1 && t.x0 < t.x1 && cells <= STRIX_SPPF_A_CELLS && t.y1 - t.y0 <= STRIX_SPPF_TILE &&
                     t.x1 - t.x0 <= STRIX_SPPF_TILE,
                 "%dx%d halo %d, tile %d: [%d,%d)x[%d,%d), region %d cells", h, w, halo, bi, t.y0, t.y1, t.x0, t.x1,
                 cells);
        for (int i = 0; i < cells; i++) a[i] = x[(size_t)(t.ry0 + i / rw) * w + t.rx0 + i % rw];
        for (int s = 1; s <= stages && !tl_g.failed; s++) {
            const int rad = s * r;
            int lo, hi;
            strix_sppf_rows(&t, rad, &lo, &hi);
            for (int y = lo; y < hi; y++)
                for (int xx = t.x0; xx < t.x1; xx++) {
                    int w0, w1;
                    strix_sppf_window(t.rx0, t.rx1, xx, rad, &w0, &w1);
                    float m = -INFINITY;
                    for (int q = w0; q < w1; q++) {
                        const int ai = strix_sppf_a_index(&t, y, q);
                        if (ai < 0 || ai >= cells) {
                            tl_fail("%dx%d tile %d stage %d: region index %d of %d", h, w, bi, s, ai, cells);
                            goto done;
                        }
                        m = sppf_nan_max(m, a[ai]);
                    }
                    const int bi2 = strix_sppf_b_index(&t, y, xx);
                    if (bi2 < 0 || bi2 >= STRIX_SPPF_B_CELLS) {
                        tl_fail("%dx%d tile %d stage %d: rows-pass index %d of %d", h, w, bi, s, bi2, STRIX_SPPF_B_CELLS);
                        goto done;
                    }
                    b[bi2] = m;
                }
            for (int y = t.y0; y < t.y1; y++)
                for (int xx = t.x0; xx < t.x1; xx++) {
                    int w0, w1;
                    strix_sppf_window(t.ry0, t.ry1, y, rad, &w0, &w1);
                    TL_CHECK(w0 >= lo && w1 <= hi, "%dx%d tile %d stage %d: column window [%d,%d) outside the rows [%d,%d)",
                             h, w, bi, s, w0, w1, lo, hi);
                    float m = -INFINITY;
                    for (int q = w0; q < w1; q++) m = sppf_nan_max(m, b[strix_sppf_b_index(&t, q, xx)]);
                    outs[s - 1][(size_t)y * w + xx] = m;
                    writes[((size_t)(s - 1) * h + y) * w + xx]++;
                }
        }
    }
    for (size_t i = 0; i < (size_t)h * w * stages && !tl_g.failed; i++)
        TL_CHECK(writes[i] == 1, "%dx%d k%d x%d: output %zu written %d times", h, w, k, stages, i, writes[i]);
done:
    free(writes);
}

/* SPPF without a GPU: (1) three k x k stride-1 pools in a row equal one
 * (2*s*(k/2) + 1)-wide pool of the input per stage s, bit for bit, NaNs
 * included (strix_cpu_maxpool2d both ways; k 5: 5, 9, 13), on random
 * tensors of 1x1 to 40x40; (2) kernel set 3's SPPF kernel emulated with
 * pool_plan.h (sppf_emulate) equals the CPU cascade on random images,
 * single tiles, several, and smaller than the halo; (3) the stem tile of
 * conv_plan.h: every tap inside the image of every output of a tile reads
 * the cell holding that input pixel, inside the tile, and yolov8's stem
 * (3x3 s2, 3 channels) fits the shared memory. */
static void sppf_plan(void)
{
    for (int t = 0; t < 300 && !tl_g.failed; t++) {
        const int k = 2 * tl_int(1, 3) + 1, stages = tl_int(1, 3), r = k / 2;
        const int n = tl_int(1, 2), h = tl_int(1, 40), w = tl_int(1, 40), c = tl_int(1, 5);
        const size_t len = (size_t)n * h * w * c;
        float *buf = malloc(len * (2 * stages + 1) * sizeof *buf);
        if (!buf) {
            tl_fail("out of memory");
            return;
        }
        for (size_t i = 0; i < len; i++) buf[i] = tl_int(0, 200) ? tl_uniform(-4, 4) : NAN;
        strix_view v[7];
        for (int i = 0; i <= 2 * stages; i++)
            v[i] = (strix_view){buf + i * len, n, h, w, c, (size_t)c, (size_t)h * w * c};
        for (int s = 1; s <= stages; s++) {
            strix_pool_params one = {k, 1, r}, wide = {2 * s * r + 1, 1, s * r};
            strix_cpu_maxpool2d(&v[s], &v[s - 1], &one, NULL);
            strix_cpu_maxpool2d(&v[stages + s], &v[0], &wide, NULL);
            for (size_t i = 0; i < len && !tl_g.failed; i++) {
                const float p = buf[s * len + i], q = buf[(stages + s) * len + i];
                TL_CHECK(memcmp(&p, &q, sizeof p) == 0 || (p != p && q != q),
                         "n%d %dx%dx%d: %d pools of k%d give %g at %zu, one pool of k%d gives %g", n, h, w, c, s, k, p,
                         i, 2 * s * r + 1, q);
            }
        }
        free(buf);
    }
    for (int t = 0; t < 200 && !tl_g.failed; t++) {
        static const int sizes[][2] = {{1, 1}, {3, 2}, {20, 20}, {24, 24}, {25, 25}, {40, 40}, {20, 12}, {49, 61}};
        const int k = t % 5 ? 5 : 3, stages = t % 7 ? 3 : tl_int(1, 2);
        const int h = t % 2 ? sizes[t / 2 % 8][0] : tl_int(1, 70), w = t % 2 ? sizes[t / 2 % 8][1] : tl_int(1, 70);
        const size_t len = (size_t)h * w;
        float *buf = malloc(len * (2 * stages + 1) * sizeof *buf), *outs[3];
        if (!buf) {
            tl_fail("out of memory");
            return;
        }
        for (size_t i = 0; i < len; i++) buf[i] = tl_int(0, 300) ? tl_uniform(-4, 4) : NAN;
        for (int s = 0; s < stages; s++) outs[s] = buf + (stages + 1 + s) * len;
        sppf_emulate(buf, h, w, k, stages, outs);
        strix_pool_params one = {k, 1, k / 2};
        for (int s = 1; s <= stages && !tl_g.failed; s++) {
            strix_view in = {buf + (s - 1) * len, 1, h, w, 1, 1, len}, out = {buf + s * len, 1, h, w, 1, 1, len};
            strix_cpu_maxpool2d(&out, &in, &one, NULL);
            for (size_t i = 0; i < len && !tl_g.failed; i++) {
                const float p = buf[s * len + i], q = outs[s - 1][i];
                TL_CHECK(memcmp(&p, &q, sizeof p) == 0 || (p != p && q != q),
                         "%dx%d k%d stage %d: the emulated kernel gives %g at (%zu, %zu), the CPU cascade %g", h, w, k,
                         s, q, i / w, i % w, p);
            }
        }
        free(buf);
    }
    for (int t = 0; t < 2000 && !tl_g.failed; t++) {
        const int kh = tl_int(1, 7), kw = tl_int(1, 7), sh = tl_int(1, 3), sw = tl_int(1, 3), dh = tl_int(1, 2),
                  dw = tl_int(1, 2), cg = tl_int(1, 4), ph = tl_int(0, dh * (kh - 1)), pw = tl_int(0, dw * (kw - 1));
        const int ih = tl_int(1, 60), iw = tl_int(1, 60);
        const int oh = (ih + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (iw + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
        if (oh < 1 || ow < 1 || ih + 2 * ph < dh * (kh - 1) + 1 || iw + 2 * pw < dw * (kw - 1) + 1) continue;
        const int rows = strix_stem_in_extent(STRIX_STEM_TILE_H, sh, kh, dh), cols = strix_stem_in_extent(STRIX_STEM_TILE_W, sw, kw, dw);
        const int oy0 = STRIX_STEM_TILE_H * tl_int(0, (oh - 1) / STRIX_STEM_TILE_H);
        const int ox0 = STRIX_STEM_TILE_W * tl_int(0, (ow - 1) / STRIX_STEM_TILE_W);
        const int iy0 = oy0 * sh - ph, ix0 = ox0 * sw - pw;
        for (int oy = oy0; oy < oy0 + STRIX_STEM_TILE_H && oy < oh && !tl_g.failed; oy++)
            for (int ox = ox0; ox < ox0 + STRIX_STEM_TILE_W && ox < ow && !tl_g.failed; ox++)
                for (int ky = 0; ky < kh; ky++)
                    for (int kx = 0; kx < kw; kx++) {
                        const int iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
                        if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
                        const int ci = tl_int(0, cg - 1);
                        const int cell = strix_stem_smem_index(oy, ox, oy0, ox0, ky, kx, ci, sh, sw, dh, dw, cols, cg);
                        const int p = cell / cg;
                        if (cell < 0 || cell >= rows * cols * cg || cell % cg != ci || iy0 + p / cols != iy ||
                            ix0 + p % cols != ix) {
                            tl_fail("stem k%dx%d s%dx%d d%dx%d p%dx%d cg %d: output (%d, %d) tap (%d, %d) reads cell %d "
                                    "of %d x %d x %d, want input (%d, %d)",
                                    kh, kw, sh, sw, dh, dw, ph, pw, cg, oy, ox, ky, kx, cell, rows, cols, cg, iy, ix);
                            break;
                        }
                    }
    }
    TL_CHECK(strix_stem_in_extent(STRIX_STEM_TILE_H, 2, 3, 1) * strix_stem_in_extent(STRIX_STEM_TILE_W, 2, 3, 1) * 3 <=
                 STRIX_STEM_SMEM_FLOATS,
             "yolov8's stem tile does not fit STRIX_STEM_SMEM_FLOATS: it would keep set 2's stem");
}

/* A test name is selected when it contains one of the comma-separated
 * substrings of the filter (none: every test). */
static int selected(const char *filter, const char *name)
{
    if (!filter) return 1;
    for (const char *f = filter; *f;) {
        size_t len = strcspn(f, ",");
        char part[64];
        if (len && len < sizeof part) {
            memcpy(part, f, len);
            part[len] = 0;
            if (strstr(name, part)) return 1;
        }
        f += len + (f[len] == ',');
    }
    return 0;
}

/* --seeds N: an op_ test runs on seeds S, S + 1, ..., S + N - 1 (S the run's
 * seed) and stops at the first failure, whose seed its FAIL line names; the
 * network tests, much slower, run on S alone. */
static int n_seeds = 1;
static void (*seeded_fn)(void);

static void seeded(void)
{
    uint64_t base = tl_g.seed;
    for (int k = 0; k < n_seeds && !tl_g.failed && !tl_g.skipped; k++) {
        tl_g.seed = tl_g.rng = base + (uint64_t)k;
        seeded_fn();
#ifdef STRIX_WITH_CUDA
        release_all();
#endif
    }
    if (!tl_g.failed) tl_g.seed = base; /* a failure keeps its seed for the FAIL line */
}

static void run_test(const char *filter, const char *name, void (*fn)(void))
{
    if (!selected(filter, name)) return;
    uint64_t base = tl_g.seed;
    if (strncmp(name, "op_", 3) == 0) {
        seeded_fn = fn;
        tl_run(name, seeded);
    } else {
        tl_run(name, fn);
    }
    tl_g.seed = base;
#ifdef STRIX_WITH_CUDA
    release_all();
#endif
}

#define RUN_GPU(name) run_test(filter, #name, name);

int main(int argc, char **argv)
{
    const char *filter = NULL;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--seeds") && i + 1 < argc && atoi(argv[i + 1]) >= 1) {
            n_seeds = atoi(argv[++i]);
        } else if (argv[i][0] != '-' && !filter) {
            filter = argv[i];
        } else {
            fprintf(stderr, "usage: test_cuda_ops [--seeds N] [--quick] [NAME[,NAME...]]\n"
                            "  --seeds N  run each op_ test on N consecutive seeds from STRIX_TEST_SEED\n"
                            "  --quick    fewer, smaller random cases (for compute-sanitizer runs)\n"
                            "  NAME       run only the tests whose name contains one of these substrings\n");
            return 2;
        }
    }
    tl_init();
#ifdef STRIX_WITH_CUDA
    T.quick = quick;
    gpu_setup();
#else
    (void)quick;
#endif
    run_test(filter, "device_selection", device_selection);
    run_test(filter, "conv_mma_plan", conv_mma_plan);
    run_test(filter, "sppf_plan", sppf_plan);
    run_test(filter, "upsample_fold_plan", upsample_fold_plan);
    run_test(filter, "letterbox_batch_plan", letterbox_batch_plan);
    run_test(filter, "stage_plan", stage_plan);
    GPU_TESTS(RUN_GPU)
#ifdef STRIX_WITH_CUDA
    gpu_teardown();
#endif
    TL_MAIN_END();
}
