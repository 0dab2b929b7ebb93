/* tensor.h — strided NHWC fp32 views, the currency between the planner and the ops.
 *
 * A view addresses element (n, y, x, c) at
 *     data[n * batch_stride + (y * w + x) * pix_stride + c]
 * so a channel slice of a wider buffer (a Concat input, a C2f chunk, one
 * Detect level inside the head tensor) is just a view with pix_stride larger
 * than c and data pointing at the slice's first channel.
 */
#ifndef STRIX_TENSOR_H
#define STRIX_TENSOR_H

#include <stddef.h>

typedef struct strix_view {
    float *data;
    int n, h, w, c;
    size_t pix_stride;   /* elements between neighbouring pixels (>= c) */
    size_t batch_stride; /* elements between neighbouring images (>= h*w*pix_stride) */
} strix_view;

/* A dense [n, h, w, c] view over data. */
static inline strix_view strix_view_dense(float *data, int n, int h, int w, int c)
{
    strix_view v = {data, n, h, w, c, (size_t)c, (size_t)h * w * c};
    return v;
}

/* Channels [c0, c0 + nc) of v. */
static inline strix_view strix_view_slice(strix_view v, int c0, int nc)
{
    v.data += c0;
    v.c = nc;
    return v;
}

static inline float *strix_view_at(const strix_view *v, int n, int y, int x)
{
    return v->data + (size_t)n * v->batch_stride + ((size_t)y * v->w + x) * v->pix_stride;
}

#define STRIX_CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

#endif
