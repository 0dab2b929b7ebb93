/* pbwrite.h — a protobuf message written field by field, for the tests that
 * make ONNX files (test_loaders.c, fuzz/seeds_onnx.c): varints, length-
 * delimited bytes, strings and sub-messages.  Running out of memory sets
 * oom (and carries into the enclosing message) rather than stopping. */
#ifndef STRIX_TESTS_PBWRITE_H
#define STRIX_TESTS_PBWRITE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
    uint8_t *p;
    size_t n, cap;
    int oom;
} pb;

static inline void pb_raw(pb *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t c = (b->n + n) * 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static inline void pb_varint(pb *b, uint64_t v)
{
    uint8_t x[10];
    int k = 0;
    do {
        x[k++] = (uint8_t)((v & 127) | (v > 127 ? 128 : 0));
        v >>= 7;
    } while (v);
    pb_raw(b, x, (size_t)k);
}

/* A varint field (wire type 0). */
static inline void pb_int(pb *b, int field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

static inline void pb_bytes(pb *b, int field, const void *d, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    pb_raw(b, d, n);
}

static inline void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

/* Appends m as field of b, then frees and empties m (ready for reuse). */
static inline void pb_msg(pb *b, int field, pb *m)
{
    pb_bytes(b, field, m->p, m->n);
    b->oom |= m->oom;
    free(m->p);
    memset(m, 0, sizeof *m);
}

#endif
