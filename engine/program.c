/* program.c — lowers resolved layers into primitive ops (conv, max-pool,
 * upsample, copy, attention, decode; the task heads' shuffle, add, average
 * pool and softmax) over channel slices of buffers.
 *
 * Concat and chunk/split cost nothing: a layer whose output feeds a Concat is
 * written straight into its channel slice of the Concat's buffer (only a
 * second Concat of the same tensor needs a COPY), C2f's cv1 writes the first
 * 2c channels of the buffer its bottlenecks append to, and Detect's last
 * convolutions write their level's rows of the [N, A, 4*reg_max + nc] head.
 * Weight names follow Ultralytics' state_dict: model.<layer>.<submodule...>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "util.h"

typedef struct lctx {
    strix_program *p;
    strix_error *err;
    const char *path;
    int layer;
    int oom;
} lctx;

static void *grow(void *ptr, int *cap, int need, size_t elem)
{
    if (need <= *cap) return ptr;
    int nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *np = realloc(ptr, (size_t)nc * elem);
    if (np) *cap = nc;
    return np;
}

static int new_buf(lctx *c, strix_buf_kind kind, int ch)
{
    strix_program *p = c->p;
    strix_buffer *b = grow(p->bufs, &p->cap_bufs, p->n_bufs + 1, sizeof *b);
    if (!b) { c->oom = 1; return 0; }
    p->bufs = b;
    b[p->n_bufs].kind = kind;
    b[p->n_bufs].c = ch;
    return p->n_bufs++;
}

static int new_value(lctx *c, int buf, int c0, int ch, int level)
{
    strix_program *p = c->p;
    strix_value *v = grow(p->values, &p->cap_values, p->n_values + 1, sizeof *v);
    if (!v) { c->oom = 1; return 0; }
    p->values = v;
    v[p->n_values] = (strix_value){buf, c0, ch, level};
    return p->n_values++;
}

/* A fresh [N, h, w, ch] tensor. */
static int tmp(lctx *c, int ch) { return new_value(c, new_buf(c, STRIX_BUF_SPATIAL, ch), 0, ch, -1); }

/* Channels [c0, c0 + ch) of value v. */
static int slice(lctx *c, int v, int c0, int ch)
{
    strix_value s = c->p->values[v];
    return new_value(c, s.buf, s.c0 + c0, ch, s.level);
}

static strix_node *new_node(lctx *c, strix_op op, int in, int out)
{
    strix_program *p = c->p;
    strix_node *n = grow(p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof *n);
    if (!n) { c->oom = 1; return NULL; }
    p->nodes = n;
    n = &p->nodes[p->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->layer = c->layer;
    n->in = in;
    n->out = out;
    n->out2 = n->res = -1;
    return n;
}

/* Conv (conv + BatchNorm + optional SiLU) or, with plain, nn.Conv2d with bias. */
static strix_node *conv(lctx *c, const char *name, int in, int out, int res, int k, int s, int g,
                        int act, int plain)
{
    strix_node *n = new_node(c, STRIX_OP_CONV, in, out);
    if (!n) return NULL;
    n->res = res;
    n->cin = c->p->values[in].c;
    n->cout = c->p->values[out].c;
    n->plain = plain;
    /* autopad with dilation 1: 'same' padding for odd kernels */
    n->conv = (strix_conv_params){k, k, s, s, k / 2, k / 2, 1, 1, g, act ? STRIX_ACT_SILU : STRIX_ACT_NONE};
    strix_strlcpy(n->wname, sizeof n->wname, name);
    return n;
}

/* A head conv with an unrun copy in the other head (see strix_node.twin). */
static void head_conv(lctx *c, const char *name, int in, int out, int k, int g, int act, int plain, int twin)
{
    strix_node *n = conv(c, name, in, out, -1, k, 1, g, act, plain);
    if (n) n->twin = twin;
}

/* Tensors under prefix are accepted but not run; params and modules they hold. */
static void unused(lctx *c, const char *prefix, long long params, int modules)
{
    strix_program *p = c->p;
    for (int i = 0; i < STRIX_UNUSED_PREFIXES; i++)
        if (!p->unused_prefix[i][0]) {
            strix_strlcpy(p->unused_prefix[i], sizeof p->unused_prefix[i], prefix);
            p->unused_params += params;
            p->unused_modules += modules;
            return;
        }
    c->oom = 1; /* more than STRIX_UNUSED_PREFIXES: a program bug, reported as out of memory */
}

/* Params of an unrun Ultralytics Conv (conv + BatchNorm) and of an nn.Conv2d with bias. */
static long long conv_params(int cin, int cout, int k) { return (long long)cin * cout * k * k + 2LL * cout; }
static long long plain_params(int cin, int cout, int k) { return (long long)cin * cout * k * k + cout; }

static void name2(char *dst, size_t n, const char *prefix, const char *suffix)
{
    strix_strlcpy(dst, n, prefix);
    strix_strlcat(dst, n, ".");
    strix_strlcat(dst, n, suffix);
}

/* Bottleneck(c1, c2, shortcut, g, k=(k0, k1), e): out = [x +] cv2(cv1(x)). */
static void bottleneck(lctx *c, const char *pre, int x, int out, int shortcut, int g, int k0,
                       int k1, double e)
{
    char nm[96];
    int c1 = c->p->values[x].c, c2 = c->p->values[out].c;
    int t = tmp(c, (int)(c2 * e));
    name2(nm, sizeof nm, pre, "cv1");
    conv(c, nm, x, t, -1, k0, 1, 1, 1, 0);
    name2(nm, sizeof nm, pre, "cv2");
    conv(c, nm, t, out, shortcut && c1 == c2 ? x : -1, k1, 1, g, 1, 0);
}

/* C3(c1, c2, n, shortcut, g, e) with bottleneck kernels (k0, k1): C3k is C3 with (k, k). */
static void c3(lctx *c, const char *pre, int x, int out, int n, int shortcut, int g, double e,
               int k0, int k1)
{
    char nm[96];
    int ch = (int)(c->p->values[out].c * e);
    int cat = tmp(c, 2 * ch);
    int y = tmp(c, ch);
    name2(nm, sizeof nm, pre, "cv1");
    conv(c, nm, x, y, -1, 1, 1, 1, 1, 0);
    for (int j = 0; j < n; j++) {
        int o = j == n - 1 ? slice(c, cat, 0, ch) : tmp(c, ch);
        snprintf(nm, sizeof nm, "%s.m.%d", pre, j);
        bottleneck(c, nm, y, o, shortcut, g, k0, k1, 1.0);
        y = o;
    }
    name2(nm, sizeof nm, pre, "cv2");
    conv(c, nm, x, slice(c, cat, ch, ch), -1, 1, 1, 1, 1, 0);
    name2(nm, sizeof nm, pre, "cv3");
    conv(c, nm, cat, out, -1, 1, 1, 1, 1, 0);
}

/* C2f / C3k2: cv1 into the first 2c channels of one buffer, each inner block
 * appends c channels, cv2 reads the whole buffer: chunk and concat are free. */
static void psa_block(lctx *c, const char *pre, int x, int out);

/* C2f, and C3k2 (its blocks: Bottleneck, C3k, or YOLO26's Bottleneck then
 * PSABlock, in that order of precedence as Ultralytics builds them). */
static void c2f(lctx *c, const strix_layer *L, const char *pre, int x, int out)
{
    char nm[96];
    int ch = (int)(L->c2 * L->e), n = L->inner;
    int cat = tmp(c, (2 + n) * ch);
    name2(nm, sizeof nm, pre, "cv1");
    conv(c, nm, x, slice(c, cat, 0, 2 * ch), -1, 1, 1, 1, 1, 0);
    for (int j = 0; j < n; j++) {
        int in = slice(c, cat, (1 + j) * ch, ch), o = slice(c, cat, (2 + j) * ch, ch);
        snprintf(nm, sizeof nm, "%s.m.%d", pre, j);
        if (L->kind == STRIX_MOD_C2F) {
            bottleneck(c, nm, in, o, L->shortcut, L->g, 3, 3, 1.0);
        } else if (L->attn) { /* nn.Sequential(Bottleneck, PSABlock): m.j.0, m.j.1 */
            char sub[96];
            int t = tmp(c, ch);
            snprintf(sub, sizeof sub, "%s.0", nm);
            bottleneck(c, sub, in, t, L->shortcut, L->g, 3, 3, 0.5);
            snprintf(sub, sizeof sub, "%s.1", nm);
            psa_block(c, sub, t, o);
        } else if (L->c3k) c3(c, nm, in, o, 2, L->shortcut, L->g, 0.5, 3, 3);
        else bottleneck(c, nm, in, o, L->shortcut, L->g, 3, 3, 0.5);
    }
    name2(nm, sizeof nm, pre, "cv2");
    conv(c, nm, cat, out, -1, 1, 1, 1, 1, 0);
}

/* SPPF: cv1, n cascaded k x k max-pools appended channel-wise, cv2. */
static void sppf(lctx *c, const strix_layer *L, const char *pre, int x, int out)
{
    char nm[96];
    int ch = c->p->values[x].c / 2, n = L->pool_n;
    int cat = tmp(c, ch * (n + 1));
    name2(nm, sizeof nm, pre, "cv1");
    conv(c, nm, x, slice(c, cat, 0, ch), -1, 1, 1, 1, L->pool_act, 0);
    for (int j = 1; j <= n; j++) {
        strix_node *nd = new_node(c, STRIX_OP_MAXPOOL, slice(c, cat, (j - 1) * ch, ch), slice(c, cat, j * ch, ch));
        if (nd) nd->pool = (strix_pool_params){L->pool_k, 1, L->pool_k / 2};
    }
    name2(nm, sizeof nm, pre, "cv2");
    conv(c, nm, cat, out, L->pool_add ? x : -1, 1, 1, 1, 1, 0);
}

/* PSABlock(c): x + Attention(x), then + ffn; Attention = proj(attn(qkv) + pe(v)). */
static void psa_block(lctx *c, const char *pre, int x, int out)
{
    char nm[96];
    int ch = c->p->values[x].c;
    int heads = ch / 64 > 1 ? ch / 64 : 1;
    int hd = ch / heads, kd = (int)(hd * 0.5);
    int qkv = tmp(c, ch + 2 * kd * heads);
    name2(nm, sizeof nm, pre, "attn.qkv");
    conv(c, nm, x, qkv, -1, 1, 1, 1, 0, 0);
    int a = tmp(c, ch), v = tmp(c, ch);
    strix_node *n = new_node(c, STRIX_OP_ATTENTION, qkv, a);
    if (!n) return;
    n->out2 = v;
    n->attn = (strix_attn_params){heads, kd, hd, 0};
    n->attn.scale = (float)(1.0 / sqrt((double)kd)); /* key_dim ** -0.5, as Python computes it */
    name2(nm, sizeof nm, pre, "attn.pe");
    conv(c, nm, v, a, a, 3, 1, ch, 0, 0);
    int t1 = tmp(c, ch), f = tmp(c, 2 * ch);
    name2(nm, sizeof nm, pre, "attn.proj");
    conv(c, nm, a, t1, x, 1, 1, 1, 0, 0);
    name2(nm, sizeof nm, pre, "ffn.0");
    conv(c, nm, t1, f, -1, 1, 1, 1, 1, 0);
    name2(nm, sizeof nm, pre, "ffn.1");
    conv(c, nm, f, out, t1, 1, 1, 1, 0, 0);
}

static void c2psa(lctx *c, const strix_layer *L, const char *pre, int x, int out)
{
    char nm[96];
    int ch = (int)(L->c1 * L->e);
    int cat = tmp(c, 2 * ch);
    name2(nm, sizeof nm, pre, "cv1");
    conv(c, nm, x, cat, -1, 1, 1, 1, 1, 0);
    int y = slice(c, cat, ch, ch);
    for (int j = 0; j < L->inner; j++) {
        int o = j == L->inner - 1 ? slice(c, cat, ch, ch) : tmp(c, ch);
        snprintf(nm, sizeof nm, "%s.m.%d", pre, j);
        psa_block(c, nm, y, o);
        y = o;
    }
    name2(nm, sizeof nm, pre, "cv2");
    conv(c, nm, cat, out, -1, 1, 1, 1, 1, 0);
}

/* Proto(c1, c_ = npr, c2 = nm): cv1 (3x3), ConvTranspose2d(c_, c_, 2, 2) as a
 * 1x1 GEMM to 4 c_ channels and a SHUFFLE2, cv2 (3x3), cv3 (1x1); the
 * protos, [N, H/4, W/4, nm], are p->proto.  Proto26 first sums the levels
 * at level 0's size (feat_refine 1x1 convs, nearest upsampling by 2, 4, ...)
 * and fuses them (feat_fuse, 3x3); its semseg branch trains only. */
static void proto(lctx *c, const strix_layer *L, const int *lv)
{
    strix_program *p = c->p;
    char nm[96];
    int ch0 = p->values[lv[0]].c, npr = L->npr, x = lv[0];
    if (L->v26) {
        for (int i = 1; i < L->n_from; i++) {
            int r = tmp(c, ch0), u = tmp(c, ch0), sum = tmp(c, ch0);
            snprintf(nm, sizeof nm, "model.%d.proto.feat_refine.%d", L->index, i - 1);
            conv(c, nm, lv[i], r, -1, 1, 1, 1, 1, 0);
            strix_node *n = new_node(c, STRIX_OP_UPSAMPLE, r, u);
            if (n) n->scale = 1 << i, n->functional = 1;
            n = new_node(c, STRIX_OP_ADD, x, sum);
            if (n) n->res = u;
            x = sum;
        }
        int f = tmp(c, npr);
        snprintf(nm, sizeof nm, "model.%d.proto.feat_fuse", L->index);
        conv(c, nm, x, f, -1, 3, 1, 1, 1, 0);
        x = f;
        snprintf(nm, sizeof nm, "model.%d.proto.semseg.", L->index);
        unused(c, nm, conv_params(ch0, npr, 3) + conv_params(npr, npr, 3) + plain_params(npr, L->nc, 1), 5);
    }
    int a = tmp(c, npr), g = tmp(c, 4 * npr), up = tmp(c, npr), b = tmp(c, npr);
    p->proto = tmp(c, L->nm);
    snprintf(nm, sizeof nm, "model.%d.proto.cv1", L->index);
    conv(c, nm, x, a, -1, 3, 1, 1, 1, 0);
    snprintf(nm, sizeof nm, "model.%d.proto.upsample", L->index);
    strix_node *t = conv(c, nm, a, g, -1, 1, 1, 1, 0, 1);
    if (t) t->convt = 1;
    new_node(c, STRIX_OP_SHUFFLE2, g, up);
    snprintf(nm, sizeof nm, "model.%d.proto.cv2", L->index);
    conv(c, nm, up, b, -1, 3, 1, 1, 1, 0);
    snprintf(nm, sizeof nm, "model.%d.proto.cv3", L->index);
    conv(c, nm, b, p->proto, -1, 1, 1, 1, 1, 0);
}

/* Classify(c1, nc, k, s, p, g): Conv to 1280 channels, AdaptiveAvgPool2d(1),
 * Dropout (identity at inference), Linear (a 1x1 conv on the 1x1 map),
 * softmax: out is [N, 1, 1, nc] probabilities. */
static void classify(lctx *c, const strix_layer *L, const char *pre, int x, int out)
{
    char nm[96];
    int h = tmp(c, STRIX_CLASSIFY_HIDDEN), pooled = tmp(c, STRIX_CLASSIFY_HIDDEN), logits = tmp(c, L->nc);
    strix_node *n = new_node(c, STRIX_OP_CONV, x, h);
    if (!n) return;
    int pad = L->p >= 0 ? L->p : L->k / 2;
    n->cin = c->p->values[x].c;
    n->cout = STRIX_CLASSIFY_HIDDEN;
    n->conv = (strix_conv_params){L->k, L->k, L->s, L->s, pad, pad, 1, 1, L->g, STRIX_ACT_SILU};
    name2(n->wname, sizeof n->wname, pre, "conv");
    new_node(c, STRIX_OP_AVGPOOL, h, pooled);
    name2(nm, sizeof nm, pre, "linear");
    n = conv(c, nm, pooled, logits, -1, 1, 1, 1, 0, 1);
    if (n) n->linear = 1;
    new_node(c, STRIX_OP_SOFTMAX, logits, out);
}

/* Detect: per level a box branch (cv2) and a class branch (cv3) writing their
 * slices of the head; YOLO11's class branch uses depthwise convs.  YOLO26's
 * end2end Detect has a second, one-to-one copy (one2one_cv2, one2one_cv3):
 * one of the two runs (L->one2one), the other is counted by inspect (the
 * unfused model holds both) but not run. */
static void detect(lctx *c, const strix_layer *L, const int *lv, int out)
{
    strix_program *p = c->p;
    char nm[96];
    int ch0 = p->values[lv[0]].c;
    int c2 = 16, c3 = ch0;
    if (ch0 / 4 > c2) c2 = ch0 / 4;
    if (L->reg_max * 4 > c2) c2 = L->reg_max * 4;
    if ((L->nc < 100 ? L->nc : 100) > c3) c3 = L->nc < 100 ? L->nc : 100;
    int nb = 4 * L->reg_max, nx = L->extra, tw = L->end2end;
    int o2o = L->end2end && L->one2one;
    const char *bx = o2o ? "one2one_cv2" : "cv2", *cl = o2o ? "one2one_cv3" : "cv3";
    const char *ex = o2o ? "one2one_cv4" : "cv4", *ek = o2o ? "one2one_cv4_kpts" : "cv4_kpts";
    int kpts26 = L->task == STRIX_TASK_POSE && L->v26; /* Pose26: cv4 ends at its second Conv, cv4_kpts follows */
    /* cv4 (Segment, Pose, OBB): c4 channels, then the task's */
    int c4 = ch0 / 4 > nx ? ch0 / 4 : nx;
    if (kpts26 && L->kpt_n * (L->kpt_d + 2) > c4) c4 = L->kpt_n * (L->kpt_d + 2);
    p->two_heads = L->end2end;
    p->end2end = o2o;
    if (L->end2end) { /* the other head's tensors: in the checkpoint, not run (counted with the twins) */
        static const char *const heads[4] = {"cv2", "cv3", "cv4", "cv4_kpts"};
        int n_heads = nx ? 3 + kpts26 : 2;
        for (int k = 0; k < n_heads; k++) {
            snprintf(nm, sizeof nm, "model.%d.%s%s.", L->index, o2o ? "" : "one2one_", heads[k]);
            unused(c, nm, 0, 0);
        }
    }
    if (kpts26) {
        /* training only: the keypoint sigmas of both heads and the RealNVP flow */
        int ns = 2 * L->kpt_n;
        long long sig = 0;
        for (int i = 0; i < L->n_from; i++) sig += plain_params(c4, ns, 1);
        snprintf(nm, sizeof nm, "model.%d.cv4_sigma.", L->index);
        unused(c, nm, sig, L->n_from);
        if (L->end2end) {
            snprintf(nm, sizeof nm, "model.%d.one2one_cv4_sigma.", L->index);
            unused(c, nm, sig, L->n_from);
        }
        snprintf(nm, sizeof nm, "model.%d.flow_model.", L->index);
        unused(c, nm, STRIX_REALNVP_PARAMS, STRIX_REALNVP_MODULES);
    }
    p->head_buf = new_buf(c, STRIX_BUF_HEAD, nb + L->nc + nx);
    p->levels = L->n_from;
    for (int i = 0; i < L->n_from; i++) {
        int x = lv[i], cx = p->values[x].c;
        p->level_in[i] = x;
        int box = new_value(c, p->head_buf, 0, nb, i), cls = new_value(c, p->head_buf, nb, L->nc, i);
        int t1 = tmp(c, c2), t2 = tmp(c, c2);
        snprintf(nm, sizeof nm, "model.%d.%s.%d.0", L->index, bx, i);
        head_conv(c, nm, x, t1, 3, 1, 1, 0, tw);
        snprintf(nm, sizeof nm, "model.%d.%s.%d.1", L->index, bx, i);
        head_conv(c, nm, t1, t2, 3, 1, 1, 0, tw);
        snprintf(nm, sizeof nm, "model.%d.%s.%d.2", L->index, bx, i);
        head_conv(c, nm, t2, box, 1, 1, 0, 1, tw);
        int u1 = tmp(c, c3), u2 = tmp(c, c3);
        if (L->legacy) {
            snprintf(nm, sizeof nm, "model.%d.%s.%d.0", L->index, cl, i);
            head_conv(c, nm, x, u1, 3, 1, 1, 0, tw);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.1", L->index, cl, i);
            head_conv(c, nm, u1, u2, 3, 1, 1, 0, tw);
        } else {
            int d1 = tmp(c, cx), d2 = tmp(c, c3);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.0.0", L->index, cl, i);
            head_conv(c, nm, x, d1, 3, cx, 1, 0, tw);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.0.1", L->index, cl, i);
            head_conv(c, nm, d1, u1, 1, 1, 1, 0, tw);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.1.0", L->index, cl, i);
            head_conv(c, nm, u1, d2, 3, c3, 1, 0, tw);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.1.1", L->index, cl, i);
            head_conv(c, nm, d2, u2, 1, 1, 1, 0, tw);
        }
        snprintf(nm, sizeof nm, "model.%d.%s.%d.2", L->index, cl, i);
        head_conv(c, nm, u2, cls, 1, 1, 0, 1, tw);
        if (nx) {
            int e1 = tmp(c, c4), e2 = tmp(c, c4), xo = new_value(c, p->head_buf, nb + L->nc, nx, i);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.0", L->index, ex, i);
            head_conv(c, nm, x, e1, 3, 1, 1, 0, tw);
            snprintf(nm, sizeof nm, "model.%d.%s.%d.1", L->index, ex, i);
            head_conv(c, nm, e1, e2, 3, 1, 1, 0, tw);
            if (kpts26) snprintf(nm, sizeof nm, "model.%d.%s.%d", L->index, ek, i);
            else snprintf(nm, sizeof nm, "model.%d.%s.%d.2", L->index, ex, i);
            head_conv(c, nm, e2, xo, 1, 1, 0, 1, tw);
        }
    }
    if (L->reg_max > 1) /* reg_max 1 (YOLO26): the box outputs are the distances, no DFL */
        snprintf(p->dfl_name, sizeof p->dfl_name, "model.%d.dfl.conv.weight", L->index);
    new_node(c, STRIX_OP_DECODE, new_value(c, p->head_buf, 0, nb + L->nc + nx, -1), out);
    if (L->task == STRIX_TASK_SEGMENT) proto(c, L, lv);
}

static void lower_layer(lctx *c, const strix_layer *L, const int *outv, int x, int out)
{
    char pre[64];
    for (int k = 0; k < L->copies; k++) {
        /* non-repeat modules repeated n times are nn.Sequential: model.i.k.* */
        if (L->copies > 1) snprintf(pre, sizeof pre, "model.%d.%d", L->index, k);
        else snprintf(pre, sizeof pre, "model.%d", L->index);
        int o = k == L->copies - 1 ? out : tmp(c, L->c2);
        switch (L->kind) {
        case STRIX_MOD_CONV:
        case STRIX_MOD_DWCONV: {
            strix_node *n = new_node(c, STRIX_OP_CONV, x, o);
            if (!n) return;
            int keff = L->d * (L->k - 1) + 1;
            int pad = L->p >= 0 ? L->p : keff / 2;
            n->cin = c->p->values[x].c;
            n->cout = L->c2;
            n->conv = (strix_conv_params){L->k, L->k, L->s, L->s, pad, pad, L->d, L->d, L->g,
                                          L->act ? STRIX_ACT_SILU : STRIX_ACT_NONE};
            snprintf(n->wname, sizeof n->wname, "%s", pre);
            break;
        }
        case STRIX_MOD_BOTTLENECK: bottleneck(c, pre, x, o, L->shortcut, L->g, 3, 3, L->e); break;
        case STRIX_MOD_C2F:
        case STRIX_MOD_C3K2: c2f(c, L, pre, x, o); break;
        case STRIX_MOD_C3: c3(c, pre, x, o, L->inner, L->shortcut, L->g, L->e, 1, 3); break;
        case STRIX_MOD_C3K: c3(c, pre, x, o, L->inner, L->shortcut, L->g, L->e, L->ck, L->ck); break;
        case STRIX_MOD_SPPF: sppf(c, L, pre, x, o); break;
        case STRIX_MOD_C2PSA: c2psa(c, L, pre, x, o); break;
        case STRIX_MOD_UPSAMPLE: {
            strix_node *n = new_node(c, STRIX_OP_UPSAMPLE, x, o);
            if (n) n->scale = L->up;
            break;
        }
        case STRIX_MOD_CONCAT: {
            /* inputs already written into their slices; copy the rest */
            int off = 0;
            for (int i = 0; i < L->n_from; i++) {
                int src = L->from[i] >= 0 ? outv[L->from[i]] : c->p->input;
                int w = c->p->values[src].c;
                const strix_value *sv = &c->p->values[src], *ov = &c->p->values[o];
                if (!(sv->buf == ov->buf && sv->c0 == ov->c0 + off))
                    new_node(c, STRIX_OP_COPY, src, slice(c, o, off, w));
                off += w;
            }
            break;
        }
        case STRIX_MOD_CLASSIFY: classify(c, L, pre, x, o); break;
        case STRIX_MOD_DETECT: {
            int lv[STRIX_YAML_MAX_FROM];
            for (int i = 0; i < L->n_from; i++) lv[i] = outv[L->from[i]];
            detect(c, L, lv, o);
            break;
        }
        }
        x = o;
    }
}

static int same_slice(const strix_program *p, int a, int b)
{
    const strix_value *x = &p->values[a], *y = &p->values[b];
    return x->buf == y->buf && x->c0 == y->c0 && x->c == y->c && x->level == y->level;
}

/* How many max-pools from node i form one SPPF cascade: k x k, stride 1,
 * 'same' padding, each reading the previous one's output, within one layer. */
static int cascade_length(const strix_program *p, int i)
{
    const strix_node *a = &p->nodes[i];
    if (a->pool.stride != 1 || 2 * a->pool.pad != a->pool.k - 1) return 1;
    int len = 1;
    while (len < STRIX_CASCADE_MAX && i + len < p->n_nodes) {
        const strix_node *nx = &p->nodes[i + len], *pv = &p->nodes[i + len - 1];
        if (nx->op != STRIX_OP_MAXPOOL || nx->layer != a->layer || nx->pool.k != a->pool.k ||
            nx->pool.stride != 1 || nx->pool.pad != a->pool.pad || !same_slice(p, nx->in, pv->out))
            break;
        len++;
    }
    return len;
}

/* Mark the fusions (see strix_node): each run of cascaded max-pools. */
static void fuse(strix_program *p)
{
    for (int i = 0; i < p->n_nodes; i++) {
        if (p->nodes[i].op != STRIX_OP_MAXPOOL) continue;
        int len = cascade_length(p, i);
        if (len < 2) continue;
        p->nodes[i].cascade = len;
        for (int k = 1; k < len; k++) p->nodes[i + k].fused = 1;
        i += len - 1;
    }
}

strix_status strix_program_build(strix_program *p, const strix_graph *g, strix_error *err)
{
    memset(p, 0, sizeof *p);
    p->head_buf = p->out_buf = p->proto = -1;
    p->nc = g->nc;
    p->reg_max = g->reg_max;
    p->task = g->task;
    const strix_layer *head = &g->layers[g->n_layers - 1];
    p->extra = head->extra;
    p->kpt_n = head->kpt_n;
    p->kpt_d = head->kpt_d;
    p->v26 = head->v26;
    lctx c = {p, err, g->path, -1, 0};
    int nl = g->n_layers;
    int *outv = malloc(sizeof *outv * (size_t)nl);
    if (!outv) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", g->path);
    for (int i = 0; i < nl; i++) outv[i] = -1;
    p->input = tmp(&c, 3);
    /* Place each layer feeding a Concat straight into the Concat's buffer
     * (first Concat wins; a second one gets a COPY). */
    for (int j = 0; j < nl; j++) {
        const strix_layer *L = &g->layers[j];
        if (L->kind != STRIX_MOD_CONCAT) continue;
        int buf = tmp(&c, L->c2), off = 0;
        outv[j] = buf;
        for (int i = 0; i < L->n_from; i++) {
            int f = L->from[i];
            int w = f >= 0 ? g->layers[f].c2 : 3;
            int twice = 0;
            for (int k = 0; k < i; k++) twice |= L->from[k] == f;
            if (f >= 0 && outv[f] < 0 && !twice && g->layers[f].kind != STRIX_MOD_DETECT)
                outv[f] = slice(&c, buf, off, w);
            off += w;
        }
    }
    for (int i = 0; i < nl && !c.oom; i++) {
        const strix_layer *L = &g->layers[i];
        c.layer = i;
        if (L->kind == STRIX_MOD_DETECT) {
            p->out_buf = new_buf(&c, STRIX_BUF_OUT, 4 + L->nc + L->extra);
            outv[i] = new_value(&c, p->out_buf, 0, 4 + L->nc + L->extra, -1);
        } else if (L->kind == STRIX_MOD_CLASSIFY) {
            outv[i] = tmp(&c, L->nc); /* [N, 1, 1, nc] */
            p->out_buf = p->values[outv[i]].buf;
        } else if (outv[i] < 0) {
            outv[i] = tmp(&c, L->c2);
        }
        int x = L->from[0] >= 0 ? outv[L->from[0]] : p->input;
        lower_layer(&c, L, outv, x, outv[i]);
    }
    p->layer_out = outv;
    if (c.oom) {
        strix_program_free(p);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", g->path);
    }
    /* weight blob layout: per conv, OHWI weights then bias */
    size_t off = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV) continue;
        n->woff = off;
        off += (size_t)n->cout * n->conv.kh * n->conv.kw * (n->cin / n->conv.groups);
        n->boff = off;
        off += (size_t)n->cout;
    }
    p->weight_floats = off;
    fuse(p);
    return STRIX_OK;
}

/* Whether values a and b share channels of one buffer. */
static int overlaps(const strix_program *p, int a, int b)
{
    const strix_value *x = &p->values[a], *y = &p->values[b];
    return x->buf == y->buf && x->c0 < y->c0 + y->c && y->c0 < x->c0 + x->c;
}

static int reads_buf(const strix_program *p, const strix_node *nd, int buf)
{
    return (nd->in >= 0 && p->values[nd->in].buf == buf) || (nd->res >= 0 && p->values[nd->res].buf == buf);
}

static int reads(const strix_program *p, const strix_node *nd, int v)
{
    return (nd->in >= 0 && overlaps(p, nd->in, v)) || (nd->res >= 0 && overlaps(p, nd->res, v));
}

int strix_program_upsample_fold(const strix_program *p, int u, int kernels)
{
    if (kernels != STRIX_UPSAMPLE_FOLD_KERNELS || u < 0 || u >= p->n_nodes) return -1;
    const strix_node *up = &p->nodes[u];
    if (up->op != STRIX_OP_UPSAMPLE || up->fused || up->scale < 1) return -1;
    const strix_value *uo = &p->values[up->out], *ui = &p->values[up->in];
    if (p->bufs[uo->buf].kind != STRIX_BUF_SPATIAL || ui->buf == uo->buf) return -1;
    /* the slice's one writer is u, its one reader a convolution's input
     * (other channels of the buffer may have other readers: they are written) */
    int j = -1;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (i == u) continue;
        if ((nd->out >= 0 && overlaps(p, nd->out, up->out)) || (nd->out2 >= 0 && overlaps(p, nd->out2, up->out)))
            return -1;
        if (!reads(p, nd, up->out)) continue;
        if (j >= 0 || nd->op != STRIX_OP_CONV || (nd->res >= 0 && overlaps(p, nd->res, up->out))) return -1;
        j = i;
    }
    if (j < u) return -1; /* no reader, or one before the upsample */
    const strix_node *cv = &p->nodes[j];
    const strix_value *ci = &p->values[cv->in];
    const int c0 = uo->c0 - ci->c0;
    if (cv->conv.groups != 1 || c0 < 0 || c0 + uo->c > ci->c || c0 % 8 || uo->c % 8 || ci->c % 8) return -1;
    /* the source: not written from u to j, read after j */
    int kept = 0;
    for (int i = u + 1; i < p->n_nodes; i++) {
        const strix_node *nd = &p->nodes[i];
        if (i <= j && ((nd->out >= 0 && overlaps(p, nd->out, up->in)) || (nd->out2 >= 0 && overlaps(p, nd->out2, up->in))))
            return -1;
        if (i > j && reads_buf(p, nd, ui->buf)) kept = 1;
    }
    return kept ? j : -1;
}

void strix_program_free(strix_program *p)
{
    free(p->nodes);
    free(p->layer_out);
    free(p->values);
    free(p->bufs);
    memset(p, 0, sizeof *p);
}

long long strix_node_params(const strix_node *n, int fused)
{
    long long w = (long long)n->cout * n->conv.kh * n->conv.kw * (n->cin / n->conv.groups);
    if (n->convt) return w + n->cout / 4; /* one bias per ConvTranspose2d output channel */
    /* unfused: BatchNorm's weight and bias; plain convs carry a bias */
    return w + (n->plain || fused ? n->cout : 2LL * n->cout);
}

void strix_graph_layer_params(const strix_graph *g, const strix_program *p, long long *per_layer)
{
    for (int i = 0; i < g->n_layers; i++) per_layer[i] = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV) continue;
        long long k = strix_node_params(n, 0);
        per_layer[n->layer] += n->twin ? 2 * k : k; /* a twin: the other head's copy, unfused */
    }
    for (int i = 0; i < g->n_layers; i++)
        if (g->layers[i].kind == STRIX_MOD_DETECT) {
            if (g->layers[i].reg_max > 1) per_layer[i] += g->layers[i].reg_max; /* DFL conv */
            per_layer[i] += p->unused_params;
        }
}
