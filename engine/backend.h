/* backend.h — the one interface between the model (engine/model.c) and a
 * backend: the CPU (engine/cpu/backend.h, plain C11, the reference) and the
 * CUDA one (engine/cuda/backend.h, a CUDA=1 build).  A backend owns its
 * memory (arena, workspace, staging) and runs the ops of a program over the
 * model's plan; the walk over the program is the executor's (exec.h), which
 * calls the backend once per node.
 *
 * Every backend's state begins with a strix_backend whose ops point at the
 * backend's functions; the model only ever calls through them. */
#ifndef STRIX_BACKEND_H
#define STRIX_BACKEND_H

#include "graph.h"
#include "letterbox.h"
#include "postprocess.h"
#include "strix.h"

typedef struct strix_backend strix_backend;

/* What a backend is created with, besides its program and weights. */
typedef struct strix_backend_config {
    int device;  /* CUDA device index; -1: the CPU */
    int half;    /* CUDA: fp16 activations and weights (fp32 biases) */
    int nvtx;    /* CUDA: NVTX ranges per pipeline stage and per layer */
    int graphs;  /* CUDA: capture the forward once per shape and replay it */
    int sync;    /* CUDA: synchronise after every op (implies no graphs) */
    int async;   /* CUDA: set up detect_submit's lanes (a copy stream, events, per-lane staging;
                    compute streams, cuBLAS handles and activation memory per lane) */
    int kernels; /* CUDA: kernel set, 1, 2 or 3 (strix_model_options.cuda_kernels) */
    strix_cpu_isa cpu_isa; /* CPU: the convolution's instruction set, one the CPU runs (not AUTO) */
    int cpu_spin_us;       /* CPU: how long idle threads poll before blocking (engine/cpu/team.h) */
    int cpu_exact_conv;    /* CPU: no Winograd (strix_model_options.cpu_exact_conv) */
    int cpu_bf16;          /* CPU: the dense SiLU convolutions in bf16 (conv_bf16.h: BFDOT, else its C path) */
} strix_backend_config;

typedef struct strix_backend_ops {
    /* Make the backend's memory fit pl (a plan of its program, valid until
     * the next call); allocates only when the shape needs more. */
    strix_status (*plan)(strix_backend *b, const strix_plan *pl, strix_error *err);
    /* input [N, H, W, 3] fp32 RGB in [0, 1] (host) -> decoded [N, A, 4 + nc]
     * fp32 (host): cx, cy, w, h in input pixels, sigmoid scores. */
    strix_status (*forward)(strix_backend *b, const float *input, float *decoded, strix_error *err);
    /* n == N images, each letterboxed into the planned H x W with info[i],
     * forward, decode and NMS with np: dets[i * np->max_det + k], k <
     * counts[i], image i's detections in tensor pixels by decreasing score. */
    strix_status (*detect)(strix_backend *b, const strix_image *imgs, int n, const strix_letterbox_info *info,
                           const strix_nms_params *np, strix_detection *dets, int *counts, strix_error *err);
    /* Optional (NULL: the model completes every batch with detect): detect
     * split in two.  detect_submit queues what detect does for one batch on
     * lane `lane` (0..STRIX_MAX_IN_FLIGHT-1: that batch's staging and
     * detection buffers) and returns; detect_wait waits for the lane's batch
     * and fills dets/counts as detect does.  A lane is waited for before it
     * is submitted again; lanes run in submission order over the one plan,
     * so the model waits for every lane before it plans another shape. */
    strix_status (*detect_submit)(strix_backend *b, int lane, const strix_image *imgs, int n,
                                  const strix_letterbox_info *info, const strix_nms_params *np, strix_error *err);
    strix_status (*detect_wait)(strix_backend *b, int lane, strix_detection *dets, int *counts, strix_error *err);
    void (*free)(strix_backend *b);
    /* strix_model_alloc_pinned's frame memory: bytes (> 0, a multiple of
     * STRIX_PINNED_ALIGN) aligned to STRIX_PINNED_ALIGN, page-locked where
     * the device copies from it; pinned_free(p) gives it back.  Both may run
     * on any thread, concurrently with the other entries: they read nothing
     * of the backend but its device index. */
    strix_status (*pinned_alloc)(strix_backend *b, size_t bytes, void **out, strix_error *err);
    void (*pinned_free)(strix_backend *b, void *p);
    /* Optional (NULL: no int8 path, as on CUDA): int8 calibration
     * (strix_model_quantize).  int8_begin drops any int8 state and records,
     * over the forward passes that follow (fp32), the absolute maximum of
     * each convolution's input; int8_end with apply quantises the eligible
     * convolutions with those ranges and runs them in int8 from then on,
     * without apply it drops the record and stays in fp32. */
    strix_status (*int8_begin)(strix_backend *b, strix_error *err);
    strix_status (*int8_end)(strix_backend *b, int apply, strix_error *err);
    /* The executor's entries (exec.h).  run_op: node i of the program (the
     * head of a fusion runs the nodes it covers); the others may be NULL:
     * layer_enter / layer_leave bracket each YAML layer's nodes (NVTX
     * ranges), layer_mark(layer, end) is called with the layer left (end 1,
     * -1 before the first) and the layer entered (end 0) at each change, and
     * with the last layer (end 1) after the walk (timing events). */
    strix_status (*run_op)(strix_backend *b, int i, strix_error *err);
    /* Optional (NULL: not readable): copy value v of the last run, for all
     * N images, to out as dense fp32 [N, h, w, c] (the plan's shapes). */
    strix_status (*read_value)(strix_backend *b, int v, float *out, strix_error *err);
    void (*layer_enter)(strix_backend *b, int layer);
    void (*layer_leave)(strix_backend *b, int layer);
    strix_status (*layer_mark)(strix_backend *b, int layer, int end, strix_error *err);
} strix_backend_ops;

struct strix_backend {
    const strix_backend_ops *ops;
};

/* CUDA devices usable by this build and process (0 without CUDA). */
int strix_backend_device_count(void);

/* Whether device index d (>= 0), named `name` by the user, can be used. */
strix_status strix_backend_check_device(const char *name, int d, strix_error *err);

/* The backend of c->device for program p (which must outlive it) and its
 * fused fp32 OHWI weights (p->weight_floats floats, host memory). */
strix_status strix_backend_create(strix_backend **out, const strix_program *p, const float *weights,
                                  const strix_backend_config *c, strix_error *err);

#endif
