/* track_ocsort.c — OC-SORT's per-track state (track_ocsort.h), step for step
 * as Ultralytics 8.4.190's oc_sort.py keeps it, with its number types:
 * observations, centres, directions, the velocity and the direction cost in
 * float32 (numpy float32 arrays; its scalars, 2, pi, inertia, enter as
 * float32 under numpy's promotion rules, and its two-term sums and dot
 * products round each product and the sum, no fused multiply-add), the
 * Kalman state saved for the re-update in double.
 *
 * Observations: a track's last delta_t + 2, oldest first (the dict
 * oc_sort.py trims to that many; frames only grow, so its sorted keys are
 * this order).
 */
#include "track_ocsort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* np.pi as numpy divides a float32 array by it: rounded to float32 */
#define PI_F 3.14159265358979323846f
/* the norm under which a direction counts as none (a float32 comparison, as numpy makes it) */
#define NORM_EPS 1e-6f

typedef struct slot {
    int n;                 /* observations held */
    int has_velocity;      /* velocity is not None */
    float velocity[2];
    float last[4];         /* last_observation */
    double mean[8], cov[64]; /* _saved_mean, _saved_covariance */
} slot;

struct strix_ocsort {
    int delta_t, keep;     /* keep = delta_t + 2 observations */
    int cap;               /* slots */
    slot *s;
    long *frame;           /* [cap][keep] */
    float *box;            /* [cap][keep][4] */
};

strix_ocsort *strix_ocsort_create(int delta_t)
{
    strix_ocsort *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->delta_t = delta_t;
    o->keep = delta_t + 2;
    return o;
}

void strix_ocsort_free(strix_ocsort *o)
{
    if (!o) return;
    free(o->s);
    free(o->frame);
    free(o->box);
    free(o);
}

int strix_ocsort_reserve(strix_ocsort *o, int slots)
{
    if (slots <= o->cap) return 0;
    size_t n = (size_t)slots, k = (size_t)o->keep;
    slot *s = realloc(o->s, sizeof *s * n);
    if (s) o->s = s;
    long *f = s ? realloc(o->frame, sizeof *f * n * k) : NULL;
    if (f) o->frame = f;
    float *b = f ? realloc(o->box, sizeof *b * 4 * n * k) : NULL;
    if (!b) return -1;
    o->box = b;
    memset(o->s + o->cap, 0, sizeof *s * (n - (size_t)o->cap));
    o->cap = slots;
    return 0;
}

void strix_ocsort_observe(strix_ocsort *o, int slot_i, long frame, const float xyxy[4])
{
    slot *s = &o->s[slot_i];
    long *f = o->frame + (size_t)slot_i * (size_t)o->keep;
    float *b = o->box + (size_t)slot_i * (size_t)o->keep * 4;
    if (s->n == o->keep) { /* the oldest goes */
        memmove(f, f + 1, sizeof *f * (size_t)(o->keep - 1));
        memmove(b, b + 4, sizeof *b * 4 * (size_t)(o->keep - 1));
        s->n--;
    }
    f[s->n] = frame;
    memcpy(b + 4 * s->n, xyxy, sizeof(float) * 4);
    s->n++;
    memcpy(s->last, xyxy, sizeof s->last);
}

static void save_state(slot *s, const double *mean, const double *cov)
{
    memcpy(s->mean, mean, sizeof s->mean);
    memcpy(s->cov, cov, sizeof s->cov);
}

void strix_ocsort_start(strix_ocsort *o, int slot_i, long frame, const float xyxy[4], const double *mean,
                        const double *cov)
{
    slot *s = &o->s[slot_i];
    /* a new OCSortTrack: this observation only, no velocity */
    o->frame[(size_t)slot_i * (size_t)o->keep] = frame;
    memcpy(o->box + (size_t)slot_i * (size_t)o->keep * 4, xyxy, sizeof(float) * 4);
    memcpy(s->last, xyxy, sizeof s->last);
    s->n = 1;
    s->has_velocity = 0;
    save_state(s, mean, cov);
}

/* _xyxy_center in float32 */
static void centre(const float b[4], float c[2])
{
    c[0] = (b[0] + b[2]) / 2;
    c[1] = (b[1] + b[3]) / 2;
}

/* _compute_velocity: the direction from the most recent observation at
 * least delta_t frames before the newest one (else the oldest) to the
 * newest, unit length (zero when they coincide); None with one observation. */
static void velocity(const strix_ocsort *o, int slot_i)
{
    slot *s = &o->s[slot_i];
    const long *f = o->frame + (size_t)slot_i * (size_t)o->keep;
    const float *b = o->box + (size_t)slot_i * (size_t)o->keep * 4;
    s->has_velocity = 0;
    if (s->n < 2) return;
    const long cur = f[s->n - 1];
    int prev = 0; /* the fallback: the oldest (never the newest: frames differ) */
    for (int i = s->n - 1; i >= 0; i--)
        if (f[i] < cur - o->delta_t + 1) {
            prev = i;
            break;
        }
    float c[2], p[2];
    centre(b + 4 * (s->n - 1), c);
    centre(b + 4 * prev, p);
    float dx = c[0] - p[0], dy = c[1] - p[1];
    float norm = sqrtf(dx * dx + dy * dy);
    s->has_velocity = 1;
    if (norm < NORM_EPS) {
        s->velocity[0] = s->velocity[1] = 0;
        return;
    }
    s->velocity[0] = dx / norm;
    s->velocity[1] = dy / norm;
}

void strix_ocsort_settle(strix_ocsort *o, int slot_i, const double *mean, const double *cov)
{
    save_state(&o->s[slot_i], mean, cov);
    velocity(o, slot_i);
}

float strix_ocsort_direction_cost(const strix_ocsort *o, int slot_i, const float det[4])
{
    const slot *s = &o->s[slot_i];
    if (!s->has_velocity || s->last[0] < 0) return 0;
    float t[2], d[2];
    centre(s->last, t);
    centre(det, d);
    float dx = d[0] - t[0], dy = d[1] - t[1];
    float norm = sqrtf(dx * dx + dy * dy);
    if (!(norm > NORM_EPS)) return 0;
    dx /= norm;
    dy /= norm;
    float dot = dx * s->velocity[0] + dy * s->velocity[1];
    dot = dot < -1 ? -1 : dot > 1 ? 1 : dot;
    return acosf(dot) / PI_F;
}

int strix_ocsort_last(const strix_ocsort *o, int slot_i, float xyxy[4])
{
    const slot *s = &o->s[slot_i];
    if (!(s->last[0] >= 0)) return 0;
    memcpy(xyxy, s->last, sizeof s->last);
    return 1;
}

void strix_ocsort_warp(strix_ocsort *o, int slot_i, const double H[6])
{
    float *l = o->s[slot_i].last;
    if (!(l[0] >= 0)) return;
    /* centre and size in float32; R @ centre + t in double (the float32 centre promoted); corners back to float32 */
    float c[2], w = l[2] - l[0], h = l[3] - l[1];
    centre(l, c);
    double x = H[0] * c[0] + H[1] * c[1], y = H[3] * c[0] + H[4] * c[1];
    x += H[2];
    y += H[5];
    l[0] = (float)(x - w / 2);
    l[1] = (float)(y - h / 2);
    l[2] = (float)(x + w / 2);
    l[3] = (float)(y + h / 2);
}

int strix_ocsort_gap(const strix_ocsort *o, int slot_i, long frame, double *mean, double *cov)
{
    const slot *s = &o->s[slot_i];
    if (!s->n) return 0;
    long gap = frame - o->frame[(size_t)slot_i * (size_t)o->keep + (size_t)(s->n - 1)];
    if (gap <= 1) return 0;
    memcpy(mean, s->mean, sizeof s->mean);
    memcpy(cov, s->cov, sizeof s->cov);
    return (int)gap;
}

void strix_ocsort_virtual(const strix_ocsort *o, int slot_i, const float det[4], int step, int gap, float m[4])
{
    const slot *s = &o->s[slot_i];
    const float *last = o->box + ((size_t)slot_i * (size_t)o->keep + (size_t)(s->n - 1)) * 4;
    double alpha = (double)step / gap;
    float a = (float)(1 - alpha), b = (float)alpha, v[4];
    for (int q = 0; q < 4; q++) v[q] = a * last[q] + b * det[q];
    /* xyxy2ltwh, then tlwh_to_xyah, in float32 */
    float w = v[2] - v[0], h = v[3] - v[1];
    m[0] = v[0] + w / 2;
    m[1] = v[1] + h / 2;
    m[2] = w / h;
    m[3] = h;
}
