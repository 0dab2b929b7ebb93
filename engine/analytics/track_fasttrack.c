/* track_fasttrack.c — FastTrack's per-track state (track_fasttrack.h), step
 * for step as Ultralytics 8.4.190's fast_tracker.py keeps it: the last
 * history_len = max(offsets) + 4 Kalman states (mean[8], cov[64], doubles;
 * a deque, oldest first, here a ring per slot), the unmatched and occluded
 * counts, the frame of the last occlusion.  Its scale factors multiply the
 * double state by the YAML's doubles, as numpy does with Python floats. */
#include "track_fasttrack.h"

#include <stdlib.h>
#include <string.h>

typedef struct state {
    double mean[8], cov[64];
} state;

typedef struct slot {
    int n, head;               /* states held; the oldest's place in the ring */
    int not_matched, occluded, occluded_len, recently_occluded;
    long last_occluded;        /* frame, -1: never */
} slot;

struct strix_fasttrack {
    strix_track_options o;
    int keep;                  /* history_len */
    int cap;
    slot *s;
    state *hist;               /* [cap][keep] */
};

strix_fasttrack *strix_fasttrack_create(const strix_track_options *o)
{
    strix_fasttrack *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->o = *o;
    int m = o->reset_velocity_offset_occ > o->reset_pos_offset_occ ? o->reset_velocity_offset_occ
                                                                    : o->reset_pos_offset_occ;
    f->keep = m + 4;
    return f;
}

void strix_fasttrack_free(strix_fasttrack *f)
{
    if (!f) return;
    free(f->s);
    free(f->hist);
    free(f);
}

int strix_fasttrack_reserve(strix_fasttrack *f, int slots)
{
    if (slots <= f->cap) return 0;
    slot *s = realloc(f->s, sizeof *s * (size_t)slots);
    if (!s) return -1;
    f->s = s;
    state *h = realloc(f->hist, sizeof *h * (size_t)slots * (size_t)f->keep);
    if (!h) return -1;
    f->hist = h;
    memset(f->s + f->cap, 0, sizeof *s * (size_t)(slots - f->cap));
    f->cap = slots;
    return 0;
}

/* The i-th state kept (0: the oldest). */
static state *kept(const strix_fasttrack *f, int slot_i, int i)
{
    const slot *s = &f->s[slot_i];
    return &f->hist[(size_t)slot_i * (size_t)f->keep + (size_t)((s->head + i) % f->keep)];
}

/* _push_history: the deque drops its oldest when full */
static void push(strix_fasttrack *f, int slot_i, const double *mean, const double *cov)
{
    slot *s = &f->s[slot_i];
    if (s->n == f->keep) {
        s->head = (s->head + 1) % f->keep;
        s->n--;
    }
    state *x = kept(f, slot_i, s->n++);
    memcpy(x->mean, mean, sizeof x->mean);
    memcpy(x->cov, cov, sizeof x->cov);
}

static void clear_occlusion(slot *s)
{
    s->occluded = s->occluded_len = s->not_matched = s->recently_occluded = 0;
    s->last_occluded = -1;
}

void strix_fasttrack_start(strix_fasttrack *f, int slot_i, const double *mean, const double *cov)
{
    slot *s = &f->s[slot_i];
    s->n = s->head = 0;
    clear_occlusion(s);
    push(f, slot_i, mean, cov);
}

void strix_fasttrack_updated(strix_fasttrack *f, int slot_i, int reactivated, const double *mean, const double *cov)
{
    if (reactivated) clear_occlusion(&f->s[slot_i]);
    push(f, slot_i, mean, cov);
}

void strix_fasttrack_matched(strix_fasttrack *f, int slot_i)
{
    slot *s = &f->s[slot_i];
    s->occluded = s->not_matched = s->occluded_len = 0;
}

int strix_fasttrack_occluded(const strix_fasttrack *f, int slot_i) { return f->s[slot_i].occluded; }

/* hist[-offset] of the deque (hist[-0] is hist[0], the oldest); NULL when it holds fewer */
static const state *back(const strix_fasttrack *f, int slot_i, int offset)
{
    int n = f->s[slot_i].n;
    if (n < offset) return NULL;
    return kept(f, slot_i, offset ? n - offset : 0);
}

int strix_fasttrack_unmatched(strix_fasttrack *f, int slot_i, long frame, float cover, double *mean, double *cov)
{
    slot *s = &f->s[slot_i];
    const strix_track_options *o = &f->o;
    s->not_matched++;
    if (cover > o->occ_cover_thresh && !s->occluded) {
        s->occluded = 1;
        s->occluded_len = 1;
        s->last_occluded = frame;
        s->recently_occluded = 1;
        if (s->n) { /* back to the state before the occluder arrived, then a wider, slower search */
            const state *v = back(f, slot_i, o->reset_velocity_offset_occ), *p;
            if (v) memcpy(mean + 4, v->mean + 4, sizeof(double) * 4);
            if ((p = back(f, slot_i, o->reset_pos_offset_occ))) {
                memcpy(mean, p->mean, sizeof(double) * 4);
                memcpy(cov, p->cov, sizeof p->cov);
            }
            mean[3] *= o->enlarge_bbox_occ;
            for (int i = 4; i < 8; i++) mean[i] *= o->dampen_motion_occ;
        }
    } else if (s->occluded) {
        s->occluded_len++;
    }
    if (s->recently_occluded && frame - s->last_occluded > o->occ_reappear_window) s->recently_occluded = 0;
    return s->not_matched > 2 && (!s->occluded || s->occluded_len > o->active_occ_to_lost_thresh);
}

int strix_fasttrack_grace(const strix_fasttrack *f, int slot_i, long frame)
{
    const slot *s = &f->s[slot_i];
    return s->recently_occluded && frame - s->last_occluded <= f->o.occ_reappear_window;
}
