/* weights.h — binding a safetensors checkpoint to a lowered program. */
#ifndef STRIX_WEIGHTS_H
#define STRIX_WEIGHTS_H

#include "graph.h"

/* Fill blob (p->weight_floats floats) from the checkpoint at path: fused or
 * unfused (BatchNorm folded here), F32/F16/BF16.  Errors: STRIX_E_IO,
 * STRIX_E_WEIGHTS (malformed file, wrong shape or dtype, missing or
 * unexpected tensors, all named), STRIX_E_NOMEM. */
strix_status strix_weights_load(const strix_program *p, const char *path, float *blob,
                                strix_error *err);

#endif
