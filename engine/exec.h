/* exec.h — the executor: one walk over a planned program, calling the
 * backend (backend.h) once per node. */
#ifndef STRIX_EXEC_H
#define STRIX_EXEC_H

#include "backend.h"

/* Run program p (the backend's, planned by it) on b: the nodes in program
 * order, those fused into an earlier node (strix_node.fused) skipped, each
 * YAML layer's nodes bracketed by the backend's layer hooks.  Stops at the
 * first failing op. */
strix_status strix_execute(strix_backend *b, const strix_program *p, strix_error *err);

#endif
