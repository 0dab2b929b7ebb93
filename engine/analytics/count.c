/* count.c — per-track totals, unique tracks per class, line crossings and
 * trails of count.h.  Tracks live in an array sorted by identity (binary
 * search: identities arrive nearly in order); each keeps a small class
 * histogram and a ring of its last `trail` centres. */
#include "count.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct class_count {
    int class_id;
    long n;
} class_count;

typedef struct trk {
    strix_track_info info;
    class_count *hist;
    int n_hist;
    float *ring;       /* [trail][2] centres */
    long *ring_frame;  /* [trail] their frames */
    int ring_head, ring_n;
    float last[2];     /* last centre on a side of the line */
    int last_side;     /* -1, 1; 0 before the first */
} trk;

struct strix_counter {
    int has_line;
    float line[4];
    int trail;
    trk *t;
    int n, cap;
    strix_track_info *infos; /* strix_counter_tracks' array, refreshed on each call */
    float *trail_out;        /* strix_counter_trail's array */
    int line_in, line_out;
};

strix_status strix_counter_create(strix_counter **out, const float *line, int trail, strix_error *err)
{
    *out = NULL;
    if (trail < 0 || trail > 100000) return strix_fail(err, STRIX_E_ARG, "trail length %d is not in 0..100000", trail);
    if (line && (!isfinite(line[0]) || !isfinite(line[1]) || !isfinite(line[2]) || !isfinite(line[3]) ||
                 (line[0] == line[2] && line[1] == line[3])))
        return strix_fail(err, STRIX_E_ARG, "counting line: needs two distinct finite points x1,y1,x2,y2");
    strix_counter *c = calloc(1, sizeof *c);
    if (!c || (trail && !(c->trail_out = malloc(sizeof *c->trail_out * 2 * (size_t)trail)))) {
        free(c);
        return strix_fail(err, STRIX_E_NOMEM, "counter: out of memory");
    }
    if (line) {
        c->has_line = 1;
        memcpy(c->line, line, sizeof c->line);
    }
    c->trail = trail;
    *out = c;
    return STRIX_OK;
}

void strix_counter_free(strix_counter *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++) {
        free(c->t[i].hist);
        free(c->t[i].ring);
        free(c->t[i].ring_frame);
    }
    free(c->t);
    free(c->infos);
    free(c->trail_out);
    free(c);
}

/* index of id, or -(insertion point) - 1 */
static int find(const strix_counter *c, int id)
{
    int lo = 0, hi = c->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (c->t[mid].info.id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->n && c->t[lo].info.id == id ? lo : -lo - 1;
}

static trk *get(strix_counter *c, int id)
{
    int at = find(c, id);
    if (at >= 0) return &c->t[at];
    at = -at - 1;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        trk *t = realloc(c->t, sizeof *t * (size_t)cap);
        if (!t) return NULL;
        c->t = t;
        c->cap = cap;
    }
    trk nt;
    memset(&nt, 0, sizeof nt);
    if (c->trail && (!(nt.ring = malloc(sizeof *nt.ring * 2 * (size_t)c->trail)) ||
                     !(nt.ring_frame = malloc(sizeof *nt.ring_frame * (size_t)c->trail)))) {
        free(nt.ring);
        return NULL;
    }
    nt.info.id = id;
    nt.info.first = -1;
    memmove(&c->t[at + 1], &c->t[at], sizeof *c->t * (size_t)(c->n - at));
    c->t[at] = nt;
    c->n++;
    return &c->t[at];
}

static int add_class(trk *t, int class_id)
{
    for (int i = 0; i < t->n_hist; i++)
        if (t->hist[i].class_id == class_id) {
            t->hist[i].n++;
            return 0;
        }
    class_count *h = realloc(t->hist, sizeof *h * (size_t)(t->n_hist + 1));
    if (!h) return -1;
    t->hist = h;
    h[t->n_hist].class_id = class_id;
    h[t->n_hist++].n = 1;
    return 0;
}

static int majority(const trk *t)
{
    int best = -1;
    long n = -1;
    for (int i = 0; i < t->n_hist; i++)
        if (t->hist[i].n > n || (t->hist[i].n == n && t->hist[i].class_id < best)) {
            best = t->hist[i].class_id;
            n = t->hist[i].n;
        }
    return best;
}

/* Which side of the line p is on: -1 left, 1 right (screen, y down), 0 on it. */
static int side(const float *l, double x, double y)
{
    double v = (double)(l[2] - l[0]) * (y - l[1]) - (double)(l[3] - l[1]) * (x - l[0]);
    return v > 0 ? 1 : v < 0 ? -1 : 0;
}

/* Does the move a -> b (on opposite sides of the line) pass through the segment itself? */
static int through_segment(const float *l, const float *a, const float *b)
{
    int s1 = side((const float[]){a[0], a[1], b[0], b[1]}, l[0], l[1]);
    int s2 = side((const float[]){a[0], a[1], b[0], b[1]}, l[2], l[3]);
    return s1 != s2 || s1 == 0;
}

strix_status strix_counter_add(strix_counter *c, long frame, double time, const strix_detection *dets,
                               const int *ids, int n, strix_crossing *cross, int *n_cross, strix_error *err)
{
    if (n_cross) *n_cross = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0) continue;
        trk *t = get(c, ids[i]);
        if (!t || add_class(t, dets[i].class_id)) return strix_fail(err, STRIX_E_NOMEM, "counter: out of memory");
        strix_track_info *in = &t->info;
        if (in->first < 0) {
            in->first = frame;
            in->start = time;
        }
        in->last = frame;
        in->end = time;
        in->frames++;
        in->class_id = majority(t);
        float p[2] = {(dets[i].x1 + dets[i].x2) / 2, (dets[i].y1 + dets[i].y2) / 2};
        if (c->trail) {
            int slot = (t->ring_head + t->ring_n) % c->trail;
            if (t->ring_n == c->trail) t->ring_head = (t->ring_head + 1) % c->trail;
            else t->ring_n++;
            t->ring[2 * slot] = p[0];
            t->ring[2 * slot + 1] = p[1];
            t->ring_frame[slot] = frame;
        }
        if (!c->has_line) continue;
        int s = side(c->line, p[0], p[1]);
        if (s == 0) continue; /* on the line: decided when it leaves it */
        if (t->last_side && s != t->last_side && through_segment(c->line, t->last, p)) {
            int is_in = t->last_side < 0;
            if (is_in) {
                in->line_in++;
                c->line_in++;
            } else {
                in->line_out++;
                c->line_out++;
            }
            if (cross) {
                cross[*n_cross].id = ids[i];
                cross[*n_cross].class_id = dets[i].class_id;
                cross[(*n_cross)++].in = is_in;
            }
        }
        t->last_side = s;
        t->last[0] = p[0];
        t->last[1] = p[1];
    }
    return STRIX_OK;
}

int strix_counter_tracks(strix_counter *c, const strix_track_info **tracks)
{
    strix_track_info *v = realloc(c->infos, sizeof *v * (size_t)(c->n ? c->n : 1));
    if (!v) {
        *tracks = NULL;
        return -1;
    }
    c->infos = v;
    for (int i = 0; i < c->n; i++) v[i] = c->t[i].info;
    *tracks = v;
    return c->n;
}

int strix_counter_class_tracks(const strix_counter *c, int class_id)
{
    int k = 0;
    for (int i = 0; i < c->n; i++) k += c->t[i].info.class_id == class_id;
    return k;
}

void strix_counter_line(const strix_counter *c, int *in, int *out)
{
    *in = c->line_in;
    *out = c->line_out;
}

int strix_counter_trail(const strix_counter *c, int id, long frame, const float **xy)
{
    *xy = NULL;
    int at = find(c, id);
    if (at < 0 || !c->trail) return 0;
    const trk *t = &c->t[at];
    int k = 0;
    for (int i = 0; i < t->ring_n; i++) {
        int slot = (t->ring_head + i) % c->trail;
        if (frame - t->ring_frame[slot] >= c->trail) continue;
        c->trail_out[2 * k] = t->ring[2 * slot];
        c->trail_out[2 * k + 1] = t->ring[2 * slot + 1];
        k++;
    }
    *xy = c->trail_out;
    return k;
}
