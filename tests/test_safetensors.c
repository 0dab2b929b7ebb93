/* test_safetensors.c — the safetensors reader and writer: round trips of
 * random F32/F16 tensors and metadata, the exact bytes the writer produces,
 * fp16/bf16 conversions against independent references (ldexp, brute-force
 * nearest), and one test per malformed file, each checking the status and
 * that the message names the file and the problem.  Files live in a fresh
 * mkdtemp directory under /tmp, removed at the end. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors.h"
#include "oplayout.h"
#include "testlib.h"

static char g_dir[64]; /* this run's temporary directory */

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

static int write_file(const char *path, const void *bytes, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    int ok = fwrite(bytes, 1, n, fp) == n;
    return fclose(fp) == 0 && ok ? 0 : -1;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (b && fread(b, 1, (size_t)len, fp) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    *n = (size_t)len;
    return b;
}

/* Entries in the temporary directory: a failed write must not add any. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* A file: u64 little-endian header size, the header as given, then data_len
 * bytes of a counting pattern. */
static void craft(char *path, size_t n, const char *name, const char *header, size_t data_len)
{
    path_in(path, n, name);
    size_t hn = strlen(header), total = 8 + hn + data_len;
    unsigned char *b = malloc(total);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, header, hn);
    for (size_t i = 0; i < data_len; i++)
        b[8 + hn + i] = (unsigned char)(i * 7 + 1);
    if (write_file(path, b, total) != 0)
        tl_fail("cannot write %s", path);
    free(b);
}

/* Open must fail with want, *out NULL, and one line naming path and word. */
static void expect_fail(const char *path, strix_status want, const char *word)
{
    strix_st_file *f = (strix_st_file *)&f; /* must be reset to NULL */
    strix_error e;
    memset(&e, 0, sizeof e);
    strix_status s = strix_st_open(&f, path, &e);
    if (s == STRIX_OK)
        strix_st_close(f);
    TL_CHECK(s == want, "status %d, want %d: %s", (int)s, (int)want, e.message);
    TL_CHECK(f == NULL, "out not NULL on failure");
    TL_CHECK(e.status == want, "err.status %d, want %d", (int)e.status, (int)want);
    TL_CHECK(strstr(e.message, path) != NULL, "message lacks the path: %s", e.message);
    TL_CHECK(strstr(e.message, word) != NULL, "message lacks '%s': %s", word, e.message);
    TL_CHECK(strchr(e.message, '\n') == NULL, "message is not one line: %s", e.message);
}

static void bad_case(const char *name, const char *header, size_t data_len, const char *word)
{
    char path[256];
    craft(path, sizeof path, name, header, data_len);
    expect_fail(path, STRIX_E_WEIGHTS, word);
}

/* ------------------------------------------------------------ references */

/* Value of a finite half from the definition: (1024 + m) * 2^(e - 25). */
static double ref_f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 0x3ff;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

/* Nearest half (ties to even) by binary search over the ordered positive halves. */
static uint16_t ref_f32_to_f16(float x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (isnan(x))
        return sign | 0x7e00;
    double a = fabs((double)x);
    if (isinf(x) || a >= 65520.0)
        return sign | 0x7c00;
    unsigned lo = 0, hi = 0x7bff; /* largest h with value(h) <= a */
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if (ref_f16_value((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0x7bff)
        return sign | 0x7bff;
    double d1 = a - ref_f16_value((uint16_t)lo), d2 = ref_f16_value((uint16_t)(lo + 1)) - a;
    unsigned h = d1 < d2 ? lo : d2 < d1 ? lo + 1 : (lo & 1) ? lo + 1 : lo;
    return (uint16_t)(sign | h);
}

/* ----------------------------------------------------------------- tests */

static void test_f16_to_f32_exhaustive(void)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float got = strix_st_f16_to_f32((uint16_t)h);
        uint32_t want;
        if (((h >> 10) & 31) == 31)
            want = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
        else
            want = f32_bits((float)ref_f16_value((uint16_t)h));
        TL_CHECK(f32_bits(got) == want, "f16 0x%04x -> 0x%08x, want 0x%08x", h, f32_bits(got),
                 want);
    }
}

static void test_f32_to_f16_rounding(void)
{
    /* exact ties between neighbouring halves must round to even */
    for (int i = 0; i < 20000; i++) {
        uint16_t h = (uint16_t)tl_int(0, 0x7bfe);
        float mid = (float)((ref_f16_value(h) + ref_f16_value((uint16_t)(h + 1))) / 2);
        uint16_t want = (h & 1) ? (uint16_t)(h + 1) : h;
        uint16_t got = strix_st_f32_to_f16(mid);
        TL_CHECK(got == want, "tie %.9g -> 0x%04x, want 0x%04x", mid, got, want);
        TL_CHECK(strix_st_f32_to_f16(-mid) == (want | 0x8000), "tie -%.9g", mid);
    }
    /* random floats from below half the smallest subnormal to past the max */
    for (int i = 0; i < 100000; i++) {
        uint32_t u = (uint32_t)tl_u64();
        uint32_t e = (uint32_t)tl_int(95, 145);
        u = (u & 0x807fffffu) | (e << 23);
        float x = bits_f32(u);
        uint16_t got = strix_st_f32_to_f16(x), want = ref_f32_to_f16(x);
        TL_CHECK(got == want, "%.9g (0x%08x) -> 0x%04x, want 0x%04x", x, u, got, want);
    }
    static const struct { float x; uint16_t h; } fixed[] = {
        {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3c00}, {-2.0f, 0xc000},
        {65504.0f, 0x7bff}, {65519.99f, 0x7bff}, {65520.0f, 0x7c00}, {1e30f, 0x7c00},
        {5.9604645e-8f, 0x0001}, {2.9802322e-8f, 0x0000}, {2.9802326e-8f, 0x0001},
        {6.1035156e-5f, 0x0400}, {6.0975552e-5f, 0x03ff}, {1.0009766f, 0x3c01},
        {1.00048828125f, 0x3c00}, {1.00146484375f, 0x3c02},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        uint16_t got = strix_st_f32_to_f16(fixed[i].x);
        TL_CHECK(got == fixed[i].h, "%.9g -> 0x%04x, want 0x%04x", fixed[i].x, got, fixed[i].h);
    }
    TL_CHECK(strix_st_f32_to_f16(INFINITY) == 0x7c00 && strix_st_f32_to_f16(-INFINITY) == 0xfc00,
             "inf");
    uint16_t n = strix_st_f32_to_f16(bits_f32(0x7f800001u)); /* signalling NaN, low payload */
    TL_CHECK((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0, "sNaN -> 0x%04x, not a NaN", n);
    n = strix_st_f32_to_f16(bits_f32(0xffc00000u));
    TL_CHECK(n == 0xfe00, "-qNaN -> 0x%04x", n);
}

/* A file with a U8 [3] tensor first so the next one is unaligned. */
static strix_st_file *open_raw16(const char *name, const char *dtype, const uint16_t *bits, int n)
{
    char header[256], path[256];
    snprintf(header, sizeof header,
             "{\"pad\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
             "\"x\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[3,%d]}}   ",
             dtype, n, 3 + 2 * n);
    path_in(path, sizeof path, name);
    size_t hn = strlen(header), total = 8 + hn + 3 + 2 * (size_t)n;
    unsigned char *b = calloc(1, total);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, header, hn);
    for (int i = 0; i < n; i++) {
        b[8 + hn + 3 + 2 * i] = (unsigned char)(bits[i] & 0xff);
        b[8 + hn + 3 + 2 * i + 1] = (unsigned char)(bits[i] >> 8);
    }
    int w = write_file(path, b, total);
    free(b);
    if (w != 0) {
        tl_fail("cannot write %s", path);
        return NULL;
    }
    strix_st_file *f;
    strix_error e;
    if (strix_st_open(&f, path, &e) != STRIX_OK) {
        tl_fail("open: %s", e.message);
        return NULL;
    }
    return f;
}

static void test_to_f32_f16_specials(void)
{
    static const uint16_t h[] = {0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00,
                                 0x3c00, 0x8000, 0xc000, 0x3555, 0x8001, 0xfe01};
    static const uint32_t want[] = {
        0x33800000u, /* 2^-24 */   0x387fc000u, /* 1023 * 2^-24 */ 0x38800000u, /* 2^-14 */
        0x477fe000u, /* 65504 */   0x7f800000u, 0xff800000u,        0x7fc00000u,
        0x3f800000u, 0x80000000u,  0xc0000000u, 0x3eaaa000u, /* 0.333251953125 */
        0xb3800000u, 0xffc02000u};
    int n = (int)(sizeof h / sizeof *h);
    strix_st_file *f = open_raw16("f16special.safetensors", "F16", h, n);
    if (!f)
        return;
    const strix_st_tensor *t = strix_st_find(f, "x");
    float out[16];
    strix_error e;
    strix_status s = t ? strix_st_to_f32(out, t, &e) : STRIX_E_INTERNAL;
    int shape_ok = t && t->numel == (size_t)n && t->dtype == STRIX_ST_F16 &&
                   t->nbytes == 2 * (size_t)n && t->offset == 3;
    strix_st_close(f);
    TL_CHECK(shape_ok, "tensor x");
    TL_CHECK(s == STRIX_OK, "to_f32: %s", e.message);
    for (int i = 0; i < n; i++)
        TL_CHECK(f32_bits(out[i]) == want[i], "F16 0x%04x -> 0x%08x, want 0x%08x", h[i],
                 f32_bits(out[i]), want[i]);
    TL_CHECK(out[1] == 1023.0f / 16777216.0f && out[3] == 65504.0f && isinf(out[4]) &&
             isnan(out[6]), "values");
}

static void test_to_f32_bf16_specials(void)
{
    static const uint16_t h[] = {0x3f80, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x8000, 0x4049, 0x7f7f};
    int n = (int)(sizeof h / sizeof *h);
    strix_st_file *f = open_raw16("bf16special.safetensors", "BF16", h, n);
    if (!f)
        return;
    const strix_st_tensor *t = strix_st_find(f, "x");
    float out[16];
    strix_error e;
    strix_status s = t ? strix_st_to_f32(out, t, &e) : STRIX_E_INTERNAL;
    strix_st_close(f);
    TL_CHECK(s == STRIX_OK, "to_f32: %s", e.message);
    for (int i = 0; i < n; i++)
        TL_CHECK(f32_bits(out[i]) == (uint32_t)h[i] << 16, "BF16 0x%04x -> 0x%08x", h[i],
                 f32_bits(out[i]));
    TL_CHECK(out[0] == 1.0f && isinf(out[1]) && out[2] < 0 && isnan(out[3]) &&
             out[4] == ldexpf(1.0f, -133) && out[6] == 3.140625f, "values");
}

/* Pieces that need escaping in JSON or are multi-byte UTF-8. */
static const char *const nasty[] = {"\"", "\\", "\n", "\x01", "\x1f", "\t", "\xc3\xa9",
                                    "\xf0\x9f\x98\x80", "/", " ", "\x7f", "\xe2\x82\xac", "'"};

static void random_name(char *buf, size_t n, int i)
{
    size_t k = (size_t)snprintf(buf, n, "model.%d.", i);
    int parts = tl_int(0, 4);
    for (int j = 0; j < parts; j++)
        k += (size_t)snprintf(buf + k, n - k, "%s%c",
                              nasty[tl_int(0, (int)(sizeof nasty / sizeof *nasty) - 1)],
                              (char)tl_int('a', 'z'));
}

static void test_roundtrip_random(void)
{
    enum { MAXT = 14 };
    int nt = tl_int(1, MAXT);
    float *data[MAXT] = {0};
    char names[MAXT][96];
    strix_st_dtype dt[MAXT];
    int64_t shape[MAXT][STRIX_ST_MAX_DIMS];
    int ndim[MAXT];
    size_t numel[MAXT];
    strix_st_writer *w = NULL;
    strix_st_file *f = NULL;
    float *out = NULL;
    strix_error e;
    char path[256];
    snprintf(path, sizeof path, "%s/round.%llu.safetensors", g_dir,
             (unsigned long long)(tl_u64() & 0xffff));

    if (strix_st_writer_create(&w, &e) != STRIX_OK) {
        tl_fail("create: %s", e.message);
        return;
    }
    for (int i = 0; i < nt; i++) {
        random_name(names[i], sizeof names[i], i);
        dt[i] = tl_int(0, 1) ? STRIX_ST_F16 : STRIX_ST_F32;
        numel[i] = 1;
        if (i == 0) { /* one big tensor: several write chunks */
            ndim[i] = 2;
            shape[i][0] = tl_int(5, 40);
            shape[i][1] = 1000;
        } else {
            ndim[i] = tl_int(0, 5);
            for (int d = 0; d < ndim[i]; d++)
                shape[i][d] = tl_int(0, 6);
        }
        for (int d = 0; d < ndim[i]; d++)
            numel[i] *= (size_t)shape[i][d];
        data[i] = malloc((numel[i] ? numel[i] : 1) * sizeof(float));
        for (size_t j = 0; j < numel[i]; j++) {
            int kind = tl_int(0, 9);
            data[i][j] = kind == 0 ? bits_f32((uint32_t)tl_u64())          /* any pattern */
                       : kind == 1 ? ldexpf(tl_uniform(-1, 1), -tl_int(14, 26)) /* tiny */
                                   : tl_uniform(-70000, 70000) / (float)(1 << tl_int(0, 16));
        }
        if (strix_st_writer_add(w, names[i], dt[i], ndim[i], shape[i], data[i], &e) != STRIX_OK) {
            tl_fail("add: %s", e.message);
            goto done;
        }
    }
    if (strix_st_writer_write(w, path, 0, &e) != STRIX_OK) {
        tl_fail("write: %s", e.message);
        goto done;
    }
    if (strix_st_open(&f, path, &e) != STRIX_OK) {
        tl_fail("open: %s", e.message);
        goto done;
    }
    if (strix_st_count(f) != (size_t)nt) {
        tl_fail("count %zu, want %d", strix_st_count(f), nt);
        goto done;
    }
    out = malloc(40 * 1000 * sizeof *out);
    uint64_t expect_off = 0;
    for (int i = 0; i < nt; i++) {
        const strix_st_tensor *t = strix_st_find(f, names[i]);
        if (!t) {
            tl_fail("tensor %d not found by name", i);
            goto done;
        }
        size_t es = dt[i] == STRIX_ST_F16 ? 2 : 4;
        int ok = t->dtype == dt[i] && t->ndim == ndim[i] && t->numel == numel[i] &&
                 t->nbytes == numel[i] * es && t->offset == expect_off &&
                 !strcmp(t->name, names[i]) &&
                 !strcmp(t->dtype_name, dt[i] == STRIX_ST_F16 ? "F16" : "F32");
        for (int d = 0; d < ndim[i] && ok; d++)
            ok = t->shape[d] == shape[i][d];
        if (!ok) {
            tl_fail("tensor %d: metadata differs (dtype %s ndim %d numel %zu offset %llu)", i,
                    t->dtype_name, t->ndim, t->numel, (unsigned long long)t->offset);
            goto done;
        }
        if (strix_st_get(f, strix_st_index_of(f, t)) != t) {
            tl_fail("index_of tensor %d", i);
            goto done;
        }
        expect_off += t->nbytes; /* laid out in the order added */
        if (strix_st_to_f32(out, t, &e) != STRIX_OK) {
            tl_fail("to_f32: %s", e.message);
            goto done;
        }
        const unsigned char *raw = t->data;
        for (size_t j = 0; j < numel[i]; j++) {
            float x = data[i][j];
            if (dt[i] == STRIX_ST_F32) {
                if (f32_bits(out[j]) != f32_bits(x)) {
                    tl_fail("F32 %d[%zu]: 0x%08x, want 0x%08x", i, j, f32_bits(out[j]),
                            f32_bits(x));
                    goto done;
                }
                continue;
            }
            uint16_t h = ref_f32_to_f16(x), got = (uint16_t)(raw[2 * j] | raw[2 * j + 1] << 8);
            float want = (float)ref_f16_value(h);
            int same = isnan(x) ? (isnan(out[j]) && (got & 0x7c00) == 0x7c00 && (got & 0x3ff) &&
                                   (got & 0x8000) == (h & 0x8000))
                     : ((h & 0x7c00) == 0x7c00) ? (got == h && isinf(out[j]) &&
                                                   signbit(out[j]) == signbit(x))
                                                : (got == h && f32_bits(out[j]) == f32_bits(want));
            if (!same) {
                tl_fail("F16 %d[%zu]: %.9g stored 0x%04x read %.9g, want 0x%04x", i, j, x, got,
                        out[j], h);
                goto done;
            }
        }
    }
    /* get(i) walks the data section in order */
    for (size_t i = 1; i < strix_st_count(f); i++) {
        const strix_st_tensor *a = strix_st_get(f, i - 1), *b = strix_st_get(f, i);
        if (a->offset + a->nbytes != b->offset) {
            tl_fail("get(%zu) does not follow get(%zu)", i, i - 1);
            goto done;
        }
    }
    if (strix_st_get(f, strix_st_count(f)) != NULL || strix_st_find(f, "model.") != NULL ||
        strix_st_find(f, "") != NULL)
        tl_fail("out-of-range get or absent name returned a tensor");
done:
    free(out);
    strix_st_close(f);
    strix_st_writer_free(w);
    for (int i = 0; i < nt; i++)
        free(data[i]);
}

static void test_metadata_roundtrip(void)
{
    enum { NK = 6 };
    char keys[NK][96], vals[NK][96];
    strix_st_writer *w;
    strix_st_file *f = NULL;
    strix_error e;
    char path[256];
    path_in(path, sizeof path, "meta.safetensors");
    strix_st_writer_create(&w, &e);
    for (int i = 0; i < NK; i++) {
        random_name(keys[i], sizeof keys[i], i);
        random_name(vals[i], sizeof vals[i], 100 + i);
        TL_CHECK(strix_st_writer_set_metadata(w, keys[i], "first", &e) == STRIX_OK, "%s",
                 e.message);
    }
    for (int i = 0; i < NK; i++) /* set again: replaces */
        TL_CHECK(strix_st_writer_set_metadata(w, keys[i], vals[i], &e) == STRIX_OK, "%s",
                 e.message);
    float x = 1.5f;
    strix_status s = strix_st_writer_add(w, "__metadata", STRIX_ST_F32, 0, NULL, &x, &e);
    if (s == STRIX_OK)
        s = strix_st_writer_write(w, path, 0, &e);
    strix_st_writer_free(w);
    TL_CHECK(s == STRIX_OK, "write: %s", e.message);
    TL_CHECK(strix_st_open(&f, path, &e) == STRIX_OK, "open: %s", e.message);
    size_t nm = strix_st_metadata_count(f);
    int ok = nm == NK && strix_st_count(f) == 1 && strix_st_metadata_get(f, "nope") == NULL &&
             strix_st_metadata_at(f, NK) == NULL;
    for (int i = 0; i < NK && ok; i++) {
        const char *v = strix_st_metadata_get(f, keys[i]);
        ok = v && strcmp(v, vals[i]) == 0;
        const strix_st_kv *kv = strix_st_metadata_at(f, (size_t)i);
        /* the writer sorts keys, so header order is sorted order */
        ok = ok && kv &&
             (i == 0 || strcmp(strix_st_metadata_at(f, (size_t)i - 1)->key, kv->key) < 0);
    }
    strix_st_close(f);
    TL_CHECK(ok, "metadata differs after the round trip");
}

/* The complete file for a small case: sorted keys (uppercase < __metadata__ <
 * lowercase), escapes, space padding to 8, data in the order added. */
static void test_writer_exact_bytes(void)
{
    static const char want_header[] =
        "{\"A\":{\"data_offsets\":[8,10],\"dtype\":\"F16\",\"shape\":[1,1]},"
        "\"__metadata__\":{\"k1\":\"v1\",\"k2\":\"v\\\"2\\u001f\"},"
        "\"a\\\"\\\\\\n\\u0001\xc3\xa9\":{\"data_offsets\":[10,14],\"dtype\":\"F32\",\"shape\":[]},"
        "\"b\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]}}";
    float b[2] = {1.0f, -2.0f}, a1 = 1.0f, s = 0.5f;
    int64_t sb[1] = {2}, sa[2] = {1, 1};
    strix_st_writer *w;
    strix_error e;
    char path[256];
    path_in(path, sizeof path, "exact.safetensors");
    strix_st_writer_create(&w, &e);
    strix_status st = strix_st_writer_add(w, "b", STRIX_ST_F32, 1, sb, b, &e);
    if (!st) st = strix_st_writer_add(w, "A", STRIX_ST_F16, 2, sa, &a1, &e);
    if (!st) st = strix_st_writer_add(w, "a\"\\\n\x01\xc3\xa9", STRIX_ST_F32, 0, NULL, &s, &e);
    if (!st) st = strix_st_writer_set_metadata(w, "k2", "v\"2\x1f", &e);
    if (!st) st = strix_st_writer_set_metadata(w, "k1", "v1", &e);
    if (!st) st = strix_st_writer_write(w, path, 0, &e);
    strix_st_writer_free(w);
    TL_CHECK(st == STRIX_OK, "write: %s", e.message);
    size_t n;
    unsigned char *got = read_file(path, &n);
    TL_CHECK(got, "cannot read %s back", path);
    size_t hl = strlen(want_header), padded = (hl + 7) / 8 * 8;
    unsigned char want[1024];
    for (int i = 0; i < 8; i++)
        want[i] = (unsigned char)(padded >> (8 * i));
    memcpy(want + 8, want_header, hl);
    memset(want + 8 + hl, ' ', padded - hl);
    static const unsigned char data[14] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0x00, 0x3c,
                                           0, 0, 0, 0x3f};
    memcpy(want + 8 + padded, data, sizeof data);
    size_t wn = 8 + padded + sizeof data;
    int same = n == wn && memcmp(got, want, n) == 0;
    if (!same && n > 8)
        tl_fail("file differs (%zu bytes, want %zu): header %.*s", n, wn,
                (int)(n - 8 < 400 ? n - 8 : 400), (const char *)got + 8);
    free(got);
}

static void test_unicode_escapes_in_header(void)
{
    char path[256];
    craft(path, sizeof path, "escapes.safetensors",
          "{\"caf\\u00e9\\/\\ud83d\\ude00\\t\\\"\\\\\":{\"dtype\":\"F32\",\"shape\":[1],"
          "\"data_offsets\":[0,4]},\"__metadata__\":{\"\\u20ac\":\"\\u00FF\\b\\f\\r\\n\"}}  ",
          4);
    strix_st_file *f;
    strix_error e;
    TL_CHECK(strix_st_open(&f, path, &e) == STRIX_OK, "open: %s", e.message);
    const strix_st_tensor *t = strix_st_get(f, 0);
    const char *v = strix_st_metadata_get(f, "\xe2\x82\xac");
    int ok = t && strcmp(t->name, "caf\xc3\xa9/\xf0\x9f\x98\x80\t\"\\") == 0 &&
             strix_st_find(f, t->name) == t && v && strcmp(v, "\xc3\xbf\b\f\r\n") == 0;
    strix_st_close(f);
    TL_CHECK(ok, "escapes decoded wrongly");
}

static void test_all_dtypes_parse(void)
{
    static const struct { const char *name; size_t size; } d[] = {
        {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F64", 8}, {"I64", 8}, {"I32", 4}, {"I16", 2},
        {"I8", 1}, {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1}, {"BOOL", 1},
        {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}, {"C64", 8}};
    int nd = (int)(sizeof d / sizeof *d);
    char header[4096], path[256];
    size_t k = 0, off = 0;
    k += (size_t)snprintf(header + k, sizeof header - k, "{");
    for (int i = 0; i < nd; i++) {
        size_t n = (size_t)tl_int(0, 3) * d[i].size;
        k += (size_t)snprintf(header + k, sizeof header - k,
                              "%s\"t_%s\" : { \"shape\" : [ %zu ] , \"dtype\" : \"%s\" , "
                              "\"data_offsets\" : [ %zu , %zu ] }", i ? " ,\n" : "", d[i].name,
                              n / d[i].size, d[i].name, off, off + n);
        off += n;
    }
    snprintf(header + k, sizeof header - k,
             ",\"num_batches_tracked\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[%zu,%zu]}"
             "}\t\r\n ", off, off + 8);
    craft(path, sizeof path, "dtypes.safetensors", header, off + 8);
    strix_st_file *f;
    strix_error e;
    TL_CHECK(strix_st_open(&f, path, &e) == STRIX_OK, "open: %s", e.message);
    int ok = strix_st_count(f) == (size_t)nd + 1;
    for (int i = 0; i < nd && ok; i++) {
        char name[32];
        snprintf(name, sizeof name, "t_%s", d[i].name);
        const strix_st_tensor *t = strix_st_find(f, name);
        strix_st_dtype dd;
        ok = t && !strcmp(t->dtype_name, d[i].name) && strix_st_dtype_size(t->dtype) == d[i].size &&
             t->nbytes == t->numel * d[i].size && strix_st_dtype_from_name(d[i].name, &dd) &&
             dd == t->dtype && !strcmp(strix_st_dtype_name(dd), d[i].name);
    }
    const strix_st_tensor *nb = strix_st_find(f, "num_batches_tracked");
    float x;
    memset(&e, 0, sizeof e);
    strix_status s = nb ? strix_st_to_f32(&x, nb, &e) : STRIX_OK;
    int scalar_ok = nb && nb->ndim == 0 && nb->numel == 1 && nb->nbytes == 8;
    strix_st_close(f);
    TL_CHECK(ok, "a dtype parsed wrongly");
    TL_CHECK(scalar_ok, "scalar I64");
    TL_CHECK(s == STRIX_E_WEIGHTS && strstr(e.message, path) && strstr(e.message, "I64") &&
             strstr(e.message, "num_batches_tracked"), "to_f32 of I64: %d %s", (int)s, e.message);
}

static void test_empty_header_and_f64(void)
{
    char path[256];
    craft(path, sizeof path, "empty_obj.safetensors", "{ }", 0);
    strix_st_file *f;
    strix_error e;
    TL_CHECK(strix_st_open(&f, path, &e) == STRIX_OK, "open {}: %s", e.message);
    int ok = strix_st_count(f) == 0 && strix_st_find(f, "x") == NULL &&
             strix_st_metadata_count(f) == 0 && strix_st_metadata_get(f, "x") == NULL;
    strix_st_close(f);
    TL_CHECK(ok, "empty file has entries");

    /* F64 converts with rounding: 0.1 and 1 + 2^-30 */
    path_in(path, sizeof path, "f64.safetensors");
    static const char h[] = "{\"d\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}";
    unsigned char b[8 + sizeof h - 1 + 16];
    size_t hn = sizeof h - 1;
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, h, hn);
    double v[2] = {0.1, 1.0 + ldexp(1, -30)};
    for (int j = 0; j < 2; j++) {
        uint64_t u;
        memcpy(&u, &v[j], 8);
        for (int i = 0; i < 8; i++)
            b[8 + hn + 8 * (size_t)j + (size_t)i] = (unsigned char)(u >> (8 * i));
    }
    TL_CHECK(write_file(path, b, sizeof b) == 0, "write");
    TL_CHECK(strix_st_open(&f, path, &e) == STRIX_OK, "open f64: %s", e.message);
    float out[2];
    strix_status s = strix_st_to_f32(out, strix_st_get(f, 0), &e);
    strix_st_close(f);
    TL_CHECK(s == STRIX_OK && out[0] == 0.1f && out[1] == 1.0f, "F64: %g %g", out[0], out[1]);
}

/* Random byte flips and truncations of a valid file: open either succeeds
 * with a consistent tiling or fails with STRIX_E_WEIGHTS, never crashes. */
static void test_mutations(void)
{
    char src[256], path[256];
    path_in(src, sizeof src, "mut_src.safetensors");
    path_in(path, sizeof path, "mut.safetensors");
    float d[24];
    for (int i = 0; i < 24; i++)
        d[i] = tl_uniform(-1, 1);
    int64_t s1[2] = {2, 3}, s2[1] = {5};
    strix_st_writer *w;
    strix_error e;
    strix_st_writer_create(&w, &e);
    strix_st_writer_add(w, "a.weight", STRIX_ST_F32, 2, s1, d, &e);
    strix_st_writer_add(w, "b\\u", STRIX_ST_F16, 1, s2, d + 6, &e);
    strix_st_writer_add(w, "c", STRIX_ST_F32, 0, NULL, d + 11, &e);
    strix_st_writer_set_metadata(w, "format", "pt", &e);
    strix_status st = strix_st_writer_write(w, src, 0, &e);
    strix_st_writer_free(w);
    TL_CHECK(st == STRIX_OK, "write: %s", e.message);
    size_t n;
    unsigned char *orig = read_file(src, &n);
    unsigned char *b = malloc(n);
    TL_CHECK(orig && b, "read back");
    int opened = 0;
    for (int it = 0; it < 400; it++) {
        memcpy(b, orig, n);
        size_t len = n;
        int kind = tl_int(0, 3);
        if (kind == 0) {
            len = (size_t)tl_int(0, (int)n - 1);
        } else {
            int flips = tl_int(1, 3);
            for (int j = 0; j < flips; j++) {
                size_t at = (size_t)tl_int(0, (int)n - 1);
                if (kind == 1 && at >= 8)
                    at = 8 + (size_t)tl_int(0, 60) % (n - 8); /* mostly the header */
                b[at] = kind == 3 ? (unsigned char)"{}[]\",:0-9e\\ u"[tl_int(0, 13)]
                                  : (unsigned char)tl_u64();
            }
        }
        if (write_file(path, b, len) != 0) {
            tl_fail("write");
            break;
        }
        strix_st_file *f;
        memset(&e, 0, sizeof e);
        st = strix_st_open(&f, path, &e);
        if (st != STRIX_OK) {
            if (st != STRIX_E_WEIGHTS || !strstr(e.message, path) || strchr(e.message, '\n')) {
                tl_fail("mutation %d: status %d: %s", it, (int)st, e.message);
                break;
            }
            continue;
        }
        opened++;
        uint64_t hn = 0;
        for (int i = 7; i >= 0; i--)
            hn = (hn << 8) | b[i];
        uint64_t end = 0;
        for (size_t i = 0; i < strix_st_count(f); i++) {
            const strix_st_tensor *t = strix_st_get(f, i);
            if (t->offset != end ||
                (const unsigned char *)t->data != (const unsigned char *)strix_st_get(f, 0)->data -
                                                      strix_st_get(f, 0)->offset + t->offset)
                end = UINT64_MAX;
            else
                end += t->nbytes;
        }
        strix_st_close(f);
        if (end != len - 8 - hn) {
            tl_fail("mutation %d opened but the tensors do not tile the data", it);
            break;
        }
    }
    free(orig);
    free(b);
    TL_CHECK(opened > 0 && opened < 400, "implausible: %d of 400 mutations opened", opened);
}

/* ------------------------------------------------------ malformed files */

#define T1 "\"model.0.conv.weight\""
#define BAD(fn, header, data_len, word) \
    static void fn(void) { bad_case(#fn ".safetensors", header, data_len, word); }

BAD(test_bad_not_json, "this is not json", 0, "invalid JSON")
BAD(test_bad_not_object, "[1, 2]  ", 0, "JSON object")
BAD(test_bad_trailing_garbage, "{} x", 0, "invalid JSON")
BAD(test_bad_unterminated, "{\"a", 0, "not terminated")
BAD(test_bad_truncated_data,
    "{" T1 ":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", 20, "truncated")
BAD(test_bad_offsets_beyond_end,
    "{" T1 ":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[24,48]}}", 24, "past the end")
BAD(test_bad_begin_after_end,
    "{" T1 ":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[24,0]}}", 24, "begin after end")
BAD(test_bad_size_mismatch,
    "{" T1 ":{\"dtype\":\"F32\",\"shape\":[16,3,3,3],\"data_offsets\":[0,100]}}", 100,
    "tensor 'model.0.conv.weight': data_offsets [0, 100] hold 100 bytes but F32 [16, 3, 3, 3] "
    "needs 1728")
BAD(test_bad_overlap,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "overlaps")
BAD(test_bad_hole,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}", 20, "hole")
BAD(test_bad_hole_at_start,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "hole")
BAD(test_bad_trailing_bytes,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, "hole")
BAD(test_bad_duplicate_tensor,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, "duplicate tensor name")
BAD(test_bad_duplicate_field,
    "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
    "duplicate field")
BAD(test_bad_duplicate_metadata_key,
    "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "duplicate metadata key")
BAD(test_bad_duplicate_metadata,
    "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "duplicate key")
BAD(test_bad_unknown_dtype,
    "{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype 'F33'")
BAD(test_bad_sub_byte_dtype,
    "{\"a\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1, "sub-byte")
BAD(test_bad_unknown_field,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"offset\":0,\"data_offsets\":[0,8]}}", 8,
    "unknown field \"offset\"")
BAD(test_bad_missing_dtype, "{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "no \"dtype\"")
BAD(test_bad_missing_shape, "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8, "no \"shape\"")
BAD(test_bad_missing_offsets, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 0,
    "no \"data_offsets\"")
BAD(test_bad_empty_entry, "{\"a\":{}}", 0, "no \"dtype\"")
BAD(test_bad_negative_shape,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2,3],\"data_offsets\":[0,24]}}", 24, "negative")
BAD(test_bad_shape_overflow,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
    "\"data_offsets\":[0,8]}}", 8, "overflows")
BAD(test_bad_shape_too_large,
    "{\"a\":{\"dtype\":\"U8\",\"shape\":[99999999999999999999999],\"data_offsets\":[0,8]}}", 8,
    "too large")
BAD(test_bad_shape_not_integer,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, "must hold integers")
BAD(test_bad_shape_exponent,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}}", 8, "must hold integers")
BAD(test_bad_shape_leading_zero,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", 8, "leading zero")
BAD(test_bad_shape_wrong_type,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,8]}}", 8,
    "\"shape\" must be an array of integers, found a string")
BAD(test_bad_shape_nine_dims,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
    "more than 8")
BAD(test_bad_dtype_not_string,
    "{\"a\":{\"dtype\":32,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "must be a string")
BAD(test_bad_offsets_three,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}}", 8, "more than 2")
BAD(test_bad_offsets_one,
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8]}}", 8, "[begin, end]")
BAD(test_bad_entry_not_object, "{\"a\":[1,2]}", 0, "must be an object")
BAD(test_bad_metadata_not_string, "{\"__metadata__\":{\"format\":1}}", 0,
    "metadata 'format' must be a string, found a number")
BAD(test_bad_metadata_null, "{\"__metadata__\":{\"format\":null}}", 0, "must be a string")
BAD(test_bad_metadata_not_object, "{\"__metadata__\":[\"x\"]}", 0, "must be an object")
BAD(test_bad_lone_surrogate, "{\"a\\ud800\":{}}", 0, "surrogate")
BAD(test_bad_lone_low_surrogate, "{\"a\\udc00x\":{}}", 0, "surrogate")
BAD(test_bad_bad_escape, "{\"a\\x\":{}}", 0, "escape")
BAD(test_bad_short_unicode_escape, "{\"a\\u12\":{}}", 0, "four hex")
BAD(test_bad_nul_escape, "{\"a\\u0000b\":{}}", 0, "\\u0000")
BAD(test_bad_invalid_utf8, "{\"a\xff\":{}}", 0, "UTF-8")
BAD(test_bad_overlong_utf8, "{\"a\xc0\xaf\":{}}", 0, "UTF-8")
BAD(test_bad_utf8_surrogate, "{\"a\xed\xa0\x80\":{}}", 0, "UTF-8")
BAD(test_bad_control_char, "{\"a\nb\":{}}", 0, "control byte")
BAD(test_bad_missing_colon, "{\"a\" {}}", 0, "expected ':'")
BAD(test_bad_empty_header, "", 8, "invalid JSON")

/* A hostile name stays one short line in the message: a newline becomes
 * \x0a and a long name is cut between characters. */
static void test_bad_long_name_message(void)
{
    char header[1024], path[256];
    size_t k = (size_t)snprintf(header, sizeof header, "{\"a\\n");
    for (int i = 0; i < 300; i++)
        k += (size_t)snprintf(header + k, sizeof header - k, "\xc3\xa9");
    snprintf(header + k, sizeof header - k, "\":{\"dtype\":\"X\",\"shape\":[],"
             "\"data_offsets\":[0,0]}}");
    craft(path, sizeof path, "longname.safetensors", header, 0);
    expect_fail(path, STRIX_E_WEIGHTS, "tensor 'a\\x0a\xc3\xa9\xc3\xa9");
    strix_st_file *f;
    strix_error e;
    strix_st_open(&f, path, &e);
    const char *cut = strstr(e.message, "...'");
    TL_CHECK(cut && cut[-2] == '\xc3' && cut[-1] == '\xa9', "long name not cut cleanly: %s",
             e.message);
    TL_CHECK(strlen(e.message) < 512, "message too long: %zu bytes", strlen(e.message));
}

/* Padding must be spaces: NUL bytes after the object are an error. */
static void test_bad_nul_padding(void)
{
    char path[256];
    path_in(path, sizeof path, "nulpad.safetensors");
    static const unsigned char b[16] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', 0, 0, 0, 0, 0};
    TL_CHECK(write_file(path, b, sizeof b) == 0, "write");
    expect_fail(path, STRIX_E_WEIGHTS, "invalid JSON");
}

static void test_bad_missing_file(void)
{
    char path[256];
    path_in(path, sizeof path, "does-not-exist.safetensors");
    expect_fail(path, STRIX_E_IO, "cannot open");
}

static void test_bad_directory(void)
{
    expect_fail(g_dir, STRIX_E_IO, "not a regular file");
}

static void test_bad_empty_file(void)
{
    char path[256];
    path_in(path, sizeof path, "empty.safetensors");
    TL_CHECK(write_file(path, "", 0) == 0, "write");
    expect_fail(path, STRIX_E_WEIGHTS, "file is empty");
}

static void test_bad_four_bytes(void)
{
    char path[256];
    path_in(path, sizeof path, "four.safetensors");
    TL_CHECK(write_file(path, "\x02\0\0\0", 4) == 0, "write");
    expect_fail(path, STRIX_E_WEIGHTS, "too short");
}

static void test_bad_header_larger_than_file(void)
{
    char path[256];
    path_in(path, sizeof path, "hbig.safetensors");
    static const unsigned char b[18] = {0xe8, 0x03, 0, 0, 0, 0, 0, 0, '{', '}'};
    TL_CHECK(write_file(path, b, sizeof b) == 0, "write");
    expect_fail(path, STRIX_E_WEIGHTS, "header size 1000 is larger than the file");
}

static void test_bad_header_over_limit(void)
{
    char path[256];
    path_in(path, sizeof path, "hhuge.safetensors");
    static const unsigned char b[18] = {0, 0, 0, 0, 0, 1, 0, 0, '{', '}'};
    TL_CHECK(write_file(path, b, sizeof b) == 0, "write");
    expect_fail(path, STRIX_E_WEIGHTS, "exceeds the limit");
}

/* ---------------------------------------------------------------- writer */

static strix_status write_one(const char *path, float v, int overwrite, strix_error *e)
{
    strix_st_writer *w;
    strix_status s = strix_st_writer_create(&w, e);
    int64_t shape[1] = {1};
    if (!s) s = strix_st_writer_add(w, "v", STRIX_ST_F32, 1, shape, &v, e);
    if (!s) s = strix_st_writer_write(w, path, overwrite, e);
    strix_st_writer_free(w);
    return s;
}

static float read_one(const char *path)
{
    strix_st_file *f;
    strix_error e;
    float v = NAN;
    if (strix_st_open(&f, path, &e) == STRIX_OK) {
        const strix_st_tensor *t = strix_st_find(f, "v");
        if (t)
            strix_st_to_f32(&v, t, &e);
        strix_st_close(f);
    }
    return v;
}

static void test_writer_overwrite(void)
{
    char path[256];
    strix_error e;
    path_in(path, sizeof path, "ow.safetensors");
    float a = tl_uniform(1, 2), b = tl_uniform(3, 4);
    TL_CHECK(write_one(path, a, 0, &e) == STRIX_OK, "first write: %s", e.message);
    int before = count_entries(g_dir);
    strix_status s = write_one(path, b, 0, &e);
    TL_CHECK(s == STRIX_E_IO && strstr(e.message, path) && strstr(e.message, "already exists"),
             "second write without overwrite: %d %s", (int)s, e.message);
    TL_CHECK(read_one(path) == a, "file changed by a refused write");
    TL_CHECK(count_entries(g_dir) == before, "a refused write left a file behind");
    TL_CHECK(write_one(path, b, 1, &e) == STRIX_OK, "overwrite: %s", e.message);
    TL_CHECK(read_one(path) == b, "overwrite did not replace the data");
    TL_CHECK(count_entries(g_dir) == before, "overwrite left a temporary file");
}

static void test_writer_missing_directory(void)
{
    char path[256];
    strix_error e;
    path_in(path, sizeof path, "no-such-dir/w.safetensors");
    int before = count_entries(g_dir);
    strix_status s = write_one(path, 1.0f, 0, &e);
    TL_CHECK(s == STRIX_E_IO && strstr(e.message, path) && strstr(e.message, "cannot create"),
             "status %d: %s", (int)s, e.message);
    TL_CHECK(count_entries(g_dir) == before, "files left behind");
}

/* The temporary file is created and written, then the rename fails because
 * the destination is a directory: the temporary file must be gone. */
static void test_writer_failed_rename_cleans_up(void)
{
    char path[256];
    strix_error e;
    path_in(path, sizeof path, "dir.safetensors");
    TL_CHECK(mkdir(path, 0700) == 0, "mkdir: %s", strerror(errno));
    int before = count_entries(g_dir);
    strix_status s = write_one(path, 1.0f, 1, &e);
    int after = count_entries(g_dir), inside = count_entries(path);
    rmdir(path);
    TL_CHECK(s == STRIX_E_IO && strstr(e.message, path), "status %d: %s", (int)s, e.message);
    TL_CHECK(after == before && inside == 0, "temporary file left behind (%d -> %d)", before,
             after);
}

/* Each bad argument: STRIX_E_ARG and a message naming the problem. */
static void test_writer_rejects_bad_input(void)
{
    static const char *const words[] = {"F32 or F16", "negative", "dimensions", "reserved",
                                        "UTF-8", "no data", "UTF-8"};
    float x[4] = {0};
    int64_t ok1[1] = {4}, neg[1] = {-1}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (int i = 0; i < 7; i++) {
        strix_st_writer *w;
        strix_error e;
        TL_CHECK(strix_st_writer_create(&w, &e) == STRIX_OK, "create");
        strix_status s;
        switch (i) {
        case 0: s = strix_st_writer_add(w, "x", STRIX_ST_BF16, 1, ok1, x, &e); break;
        case 1: s = strix_st_writer_add(w, "x", STRIX_ST_F32, 1, neg, x, &e); break;
        case 2: s = strix_st_writer_add(w, "x", STRIX_ST_F32, 9, nine, x, &e); break;
        case 3: s = strix_st_writer_add(w, "__metadata__", STRIX_ST_F32, 1, ok1, x, &e); break;
        case 4: s = strix_st_writer_add(w, "x\xff", STRIX_ST_F32, 1, ok1, x, &e); break;
        case 5: s = strix_st_writer_add(w, "x", STRIX_ST_F32, 1, ok1, NULL, &e); break;
        default: s = strix_st_writer_set_metadata(w, "k", "\xc0\x80", &e); break;
        }
        strix_st_writer_free(w);
        TL_CHECK(s == STRIX_E_ARG && strstr(e.message, words[i]) && !strchr(e.message, '\n'),
                 "case %d: status %d: %s", i, (int)s, e.message);
    }
}

static void test_writer_duplicate_name(void)
{
    char path[256];
    strix_error e;
    float x[2] = {1, 2};
    int64_t s1[1] = {1};
    path_in(path, sizeof path, "dup.safetensors");
    int before = count_entries(g_dir);
    strix_st_writer *w;
    strix_st_writer_create(&w, &e);
    strix_st_writer_add(w, "w", STRIX_ST_F32, 1, s1, x, &e);
    strix_st_writer_add(w, "w", STRIX_ST_F16, 1, s1, x + 1, &e);
    strix_status s = strix_st_writer_write(w, path, 0, &e);
    strix_st_writer_free(w);
    TL_CHECK(s == STRIX_E_ARG && strstr(e.message, path) && strstr(e.message, "'w'"),
             "status %d: %s", (int)s, e.message);
    TL_CHECK(count_entries(g_dir) == before, "a file was created");
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) != 0)
            rmdir(p);
    }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    tl_init();
    strcpy(g_dir, "/tmp/strix_st_XXXXXX");
    if (!mkdtemp(g_dir)) {
        printf("FAIL test_safetensors: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    TL_RUN(test_f16_to_f32_exhaustive);
    TL_RUN(test_f32_to_f16_rounding);
    TL_RUN(test_to_f32_f16_specials);
    TL_RUN(test_to_f32_bf16_specials);
    TL_RUN(test_roundtrip_random);
    TL_RUN(test_metadata_roundtrip);
    TL_RUN(test_writer_exact_bytes);
    TL_RUN(test_unicode_escapes_in_header);
    TL_RUN(test_all_dtypes_parse);
    TL_RUN(test_empty_header_and_f64);
    TL_RUN(test_mutations);
    TL_RUN(test_bad_missing_file);
    TL_RUN(test_bad_directory);
    TL_RUN(test_bad_empty_file);
    TL_RUN(test_bad_four_bytes);
    TL_RUN(test_bad_header_larger_than_file);
    TL_RUN(test_bad_header_over_limit);
    TL_RUN(test_bad_not_json);
    TL_RUN(test_bad_not_object);
    TL_RUN(test_bad_trailing_garbage);
    TL_RUN(test_bad_unterminated);
    TL_RUN(test_bad_truncated_data);
    TL_RUN(test_bad_offsets_beyond_end);
    TL_RUN(test_bad_begin_after_end);
    TL_RUN(test_bad_size_mismatch);
    TL_RUN(test_bad_overlap);
    TL_RUN(test_bad_hole);
    TL_RUN(test_bad_hole_at_start);
    TL_RUN(test_bad_trailing_bytes);
    TL_RUN(test_bad_duplicate_tensor);
    TL_RUN(test_bad_duplicate_field);
    TL_RUN(test_bad_duplicate_metadata_key);
    TL_RUN(test_bad_duplicate_metadata);
    TL_RUN(test_bad_unknown_dtype);
    TL_RUN(test_bad_sub_byte_dtype);
    TL_RUN(test_bad_unknown_field);
    TL_RUN(test_bad_missing_dtype);
    TL_RUN(test_bad_missing_shape);
    TL_RUN(test_bad_missing_offsets);
    TL_RUN(test_bad_empty_entry);
    TL_RUN(test_bad_negative_shape);
    TL_RUN(test_bad_shape_overflow);
    TL_RUN(test_bad_shape_too_large);
    TL_RUN(test_bad_shape_not_integer);
    TL_RUN(test_bad_shape_exponent);
    TL_RUN(test_bad_shape_leading_zero);
    TL_RUN(test_bad_shape_wrong_type);
    TL_RUN(test_bad_shape_nine_dims);
    TL_RUN(test_bad_dtype_not_string);
    TL_RUN(test_bad_offsets_three);
    TL_RUN(test_bad_offsets_one);
    TL_RUN(test_bad_entry_not_object);
    TL_RUN(test_bad_metadata_not_string);
    TL_RUN(test_bad_metadata_null);
    TL_RUN(test_bad_metadata_not_object);
    TL_RUN(test_bad_lone_surrogate);
    TL_RUN(test_bad_lone_low_surrogate);
    TL_RUN(test_bad_bad_escape);
    TL_RUN(test_bad_short_unicode_escape);
    TL_RUN(test_bad_nul_escape);
    TL_RUN(test_bad_invalid_utf8);
    TL_RUN(test_bad_overlong_utf8);
    TL_RUN(test_bad_utf8_surrogate);
    TL_RUN(test_bad_control_char);
    TL_RUN(test_bad_missing_colon);
    TL_RUN(test_bad_empty_header);
    TL_RUN(test_bad_nul_padding);
    TL_RUN(test_bad_long_name_message);
    TL_RUN(test_writer_overwrite);
    TL_RUN(test_writer_missing_directory);
    TL_RUN(test_writer_failed_rename_cleans_up);
    TL_RUN(test_writer_rejects_bad_input);
    TL_RUN(test_writer_duplicate_name);
    remove_dir(g_dir);
    TL_MAIN_END();
}
