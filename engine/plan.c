/* plan.c — shapes and memory for one (N, H, W): every buffer's size, a
 * liveness-based arena layout (buffers whose lifetimes do not overlap share
 * memory) and the largest per-op workspace.  Plan once, run many: the
 * executor allocates nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "graph.h"
#include "util.h"

#define ALIGN_FLOATS 16 /* 64-byte alignment for every buffer in the arena */

static size_t align_up(size_t x) { return (x + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

void strix_plan_free(strix_plan *pl)
{
    free(pl->val_h);
    free(pl->val_w);
    free(pl->buf_h);
    free(pl->buf_w);
    free(pl->buf_elems);
    free(pl->buf_off);
    memset(pl, 0, sizeof *pl);
}

strix_view strix_plan_layout(const strix_plan *pl, const strix_program *p, int v, size_t *offset)
{
    const strix_value *val = &p->values[v];
    const strix_buffer *b = &p->bufs[val->buf];
    size_t off = pl->buf_off[val->buf] + (size_t)val->c0;
    strix_view view;
    if (b->kind == STRIX_BUF_SPATIAL) {
        int h = pl->buf_h[val->buf], w = pl->buf_w[val->buf];
        view = (strix_view){NULL, pl->n, h, w, val->c, (size_t)b->c, (size_t)h * w * b->c};
    } else if (val->level >= 0) {
        int l = val->level;
        off += pl->level_anchor0[l] * b->c;
        view = (strix_view){NULL, pl->n, pl->decode.level_h[l], pl->decode.level_w[l], val->c, (size_t)b->c,
                            pl->anchors * b->c};
    } else {
        view = (strix_view){NULL, pl->n, 1, (int)pl->anchors, val->c, (size_t)b->c, pl->anchors * b->c};
    }
    *offset = off;
    return view;
}

strix_view strix_plan_view(const strix_plan *pl, const strix_program *p, float *arena, int v)
{
    size_t off;
    strix_view view = strix_plan_layout(pl, p, v, &off);
    view.data = arena + off;
    return view;
}

static int conv_out(int x, int k, int s, int pad, int d) { return (x + 2 * pad - d * (k - 1) - 1) / s + 1; }

/* Record that value v has spatial size (h, w); buffers shared by several
 * values (Concat, C2f) must agree. */
static strix_status set_shape(strix_plan *pl, const strix_program *p, int v, int h, int w,
                              int layer, strix_error *err)
{
    const strix_value *val = &p->values[v];
    if (h < 1 || w < 1)
        return strix_fail(err, STRIX_E_ARG, "layer %d: input %dx%d is too small for this network (needs at least one pixel after every stride)",
                          layer, pl->w, pl->h);
    if (val->level >= 0) {
        pl->decode.level_h[val->level] = h;
        pl->decode.level_w[val->level] = w;
    } else if (p->bufs[val->buf].kind == STRIX_BUF_SPATIAL) {
        int *bh = &pl->buf_h[val->buf], *bw = &pl->buf_w[val->buf];
        if (*bh && (*bh != h || *bw != w))
            return strix_fail(err, STRIX_E_ARG,
                              "layer %d: Concat inputs of %dx%d and %dx%d differ; the input size %dx%d "
                              "must be a multiple of the model stride",
                              layer, *bw, *bh, w, h, pl->w, pl->h);
        *bh = h;
        *bw = w;
    }
    return STRIX_OK;
}

/* Spatial size of value v: its buffer's, or its Detect level's. */
static void value_dims(const strix_plan *pl, const strix_program *p, int v, int *h, int *w)
{
    const strix_value *val = &p->values[v];
    if (val->level >= 0) {
        *h = pl->decode.level_h[val->level];
        *w = pl->decode.level_w[val->level];
    } else {
        *h = pl->buf_h[val->buf];
        *w = pl->buf_w[val->buf];
    }
}

strix_status strix_plan_build(strix_plan *pl, const strix_program *p, int n, int h, int w,
                              int threads, strix_error *err)
{
    memset(pl, 0, sizeof *pl);
    if (n < 1 || h < 1 || w < 1 || h > 16384 || w > 16384 || n > 4096)
        return strix_fail(err, STRIX_E_ARG, "batch %d of %dx%d is outside 1..4096 of up to 16384x16384", n, w, h);
    pl->n = n, pl->h = h, pl->w = w;
    pl->threads = threads < 1 ? 1 : threads;
    int nv = p->n_values, nb = p->n_bufs;
    pl->val_h = calloc((size_t)nv, sizeof(int));
    pl->val_w = calloc((size_t)nv, sizeof(int));
    pl->buf_h = calloc((size_t)nb, sizeof(int));
    pl->buf_w = calloc((size_t)nb, sizeof(int));
    pl->buf_elems = calloc((size_t)nb, sizeof(size_t));
    pl->buf_off = calloc((size_t)nb, sizeof(size_t));
    int *first = malloc(sizeof(int) * (size_t)nb), *last = malloc(sizeof(int) * (size_t)nb);
    int *order = malloc(sizeof(int) * (size_t)nb);
    strix_status st = STRIX_OK;
    if (!pl->val_h || !pl->val_w || !pl->buf_h || !pl->buf_w || !pl->buf_elems || !pl->buf_off ||
        !first || !last || !order) {
        st = strix_fail(err, STRIX_E_NOMEM, "out of memory while planning");
        goto done;
    }
    if ((st = set_shape(pl, p, p->input, h, w, 0, err))) goto done;

    /* 1. shapes, in program order */
    for (int i = 0; i < p->n_nodes && !st; i++) {
        const strix_node *nd = &p->nodes[i];
        int ih, iw;
        value_dims(pl, p, nd->in, &ih, &iw);
        switch (nd->op) {
        case STRIX_OP_CONV:
            st = set_shape(pl, p, nd->out, conv_out(ih, nd->conv.kh, nd->conv.sh, nd->conv.ph, nd->conv.dh),
                           conv_out(iw, nd->conv.kw, nd->conv.sw, nd->conv.pw, nd->conv.dw), nd->layer, err);
            break;
        case STRIX_OP_MAXPOOL:
            st = set_shape(pl, p, nd->out, conv_out(ih, nd->pool.k, nd->pool.stride, nd->pool.pad, 1),
                           conv_out(iw, nd->pool.k, nd->pool.stride, nd->pool.pad, 1), nd->layer, err);
            break;
        case STRIX_OP_UPSAMPLE:
            st = set_shape(pl, p, nd->out, ih * nd->scale, iw * nd->scale, nd->layer, err);
            break;
        case STRIX_OP_COPY:
            st = set_shape(pl, p, nd->out, ih, iw, nd->layer, err);
            break;
        case STRIX_OP_ATTENTION:
            st = set_shape(pl, p, nd->out, ih, iw, nd->layer, err);
            if (!st) st = set_shape(pl, p, nd->out2, ih, iw, nd->layer, err);
            break;
        case STRIX_OP_SHUFFLE2:
            st = set_shape(pl, p, nd->out, 2 * ih, 2 * iw, nd->layer, err);
            break;
        case STRIX_OP_ADD:
        case STRIX_OP_SOFTMAX:
            st = set_shape(pl, p, nd->out, ih, iw, nd->layer, err);
            break;
        case STRIX_OP_AVGPOOL:
            st = set_shape(pl, p, nd->out, 1, 1, nd->layer, err);
            break;
        case STRIX_OP_DECODE:
            break;
        }
    }
    if (st) goto done;
    for (int v = 0; v < nv; v++) value_dims(pl, p, v, &pl->val_h[v], &pl->val_w[v]);

    /* 2. Detect levels: strides as Ultralytics derives them (input / level size) */
    pl->decode.nc = p->nc;
    pl->decode.reg_max = p->reg_max;
    pl->decode.levels = p->levels;
    pl->decode.extra = p->extra;
    pl->decode.kind = p->task == STRIX_TASK_SEGMENT ? STRIX_EXTRA_COPY
                    : p->task == STRIX_TASK_POSE    ? STRIX_EXTRA_KPT
                    : p->task == STRIX_TASK_OBB     ? STRIX_EXTRA_ANGLE
                                                    : STRIX_EXTRA_NONE;
    pl->decode.kpt_d = p->kpt_d;
    pl->decode.v26 = p->v26;
    for (int l = 0; l < p->levels; l++) {
        int lh = pl->decode.level_h[l], lw = pl->decode.level_w[l];
        /* level_stride is 0 only while the model derives its strides (at 256x256) */
        if (!lh || h % lh || w % lw || h / lh != w / lw ||
            (p->level_stride[l] && h / lh != p->level_stride[l])) {
            st = strix_fail(err, STRIX_E_ARG, "input %dx%d is not a multiple of the model stride %d",
                            w, h, p->level_stride[p->levels - 1]);
            goto done;
        }
        pl->decode.level_stride[l] = h / lh;
        pl->level_anchor0[l] = pl->anchors;
        pl->anchors += (size_t)lh * lw;
    }

    /* 3. sizes and lifetimes */
    for (int b = 0; b < nb; b++) {
        const strix_buffer *bf = &p->bufs[b];
        pl->buf_elems[b] = bf->kind == STRIX_BUF_SPATIAL ? (size_t)pl->buf_h[b] * pl->buf_w[b] * bf->c
                                                         : pl->anchors * bf->c;
        first[b] = INT32_MAX;
        last[b] = -1;
        order[b] = b;
    }
    first[p->values[p->input].buf] = -1;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        int outs[2] = {nd->out, nd->out2}, ins[2] = {nd->in, nd->res};
        for (int k = 0; k < 2; k++) {
            if (outs[k] >= 0) {
                int b = p->values[outs[k]].buf;
                if (first[b] > i) first[b] = i;
                if (last[b] < i) last[b] = i;
            }
            if (ins[k] >= 0) {
                int b = p->values[ins[k]].buf;
                if (last[b] < i) last[b] = i;
            }
        }
    }
    last[p->out_buf] = p->n_nodes; /* read by the host after the run */
    if (p->proto >= 0) last[p->values[p->proto].buf] = p->n_nodes; /* so are the protos (strix_model_protos) */
    for (int l = 0; p->keep_levels && l < p->levels; l++) /* and Detect's inputs, for native ReID */
        last[p->values[p->level_in[l]].buf] = p->n_nodes;

    /* 4. arena: largest first, each at the lowest offset clear of every
     * already-placed buffer alive at the same time */
    for (int i = 1; i < nb; i++) {
        int b = order[i], j = i;
        while (j > 0 && pl->buf_elems[order[j - 1]] < pl->buf_elems[b]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = b;
    }
    for (int i = 0; i < nb; i++) {
        int b = order[i];
        size_t size = align_up(pl->buf_elems[b] * (size_t)n), off = 0;
        for (int again = 1; again;) {
            again = 0;
            for (int j = 0; j < i; j++) {
                int o = order[j];
                if (first[o] > last[b] || first[b] > last[o]) continue;
                size_t osz = align_up(pl->buf_elems[o] * (size_t)n);
                if (off < pl->buf_off[o] + osz && pl->buf_off[o] < off + size) {
                    off = pl->buf_off[o] + osz;
                    again = 1;
                }
            }
        }
        pl->buf_off[b] = off;
        if (off + size > pl->arena_floats) pl->arena_floats = off + size;
    }

    /* 5. the largest workspace any op asks for */
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        size_t ws = 0;
        if (nd->op == STRIX_OP_CONV) {
            size_t off;
            strix_view o = strix_plan_layout(pl, p, nd->out, &off), in = strix_plan_layout(pl, p, nd->in, &off);
            ws = strix_cpu_conv2d_workspace(&o, &in, &nd->conv, pl->threads);
        } else if (nd->op == STRIX_OP_ATTENTION) {
            size_t off;
            strix_view q = strix_plan_layout(pl, p, nd->in, &off);
            ws = strix_cpu_attention_workspace(&q, &nd->attn, pl->threads);
        }
        if (ws > pl->workspace_bytes) pl->workspace_bytes = ws;
    }
done:
    free(first);
    free(last);
    free(order);
    if (st) strix_plan_free(pl);
    return st;
}

void strix_plan_macs(const strix_plan *pl, const strix_program *p, double *conv_macs,
                     double *bn_ops, double *per_layer_macs)
{
    double macs = 0, bn = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        double m = 0;
        if (nd->op == STRIX_OP_CONV) {
            double out = (double)pl->val_h[nd->out] * pl->val_w[nd->out] * nd->cout;
            m = out * (nd->cin / nd->conv.groups) * nd->conv.kh * nd->conv.kw;
            if (!nd->plain) bn += 4.0 * out; /* thop: 2 per element, doubled for the affine part */
        } else if (nd->op == STRIX_OP_UPSAMPLE && !nd->functional) {
            /* Ultralytics' published GFLOPs (an older thop) count one op per
             * upsampled element; without it yolov8l reads 165.1, not 165.2 */
            m = (double)pl->val_h[nd->out] * pl->val_w[nd->out] * p->values[nd->out].c;
        } else if (nd->op == STRIX_OP_AVGPOOL) {
            /* thop: one add per pooled input, one divide per output */
            double in = (double)pl->val_h[nd->in] * pl->val_w[nd->in];
            m = (in + 1) * p->values[nd->out].c;
        } else if (nd->op == STRIX_OP_DECODE) {
            /* DFL: a 1x1 conv of reg_max bins to 1; none when reg_max is 1 */
            m = p->reg_max > 1 ? (double)pl->anchors * 4 * p->reg_max : 0;
        }
        macs += m;
        if (per_layer_macs) per_layer_macs[nd->layer] += m;
    }
    *conv_macs = macs * pl->n;
    *bn_ops = bn * pl->n;
}
