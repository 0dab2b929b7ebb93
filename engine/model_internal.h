/* model_internal.h — the strix_model struct, shared by the files that
 * implement the public model API (model.c, synth.c); never installed. */
#ifndef STRIX_MODEL_INTERNAL_H
#define STRIX_MODEL_INTERNAL_H

#include "backend.h"
#include "graph.h"
#include "model_yaml.h"

/* One submitted batch (strix_model_submit): its own letterbox plans and
 * detections, so several can be out at once; lane: its backend lane. */
struct strix_batch {
    strix_model *m;
    int lane, n, max_det;
    int out;                 /* handed to the caller, not yet released */
    int queued;              /* on the backend (cuda_async), not yet waited for */
    strix_letterbox_info *info;
    strix_detection *dets;   /* [n, max_det] */
    int *counts;
    strix_detections *res;
    size_t info_cap, dets_cap, counts_cap, res_cap;
    strix_status status;     /* of its backend work */
    strix_error err;
};

struct strix_model {
    strix_yaml_model yaml;
    strix_graph graph;
    strix_program prog;
    float *weights;          /* fused fp32, OHWI, NULL without a checkpoint */
    int threads;
    strix_cpu_isa cpu_isa; /* the CPU convolution's instruction set (never AUTO) */
    int device;              /* CUDA device index, -1 for the CPU */
    int half;                /* fp16 on the CUDA device */
    strix_precision precision; /* what it runs (never AUTO; FP16 with half) */
    int int8_state;          /* precision INT8: 0 not calibrated (it refuses to run), 1 calibrating (fp32
                                passes recording ranges), 2 calibrated */
    strix_backend *backend;  /* CPU or CUDA (per device); NULL without weights */
    char **names;
    int n_names;
    int input_h, input_w;    /* a static ONNX export's input size (strix_model_fixed_input); 0 otherwise */
    int meta_stride;         /* an ONNX export's `stride` metadata (classify rounds imgsz to it); 0 otherwise */
    /* run state for the current (n, h, w); the backend holds the memory */
    strix_plan plan;
    int planned;
    void *scratch;           /* detect: letterbox plans and counts */
    size_t scratch_cap;
    strix_detection *dets;
    size_t dets_cap;
    /* the task values of the last strix_model_detect (segment, pose, obb): per image max_det rows of the head
     * (task_rows) and their values as strix_model_task_values gives them (task_vals, strix_task_stride floats each) */
    float *task_rows, *task_vals;
    size_t task_rows_cap, task_vals_cap;
    int *task_counts;
    size_t task_counts_cap;
    int task_n, task_max_det;
    /* native ReID (strix_model_keep_features): the last strix_model_detect's anchor of each detection
     * (feat_anchor, per image max_det), their features (feat_vals, feat_dim floats each), the maps read back */
    int keep_feats, feat_dim, feat_n, feat_max_det;
    int *feat_anchor, *feat_counts;
    float *feat_vals, *feat_maps;
    size_t feat_anchor_cap, feat_counts_cap, feat_vals_cap, feat_maps_cap;
    /* TrackTrack's recovered detections (strix_detect_options.recovered) of the last strix_model_detect: per
     * image max_det of them (rec), obb: their head rows and xywhr in source pixels */
    strix_detection *rec;
    float *rec_rows, *rec_vals;
    int *rec_counts;
    size_t rec_cap, rec_rows_cap, rec_vals_cap, rec_counts_cap;
    int rec_n, rec_max_det;
    int async;               /* cuda_async: batches run on the backend's lanes */
    strix_batch batches[STRIX_MAX_IN_FLIGHT];
};

#endif
