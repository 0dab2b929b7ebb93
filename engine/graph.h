/* graph.h — the model as Ultralytics sees it (layers with resolved channels,
 * repeats and arguments) and as strix runs it (a flat list of primitive ops
 * over channel slices of planned buffers).
 *
 *   YAML rows --strix_graph_build--> strix_graph (one strix_layer per row)
 *            --strix_program_build--> strix_program (ops, values, buffers)
 *            --strix_plan_build-----> strix_plan (shapes + arena offsets for one (N, H, W))
 */
#ifndef STRIX_GRAPH_H
#define STRIX_GRAPH_H

#include <stddef.h>
#include "ops.h"
#include "tensor.h"
#include "model_yaml.h"
#include "strix.h"

typedef enum strix_module {
    STRIX_MOD_CONV,
    STRIX_MOD_DWCONV,
    STRIX_MOD_BOTTLENECK,
    STRIX_MOD_C2F,
    STRIX_MOD_C3,
    STRIX_MOD_C3K,
    STRIX_MOD_C3K2,
    STRIX_MOD_SPPF,
    STRIX_MOD_C2PSA,
    STRIX_MOD_UPSAMPLE,
    STRIX_MOD_CONCAT,
    STRIX_MOD_DETECT,  /* Detect and its task heads: Segment, Pose, OBB (and YOLO26's) */
    STRIX_MOD_CLASSIFY
} strix_module;

#define STRIX_CLASSIFY_HIDDEN 1280 /* Classify's conv width (Ultralytics' c_, efficientnet_b0's) */

typedef struct strix_layer {
    int index, line;
    int from[STRIX_YAML_MAX_FROM]; /* absolute layer indices; -1 means the image */
    int n_from;
    char from_text[64];
    int n;             /* repeats after depth scaling, as printed */
    int copies;        /* nn.Sequential copies (non-repeat module with n > 1) */
    strix_module kind;
    char name[32];
    int c1, c2;        /* channels in (first input) and out */
    /* resolved arguments (only those of the module's kind are meaningful) */
    int k, s, p, g, d, act;      /* Conv / DWConv; p < 0: auto padding */
    int inner;                   /* repeats inside C2f / C3 / C3k / C3k2 / C2PSA */
    int shortcut, c3k, ck;       /* ck: C3k bottleneck kernel */
    double e;
    int bk0, bk1;                /* Bottleneck kernel sizes */
    int pool_k, pool_n, pool_act, pool_add; /* SPPF */
    int up;                      /* Upsample factor */
    int attn;                    /* C3k2: Bottleneck + PSABlock blocks (YOLO26) */
    int nc, reg_max, legacy;     /* Detect */
    int end2end;                 /* Detect: a second, one-to-one head (one2one_cv2/cv3: YOLO26) */
    int one2one;                 /* Detect with end2end: run the one-to-one head (top-k, no NMS);
                                    0: the one-to-many head with NMS (model.c chooses) */
    strix_task task;             /* Detect: DETECT, SEGMENT, POSE or OBB; Classify: CLASSIFY */
    int v26;                     /* Segment26 (Proto26), Pose26 (cv4_kpts, no 2x-0.5 offset), OBB26 (raw angle) */
    int nm, npr;                 /* Segment: mask coefficients, proto channels (width-scaled) */
    int kpt_n, kpt_d;            /* Pose: kpt_shape */
    int ne;                      /* OBB: angle channels (1) */
    int extra;                   /* task channels per anchor after the class scores: nm, kpt_n*kpt_d, ne */
    char args_text[128];         /* arguments as Ultralytics prints them */
} strix_layer;

typedef struct strix_graph {
    char path[512];
    char scale;
    double depth, width;
    int max_channels;
    int nc, reg_max, end2end;
    int kpt_n, kpt_d;  /* the YAML's kpt_shape (0, 0: none) */
    strix_task task;   /* the last layer's */
    strix_layer *layers;
    int n_layers;
    int max_stride;
} strix_graph;

/* Resolve rows into layers exactly as Ultralytics' parse_model does.
 * scale: 0 = the YAML's `scale:` key or the letter in the file name
 * (yolov8n.yaml -> n); nc_override 0 = the YAML's nc. */
strix_status strix_graph_build(strix_graph *g, const strix_yaml_model *y, char scale,
                               int nc_override, strix_error *err);
void strix_graph_free(strix_graph *g);

/* ---------------------------------------------------------------- program */

typedef enum strix_op {
    STRIX_OP_CONV,
    STRIX_OP_MAXPOOL,
    STRIX_OP_UPSAMPLE,
    STRIX_OP_COPY,
    STRIX_OP_ATTENTION,
    STRIX_OP_DECODE,
    STRIX_OP_SHUFFLE2, /* [N, H, W, 4C] -> [N, 2H, 2W, C]: ConvTranspose2d(k=2, s=2)'s scatter after its GEMM */
    STRIX_OP_ADD,      /* out = in + res, elementwise (Proto26's feature sum) */
    STRIX_OP_AVGPOOL,  /* [N, H, W, C] -> [N, 1, 1, C]: AdaptiveAvgPool2d(1) (Classify) */
    STRIX_OP_SOFTMAX   /* softmax over the channels of each pixel (Classify's probabilities) */
} strix_op;

typedef enum strix_buf_kind {
    STRIX_BUF_SPATIAL, /* [N, h, w, c] */
    STRIX_BUF_HEAD,    /* [N, A, 4*reg_max + nc]: raw Detect logits, one region per level */
    STRIX_BUF_OUT      /* [N, A, 4 + nc]: decoded boxes and scores */
} strix_buf_kind;

typedef struct strix_buffer {
    strix_buf_kind kind;
    int c;              /* channels per pixel (SPATIAL), or per anchor */
} strix_buffer;

/* A value: channels [c0, c0 + c) of a buffer.  Head values also name the
 * Detect level whose anchor region they occupy. */
typedef struct strix_value {
    int buf, c0, c;
    int level;          /* HEAD buffer: level index; otherwise -1 */
} strix_value;

typedef struct strix_node {
    strix_op op;
    int layer;          /* YAML layer index (errors, profiling) */
    int out, out2;      /* value ids (out2: ATTENTION's gathered v) */
    int in, res;        /* value ids; res: residual added after the activation, or -1 */
    /* CONV */
    strix_conv_params conv;
    int cin, cout;
    int plain;          /* nn.Conv2d with bias (tensors NAME.weight, NAME.bias) rather than
                           Ultralytics Conv (NAME.conv.weight + NAME.bn.*) */
    int linear;         /* plain, from nn.Linear: NAME.weight is [cout, cin] (a 1x1 conv on a 1x1 map) */
    int convt;          /* plain, from nn.ConvTranspose2d(cin, C, k=2, s=2): NAME.weight [cin, C, 2, 2] run as
                           a 1x1 conv to cout = 4C channels, channel (dy*2 + dx)*C + c, which a SHUFFLE2
                           node then spreads over 2x2 pixels */
    int functional;     /* UPSAMPLE: F.interpolate in Ultralytics (Proto26), not an nn.Upsample:
                           no module, so thop counts no FLOPs for it */
    int twin;           /* Detect head conv with an unrun copy in the other head (end2end): inspect
                           counts it twice in the unfused model */
    char wname[96];
    size_t woff, boff;  /* offsets (floats) of OHWI weights and bias in the weight blob */
    /* MAXPOOL / UPSAMPLE / ATTENTION */
    strix_pool_params pool;
    int scale;
    strix_attn_params attn;
    /* Fusions, decided by strix_program_build so that every backend and
     * inspect see the same ones.  cascade > 1 (MAXPOOL): this node and the
     * cascade - 1 max-pools after it form one SPPF cascade (k x k, stride 1,
     * 'same' padding, each reading the previous one's output), run as one
     * op; those later nodes have fused = 1 and the executor skips them. */
    int cascade;
    int fused;
} strix_node;

#define STRIX_CASCADE_MAX 8 /* max-pools fused into one cascade */
/* Pose26's flow_model (RealNVP: 6 couplings of two 2-64-64-2 MLPs), trained, never run */
#define STRIX_REALNVP_PARAMS 53784
#define STRIX_REALNVP_MODULES 66

typedef struct strix_program {
    strix_node *nodes;
    int n_nodes, cap_nodes;
    strix_value *values;
    int n_values, cap_values;
    strix_buffer *bufs;
    int n_bufs, cap_bufs;
    int input;          /* value id of the [N, H, W, 3] image */
    int *layer_out;     /* per YAML layer: the value id of its output */
    int head_buf, out_buf;
    int levels;
    int level_stride[STRIX_MAX_LEVELS];
    int nc, reg_max;
    size_t weight_floats; /* fused weights + biases */
    char dfl_name[96];  /* "model.22.dfl.conv.weight"; empty when reg_max is 1 (no DFL) */
    int two_heads;      /* Detect has one-to-many and one-to-one heads (YOLO26's end2end) */
    int end2end;        /* the one-to-one head runs: top-k selection, no NMS */
#define STRIX_UNUSED_PREFIXES 8
    char unused_prefix[STRIX_UNUSED_PREFIXES][64]; /* tensors accepted in a checkpoint but not run: the
                                  other head's ("model.23.cv2."), training-only modules (Pose26's
                                  flow_model and cv4_sigma, Proto26's semseg) */
    long long unused_params;  /* their parameters (the unfused model holds them; inspect counts them) */
    int unused_modules;       /* and their torch modules */
    strix_task task;
    int extra;          /* task channels per anchor after the scores (strix_model_task_channels) */
    int kpt_n, kpt_d;   /* Pose */
    int v26;            /* the head is YOLO26's (Segment26, Pose26, OBB26) */
    int proto;          /* Segment: value id of the protos [N, H/4, W/4, nm]; -1 otherwise */
    int level_in[STRIX_MAX_LEVELS]; /* Detect's inputs, value ids (the maps native ReID reads) */
    int keep_levels;    /* 1: the plan keeps level_in alive to the end of a run (strix_model_keep_features) */
} strix_program;

strix_status strix_program_build(strix_program *p, const strix_graph *g, strix_error *err);
void strix_program_free(strix_program *p);

/* Kernel set 3's folded upsamples (kernels/fold_plan.h): for node u, an
 * UPSAMPLE, the CONV node j that may read the upsample's input (at y /
 * scale, x / scale) in place of the channels the upsample writes, so that
 * the upsample need not run; -1 where it may not, and for every kernel set
 * but STRIX_UPSAMPLE_FOLD_KERNELS (model option cuda_kernels).  Structural:
 * the upsample writes a channel slice of a buffer (a Concat's) that nothing
 * else writes and whose one reader, after u, is the input of j, one group
 * (the buffer's other channels may have other readers);
 * the slice's offset in j's input, its width and j's channels are multiples
 * of 8 (a 16-byte chunk of fp16 channels never straddles the two sources);
 * the upsample's input is not written between u and j and is read after j
 * (so the arena, strix_plan_build, keeps it in place up to j).  What only a
 * planned shape and a device can tell (fp16, the mma.sync path, alignment)
 * the CUDA backend checks when it plans (strix_cuda_conv2d_fold_ok); every
 * other backend ignores this and runs the upsample. */
#define STRIX_UPSAMPLE_FOLD_KERNELS 3
int strix_program_upsample_fold(const strix_program *p, int u, int kernels);

/* Parameter and FLOP counts, Ultralytics' conventions (see strix.h).
 * strix_node_params: a CONV node's parameters, unfused (BatchNorm's two per
 * channel) or fused. */
long long strix_node_params(const strix_node *n, int fused);
void strix_graph_layer_params(const strix_graph *g, const strix_program *p, long long *per_layer);

/* --------------------------------------------------------------- planning */

typedef struct strix_plan {
    int n, h, w;
    int *val_h, *val_w;   /* per value */
    int *buf_h, *buf_w;   /* per buffer (SPATIAL) */
    size_t *buf_elems;    /* per image, elements */
    size_t *buf_off;      /* arena offset in floats (for all N images) */
    size_t arena_floats;
    size_t workspace_bytes;
    int threads;
    size_t anchors;
    size_t level_anchor0[STRIX_MAX_LEVELS];
    strix_decode_params decode;
} strix_plan;

/* Shapes and a liveness-based arena layout for batch n at h x w (multiples
 * of the model's stride).  threads sizes the per-op workspaces. */
strix_status strix_plan_build(strix_plan *pl, const strix_program *p, int n, int h, int w,
                              int threads, strix_error *err);
void strix_plan_free(strix_plan *pl);

/* Where value v lies in the arena for the planned shapes: its strided shape
 * (data NULL) and, in *offset, the element offset of its first element from
 * the arena base.  The one place that turns a value into a view: every
 * backend builds its views from it (in elements of its own dtype). */
strix_view strix_plan_layout(const strix_plan *pl, const strix_program *p, int v, size_t *offset);

/* The view of value v for the planned shapes over an fp32 arena base. */
strix_view strix_plan_view(const strix_plan *pl, const strix_program *p, float *arena, int v);

/* Counts for the planned shapes, the convention of Ultralytics' published
 * GFLOPs (thop): conv MACs of the fused model (DFL included) plus one op per
 * nearest-upsampled element, and separately BatchNorm's ops in the unfused
 * model (4 per element); attention matmuls are not counted.  GFLOPs = 2 x
 * ops / 1e9.  per_layer_macs may be NULL. */
void strix_plan_macs(const strix_plan *pl, const strix_program *p, double *conv_macs,
                     double *bn_ops, double *per_layer_macs);

#endif
