/* fuzz_onnx.c — libFuzzer target: bytes as an Ultralytics ONNX export
 * through loaders/onnx.c (the protobuf walk, Conv nodes to module paths,
 * initializers behind Identity / Constant nodes, the names metadata), then
 * every tensor looked up by name and, for small ones, converted to fp32. */
#include "checkpoint.h"
#include "fuzz_ckpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strix_checkpoint c;
    strix_error err;
    if (strix_onnx_read(&c, "fuzz.onnx", data, size, 0, &err) != STRIX_OK) return 0;
    fuzz_checkpoint_walk(&c);
    strix_checkpoint_close(&c);
    return 0;
}
