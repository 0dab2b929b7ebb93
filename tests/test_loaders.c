/* test_loaders.c — Ultralytics .pt checkpoints and ONNX exports read
 * directly (loaders/pt.c, zip.c, pickle.c, onnx.c), against the detections
 * Ultralytics (.pt) and ONNX Runtime (.onnx) give on the same files
 * (tests/loaders/NAME.dets, made by tools/reference/make_loader_fixtures.py):
 *   - every fixture loads (a .pt without a YAML: the graph it embeds; YOLOv8,
 *     YOLO11 and, from Ultralytics' own YAMLs, yolov8-p2, yolov5u,
 *     yolov5u-p6 and yolov3u), and
 *     strix_model_detect on the synthetic picture gives the golden boxes: same
 *     count and order, same class, IoU >= 0.999, |score difference| <= 1e-4
 *   - the tensors of the same weights agree across formats (fp16 .pt vs its
 *     bf16 copy within bf16 rounding; an ONNX export's fused weights)
 *   - an Ultralytics-shaped ONNX export (written here: each Conv an initializer
 *     pair named as torch.onnx names them, the exporter's metadata) of every
 *     family in weights/ at two scales (yolov3u: its one) loads without a YAML: the family and
 *     scale its description names (or, without a scale letter, the shapes
 *     pin down), its class names (and their count: a
 *     custom-trained model's nc, with a YAML given too); a static export (fixed input height and
 *     width) runs at that size, letterboxed with auto=False (the fixtures:
 *     ONNX Runtime's boxes with detect's default imgsz and rect), a dynamic
 *     one at imgsz and rect; and one without
 *     metadata, of another task, an unknown family or a description the
 *     shapes disagree with is refused with one line
 *   - hostile or broken files are refused with one line: a pickle calling
 *     os.system, a compressed entry, every truncation of a .pt and of an
 *     ONNX file, a .pt or ONNX file with a byte flipped, pickles sharing one
 *     value 2^40 times (a module tree, a YAML list)
 * Run from the repository root (make test does). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "fileread.h"
#include "model_internal.h"
#include "pbwrite.h"
#include "strix.h"
#include "testlib.h"

#define DIR "tests/loaders/"

/* The synthetic picture of make_loader_fixtures.py: RGB, 200 x 150. */
static uint8_t g_pic[150 * 200 * 3];

static void make_picture(void)
{
    for (int y = 0; y < 150; y++)
        for (int x = 0; x < 200; x++)
            for (int c = 0; c < 3; c++)
                g_pic[(y * 200 + x) * 3 + c] = (uint8_t)((x * 7 + y * 13 + c * 50 + (x * y) % 31) & 255);
}

typedef struct golden {
    float conf, iou;
    int imgsz, rect, n;
    float box[300][6];
} golden;

static int read_golden(const char *path, golden *g)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    int ok = 0;
    g->n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        if (!ok) {
            ok = sscanf(line, "conf %f iou %f imgsz %d rect %d", &g->conf, &g->iou, &g->imgsz, &g->rect) == 4;
            if (!ok) break;
            continue;
        }
        float *b = g->box[g->n];
        if (g->n < 300 && sscanf(line, "%f %f %f %f %f %f", b, b + 1, b + 2, b + 3, b + 4, b + 5) == 6) g->n++;
    }
    fclose(f);
    return ok;
}

static float iou(const float *a, const strix_detection *b)
{
    float ix = fminf(a[2], b->x2) - fmaxf(a[0], b->x1), iy = fminf(a[3], b->y2) - fmaxf(a[1], b->y1);
    float inter = ix > 0 && iy > 0 ? ix * iy : 0;
    float u = (a[2] - a[0]) * (a[3] - a[1]) + (b->x2 - b->x1) * (b->y2 - b->y1) - inter;
    return u > 0 ? inter / u : 0;
}

/* How the fixtures load: path with yaml at scale n, or the graph it embeds. */
static void fixture_options(strix_model_options *o, const char *path, const char *yaml)
{
    strix_model_options_init(o);
    o->weights_path = path;
    o->yaml_path = yaml;
    o->scale = yaml ? 'n' : 0;
    o->threads = 2;
}

/* Load path (with yaml, or the graph it embeds) and compare with
 * DIR/file<suffix>.dets.  own_size: detect with imgsz and rect left at
 * their defaults (640, 1), not the golden's: a static export runs at the
 * size it was exported with, whatever they say. */
static void check_fixture3(const char *file, const char *yaml, const char *suffix, int nms_free, int own_size)
{
    char path[256], gpath[256];
    snprintf(path, sizeof path, DIR "%s", file);
    snprintf(gpath, sizeof gpath, DIR "%s%s.dets", file, suffix);
    golden g;
    TL_CHECK(read_golden(gpath, &g), "%s: missing or malformed", gpath);
    strix_model_options o;
    fixture_options(&o, path, yaml);
    o.nms_free = nms_free;
    strix_model *m;
    strix_error e;
    TL_CHECK(!strix_model_load(&m, &o, &e), "%s", e.message);
    strix_detect_options d;
    strix_detect_options_init(&d);
    d.conf = g.conf;
    d.iou = g.iou;
    if (!own_size) {
        d.imgsz = g.imgsz;
        d.rect = g.rect;
    }
    strix_image img = {.data = g_pic, .width = 200, .height = 150, .format = STRIX_RGB};
    strix_detections r;
    strix_status st = strix_model_detect(m, &img, 1, &d, &r, &e);
    if (st) {
        strix_model_free(m);
        TL_CHECK(0, "%s", e.message);
    }
    float worst_iou = 1, worst_ds = 0;
    int bad = -1;
    for (int i = 0; i < g.n && i < r.count; i++) {
        float u = iou(g.box[i], &r.items[i]), ds = fabsf(g.box[i][4] - r.items[i].score);
        if (u < worst_iou) worst_iou = u;
        if (ds > worst_ds) worst_ds = ds;
        if (bad < 0 && ((int)g.box[i][5] != r.items[i].class_id || u < 0.999f || ds > 1e-4f)) bad = i;
    }
    int names_ok = strix_model_class_count(m) == 3 && !strcmp(strix_model_class_name(m, 2), "blue car");
    strix_model_free(m);
    TL_CHECK(r.count == g.n, "%s: %d boxes, the golden has %d", file, r.count, g.n);
    TL_CHECK(bad < 0, "%s: box %d differs (worst IoU %.6f, worst score difference %.2g)", file, bad, worst_iou,
             worst_ds);
    TL_CHECK(names_ok, "%s: the class names did not come from the file", file);
    printf("    %s: %d boxes match (worst IoU %.6f, worst |score difference| %.2g)\n", file, g.n, worst_iou, worst_ds);
}

static void check_fixture(const char *file, const char *yaml) { check_fixture3(file, yaml, "", 0, 0); }

static void test_pt_f16_unfused(void) { check_fixture("v8_f16.pt", NULL); }
static void test_pt_bf16(void) { check_fixture("v8_bf16.pt", NULL); }
static void test_pt_f32_fused_yolo11(void) { check_fixture("11_f32_fused.pt", NULL); }
static void test_onnx_op12_static(void) { check_fixture("v8_op12.onnx", DIR "tiny-v8.yaml"); }
static void test_onnx_op17_dynamic_simplified(void) { check_fixture("v8_op17_dyn.onnx", DIR "tiny-v8.yaml"); }
static void test_onnx_op17_yolo11(void) { check_fixture("11_op17.onnx", DIR "tiny-11.yaml"); }

/* The static exports (160x160) with detect's defaults, imgsz 640 and rect 1
 * (the dynamic export's golden at rect 1 differs: another box score): ONNX
 * Runtime's square 160x160 letterbox of the 200x150 picture all the same. */
static void test_onnx_static_runs_at_its_size(void)
{
    check_fixture3("v8_op12.onnx", DIR "tiny-v8.yaml", "", 0, 1);
    check_fixture3("11_op17.onnx", DIR "tiny-11.yaml", "", 0, 1);
}

/* More families, from Ultralytics' own YAMLs (nc 3, width 1/16). */
static void test_family_yolov8_p2(void) { check_fixture("f-v8-p2.pt", NULL); }
static void test_family_yolov5u(void) { check_fixture("f-v5.pt", NULL); }
static void test_family_yolov5u_p6(void) { check_fixture("f-v5-p6.pt", NULL); }
static void test_family_yolov3u(void) { check_fixture("f-v3.pt", NULL); }

/* YOLO26: C3k2 with attention, reg_max 1 (no DFL), two heads: by default
 * the one-to-many head with NMS (Ultralytics' predict), with nms_free the
 * one-to-one head's top-k selection (predict(nms=False)); its ONNX exports
 * hold one head each. */
static void test_family_yolo26(void) { check_fixture("f-26.pt", NULL); }
static void test_family_yolo26_nms_free(void) { check_fixture3("f-26.pt", NULL, ".e2e", 1, 0); }
static void test_family_yolo26_onnx(void) { check_fixture("f-26.onnx", DIR "tiny-26.yaml"); }
static void test_family_yolo26_onnx_nms_free(void) { check_fixture("f-26-e2e.onnx", DIR "tiny-26.yaml"); }

/* The .pt's graph with an explicit YAML too (the same file's rows). */
static void test_pt_with_yaml(void) { check_fixture("v8_f16.pt", DIR "tiny-v8.yaml"); }

/* Task models (tools/reference/make_loader_fixtures.py --only tasks): the
 * task from the checkpoint's graph; boxes as Ultralytics' predict gives
 * them (obb: rotated NMS, the boxes' bounds). */
static void test_task_segment_pt(void) { check_fixture("t-seg.pt", NULL); }
static void test_task_pose_pt(void) { check_fixture("t-pose.pt", NULL); }
static void test_task_obb_pt(void) { check_fixture("t-obb.pt", NULL); }
static void test_task_segment_onnx(void) { check_fixture("t-seg.onnx", DIR "tiny-seg.yaml"); }
static void test_task_pose_onnx(void) { check_fixture("t-pose.onnx", DIR "tiny-pose.yaml"); }
static void test_task_obb_onnx(void) { check_fixture("t-obb.onnx", DIR "tiny-obb.yaml"); }

/* Classify, .pt and ONNX: the probabilities of t-cls.probs on the picture
 * at its size (no letterbox), within 1e-5. */
static void check_classify(const char *file, const char *yaml)
{
    FILE *f = fopen(DIR "t-cls.probs", "r");
    char line[256];
    int size = 0, n = 0;
    float want[16];
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '#' && !(size == 0 && sscanf(line, "size %d", &size) == 1) && n < 16 && size)
            n += sscanf(line, "%f", &want[n]) == 1;
    if (f) fclose(f);
    TL_CHECK(size > 0 && n == 3, DIR "t-cls.probs: missing or malformed (size %d, %d probabilities)", size, n);
    strix_model_options o;
    fixture_options(&o, file, yaml);
    strix_model *m;
    strix_error e;
    TL_CHECK(!strix_model_load(&m, &o, &e), "%s", e.message);
    float *x = malloc(sizeof(float) * (size_t)size * size * 3), probs[3] = {0};
    for (int y = 0; y < size; y++)
        for (int xx = 0; xx < size; xx++)
            for (int c = 0; c < 3; c++)
                x[((size_t)y * size + xx) * 3 + c] = (float)((xx * 7 + y * 13 + c * 50 + (xx * y) % 31) & 255) / 255.0f;
    strix_task task = strix_model_task(m);
    strix_status st = strix_model_class_count(m) == 3 ? strix_model_forward(m, x, 1, size, size, probs, &e) : STRIX_OK;
    strix_model_free(m);
    free(x);
    TL_CHECK(task == STRIX_TASK_CLASSIFY, "%s: task %s", file, strix_task_name(task));
    TL_CHECK(!st, "%s", e.message);
    double worst = 0;
    for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(probs[c] - want[c]));
    TL_CHECK(worst <= 1e-5, "%s: probabilities %g %g %g, Ultralytics %g %g %g", file, probs[0], probs[1], probs[2],
             want[0], want[1], want[2]);
    printf("    %s: probabilities within %.2g of Ultralytics'\n", file, worst);
}

static void test_task_classify_pt(void) { check_classify(DIR "t-cls.pt", NULL); }
static void test_task_classify_onnx(void) { check_classify(DIR "t-cls.onnx", DIR "tiny-cls.yaml"); }

static void test_pt_tensors_and_origin(void)
{
    strix_checkpoint a, b;
    strix_error e;
    TL_CHECK(!strix_checkpoint_open(&a, DIR "v8_f16.pt", &e), "%s", e.message);
    if (strix_checkpoint_open(&b, DIR "v8_bf16.pt", &e)) {
        strix_checkpoint_close(&a);
        TL_CHECK(0, "%s", e.message);
    }
    const strix_st_tensor *w = strix_st_find(a.tensors, "model.0.conv.weight");
    const strix_st_tensor *wb = strix_st_find(b.tensors, "model.0.conv.weight");
    int ok = w && wb && w->dtype == STRIX_ST_F16 && wb->dtype == STRIX_ST_BF16 && w->numel == 8 * 3 * 3 * 3 &&
             w->origin && strstr(w->origin, "v8_f16/data/") && !strcmp(a.format, "pt") && a.yaml &&
             strstr(a.yaml, "C2f") && a.n_names == 3;
    float fa[216], fb[216];
    float worst = 0;
    if (ok && !strix_st_to_f32(fa, w, &e) && !strix_st_to_f32(fb, wb, &e))
        for (int i = 0; i < 216; i++) worst = fmaxf(worst, fabsf(fa[i] - fb[i]) / fmaxf(fabsf(fa[i]), 1e-3f));
    size_t na = strix_st_count(a.tensors), nb = strix_st_count(b.tensors);
    strix_checkpoint_close(&a);
    strix_checkpoint_close(&b);
    TL_CHECK(ok, "model.0.conv.weight: wrong dtype, size, origin, or no YAML / names");
    TL_CHECK(na == nb && na == 355, "%zu and %zu tensors, expected 355 (Ultralytics' state_dict)", na, nb);
    TL_CHECK(worst <= 1.0f / 128, "fp16 and bf16 copies differ by %g relative (bf16 keeps 8 bits)", worst);
}

static void test_onnx_tensors_and_origin(void)
{
    strix_checkpoint c;
    strix_error e;
    TL_CHECK(!strix_checkpoint_open(&c, DIR "v8_op17_dyn.onnx", &e), "%s", e.message);
    /* onnxslim shares one zero bias between the three class branches; each
     * still gets its own name from its node */
    const strix_st_tensor *b0 = strix_st_find(c.tensors, "model.22.cv3.0.2.bias");
    const strix_st_tensor *b2 = strix_st_find(c.tensors, "model.22.cv3.2.2.bias");
    const strix_st_tensor *dfl = strix_st_find(c.tensors, "model.22.dfl.conv.weight");
    int ok = b0 && b2 && dfl && b2->origin && strstr(b2->origin, "/model.22/cv3.2/cv3.2.2/Conv") &&
             !strix_st_find(c.tensors, "model.0.bn.weight") && c.n_names == 3 && c.description && !c.yaml;
    int dyn_h = c.input_h, dyn_w = c.input_w;
    strix_checkpoint_close(&c);
    TL_CHECK(ok, "ONNX tensors not mapped to their modules, or metadata missing");
    TL_CHECK(!dyn_h && !dyn_w, "the dynamic export read as static %dx%d", dyn_h, dyn_w);
    TL_CHECK(!strix_checkpoint_open(&c, DIR "v8_op12.onnx", &e), "%s", e.message);
    int h = c.input_h, w = c.input_w;
    strix_checkpoint_close(&c);
    TL_CHECK(h == 160 && w == 160, "the static export's input read as %dx%d, not 160x160", h, w);
}

static void expect_refused(const char *path, const char *yaml, strix_status want, const char *needle)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.weights_path = path;
    o.yaml_path = yaml;
    o.scale = yaml ? 'n' : 0;
    strix_model *m;
    strix_error e;
    strix_status st = strix_model_load(&m, &o, &e);
    if (!st) strix_model_free(m);
    TL_CHECK(st == want, "%s: status %s, expected %s", path, strix_status_name(st), strix_status_name(want));
    TL_CHECK(strstr(e.message, needle) && !strchr(e.message, '\n'), "%s: message '%s' lacks '%s'", path, e.message,
             needle);
}

static void test_refuses_os_system(void)
{
    expect_refused(DIR "evil.pt", NULL, STRIX_E_WEIGHTS, "'posix.system', which an Ultralytics");
}

static void test_refuses_compressed(void)
{
    expect_refused(DIR "compressed.pt", NULL, STRIX_E_WEIGHTS, "is compressed");
}

/* One value shared 2^40 times through pickle memo references: bounded. */
static void test_refuses_shared_module_bomb(void)
{
    expect_refused(DIR "bomb-modules.pt", NULL, STRIX_E_WEIGHTS, "more modules than any detection model has");
}

static void test_refuses_shared_yaml_bomb(void)
{
    expect_refused(DIR "bomb-yaml.pt", NULL, STRIX_E_WEIGHTS, "model YAML is larger than any model's");
}

static void test_onnx_needs_yaml(void)
{
    expect_refused(DIR "v8_op12.onnx", NULL, STRIX_E_ARG, "'Ultralytics tiny-v8 model ' names no YOLO model");
}

/* ModelProto metadata_props entry. */
static void pb_meta(pb *b, const char *key, const char *value)
{
    pb e = {0};
    pb_str(&e, 1, key);
    pb_str(&e, 2, value);
    pb_msg(b, 14, &e);
}

/* One Conv node /model.N/REST/Conv of graph with its weight (shape ws) and,
 * when bias, bias initializers NAME.weight, NAME.bias; the values are small
 * constants: the tests load the file, they do not run it. */
static void export_conv(pb *graph, const char *name, const int64_t ws[4], int bias)
{
    char module[256], wn[270], bn[270], node_name[300];
    snprintf(module, sizeof module, "%s", name);
    snprintf(wn, sizeof wn, "%s.weight", module);
    snprintf(bn, sizeof bn, "%s.bias", module);
    const char *rest = strchr(module + 6, '.'); /* model.N.REST */
    snprintf(node_name, sizeof node_name, "/%.*s/%s/Conv", (int)(rest - module), module, rest + 1);
    pb n = {0};
    pb_str(&n, 1, "x");
    pb_str(&n, 1, wn);
    if (bias) pb_str(&n, 1, bn);
    pb_str(&n, 2, node_name);
    pb_str(&n, 3, node_name);
    pb_str(&n, 4, "Conv");
    pb_msg(graph, 1, &n);
    for (int k = 0; k < 1 + bias; k++) {
        int nd = k ? 1 : 4;
        size_t count = k ? (size_t)ws[0] : (size_t)(ws[0] * ws[1] * ws[2] * ws[3]);
        float *v = malloc(sizeof(float) * count);
        if (!v) {
            graph->oom = 1;
            return;
        }
        for (size_t i = 0; i < count; i++) v[i] = (float)(i % 16); /* the DFL conv's arange too */
        pb init = {0};
        for (int d = 0; d < nd; d++) {
            pb_varint(&init, 1 << 3);
            pb_varint(&init, (uint64_t)ws[d]);
        }
        pb_varint(&init, 2 << 3);
        pb_varint(&init, 1); /* FLOAT */
        pb_str(&init, 8, k ? bn : wn);
        pb_bytes(&init, 9, v, sizeof(float) * count);
        pb_msg(graph, 5, &init);
        free(v);
    }
}

/* The graph's input `images`, [1, 3, in_h, in_w] (export(dynamic=False));
 * in_h 0: [batch, 3, height, width], named dimensions (dynamic=True). */
static void export_input(pb *graph, int in_h, int in_w)
{
    static const char *const names[4] = {"batch", "channels", "height", "width"};
    const int64_t dims[4] = {1, 3, in_h, in_w};
    pb shape = {0}, tensor = {0}, type = {0}, vi = {0};
    for (int d = 0; d < 4; d++) {
        pb dim = {0};
        if (in_h || d == 1) pb_int(&dim, 1, (uint64_t)dims[d]);
        else pb_str(&dim, 2, names[d]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tensor, 1, 1); /* FLOAT */
    pb_msg(&tensor, 2, &shape);
    pb_msg(&type, 1, &tensor);
    pb_str(&vi, 1, "images");
    pb_msg(&vi, 2, &type);
    pb_msg(graph, 11, &vi);
}

/* Writes path: an ONNX file as torch.onnx exports the fused model of yaml at
 * scale (a Conv node /model.N/REST/Conv per convolution, its weight and bias
 * initializers under their state_dict names; the input `images` of
 * export_input), with Ultralytics' metadata
 * (description, task; none when description is NULL) and `names` n0, n1, ...
 * The convolutions come from the program strix builds for yaml, not from
 * synthetic weights: calibrating those runs the network, minutes for the
 * large families under ASan or qemu.  Returns 0 when something failed
 * (reported). */
static int write_export(const char *path, const char *yaml, char scale, int nc, const char *description,
                        const char *task, int in_h, int in_w)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.yaml_path = yaml;
    o.scale = scale;
    o.nc = nc;
    strix_model *m;
    strix_error e;
    if (strix_model_load(&m, &o, &e)) {
        tl_fail("%s: %s", yaml, e.message);
        return 0;
    }
    nc = strix_model_class_count(m);
    pb model = {0}, graph = {0};
    pb_varint(&model, 1 << 3); /* ir_version 8 */
    pb_varint(&model, 8);
    pb_str(&model, 2, "pytorch");
    pb_str(&model, 3, "2.3.0");
    const strix_program *p = &m->prog;
    export_input(&graph, in_h, in_w);
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV) continue;
        int64_t ws[4] = {n->cout, n->cin / n->conv.groups, n->conv.kh, n->conv.kw};
        char name[128];
        snprintf(name, sizeof name, n->plain ? "%s" : "%s.conv", n->wname);
        export_conv(&graph, name, ws, 1);
    }
    if (p->dfl_name[0]) {
        int64_t ws[4] = {1, p->reg_max, 1, 1};
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)strlen(p->dfl_name) - 7, p->dfl_name); /* less ".weight" */
        export_conv(&graph, name, ws, 0);
    }
    strix_model_free(m);
    pb_msg(&model, 7, &graph);
    if (description) {
        pb_meta(&model, "description", description);
        pb_meta(&model, "author", "Ultralytics");
        pb_meta(&model, "license", "AGPL-3.0 License (https://ultralytics.com/license)");
        pb_meta(&model, "stride", "32");
        pb_meta(&model, "task", task);
        pb_meta(&model, "batch", "1");
        pb_meta(&model, "imgsz", "[640, 640]");
        pb names = {0};
        char item[40];
        for (int c = 0; c < nc; c++) {
            snprintf(item, sizeof item, "%s%d: 'n%d'", c ? ", " : "{", c, c);
            pb_raw(&names, item, strlen(item));
        }
        pb_raw(&names, "}", 2);
        pb_meta(&model, "names", (const char *)names.p);
        model.oom |= names.oom;
        free(names.p);
    }
    FILE *out = fopen(path, "wb");
    int ok = !model.oom && out && fwrite(model.p, 1, model.n, out) == model.n;
    if (out && fclose(out)) ok = 0;
    free(model.p);
    if (!ok) tl_fail("%s: cannot write", path);
    return ok;
}

/* Loads path without a YAML (the family YAMLs in weights/); its status,
 * message in e, class count and the name of the last class in last[64]. */
static strix_status load_export(const char *path, strix_error *e, int *nc, char *last)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.weights_path = path;
    o.yaml_dir = "weights";
    strix_model *m;
    strix_status st = strix_model_load(&m, &o, e);
    if (st) return st;
    *nc = strix_model_class_count(m);
    snprintf(last, 64, "%s", strix_model_class_name(m, *nc - 1));
    strix_model_free(m);
    return STRIX_OK;
}

static void test_onnx_export_families(void)
{
    static const struct {
        const char *yaml, *pretty, *scales; /* the exporter's pretty name has 'S' where the scale letter goes */
    } fam[] = {{"yolov8", "YOLOv8S", "ns"},    {"yolo11", "YOLO11S", "ns"},        {"yolo26", "YOLO26S", "ns"},
               {"yolov5", "YOLOv5Su", "ns"},   {"yolov5-p6", "YOLOv5S6u", "ns"}, {"yolov8-p2", "YOLOv8S-p2", "ns"},
               {"yolov3", "YOLOv3u", "-"}}; /* one scale, none in the name */
    char path[64], yaml[64], desc[128];
    snprintf(path, sizeof path, "/tmp/strix-test-export-%d.onnx", (int)getpid());
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++)
        for (const char *sc = fam[i].scales; *sc; sc++) {
            char scale = *sc == '-' ? 0 : *sc, pretty[32];
            snprintf(yaml, sizeof yaml, "weights/%s.yaml", fam[i].yaml);
            snprintf(pretty, sizeof pretty, "%s", fam[i].pretty);
            if (scale) *strchr(pretty, 'S') = scale;
            snprintf(desc, sizeof desc, "Ultralytics %s model trained on coco.yaml", pretty);
            int want = i % 2 ? 80 : 3; /* the family's 80 classes, or a custom-trained model's 3 */
            if (!write_export(path, yaml, scale, want, desc, "detect", 0, 0)) return;
            strix_error e;
            int nc = 0;
            char last[64] = "", want_last[16];
            strix_status st = load_export(path, &e, &nc, last);
            unlink(path);
            snprintf(want_last, sizeof want_last, "n%d", want - 1);
            TL_CHECK(!st, "%s (%s, scale %c, %d classes): %s", desc, yaml, scale ? scale : '-', want, e.message);
            TL_CHECK(nc == want && !strcmp(last, want_last), "%s: %d classes, the last '%s': not the metadata's", desc,
                     nc, last);
        }
    /* built from yolo26.yaml itself: no scale in the name, the shapes pin it down */
    if (!write_export(path, "weights/yolo26.yaml", 's', 0, "Ultralytics YOLO26 model trained on coco.yaml", "detect",
                      0, 0))
        return;
    strix_error e;
    int nc;
    char last[64];
    strix_status st = load_export(path, &e, &nc, last);
    unlink(path);
    TL_CHECK(!st, "YOLO26 without a scale letter, scale s shapes: %s", e.message);
}

/* expect_refused on an export of yaml at scale written with description and task */
static void refused_export(const char *yaml, char scale, const char *description, const char *task,
                           strix_status want, const char *needle)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/strix-test-export-%d.onnx", (int)getpid());
    if (!write_export(path, yaml, scale, 0, description, task, 0, 0)) return;
    strix_error e;
    int nc;
    char last[64];
    strix_status st = load_export(path, &e, &nc, last);
    unlink(path);
    TL_CHECK(st == want, "%s: status %s, expected %s (%s)", description ? description : "no metadata",
             strix_status_name(st), strix_status_name(want), st ? e.message : "loaded");
    TL_CHECK(strstr(e.message, needle) && !strchr(e.message, '\n'), "message '%s' lacks '%s'", e.message, needle);
}

static void test_onnx_export_refusals(void)
{
    refused_export("weights/yolov8.yaml", 'n', NULL, NULL, STRIX_E_ARG,
                   "no Ultralytics metadata (producer pytorch 2.3.0): give the YAML it was exported from "
                   "(--model weights/yolov8.yaml --scale n)");
    refused_export("weights/yolov8.yaml", 'n', "Ultralytics YOLO26n-depth model", "depth", STRIX_E_WEIGHTS,
                   "an Ultralytics 'depth' model; strix runs detect, segment, pose, obb and classify models only");
    refused_export("weights/yolov8.yaml", 'n', "Ultralytics YOLOv8s model trained on coco.yaml", "detect",
                   STRIX_E_WEIGHTS,
                   "yolov8.yaml its description 'Ultralytics YOLOv8s model trained on coco.yaml' names, at scale s");
    refused_export("weights/yolov8.yaml", 'n', "Ultralytics YOLOv9t model trained on coco.yaml", "detect",
                   STRIX_E_ARG, "names the family yolov9, which strix does not support");
    refused_export("weights/yolov8.yaml", 'n', "a model from somewhere", "detect", STRIX_E_ARG,
                   "its description 'a model from somewhere' names no YOLO model");
}

/* An export of imgsz=(96, 160) (static: [1, 3, 96, 160]) runs on a 200x150
 * picture at 96x160 whatever imgsz and rect say, the picture scaled by
 * min(96/150, 160/200) = 0.64 to 128x96 and centred (16 columns each side),
 * as LetterBox(new_shape=(96, 160), auto=False); the same export made
 * dynamic keeps imgsz and rect (640 x 480 here). */
static void test_onnx_static_letterbox(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/strix-test-export-%d.onnx", (int)getpid());
    const char *desc = "Ultralytics YOLOv8n model trained on coco.yaml";
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        if (!write_export(path, "weights/yolov8.yaml", 'n', 3, desc, "detect", dynamic ? 0 : 96, dynamic ? 0 : 160))
            return;
        strix_model_options o;
        strix_model_options_init(&o);
        o.weights_path = path;
        o.yaml_dir = "weights";
        o.threads = 2;
        strix_model *m;
        strix_error e;
        strix_status st = strix_model_load(&m, &o, &e);
        unlink(path);
        TL_CHECK(!st, "%s export: %s", dynamic ? "dynamic" : "static", e.message);
        int h = -1, w = -1, fixed = strix_model_fixed_input(m, &h, &w);
        strix_detect_options d;
        strix_detect_options_init(&d);
        strix_image img = {.data = g_pic, .width = 200, .height = 150, .format = STRIX_RGB};
        strix_detections r;
        st = strix_model_detect(m, &img, 1, &d, &r, &e);
        strix_letterbox_info info = {0};
        if (!st) info = *(const strix_letterbox_info *)m->scratch; /* detect's letterbox plan of the image */
        int ph = m->plan.h, pw = m->plan.w;
        int boxes_inside = 1;
        for (int i = 0; !st && i < r.count; i++)
            boxes_inside &= r.items[i].x1 >= 0 && r.items[i].x2 <= 200 && r.items[i].y1 >= 0 && r.items[i].y2 <= 150;
        strix_model_free(m);
        TL_CHECK(!st, "%s export: %s", dynamic ? "dynamic" : "static", e.message);
        TL_CHECK(boxes_inside, "a box lies outside the picture");
        if (dynamic) {
            TL_CHECK(!fixed && !h && !w, "the dynamic export reports a fixed input %dx%d", h, w);
            TL_CHECK(ph == 480 && pw == 640, "the dynamic export ran at %dx%d, not imgsz 640 rect (480x640)", ph, pw);
        } else {
            TL_CHECK(fixed && h == 96 && w == 160, "the static export reports %d, %dx%d, not its 96x160", fixed, h, w);
            TL_CHECK(ph == 96 && pw == 160, "the static export ran at %dx%d, not its 96x160", ph, pw);
            TL_CHECK(info.dst_w == 160 && info.dst_h == 96 && info.new_w == 128 && info.new_h == 96 &&
                         info.left == 16 && info.top == 0 && fabsf(info.gain - 0.64f) < 1e-6f,
                     "letterbox %dx%d in %dx%d at (%d, %d), gain %g: not 128x96 in 160x96 at (16, 0), gain 0.64",
                     info.new_w, info.new_h, info.dst_w, info.dst_h, info.left, info.top, info.gain);
        }
    }
    /* a fixed size beyond what detect runs is refused */
    if (!write_export(path, "weights/yolov8.yaml", 'n', 3, desc, "detect", 9600, 160)) return;
    strix_error e;
    int nc;
    char last[64];
    strix_status st = load_export(path, &e, &nc, last);
    unlink(path);
    TL_CHECK(st == STRIX_E_WEIGHTS && strstr(e.message, "has shape [1, 3, 9600, 160]: its height and width must lie "
                                             "in 1..8192"), "a 9600x160 input: status %s, '%s'",
             strix_status_name(st), st ? e.message : "loaded");
}

/* An export of a model trained on 5 classes, with --model (the family YAML,
 * nc 80) and without: nc comes from the export's names, as the names do
 * (the class branch is then 64 wide, not 80: a YAML's nc would not bind). */
static void test_onnx_nc_from_names(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/strix-test-export-%d.onnx", (int)getpid());
    if (!write_export(path, "weights/yolov8.yaml", 'n', 5, "Ultralytics YOLOv8n model trained on data.yaml", "detect",
                      0, 0))
        return;
    for (int given = 0; given < 2; given++) {
        strix_model_options o;
        strix_model_options_init(&o);
        o.weights_path = path;
        o.yaml_path = given ? "weights/yolov8.yaml" : NULL;
        o.scale = given ? 'n' : 0;
        o.yaml_dir = "weights";
        strix_model *m;
        strix_error e;
        strix_status st = strix_model_load(&m, &o, &e);
        if (st) unlink(path);
        TL_CHECK(!st, "%s --model: %s", given ? "with" : "without", e.message);
        int nc = strix_model_class_count(m);
        char last[64];
        snprintf(last, sizeof last, "%s", strix_model_class_name(m, nc - 1));
        strix_model_free(m);
        if (nc != 5 || strcmp(last, "n4")) unlink(path);
        TL_CHECK(nc == 5 && !strcmp(last, "n4"), "%s --model: %d classes, the last '%s', not the export's 5 (n4)",
                 given ? "with" : "without", nc, last);
    }
    unlink(path);
}

static void test_onnx_wrong_yaml(void)
{
    expect_refused(DIR "11_op17.onnx", DIR "tiny-v8.yaml", STRIX_E_WEIGHTS, "tensor");
}

/* Every prefix of a file (a stride of them for speed), and the file with
 * bytes flipped at random places: refused or loaded, never a crash (the
 * ASan build runs this too). */
static void mangle(const char *file, int onnx)
{
    const uint8_t *map;
    size_t len;
    strix_error e;
    TL_CHECK(!strix_file_map(file, (size_t)1 << 30, &map, &len, &e), "%s", e.message);
    uint8_t *buf = malloc(len);
    TL_CHECK(buf, "out of memory");
    int refused = 0, loaded = 0;
    size_t step = len / 300 + 1;
    for (size_t n = 0; n < len; n += step) {
        memcpy(buf, map, n);
        strix_checkpoint c;
        strix_status st = onnx ? strix_onnx_read(&c, "t", buf, n, 0, &e) : strix_pt_read(&c, "t", buf, n, 0, &e);
        if (st) refused++;
        else loaded++, strix_checkpoint_close(&c);
        if (n < 2048) n = n + 1 - step; /* the first 2 KB (headers) byte by byte */
    }
    for (int k = 0; k < 200; k++) {
        memcpy(buf, map, len);
        for (int f = 0; f < 4; f++) buf[tl_u64() % len] ^= (uint8_t)(1u << tl_int(0, 7));
        strix_checkpoint c;
        strix_status st = onnx ? strix_onnx_read(&c, "t", buf, len, 0, &e) : strix_pt_read(&c, "t", buf, len, 0, &e);
        if (st) refused++;
        else loaded++, strix_checkpoint_close(&c);
    }
    free(buf);
    strix_file_unmap(map, len);
    TL_CHECK(refused > 0, "%s: no mangled copy was refused", file);
    printf("    %s: %d mangled copies refused, %d still readable\n", file, refused, loaded);
}

static void test_pt_truncated_and_flipped(void) { mangle(DIR "v8_f16.pt", 0); }
static void test_onnx_truncated_and_flipped(void) { mangle(DIR "v8_op17_dyn.onnx", 1); }

int main(int argc, char **argv)
{
    tl_init();
    make_picture();
    if (access(DIR "v8_f16.pt", R_OK)) {
        printf("SKIP loaders: run from the repository root (tests/loaders/ not found)\n");
        return 0;
    }
    TL_RUN(test_pt_f16_unfused);
    TL_RUN(test_pt_bf16);
    TL_RUN(test_pt_f32_fused_yolo11);
    TL_RUN(test_pt_with_yaml);
    TL_RUN(test_task_segment_pt);
    TL_RUN(test_task_pose_pt);
    TL_RUN(test_task_obb_pt);
    TL_RUN(test_task_segment_onnx);
    TL_RUN(test_task_pose_onnx);
    TL_RUN(test_task_obb_onnx);
    TL_RUN(test_task_classify_pt);
    TL_RUN(test_task_classify_onnx);
    TL_RUN(test_family_yolov8_p2);
    TL_RUN(test_family_yolov5u);
    TL_RUN(test_family_yolov5u_p6);
    TL_RUN(test_family_yolov3u);
    TL_RUN(test_family_yolo26);
    TL_RUN(test_family_yolo26_nms_free);
    TL_RUN(test_family_yolo26_onnx);
    TL_RUN(test_family_yolo26_onnx_nms_free);
    TL_RUN(test_onnx_op12_static);
    TL_RUN(test_onnx_op17_dynamic_simplified);
    TL_RUN(test_onnx_op17_yolo11);
    TL_RUN(test_onnx_static_runs_at_its_size);
    TL_RUN(test_pt_tensors_and_origin);
    TL_RUN(test_onnx_tensors_and_origin);
    TL_RUN(test_refuses_os_system);
    TL_RUN(test_refuses_compressed);
    TL_RUN(test_refuses_shared_module_bomb);
    TL_RUN(test_refuses_shared_yaml_bomb);
    TL_RUN(test_onnx_needs_yaml);
    TL_RUN(test_onnx_wrong_yaml);
    TL_RUN(test_onnx_export_families);
    TL_RUN(test_onnx_export_refusals);
    TL_RUN(test_onnx_static_letterbox);
    TL_RUN(test_onnx_nc_from_names);
    TL_RUN(test_pt_truncated_and_flipped);
    TL_RUN(test_onnx_truncated_and_flipped);
    TL_MAIN_END();
}
