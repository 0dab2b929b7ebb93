/* pool.c — the CPU data-movement operators: max pooling, nearest upsampling
 * and view-to-view copy.  All views are strided NHWC fp32 ([N, H, W, C]);
 * each op works on whole pixels (C contiguous floats) and parallelises over
 * output rows (n, y).
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "ops.h"

/* The ops' arguments, for the team's task functions (one output row each). */
typedef struct rows_job {
    const strix_view *out, *in;
    const strix_pool_params *p;
    int scale;
} rows_job;

static void maxpool_row(void *ctx, int row, int worker)
{
    const rows_job *j = ctx;
    const strix_view *out = j->out, *in = j->in;
    const strix_pool_params *p = j->p;
    (void)worker;
    int c_all = out->c;
    {
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

void strix_cpu_maxpool2d(const strix_view *out, const strix_view *in,
                         const strix_pool_params *p, strix_cpu_team *team)
{
    assert(out->n == in->n && out->c == in->c);
    assert(out->h == (in->h + 2 * p->pad - p->k) / p->stride + 1);
    assert(out->w == (in->w + 2 * p->pad - p->k) / p->stride + 1);
    rows_job j = {out, in, p, 0};
    strix_cpu_team_run(team, out->n * out->h, maxpool_row, &j);
}

static void upsample_row(void *ctx, int row, int worker)
{
    const rows_job *j = ctx;
    const strix_view *out = j->out, *in = j->in;
    (void)worker;
    int n = row / out->h, oy = row % out->h;
    size_t bytes = (size_t)out->c * sizeof(float);
    for (int ox = 0; ox < out->w; ox++)
        memcpy(strix_view_at(out, n, oy, ox), strix_view_at(in, n, oy / j->scale, ox / j->scale), bytes);
}

void strix_cpu_upsample_nearest(const strix_view *out, const strix_view *in, int scale,
                                strix_cpu_team *team)
{
    assert(out->n == in->n && out->c == in->c);
    assert(out->h == in->h * scale && out->w == in->w * scale);
    rows_job j = {out, in, NULL, scale};
    strix_cpu_team_run(team, out->n * out->h, upsample_row, &j);
}

static void copy_row(void *ctx, int row, int worker)
{
    const rows_job *j = ctx;
    const strix_view *out = j->out, *in = j->in;
    (void)worker;
    int n = row / out->h, y = row % out->h;
    size_t bytes = (size_t)out->c * sizeof(float);
    if (out->pix_stride == (size_t)out->c && in->pix_stride == (size_t)in->c) {
        /* both rows dense: one block */
        memcpy(strix_view_at(out, n, y, 0), strix_view_at(in, n, y, 0), bytes * out->w);
        return;
    }
    for (int x = 0; x < out->w; x++)
        memcpy(strix_view_at(out, n, y, x), strix_view_at(in, n, y, x), bytes);
}

void strix_cpu_copy(const strix_view *out, const strix_view *in, strix_cpu_team *team)
{
    assert(out->n == in->n && out->h == in->h && out->w == in->w && out->c == in->c);
    rows_job j = {out, in, NULL, 0};
    strix_cpu_team_run(team, out->n * out->h, copy_row, &j);
}
