/* backend.h — the CPU backend (engine/backend.h's interface): the planned
 * arena and op workspace in host memory, every op from engine/cpu/ops.h,
 * letterbox and NMS on the host.  Plain C11, the reference for every other
 * backend. */
#ifndef STRIX_CPU_BACKEND_H
#define STRIX_CPU_BACKEND_H

#include "../backend.h"
#include "team.h"

/* A CPU backend for program p with its fused fp32 OHWI weights (both must
 * outlive it); each plan's threads bound the ops' OpenMP teams. */
strix_status strix_cpu_backend_create(strix_backend **out, const strix_program *p, const float *weights,
                                      const strix_backend_config *c, strix_error *err);

/* One forward pass over the planned arena as it stands (the last input
 * given), node by node: ms[l] is the wall time of YAML layer l's nodes
 * (0 for a layer without any, e.g. a Concat written in place), n_layers at
 * least the graph's.  For per-layer profiles (perf/bench --layers); the
 * whole forward path (strix_execute) is untouched by it.  STRIX_E_ARG when
 * b is not a CPU backend. */
strix_status strix_cpu_backend_layer_times(strix_backend *b, double *ms, int n_layers, strix_error *err);

/* Every conv node's weights packed once for one instruction set's
 * micro-kernels (strix_cpu_conv2d_pack): node i's at data + off[i] (64-byte
 * aligned); what the CPU backend builds at load. */
typedef struct strix_cpu_packed {
    strix_cpu_isa isa; /* never AUTO */
    float *data;
    size_t *off; /* per node of the program; unused for other ops */
} strix_cpu_packed;

strix_status strix_cpu_packed_build(strix_cpu_packed *pk, strix_cpu_isa isa, const strix_program *p,
                                    const float *weights, strix_error *err);
void strix_cpu_packed_free(strix_cpu_packed *pk);

/* Run node i of p alone on team's threads (NULL: the caller's only; the
 * plan's workspace must be sized for at least the team's thread count), its
 * convolution with pk's packed weights and micro-kernels (NULL: the widest
 * this CPU runs, packed per call), over an arena and workspace of the caller's, laid
 * out by pl (calibration, per-op tests; the CPU backend's run_op).  A node
 * fused into an earlier one (strix_node.fused) ran with that one and does
 * nothing here. */
void strix_cpu_execute_node(const strix_cpu_packed *pk, strix_cpu_team *team, const strix_program *p,
                            const strix_plan *pl, const float *weights, float *arena, void *workspace, int i);

#endif
