/* model_internal.h — the strix_model struct, shared by the files that
 * implement the public model API (model.c, synth.c); never installed. */
#ifndef STRIX_MODEL_INTERNAL_H
#define STRIX_MODEL_INTERNAL_H

#include "graph.h"
#include "model_yaml.h"

struct strix_cuda_backend;

struct strix_model {
    strix_yaml_model yaml;
    strix_graph graph;
    strix_program prog;
    float *weights;          /* fused fp32, OHWI, NULL without a checkpoint */
    int threads;
    int device;              /* CUDA device index, -1 for the CPU */
    int half;                /* fp16 on the CUDA device */
    struct strix_cuda_backend *cuda; /* the CUDA backend (device >= 0 and weights loaded), else NULL */
    char **names;
    int n_names;
    /* run state for the current (n, h, w); arena and ws serve the CPU only */
    strix_plan plan;
    int planned;
    float *arena;
    size_t arena_cap;
    void *ws;
    size_t ws_cap;
    void *scratch;           /* letterbox and NMS scratch */
    size_t scratch_cap;
    strix_detection *dets;
    size_t dets_cap;
};

#endif
