/* synth.c — synthetic weights for any graph, written as an Ultralytics-named
 * safetensors checkpoint (tests, goldens, benchmarks: no pretrained weights
 * may be downloaded on CI machines).
 *
 * Plain random weights make a deep YOLO either explode or fade to a constant
 * (every score saturates, or none passes a threshold).  So, like a trained
 * network, the BatchNorm statistics are calibrated: the graph is run once on a
 * deterministic image-like input, op by op, and each convolution's running
 * mean and variance are set to the statistics of its actual output.  Every
 * layer then sees O(1) activations, boxes vary in size and a few per cent of
 * anchors pass a 0.25 class threshold — a real workload for NMS.
 *
 * Random numbers come from splitmix64 (uniforms from 24-bit integers, exact in
 * float), so a seed gives the same raw weights everywhere; the calibrated
 * statistics come from a forward pass and may differ in the last bits between
 * machines.  STRIX_SYNTH_VERSION changes whenever the recipe does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "cpu/backend.h"
#include "model_internal.h"
#include "safetensors.h"
#include "util.h"
#include "weights.h"

#define STRIX_SYNTH_VERSION "2"
#define CALIB_SIZE 256 /* calibration input: 4 images of 256 x 256 */
#define CALIB_BATCH 4

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

/* Fractal value noise in [0, 1]: octaves of bilinearly interpolated random
 * grids with amplitude halving as the frequency doubles, a cheap stand-in
 * for the 1/f spectrum of photographs. */
static void fractal(rng *r, float *im, int h, int w)
{
    for (size_t i = 0; i < (size_t)h * w * 3; i++) im[i] = 0.5f;
    float amp = 0.35f;
    for (int cell = 128; cell >= 2; cell /= 2, amp *= 0.6f) {
        int gh = h / cell + 2, gw = w / cell + 2;
        float grid[(256 / 2 + 2) * (256 / 2 + 2) * 3];
        fill(r, grid, (size_t)gh * gw * 3, -amp, amp);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int gy = y / cell, gx = x / cell;
                float fy = (float)(y % cell) / cell, fx = (float)(x % cell) / cell;
                for (int c = 0; c < 3; c++) {
                    const float *g0 = grid + ((size_t)gy * gw + gx) * 3 + c, *g1 = g0 + (size_t)gw * 3;
                    im[((size_t)y * w + x) * 3 + c] += (1 - fy) * ((1 - fx) * g0[0] + fx * g0[3]) +
                                                       fy * ((1 - fx) * g1[0] + fx * g1[3]);
                }
            }
    }
}

/* Calibration inputs, quantised to k/255: fractal noise with random flat
 * rectangles (objects with edges), plain fractal noise, white noise (the
 * finest textures), and a letterboxed one (fractal noise and rectangles
 * between bands of flat 114 grey padding). */
static void calib_images(rng *r, float *x, int n, int h, int w)
{
    for (int b = 0; b < n; b++) {
        float *im = x + (size_t)b * h * w * 3;
        fractal(r, im, h, w);
        int top = b == 3 ? h / 4 : 0, bottom = b == 3 ? h - h / 4 : h;
        for (int k = 0; (b == 0 || b == 3) && k < 24; k++) {
            int x0 = (int)uniform(r, 0, (float)w), y0 = (int)uniform(r, (float)top, (float)bottom);
            int x1 = x0 + (int)uniform(r, 4, w / 3.0f), y1 = y0 + (int)uniform(r, 4, h / 3.0f);
            float col[3] = {uniform(r, 0, 1), uniform(r, 0, 1), uniform(r, 0, 1)};
            for (int y = y0; y < y1 && y < bottom; y++)
                for (int i = x0; i < x1 && i < w; i++)
                    for (int c = 0; c < 3; c++) im[((size_t)y * w + i) * 3 + c] = col[c];
        }
        for (size_t i = 0; i < (size_t)h * w * 3; i++) {
            int y = (int)(i / 3 / w);
            float v = b == 2 ? uniform(r, 0, 1) : im[i];
            if (y < top || y >= bottom) v = 114.0f / 255.0f;
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            im[i] = floorf(v * 255.0f + 0.5f) / 255.0f;
        }
    }
}

/* Per-channel mean of a dense [n, P, C] tensor and, per channel, the largest
 * variance over the n calibration images: normalising for the most energetic
 * input keeps every layer's activations O(1) on photographs too, which lie
 * between the smooth and the noisy calibration images. */
static void channel_stats(const float *z, int n, size_t pixels, int c, double *mean, double *var)
{
    for (int k = 0; k < c; k++) mean[k] = var[k] = 0;
    for (size_t i = 0; i < (size_t)n * pixels; i++)
        for (int k = 0; k < c; k++) mean[k] += z[i * c + k];
    for (int k = 0; k < c; k++) mean[k] /= (double)n * pixels;
    for (int b = 0; b < n; b++)
        for (int k = 0; k < c; k++) {
            double v = 0;
            for (size_t i = (size_t)b * pixels; i < (size_t)(b + 1) * pixels; i++) {
                double d = z[i * c + k] - mean[k];
                v += d * d;
            }
            if (v / (double)pixels > var[k]) var[k] = v / (double)pixels;
        }
    /* a channel that barely moved on the calibration images must not get a
     * huge gain: floor each variance at a quarter of the layer's mean, and
     * every gain at about 4.5 */
    double avg = 0;
    for (int k = 0; k < c; k++) avg += var[k] / c;
    double floor = 0.25 * avg > 0.05 ? 0.25 * avg : 0.05;
    for (int k = 0; k < c; k++)
        if (var[k] < floor) var[k] = floor;
}

typedef struct synth {
    const strix_program *p;
    strix_plan pl;
    float *arena, *blob, *zs, *data;
    void *ws;
    double *mean, *var;
} synth;

/* Generate node n's tensors into d (OIHW weights, then its vectors), fold
 * them into s->blob and return the number of floats used; names/shapes are
 * added to the writer. */
static strix_status synth_conv(synth *s, rng *r, const strix_node *n, float *d, int fused,
                               strix_st_writer *w, strix_st_dtype dt, size_t *used, strix_error *err)
{
    int cig = n->cin / n->conv.groups, co = n->cout, kk = n->conv.kh * n->conv.kw;
    size_t wn = (size_t)co * cig * kk;
    float a = sqrtf(3.0f / (float)(cig * kk));
    fill(r, d, wn, -a, a);
    /* 1. the raw convolution's output, without bias, activation or residual */
    float *bw = s->blob + n->woff, *bb = s->blob + n->boff;
    strix_fold_conv(bw, bb, d, NULL, co, cig, n->conv.kh, n->conv.kw);
    strix_view in = strix_plan_view(&s->pl, s->p, s->arena, n->in);
    strix_view o = strix_plan_view(&s->pl, s->p, s->arena, n->out);
    strix_view z = strix_view_dense(s->zs, o.n, o.h, o.w, co);
    strix_conv_params raw = n->conv;
    raw.act = STRIX_ACT_NONE;
    strix_cpu_conv2d(STRIX_CPU_ISA_AUTO, &z, &in, bw, bb, NULL, &raw, s->ws, NULL);
    channel_stats(s->zs, o.n, (size_t)o.h * o.w, co, s->mean, s->var);

    /* 2. choose the remaining tensors from those statistics */
    float *v = d + wn; /* gamma, beta, mean, var (BatchNorm) or bias (plain) */
    char nm[160];
    int64_t ws[4] = {co, cig, n->conv.kh, n->conv.kw}, vs[1] = {co};
    strix_status st;
    if (n->convt) {
        /* ConvTranspose2d(k=2, s=2): the node's 1x1 weights [4C, cin] as
         * PyTorch's [cin, C, 2, 2], one bias per C shared by the 4 taps;
         * zero-mean weights keep the output O(1), the next Conv's
         * BatchNorm calibrates the rest */
        int c = co / 4, cin = n->cin;
        float *t = v, *b = t + wn;
        for (int i = 0; i < cin; i++)
            for (int oc = 0; oc < c; oc++)
                for (int k = 0; k < 4; k++) t[((size_t)i * c + oc) * 4 + k] = d[((size_t)k * c + oc) * cin + i];
        fill(r, b, (size_t)c, -0.1f, 0.1f);
        for (int k = 0; k < 4; k++) memcpy(bb + (size_t)k * c, b, sizeof(float) * (size_t)c);
        int64_t ts[4] = {cin, c, 2, 2}, cs[1] = {c};
        snprintf(nm, sizeof nm, "%s.weight", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, 4, ts, t, err))) return st;
        snprintf(nm, sizeof nm, "%s.bias", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, 1, cs, b, err))) return st;
        *used = 2 * wn + c;
        return STRIX_OK;
    }
    if (n->plain) {
        /* Detect's last convs: box logits N(~0, 2), class logits N(~-4, 1.5):
         * a few per cent of anchors score above 0.25 */
        int cls = strstr(n->wname, ".cv3.") || strstr(n->wname, ".one2one_cv3."); /* either head of YOLO26 */
        float sd = cls ? 1.5f : 2.0f;
        for (int k = 0; k < co; k++) {
            float scale = fminf(sd / (float)sqrt(s->var[k]), 2.0f); /* bounded gain: no saturation */
            float mu = cls ? uniform(r, -4.5f, -3.5f) : uniform(r, -0.5f, 0.5f);
            for (size_t i = 0; i < (size_t)cig * kk; i++) d[(size_t)k * cig * kk + i] *= scale;
            v[k] = mu - (float)s->mean[k] * scale;
        }
        strix_fold_conv(bw, bb, d, v, co, cig, n->conv.kh, n->conv.kw);
        int64_t ls[2] = {co, n->cin}; /* nn.Linear (Classify): [out, in] */
        snprintf(nm, sizeof nm, "%s.weight", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, n->linear ? 2 : 4, n->linear ? ls : ws, d, err))) return st;
        snprintf(nm, sizeof nm, "%s.bias", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, 1, vs, v, err))) return st;
        *used = wn + co;
        return STRIX_OK;
    }
    float *g = v, *beta = v + co, *mean = v + 2 * co, *var = v + 3 * co;
    fill(r, g, (size_t)co, 0.6f, 1.4f);
    fill(r, beta, (size_t)co, -0.3f, 0.3f);
    for (int k = 0; k < co; k++) {
        mean[k] = (float)s->mean[k];
        var[k] = (float)s->var[k];
    }
    if (fused) {
        /* write the folded convolution itself: conv.weight + conv.bias */
        float *fb = v + 4 * co;
        strix_fold_bn(d, fb, g, beta, mean, var, co, (size_t)cig * kk, strix_bn_eps(s->p));
        snprintf(nm, sizeof nm, "%s.conv.weight", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, 4, ws, d, err))) return st;
        snprintf(nm, sizeof nm, "%s.conv.bias", n->wname);
        if ((st = strix_st_writer_add(w, nm, dt, 1, vs, fb, err))) return st;
        strix_fold_conv(bw, bb, d, fb, co, cig, n->conv.kh, n->conv.kw);
        *used = wn + 5 * (size_t)co;
        return STRIX_OK;
    }
    static const char *bn[4] = {"weight", "bias", "running_mean", "running_var"};
    snprintf(nm, sizeof nm, "%s.conv.weight", n->wname);
    if ((st = strix_st_writer_add(w, nm, dt, 4, ws, d, err))) return st;
    for (int k = 0; k < 4; k++) {
        snprintf(nm, sizeof nm, "%s.bn.%s", n->wname, bn[k]);
        if ((st = strix_st_writer_add(w, nm, dt, 1, vs, v + (size_t)k * co, err))) return st;
    }
    /* fold a copy: the written weights stay raw */
    float *fw = v + 4 * co, *fb = fw + wn;
    memcpy(fw, d, sizeof(float) * wn);
    strix_fold_bn(fw, fb, g, beta, mean, var, co, (size_t)cig * kk, strix_bn_eps(s->p));
    strix_fold_conv(bw, bb, fw, fb, co, cig, n->conv.kh, n->conv.kw);
    *used = 2 * wn + 5 * (size_t)co;
    return STRIX_OK;
}

strix_status strix_model_write_synthetic_weights(const strix_model *m, const char *path,
                                                 uint64_t seed, int fused, int f16, int overwrite,
                                                 strix_error *err)
{
    strix_error_clear(err);
    const strix_program *p = &m->prog;
    synth s = {0};
    s.p = p;
    strix_status st = strix_plan_build(&s.pl, p, CALIB_BATCH, CALIB_SIZE, CALIB_SIZE, 1, err);
    if (st) return st;
    /* room for every node's tensors (raw + folded copies) and the largest conv output */
    size_t total = (size_t)p->reg_max, zmax = 0;
    int cmax = 1;
    for (int i = 0; i < p->n_nodes; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op != STRIX_OP_CONV) continue;
        total += 2 * (size_t)n->cout * n->conv.kh * n->conv.kw * (n->cin / n->conv.groups) + 5 * (size_t)n->cout;
        size_t z = (size_t)CALIB_BATCH * s.pl.val_h[n->out] * s.pl.val_w[n->out] * n->cout;
        if (z > zmax) zmax = z;
        if (n->cout > cmax) cmax = n->cout;
    }
    s.data = malloc(sizeof(float) * total);
    s.blob = malloc(sizeof(float) * (p->weight_floats + 1));
    s.zs = malloc(sizeof(float) * (zmax + 1));
    s.arena = malloc(sizeof(float) * (s.pl.arena_floats + 1));
    s.ws = malloc(s.pl.workspace_bytes + 64);
    s.mean = malloc(sizeof(double) * (size_t)cmax);
    s.var = malloc(sizeof(double) * (size_t)cmax);
    strix_st_writer *w = NULL;
    if (!s.data || !s.blob || !s.zs || !s.arena || !s.ws || !s.mean || !s.var)
        st = strix_fail(err, STRIX_E_NOMEM, "out of memory for synthetic weights");
    else
        st = strix_st_writer_create(&w, err);
    rng r = {seed};
    strix_st_dtype dt = f16 ? STRIX_ST_F16 : STRIX_ST_F32;
    float *d = s.data;
    if (!st) {
        strix_view in = strix_plan_view(&s.pl, p, s.arena, p->input);
        calib_images(&r, in.data, CALIB_BATCH, CALIB_SIZE, CALIB_SIZE);
    }
    for (int i = 0; i < p->n_nodes && !st; i++) {
        const strix_node *n = &p->nodes[i];
        if (n->op == STRIX_OP_CONV) {
            size_t used = 0;
            st = synth_conv(&s, &r, n, d, fused, w, dt, &used, err);
            d += used;
        }
        if (!st) strix_cpu_execute_node(NULL, NULL, p, &s.pl, s.blob, s.arena, s.ws, i);
    }
    if (!st && p->dfl_name[0]) {
        int64_t sh[4] = {1, p->reg_max, 1, 1};
        for (int i = 0; i < p->reg_max; i++) d[i] = (float)i;
        st = strix_st_writer_add(w, p->dfl_name, dt, 4, sh, d, err);
    }
    char seedtxt[32], nctxt[16], sc[2] = {m->graph.scale, 0};
    snprintf(seedtxt, sizeof seedtxt, "%llu", (unsigned long long)seed);
    snprintf(nctxt, sizeof nctxt, "%d", m->graph.nc);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_synthetic_seed", seedtxt, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_synthetic_version", STRIX_SYNTH_VERSION, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_model_yaml", m->graph.path, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_scale", sc, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_nc", nctxt, err);
    if (!st) st = strix_st_writer_set_metadata(w, "strix_fused", fused ? "1" : "0", err);
    if (!st) st = strix_st_writer_write(w, path, overwrite, err);
    strix_st_writer_free(w);
    free(s.data);
    free(s.blob);
    free(s.zs);
    free(s.arena);
    free(s.ws);
    free(s.mean);
    free(s.var);
    strix_plan_free(&s.pl);
    return st;
}
