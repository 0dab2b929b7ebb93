/* seeds_tracker.c — writes the seeds of fuzz_tracker into a folder (run by
 * tests/fuzz/run.sh before the target): each a tracker YAML (the keys and
 * values of Ultralytics' botsort.yaml or bytetrack.yaml), a NUL byte, then
 * 24 frames in fuzz_tracker.c's format: three boxes moving 3 px a frame
 * over a 96x64 frame that pans, so tracks start, confirm and follow.
 *   botsort.bin   BoT-SORT, GMC sparseOptFlow, GMC on the frame
 *   bands.bin     the same, GMC on the grey half frame made in bands
 *   bytetrack.bin ByteTrack, no pixels
 *   seeds_tracker DIR */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *botsort = "tracker_type: botsort\ntrack_high_thresh: 0.25\ntrack_low_thresh: 0.1\n"
                             "new_track_thresh: 0.25\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n"
                             "gmc_method: sparseOptFlow\nproximity_thresh: 0.5\nappearance_thresh: 0.8\n"
                             "with_reid: False\nmodel: auto\n";
static const char *bytetrack = "tracker_type: bytetrack\ntrack_high_thresh: 0.25\ntrack_low_thresh: 0.1\n"
                               "new_track_thresh: 0.25\ntrack_buffer: 30\nmatch_thresh: 0.8\nfuse_score: True\n";

/* mode: fuzz_tracker's pixel mode (0 the frame, 2 grey bands, 3 none) */
static int write_seed(const char *dir, const char *name, const char *yaml, int mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "seeds_tracker: %s: cannot create\n", path);
        return 0;
    }
    int ok = fwrite(yaml, 1, strlen(yaml) + 1, f) == strlen(yaml) + 1; /* with its NUL */
    for (int fr = 0; ok && fr < 24; fr++) {
        uint8_t head[5] = {(uint8_t)(3 | mode << 4), 95, 63, 0x21, 15}; /* 3 boxes, 96x64, seed, bands of 16 rows */
        size_t n = mode == 3 ? 1 : mode == 2 ? 5 : 4;
        ok = fwrite(head, 1, n, f) == n;
        for (int k = 0; ok && k < 3; k++) {
            int x = 4 + 30 * k + 3 * fr / 4, y = 8 + 10 * k; /* pixels */
            int16_t q[4] = {(int16_t)(4 * x), (int16_t)(4 * y), (int16_t)(4 * (x + 20)), (int16_t)(4 * (y + 30))};
            uint8_t le[8], sc[3] = {(uint8_t)(200 + 20 * k), (uint8_t)k, 0};
            for (int i = 0; i < 4; i++) le[2 * i] = (uint8_t)q[i], le[2 * i + 1] = (uint8_t)((uint16_t)q[i] >> 8);
            ok = fwrite(le, 1, 8, f) == 8 && fwrite(sc, 1, 3, f) == 3;
        }
    }
    if (fclose(f) || !ok) {
        fprintf(stderr, "seeds_tracker: %s: write error\n", path);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds_tracker DIR\n");
        return 2;
    }
    int ok = write_seed(argv[1], "botsort.bin", botsort, 0) && write_seed(argv[1], "bands.bin", botsort, 2) &&
             write_seed(argv[1], "bytetrack.bin", bytetrack, 3);
    return ok ? 0 : 1;
}
