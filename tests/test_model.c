/* test_model.c — the model API end to end without Ultralytics: inspect
 * figures against Ultralytics' published table, strict YAML errors (file and
 * line named), checkpoint binding errors, fused/unfused/F16 checkpoints
 * agreeing, planner memory reuse, batch/shape handling, the program's
 * fusions computing what the unfused ops compute, and frame memory
 * (strix_model_alloc_pinned, STRIX_PINNED images) on the CPU.
 * Run from the repository root (make test does). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/backend.h"
#include "letterbox.h" /* strix_nv12_row_rgb: the conversion the letterbox applies */
#include "model_internal.h" /* the program behind the model (its fusions) */
#include "safetensors.h"
#include "strix.h"
#include "testlib.h"

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static strix_status load(strix_model **m, const char *yaml, char scale, const char *weights, strix_error *e)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = yaml;
    o.scale = scale;
    o.weights_path = weights;
    o.threads = 2;
    return strix_model_load(m, &o, e);
}

/* ------------------------------------------------------------ inspect table */

/* A YAML at a scale: Ultralytics' parameters (unfused, fused) and fused
 * GFLOPs at 640 as it prints them. */
typedef struct counts_case {
    const char *yaml;
    char scale;
    long long unfused, fused;
    double gflops;
} counts_case;

/* Each case's summary: parameters exactly, GFLOPs rounded to `decimals` as
 * the reference was. */
static void check_counts(const counts_case *t, size_t n, int decimals)
{
    double k = pow(10, decimals);
    for (size_t i = 0; i < n; i++) {
        strix_model *m;
        strix_error e;
        TL_CHECK(load(&m, t[i].yaml, t[i].scale, NULL, &e) == STRIX_OK, "%s", e.message);
        strix_model_summary s;
        strix_status st = strix_model_summarize(m, 640, 640, &s, &e);
        strix_model_free(m);
        TL_CHECK(st == STRIX_OK, "%s", e.message);
        TL_CHECK(s.params_unfused == t[i].unfused && s.params_fused == t[i].fused,
                 "%s %c: params %lld/%lld, Ultralytics %lld/%lld", t[i].yaml, t[i].scale, s.params_unfused,
                 s.params_fused, t[i].unfused, t[i].fused);
        TL_CHECK(fabs(round(s.gflops_fused * k) / k - t[i].gflops) < 1e-9, "%s %c: %.4f GFLOPs, Ultralytics %.*f",
                 t[i].yaml, t[i].scale, s.gflops_fused, decimals, t[i].gflops);
    }
}

static void inspect_matches_ultralytics(void)
{
    static const counts_case t[] = {
        {"weights/yolov8.yaml", 'n', 3157200, 3151904, 8.7},   {"weights/yolov8.yaml", 's', 11166560, 11156544, 28.6},
        {"weights/yolov8.yaml", 'm', 25902640, 25886080, 78.9}, {"weights/yolov8.yaml", 'l', 43691520, 43668288, 165.2},
        {"weights/yolov8.yaml", 'x', 68229648, 68200608, 257.8}, {"weights/yolo11.yaml", 'n', 2624080, 2616248, 6.5},
        {"weights/yolo11.yaml", 's', 9458752, 9443760, 21.5},   {"weights/yolo11.yaml", 'm', 20114688, 20091712, 68.0},
        {"weights/yolo11.yaml", 'l', 25372160, 25340992, 86.9}, {"weights/yolo11.yaml", 'x', 56966176, 56919424, 194.9},
    };
    check_counts(t, sizeof t / sizeof *t, 1);
}

/* The task YAMLs (segment, pose, obb, classify) against Ultralytics 8.4.190
 * (tools/reference/task_counts.py prints these rows): parameters of the model
 * as built and after fuse(), exactly; fused GFLOPs at 640 in the published
 * figures' convention (its get_flops with the attention matmuls taken out and
 * nn.Upsample's elements put in, as the older thop counted), to the 4 decimals
 * it prints. */
static void inspect_task_heads_match_ultralytics(void)
{
    static const counts_case t[] = {
        {"weights/yolov8-seg.yaml", 'n', 3409968, 3404320, 12.0052},
        {"weights/yolov8-seg.yaml", 's', 11821056, 11810560, 40.0911},
        {"weights/yolov8-pose.yaml", 'n', 3295470, 3289964, 9.1802},
        {"weights/yolov8-pose.yaml", 's', 11626046, 11615724, 30.1907},
        {"weights/yolov8-obb.yaml", 'n', 3228867, 3223475, 8.9919},
        {"weights/yolov8-obb.yaml", 's', 11452739, 11442531, 29.5887},
        {"weights/yolov8-cls.yaml", 'n', 2719288, 2715880, 3.2902},
        {"weights/yolov8-cls.yaml", 's', 6361736, 6356200, 12.4489},
        {"weights/yolo11-seg.yaml", 'n', 2876848, 2868664, 9.7423},
        {"weights/yolo11-seg.yaml", 's', 10113248, 10097776, 32.9553},
        {"weights/yolo11-pose.yaml", 'n', 2908507, 2900369, 7.5785},
        {"weights/yolo11-pose.yaml", 's', 9948811, 9933513, 23.2248},
        {"weights/yolo11-obb.yaml", 'n', 2695747, 2687819, 6.7289},
        {"weights/yolo11-obb.yaml", 's', 9744931, 9729747, 22.4529},
        {"weights/yolo11-cls.yaml", 'n', 2812104, 2807024, 3.1732},
        {"weights/yolo11-cls.yaml", 's', 6724008, 6715128, 11.9789},
        {"weights/yolo26-seg.yaml", 'n', 3126280, 2722980, 9.1298},
        {"weights/yolo26-seg.yaml", 's', 11505800, 10396300, 34.2206},
        {"weights/yolo26-pose.yaml", 'n', 3747554, 2960395, 7.6218},
        {"weights/yolo26-pose.yaml", 's', 11870498, 10390323, 24.0510},
        {"weights/yolo26-obb.yaml", 'n', 2715614, 2480503, 5.6053},
        {"weights/yolo26-obb.yaml", 's', 10582142, 9782127, 21.6735},
        {"weights/yolo26-cls.yaml", 'n', 2812104, 2807024, 3.1732},
        {"weights/yolo26-cls.yaml", 's', 6724008, 6715128, 11.9789},
    };
    check_counts(t, sizeof t / sizeof *t, 4);
}

/* Task models: their kind and channels; the CUDA backend refuses every
 * task but detect in one line (checked before the build's CUDA support, so
 * a CPU-only build sees it too), the CPU backend runs them. */
static void task_models_and_cuda_refusal(void)
{
    static const struct {
        const char *yaml;
        strix_task task;
        int channels, kn, kd;
    } t[] = {
        {"weights/yolov8-seg.yaml", STRIX_TASK_SEGMENT, 32, 0, 0}, {"weights/yolo26-pose.yaml", STRIX_TASK_POSE, 51, 17, 3},
        {"weights/yolo11-obb.yaml", STRIX_TASK_OBB, 1, 0, 0},      {"weights/yolov8-cls.yaml", STRIX_TASK_CLASSIFY, 0, 0, 0},
        {"weights/yolo11.yaml", STRIX_TASK_DETECT, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        strix_model *m;
        strix_error e;
        TL_CHECK(load(&m, t[i].yaml, 'n', NULL, &e) == STRIX_OK, "%s", e.message);
        int kn, kd;
        strix_model_kpt_shape(m, &kn, &kd);
        TL_CHECK(strix_model_task(m) == t[i].task && strix_model_task_channels(m) == t[i].channels && kn == t[i].kn &&
                     kd == t[i].kd,
                 "%s: task %s, %d channels, kpt_shape [%d, %d]", t[i].yaml, strix_task_name(strix_model_task(m)),
                 strix_model_task_channels(m), kn, kd);
        float *w = calloc(m->prog.weight_floats + 1, sizeof *w);
        strix_backend_config c = {0};
        c.device = 0;
        c.cpu_isa = strix_model_cpu_isa(m);
        strix_backend *b = NULL;
        strix_status st = strix_backend_create(&b, &m->prog, w, &c, &e);
        if (t[i].task != STRIX_TASK_DETECT) {
            char want[96];
            snprintf(want, sizeof want, "a %s model: the CUDA backend runs detect models only; use --device cpu",
                     strix_task_name(t[i].task));
            TL_CHECK(st == STRIX_E_UNSUPPORTED && !strcmp(e.message, want), "%s on CUDA: status %d, '%s'", t[i].yaml,
                     (int)st, st ? e.message : "");
        }
        if (b) b->ops->free(b);
        c.device = -1;
        b = NULL;
        st = strix_backend_create(&b, &m->prog, w, &c, &e);
        TL_CHECK(st == STRIX_OK, "%s on the CPU: %s", t[i].yaml, e.message);
        b->ops->free(b);
        free(w);
        strix_model_free(m);
    }
}

/* Ultralytics prints "YOLOv8n summary: 129 layers" unfused, 72 fused. */
static void inspect_layer_counts_and_shapes(void)
{
    strix_model *m;
    strix_error e;
    TL_CHECK(load(&m, "weights/yolov8.yaml", 'n', NULL, &e) == STRIX_OK, "%s", e.message);
    strix_model_summary s;
    strix_layer_info li;
    strix_status st = strix_model_summarize(m, 640, 640, &s, &e);
    if (!st) st = strix_model_layer_info(m, 22, 480, 640, &li, &e);
    int n = strix_model_layer_count(m);
    strix_layer_info l9;
    if (!st) st = strix_model_layer_info(m, 9, 480, 640, &l9, &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    TL_CHECK(n == 23, "%d layers", n);
    TL_CHECK(s.modules_unfused == 129 && s.modules_fused == 72, "modules %d/%d", s.modules_unfused, s.modules_fused);
    TL_CHECK(li.out_c == 84 && li.out_w == 80 * 60 + 40 * 30 + 20 * 15, "Detect output %d x %d", li.out_c, li.out_w);
    TL_CHECK(!strcmp(l9.module, "SPPF") && l9.out_c == 256 && l9.out_h == 15 && l9.out_w == 20 &&
                 !strcmp(l9.args, "[256, 256, 5]"),
             "SPPF row: %s %s %dx%dx%d", l9.module, l9.args, l9.out_c, l9.out_h, l9.out_w);
    TL_CHECK(l9.cascade == 3 && li.cascade == 0, "fused max-pools: SPPF %d (3 expected), Detect %d", l9.cascade,
             li.cascade);
    TL_CHECK(s.peak_activation_bytes > 0, "no activation memory planned");
}

/* The planner must reuse memory: the arena is far below the sum of all
 * intermediate tensors. */
static void plan_reuses_memory(void)
{
    strix_model *m;
    strix_error e;
    TL_CHECK(load(&m, "weights/yolo11.yaml", 's', NULL, &e) == STRIX_OK, "%s", e.message);
    strix_model_summary s;
    strix_status st = strix_model_summarize(m, 640, 640, &s, &e);
    double sum = 0;
    for (int i = 0; !st && i < strix_model_layer_count(m); i++) {
        strix_layer_info li;
        st = strix_model_layer_info(m, i, 640, 640, &li, &e);
        sum += 4.0 * li.out_c * li.out_h * li.out_w;
    }
    strix_model_free(m);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    TL_CHECK(s.peak_activation_bytes < 0.6 * sum, "arena %zu bytes vs %.0f bytes of layer outputs alone",
             s.peak_activation_bytes, sum);
}

/* Ultralytics' own YAML style: inline comments, quoted "nearest", scale taken
 * from the file name, names as a mapping. */
static void yaml_ultralytics_style_and_scale_from_name(void)
{
    const char *p = tmp_path("yolov8s.yaml");
    write_file(p, "# Ultralytics-style header comment\n"
                  "nc: 3 # number of classes\n"
                  "names: {0: cat, 1: 'dog', 2: \"hot dog\"}\n"
                  "scales: # compound scaling\n"
                  "  n: [0.33, 0.25, 1024] # comment\n"
                  "  s: [0.33, 0.50, 1024]\n"
                  "backbone:\n"
                  "  - [-1, 1, Conv, [64, 3, 2]] # 0-P1/2\n"
                  "  - [-1, 1, Conv, [128, 3, 2]]\n"
                  "  - [-1, 3, C2f, [128, True]]\n"
                  "  - [-1, 1, Conv, [256, 3, 2]]\n"
                  "  - [-1, 1, Conv, [512, 3, 2]]\n"
                  "  - [-1, 1, SPPF, [512, 5]]\n"
                  "head:\n"
                  "  - [-1, 1, nn.Upsample, [None, 2, \"nearest\"]]\n"
                  "  - [[-1, 3], 1, Concat, [1]]\n"
                  "  - [-1, 1, C2f, [128]]\n"
                  "  - [[7, 5], 1, Detect, [nc]]\n");
    strix_model *m;
    strix_error e;
    TL_CHECK(load(&m, p, 0, NULL, &e) == STRIX_OK, "%s", e.message);
    strix_layer_info li;
    strix_status st = strix_model_layer_info(m, 2, 64, 64, &li, &e);
    int nc = strix_model_class_count(m);
    const char *n2 = strix_model_class_name(m, 2);
    int ok = n2 && !strcmp(n2, "hot dog");
    strix_model_free(m);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    /* scale s: width 0.5 -> 64 channels, depth 0.33 -> 1 repeat */
    TL_CHECK(li.out_c == 64 && li.repeats == 1, "C2f at scale s: %d channels, %d repeats", li.out_c, li.repeats);
    TL_CHECK(nc == 3 && ok, "names not read");
}

/* A names file replaces the model's names: one per line, blank lines and
 * \r\n ends allowed; the wrong count, a directory or an overlong name is
 * one clear line naming the file. */
static void names_file(void)
{
    strix_model *m;
    strix_error e;
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = "weights/yolov8.yaml";
    o.scale = 'n';
    o.nc = 3;
    if (strix_model_load(&m, &o, &e) != STRIX_OK) {
        tl_fail("%s", e.message);
        return;
    }
    const char *p = tmp_path("names.txt");
    write_file(p, "cat\r\n\nhot dog\nbird");
    strix_status st = strix_model_load_names(m, p, &e);
    const char *n1 = strix_model_class_name(m, 1), *n2 = strix_model_class_name(m, 2);
    TL_CHECK(st == STRIX_OK && !strcmp(strix_model_class_name(m, 0), "cat") && n1 && !strcmp(n1, "hot dog") && n2 &&
                 !strcmp(n2, "bird"),
             "names: %s", st ? e.message : "wrong names");
    static const struct {
        const char *text, *want;
    } bad[] = {{"a\nb\n", "2 names for a model with 3 classes"},
               {"a\nb\nc\nd\n", ":4: more names than the model's 3 classes"}};
    for (int i = 0; i < 2; i++) {
        write_file(p, bad[i].text);
        st = strix_model_load_names(m, p, &e);
        TL_CHECK(st == STRIX_E_ARG && strstr(e.message, bad[i].want), "case %d: %d '%s'", i, st, e.message);
    }
    char longname[700];
    memset(longname, 'x', sizeof longname - 2);
    longname[sizeof longname - 2] = '\n';
    longname[sizeof longname - 1] = 0;
    write_file(p, longname);
    st = strix_model_load_names(m, p, &e);
    TL_CHECK(st == STRIX_E_ARG && strstr(e.message, ":1: class name is too long"), "long name: '%s'", e.message);
    st = strix_model_load_names(m, tmpdir, &e);
    TL_CHECK(st == STRIX_E_IO && strstr(e.message, "is a directory"), "directory: '%s'", e.message);
    n1 = strix_model_class_name(m, 1);
    TL_CHECK(n1 && !strcmp(n1, "hot dog"), "a failed load must keep the names");
    strix_model_free(m);
}

/* ----------------------------------------------------------- YAML errors */

static void yaml_errors_name_file_and_line(void)
{
    static const struct {
        const char *text, *want;
        int line;
        strix_status st;
    } t[] = {
        {"", "empty", 0, STRIX_E_MODEL},
        {"nc: 80\nbackbone: [[-1, 1, Conv, [16, 3, 2]]\n", "malformed YAML", 3, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, Frobnicate, [16]]\nhead:\n  - [[1], 1, Detect, [nc]]\n",
         "Frobnicate is not a module", 4, STRIX_E_MODEL},
        {"nc: 80\ncolour: blue\nbackbone: []\nhead: []\n", "unknown key 'colour'", 2, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv]\nhead:\n  - [[0], 1, Detect, [nc]]\n", "[from, repeats, module, args]", 3,
         STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2, 1, 1, 1, True, 9]]\nhead:\n  - [[0], 1, Detect, [nc]]\n",
         "takes [c2, k, s, p, g, d, act]", 3, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, three, 2]]\nhead:\n  - [[0], 1, Detect, [nc]]\n",
         "must be an integer, got 'three'", 3, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [5, 1, Conv, [16, 3, 2]]\nhead:\n  - [[1], 1, Detect, [nc]]\n",
         "'from' index 5 does not name an earlier layer", 4, STRIX_E_MODEL},
        {"backbone:\n  - [-1, 1, Conv, [16, 3, 2]]\nhead:\n  - [[0], 1, Detect, [nc]]\n", "missing 'nc'", 1, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\nhead:\n  - [-1, 1, Conv, [16, 3, 2]]\n",
         "the last layer must be Detect", 4, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, C2f, [16, yes_please]]\nhead:\n  - [[1], 1, Detect, [nc]]\n",
         "must be True or False", 4, STRIX_E_MODEL},
        {"nc: 80\nnc: 81\nbackbone: []\nhead: []\n", "appears twice", 2, STRIX_E_MODEL},
        {"nc: 80\nbackbone:\n  - [-1, 1, nn.Upsample, [None, 2, \"bilinear\"]]\nhead:\n  - [[0], 1, Detect, [nc]]\n",
         "mode 'bilinear' is not supported", 3, STRIX_E_MODEL},
        /* the fuzzer's out-of-memory input: millions of C2f copies */
        {"nc: 80\ndepth_multiple: 5.1e6\nbackbone:\n  - [-1, 3, C2f, [16]]\nhead:\n  - [[0], 1, Detect, [nc]]\n",
         "depth_multiple and width_multiple must be in (0, 100]", 2, STRIX_E_MODEL},
        {"nc: 80\ndepth_multiple: 100\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 11, C2f, [16]]\n"
         "head:\n  - [[1], 1, Detect, [nc]]\n",
         "repeats 11 x depth 100 = 1100 modules: at most 1000", 4, STRIX_E_MODEL},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.yaml", i);
        const char *p = tmp_path(name);
        write_file(p, t[i].text);
        strix_model *m = NULL;
        strix_error e;
        strix_status st = load(&m, p, 'n', NULL, &e);
        strix_model_free(m);
        TL_CHECK(st == t[i].st, "case %zu: status %s, want %s (%s)", i, strix_status_name(st),
                 strix_status_name(t[i].st), e.message);
        TL_CHECK(m == NULL, "case %zu: a model came back on failure", i);
        TL_CHECK(strstr(e.message, p) && strstr(e.message, t[i].want), "case %zu: message '%s' lacks '%s' or the path",
                 i, e.message, t[i].want);
        char ln[32];
        snprintf(ln, sizeof ln, "%s:%d:", p, t[i].line);
        TL_CHECK(!t[i].line || strstr(e.message, ln), "case %zu: message '%s' does not name line %d", i, e.message,
                 t[i].line);
        TL_CHECK(!strchr(e.message, '\n'), "case %zu: message spans lines", i);
    }
    strix_model *m = NULL;
    strix_error e;
    TL_CHECK(load(&m, tmp_path("no-such.yaml"), 'n', NULL, &e) == STRIX_E_IO && strstr(e.message, "no-such.yaml"),
             "missing file: %s", e.message);
    TL_CHECK(load(&m, "weights/yolov8.yaml", 'q', NULL, &e) == STRIX_E_ARG && strstr(e.message, "scale 'q'"),
             "unknown scale: %s", e.message);
}

/* --------------------------------------------------- checkpoints and errors */

static void make_weights(const char *yaml, char scale, const char *path, uint64_t seed, int fused, int f16)
{
    strix_model *m;
    strix_error e;
    if (load(&m, yaml, scale, NULL, &e)) {
        tl_fail("%s", e.message);
        return;
    }
    if (strix_model_write_synthetic_weights(m, path, seed, fused, f16, 1, &e)) tl_fail("%s", e.message);
    strix_model_free(m);
}

/* Rewrite src into dst with fn deciding, per tensor, to keep, drop, reshape
 * or retype it, or to add a copy named model.99.extra.weight. */
typedef int (*edit_fn)(const strix_st_tensor *t, char *name, int64_t *shape, int *ndim, strix_st_dtype *dt);

static int rewrite(const char *src, const char *dst, edit_fn fn)
{
    strix_st_file *f;
    strix_error e;
    if (strix_st_open(&f, src, &e)) return 0;
    strix_st_writer *w;
    strix_st_writer_create(&w, &e);
    size_t n = strix_st_count(f);
    float **bufs = calloc(n, sizeof *bufs);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        const strix_st_tensor *t = strix_st_get(f, i);
        char name[256];
        int64_t shape[8];
        int nd = t->ndim;
        strix_st_dtype dt = t->dtype;
        snprintf(name, sizeof name, "%s", t->name);
        memcpy(shape, t->shape, sizeof shape);
        int keep = fn(t, name, shape, &nd, &dt); /* 0 drop, 1 keep (edited), 2 keep + extra copy */
        if (!keep) continue;
        size_t numel = 1;
        for (int k = 0; k < nd; k++) numel *= (size_t)shape[k];
        bufs[i] = calloc((numel > t->numel ? numel : t->numel) + 1, sizeof(float));
        strix_st_to_f32(bufs[i], t, NULL);
        ok = strix_st_writer_add(w, name, dt, nd, shape, bufs[i], &e) == STRIX_OK;
        if (ok && keep == 2) ok = strix_st_writer_add(w, "model.99.extra.weight", dt, nd, shape, bufs[i], &e) == STRIX_OK;
    }
    ok = ok && strix_st_writer_write(w, dst, 1, &e) == STRIX_OK;
    strix_st_writer_free(w);
    for (size_t i = 0; i < n; i++) free(bufs[i]);
    free(bufs);
    strix_st_close(f);
    return ok;
}

static int drop_one(const strix_st_tensor *t, char *name, int64_t *shape, int *nd, strix_st_dtype *dt)
{
    return strcmp(t->name, "model.4.m.1.cv2.bn.running_var") != 0;
}
static int add_extra(const strix_st_tensor *t, char *name, int64_t *shape, int *nd, strix_st_dtype *dt)
{
    return strcmp(t->name, "model.0.bn.bias") ? 1 : 2;
}
static int reshape_one(const strix_st_tensor *t, char *name, int64_t *shape, int *nd, strix_st_dtype *dt)
{
    if (!strcmp(t->name, "model.2.cv1.conv.weight")) shape[0] = shape[0] / 2;
    return 1;
}

static void weights_errors_are_named(void)
{
    const char *good = tmp_path("good.safetensors"), *bad = tmp_path("bad.safetensors");
    make_weights("weights/yolov8.yaml", 'n', good, 3, 0, 0);
    if (tl_g.failed) return;
    static const struct {
        edit_fn fn;
        const char *want;
    } t[] = {
        {drop_one, "model.4.m.1.cv2.bn.running_var"},
        {add_extra, "model.99.extra.weight"},
        {reshape_one, "'model.2.cv1.conv.weight' has shape [16, 32, 1, 1] but the model needs [32, 32, 1, 1]"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        TL_CHECK(rewrite(good, bad, t[i].fn), "case %zu: could not write the test file", i);
        strix_model *m = NULL;
        strix_error e;
        strix_status st = load(&m, "weights/yolov8.yaml", 'n', bad, &e);
        strix_model_free(m);
        TL_CHECK(st == STRIX_E_WEIGHTS && strstr(e.message, t[i].want) && strstr(e.message, bad),
                 "case %zu: %s: %s", i, strix_status_name(st), e.message);
    }
    /* a checkpoint for another scale */
    strix_model *m = NULL;
    strix_error e;
    strix_status st = load(&m, "weights/yolov8.yaml", 's', good, &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_E_WEIGHTS && strstr(e.message, "another scale"), "wrong scale: %s", e.message);
    /* truncated file */
    FILE *f = fopen(good, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size);
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    f = fopen(bad, "wb");
    fwrite(buf, 1, got / 2, f);
    fclose(f);
    free(buf);
    st = load(&m, "weights/yolov8.yaml", 'n', bad, &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_E_WEIGHTS && strstr(e.message, bad), "truncated: %s: %s", strix_status_name(st), e.message);
    write_file(bad, "");
    st = load(&m, "weights/yolov8.yaml", 'n', bad, &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_E_WEIGHTS && strstr(e.message, "empty"), "empty: %s", e.message);
    st = load(&m, "weights/yolov8.yaml", 'n', tmp_path("missing.safetensors"), &e);
    strix_model_free(m);
    TL_CHECK(st == STRIX_E_IO, "missing: %s", e.message);
    unlink(good);
    unlink(bad);
}

/* Unfused (BatchNorm folded at load), fused and F16 checkpoints of the same
 * synthetic weights run the same network. */
static void fused_unfused_f16_agree(void)
{
    const char *pu = tmp_path("u.safetensors"), *pf = tmp_path("f.safetensors"), *ph = tmp_path("h.safetensors");
    make_weights("weights/yolo11.yaml", 'n', pu, 11, 0, 0);
    make_weights("weights/yolo11.yaml", 'n', pf, 11, 1, 0);
    make_weights("weights/yolo11.yaml", 'n', ph, 11, 0, 1);
    if (tl_g.failed) return;
    int h = 96, w = 128;
    strix_model *m[3] = {0};
    strix_error e;
    const char *paths[3] = {pu, pf, ph};
    float *x = malloc(sizeof(float) * h * w * 3 * 2);
    for (int i = 0; i < h * w * 3 * 2; i++) x[i] = tl_uniform(0, 1);
    float *y[3] = {0};
    size_t A = 0, n = 0;
    for (int k = 0; k < 3; k++) {
        TL_CHECK(load(&m[k], "weights/yolo11.yaml", 'n', paths[k], &e) == STRIX_OK, "%s", e.message);
        A = strix_model_anchor_count(m[k], h, w);
        n = 2 * A * (4 + 80);
        y[k] = malloc(sizeof(float) * n);
        TL_CHECK(strix_model_forward(m[k], x, 2, h, w, y[k], &e) == STRIX_OK, "%s", e.message);
    }
    double d01 = 0, d02 = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        d01 += (double)(y[0][i] - y[1][i]) * (y[0][i] - y[1][i]);
        d02 += (double)(y[0][i] - y[2][i]) * (y[0][i] - y[2][i]);
        ref += (double)y[0][i] * y[0][i];
    }
    for (int k = 0; k < 3; k++) {
        strix_model_free(m[k]);
        free(y[k]);
    }
    free(x);
    unlink(pu);
    unlink(pf);
    unlink(ph);
    TL_CHECK(A == (size_t)(12 * 16 + 6 * 8 + 3 * 4), "anchors %zu", A);
    TL_CHECK(sqrt(d01 / ref) < 1e-5, "fused vs unfused relative L2 %.3g", sqrt(d01 / ref));
    TL_CHECK(sqrt(d02 / ref) < 2e-2 && sqrt(d02 / ref) > 0, "F16 vs F32 relative L2 %.3g", sqrt(d02 / ref));
}

/* Batch results equal single-image results; bad shapes are refused. */
/* The whole network (yolo11n: every conv shape kind, attention included)
 * with each CPU instruction set this machine runs agrees with the generic
 * build to fp32 rounding, and its result does not depend on the thread
 * count (2 threads polling before they block, cpu_spin_us); an instruction
 * set the build or CPU lacks fails the load. */
static void cpu_isas_agree(void)
{
    const char *p = tmp_path("isa.safetensors");
    make_weights("weights/yolo11.yaml", 'n', p, 13, 0, 0);
    if (tl_g.failed) return;
    int h = 64, w = 96, B = 2, tested = 0;
    float *x = malloc(sizeof(float) * h * w * 3 * B), *y0 = NULL, *y[2] = {NULL, NULL};
    for (int i = 0; i < h * w * 3 * B; i++) x[i] = tl_uniform(0, 1);
    size_t n = 0;
    double worst = 0;
    int worst_isa = 0, thread_diff = -1, refused = -1;
    strix_error e;
    strix_status st = STRIX_OK;
    for (int isa = STRIX_CPU_ISA_GENERIC; isa < STRIX_CPU_ISA_COUNT && !st; isa++) {
        strix_model_options o;
        strix_model_options_init(&o);
        o.yaml_path = "weights/yolo11.yaml";
        o.scale = 'n';
        o.weights_path = p;
        o.cpu_isa = (strix_cpu_isa)isa;
        int ran = 0;
        for (int t = 0; t < 2 && !st; t++) {
            o.threads = t + 1;
            o.cpu_spin_us = t ? 50 : 0; /* the polling wait too */
            strix_model *m;
            strix_status ls = strix_model_load(&m, &o, &e);
            if (!strix_cpu_isa_supported((strix_cpu_isa)isa)) {
                if (ls != STRIX_E_ARG || !strstr(e.message, strix_cpu_isa_name((strix_cpu_isa)isa))) refused = isa;
                if (!ls) strix_model_free(m);
                break;
            }
            if ((st = ls)) break;
            if (!y0) {
                n = strix_model_anchor_count(m, h, w) * (4 + 80) * B;
                y0 = malloc(sizeof(float) * n);
                y[0] = malloc(sizeof(float) * n);
                y[1] = malloc(sizeof(float) * n);
            }
            if (strix_model_cpu_isa(m) != (strix_cpu_isa)isa) refused = isa;
            st = strix_model_forward(m, x, B, h, w, y[t], &e);
            strix_model_free(m);
            ran += !st;
        }
        if (ran < 2) continue;
        /* 2 threads must give the 1-thread result bit for bit */
        if (memcmp(y[0], y[1], sizeof(float) * n) && thread_diff < 0) thread_diff = isa;
        if (isa == STRIX_CPU_ISA_GENERIC) {
            memcpy(y0, y[0], sizeof(float) * n);
            continue;
        }
        tested++;
        double d = 0, ref = 0;
        for (size_t i = 0; i < n; i++) {
            d += (double)(y[0][i] - y0[i]) * (y[0][i] - y0[i]);
            ref += (double)y0[i] * y0[i];
        }
        if (!(sqrt(d / ref) <= worst)) worst = sqrt(d / ref), worst_isa = isa;
    }
    free(x);
    free(y0);
    free(y[0]);
    free(y[1]);
    unlink(p);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    TL_CHECK(refused < 0, "cpu_isa %s: not refused (or not kept) as it should be", strix_cpu_isa_name(refused));
    TL_CHECK(thread_diff < 0, "cpu_isa %s: 1 and 2 threads differ", strix_cpu_isa_name(thread_diff));
    TL_CHECK(worst < 1e-5, "cpu_isa %s vs generic: relative L2 %.3g", strix_cpu_isa_name(worst_isa), worst);
    if (!tested) tl_skip("this CPU runs the generic micro-kernels only: nothing to compare them with");
}

static void batch_equals_single_and_bad_shapes(void)
{
    const char *p = tmp_path("b.safetensors");
    make_weights("weights/yolov8.yaml", 'n', p, 5, 0, 0);
    if (tl_g.failed) return;
    strix_model *m;
    strix_error e;
    TL_CHECK(load(&m, "weights/yolov8.yaml", 'n', p, &e) == STRIX_OK, "%s", e.message);
    int h = 64, w = 96, B = 3;
    size_t A = strix_model_anchor_count(m, h, w), row = 84, img = (size_t)h * w * 3;
    float *x = malloc(sizeof(float) * img * B), *yb = malloc(sizeof(float) * A * row * B), *y1 = malloc(sizeof(float) * A * row);
    for (size_t i = 0; i < img * B; i++) x[i] = tl_uniform(0, 1);
    strix_status st = strix_model_forward(m, x, B, h, w, yb, &e);
    double worst = 0;
    for (int b = 0; !st && b < B; b++) {
        st = strix_model_forward(m, x + img * b, 1, h, w, y1, &e);
        for (size_t i = 0; i < A * row; i++) {
            double d = fabs(y1[i] - yb[A * row * b + i]) / (fabs(y1[i]) + 1e-3);
            if (d > worst) worst = d;
        }
    }
    strix_status bad = strix_model_forward(m, x, 1, 50, 64, y1, &e);
    strix_model_free(m);
    free(x);
    free(yb);
    free(y1);
    unlink(p);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    TL_CHECK(worst < 1e-5, "batch of %d differs from single images by %.3g", B, worst);
    TL_CHECK(bad == STRIX_E_ARG && strstr(e.message, "multiple of the model stride"), "50x64 input: %s", e.message);
}

/* Random RGB pixels for a w x h image. */
static uint8_t *random_image(int w, int h, strix_image *im)
{
    uint8_t *px = malloc((size_t)w * h * 3);
    for (size_t i = 0; px && i < (size_t)w * h * 3; i++) px[i] = (uint8_t)tl_int(0, 255);
    *im = (strix_image){.data = px, .width = w, .height = h, .format = STRIX_RGB};
    return px;
}

static int same_dets(const strix_detections *a, const strix_detection *b, int nb)
{
    return a->count == nb && (!nb || !memcmp(a->items, b, sizeof *b * (size_t)nb));
}

/* A yolov8n of synthetic weights (seed) loaded for the detect tests below,
 * its file removed again, and the detect options they share (imgsz 128,
 * conf 0.05: small images, some boxes); 0, or -1 (the test failed). */
static int small_detector(const char *name, int seed, strix_model **m, strix_detect_options *d)
{
    const char *p = tmp_path(name);
    make_weights("weights/yolov8.yaml", 'n', p, seed, 0, 0);
    if (tl_g.failed) return -1;
    strix_error e;
    strix_status st = load(m, "weights/yolov8.yaml", 'n', p, &e);
    unlink(p);
    if (st) {
        tl_fail("%s", e.message);
        return -1;
    }
    strix_detect_options_init(d);
    d->imgsz = 128;
    d->conf = 0.05f;
    return 0;
}

/* cpu_exact_conv: the same synthetic yolov8n on a fresh random input with
 * and without Winograd agree within the fp32 bound (relative L2 1e-5, as
 * fused and unfused weights); on an AVX2 CPU, whose build has Winograd, the
 * default differs in the last bits (the option does something), and two
 * exact loads agree to the bit. */
static void exact_conv_option(void)
{
    const char *p = tmp_path("wx.safetensors");
    make_weights("weights/yolov8.yaml", 'n', p, 13, 0, 0);
    if (tl_g.failed) return;
    int h = 96, w = 128;
    strix_model *m[3] = {0};
    strix_error e;
    float *x = malloc(sizeof(float) * h * w * 3), *y[3] = {0};
    for (int i = 0; x && i < h * w * 3; i++) x[i] = tl_uniform(0, 1);
    size_t n = 0;
    for (int k = 0; k < 3 && x && !tl_g.failed; k++) {
        strix_model_options o;
        strix_model_options_init(&o);
        o.yaml_path = "weights/yolov8.yaml";
        o.scale = 'n';
        o.weights_path = p;
        o.threads = 2;
        o.cpu_exact_conv = k > 0;
        TL_CHECK(strix_model_load(&m[k], &o, &e) == STRIX_OK, "%s", e.message);
        if (tl_g.failed) break;
        n = strix_model_anchor_count(m[k], h, w) * (4 + 80);
        y[k] = malloc(sizeof(float) * n);
        TL_CHECK(y[k] && strix_model_forward(m[k], x, 1, h, w, y[k], &e) == STRIX_OK, "%s", e.message);
    }
    double d = 0, ref = 0;
    for (size_t i = 0; !tl_g.failed && i < n; i++) {
        d += (double)(y[0][i] - y[1][i]) * (y[0][i] - y[1][i]);
        ref += (double)y[1][i] * y[1][i];
    }
    int avx2 = m[0] && strix_model_cpu_isa(m[0]) == STRIX_CPU_ISA_AVX2;
    if (!tl_g.failed) {
        TL_CHECK(sqrt(d / ref) < 1e-5, "Winograd vs exact relative L2 %.3g", sqrt(d / ref));
        TL_CHECK(!avx2 || d > 0, "an AVX2 CPU: Winograd gave the exact path's bits");
        TL_CHECK(!memcmp(y[1], y[2], sizeof(float) * n), "two exact loads differ");
    }
    for (int k = 0; k < 3; k++) {
        strix_model_free(m[k]);
        free(y[k]);
    }
    free(x);
    unlink(p);
}

/* strix_model_classify on fresh random pictures (the Pillow resize and crop
 * against Ultralytics: tests/cli_tasks.sh's classify goldens): imgsz
 * rounded up to a multiple of 32 as check_imgsz does; a BGR picture gives
 * its RGB twin's probabilities to the bit, a batch each picture's alone;
 * each row a softmax; a detect model, NV12 pixels and a size past 8192
 * refused. */
static void classify_api(void)
{
    const char *p = tmp_path("cls.safetensors");
    make_weights("weights/yolov8-cls.yaml", 'n', p, 5, 0, 0);
    strix_model *m, *det;
    strix_error e;
    if (tl_g.failed || load(&m, "weights/yolov8-cls.yaml", 'n', p, &e)) {
        unlink(p);
        tl_fail("%s", e.message);
        return;
    }
    unlink(p);
    TL_CHECK(strix_model_classify_size(m, 100) == 128 && strix_model_classify_size(m, 224) == 224 &&
                 strix_model_classify_size(m, 250) == 256,
             "sizes %d %d %d", strix_model_classify_size(m, 100), strix_model_classify_size(m, 224),
             strix_model_classify_size(m, 250));
    int nc = strix_model_class_count(m), w[2], h[2];
    uint8_t *rgb[2], *bgr[2];
    strix_image im[2], imb[2];
    for (int k = 0; k < 2; k++) {
        w[k] = tl_int(20, 160);
        h[k] = tl_int(20, 160);
        rgb[k] = malloc((size_t)w[k] * h[k] * 3);
        bgr[k] = malloc((size_t)w[k] * h[k] * 3);
        for (size_t i = 0; rgb[k] && bgr[k] && i < (size_t)w[k] * h[k] * 3; i++) rgb[k][i] = (uint8_t)tl_u64();
        for (size_t i = 0; rgb[k] && bgr[k] && i < (size_t)w[k] * h[k]; i++)
            for (int c = 0; c < 3; c++) bgr[k][3 * i + c] = rgb[k][3 * i + 2 - c];
        im[k] = (strix_image){.data = rgb[k], .width = w[k], .height = h[k], .format = STRIX_RGB};
        imb[k] = im[k];
        imb[k].data = bgr[k];
        imb[k].format = STRIX_BGR;
    }
    float *pa = malloc(sizeof *pa * 2 * (size_t)nc), *pb = malloc(sizeof *pb * 2 * (size_t)nc),
          *p1 = malloc(sizeof *p1 * (size_t)nc);
    TL_CHECK(pa && pb && p1 && rgb[0] && rgb[1] && bgr[0] && bgr[1], "out of memory");
    strix_status st = tl_g.failed ? STRIX_OK : strix_model_classify(m, im, 2, 100, pa, &e);
    if (!st && !tl_g.failed) st = strix_model_classify(m, imb, 2, 100, pb, &e);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    for (int k = 0; k < 2 && !tl_g.failed; k++) {
        st = strix_model_classify(m, &im[k], 1, 100, p1, &e);
        TL_CHECK(st == STRIX_OK, "%s", e.message);
        double sum = 0;
        for (int c = 0; c < nc; c++) sum += pa[k * nc + c];
        TL_CHECK(!memcmp(pa + (size_t)k * nc, pb + (size_t)k * nc, sizeof *pa * (size_t)nc) &&
                     !memcmp(pa + (size_t)k * nc, p1, sizeof *pa * (size_t)nc) && fabs(sum - 1) < 1e-4,
                 "picture %d (%dx%d): BGR, batched and alone differ, or the row sums to %g", k, w[k], h[k], sum);
    }
    im[1].format = STRIX_NV12;
    TL_CHECK(strix_model_classify(m, im, 2, 100, pa, &e) == STRIX_E_ARG && strstr(e.message, "image 1"),
             "NV12: %s", e.message);
    TL_CHECK(strix_model_classify(m, im, 1, 8200, pa, &e) == STRIX_E_ARG, "imgsz 8200 accepted");
    if (!tl_g.failed && small_detector("clsdet.safetensors", 3, &det, &(strix_detect_options){0}) == 0) {
        TL_CHECK(strix_model_classify(det, im, 1, 100, pa, &e) == STRIX_E_ARG && strstr(e.message, "a detect model"),
                 "a detect model: %s", e.message);
        strix_model_free(det);
    }
    for (int k = 0; k < 2; k++) {
        free(rgb[k]);
        free(bgr[k]);
    }
    free(pa);
    free(pb);
    free(p1);
    strix_model_free(m);
}

/* The asynchronous API: batches submitted together and collected in any
 * order give what detect gives; at most STRIX_MAX_IN_FLIGHT out at once;
 * a batch's results survive later detect calls until it is released. */
static void submit_collect_equals_detect(void)
{
    strix_model *m;
    strix_error e;
    strix_detect_options d;
    if (small_detector("s.safetensors", 9, &m, &d)) return;
    strix_image ia[2], ib[1], ic[1];
    uint8_t *px[4] = {random_image(96, 64, &ia[0]), random_image(96, 64, &ia[1]), random_image(70, 100, &ib[0]),
                      random_image(128, 40, &ic[0])};
    /* the references, copied out of the model's buffers */
    strix_detection ref[4][300];
    int nref[4];
    strix_detections r[2];
    const strix_image *sets[3] = {ia, ib, ic};
    int sizes[3] = {2, 1, 1};
    for (int s = 0, k = 0; s < 3; s++) {
        TL_CHECK(strix_model_detect(m, sets[s], sizes[s], &d, r, &e) == STRIX_OK, "%s", e.message);
        for (int i = 0; i < sizes[s]; i++, k++) {
            nref[k] = r[i].count;
            memcpy(ref[k], r[i].items, sizeof *r[i].items * (size_t)r[i].count);
        }
    }
    TL_CHECK(nref[0] + nref[1] + nref[2] > 0, "no detections to compare (conf %.2f)", d.conf);
    strix_batch *a = NULL, *b = NULL, *c = NULL;
    TL_CHECK(strix_model_submit(m, ia, 2, &d, &a, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(strix_model_submit(m, ib, 1, &d, &b, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(strix_model_submit(m, ic, 1, &d, &c, &e) == STRIX_E_ARG && !c && strstr(e.message, "release one"),
             "a third batch in flight: %s", e.message);
    strix_detections rb[1], ra[2], rc[1];
    TL_CHECK(strix_batch_collect(b, rb, &e) == STRIX_OK && same_dets(&rb[0], ref[2], nref[2]),
             "batch b collected first: %d boxes, detect gave %d", rb[0].count, nref[2]);
    TL_CHECK(strix_batch_collect(a, ra, &e) == STRIX_OK && same_dets(&ra[0], ref[0], nref[0]) &&
             same_dets(&ra[1], ref[1], nref[1]), "batch a: %d and %d boxes, detect gave %d and %d", ra[0].count,
             ra[1].count, nref[0], nref[1]);
    strix_batch_release(a);
    TL_CHECK(strix_batch_collect(a, ra, &e) == STRIX_E_ARG, "a released batch collected");
    TL_CHECK(strix_model_submit(m, ic, 1, &d, &c, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(strix_batch_collect(c, rc, &e) == STRIX_OK && same_dets(&rc[0], ref[3], nref[3]),
             "batch c (another shape): %d boxes, detect gave %d", rc[0].count, nref[3]);
    TL_CHECK(strix_model_detect(m, ia, 2, &d, r, &e) == STRIX_OK, "%s", e.message);
    TL_CHECK(strix_batch_collect(b, rb, &e) == STRIX_OK && same_dets(&rb[0], ref[2], nref[2]),
             "batch b's results changed under a later detect");
    strix_batch_release(b);
    strix_batch_release(c);
    strix_model_free(m);
    for (int i = 0; i < 4; i++) free(px[i]);
}

/* NV12 frames detect exactly as the RGB images of their converted pixels
 * (a batch mixing them, odd sizes); NV12 without its U,V plane and device
 * memory on a CPU model are refused. */
static void nv12_detects_as_converted_rgb(void)
{
    strix_model *m;
    strix_error e;
    strix_detect_options d;
    if (small_detector("n.safetensors", 11, &m, &d)) return;
    enum { N = 3 };
    const int ws[N] = {97, 128, 97}, hs[N] = {65, 72, 65};
    strix_image nv[N], rgb[N];
    uint8_t *buf[2 * N];
    for (int i = 0; i < N; i++) {
        const int w = ws[i], h = hs[i], cw = (w + 1) / 2, ch = (h + 1) / 2;
        uint8_t *y = buf[2 * i] = malloc((size_t)w * h + (size_t)2 * cw * ch);
        for (size_t k = 0; y && k < (size_t)w * h + (size_t)2 * cw * ch; k++) y[k] = (uint8_t)tl_int(16, 240);
        nv[i] = (strix_image){.data = y, .width = w, .height = h, .format = STRIX_NV12, .uv = y + (size_t)w * h,
                              .colorspace = i ? STRIX_BT709 : STRIX_BT601, .full_range = i == 2};
        uint8_t *px = buf[2 * i + 1] = malloc((size_t)w * h * 3);
        if (!y || !px) return;
        strix_yuv_coeffs c;
        strix_yuv_coeffs_init(&c, nv[i].colorspace, nv[i].full_range);
        for (int r = 0; r < h; r++) strix_nv12_row_rgb(px + (size_t)r * w * 3, &nv[i], &c, r);
        rgb[i] = (strix_image){.data = px, .width = w, .height = h, .format = STRIX_RGB};
    }
    strix_detection ref[N][300];
    int nref[N], total = 0;
    strix_detections r[N];
    TL_CHECK(strix_model_detect(m, rgb, N, &d, r, &e) == STRIX_OK, "%s", e.message);
    for (int i = 0; i < N; i++) {
        nref[i] = r[i].count;
        total += r[i].count;
        memcpy(ref[i], r[i].items, sizeof *r[i].items * (size_t)r[i].count);
    }
    TL_CHECK(total > 0, "no detections to compare (conf %.2f)", d.conf);
    const strix_image mixed[N] = {nv[0], rgb[1], nv[2]};
    TL_CHECK(strix_model_detect(m, mixed, N, &d, r, &e) == STRIX_OK, "%s", e.message);
    for (int i = 0; i < N; i++)
        TL_CHECK(same_dets(&r[i], ref[i], nref[i]), "image %d (%s): %d boxes, its RGB gave %d or other boxes", i,
                 i == 1 ? "RGB" : "NV12", r[i].count, nref[i]);
    strix_image bad = nv[0];
    bad.uv = NULL;
    TL_CHECK(strix_model_detect(m, &bad, 1, &d, r, &e) == STRIX_E_ARG && strstr(e.message, "U,V plane"),
             "NV12 without uv: %s", e.message);
    bad = rgb[0];
    bad.memory = STRIX_DEVICE;
    TL_CHECK(strix_model_detect(m, &bad, 1, &d, r, &e) == STRIX_E_ARG && strstr(e.message, "CUDA device"),
             "device memory on the CPU: %s", e.message);
    strix_model_free(m);
    for (int i = 0; i < 2 * N; i++) free(buf[i]);
}

/* strix_model_alloc_pinned on the CPU backend: plain host memory, aligned
 * to STRIX_PINNED_ALIGN, every byte writable (ASan checks the extent);
 * refusals with one clear line: 0 bytes, no out pointer, a size past the
 * address space, a model without weights; freeing NULL does nothing. */
static void pinned_alloc_on_cpu(void)
{
    const char *p = tmp_path("pa.safetensors");
    make_weights("weights/yolov8.yaml", 'n', p, 13, 0, 0);
    if (tl_g.failed) return;
    strix_model *m, *bare;
    strix_error e;
    TL_CHECK(load(&m, "weights/yolov8.yaml", 'n', p, &e) == STRIX_OK, "%s", e.message);
    unlink(p);
    for (int k = 0; k < 8 && !tl_g.failed; k++) {
        const size_t bytes = k ? (size_t)tl_int(1, 3 << 20) : 1;
        void *q = NULL;
        strix_status st = strix_model_alloc_pinned(m, bytes, &q, &e);
        if (st || !q || (uintptr_t)q % STRIX_PINNED_ALIGN) {
            tl_fail("%zu bytes: status %d, %p (%s)", bytes, st, q, st ? e.message : "misaligned");
            break;
        }
        memset(q, k, bytes);
        TL_CHECK(((uint8_t *)q)[bytes - 1] == k, "%zu bytes: the last byte did not keep its value", bytes);
        strix_model_free_pinned(m, q);
    }
    void *q = (void *)&e;
    TL_CHECK(strix_model_alloc_pinned(m, 0, &q, &e) == STRIX_E_ARG && !q && strstr(e.message, "0 bytes"),
             "0 bytes: %s", e.message);
    TL_CHECK(strix_model_alloc_pinned(m, 64, NULL, &e) == STRIX_E_ARG && strstr(e.message, "pointer"),
             "no out pointer: %s", e.message);
    TL_CHECK(strix_model_alloc_pinned(m, SIZE_MAX, &q, &e) == STRIX_E_NOMEM && !q &&
                 strstr(e.message, "address space"), "SIZE_MAX bytes: %s", e.message);
    strix_model_free_pinned(m, NULL);
    strix_model_free(m);
    TL_CHECK(load(&bare, "weights/yolov8.yaml", 'n', NULL, &e) == STRIX_OK, "%s", e.message);
    strix_status st = strix_model_alloc_pinned(bare, 64, &q, &e);
    strix_model_free(bare);
    TL_CHECK(st == STRIX_E_ARG && !q && strstr(e.message, "without weights"), "a model without weights: %s",
             e.message);
}

/* Frames in strix_model_alloc_pinned memory marked STRIX_PINNED (RGB, BGR,
 * NV12, padded rows, all in one allocation back to back) give the same bits
 * as the same pixels passed as STRIX_HOST, through detect and through
 * submit/collect, alone and mixed with host frames in one batch; an unknown
 * memory kind is refused. */
static void pinned_detects_as_host(void)
{
    strix_model *m;
    strix_error e;
    strix_detect_options d;
    if (small_detector("pd.safetensors", 15, &m, &d)) return;
    enum { N = 4 };
    const int w = tl_int(60, 140), h = tl_int(40, 120), pad = tl_int(0, 9);
    size_t bytes[N], total = 0;
    strix_image host[N], pin[N];
    for (int i = 0; i < N; i++) {
        const int nv12 = i == 2, stride = (nv12 ? w : 3 * w) + pad;
        const int uv_stride = 2 * ((w + 1) / 2) + pad;
        bytes[i] = (size_t)stride * h + (nv12 ? (size_t)uv_stride * ((h + 1) / 2) : 0);
        host[i] = (strix_image){.width = w, .height = h, .stride = stride, .format = nv12 ? STRIX_NV12 : i == 1 ? STRIX_BGR : STRIX_RGB,
                                .uv_stride = nv12 ? uv_stride : 0, .full_range = 1};
        total += bytes[i];
    }
    uint8_t *hostbuf = malloc(total), *pinbuf = NULL;
    if (!hostbuf) return;
    strix_status st = strix_model_alloc_pinned(m, total, (void **)&pinbuf, &e);
    if (st) {
        free(hostbuf);
        strix_model_free(m);
    }
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    for (size_t k = 0; k < total; k++) hostbuf[k] = (uint8_t)tl_int(0, 255);
    memcpy(pinbuf, hostbuf, total);
    for (size_t i = 0, off = 0; i < N; off += bytes[i++]) {
        host[i].data = hostbuf + off;
        if (host[i].format == STRIX_NV12) host[i].uv = host[i].data + (size_t)host[i].stride * h;
        pin[i] = host[i];
        pin[i].data = pinbuf + off;
        if (pin[i].uv) pin[i].uv = pin[i].data + (size_t)pin[i].stride * h;
        pin[i].memory = STRIX_PINNED;
    }
    strix_detection ref[N][300];
    int nref[N], total_boxes = 0;
    strix_detections r[N];
    st = strix_model_detect(m, host, N, &d, r, &e);
    for (int i = 0; i < N && !st; i++) {
        nref[i] = r[i].count;
        total_boxes += r[i].count;
        memcpy(ref[i], r[i].items, sizeof *r[i].items * (size_t)r[i].count);
    }
    const strix_image mixed[N] = {pin[0], host[1], pin[2], host[3]};
    const strix_image *runs[2] = {pin, mixed};
    for (int k = 0; k < 2 && !st && !tl_g.failed; k++) {
        if ((st = strix_model_detect(m, runs[k], N, &d, r, &e))) break;
        for (int i = 0; i < N && !tl_g.failed; i++)
            if (!same_dets(&r[i], ref[i], nref[i]))
                tl_fail("%s batch, image %d: %d boxes, as host memory %d or other boxes", k ? "mixed" : "pinned", i,
                        r[i].count, nref[i]);
    }
    strix_batch *b = NULL;
    if (!st && !tl_g.failed && !(st = strix_model_submit(m, pin, N, &d, &b, &e)) &&
        !(st = strix_batch_collect(b, r, &e)))
        for (int i = 0; i < N && !tl_g.failed; i++)
            if (!same_dets(&r[i], ref[i], nref[i]))
                tl_fail("submitted pinned image %d: %d boxes, detect on host memory %d or other boxes", i, r[i].count,
                        nref[i]);
    strix_batch_release(b);
    strix_image odd = host[0];
    odd.memory = (strix_memory)7;
    strix_status bad = st ? STRIX_OK : strix_model_detect(m, &odd, 1, &d, r, &e);
    strix_model_free_pinned(m, pinbuf);
    strix_model_free(m);
    free(hostbuf);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    TL_CHECK(total_boxes > 0, "no detections to compare (conf %.2f)", d.conf);
    TL_CHECK(bad == STRIX_E_ARG && strstr(e.message, "STRIX_PINNED"), "memory kind 7: %s", e.message);
}

/* The CPU executing the program's fused nodes (SPPF's max-pool cascade)
 * writes exactly what it writes with every fusion undone, node by node. */
static void fusions_match_unfused_ops(void)
{
    const char *p = tmp_path("c.safetensors");
    make_weights("weights/yolov8.yaml", 'n', p, 7, 0, 0);
    if (tl_g.failed) return;
    strix_model *m;
    strix_error e;
    TL_CHECK(load(&m, "weights/yolov8.yaml", 'n', p, &e) == STRIX_OK, "%s", e.message);
    unlink(p);
    strix_program unfused = m->prog;
    strix_plan pl;
    strix_status st = strix_plan_build(&pl, &m->prog, 2, 96, 64, 1, &e);
    size_t floats = st ? 1 : pl.arena_floats;
    unfused.nodes = malloc(sizeof *unfused.nodes * (size_t)m->prog.n_nodes);
    float *a = calloc(floats, sizeof(float)), *b = calloc(floats, sizeof(float));
    void *ws = malloc(st ? 1 : pl.workspace_bytes + 64);
    int fused = 0;
    if (!st && unfused.nodes && a && b && ws) {
        memcpy(unfused.nodes, m->prog.nodes, sizeof *unfused.nodes * (size_t)m->prog.n_nodes);
        for (int i = 0; i < unfused.n_nodes; i++) {
            fused += unfused.nodes[i].fused;
            unfused.nodes[i].cascade = unfused.nodes[i].fused = 0;
        }
        strix_view in = strix_plan_view(&pl, &m->prog, a, m->prog.input);
        for (size_t i = 0; i < (size_t)in.n * in.batch_stride; i++) in.data[i] = tl_uniform(0, 1);
        memcpy(b, a, floats * sizeof(float));
        for (int i = 0; i < m->prog.n_nodes; i++) {
            strix_cpu_execute_node(NULL, NULL, &m->prog, &pl, m->weights, a, ws, i);
            strix_cpu_execute_node(NULL, NULL, &unfused, &pl, m->weights, b, ws, i);
        }
    }
    int same = !st && a && b && !memcmp(a, b, floats * sizeof(float));
    if (!st) strix_plan_free(&pl);
    free(unfused.nodes);
    free(a);
    free(b);
    free(ws);
    strix_model_free(m);
    TL_CHECK(st == STRIX_OK, "%s", e.message);
    TL_CHECK(fused == 2, "%d nodes fused into another (SPPF's 2nd and 3rd max-pool expected)", fused);
    TL_CHECK(same, "the fused program's arena differs from the unfused one's");
}

/* Kernel set 3's folded upsamples (strix_program_upsample_fold): in yolov8n
 * and yolo11n exactly the two neck upsamples fold, each into the cv1 of the
 * C2f / C3k2 two layers on (which reads the Concat between them), and
 * nothing folds for any other kernel set; with the planner's arena the
 * source stays where it is from the upsample to the convolution (no buffer
 * written in between overlaps it); a second reader of the upsample's
 * channels, a grouped consumer, or a source no node reads after the
 * consumer (whose memory the arena may then hand out) undoes the fold. */
static void upsample_folds_set3(void)
{
    static const char *yamls[] = {"weights/yolov8.yaml", "weights/yolo11.yaml"};
    for (size_t y = 0; y < sizeof yamls / sizeof *yamls && !tl_g.failed; y++) {
        strix_model *m;
        strix_error e;
        if (load(&m, yamls[y], 'n', NULL, &e)) {
            tl_fail("%s: %s", yamls[y], e.message);
            return;
        }
        strix_program *p = &m->prog;
        strix_plan pl;
        if (strix_plan_build(&pl, p, 2, 96, 160, 1, &e)) {
            tl_fail("%s", e.message);
            strix_model_free(m);
            return;
        }
        int ups = 0, folds = 0, others = 0;
        for (int u = 0; u < p->n_nodes && !tl_g.failed; u++) {
            for (int k = 0; k <= 4; k++)
                if (k != STRIX_UPSAMPLE_FOLD_KERNELS) others += strix_program_upsample_fold(p, u, k) >= 0;
            int j = strix_program_upsample_fold(p, u, STRIX_UPSAMPLE_FOLD_KERNELS);
            if (p->nodes[u].op != STRIX_OP_UPSAMPLE) {
                TL_CHECK(j < 0, "%s: node %d (op %d) folds into %d", yamls[y], u, p->nodes[u].op, j);
                continue;
            }
            ups++;
            if (j < 0) continue;
            folds++;
            const strix_node *up = &p->nodes[u], *cv = &p->nodes[j];
            char want[32];
            snprintf(want, sizeof want, "model.%d.cv1", up->layer + 2);
            TL_CHECK(!strcmp(cv->wname, want) && p->values[cv->in].buf == p->values[up->out].buf,
                     "%s: the upsample of layer %d folds into %s, not %s", yamls[y], up->layer, cv->wname, want);
            size_t so = pl.buf_off[p->values[up->in].buf], se = so + pl.buf_elems[p->values[up->in].buf] * pl.n;
            for (int i = u + 1; i <= j; i++) {
                int b = p->values[p->nodes[i].out].buf;
                size_t bo = pl.buf_off[b], be = bo + pl.buf_elems[b] * pl.n;
                TL_CHECK(be <= so || bo >= se, "%s: node %d writes over the folded upsample's source", yamls[y], i);
            }
            /* a second reader of the Concat, then a grouped consumer: no fold */
            strix_node *later = &p->nodes[j + 1], saved = *later, cs = *cv;
            later->in = cv->in; /* the C2f's first bottleneck conv */
            TL_CHECK(strix_program_upsample_fold(p, u, STRIX_UPSAMPLE_FOLD_KERNELS) < 0,
                     "%s: folds with a second reader of the Concat", yamls[y]);
            *later = saved;
            p->nodes[j].conv.groups = 2;
            TL_CHECK(strix_program_upsample_fold(p, u, STRIX_UPSAMPLE_FOLD_KERNELS) < 0,
                     "%s: folds into a grouped convolution", yamls[y]);
            p->nodes[j] = cs;
            /* the source no longer read after j (the arena could reuse it): no fold */
            strix_node *copy = malloc(sizeof *copy * (size_t)p->n_nodes);
            if (!copy) break;
            memcpy(copy, p->nodes, sizeof *copy * (size_t)p->n_nodes);
            const int sb = p->values[up->in].buf;
            for (int i = j + 1; i < p->n_nodes; i++) {
                if (p->nodes[i].in >= 0 && p->values[p->nodes[i].in].buf == sb) p->nodes[i].in = p->input;
                if (p->nodes[i].res >= 0 && p->values[p->nodes[i].res].buf == sb) p->nodes[i].res = -1;
            }
            TL_CHECK(strix_program_upsample_fold(p, u, STRIX_UPSAMPLE_FOLD_KERNELS) < 0,
                     "%s: folds with the source dead after the upsample", yamls[y]);
            memcpy(p->nodes, copy, sizeof *copy * (size_t)p->n_nodes);
            free(copy);
        }
        strix_plan_free(&pl);
        strix_model_free(m);
        TL_CHECK(ups == 2 && folds == 2 && others == 0, "%s: %d upsamples, %d folded with kernel set %d, %d with others",
                 yamls[y], ups, folds, STRIX_UPSAMPLE_FOLD_KERNELS, others);
    }
}

/* strix_cpu_backend_layer_times (perf/bench --layers): refused before a
 * plan and for too few layers; then every YAML layer with a node to run gets
 * a time > 0 and every other layer exactly 0. */
static void layer_times_cover_every_node(void)
{
    const char *p = tmp_path("layers.safetensors");
    make_weights("weights/yolov8.yaml", 'n', p, 5, 0, 0);
    if (tl_g.failed) return;
    strix_model *m;
    strix_error e;
    if (load(&m, "weights/yolov8.yaml", 'n', p, &e)) {
        tl_fail("%s", e.message);
        return;
    }
    int layers = m->graph.n_layers, h = 64, w = 96;
    double *ms = calloc((size_t)layers, sizeof *ms);
    float *x = malloc(sizeof(float) * h * w * 3);
    float *y = malloc(sizeof(float) * strix_model_anchor_count(m, h, w) * (4 + 80));
    for (int i = 0; i < h * w * 3; i++) x[i] = tl_uniform(0, 1);
    strix_status before = strix_cpu_backend_layer_times(m->backend, ms, layers, &e);
    strix_status st = strix_model_forward(m, x, 1, h, w, y, &e);
    strix_status few = st ? st : strix_cpu_backend_layer_times(m->backend, ms, layers - 1, &e);
    if (!st) st = strix_cpu_backend_layer_times(m->backend, ms, layers, &e);
    if (before == STRIX_OK) tl_fail("per-layer times before any forward: accepted");
    else if (few != STRIX_E_ARG) tl_fail("per-layer times for %d of %d layers: status %d", layers - 1, layers, few);
    else if (st) tl_fail("%s", e.message);
    for (int l = 0; l < layers && !st && !tl_g.failed; l++) {
        int nodes = 0;
        for (int i = 0; i < m->prog.n_nodes; i++) nodes += m->prog.nodes[i].layer == l && !m->prog.nodes[i].fused;
        if ((nodes > 0) != (ms[l] > 0) || ms[l] < 0)
            tl_fail("layer %d: %d nodes to run, time %g ms", l, nodes, ms[l]);
    }
    free(ms), free(x), free(y);
    strix_model_free(m);
}

int main(int argc, char **argv)
{
    tl_init();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/strix-model-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("FAIL model_tmpdir: cannot create a temporary directory\n");
        return 1;
    }
    TL_RUN(inspect_matches_ultralytics);
    TL_RUN(inspect_task_heads_match_ultralytics);
    TL_RUN(task_models_and_cuda_refusal);
    TL_RUN(inspect_layer_counts_and_shapes);
    TL_RUN(plan_reuses_memory);
    TL_RUN(yaml_ultralytics_style_and_scale_from_name);
    TL_RUN(names_file);
    TL_RUN(yaml_errors_name_file_and_line);
    TL_RUN(weights_errors_are_named);
    TL_RUN(fused_unfused_f16_agree);
    TL_RUN(cpu_isas_agree);
    TL_RUN(batch_equals_single_and_bad_shapes);
    TL_RUN(fusions_match_unfused_ops);
    TL_RUN(upsample_folds_set3);
    TL_RUN(exact_conv_option);
    TL_RUN(classify_api);
    TL_RUN(submit_collect_equals_detect);
    TL_RUN(nv12_detects_as_converted_rgb);
    TL_RUN(pinned_alloc_on_cpu);
    TL_RUN(pinned_detects_as_host);
    TL_RUN(layer_times_cover_every_node);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) printf("note: could not remove %s\n", tmpdir);
    TL_MAIN_END();
}
