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
typedef enum strix_decode_extra {
    STRIX_EXTRA_NONE = 0,
    STRIX_EXTRA_COPY,  /* Segment: mask coefficients, copied */
    STRIX_EXTRA_KPT,   /* Pose: keypoints decoded (Pose.kpts_decode) */
    STRIX_EXTRA_ANGLE  /* OBB: the angle, and the box rotated by it (dist2rbox) */
} strix_decode_extra;

typedef struct strix_decode_params {
    int nc, reg_max, levels;
    strix_decode_extra kind; /* the task channels after the class logits */
    int extra;               /* how many: nm, kpt_n * kpt_d, 1 */
    int kpt_d;               /* Pose: 2 or 3 (x, y[, visibility]) */
    int v26;                 /* Pose26: (v + anchor) * stride rather than (2v + anchor - 0.5) * stride;
                                OBB26: the angle as the head gives it, without (sigmoid - 1/4) * pi */
    int level_h[STRIX_MAX_LEVELS], level_w[STRIX_MAX_LEVELS];
    int level_stride[STRIX_MAX_LEVELS];
} strix_decode_params;

#endif
