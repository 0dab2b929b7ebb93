/* weights.c — binds a checkpoint's tensors (safetensors, .pt or ONNX, all
 * read by loaders/checkpoint.c as one tensor set) to a lowered program: every
 * tensor the graph needs is found by its Ultralytics state_dict name, checked
 * for dtype and shape, converted to fp32, BatchNorm folded into the
 * convolution (unfused checkpoints), and stored OHWI in the weight blob.
 * Missing and unexpected tensors are errors listing them. */
#include "weights.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"
#include "util.h"

typedef struct bind {
    strix_st_file *f;
    char *used;               /* per tensor index */
    char missing[600];
    int n_missing;
    strix_error *err;
    float *tmp;               /* conversion scratch */
    size_t tmp_cap;
    double eps;               /* BatchNorm's (strix_bn_eps) */
} bind;

static void note_missing(bind *b, const char *name)
{
    if (b->n_missing++ < 6) {
        size_t l = strlen(b->missing);
        snprintf(b->missing + l, sizeof b->missing - l, "%s%s", l ? ", " : "", name);
    }
}

/* Find name, check its shape against want[0..nd), convert it to fp32 in
 * b->tmp (+ off).  Returns NULL (and records the name) when absent. */
static const strix_st_tensor *fetch(bind *b, const char *name, int nd, const int64_t *want,
                                    size_t off, strix_status *st)
{
    const strix_st_tensor *t = strix_st_find(b->f, name);
    if (!t) {
        note_missing(b, name);
        return NULL;
    }
    b->used[strix_st_index_of(b->f, t)] = 1;
    char ws[64] = "", gs[64] = "";
    int ok = t->ndim == nd;
    for (int i = 0; i < nd; i++) {
        size_t l = strlen(ws);
        snprintf(ws + l, sizeof ws - l, "%s%lld", i ? ", " : "", (long long)want[i]);
        if (ok && t->shape[i] != want[i]) ok = 0;
    }
    for (int i = 0; i < t->ndim; i++) {
        size_t l = strlen(gs);
        snprintf(gs + l, sizeof gs - l, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    }
    if (!ok) {
        *st = strix_fail(b->err, STRIX_E_WEIGHTS,
                         "%s: tensor '%s' has shape [%s] but the model needs [%s] "
                         "(checkpoint for another scale, nc or YAML?)",
                         strix_st_path(b->f), name, gs, ws);
        return NULL;
    }
    if (t->dtype != STRIX_ST_F32 && t->dtype != STRIX_ST_F16 && t->dtype != STRIX_ST_BF16) {
        *st = strix_fail(b->err, STRIX_E_WEIGHTS, "%s: tensor '%s' has dtype %s; strix reads F32, F16 or BF16",
                         strix_st_path(b->f), name, t->dtype_name);
        return NULL;
    }
    if ((*st = strix_st_to_f32(b->tmp + off, t, b->err))) return NULL;
    for (size_t i = 0; i < t->numel; i++)
        if (!isfinite(b->tmp[off + i])) {
            *st = strix_fail(b->err, STRIX_E_WEIGHTS, "%s: tensor '%s' holds NaN or Inf at element %zu",
                             strix_st_path(b->f), name, i);
            return NULL;
        }
    return t;
}

static strix_status bind_conv(bind *b, const strix_node *n, float *blob)
{
    int kh = n->conv.kh, kw = n->conv.kw, cig = n->cin / n->conv.groups, co = n->cout;
    size_t wn = (size_t)co * cig * kh * kw;
    size_t need = wn + 4 * (size_t)co;
    if (need > b->tmp_cap) {
        float *t = realloc(b->tmp, need * sizeof *t);
        if (!t) return strix_fail(b->err, STRIX_E_NOMEM, "out of memory binding weights");
        b->tmp = t;
        b->tmp_cap = need;
    }
    char nm[160];
    int64_t wshape[4] = {co, cig, kh, kw}, vshape[1] = {co};
    strix_status st = STRIX_OK;
    float *w = b->tmp, *bias = blob + n->boff;
    if (n->convt) {
        /* ConvTranspose2d(k=2, s=2): weight [cin, C, 2, 2], bias [C]; the
         * node is a 1x1 conv to 4C channels, output (dy*2 + dx)*C + c */
        int c = co / 4;
        int64_t tshape[4] = {n->cin, c, 2, 2}, cshape[1] = {c};
        snprintf(nm, sizeof nm, "%s.weight", n->wname);
        int have_w = fetch(b, nm, 4, tshape, 0, &st) != NULL;
        if (st) return st;
        snprintf(nm, sizeof nm, "%s.bias", n->wname);
        if (fetch(b, nm, 1, cshape, wn, &st))
            for (int k = 0; k < 4; k++) memcpy(bias + (size_t)k * c, b->tmp + wn, sizeof(float) * (size_t)c);
        if (st || !have_w) return st;
        float *dst = blob + n->woff;
        for (int i = 0; i < n->cin; i++)
            for (int o = 0; o < c; o++)
                for (int k = 0; k < 4; k++)
                    dst[((size_t)k * c + o) * n->cin + i] = w[((size_t)i * c + o) * 4 + k];
        return STRIX_OK;
    }
    if (n->plain) {
        int64_t lshape[2] = {co, n->cin}; /* nn.Linear: [out, in] */
        snprintf(nm, sizeof nm, "%s.weight", n->wname);
        int have_w = fetch(b, nm, n->linear ? 2 : 4, n->linear ? lshape : wshape, 0, &st) != NULL;
        if (st) return st;
        snprintf(nm, sizeof nm, "%s.bias", n->wname);
        if (fetch(b, nm, 1, vshape, wn, &st)) memcpy(bias, b->tmp + wn, sizeof(float) * (size_t)co);
        if (st || !have_w) return st;
    } else {
        snprintf(nm, sizeof nm, "%s.conv.weight", n->wname);
        int have_w = fetch(b, nm, 4, wshape, 0, &st) != NULL;
        if (st) return st;
        snprintf(nm, sizeof nm, "%s.bn.weight", n->wname);
        if (strix_st_find(b->f, nm)) {
            /* unfused: fold y = g (x - m) / sqrt(v + eps) + beta into the conv */
            static const char *bn[4] = {"weight", "bias", "running_mean", "running_var"};
            int got = 0;
            for (int k = 0; k < 4; k++) {
                snprintf(nm, sizeof nm, "%s.bn.%s", n->wname, bn[k]);
                got += fetch(b, nm, 1, vshape, wn + (size_t)k * co, &st) != NULL;
                if (st) return st;
            }
            snprintf(nm, sizeof nm, "%s.bn.num_batches_tracked", n->wname);
            const strix_st_tensor *nbt = strix_st_find(b->f, nm);
            if (nbt) b->used[strix_st_index_of(b->f, nbt)] = 1;
            if (got < 4 || !have_w) return STRIX_OK;
            const float *g = b->tmp + wn, *beta = g + co, *mean = beta + co, *var = mean + co;
            for (int o = 0; o < co; o++)
                if (!(var[o] >= 0)) {
                    snprintf(nm, sizeof nm, "%s.bn.running_var", n->wname);
                    return strix_fail(b->err, STRIX_E_WEIGHTS, "%s: tensor '%s' has a negative variance at %d",
                                      strix_st_path(b->f), nm, o);
                }
            strix_fold_bn(w, bias, g, beta, mean, var, co, (size_t)cig * kh * kw, b->eps);
        } else {
            snprintf(nm, sizeof nm, "%s.conv.bias", n->wname);
            if (!strix_st_find(b->f, nm)) {
                snprintf(nm, sizeof nm, "%s.bn.weight (or %s.conv.bias)", n->wname, n->wname);
                note_missing(b, nm);
                return STRIX_OK;
            }
            if (fetch(b, nm, 1, vshape, wn, &st)) memcpy(bias, b->tmp + wn, sizeof(float) * (size_t)co);
            if (st || !have_w) return st;
        }
    }
    strix_fold_conv(blob + n->woff, bias, w, bias, co, cig, kh, kw);
    return STRIX_OK;
}

double strix_bn_eps(const strix_program *p)
{
    return p->task == STRIX_TASK_CLASSIFY ? STRIX_BN_EPS_CLASSIFY : STRIX_BN_EPS;
}

void strix_fold_bn(float *w, float *bias, const float *gamma, const float *beta, const float *mean,
                   const float *var, int cout, size_t per_out, double eps)
{
    for (int o = 0; o < cout; o++) {
        double s = gamma[o] / sqrt((double)var[o] + eps);
        for (size_t i = 0; i < per_out; i++) w[(size_t)o * per_out + i] *= (float)s;
        bias[o] = (float)(beta[o] - mean[o] * s);
    }
}

void strix_fold_conv(float *dst_w, float *dst_bias, const float *w, const float *bias, int cout,
                     int cig, int kh, int kw)
{
    for (int o = 0; o < cout; o++) {
        dst_bias[o] = bias ? bias[o] : 0.0f;
        for (int i = 0; i < cig; i++)
            for (int y = 0; y < kh; y++)
                for (int x = 0; x < kw; x++)
                    dst_w[(((size_t)o * kh + y) * kw + x) * cig + i] = w[(((size_t)o * cig + i) * kh + y) * kw + x];
    }
}

strix_status strix_weights_bind(const strix_program *p, strix_st_file *f, float *blob, strix_error *err)
{
    bind b = {0};
    b.err = err;
    b.f = f;
    b.eps = strix_bn_eps(p);
    const char *path = strix_st_path(f);
    strix_status st = STRIX_OK;
    size_t nt = strix_st_count(b.f);
    b.used = calloc(nt + 1, 1);
    if (!b.used) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    for (int i = 0; i < p->n_nodes && !st; i++)
        if (p->nodes[i].op == STRIX_OP_CONV) st = bind_conv(&b, &p->nodes[i], blob);
    if (!st && p->dfl_name[0]) {
        /* DFL is a fixed 1x1 conv whose weights are 0..reg_max-1; decode relies on it */
        int64_t shape[4] = {1, p->reg_max, 1, 1};
        if (b.tmp_cap < (size_t)p->reg_max) {
            float *t = realloc(b.tmp, sizeof *t * (size_t)p->reg_max);
            if (t) b.tmp = t, b.tmp_cap = (size_t)p->reg_max;
            else st = strix_fail(err, STRIX_E_NOMEM, "out of memory binding weights");
        }
        if (!st && fetch(&b, p->dfl_name, 4, shape, 0, &st) && !st)
            for (int i = 0; i < p->reg_max; i++)
                if (fabsf(b.tmp[i] - (float)i) > 1e-6f) {
                    st = strix_fail(err, STRIX_E_WEIGHTS,
                                    "%s: tensor '%s' must hold 0..%d (the DFL expectation), element %d is %g",
                                    path, p->dfl_name, p->reg_max - 1, i, b.tmp[i]);
                    break;
                }
    }
    if (!st && b.n_missing)
        st = strix_fail(err, STRIX_E_WEIGHTS, "%s: %d tensor%s the model needs %s missing: %s%s", path,
                        b.n_missing, b.n_missing > 1 ? "s" : "", b.n_missing > 1 ? "are" : "is",
                        b.missing, b.n_missing > 6 ? ", ..." : "");
    if (!st) {
        char extra[600] = "";
        int n_extra = 0;
        for (size_t i = 0; i < nt; i++) {
            const char *tn = strix_st_get(b.f, i)->name;
            for (int k = 0; k < STRIX_UNUSED_PREFIXES; k++) /* the other head, training-only modules */
                if (p->unused_prefix[k][0] && !strncmp(tn, p->unused_prefix[k], strlen(p->unused_prefix[k])))
                    b.used[i] = 1;
            if (b.used[i]) continue;
            const char *nm = strix_st_get(b.f, i)->name;
            if (n_extra++ < 6) {
                size_t l = strlen(extra);
                snprintf(extra + l, sizeof extra - l, "%s%s", l ? ", " : "", nm);
            }
        }
        if (n_extra)
            st = strix_fail(err, STRIX_E_WEIGHTS,
                            "%s: %d tensor%s the model does not have: %s%s (checkpoint for another YAML?)",
                            path, n_extra, n_extra > 1 ? "s" : "", extra, n_extra > 6 ? ", ..." : "");
    }
    free(b.tmp);
    free(b.used);
    return st;
}
