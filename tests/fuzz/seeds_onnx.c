/* seeds_onnx.c — writes the ONNX seeds of fuzz_onnx into a folder (run by
 * tests/fuzz/run.sh before the target), so no model file sits in git:
 *   conv.onnx                  an Ultralytics-style export of one Conv + SiLU
 *                              (Sigmoid, Mul) under /model.0/conv/Conv, opset
 *                              12, fp32 initializers, names/task metadata;
 *   crash-no-node-output.onnx  the same with the Conv node's output left out;
 *   crash-no-metadata-value.onnx  a metadata entry without a value;
 *   crash-no-input-type.onnx   the graph input `images` without its type.
 * The crash-* seeds rebuild the inputs of the UBSan findings of
 * tests/fuzz/RESULTS.md (a memcmp/memcpy on an absent, empty field; pointer
 * arithmetic on the absent type of an input).
 * Field numbers are those of onnx.proto (ModelProto, GraphProto, NodeProto,
 * AttributeProto, TensorProto, ValueInfoProto).
 *   seeds_onnx DIR */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pbwrite.h"

/* AttributeProto: name 1, i 3, ints 8, type 20 (INT 2, INTS 7). */
static void attr_ints(pb *node, const char *name, const int *v, int n)
{
    pb a = {0};
    pb_str(&a, 1, name);
    if (n == 1) {
        pb_int(&a, 3, (uint64_t)v[0]);
        pb_int(&a, 20, 2);
    } else {
        for (int i = 0; i < n; i++) pb_int(&a, 8, (uint64_t)v[i]);
        pb_int(&a, 20, 7);
    }
    pb_msg(node, 5, &a);
}

/* ValueInfoProto of an fp32 tensor [1, c, h, w] (type 2 > tensor_type 1 >
 * elem_type 1, shape 2 > dim 1 > dim_value 1). */
static void value_info(pb *graph, int f, const char *name, const int dims[4])
{
    pb shape = {0}, dim = {0}, tensor = {0}, type = {0}, vi = {0};
    for (int i = 0; i < 4; i++) {
        pb_int(&dim, 1, (uint64_t)dims[i]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tensor, 1, 1);
    pb_msg(&tensor, 2, &shape);
    pb_msg(&type, 1, &tensor);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &type);
    pb_msg(graph, f, &vi);
}

/* TensorProto: dims 1, data_type 2 (FLOAT 1), name 8, raw_data 9. */
static void initializer(pb *graph, const char *name, const int *dims, int nd)
{
    pb t = {0};
    size_t count = 1;
    for (int i = 0; i < nd; i++) {
        pb_int(&t, 1, (uint64_t)dims[i]);
        count *= (size_t)dims[i];
    }
    pb_int(&t, 2, 1);
    pb_str(&t, 8, name);
    float *v = malloc(count * sizeof *v);
    if (!v) exit(1);
    for (size_t i = 0; i < count; i++) v[i] = (float)((int)(i % 7) - 3) * 0.125f; /* exact in fp16 too */
    pb_bytes(&t, 9, v, count * sizeof *v); /* little-endian hosts, as ONNX's raw_data */
    free(v);
    pb_msg(graph, 5, &t);
}

/* NodeProto: input 1, output 2, name 3, op_type 4, attribute 5. */
static void node(pb *graph, const char *const *in, int n_in, const char *out, const char *name, const char *op,
                 int conv)
{
    pb nd = {0};
    for (int i = 0; i < n_in; i++) pb_str(&nd, 1, in[i]);
    if (out) pb_str(&nd, 2, out);
    pb_str(&nd, 3, name);
    pb_str(&nd, 4, op);
    if (conv) {
        static const int one[2] = {1, 1}, k[2] = {3, 3}, pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2}, group = 1;
        attr_ints(&nd, "dilations", one, 2);
        attr_ints(&nd, "group", &group, 1);
        attr_ints(&nd, "kernel_shape", k, 2);
        attr_ints(&nd, "pads", pads, 4);
        attr_ints(&nd, "strides", strides, 2);
    }
    pb_msg(graph, 1, &nd);
}

static void metadata(pb *model, const char *key, const char *value)
{
    pb e = {0};
    pb_str(&e, 1, key);
    if (value) pb_str(&e, 2, value);
    pb_msg(model, 14, &e);
}

/* ModelProto: ir_version 1, producer_name 2, producer_version 3, graph 7,
 * opset_import 8 (version 2), metadata_props 14. */
static int write_model(const char *dir, const char *file, int conv_output, int metadata_value, int input_type)
{
    pb model = {0}, graph = {0}, opset = {0};
    static const char *conv_in[] = {"images", "model.0.conv.weight", "model.0.conv.bias"};
    static const char *sig_in[] = {"/model.0/conv/Conv_output_0"};
    static const char *mul_in[] = {"/model.0/conv/Conv_output_0", "/model.0/act/Sigmoid_output_0"};
    static const int w_dims[4] = {4, 3, 3, 3}, b_dims[1] = {4}, in_dims[4] = {1, 3, 8, 8}, out_dims[4] = {1, 4, 4, 4};
    pb_int(&model, 1, 7);
    pb_str(&model, 2, "pytorch");
    pb_str(&model, 3, "2.15.0");
    node(&graph, conv_in, 3, conv_output ? "/model.0/conv/Conv_output_0" : NULL, "/model.0/conv/Conv", "Conv", 1);
    node(&graph, sig_in, 1, "/model.0/act/Sigmoid_output_0", "/model.0/act/Sigmoid", "Sigmoid", 0);
    node(&graph, mul_in, 2, "10", "/model.0/act/Mul", "Mul", 0);
    pb_str(&graph, 2, "main_graph");
    initializer(&graph, "model.0.conv.weight", w_dims, 4);
    initializer(&graph, "model.0.conv.bias", b_dims, 1);
    if (input_type) {
        value_info(&graph, 11, "images", in_dims);
    } else {
        pb vi = {0};
        pb_str(&vi, 1, "images");
        pb_msg(&graph, 11, &vi);
    }
    value_info(&graph, 12, "10", out_dims);
    pb_msg(&model, 7, &graph);
    pb_int(&opset, 2, 12);
    pb_msg(&model, 8, &opset);
    metadata(&model, "task", "detect");
    metadata(&model, "names", "{0: 'a', 1: \"it's\"}");
    metadata(&model, "description", metadata_value ? "seed" : NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    int ok = !model.oom && f && fwrite(model.p, 1, model.n, f) == model.n;
    if (f && fclose(f)) ok = 0;
    if (!ok) fprintf(stderr, "seeds_onnx: cannot write %s\n", path);
    free(model.p);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds_onnx DIR\n");
        return 2;
    }
    int ok = write_model(argv[1], "conv.onnx", 1, 1, 1) && write_model(argv[1], "crash-no-node-output.onnx", 0, 1, 1) &&
             write_model(argv[1], "crash-no-metadata-value.onnx", 1, 0, 1) &&
             write_model(argv[1], "crash-no-input-type.onnx", 1, 1, 0);
    return ok ? 0 : 1;
}
