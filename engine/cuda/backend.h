/* backend.h — strix's CUDA backend, host side: one device, one stream, one
 * cuBLAS handle, weights uploaded once, a device arena laid out by the CPU
 * plan (same buffer offsets, in elements of the compute dtype), the forward
 * pass captured as a CUDA graph per (N, H, W) and replayed (the first run of
 * a shape is eager, the second captures), and a detect
 * path that keeps frames, the input tensor and the candidates on the GPU
 * (letterbox -> forward -> decode -> NMS): only final detections come back.
 *
 * Compiled only when the build has CUDA (STRIX_WITH_CUDA, make CUDA=1).
 * Switches, from the model options at creation (debugging aids; the tools
 * set them from STRIX_CUDA_GRAPHS / STRIX_CUDA_SYNC, tools/cudaenv.h):
 *   graphs 0  run the forward op by op instead of replaying a graph
 *   sync 1    op by op, synchronising after each op so that an
 *             asynchronous fault is reported with its op and layer
 */
#ifndef STRIX_CUDA_BACKEND_H
#define STRIX_CUDA_BACKEND_H

#include "../backend.h"

typedef struct strix_cuda_backend strix_cuda_backend;

/* CUDA devices usable by this process; 0 when there is no driver or device
 * (never fails loudly). */
int strix_cuda_device_count(void);

/* A backend (engine/backend.h's interface) on device c->device for program
 * p.  weights: the fused fp32 OHWI blob (p->weight_floats floats, host
 * memory), uploaded once (c->half: fp16 copies, biases kept fp32).  c->nvtx:
 * NVTX ranges per pipeline stage and per layer (layers are recorded at graph
 * capture: use Nsight Systems' --cuda-graph-trace=node, or graphs off).
 * c->graphs: the forward is captured once per shape and replayed; c->sync: a
 * synchronisation after every op (implies no graphs).  p must outlive the
 * backend.
 * Its plan (re)allocates the device arena, workspace and staging, and
 * re-captures the graph, only when (N, H, W) changes; forward uploads the
 * input and downloads the decoded head; detect letterboxes on the GPU
 * (info[i]'s dst size must be the plan's), and runs forward, decode and NMS
 * there: only the final detections come back. */
strix_status strix_cuda_backend_create(strix_backend **out, const strix_program *p, const float *weights,
                                       const strix_backend_config *c, strix_error *err);

/* b as a CUDA backend, or NULL when it is another backend. */
strix_cuda_backend *strix_cuda_backend_of(strix_backend *b);

/* Internal hooks for perf/gpu_bench only (not the public API; the public
 * strix_model_forward times host to host).  Both need a planned shape, and
 * run_resident a forward of it done before (its input slot holds that input).
 * run_resident: the forward on the device-resident input, the decoded head
 * left on the device (graph replay as usual), synchronised.
 * layer_times: one eager forward with a CUDA event pair around each YAML
 * layer; ms[l] = layer l's GPU time (0 for a layer with no op of its own),
 * for l < n_layers. */
strix_status strix_cuda_backend_run_resident(strix_cuda_backend *b, strix_error *err);
strix_status strix_cuda_backend_layer_times(strix_cuda_backend *b, double *ms, int n_layers, strix_error *err);

/* For tests (test_cuda_ops): how many upsamples the planned shape folds
 * into their consuming convolutions (kernel set 3,
 * strix_program_upsample_fold and strix_cuda_conv2d_fold_ok); 0 before a
 * plan. */
int strix_cuda_backend_upsample_folds(const strix_cuda_backend *b);

/* For tests (test_cuda_ops, net_graph_cache): the forward's CUDA graphs so
 * far: captures, launches (replays, a capture's first launch included) and,
 * with cuda_async, how often planning a shape reallocated a buffer the
 * graphs hold and so destroyed them all (backend.c, before cuda_plan). */
typedef struct strix_cuda_graph_stats {
    unsigned long captures, launches, invalidations;
} strix_cuda_graph_stats;
strix_cuda_graph_stats strix_cuda_backend_graph_stats(const strix_cuda_backend *b);

#endif
