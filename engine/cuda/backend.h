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

#include "graph.h"
#include "letterbox.h"
#include "postprocess.h"
#include "strix.h"

typedef struct strix_cuda_backend strix_cuda_backend;

/* CUDA devices usable by this process; 0 when there is no driver or device
 * (never fails loudly). */
int strix_cuda_device_count(void);

/* A backend on device `device` for program p.  weights: the fused fp32 OHWI
 * blob (p->weight_floats floats, host memory), uploaded once (half != 0:
 * fp16 copies, biases kept fp32).  nvtx != 0: NVTX ranges per pipeline stage
 * and per layer (layers are recorded at graph capture: use Nsight Systems'
 * --cuda-graph-trace=node, or graphs off).  graphs != 0: the forward is
 * captured once per shape and replayed; sync != 0: a synchronisation after
 * every op (implies no graphs).  p must outlive the backend. */
strix_status strix_cuda_backend_create(strix_cuda_backend **out, int device, int half, int nvtx, int graphs,
                                       int sync, const strix_program *p, const float *weights, strix_error *err);

/* Make the device arena, workspace and staging fit pl (a plan of the
 * backend's program); (re)allocates, and re-captures the graph, only when
 * (N, H, W) changes.  pl must stay valid until the next call. */
strix_status strix_cuda_backend_plan(strix_cuda_backend *b, const strix_plan *pl, strix_error *err);

/* host_input [N, H, W, 3] fp32 (RGB, [0, 1]) -> host_decoded [N, A, 4 + nc]
 * fp32 (cx, cy, w, h in input pixels, sigmoid scores), for the planned shape. */
strix_status strix_cuda_backend_forward(strix_cuda_backend *b, const float *host_input, float *host_decoded,
                                        strix_error *err);

/* n images (n == the planned N), each letterboxed on the GPU into the
 * planned H x W with info[i] (its dst size must be the plan's), forward,
 * decode and NMS with np.  dets[i * np->max_det + k], k < counts[i]: image
 * i's detections in tensor pixels, by decreasing score (the caller maps them
 * back with strix_scale_boxes). */
strix_status strix_cuda_backend_detect(strix_cuda_backend *b, const strix_image *imgs, int n,
                                       const strix_letterbox_info *info, const strix_nms_params *np,
                                       strix_detection *dets, int *counts, strix_error *err);

void strix_cuda_backend_free(strix_cuda_backend *b);

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

#endif
