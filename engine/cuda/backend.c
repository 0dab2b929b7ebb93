/* backend.c — the CUDA backend's host side (see backend.h): device memory,
 * the stream and cuBLAS handle, weight upload, the per-op entry of the
 * executor (engine/exec.c walks; here one switch on the op over device views
 * of the planned arena), CUDA graph capture and replay, and the detect path.
 *
 * Device memory, all sized from the plan, grown only when a shape needs more:
 *   arena    pl->arena_floats elements of the compute dtype (fp32 or fp16),
 *            every buffer at the CPU plan's offset pl->buf_off[b];
 *   decoded  [N, A, 4 + nc] fp32: the DECODE op writes here rather than into
 *            the arena, whose fp16 elements could not hold it;
 *   ws       the largest workspace any op's launcher asks for (cuBLAS staging,
 *            attention scores, kernel set 3's split-K partials);
 *   input32  fp16 path: the uploaded fp32 input before conversion;
 *   frames, nms_ws, dets, counts: the detect path.
 * Host staging is pinned, so every copy is an asynchronous DMA on the stream.
 * A batch's frames on the device (stage_frames, laid out by stage_plan.h):
 * the host frames (STRIX_HOST) packed densely, as in the pinned staging they
 * are packed into, then the pinned ones (STRIX_PINNED: the caller's
 * page-locked memory, DMA'd from where it is, no CPU copy), contiguous runs
 * of planes one copy; frames in device memory are read where they are.
 *
 * Asynchronous detect (model option cuda_async; engine/backend.h's
 * detect_submit / detect_wait): each in-flight batch has a lane of its own
 * (pinned frame staging, device frames, device and pinned detections, two
 * events, and a compute context: lane 0 the backend's stream, arena,
 * workspaces, cuBLAS handle and graphs, every other lane a cuda_ctx of its
 * own).  A lane's frames go up on the copy stream; the lane's compute stream
 * waits for that upload's event, then letterboxes, runs the network, NMS and
 * the download of the kept boxes into the lane's pinned memory, and records
 * the lane's `done` event, which detect_wait waits for.  So batch k+1's
 * upload and network overlap batch k's, and the host waits only to collect.
 * The letterbox is one launch for the whole batch (strix_cuda_letterbox_batch,
 * each frame's descriptor uploaded with the frames into the lane's `descs`),
 * where the synchronous path launches once per frame; the forward's CUDA
 * graphs are kept per batch shape (park_graph, before cuda_plan).
 * Only the weights (read-only) and the copy stream are shared: with
 * cuda_async the activation memory (arena, op and NMS workspaces, decoded
 * head) is there once per lane, twice the synchronous path's.  A lane is
 * reused only after it was waited for, so its staging is never overwritten
 * in flight.
 * None of this has yet run on a GPU.
 *
 * Every CUDA and cuBLAS call is checked; a failure becomes one line naming
 * this file and line, the op and its YAML layer where there is one, the
 * CUDA/cuBLAS error and what to do, with status STRIX_E_DEVICE
 * (STRIX_E_NOMEM when device memory runs out). */
#include "backend.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "kernels/kernels.h"
#include "stage_plan.h"
#include "util.h"

_Static_assert(STRIX_NMS_MAX_CLASSES >= STRIX_MAX_CLASSES, "the GPU class filter must hold every class");

#define CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20) /* cuBLAS's own scratch (its Hopper recommendation) */
#define WEIGHT_CHUNK_FLOATS ((size_t)8 << 20)     /* fp16 weights converted 32 MiB at a time */
#define MIN_COMPUTE_CAPABILITY 75                 /* the oldest architecture the kernels are built for */

/* A batch's frames: the host ones packed in pinned memory, then all of them
 * on the device; place[i]: frame i's place there (stage_plan.h). */
typedef struct frame_bufs {
    uint8_t *frames, *host_frames;
    size_t frames_cap, host_frames_cap;
    strix_stage_place *place;
    size_t place_cap;
} frame_bufs;

/* A batch's kept boxes: [N, max_det, 6] fp32 (x1 y1 x2 y2 score class) and
 * [N] counts, on the device and in pinned memory. */
typedef struct det_bufs {
    float *dets, *host_dets;
    size_t dets_cap, host_dets_cap;
    int *counts, *host_counts;
    size_t counts_cap, host_counts_cap;
} det_bufs;

/* The asynchronous path's CUDA graphs of shapes other than the planned one
 * (see cuda_plan): a forward graph of (n, h, w), or none yet with warm set
 * when that shape ran eagerly once; used: the plan count when it was last
 * planned (the least recent is evicted). */
#define GRAPH_CACHE 4
typedef struct graph_entry {
    int n, h, w, warm;
    cudaGraphExec_t graph;
    unsigned long used;
} graph_entry;

/* What a forward, its letterbox and its NMS run with: with cuda_async,
 * lane 0 runs with the backend's own (its fields of the same names), every
 * other lane with one of these, swapped into the backend while its work is
 * enqueued (ctx_swap), so the lanes compute on streams of their own, each
 * with its own activations: a second arena, op workspace, decoded head,
 * NMS workspace, cuBLAS handle and workspace, and CUDA graphs (a graph holds
 * its arena's addresses).  The default path allocates none of this. */
typedef struct cuda_ctx {
    cudaStream_t stream;
    cublasHandle_t cublas;
    void *cublas_ws;
    void *arena, *ws, *nms_ws;
    size_t arena_cap, ws_cap, nms_ws_cap, decoded_cap;
    float *decoded;
    cudaGraphExec_t graph;
    int warm;
    graph_entry graphs[GRAPH_CACHE];
    unsigned long plans;
} cuda_ctx;

/* One in-flight batch of the asynchronous path; descs: its frames'
 * letterbox descriptors (strix_cuda_letterbox_batch), pinned and on the device. */
typedef struct cuda_lane {
    frame_bufs fb;
    det_bufs db;
    strix_lb_frame *descs, *host_descs;
    size_t descs_cap, host_descs_cap;
    cudaEvent_t uploaded, done;
    int n, max_det, queued;
} cuda_lane;

struct strix_cuda_backend {
    strix_backend base;          /* first: the interface (engine/backend.h) */
    int device, half, nvtx;
    int use_graphs, sync_ops;
    int kernels;                 /* STRIX_CUDA_KERNELS_V1 / V2 / V3 (model option cuda_kernels) */
    int sms;                     /* the device's SM count: the convolutions' tiles and K splits */
    strix_dtype dt;
    size_t esz;                  /* bytes per activation / weight element */
    const strix_program *prog;
    cudaStream_t stream;
    cudaEvent_t legacy_done;     /* device-memory frames: the legacy default stream's work so far */
    cublasHandle_t cublas;
    void *cublas_ws;
    void *weights;               /* the fused blob in the compute dtype (woff offsets) */
    float *bias;                 /* fp32 biases: the blob itself (fp32) or a compact copy (fp16) */
    size_t *bias_off;            /* per node: its bias's offset in `bias` */
    int *fold;                   /* per node, kernel set 3's folded upsamples for this plan: an UPSAMPLE's
                                    consuming CONV (the upsample does not run), a CONV's UPSAMPLE (read
                                    through its loads); -1: none (strix_program_upsample_fold) */
    void *bias_mem;              /* fp16 path: the compact bias allocation */

    const strix_plan *plan;
    int planned, n, h, w;
    void *arena;
    size_t arena_cap;
    void *ws;
    size_t ws_cap;
    float *decoded;
    size_t decoded_cap;
    float *input32;
    size_t input32_cap;
    void *host;                  /* pinned: forward input and output */
    size_t host_cap;
    cudaGraphExec_t graph;       /* the forward of (n, h, w), or NULL */
    int warm;                    /* the forward ran eagerly once for (n, h, w) */
    graph_entry graphs[GRAPH_CACHE]; /* cuda_async only: other shapes' graphs (n 0: a free entry) */
    unsigned long plans;         /* shape changes so far: graph_entry.used's clock */
    strix_cuda_graph_stats gstats; /* captures, launches, invalidations (strix_cuda_backend_graph_stats) */

    frame_bufs fb;               /* the synchronous detect's frames and boxes */
    det_bufs db;
    void *nms_ws;
    size_t nms_ws_cap;
    int async;                   /* cuda_async: the lanes exist */
    cudaStream_t copy_stream;    /* the lanes' uploads */
    cuda_lane lanes[STRIX_MAX_IN_FLIGHT];
    cuda_ctx lane_ctx[STRIX_MAX_IN_FLIGHT]; /* lanes 1 and up: their compute contexts (lane_ctx[0] unused) */

    cudaEvent_t *layer_ev;       /* strix_cuda_backend_layer_times only: start, end per YAML layer */
    unsigned char *layer_seen;   /* layer l's events were recorded */
    int n_layer_ev;              /* layers those events cover */
};

#define SWAP(a, b)                                                                    \
    do {                                                                              \
        char tmp_[sizeof(a)];                                                         \
        memcpy(tmp_, &(a), sizeof(a));                                                \
        memcpy(&(a), &(b), sizeof(a));                                                \
        memcpy(&(b), tmp_, sizeof(a));                                                \
    } while (0)

/* Exchange the backend's compute context with c (see cuda_ctx): a second
 * call puts both back. */
static void ctx_swap(strix_cuda_backend *b, cuda_ctx *c)
{
    SWAP(b->stream, c->stream);
    SWAP(b->cublas, c->cublas);
    SWAP(b->cublas_ws, c->cublas_ws);
    SWAP(b->arena, c->arena);
    SWAP(b->ws, c->ws);
    SWAP(b->nms_ws, c->nms_ws);
    SWAP(b->arena_cap, c->arena_cap);
    SWAP(b->ws_cap, c->ws_cap);
    SWAP(b->nms_ws_cap, c->nms_ws_cap);
    SWAP(b->decoded_cap, c->decoded_cap);
    SWAP(b->decoded, c->decoded);
    SWAP(b->graph, c->graph);
    SWAP(b->warm, c->warm);
    SWAP(b->graphs, c->graphs);
    SWAP(b->plans, c->plans);
}
#undef SWAP

/* ------------------------------------------------------------------ errors */

static const char *error_hint(int code)
{
    if (code == cudaErrorMemoryAllocation || code == STRIX_CUDA_ERR_CUBLAS + CUBLAS_STATUS_ALLOC_FAILED)
        return "free GPU memory, or use a smaller batch or input size";
    if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver || code == cudaErrorInitializationError)
        return "check the NVIDIA driver with nvidia-smi, or use --device cpu";
    if (code == STRIX_CUDA_ERR_CUBLAS + CUBLAS_STATUS_NOT_INITIALIZED)
        return "check that the CUDA toolkit's cuBLAS of the build's major version is installed, or use --device cpu";
    if (code == cudaErrorNoKernelImageForDevice || code == cudaErrorUnsupportedPtxVersion)
        return "this GPU or driver is older than the build targets: rebuild with its CUDA_ARCHS or update the driver";
    return "rerun with synchronous ops (model option cuda_sync; STRIX_CUDA_SYNC=1 for the strix tools) to attribute "
           "it to a layer, and report it if it persists";
}

/* err <- "FILE:LINE: WHAT: CUDA error NAME (text); HINT". */
static strix_status device_fail(strix_error *err, const char *file, int line, int code, const char *what)
{
    char why[256];
    if (code >= STRIX_CUDA_ERR_CUBLAS) {
        cublasStatus_t s = (cublasStatus_t)(code - STRIX_CUDA_ERR_CUBLAS);
        snprintf(why, sizeof why, "cuBLAS error %s (%s)", cublasGetStatusName(s), cublasGetStatusString(s));
    } else {
        snprintf(why, sizeof why, "CUDA error %s (%s)", cudaGetErrorName((cudaError_t)code),
                 cudaGetErrorString((cudaError_t)code));
    }
    strix_status st = code == cudaErrorMemoryAllocation ? STRIX_E_NOMEM : STRIX_E_DEVICE;
    return strix_fail(err, st, "%s:%d: %s: %s; %s", file, line, what, why, error_hint(code));
}

/* Check a CUDA runtime call (or a launcher's strix_cuda_err) in a function
 * returning strix_status, with a fixed description of what was being done. */
#define CUDA_TRY(call, what)                                                          \
    do {                                                                              \
        int code_ = (int)(call);                                                      \
        if (code_ != 0) return device_fail(err, __FILE__, __LINE__, code_, what);     \
    } while (0)

static int cublas_code(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? 0 : STRIX_CUDA_ERR_CUBLAS + (int)s; }

/* ------------------------------------------------------------------ memory */

static strix_status dev_reserve(void **ptr, size_t *cap, size_t need, const char *what, strix_error *err)
{
    if (need <= *cap && *ptr) return STRIX_OK;
    if (*ptr) {
        void *old = *ptr;
        *ptr = NULL;
        *cap = 0;
        CUDA_TRY(cudaFree(old), "cudaFree");
    }
    cudaError_t e = cudaMalloc(ptr, need ? need : 1);
    if (e != cudaSuccess) {
        *ptr = NULL;
        char msg[160];
        snprintf(msg, sizeof msg, "cudaMalloc of %zu MiB for the %s", (need >> 20) + 1, what);
        return device_fail(err, __FILE__, __LINE__, e, msg);
    }
    *cap = need;
    return STRIX_OK;
}

static strix_status host_reserve(void **ptr, size_t *cap, size_t need, const char *what, strix_error *err)
{
    if (need <= *cap && *ptr) return STRIX_OK;
    if (*ptr) {
        void *old = *ptr;
        *ptr = NULL;
        *cap = 0;
        CUDA_TRY(cudaFreeHost(old), "cudaFreeHost");
    }
    cudaError_t e = cudaMallocHost(ptr, need ? need : 1);
    if (e != cudaSuccess) {
        *ptr = NULL;
        char msg[160];
        snprintf(msg, sizeof msg, "cudaMallocHost of %zu MiB of pinned memory for the %s", (need >> 20) + 1, what);
        return device_fail(err, __FILE__, __LINE__, e, msg);
    }
    *cap = need;
    return STRIX_OK;
}

/* -------------------------------------------------------------------- NVTX */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void range_push(const strix_cuda_backend *b, const char *fmt, ...)
{
    if (!b->nvtx) return;
    char name[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxRangePushA(name);
}

static void range_pop(const strix_cuda_backend *b)
{
    if (b->nvtx) nvtxRangePop();
}

/* ---------------------------------------------------------------- executor */

/* The device view of value v: the plan's layout (strix_plan_layout) over
 * the device arena, offsets in elements of the compute dtype. */
static strix_dview dview(const strix_cuda_backend *b, int v)
{
    size_t off;
    strix_view g = strix_plan_layout(b->plan, b->prog, v, &off);
    strix_dview d = {(char *)b->arena + off * b->esz, g.n, g.h, g.w, g.c, g.pix_stride, g.batch_stride};
    return d;
}

static const char *op_name(strix_op op)
{
    switch (op) {
    case STRIX_OP_CONV: return "conv";
    case STRIX_OP_MAXPOOL: return "maxpool";
    case STRIX_OP_UPSAMPLE: return "upsample";
    case STRIX_OP_COPY: return "copy";
    case STRIX_OP_ATTENTION: return "attention";
    case STRIX_OP_DECODE: return "decode";
    case STRIX_OP_SHUFFLE2: return "shuffle2";
    case STRIX_OP_ADD: return "add";
    case STRIX_OP_AVGPOOL: return "avgpool";
    case STRIX_OP_SOFTMAX: return "softmax";
    }
    return "op";
}

static strix_status op_fail(strix_error *err, int line, const strix_node *nd, int code)
{
    char what[192];
    if (nd->op == STRIX_OP_CONV)
        snprintf(what, sizeof what, "conv %s (%dx%d s%d, layer %d)", nd->wname, nd->conv.kh, nd->conv.kw,
                 nd->conv.sh, nd->layer);
    else
        snprintf(what, sizeof what, "%s (layer %d)", op_name(nd->op), nd->layer);
    return device_fail(err, __FILE__, line, code, what);
}

/* Whether conv node j can read upsample node u's input through its loads
 * for the planned shapes (the program allows it: strix_program_upsample_fold). */
static int fold_ok(const strix_cuda_backend *b, int u, int j)
{
    const strix_program *p = b->prog;
    const strix_node *up = &p->nodes[u], *cv = &p->nodes[j];
    strix_dview out = dview(b, cv->out), in = dview(b, cv->in), src = dview(b, up->in), res;
    if (cv->res >= 0) res = dview(b, cv->res);
    return strix_cuda_conv2d_fold_ok(&out, &in, &src, p->values[up->out].c0 - p->values[cv->in].c0, up->scale,
                                     (const char *)b->weights + cv->woff * b->esz, b->bias + b->bias_off[j],
                                     cv->res >= 0 ? &res : NULL, &cv->conv, b->dt, b->kernels);
}

/* Enqueue node i (and, for a fused cascade, the nodes it covers). */
static strix_status run_node(strix_cuda_backend *b, int i, strix_error *err)
{
    const strix_program *p = b->prog;
    const strix_node *nd = &p->nodes[i];
    strix_stream s = (strix_stream)b->stream;
    strix_dview out = dview(b, nd->out), in = dview(b, nd->in);
    strix_cuda_err rc = 0;
    switch (nd->op) {
    case STRIX_OP_CONV: {
        strix_dview res;
        if (nd->res >= 0) res = dview(b, nd->res);
        const void *w = (const char *)b->weights + nd->woff * b->esz;
        const float *bias = b->bias + b->bias_off[i];
        if (b->fold[i] >= 0) { /* channels of `in` read from the folded upsample's input */
            const strix_node *up = &p->nodes[b->fold[i]];
            strix_dview src = dview(b, up->in);
            rc = strix_cuda_conv2d_fold(&out, &in, &src, p->values[up->out].c0 - p->values[nd->in].c0, up->scale, w,
                                        bias, nd->res >= 0 ? &res : NULL, &nd->conv, b->dt, b->kernels, b->sms, b->ws,
                                        s);
            break;
        }
        rc = strix_cuda_conv2d(&out, &in, w, bias, nd->res >= 0 ? &res : NULL, &nd->conv, b->dt, b->kernels, b->sms,
                               b->cublas, b->ws, s);
        break;
    }
    case STRIX_OP_MAXPOOL: {
        int len = nd->cascade; /* decided by the program (strix_node.cascade) */
        if (len < 2) {
            rc = strix_cuda_maxpool2d(&out, &in, &nd->pool, b->dt, s);
            break;
        }
        strix_dview outs[STRIX_CASCADE_MAX];
        for (int k = 0; k < len; k++) outs[k] = dview(b, p->nodes[i + k].out);
        rc = strix_cuda_maxpool_cascade(outs, len, &in, &nd->pool, b->dt, b->kernels, s);
        break;
    }
    case STRIX_OP_UPSAMPLE:
        if (b->fold[i] >= 0) break; /* its consumer reads its input instead (b->fold) */
        rc = strix_cuda_upsample_nearest(&out, &in, nd->scale, b->dt, b->kernels, s);
        break;
    case STRIX_OP_COPY: rc = strix_cuda_copy(&out, &in, b->dt, s); break;
    case STRIX_OP_ATTENTION: {
        strix_dview v = dview(b, nd->out2);
        rc = strix_cuda_attention(&out, &v, &in, &nd->attn, b->dt, b->cublas, b->ws, s);
        break;
    }
    case STRIX_OP_DECODE:
        rc = strix_cuda_detect_decode(b->decoded, in.data, b->dt, b->plan->n, &b->plan->decode, s);
        break;
    case STRIX_OP_SHUFFLE2:
    case STRIX_OP_ADD:
    case STRIX_OP_AVGPOOL:
    case STRIX_OP_SOFTMAX:
        /* the task heads' ops: strix_backend_create refuses task models on CUDA */
        return strix_fail(err, STRIX_E_INTERNAL, "engine/cuda/backend.c: no device code for %s", op_name(nd->op));
    }
    if (rc) return op_fail(err, __LINE__, nd, rc);
    if (b->sync_ops && (rc = (strix_cuda_err)cudaStreamSynchronize(b->stream)))
        return op_fail(err, __LINE__, nd, rc);
    return STRIX_OK;
}

/* The executor's per-node entry: node i in an NVTX range of its own. */
static strix_status cuda_run_op(strix_backend *base, int i, strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    const strix_node *nd = &b->prog->nodes[i];
    range_push(b, "%s %s", op_name(nd->op), nd->op == STRIX_OP_CONV ? nd->wname : "");
    strix_status st = run_node(b, i, err);
    range_pop(b);
    return st;
}

/* One NVTX range per YAML layer. */
static void cuda_layer_enter(strix_backend *base, int layer)
{
    range_push((strix_cuda_backend *)base, "layer %d", layer);
}

static void cuda_layer_leave(strix_backend *base, int layer) { range_pop((strix_cuda_backend *)base); }

/* With layer_ev set (layer timing), record event 2 * layer (start) or
 * 2 * layer + 1 (end) of a YAML layer. */
static strix_status cuda_layer_mark(strix_backend *base, int layer, int end, strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    if (!b->layer_ev || layer < 0 || layer >= b->n_layer_ev) return STRIX_OK;
    CUDA_TRY(cudaEventRecord(b->layer_ev[2 * layer + end], b->stream), "record a layer-timing event");
    b->layer_seen[layer] = 1;
    return STRIX_OK;
}

/* Enqueue the whole network: the executor's walk over this backend. */
static strix_status run_nodes(strix_cuda_backend *b, strix_error *err) { return strix_execute(&b->base, b->prog, err); }

/* The first forward of a shape runs eagerly (lazily loaded kernels and
 * cuBLAS's first-call setup happen outside any capture, and a shape used
 * once costs no capture); the second captures the graph, every later one
 * replays it. */
static strix_status enqueue_forward(strix_cuda_backend *b, strix_error *err)
{
    if (!b->use_graphs || !b->warm) {
        b->warm = 1;
        return run_nodes(b, err);
    }
    if (!b->graph) {
        CUDA_TRY(cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal), "begin the CUDA graph capture");
        strix_status st = run_nodes(b, err);
        cudaGraph_t g = NULL;
        cudaError_t e = cudaStreamEndCapture(b->stream, &g);
        if (!st && e != cudaSuccess) st = device_fail(err, __FILE__, __LINE__, e, "capture the forward CUDA graph");
        if (!st && (e = cudaGraphInstantiate(&b->graph, g, 0)) != cudaSuccess) {
            b->graph = NULL;
            st = device_fail(err, __FILE__, __LINE__, e, "instantiate the forward CUDA graph");
        }
        if (g) cudaGraphDestroy(g);
        if (st) return st;
        b->gstats.captures++;
    }
    CUDA_TRY(cudaGraphLaunch(b->graph, b->stream), "launch the forward CUDA graph");
    b->gstats.launches++;
    return STRIX_OK;
}

static strix_status finish(strix_cuda_backend *b, const char *what, strix_error *err)
{
    char msg[160];
    cudaError_t e = cudaStreamSynchronize(b->stream);
    if (e == cudaSuccess) return STRIX_OK;
    snprintf(msg, sizeof msg, "the %s failed on the GPU", what);
    return device_fail(err, __FILE__, __LINE__, e, msg);
}

/* ------------------------------------------------------------------ public */

int strix_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* leave no error behind for later checks */
        return 0;
    }
    return n;
}

static strix_status upload_weights(strix_cuda_backend *b, const float *weights, strix_error *err)
{
    const strix_program *p = b->prog;
    size_t floats = p->weight_floats ? p->weight_floats : 1;
    strix_status st = STRIX_OK;
    b->bias_off = calloc((size_t)(p->n_nodes ? p->n_nodes : 1), sizeof *b->bias_off);
    b->fold = malloc(sizeof *b->fold * (size_t)(p->n_nodes ? p->n_nodes : 1));
    if (!b->bias_off || !b->fold) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CUDA backend");
    for (int i = 0; i < p->n_nodes; i++) b->fold[i] = -1;
    size_t cap = 0;
    if ((st = dev_reserve(&b->weights, &cap, floats * b->esz, "weights", err))) return st;
    if (!b->half) {
        CUDA_TRY(cudaMemcpyAsync(b->weights, weights, p->weight_floats * sizeof(float), cudaMemcpyHostToDevice,
                                 b->stream),
                 "upload the weights");
        b->bias = b->weights;
        for (int i = 0; i < p->n_nodes; i++) b->bias_off[i] = p->nodes[i].boff;
        return finish(b, "weight upload", err);
    }
    /* fp16 copies of the whole blob (a bias's fp16 copy goes unused), fp32
     * biases gathered into a compact array */
    size_t nbias = 0;
    for (int i = 0; i < p->n_nodes; i++)
        if (p->nodes[i].op == STRIX_OP_CONV) nbias += (size_t)p->nodes[i].cout;
    float *hb = malloc((nbias ? nbias : 1) * sizeof(float));
    if (!hb) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CUDA backend");
    for (size_t i = 0, o = 0; i < (size_t)p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (nd->op != STRIX_OP_CONV) continue;
        memcpy(hb + o, weights + nd->boff, (size_t)nd->cout * sizeof(float));
        b->bias_off[i] = o;
        o += (size_t)nd->cout;
    }
    void *stage = NULL;
    size_t stage_cap = 0, bias_cap = 0;
    st = dev_reserve(&b->bias_mem, &bias_cap, (nbias ? nbias : 1) * sizeof(float), "biases", err);
    if (!st) {
        b->bias = b->bias_mem;
        cudaError_t e = cudaMemcpyAsync(b->bias, hb, nbias * sizeof(float), cudaMemcpyHostToDevice, b->stream);
        if (e != cudaSuccess) st = device_fail(err, __FILE__, __LINE__, e, "upload the biases");
    }
    if (!st) st = dev_reserve(&stage, &stage_cap, WEIGHT_CHUNK_FLOATS * sizeof(float), "weight staging", err);
    for (size_t off = 0; !st && off < p->weight_floats; off += WEIGHT_CHUNK_FLOATS) {
        size_t cnt = p->weight_floats - off < WEIGHT_CHUNK_FLOATS ? p->weight_floats - off : WEIGHT_CHUNK_FLOATS;
        int code = cudaMemcpyAsync(stage, weights + off, cnt * sizeof(float), cudaMemcpyHostToDevice, b->stream);
        if (!code)
            code = strix_cuda_convert((char *)b->weights + off * sizeof(uint16_t), STRIX_F16, stage, STRIX_F32, cnt,
                                      (strix_stream)b->stream);
        if (code) st = device_fail(err, __FILE__, __LINE__, code, "upload the fp16 weights");
    }
    if (!st) st = finish(b, "weight upload", err);
    if (stage) cudaFree(stage);
    free(hb);
    return st;
}

static void cuda_free(strix_backend *base);
static const strix_backend_ops cuda_ops;

/* cuda_async: lane c's compute stream and cuBLAS handle, as the backend's
 * own are made (bound to the stream, a workspace of its own, the same math
 * mode); its device buffers are reserved by cuda_plan. */
static strix_status ctx_create(strix_cuda_backend *b, cuda_ctx *c, strix_error *err)
{
    size_t cap = 0;
    CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "create a lane's compute stream");
    CUDA_TRY(cublas_code(cublasCreate(&c->cublas)), "create a lane's cuBLAS handle");
    CUDA_TRY(cublas_code(cublasSetStream(c->cublas, c->stream)), "bind cuBLAS to a lane's stream");
    strix_status st = dev_reserve(&c->cublas_ws, &cap, CUBLAS_WORKSPACE_BYTES, "cuBLAS workspace", err);
    if (st) return st;
    CUDA_TRY(cublas_code(cublasSetWorkspace(c->cublas, c->cublas_ws, CUBLAS_WORKSPACE_BYTES)),
             "set a lane's cuBLAS workspace");
    CUDA_TRY(cublas_code(cublasSetMathMode(c->cublas, b->half ? CUBLAS_DEFAULT_MATH : CUBLAS_PEDANTIC_MATH)),
             "set a lane's cuBLAS math mode");
    return STRIX_OK;
}

static void ctx_free(cuda_ctx *c)
{
    if (c->stream) cudaStreamSynchronize(c->stream);
    if (c->graph) cudaGraphExecDestroy(c->graph);
    for (int k = 0; k < GRAPH_CACHE; k++)
        if (c->graphs[k].graph) cudaGraphExecDestroy(c->graphs[k].graph);
    if (c->cublas) cublasDestroy(c->cublas);
    void *dev[] = {c->cublas_ws, c->arena, c->ws, c->nms_ws, c->decoded};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        if (dev[i]) cudaFree(dev[i]);
    if (c->stream) cudaStreamDestroy(c->stream);
}

strix_status strix_cuda_backend_create(strix_backend **out, const strix_program *p, const float *weights,
                                       const strix_backend_config *c, strix_error *err)
{
    *out = NULL;
    int device = c->device, half = c->half, nvtx = c->nvtx, graphs = c->graphs, sync = c->sync, async = c->async;
    if (c->kernels != STRIX_CUDA_KERNELS_V1 && c->kernels != STRIX_CUDA_KERNELS_V2 && c->kernels != STRIX_CUDA_KERNELS_V3)
        return strix_fail(err, STRIX_E_ARG,
                          "cuda_kernels is %d: use 2 (the tensor-core set, the default), 1 (the first set) or 3 (2 with "
                          "split-K, a shared-memory stem, a one-pass SPPF and folded upsamples; not yet verified on a GPU)",
                          c->kernels);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        return strix_fail(err, STRIX_E_DEVICE,
                          "no usable CUDA device (%s): check the NVIDIA driver with nvidia-smi, or use --device cpu",
                          e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    if (device < 0 || device >= count)
        return strix_fail(err, STRIX_E_DEVICE, "device cuda:%d does not exist: %d CUDA device%s found (cuda:0%s)",
                          device, count, count == 1 ? "" : "s", count == 1 ? "" : " and up");
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device), "query the CUDA device");
    if (prop.major * 10 + prop.minor < MIN_COMPUTE_CAPABILITY)
        return strix_fail(err, STRIX_E_DEVICE,
                          "cuda:%d (%s) has compute capability %d.%d; strix's CUDA kernels need 7.5 or newer (use --device cpu)",
                          device, prop.name, prop.major, prop.minor);
    strix_cuda_backend *b = calloc(1, sizeof *b);
    if (!b) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CUDA backend");
    b->base.ops = &cuda_ops;
    b->device = device;
    b->half = half != 0;
    b->nvtx = nvtx != 0;
    b->dt = b->half ? STRIX_F16 : STRIX_F32;
    b->esz = b->half ? sizeof(uint16_t) : sizeof(float);
    b->prog = p;
    b->sync_ops = sync != 0;
    b->use_graphs = graphs && !b->sync_ops; /* a capture cannot synchronise */
    b->kernels = c->kernels;
    b->sms = prop.multiProcessorCount;

    strix_status st = STRIX_OK;
    size_t ws_cap = 0;
#define CREATE_TRY(call, what)                                                        \
    do {                                                                              \
        int code_ = (int)(call);                                                      \
        if (!st && code_) st = device_fail(err, __FILE__, __LINE__, code_, what);     \
    } while (0)
    CREATE_TRY(cudaSetDevice(device), "select the CUDA device");
    if (!st) CREATE_TRY(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking), "create a CUDA stream");
    if (!st) CREATE_TRY(cudaEventCreateWithFlags(&b->legacy_done, cudaEventDisableTiming), "create an event");
    if (!st && async) {
        CREATE_TRY(cudaStreamCreateWithFlags(&b->copy_stream, cudaStreamNonBlocking), "create the upload stream");
        for (int l = 0; l < STRIX_MAX_IN_FLIGHT && !st; l++) {
            CREATE_TRY(cudaEventCreateWithFlags(&b->lanes[l].uploaded, cudaEventDisableTiming), "create an event");
            CREATE_TRY(cudaEventCreateWithFlags(&b->lanes[l].done, cudaEventDisableTiming), "create an event");
        }
        for (int l = 1; l < STRIX_MAX_IN_FLIGHT && !st; l++) st = ctx_create(b, &b->lane_ctx[l], err);
        b->async = !st;
    }
    if (!st) CREATE_TRY(cublas_code(cublasCreate(&b->cublas)), "create the cuBLAS handle");
    if (!st) CREATE_TRY(cublas_code(cublasSetStream(b->cublas, b->stream)), "bind cuBLAS to the stream");
    /* a workspace of our own: cuBLAS then allocates nothing during graph capture */
    if (!st) st = dev_reserve(&b->cublas_ws, &ws_cap, CUBLAS_WORKSPACE_BYTES, "cuBLAS workspace", err);
    if (!st) CREATE_TRY(cublas_code(cublasSetWorkspace(b->cublas, b->cublas_ws, CUBLAS_WORKSPACE_BYTES)),
                        "set the cuBLAS workspace");
    /* fp32: no TF32 anywhere (the CPU agreement is checked to 1e-5) */
    if (!st) CREATE_TRY(cublas_code(cublasSetMathMode(b->cublas, b->half ? CUBLAS_DEFAULT_MATH : CUBLAS_PEDANTIC_MATH)),
                        "set the cuBLAS math mode");
#undef CREATE_TRY
    if (!st) st = upload_weights(b, weights, err);
    if (st) {
        cuda_free(&b->base);
        return st;
    }
    *out = &b->base;
    return STRIX_OK;
}

/* CUDA graphs per batch shape (cuda_async only; without it one graph, of
 * the planned shape, is destroyed on every shape change, as verified).
 * A shape change parks the planned shape's graph (and its warm flag) in
 * b->graphs, evicting the least recently planned entry, and takes the new
 * shape's entry back if there is one, so alternating shapes replay their
 * graphs instead of running eagerly and capturing again.
 * Invalidation: a graph holds the device addresses it was captured with:
 * the arena (every activation, at the plan's offsets for its shape, which
 * strix_plan_build computes the same way each time), the op workspace, the
 * decoded head, the weights, biases and cuBLAS workspace (these three are
 * allocated once, at creation).  The input is the arena's input buffer and
 * the letterbox, NMS and copies run outside the graph, so the frame,
 * descriptor and detection buffers are in no graph.  When planning a shape
 * reallocates the arena, the workspace or the decoded head, every graph
 * (parked or current) is destroyed and every shape runs eagerly once and
 * captures again.  Each compute context (the backend's, and each other
 * lane's cuda_ctx, swapped in) has its own cache, since its graphs hold its
 * own buffers; they share b->fold, which depends on the shape and on the
 * views' alignment, the same in every arena (cudaMalloc aligns to 256).  A shape change happens only with no batch in flight
 * (the model waits for its batches first), so no parked graph is running. */
static strix_status park_graph(strix_cuda_backend *b, strix_error *err)
{
    graph_entry *e = &b->graphs[0];
    for (int k = 0; k < GRAPH_CACHE; k++) {
        if (!b->graphs[k].n) {
            e = &b->graphs[k];
            break;
        }
        if (b->graphs[k].used < e->used) e = &b->graphs[k];
    }
    cudaGraphExec_t evicted = e->graph;
    *e = (graph_entry){b->n, b->h, b->w, b->warm, b->graph, b->plans++};
    b->graph = NULL;
    b->warm = 0;
    if (evicted) CUDA_TRY(cudaGraphExecDestroy(evicted), "destroy an evicted CUDA graph");
    return STRIX_OK;
}

static void take_graph(strix_cuda_backend *b, int n, int h, int w)
{
    for (int k = 0; k < GRAPH_CACHE; k++) {
        graph_entry *e = &b->graphs[k];
        if (e->n == n && e->h == h && e->w == w) {
            b->graph = e->graph, b->warm = e->warm;
            *e = (graph_entry){0, 0, 0, 0, NULL, 0};
            return;
        }
    }
}

static strix_status graph_cache_clear(strix_cuda_backend *b, strix_error *err)
{
    for (int k = 0; k < GRAPH_CACHE; k++) {
        cudaGraphExec_t g = b->graphs[k].graph;
        b->graphs[k] = (graph_entry){0, 0, 0, 0, NULL, 0};
        if (g) CUDA_TRY(cudaGraphExecDestroy(g), "destroy a stale CUDA graph");
    }
    b->warm = 0;
    if (b->graph) {
        cudaGraphExec_t g = b->graph;
        b->graph = NULL;
        CUDA_TRY(cudaGraphExecDestroy(g), "destroy a stale CUDA graph");
    }
    return STRIX_OK;
}

/* cuda_async, a lane's compute context swapped into b (cuda_ctx): the
 * previous shape's graph parked, its arena, decoded head and op workspace
 * (ws bytes) fit to plan pl, its graphs destroyed (*cleared set) when one
 * of them moved, and pl's shape's graph taken back. */
/* What a captured forward reads and writes besides the weights, biases and
 * cuBLAS workspace (allocated once): see graph_cache_clear. */
typedef struct graph_bufs {
    void *at[3];
    size_t cap[3];
} graph_bufs;

static graph_bufs graph_bufs_of(const strix_cuda_backend *b)
{
    return (graph_bufs){{b->arena, b->ws, b->decoded}, {b->arena_cap, b->ws_cap, b->decoded_cap}};
}

/* After planning a shape: if any captured buffer moved or grew since
 * `before`, every cached graph goes (*cleared = 1); then the shape's own
 * graph comes back from the cache, if it is there. */
static strix_status regraph(strix_cuda_backend *b, const graph_bufs *before, const strix_plan *pl, int *cleared,
                            strix_error *err)
{
    graph_bufs now = graph_bufs_of(b);
    for (int k = 0; k < 3; k++)
        if (now.at[k] != before->at[k] || now.cap[k] != before->cap[k]) {
            *cleared = 1;
            strix_status st = graph_cache_clear(b, err);
            if (st) return st;
            break;
        }
    take_graph(b, pl->n, pl->h, pl->w);
    return STRIX_OK;
}

static strix_status plan_lane_ctx(strix_cuda_backend *b, const strix_plan *pl, int was_planned, size_t ws,
                                  int *cleared, strix_error *err)
{
    strix_status st = was_planned ? park_graph(b, err) : STRIX_OK;
    if (st) return st;
    const graph_bufs before = graph_bufs_of(b);
    size_t out_floats = (size_t)pl->n * pl->anchors * (4 + (size_t)b->prog->nc);
    st = dev_reserve(&b->arena, &b->arena_cap, pl->arena_floats * b->esz, "activation arena", err);
    if (!st) st = dev_reserve((void **)&b->decoded, &b->decoded_cap, out_floats * sizeof(float), "decoded head", err);
    if (!st) st = dev_reserve(&b->ws, &b->ws_cap, ws, "op workspace", err);
    if (st) return st;
    return regraph(b, &before, pl, cleared, err);
}

static strix_status cuda_plan(strix_backend *base, const strix_plan *pl, strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    b->plan = pl;
    if (b->planned && pl->n == b->n && pl->h == b->h && pl->w == b->w) return STRIX_OK;
    const int was_planned = b->planned;
    b->planned = 0;
    if (b->async) {
        if (was_planned) {
            strix_status st = park_graph(b, err);
            if (st) return st;
        }
    } else {
        b->warm = 0;
        if (b->graph) {
            cudaGraphExec_t g = b->graph;
            b->graph = NULL;
            CUDA_TRY(cudaGraphExecDestroy(g), "destroy the previous CUDA graph");
        }
    }
    const graph_bufs before = graph_bufs_of(b);
    const strix_program *p = b->prog;
    size_t in_floats = (size_t)pl->n * pl->h * pl->w * 3;
    size_t out_floats = (size_t)pl->n * pl->anchors * (4 + (size_t)p->nc);
    size_t host_floats = in_floats > out_floats ? in_floats : out_floats;
    strix_status st = dev_reserve(&b->arena, &b->arena_cap, pl->arena_floats * b->esz, "activation arena", err);
    if (!st) st = dev_reserve((void **)&b->decoded, &b->decoded_cap, out_floats * sizeof(float), "decoded head", err);
    if (!st && b->half)
        st = dev_reserve((void **)&b->input32, &b->input32_cap, in_floats * sizeof(float), "fp32 input", err);
    if (!st) st = host_reserve(&b->host, &b->host_cap, host_floats * sizeof(float), "input/output staging", err);
    if (st) return st;
    size_t ws = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        size_t need = 0;
        if (nd->op == STRIX_OP_CONV) {
            strix_dview o = dview(b, nd->out), in = dview(b, nd->in);
            need = strix_cuda_conv2d_workspace(&o, &in, &nd->conv, b->dt, b->kernels, b->sms);
        } else if (nd->op == STRIX_OP_ATTENTION) {
            strix_dview q = dview(b, nd->in);
            need = strix_cuda_attention_workspace(&q, &nd->attn, b->dt);
        }
        if (need > ws) ws = need;
    }
    if ((st = dev_reserve(&b->ws, &b->ws_cap, ws, "op workspace", err))) return st;
    /* kernel set 3's folded upsamples where this shape's views allow them
     * (the folded conv's workspace is its plain launch's, counted above) */
    for (int i = 0; i < p->n_nodes; i++) b->fold[i] = -1;
    for (int u = 0; u < p->n_nodes; u++) {
        int j = strix_program_upsample_fold(p, u, b->kernels);
        if (j >= 0 && fold_ok(b, u, j)) b->fold[u] = j, b->fold[j] = u;
    }
    if (b->async) {
        int cleared = 0;
        st = regraph(b, &before, pl, &cleared, err);
        for (int l = 1; l < STRIX_MAX_IN_FLIGHT && !st; l++) {
            ctx_swap(b, &b->lane_ctx[l]);
            st = plan_lane_ctx(b, pl, was_planned, ws, &cleared, err);
            ctx_swap(b, &b->lane_ctx[l]);
        }
        b->gstats.invalidations += (unsigned long)cleared;
        if (st) return st;
    }
    b->n = pl->n, b->h = pl->h, b->w = pl->w;
    b->planned = 1;
    return STRIX_OK;
}

static void *input_slot(const strix_cuda_backend *b)
{
    return (char *)b->arena + b->plan->buf_off[b->prog->values[b->prog->input].buf] * b->esz;
}

static strix_status upload_input(strix_cuda_backend *b, const float *host_input, size_t floats, strix_error *err)
{
    memcpy(b->host, host_input, floats * sizeof(float));
    void *dst = b->half ? (void *)b->input32 : input_slot(b);
    CUDA_TRY(cudaMemcpyAsync(dst, b->host, floats * sizeof(float), cudaMemcpyHostToDevice, b->stream),
             "upload the input tensor");
    if (b->half)
        CUDA_TRY(strix_cuda_convert(input_slot(b), STRIX_F16, b->input32, STRIX_F32, floats, (strix_stream)b->stream),
                 "convert the input tensor to fp16");
    return STRIX_OK;
}

static strix_status not_planned(strix_error *err)
{
    return strix_fail(err, STRIX_E_INTERNAL, "engine/cuda/backend.c: the CUDA backend was used before being planned");
}

static strix_status cuda_forward(strix_backend *base, const float *host_input, float *host_decoded,
                                 strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    if (!b->planned) return not_planned(err);
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    const strix_plan *pl = b->plan;
    size_t in_floats = (size_t)pl->n * pl->h * pl->w * 3;
    size_t out_floats = (size_t)pl->n * pl->anchors * (4 + (size_t)b->prog->nc);
    range_push(b, "upload");
    strix_status st = upload_input(b, host_input, in_floats, err);
    range_pop(b);
    if (st) return st;
    range_push(b, "forward %dx%dx%d", pl->n, pl->h, pl->w);
    st = enqueue_forward(b, err);
    range_pop(b);
    if (st) return st;
    range_push(b, "download");
    cudaError_t e = cudaMemcpyAsync(b->host, b->decoded, out_floats * sizeof(float), cudaMemcpyDeviceToHost, b->stream);
    if (e != cudaSuccess) st = device_fail(err, __FILE__, __LINE__, e, "download the decoded head");
    if (!st) st = finish(b, "forward pass", err);
    if (!st) memcpy(host_decoded, b->host, out_floats * sizeof(float));
    range_pop(b);
    return st;
}

/* The frames of a batch to the device buffer of fb on stream `up`
 * (stage_plan.h: the layout; fb->place[i] says where frame i went).
 * Pinned frames: their DMA is queued first, so it runs while the CPU packs
 * the host frames.  Host frames: packed densely into fb's pinned staging
 * and DMA'd UPLOAD_CHUNK frames at a time: the CPU's threads pack chunk
 * c + 1 (rows spread over the threads: one thread's memcpy cannot keep up
 * with the DMA) while the copy engine uploads chunk c.  Each chunk has its
 * own part of the staging buffer, and nothing still reads fb's staging or
 * device frames when a batch starts (the synchronous path ended with a
 * synchronising download; a lane waits for its previous batch). */
#define UPLOAD_CHUNK 8
static strix_status stage_frames(const strix_image *imgs, int n, frame_bufs *fb, cudaStream_t up, strix_error *err)
{
    if (!strix_reserve((void **)&fb->place, &fb->place_cap, sizeof *fb->place * (size_t)n))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for the places of %d frames", n);
    size_t staged;
    const size_t total = strix_stage_place_frames(imgs, n, fb->place, &staged);
    strix_status st = staged ? host_reserve((void **)&fb->host_frames, &fb->host_frames_cap, staged, "frame staging", err)
                             : STRIX_OK;
    if (!st) st = dev_reserve((void **)&fb->frames, &fb->frames_cap, total, "frames", err);
    if (st) return st;
    strix_stage_run run = {NULL, 0, 0};
    for (int cursor = 0; strix_stage_next_run(imgs, n, fb->place, &cursor, &run);)
        CUDA_TRY(cudaMemcpyAsync(fb->frames + run.dev, run.src, run.len, cudaMemcpyHostToDevice, up),
                 "upload the pinned frames");
    size_t off = 0;
    for (int c0 = 0; c0 < n; c0 += UPLOAD_CHUNK) {
        const int c1 = n - c0 < UPLOAD_CHUNK ? n : c0 + UPLOAD_CHUNK;
        size_t end = off;
        int rows = 0;
        for (int i = c0; i < c1; i++)
            if (imgs[i].memory == STRIX_HOST) {
                rows += strix_stage_rows(&imgs[i]);
                end = fb->place[i].y + strix_stage_bytes(&imgs[i]);
            }
#pragma omp parallel for schedule(static)
        for (int r = 0; r < rows; r++) {
            int i = c0, y = r;
            while (imgs[i].memory != STRIX_HOST || y >= strix_stage_rows(&imgs[i])) {
                if (imgs[i].memory == STRIX_HOST) y -= strix_stage_rows(&imgs[i]);
                i++;
            }
            size_t dst_off, len;
            const uint8_t *src = strix_stage_row(&imgs[i], y, &dst_off, &len);
            memcpy(fb->host_frames + fb->place[i].y + dst_off, src, len);
        }
        if (end > off)
            CUDA_TRY(cudaMemcpyAsync(fb->frames + off, fb->host_frames + off, end - off, cudaMemcpyHostToDevice, up),
                     "upload the frames");
        off = end;
    }
    return STRIX_OK;
}

/* Frames in device memory were written on some other stream; FFmpeg's
 * NVDEC copies its frames on the legacy default stream, which our
 * non-blocking streams do not wait for by themselves: order the letterbox
 * after everything queued there so far (no host wait). */
static strix_status order_device_frames(strix_cuda_backend *b, const strix_image *imgs, int n, strix_error *err)
{
    int device_frames = 0;
    for (int i = 0; i < n; i++) device_frames |= imgs[i].memory == STRIX_DEVICE;
    if (device_frames) {
        CUDA_TRY(cudaEventRecord(b->legacy_done, cudaStreamLegacy), "order device frames after their writer");
        CUDA_TRY(cudaStreamWaitEvent(b->stream, b->legacy_done, 0), "order device frames after their writer");
    }
    return STRIX_OK;
}

/* The letterbox parameters of frame im (letterbox li) and its planes: a
 * staged or pinned frame is at its place in the device frames `frames`; one
 * in device memory is read where it is. */
static void frame_lb_params(const strix_image *im, const strix_letterbox_info *li, const uint8_t *frames,
                            const strix_stage_place *place, strix_lb_params *lb, const uint8_t **y, const uint8_t **uv)
{
    const int nv12 = im->format == STRIX_NV12;
    *lb = (strix_lb_params){im->width, im->height, strix_stage_row_bytes(im, 0), im->format == STRIX_BGR,
                            li->dst_w, li->dst_h, li->new_w, li->new_h, li->left, li->top,
                            nv12, strix_stage_row_bytes(im, 1), {0}};
    if (im->memory == STRIX_DEVICE) {
        *y = im->data, *uv = im->uv;
        if (im->stride) lb->src_pitch = im->stride;
        if (im->uv_stride) lb->uv_pitch = im->uv_stride;
    } else {
        *y = frames + place->y, *uv = frames + place->uv;
        lb->src_pitch = place->pitch, lb->uv_pitch = place->uv_pitch;
    }
    if (!nv12) {
        *uv = NULL;
        return;
    }
    strix_yuv_coeffs c;
    strix_yuv_coeffs_init(&c, im->colorspace, im->full_range);
    const int yuv[6] = {c.cy, c.crv, c.cgu, c.cgv, c.cbu, c.yoff};
    memcpy(lb->yuv, yuv, sizeof yuv);
}

/* One letterbox launch per frame (staged in fb, pinned, or in device
 * memory) into its slot of the input tensor, on the compute stream (the
 * synchronous path). */
static strix_status letterbox_frames(strix_cuda_backend *b, const strix_image *imgs, int n,
                                     const strix_letterbox_info *info, const frame_bufs *fb, strix_error *err)
{
    size_t per_image = (size_t)b->h * b->w * 3 * b->esz;
    strix_status st = order_device_frames(b, imgs, n, err);
    if (st) return st;
    for (int i = 0; i < n; i++) {
        strix_lb_params lb;
        const uint8_t *y, *uv;
        frame_lb_params(&imgs[i], &info[i], fb->frames, &fb->place[i], &lb, &y, &uv);
        CUDA_TRY(strix_cuda_letterbox((char *)input_slot(b) + i * per_image, b->dt, y, uv, &lb,
                                      (strix_stream)b->stream),
                 "letterbox a frame");
    }
    return STRIX_OK;
}

/* The asynchronous path's letterbox, part 1: lane L's frame descriptors
 * (its frames in L->fb.frames, staged or pinned, or in device memory), written to its
 * pinned memory and uploaded on the copy stream with its frames. */
static strix_status upload_descs(strix_cuda_backend *b, cuda_lane *L, const strix_image *imgs, int n,
                                 const strix_letterbox_info *info, strix_error *err)
{
    if (n > STRIX_LB_MAX_FRAMES)
        return strix_fail(err, STRIX_E_ARG, "a batch of %d images is more than the GPU letterbox takes (%d)", n,
                          STRIX_LB_MAX_FRAMES);
    size_t bytes = (size_t)n * sizeof(strix_lb_frame);
    strix_status st = host_reserve((void **)&L->host_descs, &L->host_descs_cap, bytes, "letterbox descriptors", err);
    if (!st) st = dev_reserve((void **)&L->descs, &L->descs_cap, bytes, "letterbox descriptors", err);
    if (st) return st;
    for (int i = 0; i < n; i++) {
        strix_lb_params lb;
        const uint8_t *y, *uv;
        frame_lb_params(&imgs[i], &info[i], L->fb.frames, &L->fb.place[i], &lb, &y, &uv);
        if (!strix_lb_params_ok(&lb, y != NULL, uv != NULL))
            return strix_fail(err, STRIX_E_ARG, "image %d (%dx%d): its letterbox parameters are invalid", i,
                              imgs[i].width, imgs[i].height);
        strix_lb_frame_init(&L->host_descs[i], &lb, y, uv);
    }
    CUDA_TRY(cudaMemcpyAsync(L->descs, L->host_descs, bytes, cudaMemcpyHostToDevice, b->copy_stream),
             "upload the letterbox descriptors");
    return STRIX_OK;
}

/* Part 2, on the compute stream after the upload: every frame of the batch
 * in one launch into the input tensor. */
static strix_status letterbox_batch(strix_cuda_backend *b, const cuda_lane *L, const strix_image *imgs, int n,
                                    strix_error *err)
{
    strix_status st = order_device_frames(b, imgs, n, err);
    if (st) return st;
    CUDA_TRY(strix_cuda_letterbox_batch(input_slot(b), b->dt, L->descs, n, b->w, b->h, (strix_stream)b->stream),
             "letterbox a batch");
    return STRIX_OK;
}

/* NMS into db on the device, then the download of its boxes to its pinned
 * memory, on the compute stream.  The download is the whole [N][max_det][6]
 * buffer (each image's kept boxes first, then slack), not only the kept
 * boxes: their total is known on the device only, and copying just that
 * would take a second round trip (counts down, wait, boxes down) per batch,
 * some 10-20 us, where the slack costs less (batch 64, max_det 300: 460 kB,
 * about 10 us of PCIe beside an 8 ms forward; batch 1: 7 kB), and
 * unpack_dets reads only the kept rows. */
static strix_status nms_on_device(strix_cuda_backend *b, const strix_nms_params *np, det_bufs *db, strix_error *err)
{
    const strix_plan *pl = b->plan;
    strix_nms_gpu_params gp = {pl->n, (int)pl->anchors, b->prog->nc, np->conf, np->iou,
                               np->max_det, np->max_nms, np->agnostic, np->classes};
    size_t ws = strix_cuda_nms_workspace(&gp);
    if (ws == SIZE_MAX)
        return strix_fail(err, STRIX_E_DEVICE, "%s:%d: cannot size the NMS sort on cuda:%d; check the device with nvidia-smi",
                          __FILE__, __LINE__, b->device);
    size_t dets = (size_t)pl->n * np->max_det * 6 * sizeof(float), counts = (size_t)pl->n * sizeof(int);
    strix_status st = dev_reserve(&b->nms_ws, &b->nms_ws_cap, ws, "NMS workspace", err);
    if (!st) st = dev_reserve((void **)&db->dets, &db->dets_cap, dets, "detections", err);
    if (!st) st = dev_reserve((void **)&db->counts, &db->counts_cap, counts, "detection counts", err);
    if (!st) st = host_reserve((void **)&db->host_dets, &db->host_dets_cap, dets, "detection staging", err);
    if (!st) st = host_reserve((void **)&db->host_counts, &db->host_counts_cap, counts, "count staging", err);
    if (st) return st;
    CUDA_TRY(strix_cuda_nms(db->dets, db->counts, b->decoded, &gp, b->nms_ws, (strix_stream)b->stream), "NMS");
    CUDA_TRY(cudaMemcpyAsync(db->host_dets, db->dets, dets, cudaMemcpyDeviceToHost, b->stream),
             "download the detections");
    CUDA_TRY(cudaMemcpyAsync(db->host_counts, db->counts, counts, cudaMemcpyDeviceToHost, b->stream),
             "download the detection counts");
    return STRIX_OK;
}

/* The downloaded boxes of n images into the model's layout. */
static void unpack_dets(const det_bufs *db, int n, int max_det, strix_detection *dets, int *counts)
{
    for (int i = 0; i < n; i++) {
        counts[i] = db->host_counts[i];
        for (int k = 0; k < counts[i]; k++) {
            const float *d = db->host_dets + ((size_t)i * max_det + k) * 6;
            dets[(size_t)i * max_det + k] = (strix_detection){d[0], d[1], d[2], d[3], d[4], (int)d[5]};
        }
    }
}

/* A detect call against the plan: the model letterboxes to the planned shape. */
static strix_status check_detect(const strix_cuda_backend *b, int n, const strix_letterbox_info *info,
                                 const strix_nms_params *np, strix_error *err)
{
    if (!b->planned) return not_planned(err);
    if (n != b->n || np->max_det < 1)
        return strix_fail(err, STRIX_E_INTERNAL, "engine/cuda/backend.c: detect on %d images with max_det %d, planned for %d",
                          n, np->max_det, b->n);
    for (int i = 0; i < n; i++)
        if (info[i].dst_w != b->w || info[i].dst_h != b->h)
            return strix_fail(err, STRIX_E_INTERNAL, "engine/cuda/backend.c: image %d letterboxed to %dx%d, planned %dx%d",
                              i, info[i].dst_w, info[i].dst_h, b->w, b->h);
    return STRIX_OK;
}

static strix_status cuda_detect(strix_backend *base, const strix_image *imgs, int n,
                                const strix_letterbox_info *info, const strix_nms_params *np,
                                strix_detection *dets, int *counts, strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    strix_status st = check_detect(b, n, info, np, err);
    if (st) return st;
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    range_push(b, "letterbox %d", n);
    st = stage_frames(imgs, n, &b->fb, b->stream, err);
    if (!st) st = letterbox_frames(b, imgs, n, info, &b->fb, err);
    range_pop(b);
    if (st) return st;
    range_push(b, "forward %dx%dx%d", b->n, b->h, b->w);
    st = enqueue_forward(b, err);
    range_pop(b);
    if (st) return st;
    range_push(b, "nms");
    st = nms_on_device(b, np, &b->db, err);
    if (!st) st = finish(b, "detection", err);
    range_pop(b);
    if (st) return st;
    unpack_dets(&b->db, n, np->max_det, dets, counts);
    return STRIX_OK;
}

/* Queue lane's batch with b's current compute context (the lane's own,
 * swapped in: cuda_detect_submit). */
static strix_status enqueue_lane(strix_cuda_backend *b, int lane, const strix_image *imgs, int n,
                                 const strix_letterbox_info *info, const strix_nms_params *np, strix_error *err)
{
    cuda_lane *L = &b->lanes[lane];
    strix_status st;
    range_push(b, "upload %d (lane %d)", n, lane);
    st = stage_frames(imgs, n, &L->fb, b->copy_stream, err);
    if (!st) st = upload_descs(b, L, imgs, n, info, err);
    range_pop(b);
    if (st) return st;
    CUDA_TRY(cudaEventRecord(L->uploaded, b->copy_stream), "record a batch's upload event");
    CUDA_TRY(cudaStreamWaitEvent(b->stream, L->uploaded, 0), "order a batch after its upload");
    range_push(b, "letterbox %d (lane %d)", n, lane);
    st = letterbox_batch(b, L, imgs, n, err);
    range_pop(b);
    if (st) return st;
    range_push(b, "forward %dx%dx%d (lane %d)", b->n, b->h, b->w, lane);
    st = enqueue_forward(b, err);
    range_pop(b);
    if (st) return st;
    range_push(b, "nms (lane %d)", lane);
    st = nms_on_device(b, np, &L->db, err);
    range_pop(b);
    if (st) return st;
    CUDA_TRY(cudaEventRecord(L->done, b->stream), "record a batch's completion event");
    L->n = n;
    L->max_det = np->max_det;
    L->queued = 1;
    return STRIX_OK;
}

/* Queue lane's batch: upload on the copy stream, the rest on the lane's
 * compute stream (lane 0 the backend's own, the others their cuda_ctx)
 * behind the upload's event, then the lane's `done` event. */
static strix_status cuda_detect_submit(strix_backend *base, int lane, const strix_image *imgs, int n,
                                       const strix_letterbox_info *info, const strix_nms_params *np,
                                       strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    if (!b->async || lane < 0 || lane >= STRIX_MAX_IN_FLIGHT || b->lanes[lane].queued)
        return strix_fail(err, STRIX_E_INTERNAL, "engine/cuda/backend.c: submit on lane %d, which is %s", lane,
                          b->async ? "busy or does not exist" : "not set up (cuda_async off)");
    strix_status st = check_detect(b, n, info, np, err);
    if (st) return st;
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    if (lane) ctx_swap(b, &b->lane_ctx[lane]);
    st = enqueue_lane(b, lane, imgs, n, info, np, err);
    if (lane) ctx_swap(b, &b->lane_ctx[lane]);
    return st;
}

static strix_status cuda_detect_wait(strix_backend *base, int lane, strix_detection *dets, int *counts,
                                     strix_error *err)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    if (!b->async || lane < 0 || lane >= STRIX_MAX_IN_FLIGHT || !b->lanes[lane].queued)
        return strix_fail(err, STRIX_E_INTERNAL, "engine/cuda/backend.c: wait on lane %d, which holds no batch", lane);
    cuda_lane *L = &b->lanes[lane];
    L->queued = 0;
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    range_push(b, "collect (lane %d)", lane);
    cudaError_t e = cudaEventSynchronize(L->done);
    range_pop(b);
    if (e != cudaSuccess) return device_fail(err, __FILE__, __LINE__, e, "the detection failed on the GPU");
    unpack_dets(&L->db, L->n, L->max_det, dets, counts);
    return STRIX_OK;
}

/* ------------------------------------------------- perf/gpu_bench hooks */

strix_status strix_cuda_backend_run_resident(strix_cuda_backend *b, strix_error *err)
{
    if (!b->planned) return not_planned(err);
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    strix_status st = enqueue_forward(b, err);
    return st ? st : finish(b, "forward pass", err);
}

strix_status strix_cuda_backend_layer_times(strix_cuda_backend *b, double *ms, int n_layers, strix_error *err)
{
    if (!b->planned) return not_planned(err);
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    cudaEvent_t *ev = calloc(2 * (size_t)n_layers, sizeof *ev);
    unsigned char *seen = calloc((size_t)n_layers, 1);
    strix_status st = STRIX_OK;
    if (!ev || !seen) st = strix_fail(err, STRIX_E_NOMEM, "out of memory for layer-timing events");
    int made = 0;
    for (; !st && made < 2 * n_layers; made++) {
        cudaError_t e = cudaEventCreate(&ev[made]);
        if (e != cudaSuccess) st = device_fail(err, __FILE__, __LINE__, e, "create a layer-timing event");
    }
    if (!st) {
        b->layer_ev = ev, b->layer_seen = seen, b->n_layer_ev = n_layers;
        st = run_nodes(b, err); /* eager: events cannot time the nodes of a replayed graph */
        b->layer_ev = NULL, b->layer_seen = NULL, b->n_layer_ev = 0;
        if (!st) st = finish(b, "timed forward pass", err);
    }
    for (int l = 0; l < n_layers && !st; l++) {
        float t = 0; /* a layer with no op of its own (a Concat the planner aliased) records nothing */
        cudaError_t e = seen[l] ? cudaEventElapsedTime(&t, ev[2 * l], ev[2 * l + 1]) : cudaSuccess;
        if (e != cudaSuccess) st = device_fail(err, __FILE__, __LINE__, e, "read a layer-timing event");
        ms[l] = t;
    }
    for (int k = 0; k < made; k++) cudaEventDestroy(ev[k]);
    free(ev);
    free(seen);
    return st;
}

static void cuda_free(strix_backend *base)
{
    strix_cuda_backend *b = (strix_cuda_backend *)base;
    if (!b) return;
    /* teardown: errors here have nowhere to go and change nothing */
    cudaSetDevice(b->device);
    if (b->stream) cudaStreamSynchronize(b->stream);
    if (b->copy_stream) cudaStreamSynchronize(b->copy_stream);
    for (int l = 1; l < STRIX_MAX_IN_FLIGHT; l++)
        if (b->lane_ctx[l].stream) cudaStreamSynchronize(b->lane_ctx[l].stream);
    if (b->graph) cudaGraphExecDestroy(b->graph);
    for (int k = 0; k < GRAPH_CACHE; k++)
        if (b->graphs[k].graph) cudaGraphExecDestroy(b->graphs[k].graph);
    if (b->cublas) cublasDestroy(b->cublas);
    void *dev[] = {b->cublas_ws, b->weights, b->bias_mem, b->arena, b->ws, b->decoded, b->input32,
                   b->fb.frames, b->nms_ws, b->db.dets, b->db.counts};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        if (dev[i]) cudaFree(dev[i]);
    void *host[] = {b->host, b->fb.host_frames, b->db.host_dets, b->db.host_counts};
    for (size_t i = 0; i < sizeof host / sizeof *host; i++)
        if (host[i]) cudaFreeHost(host[i]);
    free(b->fb.place);
    for (int l = 0; l < STRIX_MAX_IN_FLIGHT; l++) {
        cuda_lane *L = &b->lanes[l];
        void *ld[] = {L->fb.frames, L->db.dets, L->db.counts, L->descs},
             *lh[] = {L->fb.host_frames, L->db.host_dets, L->db.host_counts, L->host_descs};
        for (size_t i = 0; i < 4; i++) {
            if (ld[i]) cudaFree(ld[i]);
            if (lh[i]) cudaFreeHost(lh[i]);
        }
        free(L->fb.place);
        if (L->uploaded) cudaEventDestroy(L->uploaded);
        if (L->done) cudaEventDestroy(L->done);
        ctx_free(&b->lane_ctx[l]);
    }
    if (b->copy_stream) cudaStreamDestroy(b->copy_stream);
    if (b->legacy_done) cudaEventDestroy(b->legacy_done);
    if (b->stream) cudaStreamDestroy(b->stream);
    cudaGetLastError();
    free(b->bias_off);
    free(b->fold);
    free(b);
}

/* Frame memory (strix_model_alloc_pinned): page-locked, so the frames'
 * DMA reads it where it is; portable, so every device (and context) takes
 * it as pinned.  Called from any thread (a video's reader): cudaSetDevice
 * is per thread, and the forward's graph capture is thread-local
 * (cudaStreamCaptureModeThreadLocal), so an allocation on another thread
 * neither fails nor breaks it. */
static strix_status cuda_pinned_alloc(strix_backend *base, size_t bytes, void **out, strix_error *err)
{
    const strix_cuda_backend *b = (const strix_cuda_backend *)base;
    CUDA_TRY(cudaSetDevice(b->device), "select the CUDA device");
    cudaError_t e = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        *out = NULL;
        char msg[160];
        snprintf(msg, sizeof msg, "cudaHostAlloc of %zu MiB of page-locked frame memory", (bytes >> 20) + 1);
        return device_fail(err, __FILE__, __LINE__, e, msg);
    }
    return STRIX_OK;
}

static void cuda_pinned_free(strix_backend *base, void *p)
{
    const strix_cuda_backend *b = (const strix_cuda_backend *)base;
    /* nothing to report to: a failure here changes nothing for the caller */
    if (cudaSetDevice(b->device) == cudaSuccess) cudaFreeHost(p);
    cudaGetLastError();
}

static const strix_backend_ops cuda_ops = {
    .plan = cuda_plan,
    .forward = cuda_forward,
    .detect = cuda_detect,
    .detect_submit = cuda_detect_submit,
    .detect_wait = cuda_detect_wait,
    .free = cuda_free,
    .pinned_alloc = cuda_pinned_alloc,
    .pinned_free = cuda_pinned_free,
    .run_op = cuda_run_op,
    .layer_enter = cuda_layer_enter,
    .layer_leave = cuda_layer_leave,
    .layer_mark = cuda_layer_mark,
};

strix_cuda_graph_stats strix_cuda_backend_graph_stats(const strix_cuda_backend *b) { return b->gstats; }

int strix_cuda_backend_upsample_folds(const strix_cuda_backend *b)
{
    int folds = 0;
    for (int i = 0; b->planned && i < b->prog->n_nodes; i++)
        folds += b->prog->nodes[i].op == STRIX_OP_UPSAMPLE && b->fold[i] >= 0;
    return folds;
}

strix_cuda_backend *strix_cuda_backend_of(strix_backend *b)
{
    return b && b->ops == &cuda_ops ? (strix_cuda_backend *)b : NULL;
}
