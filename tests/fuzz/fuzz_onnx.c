/* fuzz_onnx.c — libFuzzer target: bytes as an Ultralytics ONNX export
 * through loaders/onnx.c (the protobuf walk, Conv nodes to module paths,
 * initializers behind Identity / Constant nodes, the names metadata), then
 * every tensor looked up by name and, for small ones, converted to fp32. */
#include <stdlib.h>

#include "checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strix_checkpoint c;
    strix_error err;
    if (strix_onnx_read(&c, "fuzz.onnx", data, size, 0, &err) != STRIX_OK) return 0;
    for (size_t i = 0; i < strix_st_count(c.tensors); i++) {
        const strix_st_tensor *t = strix_st_get(c.tensors, i);
        if (strix_st_find(c.tensors, t->name) != t) abort();
        if (t->numel <= 4096) {
            float buf[4096];
            strix_st_to_f32(buf, t, &err);
        }
    }
    for (int i = 0; i < c.n_names; i++)
        if (!c.names[i]) abort();
    strix_checkpoint_close(&c);
    return 0;
}
