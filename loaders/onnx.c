/* onnx.c — the weights of an Ultralytics ONNX export, read from the
 * protobuf directly.  A minimal reader of our own rather than Debian's
 * protobuf-c: protobuf-c needs the onnx.proto schema compiled into
 * generated C (thousands of lines for messages strix never reads), while the
 * wire format itself is five rules (varint keys, varint / fixed32 / fixed64 /
 * length-delimited values); we walk ModelProto -> GraphProto -> NodeProto and
 * TensorProto and skip every other field.
 *
 * Field numbers (onnx/onnx.proto3):
 *   ModelProto  2 producer_name, 3 producer_version, 7 graph, 14 metadata_props {1 key, 2 value}
 *               (the opset does not matter: only initializers and node names are read)
 *   GraphProto  1 node, 5 initializer, 11 input (ValueInfoProto {1 name, 2 type})
 *   TypeProto   1 tensor_type {2 shape: TensorShapeProto {1 dim: {1 dim_value, 2 dim_param}}}
 *   NodeProto   1 input, 2 output, 3 name, 4 op_type, 5 attribute {1 name, 5 t}
 *   TensorProto 1 dims, 2 data_type, 4 float_data, 5 int32_data, 8 name, 9 raw_data,
 *               10 double_data, 14 data_location (1 = external)
 * Every Conv node's weight and bias (an initializer, possibly behind Identity
 * or Constant nodes) is named after the module path its node name carries:
 * torch.onnx scopes /model.22/cv2.0/cv2.0.2/Conv, where a segment that
 * extends the previous one (cv2.0 -> cv2.0.2) replaces it, so the path is
 * model.22.cv2.0.2 and the tensors model.22.cv2.0.2.weight / .bias.  This is
 * what survives onnxslim, which renames and de-duplicates initializers (two
 * equal biases become one) but keeps node names.
 * The graph's image input (the one input that is no initializer: IR < 4
 * lists the initializers among the inputs too) tells a static export
 * (dim_value height and width, as export(dynamic=False) writes them) from
 * a dynamic one (dim_param names): a static export runs at that size only. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "fileread.h"
#include "util.h"

#define ONNX_MAX_DEPTH 8 /* Identity / Constant hops from a Conv to its initializer */

typedef struct span {
    const uint8_t *p;
    size_t n;
} span;

/* one TensorProto, its fields located (not converted) */
typedef struct tproto {
    span name;
    int data_type;
    int ndim;
    int64_t dims[STRIX_ST_MAX_DIMS];
    span msg;                   /* the whole message: unpacked repeated fields are re-walked */
    span raw, floats, doubles;
    int floats_packed, doubles_packed, has_int32, external, too_many_dims;
    size_t n_floats;            /* unpacked fixed32 entries */
} tproto;

typedef struct node {
    span name, op, in[3], out0;
    int n_in;
    span value;                 /* Constant: the TensorProto of its `value` attribute */
} node;

typedef struct ox {
    const char *path;
    strix_error *err;
    node *nodes;
    size_t n_nodes, cap_nodes;
    span *inits;                /* TensorProto bytes */
    size_t n_inits, cap_inits;
    span *inputs;               /* the graph's inputs (ValueInfoProto bytes) */
    size_t n_inputs, cap_inputs;
    tproto *by_name;            /* the initializers parsed, sorted by name */
    node **by_out;              /* the nodes, sorted by first output */
    strix_ckpt_owner *own;
    strix_st_source *t;
    size_t n, cap;
} ox;

static strix_status ox_bad(ox *o, const char *what)
{
    return strix_fail(o->err, STRIX_E_WEIGHTS, "%s: %s (not an ONNX file strix can read: export it with Ultralytics' "
                      "model.export(format=\"onnx\"))", o->path, what);
}

static strix_status ox_oom(ox *o) { return strix_fail(o->err, STRIX_E_NOMEM, "%s: out of memory", o->path); }

/* ------------------------------------------------------------ wire format */

static int varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
    uint64_t x = 0;
    for (int s = 0; s < 64 && *p < e; s += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* Next field of the message [*p, e): its number, wire type, and for type 0
 * the value, for type 2 the bytes, for types 1 and 5 the raw bytes.
 * 0 at the end, -1 on malformed input. */
static int field(const uint8_t **p, const uint8_t *e, uint32_t *num, int *wt, uint64_t *v, span *s)
{
    *v = 0;
    if (*p == e) return 0;
    uint64_t key;
    if (!varint(p, e, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff) return -1;
    *num = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    switch (*wt) {
    case 0: return varint(p, e, v) ? 1 : -1;
    case 1: case 5: {
        size_t k = *wt == 1 ? 8 : 4;
        if ((size_t)(e - *p) < k) return -1;
        s->p = *p;
        s->n = k;
        *p += k;
        return 1;
    }
    case 2:
        if (!varint(p, e, v) || *v > (uint64_t)(e - *p)) return -1;
        s->p = *p;
        s->n = (size_t)*v;
        *p += *v;
        return 1;
    default: return -1; /* groups (3, 4) are deprecated; ONNX has none */
    }
}

static int span_eq(span a, const char *s) { return a.n == strlen(s) && !memcmp(a.p, s, a.n); }

static char *span_dup(ox *o, span s)
{
    char *d = strix_ckpt_owner_alloc(o->own, s.n + 1);
    if (d) {
        if (s.n) memcpy(d, s.p, s.n); /* an absent field is a NULL span */
        d[s.n] = 0;
    }
    return d;
}

/* s as a C string in buf, cut at cap - 1 bytes. */
static const char *span_str(char *buf, size_t cap, span s)
{
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    if (n) memcpy(buf, s.p, n);
    buf[n] = 0;
    return buf;
}

/* --------------------------------------------------------------- messages */

static strix_status parse_tensor(ox *o, span m, tproto *t)
{
    memset(t, 0, sizeof *t);
    t->msg = m;
    const uint8_t *p = m.p, *e = m.p + m.n;
    uint32_t num;
    int wt, r;
    uint64_t v;
    span s;
    while ((r = field(&p, e, &num, &wt, &v, &s)) > 0) {
        if (num == 1 && wt == 0) {
            if (t->ndim == STRIX_ST_MAX_DIMS) t->too_many_dims = 1;
            else t->dims[t->ndim++] = (int64_t)v;
        } else if (num == 1 && wt == 2) { /* packed dims */
            const uint8_t *q = s.p, *qe = s.p + s.n;
            while (q < qe) {
                if (!varint(&q, qe, &v)) return ox_bad(o, "a tensor's dims are malformed");
                if (t->ndim == STRIX_ST_MAX_DIMS) t->too_many_dims = 1;
                else t->dims[t->ndim++] = (int64_t)v;
            }
        } else if (num == 2 && wt == 0) t->data_type = v > 64 ? -1 : (int)v;
        else if (num == 4 && wt == 2) t->floats = s, t->floats_packed = 1;
        else if (num == 4 && wt == 5) t->n_floats++;
        else if (num == 5) t->has_int32 = 1;
        else if (num == 8 && wt == 2) t->name = s;
        else if (num == 9 && wt == 2) t->raw = s;
        else if (num == 10 && wt == 2) t->doubles = s, t->doubles_packed = 1;
        else if (num == 14 && wt == 0) t->external = v == 1;
    }
    if (r < 0) return ox_bad(o, "a tensor is malformed protobuf");
    return STRIX_OK;
}

static strix_status parse_node(ox *o, span m)
{
    if (o->n_nodes == o->cap_nodes) {
        size_t c = o->cap_nodes ? 2 * o->cap_nodes : 256;
        node *n = realloc(o->nodes, c * sizeof *n);
        if (!n) return ox_oom(o);
        o->nodes = n;
        o->cap_nodes = c;
    }
    node *n = &o->nodes[o->n_nodes];
    memset(n, 0, sizeof *n);
    const uint8_t *p = m.p, *e = m.p + m.n;
    uint32_t num;
    int wt, r, n_out = 0, n_in = 0;
    uint64_t v;
    span s;
    while ((r = field(&p, e, &num, &wt, &v, &s)) > 0) {
        if (wt != 2) continue;
        if (num == 1) {
            if (n_in < 3) n->in[n_in] = s;
            n_in++;
        } else if (num == 2 && !n_out++) n->out0 = s;
        else if (num == 3) n->name = s;
        else if (num == 4) n->op = s;
        else if (num == 5) { /* AttributeProto: keep `value` (Constant) */
            const uint8_t *q = s.p, *qe = s.p + s.n;
            span an = {0}, at = {0}, x;
            uint32_t k;
            int w, rr;
            while ((rr = field(&q, qe, &k, &w, &v, &x)) > 0) {
                if (k == 1 && w == 2) an = x;
                else if (k == 5 && w == 2) at = x;
            }
            if (rr < 0) return ox_bad(o, "a node attribute is malformed protobuf");
            if (span_eq(an, "value") && at.p) n->value = at;
        }
    }
    if (r < 0) return ox_bad(o, "a node is malformed protobuf");
    n->n_in = n_in;
    o->n_nodes++;
    return STRIX_OK;
}

/* Appends s to the list *a of *n (capacity *cap); 0 when out of memory. */
static int span_push(span **a, size_t *n, size_t *cap, span s)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        span *b = realloc(*a, c * sizeof *b);
        if (!b) return 0;
        *a = b;
        *cap = c;
    }
    (*a)[(*n)++] = s;
    return 1;
}

static strix_status parse_graph(ox *o, span g)
{
    const uint8_t *p = g.p, *e = g.p + g.n;
    uint32_t num;
    int wt, r;
    uint64_t v;
    span s;
    strix_status st;
    while ((r = field(&p, e, &num, &wt, &v, &s)) > 0) {
        if (wt != 2) continue;
        if (num == 1 && (st = parse_node(o, s))) return st;
        if (num == 5 && !span_push(&o->inits, &o->n_inits, &o->cap_inits, s)) return ox_oom(o);
        if (num == 11 && !span_push(&o->inputs, &o->n_inputs, &o->cap_inputs, s)) return ox_oom(o);
    }
    return r < 0 ? ox_bad(o, "the graph is malformed protobuf") : STRIX_OK;
}

static int span_cmp(span a, span b)
{
    size_t n = a.n < b.n ? a.n : b.n;
    int c = n ? memcmp(a.p, b.p, n) : 0; /* an absent field is a NULL span */
    return c ? c : (a.n > b.n) - (a.n < b.n);
}

static int cmp_tproto(const void *a, const void *b) { return span_cmp(((const tproto *)a)->name, ((const tproto *)b)->name); }
static int cmp_node(const void *a, const void *b)
{
    return span_cmp((*(node *const *)a)->out0, (*(node *const *)b)->out0);
}

/* Sort the initializers by name and the nodes by output, for resolve. */
static strix_status index_graph(ox *o)
{
    o->by_name = malloc((o->n_inits ? o->n_inits : 1) * sizeof *o->by_name);
    o->by_out = malloc((o->n_nodes ? o->n_nodes : 1) * sizeof *o->by_out);
    if (!o->by_name || !o->by_out) return ox_oom(o);
    strix_status st;
    for (size_t i = 0; i < o->n_inits; i++)
        if ((st = parse_tensor(o, o->inits[i], &o->by_name[i]))) return st;
    for (size_t i = 0; i < o->n_nodes; i++) o->by_out[i] = &o->nodes[i];
    qsort(o->by_name, o->n_inits, sizeof *o->by_name, cmp_tproto);
    qsort(o->by_out, o->n_nodes, sizeof *o->by_out, cmp_node);
    return STRIX_OK;
}

/* The TensorProto behind a value name: an initializer, a Constant's value,
 * or either behind Identity nodes.  *found 0 when there is none. */
static strix_status resolve(ox *o, span name, tproto *t, int *found, int depth)
{
    *found = 0;
    size_t lo = 0, hi = o->n_inits;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = span_cmp(o->by_name[mid].name, name);
        if (!c) {
            *t = o->by_name[mid];
            *found = 1;
            return STRIX_OK;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (depth >= ONNX_MAX_DEPTH) return STRIX_OK;
    lo = 0, hi = o->n_nodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = span_cmp(o->by_out[mid]->out0, name);
        if (c < 0) {
            lo = mid + 1;
            continue;
        }
        if (c > 0) {
            hi = mid;
            continue;
        }
        const node *n = o->by_out[mid];
        if (span_eq(n->op, "Constant") && n->value.p) {
            strix_status st = parse_tensor(o, n->value, t);
            *found = !st;
            return st;
        }
        if (span_eq(n->op, "Identity") && n->n_in == 1) return resolve(o, n->in[0], t, found, depth + 1);
        return STRIX_OK;
    }
    return STRIX_OK;
}

/* The first message field num of m; a NULL span when there is none (or m
 * is malformed: the caller then finds no shape, as for a dynamic one). */
static span sub_msg(span m, uint32_t num)
{
    span s, none = {0};
    if (!m.p) return none; /* an absent message: no pointer arithmetic on NULL */
    const uint8_t *p = m.p, *e = m.p + m.n;
    uint32_t f;
    int wt;
    uint64_t v;
    while (field(&p, e, &f, &wt, &v, &s) > 0)
        if (f == num && wt == 2) return s;
    return none;
}

/* c->input_h, input_w: the fixed height and width of the image input (the
 * graph input that is no initializer, [N, 3, H, W]); both 0 when either is
 * a named (dynamic) dimension or the input has no shape.  8192: the largest
 * imgsz detect takes. */
static strix_status input_shape(ox *o, strix_checkpoint *c)
{
    for (size_t i = 0; i < o->n_inputs; i++) {
        span name = sub_msg(o->inputs[i], 1);
        size_t lo = 0, hi = o->n_inits;
        int is_init = 0;
        while (lo < hi && !is_init) {
            size_t mid = lo + (hi - lo) / 2;
            int cmp = span_cmp(o->by_name[mid].name, name);
            if (!cmp) is_init = 1;
            else if (cmp < 0) lo = mid + 1;
            else hi = mid;
        }
        if (is_init) continue;
        span shape = sub_msg(sub_msg(sub_msg(o->inputs[i], 2), 1), 2);
        if (!shape.p) return STRIX_OK; /* no type or shape: as a dynamic input */
        const uint8_t *p = shape.p, *e = shape.p + shape.n;
        uint32_t f;
        int wt, r, nd = 0;
        uint64_t v;
        int64_t dims[4] = {0};
        span d;
        while ((r = field(&p, e, &f, &wt, &v, &d)) > 0) {
            if (f != 1 || wt != 2) continue;
            span dv;
            const uint8_t *q = d.p, *qe = d.p + d.n;
            uint32_t k;
            int w;
            uint64_t x;
            int64_t val = 0; /* 0: a dim_param, or no value */
            while (field(&q, qe, &k, &w, &x, &dv) > 0)
                if (k == 1 && w == 0) val = (int64_t)x;
            if (nd < 4) dims[nd] = val;
            nd++;
        }
        if (r < 0) return ox_bad(o, "the image input's shape is malformed protobuf");
        if (nd != 4 || !dims[2] || !dims[3]) return STRIX_OK; /* dynamic, or no shape given */
        if (dims[2] < 0 || dims[3] < 0 || dims[2] > 8192 || dims[3] > 8192) {
            char msg[200];
            snprintf(msg, sizeof msg, "the image input has shape [%lld, %lld, %lld, %lld]: its height and width "
                     "must lie in 1..8192", (long long)dims[0], (long long)dims[1], (long long)dims[2],
                     (long long)dims[3]);
            return ox_bad(o, msg);
        }
        c->input_h = (int)dims[2];
        c->input_w = (int)dims[3];
        return STRIX_OK;
    }
    return STRIX_OK;
}

/* "/model.22/cv2.0/cv2.0.2/Conv" -> "model.22.cv2.0.2"; 0 when the name is
 * not a torch.onnx scope. */
static int module_path(span name, char *out, size_t cap)
{
    if (name.n < 2 || name.p[0] != '/' || name.n >= cap) return 0;
    char buf[512];
    if (name.n >= sizeof buf) return 0;
    memcpy(buf, name.p, name.n);
    buf[name.n] = 0;
    char *last_op = strrchr(buf, '/');
    *last_op = 0; /* drop the op's own name */
    out[0] = 0;
    size_t last_len = 0; /* length of the last segment within out */
    for (char *seg = buf + 1; seg && *seg;) {
        char *next = strchr(seg, '/');
        if (next) *next++ = 0;
        if (!*seg) return 0;
        size_t ol = strlen(out), sl = strlen(seg);
        const char *prev = out + ol - last_len;
        if (last_len && sl > last_len && !strncmp(seg, prev, last_len) && seg[last_len] == '.') {
            out[ol - last_len] = 0; /* the segment extends the previous one: replace it */
            ol -= last_len;
        } else if (ol) {
            if (ol + 1 >= cap) return 0;
            out[ol++] = '.';
            out[ol] = 0;
        }
        if (ol + sl >= cap) return 0;
        memcpy(out + ol, seg, sl + 1);
        last_len = sl;
        seg = next;
    }
    return out[0] != 0;
}

static int elem_size(int onnx_type, strix_st_dtype *d)
{
    switch (onnx_type) {
    case 1: *d = STRIX_ST_F32; return 4;
    case 10: *d = STRIX_ST_F16; return 2;
    case 16: *d = STRIX_ST_BF16; return 2;
    case 11: *d = STRIX_ST_F64; return 8;
    default: return 0;
    }
}

/* One Conv input as tensor `name`. */
static strix_status add_tensor(ox *o, const char *name, span value, const char *node_name)
{
    tproto t;
    int found;
    strix_status st = resolve(o, value, &t, &found, 0);
    if (st) return st;
    char msg[700], vn[256];
    span_str(vn, sizeof vn, value);
    if (!found) {
        snprintf(msg, sizeof msg, "Conv node '%s' takes '%s', which is no initializer or constant (weights computed "
                 "in the graph)", node_name, vn);
        return ox_bad(o, msg);
    }
    strix_st_dtype dt;
    int es = elem_size(t.data_type, &dt);
    if (t.external) {
        snprintf(msg, sizeof msg, "initializer '%s' is stored outside the file (external data); re-export the model "
                 "under 2 GB, or without external data", vn);
        return ox_bad(o, msg);
    }
    if (!es || t.too_many_dims) {
        snprintf(msg, sizeof msg, "initializer '%s' has data type %d or more than 8 dimensions; strix reads float, "
                 "float16, bfloat16 and double weights", vn, t.data_type);
        return ox_bad(o, msg);
    }
    uint64_t numel = 1;
    for (int d = 0; d < t.ndim; d++) {
        if (t.dims[d] < 0 || t.dims[d] > (1 << 30)) return ox_bad(o, "an initializer has a bad dimension");
        numel *= (uint64_t)t.dims[d];
        if (numel > ((uint64_t)1 << 34)) return ox_bad(o, "an initializer is too large");
    }
    size_t bytes = (size_t)numel * (size_t)es;
    const void *data = NULL;
    if (t.raw.p) {
        if (t.raw.n != bytes) {
            snprintf(msg, sizeof msg, "initializer '%s' holds %zu bytes for %llu elements", vn, t.raw.n,
                     (unsigned long long)numel);
            return ox_bad(o, msg);
        }
        data = t.raw.p;
    } else if (dt == STRIX_ST_F32 && t.floats_packed && t.floats.n == bytes) {
        data = t.floats.p; /* packed fixed32: little-endian floats */
    } else if (dt == STRIX_ST_F64 && t.doubles_packed && t.doubles.n == bytes) {
        data = t.doubles.p;
    } else if (dt == STRIX_ST_F32 && t.n_floats == numel && numel) { /* unpacked float_data: gather */
        uint8_t *b = strix_ckpt_owner_alloc(o->own, bytes);
        if (!b) return ox_oom(o);
        const uint8_t *p = t.msg.p, *e = t.msg.p + t.msg.n;
        uint32_t num;
        int wt;
        uint64_t v;
        span x;
        size_t k = 0;
        while (field(&p, e, &num, &wt, &v, &x) > 0)
            if (num == 4 && wt == 5 && k < numel) memcpy(b + 4 * k++, x.p, 4);
        data = b;
    } else if ((dt == STRIX_ST_F16 || dt == STRIX_ST_BF16) && t.has_int32) {
        /* int32_data holds each 16-bit pattern as a varint (field 5, packed or not) */
        uint8_t *b = strix_ckpt_owner_alloc(o->own, bytes);
        if (!b) return ox_oom(o);
        size_t k = 0;
        const uint8_t *p = t.msg.p, *e = t.msg.p + t.msg.n;
        uint32_t num;
        int wt, r;
        uint64_t v;
        span s;
        while ((r = field(&p, e, &num, &wt, &v, &s)) > 0) {
            if (num != 5) continue;
            if (wt == 0) {
                if (k == numel) break;
                b[2 * k] = (uint8_t)v, b[2 * k + 1] = (uint8_t)(v >> 8), k++;
            } else if (wt == 2) {
                for (const uint8_t *q = s.p, *qe = s.p + s.n; q < qe && k < numel; k++) {
                    if (!varint(&q, qe, &v)) return ox_bad(o, "an initializer's int32_data is malformed");
                    b[2 * k] = (uint8_t)v, b[2 * k + 1] = (uint8_t)(v >> 8);
                }
            }
        }
        if (k != numel) return ox_bad(o, "an initializer's int32_data has the wrong element count");
        data = b;
    } else {
        snprintf(msg, sizeof msg, "initializer '%s' has no data of the size its dims need", vn);
        return ox_bad(o, msg);
    }
    if (o->n == o->cap) {
        size_t c = o->cap ? 2 * o->cap : 128;
        strix_st_source *a = realloc(o->t, c * sizeof *a);
        if (!a) return ox_oom(o);
        o->t = a;
        o->cap = c;
    }
    strix_st_source *s = &o->t[o->n];
    memset(s, 0, sizeof *s);
    char *nm = strix_ckpt_owner_alloc(o->own, strlen(name) + 1);
    char *origin = strix_ckpt_owner_alloc(o->own, strlen(node_name) + strlen(vn) + 48);
    if (!nm || !origin) return ox_oom(o);
    s->name = strcpy(nm, name);
    snprintf(origin, strlen(node_name) + strlen(vn) + 48, "initializer '%s' of node %s", vn, node_name);
    s->origin = origin;
    s->dtype = dt;
    s->ndim = t.ndim;
    for (int d = 0; d < t.ndim; d++) s->shape[d] = t.dims[d];
    s->data = data;
    o->n++;
    return STRIX_OK;
}

/* Python's repr of a dict {0: 'person', 1: "it's"} (the `names` metadata);
 * 0 when it is anything else. */
static int parse_names(const char *s, char ***out, int *n_out)
{
    char **names = NULL;
    int n = 0, ok = 0;
    const char *p = s;
    while (*p == ' ') p++;
    if (*p++ != '{') return 0;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == '}') {
            ok = 1;
            break;
        }
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p || id != n || n >= STRIX_MAX_CLASSES) break;
        p = end;
        while (*p == ' ') p++;
        if (*p++ != ':') break;
        while (*p == ' ') p++;
        char q = *p++;
        if (q != '\'' && q != '"') break;
        size_t cap = strlen(p) + 1, k = 0;
        char *name = malloc(cap);
        if (!name) break;
        while (*p && *p != q) {
            if (*p == '\\') {
                p++;
                if (*p == '\\' || *p == '\'' || *p == '"') name[k++] = *p++;
                else if (*p == 'n') name[k++] = '\n', p++;
                else if (*p == 't') name[k++] = '\t', p++;
                else break;
            } else {
                name[k++] = *p++;
            }
        }
        name[k] = 0;
        char **nn = *p == q ? realloc(names, (size_t)(n + 1) * sizeof *nn) : NULL;
        if (!nn) {
            free(name);
            break;
        }
        names = nn;
        names[n++] = name;
        p++;
        while (*p == ' ') p++;
        if (*p == ',') p++;
    }
    if (!ok || !n) {
        for (int i = 0; i < n; i++) free(names[i]);
        free(names);
        return 0;
    }
    *out = names;
    *n_out = n;
    return 1;
}

int strix_onnx_family(const char *description, char *family, size_t cap, char *scale)
{
    static const char pre[] = "Ultralytics YOLO";
    if (!description || strncmp(description, pre, sizeof pre - 1)) return 0;
    const char *p = description + sizeof pre - 1, *end = p + strcspn(p, " ");
    const char *ver = p;
    if (*p == 'v') p++;
    const char *digits = p;
    while (p < end && isdigit((unsigned char)*p)) p++;
    if (p == digits) return 0;
    size_t ver_len = (size_t)(p - ver);
    char s = p < end && islower((unsigned char)*p) && *p != 'u' ? *p++ : 0; /* n s m l x; YOLOv9's t c e */
    int p6 = s && p < end && *p == '6'; /* yolov5n6u: the P6 model of scale n */
    p += p6;
    p += p < end && *p == 'u'; /* the anchor-free v3/v5 (yolov5nu) use the same YAML */
    if (p < end && *p != '-') return 0;
    for (const char *q = p; q < end; q++)
        if (!isalnum((unsigned char)*q) && *q != '-' && *q != '_') return 0; /* it becomes a file name */
    int n = snprintf(family, cap, "yolo%.*s%s%.*s", (int)ver_len, ver, p6 ? "-p6" : "", (int)(end - p), p);
    if (n < 0 || (size_t)n >= cap) return 0;
    *scale = s;
    return 1;
}

strix_status strix_onnx_read(strix_checkpoint *c, const char *path, const uint8_t *buf, size_t len, int owns_map,
                             strix_error *err)
{
    memset(c, 0, sizeof *c);
    c->format = "onnx";
    ox o = {0};
    o.path = path;
    o.err = err;
    if (!(o.own = strix_ckpt_owner_new(buf, len, owns_map))) {
        if (owns_map) strix_file_unmap(buf, len);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    }
    strix_status st = STRIX_OK;
    const uint8_t *p = buf, *e = buf + len;
    uint32_t num;
    int wt, r, graphs = 0;
    uint64_t v;
    span s, graph = {0};
    char task[64] = "";
    while ((r = field(&p, e, &num, &wt, &v, &s)) > 0) {
        if (num == 7 && wt == 2) graph = s, graphs++;
        if ((num == 2 || num == 3) && wt == 2) { /* producer_name, producer_version */
            size_t l = strlen(c->producer);
            snprintf(c->producer + l, sizeof c->producer - l, "%s%.*s", l ? " " : "", (int)s.n, (const char *)s.p);
            for (char *d = c->producer; *d; d++)
                if ((unsigned char)*d < 32) *d = '?'; /* it goes into one-line messages */
        }
        if (num == 14 && wt == 2) { /* metadata_props */
            const uint8_t *q = s.p, *qe = s.p + s.n;
            span k = {0}, val = {0}, x;
            uint32_t f;
            int w, rr;
            while ((rr = field(&q, qe, &f, &w, &v, &x)) > 0) {
                if (f == 1 && w == 2) k = x;
                else if (f == 2 && w == 2) val = x;
            }
            if (rr < 0) {
                st = ox_bad(&o, "malformed metadata");
                goto done;
            }
            char *text = span_dup(&o, val);
            if (!text) {
                st = ox_oom(&o);
                goto done;
            }
            if (span_eq(k, "names") && !c->names) parse_names(text, &c->names, &c->n_names);
            else if (span_eq(k, "description") && !c->description && (c->description = strdup(text))) {
                for (char *d = c->description; *d; d++)
                    if ((unsigned char)*d < 32) *d = '?'; /* it goes into one-line messages */
            } else if (span_eq(k, "task")) {
                snprintf(task, sizeof task, "%s", text);
            } else if (span_eq(k, "stride")) {
                char *end;
                long sv = strtol(text, &end, 10);
                if (end != text && !*end && sv >= 1 && sv <= 1024) c->stride = (int)sv;
            }
        }
    }
    if (r < 0 || graphs != 1) {
        st = ox_bad(&o, r < 0 ? "malformed protobuf" : "no graph, or more than one");
        goto done;
    }
    if (task[0] && strcmp(task, "detect") && strcmp(task, "segment") && strcmp(task, "pose") && strcmp(task, "obb") &&
        strcmp(task, "classify")) {
        st = strix_fail(err, STRIX_E_WEIGHTS, "%s: an Ultralytics '%s' model; strix runs detect, segment, pose, obb "
                        "and classify models only", path, task);
        goto done;
    }
    if ((st = parse_graph(&o, graph)) || (st = index_graph(&o)) || (st = input_shape(&o, c))) goto done;
    char mod[512], nm[600], node_name[512];
    for (size_t i = 0; i < o.n_nodes && !st; i++) {
        const node *n = &o.nodes[i];
        /* Conv; Proto's ConvTranspose; Classify's Linear, exported as Gemm (weight [out, in], transB=1) */
        if (!span_eq(n->op, "Conv") && !span_eq(n->op, "ConvTranspose") && !span_eq(n->op, "Gemm")) continue;
        span_str(node_name, sizeof node_name, n->name);
        if (!module_path(n->name, mod, sizeof mod) || n->n_in < 2 || n->n_in > 3) {
            char msg[600];
            snprintf(msg, sizeof msg, "%.*s node '%s' names no module (torch.onnx names them /model.N/.../Conv) or "
                     "has %d inputs", (int)n->op.n, (const char *)n->op.p, node_name, n->n_in);
            st = ox_bad(&o, msg);
            break;
        }
        snprintf(nm, sizeof nm, "%s.weight", mod);
        st = add_tensor(&o, nm, n->in[1], node_name);
        if (!st && n->n_in == 3 && n->in[2].n) {
            snprintf(nm, sizeof nm, "%s.bias", mod);
            st = add_tensor(&o, nm, n->in[2], node_name);
        }
    }
    if (!st && !o.n) st = ox_bad(&o, "the graph has no Conv node");
    if (!st) {
        st = strix_st_from_memory(&c->tensors, path, o.t, o.n, strix_ckpt_owner_release, o.own, err);
        o.own = NULL;
    }
done:
    strix_ckpt_owner_release(o.own);
    free(o.nodes);
    free(o.inits);
    free(o.inputs);
    free(o.by_name);
    free(o.by_out);
    free(o.t);
    if (st) strix_checkpoint_close(c);
    return st;
}
