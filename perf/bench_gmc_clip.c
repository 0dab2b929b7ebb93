/* bench_gmc_clip.c — BoT-SORT's camera-motion compensation (GMC) per frame
 * of a real video, the two ways the video job can feed it, on one core:
 *
 *   frame  strix_gmc_apply on the RGB frame, read back from memory as the
 *          tracker reads it in infer (it runs on the writer thread after
 *          the frame's detection batch, by when the frame has left the
 *          caches: the frames here wait --lag frames, default 64, 400 MB
 *          at 1080p, before GMC reads them);
 *   grey   strix_track_grey band by band inside the reader, as swscale
 *          writes each band (loaders/video.h's rows callback: what infer
 *          does), then strix_gmc_apply_grey on that grey image --lag frames
 *          later.
 *
 * Both see the same frames in the same order (two GMC states); their
 * transforms must be equal to the bit (a difference fails the run).
 * Reported: the median, over the frames, of this thread's CPU time per
 * frame of each part (and of the frame path's grey step,
 * strix_gmc_step_times) (the first frame of each path, which only
 * initialises GMC, left out), and the load average before and after (the
 * machine is shared).  The decode and the RGB conversion are not counted:
 * both paths need them.
 *
 * Build and run (from the repo root):
 *   make build/perf/bench_gmc_clip
 *   build/perf/bench_gmc_clip CLIP [--frames N] [--lag K]
 * Exit status: 0, 1 a difference or a read error, 2 usage, 8 out of memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "gmc.h"
#include "strix.h"
#include "video.h"

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static double median(double *v, int n)
{
    if (n < 1) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* One slot of the lag ring: the frame (first: the rows callback gets it)
 * and its grey image, made band by band as the frame was converted. */
typedef struct slot {
    strix_video_frame f;
    uint8_t *grey;
    size_t cap;
    int rows;      /* frame rows made into grey */
    double grey_ms; /* their CPU time */
} slot;

static int bands(void *ctx, const strix_video_frame *vf, int y0, int y1, strix_error *err)
{
    (void)ctx;
    slot *s = (slot *)vf; /* vf is the first member of its slot */
    double t0 = cpu_ms();
    if (y0 == 0) s->rows = 0, s->grey_ms = 0;
    size_t need = (size_t)(vf->width / 2) * (size_t)(vf->height / 2);
    if (need > s->cap) {
        free(s->grey);
        s->cap = (s->grey = malloc(need)) ? need : 0;
        if (!s->grey) {
            err->status = STRIX_E_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory for a grey frame");
            return -1;
        }
    }
    strix_image img = {.data = vf->rgb, .width = vf->width, .height = vf->height, .stride = vf->stride};
    if (strix_track_grey(&img, &s->rows, y1, s->grey, STRIX_GREY_OPENCV5, err)) return -1;
    s->grey_ms += cpu_ms() - t0;
    return 0;
}

int main(int argc, char **argv)
{
    const char *clip = NULL;
    int frames = 300, lag = 64;
    for (int i = 1; i < argc; i++) {
        int ok = 1;
        if (!strcmp(argv[i], "--frames") && i + 1 < argc) ok = parse_int(argv[++i], 2, 1 << 20, &frames);
        else if (!strcmp(argv[i], "--lag") && i + 1 < argc) ok = parse_int(argv[++i], 0, 4096, &lag);
        else if (argv[i][0] != '-' && !clip) clip = argv[i];
        else ok = 0;
        if (!ok) clip = NULL, i = argc;
    }
    if (!clip) {
        fprintf(stderr, "usage: bench_gmc_clip CLIP [--frames N >= 2] [--lag K >= 0]\n");
        return 2;
    }
    slot *ring = calloc((size_t)lag + 1, sizeof *ring);
    double *t_frame = malloc(sizeof(double) * (size_t)frames), *t_grey = malloc(sizeof(double) * (size_t)frames),
           *t_apply = malloc(sizeof(double) * (size_t)frames), *t_total = malloc(sizeof(double) * (size_t)frames),
           *t_fgrey = malloc(sizeof(double) * (size_t)frames);
    strix_gmc *ga = strix_gmc_create(), *gb = strix_gmc_create();
    if (!ring || !t_frame || !t_grey || !t_apply || !t_total || !t_fgrey || !ga || !gb) {
        fprintf(stderr, "bench_gmc_clip: out of memory\n");
        return 8;
    }
    strix_gmc_time_steps(ga, 1); /* the frame path's grey step: what the grey path moves to the reader */
    strix_video_read_options o;
    strix_video_read_options_init(&o);
    o.audio = 0;
    o.rows = bands;
    strix_video_reader *r;
    strix_error e;
    if (strix_video_open(&r, clip, &o, &e)) {
        fprintf(stderr, "bench_gmc_clip: %s\n", e.message);
        return 1;
    }
    char la[128], lb[128];
    loadavg(la, sizeof la);
    int n = 0, done = 0, differ = 0, rc = 0, w = 0, h = 0;
    for (int i = 0;; i++) {
        int got = i < frames ? strix_video_read(r, &ring[i % (lag + 1)].f, &e) : 0;
        if (got < 0) {
            fprintf(stderr, "bench_gmc_clip: %s\n", e.message);
            rc = 1;
            break;
        }
        if (got) n++;
        int j = got ? i - lag : done; /* the frame GMC takes now: --lag behind, then the rest */
        if (j < 0) continue;
        if (j >= n) break;
        slot *s = &ring[j % (lag + 1)];
        w = s->f.width, h = s->f.height;
        double ha[6], hb[6], t0, t1, t2;
        int ra, rb;
        if (j % 2) { /* alternate which path goes first */
            t0 = cpu_ms(), rb = strix_gmc_apply_grey(gb, s->grey, w, h, hb), t1 = cpu_ms();
            ra = strix_gmc_apply(ga, s->f.rgb, w, h, s->f.stride, 0, ha), t2 = cpu_ms();
            t_apply[j] = t1 - t0, t_frame[j] = t2 - t1;
        } else {
            t0 = cpu_ms(), ra = strix_gmc_apply(ga, s->f.rgb, w, h, s->f.stride, 0, ha), t1 = cpu_ms();
            rb = strix_gmc_apply_grey(gb, s->grey, w, h, hb), t2 = cpu_ms();
            t_frame[j] = t1 - t0, t_apply[j] = t2 - t1;
        }
        double steps[GMC_NSTEPS];
        strix_gmc_step_times(ga, steps);
        t_fgrey[j] = steps[GMC_STEP_GREY] * 1e3;
        t_grey[j] = s->grey_ms;
        t_total[j] = s->grey_ms + t_apply[j];
        if (ra || rb || s->rows != h) {
            fprintf(stderr, "bench_gmc_clip: frame %d: %s\n", j, s->rows != h ? "grey incomplete" : "out of memory");
            rc = ra || rb ? 8 : 1;
            break;
        }
        if (memcmp(ha, hb, sizeof ha) && differ++ < 3)
            fprintf(stderr, "bench_gmc_clip: frame %d: H from the grey %.9g %.9g %.9g %.9g %.9g %.9g, from the frame "
                    "%.9g %.9g %.9g %.9g %.9g %.9g\n", j, hb[0], hb[1], hb[2], hb[3], hb[4], hb[5], ha[0], ha[1], ha[2],
                    ha[3], ha[4], ha[5]);
        done = j + 1;
    }
    loadavg(lb, sizeof lb);
    if (!rc && done > 1) {
        int m = done - 1; /* without frame 0 */
        printf("bench_gmc_clip: %s, %dx%d, %d frames, lag %d frames, one thread; load average before: %s\n", clip, w, h,
               done, lag, la);
        printf("frame path  (strix_gmc_apply on the frame from memory)       cpu ms/frame, median %.3f: grey %.3f\n",
               median(t_frame + 1, m), median(t_fgrey + 1, m));
        printf("grey path   (grey made at decode + strix_gmc_apply_grey)     cpu ms/frame, median %.3f: grey %.3f, "
               "apply %.3f\n", median(t_total + 1, m), median(t_grey + 1, m), median(t_apply + 1, m));
        printf("transforms: %d of %d differ\nload average after: %s\n", differ, done, lb);
        if (differ) rc = 1;
    } else if (!rc) {
        fprintf(stderr, "bench_gmc_clip: %s: fewer than 2 frames\n", clip);
        rc = 1;
    }
    strix_video_close(r);
    for (int i = 0; i <= lag; i++) {
        strix_video_frame_free(&ring[i].f);
        free(ring[i].grey);
    }
    free(ring), free(t_frame), free(t_grey), free(t_apply), free(t_total), free(t_fgrey);
    strix_gmc_free(ga);
    strix_gmc_free(gb);
    return rc;
}
