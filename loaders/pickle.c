/* pickle.c — the restricted unpickler of pickle.h: a stack machine over the
 * opcodes of pickle protocols 2-5 that torch.save emits (binary forms only;
 * the text opcodes of protocol 0 are refused).  Every value is allocated in
 * one list the handle frees; memo slots and the stack hold pointers into it,
 * so shared and cyclic references cost nothing and free nothing twice.
 * Nothing is called: REDUCE/NEWOBJ/BUILD on an allowed class only record
 * the class name and state, on the tensor rebuild functions they fill a
 * TENSOR value from the arguments' plain values. */
#include "pickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct strix_pickle {
    strix_pk_value **all;   /* every value, for free */
    size_t n_all, cap_all;
} strix_pickle;

typedef struct pk {
    strix_pickle *h;
    const uint8_t *b;
    size_t len, pos;
    const char *path;
    strix_error *err;
    strix_pk_value **stack;
    size_t sp, cap;
    size_t *marks;          /* stack heights at MARK */
    size_t nm, capm;
    strix_pk_value **memo;
    size_t n_memo;          /* allocated slots */
    size_t memo_used;       /* slots set: MEMOIZE's next index */
    size_t copied;          /* items copied into sets: bounded, as one shared list could be copied endlessly */
    strix_pk_value mark;    /* sentinel never seen by the caller */
} pk;

static const struct { const char *name; strix_pk_dtype d; } storages[] = {
    {"torch.FloatStorage", STRIX_PK_F32},   {"torch.HalfStorage", STRIX_PK_F16},
    {"torch.BFloat16Storage", STRIX_PK_BF16}, {"torch.DoubleStorage", STRIX_PK_F64},
    {"torch.LongStorage", STRIX_PK_I64},    {"torch.IntStorage", STRIX_PK_I32},
    {"torch.ShortStorage", STRIX_PK_I16},   {"torch.CharStorage", STRIX_PK_I8},
    {"torch.ByteStorage", STRIX_PK_U8},     {"torch.BoolStorage", STRIX_PK_BOOLEAN},
};

size_t strix_pk_dtype_size(strix_pk_dtype d)
{
    static const size_t s[] = {4, 2, 2, 8, 8, 4, 2, 1, 1, 1};
    return (unsigned)d < sizeof s / sizeof *s ? s[d] : 0;
}

const char *strix_pk_dtype_name(strix_pk_dtype d)
{
    static const char *s[] = {"F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL"};
    return (unsigned)d < sizeof s / sizeof *s ? s[d] : "?";
}

/* Classes whose instances are kept as inert records. */
static int record_class(const char *g)
{
    return !strncmp(g, "torch.nn.modules.", 17) || !strncmp(g, "ultralytics.nn.", 15) ||
           !strcmp(g, "ultralytics.utils.IterableSimpleNamespace") || !strcmp(g, "types.SimpleNamespace");
}

static int allowed_global(const char *g)
{
    static const char *fn[] = {"collections.OrderedDict", "builtins.set", "builtins.frozenset", "builtins.getattr",
                               "torch.Size",
                               "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
                               "torch._utils._rebuild_parameter_with_state"};
    for (size_t i = 0; i < sizeof fn / sizeof *fn; i++)
        if (!strcmp(g, fn[i])) return 1;
    for (size_t i = 0; i < sizeof storages / sizeof *storages; i++)
        if (!strcmp(g, storages[i].name)) return 1;
    return record_class(g);
}

static strix_status bad(pk *p, const char *what)
{
    return strix_fail(p->err, STRIX_E_WEIGHTS, "%s: pickle (data.pkl) byte %zu: %s; the file is not an Ultralytics "
                      "checkpoint strix can read", p->path, p->pos, what);
}

static strix_status oom(pk *p) { return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory unpickling", p->path); }

static strix_pk_value *newv(pk *p, strix_pk_type t)
{
    strix_pickle *h = p->h;
    if (h->n_all == h->cap_all) {
        size_t c = h->cap_all ? 2 * h->cap_all : 256;
        strix_pk_value **a = realloc(h->all, c * sizeof *a);
        if (!a) return NULL;
        h->all = a;
        h->cap_all = c;
    }
    strix_pk_value *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->type = t;
    h->all[h->n_all++] = v;
    return v;
}

static int add_item(strix_pk_value *c, strix_pk_value *v)
{
    if (c->n == c->cap) {
        size_t n = c->cap ? 2 * c->cap : 4;
        strix_pk_value **a = realloc(c->items, n * sizeof *a);
        if (!a) return 0;
        c->items = a;
        c->cap = n;
    }
    c->items[c->n++] = v;
    return 1;
}

static strix_status push(pk *p, strix_pk_value *v)
{
    if (!v) return oom(p);
    if (p->sp == p->cap) {
        size_t c = p->cap ? 2 * p->cap : 64;
        strix_pk_value **s = realloc(p->stack, c * sizeof *s);
        if (!s) return oom(p);
        p->stack = s;
        p->cap = c;
    }
    p->stack[p->sp++] = v;
    return STRIX_OK;
}

static strix_pk_value *pop(pk *p)
{
    size_t floor = p->nm ? p->marks[p->nm - 1] : 0;
    return p->sp > floor ? p->stack[--p->sp] : NULL;
}

static strix_pk_value *top(pk *p)
{
    size_t floor = p->nm ? p->marks[p->nm - 1] : 0;
    return p->sp > floor ? p->stack[p->sp - 1] : NULL;
}

static int need(pk *p, size_t n) { return p->len - p->pos >= n; }

static uint64_t le(const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static strix_status memo_put(pk *p, uint64_t idx)
{
    strix_pk_value *v = top(p);
    if (!v) return bad(p, "memo store with an empty stack");
    if (idx > p->len) return bad(p, "memo index out of range"); /* each entry costs at least one opcode */
    if (idx >= p->n_memo) {
        size_t n = (size_t)idx + 64;
        strix_pk_value **m = realloc(p->memo, n * sizeof *m);
        if (!m) return oom(p);
        memset(m + p->n_memo, 0, (n - p->n_memo) * sizeof *m);
        p->memo = m;
        p->n_memo = n;
    }
    if (!p->memo[idx]) p->memo_used++;
    p->memo[idx] = v;
    return STRIX_OK;
}

static strix_status memo_get(pk *p, uint64_t idx)
{
    if (idx >= p->n_memo || !p->memo[idx]) return bad(p, "memo fetch of an unset slot");
    return push(p, p->memo[idx]);
}

static strix_status str_value(pk *p, strix_pk_type t, uint64_t n)
{
    if (!need(p, n)) return bad(p, "string runs past the end of the stream");
    strix_pk_value *v = newv(p, t);
    if (!v || !(v->s = malloc((size_t)n + 1))) return oom(p);
    memcpy(v->s, p->b + p->pos, (size_t)n);
    v->s[n] = 0;
    v->len = (size_t)n;
    p->pos += (size_t)n;
    return push(p, v);
}

/* Pop everything down to the last MARK into a new container of type t. */
static strix_status collect(pk *p, strix_pk_type t, strix_pk_value **out)
{
    if (!p->nm) return bad(p, "opcode needs a MARK that is not there");
    size_t m = p->marks[--p->nm];
    strix_pk_value *c = newv(p, t);
    if (!c) return oom(p);
    for (size_t i = m; i < p->sp; i++)
        if (!add_item(c, p->stack[i])) return oom(p);
    p->sp = m;
    *out = c;
    return STRIX_OK;
}

static int hashable(const strix_pk_value *k)
{
    return k->type == STRIX_PK_STR || k->type == STRIX_PK_INT || k->type == STRIX_PK_BOOL ||
           k->type == STRIX_PK_NONE || k->type == STRIX_PK_FLOAT || k->type == STRIX_PK_TUPLE ||
           k->type == STRIX_PK_BYTES;
}

/* Keys are appended without a duplicate check (a dict of n keys would cost
 * n^2 compares); strix_pk_get searches from the end, so the last value set
 * wins, as in Python. */
static strix_status dict_set(pk *p, strix_pk_value *d, strix_pk_value *k, strix_pk_value *v)
{
    if (d->type != STRIX_PK_DICT) return bad(p, "SETITEM on something that is not a dict");
    if (!hashable(k)) return bad(p, "unhashable dict key");
    if (!add_item(d, k) || !add_item(d, v)) return oom(p);
    return STRIX_OK;
}

static int as_int(const strix_pk_value *v, int64_t *out)
{
    if (!v || (v->type != STRIX_PK_INT && v->type != STRIX_PK_BOOL)) return 0;
    *out = v->i;
    return 1;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) */
static strix_status rebuild_tensor(pk *p, const strix_pk_value *a, strix_pk_value **out)
{
    if (a->n < 4 || a->items[0]->type != STRIX_PK_STORAGE || a->items[2]->type != STRIX_PK_TUPLE ||
        a->items[3]->type != STRIX_PK_TUPLE || a->items[2]->n != a->items[3]->n)
        return bad(p, "_rebuild_tensor_v2 with arguments that are not (storage, offset, size, stride, ...)");
    const strix_pk_value *size = a->items[2], *stride = a->items[3];
    if (size->n > STRIX_PK_MAX_DIMS) return bad(p, "tensor with more than 8 dimensions");
    strix_pk_value *t = newv(p, STRIX_PK_TENSOR);
    if (!t) return oom(p);
    t->storage = a->items[0];
    t->ndim = (int)size->n;
    if (!as_int(a->items[1], &t->i) || t->i < 0) return bad(p, "tensor with a bad storage offset");
    for (int d = 0; d < t->ndim; d++)
        if (!as_int(size->items[d], &t->shape[d]) || !as_int(stride->items[d], &t->stride[d]) || t->shape[d] < 0 ||
            t->stride[d] < 0)
            return bad(p, "tensor with a bad size or stride");
    *out = t;
    return STRIX_OK;
}

/* REDUCE: callable(*args), for the callables allowed_global accepted. */
static strix_status reduce(pk *p)
{
    strix_pk_value *args = pop(p), *fn = pop(p), *r = NULL;
    if (!args || !fn) return bad(p, "REDUCE with too few values on the stack");
    if (fn->type != STRIX_PK_GLOBAL || args->type != STRIX_PK_TUPLE) return bad(p, "REDUCE of something not callable");
    strix_status st = STRIX_OK;
    const char *g = fn->s;
    if (!strcmp(g, "torch._utils._rebuild_tensor_v2")) {
        st = rebuild_tensor(p, args, &r);
    } else if (!strncmp(g, "torch._utils._rebuild_parameter", 31)) {
        if (args->n < 1 || args->items[0]->type != STRIX_PK_TENSOR)
            return bad(p, "_rebuild_parameter of something that is not a tensor");
        r = args->items[0];
    } else if (!strcmp(g, "collections.OrderedDict")) {
        if (args->n) return bad(p, "OrderedDict built from arguments (torch never writes one so)");
        r = newv(p, STRIX_PK_DICT);
    } else if (!strcmp(g, "builtins.set") || !strcmp(g, "builtins.frozenset")) {
        r = newv(p, STRIX_PK_SET);
        if (r && args->n == 1 && (args->items[0]->type == STRIX_PK_LIST || args->items[0]->type == STRIX_PK_TUPLE)) {
            if ((p->copied += args->items[0]->n) > 4 * p->len + 1024)
                return bad(p, "sets built from far more items than the stream holds");
            for (size_t i = 0; i < args->items[0]->n; i++)
                if (!add_item(r, args->items[0]->items[i])) return oom(p);
        } else if (r && args->n) {
            return bad(p, "set built from something that is not a list");
        }
    } else if (!strcmp(g, "torch.Size")) {
        if (args->n != 1 || args->items[0]->type != STRIX_PK_TUPLE) return bad(p, "torch.Size of something not a tuple");
        r = args->items[0];
    } else if (!strcmp(g, "builtins.getattr")) {
        /* a bound method (fuse() sets forward = forward_fuse): recorded, never looked up */
        if ((r = newv(p, STRIX_PK_OBJECT))) r->s = fn->s;
    } else if (record_class(g)) {
        if ((r = newv(p, STRIX_PK_OBJECT))) r->s = fn->s;
    } else {
        return bad(p, "REDUCE of a global that is not a function or class"); /* storage types */
    }
    if (st) return st;
    return push(p, r);
}

static strix_status global(pk *p, const char *mod, size_t ml, const char *name, size_t nl)
{
    if (ml == 11 && !memcmp(mod, "__builtin__", 11)) { /* protocol 2 spells Python 3's builtins so */
        mod = "builtins";
        ml = 8;
    }
    strix_pk_value *v = newv(p, STRIX_PK_GLOBAL);
    if (!v || !(v->s = malloc(ml + nl + 2))) return oom(p);
    memcpy(v->s, mod, ml);
    v->s[ml] = '.';
    memcpy(v->s + ml + 1, name, nl);
    v->s[ml + nl + 1] = 0;
    v->len = ml + nl + 1;
    if (strlen(v->s) != v->len || !allowed_global(v->s)) {
        char shown[120];
        size_t k = 0;
        for (size_t i = 0; i < v->len && k + 1 < sizeof shown; i++)
            shown[k++] = v->s[i] >= 0x20 && v->s[i] < 0x7f ? v->s[i] : '?';
        shown[k] = 0;
        return strix_fail(p->err, STRIX_E_WEIGHTS,
                          "%s: the checkpoint's pickle names '%s', which an Ultralytics detection checkpoint never "
                          "holds; strix refuses it (it never runs code from a .pt file): convert a checkpoint you "
                          "trust with tools/reference/convert_checkpoint.py", p->path, shown);
    }
    return push(p, v);
}

/* BINPERSID: ('storage', storage_type, key, location, numel) */
static strix_status persistent(pk *p)
{
    strix_pk_value *t = pop(p);
    if (!t || t->type != STRIX_PK_TUPLE || t->n != 5 || t->items[0]->type != STRIX_PK_STR ||
        strcmp(t->items[0]->s, "storage") || t->items[1]->type != STRIX_PK_GLOBAL || t->items[2]->type != STRIX_PK_STR)
        return bad(p, "persistent id that is not a torch storage");
    strix_pk_value *s = newv(p, STRIX_PK_STORAGE);
    if (!s) return oom(p);
    size_t i = 0;
    while (i < sizeof storages / sizeof *storages && strcmp(storages[i].name, t->items[1]->s)) i++;
    if (i == sizeof storages / sizeof *storages) return bad(p, "storage of an unknown type");
    s->dtype = storages[i].d;
    s->s = t->items[2]->s;
    s->len = t->items[2]->len;
    if (!as_int(t->items[4], &s->i) || s->i < 0) return bad(p, "storage with a bad element count");
    return push(p, s);
}

static strix_status step(pk *p, int *done)
{
    uint8_t op = p->b[p->pos++];
    strix_pk_value *v, *k, *c;
    strix_status st;
    switch (op) {
    case 0x80: /* PROTO */
        if (!need(p, 1)) return bad(p, "truncated PROTO");
        if (p->b[p->pos++] > 5) return bad(p, "pickle protocol newer than 5");
        return STRIX_OK;
    case 0x95: /* FRAME: a size hint */
        if (!need(p, 8)) return bad(p, "truncated FRAME");
        p->pos += 8;
        return STRIX_OK;
    case '}': return push(p, newv(p, STRIX_PK_DICT));
    case ']': return push(p, newv(p, STRIX_PK_LIST));
    case ')': return push(p, newv(p, STRIX_PK_TUPLE));
    case 0x8f: return push(p, newv(p, STRIX_PK_SET));
    case 'N': return push(p, newv(p, STRIX_PK_NONE));
    case 0x88: case 0x89:
        if (!(v = newv(p, STRIX_PK_BOOL))) return oom(p);
        v->i = op == 0x88;
        return push(p, v);
    case '(':
        if (p->nm == p->capm) {
            size_t n = p->capm ? 2 * p->capm : 16;
            size_t *m = realloc(p->marks, n * sizeof *m);
            if (!m) return oom(p);
            p->marks = m;
            p->capm = n;
        }
        p->marks[p->nm++] = p->sp;
        return STRIX_OK;
    case 'q': if (!need(p, 1)) return bad(p, "truncated BINPUT"); p->pos += 1; return memo_put(p, p->b[p->pos - 1]);
    case 'r': if (!need(p, 4)) return bad(p, "truncated LONG_BINPUT"); p->pos += 4; return memo_put(p, le(p->b + p->pos - 4, 4));
    case 0x94: return memo_put(p, p->memo_used); /* MEMOIZE: the next index */
    case 'h': if (!need(p, 1)) return bad(p, "truncated BINGET"); p->pos += 1; return memo_get(p, p->b[p->pos - 1]);
    case 'j': if (!need(p, 4)) return bad(p, "truncated LONG_BINGET"); p->pos += 4; return memo_get(p, le(p->b + p->pos - 4, 4));
    case 'J': case 'K': case 'M': {
        int n = op == 'J' ? 4 : op == 'K' ? 1 : 2;
        if (!need(p, (size_t)n)) return bad(p, "truncated integer");
        if (!(v = newv(p, STRIX_PK_INT))) return oom(p);
        uint64_t u = le(p->b + p->pos, n);
        v->i = op == 'J' ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
        p->pos += (size_t)n;
        return push(p, v);
    }
    case 0x8a: case 0x8b: { /* LONG1 / LONG4: little-endian two's complement */
        size_t hl = op == 0x8a ? 1 : 4;
        if (!need(p, hl)) return bad(p, "truncated LONG");
        uint64_t n = le(p->b + p->pos, (int)hl);
        p->pos += hl;
        if (n > 8) return bad(p, "integer wider than 64 bits");
        if (!need(p, (size_t)n)) return bad(p, "truncated LONG");
        if (!(v = newv(p, STRIX_PK_INT))) return oom(p);
        uint64_t u = n ? le(p->b + p->pos, (int)n) : 0;
        if (n && n < 8 && (p->b[p->pos + n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n);
        v->i = (int64_t)u;
        p->pos += (size_t)n;
        return push(p, v);
    }
    case 'G': {
        if (!need(p, 8)) return bad(p, "truncated BINFLOAT");
        uint64_t u = 0;
        for (int i = 0; i < 8; i++) u = u << 8 | p->b[p->pos + i]; /* big-endian */
        p->pos += 8;
        if (!(v = newv(p, STRIX_PK_FLOAT))) return oom(p);
        memcpy(&v->f, &u, sizeof u);
        return push(p, v);
    }
    case 'X': case 0x8c: case 0x8d: case 'U': case 'T': case 'C': case 'B': case 0x8e: {
        int hl = op == 0x8c || op == 'U' || op == 'C' ? 1 : op == 0x8d || op == 0x8e ? 8 : 4;
        if (!need(p, (size_t)hl)) return bad(p, "truncated string length");
        uint64_t n = le(p->b + p->pos, hl);
        p->pos += (size_t)hl;
        int text = op == 'X' || op == 0x8c || op == 0x8d || op == 'U' || op == 'T';
        return str_value(p, text ? STRIX_PK_STR : STRIX_PK_BYTES, n);
    }
    case 't':
        if ((st = collect(p, STRIX_PK_TUPLE, &c))) return st;
        return push(p, c);
    case 0x85: case 0x86: case 0x87: {
        int n = op - 0x84;
        if (!(c = newv(p, STRIX_PK_TUPLE))) return oom(p);
        strix_pk_value *it[3];
        for (int i = n - 1; i >= 0; i--)
            if (!(it[i] = pop(p))) return bad(p, "TUPLE with too few values on the stack");
        for (int i = 0; i < n; i++)
            if (!add_item(c, it[i])) return oom(p);
        return push(p, c);
    }
    case 's':
        v = pop(p);
        k = pop(p);
        if (!v || !k || !(c = top(p))) return bad(p, "SETITEM with too few values on the stack");
        return dict_set(p, c, k, v);
    case 'u':
        if ((st = collect(p, STRIX_PK_TUPLE, &v))) return st;
        if (!(c = top(p)) || v->n % 2) return bad(p, "SETITEMS without a dict or with an odd count");
        for (size_t i = 0; i < v->n; i += 2)
            if ((st = dict_set(p, c, v->items[i], v->items[i + 1]))) return st;
        return STRIX_OK;
    case 'a':
        v = pop(p);
        if (!v || !(c = top(p)) || c->type != STRIX_PK_LIST) return bad(p, "APPEND without a list");
        return add_item(c, v) ? STRIX_OK : oom(p);
    case 'e': case 0x90:
        if ((st = collect(p, STRIX_PK_TUPLE, &v))) return st;
        if (!(c = top(p)) || c->type != (op == 'e' ? STRIX_PK_LIST : STRIX_PK_SET))
            return bad(p, op == 'e' ? "APPENDS without a list" : "ADDITEMS without a set");
        for (size_t i = 0; i < v->n; i++)
            if (!add_item(c, v->items[i])) return oom(p);
        return STRIX_OK;
    case 0x91:
        if ((st = collect(p, STRIX_PK_SET, &c))) return st;
        return push(p, c);
    case 'c': { /* GLOBAL "module\nname\n" */
        const char *a = (const char *)p->b + p->pos;
        const char *n1 = memchr(a, '\n', p->len - p->pos);
        if (!n1) return bad(p, "truncated GLOBAL");
        const char *bn = n1 + 1;
        const char *n2 = memchr(bn, '\n', (size_t)((const char *)p->b + p->len - bn));
        if (!n2) return bad(p, "truncated GLOBAL");
        p->pos = (size_t)(n2 + 1 - (const char *)p->b);
        return global(p, a, (size_t)(n1 - a), bn, (size_t)(n2 - bn));
    }
    case 0x93: /* STACK_GLOBAL */
        v = pop(p);
        k = pop(p);
        if (!v || !k || v->type != STRIX_PK_STR || k->type != STRIX_PK_STR) return bad(p, "STACK_GLOBAL without two strings");
        return global(p, k->s, k->len, v->s, v->len);
    case 'R': return reduce(p);
    case 0x81: /* NEWOBJ cls args */
        v = pop(p);
        k = pop(p);
        if (!v || !k || k->type != STRIX_PK_GLOBAL || v->type != STRIX_PK_TUPLE) return bad(p, "NEWOBJ without a class");
        if (!record_class(k->s)) return bad(p, "NEWOBJ of a global that is not a class");
        if (!(c = newv(p, STRIX_PK_OBJECT))) return oom(p);
        c->s = k->s;
        return push(p, c);
    case 'b': /* BUILD: obj.__setstate__(state) or obj.__dict__.update(state) */
        v = pop(p);
        if (!v || !(c = top(p))) return bad(p, "BUILD with too few values on the stack");
        if (c->type == STRIX_PK_OBJECT) c->state = v;
        else if (c->type != STRIX_PK_TENSOR && c->type != STRIX_PK_DICT) return bad(p, "BUILD on a plain value");
        return STRIX_OK; /* a tensor's or OrderedDict's extra state: nothing strix needs */
    case 'Q': return persistent(p);
    case '0':
        if (!pop(p)) {
            if (!p->nm || p->marks[p->nm - 1] != p->sp) return bad(p, "POP of an empty stack");
            p->nm--; /* POP of a MARK */
        }
        return STRIX_OK;
    case '1':
        if (!p->nm) return bad(p, "POP_MARK without a MARK");
        p->sp = p->marks[--p->nm];
        return STRIX_OK;
    case '2':
        if (!(v = top(p))) return bad(p, "DUP of an empty stack");
        return push(p, v);
    case '.':
        *done = 1;
        return STRIX_OK;
    default: {
        char msg[80];
        snprintf(msg, sizeof msg, "opcode 0x%02x is not one torch.save writes", op);
        p->pos--;
        return bad(p, msg);
    }
    }
}

strix_status strix_pickle_load(strix_pickle **out, const strix_pk_value **root, const uint8_t *buf, size_t len,
                               const char *path, strix_error *err)
{
    *out = NULL;
    *root = NULL;
    pk p = {0};
    p.b = buf;
    p.len = len;
    p.path = path;
    p.err = err;
    if (!(p.h = calloc(1, sizeof *p.h))) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    strix_status st = STRIX_OK;
    int done = 0;
    while (!st && !done) {
        if (p.pos >= p.len) st = bad(&p, "the stream ends before its STOP opcode");
        else st = step(&p, &done);
    }
    if (!st && (p.sp != 1 || p.nm)) st = bad(&p, "STOP leaves other than one value on the stack");
    if (!st) *root = p.stack[0];
    free(p.stack);
    free(p.marks);
    free(p.memo);
    if (st) {
        strix_pickle_free(p.h);
        return st;
    }
    *out = p.h;
    return STRIX_OK;
}

void strix_pickle_free(strix_pickle *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->n_all; i++) {
        strix_pk_value *v = h->all[i];
        if (v->type != STRIX_PK_OBJECT && v->type != STRIX_PK_STORAGE) free(v->s); /* those borrow s */
        free(v->items);
        free(v);
    }
    free(h->all);
    free(h);
}

const strix_pk_value *strix_pk_get(const strix_pk_value *d, const char *key)
{
    if (!d || d->type != STRIX_PK_DICT) return NULL;
    for (size_t i = d->n / 2; i-- > 0;)
        if (d->items[2 * i]->type == STRIX_PK_STR && !strcmp(d->items[2 * i]->s, key)) return d->items[2 * i + 1];
    return NULL;
}
