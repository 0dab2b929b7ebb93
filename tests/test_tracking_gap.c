/* test_tracking_gap.c — the infer job's reconnect gap (tools/infer/tracking.c
 * tracking_gap): for every tracker type, a gap longer than
 * tracking_gap_span + 1 ends every track, even FastTrack's occluded one, which
 * its occ_reappear_window (40 by default, past track_buffer 30) keeps lost
 * longest, so the objects seen after it get new identities; one of span + 1
 * leaves a track (so the span is no longer than it must be); a short gap
 * keeps them.  Scene: a box A inside a bigger box B (A covered by B: in
 * FastTrack, occluded once it goes unmatched), at random places, seen
 * together, then B alone, then the gap, then both again (six frames). */
#include <string.h>

#include "tools/infer/job.h"
#include "testlib.h"

enum { W = 640, H = 480 };

/* one frame through the tracker: the identities of dets[0..n) into ids */
static int frame(tracking *t, long *index, const strix_detection *d, int n, int *ids)
{
    strix_error err;
    int n_cross = 0;
    strix_status st = tracking_frame(t, NULL, NULL, W, H, *index, *index / 30.0, 1, d, n, NULL, 0, &n_cross, &err);
    if (st) {
        tl_fail("tracking_frame: %s", err.message);
        return -1;
    }
    memcpy(ids, t->ids, sizeof *ids * (size_t)n);
    (*index)++;
    return 0;
}

/* the identities of A and B before a gap of `missed` frames (ids0) and after it (ids1) */
static int gap_run(strix_tracker_type type, long missed, int ids0[2], int ids1[2])
{
    strix_track_options o;
    strix_track_options_init(&o, type);
    tracking_config c = {.track = &o};
    tracking t;
    strix_error err;
    if (tracking_open(&t, &c, &err)) {
        tl_fail("tracking_open: %s", err.message);
        return -1;
    }
    float x = tl_uniform(0, W - 200), y = tl_uniform(0, H - 240);
    strix_detection d[2] = {{x + 40, y + 60, x + 120, y + 180, 0.9f, 0}, {x, y, x + 200, y + 240, 0.9f, 0}};
    int ids[2] = {-1, -1}, rc = 0;
    long index = 0;
    for (int f = 0; f < 6 && !rc; f++) rc = frame(&t, &index, d, 2, ids);
    memcpy(ids0, ids, sizeof ids);
    if (!rc) rc = frame(&t, &index, d + 1, 1, ids);
    if (!rc && tracking_gap(&t, missed, &o, &err)) {
        tl_fail("tracking_gap: %s", err.message);
        rc = -1;
    }
    index += missed;
    /* six frames, as at the start: a new track is output from its second (TrackTrack: later) */
    for (int f = 0; f < 6 && !rc; f++) rc = frame(&t, &index, d, 2, ids1);
    tracking_close(&t);
    return rc;
}

static void test_gap_ends_tracks(void)
{
    for (int type = STRIX_TRACKER_BOTSORT; type <= STRIX_TRACKER_TRACKTRACK; type++) {
        strix_track_options o;
        strix_track_options_init(&o, (strix_tracker_type)type);
        const char *name = strix_tracker_type_name((strix_tracker_type)type);
        int a[2], b[2];
        /* span + 1: the track seen last (B; in FastTrack A, occluded) is still found again */
        if (gap_run((strix_tracker_type)type, tracking_gap_span(&o) + 1, a, b)) return;
        TL_CHECK(b[0] == a[0] || b[1] == a[1], "%s: after a gap of the span + 1 A and B got ids %d %d, none of theirs "
                 "(%d %d): the span is too long", name, b[0], b[1], a[0], a[1]);
        if (gap_run((strix_tracker_type)type, tracking_gap_span(&o) + 2 + tl_int(0, 100), a, b)) return;
        TL_CHECK(a[0] >= 1 && a[1] >= 1, "%s: A and B tracked before the gap (ids %d %d)", name, a[0], a[1]);
        TL_CHECK(b[0] > a[1] && b[1] > a[1] && b[0] != b[1],
                 "%s: after a long gap A and B got ids %d %d, not new ones (theirs before: %d %d)", name, b[0], b[1],
                 a[0], a[1]);
        if (gap_run((strix_tracker_type)type, tl_int(1, 5), a, b)) return;
        TL_CHECK(b[1] == a[1], "%s: after a short gap B got id %d, not its own %d", name, b[1], a[1]);
    }
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(test_gap_ends_tracks);
    TL_MAIN_END();
}
