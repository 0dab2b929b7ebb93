/* bench_track.c — time per frame of the trackers (engine/analytics/track.c)
 * and of BoT-SORT's camera-motion compensation alone (engine/analytics/gmc.c)
 * at a video size, on one core.
 *
 * Build and run (from the repo root, after `make`):
 *   make build/perf/bench_track
 *   build/perf/bench_track                              # 1920x1080, 20 objects, 300 frames x 5 runs
 *   build/perf/bench_track --width 1280 --height 720 --objects 50 --frames 200 --runs 3
 *   build/perf/bench_track --steps                      # and each GMC step's median (strix_gmc_time_steps)
 *   build/perf/bench_track --transforms H.txt           # and the per-frame H (tools/reference/gmc_peer.py --compare)
 *   build/perf/bench_track --only avx512 --steps        # only the configurations whose name holds "avx512"
 *
 * The frames are windows of one textured world (8x8 cells of hashed colour,
 * the texture of the camera clips in tests/golden/track) seen by a camera that pans
 * and jumps by up to 20 px a frame (handheld), given to the tracker as RGB
 * views with the world's stride, so no time goes to making them.  The
 * detections follow objects walking in the world, with jitter, a missed
 * detection now and then and low scores now and then.  Reported per
 * configuration (GMC alone once per instruction-set build this CPU runs:
 * engine/analytics/gmc_steps.h): median, 90th percentile and mean of the per-frame wall time
 * and of this thread's CPU time (what the work costs one core when others
 * share the machine) over all runs (the first frame of each run, which only initialises GMC, is
 * left out), and the load average before and after (the machine is shared).
 *
 * --transforms FILE: the first run of "gmc alone" with the widest build this
 * CPU runs (the one the tracker uses) writes each frame's H to FILE, one line
 * a frame, "H[0] .. H[5]" (%.9g; the first frame's is the identity), for
 * tools/reference/gmc_peer.py to compare with OpenCV's on the same clip.
 * Exit status: 0, 1 a configuration failed, 2 usage, 7 FILE not writable,
 * 8 out of memory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gmc_steps.h"
#include "strix.h"

#define MAX_OBJECTS 1000

static double next_uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

typedef struct clip {
    int w, h, ww, wh, frames, objects;
    uint8_t *world;    /* [wh][ww][3] RGB */
    int *cam;          /* [frames][2] */
    float *obj;        /* [objects][6]: x, y, w, h, vx, vy in the world */
} clip;

static int clip_make(clip *c)
{
    c->ww = c->w + 2 * 40 + 2 * c->frames + 64;
    c->wh = c->h + 2 * 40 + 64;
    c->world = malloc((size_t)c->ww * (size_t)c->wh * 3);
    c->cam = malloc(sizeof *c->cam * 2 * (size_t)c->frames);
    c->obj = malloc(sizeof *c->obj * 6 * (size_t)c->objects);
    if (!c->world || !c->cam || !c->obj) return -1;
    for (int y = 0; y < c->wh; y++)
        for (int x = 0; x < c->ww; x++) {
            uint32_t v = ((uint32_t)(x / 8) * 73856093u) ^ ((uint32_t)(y / 8) * 19349663u);
            v ^= v >> 13;
            v *= 0x5BD1E995u;
            v ^= v >> 15;
            uint8_t *p = c->world + 3 * ((size_t)y * (size_t)c->ww + (size_t)x);
            p[0] = (uint8_t)v;
            p[1] = (uint8_t)(v >> 8);
            p[2] = (uint8_t)(v >> 16);
        }
    uint64_t s = 42;
    for (int f = 0; f < c->frames; f++) {
        c->cam[2 * f] = 40 + 2 * f + (int)(next_uniform(&s) * 41) - 20;
        c->cam[2 * f + 1] = 40 + (int)(next_uniform(&s) * 29) - 14;
    }
    for (int i = 0; i < c->objects; i++) {
        float *o = c->obj + 6 * i;
        o[2] = (float)(c->w / 40 + next_uniform(&s) * c->w / 30);
        o[3] = o[2] * (float)(1.5 + next_uniform(&s));
        o[0] = (float)(40 + next_uniform(&s) * (c->w - o[2]));
        o[1] = (float)(40 + next_uniform(&s) * (c->h - o[3]));
        o[4] = (float)(next_uniform(&s) * 6 - 3 + 2);
        o[5] = (float)(next_uniform(&s) * 2 - 1);
    }
    return 0;
}

/* The detections of frame f in image pixels. */
static int detections(const clip *c, int f, uint64_t *s, strix_detection *d)
{
    int n = 0;
    for (int i = 0; i < c->objects; i++) {
        const float *o = c->obj + 6 * i;
        if (next_uniform(s) < 0.05) continue;
        float x = o[0] + o[4] * (float)f - (float)c->cam[2 * f], y = o[1] + o[5] * (float)f - (float)c->cam[2 * f + 1];
        float j[4];
        for (int k = 0; k < 4; k++) j[k] = (float)(next_uniform(s) * 2 - 1);
        float score = (float)(next_uniform(s) < 0.05 ? 0.15 + 0.3 * next_uniform(s) : 0.55 + 0.4 * next_uniform(s));
        d[n++] = (strix_detection){x + j[0], y + j[1], x + o[2] + j[2], y + o[3] + j[3], score, 0};
    }
    return n;
}

/* This thread's CPU time in seconds: on a shared machine the wall clock also
 * counts the time other processes held the core. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Per-frame wall times (ms) of one configuration over all runs into t, CPU
 * times into u; -1 on error.
 * isa >= 0: time strix_gmc_apply alone, GMC's build isa (GMC_ISA_*), and
 * its steps' CPU times into st [GMC_NSTEPS][frames] when st is not NULL; hf
 * (NULL: none) then receives the first run's H, a line a frame, untimed. */
static long run(const clip *c, int runs, strix_tracker_type type, strix_gmc_method gmc, int isa, double *t,
                double *u, double *st, FILE *hf)
{
    static strix_detection d[MAX_OBJECTS];
    static int ids[MAX_OBJECTS];
    long k = 0;
    for (int r = 0; r < runs; r++) {
        strix_track_options o;
        strix_track_options_init(&o, type);
        o.gmc_method = gmc;
        strix_tracker *tr = NULL;
        int gmc_only = isa >= 0;
        strix_gmc *g = gmc_only ? strix_gmc_create_isa(isa) : NULL;
        strix_error e;
        if (gmc_only ? !g : strix_tracker_create(&tr, &o, &e) != STRIX_OK) return -1;
        if (g && st) strix_gmc_time_steps(g, 1);
        uint64_t s = 7 + (uint64_t)r;
        for (int f = 0; f < c->frames; f++) {
            const uint8_t *view =
                c->world + 3 * ((size_t)c->cam[2 * f + 1] * (size_t)c->ww + (size_t)c->cam[2 * f]);
            strix_image img = {.data = view, .width = c->w, .height = c->h, .stride = 3 * c->ww, .format = STRIX_RGB};
            int n = detections(c, f, &s, d);
            double H[6], t0 = now_s(), u0 = cpu_s();
            int bad = gmc_only ? strix_gmc_apply(g, view, c->w, c->h, 3 * c->ww, 0, H)
                               : strix_tracker_update(tr, &img, d, n, ids, &e) != STRIX_OK;
            double ms = (now_s() - t0) * 1e3, cms = (cpu_s() - u0) * 1e3;
            if (bad) return -1;
            if (hf && gmc_only && r == 0)
                fprintf(hf, "%.9g %.9g %.9g %.9g %.9g %.9g\n", H[0], H[1], H[2], H[3], H[4], H[5]);
            if (f > 0) {
                if (g && st) {
                    double ts[GMC_NSTEPS];
                    strix_gmc_step_times(g, ts);
                    for (int j = 0; j < GMC_NSTEPS; j++) st[(size_t)j * (size_t)runs * (size_t)c->frames + (size_t)k] = ts[j] * 1e3;
                }
                u[k] = cms;
                t[k++] = ms;
            }
        }
        strix_tracker_free(tr);
        strix_gmc_free(g);
    }
    return k;
}

int main(int argc, char **argv)
{
    clip c = {1920, 1080, 0, 0, 300, 20, NULL, NULL, NULL};
    int runs = 5, steps = 0;
    const char *hpath = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        int ok = i + 1 < argc;
        if (!strcmp(argv[i], "--steps")) steps = ok = 1; /* takes no value */
        else if (ok && !strcmp(argv[i], "--width")) ok = parse_int(argv[++i], 64, 8192, &c.w);
        else if (ok && !strcmp(argv[i], "--height")) ok = parse_int(argv[++i], 64, 8192, &c.h);
        else if (ok && !strcmp(argv[i], "--frames")) ok = parse_int(argv[++i], 2, 100000, &c.frames);
        else if (ok && !strcmp(argv[i], "--objects")) ok = parse_int(argv[++i], 0, MAX_OBJECTS, &c.objects);
        else if (ok && !strcmp(argv[i], "--runs")) ok = parse_int(argv[++i], 1, 1000, &runs);
        else if (ok && !strcmp(argv[i], "--transforms")) hpath = argv[++i];
        else if (ok && !strcmp(argv[i], "--only")) only = argv[++i];
        else ok = 0;
        if (!ok) {
            fprintf(stderr, "usage: bench_track [--width W] [--height H] [--frames N] [--objects K] [--runs R] "
                            "[--steps] [--transforms FILE] [--only WORD]\n");
            return 2;
        }
    }
    if (clip_make(&c)) {
        fprintf(stderr, "bench_track: out of memory\n");
        return 8;
    }
    double *t = malloc(sizeof *t * (size_t)runs * (size_t)c.frames), *u = malloc(sizeof *u * (size_t)runs * (size_t)c.frames);
    double *st = steps ? malloc(sizeof *st * GMC_NSTEPS * (size_t)runs * (size_t)c.frames) : NULL;
    if (!t || !u || (steps && !st)) return 8;
    FILE *hf = hpath ? fopen(hpath, "w") : NULL;
    if (hpath && !hf) {
        fprintf(stderr, "bench_track: %s: cannot open for writing: %s\n", hpath, strerror(errno));
        return 7;
    }
    char la[128];
    loadavg(la, sizeof la);
    printf("bench_track: %dx%d, %d objects, %d frames x %d runs, one thread; load average before: %s\n", c.w, c.h,
           c.objects, c.frames, runs, la);
    /* GMC alone: the build the tracker uses (the widest this CPU runs), then the narrower ones */
    static const struct {
        const char *name;
        strix_tracker_type type;
        strix_gmc_method gmc;
        int isa; /* -1: the tracker */
    } conf[] = {{"botsort + gmc sparseOptFlow", STRIX_TRACKER_BOTSORT, STRIX_GMC_SPARSE_OPTFLOW, -1},
                {"gmc alone, avx512 build", STRIX_TRACKER_BOTSORT, STRIX_GMC_SPARSE_OPTFLOW, GMC_ISA_AVX512},
                {"gmc alone, avx2 build", STRIX_TRACKER_BOTSORT, STRIX_GMC_SPARSE_OPTFLOW, GMC_ISA_AVX2},
                {"gmc alone, generic build", STRIX_TRACKER_BOTSORT, STRIX_GMC_SPARSE_OPTFLOW, GMC_ISA_GENERIC},
                {"botsort gmc none", STRIX_TRACKER_BOTSORT, STRIX_GMC_NONE, -1},
                {"bytetrack", STRIX_TRACKER_BYTETRACK, STRIX_GMC_NONE, -1},
                {"tracktrack + sparseOptFlow", STRIX_TRACKER_TRACKTRACK, STRIX_GMC_SPARSE_OPTFLOW, -1},
                {"tracktrack gmc none", STRIX_TRACKER_TRACKTRACK, STRIX_GMC_NONE, -1}};
    int rc = 0, best = strix_gmc_best_isa();
    for (size_t i = 0; i < sizeof conf / sizeof conf[0]; i++) {
        if (only && !strstr(conf[i].name, only)) continue;
        if (conf[i].isa > best) {
            printf("%-28s not run: this CPU lacks its instructions\n", conf[i].name);
            continue;
        }
        long n = run(&c, runs, conf[i].type, conf[i].gmc, conf[i].isa, t, u, st, conf[i].isa == best ? hf : NULL);
        if (n <= 0) {
            printf("%-28s failed\n", conf[i].name);
            rc = 1;
            continue;
        }
        double mean = 0, umean = 0;
        for (long k = 0; k < n; k++) {
            mean += t[k];
            umean += u[k];
        }
        mean /= (double)n;
        umean /= (double)n;
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        qsort(u, (size_t)n, sizeof *u, cmp_double);
        printf("%-28s ms/frame wall: median %.3f  p90 %.3f  mean %.3f;  cpu: median %.3f  p90 %.3f  mean %.3f  "
               "(%ld frames)\n",
               conf[i].name, t[n / 2], t[n * 9 / 10], mean, u[n / 2], u[n * 9 / 10], umean, n);
        if (st && conf[i].isa >= 0) {
            static const char *names[GMC_NSTEPS] = {"grey", "corners", "pyramid", "lucas-kanade", "fit"};
            printf("%-28s cpu ms/frame, median:", "  its steps");
            for (int j = 0; j < GMC_NSTEPS; j++) {
                double *sj = st + (size_t)j * (size_t)runs * (size_t)c.frames;
                qsort(sj, (size_t)n, sizeof *sj, cmp_double);
                printf(" %s %.3f", names[j], sj[n / 2]);
            }
            printf("\n");
        }
    }
    loadavg(la, sizeof la);
    printf("load average after: %s\n", la);
    if (hf && (ferror(hf) | fclose(hf))) {
        fprintf(stderr, "bench_track: %s: cannot write the transforms: %s\n", hpath, strerror(errno));
        rc = 7;
    }
    free(t);
    free(u);
    free(st);
    free(c.world);
    free(c.cam);
    free(c.obj);
    return rc;
}
