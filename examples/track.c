/* track.c — strix's tracker on detections made elsewhere: a MOTChallenge
 * det.txt in (frame,id,x,y,w,h,score,... per line, frames from 1, sorted),
 * tracks out in MOTChallenge's format (frame,id,x,y,w,h,score,-1,-1,-1),
 * each with the tracker's box (strix_tracker_box: the Kalman state after
 * the update, as Ultralytics' tracked results carry it; not clipped, as
 * the frame's size is not known here).
 *
 *   cc track.c -o track $(pkg-config --cflags --libs strix)
 *   ./track det.txt > tracks.txt          # TrackTrack with Ultralytics' tracktrack.yaml
 *   ./track det.txt bytetrack > tracks.txt  # or botsort, ocsort, fasttrack, deepocsort
 *
 * No frames are given, so TrackTrack, BoT-SORT and Deep OC-SORT run without
 * camera-motion compensation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strix/strix.h>

enum { MAX_DETS = 1024 }; /* per frame */

int main(int argc, char **argv)
{
    /* Ultralytics' default first */
    static const strix_tracker_type types[] = {STRIX_TRACKER_TRACKTRACK, STRIX_TRACKER_BOTSORT,
                                               STRIX_TRACKER_BYTETRACK,  STRIX_TRACKER_OCSORT,
                                               STRIX_TRACKER_FASTTRACK,  STRIX_TRACKER_DEEPOCSORT};
    const int n_types = (int)(sizeof types / sizeof types[0]);
    int type = 0;
    while (argc == 3 && type < n_types && strcmp(argv[2], strix_tracker_type_name(types[type]))) type++;
    if ((argc != 2 && argc != 3) || type == n_types) {
        fprintf(stderr, "usage: %s DET.txt [tracktrack|botsort|bytetrack|ocsort|fasttrack|deepocsort]\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    strix_track_options to;
    strix_track_options_init(&to, types[type]);
    strix_tracker *t;
    strix_error err;
    if (strix_tracker_create(&t, &to, &err) != STRIX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    static strix_detection dets[MAX_DETS];
    static int ids[MAX_DETS];
    int frame = 1, n = 0, f, rc = 0, more = 1;
    char line[512];
    while (more && rc == 0) {
        /* read the next line, or finish the last frame at the end of the file */
        double x, y, w, h, s;
        more = fgets(line, sizeof line, in) != NULL;
        if (more && (sscanf(line, "%d,%*[^,],%lf,%lf,%lf,%lf,%lf", &f, &x, &y, &w, &h, &s) != 6 || f < frame)) {
            fprintf(stderr, "%s: not a MOTChallenge line of frame %d or later: %s", argv[1], frame, line);
            rc = 1;
            break;
        }
        while (rc == 0 && (!more || f > frame)) { /* frame is complete: track it, and any empty ones up to f */
            if (strix_tracker_update(t, NULL, dets, n, ids, &err) != STRIX_OK) {
                fprintf(stderr, "%s\n", err.message);
                rc = 1;
            }
            for (int i = 0; rc == 0 && i < n; i++) {
                float b[4];
                if (ids[i] > 0 && strix_tracker_box(t, i, b))
                    printf("%d,%d,%.2f,%.2f,%.2f,%.2f,%.4f,-1,-1,-1\n", frame, ids[i], b[0], b[1], b[2] - b[0],
                           b[3] - b[1], dets[i].score);
            }
            n = 0;
            frame++;
            if (!more) break;
        }
        if (more && n < MAX_DETS)
            dets[n++] = (strix_detection){(float)x, (float)y, (float)(x + w), (float)(y + h), (float)s, 0};
    }
    fclose(in);
    strix_tracker_free(t);
    return rc;
}
