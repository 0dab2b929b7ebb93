/* track_fasttrack.h — FastTrack's own per-track state and decisions
 * (Ultralytics 8.4.190 fast_tracker.py: FastSTrack's history of Kalman
 * states and occlusion bookkeeping, FASTTracker's occlusion roll-back and
 * its grace windows), one entry per track slot of the tracker in
 * engine/analytics/track.c, which runs ByteTrack's associations around
 * them and measures the overlaps. */
#ifndef STRIX_TRACK_FASTTRACK_H
#define STRIX_TRACK_FASTTRACK_H

#include "strix.h"

typedef struct strix_fasttrack strix_fasttrack;

/* The knobs of o (checked by the caller: offsets 0..STRIX_FASTTRACK_MAX_OFFSET).  NULL on OOM. */
#define STRIX_FASTTRACK_MAX_OFFSET 100
strix_fasttrack *strix_fasttrack_create(const strix_track_options *o);
void strix_fasttrack_free(strix_fasttrack *f);
/* Room for track slots 0..slots-1; 0, or -1 on OOM (the state kept). */
int strix_fasttrack_reserve(strix_fasttrack *f, int slots);

/* FastSTrack.activate: slot holds a new track whose Kalman state is mean[8], cov[64]. */
void strix_fasttrack_start(strix_fasttrack *f, int slot, const double *mean, const double *cov);
/* After a Kalman update of the track (update; re_activate when reactivated,
 * which also clears its occlusion bookkeeping): the state kept. */
void strix_fasttrack_updated(strix_fasttrack *f, int slot, int reactivated, const double *mean, const double *cov);
/* _apply_match: matched in the first or the low-score association. */
void strix_fasttrack_matched(strix_fasttrack *f, int slot);
/* is_occluded */
int strix_fasttrack_occluded(const strix_fasttrack *f, int slot);
/* _handle_occlusions for one tracked track left unmatched at frame, cover
 * the largest fraction of its box (float32) a matched track covers: may
 * roll mean and cov back.  1 when the track is now lost. */
int strix_fasttrack_unmatched(strix_fasttrack *f, int slot, long frame, float cover, double *mean, double *cov);
/* _remove_stale_lost: 1 while the lost track of slot is kept whatever its
 * age (occluded within occ_reappear_window frames of frame). */
int strix_fasttrack_grace(const strix_fasttrack *f, int slot, long frame);

#endif
