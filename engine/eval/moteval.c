/* moteval.c — CLEAR MOT and identity (IDF1) metrics as py-motmetrics 1.4
 * computes them (see moteval.h for the conventions), and the MOTChallenge
 * text reader.
 *
 * Each input is put in (frame, input index) order and its track ids are
 * renumbered densely (0..ids-1), so all per-track state is plain arrays.
 * The frame loop mirrors MOTAccumulator.update: keep last matches, then
 * solve the rest with strix_assign on the cost matrix py-motmetrics builds
 * (1 - IoU; a large finite cost for pairs that may not match, rows and
 * columns matched in the first step included), so ties go the same way.
 * Every (gt track, hyp track) pair that may match in a frame is logged as a
 * 64-bit key (gt << 32 | hyp); sorted and counted, those are the identity
 * true positives of each trajectory pair.
 */
#include "moteval.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "fileread.h"
#include "util.h"

#define MOT_MAX_BYTES ((size_t)1 << 30) /* 1 GiB of text: some 20M boxes, past any benchmark */

/* One input (gt or hyp) ready for the frame loop. */
typedef struct seq {
    const strix_mot_box *b;
    long n;
    long *order; /* box indices by (frame, input index) */
    int *dense;  /* dense track id of box i (input index) */
    int ids;     /* distinct track ids */
} seq;

typedef struct key2 {
    long a, b;
} key2;

static int cmp_key2(const void *x, const void *y)
{
    const key2 *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
    return (p > q) - (p < q);
}

static void seq_free(seq *s)
{
    free(s->order);
    free(s->dense);
}

/* Validate, order and renumber one input; what = "gt" or "hyp". */
static strix_status seq_init(seq *s, const strix_mot_box *b, long n, const char *what, strix_error *err)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->n = n;
    if (n < 0 || (n > 0 && !b) || n > INT_MAX)
        return strix_fail(err, STRIX_E_ARG, "moteval: %s: %ld boxes (want 0..%d, and an array)", what, n, INT_MAX);
    if (n == 0) return STRIX_OK;
    for (long i = 0; i < n; i++)
        if (!isfinite(b[i].x) || !isfinite(b[i].y) || !isfinite(b[i].w) || !isfinite(b[i].h) ||
            b[i].w < 0 || b[i].h < 0)
            return strix_fail(err, STRIX_E_ARG, "moteval: %s frame %d id %d: the box is not finite or has a "
                              "negative width or height", what, b[i].frame, b[i].id);
    key2 *k = malloc(sizeof *k * (size_t)n);
    long *last = NULL; /* per dense id: position in order of its latest box */
    s->order = malloc(sizeof *s->order * (size_t)n);
    s->dense = malloc(sizeof *s->dense * (size_t)n);
    strix_status st = STRIX_OK;
    if (!k || !s->order || !s->dense) goto nomem;

    for (long i = 0; i < n; i++) k[i] = (key2){b[i].id, i};
    qsort(k, (size_t)n, sizeof *k, cmp_key2);
    for (long i = 0; i < n; i++) {
        if (i > 0 && k[i].a != k[i - 1].a) s->ids++;
        s->dense[k[i].b] = s->ids;
    }
    s->ids++;

    for (long i = 0; i < n; i++) k[i] = (key2){b[i].frame, i};
    qsort(k, (size_t)n, sizeof *k, cmp_key2);
    for (long i = 0; i < n; i++) s->order[i] = k[i].b;

    if (!(last = malloc(sizeof *last * (size_t)s->ids))) goto nomem;
    for (int i = 0; i < s->ids; i++) last[i] = -1;
    for (long i = 0; i < n; i++) {
        const strix_mot_box *x = &b[s->order[i]];
        long *l = &last[s->dense[s->order[i]]];
        if (*l >= 0 && b[s->order[*l]].frame == x->frame) {
            st = strix_fail(err, STRIX_E_ARG, "moteval: %s frame %d has track id %d twice (one box per id and frame)",
                            what, x->frame, x->id);
            goto out;
        }
        *l = i;
    }
    goto out;
nomem:
    st = strix_fail(err, STRIX_E_NOMEM, "moteval: out of memory ordering %ld %s boxes", n, what);
out:
    free(k);
    free(last);
    if (st) seq_free(s);
    return st;
}

/* IoU exactly as py-motmetrics' boxiou computes it, in doubles. */
static double box_iou(const strix_mot_box *a, const strix_mot_box *b)
{
    double ax0 = a->x, ay0 = a->y, ax1 = ax0 + a->w, ay1 = ay0 + a->h;
    double bx0 = b->x, by0 = b->y, bx1 = bx0 + b->w, by1 = by0 + b->h;
    double iw = fmax(fmin(ax1, bx1) - fmax(ax0, bx0), 0), ih = fmax(fmin(ay1, by1) - fmax(ay0, by0), 0);
    double inter = iw * ih;
    if (inter == 0) return 0;
    double aa = fmax(ax1 - ax0, 0) * fmax(ay1 - ay0, 0), ba = fmax(bx1 - bx0, 0) * fmax(by1 - by0, 0);
    return inter / (aa + ba - inter);
}

/* Evaluation state.  Per-frame buffers are sized for the largest frame. */
typedef struct ev {
    seq g, h;
    double max_dist;      /* a pair may match when 1 - IoU <= max_dist */
    int *last;            /* per gt track: hyp track it was last matched to, -1 never */
    long *freq, *hits;    /* per gt track: frames present, frames matched */
    unsigned char *fstat; /* per gt track: 0 not matched yet, 1 matched last time, 2 missed since */
    int *hpos;            /* per hyp track: its column in the current frame, -1 absent */
    double *dist, *cost;  /* [rows, cols] of the current frame: 1 - IoU; assignment costs */
    unsigned char *ok;    /* [rows, cols]: the pair may match */
    unsigned char *gdone, *hdone;
    int *r2c;
    uint64_t *pairs; /* (gt << 32 | hyp) of every frame's pairs that may match */
    size_t n_pairs, cap_pairs;
    double iou_sum;
    strix_mot_metrics *m;
} ev;

static void ev_free(ev *e)
{
    seq_free(&e->g);
    seq_free(&e->h);
    free(e->last);
    free(e->freq);
    free(e->hits);
    free(e->fstat);
    free(e->hpos);
    free(e->dist);
    free(e->cost);
    free(e->ok);
    free(e->gdone);
    free(e->hdone);
    free(e->r2c);
    free(e->pairs);
}

static void match(ev *e, const int *gd, const int *hd, int cols, int i, int j, int is_switch)
{
    int g = gd[i];
    e->m->tp++;
    e->m->idsw += is_switch;
    e->iou_sum += 1.0 - e->dist[(size_t)i * cols + j];
    e->hits[g]++;
    if (e->fstat[g] == 2) e->m->frag++;
    e->fstat[g] = 1;
    e->last[g] = hd[j];
    e->gdone[i] = e->hdone[j] = 1;
}

/* One frame: gt boxes g.order[g0..g0+rows), hyp boxes h.order[h0..h0+cols),
 * gd/hd their dense track ids. */
static strix_status frame_step(ev *e, long g0, const int *gd, int rows, long h0, const int *hd, int cols)
{
    strix_mot_metrics *m = e->m;
    for (int i = 0; i < rows; i++) {
        e->freq[gd[i]]++;
        e->gdone[i] = 0;
    }
    for (int j = 0; j < cols; j++) {
        e->hdone[j] = 0;
        e->hpos[hd[j]] = j;
    }
    if (rows > 0 && cols > 0) {
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                size_t k = (size_t)i * cols + j;
                e->dist[k] = 1.0 - box_iou(&e->g.b[e->g.order[g0 + i]], &e->h.b[e->h.order[h0 + j]]);
                e->ok[k] = e->dist[k] <= e->max_dist;
                if (!e->ok[k]) continue;
                if (e->n_pairs == e->cap_pairs) {
                    size_t cap = e->cap_pairs ? 2 * e->cap_pairs : 1024;
                    uint64_t *p = realloc(e->pairs, cap * sizeof *p);
                    if (!p) return STRIX_E_NOMEM;
                    e->pairs = p;
                    e->cap_pairs = cap;
                }
                e->pairs[e->n_pairs++] = (uint64_t)gd[i] << 32 | (uint32_t)hd[j];
            }
        /* 1. keep each gt track's last hyp track when it is here and may match */
        for (int i = 0; i < rows; i++) {
            int l = e->last[gd[i]], j = l >= 0 ? e->hpos[l] : -1;
            if (j >= 0 && !e->hdone[j] && e->ok[(size_t)i * cols + j]) match(e, gd, hd, cols, i, j, 0);
        }
        /* 2. optimal assignment of the rest; py-motmetrics' add_expensive_edges
         * gives pairs that may not match the cost 2 min(rows, cols) (max + 1) + 1 */
        double maxc = -1;
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                size_t k = (size_t)i * cols + j;
                if (e->ok[k] && !e->gdone[i] && !e->hdone[j] && fabs(e->dist[k]) > maxc) maxc = fabs(e->dist[k]);
            }
        if (maxc >= 0) {
            double big = 2.0 * (rows < cols ? rows : cols) * (maxc + 1) + 1;
            for (int i = 0; i < rows; i++)
                for (int j = 0; j < cols; j++) {
                    size_t k = (size_t)i * cols + j;
                    e->cost[k] = e->ok[k] && !e->gdone[i] && !e->hdone[j] ? e->dist[k] : big;
                }
            if (strix_assign(e->cost, rows, cols, e->r2c)) return STRIX_E_NOMEM;
            for (int i = 0; i < rows; i++) {
                int j = e->r2c[i];
                if (j < 0 || e->cost[(size_t)i * cols + j] == big) continue;
                int l = e->last[gd[i]];
                match(e, gd, hd, cols, i, j, l >= 0 && l != hd[j]);
            }
        }
    }
    for (int i = 0; i < rows; i++)
        if (!e->gdone[i]) {
            m->fn++;
            if (e->fstat[gd[i]] == 1) e->fstat[gd[i]] = 2;
        }
    for (int j = 0; j < cols; j++) {
        m->fp += !e->hdone[j];
        e->hpos[hd[j]] = -1;
    }
    return STRIX_OK;
}

/* Union-find root with path halving. */
static int uf_find(int *parent, int x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Largest total identity true positives of a one-to-one matching of gt and
 * hyp trajectories.  Pairs with no frame in common cost the same matched as
 * unmatched, so the problem splits into the connected components of the
 * pairs that overlap somewhere; each is solved as py-motmetrics solves the
 * whole: a (ng + nh) square matrix, gt rows then one dummy row per hyp,
 * hyp columns then one dummy column per gt:
 *   gt r, hyp c:        fn + fp = freq(r) + freq(c) - 2 tp(r, c)
 *   gt r, its dummy:    freq(r)      (missed entirely)
 *   hyp c's dummy, c:   freq(c)      (false entirely)
 *   dummy, dummy:       0;  other pairs are not allowed. */
static strix_status identity(ev *e, long *idtp)
{
    strix_status st = STRIX_OK;
    int G = e->g.ids, H = e->h.ids;
    size_t np = 0;
    long *hfreq = NULL;
    int *parent = NULL, *gloc = NULL, *hloc = NULL, *glist = NULL, *hlist = NULL, *r2c = NULL;
    key2 *comp = NULL;
    long *tps = NULL;
    double *cost = NULL;
    *idtp = 0;
    if (!e->n_pairs) return STRIX_OK;

    qsort(e->pairs, e->n_pairs, sizeof *e->pairs, cmp_u64);
    long *cnt = malloc(sizeof *cnt * e->n_pairs); /* frames of each distinct pair */
    if (!cnt) return STRIX_E_NOMEM;
    for (size_t i = 0; i < e->n_pairs; i++) {
        if (i > 0 && e->pairs[i] == e->pairs[np - 1]) {
            cnt[np - 1]++;
            continue;
        }
        e->pairs[np] = e->pairs[i];
        cnt[np++] = 1;
    }
    hfreq = calloc((size_t)H, sizeof *hfreq);
    parent = malloc(sizeof *parent * (size_t)(G + H));
    gloc = malloc(sizeof *gloc * (size_t)G);
    hloc = malloc(sizeof *hloc * (size_t)H);
    glist = malloc(sizeof *glist * (size_t)G);
    hlist = malloc(sizeof *hlist * (size_t)H);
    comp = malloc(sizeof *comp * np);
    if (!hfreq || !parent || !gloc || !hloc || !glist || !hlist || !comp) goto nomem;
    for (long i = 0; i < e->h.n; i++) hfreq[e->h.dense[i]]++;
    for (int i = 0; i < G + H; i++) parent[i] = i;
    for (int i = 0; i < G; i++) gloc[i] = -1;
    for (int i = 0; i < H; i++) hloc[i] = -1;
    for (size_t p = 0; p < np; p++) {
        int a = uf_find(parent, (int)(e->pairs[p] >> 32)), b = uf_find(parent, G + (int)(e->pairs[p] & 0xffffffffu));
        if (a != b) parent[a] = b;
    }
    for (size_t p = 0; p < np; p++) comp[p] = (key2){uf_find(parent, (int)(e->pairs[p] >> 32)), (long)p};
    qsort(comp, np, sizeof *comp, cmp_key2);

    for (size_t p0 = 0, p1; p0 < np; p0 = p1) {
        int ng = 0, nh = 0;
        for (p1 = p0; p1 < np && comp[p1].a == comp[p0].a; p1++) {
            uint64_t k = e->pairs[comp[p1].b];
            int g = (int)(k >> 32), h = (int)(k & 0xffffffffu);
            if (gloc[g] < 0) glist[gloc[g] = ng++] = g;
            if (hloc[h] < 0) hlist[hloc[h] = nh++] = h;
        }
        int n = ng + nh;
        tps = calloc((size_t)ng * nh, sizeof *tps);
        cost = malloc(sizeof *cost * (size_t)n * n);
        r2c = malloc(sizeof *r2c * (size_t)n);
        if (!tps || !cost || !r2c) goto nomem;
        for (size_t q = p0; q < p1; q++) {
            uint64_t k = e->pairs[comp[q].b];
            tps[(size_t)gloc[k >> 32] * nh + hloc[k & 0xffffffffu]] = cnt[comp[q].b];
        }
        double maxc = 0;
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) {
                double v = r >= ng && c >= nh ? 0 : -1; /* -1: not allowed */
                if (r < ng && c < nh) v = (double)e->freq[glist[r]] + hfreq[hlist[c]] - 2.0 * tps[(size_t)r * nh + c];
                else if (r < ng && c - nh == r) v = (double)e->freq[glist[r]];
                else if (r >= ng && c < nh && r - ng == c) v = (double)hfreq[hlist[c]];
                cost[(size_t)r * n + c] = v;
                if (v > maxc) maxc = v;
            }
        double big = 2.0 * n * (maxc + 1) + 1;
        for (size_t k = 0; k < (size_t)n * n; k++)
            if (cost[k] < 0) cost[k] = big;
        if (strix_assign(cost, n, n, r2c)) goto nomem;
        for (int r = 0; r < ng; r++)
            if (r2c[r] >= 0 && r2c[r] < nh) *idtp += tps[(size_t)r * nh + r2c[r]];
        for (int r = 0; r < ng; r++) gloc[glist[r]] = -1;
        for (int c = 0; c < nh; c++) hloc[hlist[c]] = -1;
        free(tps);
        free(cost);
        free(r2c);
        tps = NULL;
        cost = NULL;
        r2c = NULL;
    }
    goto out;
nomem:
    st = STRIX_E_NOMEM;
out:
    free(cnt);
    free(hfreq);
    free(parent);
    free(gloc);
    free(hloc);
    free(glist);
    free(hlist);
    free(comp);
    free(tps);
    free(cost);
    free(r2c);
    return st;
}

strix_status strix_mot_evaluate(const strix_mot_box *gt, long n_gt, const strix_mot_box *hyp, long n_hyp,
                                double iou_thresh, strix_mot_metrics *m, strix_error *err)
{
    if (!m) return strix_fail(err, STRIX_E_ARG, "moteval: no metrics struct given");
    memset(m, 0, sizeof *m);
    if (!(iou_thresh > 0 && iou_thresh <= 1))
        return strix_fail(err, STRIX_E_ARG, "moteval: IoU threshold %g is outside (0, 1]", iou_thresh);
    ev e;
    memset(&e, 0, sizeof e);
    e.m = m;
    e.max_dist = 1.0 - iou_thresh;
    strix_status st = seq_init(&e.g, gt, n_gt, "gt", err);
    if (st) return st;
    if ((st = seq_init(&e.h, hyp, n_hyp, "hyp", err))) {
        seq_free(&e.g);
        return st;
    }

    /* the largest frame, for the per-frame buffers */
    int max_rows = 0, max_cols = 0;
    for (long i = 0, j; i < e.g.n; i = j) {
        for (j = i; j < e.g.n && gt[e.g.order[j]].frame == gt[e.g.order[i]].frame; j++) {}
        if (j - i > max_rows) max_rows = (int)(j - i);
    }
    for (long i = 0, j; i < e.h.n; i = j) {
        for (j = i; j < e.h.n && hyp[e.h.order[j]].frame == hyp[e.h.order[i]].frame; j++) {}
        if (j - i > max_cols) max_cols = (int)(j - i);
    }
    size_t cells = (size_t)max_rows * (size_t)max_cols;
    int *gd = malloc(sizeof *gd * (size_t)(max_rows + 1)), *hd = malloc(sizeof *hd * (size_t)(max_cols + 1));
    e.last = malloc(sizeof *e.last * (size_t)(e.g.ids + 1));
    e.freq = calloc((size_t)e.g.ids + 1, sizeof *e.freq);
    e.hits = calloc((size_t)e.g.ids + 1, sizeof *e.hits);
    e.fstat = calloc((size_t)e.g.ids + 1, 1);
    e.hpos = malloc(sizeof *e.hpos * (size_t)(e.h.ids + 1));
    e.dist = malloc(sizeof *e.dist * (cells + 1));
    e.cost = malloc(sizeof *e.cost * (cells + 1));
    e.ok = malloc(cells + 1);
    e.gdone = malloc((size_t)max_rows + 1);
    e.hdone = malloc((size_t)max_cols + 1);
    e.r2c = malloc(sizeof *e.r2c * (size_t)(max_rows + 1));
    if (!gd || !hd || !e.last || !e.freq || !e.hits || !e.fstat || !e.hpos || !e.dist || !e.cost || !e.ok ||
        !e.gdone || !e.hdone || !e.r2c) {
        st = STRIX_E_NOMEM;
        goto out;
    }
    for (int i = 0; i < e.g.ids; i++) e.last[i] = -1;
    for (int i = 0; i < e.h.ids; i++) e.hpos[i] = -1;

    for (long ig = 0, ih = 0; ig < e.g.n || ih < e.h.n;) {
        int f = ig < e.g.n && (ih >= e.h.n || gt[e.g.order[ig]].frame <= hyp[e.h.order[ih]].frame)
                    ? gt[e.g.order[ig]].frame
                    : hyp[e.h.order[ih]].frame;
        long g0 = ig, h0 = ih;
        for (; ig < e.g.n && gt[e.g.order[ig]].frame == f; ig++) gd[ig - g0] = e.g.dense[e.g.order[ig]];
        for (; ih < e.h.n && hyp[e.h.order[ih]].frame == f; ih++) hd[ih - h0] = e.h.dense[e.h.order[ih]];
        m->frames++;
        if ((st = frame_step(&e, g0, gd, (int)(ig - g0), h0, hd, (int)(ih - h0)))) goto out;
    }
    if ((st = identity(&e, &m->idtp))) goto out;

    m->gt = n_gt;
    m->hyp = n_hyp;
    m->gt_ids = e.g.ids;
    m->hyp_ids = e.h.ids;
    m->idfn = n_gt - m->idtp;
    m->idfp = n_hyp - m->idtp;
    long errors = m->fn + m->fp + m->idsw;
    m->mota = n_gt ? 1.0 - (double)errors / (double)n_gt : errors ? -INFINITY : NAN;
    m->motp = m->tp ? e.iou_sum / (double)m->tp : NAN;
    m->idf1 = n_gt + n_hyp ? 2.0 * (double)m->idtp / (double)(n_gt + n_hyp) : NAN;
    m->idp = n_hyp ? (double)m->idtp / (double)n_hyp : NAN;
    m->idr = n_gt ? (double)m->idtp / (double)n_gt : NAN;
    for (int g = 0; g < e.g.ids; g++) {
        double r = (double)e.hits[g] / (double)e.freq[g];
        if (r >= 0.8) m->mostly_tracked++;
        else if (r >= 0.2) m->partly_tracked++;
        else m->mostly_lost++;
    }
out:
    if (st) {
        memset(m, 0, sizeof *m);
        strix_fail(err, STRIX_E_NOMEM, "moteval: out of memory (%ld gt, %ld hyp boxes)", n_gt, n_hyp);
    }
    free(gd);
    free(hd);
    ev_free(&e);
    return st;
}

/* ---- MOTChallenge text files ---- */

/* A field as text for an error line: at most 24 bytes, printable ASCII as
 * is and any other byte as \xNN, so a binary file echoes no raw bytes. */
static void quote_field(char *dst, size_t cap, const char *t, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < 24 && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c >= 0x20 && c < 0x7f) dst[o++] = (char)c;
        else o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
    }
    dst[o] = 0;
}

/* Parse the first fields of one line (len bytes, NUL-terminated) into
 * v[0..7); *nv = fields parsed (0 for a blank line).  Returns NULL or what
 * is wrong. */
static const char *parse_line(const char *s, size_t len, double v[7], int *nv, char *why, size_t why_n)
{
    /* A control byte (NUL included) is no MOTChallenge text: name it, and
     * echo none of what follows. */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && !isspace(c)) || c == 0x7f) {
            snprintf(why, why_n, "byte 0x%02x at column %zu is not text (is this a binary file? want "
                     "MOTChallenge text lines)", c, i + 1);
            return why;
        }
    }
    int k = 0;
    while (isspace((unsigned char)*s)) s++;
    while (*s && k < 7) {
        if (*s == ',') {
            snprintf(why, why_n, "field %d is empty", k + 1);
            return why;
        }
        const char *t = s;
        while (*s && *s != ',' && !isspace((unsigned char)*s)) s++;
        char *end;
        v[k] = strtod(t, &end);
        if (end != s || !isfinite(v[k])) {
            char q[128];
            quote_field(q, sizeof q, t, (size_t)(s - t));
            snprintf(why, why_n, "field %d '%s' is not a finite number", k + 1, q);
            return why;
        }
        k++;
        while (isspace((unsigned char)*s)) s++;
        if (*s == ',') {
            s++;
            while (isspace((unsigned char)*s)) s++;
        }
    }
    *nv = k;
    if (k > 0 && k < 6) {
        snprintf(why, why_n, "%d field%s, want at least 6 (frame,id,bb_left,bb_top,bb_width,bb_height)", k,
                 k == 1 ? "" : "s");
        return why;
    }
    for (int i = 0; i < 2 && k; i++)
        if (v[i] != floor(v[i]) || v[i] < INT_MIN || v[i] > INT_MAX) {
            snprintf(why, why_n, "%s %g is not an integer", i ? "id" : "frame", v[i]);
            return why;
        }
    for (int i = 4; i < 6 && k; i++)
        if (v[i] < 0) {
            snprintf(why, why_n, "%s %g is negative (a box is bb_left,bb_top,bb_width,bb_height)",
                     i == 4 ? "bb_width" : "bb_height", v[i]);
            return why;
        }
    return NULL;
}

typedef struct dup_key {
    int frame, id;
    long line;
} dup_key;

static int cmp_dup(const void *x, const void *y)
{
    const dup_key *p = x, *q = y;
    if (p->frame != q->frame) return p->frame < q->frame ? -1 : 1;
    if (p->id != q->id) return p->id < q->id ? -1 : 1;
    return (p->line > q->line) - (p->line < q->line);
}

/* Read the boxes of stream f; path names it in messages.  Closes f. */
static strix_status read_stream(FILE *f, const char *path, strix_mot_box **out, long *n, strix_error *err)
{
    strix_status st = STRIX_OK;
    char *line = NULL, why[160];
    size_t line_cap = 0;
    strix_mot_box *b = NULL;
    long *lines = NULL; /* line number of each box */
    dup_key *dk = NULL;
    long nb = 0, cap = 0, ln = 0;
    ssize_t len;
    while ((len = getline(&line, &line_cap, f)) != -1) {
        double v[7];
        int nv;
        ln++;
        if (parse_line(line, (size_t)len, v, &nv, why, sizeof why)) {
            st = strix_fail(err, STRIX_E_IO, "%s:%ld: %s", path, ln, why);
            goto out;
        }
        if (!nv) continue;
        if (nb == cap) {
            long nc = cap ? 2 * cap : 256;
            strix_mot_box *nb2 = realloc(b, sizeof *b * (size_t)nc);
            if (nb2) b = nb2;
            long *nl = nb2 ? realloc(lines, sizeof *lines * (size_t)nc) : NULL;
            if (nl) lines = nl;
            if (!nb2 || !nl) goto nomem;
            cap = nc;
        }
        for (int i = 2; i < nv; i++)
            if (fabs(v[i]) > FLT_MAX) {
                st = strix_fail(err, STRIX_E_IO, "%s:%ld: field %d (%g) is too large for a float", path, ln, i + 1, v[i]);
                goto out;
            }
        b[nb] = (strix_mot_box){(int)v[0], (int)v[1], (float)v[2], (float)v[3], (float)v[4], (float)v[5],
                                nv > 6 ? (float)v[6] : 1.0f};
        lines[nb++] = ln;
    }
    if (ferror(f)) {
        st = strix_fail(err, STRIX_E_IO, "%s: read error after line %ld: %s", path, ln, strerror(errno));
        goto out;
    }
    if (nb) {
        if (!(dk = malloc(sizeof *dk * (size_t)nb))) goto nomem;
        for (long i = 0; i < nb; i++) dk[i] = (dup_key){b[i].frame, b[i].id, lines[i]};
        qsort(dk, (size_t)nb, sizeof *dk, cmp_dup);
        for (long i = 1; i < nb; i++)
            if (dk[i].frame == dk[i - 1].frame && dk[i].id == dk[i - 1].id) {
                st = strix_fail(err, STRIX_E_IO, "%s:%ld: frame %d id %d again (first at line %ld; one box per id and frame)",
                                path, dk[i].line, dk[i].frame, dk[i].id, dk[i - 1].line);
                goto out;
            }
    }
    *out = b;
    *n = nb;
    b = NULL;
    goto out;
nomem:
    st = strix_fail(err, STRIX_E_NOMEM, "%s: out of memory after %ld boxes", path, nb);
out:
    fclose(f);
    free(line);
    free(lines);
    free(dk);
    free(b);
    return st;
}

strix_status strix_mot_read(const char *path, strix_mot_box **out, long *n, strix_error *err)
{
    if (!path || !out || !n) return strix_fail(err, STRIX_E_ARG, "moteval: path, out and n are required");
    *out = NULL;
    *n = 0;
    char *data;
    size_t len;
    strix_status st = strix_file_read(path, MOT_MAX_BYTES, &data, &len, err);
    if (st) return st;
    st = strix_mot_parse(path, data, len, out, n, err);
    free(data);
    return st;
}

strix_status strix_mot_parse(const char *name, const void *data, size_t size, strix_mot_box **out, long *n,
                             strix_error *err)
{
    if (!name || !out || !n || (size && !data))
        return strix_fail(err, STRIX_E_ARG, "moteval: name, out, n and data are required");
    *out = NULL;
    *n = 0;
    if (!size) return STRIX_OK;
    /* fmemopen only reads through the cast: mode "r" never writes to data */
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f) return strix_fail(err, STRIX_E_NOMEM, "%s: cannot open %zu bytes as a stream: %s", name, size, strerror(errno));
    return read_stream(f, name, out, n, err);
}
