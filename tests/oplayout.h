/* oplayout.h — what the op tests share (test_cpu_ops, test_cuda_ops,
 * test_safetensors): float/bit conversions, and the strided NHWC layouts
 * the ops are tested on, a view inside a wider buffer as the planner makes
 * them (concat slices, padded images).  Header-only: each test is one
 * program.  Uses testlib.h (tl_int) and engine/tensor.h (strix_view). */
#ifndef STRIX_TEST_OPLAYOUT_H
#define STRIX_TEST_OPLAYOUT_H

#include <stdint.h>
#include <string.h>

#include "tensor.h"
#include "testlib.h"

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* A view inside a wider buffer: `extra` more channels per pixel (the view
 * starts at channel c0 <= extra), `batch_extra` more elements per image. */
typedef struct layout {
    int n, h, w, c;
    int extra, c0, batch_extra;
} layout;

/* [n, h, w, c], dense or (strided) inside a random wider buffer. */
static inline layout layout_make(int n, int h, int w, int c, int strided)
{
    layout l = {n, h, w, c, 0, 0, 0};
    if (strided) {
        l.extra = tl_int(1, 9);
        l.c0 = tl_int(0, l.extra);
        l.batch_extra = tl_int(0, 5);
    }
    return l;
}

/* The same with the channel offset, pixel padding and image padding
 * multiples of `align` (0 or 1: any), as the network's 8-channel-aligned
 * slices are: the vectorised kernel paths then take the view. */
static inline layout layout_make_aligned(int n, int h, int w, int c, int strided, int align)
{
    layout l = layout_make(n, h, w, c, strided);
    if (align > 1 && strided) {
        l.extra = align * tl_int(1, 2) + (c % align ? align - c % align : 0);
        l.c0 = align * tl_int(0, l.extra / align - (c % align ? 1 : 0));
        l.batch_extra = align * tl_int(0, 1);
    }
    return l;
}

/* Elements of the whole buffer the view lives in. */
static inline size_t layout_len(const layout *l)
{
    return (size_t)l->n * ((size_t)l->h * l->w * (l->c + l->extra) + l->batch_extra);
}

/* Index in that buffer of the view's element (n, y, x, c). */
static inline size_t layout_index(const layout *l, int n, int y, int x, int c)
{
    size_t ps = (size_t)l->c + l->extra, bs = (size_t)l->h * l->w * ps + l->batch_extra;
    return (size_t)n * bs + ((size_t)y * l->w + x) * ps + l->c0 + c;
}

/* The view over a host fp32 buffer. */
static inline strix_view host_view(const layout *l, float *base)
{
    size_t ps = (size_t)l->c + l->extra;
    strix_view v = {base + l->c0, l->n, l->h, l->w, l->c, ps, (size_t)l->h * l->w * ps + l->batch_extra};
    return v;
}

#endif
