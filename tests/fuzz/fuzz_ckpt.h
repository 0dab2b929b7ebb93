/* fuzz_ckpt.h — the checks the checkpoint fuzz targets (fuzz_pt, fuzz_onnx)
 * make on whatever a reader accepted. */
#ifndef STRIX_FUZZ_CKPT_H
#define STRIX_FUZZ_CKPT_H

#include <stdlib.h>

#include "checkpoint.h"

/* What a checkpoint reader accepted must hold together: every tensor is
 * found again by its own name, the small ones convert to fp32 (their data
 * is read), every class name is there. */
static inline void fuzz_checkpoint_walk(const strix_checkpoint *c)
{
    strix_error err;
    for (size_t i = 0; i < strix_st_count(c->tensors); i++) {
        const strix_st_tensor *t = strix_st_get(c->tensors, i);
        if (strix_st_find(c->tensors, t->name) != t) abort();
        if (t->numel <= 4096) {
            float buf[4096];
            strix_st_to_f32(buf, t, &err);
        }
    }
    for (int i = 0; i < c->n_names; i++)
        if (!c->names[i]) abort();
}

#endif
