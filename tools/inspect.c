/* inspect.c — print a model's layers (index, from, repeats, params, module,
 * args, output shape at the chosen input size) and its summary: layers,
 * parameters and GFLOPs, unfused and fused, as Ultralytics reports them, plus
 * the planned activation memory; --tensors lists the weights file's tensors
 * and where each came from (a .pt storage, an ONNX initializer and node). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "exitcodes.h"
#include "strix.h"
#include "yamldir.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inspect --model YAML [--scale n|s|m|l|x] [--nc N] [--imgsz N | --size HxW]\n"
            "               [--weights FILE] [--device cpu|cuda[:N]] [--half] [--summary] [--tensors]\n"
            "       inspect --weights FILE.pt ...   (the graph embedded in an Ultralytics checkpoint)\n"
            "       inspect --weights FILE.onnx ... (an Ultralytics export: weights/FAMILY.yaml its metadata names)\n"
            "  --imgsz N     square input size (default 640)\n"
            "  --size HxW    rectangular input size (multiples of the stride)\n"
            "  --weights F   also check that the checkpoint loads (.safetensors, .pt, .onnx)\n"
            "  --tensors     list the checkpoint's tensors: name, dtype, shape, where each came from\n"
            "  --device D    cpu or cuda[:N] (default: cuda when a GPU is present, else cpu)\n"
            "  --half        plan fp16 activations (CUDA): halves the planned memory\n"
            "  --summary     only the summary lines\n" STRIX_EXIT_CODES_HELP);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

/* Every tensor of the weights file: name, dtype, shape, origin. */
static strix_status print_tensors(const char *path, strix_error *e)
{
    strix_checkpoint c;
    strix_status st = strix_checkpoint_open(&c, path, e);
    if (st) return st;
    printf("%s: %zu tensors (%s)\n", path, strix_st_count(c.tensors), c.format);
    for (size_t i = 0; i < strix_st_count(c.tensors); i++) {
        const strix_st_tensor *t = strix_st_get(c.tensors, i);
        char shape[96] = "";
        for (int d = 0; d < t->ndim; d++) {
            size_t l = strlen(shape);
            snprintf(shape + l, sizeof shape - l, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        }
        if (t->origin) printf("  %-40s %-4s [%s]  from %s\n", t->name, t->dtype_name, shape, t->origin);
        else printf("  %-40s %-4s [%s]  from data_offsets [%llu, %llu)\n", t->name, t->dtype_name, shape,
                    (unsigned long long)t->offset, (unsigned long long)(t->offset + t->nbytes));
    }
    strix_checkpoint_close(&c);
    return STRIX_OK;
}

int main(int argc, char **argv)
{
    strix_model_options o;
    strix_model_options_init(&o);
    o.device = NULL; /* chosen below unless --device is given */
    int h = 640, w = 640, summary_only = 0, tensors = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--summary")) {
            summary_only = 1;
            continue;
        } else if (!strcmp(a, "--tensors")) {
            tensors = 1;
            continue;
        } else if (!strcmp(a, "--half")) {
            o.half = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "inspect: %s: needs a value (see --help)\n", a);
            return EXIT_USAGE;
        }
        i++;
        if (!strcmp(a, "--model")) o.yaml_path = v;
        else if (!strcmp(a, "--weights")) o.weights_path = v;
        else if (!strcmp(a, "--device")) o.device = v;
        else if (!strcmp(a, "--scale") && strlen(v) == 1) o.scale = v[0];
        else if (!strcmp(a, "--nc") && parse_int(v, 1, 1 << 30, &o.nc)) {} /* the model load checks the range */
        else if (!strcmp(a, "--imgsz") && parse_int(v, 1, 16384, &h)) w = h;
        else if (!strcmp(a, "--size") && sscanf(v, "%dx%d", &h, &w) == 2 && h > 0 && w > 0) {}
        else {
            fprintf(stderr, "inspect: %s %s: unknown option or bad value (see --help)\n", a, v);
            return EXIT_USAGE;
        }
    }
    if (!o.yaml_path && !o.weights_path) {
        fprintf(stderr, "inspect: --model YAML (or --weights with a .pt checkpoint or an Ultralytics ONNX export) is "
                "required (see --help)\n");
        return EXIT_USAGE;
    }
    char yaml_dir[PATH_MAX];
    o.yaml_dir = strix_tool_yaml_dir(yaml_dir);
    if (tensors && !o.weights_path) {
        fprintf(stderr, "inspect: --tensors needs --weights (see --help)\n");
        return EXIT_USAGE;
    }
    if (!o.device) {
        /* Ultralytics' default: the GPU when there is one */
        o.device = strix_device_count() > 0 ? "cuda" : "cpu";
        if (o.half && strix_device_count() == 0)
            fprintf(stderr, "inspect: no CUDA device: planning on the cpu, where --half does not apply\n");
    }
    strix_model *m;
    strix_error e;
    strix_status st = strix_model_load(&m, &o, &e);
    if (st) {
        fprintf(stderr, "inspect: %s\n", e.message);
        return strix_exit_code(st);
    }
    strix_model_summary s;
    if ((st = strix_model_summarize(m, h, w, &s, &e))) {
        fprintf(stderr, "inspect: %s\n", e.message);
        strix_model_free(m);
        return strix_exit_code(st);
    }
    if (!summary_only) {
        printf("%4s %18s %3s %10s  %-12s %-34s %s\n", "", "from", "n", "params", "module", "arguments",
               "output (C x H x W)");
        for (int i = 0; i < strix_model_layer_count(m); i++) {
            strix_layer_info li;
            if ((st = strix_model_layer_info(m, i, h, w, &li, &e))) {
                fprintf(stderr, "inspect: %s\n", e.message);
                strix_model_free(m);
                return strix_exit_code(st);
            }
            printf("%4d %18s %3d %10lld  %-12s %-34s %d x %d x %d", li.index, li.from, li.repeats, li.params,
                   li.module, li.args, li.out_c, li.out_h, li.out_w);
            if (li.cascade) printf("  (%d max-pools fused)", li.cascade);
            printf("\n");
        }
    }
    if (tensors && (st = print_tensors(o.weights_path, &e))) {
        fprintf(stderr, "inspect: %s\n", e.message);
        strix_model_free(m);
        return strix_exit_code(st);
    }
    printf("input %dx%d (HxW), %d classes, stride %d\n", h, w, strix_model_class_count(m), strix_model_stride(m));
    printf("unfused: %d layers, %lld parameters, %.1f GFLOPs\n", s.modules_unfused, s.params_unfused, s.gflops_unfused);
    printf("fused: %d layers, %lld parameters, %.1f GFLOPs\n", s.modules_fused, s.params_fused, s.gflops_fused);
    printf("memory: %.1f MB weights (fp32), %.1f MB planned activations at batch 1\n",
           s.weight_bytes / 1048576.0, s.peak_activation_bytes / 1048576.0);
    strix_model_free(m);
    return 0;
}
