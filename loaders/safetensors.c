/* safetensors.c — the safetensors reader (mmap + strict validation) and writer.
 *
 * The header is walked with strix's JSON reader (json.h, shared with the
 * detections reader) by code that knows the safetensors schema, so every
 * error names the byte offset, the tensor and the field, and duplicates,
 * non-integers and overflowing values are refused exactly (sizes and
 * offsets are read as uint64 from the number's text).  Strings decode into
 * a pool as long as the header, which the names point into.  Only the
 * subset safetensors uses is accepted: the top-level object, tensor entries
 * {dtype: string, shape: [int], data_offsets: [int, int]} and
 * "__metadata__": {string: string}; anything else is an error.
 *
 * The mapping is read-only and private; a file truncated by another process
 * while mapped would fault on access (an mmap property, as in every mmap
 * loader), which is why the data are validated against the size at open.
 */
#include "safetensors.h"
#include "json.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __GNUC__
#define ST_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ST_PRINTF(a, b)
#endif

/* Appended to every format error: what the user can do about it. */
#define ST_HINT "the file is damaged or not a safetensors file: re-export or re-download it"

/* ------------------------------------------------------------------ dtypes */

static const struct {
    const char *name;
    size_t size;
} st_dtypes[STRIX_ST_DTYPE_COUNT] = {
    [STRIX_ST_F32] = {"F32", 4},         [STRIX_ST_F16] = {"F16", 2},
    [STRIX_ST_BF16] = {"BF16", 2},       [STRIX_ST_F64] = {"F64", 8},
    [STRIX_ST_F8_E4M3] = {"F8_E4M3", 1}, [STRIX_ST_F8_E5M2] = {"F8_E5M2", 1},
    [STRIX_ST_F8_E8M0] = {"F8_E8M0", 1}, [STRIX_ST_I64] = {"I64", 8},
    [STRIX_ST_I32] = {"I32", 4},         [STRIX_ST_I16] = {"I16", 2},
    [STRIX_ST_I8] = {"I8", 1},           [STRIX_ST_U64] = {"U64", 8},
    [STRIX_ST_U32] = {"U32", 4},         [STRIX_ST_U16] = {"U16", 2},
    [STRIX_ST_U8] = {"U8", 1},           [STRIX_ST_BOOL] = {"BOOL", 1},
    [STRIX_ST_C64] = {"C64", 8},
};

const char *strix_st_dtype_name(strix_st_dtype d)
{
    return (unsigned)d < STRIX_ST_DTYPE_COUNT ? st_dtypes[d].name : NULL;
}

size_t strix_st_dtype_size(strix_st_dtype d)
{
    return (unsigned)d < STRIX_ST_DTYPE_COUNT ? st_dtypes[d].size : 0;
}

int strix_st_dtype_from_name(const char *name, strix_st_dtype *out)
{
    for (int i = 0; i < STRIX_ST_DTYPE_COUNT; i++) {
        if (strcmp(name, st_dtypes[i].name) == 0) {
            *out = (strix_st_dtype)i;
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------- float formats */

float strix_st_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13); /* inf, or NaN keeping its payload */
    } else if (exp != 0) {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        /* subnormal mant * 2^-24: shift the leading 1 up to the implicit bit */
        uint32_t e = 127 - 15 + 1;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float strix_st_bf16_to_f32(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t strix_st_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet it, keep the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* >= 65520 (65504 + half an ulp, tie to even): inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) { /* >= 2^-14: a normal half; round mantissa to nearest even */
        uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((r - ((uint32_t)(127 - 15) << 23)) >> 13));
    }
    uint32_t e = a >> 23;
    if (e < 102) /* below 2^-25, half of the smallest subnormal: zero */
        return sign;
    /* subnormal: value = m * 2^(e-150), in units of 2^-24 that is m >> (126 - e) */
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; /* 14 .. 24 */
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++; /* may carry into the smallest normal, which is the right encoding */
    return (uint16_t)(sign | q);
}

/* ------------------------------------------------------------------ errors */

static ST_PRINTF(3, 4) strix_status st_fail(strix_error *err, strix_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = s;
    }
    return s;
}

static void st_strerror(int e, char *buf, size_t n)
{
    if (strerror_r(e, buf, n) != 0)
        snprintf(buf, n, "error %d", e);
}

static int st_valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t l = p[i] < 0x80 ? 1 : strix_utf8_len(p + i, n - i);
        if (l == 0)
            return 0;
        i += l;
    }
    return 1;
}

/* ------------------------------------------------------------------ reader */

struct strix_st_file {
    char *path;
    void *map;
    size_t map_size;
    char *pool;                     /* decoded strings (names, dtypes, metadata) */
    strix_st_tensor *tensors;       /* by data offset */
    size_t n_tensors;
    const strix_st_tensor **by_name; /* sorted by strcmp on name */
    strix_st_kv *meta;              /* header order */
    size_t n_meta;
    const strix_st_kv **meta_by_key;
    void (*release)(void *);        /* in-memory sets: frees owner */
    void *owner;
};

typedef struct st_parser {
    const char *path;
    strix_json j;           /* the header JSON; strings decode into the pool */
    const unsigned char *data;
    uint64_t data_size;
    strix_st_tensor *t;
    size_t nt, capt;
    strix_st_kv *kv;
    size_t nkv, capkv;
    int seen_metadata;
    strix_error *err;
} st_parser;

static ST_PRINTF(2, 3) strix_status st_bad(st_parser *p, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_fail(p->err, STRIX_E_WEIGHTS, "%s: %s; " ST_HINT, p->path, msg);
}

/* The JSON reader's error, at its offset in the file (8 + header offset). */
static strix_status st_syntax(st_parser *p)
{
    return st_bad(p, "invalid JSON in the header at byte %zu of the file: %s", 8 + p->j.err_pos,
                  p->j.err);
}

/* A string at the cursor; names and values are C strings, so no \u0000. */
static strix_status st_string(st_parser *p, const char **out)
{
    if (strix_json_string(&p->j, out, NULL))
        return st_syntax(p);
    if (p->j.nul)
        return st_bad(p, "the string at byte %zu contains \\u0000, which a name or metadata value "
                      "cannot hold", 8 + p->j.tok);
    return STRIX_OK;
}

/* A JSON array of non-negative integers into v[0..max); *count entries.
 * ctx names the tensor and field for messages. */
static strix_status st_uint_array(st_parser *p, const char *ctx, uint64_t *v, int max, int *count)
{
    strix_json *j = &p->j;
    if (strix_json_peek(j) != '[')
        return st_bad(p, "%s must be an array of integers, found %s", ctx, strix_json_found(j));
    j->pos++;
    int n = 0, seen = 0, more;
    while ((more = strix_json_more(j, ']', &seen)) > 0) {
        int c = strix_json_peek(j);
        if (c != '-' && !(c >= '0' && c <= '9'))
            return st_bad(p, "%s must be an array of integers, found %s in it", ctx,
                          strix_json_found(j));
        const char *tok;
        size_t len;
        int integral;
        if (strix_json_number(j, &tok, &len, &integral))
            return st_syntax(p);
        int shown = (int)(len < 40 ? len : 40);
        if (!integral)
            return st_bad(p, "%s must hold integers, found %.*s", ctx, shown, tok);
        /* exactly, in 64 bits: safetensors sizes and offsets are uint64 */
        int neg = tok[0] == '-', overflow = 0;
        uint64_t x = 0;
        for (size_t i = (size_t)neg; i < len; i++) {
            unsigned dgt = (unsigned)(tok[i] - '0');
            if (x > (UINT64_MAX - dgt) / 10)
                overflow = 1;
            else
                x = x * 10 + dgt;
        }
        if (neg && (x != 0 || overflow))
            return st_bad(p, "%s holds a negative value %.*s", ctx, shown, tok);
        if (overflow)
            return st_bad(p, "%s holds %.*s, too large for 64 bits", ctx, shown, tok);
        if (n == max)
            return st_bad(p, "%s has more than %d entries", ctx, max);
        v[n++] = x;
    }
    if (more < 0)
        return st_syntax(p);
    *count = n;
    return STRIX_OK;
}


/* "F32 [16, 3, 3, 3]" for messages. */
static void st_describe(char *buf, size_t n, const char *dtype, int ndim, const uint64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "%s [", dtype);
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %llu" : "%llu", (unsigned long long)shape[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

static strix_status st_tensor_entry(st_parser *p, const char *name)
{
    char q[STRIX_QUOTE_MAX], ctx[STRIX_QUOTE_MAX + 40], fq[STRIX_QUOTE_MAX];
    snprintf(ctx, sizeof ctx, "tensor '%s'", strix_quote(q, name));
    strix_json *j = &p->j;
    if (strix_json_peek(j) != '{')
        return st_bad(p, "%s must be an object {dtype, shape, data_offsets}, found %s", ctx,
                      strix_json_found(j));
    j->pos++;

    const char *dtype_s = NULL;
    strix_st_dtype dtype = STRIX_ST_F32;
    uint64_t shape[STRIX_ST_MAX_DIMS], off[2];
    int ndim = -1, noff = -1, seen = 0, more;
    char fctx[sizeof ctx + 20];
    strix_status s;

    while ((more = strix_json_more(j, '}', &seen)) > 0) {
        const char *key;
        if ((s = st_string(p, &key)))
            return s;
        if (strix_json_expect(j, ':', "':'"))
            return st_syntax(p);
        if (strcmp(key, "dtype") == 0) {
            if (dtype_s)
                return st_bad(p, "%s has a duplicate field \"dtype\"", ctx);
            if (strix_json_peek(j) != '"')
                return st_bad(p, "%s: \"dtype\" must be a string, found %s", ctx,
                              strix_json_found(j));
            if ((s = st_string(p, &dtype_s)))
                return s;
            if (!strix_st_dtype_from_name(dtype_s, &dtype)) {
                if (!strcmp(dtype_s, "F4") || !strcmp(dtype_s, "F6_E2M3") ||
                    !strcmp(dtype_s, "F6_E3M2"))
                    return st_bad(p, "%s has the sub-byte dtype %s, which strix does not read",
                                  ctx, dtype_s);
                return st_bad(p, "%s has an unknown dtype '%s' (expected F32, F16, BF16, F64, "
                              "I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2, "
                              "F8_E8M0 or C64)", ctx, strix_quote(fq, dtype_s));
            }
        } else if (strcmp(key, "shape") == 0) {
            if (ndim >= 0)
                return st_bad(p, "%s has a duplicate field \"shape\"", ctx);
            snprintf(fctx, sizeof fctx, "%s: \"shape\"", ctx);
            if ((s = st_uint_array(p, fctx, shape, STRIX_ST_MAX_DIMS, &ndim)))
                return s;
        } else if (strcmp(key, "data_offsets") == 0) {
            if (noff >= 0)
                return st_bad(p, "%s has a duplicate field \"data_offsets\"", ctx);
            snprintf(fctx, sizeof fctx, "%s: \"data_offsets\"", ctx);
            if ((s = st_uint_array(p, fctx, off, 2, &noff)))
                return s;
            if (noff != 2)
                return st_bad(p, "%s: \"data_offsets\" must be [begin, end], found %d entr%s",
                              ctx, noff, noff == 1 ? "y" : "ies");
        } else {
            return st_bad(p, "%s has an unknown field \"%s\" (expected dtype, shape, "
                          "data_offsets)", ctx, strix_quote(fq, key));
        }
    }
    if (more < 0)
        return st_syntax(p);
    if (!dtype_s)
        return st_bad(p, "%s has no \"dtype\"", ctx);
    if (ndim < 0)
        return st_bad(p, "%s has no \"shape\"", ctx);
    if (noff < 0)
        return st_bad(p, "%s has no \"data_offsets\"", ctx);

    char desc[256];
    st_describe(desc, sizeof desc, st_dtypes[dtype].name, ndim, shape);
    /* numel * size in 64 bits; a zero dimension makes the tensor empty however
     * large the others are */
    uint64_t nbytes = st_dtypes[dtype].size, numel = 1;
    int zero = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] > (uint64_t)INT64_MAX)
            return st_bad(p, "%s: shape %s has a dimension too large for 64-bit sizes", ctx, desc);
        zero |= shape[i] == 0;
    }
    for (int i = 0; i < ndim && !zero; i++) {
        if (nbytes > UINT64_MAX / shape[i])
            return st_bad(p, "%s: shape %s overflows 64-bit sizes", ctx, desc);
        nbytes *= shape[i];
        numel *= shape[i];
    }
    if (zero)
        nbytes = numel = 0;

    if (off[0] > off[1])
        return st_bad(p, "%s: data_offsets [%llu, %llu] begin after end", ctx,
                      (unsigned long long)off[0], (unsigned long long)off[1]);
    if (off[1] > p->data_size)
        return st_bad(p, "%s: data_offsets [%llu, %llu] run past the end of the %llu-byte data "
                      "section (the file is truncated or the offsets are wrong)", ctx,
                      (unsigned long long)off[0], (unsigned long long)off[1],
                      (unsigned long long)p->data_size);
    if (off[1] - off[0] != nbytes)
        return st_bad(p, "%s: data_offsets [%llu, %llu] hold %llu bytes but %s needs %llu", ctx,
                      (unsigned long long)off[0], (unsigned long long)off[1],
                      (unsigned long long)(off[1] - off[0]), desc, (unsigned long long)nbytes);

    if (p->nt == p->capt) {
        size_t cap = p->capt ? 2 * p->capt : 64;
        strix_st_tensor *t = realloc(p->t, cap * sizeof *t);
        if (!t)
            return st_fail(p->err, STRIX_E_NOMEM, "%s: out of memory reading the header", p->path);
        p->t = t;
        p->capt = cap;
    }
    strix_st_tensor *t = &p->t[p->nt++];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->dtype = dtype;
    t->dtype_name = st_dtypes[dtype].name;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = (int64_t)shape[i];
    /* both fit size_t: nbytes <= data_size, which is mapped */
    t->numel = (size_t)numel;
    t->nbytes = (size_t)nbytes;
    t->offset = off[0];
    t->data = p->data + off[0];
    return STRIX_OK;
}

static strix_status st_metadata(st_parser *p)
{
    strix_json *j = &p->j;
    if (p->seen_metadata)
        return st_bad(p, "duplicate key \"__metadata__\" in the header");
    p->seen_metadata = 1;
    if (strix_json_peek(j) != '{')
        return st_bad(p, "\"__metadata__\" must be an object of strings, found %s",
                      strix_json_found(j));
    j->pos++;
    int seen = 0, more;
    while ((more = strix_json_more(j, '}', &seen)) > 0) {
        const char *key, *value;
        char q[STRIX_QUOTE_MAX];
        strix_status s;
        if ((s = st_string(p, &key)))
            return s;
        if (strix_json_expect(j, ':', "':'"))
            return st_syntax(p);
        if (strix_json_peek(j) != '"')
            return st_bad(p, "metadata '%s' must be a string, found %s", strix_quote(q, key),
                          strix_json_found(j));
        if ((s = st_string(p, &value)))
            return s;
        if (p->nkv == p->capkv) {
            size_t cap = p->capkv ? 2 * p->capkv : 16;
            strix_st_kv *kv = realloc(p->kv, cap * sizeof *kv);
            if (!kv)
                return st_fail(p->err, STRIX_E_NOMEM, "%s: out of memory reading the header",
                               p->path);
            p->kv = kv;
            p->capkv = cap;
        }
        p->kv[p->nkv].key = key;
        p->kv[p->nkv].value = value;
        p->nkv++;
    }
    return more < 0 ? st_syntax(p) : STRIX_OK;
}

static strix_status st_header(st_parser *p)
{
    strix_json *j = &p->j;
    if (strix_json_expect(j, '{', "'{' (the header must be a JSON object)"))
        return st_syntax(p);
    int seen = 0, more;
    while ((more = strix_json_more(j, '}', &seen)) > 0) {
        const char *key;
        strix_status s;
        if ((s = st_string(p, &key)))
            return s;
        if (strix_json_expect(j, ':', "':'"))
            return st_syntax(p);
        s = strcmp(key, "__metadata__") == 0 ? st_metadata(p) : st_tensor_entry(p, key);
        if (s)
            return s;
    }
    if (more < 0)
        return st_syntax(p);
    if (strix_json_peek(j) >= 0) {
        strix_json_syntax(j, "only spaces after the header object");
        return st_syntax(p);
    }
    return STRIX_OK;
}

static int st_cmp_offset(const void *a, const void *b)
{
    const strix_st_tensor *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->nbytes != y->nbytes)
        return x->nbytes < y->nbytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int st_cmp_tensor_name(const void *a, const void *b)
{
    return strcmp((*(const strix_st_tensor *const *)a)->name,
                  (*(const strix_st_tensor *const *)b)->name);
}

static int st_cmp_kv_key(const void *a, const void *b)
{
    return strcmp((*(const strix_st_kv *const *)a)->key, (*(const strix_st_kv *const *)b)->key);
}

/* Sort by offset, index by name, and check that the tensors tile the data
 * section: sorted by begin, each must start where the previous ended. */
static strix_status st_finish(st_parser *p, strix_st_file *f)
{
    char q[STRIX_QUOTE_MAX], q2[STRIX_QUOTE_MAX];
    f->tensors = p->t;
    f->n_tensors = p->nt;
    p->t = NULL;
    f->meta = p->kv;
    f->n_meta = p->nkv;
    p->kv = NULL;

    if (f->n_tensors > 1)
        qsort(f->tensors, f->n_tensors, sizeof *f->tensors, st_cmp_offset);
    f->by_name = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof *f->by_name);
    f->meta_by_key = malloc((f->n_meta ? f->n_meta : 1) * sizeof *f->meta_by_key);
    if (!f->by_name || !f->meta_by_key)
        return st_fail(p->err, STRIX_E_NOMEM, "%s: out of memory indexing the tensors", p->path);
    for (size_t i = 0; i < f->n_tensors; i++)
        f->by_name[i] = &f->tensors[i];
    if (f->n_tensors > 1)
        qsort(f->by_name, f->n_tensors, sizeof *f->by_name, st_cmp_tensor_name);
    for (size_t i = 1; i < f->n_tensors; i++)
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0)
            return st_bad(p, "duplicate tensor name '%s' in the header",
                          strix_quote(q, f->by_name[i]->name));
    for (size_t i = 0; i < f->n_meta; i++)
        f->meta_by_key[i] = &f->meta[i];
    if (f->n_meta > 1)
        qsort(f->meta_by_key, f->n_meta, sizeof *f->meta_by_key, st_cmp_kv_key);
    for (size_t i = 1; i < f->n_meta; i++)
        if (strcmp(f->meta_by_key[i - 1]->key, f->meta_by_key[i]->key) == 0)
            return st_bad(p, "duplicate metadata key '%s'", strix_quote(q, f->meta_by_key[i]->key));

    uint64_t end = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const strix_st_tensor *t = &f->tensors[i];
        if (t->offset > end)
            return st_bad(p, "the data section has a hole: bytes [%llu, %llu) before tensor '%s' "
                          "belong to no tensor", (unsigned long long)end,
                          (unsigned long long)t->offset, strix_quote(q, t->name));
        if (t->offset < end)
            return st_bad(p, "tensor '%s' at data_offsets [%llu, %llu] overlaps tensor '%s' "
                          "ending at %llu", strix_quote(q, t->name), (unsigned long long)t->offset,
                          (unsigned long long)(t->offset + t->nbytes),
                          strix_quote(q2, f->tensors[i - 1].name), (unsigned long long)end);
        end = t->offset + t->nbytes;
    }
    if (end != p->data_size)
        return st_bad(p, "the data section has a hole: its last %llu bytes (from %llu) belong to "
                      "no tensor", (unsigned long long)(p->data_size - end),
                      (unsigned long long)end);
    return STRIX_OK;
}

void strix_st_close(strix_st_file *f)
{
    if (!f)
        return;
    if (f->map)
        munmap(f->map, f->map_size);
    if (f->release)
        f->release(f->owner);
    free(f->path);
    free(f->pool);
    free(f->tensors);
    free(f->by_name);
    free(f->meta);
    free(f->meta_by_key);
    free(f);
}

strix_status strix_st_open(strix_st_file **out, const char *path, strix_error *err)
{
    char es[128];
    *out = NULL;
    if (!path)
        return st_fail(err, STRIX_E_ARG, "safetensors: no path given");
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* no FIFO's wait: refused below; mmap does not care */
    if (fd < 0) {
        st_strerror(errno, es, sizeof es);
        return st_fail(err, STRIX_E_IO, "%s: cannot open: %s", path, es);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st_strerror(errno, es, sizeof es);
        close(fd);
        return st_fail(err, STRIX_E_IO, "%s: cannot stat: %s", path, es);
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return st_fail(err, STRIX_E_IO, "%s: not a regular file; give the path of a "
                       ".safetensors file", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return st_fail(err, STRIX_E_WEIGHTS, "%s: file is empty; " ST_HINT, path);
    }
    if (sb.st_size < 8) {
        close(fd);
        return st_fail(err, STRIX_E_WEIGHTS, "%s: file is only %lld bytes, too short for the "
                       "8-byte header size; " ST_HINT, path, (long long)sb.st_size);
    }
    size_t size = (size_t)sb.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED) {
        st_strerror(map_errno, es, sizeof es);
        return st_fail(err, STRIX_E_IO, "%s: cannot map %zu bytes: %s", path, size, es);
    }

    strix_st_file *f = calloc(1, sizeof *f);
    if (!f) {
        munmap(map, size);
        return st_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    }
    f->map = map;
    f->map_size = size;

    const unsigned char *b = map;
    uint64_t hn = 0;
    for (int i = 7; i >= 0; i--)
        hn = (hn << 8) | b[i];
    strix_status s;
    if (hn > STRIX_ST_MAX_HEADER) {
        s = st_fail(err, STRIX_E_WEIGHTS, "%s: header size %llu exceeds the limit of %llu bytes; "
                    ST_HINT, path, (unsigned long long)hn, (unsigned long long)STRIX_ST_MAX_HEADER);
        goto fail;
    }
    if (hn > size - 8) {
        s = st_fail(err, STRIX_E_WEIGHTS, "%s: header size %llu is larger than the file (%zu bytes "
                    "after the size field); " ST_HINT, path, (unsigned long long)hn, size - 8);
        goto fail;
    }
    f->path = malloc(strlen(path) + 1);
    f->pool = malloc((size_t)hn + 1);
    if (!f->path || !f->pool) {
        s = st_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    strcpy(f->path, path);

    st_parser p = {0};
    p.path = path;
    strix_json_init(&p.j, (const char *)b + 8, (size_t)hn, f->pool, "header");
    p.data = b + 8 + hn;
    p.data_size = size - 8 - hn;
    p.err = err;
    s = st_header(&p);
    if (s == STRIX_OK)
        s = st_finish(&p, f);
    free(p.t);
    free(p.kv);
    if (s != STRIX_OK)
        goto fail;
    for (size_t i = 0; i < f->n_tensors; i++)
        f->tensors[i].file = f;
    *out = f;
    return STRIX_OK;
fail:
    strix_st_close(f);
    return s;
}

strix_status strix_st_from_memory(strix_st_file **out, const char *path, const strix_st_source *src, size_t n,
                                  void (*release)(void *), void *owner, strix_error *err)
{
    char q[STRIX_QUOTE_MAX];
    *out = NULL;
    strix_st_file *f = calloc(1, sizeof *f);
    if (!f) {
        if (release)
            release(owner);
        return st_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    }
    f->release = release;
    f->owner = owner;
    size_t pool = strlen(path) + 1;
    for (size_t i = 0; i < n; i++)
        pool += strlen(src[i].name) + 1 + (src[i].origin ? strlen(src[i].origin) + 1 : 0);
    f->path = malloc(strlen(path) + 1);
    f->pool = malloc(pool);
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    f->by_name = malloc((n ? n : 1) * sizeof *f->by_name);
    f->meta_by_key = malloc(sizeof *f->meta_by_key);
    strix_status s = STRIX_OK;
    if (!f->path || !f->pool || !f->tensors || !f->by_name || !f->meta_by_key) {
        s = st_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
        goto done;
    }
    strcpy(f->path, path);
    char *w = f->pool;
    for (size_t i = 0; i < n; i++) {
        strix_st_tensor *t = &f->tensors[i];
        if ((unsigned)src[i].dtype >= STRIX_ST_DTYPE_COUNT || src[i].ndim < 0 || src[i].ndim > STRIX_ST_MAX_DIMS) {
            s = st_fail(err, STRIX_E_WEIGHTS, "%s: tensor '%s' has a bad dtype or rank", path,
                        strix_quote(q, src[i].name));
            goto done;
        }
        t->name = strcpy(w, src[i].name);
        w += strlen(w) + 1;
        if (src[i].origin) {
            t->origin = strcpy(w, src[i].origin);
            w += strlen(w) + 1;
        }
        t->dtype = src[i].dtype;
        t->dtype_name = strix_st_dtype_name(t->dtype);
        t->ndim = src[i].ndim;
        t->numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            t->shape[d] = src[i].shape[d];
            t->numel *= (size_t)t->shape[d];
        }
        t->nbytes = t->numel * strix_st_dtype_size(t->dtype);
        t->offset = i;
        t->data = src[i].data;
        t->file = f;
        f->by_name[i] = t;
    }
    f->n_tensors = n;
    if (n > 1)
        qsort(f->by_name, n, sizeof *f->by_name, st_cmp_tensor_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0) {
            s = st_fail(err, STRIX_E_WEIGHTS, "%s: two tensors are named '%s'", path, strix_quote(q, f->by_name[i]->name));
            goto done;
        }
done:
    if (s) {
        strix_st_close(f);
        return s;
    }
    *out = f;
    return STRIX_OK;
}

const char *strix_st_path(const strix_st_file *f) { return f->path; }
size_t strix_st_count(const strix_st_file *f) { return f->n_tensors; }

const strix_st_tensor *strix_st_get(const strix_st_file *f, size_t i)
{
    return i < f->n_tensors ? &f->tensors[i] : NULL;
}

size_t strix_st_index_of(const strix_st_file *f, const strix_st_tensor *t)
{
    return (size_t)(t - f->tensors);
}

static int st_cmp_find_tensor(const void *key, const void *elem)
{
    return strcmp(key, (*(const strix_st_tensor *const *)elem)->name);
}

const strix_st_tensor *strix_st_find(const strix_st_file *f, const char *name)
{
    const strix_st_tensor *const *r =
        f->n_tensors ? bsearch(name, f->by_name, f->n_tensors, sizeof *f->by_name,
                               st_cmp_find_tensor)
                     : NULL;
    return r ? *r : NULL;
}

size_t strix_st_metadata_count(const strix_st_file *f) { return f->n_meta; }

const strix_st_kv *strix_st_metadata_at(const strix_st_file *f, size_t i)
{
    return i < f->n_meta ? &f->meta[i] : NULL;
}

static int st_cmp_find_kv(const void *key, const void *elem)
{
    return strcmp(key, (*(const strix_st_kv *const *)elem)->key);
}

const char *strix_st_metadata_get(const strix_st_file *f, const char *key)
{
    const strix_st_kv *const *r =
        f->n_meta ? bsearch(key, f->meta_by_key, f->n_meta, sizeof *f->meta_by_key, st_cmp_find_kv)
                  : NULL;
    return r ? (*r)->value : NULL;
}

strix_status strix_st_to_f32(float *dst, const strix_st_tensor *t, strix_error *err)
{
    /* bytes are assembled little-endian by hand: the data may be unaligned
     * and the host need not be little-endian */
    const unsigned char *s = t->data;
    size_t n = t->numel;
    switch (t->dtype) {
    case STRIX_ST_F32:
        for (size_t i = 0; i < n; i++) {
            const unsigned char *e = s + 4 * i;
            uint32_t u = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
                         (uint32_t)e[3] << 24;
            memcpy(&dst[i], &u, sizeof u);
        }
        return STRIX_OK;
    case STRIX_ST_F16:
        for (size_t i = 0; i < n; i++)
            dst[i] = strix_st_f16_to_f32((uint16_t)(s[2 * i] | s[2 * i + 1] << 8));
        return STRIX_OK;
    case STRIX_ST_BF16:
        for (size_t i = 0; i < n; i++)
            dst[i] = strix_st_bf16_to_f32((uint16_t)(s[2 * i] | s[2 * i + 1] << 8));
        return STRIX_OK;
    case STRIX_ST_F64:
        for (size_t i = 0; i < n; i++) {
            uint64_t u = 0;
            for (int b = 7; b >= 0; b--)
                u = (u << 8) | s[8 * i + (size_t)b];
            double d;
            memcpy(&d, &u, sizeof d);
            dst[i] = (float)d;
        }
        return STRIX_OK;
    default: {
        char q[STRIX_QUOTE_MAX];
        return st_fail(err, STRIX_E_WEIGHTS, "%s: tensor '%s' has dtype %s, not a float type "
                       "(F32, F16, BF16, F64); the weights do not match the model",
                       t->file ? t->file->path : "safetensors", strix_quote(q, t->name),
                       t->dtype_name);
    }
    }
}

/* ------------------------------------------------------------------ writer */

typedef struct st_wtensor {
    char *name;
    strix_st_dtype dtype;
    int ndim;
    int64_t shape[STRIX_ST_MAX_DIMS];
    size_t numel;
    const float *data; /* borrowed */
} st_wtensor;

typedef struct st_wkv {
    char *key, *value;
} st_wkv;

struct strix_st_writer {
    st_wtensor *t;
    size_t nt, capt;
    st_wkv *kv;
    size_t nkv, capkv;
};

static char *st_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

strix_status strix_st_writer_create(strix_st_writer **out, strix_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? STRIX_OK : st_fail(err, STRIX_E_NOMEM, "safetensors writer: out of memory");
}

void strix_st_writer_free(strix_st_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nt; i++)
        free(w->t[i].name);
    for (size_t i = 0; i < w->nkv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->t);
    free(w->kv);
    free(w);
}

strix_status strix_st_writer_add(strix_st_writer *w, const char *name, strix_st_dtype dtype,
                                 int ndim, const int64_t *shape, const float *data,
                                 strix_error *err)
{
    char q[STRIX_QUOTE_MAX];
    if (!name)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor without a name");
    if (!st_valid_utf8(name))
        return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor name '%s' is not valid "
                       "UTF-8", strix_quote(q, name));
    if (strcmp(name, "__metadata__") == 0)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: '__metadata__' is reserved and "
                       "cannot name a tensor");
    if (dtype != STRIX_ST_F32 && dtype != STRIX_ST_F16)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor '%s': dtype must be F32 or "
                       "F16", strix_quote(q, name));
    if (ndim < 0 || ndim > STRIX_ST_MAX_DIMS)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor '%s': %d dimensions, "
                       "expected 0..%d", strix_quote(q, name), ndim, STRIX_ST_MAX_DIMS);
    /* numel * 4 must fit size_t so that offsets and the file size do */
    size_t numel = 1, limit = SIZE_MAX / 4;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor '%s': negative "
                           "dimension %lld", strix_quote(q, name), (long long)shape[i]);
        if (shape[i] != 0 && numel > limit / (uint64_t)shape[i])
            return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor '%s': shape too large",
                           strix_quote(q, name));
        numel *= (size_t)shape[i];
    }
    if (numel && !data)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: tensor '%s': no data",
                       strix_quote(q, name));
    if (w->nt == w->capt) {
        size_t cap = w->capt ? 2 * w->capt : 64;
        st_wtensor *t = realloc(w->t, cap * sizeof *t);
        if (!t)
            return st_fail(err, STRIX_E_NOMEM, "safetensors writer: out of memory");
        w->t = t;
        w->capt = cap;
    }
    st_wtensor *t = &w->t[w->nt];
    memset(t, 0, sizeof *t);
    if (!(t->name = st_strdup(name)))
        return st_fail(err, STRIX_E_NOMEM, "safetensors writer: out of memory");
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->numel = numel;
    t->data = data;
    w->nt++;
    return STRIX_OK;
}

strix_status strix_st_writer_set_metadata(strix_st_writer *w, const char *key, const char *value,
                                          strix_error *err)
{
    char q[STRIX_QUOTE_MAX];
    if (!key || !value)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: metadata needs a key and a value");
    if (!st_valid_utf8(key) || !st_valid_utf8(value))
        return st_fail(err, STRIX_E_ARG, "safetensors writer: metadata '%s' is not valid UTF-8",
                       strix_quote(q, key));
    char *v = st_strdup(value);
    if (!v)
        return st_fail(err, STRIX_E_NOMEM, "safetensors writer: out of memory");
    for (size_t i = 0; i < w->nkv; i++) {
        if (strcmp(w->kv[i].key, key) == 0) {
            free(w->kv[i].value);
            w->kv[i].value = v;
            return STRIX_OK;
        }
    }
    if (w->nkv == w->capkv) {
        size_t cap = w->capkv ? 2 * w->capkv : 8;
        st_wkv *kv = realloc(w->kv, cap * sizeof *kv);
        if (!kv) {
            free(v);
            return st_fail(err, STRIX_E_NOMEM, "safetensors writer: out of memory");
        }
        w->kv = kv;
        w->capkv = cap;
    }
    char *k = st_strdup(key);
    if (!k) {
        free(v);
        return st_fail(err, STRIX_E_NOMEM, "safetensors writer: out of memory");
    }
    w->kv[w->nkv].key = k;
    w->kv[w->nkv].value = v;
    w->nkv++;
    return STRIX_OK;
}

/* A growing byte buffer for the header; oom is sticky. */
typedef struct st_buf {
    char *s;
    size_t len, cap;
    int oom;
} st_buf;

static void st_put(st_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
}

static void st_puts(st_buf *b, const char *s) { st_put(b, s, strlen(s)); }

static void st_put_u64(st_buf *b, unsigned long long v)
{
    char t[24];
    st_put(b, t, (size_t)snprintf(t, sizeof t, "%llu", v));
}

/* JSON string with the escapes JSON requires; UTF-8 passes through. */
static void st_put_json(st_buf *b, const char *s)
{
    st_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char t[8];
        switch (*p) {
        case '"': st_put(b, "\\\"", 2); break;
        case '\\': st_put(b, "\\\\", 2); break;
        case '\b': st_put(b, "\\b", 2); break;
        case '\f': st_put(b, "\\f", 2); break;
        case '\n': st_put(b, "\\n", 2); break;
        case '\r': st_put(b, "\\r", 2); break;
        case '\t': st_put(b, "\\t", 2); break;
        default:
            if (*p < 0x20)
                st_put(b, t, (size_t)snprintf(t, sizeof t, "\\u%04x", *p));
            else
                st_put(b, (const char *)p, 1);
        }
    }
    st_put(b, "\"", 1);
}

static int st_cmp_wtensor(const void *a, const void *b)
{
    return strcmp((*(const st_wtensor *const *)a)->name, (*(const st_wtensor *const *)b)->name);
}

static int st_cmp_wkv(const void *a, const void *b)
{
    return strcmp((*(const st_wkv *const *)a)->key, (*(const st_wkv *const *)b)->key);
}

static void st_put_metadata(st_buf *b, const st_wkv *const *kv, size_t n)
{
    st_puts(b, "\"__metadata__\":{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            st_put(b, ",", 1);
        st_put_json(b, kv[i]->key);
        st_put(b, ":", 1);
        st_put_json(b, kv[i]->value);
    }
    st_put(b, "}", 1);
}

/* The header JSON, keys sorted, padded with spaces to a multiple of 8. */
static strix_status st_build_header(const strix_st_writer *w, const char *path, st_buf *b,
                                    strix_error *err)
{
    char q[STRIX_QUOTE_MAX];
    strix_status s = STRIX_OK;
    const st_wtensor **tn = malloc((w->nt ? w->nt : 1) * sizeof *tn);
    const st_wkv **mk = malloc((w->nkv ? w->nkv : 1) * sizeof *mk);
    uint64_t *off = malloc((w->nt ? w->nt : 1) * sizeof *off);
    if (!tn || !mk || !off) {
        s = st_fail(err, STRIX_E_NOMEM, "%s: out of memory building the header", path);
        goto done;
    }
    /* data in the order added; the header lists the same tensors by name */
    uint64_t pos = 0;
    for (size_t i = 0; i < w->nt; i++) {
        tn[i] = &w->t[i];
        off[i] = pos;
        pos += (uint64_t)w->t[i].numel * st_dtypes[w->t[i].dtype].size;
    }
    for (size_t i = 0; i < w->nkv; i++)
        mk[i] = &w->kv[i];
    qsort(tn, w->nt, sizeof *tn, st_cmp_wtensor);
    qsort(mk, w->nkv, sizeof *mk, st_cmp_wkv);
    for (size_t i = 1; i < w->nt; i++) {
        if (strcmp(tn[i - 1]->name, tn[i]->name) == 0) {
            s = st_fail(err, STRIX_E_ARG, "%s: not written: two tensors are named '%s'; give "
                        "each tensor a distinct name", path, strix_quote(q, tn[i]->name));
            goto done;
        }
    }

    st_put(b, "{", 1);
    int meta_done = w->nkv == 0, first = 1;
    for (size_t i = 0; i <= w->nt; i++) {
        if (!meta_done && (i == w->nt || strcmp(tn[i]->name, "__metadata__") > 0)) {
            if (!first)
                st_put(b, ",", 1);
            st_put_metadata(b, mk, w->nkv);
            meta_done = 1;
            first = 0;
        }
        if (i == w->nt)
            break;
        const st_wtensor *t = tn[i];
        size_t k = (size_t)(t - w->t);
        if (!first)
            st_put(b, ",", 1);
        first = 0;
        st_put_json(b, t->name);
        st_puts(b, ":{\"data_offsets\":[");
        st_put_u64(b, off[k]);
        st_put(b, ",", 1);
        st_put_u64(b, off[k] + (uint64_t)t->numel * st_dtypes[t->dtype].size);
        st_puts(b, "],\"dtype\":\"");
        st_puts(b, st_dtypes[t->dtype].name);
        st_puts(b, "\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            if (d)
                st_put(b, ",", 1);
            st_put_u64(b, (unsigned long long)t->shape[d]);
        }
        st_puts(b, "]}");
    }
    st_put(b, "}", 1);
    while (b->len % 8)
        st_put(b, " ", 1);
    if (b->oom)
        s = st_fail(err, STRIX_E_NOMEM, "%s: out of memory building the header", path);
    else if (b->len > STRIX_ST_MAX_HEADER)
        s = st_fail(err, STRIX_E_ARG, "%s: not written: the header would be %zu bytes, over the "
                    "%llu-byte limit readers accept", path, b->len,
                    (unsigned long long)STRIX_ST_MAX_HEADER);
done:
    free(tn);
    free(mk);
    free(off);
    return s;
}

/* Tensor data as little-endian bytes, converted in chunks. */
static int st_write_data(FILE *fp, const st_wtensor *t)
{
    unsigned char buf[1 << 14];
    size_t per = sizeof buf / 4;
    for (size_t i = 0; i < t->numel; i += per) {
        size_t n = t->numel - i < per ? t->numel - i : per, k = 0;
        for (size_t j = 0; j < n; j++) {
            if (t->dtype == STRIX_ST_F16) {
                uint16_t h = strix_st_f32_to_f16(t->data[i + j]);
                buf[k++] = (unsigned char)(h & 0xff);
                buf[k++] = (unsigned char)(h >> 8);
            } else {
                uint32_t u;
                memcpy(&u, &t->data[i + j], sizeof u);
                for (int b = 0; b < 4; b++)
                    buf[k++] = (unsigned char)(u >> (8 * b));
            }
        }
        if (fwrite(buf, 1, k, fp) != k)
            return -1;
    }
    return 0;
}

strix_status strix_st_writer_write(strix_st_writer *w, const char *path, int overwrite,
                                   strix_error *err)
{
    char es[128];
    struct stat sb;
    if (!path)
        return st_fail(err, STRIX_E_ARG, "safetensors writer: no path given");
    if (!overwrite && lstat(path, &sb) == 0)
        return st_fail(err, STRIX_E_IO, "%s: already exists; not overwriting it (remove it or "
                       "allow overwriting)", path);

    st_buf h = {0};
    strix_status s = st_build_header(w, path, &h, err);
    if (s != STRIX_OK) {
        free(h.s);
        return s;
    }

    char *tmp = NULL;
    FILE *fp = strix_temp_open(path, &tmp);
    if (!fp) {
        int oe = errno;
        st_strerror(oe, es, sizeof es);
        free(h.s);
        return st_fail(err, oe == ENOMEM ? STRIX_E_NOMEM : STRIX_E_IO,
                       "%s: cannot create a temporary file beside it: %s", path, es);
    }
    unsigned char n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
    int bad = fwrite(n8, 1, 8, fp) != 8 || fwrite(h.s, 1, h.len, fp) != h.len;
    for (size_t i = 0; i < w->nt && !bad; i++)
        bad = st_write_data(fp, &w->t[i]) != 0;
    bad = bad || fflush(fp) != 0 || fsync(fileno(fp)) != 0;
    int e = errno;
    if (fclose(fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        st_strerror(e, es, sizeof es);
        s = st_fail(err, STRIX_E_IO, "%s: cannot write: %s", path, es);
        goto fail;
    }
    if (strix_temp_publish(tmp, path, overwrite) != 0) {
        e = errno;
        st_strerror(e, es, sizeof es);
        s = e == EEXIST ? st_fail(err, STRIX_E_IO, "%s: already exists; not overwriting it "
                                  "(remove it or allow overwriting)", path)
                        : st_fail(err, STRIX_E_IO, "%s: cannot move the finished file into "
                                  "place: %s", path, es);
        goto fail;
    }
    free(h.s);
    free(tmp);
    return STRIX_OK;
fail:
    unlink(tmp);
    free(h.s);
    free(tmp);
    return s;
}
