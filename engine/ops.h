/* ops.h — the operators' parameter structs, shared by every backend (the
 * CPU's engine/cpu/ops.h, the CUDA launchers' kernels/kernels.h) and by the
 * program (engine/graph.h): small typed structs, one per op family, with no
 * tensor pointers and nothing backend-specific.  What each op computes is
 * documented at the CPU reference, engine/cpu/ops.h. */
#ifndef STRIX_OPS_H
#define STRIX_OPS_H

typedef enum strix_act { STRIX_ACT_NONE = 0, STRIX_ACT_SILU = 1 } strix_act;

typedef struct strix_conv_params {
    int kh, kw;      /* kernel size */
    int sh, sw;      /* stride */
    int ph, pw;      /* zero padding on each side */
    int dh, dw;      /* dilation */
    int groups;      /* in.c and out.c are both multiples of groups */
    strix_act act;
} strix_conv_params;

typedef struct strix_pool_params {
    int k;       /* square window */
    int stride;
    int pad;     /* implicit -inf padding on each side (PyTorch MaxPool2d) */
} strix_pool_params;

/* Ultralytics' Attention core: heads, per-head key (q, k) and value widths. */
typedef struct strix_attn_params {
    int heads, key_dim, head_dim;
    float scale; /* key_dim^-0.5 */
} strix_attn_params;

/* Detect head decode: per level its grid size and stride (input pixels per cell). */
#define STRIX_MAX_LEVELS 8
typedef struct strix_decode_params {
    int nc, reg_max, levels;
    int level_h[STRIX_MAX_LEVELS], level_w[STRIX_MAX_LEVELS];
    int level_stride[STRIX_MAX_LEVELS];
} strix_decode_params;

#endif
