/* seeds_tracker.c — writes the seeds of fuzz_tracker into a folder (run by
 * tests/fuzz/run.sh before the target): each a tracker YAML (the keys and
 * values of Ultralytics' botsort.yaml, bytetrack.yaml, ocsort.yaml,
 * fasttrack.yaml, deepocsort.yaml or tracktrack.yaml), a NUL byte, then
 * 24 frames in fuzz_tracker.c's format: three boxes moving 3 px every 4
 * frames over a 96x64 frame that pans, so tracks start, confirm and follow.
 *   botsort.bin   BoT-SORT, GMC sparseOptFlow, GMC on the frame
 *   bands.bin     the same, GMC on the grey half frame made in bands
 *   bytetrack.bin ByteTrack, no pixels
 *   ocsort.bin    OC-SORT, no pixels
 *   fasttrack.bin FastTrack, no pixels
 *   deepocsort.bin Deep OC-SORT, GMC sparseOptFlow, GMC on the frame
 *   tracktrack.bin TrackTrack, GMC sparseOptFlow, GMC on the frame
 *   obb_botsort.bin, obb_tracktrack.bin, obb_ocsort.bin the same on
 *                 oriented boxes (the boxes' centres and sides, turning)
 *   reid.bin      BoT-SORT with_reid, ReID features each frame, no pixels
 *   ttreid.bin    TrackTrack with_reid, ReID features each frame, no pixels
 *   ttrec.bin, obb_ttrec.bin TrackTrack given each frame's boxes as its
 *                 recovered detections too, no pixels
 *   seeds_tracker DIR */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *botsort = "tracker_type: botsort\ntrack_high_thresh: 0.25\ntrack_low_thresh: 0.1\n"
                             "new_track_thresh: 0.25\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n"
                             "gmc_method: sparseOptFlow\nproximity_thresh: 0.5\nappearance_thresh: 0.8\n"
                             "with_reid: False\nmodel: auto\n";
static const char *tracktrack = "tracker_type: tracktrack\ntrack_high_thresh: 0.6\ntrack_low_thresh: 0.25\n"
                                "new_track_thresh: 0.7\ntrack_buffer: 30\nmatch_thresh: 0.7\nlost_match_thr: 0.0\n"
                                "iou_weight: 0.5\nreid_weight: 0.5\nconf_weight: 0.1\nangle_weight: 0.05\n"
                                "penalty_p: 0.2\npenalty_q: 0.4\nreduce_step: 0.05\ntai_thr: 0.55\nmin_track_len: 3\n"
                                "gmc_method: sparseOptFlow\nwith_reid: False\nmodel: auto\n";
static const char *bytetrack = "tracker_type: bytetrack\ntrack_high_thresh: 0.25\ntrack_low_thresh: 0.1\n"
                               "new_track_thresh: 0.25\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n";
static const char *ocsort = "tracker_type: ocsort\ntrack_high_thresh: 0.25\ntrack_low_thresh: 0.1\n"
                            "new_track_thresh: 0.25\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n"
                            "delta_t: 3\ninertia: 0.2\nuse_byte: False\n";
static const char *fasttrack = "tracker_type: fasttrack\ntrack_high_thresh: 0.25\ntrack_low_thresh: 0.1\n"
                               "new_track_thresh: 0.25\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n"
                               "reset_velocity_offset_occ: 5\nreset_pos_offset_occ: 3\nenlarge_bbox_occ: 1.1\n"
                               "dampen_motion_occ: 0.5\nactive_occ_to_lost_thresh: 10\nocc_cover_thresh: 0.7\n"
                               "occ_reappear_window: 40\ninit_iou_suppress: 0.7\n";
static const char *deepocsort = "tracker_type: deepocsort\ntrack_high_thresh: 0.3\ntrack_low_thresh: 0.1\n"
                                "new_track_thresh: 0.3\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n"
                                "delta_t: 3\ninertia: 0.2\nuse_byte: False\ngmc_method: sparseOptFlow\n"
                                "with_reid: False\nmodel: auto\nproximity_thresh: 0.5\nappearance_thresh: 0.9\n"
                                "alpha_fixed_emb: 0.95\n";

static const char *botsort_reid = "tracker_type: botsort\ngmc_method: none\nwith_reid: True\nmodel: auto\n";
static const char *tracktrack_reid = "tracker_type: tracktrack\nmin_track_len: 1\nwith_reid: True\nmodel: auto\n";

/* mode: fuzz_tracker's pixel mode (0 the frame, 2 grey bands, 3 none);
 * obb: oriented boxes; first: the first detection's flags (4: each frame gives ReID features, 8: its boxes
 * as recovered detections too).  The seed is made in memory, then written at once. */
static int write_seed(const char *dir, const char *name, const char *yaml, int mode, int obb, int first)
{
    static uint8_t b[4096];
    size_t n = strlen(yaml) + 1; /* with its NUL */
    memcpy(b, yaml, n);
    for (int fr = 0; fr < 24; fr++) {
        /* 3 boxes (oriented: bit 7), 96x64, seed, bands of 16 rows */
        const uint8_t head[5] = {(uint8_t)(3 | mode << 4 | obb << 7), 95, 63, 0x21, 15};
        size_t k = mode == 3 ? 1 : mode == 2 ? 5 : 4;
        memcpy(b + n, head, k);
        n += k;
        for (int i = 0; i < 3; i++) {
            int x = 4 + 30 * i + 3 * fr / 4, y = 8 + 10 * i; /* pixels */
            const int v[4] = {obb ? x + 10 : x, obb ? y + 15 : y, obb ? 20 : x + 20, obb ? 30 : y + 30}; /* or cx cy w h */
            const int16_t q[4] = {(int16_t)(4 * v[0]), (int16_t)(4 * v[1]), (int16_t)(4 * v[2]), (int16_t)(4 * v[3])};
            for (int c = 0; c < 4; c++) b[n++] = (uint8_t)q[c], b[n++] = (uint8_t)((uint16_t)q[c] >> 8); /* little-endian */
            b[n++] = (uint8_t)(200 + 20 * i); /* score */
            b[n++] = (uint8_t)i;              /* class */
            b[n++] = (uint8_t)(i ? 0 : first); /* flags: the first's bits 2 and 3 */
            const int16_t a = (int16_t)(100 * fr + 300 * i); /* radians x 1024 */
            if (obb) b[n++] = (uint8_t)a, b[n++] = (uint8_t)((uint16_t)a >> 8);
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == n;
    if (f && fclose(f)) ok = 0;
    if (!ok) fprintf(stderr, "seeds_tracker: cannot write %s\n", path);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds_tracker DIR\n");
        return 2;
    }
    int ok = write_seed(argv[1], "botsort.bin", botsort, 0, 0, 0) && write_seed(argv[1], "bands.bin", botsort, 2, 0, 0) &&
             write_seed(argv[1], "bytetrack.bin", bytetrack, 3, 0, 0) && write_seed(argv[1], "ocsort.bin", ocsort, 3, 0, 0) &&
             write_seed(argv[1], "fasttrack.bin", fasttrack, 3, 0, 0) &&
             write_seed(argv[1], "deepocsort.bin", deepocsort, 0, 0, 0) &&
             write_seed(argv[1], "tracktrack.bin", tracktrack, 0, 0, 0) &&
             write_seed(argv[1], "obb_botsort.bin", botsort, 0, 1, 0) &&
             write_seed(argv[1], "obb_tracktrack.bin", tracktrack, 2, 1, 0) &&
             write_seed(argv[1], "obb_ocsort.bin", ocsort, 3, 1, 0) &&
             write_seed(argv[1], "reid.bin", botsort_reid, 3, 0, 4) &&
             write_seed(argv[1], "ttreid.bin", tracktrack_reid, 3, 0, 4) &&
             write_seed(argv[1], "ttrec.bin", tracktrack_reid, 3, 0, 8) &&
             write_seed(argv[1], "obb_ttrec.bin", tracktrack, 3, 1, 8);
    return ok ? 0 : 1;
}
