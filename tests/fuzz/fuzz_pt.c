/* fuzz_pt.c — libFuzzer target: bytes as an Ultralytics .pt checkpoint
 * through loaders/pt.c (the ZIP directory, loaders/zip.c; the restricted
 * unpickler, loaders/pickle.c; the module walk and the YAML written back),
 * then the embedded YAML through the model-YAML parser, every tensor looked
 * up by name and, for small ones, converted to fp32. */
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "model_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strix_checkpoint c;
    strix_error err;
    if (strix_pt_read(&c, "fuzz.pt", data, size, 0, &err) != STRIX_OK) return 0;
    for (size_t i = 0; i < strix_st_count(c.tensors); i++) {
        const strix_st_tensor *t = strix_st_get(c.tensors, i);
        if (strix_st_find(c.tensors, t->name) != t) abort();
        if (t->numel <= 4096) {
            float buf[4096];
            strix_st_to_f32(buf, t, &err);
        }
    }
    if (c.yaml) {
        strix_yaml_model y;
        if (strix_yaml_model_parse(c.yaml, strlen(c.yaml), "fuzz.pt", &y, &err) == STRIX_OK) strix_yaml_model_free(&y);
    }
    for (int i = 0; i < c.n_names; i++)
        if (!c.names[i]) abort();
    strix_checkpoint_close(&c);
    return 0;
}
