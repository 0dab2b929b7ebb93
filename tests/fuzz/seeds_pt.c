/* seeds_pt.c — writes the .pt seeds of fuzz_pt into a folder (run by
 * tests/fuzz/run.sh before the target), so no checkpoint sits in git.  Each
 * is a torch.save ZIP (stored entries: ARCHIVE/data.pkl, data/N storages,
 * version, byteorder) holding a protocol-2 pickle of the shapes
 * loaders/pickle.c and loaders/pt.c walk:
 *   state_dict.pt      OrderedDict of model.0.conv/bn tensors through
 *                      torch._utils._rebuild_tensor_v2 (FloatStorage, one
 *                      LongStorage num_batches_tracked);
 *   conv_f16.pt        an Ultralytics checkpoint: {"model": DetectionModel
 *                      (NEWOBJ + BUILD of its __dict__: its yaml dict and
 *                      names among the module state) with model.0 a Conv
 *                      whose Conv2d holds HalfStorage weight and bias,
 *                      "ema": None, train_args};
 *   conv_fused_ema.pt  the same with the model under "ema", fp32, "model":
 *                      None (what Ultralytics' fused EMA checkpoints hold);
 *   evil.pt            {"model": posix.system("...")}: the unpickler must
 *                      refuse the global, never call it;
 *   compressed.pt      an entry compressed with deflate (method 8), which
 *                      the reader refuses: torch.save stores.
 * Opcodes, storages and ZIP fields as torch 2.x writes them, without the
 * memo (BINPUT/BINGET), which the reader does not need.
 *   seeds_pt DIR */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    uint8_t *b;
    size_t n, cap;
} buf;

static void put(buf *m, const void *p, size_t n)
{
    if (m->n + n > m->cap) {
        m->cap = (m->n + n) * 2 + 64;
        m->b = realloc(m->b, m->cap);
        if (!m->b) {
            fprintf(stderr, "seeds_pt: out of memory\n");
            exit(1);
        }
    }
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void op(buf *m, uint8_t c) { put(m, &c, 1); }

static void le(buf *m, uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) op(m, (uint8_t)(v >> (8 * i)));
}

/* ---- pickle opcodes (protocol 2) */
static void p_str(buf *m, const char *s)
{
    op(m, 'X'); /* BINUNICODE */
    le(m, (uint32_t)strlen(s), 4);
    put(m, s, strlen(s));
}

static void p_int(buf *m, int v)
{
    op(m, 'K'); /* BININT1 */
    op(m, (uint8_t)v);
}

static void p_global(buf *m, const char *module, const char *name)
{
    op(m, 'c');
    put(m, module, strlen(module));
    op(m, '\n');
    put(m, name, strlen(name));
    op(m, '\n');
}

static void p_float(buf *m, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    op(m, 'G'); /* BINFLOAT: big-endian IEEE double */
    for (int i = 7; i >= 0; i--) op(m, (uint8_t)(b >> (8 * i)));
}

static void p_ints(buf *m, const int *v, int n) /* a tuple of small ints */
{
    op(m, '(');
    for (int i = 0; i < n; i++) p_int(m, v[i]);
    op(m, 't');
}

/* _rebuild_tensor_v2(persistent storage `key`, 0, shape, stride, False,
 * OrderedDict()) of a contiguous tensor. */
static void p_tensor(buf *m, const char *storage, const char *key, const int *shape, int dims)
{
    int stride[4], numel = 1;
    for (int i = dims - 1; i >= 0; i--) stride[i] = numel, numel *= shape[i];
    p_global(m, "torch._utils", "_rebuild_tensor_v2");
    op(m, '(');
    op(m, '(');
    p_str(m, "storage");
    p_global(m, "torch", storage);
    p_str(m, key);
    p_str(m, "cpu");
    p_int(m, numel);
    op(m, 't');
    op(m, 'Q'); /* BINPERSID */
    p_int(m, 0);
    p_ints(m, shape, dims);
    p_ints(m, stride, dims);
    op(m, 0x89); /* NEWFALSE */
    p_global(m, "collections", "OrderedDict");
    op(m, ')');
    op(m, 'R');
    op(m, 't');
    op(m, 'R');
}

/* An nn.Module: cls() then BUILD of a __dict__ with training, _parameters
 * (the tensors given) and _modules (children written by `children`). */
static void p_module(buf *m, const char *module, const char *cls, void (*params)(buf *, void *), void *pctx,
                     void (*children)(buf *, void *), void *cctx, void (*extra)(buf *))
{
    p_global(m, module, cls);
    op(m, ')');
    op(m, 0x81); /* NEWOBJ */
    op(m, '}');
    op(m, '(');
    p_str(m, "training");
    op(m, 0x89);
    p_str(m, "_parameters");
    op(m, '}');
    if (params) {
        op(m, '(');
        params(m, pctx);
        op(m, 'u'); /* SETITEMS */
    }
    p_str(m, "_buffers");
    op(m, '}');
    p_str(m, "_non_persistent_buffers_set");
    p_global(m, "__builtin__", "set");
    op(m, ']');
    op(m, 0x85); /* TUPLE1 */
    op(m, 'R');
    if (extra) extra(m);
    p_str(m, "_modules");
    op(m, '}');
    if (children) {
        op(m, '(');
        children(m, cctx);
        op(m, 'u');
    }
    op(m, 'u');
    op(m, 'b'); /* BUILD */
}

/* ---- the checkpoint's module tree: DetectionModel.model[0] = Conv(conv, act) */
static const char *g_storage; /* HalfStorage or FloatStorage */

static void conv2d_params(buf *m, void *ctx)
{
    static const int w[4] = {4, 3, 3, 3}, b[1] = {4};
    (void)ctx;
    p_str(m, "weight");
    p_tensor(m, g_storage, "0", w, 4);
    p_str(m, "bias");
    p_tensor(m, g_storage, "1", b, 1);
}

static void conv_children(buf *m, void *ctx)
{
    (void)ctx;
    p_str(m, "conv");
    p_module(m, "torch.nn.modules.conv", "Conv2d", conv2d_params, NULL, NULL, NULL, NULL);
    p_str(m, "act");
    p_module(m, "torch.nn.modules.activation", "SiLU", NULL, NULL, NULL, NULL, NULL);
}

static void seq_children(buf *m, void *ctx)
{
    (void)ctx;
    p_str(m, "0");
    p_module(m, "ultralytics.nn.modules.conv", "Conv", NULL, NULL, conv_children, NULL, NULL);
}

static void model_children(buf *m, void *ctx)
{
    (void)ctx;
    p_str(m, "model");
    p_module(m, "torch.nn.modules.container", "Sequential", NULL, NULL, seq_children, NULL, NULL);
}

/* A YAML layer row [from, repeats, module, args] with small-int args. */
static void p_row(buf *m, int from, const char *module, const int *args, int n_args, const char *arg_str)
{
    op(m, ']');
    op(m, '(');
    if (from == 0) { /* a list of froms: [0] */
        op(m, ']');
        p_int(m, 0);
        op(m, 'a'); /* APPEND */
    } else {
        op(m, 'J'); /* BININT: -1 */
        le(m, (uint32_t)from, 4);
    }
    p_int(m, 1);
    p_str(m, module);
    op(m, ']');
    op(m, '(');
    for (int i = 0; i < n_args; i++) p_int(m, args[i]);
    if (arg_str) p_str(m, arg_str);
    op(m, 'e'); /* APPENDS */
    op(m, 'e');
}

/* DetectionModel's own attributes: the model YAML dict Ultralytics keeps
 * (what loaders/pt.c turns back into a YAML) and the class names. */
static void model_extra(buf *m)
{
    static const int conv[3] = {16, 3, 2};
    p_str(m, "yaml");
    op(m, '}');
    op(m, '(');
    p_str(m, "nc");
    p_int(m, 3);
    p_str(m, "scales");
    op(m, '}');
    p_str(m, "n");
    op(m, ']');
    op(m, '(');
    p_float(m, 0.33);
    p_float(m, 0.25);
    op(m, 'M'); /* BININT2 */
    le(m, 1024, 2);
    op(m, 'e');
    op(m, 's');
    p_str(m, "backbone");
    op(m, ']');
    op(m, '(');
    p_row(m, -1, "Conv", conv, 3, NULL);
    op(m, 'e');
    p_str(m, "head");
    op(m, ']');
    op(m, '(');
    p_row(m, 0, "Detect", NULL, 0, "nc");
    op(m, 'e');
    p_str(m, "scale");
    p_str(m, "n");
    p_str(m, "yaml_file");
    p_str(m, "yolov8n.yaml");
    op(m, 'u');
    p_str(m, "names");
    op(m, '}');
    op(m, '(');
    static const char *const names[3] = {"person", "bicycle", "car"};
    for (int i = 0; i < 3; i++) {
        p_int(m, i);
        p_str(m, names[i]);
    }
    op(m, 'u');
}

static void p_detection_model(buf *m)
{
    p_module(m, "ultralytics.nn.tasks", "DetectionModel", NULL, NULL, model_children, NULL, model_extra);
}

/* ---- ZIP (stored entries, or one deflate-stored entry; no data descriptor) */
typedef struct zip {
    buf out, cdir;
    int entries;
} zip;

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static void zip_add(zip *z, const char *name, const uint8_t *data, size_t n, int deflate)
{
    buf body = {0};
    if (deflate) { /* one final stored deflate block: BFINAL 1, BTYPE 00, LEN, NLEN */
        op(&body, 1);
        le(&body, (uint32_t)n, 2);
        le(&body, (uint32_t)(~n & 0xffff), 2);
    }
    put(&body, data, n);
    const uint32_t crc = crc32(data, n), off = (uint32_t)z->out.n, nl = (uint32_t)strlen(name);
    for (int central = 0; central < 2; central++) {
        buf *h = central ? &z->cdir : &z->out;
        le(h, central ? 0x02014b50u : 0x04034b50u, 4);
        if (central) le(h, 20, 2); /* version made by */
        le(h, 20, 2);              /* version needed */
        le(h, 0, 2);               /* flags */
        le(h, deflate ? 8 : 0, 2);
        le(h, 0, 4); /* time, date */
        le(h, crc, 4);
        le(h, (uint32_t)body.n, 4);
        le(h, (uint32_t)n, 4);
        le(h, nl, 2);
        le(h, 0, 2); /* extra */
        if (central) {
            le(h, 0, 2); /* comment */
            le(h, 0, 2); /* disk */
            le(h, 0, 2); /* internal attributes */
            le(h, 0, 4); /* external attributes */
            le(h, off, 4);
        }
        put(h, name, nl);
        if (!central) put(h, body.b, body.n);
    }
    z->entries++;
    free(body.b);
}

static void zip_str(zip *z, const char *archive, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", archive, name);
    zip_add(z, path, (const uint8_t *)text, strlen(text), 0);
}

/* Write archive's ZIP: data.pkl, the storages (n_st of the given sizes, bytes
 * of a fixed pattern) and torch's small records. */
static int write_pt(const char *dir, const char *archive, const buf *pkl, const size_t *st_bytes, int n_st,
                    int deflate)
{
    zip z = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/data.pkl", archive);
    zip_add(&z, path, pkl->b, pkl->n, deflate);
    if (!deflate) {
        zip_str(&z, archive, ".format_version", "1");
        zip_str(&z, archive, "byteorder", "little");
    }
    for (int i = 0; i < n_st; i++) {
        uint8_t *d = malloc(st_bytes[i]);
        if (!d) return 0;
        for (size_t k = 0; k < st_bytes[i]; k++) d[k] = (uint8_t)(k * 37 + 11 * i); /* finite fp16/fp32 values */
        for (size_t k = 3; k < st_bytes[i]; k += 4) d[k] = 0x3c;
        snprintf(path, sizeof path, "%s/data/%d", archive, i);
        zip_add(&z, path, d, st_bytes[i], 0);
        free(d);
    }
    if (!deflate) zip_str(&z, archive, "version", "3\n");
    const uint32_t cd_off = (uint32_t)z.out.n, cd_len = (uint32_t)z.cdir.n;
    put(&z.out, z.cdir.b, z.cdir.n);
    le(&z.out, 0x06054b50u, 4);
    le(&z.out, 0, 4); /* disk numbers */
    le(&z.out, (uint32_t)z.entries, 2);
    le(&z.out, (uint32_t)z.entries, 2);
    le(&z.out, cd_len, 4);
    le(&z.out, cd_off, 4);
    le(&z.out, 0, 2);
    snprintf(path, sizeof path, "%s/%s.pt", dir, archive);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(z.out.b, 1, z.out.n, f) == z.out.n;
    if (f && fclose(f)) ok = 0;
    if (!ok) fprintf(stderr, "seeds_pt: cannot write %s\n", path);
    free(z.out.b), free(z.cdir.b);
    return ok;
}

/* {"model": ..., "ema": ..., "yaml": {...}, "train_args": {...}}: the tree
 * under "model" (ema 0) or "ema" (ema 1), None under the other key. */
static void p_checkpoint(buf *m, int ema)
{
    op(m, '}');
    op(m, '(');
    p_str(m, ema ? "ema" : "model");
    p_detection_model(m);
    p_str(m, ema ? "model" : "ema");
    op(m, 'N');
    p_str(m, "train_args");
    op(m, '}');
    op(m, '(');
    p_str(m, "imgsz");
    p_int(m, 64);
    op(m, 'u');
    op(m, 'u');
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds_pt DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    int ok = 1;
    buf m = {0};

    /* state_dict.pt */
    static const int w[4] = {4, 3, 3, 3}, c4[1] = {4}, one[1] = {1};
    static const char *const bn[4] = {"model.0.bn.weight", "model.0.bn.bias", "model.0.bn.running_mean",
                                      "model.0.bn.running_var"};
    op(&m, 0x80), op(&m, 2);
    p_global(&m, "collections", "OrderedDict");
    op(&m, ')');
    op(&m, 'R');
    op(&m, '(');
    p_str(&m, "model.0.conv.weight");
    p_tensor(&m, "FloatStorage", "0", w, 4);
    for (int i = 0; i < 4; i++) {
        char key[2] = {(char)('1' + i), 0};
        p_str(&m, bn[i]);
        p_tensor(&m, "FloatStorage", key, c4, 1);
    }
    p_str(&m, "model.0.bn.num_batches_tracked");
    p_tensor(&m, "LongStorage", "5", one, 0);
    op(&m, 'u');
    op(&m, '.');
    const size_t sd[6] = {108 * 4, 16, 16, 16, 16, 8};
    ok &= write_pt(dir, "state_dict", &m, sd, 6, 0);

    /* conv_f16.pt and conv_fused_ema.pt */
    for (int ema = 0; ema < 2; ema++) {
        m.n = 0;
        g_storage = ema ? "FloatStorage" : "HalfStorage";
        op(&m, 0x80), op(&m, 2);
        p_checkpoint(&m, ema);
        op(&m, '.');
        const size_t esz = ema ? 4 : 2, st[2] = {108 * esz, 4 * esz};
        ok &= write_pt(dir, ema ? "conv_fused_ema" : "conv_f16", &m, st, 2, 0);
    }

    /* evil.pt */
    m.n = 0;
    op(&m, 0x80), op(&m, 2);
    op(&m, '}');
    p_str(&m, "model");
    p_global(&m, "posix", "system");
    p_str(&m, "echo strix must never run this");
    op(&m, 0x85); /* TUPLE1 */
    op(&m, 'R');
    op(&m, 's');
    op(&m, '.');
    ok &= write_pt(dir, "evil", &m, NULL, 0, 0);

    /* compressed.pt */
    m.n = 0;
    op(&m, 0x80), op(&m, 2);
    op(&m, '}');
    op(&m, '.');
    ok &= write_pt(dir, "compressed", &m, NULL, 0, 1);
    free(m.b);
    return ok ? 0 : 1;
}
