/* exec.h — the executor: walks a planned program and dispatches each op to a
 * backend (the CPU one here; CUDA slots in beside it). */
#ifndef STRIX_EXEC_H
#define STRIX_EXEC_H

#include "graph.h"

/* Run every op of p on the CPU.  arena holds pl->arena_floats floats with the
 * input image already in place; workspace holds pl->workspace_bytes. */
void strix_cpu_execute(const strix_program *p, const strix_plan *pl, const float *weights,
                       float *arena, void *workspace);

/* Run op i alone (calibration, per-op tests and profiling); a node fused
 * into an earlier one (strix_node.fused) ran with that one and does nothing. */
void strix_cpu_execute_node(const strix_program *p, const strix_plan *pl, const float *weights,
                            float *arena, void *workspace, int i);

#endif
