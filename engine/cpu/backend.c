/* backend.c — the CPU backend (see backend.h): one switch on the op over
 * views of the host arena, and the forward and detect paths around it.
 *
 * Host memory, sized from the plan, grown only when a shape needs more:
 *   arena    pl->arena_floats floats, every buffer at pl->buf_off[b];
 *   ws       pl->workspace_bytes, the largest workspace any op asks for;
 *   scratch  detect's letterbox and NMS scratch;
 *   team     the plan's threads, blocking when idle (team.h);
 *   packed   every conv's weights packed at load for the micro-kernels of
 *            the instruction set chosen then (strix_cpu_packed);
 *   qws      the int8 or bf16 convolutions' workspace.
 *
 * int8 (opt-in, conv_int8.h): while calibrating, range[2i] and range[2i+1]
 * are the smallest and largest x seen at conv node i's input; once
 * quantised, q[i] holds node i's int8 weights (q[i].wp NULL: the node stays
 * fp32).
 * bf16 (precision BF16, conv_bf16.h): bq[i] holds node i's bf16 weights,
 * packed at load (bq[i].wp NULL: the node stays fp32).  The same nodes as
 * int8's (reduced_eligible). */
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conv_bf16.h"
#include "conv_int8.h"
#include "exec.h"
#include "ops.h"
#include "util.h"

typedef struct strix_cpu_backend {
    strix_backend base; /* first: the interface (engine/backend.h) */
    const strix_program *prog;
    const float *weights;
    const strix_plan *plan;
    strix_cpu_packed packed; /* the conv weights for the instruction set chosen at load (model.c) */
    strix_cpu_team *team;    /* the plan's threads (team.h), started by the first plan */
    int spin_us;             /* how long its idle threads poll before blocking */
    float *arena;
    size_t arena_cap;
    void *ws;
    size_t ws_cap;
    void *scratch;
    size_t scratch_cap;
    float *range;     /* [2 n_nodes] while calibrating, else NULL */
    strix_qconv *q;   /* [n_nodes] once quantised, else NULL */
    strix_bconv *bq;  /* [n_nodes] with precision BF16, else NULL */
    void *qws;
    size_t qws_cap;
} strix_cpu_backend;

strix_status strix_cpu_packed_build(strix_cpu_packed *pk, strix_cpu_isa isa, const strix_program *p,
                                    const float *weights, strix_error *err)
{
    memset(pk, 0, sizeof *pk);
    pk->isa = isa;
    pk->off = calloc((size_t)p->n_nodes + 1, sizeof *pk->off);
    if (!pk->off) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the packed weights' index");
    size_t total = 0, line = 64 / sizeof(float);
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        pk->off[i] = total;
        if (nd->op == STRIX_OP_CONV)
            total += STRIX_CEIL_DIV(strix_cpu_conv2d_packed_floats(isa, nd->cin, nd->cout, &nd->conv), line) * line;
    }
    pk->data = aligned_alloc(64, (total ? total : line) * sizeof(float));
    if (!pk->data) {
        strix_cpu_packed_free(pk);
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for the packed weights (%zu MB)",
                          total * sizeof(float) >> 20);
    }
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (nd->op == STRIX_OP_CONV)
            strix_cpu_conv2d_pack(isa, pk->data + pk->off[i], weights + nd->woff, nd->cin, nd->cout, &nd->conv);
    }
    return STRIX_OK;
}

void strix_cpu_packed_free(strix_cpu_packed *pk)
{
    free(pk->data);
    free(pk->off);
    pk->data = NULL;
    pk->off = NULL;
}

void strix_cpu_execute_node(const strix_cpu_packed *pk, strix_cpu_team *th, const strix_program *p,
                            const strix_plan *pl, const float *weights, float *arena, void *workspace, int i)
{
    const strix_node *nd = &p->nodes[i];
    if (nd->fused) return; /* ran with the node that heads its fusion */
    strix_view out = strix_plan_view(pl, p, arena, nd->out);
    strix_view in = strix_plan_view(pl, p, arena, nd->in);
    switch (nd->op) {
    case STRIX_OP_CONV: {
        strix_view res;
        if (nd->res >= 0) res = strix_plan_view(pl, p, arena, nd->res);
        if (pk)
            strix_cpu_conv2d_packed(pk->isa, &out, &in, pk->data + pk->off[i], weights + nd->boff,
                                    nd->res >= 0 ? &res : NULL, &nd->conv, workspace, th);
        else
            strix_cpu_conv2d(STRIX_CPU_ISA_AUTO, &out, &in, weights + nd->woff, weights + nd->boff,
                             nd->res >= 0 ? &res : NULL, &nd->conv, workspace, th);
        break;
    }
    case STRIX_OP_MAXPOOL:
        strix_cpu_maxpool2d(&out, &in, &nd->pool, th);
        for (int k = 1; k < nd->cascade; k++) { /* the rest of a fused cascade, in order */
            const strix_node *nx = &p->nodes[i + k];
            strix_view o = strix_plan_view(pl, p, arena, nx->out), x = strix_plan_view(pl, p, arena, nx->in);
            strix_cpu_maxpool2d(&o, &x, &nx->pool, th);
        }
        break;
    case STRIX_OP_UPSAMPLE: strix_cpu_upsample_nearest(&out, &in, nd->scale, th); break;
    case STRIX_OP_COPY: strix_cpu_copy(&out, &in, th); break;
    case STRIX_OP_ATTENTION: {
        strix_view v = strix_plan_view(pl, p, arena, nd->out2);
        strix_cpu_attention(&out, &v, &in, &nd->attn, workspace, th);
        break;
    }
    case STRIX_OP_DECODE:
        strix_cpu_detect_decode(out.data, in.data, pl->n, &pl->decode, th);
        break;
    case STRIX_OP_SHUFFLE2: strix_cpu_shuffle2(&out, &in, th); break;
    case STRIX_OP_ADD: {
        strix_view res = strix_plan_view(pl, p, arena, nd->res);
        strix_cpu_add(&out, &in, &res, th);
        break;
    }
    case STRIX_OP_AVGPOOL: strix_cpu_avgpool_global(&out, &in, th); break;
    case STRIX_OP_SOFTMAX: strix_cpu_softmax(&out, &in, th); break;
    }
}

static strix_status cpu_plan(strix_backend *base, const strix_plan *pl, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    b->plan = NULL;
    if (!strix_reserve((void **)&b->arena, &b->arena_cap, pl->arena_floats * sizeof(float)) ||
        !strix_reserve(&b->ws, &b->ws_cap, pl->workspace_bytes))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for a batch of %d at %dx%d (%zu MB)", pl->n, pl->w,
                          pl->h, pl->arena_floats * sizeof(float) >> 20);
    if (strix_cpu_team_threads(b->team) != (pl->threads > 1 ? pl->threads : 1)) {
        strix_cpu_team_free(b->team);
        b->team = NULL;
        strix_status st = strix_cpu_team_create(&b->team, pl->threads, b->spin_us, err);
        if (st) return st;
    }
    b->plan = pl;
    return STRIX_OK;
}

/* Widen r[0..1] to the smallest and largest element of a view (NaN ignored). */
static void view_range(const strix_view *v, float *r)
{
    for (int n = 0; n < v->n; n++)
        for (int y = 0; y < v->h; y++)
            for (int x = 0; x < v->w; x++) {
                const float *p = strix_view_at(v, n, y, x);
                for (int c = 0; c < v->c; c++) {
                    if (p[c] < r[0]) r[0] = p[c];
                    if (p[c] > r[1]) r[1] = p[c];
                }
            }
}

static strix_status cpu_run_op(strix_backend *base, int i, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    const strix_program *p = b->prog;
    const strix_node *nd = &p->nodes[i];
    if (nd->op == STRIX_OP_CONV && b->range) {
        strix_view in = strix_plan_view(b->plan, p, b->arena, nd->in);
        view_range(&in, b->range + 2 * i);
    }
    const strix_qconv *q = nd->op == STRIX_OP_CONV && b->q && b->q[i].wp ? &b->q[i] : NULL;
    const strix_bconv *bq = nd->op == STRIX_OP_CONV && b->bq && b->bq[i].wp ? &b->bq[i] : NULL;
    if (!q && !bq) {
        strix_cpu_execute_node(&b->packed, b->team, p, b->plan, b->weights, b->arena, b->ws, i);
        return STRIX_OK;
    }
    const strix_plan *pl = b->plan;
    strix_view out = strix_plan_view(pl, p, b->arena, nd->out), in = strix_plan_view(pl, p, b->arena, nd->in), res;
    if (nd->res >= 0) res = strix_plan_view(pl, p, b->arena, nd->res);
    size_t need = q ? strix_cpu_conv2d_int8_workspace(&out, &in, &nd->conv, q, pl->threads)
                    : strix_cpu_conv2d_bf16_workspace(&out, &in, &nd->conv, bq, pl->threads);
    if (!strix_reserve(&b->qws, &b->qws_cap, need))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for an %s convolution's workspace", q ? "int8" : "bf16");
    if (q)
        strix_cpu_conv2d_int8(&out, &in, q, b->weights + nd->boff, nd->res >= 0 ? &res : NULL, &nd->conv,
                              b->packed.isa, b->qws, b->team);
    else
        strix_cpu_conv2d_bf16(&out, &in, bq, b->weights + nd->boff, nd->res >= 0 ? &res : NULL, &nd->conv,
                              b->packed.isa, b->qws, b->team);
    return STRIX_OK;
}

static void drop_int8(strix_cpu_backend *b)
{
    for (int i = 0; b->q && i < b->prog->n_nodes; i++) strix_qconv_free(&b->q[i]);
    free(b->q);
    free(b->range);
    b->q = NULL;
    b->range = NULL;
}

static strix_status cpu_int8_begin(strix_backend *base, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    drop_int8(b);
    if (!(b->range = calloc(2 * (size_t)b->prog->n_nodes + 1, sizeof *b->range)))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for int8 calibration");
    for (int i = 0; i < b->prog->n_nodes; i++) b->range[2 * i] = INFINITY, b->range[2 * i + 1] = -INFINITY;
    return STRIX_OK;
}

/* The convolutions int8 and bf16 run: every one that is not grouped (their
 * GEMMs are dense ones; depthwise stays fp32) and ends in SiLU (the head's
 * last 1x1 convolutions, whose outputs are box distances and class logits,
 * and the attention projections stay fp32: cheap, and where a step of
 * error moves a box). */
static int reduced_eligible(const strix_node *nd)
{
    return nd->op == STRIX_OP_CONV && !nd->fused && nd->conv.groups == 1 && nd->conv.act == STRIX_ACT_SILU;
}

/* Without VNNI (AVX2's vpmaddubsw + vpmaddwd: about fp32's multiply-add
 * rate) int8 loses to fp32 where fp32 has a cheaper algorithm or int8 a
 * fixed cost: the 3x3 layers fp32 runs as Winograd, and thin inputs, whose
 * quantisation pass and byte im2col cost as much as their GEMM.  Those stay
 * fp32 there (INT8_THIN_CIN: measured in perf/results/...-int8-avx2/). */
#ifndef INT8_THIN_CIN
#define INT8_THIN_CIN 32
#endif
static int int8_wins(const strix_cpu_backend *b, const strix_node *nd, strix_int8_isa isa)
{
    if (isa != STRIX_INT8_AVX2) return 1;
    return nd->cin >= INT8_THIN_CIN && !strix_cpu_conv2d_winograd(b->packed.isa, nd->cin, nd->cout, &nd->conv);
}

/* Quantised: the reduced_eligible convolutions that ran during calibration
 * (and that int8_wins on this CPU). */
static strix_status cpu_int8_end(strix_backend *base, int apply, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    float *range = b->range;
    b->range = NULL;
    if (!apply || !range) {
        free(range);
        return STRIX_OK;
    }
    const strix_program *p = b->prog;
    b->q = calloc((size_t)p->n_nodes + 1, sizeof *b->q);
    strix_int8_isa isa = strix_int8_best_isa();
    strix_status st = b->q ? STRIX_OK : strix_fail(err, STRIX_E_NOMEM, "out of memory for int8 weights");
    for (int i = 0; !st && i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (!reduced_eligible(nd) || !int8_wins(b, nd, isa) || !(range[2 * i] <= range[2 * i + 1])) continue;
        int k = nd->conv.kh * nd->conv.kw * nd->cin;
        if (strix_qconv_init(&b->q[i], b->weights + nd->woff, nd->cout, k, range[2 * i], range[2 * i + 1], isa))
            st = strix_fail(err, STRIX_E_NOMEM, "out of memory for int8 weights");
    }
    free(range);
    if (st) drop_int8(b);
    return st;
}

static void drop_bf16(strix_cpu_backend *b)
{
    for (int i = 0; b->bq && i < b->prog->n_nodes; i++) strix_bconv_free(&b->bq[i]);
    free(b->bq);
    b->bq = NULL;
}

/* Precision BF16: the reduced_eligible convolutions' weights in bf16, once,
 * for BFDOT; for the C path on a CPU without it (strix_model_load refuses
 * bf16 there: only tests create such a backend, to run the bf16 network on
 * every machine). */
static strix_status build_bf16(strix_cpu_backend *b, strix_error *err)
{
    const strix_program *p = b->prog;
    strix_bf16_isa isa = strix_bf16_supported() ? STRIX_BF16_NEON_BFDOT : STRIX_BF16_C;
    if (!(b->bq = calloc((size_t)p->n_nodes + 1, sizeof *b->bq)))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for bf16 weights");
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (reduced_eligible(nd) && strix_bconv_init(&b->bq[i], b->weights + nd->woff, nd->cout,
                                                     nd->conv.kh * nd->conv.kw * nd->cin, isa)) {
            drop_bf16(b);
            return strix_fail(err, STRIX_E_NOMEM, "out of memory for bf16 weights");
        }
    }
    return STRIX_OK;
}

static float *input_ptr(const strix_cpu_backend *b)
{
    return b->arena + b->plan->buf_off[b->prog->values[b->prog->input].buf];
}

static const float *head_ptr(const strix_cpu_backend *b) { return b->arena + b->plan->buf_off[b->prog->out_buf]; }

static strix_status not_planned(strix_error *err)
{
    return strix_fail(err, STRIX_E_INTERNAL, "engine/cpu/backend.c: the CPU backend was used before being planned");
}

static strix_status cpu_forward(strix_backend *base, const float *input, float *decoded, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    const strix_plan *pl = b->plan;
    if (!pl) return not_planned(err);
    memcpy(input_ptr(b), input, sizeof(float) * (size_t)pl->n * pl->h * pl->w * 3);
    strix_status st = strix_execute(base, b->prog, err);
    if (st) return st;
    memcpy(decoded, head_ptr(b), sizeof(float) * (size_t)pl->n * pl->buf_elems[b->prog->out_buf]);
    return STRIX_OK;
}

static strix_status cpu_detect(strix_backend *base, const strix_image *imgs, int n, const strix_letterbox_info *info,
                               const strix_nms_params *np, strix_detection *dets, int *counts, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    const strix_plan *pl = b->plan;
    if (!pl) return not_planned(err);
    if (n != pl->n)
        return strix_fail(err, STRIX_E_INTERNAL, "engine/cpu/backend.c: detect on %d images, planned for %d", n,
                          pl->n);
    int e2e = b->prog->end2end; /* a one-to-one head: top-k selection, no NMS */
    int obb = b->prog->task == STRIX_TASK_OBB; /* rotated NMS */
    size_t need = e2e ? strix_topk_workspace(pl->anchors, np)
                : obb ? strix_nms_obb_workspace(pl->anchors, np)
                      : strix_nms_workspace(pl->anchors, np);
    for (int i = 0; i < n; i++) {
        size_t lb = strix_letterbox_scratch_bytes(&info[i]);
        if (lb > need) need = lb;
    }
    if (!strix_reserve(&b->scratch, &b->scratch_cap, need))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for detection scratch");
    float *in = input_ptr(b);
    for (int i = 0; i < n; i++) strix_letterbox(in + (size_t)i * pl->h * pl->w * 3, &imgs[i], &info[i], b->scratch);
    strix_status st = strix_execute(base, b->prog, err);
    if (st) return st;
    const float *head = head_ptr(b);
    size_t row = 4 + (size_t)b->prog->nc + b->prog->extra, per = pl->anchors * row;
    for (int i = 0; i < n; i++) {
        strix_nms_params pi = *np; /* image i's rows_out and anchors_out */
        pi.row = (int)row;
        if (np->rows_out) pi.rows_out = np->rows_out + (size_t)i * np->max_det * row;
        if (np->anchors_out) pi.anchors_out = np->anchors_out + (size_t)i * np->max_det;
        strix_detection *d = dets + (size_t)i * np->max_det;
        counts[i] = e2e ? strix_topk(d, head + per * i, pl->anchors, &pi, b->scratch)
                  : obb ? strix_nms_obb(d, head + per * i, pl->anchors, &pi, b->scratch)
                        : strix_nms(d, head + per * i, pl->anchors, &pi, b->scratch);
        if (counts[i] < 0) return strix_fail(err, STRIX_E_NOMEM, "out of memory for rotated NMS");
        if (!np->loose_out) continue;
        /* TrackTrack's recovered detections: the same candidates at the looser IoU */
        pi.iou = np->loose_iou;
        pi.rows_out = np->loose_rows ? np->loose_rows + (size_t)i * np->max_det * row : NULL;
        pi.anchors_out = NULL;
        d = np->loose_out + (size_t)i * np->max_det;
        np->loose_counts[i] = e2e ? 0
                            : obb ? strix_nms_obb(d, head + per * i, pl->anchors, &pi, b->scratch)
                                  : strix_nms(d, head + per * i, pl->anchors, &pi, b->scratch);
        if (np->loose_counts[i] < 0) return strix_fail(err, STRIX_E_NOMEM, "out of memory for rotated NMS");
    }
    return STRIX_OK;
}

static strix_status cpu_read_value(strix_backend *base, int v, float *out, strix_error *err)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    if (!b->plan) return not_planned(err);
    strix_view src = strix_plan_view(b->plan, b->prog, b->arena, v);
    strix_view dst = strix_view_dense(out, src.n, src.h, src.w, src.c);
    strix_cpu_copy(&dst, &src, NULL);
    return STRIX_OK;
}

static void cpu_free(strix_backend *base)
{
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    if (!b) return;
    free(b->arena);
    free(b->ws);
    free(b->scratch);
    strix_cpu_packed_free(&b->packed);
    strix_cpu_team_free(b->team);
    drop_int8(b);
    drop_bf16(b);
    free(b->qws);
    free(b);
}

/* Frame memory (strix_model_alloc_pinned): nothing copies from it but the
 * letterbox, so plain aligned host memory (bytes: a multiple of the
 * alignment, as aligned_alloc wants). */
static strix_status cpu_pinned_alloc(strix_backend *base, size_t bytes, void **out, strix_error *err)
{
    if (!(*out = aligned_alloc(STRIX_PINNED_ALIGN, bytes)))
        return strix_fail(err, STRIX_E_NOMEM, "out of memory for %zu MiB of frame memory: use smaller frames or "
                          "fewer of them (a smaller batch)", (bytes >> 20) + 1);
    return STRIX_OK;
}

static void cpu_pinned_free(strix_backend *base, void *p)
{
    free(p);
}

static const strix_backend_ops cpu_ops = {
    .plan = cpu_plan,
    .forward = cpu_forward,
    .detect = cpu_detect,
    .free = cpu_free,
    .pinned_alloc = cpu_pinned_alloc,
    .pinned_free = cpu_pinned_free,
    .run_op = cpu_run_op,
    .read_value = cpu_read_value,
    .int8_begin = cpu_int8_begin,
    .int8_end = cpu_int8_end,
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

strix_status strix_cpu_backend_layer_times(strix_backend *base, double *ms, int n_layers, strix_error *err)
{
    if (!base || base->ops != &cpu_ops)
        return strix_fail(err, STRIX_E_ARG, "per-layer times: the model does not run on the CPU");
    strix_cpu_backend *b = (strix_cpu_backend *)base;
    if (!b->plan) return not_planned(err);
    for (int l = 0; l < n_layers; l++) ms[l] = 0;
    const strix_program *p = b->prog;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (nd->fused) continue; /* ran with the node that heads its fusion */
        if (nd->layer < 0 || nd->layer >= n_layers)
            return strix_fail(err, STRIX_E_ARG, "per-layer times: node %d belongs to layer %d, beyond the %d given",
                              i, nd->layer, n_layers);
        double t0 = now_ms();
        strix_status st = cpu_run_op(base, i, err);
        if (st) return st;
        ms[nd->layer] += now_ms() - t0;
    }
    return STRIX_OK;
}

strix_status strix_cpu_backend_create(strix_backend **out, const strix_program *p, const float *weights,
                                      const strix_backend_config *c, strix_error *err)
{
    *out = NULL;
    strix_cpu_backend *b = calloc(1, sizeof *b);
    if (!b) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CPU backend");
    b->base.ops = &cpu_ops;
    b->prog = p;
    b->weights = weights;
    b->spin_us = c->cpu_spin_us;
    strix_cpu_isa isa = (strix_cpu_isa)(c->cpu_isa | (c->cpu_exact_conv ? STRIX_CPU_CONV_EXACT : 0));
    strix_status st = strix_cpu_packed_build(&b->packed, isa, p, weights, err);
    if (!st && c->cpu_bf16) st = build_bf16(b, err);
    if (st) {
        strix_cpu_packed_free(&b->packed);
        free(b);
        return st;
    }
    *out = &b->base;
    return STRIX_OK;
}
