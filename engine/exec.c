/* exec.c — the executor (exec.h): the planned node list in order, one
 * backend call per node; fusions were decided by the program. */
#include "exec.h"

strix_status strix_execute(strix_backend *b, const strix_program *p, strix_error *err)
{
    const strix_backend_ops *o = b->ops;
    strix_status st = STRIX_OK;
    int layer = -1;
    for (int i = 0; i < p->n_nodes && !st; i++) {
        const strix_node *nd = &p->nodes[i];
        if (nd->fused) continue; /* ran with the node that heads its fusion */
        if (nd->layer != layer) {
            if (layer >= 0 && o->layer_leave) o->layer_leave(b, layer);
            if (o->layer_mark && ((st = o->layer_mark(b, layer, 1, err)) || (st = o->layer_mark(b, nd->layer, 0, err))))
                break;
            layer = nd->layer;
            if (o->layer_enter) o->layer_enter(b, layer);
        }
        st = o->run_op(b, i, err);
    }
    if (layer >= 0 && o->layer_leave) o->layer_leave(b, layer);
    if (!st && o->layer_mark) st = o->layer_mark(b, layer, 1, err);
    return st;
}
