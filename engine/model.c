/* model.c — the public strix_model API: load (YAML -> graph -> program ->
 * weights), inspect (layers, parameters, FLOPs, planned memory) and detect
 * (letterbox -> forward -> NMS -> boxes in source pixels).  All state lives
 * in the model; memory is (re)allocated only when the batch shape changes.
 * Forward and detect run on the model's backend (engine/backend.h: the CPU,
 * or a CUDA device in a CUDA=1 build). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "checkpoint.h"
#include "coco.h"
#include "cpu/conv_bf16.h"
#include "cpu/ops.h"
#include "fileread.h"
#include "graph.h"
#include "letterbox.h"
#include "model_internal.h"
#include "postprocess.h"
#include "strix.h"
#include "util.h"
#include "weights.h"

#define NAMES_MAX_BYTES ((size_t)4 << 20) /* a names file: thousands of names, not megabytes */
#define NAME_MAX_BYTES 510                /* one class name */

void strix_model_options_init(strix_model_options *o)
{
    memset(o, 0, sizeof *o);
    o->device = "cpu";
    o->cuda_graphs = 1;
    o->cuda_kernels = 2;
}

void strix_detect_options_init(strix_detect_options *o)
{
    memset(o, 0, sizeof *o); /* every field added later (classes) starts at its documented default */
    o->conf = 0.25f;
    o->iou = 0.7f;
    o->max_det = 300;
    o->imgsz = 640;
    o->rect = 1;
    o->agnostic = 0;
}

int strix_device_count(void) { return strix_backend_device_count(); }

/* The CUDA device index named by `device`: -1 for the CPU ("cpu", NULL or
 * ""), 0 for "cuda", N for "cuda:N"; -2 when the name is not a device. */
static int parse_device(const char *device)
{
    if (!device || !*device || !strcmp(device, "cpu")) return -1;
    if (!strcmp(device, "cuda")) return 0;
    if (strncmp(device, "cuda:", 5) || device[5] < '0' || device[5] > '9') return -2;
    char *end;
    errno = 0;
    long n = strtol(device + 5, &end, 10);
    return *end || errno || n > 1024 ? -2 : (int)n;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 4096 ? (int)n : 1;
}

static void free_names(strix_model *m)
{
    for (int i = 0; i < m->n_names; i++) free(m->names[i]);
    free(m->names);
    m->names = NULL;
    m->n_names = 0;
}

static strix_status wait_all(strix_model *m);

void strix_model_free(strix_model *m)
{
    if (!m) return;
    wait_all(m); /* their failures have no one left to go to */
    for (int i = 0; i < STRIX_MAX_IN_FLIGHT; i++) {
        free(m->batches[i].info);
        free(m->batches[i].dets);
        free(m->batches[i].counts);
        free(m->batches[i].res);
    }
    if (m->backend) m->backend->ops->free(m->backend);
    strix_plan_free(&m->plan);
    strix_program_free(&m->prog);
    strix_graph_free(&m->graph);
    strix_yaml_model_free(&m->yaml);
    free_names(m);
    free(m->weights);
    free(m->scratch);
    free(m->dets);
    free(m->task_rows);
    free(m->task_vals);
    free(m->task_counts);
    free(m->feat_anchor);
    free(m->feat_counts);
    free(m->feat_vals);
    free(m->feat_maps);
    free(m->rec);
    free(m->rec_rows);
    free(m->rec_vals);
    free(m->rec_counts);
    free(m);
}

/* "class0", "class1", ...: names for a model that brings none (Ultralytics'
 * AutoBackend default_class_names), so every class id has a printable name. */
static strix_status numbered_names(strix_model *m, strix_error *err)
{
    if (!(m->names = calloc((size_t)m->graph.nc, sizeof *m->names)))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    for (int i = 0; i < m->graph.nc; i++) {
        char name[24];
        snprintf(name, sizeof name, "class%d", i);
        if (!(m->names[i] = strdup(name))) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
        m->n_names = i + 1;
    }
    return STRIX_OK;
}

/* The graph: the YAML file given, else the one a .pt checkpoint embeds, else
 * (an Ultralytics ONNX export) the family YAML in o->yaml_dir its description
 * names; *scale: the one to build, o->scale or the description's.  picked:
 * that YAML's path ("" when none was picked). */
static strix_status load_yaml(strix_model *m, const strix_model_options *o, const strix_checkpoint *ck, char *scale,
                              char *picked, size_t cap, strix_error *err)
{
    *scale = o->scale;
    picked[0] = 0;
    if (o->yaml_path) return strix_yaml_model_load(o->yaml_path, &m->yaml, err);
    if (ck->yaml) {
        char label[600];
        snprintf(label, sizeof label, "%s (its model YAML)", o->weights_path);
        return strix_yaml_model_parse(ck->yaml, strlen(ck->yaml), label, &m->yaml, err);
    }
    if (strcmp(ck->format, "onnx"))
        return strix_fail(err, STRIX_E_ARG, "%s: a %s file holds no model YAML: give it with --model",
                          o->weights_path, ck->format);
    char family[64], s;
    if (!strix_onnx_family(ck->description, family, sizeof family, &s)) {
        char found[300];
        if (ck->description)
            snprintf(found, sizeof found, "its description '%.200s' names no YOLO model", ck->description);
        else
            snprintf(found, sizeof found, "no Ultralytics metadata (producer %s)",
                     ck->producer[0] ? ck->producer : "unknown");
        return strix_fail(err, STRIX_E_ARG, "%s: %s: give the YAML it was exported from (--model weights/yolov8.yaml "
                          "--scale n)", o->weights_path, found);
    }
    if (!o->yaml_dir)
        return strix_fail(err, STRIX_E_ARG, "%s: an Ultralytics %s export (scale %c) and no directory of family YAMLs "
                          "given: give --model %s.yaml", o->weights_path, family, s ? s : '-', family);
    snprintf(picked, cap, "%s/%s.yaml", o->yaml_dir, family);
    if (access(picked, R_OK)) /* only whether it is there: loaders/ reads it */
        return strix_fail(err, STRIX_E_ARG, "%s: its description '%.200s' names the family %s, which strix does not "
                          "support (no %s): give its YAML with --model (and --scale)", o->weights_path,
                          ck->description, family, picked);
    if (!*scale) *scale = s;
    return strix_yaml_model_load(picked, &m->yaml, err);
}

static int has_prefix(const strix_st_file *f, const char *prefix)
{
    size_t l = strlen(prefix);
    for (size_t i = 0; i < strix_st_count(f); i++)
        if (!strncmp(strix_st_get(f, i)->name, prefix, l)) return 1;
    return 0;
}

/* Which head of a two-head Detect (YOLO26) runs: the one-to-one head with
 * nms_free, else the one-to-many head, unless the checkpoint holds only the
 * one-to-one head (fused; an ONNX export with nms=False), as Ultralytics
 * falls back to it. */
static strix_status choose_head(strix_graph *g, const strix_model_options *o, const strix_st_file *f,
                                strix_error *err)
{
    strix_layer *L = &g->layers[g->n_layers - 1];
    if (!L->end2end) {
        if (o->nms_free)
            return strix_fail(err, STRIX_E_ARG, "%s: this model has no one-to-one head (end2end): drop --nms-free",
                              g->path);
        return STRIX_OK;
    }
    L->one2one = o->nms_free;
    if (!f) return STRIX_OK;
    char o2o[64], o2m[64];
    snprintf(o2o, sizeof o2o, "model.%d.one2one_cv2.", L->index);
    snprintf(o2m, sizeof o2m, "model.%d.cv2.", L->index);
    int has_o2o = has_prefix(f, o2o), has_o2m = has_prefix(f, o2m);
    if (o->nms_free && !has_o2o)
        return strix_fail(err, STRIX_E_WEIGHTS, "%s: holds the one-to-many head only (an ONNX export without "
                          "nms=False?): drop --nms-free", strix_st_path(f));
    if (!has_o2m && has_o2o) L->one2one = 1;
    return STRIX_OK;
}

/* An export whose description names no scale (a model built from
 * yolo26.yaml itself) and a YAML of several: the first scale its tensors
 * bind to, as their shapes pin it down; 0 when none does (the load then asks
 * for --scale). */
static char scale_from_shapes(const strix_yaml_model *y, int nc, const strix_model_options *o, strix_st_file *f)
{
    for (int i = 0; i < y->n_scales; i++) {
        strix_graph g;
        strix_program p = {0};
        strix_error e;
        char s = y->scales[i].letter;
        int ok = !strix_graph_build(&g, y, s, nc, &e) && !choose_head(&g, o, f, &e) &&
                 !strix_program_build(&p, &g, &e);
        float *w = ok ? malloc(sizeof(float) * (p.weight_floats ? p.weight_floats : 1)) : NULL;
        ok = w && !strix_weights_bind(&p, f, w, &e);
        free(w);
        strix_program_free(&p);
        strix_graph_free(&g);
        if (ok) return s;
    }
    return 0;
}

const char *strix_precision_name(strix_precision p)
{
    static const char *const names[STRIX_PRECISION_COUNT] = {"fp32", "bf16", "fp16", "int8", "auto"};
    return p >= 0 && p < STRIX_PRECISION_COUNT ? names[p] : NULL;
}

/* Why this build and machine cannot run precision p on device d (-1 the
 * CPU), as the end of a sentence; NULL when they can. */
static const char *precision_missing(strix_precision p, int d)
{
    switch (p) {
    case STRIX_PRECISION_FP32:
    case STRIX_PRECISION_AUTO: return NULL;
    case STRIX_PRECISION_BF16:
        if (d >= 0) return "runs on the CPU only (the CUDA backend has fp32 and fp16): use --precision fp16 or fp32 "
                           "on cuda, or --device cpu";
        return strix_bf16_supported() ? NULL
               : "needs bf16 dot products (aarch64 FEAT_BF16; strix has no x86 bf16 path yet) and this CPU has "
                 "none: use --precision fp32 or auto";
    case STRIX_PRECISION_FP16:
        return d >= 0 ? NULL
                      : "runs on CUDA devices only (strix has no CPU fp16 path yet): use --precision fp32 or auto "
                        "on the cpu";
    case STRIX_PRECISION_INT8:
        return d >= 0 ? "runs on the CPU only: use --precision fp16 or fp32 on cuda, or --device cpu" : NULL;
    }
    return "is not a precision strix knows";
}

int strix_precision_supported(strix_precision p, const char *device)
{
    int d = parse_device(device);
    if (d == -2 || !strix_precision_name(p)) return 0;
    if (d >= 0 && d >= strix_device_count()) return 0;
    return precision_missing(p, d) == NULL;
}

strix_status strix_model_load(strix_model **out, const strix_model_options *o, strix_error *err)
{
    strix_error_clear(err);
    *out = NULL;
    if (!o || (!o->yaml_path && !o->weights_path))
        return strix_fail(err, STRIX_E_ARG, "no model given: a model YAML, or a .pt checkpoint (which embeds it)");
    int device = parse_device(o->device);
    if (device == -2)
        return strix_fail(err, STRIX_E_ARG, "unknown device '%s' (use cpu, cuda or cuda:N)", o->device);
    if (device >= 0) {
        strix_status dst = strix_backend_check_device(o->device, device, err);
        if (dst) return dst;
    }
    if (!strix_precision_name(o->precision))
        return strix_fail(err, STRIX_E_ARG, "unknown precision %d: use one of STRIX_PRECISION_FP32, BF16, FP16, "
                          "INT8, AUTO", (int)o->precision);
    const char *missing = precision_missing(o->precision, device);
    if (missing)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "precision %s %s", strix_precision_name(o->precision), missing);
    if (o->nc < 0 || o->threads < 0 || o->cpu_spin_us < 0)
        return strix_fail(err, STRIX_E_ARG, "nc, threads and cpu_spin_us must not be negative");
    if (o->nc > STRIX_MAX_CLASSES)
        return strix_fail(err, STRIX_E_ARG, "a class count of %d is out of range: strix supports 1 to %d classes",
                          o->nc, STRIX_MAX_CLASSES);
    if (!strix_cpu_isa_name(o->cpu_isa) || !strix_cpu_isa_supported(o->cpu_isa))
        return strix_fail(err, STRIX_E_ARG,
                          "CPU instruction set %d (%s) is not one this build and CPU can run: use "
                          "STRIX_CPU_ISA_AUTO, or one strix_cpu_isa_supported() accepts",
                          (int)o->cpu_isa, strix_cpu_isa_name(o->cpu_isa) ? strix_cpu_isa_name(o->cpu_isa) : "unknown");
    strix_model *m = calloc(1, sizeof *m);
    if (!m) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    m->device = device;
    /* chosen once here; the backend keeps it (no global state) */
    m->cpu_isa = o->cpu_isa == STRIX_CPU_ISA_AUTO ? strix_cpu_isa_best() : o->cpu_isa;
    m->half = device >= 0 && (o->half || o->precision == STRIX_PRECISION_FP16);
    /* AUTO: bf16 where the CPU has a bf16 path (its drift is bounded in docs/gpu-cpu-precision.md), else fp32 */
    m->precision = m->half ? STRIX_PRECISION_FP16
                 : o->precision == STRIX_PRECISION_AUTO ? (device < 0 && strix_bf16_supported() ? STRIX_PRECISION_BF16
                                                                                                 : STRIX_PRECISION_FP32)
                                                        : o->precision;
    strix_checkpoint ck = {0};
    strix_status st = o->weights_path ? strix_checkpoint_open(&ck, o->weights_path, err) : STRIX_OK;
    char scale = o->scale, picked[1100] = "";
    if (!st) st = load_yaml(m, o, &ck, &scale, picked, sizeof picked, err);
    /* an export's YAML (picked, or given: a family YAML has nc 80) says nothing of the classes it was trained
     * for: its names do, as Ultralytics' AutoBackend takes them (a custom-trained model's nc) */
    int nc = o->nc ? o->nc : ck.format && !strcmp(ck.format, "onnx") ? ck.n_names : 0;
    if (!st && picked[0] && !scale && !m->yaml.scale && m->yaml.n_scales &&
        !(scale = scale_from_shapes(&m->yaml, nc, o, ck.tensors)))
        st = strix_fail(err, STRIX_E_WEIGHTS, "%s: its description '%.200s' names %s but no scale, and its tensors "
                        "have the shapes of none of that YAML's scales: give the YAML it was exported from with "
                        "--model (and --scale)", o->weights_path, ck.description, picked);
    if (!st) st = strix_graph_build(&m->graph, &m->yaml, scale, nc, err);
    if (!st) st = choose_head(&m->graph, o, ck.tensors, err);
    if (!st) st = strix_program_build(&m->prog, &m->graph, err);
    m->threads = o->threads ? o->threads : online_cpus();
    if (!st) {
        /* strides as Ultralytics derives them: level sizes of a 256x256 pass */
        strix_plan pl;
        st = strix_plan_build(&pl, &m->prog, 1, 256, 256, 1, err);
        if (!st) {
            for (int l = 0; l < m->prog.levels; l++) {
                m->prog.level_stride[l] = pl.decode.level_stride[l];
                if (pl.decode.level_stride[l] > m->graph.max_stride) m->graph.max_stride = pl.decode.level_stride[l];
            }
            if (!m->prog.levels) m->graph.max_stride = 32; /* Classify: Ultralytics' max(stride, 32) */
            strix_plan_free(&pl);
        }
    }
    if (!st && o->weights_path) {
        m->weights = malloc(sizeof(float) * (m->prog.weight_floats ? m->prog.weight_floats : 1));
        if (!m->weights) st = strix_fail(err, STRIX_E_NOMEM, "out of memory for the weights");
        else st = strix_weights_bind(&m->prog, ck.tensors, m->weights, err);
        if (st == STRIX_E_WEIGHTS && picked[0] && err) {
            /* the YAML came from the description: say so, the shapes disagree with it */
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s (the YAML %s its description '%.100s' names, at scale %c: give the right "
                     "one with --model and --scale)", err->message, picked, ck.description, scale ? scale : '-');
            snprintf(err->message, sizeof err->message, "%s", msg);
        }
    }
    if (!st && m->weights) {
        strix_backend_config c = {device, m->half, o->nvtx, o->cuda_graphs, o->cuda_sync, o->cuda_async,
                                  o->cuda_kernels, m->cpu_isa, o->cpu_spin_us, o->cpu_exact_conv,
                                  m->precision == STRIX_PRECISION_BF16};
        m->async = device >= 0 && o->cuda_async;
        st = strix_backend_create(&m->backend, &m->prog, m->weights, &c, err);
    }
    /* class names: the YAML's, else the checkpoint's (.pt model.names, ONNX metadata) */
    char **names = m->yaml.n_names ? m->yaml.names : ck.names;
    int n_names = m->yaml.n_names ? m->yaml.n_names : ck.n_names;
    const char *names_from = m->yaml.n_names ? m->yaml.path : o->weights_path;
    if (!st && n_names) {
        if (n_names != m->graph.nc)
            st = strix_fail(err, m->yaml.n_names ? STRIX_E_MODEL : STRIX_E_WEIGHTS,
                            "%s: 'names' lists %d classes but nc is %d", names_from, n_names, m->graph.nc);
        else {
            m->names = calloc((size_t)n_names, sizeof *m->names);
            if (!m->names) st = strix_fail(err, STRIX_E_NOMEM, "out of memory");
            for (int i = 0; !st && i < n_names; i++) {
                m->names[i] = strdup(names[i]);
                m->n_names = i + 1;
                if (!m->names[i]) st = strix_fail(err, STRIX_E_NOMEM, "out of memory");
            }
        }
    }
    m->input_h = ck.input_h;
    m->input_w = ck.input_w;
    m->meta_stride = ck.stride;
    strix_checkpoint_close(&ck);
    if (!st && !m->n_names && m->graph.nc != STRIX_COCO_CLASSES) st = numbered_names(m, err);
    if (st) {
        strix_model_free(m);
        return st;
    }
    *out = m;
    return STRIX_OK;
}

int strix_model_class_count(const strix_model *m) { return m->graph.nc; }
strix_task strix_model_task(const strix_model *m) { return m->graph.task; }
int strix_model_task_channels(const strix_model *m) { return m->prog.extra; }

const char *strix_task_name(strix_task t)
{
    switch (t) {
    case STRIX_TASK_DETECT: return "detect";
    case STRIX_TASK_SEGMENT: return "segment";
    case STRIX_TASK_POSE: return "pose";
    case STRIX_TASK_OBB: return "obb";
    case STRIX_TASK_CLASSIFY: return "classify";
    }
    return "unknown";
}

void strix_model_kpt_shape(const strix_model *m, int *keypoints, int *dims)
{
    *keypoints = m->graph.task == STRIX_TASK_POSE ? m->prog.kpt_n : 0;
    *dims = m->graph.task == STRIX_TASK_POSE ? m->prog.kpt_d : 0;
}
int strix_model_stride(const strix_model *m) { return m->graph.max_stride; }
strix_cpu_isa strix_model_cpu_isa(const strix_model *m) { return m->cpu_isa; }
strix_precision strix_model_precision(const strix_model *m) { return m->precision; }

int strix_model_fixed_input(const strix_model *m, int *height, int *width)
{
    *height = m->input_h;
    *width = m->input_w;
    return m->input_h > 0;
}

const char *strix_model_class_name(const strix_model *m, int id)
{
    if (id < 0 || id >= m->graph.nc) return NULL;
    return m->n_names ? m->names[id] : strix_coco_names[id]; /* no names: nc is 80 (load) */
}

strix_status strix_model_load_names(strix_model *m, const char *path, strix_error *err)
{
    strix_error_clear(err);
    char *text;
    size_t len;
    strix_status st = strix_file_read(path, NAMES_MAX_BYTES, &text, &len, err);
    if (st) return st;
    char **names = calloc((size_t)m->graph.nc, sizeof *names);
    int n = 0, lineno = 0;
    if (!names) st = strix_fail(err, STRIX_E_NOMEM, "out of memory");
    /* one name per line; blank lines skipped; \r\n line ends accepted */
    for (char *line = text; !st && line < text + len; lineno++) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        char *next = end ? end + 1 : text + len;
        size_t l = (size_t)((end ? end : text + len) - line);
        while (l && line[l - 1] == '\r') l--;
        if (l > NAME_MAX_BYTES) {
            st = strix_fail(err, STRIX_E_ARG, "%s:%d: class name is too long (more than %d bytes)", path,
                            lineno + 1, NAME_MAX_BYTES);
        } else if (l && n == m->graph.nc) {
            st = strix_fail(err, STRIX_E_ARG, "%s:%d: more names than the model's %d classes", path, lineno + 1,
                            m->graph.nc);
        } else if (l && !(names[n++] = strndup(line, l))) {
            st = strix_fail(err, STRIX_E_NOMEM, "out of memory");
        }
        line = next;
    }
    free(text);
    if (!st && n != m->graph.nc)
        st = strix_fail(err, STRIX_E_ARG, "%s: %d names for a model with %d classes", path, n, m->graph.nc);
    if (st) {
        for (int i = 0; names && i < n; i++) free(names[i]);
        free(names);
        return st;
    }
    free_names(m);
    m->names = names;
    m->n_names = n;
    return STRIX_OK;
}

/* ---------------------------------------------------------------- inspect */

int strix_model_layer_count(const strix_model *m) { return m->graph.n_layers; }

strix_status strix_model_layer_info(const strix_model *m, int i, int height, int width,
                                    strix_layer_info *out, strix_error *err)
{
    strix_error_clear(err);
    if (i < 0 || i >= m->graph.n_layers) return strix_fail(err, STRIX_E_ARG, "layer %d does not exist", i);
    const strix_layer *L = &m->graph.layers[i];
    long long *params = malloc(sizeof *params * (size_t)m->graph.n_layers);
    if (!params) return strix_fail(err, STRIX_E_NOMEM, "out of memory");
    strix_graph_layer_params(&m->graph, &m->prog, params);
    memset(out, 0, sizeof *out);
    out->index = i;
    snprintf(out->from, sizeof out->from, "%s", L->from_text);
    out->repeats = L->n;
    out->params = params[i];
    free(params);
    snprintf(out->module, sizeof out->module, "%s", L->name);
    snprintf(out->args, sizeof out->args, "%s", L->args_text);
    for (int k = 0; k < m->prog.n_nodes; k++)
        if (m->prog.nodes[k].layer == i && m->prog.nodes[k].cascade > 1) out->cascade = m->prog.nodes[k].cascade;
    strix_plan pl;
    strix_status st = strix_plan_build(&pl, &m->prog, 1, height, width, 1, err);
    if (st) return st;
    int v = m->prog.layer_out[i];
    out->out_c = m->prog.values[v].c;
    if (L->kind == STRIX_MOD_DETECT) {
        out->out_h = 1;
        out->out_w = (int)pl.anchors;
    } else {
        out->out_h = pl.val_h[v];
        out->out_w = pl.val_w[v];
    }
    strix_plan_free(&pl);
    return STRIX_OK;
}

strix_status strix_model_summarize(const strix_model *m, int height, int width,
                                   strix_model_summary *s, strix_error *err)
{
    strix_error_clear(err);
    memset(s, 0, sizeof *s);
    const strix_program *p = &m->prog;
    s->layers = m->graph.n_layers;
    /* Ultralytics counts leaf torch modules, the SiLU shared by every Conv once */
    int any_act = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV) continue;
        int act = n->conv.act != STRIX_ACT_NONE;
        any_act |= act && !n->plain;
        s->modules_unfused += n->plain ? 1 : 2 + !act;
        s->modules_fused += n->plain ? 1 : 1 + !act;
        s->params_unfused += strix_node_params(n, 0);
        s->params_fused += strix_node_params(n, 1);
        if (n->twin) {
            /* the other head's copy of this conv: in the unfused model, dropped by fuse() */
            s->modules_unfused += n->plain ? 1 : 2 + !act;
            s->params_unfused += strix_node_params(n, 0);
        }
    }
    /* training-only modules (flow_model, sigmas, semseg): unfused only */
    s->params_unfused += p->unused_params;
    s->modules_unfused += p->unused_modules;
    for (int i = 0; i < m->graph.n_layers; i++) {
        const strix_layer *L = &m->graph.layers[i];
        int extra = L->kind == STRIX_MOD_SPPF ? L->copies /* MaxPool2d */
                  : L->kind == STRIX_MOD_UPSAMPLE || L->kind == STRIX_MOD_CONCAT ? 1
                  : L->kind == STRIX_MOD_DETECT ? 1 /* DFL conv */ : 0;
        s->modules_unfused += extra;
        s->modules_fused += extra;
        if (L->kind == STRIX_MOD_DETECT && L->reg_max > 1) { /* reg_max 1: nn.Identity, no weights */
            s->params_unfused += L->reg_max;
            s->params_fused += L->reg_max;
        }
    }
    s->modules_unfused += any_act;
    s->modules_fused += any_act;
    strix_plan pl;
    strix_status st = strix_plan_build(&pl, p, 1, height, width, m->threads, err);
    if (st) return st;
    double macs, bn;
    strix_plan_macs(&pl, p, &macs, &bn, NULL);
    s->gflops_fused = 2.0 * macs / 1e9;
    s->gflops_unfused = 2.0 * (macs + bn) / 1e9;
    for (int i = 0; p->two_heads && i < p->n_nodes; i++) {
        /* the unfused two-head model runs both heads (Detect.forward) */
        const strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV || !n->twin) continue;
        double out = (double)pl.val_h[n->out] * pl.val_w[n->out] * n->cout;
        double mac = out * (n->cin / n->conv.groups) * n->conv.kh * n->conv.kw;
        s->gflops_unfused += 2.0 * (mac + (n->plain ? 0 : 4.0 * out)) / 1e9;
    }
    s->peak_activation_bytes = pl.arena_floats * (m->half ? 2 : sizeof(float));
    s->weight_bytes = p->weight_floats * sizeof(float);
    strix_plan_free(&pl);
    return STRIX_OK;
}

/* ----------------------------------------------------------------- detect */

size_t strix_model_anchor_count(const strix_model *m, int h, int w)
{
    size_t a = 0;
    for (int l = 0; l < m->prog.levels; l++) {
        int s = m->prog.level_stride[l];
        a += (size_t)(h / s) * (size_t)(w / s);
    }
    return a;
}

strix_status strix_model_alloc_pinned(strix_model *m, size_t bytes, void **out, strix_error *err)
{
    strix_error_clear(err);
    if (!out) return strix_fail(err, STRIX_E_ARG, "alloc_pinned needs somewhere to put the pointer");
    *out = NULL;
    if (!bytes) return strix_fail(err, STRIX_E_ARG, "frame memory of 0 bytes asked for: give the frame's size");
    if (!m->backend)
        return strix_fail(err, STRIX_E_ARG, "%s: the model was loaded without weights, and its frame memory comes "
                          "from the backend the weights set up: load it with weights", m->graph.path);
    if (bytes > SIZE_MAX - (STRIX_PINNED_ALIGN - 1))
        return strix_fail(err, STRIX_E_NOMEM, "frame memory of %zu bytes asked for: more than the address space "
                          "holds (a size computed from a corrupt frame size?)", bytes);
    const size_t rounded = (bytes + STRIX_PINNED_ALIGN - 1) / STRIX_PINNED_ALIGN * STRIX_PINNED_ALIGN;
    return m->backend->ops->pinned_alloc(m->backend, rounded, out, err);
}

void strix_model_free_pinned(strix_model *m, void *p)
{
    if (p && m && m->backend) m->backend->ops->pinned_free(m->backend, p);
}

/* Make the plan and the backend's memory fit (n, h, w); allocates only on
 * change. */
static strix_status prepare(strix_model *m, int n, int h, int w, strix_error *err)
{
    if (!m->weights)
        return strix_fail(err, STRIX_E_ARG, "%s: the model was loaded without weights", m->graph.path);
    if (m->precision == STRIX_PRECISION_INT8 && m->int8_state == 0)
        return strix_fail(err, STRIX_E_ARG, "%s: loaded with precision int8 but not calibrated: call "
                          "strix_model_quantize first (infer: --calibrate SRC), or load with precision fp32",
                          m->graph.path);
    if (!m->planned || m->plan.n != n || m->plan.h != h || m->plan.w != w) {
        strix_plan_free(&m->plan);
        m->planned = 0;
        strix_status st = strix_plan_build(&m->plan, &m->prog, n, h, w, m->threads, err);
        if (st) return st;
        m->planned = 1;
    }
    return m->backend->ops->plan(m->backend, &m->plan, err);
}

strix_status strix_model_forward(strix_model *m, const float *input, int n, int h, int w,
                                 float *head, strix_error *err)
{
    strix_error_clear(err);
    wait_all(m); /* the submitted batches keep their own failures */
    strix_status st = prepare(m, n, h, w, err);
    if (st) return st;
    return m->backend->ops->forward(m->backend, input, head, err);
}

strix_status strix_model_protos(strix_model *m, float *out, size_t floats, int *ph, int *pw, strix_error *err)
{
    strix_error_clear(err);
    *ph = *pw = 0;
    if (m->prog.proto < 0)
        return strix_fail(err, STRIX_E_ARG, "%s: a %s model has no prototype masks (segment models do)", m->graph.path,
                          strix_task_name(m->graph.task));
    if (!m->planned || !m->backend)
        return strix_fail(err, STRIX_E_ARG, "%s: no prototype masks yet: run strix_model_forward or detect first",
                          m->graph.path);
    if (!m->backend->ops->read_value)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: this backend cannot read the prototype masks back",
                          m->graph.path);
    wait_all(m);
    int v = m->prog.proto;
    *ph = m->plan.val_h[v];
    *pw = m->plan.val_w[v];
    size_t need = (size_t)m->plan.n * *ph * *pw * m->prog.values[v].c;
    if (floats < need)
        return strix_fail(err, STRIX_E_ARG, "%s: the prototype masks are %zu floats, %zu given", m->graph.path, need,
                          floats);
    return m->backend->ops->read_value(m->backend, v, out, err);
}

/* A detect call's checks and its batch shape (Ultralytics: imgsz rounded up
 * to the stride; minimal padding only when every image of the batch has
 * the same size; a static ONNX export's own input size, as Ultralytics
 * reuses the export's imgsz and letterboxes with auto=False for it). */
typedef struct detect_call {
    int sz, th, tw, rect, fixed;
    strix_nms_params np;
} detect_call;

/* Image im's letterbox for the call c. */
static void plan_image(const strix_model *m, const detect_call *c, const strix_image *im, strix_letterbox_info *info)
{
    if (c->fixed) strix_letterbox_geometry(im->width, im->height, c->tw, c->th, info);
    else strix_letterbox_plan(im->width, im->height, c->sz, m->graph.max_stride, c->rect, info);
}

static strix_status detect_check(const strix_model *m, const strix_image *im, int n, const strix_detect_options *o,
                                 detect_call *c, strix_error *err)
{
    if (n < 1 || !im) return strix_fail(err, STRIX_E_ARG, "detect needs at least one image");
    if (!(o->conf >= 0 && o->conf <= 1) || !(o->iou >= 0 && o->iou <= 1))
        return strix_fail(err, STRIX_E_ARG, "conf and iou must lie in [0, 1]");
    if (o->max_det < 1 || o->max_det > 100000) return strix_fail(err, STRIX_E_ARG, "max_det must be in 1..100000");
    if (o->imgsz < 32 || o->imgsz > 8192) return strix_fail(err, STRIX_E_ARG, "imgsz must be in 32..8192");
    int same = 1;
    for (int i = 0; i < n; i++) {
        const strix_image *g = &im[i];
        const int nv12 = g->format == STRIX_NV12;
        if (g->format != STRIX_RGB && g->format != STRIX_BGR && !nv12)
            return strix_fail(err, STRIX_E_ARG, "image %d: unknown pixel format %d", i, (int)g->format);
        if (!g->data || g->width < 1 || g->height < 1 || (g->stride && g->stride < g->width * (nv12 ? 1 : 3)))
            return strix_fail(err, STRIX_E_ARG, "image %d: no pixels or a row stride below width*%d", i, nv12 ? 1 : 3);
        if (nv12 && (!g->uv || (g->uv_stride && g->uv_stride < 2 * ((g->width + 1) / 2)) ||
                     (g->colorspace != STRIX_BT601 && g->colorspace != STRIX_BT709)))
            return strix_fail(err, STRIX_E_ARG, "image %d: NV12 needs its U,V plane (uv, a uv_stride of at least "
                              "2 * ((width + 1) / 2)) and the colour matrix BT.601 or BT.709", i);
        if (g->memory != STRIX_HOST && g->memory != STRIX_PINNED && (g->memory != STRIX_DEVICE || m->device < 0))
            return strix_fail(err, STRIX_E_ARG, "image %d: %s", i,
                              g->memory == STRIX_DEVICE
                                  ? "pixels in device memory need a model on a CUDA device"
                                  : "unknown memory kind (STRIX_HOST, STRIX_PINNED or STRIX_DEVICE)");
        same &= g->width == im[0].width && g->height == im[0].height;
    }
    if (o->recovered && m->graph.task != STRIX_TASK_DETECT && m->graph.task != STRIX_TASK_OBB)
        return strix_fail(err, STRIX_E_ARG, "%s: recovered detections are for detect and obb models (Ultralytics' "
                          "TrackTrack takes none from a %s model): set recovered = 0", m->graph.path,
                          strix_task_name(m->graph.task));
    if (o->recovered && m->device >= 0)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: recovered detections are computed on the CPU backend only; "
                          "use the cpu device or set recovered = 0", m->graph.path);
    int s = m->graph.max_stride;
    c->sz = (o->imgsz + s - 1) / s * s;
    c->th = c->tw = c->sz;
    c->rect = o->rect && same;
    c->fixed = m->input_h > 0;
    if (c->fixed) {
        c->th = m->input_h;
        c->tw = m->input_w;
        c->rect = 0;
    } else if (c->rect) strix_letterbox_shape(im[0].width, im[0].height, c->sz, s, 1, &c->tw, &c->th);
    c->np = (strix_nms_params){o->conf, o->iou, o->max_det, 30000, o->agnostic, m->graph.nc, o->classes, 0, NULL, NULL,
                                 NULL, NULL, NULL, 0};
    return STRIX_OK;
}

/* Wait for a submitted batch's backend work; its boxes to source pixels. */
static void batch_wait(strix_batch *b)
{
    strix_model *m = b->m;
    b->queued = 0;
    b->status = m->backend->ops->detect_wait(m->backend, b->lane, b->dets, b->counts, &b->err);
    for (int i = 0; i < b->n && !b->status; i++)
        strix_scale_boxes(b->dets + (size_t)i * b->max_det, b->counts[i], &b->info[i]);
}

/* Every batch still on the backend waited for (before a new plan); the
 * first failure met, which each batch also keeps for its collect. */
static strix_status wait_all(strix_model *m)
{
    strix_status st = STRIX_OK;
    for (int i = 0; i < STRIX_MAX_IN_FLIGHT; i++)
        if (m->batches[i].queued) {
            batch_wait(&m->batches[i]);
            if (!st) st = m->batches[i].status;
        }
    return st;
}

/* Native ReID features of the last detect's n images (counts[i] detections
 * each, their anchors in m->feat_anchor), as Ultralytics' get_obj_feats:
 * s = the fewest channels of Detect's inputs; at a detection's anchor cell
 * of its level's map (C channels), feature j is the mean of channels
 * j*g .. j*g+g-1, g = C / s: the float32 sum in channel order, then / g, as
 * torch's mean sums groups of up to 4 (g is at most 4 at every YOLOv8 and
 * YOLO11 scale; wider groups torch sums in another order, a last-bit
 * difference). */
static strix_status native_features(strix_model *m, int n, int max_det, const int *counts, strix_error *err)
{
    const strix_program *p = &m->prog;
    size_t total = 0;
    int s = 0;
    for (int l = 0; l < p->levels; l++) {
        int v = p->level_in[l], c = p->values[v].c;
        total += (size_t)m->plan.val_h[v] * m->plan.val_w[v] * c;
        if (!s || c < s) s = c;
    }
    size_t nd = (size_t)n * max_det;
    if (!strix_reserve((void **)&m->feat_maps, &m->feat_maps_cap, sizeof(float) * total * (size_t)n) ||
        !strix_reserve((void **)&m->feat_vals, &m->feat_vals_cap, sizeof(float) * nd * (size_t)s))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for the ReID features");
    /* each level's map, dense [n, h, w, C], one after the other */
    float *map[STRIX_MAX_LEVELS];
    size_t off = 0;
    for (int l = 0; l < p->levels; l++) {
        int v = p->level_in[l];
        map[l] = m->feat_maps + off;
        off += (size_t)n * m->plan.val_h[v] * m->plan.val_w[v] * p->values[v].c;
        strix_status st = m->backend->ops->read_value(m->backend, v, map[l], err);
        if (st) return st;
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < counts[i]; k++) {
            size_t a = (size_t)m->feat_anchor[(size_t)i * max_det + k];
            int l = p->levels - 1;
            while (l > 0 && a < m->plan.level_anchor0[l]) l--;
            int v = p->level_in[l], c = p->values[v].c, g = c / s;
            size_t cells = (size_t)m->plan.val_h[v] * m->plan.val_w[v];
            const float *x = map[l] + ((size_t)i * cells + (a - m->plan.level_anchor0[l])) * c;
            float *f = m->feat_vals + ((size_t)i * max_det + k) * s;
            for (int j = 0; j < s; j++) {
                float sum = x[j * g];
                for (int q = 1; q < g; q++) sum += x[j * g + q];
                f[j] = sum / (float)g;
            }
        }
        m->feat_counts[i] = counts[i];
    }
    m->feat_n = n;
    m->feat_max_det = max_det;
    m->feat_dim = s;
    return STRIX_OK;
}

strix_status strix_model_detect(strix_model *m, const strix_image *im, int n,
                                const strix_detect_options *o, strix_detections *out,
                                strix_error *err)
{
    strix_error_clear(err);
    strix_detect_options def;
    if (!o) {
        strix_detect_options_init(&def);
        o = &def;
    }
    if (!out) return strix_fail(err, STRIX_E_ARG, "detect needs room for the results");
    detect_call c;
    strix_status st = detect_check(m, im, n, o, &c, err);
    if (st) return st;
    if (m->graph.task == STRIX_TASK_CLASSIFY)
        return strix_fail(err, STRIX_E_ARG, "%s: a classify model finds no boxes: strix_model_forward gives its class "
                          "probabilities", m->graph.path);
    wait_all(m); /* the submitted batches keep their own failures */
    st = prepare(m, n, c.th, c.tw, err);
    if (st) return st;

    size_t info_bytes = sizeof(strix_letterbox_info) * (size_t)n;
    strix_task_layout tl = {m->graph.task, m->graph.nc, m->prog.extra, m->prog.kpt_d};
    size_t row = 4 + (size_t)m->graph.nc + m->prog.extra, nd = (size_t)n * o->max_det;
    int task = m->graph.task != STRIX_TASK_DETECT, stride = strix_task_stride(&tl);
    m->task_n = 0;
    if (!strix_reserve(&m->scratch, &m->scratch_cap, info_bytes + sizeof(int) * (size_t)n) ||
        !strix_reserve((void **)&m->dets, &m->dets_cap, sizeof(strix_detection) * nd) ||
        (task && (!strix_reserve((void **)&m->task_rows, &m->task_rows_cap, sizeof(float) * nd * row) ||
                  !strix_reserve((void **)&m->task_vals, &m->task_vals_cap, sizeof(float) * nd * stride) ||
                  !strix_reserve((void **)&m->task_counts, &m->task_counts_cap, sizeof(int) * (size_t)n))))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for detection scratch");
    strix_letterbox_info *info = m->scratch;
    int *counts = (int *)((char *)m->scratch + info_bytes);
    for (int i = 0; i < n; i++) plan_image(m, &c, &im[i], &info[i]);
    if (task) c.np.rows_out = m->task_rows;
    m->feat_n = 0;
    if (m->keep_feats) {
        if (!strix_reserve((void **)&m->feat_anchor, &m->feat_anchor_cap, sizeof(int) * nd) ||
            !strix_reserve((void **)&m->feat_counts, &m->feat_counts_cap, sizeof(int) * (size_t)n))
            return strix_fail(err, STRIX_E_NOMEM, "out of memory for detection scratch");
        c.np.anchors_out = m->feat_anchor;
    }
    m->rec_n = 0;
    int obb = m->graph.task == STRIX_TASK_OBB;
    if (o->recovered) {
        if (!strix_reserve((void **)&m->rec, &m->rec_cap, sizeof(strix_detection) * nd) ||
            !strix_reserve((void **)&m->rec_counts, &m->rec_counts_cap, sizeof(int) * (size_t)n) ||
            (obb && (!strix_reserve((void **)&m->rec_rows, &m->rec_rows_cap, sizeof(float) * nd * row) ||
                     !strix_reserve((void **)&m->rec_vals, &m->rec_vals_cap, sizeof(float) * nd * stride))))
            return strix_fail(err, STRIX_E_NOMEM, "out of memory for the recovered detections");
        c.np.loose_out = m->rec;
        c.np.loose_rows = obb ? m->rec_rows : NULL;
        c.np.loose_counts = m->rec_counts;
        c.np.loose_iou = 0.95f; /* track_tracker.py's _LOOSE_NMS_IOU */
    }
    st = m->backend->ops->detect(m->backend, im, n, info, &c.np, m->dets, counts, err);
    if (st) return st;
    if (m->keep_feats && (st = native_features(m, n, o->max_det, counts, err))) return st;
    for (int i = 0; i < n; i++) {
        strix_detection *d = m->dets + (size_t)i * o->max_det;
        strix_scale_boxes(d, counts[i], &info[i]);
        if (task) {
            size_t k0 = (size_t)i * o->max_det;
            strix_scale_task_values(m->task_vals + k0 * stride, d, m->task_rows + k0 * row, counts[i], &tl, &info[i]);
            m->task_counts[i] = counts[i];
        }
        if (o->recovered) {
            size_t k0 = (size_t)i * o->max_det;
            strix_detection *r = m->rec + k0;
            float *rv = obb ? m->rec_vals + k0 * stride : NULL;
            strix_scale_boxes(r, m->rec_counts[i], &info[i]);
            if (obb) strix_scale_task_values(rv, r, m->rec_rows + k0 * row, m->rec_counts[i], &tl, &info[i]);
            const float *tv = obb ? m->task_vals + k0 * stride : NULL;
            m->rec_counts[i] = strix_recovered_dedup(r, rv, m->rec_counts[i], d, tv, counts[i]);
        }
        out[i].count = counts[i];
        out[i].items = d;
    }
    if (task) m->task_n = n, m->task_max_det = o->max_det;
    if (o->recovered) m->rec_n = n, m->rec_max_det = o->max_det;
    return STRIX_OK;
}

strix_status strix_model_keep_features(strix_model *m, int keep, strix_error *err)
{
    strix_error_clear(err);
    if (keep) {
        if (m->graph.task == STRIX_TASK_CLASSIFY)
            return strix_fail(err, STRIX_E_ARG, "%s: a classify model has no detections to take ReID features of",
                              m->graph.path);
        if (m->prog.two_heads)
            return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: an end-to-end (YOLO26-style) head: Ultralytics' "
                              "model: auto then runs a separate ReID model (yolo26n-cls.pt), which strix does not; "
                              "use a model with an NMS head (YOLOv8, YOLO11) or set with_reid: False",
                              m->graph.path);
        int fewest = 0; /* get_obj_feats' reshape: each level's channels a multiple of the fewest */
        for (int l = 0; l < m->prog.levels; l++) {
            int c = m->prog.values[m->prog.level_in[l]].c;
            if (!fewest || c < fewest) fewest = c;
        }
        for (int l = 0; l < m->prog.levels; l++)
            if (m->prog.values[m->prog.level_in[l]].c % fewest)
                return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: Detect's input %d has %d channels, not a multiple "
                                  "of %d, which Ultralytics' native ReID features cannot average; set with_reid: "
                                  "False", m->graph.path, l, m->prog.values[m->prog.level_in[l]].c, fewest);
        if (!m->backend)
            return strix_fail(err, STRIX_E_ARG, "%s: the model was loaded without weights", m->graph.path);
        if (!m->backend->ops->read_value)
            return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: native ReID features are taken on the CPU backend only "
                              "(its maps are read from host memory); use the cpu device or set with_reid: False",
                              m->graph.path);
    }
    keep = !!keep;
    if (keep != m->keep_feats) { /* the maps' lifetimes change: plan again */
        wait_all(m);
        m->keep_feats = m->prog.keep_levels = keep;
        strix_plan_free(&m->plan);
        m->planned = 0;
        m->feat_n = 0;
    }
    return STRIX_OK;
}

strix_status strix_model_features(const strix_model *m, int image, strix_task_values *out, strix_error *err)
{
    strix_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!m->keep_feats)
        return strix_fail(err, STRIX_E_ARG, "%s: no ReID features kept: call strix_model_keep_features first",
                          m->graph.path);
    if (image < 0 || image >= m->feat_n)
        return strix_fail(err, STRIX_E_ARG, "%s: image %d is not one of the last strix_model_detect's %d",
                          m->graph.path, image, m->feat_n);
    out->stride = m->feat_dim;
    out->count = m->feat_counts[image];
    out->values = m->feat_vals + (size_t)image * m->feat_max_det * m->feat_dim;
    return STRIX_OK;
}

strix_status strix_model_recovered(const strix_model *m, int image, strix_detections *out, strix_task_values *obb,
                                   strix_error *err)
{
    strix_error_clear(err);
    memset(out, 0, sizeof *out);
    if (obb) memset(obb, 0, sizeof *obb);
    if (image < 0 || image >= m->rec_n)
        return strix_fail(err, STRIX_E_ARG, "%s: image %d is not one of the last strix_model_detect's %d with "
                          "recovered detections (set the detect options' recovered = 1)", m->graph.path, image,
                          m->rec_n);
    size_t k0 = (size_t)image * m->rec_max_det;
    out->count = m->rec_counts[image];
    out->items = m->rec + k0;
    if (obb && m->graph.task == STRIX_TASK_OBB) {
        obb->count = out->count;
        obb->stride = 5;
        obb->values = m->rec_vals + k0 * 5;
    }
    return STRIX_OK;
}

strix_status strix_model_task_values(const strix_model *m, int image, strix_task_values *out, strix_error *err)
{
    strix_error_clear(err);
    memset(out, 0, sizeof *out);
    if (m->graph.task == STRIX_TASK_DETECT || m->graph.task == STRIX_TASK_CLASSIFY)
        return strix_fail(err, STRIX_E_ARG, "%s: a %s model's detections carry no task values", m->graph.path,
                          strix_task_name(m->graph.task));
    if (image < 0 || image >= m->task_n)
        return strix_fail(err, STRIX_E_ARG, "%s: image %d is not one of the last strix_model_detect's %d",
                          m->graph.path, image, m->task_n);
    strix_task_layout tl = {m->graph.task, m->graph.nc, m->prog.extra, m->prog.kpt_d};
    out->stride = strix_task_stride(&tl);
    out->count = m->task_counts[image];
    out->values = m->task_vals + (size_t)image * m->task_max_det * out->stride;
    return STRIX_OK;
}

strix_status strix_model_quantize(strix_model *m, const strix_image *im, int n, const strix_detect_options *o,
                                  strix_error *err)
{
    strix_error_clear(err);
    if (!m->backend)
        return strix_fail(err, STRIX_E_ARG, "%s: the model was loaded without weights", m->graph.path);
    if (m->precision != STRIX_PRECISION_INT8)
        return strix_fail(err, STRIX_E_ARG, "%s: int8 calibration needs a model loaded with precision int8 (this "
                          "one runs %s)", m->graph.path, strix_precision_name(m->precision));
    const strix_backend_ops *ops = m->backend->ops; /* int8 loads only on the CPU, whose backend has int8 */
    if (n < 1 || !im) return strix_fail(err, STRIX_E_ARG, "int8 calibration needs at least one image");
    wait_all(m); /* the submitted batches keep their own failures */
    m->int8_state = 1; /* fp32 passes while the ranges are recorded */
    strix_status st = ops->int8_begin(m->backend, err);
    for (int i = 0; i < n && !st; i++) {
        strix_detections r;
        st = strix_model_detect(m, &im[i], 1, o, &r, err);
    }
    strix_status end = ops->int8_end(m->backend, !st, st ? NULL : err);
    m->int8_state = st || end ? 0 : 2; /* a failed calibration leaves nothing that runs fp32 as int8 */
    return st ? st : end;
}

strix_status strix_model_submit(strix_model *m, const strix_image *im, int n, const strix_detect_options *o,
                                strix_batch **out, strix_error *err)
{
    strix_error_clear(err);
    strix_detect_options def;
    if (!o) {
        strix_detect_options_init(&def);
        o = &def;
    }
    if (!out) return strix_fail(err, STRIX_E_ARG, "submit needs somewhere to put the batch handle");
    *out = NULL;
    if (m->graph.task != STRIX_TASK_DETECT)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: a %s model: submit runs detect models only so far; use "
                          "strix_model_detect", m->graph.path, strix_task_name(m->graph.task));
    if (m->keep_feats)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: ReID features are kept by strix_model_detect only; use it "
                          "(or strix_model_keep_features(m, 0))", m->graph.path);
    if (o->recovered)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s: recovered detections come from strix_model_detect only; use "
                          "it (or set recovered = 0)", m->graph.path);
    detect_call c;
    strix_status st = detect_check(m, im, n, o, &c, err);
    if (st) return st;
    strix_batch *b = NULL;
    for (int i = 0; i < STRIX_MAX_IN_FLIGHT && !b; i++)
        if (!m->batches[i].out) b = &m->batches[i];
    if (!b)
        return strix_fail(err, STRIX_E_ARG, "%d batches are already submitted and not released: release one first",
                          STRIX_MAX_IN_FLIGHT);
    if (!m->planned || m->plan.n != n || m->plan.h != c.th || m->plan.w != c.tw) wait_all(m);
    st = prepare(m, n, c.th, c.tw, err);
    if (st) return st;
    if (!strix_reserve((void **)&b->info, &b->info_cap, sizeof *b->info * (size_t)n) ||
        !strix_reserve((void **)&b->counts, &b->counts_cap, sizeof *b->counts * (size_t)n) ||
        !strix_reserve((void **)&b->res, &b->res_cap, sizeof *b->res * (size_t)n) ||
        !strix_reserve((void **)&b->dets, &b->dets_cap, sizeof *b->dets * (size_t)n * o->max_det))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for a batch's detections");
    b->m = m;
    b->lane = (int)(b - m->batches);
    b->n = n;
    b->max_det = o->max_det;
    for (int i = 0; i < n; i++) plan_image(m, &c, &im[i], &b->info[i]);
    strix_error_clear(&b->err);
    const strix_backend_ops *ops = m->backend->ops;
    if (m->async && ops->detect_submit) {
        st = ops->detect_submit(m->backend, b->lane, im, n, b->info, &c.np, err);
        b->queued = !st;
        b->status = STRIX_OK;
    } else { /* the verified synchronous path: the batch completes here */
        st = ops->detect(m->backend, im, n, b->info, &c.np, b->dets, b->counts, err);
        for (int i = 0; i < n && !st; i++)
            strix_scale_boxes(b->dets + (size_t)i * b->max_det, b->counts[i], &b->info[i]);
        b->status = STRIX_OK;
    }
    if (st) return st;
    b->out = 1;
    *out = b;
    return STRIX_OK;
}

strix_status strix_batch_collect(strix_batch *b, strix_detections *out, strix_error *err)
{
    strix_error_clear(err);
    if (!b || !b->out || !out) return strix_fail(err, STRIX_E_ARG, "collect needs a submitted, unreleased batch");
    if (b->queued) batch_wait(b);
    if (b->status) {
        if (err) *err = b->err;
        return b->status;
    }
    for (int i = 0; i < b->n; i++) {
        b->res[i].count = b->counts[i];
        b->res[i].items = b->dets + (size_t)i * b->max_det;
        out[i] = b->res[i];
    }
    return STRIX_OK;
}

void strix_batch_release(strix_batch *b)
{
    if (!b || !b->out) return;
    if (b->queued) batch_wait(b); /* its staging may be reused only when its work is done */
    b->out = 0;
}
