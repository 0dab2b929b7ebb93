/* exec.c — one dispatch: the planned node list in order, a switch on the op. */
#include "exec.h"

#include "cpu/ops.h"

void strix_cpu_execute_node(const strix_program *p, const strix_plan *pl, const float *weights,
                            float *arena, void *workspace, int i)
{
    int th = pl->threads;
    const strix_node *nd = &p->nodes[i];
    if (nd->fused) return; /* ran with the node that heads its fusion */
    strix_view out = strix_plan_view(pl, p, arena, nd->out);
    strix_view in = strix_plan_view(pl, p, arena, nd->in);
    switch (nd->op) {
    case STRIX_OP_CONV: {
        strix_view res;
        if (nd->res >= 0) res = strix_plan_view(pl, p, arena, nd->res);
        strix_cpu_conv2d(&out, &in, weights + nd->woff, weights + nd->boff,
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
    }
}

void strix_cpu_execute(const strix_program *p, const strix_plan *pl, const float *weights,
                       float *arena, void *workspace)
{
    for (int i = 0; i < p->n_nodes; i++) strix_cpu_execute_node(p, pl, weights, arena, workspace, i);
}
