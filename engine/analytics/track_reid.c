/* track_reid.c — the trackers' appearance state (track_reid.h), as
 * Ultralytics 8.4.190 keeps it in float32 numpy arrays: a feature divided
 * by its norm, the smoothed feature alpha * old + (1 - alpha) * new, each
 * product and the sum rounded to float32, then divided by its norm.  The
 * reference's dot products and norms are BLAS and numpy float32 sums in
 * an order of their own; here they are summed in double and rounded once
 * to float32, within their rounding error of the reference's. */
#include "track_reid.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct strix_reid {
    int dim, cap;
    float *smooth, *curr; /* [cap][dim] */
    char *has;            /* [cap]: the slot's features are set */
    int n_det, det_cap;
    float *det;           /* [n_det][dim]: each detection's curr_feat */
    char *det_has;        /* [n_det] */
};

strix_reid *strix_reid_create(void) { return calloc(1, sizeof(strix_reid)); }

void strix_reid_free(strix_reid *r)
{
    if (!r) return;
    free(r->smooth);
    free(r->curr);
    free(r->has);
    free(r->det);
    free(r->det_has);
    free(r);
}

/* Grow slot arrays to cap slots of dim floats (dim 0: nothing to hold yet). */
static int grow(strix_reid *r, int cap)
{
    size_t n = (size_t)cap, d = (size_t)(r->dim ? r->dim : 1);
    float *s = realloc(r->smooth, sizeof *s * n * d);
    if (s) r->smooth = s;
    float *c = s ? realloc(r->curr, sizeof *c * n * d) : NULL;
    if (c) r->curr = c;
    char *h = c ? realloc(r->has, n) : NULL;
    if (!h) return -1;
    r->has = h;
    if (cap > r->cap) memset(r->has + r->cap, 0, n - (size_t)r->cap);
    r->cap = cap;
    return 0;
}

int strix_reid_reserve(strix_reid *r, int slots) { return slots <= r->cap ? 0 : grow(r, slots); }

/* np.linalg.norm of a float32 vector: float32 */
static float norm(const float *x, int dim)
{
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)x[i] * x[i];
    return sqrtf((float)s);
}

static float dot(const float *x, const float *y, int dim)
{
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)x[i] * y[i];
    return (float)s;
}

/* feat / norm(feat) into out: 1; 0 when the norm is below 1e-12 (smooth_feature's "no appearance") */
static int normalise(const float *feat, int dim, float *out)
{
    float n = norm(feat, dim);
    if ((double)n < 1e-12) return 0;
    for (int i = 0; i < dim; i++) out[i] = feat[i] / n;
    return 1;
}

int strix_reid_set_dets(strix_reid *r, const float *feats, int n, int dim)
{
    if (!feats) n = 0;
    if (n && r->dim != dim) { /* the first features fix the length (the caller keeps it) */
        r->dim = dim;
        int cap = r->cap;
        r->cap = 0;
        if (cap && grow(r, cap)) return -1;
    }
    if (n > r->det_cap) {
        float *d = realloc(r->det, sizeof *d * (size_t)n * (size_t)dim);
        if (d) r->det = d;
        char *h = d ? realloc(r->det_has, (size_t)n) : NULL;
        if (!h) return -1;
        r->det_has = h;
        r->det_cap = n;
    }
    for (int i = 0; i < n; i++)
        r->det_has[i] = (char)normalise(feats + (size_t)i * dim, dim, r->det + (size_t)i * dim);
    r->n_det = n;
    return 0;
}

void strix_reid_drop_det(strix_reid *r, int i)
{
    if (i < r->n_det) r->det_has[i] = 0;
}

int strix_reid_det_has(const strix_reid *r, int i) { return i < r->n_det && r->det_has[i]; }

void strix_reid_start(strix_reid *r, int slot, int i)
{
    r->has[slot] = (char)strix_reid_det_has(r, i);
    if (!r->has[slot]) return;
    size_t d = (size_t)r->dim;
    memcpy(r->curr + slot * d, r->det + i * d, sizeof(float) * d);
    memcpy(r->smooth + slot * d, r->det + i * d, sizeof(float) * d);
}

void strix_reid_update(strix_reid *r, int slot, int i, float a, float b)
{
    if (!strix_reid_det_has(r, i)) return;
    const int dim = r->dim;
    float *c = r->curr + (size_t)slot * dim, *s = r->smooth + (size_t)slot * dim;
    /* the detection's curr_feat, normalised again (smooth_feature takes it as new) */
    if (!normalise(r->det + (size_t)i * dim, dim, c)) return;
    if (!r->has[slot]) {
        memcpy(s, c, sizeof(float) * (size_t)dim);
        r->has[slot] = 1;
        return;
    }
    for (int q = 0; q < dim; q++) {
        float x = a * s[q], y = b * c[q];
        s[q] = x + y;
    }
    float n = norm(s, dim);
    for (int q = 0; q < dim; q++) s[q] /= n;
}

float strix_reid_embedding_distance(const strix_reid *r, int slot, int i)
{
    if (!r->has[slot] || !strix_reid_det_has(r, i)) return 2;
    const float *t = r->smooth + (size_t)slot * r->dim, *d = r->det + (size_t)i * r->dim;
    float den = norm(t, r->dim) * norm(d, r->dim);
    float c = 1 - dot(t, d, r->dim) / (den > FLT_EPSILON ? den : FLT_EPSILON);
    return c > 0 ? c : 0;
}

float strix_reid_cosine_distance(const strix_reid *r, int slot, int i)
{
    if (!r->has[slot] || !strix_reid_det_has(r, i)) return NAN;
    float c = 1 - dot(r->smooth + (size_t)slot * r->dim, r->det + (size_t)i * r->dim, r->dim);
    return c < 0 ? 0 : c > 1 ? 1 : c;
}
