/* weights.h — binding a checkpoint's tensors to a lowered program. */
#ifndef STRIX_WEIGHTS_H
#define STRIX_WEIGHTS_H

#include "graph.h"
#include "safetensors.h"

/* Fill blob (p->weight_floats floats) from the tensor set f (an open
 * checkpoint, loaders/checkpoint.h): fused or unfused (BatchNorm folded here),
 * F32/F16/BF16.  Errors: STRIX_E_WEIGHTS (wrong shape or dtype, missing or
 * unexpected tensors, all named), STRIX_E_NOMEM. */
strix_status strix_weights_bind(const strix_program *p, strix_st_file *f, float *blob, strix_error *err);

/* Ultralytics' detection models (and segment, pose, obb) train with
 * BatchNorm2d(eps=1e-3) (initialize_weights); ClassificationModel does not
 * call it and keeps PyTorch's 1e-5.  The checkpoint's state_dict does not
 * store eps: strix_bn_eps gives the program's. */
#define STRIX_BN_EPS 1e-3
#define STRIX_BN_EPS_CLASSIFY 1e-5
double strix_bn_eps(const strix_program *p);

/* Fold BatchNorm into a convolution in place: w ([cout, per_out], any
 * per-output layout) scaled by gamma / sqrt(var + eps); bias[o] set to
 * beta - mean * that scale. */
void strix_fold_bn(float *w, float *bias, const float *gamma, const float *beta, const float *mean,
                   const float *var, int cout, size_t per_out, double eps);

/* PyTorch OIHW weights (+ bias, or zeros when NULL) into the engine's OHWI
 * layout.  dst_bias may alias bias. */
void strix_fold_conv(float *dst_w, float *dst_bias, const float *w, const float *bias, int cout,
                     int cig, int kh, int kw);

#endif
