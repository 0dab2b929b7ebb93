/* conv_lowp.c — the reduced-precision convolutions' shared driver (see
 * conv_lowp.h): the workspace plan, the conversion and im2col, the team's
 * tasks, the epilogue.  Each output's sum is the precision's GEMM over the
 * whole depth, so the result does not depend on threads or blocking. */
#include "conv_lowp.h"

#include <assert.h>
#include <string.h>

#include "conv_isa.h"

#define MC_MAX 96 /* rows per block at most */

typedef struct lplan {
    int threads;
    int m;      /* output pixels per image */
    int mc;     /* rows per block, a multiple of mr */
    int direct; /* A is the converted input itself */
    size_t img_bytes, a_bytes, s_bytes, t_bytes; /* converted input; per thread: A block, GEMM scratch, tile */
} lplan;

static size_t round_up(size_t n) { return STRIX_CEIL_DIV(n, WS_ALIGN) * WS_ALIGN; }

static lplan make_lplan(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                        const strix_lowp *lp, int threads)
{
    lplan pl;
    memset(&pl, 0, sizeof pl);
    pl.threads = threads < 1 ? 1 : threads;
    pl.m = out->h * out->w;
    pl.direct = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0 &&
                in->c % lp->cin_align == 0;
    pl.mc = strix_cpu_row_block(pl.m, out->n, pl.threads, lp->mr, MC_MAX);
    pl.img_bytes = round_up((size_t)in->n * in->h * in->w * in->c * lp->esize);
    pl.a_bytes = round_up((size_t)pl.mc * lp->kpad * lp->esize);
    pl.s_bytes = round_up((size_t)pl.mc * lp->scratch_bytes);
    pl.t_bytes = round_up((size_t)pl.mc * lp->npad * sizeof(float));
    return pl;
}

size_t strix_lowp_workspace(const strix_view *out, const strix_view *in, const strix_conv_params *p,
                            const strix_lowp *lp, int threads)
{
    lplan pl = make_lplan(out, in, p, lp, threads);
    return pl.img_bytes + (size_t)pl.threads * (pl.a_bytes + pl.s_bytes + pl.t_bytes) + WS_ALIGN;
}

/* im2col of rows [m0, m0 + rows) of one image (img: its converted input)
 * into ap [rows_pad][kpad] elements. */
static void im2col(uint8_t *ap, const uint8_t *img, const strix_lowp *lp, const strix_view *in,
                   const strix_conv_params *p, int ow, int m0, int rows, int rows_pad)
{
    size_t cin = (size_t)in->c * lp->esize, row = (size_t)lp->kpad * lp->esize;
    for (int i = 0; i < rows_pad; i++) {
        uint8_t *dst = ap + (size_t)i * row;
        if (i >= rows) {
            memset(dst, lp->fill, row);
            continue;
        }
        int m = m0 + i;
        int iy0 = (m / ow) * p->sh - p->ph, ix0 = (m % ow) * p->sw - p->pw;
        for (int ky = 0; ky < p->kh; ky++) {
            int iy = iy0 + ky * p->dh;
            for (int kx = 0; kx < p->kw; kx++) {
                int ix = ix0 + kx * p->dw;
                uint8_t *d = dst + (size_t)(ky * p->kw + kx) * cin;
                if (iy >= 0 && iy < in->h && ix >= 0 && ix < in->w)
                    memcpy(d, img + ((size_t)iy * in->w + ix) * cin, cin);
                else
                    memset(d, lp->fill, cin);
            }
        }
        memset(dst + (size_t)lp->k * lp->esize, lp->fill, (size_t)(lp->kpad - lp->k) * lp->esize);
    }
}

/* What the team's tasks share. */
typedef struct lrun {
    const strix_view *out, *in, *residual;
    const strix_lowp *lp;
    const float *bias;
    const strix_conv_params *p;
    strix_cpu_isa epi_isa;
    lplan pl;
    uint8_t *img;
    int blocks;
} lrun;

/* Task: image row `row` of the input converted into img. */
static void convert_task(void *ctx, int row, int worker)
{
    (void)worker;
    const lrun *r = ctx;
    const strix_view *in = r->in;
    int n = row / in->h, y = row % in->h, cin = in->c;
    size_t es = r->lp->esize;
    uint8_t *dst = r->img + ((size_t)n * in->h + y) * in->w * cin * es;
    if (in->pix_stride == (size_t)cin) /* dense: the whole image row at once */
        r->lp->convert(r->lp->op, dst, strix_view_at(in, n, y, 0), in->w * cin);
    else
        for (int x = 0; x < in->w; x++)
            r->lp->convert(r->lp->op, dst + (size_t)x * cin * es, strix_view_at(in, n, y, x), cin);
}

/* Task: one block of rows of one image, in the worker's scratch: the GEMM
 * into the fp32 tile, then the epilogue into out. */
static void gemm_task(void *ctx, int t, int worker)
{
    const lrun *r = ctx;
    const lplan *pl = &r->pl;
    const strix_lowp *lp = r->lp;
    const strix_view *in = r->in, *out = r->out;
    uint8_t *ap = r->img + pl->img_bytes + (size_t)worker * (pl->a_bytes + pl->s_bytes + pl->t_bytes);
    float *ft = (float *)(ap + pl->a_bytes + pl->s_bytes);
    int n = t / r->blocks, m0 = (t % r->blocks) * pl->mc;
    int rows = pl->m - m0 < pl->mc ? pl->m - m0 : pl->mc;
    const uint8_t *img = r->img + (size_t)n * in->h * in->w * in->c * lp->esize;
    int full = pl->direct ? rows / lp->mr * lp->mr : 0; /* rows read in place */
    int rest = rows - full, rest_pad = STRIX_CEIL_DIV(rest, lp->mr) * lp->mr;
    if (rest) im2col(ap, img, lp, in, r->p, out->w, m0 + full, rest, rest_pad);
    lp->gemm(lp->op, img + (size_t)m0 * in->c * lp->esize, (size_t)in->c, full, ap, rest_pad, ap + pl->a_bytes, ft);
    float *o = out->data + (size_t)n * out->batch_stride + (size_t)m0 * out->pix_stride;
    const float *res = NULL;
    size_t ldr = 0;
    if (r->residual) {
        res = r->residual->data + (size_t)n * r->residual->batch_stride + (size_t)m0 * r->residual->pix_stride;
        ldr = r->residual->pix_stride;
    }
    strix_cpu_conv_epilogue(r->epi_isa, o, out->pix_stride, ft, (size_t)lp->npad, r->bias, res, ldr, rows, lp->cout,
                            r->p->act);
}

void strix_lowp_conv2d(const strix_view *out, const strix_view *in, const strix_lowp *lp, const float *bias,
                       const strix_view *residual, const strix_conv_params *p, strix_cpu_isa epi_isa,
                       void *workspace, strix_cpu_team *team)
{
    assert(p->groups == 1 && in->n == out->n && out->c == lp->cout);
    assert(lp->k == p->kh * p->kw * in->c);
    if (out->n == 0 || out->h == 0 || out->w == 0 || out->c == 0) return;
    lrun r = {out, in, residual, lp, bias, p, epi_isa, make_lplan(out, in, p, lp, strix_cpu_team_threads(team)),
              NULL, 0};
    r.img = (uint8_t *)(((uintptr_t)workspace + WS_ALIGN - 1) & ~(uintptr_t)(WS_ALIGN - 1));
    r.blocks = STRIX_CEIL_DIV(r.pl.m, r.pl.mc);
    /* every element is converted before any block reads it: the first loop returns first */
    strix_cpu_team_run(team, in->n * in->h, convert_task, &r);
    strix_cpu_team_run(team, out->n * r.blocks, gemm_task, &r);
}
