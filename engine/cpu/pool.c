/* pool.c — the CPU data-movement operators: max pooling, nearest upsampling
 * and view-to-view copy.  All views are strided NHWC fp32 ([N, H, W, C]);
 * each op works on whole pixels (C contiguous floats) and parallelises over
 * output rows (n, y).
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "omp.h"
#include "ops.h"

void strix_cpu_maxpool2d(const strix_view *out, const strix_view *in,
                         const strix_pool_params *p, int threads)
{
    assert(out->n == in->n && out->c == in->c);
    assert(out->h == (in->h + 2 * p->pad - p->k) / p->stride + 1);
    assert(out->w == (in->w + 2 * p->pad - p->k) / p->stride + 1);
    (void)threads; /* read only by the OpenMP directives */
    int rows = out->n * out->h, c_all = out->c;
    OMP(omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static))
    for (int row = 0; row < rows; row++) {
        int n = row / out->h, oy = row % out->h;
        /* the window clipped to the image: padding is -inf, so it never wins */
        int y0 = oy * p->stride - p->pad, y1 = y0 + p->k;
        y0 = y0 < 0 ? 0 : y0;
        y1 = y1 > in->h ? in->h : y1;
        for (int ox = 0; ox < out->w; ox++) {
            int x0 = ox * p->stride - p->pad, x1 = x0 + p->k;
            x0 = x0 < 0 ? 0 : x0;
            x1 = x1 > in->w ? in->w : x1;
            float *o = strix_view_at(out, n, oy, ox);
            for (int c = 0; c < c_all; c++) o[c] = -INFINITY;
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++) {
                    const float *s = strix_view_at(in, n, y, x);
                    /* NaN wins, as in PyTorch */
                    for (int c = 0; c < c_all; c++)
                        o[c] = (s[c] > o[c] || s[c] != s[c]) ? s[c] : o[c];
                }
        }
    }
}

void strix_cpu_upsample_nearest(const strix_view *out, const strix_view *in, int scale,
                                int threads)
{
    assert(out->n == in->n && out->c == in->c);
    assert(out->h == in->h * scale && out->w == in->w * scale);
    (void)threads; /* read only by the OpenMP directives */
    int rows = out->n * out->h;
    size_t bytes = (size_t)out->c * sizeof(float);
    OMP(omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static))
    for (int row = 0; row < rows; row++) {
        int n = row / out->h, oy = row % out->h;
        for (int ox = 0; ox < out->w; ox++)
            memcpy(strix_view_at(out, n, oy, ox), strix_view_at(in, n, oy / scale, ox / scale),
                   bytes);
    }
}

void strix_cpu_copy(const strix_view *out, const strix_view *in, int threads)
{
    assert(out->n == in->n && out->h == in->h && out->w == in->w && out->c == in->c);
    (void)threads; /* read only by the OpenMP directives */
    int rows = out->n * out->h;
    size_t bytes = (size_t)out->c * sizeof(float);
    OMP(omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static))
    for (int row = 0; row < rows; row++) {
        int n = row / out->h, y = row % out->h;
        if (out->pix_stride == (size_t)out->c && in->pix_stride == (size_t)in->c) {
            /* both rows dense: one block */
            memcpy(strix_view_at(out, n, y, 0), strix_view_at(in, n, y, 0), bytes * out->w);
            continue;
        }
        for (int x = 0; x < out->w; x++)
            memcpy(strix_view_at(out, n, y, x), strix_view_at(in, n, y, x), bytes);
    }
}
