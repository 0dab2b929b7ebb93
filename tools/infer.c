/* infer.c — the `infer` command: detect objects in images and videos with a
 * YOLO model, write annotated copies, a JSON report (JSON Lines for videos)
 * and, optionally, YOLO txt labels.
 *
 *   infer --model weights/yolov8.yaml --scale n --weights w.safetensors \
 *         [options] INPUT...
 * INPUT: an image or video file, a directory (its images and videos, sorted
 * by name, not recursive), a glob pattern (quoted, expanded with glob(3)),
 * an image-sequence pattern (frames/%04d.png) or a URL FFmpeg opens.  Files
 * with an image extension are images (stb); everything else goes to FFmpeg
 * (loaders/video.h).
 *
 * Outputs (in --out DIR, default runs/infer, created if missing, never
 * emptied; existing files are refused unless --overwrite, checked before
 * any work starts):
 *   DIR/<name>            the image with boxes and labels (PNG stays PNG,
 *                         JPEG stays JPEG, other formats become <stem>.jpg)
 *   DIR/labels/<stem>.txt with --txt: one line per box,
 *                         "class cx cy w h [score]", normalised to the image
 *                         size, printed with %g as Ultralytics' save_txt
 *                         does (written, empty, for images without boxes)
 *   DIR/detections.json   (or --json FILE):
 *   {
 *     "strix_version": "0.1.0",
 *     "model": "weights/yolov8.yaml",         the --model path
 *     "weights": "w.safetensors",             the --weights path
 *     "imgsz": 640, "conf": 0.25, "iou": 0.7,
 *     "images": [                             in input order, decoded images only
 *       {"image": "data/dog.jpg", "width": 768, "height": 576,
 *        "detections": [                      sorted by decreasing score
 *          {"class_id": 16, "class_name": "dog", "score": 0.87,
 *           "box": [x1, y1, x2, y2]}]}],      source pixels, clipped to the image
 *     "errors": [                             images that could not be used
 *       {"image": "data/bad.jpg", "error": "data/bad.jpg: not an image ..."}]
 *   }
 *   Numbers are the shortest decimals that read back to the same float;
 *   strings are JSON-escaped (bytes that are not UTF-8 become U+FFFD).
 * Every output file is written to a temporary file and renamed into place,
 * so an interrupted or failed run leaves no partial file.
 *
 * Videos (DIR/<stem>.mp4, DIR/<stem>.jsonl, DIR/labels/<stem>_<n>.txt):
 *   H.264 MP4 (--codec, --crf, --preset), same size, frame count and
 *   timestamps, rotation and sample aspect kept, +faststart; audio copied
 *   packet for packet (AAC when MP4 cannot hold the codec; --no-audio drops
 *   it).  JSON Lines, one object per frame, in order:
 *   {"frame": 0, "pts": 0.04, "inferred": true,
 *    "detections": [{"class_id": 0, "class_name": "person", "score": 0.87,
 *                    "box": [x1, y1, x2, y2]}]}
 *   frame: 0-based index; pts: presentation time in seconds from the start
 *   of the input, as in the output video; inferred: false when --vid-stride
 *   skipped the frame and its detections are those of the last detected
 *   frame; boxes in display-orientation pixels.  Labels: <n> = frame + 1
 *   (Ultralytics' numbering).  The video runs through engine/pipeline.h:
 *   a decode thread, detection batched on this thread, an annotate/encode
 *   thread, bounded queues, so memory stays flat however long the video.
 *
 * Exit status (also in --help):
 *   0 ok; 1 internal error; 2 usage error (bad or missing option or value);
 *   3 an input is missing or unreadable; 4 bad model YAML; 5 bad weights;
 *   6 an image or video could not be decoded (not an image, not a video, a
 *   codec FFmpeg cannot decode, a video without frames; the other inputs
 *   are still processed: each bad one is reported on stderr and images are
 *   listed under "errors"); a video with corrupt packets among good ones is
 *   not a failure: the frames that decode are kept and the skipped packets
 *   counted on stderr; 7 output not writable (or full), an output would
 *   replace its input, or an output file exists without --overwrite; 8 out
 *   of memory; 9 device error or device not in this build; 130 interrupted
 *   (SIGINT or SIGTERM: the images finished so far are written, JSON
 *   included; a video in progress is finished at the frames read so far and
 *   kept, playable, under its final name with its JSON Lines; a second
 *   signal stops at once and discards the unfinished outputs).
 * When several inputs fail, the status is that of the first failure.
 *
 * Image frames come from a frame_source (one image per file), processed in
 * batches of --batch frames per strix_model_detect call.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "annotate.h"
#include "exitcodes.h"
#include "image.h"
#include "pipeline.h"
#include "strix.h"
#include "video.h"

/* Beyond the shared codes of exitcodes.h: a run stopped by SIGINT/SIGTERM. */
enum { EXIT_INTERRUPTED = 130 };

/* Set from the signal handler; a flag is all a handler may safely touch.
 * Counts signals (capped at 2): 1 finishes cleanly, 2 stops at once. */
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = g_stop ? 2 : 1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ----------------------------------------------------------------- options */

typedef struct options {
    const char *model, *weights, *names, *device, *out, *json;
    const char *classes, *codec, *preset;
    char scale;
    int nc, max_det, imgsz, batch, threads, vid_stride, crf;
    double conf, iou;
    int txt, save_conf, save, overwrite, quiet, audio, half;
    char **inputs;
    int n_inputs;
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: infer --model YAML --weights FILE [options] INPUT...\n"
            "Detect objects in images and videos; write annotated copies and detections.\n"
            "INPUT: an image or video file, a directory (its images and videos, sorted, not\n"
            "recursive), a quoted glob pattern such as 'photos/*.jpg', an image-sequence\n"
            "pattern such as 'frames/%%04d.png', or a URL FFmpeg opens (rtsp://, http://).\n"
            "\n"
            "  --model YAML      Ultralytics model YAML (required)\n"
            "  --weights FILE    safetensors weights (required)\n"
            "  --scale n|s|m|l|x model scale (default: from the YAML file name)\n"
            "  --nc N            class count override\n"
            "  --names FILE      class names, one per line\n"
            "  --conf X          minimum class score, 0..1 (default 0.25)\n"
            "  --iou X           NMS IoU threshold, 0..1 (default 0.7)\n"
            "  --max-det N       at most N boxes per image (default 300)\n"
            "  --imgsz N         model input size, long side (default 640)\n"
            "  --batch N         images or frames per forward pass (default 1)\n"
            "  --classes LIST    keep only these classes: names or ids, comma-separated\n"
            "                    (e.g. dog,person or 16,0)\n"
            "  --threads N       CPU threads (default 0: all)\n"
            "  --device NAME     compute device: cpu, cuda, cuda:N (default: cuda when a GPU is present, else cpu)\n"
            "  --half            FP16 on a CUDA device (ignored on the CPU, as in Ultralytics)\n"
            "  --out DIR         output directory (default runs/infer; created, not emptied)\n"
            "  --json FILE       JSON report (default OUT/detections.json; for a video,\n"
            "                    JSON Lines, default OUT/NAME.jsonl)\n"
            "  --txt             YOLO labels in OUT/labels/NAME.txt\n"
            "  --save-conf       add the score to each --txt line\n"
            "  --no-save         do not write annotated images or videos\n"
            "  --overwrite       replace existing output files (default: refuse)\n"
            "  --quiet           print errors only\n"
            "  -h, --help        this help\n"
            "  --version         print the version\n"
            "\n"
            "Videos become OUT/NAME.mp4 (H.264; same size, frame count and timestamps;\n"
            "rotation and aspect kept; audio copied as it is, or re-encoded to AAC when MP4\n"
            "cannot hold it; +faststart) and OUT/NAME.jsonl (or --json FILE), one JSON\n"
            "object per frame: {\"frame\": 0, \"pts\": 0.04 (seconds), \"inferred\": true,\n"
            "\"detections\": [...]}; --txt writes OUT/labels/NAME_N.txt (N = frame + 1).\n"
            "  --vid-stride N    detect on every Nth frame; the frames between reuse the\n"
            "                    last detections (\"inferred\": false), so every frame is\n"
            "                    still written (default 1)\n"
            "  --codec NAME      video encoder (default libx264; h264_nvenc falls back to\n"
            "                    libx264 with a notice when no NVIDIA encoder is usable)\n"
            "  --crf N           encoder quality 0..51, lower is better (default: the\n"
            "                    encoder's, 23 for libx264)\n"
            "  --preset NAME     encoder preset (default: the encoder's, medium for libx264)\n"
            "  --no-audio        leave the audio out\n"
            "A video shows a progress bar on a terminal, a line every 5 s otherwise, and a\n"
            "summary with a per-stage time breakdown.  Corrupt packets are skipped and\n"
            "counted; the frames that decode are kept (exit 0).\n"
            "SIGINT/SIGTERM: images finished so far are kept with their JSON; a video is\n"
            "finished at the frames read so far and kept, complete and playable but shorter,\n"
            "under its final name with its JSON Lines (exit 130).  A second signal stops at\n"
            "once and discards the unfinished outputs.\n"
            "\n"
            "Exit status: 0 ok; 1 internal error; 2 usage error; 3 input missing or\n"
            "unreadable; 4 bad model YAML; 5 bad weights; 6 an image or video could not be\n"
            "decoded: not an image, not a video, a codec FFmpeg cannot decode, no frames\n"
            "(the other inputs are still processed); 7 output not writable or full, would\n"
            "replace its input, or already exists; 8 out of memory; 9 device error or\n"
            "unavailable; 130 interrupted.\n");
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "infer: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see infer --help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return usage_error("%s: '%s' is not an integer in %d..%d", opt, s, lo, hi);
    *out = (int)v;
    return 0;
}

static int parse_unit(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0 && v <= 1))
        return usage_error("%s: '%s' is not a number in 0..1", opt, s);
    *out = v;
    return 0;
}

/* Returns -1 when the run should stop with status 0 (help, version). */
static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->device = NULL; /* cuda when a GPU is present, else cpu (main) */
    o->out = "runs/infer";
    o->conf = 0.25;
    o->iou = 0.7;
    o->max_det = 300;
    o->imgsz = 640;
    o->batch = 1;
    o->vid_stride = 1;
    o->crf = -1;
    o->save = 1;
    o->audio = 1;
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    if (!o->inputs) {
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    int only_inputs = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_inputs || a[0] != '-' || !a[1]) {
            o->inputs[o->n_inputs++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_inputs = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "--version")) {
            printf("infer (strix) %s\n", STRIX_VERSION);
            return -1;
        }
        /* flags */
        int *flag = !strcmp(a, "--txt") ? &o->txt : !strcmp(a, "--save-conf") ? &o->save_conf
                  : !strcmp(a, "--overwrite") ? &o->overwrite : !strcmp(a, "--quiet") ? &o->quiet
                  : !strcmp(a, "--half") ? &o->half : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        if (!strcmp(a, "--no-save")) {
            o->save = 0;
            continue;
        }
        if (!strcmp(a, "--no-audio")) {
            o->audio = 0;
            continue;
        }
        /* options with a value: "--opt VALUE" or "--opt=VALUE" */
        char name[32];
        const char *val;
        const char *eq = strchr(a, '=');
        if (eq) {
            size_t n = (size_t)(eq - a);
            if (n >= sizeof name) return usage_error("unknown option '%s'", a);
            memcpy(name, a, n);
            name[n] = 0;
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
            val = i + 1 < argc ? argv[i + 1] : NULL;
        }
        static const char *const with_value[] = {"--model", "--weights", "--scale", "--nc", "--names",
                                                 "--conf", "--iou", "--max-det", "--imgsz", "--batch",
                                                 "--threads", "--device", "--out", "--json", "--classes",
                                                 "--vid-stride", "--codec", "--crf", "--preset"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) known |= !strcmp(name, with_value[k]);
        if (!known) return usage_error("unknown option '%s'", a);
        if (!val) return usage_error("%s needs a value", name);
        if (!eq) i++;
        int rc = 0;
        if (!strcmp(name, "--model")) o->model = val;
        else if (!strcmp(name, "--weights")) o->weights = val;
        else if (!strcmp(name, "--names")) o->names = val;
        else if (!strcmp(name, "--device")) o->device = val;
        else if (!strcmp(name, "--out")) o->out = val;
        else if (!strcmp(name, "--json")) o->json = val;
        else if (!strcmp(name, "--classes")) o->classes = val;
        else if (!strcmp(name, "--codec")) o->codec = val;
        else if (!strcmp(name, "--preset")) o->preset = val;
        else if (!strcmp(name, "--vid-stride")) rc = parse_int(name, val, 1, 100000, &o->vid_stride);
        else if (!strcmp(name, "--crf")) rc = parse_int(name, val, 0, 51, &o->crf);
        else if (!strcmp(name, "--scale")) {
            if (strlen(val) != 1 || !strchr("nsmlx", val[0]))
                return usage_error("--scale: '%s' is not one of n, s, m, l, x", val);
            o->scale = val[0];
        } else if (!strcmp(name, "--nc")) rc = parse_int(name, val, 1, 100000, &o->nc);
        else if (!strcmp(name, "--conf")) rc = parse_unit(name, val, &o->conf);
        else if (!strcmp(name, "--iou")) rc = parse_unit(name, val, &o->iou);
        else if (!strcmp(name, "--max-det")) rc = parse_int(name, val, 1, 100000, &o->max_det);
        else if (!strcmp(name, "--imgsz")) rc = parse_int(name, val, 32, 8192, &o->imgsz);
        else if (!strcmp(name, "--batch")) rc = parse_int(name, val, 1, 1024, &o->batch);
        else if (!strcmp(name, "--threads")) rc = parse_int(name, val, 0, 4096, &o->threads);
        if (rc) return rc;
        if (!*val) return usage_error("%s: empty value", name);
    }
    if (!o->model) return usage_error("--model YAML is required");
    if (!o->weights) return usage_error("--weights FILE is required");
    if (!o->n_inputs) return usage_error("no INPUT given");
    if (o->save_conf && !o->txt) return usage_error("--save-conf needs --txt");
    return 0;
}

/* ------------------------------------------------------------------ inputs */

typedef struct strlist {
    char **v;
    int n, cap;
} strlist;

static int list_add(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return 0;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(s))) return 0;
    l->n++;
    return 1;
}

static void list_free(strlist *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_ext(const char *name, const char *const *ext, size_t n)
{
    const char *dot = strrchr(name, '.');
    if (!dot) return 0;
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(dot, ext[i])) return 1;
    return 0;
}

static int has_image_ext(const char *name)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".png", ".bmp", ".tga", ".gif", ".psd",
                                      ".hdr", ".pic", ".pnm", ".ppm", ".pgm"};
    return has_ext(name, ext, sizeof ext / sizeof ext[0]);
}

/* Videos picked up from directories (an explicit file of any other name is
 * handed to FFmpeg too). */
static int has_video_ext(const char *name)
{
    static const char *const ext[] = {".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg",
                                      ".ts", ".m2ts", ".mts", ".flv", ".wmv", ".3gp", ".ogv", ".y4m"};
    return has_ext(name, ext, sizeof ext / sizeof ext[0]);
}

/* A URL ("rtsp://...", "file:x.mp4") or an image-sequence pattern
 * ("frames/%04d.png"): given to FFmpeg as it is. */
static int is_ffmpeg_source(const char *s)
{
    size_t k = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
    if (k >= 2 && s[k] == ':') return 1;
    for (const char *p = strchr(s, '%'); p; p = strchr(p + 1, '%')) {
        size_t d = strspn(p + 1, "0123456789");
        if (p[1 + d] == 'd') return 1;
    }
    return 0;
}

/* The inputs, split: images go to stb, videos to FFmpeg, each list in order. */
typedef struct inputs {
    strlist images, videos;
} inputs;

/* Append an existing file to the list its extension picks. */
static int add_file(inputs *in, const char *p)
{
    return list_add(has_image_ext(p) ? &in->images : &in->videos, p) ? 0 : EXIT_NOMEM;
}

/* Append the images and videos of a directory, sorted by name; returns an exit code. */
static int add_dir(inputs *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "infer: %s: cannot list the directory: %s (check permissions)\n", dir, strerror(errno));
        return EXIT_INPUT;
    }
    strlist names = {0};
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !(has_image_ext(e->d_name) || has_video_ext(e->d_name))) continue;
        if (!list_add(&names, e->d_name)) {
            closedir(d);
            list_free(&names);
            fprintf(stderr, "infer: out of memory listing %s\n", dir);
            return EXIT_NOMEM;
        }
    }
    closedir(d);
    if (names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    size_t dl = strlen(dir);
    int slash = dl && dir[dl - 1] == '/';
    int found = 0, rc = 0;
    for (int i = 0; i < names.n && !rc; i++) {
        size_t n = dl + strlen(names.v[i]) + 2;
        char *p = malloc(n);
        if (!p) {
            rc = EXIT_NOMEM;
            break;
        }
        snprintf(p, n, "%s%s%s", dir, slash ? "" : "/", names.v[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = add_file(l, p);
            found++;
        }
        free(p);
    }
    list_free(&names);
    if (rc) {
        fprintf(stderr, "infer: out of memory listing %s\n", dir);
        return rc;
    }
    if (!found) {
        fprintf(stderr, "infer: %s: no images or videos in this directory (jpg, png, mp4, avi, ... files "
                "expected)\n", dir);
        return EXIT_INPUT;
    }
    return 0;
}

static int expand_inputs(const options *o, inputs *l)
{
    for (int i = 0; i < o->n_inputs; i++) {
        const char *in = o->inputs[i];
        struct stat st;
        if (stat(in, &st) == 0) {
            int rc = S_ISDIR(st.st_mode) ? add_dir(l, in) : add_file(l, in);
            if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
            if (rc) return rc;
            continue;
        }
        if (is_ffmpeg_source(in)) {
            if (!list_add(&l->videos, in)) {
                fprintf(stderr, "infer: out of memory\n");
                return EXIT_NOMEM;
            }
            continue;
        }
        if (!strpbrk(in, "*?[")) {
            fprintf(stderr, "infer: %s: %s (check the path)\n", in, strerror(errno));
            return EXIT_INPUT;
        }
        glob_t g;
        int gr = glob(in, 0, NULL, &g);
        if (gr == GLOB_NOMATCH) {
            fprintf(stderr, "infer: %s: no files match this pattern (check the path)\n", in);
            return EXIT_INPUT;
        }
        if (gr) {
            fprintf(stderr, "infer: %s: cannot expand the pattern (%s)\n", in,
                    gr == GLOB_NOSPACE ? "out of memory" : "read error");
            return gr == GLOB_NOSPACE ? EXIT_NOMEM : EXIT_INPUT;
        }
        int rc = 0;
        for (size_t k = 0; k < g.gl_pathc && !rc; k++) {
            const char *p = g.gl_pathv[k];
            if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) rc = add_dir(l, p);
            else rc = add_file(l, p);
        }
        globfree(&g);
        if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
        if (rc) return rc;
    }
    return 0;
}

/* ----------------------------------------------------------------- outputs */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int is_png_or_jpeg(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

/* DIR/<name> for PNG/JPEG inputs, DIR/<stem>.jpg for other formats. */
static char *image_out_path(const char *out, const char *input)
{
    const char *b = base_name(input);
    const char *dot = strrchr(b, '.');
    int keep = is_png_or_jpeg(b);
    int stem = keep || !dot ? (int)strlen(b) : (int)(dot - b);
    size_t n = strlen(out) + strlen(b) + 8;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%.*s%s", out, stem, b, keep ? "" : ".jpg");
    return p;
}

static char *label_out_path(const char *out, const char *input)
{
    const char *b = base_name(input);
    const char *dot = strrchr(b, '.');
    int stem = dot ? (int)(dot - b) : (int)strlen(b);
    size_t n = strlen(out) + strlen(b) + 16;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/labels/%.*s.txt", out, stem, b);
    return p;
}

typedef struct plan_entry {
    const char *input;
    char *image_out; /* NULL with --no-save */
    char *label_out; /* NULL without --txt */
} plan_entry;

static int cmp_image_out(const void *a, const void *b)
{
    return strcmp((*(plan_entry *const *)a)->image_out, (*(plan_entry *const *)b)->image_out);
}

static int cmp_label_out(const void *a, const void *b)
{
    return strcmp((*(plan_entry *const *)a)->label_out, (*(plan_entry *const *)b)->label_out);
}

/* Two inputs writing the same output file (a/x.jpg and b/x.jpg; x.jpg and
 * x.png for the labels): refuse, naming both. */
static int check_clashes(plan_entry *plan, int n, int labels)
{
    plan_entry **by = malloc(sizeof *by * (size_t)(n > 0 ? n : 1));
    if (!by) return EXIT_NOMEM;
    for (int i = 0; i < n; i++) by[i] = &plan[i];
    int (*cmp)(const void *, const void *) = labels ? cmp_label_out : cmp_image_out;
    qsort(by, (size_t)n, sizeof *by, cmp);
    int rc = 0;
    for (int i = 1; i < n && !rc; i++) {
        if (cmp(&by[i - 1], &by[i]) != 0) continue;
        fprintf(stderr, "infer: %s and %s would both write %s (rename one, or run them separately)\n",
                by[i - 1]->input, by[i]->input, labels ? by[i]->label_out : by[i]->image_out);
        rc = EXIT_USAGE;
    }
    free(by);
    return rc;
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Work out every output path and refuse clashes and existing files before
 * any work starts; returns an exit code. */
static int plan_outputs(const options *o, const strlist *in, plan_entry *plan, const char *json)
{
    for (int i = 0; i < in->n; i++) {
        plan[i].input = in->v[i];
        if (o->save && !(plan[i].image_out = image_out_path(o->out, in->v[i]))) return EXIT_NOMEM;
        if (o->txt && !(plan[i].label_out = label_out_path(o->out, in->v[i]))) return EXIT_NOMEM;
    }
    int rc = o->save ? check_clashes(plan, in->n, 0) : 0;
    if (!rc && o->txt) rc = check_clashes(plan, in->n, 1);
    if (rc) return rc;
    for (int i = 0; i < in->n; i++) {
        const char *outs[2] = {plan[i].image_out, plan[i].label_out};
        for (int k = 0; k < 2; k++) {
            if (!outs[k]) continue;
            if (same_file(outs[k], plan[i].input)) {
                fprintf(stderr, "infer: %s: the output would replace its own input (choose another --out)\n",
                        outs[k]);
                return EXIT_OUTPUT;
            }
            if (!o->overwrite && exists(outs[k])) {
                fprintf(stderr, "infer: %s: already exists (pass --overwrite to replace it, or choose "
                        "another --out)\n", outs[k]);
                return EXIT_OUTPUT;
            }
        }
    }
    if (!o->overwrite && exists(json)) {
        fprintf(stderr, "infer: %s: already exists (pass --overwrite to replace it, or choose another "
                "--json)\n", json);
        return EXIT_OUTPUT;
    }
    return 0;
}

/* mkdir -p; records in *created the directories it made (so a run that fails
 * before writing anything can remove them again). */
static int make_dirs(const char *path, strlist *created)
{
    char *p = strdup(path);
    if (!p) return EXIT_NOMEM;
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/') continue;
        char c = *s;
        *s = 0;
        struct stat st;
        if (stat(p, &st) != 0) {
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                fprintf(stderr, "infer: %s: cannot create the directory: %s (choose another --out)\n", p,
                        strerror(errno));
                rc = EXIT_OUTPUT;
                break;
            }
            if (!list_add(created, p)) {
                rc = EXIT_NOMEM;
                break;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infer: %s: exists and is not a directory (choose another --out)\n", p);
            rc = EXIT_OUTPUT;
            break;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    return rc;
}

/* Remove the directories make_dirs created, deepest first, if still empty. */
static void remove_created(strlist *created)
{
    for (int i = created->n - 1; i >= 0; i--) rmdir(created->v[i]);
}

/* A fresh temporary file beside path; *tmp receives its malloc'd name. */
static FILE *open_temp(const char *path, char **tmp)
{
    size_t n = strlen(path) + 48;
    char *t = malloc(n);
    if (!t) return NULL;
    const char *b = base_name(path);
    for (int attempt = 0; attempt < 1000; attempt++) {
        snprintf(t, n, "%.*s.%s.%ld.%d.tmp", (int)(b - path), path, b, (long)getpid(), attempt);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f) {
            *tmp = t;
            return f;
        }
        if (fd >= 0) {
            close(fd);
            unlink(t);
        }
        break;
    }
    free(t);
    return NULL;
}

/* Move the finished file tmp to path (refusing to replace an existing file
 * unless overwrite); tmp is gone afterwards either way, and freed. */
static int commit_file(char *tmp, const char *path, int overwrite)
{
    int rc = 0;
    if (overwrite) {
        if (rename(tmp, path) != 0) {
            fprintf(stderr, "infer: %s: cannot move into place: %s\n", path, strerror(errno));
            rc = EXIT_OUTPUT;
        }
    } else if (link(tmp, path) != 0) {
        int e = errno;
        if (e == EEXIST) {
            fprintf(stderr, "infer: %s: already exists (pass --overwrite to replace it)\n", path);
            rc = EXIT_OUTPUT;
        } else if (exists(path) || rename(tmp, path) != 0) {
            fprintf(stderr, "infer: %s: cannot move into place: %s\n", path, strerror(e));
            rc = EXIT_OUTPUT;
        }
    }
    unlink(tmp);
    free(tmp);
    return rc;
}

/* Close tmp and move it to path (refusing to replace an existing file unless
 * overwrite); the temporary file is gone afterwards either way. */
static int commit_temp(FILE *f, char *tmp, const char *path, int overwrite)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "infer: %s: write failed: %s (check free disk space)\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return EXIT_OUTPUT;
    }
    return commit_file(tmp, path, overwrite);
}

static void abandon_temp(FILE *f, char *tmp)
{
    if (f) fclose(f);
    if (tmp) unlink(tmp);
    free(tmp);
}

/* -------------------------------------------------------------------- JSON */

/* A JSON string: escapes, and U+FFFD for bytes that are not UTF-8. */
static void json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            p++;
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            fputc((int)c, f);
            p++;
        } else {
            int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
            if (c >= 0xF5) len = 0;
            int ok = len > 0;
            for (int k = 1; k < len && ok; k++) ok = (p[k] & 0xC0) == 0x80;
            if (ok && len == 3) ok = !(c == 0xE0 && p[1] < 0xA0) && !(c == 0xED && p[1] >= 0xA0);
            if (ok && len == 4) ok = !(c == 0xF0 && p[1] < 0x90) && !(c == 0xF4 && p[1] >= 0x90);
            if (ok) {
                fwrite(p, 1, (size_t)len, f);
                p += len;
            } else {
                fputs("\\ufffd", f);
                p++;
            }
        }
    }
    fputc('"', f);
}

/* The shortest decimal that reads back as the same float (null if not finite). */
static void json_float(FILE *f, float v)
{
    if (!(v == v) || v > 3.4e38f || v < -3.4e38f) {
        fputs("null", f);
        return;
    }
    char buf[32];
    for (int d = 1; d <= 9; d++) {
        snprintf(buf, sizeof buf, "%.*g", d, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
    fputs(buf, f);
}

static void json_double(FILE *f, double v)
{
    char buf[40];
    for (int d = 1; d <= 17; d++) {
        snprintf(buf, sizeof buf, "%.*g", d, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, f);
}

/* ------------------------------------------------------------ frame source */

/* One decoded frame.  index: position in the source; name: where it came
 * from (a path now, "video#frame" later). */
typedef struct frame {
    long index;
    const char *name;
    strix_owned_image img;
} frame;

/* Frames one after another: next() returns 1 with a frame, 0 at the end,
 * -1 when this frame could not be read (err says why; the source has moved
 * on, so the caller may continue). */
typedef struct frame_source {
    int (*next)(struct frame_source *s, frame *f, strix_error *err);
    void *state;
} frame_source;

typedef struct image_list {
    const strlist *paths;
    int pos;
} image_list;

static int image_list_next(frame_source *s, frame *f, strix_error *err)
{
    image_list *l = s->state;
    if (l->pos >= l->paths->n) return 0;
    f->index = l->pos;
    f->name = l->paths->v[l->pos++];
    return strix_image_load(f->name, 0, &f->img, err) == STRIX_OK ? 1 : -1;
}

/* ------------------------------------------------------------------ the run */

typedef struct run {
    const options *o;
    const plan_entry *plan;
    strix_model *model;
    const char *const *names;
    int n_names;
    const unsigned char *mask; /* --classes: keep class c when mask[c]; NULL keeps all */
    strix_detection *kept;     /* [batch, max_det]: the detections --classes keeps */
    FILE *json;
    char *json_tmp;
    int first_image;
    strlist err_names, err_msgs; /* the frames that failed, and why */
    int first_fail;           /* exit code of the first per-image failure */
    long images, detections;
    double t_decode, t_detect, t_annotate, t_write;
} run;

/* YOLO txt labels for a w x h image or frame. */
static int write_labels(const options *o, int w_px, int h_px, const strix_detection *d, int n, const char *path)
{
    char *tmp = NULL;
    FILE *t = open_temp(path, &tmp);
    if (!t) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n", path,
                strerror(errno));
        return EXIT_OUTPUT;
    }
    float w = (float)w_px, h = (float)h_px;
    for (int i = 0; i < n; i++) {
        const strix_detection *b = &d[i];
        /* Ultralytics: xyxy2xywh in float32, then divided by the image size */
        float cx = (b->x1 + b->x2) / 2 / w, cy = (b->y1 + b->y2) / 2 / h;
        float bw = (b->x2 - b->x1) / w, bh = (b->y2 - b->y1) / h;
        fprintf(t, "%d %g %g %g %g", b->class_id, (double)cx, (double)cy, (double)bw, (double)bh);
        if (o->save_conf) fprintf(t, " %g", (double)b->score);
        fputc('\n', t);
    }
    return commit_temp(t, tmp, path, o->overwrite);
}

static const char *name_of(const char *const *names, int n_names, int id)
{
    return id >= 0 && id < n_names ? names[id] : "?";
}

static const char *class_name(const run *r, int id) { return name_of(r->names, r->n_names, id); }

/* The detection objects of a JSON "detections" array: `first` before the
 * first one, `next` before each of the others. */
static void json_dets(FILE *j, const char *const *names, int n_names, const strix_detection *d, int n,
                      const char *first, const char *next)
{
    for (int i = 0; i < n; i++) {
        const strix_detection *b = &d[i];
        fprintf(j, "%s{\"class_id\": %d, \"class_name\": ", i ? next : first, b->class_id);
        json_str(j, name_of(names, n_names, b->class_id));
        fputs(", \"score\": ", j);
        json_float(j, b->score);
        fputs(", \"box\": [", j);
        json_float(j, b->x1);
        fputs(", ", j);
        json_float(j, b->y1);
        fputs(", ", j);
        json_float(j, b->x2);
        fputs(", ", j);
        json_float(j, b->y2);
        fputs("]}", j);
    }
}

static void json_image(run *r, const frame *f, const strix_detections *d)
{
    FILE *j = r->json;
    fputs(r->first_image ? "\n    " : ",\n    ", j);
    r->first_image = 0;
    fputs("{\"image\": ", j);
    json_str(j, f->name);
    fprintf(j, ", \"width\": %d, \"height\": %d, \"detections\": [", f->img.width, f->img.height);
    json_dets(j, r->names, r->n_names, d->items, d->count, "\n      ", ",\n      ");
    fputs(d->count ? "\n    ]}" : "]}", j);
}

/* "3 detections: 2 person, 1 dog" (the first few classes by best score) */
static void describe(const run *r, const strix_detections *d, char *buf, size_t cap)
{
    enum { MAX_CLASSES = 6 };
    size_t n = (size_t)snprintf(buf, cap, "%d detection%s", d->count, d->count == 1 ? "" : "s");
    int listed = 0;
    for (int i = 0; i < d->count && n < cap; i++) {
        int c = d->items[i].class_id, seen = 0, count = 0;
        for (int k = 0; k < i; k++) seen |= d->items[k].class_id == c;
        if (seen) continue;
        if (listed++ == MAX_CLASSES) {
            snprintf(buf + n, cap - n, ", ...");
            break;
        }
        for (int k = i; k < d->count; k++) count += d->items[k].class_id == c;
        n += (size_t)snprintf(buf + n, cap - n, "%s%d %s", i ? ", " : ": ", count, class_name(r, c));
    }
}

/* Returns 0, or EXIT_NOMEM when even the bookkeeping fails. */
static int record_failure(run *r, const char *name, const strix_error *e)
{
    fprintf(stderr, "infer: %s\n", e->message);
    if (!r->first_fail) r->first_fail = strix_exit_code(e->status);
    if (!list_add(&r->err_names, name)) return EXIT_NOMEM;
    if (!list_add(&r->err_msgs, e->message)) {
        free(r->err_names.v[--r->err_names.n]);
        return EXIT_NOMEM;
    }
    return 0;
}

/* Detect, annotate and write one batch; returns 0 or a fatal exit code. */
static int process_batch(run *r, frame *fr, int n, long total, strix_image *im, strix_detections *dets)
{
    const options *o = r->o;
    for (int i = 0; i < n; i++) im[i] = strix_image_view(&fr[i].img);
    strix_detect_options dopt;
    strix_detect_options_init(&dopt);
    dopt.conf = (float)o->conf;
    dopt.iou = (float)o->iou;
    dopt.max_det = o->max_det;
    dopt.imgsz = o->imgsz;
    strix_error e;
    double t0 = now_ms();
    strix_status st = strix_model_detect(r->model, im, n, &dopt, dets, &e);
    double per = (now_ms() - t0) / n;
    r->t_detect += now_ms() - t0;
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
    }
    for (int i = 0; i < n && r->mask; i++) { /* --classes */
        strix_detection *k = r->kept + (size_t)i * o->max_det;
        int m = 0;
        for (int j = 0; j < dets[i].count; j++)
            if (dets[i].items[j].class_id >= 0 && dets[i].items[j].class_id < r->n_names &&
                r->mask[dets[i].items[j].class_id])
                k[m++] = dets[i].items[j];
        dets[i].items = k;
        dets[i].count = m;
    }
    for (int i = 0; i < n; i++) {
        const frame *f = &fr[i];
        const plan_entry *p = &r->plan[f->index];
        r->images++;
        r->detections += dets[i].count;
        if (!o->quiet) {
            char what[512];
            describe(r, &dets[i], what, sizeof what);
            printf("%ld/%ld %s: %dx%d, %s, %.1f ms\n", f->index + 1, total, f->name, f->img.width,
                   f->img.height, what, per);
        }
        if (p->image_out) {
            double t1 = now_ms();
            strix_annotate_style style;
            strix_annotate_style_init(&style);
            strix_annotate(f->img.data, f->img.width, f->img.height, 0, dets[i].items, dets[i].count,
                           r->names, r->n_names, &style);
            double t2 = now_ms();
            st = strix_image_write(p->image_out, f->img.data, f->img.width, f->img.height, 0, 0,
                                   o->overwrite, &e);
            r->t_annotate += t2 - t1;
            r->t_write += now_ms() - t2;
            if (st) {
                fprintf(stderr, "infer: %s\n", e.message);
                return st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
            }
        }
        double t3 = now_ms();
        if (p->label_out) {
            int rc = write_labels(o, f->img.width, f->img.height, dets[i].items, dets[i].count, p->label_out);
            if (rc) return rc;
        }
        json_image(r, f, &dets[i]);
        r->t_write += now_ms() - t3;
    }
    return 0;
}

/* Decode frames in batches and process them until the source ends, a
 * signal asks us to stop, or a fatal error; returns 0 or a fatal exit code. */
static int process_all(run *r, frame_source *src, long total)
{
    int b = r->o->batch;
    frame *fr = calloc((size_t)b, sizeof *fr);
    strix_image *im = calloc((size_t)b, sizeof *im);
    strix_detections *dets = calloc((size_t)b, sizeof *dets);
    r->kept = r->mask ? calloc((size_t)b * (size_t)r->o->max_det, sizeof *r->kept) : NULL;
    if (!fr || !im || !dets || (r->mask && !r->kept)) {
        free(fr);
        free(im);
        free(dets);
        free(r->kept);
        r->kept = NULL;
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    int rc = 0, done = 0;
    while (!done && !rc && !g_stop) {
        int n = 0;
        while (n < b && !g_stop) {
            strix_error e;
            double t0 = now_ms();
            int got = src->next(src, &fr[n], &e);
            r->t_decode += now_ms() - t0;
            if (got == 0) {
                done = 1;
                break;
            }
            if (got < 0) {
                rc = record_failure(r, fr[n].name, &e);
                if (!rc && e.status == STRIX_E_NOMEM) rc = EXIT_NOMEM;
                if (rc) break;
                continue;
            }
            n++;
        }
        if (n && !rc) rc = process_batch(r, fr, n, total, im, dets);
        for (int i = 0; i < n; i++) strix_image_free(&fr[i].img);
    }
    free(fr);
    free(im);
    free(dets);
    free(r->kept);
    r->kept = NULL;
    return rc;
}

static int finish_json(run *r, const char *path)
{
    FILE *j = r->json;
    fputs(r->first_image ? "],\n  \"errors\": [" : "\n  ],\n  \"errors\": [", j);
    for (int i = 0; i < r->err_names.n; i++) {
        fputs(i ? ",\n    {\"image\": " : "\n    {\"image\": ", j);
        json_str(j, r->err_names.v[i]);
        fputs(", \"error\": ", j);
        json_str(j, r->err_msgs.v[i]);
        fputs("}", j);
    }
    fputs(r->err_names.n ? "\n  ]\n}\n" : "]\n}\n", j);
    r->json = NULL;
    int rc = commit_temp(j, r->json_tmp, path, r->o->overwrite);
    r->json_tmp = NULL;
    return rc;
}

static int start_json(run *r, const char *path)
{
    r->json = open_temp(path, &r->json_tmp);
    if (!r->json) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory exists and is "
                "writable)\n", path, strerror(errno));
        return EXIT_OUTPUT;
    }
    const options *o = r->o;
    fprintf(r->json, "{\n  \"strix_version\": ");
    json_str(r->json, STRIX_VERSION);
    fputs(",\n  \"model\": ", r->json);
    json_str(r->json, o->model);
    fputs(",\n  \"weights\": ", r->json);
    json_str(r->json, o->weights);
    fprintf(r->json, ",\n  \"imgsz\": %d,\n  \"conf\": ", o->imgsz);
    json_double(r->json, o->conf);
    fputs(",\n  \"iou\": ", r->json);
    json_double(r->json, o->iou);
    fputs(",\n  \"images\": [", r->json);
    r->first_image = 1;
    return 0;
}

/* The directory part of a path ("." when none); malloc'd. */
static char *dir_of(const char *p)
{
    const char *s = strrchr(p, '/');
    if (!s) return strdup(".");
    if (s == p) return strdup("/");
    char *d = malloc((size_t)(s - p) + 1);
    if (d) {
        memcpy(d, p, (size_t)(s - p));
        d[s - p] = 0;
    }
    return d;
}

/* ------------------------------------------------------------------ videos */

/* A file-name stem for a video input: the base name without extension;
 * for a URL the last path component (query dropped); for an image-sequence
 * pattern the name without its %d conversion, or its directory's name.
 * Characters other than [A-Za-z0-9._+-] become '_'; "video" when nothing
 * is left.  malloc'd. */
static char *video_stem(const char *in)
{
    size_t k = strspn(in, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
    int url = k >= 2 && in[k] == ':';
    size_t len = url ? strcspn(in, "?#") : strlen(in);
    char *out = malloc(len + 8);
    if (!out) return NULL;
    const char *end = in + len;
    while (end > in) {
        while (end > in && (end[-1] == '/' || (url && end[-1] == ':'))) end--;
        const char *start = end;
        while (start > in && start[-1] != '/' && !(url && start[-1] == ':')) start--;
        const char *stop = end;
        for (const char *q = start + 1; q < end; q++)
            if (*q == '.') stop = q;
        size_t n = 0;
        for (const char *q = start; q < stop; q++) {
            if (*q == '%') { /* %d, %04d, %% */
                const char *c = q + 1;
                while (c < stop && *c >= '0' && *c <= '9') c++;
                if (c < stop && (*c == 'd' || *c == '%')) {
                    q = c;
                    continue;
                }
            }
            int ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                     *q == '.' || *q == '_' || *q == '+' || *q == '-';
            out[n++] = ok ? *q : '_';
        }
        while (n && strchr("_-.", out[n - 1])) n--;
        size_t lead = strspn(out, "_-.");
        if (lead < n) {
            memmove(out, out + lead, n - lead);
            out[n - lead] = 0;
            return out;
        }
        end = start;
    }
    strcpy(out, "video");
    return out;
}

typedef struct video_plan {
    const char *input;
    char *video_out;  /* OUT/<stem>.mp4; NULL with --no-save */
    char *jsonl;      /* --json FILE or OUT/<stem>.jsonl */
    char *label_base; /* OUT/labels/<stem>: files <base>_<n>.txt; NULL without --txt */
} video_plan;

static void free_video_plans(video_plan *vp, int n)
{
    for (int i = 0; vp && i < n; i++) {
        free(vp[i].video_out);
        free(vp[i].jsonl);
        free(vp[i].label_base);
    }
    free(vp);
}

/* Every video's output paths, refusing clashes, existing files and outputs
 * that would replace their input before any work starts; an exit code. */
static int plan_videos(const options *o, const strlist *v, video_plan *vp)
{
    for (int i = 0; i < v->n; i++) {
        char *stem = video_stem(v->v[i]);
        if (!stem) return EXIT_NOMEM;
        size_t n = strlen(o->out) + strlen(stem) + 32;
        vp[i].input = v->v[i];
        vp[i].video_out = o->save ? malloc(n) : NULL;
        vp[i].jsonl = o->json ? strdup(o->json) : malloc(n);
        vp[i].label_base = o->txt ? malloc(n) : NULL;
        if ((o->save && !vp[i].video_out) || !vp[i].jsonl || (o->txt && !vp[i].label_base)) {
            free(stem);
            return EXIT_NOMEM;
        }
        if (vp[i].video_out) snprintf(vp[i].video_out, n, "%s/%s.mp4", o->out, stem);
        if (!o->json) snprintf(vp[i].jsonl, n, "%s/%s.jsonl", o->out, stem);
        if (vp[i].label_base) snprintf(vp[i].label_base, n, "%s/labels/%s", o->out, stem);
        free(stem);
        for (int k = 0; k < i; k++)
            if (!strcmp(vp[k].jsonl, vp[i].jsonl)) {
                fprintf(stderr, "infer: %s and %s would both write %s (rename one, or run them separately)\n",
                        vp[k].input, vp[i].input, vp[i].video_out ? vp[i].video_out : vp[i].jsonl);
                return EXIT_USAGE;
            }
        char first_label[4096] = "";
        if (vp[i].label_base) snprintf(first_label, sizeof first_label, "%s_1.txt", vp[i].label_base);
        const char *outs[3] = {vp[i].video_out, vp[i].jsonl, first_label[0] ? first_label : NULL};
        for (int k = 0; k < 3; k++) {
            if (!outs[k]) continue;
            if (same_file(outs[k], vp[i].input)) {
                fprintf(stderr, "infer: %s: the output would replace its own input (choose another --out)\n",
                        outs[k]);
                return EXIT_OUTPUT;
            }
            if (!o->overwrite && exists(outs[k])) {
                fprintf(stderr, "infer: %s: already exists (pass --overwrite to replace it, or choose another "
                        "--out)\n", outs[k]);
                return EXIT_OUTPUT;
            }
        }
    }
    return 0;
}

/* The state of one video's run, shared by the pipeline callbacks: read on
 * the decode thread, write on the annotate/encode thread, the rest here. */
typedef struct vrun {
    const options *o;
    const video_plan *p;
    const char *shown;           /* the input's name in messages */
    strix_model *model;
    const char *const *names;
    int n_names;
    strix_detect_options dopt;
    strix_video_reader *rd;
    strix_video_writer *wr;
    FILE *jl;
    char *label_path;            /* room for <label_base>_<n>.txt */
    long expected;               /* frames, -1 when unknown */
    double t0, last_progress, annotate_ms, side_ms;
    int tty, reported;           /* reported: the failure was already printed */
} vrun;

static int stop_requested(void *ctx)
{
    (void)ctx;
    return g_stop != 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_error(strix_error *e, strix_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    e->status = st;
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

static int video_read(void *ctx, strix_pipe_frame *f, strix_error *err)
{
    vrun *v = ctx;
    if (g_stop) return 0;
    strix_video_frame *vf = f->user;
    if (!vf && !(vf = f->user = calloc(1, sizeof *vf))) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
        return -1;
    }
    int r = strix_video_read(v->rd, vf, err);
    if (r == 1) {
        f->rgb = vf->rgb;
        f->width = vf->width;
        f->height = vf->height;
        f->stride = vf->stride;
    }
    return r;
}

static strix_status video_detect(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err)
{
    vrun *v = ctx;
    return strix_model_detect(v->model, im, n, &v->dopt, out, err);
}

static void video_release(void *ctx, void *user)
{
    (void)ctx;
    strix_video_frame_free(user);
    free(user);
}

/* "1:02:03" or "2:03" */
static void fmt_time(char *buf, size_t n, double sec)
{
    long t = sec > 0 && sec < 1e8 ? (long)(sec + 0.5) : 0;
    if (t >= 3600) snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

/* On a terminal one bar, redrawn at most 5 times a second; otherwise a
 * line every 5 s.  --quiet: nothing. */
static void progress(vrun *v, long done, int final)
{
    if (v->o->quiet || (final && !v->tty)) return;
    double now = now_ms();
    if (!final && now - v->last_progress < (v->tty ? 200 : 5000)) return;
    v->last_progress = now;
    double el = (now - v->t0) / 1e3, fps = el > 0 ? done / el : 0;
    long total = v->expected >= done ? v->expected : -1;
    char eta[32] = "?", tot[32] = "?";
    if (total > 0) snprintf(tot, sizeof tot, "%ld", total);
    if (total > 0 && fps > 0) fmt_time(eta, sizeof eta, (double)(total - done) / fps);
    if (final) snprintf(eta, sizeof eta, "0:00");
    if (v->tty) {
        enum { W = 30 };
        char bar[W + 1];
        int fill = total > 0 ? (int)((double)W * (double)done / (double)total) : 0;
        for (int i = 0; i < W; i++) bar[i] = i < fill ? '#' : '-';
        bar[W] = 0;
        fprintf(stderr, "\r%s [%s] %ld/%s frames  %.1f fps  ETA %s\033[K%s", v->shown, total > 0 ? bar : "",
                done, tot, fps, eta, final ? "\n" : "");
    } else {
        fprintf(stderr, "infer: %s: %ld/%s frames, %.1f fps, ETA %s\n", v->shown, done, tot, fps, eta);
    }
    fflush(stderr);
}

static int video_write(void *ctx, strix_pipe_frame *f, strix_error *err)
{
    vrun *v = ctx;
    const options *o = v->o;
    strix_video_frame *vf = f->user;
    if (g_stop > 1) {
        set_error(err, STRIX_E_INTERNAL, "%s: stopped by a second signal", v->shown);
        return -1;
    }
    double t0 = now_ms();
    if (v->wr) {
        strix_annotate_style style;
        strix_annotate_style_init(&style);
        strix_annotate(f->rgb, f->width, f->height, f->stride, f->dets, f->n_dets, v->names, v->n_names, &style);
    }
    double t1 = now_ms();
    v->annotate_ms += t1 - t0;
    FILE *j = v->jl;
    fprintf(j, "{\"frame\": %ld, \"pts\": ", f->index);
    json_double(j, vf->time);
    fprintf(j, ", \"inferred\": %s, \"detections\": [", f->inferred ? "true" : "false");
    json_dets(j, v->names, v->n_names, f->dets, f->n_dets, "", ", ");
    fputs("]}\n", j);
    if (ferror(j)) {
        set_error(err, STRIX_E_IO, "%s: write failed: %s (check free disk space)", v->p->jsonl, strerror(errno));
        return -1;
    }
    if (v->label_path) {
        snprintf(v->label_path, strlen(v->p->label_base) + 32, "%s_%ld.txt", v->p->label_base, f->index + 1);
        if (write_labels(o, f->width, f->height, f->dets, f->n_dets, v->label_path)) {
            v->reported = 1;
            set_error(err, STRIX_E_IO, "%s: cannot write labels", v->label_path);
            return -1;
        }
    }
    v->side_ms += now_ms() - t1;
    if (v->wr && strix_video_write(v->wr, vf, err)) return -1;
    progress(v, f->index + 1, 0);
    return 0;
}

static void print_notice(void *ctx, const char *line)
{
    const vrun *v = ctx;
    if (!v->o->quiet) fprintf(stderr, "infer: notice: %s\n", line);
}

static long peak_rss_mb(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_maxrss / 1024 : -1; /* Linux: KiB */
}

/* Exit code of a failed pipeline. */
static int pipe_exit_code(strix_pipe_stage stage, strix_status st)
{
    if (st == STRIX_E_NOMEM) return EXIT_NOMEM;
    if (stage == STRIX_PIPE_WRITE) return EXIT_OUTPUT;
    return strix_exit_code(st);
}

/* Detect, annotate and encode one video; returns an exit code. */
static int run_video(const options *o, const video_plan *p, strix_model *model, const char *const *names,
                     int n_names, const unsigned char *mask)
{
    vrun v;
    memset(&v, 0, sizeof v);
    v.o = o;
    v.p = p;
    v.shown = p->input;
    v.model = model;
    v.names = names;
    v.n_names = n_names;
    strix_detect_options_init(&v.dopt);
    v.dopt.conf = (float)o->conf;
    v.dopt.iou = (float)o->iou;
    v.dopt.max_det = o->max_det;
    v.dopt.imgsz = o->imgsz;
    char *video_tmp = NULL, *jl_tmp = NULL;
    int rc = 0;
    strix_error e;

    strix_video_read_options ro;
    strix_video_read_options_init(&ro);
    ro.audio = o->save && o->audio;
    ro.interrupt = stop_requested;
    strix_status st = strix_video_open(&v.rd, p->input, &ro, &e);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
    }
    v.expected = strix_video_reader_info(v.rd)->frames;

    if (p->label_base && !(v.label_path = malloc(strlen(p->label_base) + 32))) {
        rc = EXIT_NOMEM;
        fprintf(stderr, "infer: out of memory\n");
        goto done;
    }
    if (p->video_out) {
        FILE *t = open_temp(p->video_out, &video_tmp);
        if (!t) {
            fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n",
                    p->video_out, strerror(errno));
            rc = EXIT_OUTPUT;
            goto done;
        }
        fclose(t);
        strix_video_write_options wo;
        strix_video_write_options_init(&wo);
        if (o->codec) wo.codec = o->codec;
        wo.crf = o->crf;
        wo.preset = o->preset;
        wo.audio = o->audio;
        wo.name = p->video_out;
        wo.notice = print_notice;
        wo.notice_ctx = &v;
        st = strix_video_writer_open(&v.wr, video_tmp, v.rd, &wo, &e);
        if (st) {
            fprintf(stderr, "infer: %s\n", e.message);
            rc = st == STRIX_E_ARG ? EXIT_USAGE : st == STRIX_E_IO ? EXIT_OUTPUT : strix_exit_code(st);
            goto done;
        }
    }
    if (!(v.jl = open_temp(p->jsonl, &jl_tmp))) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n",
                p->jsonl, strerror(errno));
        rc = EXIT_OUTPUT;
        goto done;
    }

    strix_pipe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = o->batch;
    cfg.vid_stride = o->vid_stride;
    cfg.max_det = o->max_det;
    cfg.class_mask = mask;
    cfg.n_classes = n_names;
    cfg.ctx = &v;
    cfg.read = video_read;
    cfg.detect = video_detect;
    cfg.write = video_write;
    cfg.release = video_release;
    cfg.format = STRIX_RGB;
    v.tty = isatty(STDERR_FILENO);
    v.t0 = v.last_progress = now_ms();
    strix_pipe_stats ps;
    st = strix_pipe_run(&cfg, &ps, &e);
    strix_video_read_stats rs;
    strix_video_reader_stats(v.rd, &rs);
    if (st) {
        if (g_stop > 1) {
            fprintf(stderr, "infer: %s: stopped at once by a second signal: unfinished outputs discarded\n",
                    p->input);
            rc = EXIT_INTERRUPTED;
        } else {
            if (!v.reported) fprintf(stderr, "%sinfer: %s\n", v.tty && !o->quiet ? "\n" : "", e.message);
            rc = pipe_exit_code(ps.failed, st);
        }
        goto done;
    }
    if (!ps.frames) {
        if (g_stop) {
            fprintf(stderr, "infer: %s: interrupted before the first frame: nothing written\n", p->input);
            rc = EXIT_INTERRUPTED;
        } else {
            fprintf(stderr, "infer: %s: no frames could be decoded (%s)\n", p->input,
                    rs.problem[0] ? rs.problem : "the video is empty");
            rc = EXIT_IMAGE;
        }
        goto done;
    }
    progress(&v, ps.frames, 1);
    if (v.wr) {
        strix_video_frame tail;
        memset(&tail, 0, sizeof tail);
        strix_video_read_tail(v.rd, &tail);
        st = strix_video_write(v.wr, &tail, &e);
        strix_video_frame_free(&tail);
        if (!st) st = strix_video_writer_finish(v.wr, &e);
        if (st) {
            fprintf(stderr, "infer: %s\n", e.message);
            rc = st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
            goto done;
        }
        rc = commit_file(video_tmp, p->video_out, o->overwrite);
        video_tmp = NULL;
        if (rc) goto done;
    }
    rc = commit_temp(v.jl, jl_tmp, p->jsonl, o->overwrite);
    v.jl = NULL;
    jl_tmp = NULL;
    if (rc) goto done;

    double wall = (now_ms() - v.t0) / 1e3, enc = v.wr ? strix_video_writer_ms(v.wr) : 0;
    if (rs.bad_packets)
        fprintf(stderr, "infer: %s: skipped %ld corrupt or undecodable packet%s (first: %s); the %ld frames "
                "that decoded are in the output\n", p->input, rs.bad_packets, rs.bad_packets == 1 ? "" : "s",
                rs.problem, ps.frames);
    else if (rs.problem[0])
        fprintf(stderr, "infer: %s: %s; the %ld frames before it are in the output\n", p->input, rs.problem,
                ps.frames);
    /* frames the demuxer dropped never reach the decoder: compare with the header */
    const strix_video_info *info = strix_video_reader_info(v.rd);
    long missing = info->frames - ps.frames;
    if (!g_stop && info->frames > 0 &&
        missing > (info->frames_exact ? 0 : info->frames / 50 > 2 ? info->frames / 50 : 2))
        fprintf(stderr, "infer: %s: %ld frames decoded where the %s %ld (truncated or damaged?)\n", p->input,
                ps.frames, info->frames_exact ? "header announces" : "duration suggests about", info->frames);
    FILE *s = g_stop ? stderr : stdout;
    if (!o->quiet || g_stop)
        fprintf(s, "infer: %s: %ld frames (%ld detected), %ld detections in %.2f s, %.1f fps; decode %.2f s, "
                "preprocess %.2f s, inference %.2f s, postprocess %.2f s, annotate %.2f s, encode %.2f s "
                "(stages overlap); peak memory %ld MB; %s%s%s%s\n",
                p->input, ps.frames, ps.inferred, ps.detections, wall, wall > 0 ? (double)ps.frames / wall : 0,
                rs.decode_ms / 1e3, rs.convert_ms / 1e3, ps.detect_ms / 1e3, (ps.post_ms + v.side_ms) / 1e3,
                v.annotate_ms / 1e3, enc / 1e3, peak_rss_mb(), g_stop ? "interrupted: kept the frames read "
                "so far in " : "wrote ", p->video_out ? p->video_out : "", p->video_out ? " and " : "", p->jsonl);
    if (g_stop) rc = EXIT_INTERRUPTED;

done:
    strix_video_writer_free(v.wr);
    strix_video_close(v.rd);
    if (video_tmp) {
        unlink(video_tmp);
        free(video_tmp);
    }
    if (v.jl || jl_tmp) abandon_temp(v.jl, jl_tmp);
    free(v.label_path);
    return rc;
}

/* --classes "dog,person" or "16,0": a mask over the model's classes; an exit code. */
static int parse_classes(const char *list, const char *const *names, int nc, unsigned char **mask)
{
    *mask = calloc((size_t)(nc > 0 ? nc : 1), 1);
    char *copy = strdup(list);
    if (!*mask || !copy) {
        free(copy);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    int rc = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        for (size_t n = strlen(t); n && t[n - 1] == ' ';) t[--n] = 0;
        if (!*t) continue;
        int id = -1;
        if (strspn(t, "0123456789") == strlen(t)) {
            id = strlen(t) < 9 ? atoi(t) : nc;
            if (id >= nc)
                rc = usage_error("--classes: %s is not a class id of this model (0..%d)", t, nc - 1);
        } else {
            for (int i = 0; i < nc && id < 0; i++)
                if (!strcasecmp(t, names[i])) id = i;
            if (id < 0)
                rc = usage_error("--classes: '%s' is not a class of this model (its classes: %s, %s, ...)", t,
                                 nc > 0 ? names[0] : "?", nc > 1 ? names[1] : "?");
        }
        if (!rc) (*mask)[id] = 1;
    }
    free(copy);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        free(o.inputs);
        return rc < 0 ? 0 : rc;
    }
    double t_start = now_ms();

    inputs in;
    memset(&in, 0, sizeof in);
    strlist created = {0};
    plan_entry *plan = NULL;
    video_plan *vplan = NULL;
    char *json_path = NULL, *labels_dir = NULL;
    strix_model *model = NULL;
    const char **names = NULL;
    unsigned char *mask = NULL;
    run r;
    memset(&r, 0, sizeof r);

    rc = expand_inputs(&o, &in);
    if (rc) goto out;
    int n_img = in.images.n, n_vid = in.videos.n;
#ifdef _OPENMP
    /* A video runs decode and encode threads beside the OpenMP team, and
     * libgomp's default spin-waiting at barriers then burns the cores those
     * threads (or a neighbour's process) need: measured on 2 cores with one
     * busy neighbour, 2 fps spinning against 23 fps passive.  libgomp reads
     * the policy once, when it loads, so only a fresh process image can
     * change it: re-run ourselves once with OMP_WAIT_POLICY=passive unless
     * the user chose a policy.  If that fails, carry on as we are. */
    if (n_vid && !getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "passive", 0) == 0)
        execv("/proc/self/exe", argv); /* returns only when it failed */
#endif
    if (o.json && n_vid && (n_vid > 1 || n_img)) {
        rc = usage_error("--json FILE names one file: give a single video, or only images");
        goto out;
    }

    if (o.json) {
        json_path = strdup(o.json);
    } else {
        size_t n = strlen(o.out) + 32;
        if ((json_path = malloc(n))) snprintf(json_path, n, "%s/detections.json", o.out);
    }
    plan = calloc((size_t)n_img + 1, sizeof *plan);
    vplan = calloc((size_t)n_vid + 1, sizeof *vplan);
    if (!json_path || !plan || !vplan) {
        rc = EXIT_NOMEM;
        fprintf(stderr, "infer: out of memory\n");
        goto out;
    }
    if (n_img) rc = plan_outputs(&o, &in.images, plan, json_path);
    if (!rc && n_vid) rc = plan_videos(&o, &in.videos, vplan);
    if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
    if (rc) goto out;
    if (o.json) {
        char *d = dir_of(o.json);
        struct stat st;
        int ok = d && stat(d, &st) == 0 && S_ISDIR(st.st_mode);
        if (!ok) fprintf(stderr, "infer: %s: the directory %s does not exist (create it first)\n", o.json, d ? d : "?");
        free(d);
        if (!ok) {
            rc = EXIT_OUTPUT;
            goto out;
        }
    }

    /* output directories before the model: a bad --out fails fast */
    if (o.save || o.txt || !o.json) rc = make_dirs(o.out, &created);
    if (!rc && o.txt) {
        size_t n = strlen(o.out) + 8;
        if (!(labels_dir = malloc(n))) rc = EXIT_NOMEM;
        else {
            snprintf(labels_dir, n, "%s/labels", o.out);
            rc = make_dirs(labels_dir, &created);
        }
    }
    if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
    if (rc) goto out;

    /* from here on a signal finishes the current batch (images) or the
     * frames in flight (video) and stops cleanly */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* images: a second signal stops at once; a video counts it and discards */
    sa.sa_flags = n_vid ? SA_RESTART : SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a file-size limit (ulimit -f) then fails the write (EFBIG, exit 7)
     * instead of killing the process with the temporary file left */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigaction(SIGXFSZ, &sa, NULL);
    if (n_vid) strix_video_log_level(0);

    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.yaml_path = o.model;
    mo.weights_path = o.weights;
    mo.scale = o.scale;
    mo.nc = o.nc;
    mo.threads = o.threads;
    mo.device = o.device;
    if (!mo.device) {
        mo.device = strix_device_count() > 0 ? "cuda" : "cpu";
        if (!o.quiet && strix_device_count() == 0)
            fprintf(stderr, "infer: no CUDA device found: running on the cpu (--device cpu silences this)\n");
    }
    mo.half = o.half;
    strix_error e;
    strix_status st = strix_model_load(&model, &mo, &e);
    if (!st && o.names) st = strix_model_load_names(model, o.names, &e);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        rc = strix_exit_code(st);
        goto out;
    }
    int nc = strix_model_class_count(model);
    names = malloc(sizeof *names * (size_t)(nc > 0 ? nc : 1));
    if (!names) {
        rc = EXIT_NOMEM;
        fprintf(stderr, "infer: out of memory\n");
        goto out;
    }
    for (int i = 0; i < nc; i++) names[i] = strix_model_class_name(model, i);
    if (o.classes && (rc = parse_classes(o.classes, names, nc, &mask))) goto out;

    r.o = &o;
    r.plan = plan;
    r.model = model;
    r.names = names;
    r.n_names = nc;
    r.mask = mask;
    if (g_stop) { /* interrupted while loading: nothing written yet */
        fprintf(stderr, "infer: interrupted before the first %s\n", n_img ? "image" : "frame");
        rc = EXIT_INTERRUPTED;
        goto out;
    }
    if (n_img) {
        rc = start_json(&r, json_path);
        if (rc) goto out;

        image_list il = {&in.images, 0};
        frame_source src = {image_list_next, &il};
        rc = process_all(&r, &src, n_img);
        if (!rc) rc = finish_json(&r, json_path);

        if (!o.quiet || rc || r.first_fail || g_stop) {
            FILE *s = rc || r.first_fail || g_stop ? stderr : stdout;
            fprintf(s, "infer: %ld image%s, %ld detection%s in %.2f s (decode %.0f ms, detect %.0f ms, "
                    "annotate %.0f ms, write %.0f ms)",
                    r.images, r.images == 1 ? "" : "s", r.detections, r.detections == 1 ? "" : "s",
                    (now_ms() - t_start) / 1e3, r.t_decode, r.t_detect, r.t_annotate, r.t_write);
            int failed = r.err_names.n;
            if (failed) fprintf(s, "; %d image%s failed", failed, failed == 1 ? "" : "s");
            if (g_stop) fprintf(s, "; interrupted after %ld of %d", r.images + failed, n_img);
            if (!rc) fprintf(s, "; results in %s", o.save || o.txt ? o.out : json_path);
            fputc('\n', s);
        }
        if (!rc && g_stop) rc = EXIT_INTERRUPTED;
        if (!rc) rc = r.first_fail;
        if (rc && rc != EXIT_IMAGE) goto out; /* fatal, or interrupted: the videos wait */
    }
    for (int i = 0; i < n_vid && !g_stop; i++) {
        int vrc = run_video(&o, &vplan[i], model, names, nc, mask);
        if (!rc) rc = vrc;
        if (vrc == EXIT_INTERRUPTED) rc = vrc;
        if (vrc == EXIT_INTERRUPTED || vrc == EXIT_NOMEM || vrc == EXIT_DEVICE || vrc == EXIT_INTERNAL) break;
    }

out:
    if (r.json) abandon_temp(r.json, r.json_tmp);
    if (rc) remove_created(&created); /* only the empty ones go */
    if (model) strix_model_free(model);
    free(names);
    free(mask);
    if (plan)
        for (int i = 0; i < in.images.n; i++) {
            free(plan[i].image_out);
            free(plan[i].label_out);
        }
    free(plan);
    free_video_plans(vplan, in.videos.n);
    free(json_path);
    free(labels_dir);
    list_free(&r.err_names);
    list_free(&r.err_msgs);
    list_free(&in.images);
    list_free(&in.videos);
    list_free(&created);
    free(o.inputs);
    return rc;
}
