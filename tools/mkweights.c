/* mkweights.c — deterministic synthetic weights for any model YAML, written
 * as an Ultralytics-named safetensors file (for tests and benchmarks: there
 * are no pretrained weights on CI machines). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcodes.h"
#include "outfile.h"
#include "outguard.h"
#include "strix.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mkweights --model YAML [--scale n|s|m|l|x] [--nc N] --out FILE\n"
            "                 [--seed N] [--fused] [--f16] [--nms-free] [--overwrite]\n"
            "  --seed N      generator seed (default 1); the same seed gives the same file everywhere\n"
            "  --fused       convolution + bias (BatchNorm already folded) instead of conv + bn.*\n"
            "  --f16         store F16 instead of F32\n"
            "  --nms-free    YOLO26 (two heads): the one-to-one head's weights (one2one_*) instead of the\n"
            "                one-to-many head's; infer runs the one head such a file holds\n" STRIX_EXIT_CODES_HELP);
}

int main(int argc, char **argv)
{
    strix_model_options o;
    strix_model_options_init(&o);
    const char *out = NULL;
    unsigned long long seed = 1;
    int fused = 0, f16 = 0, overwrite = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--fused")) { fused = 1; continue; }
        if (!strcmp(a, "--f16")) { f16 = 1; continue; }
        if (!strcmp(a, "--nms-free")) { o.nms_free = 1; continue; }
        if (!strcmp(a, "--overwrite")) { overwrite = 1; continue; }
        if (!v) {
            fprintf(stderr, "mkweights: %s: needs a value (see --help)\n", a);
            return EXIT_USAGE;
        }
        i++;
        if (!strcmp(a, "--model")) o.yaml_path = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--scale") && strlen(v) == 1) o.scale = v[0];
        else if (!strcmp(a, "--nc")) {
            errno = 0;
            long nc = strtol(v, &end, 10);
            if (errno || !*v || *end || nc < 1 || nc > STRIX_MAX_CLASSES) {
                fprintf(stderr, "mkweights: --nc %s: not a class count in 1..%d\n", v, STRIX_MAX_CLASSES);
                return EXIT_USAGE;
            }
            o.nc = (int)nc;
        }
        else if (!strcmp(a, "--seed") && (seed = strtoull(v, &end, 0), *v && !*end)) {}
        else {
            fprintf(stderr, "mkweights: %s %s: unknown option or bad value (see --help)\n", a, v);
            return EXIT_USAGE;
        }
    }
    if (!o.yaml_path || !out) {
        fprintf(stderr, "mkweights: --model YAML and --out FILE are required (see --help)\n");
        return EXIT_USAGE;
    }
    const char *reads[] = {o.yaml_path}, *outs[] = {out};
    int rc = guard_outputs("mkweights", outs, 1, reads, 1, "choose another --out");
    if (rc == EXIT_NOMEM) fprintf(stderr, "mkweights: out of memory\n");
    if (rc) return rc;
    if (!overwrite && access(out, F_OK) == 0) {
        fprintf(stderr, "mkweights: %s: already exists (pass --overwrite to replace it)\n", out);
        return EXIT_OUTPUT;
    }
    strix_model *m;
    strix_error e;
    strix_status st = strix_model_load(&m, &o, &e);
    if (st) {
        fprintf(stderr, "mkweights: %s\n", e.message);
        return strix_exit_code(st);
    }
    /* temporary files of killed runs beside the output */
    const char *slash = strrchr(out, '/');
    char *dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
    int stale = dir ? strix_temp_sweep(dir) : 0;
    if (stale)
        fprintf(stderr, "mkweights: removed %d stale temporary file%s of killed runs from %s\n", stale,
                stale == 1 ? "" : "s", dir);
    free(dir);
    st = strix_model_write_synthetic_weights(m, out, seed, fused, f16, overwrite, &e);
    strix_model_free(m);
    if (st) {
        fprintf(stderr, "mkweights: %s\n", e.message);
        return st == STRIX_E_IO ? EXIT_OUTPUT : strix_exit_code(st);
    }
    return 0;
}
