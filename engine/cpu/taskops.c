/* taskops.c — the CPU ops of the task heads: ConvTranspose2d(k=2, s=2)'s
 * scatter (its GEMM is a 1x1 convolution, conv.c), Proto26's elementwise
 * sum, Classify's global average pool and softmax.  Strided NHWC fp32 views
 * ([N, H, W, C]), parallel over output rows (n, y) like pool.c.
 */
#include <assert.h>
#include <math.h>

#include "ops.h"

typedef struct task_job {
    const strix_view *out, *a, *b;
} task_job;

static void shuffle2_row(void *ctx, int row, int worker)
{
    const task_job *j = ctx;
    const strix_view *out = j->out, *in = j->a;
    (void)worker;
    int n = row / out->h, oy = row % out->h, c = out->c, dy = oy & 1;
    for (int ox = 0; ox < out->w; ox++) {
        const float *s = strix_view_at(in, n, oy >> 1, ox >> 1) + (size_t)(dy * 2 + (ox & 1)) * c;
        float *o = strix_view_at(out, n, oy, ox);
        for (int k = 0; k < c; k++) o[k] = s[k];
    }
}

void strix_cpu_shuffle2(const strix_view *out, const strix_view *in, strix_cpu_team *team)
{
    assert(out->n == in->n && out->h == 2 * in->h && out->w == 2 * in->w && in->c == 4 * out->c);
    task_job j = {out, in, NULL};
    strix_cpu_team_run(team, out->n * out->h, shuffle2_row, &j);
}

static void add_row(void *ctx, int row, int worker)
{
    const task_job *j = ctx;
    const strix_view *out = j->out;
    (void)worker;
    int n = row / out->h, y = row % out->h;
    for (int x = 0; x < out->w; x++) {
        const float *a = strix_view_at(j->a, n, y, x), *b = strix_view_at(j->b, n, y, x);
        float *o = strix_view_at(out, n, y, x);
        for (int k = 0; k < out->c; k++) o[k] = a[k] + b[k];
    }
}

void strix_cpu_add(const strix_view *out, const strix_view *a, const strix_view *b, strix_cpu_team *team)
{
    assert(out->n == a->n && out->h == a->h && out->w == a->w && out->c == a->c);
    assert(out->n == b->n && out->h == b->h && out->w == b->w && out->c == b->c);
    task_job j = {out, a, b};
    strix_cpu_team_run(team, out->n * out->h, add_row, &j);
}

/* Task t: one image; sums in double, then rounds once (PyTorch's mean
 * accumulates in float with a tree; the difference is below fp32's step at
 * Classify's map sizes). */
static void avgpool_image(void *ctx, int n, int worker)
{
    const task_job *j = ctx;
    const strix_view *in = j->a;
    (void)worker;
    float *o = strix_view_at(j->out, n, 0, 0);
    double inv = 1.0 / ((double)in->h * in->w);
    for (int k = 0; k < in->c; k++) {
        double s = 0;
        for (int y = 0; y < in->h; y++)
            for (int x = 0; x < in->w; x++) s += strix_view_at(in, n, y, x)[k];
        o[k] = (float)(s * inv);
    }
}

void strix_cpu_avgpool_global(const strix_view *out, const strix_view *in, strix_cpu_team *team)
{
    assert(out->n == in->n && out->h == 1 && out->w == 1 && out->c == in->c);
    task_job j = {out, in, NULL};
    strix_cpu_team_run(team, out->n, avgpool_image, &j);
}

static void softmax_row(void *ctx, int row, int worker)
{
    const task_job *j = ctx;
    const strix_view *out = j->out;
    (void)worker;
    int n = row / out->h, y = row % out->h;
    for (int x = 0; x < out->w; x++) {
        const float *s = strix_view_at(j->a, n, y, x);
        float *o = strix_view_at(out, n, y, x), mx = s[0];
        for (int k = 1; k < out->c; k++) mx = s[k] > mx ? s[k] : mx;
        float sum = 0.0f;
        for (int k = 0; k < out->c; k++) sum += o[k] = expf(s[k] - mx);
        for (int k = 0; k < out->c; k++) o[k] /= sum;
    }
}

void strix_cpu_softmax(const strix_view *out, const strix_view *in, strix_cpu_team *team)
{
    assert(out->n == in->n && out->h == in->h && out->w == in->w && out->c == in->c);
    task_job j = {out, in, NULL};
    strix_cpu_team_run(team, out->n * out->h, softmax_row, &j);
}
