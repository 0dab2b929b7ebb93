/* fuzz_model_yaml.c — libFuzzer target: a model YAML through the loader
 * (loaders/model_yaml.c) and, when it loads, the graph and program builders
 * (engine/graph.c, engine/program.c), as `inspect --model` does. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz.h"
#include "graph.h"
#include "model_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    strix_yaml_model y;
    strix_error err;
    if (strix_yaml_model_load(path, &y, &err) == STRIX_OK) {
        /* the path names no scale letter: take the file's first scale */
        char scale = y.n_scales ? y.scales[0].letter : 0;
        strix_graph g;
        if (strix_graph_build(&g, &y, scale, 0, &err) == STRIX_OK) {
            strix_program p;
            if (strix_program_build(&p, &g, &err) == STRIX_OK) strix_program_free(&p);
            strix_graph_free(&g);
        }
        strix_yaml_model_free(&y);
    }
    close(fd);
    return 0;
}
