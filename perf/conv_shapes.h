/* conv_shapes.h — the distinct convolution shapes of a model's planned
 * graph at batch 1 (layer, sizes, parameters, how often a forward runs each),
 * shared by the CPU and GPU convolution harnesses (bench_conv.c,
 * cuda/conv_lab.c). */
#ifndef STRIX_CONV_SHAPES_H
#define STRIX_CONV_SHAPES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h" /* the model's program: its convolution nodes */
#include "tools/exitcodes.h"

typedef struct shape {
    int h, w, cin, oh, ow, cout;
    strix_conv_params p;
    int residual;        /* the network adds a shortcut after the activation */
    int uses;            /* times the network runs this shape per forward */
    int first_layer;
} shape;

static inline int same_shape(const shape *a, const shape *b)
{
    return a->h == b->h && a->w == b->w && a->cin == b->cin && a->cout == b->cout && a->residual == b->residual &&
           !memcmp(&a->p, &b->p, sizeof a->p);
}

/* The distinct convolution shapes of m's program at batch 1, s x s. */
static inline int collect_shapes(const strix_model *m, int s, const char *prog, shape **out, int *n_out)
{
    strix_plan pl;
    strix_error e;
    if (strix_plan_build(&pl, &m->prog, 1, s, s, 1, &e)) {
        fprintf(stderr, "%s: %s\n", prog, e.message);
        return EXIT_USAGE;
    }
    shape *v = calloc((size_t)m->prog.n_nodes, sizeof *v);
    int n = 0;
    for (int i = 0; v && i < m->prog.n_nodes; i++) {
        const strix_node *nd = &m->prog.nodes[i];
        if (nd->op != STRIX_OP_CONV) continue;
        shape x = {pl.val_h[nd->in], pl.val_w[nd->in], nd->cin, pl.val_h[nd->out], pl.val_w[nd->out], nd->cout,
                   nd->conv, nd->res >= 0, 1, nd->layer};
        int j = 0;
        while (j < n && !same_shape(&v[j], &x)) j++;
        if (j < n) v[j].uses++;
        else v[n++] = x;
    }
    strix_plan_free(&pl);
    if (!v) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return EXIT_NOMEM;
    }
    *out = v;
    *n_out = n;
    return 0;
}

#endif
