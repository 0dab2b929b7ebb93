/* fuzz_pt.c — libFuzzer target: bytes as an Ultralytics .pt checkpoint
 * through loaders/pt.c (the ZIP directory, loaders/zip.c; the restricted
 * unpickler, loaders/pickle.c; the module walk and the YAML written back),
 * then the embedded YAML through the model-YAML parser, every tensor looked
 * up by name and, for small ones, converted to fp32. */
#include <string.h>

#include "checkpoint.h"
#include "fuzz_ckpt.h"
#include "model_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strix_checkpoint c;
    strix_error err;
    if (strix_pt_read(&c, "fuzz.pt", data, size, 0, &err) != STRIX_OK) return 0;
    fuzz_checkpoint_walk(&c);
    if (c.yaml) {
        strix_yaml_model y;
        if (strix_yaml_model_parse(c.yaml, strlen(c.yaml), "fuzz.pt", &y, &err) == STRIX_OK) strix_yaml_model_free(&y);
    }
    strix_checkpoint_close(&c);
    return 0;
}
