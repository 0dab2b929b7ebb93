/* graph.c — YAML rows to resolved layers, following Ultralytics' parse_model:
 * `from` made absolute, repeats scaled by depth (round half to even, as
 * Python's round), output channels scaled by width and capped by
 * max_channels then rounded up to a multiple of 8, module arguments typed and
 * checked.  Errors name the file, the line and the problem. */
#include "graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct bctx {
    const strix_yaml_model *y;
    strix_graph *g;
    strix_error *err;
} bctx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static strix_status row_fail(bctx *c, const strix_yaml_row *r, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return strix_fail(c->err, STRIX_E_MODEL, "%s:%d: %s %s", c->y->path, r->line, r->module, msg);
}

static int make_divisible(double x, int div) { return (int)ceil(x / div) * div; }

/* Argument i as an int (bools count: Ultralytics passes them through). */
static strix_status arg_int(bctx *c, const strix_yaml_row *r, int i, const char *what, int lo,
                            int hi, int *out)
{
    const strix_yaml_arg *a = &r->args[i];
    if (a->type != STRIX_ARG_INT)
        return row_fail(c, r, "argument %d (%s) must be an integer, got '%s'", i + 1, what, a->str);
    if (a->i < lo || a->i > hi)
        return row_fail(c, r, "argument %d (%s) = %lld is outside [%d, %d]", i + 1, what, a->i, lo, hi);
    *out = (int)a->i;
    return STRIX_OK;
}

static strix_status arg_bool(bctx *c, const strix_yaml_row *r, int i, const char *what, int *out)
{
    const strix_yaml_arg *a = &r->args[i];
    if (a->type != STRIX_ARG_BOOL)
        return row_fail(c, r, "argument %d (%s) must be True or False, got '%s'", i + 1, what, a->str);
    *out = (int)a->i;
    return STRIX_OK;
}

static strix_status arg_frac(bctx *c, const strix_yaml_row *r, int i, const char *what, double *out)
{
    const strix_yaml_arg *a = &r->args[i];
    if (a->type != STRIX_ARG_FLOAT && a->type != STRIX_ARG_INT)
        return row_fail(c, r, "argument %d (%s) must be a number, got '%s'", i + 1, what, a->str);
    if (!(a->f > 0 && a->f <= 16))
        return row_fail(c, r, "argument %d (%s) = %g is outside (0, 16]", i + 1, what, a->f);
    *out = a->f;
    return STRIX_OK;
}

static strix_status want_args(bctx *c, const strix_yaml_row *r, int lo, int hi, const char *sig)
{
    if (r->n_args < lo || r->n_args > hi)
        return row_fail(c, r, "takes %s (%d to %d arguments), got %d", sig, lo, hi, r->n_args);
    return STRIX_OK;
}

/* Python's repr of an argument, for the printed args column. */
static void arg_repr(char *buf, size_t n, const strix_yaml_arg *a)
{
    switch (a->type) {
    case STRIX_ARG_BOOL: snprintf(buf, n, "%s", a->i ? "True" : "False"); break;
    case STRIX_ARG_NONE: snprintf(buf, n, "None"); break;
    case STRIX_ARG_STR: snprintf(buf, n, "'%s'", a->str); break;
    case STRIX_ARG_INT: snprintf(buf, n, "%lld", a->i); break;
    case STRIX_ARG_FLOAT: snprintf(buf, n, "%g", a->f); break;
    default: snprintf(buf, n, "%s", a->str); break;
    }
}

static void append(char *dst, size_t n, const char *s)
{
    size_t l = strlen(dst);
    if (l + 1 < n) snprintf(dst + l, n - l, "%s", s);
}

/* The printed args: [c1, c2, (n,) yaml args from index `from`...]. */
static void args_text(strix_layer *L, const strix_yaml_row *r, int with_c, int with_n, int from,
                      int force_c3k)
{
    char t[64];
    L->args_text[0] = 0;
    append(L->args_text, sizeof L->args_text, "[");
    int first = 1;
    if (with_c) {
        snprintf(t, sizeof t, "%d, %d", L->c1, L->c2);
        append(L->args_text, sizeof L->args_text, t);
        first = 0;
    }
    if (with_n) {
        snprintf(t, sizeof t, ", %d", L->inner);
        append(L->args_text, sizeof L->args_text, t);
    }
    for (int i = from; i < r->n_args; i++) {
        if (force_c3k && i == 1) snprintf(t, sizeof t, "True");
        else arg_repr(t, sizeof t, &r->args[i]);
        append(L->args_text, sizeof L->args_text, first ? "" : ", ");
        append(L->args_text, sizeof L->args_text, t);
        first = 0;
    }
    if (force_c3k && r->n_args < 2) append(L->args_text, sizeof L->args_text, ", True");
    append(L->args_text, sizeof L->args_text, "]");
}

/* A head's first argument: nc (the YAML's nc) or that number. */
static strix_status head_nc(bctx *c, const strix_yaml_row *r, strix_layer *L)
{
    strix_status st;
    const strix_yaml_arg *a = &r->args[0];
    if (a->type == STRIX_ARG_STR && !strcmp(a->str, "nc")) L->nc = c->g->nc;
    else if ((st = arg_int(c, r, 0, "nc", 1, STRIX_MAX_CLASSES, &L->nc))) return st;
    if (L->nc != c->g->nc)
        return row_fail(c, r, "class count %d differs from the model's nc %d", L->nc, c->g->nc);
    return STRIX_OK;
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static strix_status resolve(bctx *c, const strix_yaml_row *r, strix_layer *L, const int *ch,
                            int *legacy)
{
    const strix_graph *g = c->g;
    const char *m = r->module;
    strix_status st;
    int repeat_module = 0, base_module = 1;
    /* repeats <= 1000 and depth <= 100 (the YAML reader's bounds) still allow
     * 100,000 copies: the scaled count gets the same bound as a written one */
    double scaled = r->repeats > 1 ? nearbyint(r->repeats * g->depth) : r->repeats;
    if (scaled > 1000)
        return row_fail(c, r, "repeats %d x depth %g = %.0f modules: at most 1000 (check depth_multiple or the scale's depth)",
                        r->repeats, g->depth, scaled);
    int n = scaled < 1 ? 1 : (int)scaled;
    L->n = n;
    L->copies = 1;
    L->c1 = L->from[0] >= 0 ? ch[L->from[0]] : 3;

    if (!strcmp(m, "Conv")) L->kind = STRIX_MOD_CONV;
    else if (!strcmp(m, "DWConv")) L->kind = STRIX_MOD_DWCONV;
    else if (!strcmp(m, "Bottleneck")) L->kind = STRIX_MOD_BOTTLENECK;
    else if (!strcmp(m, "C2f")) L->kind = STRIX_MOD_C2F, repeat_module = 1;
    else if (!strcmp(m, "C3")) L->kind = STRIX_MOD_C3, repeat_module = 1;
    else if (!strcmp(m, "C3k2")) L->kind = STRIX_MOD_C3K2, repeat_module = 1;
    else if (!strcmp(m, "C3k")) L->kind = STRIX_MOD_C3K, base_module = 0;
    else if (!strcmp(m, "SPPF")) L->kind = STRIX_MOD_SPPF;
    else if (!strcmp(m, "C2PSA")) L->kind = STRIX_MOD_C2PSA, repeat_module = 1;
    else if (!strcmp(m, "nn.Upsample") || !strcmp(m, "torch.nn.Upsample")) L->kind = STRIX_MOD_UPSAMPLE, base_module = 0;
    else if (!strcmp(m, "Concat")) L->kind = STRIX_MOD_CONCAT, base_module = 0;
    else if (!strcmp(m, "Detect")) L->kind = STRIX_MOD_DETECT, base_module = 0;
    else if (!strcmp(m, "Segment") || !strcmp(m, "Segment26"))
        L->kind = STRIX_MOD_DETECT, L->task = STRIX_TASK_SEGMENT, base_module = 0;
    else if (!strcmp(m, "Pose") || !strcmp(m, "Pose26"))
        L->kind = STRIX_MOD_DETECT, L->task = STRIX_TASK_POSE, base_module = 0;
    else if (!strcmp(m, "OBB") || !strcmp(m, "OBB26"))
        L->kind = STRIX_MOD_DETECT, L->task = STRIX_TASK_OBB, base_module = 0;
    else if (!strcmp(m, "Classify")) L->kind = STRIX_MOD_CLASSIFY, L->task = STRIX_TASK_CLASSIFY, base_module = 0;
    else
        return row_fail(c, r, "is not a module strix knows (supported: Conv, DWConv, Bottleneck, C2f, C3, "
                              "C3k, C3k2, SPPF, C2PSA, nn.Upsample, Concat, Detect, Segment, Pose, OBB (and "
                              "their YOLO26 forms), Classify)");
    L->v26 = strlen(m) > 2 && !strcmp(m + strlen(m) - 2, "26");
    strix_strlcpy(L->name, sizeof L->name, m);

    if (L->kind != STRIX_MOD_CONCAT && L->kind != STRIX_MOD_DETECT && L->n_from != 1)
        return row_fail(c, r, "takes exactly one input, but 'from' lists %d", L->n_from);
    if (L->n_from > 1 && L->kind == STRIX_MOD_CONCAT)
        for (int i = 1; i < L->n_from; i++)
            if (L->from[i] < 0) return row_fail(c, r, "cannot concatenate the input image");

    if (base_module) {
        if (r->n_args < 1) return row_fail(c, r, "needs at least its output channels as argument 1");
        int c2raw = 0;
        if ((st = arg_int(c, r, 0, "output channels", 1, 1 << 20, &c2raw))) return st;
        double cap = c2raw < g->max_channels ? c2raw : g->max_channels;
        L->c2 = make_divisible(cap * g->width, 8);
        if (repeat_module) {
            L->inner = n;
            L->copies = 1;
        } else {
            L->copies = n;
        }
    }
    switch (L->kind) {
    case STRIX_MOD_CONV:
    case STRIX_MOD_DWCONV: {
        int dw = L->kind == STRIX_MOD_DWCONV;
        /* Conv: [c2, k=1, s=1, p=None, g=1, d=1, act=True]; DWConv: [c2, k=1, s=1, d=1, act=True] */
        if ((st = want_args(c, r, 1, dw ? 5 : 7, dw ? "[c2, k, s, d, act]" : "[c2, k, s, p, g, d, act]"))) return st;
        L->k = 1, L->s = 1, L->p = -1, L->g = 1, L->d = 1, L->act = 1;
        if (r->n_args > 1 && (st = arg_int(c, r, 1, "kernel", 1, 31, &L->k))) return st;
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "stride", 1, 16, &L->s))) return st;
        int ai = 3;
        if (!dw) {
            if (r->n_args > 3 && r->args[3].type != STRIX_ARG_NONE &&
                (st = arg_int(c, r, 3, "padding", 0, 31, &L->p))) return st;
            if (r->n_args > 4 && (st = arg_int(c, r, 4, "groups", 1, 1 << 20, &L->g))) return st;
            ai = 5;
        }
        if (r->n_args > ai && (st = arg_int(c, r, ai, "dilation", 1, 16, &L->d))) return st;
        if (r->n_args > ai + 1 && (st = arg_bool(c, r, ai + 1, "act", &L->act))) return st;
        if (dw) L->g = gcd(L->c1, L->c2);
        if (L->c1 % L->g || L->c2 % L->g)
            return row_fail(c, r, "groups %d must divide both %d input and %d output channels", L->g, L->c1, L->c2);
        if (L->copies > 1 && L->c1 != L->c2)
            return row_fail(c, r, "repeated %d times needs equal input and output channels (%d != %d)",
                            L->copies, L->c1, L->c2);
        args_text(L, r, 1, 0, 1, 0);
        break;
    }
    case STRIX_MOD_BOTTLENECK:
        /* [c2, shortcut=True, g=1, k=(3, 3), e=0.5] */
        if ((st = want_args(c, r, 1, 5, "[c2, shortcut, g, k, e]"))) return st;
        L->shortcut = 1, L->g = 1, L->e = 0.5, L->bk0 = L->bk1 = 3;
        if (r->n_args > 1 && (st = arg_bool(c, r, 1, "shortcut", &L->shortcut))) return st;
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "groups", 1, 1 << 20, &L->g))) return st;
        if (r->n_args > 3) return row_fail(c, r, "custom kernel tuples are not supported; omit argument 4");
        if (L->copies > 1 && L->c1 != L->c2)
            return row_fail(c, r, "repeated %d times needs equal input and output channels", L->copies);
        args_text(L, r, 1, 0, 1, 0);
        break;
    case STRIX_MOD_C2F:
        /* C2f: [c2, shortcut=False, g=1, e=0.5] */
        if ((st = want_args(c, r, 1, 4, "[c2, shortcut, g, e]"))) return st;
        L->shortcut = 0, L->g = 1, L->e = 0.5;
        if (r->n_args > 1 && (st = arg_bool(c, r, 1, "shortcut", &L->shortcut))) return st;
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "groups", 1, 1 << 20, &L->g))) return st;
        if (r->n_args > 3 && (st = arg_frac(c, r, 3, "expansion", &L->e))) return st;
        args_text(L, r, 1, 1, 1, 0);
        break;
    case STRIX_MOD_C3:
        /* C3: [c2, shortcut=True, g=1, e=0.5] */
        if ((st = want_args(c, r, 1, 4, "[c2, shortcut, g, e]"))) return st;
        L->shortcut = 1, L->g = 1, L->e = 0.5;
        if (r->n_args > 1 && (st = arg_bool(c, r, 1, "shortcut", &L->shortcut))) return st;
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "groups", 1, 1 << 20, &L->g))) return st;
        if (r->n_args > 3 && (st = arg_frac(c, r, 3, "expansion", &L->e))) return st;
        args_text(L, r, 1, 1, 1, 0);
        break;
    case STRIX_MOD_C3K2: {
        /* C3k2: [c2, c3k=False, e=0.5, attn=False, g=1, shortcut=True]; Ultralytics
         * forces c3k=True for the m, l and x scales. */
        if ((st = want_args(c, r, 1, 6, "[c2, c3k, e, attn, g, shortcut]"))) return st;
        L->c3k = 0, L->e = 0.5, L->g = 1, L->shortcut = 1;
        int attn = 0;
        if (r->n_args > 1 && (st = arg_bool(c, r, 1, "c3k", &L->c3k))) return st;
        if (r->n_args > 2 && (st = arg_frac(c, r, 2, "expansion", &L->e))) return st;
        if (r->n_args > 3 && (st = arg_bool(c, r, 3, "attn", &attn))) return st;
        if (r->n_args > 4 && (st = arg_int(c, r, 4, "groups", 1, 1 << 20, &L->g))) return st;
        if (r->n_args > 5 && (st = arg_bool(c, r, 5, "shortcut", &L->shortcut))) return st;
        L->attn = attn;
        int force = g->scale == 'm' || g->scale == 'l' || g->scale == 'x';
        if (force) L->c3k = 1;
        *legacy = 0;
        args_text(L, r, 1, 1, 1, force);
        break;
    }
    case STRIX_MOD_C3K: {
        /* Not a base module in Ultralytics: C3k(*args) with the YAML's arguments
         * verbatim, [c1, c2, n=1, shortcut=True, g=1, e=0.5, k=3], and the
         * layer's output channels taken to be its input's. */
        if ((st = want_args(c, r, 2, 7, "[c1, c2, n, shortcut, g, e, k]"))) return st;
        int a0 = 0, a1 = 0;
        if ((st = arg_int(c, r, 0, "input channels", 1, 1 << 20, &a0))) return st;
        if ((st = arg_int(c, r, 1, "output channels", 1, 1 << 20, &a1))) return st;
        if (a0 != L->c1 || a1 != L->c1)
            return row_fail(c, r, "at top level takes [c1, c2, ...] verbatim and must keep its input's %d channels",
                            L->c1);
        L->c2 = L->c1;
        L->inner = 1, L->shortcut = 1, L->g = 1, L->e = 0.5, L->ck = 3;
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "repeats", 1, 1000, &L->inner))) return st;
        if (r->n_args > 3 && (st = arg_bool(c, r, 3, "shortcut", &L->shortcut))) return st;
        if (r->n_args > 4 && (st = arg_int(c, r, 4, "groups", 1, 1 << 20, &L->g))) return st;
        if (r->n_args > 5 && (st = arg_frac(c, r, 5, "expansion", &L->e))) return st;
        if (r->n_args > 6 && (st = arg_int(c, r, 6, "kernel", 1, 31, &L->ck))) return st;
        L->copies = n;
        args_text(L, r, 0, 0, 0, 0);
        break;
    }
    case STRIX_MOD_SPPF:
        /* SPPF: [c2, k=5, n=3, shortcut=False]; rows with at most [c2, k] are the
         * legacy form whose cv1 keeps its SiLU. */
        if ((st = want_args(c, r, 1, 4, "[c2, k, n, shortcut]"))) return st;
        L->pool_k = 5, L->pool_n = 3, L->pool_add = 0;
        if (r->n_args > 1 && (st = arg_int(c, r, 1, "pool kernel", 1, 31, &L->pool_k))) return st;
        if (!(L->pool_k & 1)) return row_fail(c, r, "pool kernel must be odd, got %d", L->pool_k);
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "pool repeats", 1, 16, &L->pool_n))) return st;
        if (r->n_args > 3 && (st = arg_bool(c, r, 3, "shortcut", &L->pool_add))) return st;
        L->pool_act = r->n_args <= 2;
        L->pool_add = L->pool_add && L->c1 == L->c2;
        if (L->copies > 1 && L->c1 != L->c2)
            return row_fail(c, r, "repeated %d times needs equal input and output channels", L->copies);
        args_text(L, r, 1, 0, 1, 0);
        break;
    case STRIX_MOD_C2PSA:
        /* C2PSA: [c2, e=0.5], c1 == c2 */
        if ((st = want_args(c, r, 1, 2, "[c2, e]"))) return st;
        L->e = 0.5;
        if (r->n_args > 1 && (st = arg_frac(c, r, 1, "expansion", &L->e))) return st;
        if (L->c1 != L->c2)
            return row_fail(c, r, "needs equal input and output channels, got %d and %d", L->c1, L->c2);
        args_text(L, r, 1, 1, 1, 0);
        break;
    case STRIX_MOD_UPSAMPLE:
        /* nn.Upsample: [size=None, scale_factor, mode="nearest"] */
        if ((st = want_args(c, r, 2, 3, "[None, scale_factor, 'nearest']"))) return st;
        if (r->args[0].type != STRIX_ARG_NONE) return row_fail(c, r, "with a fixed output size is not supported; use [None, 2, 'nearest']");
        if ((st = arg_int(c, r, 1, "scale_factor", 1, 16, &L->up))) return st;
        if (r->n_args > 2 && (r->args[2].type != STRIX_ARG_STR || strcmp(r->args[2].str, "nearest")))
            return row_fail(c, r, "mode '%s' is not supported (only 'nearest')", r->args[2].str);
        L->c2 = L->c1;
        L->copies = 1;
        if (n > 1) return row_fail(c, r, "cannot be repeated");
        args_text(L, r, 0, 0, 0, 0);
        break;
    case STRIX_MOD_CONCAT: {
        int dim = 1;
        if ((st = want_args(c, r, 0, 1, "[dimension]"))) return st;
        if (r->n_args > 0 && (st = arg_int(c, r, 0, "dimension", -10, 10, &dim))) return st;
        if (dim != 1) return row_fail(c, r, "only along dimension 1 (channels) is supported, got %d", dim);
        if (n > 1) return row_fail(c, r, "cannot be repeated");
        L->c2 = 0;
        for (int i = 0; i < L->n_from; i++) L->c2 += L->from[i] >= 0 ? ch[L->from[i]] : 3;
        args_text(L, r, 0, 0, 0, 0);
        break;
    }
    case STRIX_MOD_CLASSIFY: {
        /* Classify: [c2 = nc, k=1, s=1, p=None, g=1]; c2 is not width-scaled */
        if ((st = want_args(c, r, 1, 5, "[nc, k, s, p, g]"))) return st;
        if ((st = head_nc(c, r, L))) return st;
        L->k = 1, L->s = 1, L->p = -1, L->g = 1;
        if (r->n_args > 1 && (st = arg_int(c, r, 1, "kernel", 1, 31, &L->k))) return st;
        if (r->n_args > 2 && (st = arg_int(c, r, 2, "stride", 1, 16, &L->s))) return st;
        if (r->n_args > 3 && r->args[3].type != STRIX_ARG_NONE &&
            (st = arg_int(c, r, 3, "padding", 0, 31, &L->p))) return st;
        if (r->n_args > 4 && (st = arg_int(c, r, 4, "groups", 1, 1 << 20, &L->g))) return st;
        if (L->c1 % L->g || STRIX_CLASSIFY_HIDDEN % L->g)
            return row_fail(c, r, "groups %d must divide both %d input and %d hidden channels", L->g, L->c1,
                            STRIX_CLASSIFY_HIDDEN);
        if (n > 1) return row_fail(c, r, "cannot be repeated");
        L->c2 = L->nc;
        snprintf(L->args_text, sizeof L->args_text, "[%d, %d]", L->c1, L->nc);
        break;
    }
    case STRIX_MOD_DETECT: {
        /* Detect: [nc]; Segment: [nc, nm=32, npr=256] (npr width-scaled);
         * Pose: [nc, kpt_shape] (the YAML key); OBB: [nc, ne=1] */
        int task = L->task;
        if (task == STRIX_TASK_SEGMENT) st = want_args(c, r, 1, 3, "[nc, masks, protos]");
        else if (task == STRIX_TASK_POSE) st = want_args(c, r, 1, 2, "[nc, kpt_shape]");
        else if (task == STRIX_TASK_OBB) st = want_args(c, r, 1, 2, "[nc, angles]");
        else st = want_args(c, r, 1, 1, "[nc]");
        if (st) return st;
        if ((st = head_nc(c, r, L))) return st;
        if (task == STRIX_TASK_SEGMENT) {
            int npr = 256;
            L->nm = 32;
            if (r->n_args > 1 && (st = arg_int(c, r, 1, "masks", 1, 1024, &L->nm))) return st;
            if (r->n_args > 2 && (st = arg_int(c, r, 2, "protos", 1, 1 << 16, &npr))) return st;
            L->npr = make_divisible((npr < g->max_channels ? npr : g->max_channels) * g->width, 8);
            L->extra = L->nm;
        } else if (task == STRIX_TASK_POSE) {
            L->kpt_n = g->kpt_n, L->kpt_d = g->kpt_d;
            if (r->n_args > 1 && !(r->args[1].type == STRIX_ARG_STR && !strcmp(r->args[1].str, "kpt_shape")))
                return row_fail(c, r, "argument 2 must be kpt_shape (the YAML key kpt_shape: [keypoints, dims])");
            if (!L->kpt_n) L->kpt_n = 17, L->kpt_d = 3; /* Pose's default (17, 3) */
            L->extra = L->kpt_n * L->kpt_d;
        } else if (task == STRIX_TASK_OBB) {
            L->ne = 1;
            if (r->n_args > 1 && (st = arg_int(c, r, 1, "angles", 1, 1, &L->ne))) return st;
            L->extra = L->ne;
        }
        if (n > 1) return row_fail(c, r, "cannot be repeated");
        if (L->n_from > STRIX_MAX_LEVELS) return row_fail(c, r, "has more than %d levels", STRIX_MAX_LEVELS);
        for (int i = 0; i < L->n_from; i++)
            if (L->from[i] < 0) return row_fail(c, r, "cannot take the input image as a level");
        L->reg_max = g->reg_max;
        L->end2end = g->end2end;
        L->legacy = *legacy;
        L->c1 = ch[L->from[0]];
        L->c2 = 4 * L->reg_max + L->nc;
        char t[128] = "";
        for (int i = 0; i < L->n_from; i++) {
            char e[16];
            snprintf(e, sizeof e, "%s%d", i ? ", " : "", ch[L->from[i]]);
            append(t, sizeof t, e);
        }
        if (task == STRIX_TASK_SEGMENT)
            snprintf(L->args_text, sizeof L->args_text, "[%d, %d, %d, %d, %s, [%s]]", L->nc, L->nm, L->npr,
                     L->reg_max, L->end2end ? "True" : "False", t);
        else if (task == STRIX_TASK_POSE)
            snprintf(L->args_text, sizeof L->args_text, "[%d, [%d, %d], %d, %s, [%s]]", L->nc, L->kpt_n,
                     L->kpt_d, L->reg_max, L->end2end ? "True" : "False", t);
        else if (task == STRIX_TASK_OBB)
            snprintf(L->args_text, sizeof L->args_text, "[%d, %d, %d, %s, [%s]]", L->nc, L->ne, L->reg_max,
                     L->end2end ? "True" : "False", t);
        else
            snprintf(L->args_text, sizeof L->args_text, "[%d, %d, None, [%s]]", L->nc, L->reg_max, t);
        break;
    }
    }
    return STRIX_OK;
}

static char scale_from_name(const char *path)
{
    /* yolov8n.yaml -> n, yolo11x.yaml -> x: a scale letter right after the
     * version digits of the file's stem (Ultralytics' guess_model_scale). */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t len = dot ? (size_t)(dot - base) : strlen(base);
    for (size_t i = 1; i < len; i++)
        if (base[i - 1] >= '0' && base[i - 1] <= '9' && strchr("nsmlx", base[i]) &&
            (i + 1 == len || !((base[i + 1] >= 'a' && base[i + 1] <= 'z'))))
            return base[i];
    return 0;
}

strix_status strix_graph_build(strix_graph *g, const strix_yaml_model *y, char scale,
                               int nc_override, strix_error *err)
{
    memset(g, 0, sizeof *g);
    snprintf(g->path, sizeof g->path, "%s", y->path);
    g->nc = nc_override > 0 ? nc_override : y->nc;
    g->reg_max = y->reg_max;
    g->end2end = y->end2end;
    g->kpt_n = y->kpt_n;
    g->kpt_d = y->kpt_d;
    g->depth = y->depth_multiple;
    g->width = y->width_multiple;
    g->max_channels = 1 << 30;
    if (!scale) scale = y->scale;
    if (!scale) scale = scale_from_name(y->path);
    if (y->n_scales) {
        int found = -1;
        char avail[32] = "";
        for (int i = 0; i < y->n_scales; i++) {
            size_t l = strlen(avail);
            snprintf(avail + l, sizeof avail - l, "%s%c", i ? ", " : "", y->scales[i].letter);
            if (y->scales[i].letter == scale) found = i;
        }
        if (!scale)
            return strix_fail(err, STRIX_E_ARG,
                              "%s: no model scale given and none in the file name; choose one of %s "
                              "(--scale)", y->path, avail);
        if (found < 0)
            return strix_fail(err, STRIX_E_ARG, "%s: scale '%c' is not defined in 'scales' (have %s)",
                              y->path, scale, avail);
        g->depth = y->scales[found].depth;
        g->width = y->scales[found].width;
        g->max_channels = y->scales[found].max_channels;
    }
    g->scale = scale;
    g->layers = calloc((size_t)y->n_rows, sizeof *g->layers);
    int *ch = calloc((size_t)y->n_rows, sizeof *ch);
    if (!g->layers || !ch) {
        free(ch);
        strix_graph_free(g);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", y->path);
    }
    bctx c = {y, g, err};
    int legacy = 1;
    strix_status st = STRIX_OK;
    for (int i = 0; i < y->n_rows && !st; i++) {
        const strix_yaml_row *r = &y->rows[i];
        strix_layer *L = &g->layers[i];
        L->index = i;
        L->line = r->line;
        L->n_from = r->n_from;
        char *ft = L->from_text;
        ft[0] = 0;
        if (r->from_is_list) append(ft, sizeof L->from_text, "[");
        for (int j = 0; j < r->n_from; j++) {
            int f = r->from[j];
            char t[16];
            snprintf(t, sizeof t, "%s%d", j ? ", " : "", f);
            append(ft, sizeof L->from_text, t);
            /* -1 is the previous layer (the image for layer 0); other negatives count back */
            int a = f < 0 ? i + f : f;
            if (f >= i || a < -1 || (f < -1 && a < 0) || (i == 0 && f != -1)) {
                st = row_fail(&c, r, "'from' index %d does not name an earlier layer (this is layer %d)", f, i);
                break;
            }
            L->from[j] = a;
        }
        if (r->from_is_list) append(ft, sizeof L->from_text, "]");
        if (st) break;
        st = resolve(&c, r, L, ch, &legacy);
        if (!st && (L->kind == STRIX_MOD_DETECT || L->kind == STRIX_MOD_CLASSIFY) && i != y->n_rows - 1)
            st = row_fail(&c, r, "must be the last layer");
        ch[i] = L->c2;
    }
    free(ch);
    if (!st && g->layers[y->n_rows - 1].kind != STRIX_MOD_DETECT && g->layers[y->n_rows - 1].kind != STRIX_MOD_CLASSIFY)
        st = strix_fail(err, STRIX_E_MODEL, "%s:%d: the last layer must be Detect or another head (Segment, Pose, "
                        "OBB, Classify)", y->path, y->rows[y->n_rows - 1].line);
    if (!st) g->task = g->layers[y->n_rows - 1].task;
    if (st) {
        strix_graph_free(g);
        return st;
    }
    g->n_layers = y->n_rows;
    return STRIX_OK;
}

void strix_graph_free(strix_graph *g)
{
    free(g->layers);
    g->layers = NULL;
    g->n_layers = 0;
}
