/* synth.c — deterministic synthetic weights for any graph, written as an
 * Ultralytics-named safetensors checkpoint (tests, goldens, benchmarks).
 *
 * Bit-reproducible across machines: splitmix64 integers, uniforms built from
 * 24-bit integers (exact in float), and only correctly rounded float
 * operations (the build uses -std=c11, so no FMA contraction). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "safetensors.h"
#include "util.h"

typedef struct rng { uint64_t s; } rng;

static uint64_t next_u64(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(rng *r, float lo, float hi)
{
    float u = (float)(next_u64(r) >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

static void fill(rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) x[i] = uniform(r, lo, hi);
}

strix_status strix_model_write_synthetic_weights(const strix_model *m, const char *path,
                                                 uint64_t seed, int fused, int f16, int overwrite,
                                                 strix_error *err)
{
    strix_error_clear(err);
    const strix_program *p = &m->prog;
    /* every tensor's data stays alive until the writer has written */
    size_t total = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op == STRIX_OP_CONV)
            total += (size_t)n->cout * n->conv.kh * n->conv.kw * (n->cin / n->conv.groups) + 4 * (size_t)n->cout;
    }
    total += (size_t)p->reg_max;
    float *data = malloc(sizeof(float) * (total ? total : 1));
    strix_st_writer *w = NULL;
    strix_status st = data ? strix_st_writer_create(&w, err)
                           : strix_fail(err, STRIX_E_NOMEM, "out of memory for synthetic weights");
    rng r = {seed};
    float *d = data;
    char nm[160];
    strix_st_dtype dt = f16 ? STRIX_ST_F16 : STRIX_ST_F32;
    for (int i = 0; i < p->n_nodes && !st; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV) continue;
        int cig = n->cin / n->conv.groups;
        int64_t ws[4] = {n->cout, cig, n->conv.kh, n->conv.kw}, vs[1] = {n->cout};
        size_t wn = (size_t)n->cout * cig * n->conv.kh * n->conv.kw;
        /* He-uniform keeps activations O(1) through SiLU layers */
        float a = sqrtf(6.0f / (float)((size_t)cig * n->conv.kh * n->conv.kw));
        fill(&r, d, wn, -a, a);
        snprintf(nm, sizeof nm, n->plain ? "%s.weight" : "%s.conv.weight", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, 4, ws, d, err))) break;
        d += wn;
        if (n->plain) {
            /* Detect's last convs: box logits around 0; class logits biased
             * low so only some anchors pass a 0.25 threshold (as in training,
             * where Ultralytics initialises them to about -10) */
            int cls = strstr(n->wname, ".cv3.") != NULL;
            if (cls) fill(&r, d, (size_t)n->cout, -7.0f, -3.0f);
            else fill(&r, d, (size_t)n->cout, -1.0f, 1.0f);
            snprintf(nm, sizeof nm, "%s.bias", n->wname);
            if ((st = strix_st_writer_add(w, nm, dt, 1, vs, d, err))) break;
            d += n->cout;
        } else if (fused) {
            fill(&r, d, (size_t)n->cout, -0.3f, 0.3f);
            snprintf(nm, sizeof nm, "%s.conv.bias", n->wname);
            if ((st = strix_st_writer_add(w, nm, dt, 1, vs, d, err))) break;
            d += n->cout;
        } else {
            static const char *bn[4] = {"weight", "bias", "running_mean", "running_var"};
            static const float lo[4] = {0.6f, -0.3f, -0.3f, 0.5f}, hi[4] = {1.4f, 0.3f, 0.3f, 1.5f};
            for (int k = 0; k < 4 && !st; k++) {
                fill(&r, d, (size_t)n->cout, lo[k], hi[k]);
                snprintf(nm, sizeof nm, "%s.bn.%s", n->wname, bn[k]);
                st = strix_st_writer_add(w, nm, dt, 1, vs, d, err);
                d += n->cout;
            }
        }
    }
    if (!st && p->dfl_name[0]) {
        int64_t s[4] = {1, p->reg_max, 1, 1};
        for (int i = 0; i < p->reg_max; i++) d[i] = (float)i;
        st = strix_st_writer_add(w, p->dfl_name, dt, 4, s, d, err);
    }
    char seedtxt[32], nctxt[16], sc[2] = {m->graph.scale, 0};
    snprintf(seedtxt, sizeof seedtxt, "%llu", (unsigned long long)seed);
    snprintf(nctxt, sizeof nctxt, "%d", m->graph.nc);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_synthetic_seed", seedtxt, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_model_yaml", m->graph.path, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_scale", sc, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_nc", nctxt, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_fused", fused ? "1" : "0", err);
    if (!st) st = strix_st_writer_write(w, path, overwrite, err);
    strix_st_writer_free(w);
    free(data);
    return st;
}
