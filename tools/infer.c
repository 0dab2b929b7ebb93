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
 * Every output file is written to a temporary file and renamed into place
 * (loaders/outfile.h), so an interrupted or failed run leaves no partial
 * file; the temporary files a killed run left in the output directories are
 * removed at the start of the next run.  No output may write over a file
 * the run reads, or over another output (tools/outguard.h).
 *
 * Videos (DIR/<stem>.mp4, DIR/<stem>.jsonl, DIR/labels/<stem>_<n>.txt):
 *   H.264 MP4 (--codec, --crf, --preset), same size, frame count and
 *   timestamps, rotation and sample aspect kept, +faststart; audio copied
 *   packet for packet (AAC when MP4 cannot hold the codec; --no-audio drops
 *   it).  JSON Lines: a header line (the input's frame count, damage and
 *   degenerate-box counts, rewritten in place at the end: see jsonl_header),
 *   then one object per frame, in order:
 *   {"frame": 0, "pts": 0.04, "inferred": true,
 *    "detections": [{"class_id": 0, "class_name": "person", "score": 0.87,
 *                    "box": [x1, y1, x2, y2]}]}
 *   frame: 0-based index; pts: presentation time in seconds from the start
 *   of the input, as in the output video; inferred: false when --vid-stride
 *   skipped the frame and its detections are those of the last detected
 *   frame; boxes in display-orientation pixels.  Labels: <n> = frame + 1
 *   (Ultralytics' numbering).  The video runs through engine/pipeline.h:
 *   a decode thread, detection batched on this thread, an annotate/encode
 *   thread, bounded queues, so memory stays flat however long the video
 *   (what --highlights needs of every frame waits in a file: infer/framelog.h).
 *
 * Tracking and highlights (videos; README "Tracking, counting and highlight
 * reels"): --track runs ByteTrack (engine/track.c) on the writer thread, in
 * frame order, adding "track_id" to the JSON Lines and writing
 * OUT/<stem>.mot.txt and OUT/<stem>.tracks.json (engine/count.c totals);
 * --highlights logs each frame's qualifying detections, then after the
 * video cuts OUT/<stem>.highlights.mp4 (loaders/video_cut.c, segments from
 * engine/highlight.c, frames redrawn from the JSON Lines just written) with
 * its .json and .csv segment lists; --detections FILE replays JSON Lines
 * (loaders/jsonl.c) in place of the model.
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
 *   write over a file the run reads or over another output, or an output
 *   file exists without --overwrite; 8 out
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
#include <math.h>
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
#include "count.h"
#include "cudaenv.h"
#include "exitcodes.h"
#include "infer/framelog.h"
#include "highlight.h"
#include "image.h"
#include "jsonl.h"
#include "outfile.h"
#include "outguard.h"
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
    const char *detections, *highlights; /* --detections FILE, --highlights LIST */
    char scale;
    int nc, max_det, imgsz, batch, threads, vid_stride, crf;
    double conf, iou;
    int txt, save_conf, save, overwrite, quiet, audio, half;
    int conf_set;                        /* --conf given (tracking lowers the default) */
    int track, track_buffer, trail, hl_min_frames, has_line;
    double track_thresh, match_thresh;   /* ByteTrack */
    double hl_score, hl_gap, hl_pad, hl_min_len, hl_max_len;
    float line[4];                       /* --line x1,y1,x2,y2 */
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
            "  --nc N            class count override (1..%d)\n"
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
            "\n"
            "Tracking, counting and highlight reels (videos):\n"
            "  --track           follow objects across frames (ByteTrack): a \"track_id\" per\n"
            "                    detection in the JSON Lines, \"#ID\" labels coloured by identity,\n"
            "                    OUT/NAME.mot.txt (MOTChallenge: frame,id,left,top,width,height,\n"
            "                    score,-1,-1,-1; frames from 1) and OUT/NAME.tracks.json (each\n"
            "                    track; unique tracks per class).  Lowers the --conf default to\n"
            "                    0.1: ByteTrack uses the low-score boxes to keep tracks alive\n"
            "  --track-thresh X  score splitting high and low detections (default 0.5; a new\n"
            "                    track needs X + 0.1)\n"
            "  --match-thresh X  first association: highest 1 - IoU x score (default 0.8)\n"
            "  --track-buffer N  frames (at 30 fps; scaled by the frame rate) a lost track is\n"
            "                    kept (default 30)\n"
            "  --trail N         draw each track's last N centres as a fading trail\n"
            "  --line X1,Y1,X2,Y2  count tracks crossing this segment (pixels): \"in\" from the\n"
            "                    left of the direction X1,Y1 -> X2,Y2 to its right (a line drawn\n"
            "                    left to right: moving down is in), \"out\" the other way\n"
            "  --detections FILE replay the JSON Lines of an earlier run instead of running the\n"
            "                    model (no --model/--weights needed): re-track, re-render or\n"
            "                    re-cut one video without detecting again\n"
            "  --highlights LIST also write OUT/NAME.highlights.mp4: only the moments where these\n"
            "                    classes (names or ids) appear, cut frame-accurately with the\n"
            "                    audio in sync, and the segment list as OUT/NAME.highlights.json\n"
            "                    and .csv (start/end seconds, what appeared)\n"
            "  --hl-score X      minimum score of a detection that counts (default 0.25)\n"
            "  --hl-min-frames N with --track: only tracks seen in at least N frames (default 1)\n"
            "  --hl-gap S        merge segments less than S seconds apart (default 1)\n"
            "  --hl-pad S        widen each segment by S seconds both sides (default 0.5)\n"
            "  --hl-min-len S    drop segments shorter than S seconds (default 0)\n"
            "  --hl-max-len S    at most S seconds in all: the most active segments (default: no\n"
            "                    limit)\n"
            "A video shows a progress bar on a terminal, a line every 5 s otherwise, and a\n"
            "summary with a per-stage time breakdown.  Corrupt packets are skipped and\n"
            "counted, as are frames the decoder concealed damage in; the frames that decode\n"
            "are kept (exit 0).\n"
            "SIGINT/SIGTERM: images finished so far are kept with their JSON; a video is\n"
            "finished at the frames read so far and kept, complete and playable but shorter,\n"
            "under its final name with its JSON Lines (exit 130).  A second signal stops at\n"
            "once and discards the unfinished outputs.\n"
            STRIX_CUDA_ENV_HELP
            "\n"
            "Exit status: 0 ok; 1 internal error; 2 usage error; 3 input missing or\n"
            "unreadable; 4 bad model YAML; 5 bad weights; 6 an image or video could not be\n"
            "decoded: not an image, not a video, a codec FFmpeg cannot decode, no frames\n"
            "(the other inputs are still processed); 7 output not writable or full, would\n"
            "write over a file the run reads or another output, or already exists; 8 out\n"
            "of memory; 9 device error or unavailable; 130 interrupted.\n", STRIX_MAX_CLASSES);
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

/* A number in lo..hi ("what" names the range in the message). */
static int parse_number(const char *opt, const char *s, double lo, double hi, const char *what, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return usage_error("%s: '%s' is not %s", opt, s, what);
    *out = v;
    return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
    return parse_number(opt, s, 0, 1e7, "a number of seconds (0 or more)", out);
}

/* --line "x1,y1,x2,y2" */
static int parse_line(const char *s, float *l)
{
    const char *p = s;
    for (int k = 0; k < 4; k++) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !(v > -1e7 && v < 1e7) || (k < 3 ? *end != ',' : *end != 0))
            return usage_error("--line: '%s' is not four numbers x1,y1,x2,y2 (pixels)", s);
        l[k] = (float)v;
        p = end + 1;
    }
    if (l[0] == l[2] && l[1] == l[3]) return usage_error("--line: '%s' has two equal points", s);
    return 0;
}

static int parse_unit(const char *opt, const char *s, double *out)
{
    return parse_number(opt, s, 0, 1, "a number in 0..1", out);
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
    o->track_thresh = 0.5;
    o->match_thresh = 0.8;
    o->track_buffer = 30;
    o->hl_score = 0.25;
    o->hl_gap = 1;
    o->hl_pad = 0.5;
    o->hl_min_frames = 1;
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
                  : !strcmp(a, "--half") ? &o->half : !strcmp(a, "--track") ? &o->track : NULL;
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
                                                 "--vid-stride", "--codec", "--crf", "--preset",
                                                 "--track-thresh", "--match-thresh", "--track-buffer", "--trail",
                                                 "--line", "--detections", "--highlights", "--hl-score",
                                                 "--hl-min-frames", "--hl-gap", "--hl-pad", "--hl-min-len",
                                                 "--hl-max-len"};
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
        } else if (!strcmp(name, "--nc")) rc = parse_int(name, val, 1, STRIX_MAX_CLASSES, &o->nc);
        else if (!strcmp(name, "--conf")) {
            rc = parse_unit(name, val, &o->conf);
            o->conf_set = 1;
        } else if (!strcmp(name, "--detections")) o->detections = val;
        else if (!strcmp(name, "--highlights")) o->highlights = val;
        else if (!strcmp(name, "--track-thresh")) rc = parse_unit(name, val, &o->track_thresh);
        else if (!strcmp(name, "--match-thresh")) rc = parse_unit(name, val, &o->match_thresh);
        else if (!strcmp(name, "--track-buffer")) rc = parse_int(name, val, 0, 1000000, &o->track_buffer);
        else if (!strcmp(name, "--trail")) rc = parse_int(name, val, 0, 10000, &o->trail);
        else if (!strcmp(name, "--hl-min-frames")) rc = parse_int(name, val, 1, 100000000, &o->hl_min_frames);
        else if (!strcmp(name, "--hl-score")) rc = parse_unit(name, val, &o->hl_score);
        else if (!strcmp(name, "--hl-gap")) rc = parse_seconds(name, val, &o->hl_gap);
        else if (!strcmp(name, "--hl-pad")) rc = parse_seconds(name, val, &o->hl_pad);
        else if (!strcmp(name, "--hl-min-len")) rc = parse_seconds(name, val, &o->hl_min_len);
        else if (!strcmp(name, "--hl-max-len")) rc = parse_seconds(name, val, &o->hl_max_len);
        else if (!strcmp(name, "--line")) {
            rc = parse_line(val, o->line);
            o->has_line = 1;
        }
        else if (!strcmp(name, "--iou")) rc = parse_unit(name, val, &o->iou);
        else if (!strcmp(name, "--max-det")) rc = parse_int(name, val, 1, 100000, &o->max_det);
        else if (!strcmp(name, "--imgsz")) rc = parse_int(name, val, 32, 8192, &o->imgsz);
        else if (!strcmp(name, "--batch")) rc = parse_int(name, val, 1, 1024, &o->batch);
        else if (!strcmp(name, "--threads")) rc = parse_int(name, val, 0, 4096, &o->threads);
        if (rc) return rc;
        if (!*val) return usage_error("%s: empty value", name);
    }
    if (!o->detections && !o->model) return usage_error("--model YAML is required (or --detections FILE)");
    if (!o->detections && !o->weights) return usage_error("--weights FILE is required (or --detections FILE)");
    if (!o->n_inputs) return usage_error("no INPUT given");
    if (o->save_conf && !o->txt) return usage_error("--save-conf needs --txt");
    if (o->has_line && !o->track) return usage_error("--line counts tracks: add --track");
    if (o->trail && !o->track) return usage_error("--trail draws tracks: add --track");
    if (o->hl_min_frames > 1 && !o->track) return usage_error("--hl-min-frames counts track lengths: add --track");
    for (int i = 1; i < argc && !o->highlights; i++)
        if (!strncmp(argv[i], "--hl-", 5)) return usage_error("%s needs --highlights LIST", argv[i]);
    if (o->track && !o->conf_set) o->conf = 0.1; /* as Ultralytics' model.track: low boxes feed ByteTrack */
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

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Refuse outputs (NULLs skipped) that are directories, or that exist
 * without --overwrite; an exit code. */
static int check_existing(const options *o, const char *const *outs, int n)
{
    for (int k = 0; k < n; k++) {
        struct stat st;
        if (outs[k] && stat(outs[k], &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infer: %s: is a directory, where this output file would go (choose another --out "
                    "or --json)\n", outs[k]);
            return EXIT_OUTPUT;
        }
        if (outs[k] && !o->overwrite && exists(outs[k])) {
            fprintf(stderr, "infer: %s: already exists (pass --overwrite to replace it, or choose another --out)\n",
                    outs[k]);
            return EXIT_OUTPUT;
        }
    }
    return 0;
}

/* Work out every image's output paths and refuse two inputs writing one
 * file; returns an exit code. */
static int plan_outputs(const options *o, const strlist *in, plan_entry *plan)
{
    for (int i = 0; i < in->n; i++) {
        plan[i].input = in->v[i];
        if (o->save && !(plan[i].image_out = image_out_path(o->out, in->v[i]))) return EXIT_NOMEM;
        if (o->txt && !(plan[i].label_out = label_out_path(o->out, in->v[i]))) return EXIT_NOMEM;
    }
    int rc = o->save ? check_clashes(plan, in->n, 0) : 0;
    if (!rc && o->txt) rc = check_clashes(plan, in->n, 1);
    return rc;
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

/* Remove the temporary files that killed runs left in the output
 * directories (NULLs skipped); one line on stderr when there were any. */
static void sweep_stale(const options *o, const char *const *dirs, int n)
{
    int removed = 0, n_dirs = 0;
    const char *where = NULL;
    for (int i = 0; i < n; i++) {
        int k = dirs[i] && (!i || !dirs[i - 1] || strcmp(dirs[i], dirs[i - 1])) ? strix_temp_sweep(dirs[i]) : 0;
        if (k && !n_dirs++) where = dirs[i];
        removed += k;
    }
    if (removed && !o->quiet)
        fprintf(stderr, "infer: removed %d stale temporary file%s of killed runs from %s%s\n", removed,
                removed == 1 ? "" : "s", where, n_dirs > 1 ? " and other output directories" : "");
}

/* Remove the directories make_dirs created, deepest first, if still empty. */
static void remove_created(strlist *created)
{
    for (int i = created->n - 1; i >= 0; i--) rmdir(created->v[i]);
}

/* A fresh temporary file beside path (loaders/outfile.h); *tmp receives its
 * malloc'd name. */
static FILE *open_temp(const char *path, char **tmp) { return strix_temp_open(path, tmp); }

/* Move the finished file tmp to path (refusing to replace an existing file
 * unless overwrite); tmp is gone afterwards either way, and freed. */
static int commit_file(char *tmp, const char *path, int overwrite)
{
    int rc = 0;
    if (strix_temp_publish(tmp, path, overwrite) != 0) {
        if (errno == EEXIST) fprintf(stderr, "infer: %s: already exists (pass --overwrite to replace it)\n", path);
        else fprintf(stderr, "infer: %s: cannot move into place: %s\n", path, strerror(errno));
        rc = EXIT_OUTPUT;
    }
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
static void json_dets(FILE *j, const char *const *names, int n_names, const strix_detection *d, const int *ids,
                      int n, const char *first, const char *next)
{
    for (int i = 0; i < n; i++) {
        const strix_detection *b = &d[i];
        fprintf(j, "%s{\"class_id\": %d, \"class_name\": ", i ? next : first, b->class_id);
        strix_json_str(j, name_of(names, n_names, b->class_id));
        fputs(", \"score\": ", j);
        strix_json_float(j, b->score);
        fputs(", \"box\": [", j);
        strix_json_float(j, b->x1);
        fputs(", ", j);
        strix_json_float(j, b->y1);
        fputs(", ", j);
        strix_json_float(j, b->x2);
        fputs(", ", j);
        strix_json_float(j, b->y2);
        if (ids && ids[i] >= 0) fprintf(j, "], \"track_id\": %d}", ids[i]);
        else fputs("]}", j);
    }
}

static void json_image(run *r, const frame *f, const strix_detections *d)
{
    FILE *j = r->json;
    fputs(r->first_image ? "\n    " : ",\n    ", j);
    r->first_image = 0;
    fputs("{\"image\": ", j);
    strix_json_str(j, f->name);
    fprintf(j, ", \"width\": %d, \"height\": %d, \"detections\": [", f->img.width, f->img.height);
    json_dets(j, r->names, r->n_names, d->items, NULL, d->count, "\n      ", ",\n      ");
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

/* The detect options of the command line; mask: --classes (NULL keeps
 * all), applied inside NMS as Ultralytics does. */
static void detect_options(const options *o, const unsigned char *mask, strix_detect_options *d)
{
    strix_detect_options_init(d);
    d->conf = (float)o->conf;
    d->iou = (float)o->iou;
    d->max_det = o->max_det;
    d->imgsz = o->imgsz;
    d->classes = mask;
}

/* Detect, annotate and write one batch; returns 0 or a fatal exit code. */
static int process_batch(run *r, frame *fr, int n, long total, strix_image *im, strix_detections *dets)
{
    const options *o = r->o;
    for (int i = 0; i < n; i++) im[i] = strix_image_view(&fr[i].img);
    strix_detect_options dopt;
    detect_options(o, r->mask, &dopt);
    strix_error e;
    double t0 = now_ms();
    strix_status st = strix_model_detect(r->model, im, n, &dopt, dets, &e);
    double per = (now_ms() - t0) / n;
    r->t_detect += now_ms() - t0;
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
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
    if (!fr || !im || !dets) {
        free(fr);
        free(im);
        free(dets);
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
    return rc;
}

static int finish_json(run *r, const char *path)
{
    FILE *j = r->json;
    fputs(r->first_image ? "],\n  \"errors\": [" : "\n  ],\n  \"errors\": [", j);
    for (int i = 0; i < r->err_names.n; i++) {
        fputs(i ? ",\n    {\"image\": " : "\n    {\"image\": ", j);
        strix_json_str(j, r->err_names.v[i]);
        fputs(", \"error\": ", j);
        strix_json_str(j, r->err_msgs.v[i]);
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
    strix_json_str(r->json, STRIX_VERSION);
    fputs(",\n  \"model\": ", r->json);
    strix_json_str(r->json, o->model);
    fputs(",\n  \"weights\": ", r->json);
    strix_json_str(r->json, o->weights);
    fprintf(r->json, ",\n  \"imgsz\": %d,\n  \"conf\": ", o->imgsz);
    strix_json_double(r->json, o->conf);
    fputs(",\n  \"iou\": ", r->json);
    strix_json_double(r->json, o->iou);
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
    char *first_label; /* <label_base>_1.txt: stands for them in the checks before the run */
    char *mot, *tracks; /* --track: OUT/<stem>.mot.txt, OUT/<stem>.tracks.json */
    char *hl_video, *hl_json, *hl_csv; /* --highlights: OUT/<stem>.highlights.{mp4,json,csv} */
} video_plan;

static void free_video_plans(video_plan *vp, int n)
{
    for (int i = 0; vp && i < n; i++) {
        free(vp[i].video_out);
        free(vp[i].jsonl);
        free(vp[i].label_base);
        free(vp[i].first_label);
        free(vp[i].mot);
        free(vp[i].tracks);
        free(vp[i].hl_video);
        free(vp[i].hl_json);
        free(vp[i].hl_csv);
    }
    free(vp);
}

/* Every video's output paths, refusing two videos writing one file; an
 * exit code. */
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
        char **extra[] = {&vp[i].mot, &vp[i].tracks, &vp[i].hl_video, &vp[i].hl_json, &vp[i].hl_csv};
        static const char *const suffix[] = {"mot.txt", "tracks.json", "highlights.mp4", "highlights.json",
                                             "highlights.csv"};
        for (int k = 0; k < 5; k++) {
            if (k < 2 ? !o->track : !o->highlights) continue;
            if (!(*extra[k] = malloc(n))) {
                free(stem);
                return EXIT_NOMEM;
            }
            snprintf(*extra[k], n, "%s/%s.%s", o->out, stem, suffix[k]);
        }
        free(stem);
        for (int k = 0; k < i; k++)
            if (!strcmp(vp[k].jsonl, vp[i].jsonl)) {
                fprintf(stderr, "infer: %s and %s would both write %s (rename one, or run them separately)\n",
                        vp[k].input, vp[i].input, vp[i].video_out ? vp[i].video_out : vp[i].jsonl);
                return EXIT_USAGE;
            }
        if (vp[i].label_base && !(vp[i].first_label = malloc(strlen(vp[i].label_base) + 8))) return EXIT_NOMEM;
        if (vp[i].label_base) sprintf(vp[i].first_label, "%s_1.txt", vp[i].label_base);
    }
    return 0;
}

/* Files an image-sequence pattern ("frames/%04d.png") names, as FFmpeg's
 * image2 reads them: from the first of numbers 0..4 that exists, up to the
 * first gap; added to l.  Patterns with other conversions add nothing. */
static int add_sequence_files(const char *pattern, strlist *l)
{
    size_t cap = strlen(pattern) + 32;
    char *p = malloc(cap);
    if (!p) return EXIT_NOMEM;
    int rc = 0;
    for (long i = 0, found = 0; !rc && (found || i < 5); i++) {
        size_t n = 0; /* expand %d, %0Nd, %Nd and %% with i (no printf of a user's string) */
        int ok = 1;
        for (const char *c = pattern; *c && ok; c++) {
            if (*c != '%') {
                p[n++] = *c;
                continue;
            }
            if (c[1] == '%') {
                p[n++] = '%';
                c++;
                continue;
            }
            const char *d = c + 1;
            int zero = *d == '0', width = 0;
            while (*d >= '0' && *d <= '9' && width < 16) width = 10 * width + (*d++ - '0');
            if (*d != 'd' || n + 24 + width > cap) {
                ok = 0;
                break;
            }
            n += (size_t)snprintf(p + n, cap - n, zero ? "%0*ld" : "%*ld", width, i);
            c = d;
        }
        p[n] = 0;
        if (!ok) break;
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            found = 1;
            if (!list_add(l, p)) rc = EXIT_NOMEM;
        } else if (found) break;
    }
    free(p);
    return rc;
}

/* Whether path is one of a video's per-frame labels <label_base>_<n>.txt
 * (the directories compared by device and inode), which the checks before
 * the run cannot list one by one. */
static int is_frame_label(const char *label_base, const char *path)
{
    const char *lb = base_name(label_base), *pb = base_name(path);
    size_t n = strlen(lb);
    if (strncmp(pb, lb, n) || pb[n] != '_') return 0;
    const char *num = pb + n + 1;
    size_t d = strspn(num, "0123456789");
    if (!d || strcmp(num + d, ".txt")) return 0;
    char *a = dir_of(label_base), *b = dir_of(path);
    struct stat x, y;
    int same = a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
    free(a);
    free(b);
    return same;
}

/* Before any work: no output writes over a file this run reads (model,
 * weights, names, inputs, the replayed detections), two outputs are never
 * one file (tools/outguard.h), and none exists without --overwrite; an
 * exit code (EXIT_NOMEM not printed). */
static int check_outputs(const options *o, const inputs *in, const plan_entry *plan, const video_plan *vp,
                         const char *json)
{
    int n_img = in->images.n, n_vid = in->videos.n;
    const char **outs = malloc(sizeof *outs * (size_t)(2 * n_img + 8 * n_vid + 1));
    strlist reads = {0};
    int rc = outs ? 0 : EXIT_NOMEM, n = 0;
    const char *given[] = {o->model, o->weights, o->names, o->detections};
    for (int i = 0; i < 4 && !rc; i++)
        if (given[i] && !list_add(&reads, given[i])) rc = EXIT_NOMEM;
    for (int i = 0; i < n_img && !rc; i++) {
        outs[n++] = plan[i].image_out;
        outs[n++] = plan[i].label_out;
        if (!list_add(&reads, in->images.v[i])) rc = EXIT_NOMEM;
    }
    if (n_img && outs) outs[n++] = json;
    for (int i = 0; i < n_vid && !rc; i++) {
        const char *v[8] = {vp[i].video_out, vp[i].jsonl, vp[i].first_label, vp[i].mot,
                            vp[i].tracks, vp[i].hl_video, vp[i].hl_json, vp[i].hl_csv};
        for (int k = 0; k < 8; k++) outs[n++] = v[k];
        if (!list_add(&reads, in->videos.v[i])) rc = EXIT_NOMEM;
        else if (is_ffmpeg_source(in->videos.v[i])) rc = add_sequence_files(in->videos.v[i], &reads);
    }
    if (!rc)
        rc = guard_outputs("infer", outs, n, (const char *const *)reads.v, reads.n,
                           "choose another --out or --json");
    for (int i = 0; i < n_vid && !rc; i++)
        for (int k = 0; vp[i].label_base && k < reads.n && !rc; k++)
            if (is_frame_label(vp[i].label_base, reads.v[k])) {
                fprintf(stderr, "infer: %s: --txt would write over %s, which this run reads (choose another "
                        "--out)\n", vp[i].input, reads.v[k]);
                rc = EXIT_OUTPUT;
            }
    if (!rc) rc = check_existing(o, outs, n);
    free(outs);
    list_free(&reads);
    return rc;
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
    int fail_rc;                 /* exit code of a failure the writer knows better (bad --detections) */
    long replayed;               /* detections replayed (after the filters) */
    const unsigned char *mask;   /* --classes (applied here to replayed detections) */
    /* --detections: the records replayed instead of detections, filtered into rdets/rids */
    strix_jsonl_reader *replay;
    strix_detection *rdets;
    int *rids, rcap;
    /* --track: identities of the current frame's detections (kept for frames
     * --vid-stride skips: their detections are the last detected ones) */
    strix_tracker *tracker;
    strix_counter *counter;
    int *ids, ids_cap;
    strix_crossing *cross;
    FILE *mot;
    char *mot_tmp;
    /* --highlights: each frame's time and its detections of the chosen classes
     * above --hl-score (with their identities), kept in a file until the end */
    const unsigned char *hl_mask;
    strix_frame_log *hl;
    strix_frame_item *hl_items; /* [rcap]: this frame's */
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

/* --detections: nothing to detect; the writer replays the records. */
static strix_status replay_detect(void *ctx, const strix_image *im, int n, strix_detections *out, strix_error *err)
{
    for (int i = 0; i < n; i++) out[i].count = 0;
    return STRIX_OK;
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

/* Trails, boxes, labels and the counting line with its totals: one frame's
 * drawing, shared by the annotated video and the highlight reel. */
static void draw_frame(const options *o, strix_counter *counter, const char *const *names, int n_names,
                       uint8_t *rgb, int w, int h, int stride, long index, const strix_detection *d,
                       const int *ids, int n)
{
    strix_annotate_style style;
    strix_annotate_style_init(&style);
    style.track_ids = ids;
    int lw = (int)((double)(w + h + 3) / 2 * 0.003 + 0.5);
    if (lw < 2) lw = 2;
    for (int i = 0; i < n && ids && o->trail; i++) {
        const float *xy;
        int k = ids[i] >= 0 ? strix_counter_trail(counter, ids[i], index, &xy) : 0;
        uint8_t c[3];
        strix_track_color(ids[i], c);
        if (k > 1) strix_draw_trail(rgb, w, h, stride, xy, k, lw, c);
    }
    strix_annotate(rgb, w, h, stride, d, n, names, n_names, &style);
    if (o->has_line) {
        static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
        strix_draw_line(rgb, w, h, stride, o->line[0], o->line[1], o->line[2], o->line[3], lw, white, 1);
        int in, out;
        strix_counter_line(counter, &in, &out);
        char text[64];
        snprintf(text, sizeof text, "in %d  out %d", in, out);
        int x = (int)(o->line[0] < o->line[2] ? o->line[0] : o->line[2]);
        int y = (int)(o->line[1] < o->line[3] ? o->line[1] : o->line[3]) - strix_text_height(lw) - 2 * lw;
        if (x < 0) x = 0;
        if (y < 0) y = 0;
        strix_draw_text(rgb, w, h, stride, x, y, text, lw, white, black);
    }
}

/* room for n detections in the replay, identity and highlight buffers */
static int grow_frame_buffers(vrun *v, int n)
{
    if (n <= v->rcap) return 0;
    int cap = n > 2 * v->rcap ? n : 2 * v->rcap;
    strix_detection *d = realloc(v->rdets, sizeof *d * (size_t)cap);
    if (d) v->rdets = d;
    int *r = realloc(v->rids, sizeof *r * (size_t)cap);
    if (r) v->rids = r;
    int *ids = realloc(v->ids, sizeof *ids * (size_t)cap);
    if (ids) v->ids = ids;
    strix_crossing *c = realloc(v->cross, sizeof *c * (size_t)cap);
    if (c) v->cross = c;
    strix_frame_item *hi = realloc(v->hl_items, sizeof *hi * (size_t)cap);
    if (hi) v->hl_items = hi;
    if (!d || !r || !ids || !c || !hi) return -1;
    v->rcap = cap;
    return 0;
}

/* --detections: this frame's record, checked against the video and
 * filtered by --classes (and --conf when given); 0 or -1 with err. */
static int replay_frame(vrun *v, strix_pipe_frame *f, double time, const strix_detection **dets, int *n,
                        const int **rec_ids, int *inferred, strix_error *err)
{
    strix_jsonl_record rec;
    int r = strix_jsonl_next(v->replay, &rec, err);
    v->fail_rc = EXIT_INPUT; /* until this record proves good */
    if (r < 0) return -1;
    if (r == 0 || rec.frame != f->index) {
        set_error(err, STRIX_E_ARG, "%s: %s frame %ld of %s (were these detections made from this video?)",
                  v->o->detections, r ? "the next record is not for" : "has no record for", f->index, v->shown);
        return -1;
    }
    double fps = strix_video_reader_info(v->rd)->fps, tol = fps > 0 ? 0.5 / fps : 0.02;
    if (fabs(rec.pts - time) > tol) {
        set_error(err, STRIX_E_ARG, "%s: frame %ld is at %.3f s there but at %.3f s in %s (were these detections "
                  "made from this video?)", v->o->detections, f->index, rec.pts, time, v->shown);
        return -1;
    }
    v->fail_rc = 0;
    if (grow_frame_buffers(v, rec.n)) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
        return -1;
    }
    int m = 0, any_id = 0;
    for (int i = 0; i < rec.n; i++) {
        const strix_detection *d = &rec.dets[i];
        if (v->o->conf_set && d->score < v->o->conf) continue;
        if (v->mask && (d->class_id >= v->n_names || !v->mask[d->class_id])) continue;
        v->rdets[m] = *d;
        v->rids[m++] = rec.track_ids[i];
        any_id |= rec.track_ids[i] >= 0;
    }
    *dets = v->rdets;
    *n = m;
    v->replayed += m;
    *rec_ids = any_id ? v->rids : NULL;
    *inferred = rec.inferred;
    return 0;
}

/* The exit code of a tracker or counter failure, by its cause: out of
 * memory, or detections it refuses (from a replayed file: a bad input;
 * from the model: a bug). */
static int track_exit_code(const vrun *v, strix_status st)
{
    if (st == STRIX_E_NOMEM) return EXIT_NOMEM;
    return v->replay ? EXIT_INPUT : EXIT_INTERNAL;
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
    const strix_detection *dets = f->dets;
    const int *ids = NULL;
    int n = f->n_dets, inferred = f->inferred;
    if (v->replay && replay_frame(v, f, vf->time, &dets, &n, &ids, &inferred, err)) return -1;
    if (grow_frame_buffers(v, n)) {
        set_error(err, STRIX_E_NOMEM, "%s: out of memory", v->shown);
        return -1;
    }
    int n_cross = 0;
    if (v->tracker) {
        /* a frame --vid-stride skipped repeats the last detections: same identities */
        strix_status tst = inferred ? strix_tracker_update(v->tracker, dets, n, v->ids, err) : STRIX_OK;
        if (tst) {
            v->fail_rc = track_exit_code(v, tst);
            return -1;
        }
        ids = v->ids;
    }
    strix_status cst = v->counter && ids ? strix_counter_add(v->counter, f->index, vf->time, dets, ids, n, v->cross,
                                                             &n_cross, err) : STRIX_OK;
    if (cst) {
        v->fail_rc = track_exit_code(v, cst);
        return -1;
    }
    if (v->wr) draw_frame(o, v->counter, v->names, v->n_names, f->rgb, f->width, f->height, f->stride, f->index,
                          dets, ids, n);
    double t1 = now_ms();
    v->annotate_ms += t1 - t0;
    FILE *j = v->jl;
    fprintf(j, "{\"frame\": %ld, \"pts\": ", f->index);
    strix_json_double(j, vf->time);
    fprintf(j, ", \"inferred\": %s, \"detections\": [", inferred ? "true" : "false");
    json_dets(j, v->names, v->n_names, dets, ids, n, "", ", ");
    fputs("]", j);
    for (int i = 0; i < n_cross; i++)
        fprintf(j, "%s{\"track_id\": %d, \"direction\": \"%s\"}", i ? ", " : ", \"crossings\": [", v->cross[i].id,
                v->cross[i].in ? "in" : "out");
    fputs(n_cross ? "]}\n" : "}\n", j);
    if (ferror(j)) {
        set_error(err, STRIX_E_IO, "%s: write failed: %s (check free disk space)", v->p->jsonl, strerror(errno));
        return -1;
    }
    for (int i = 0; v->mot && i < n; i++) /* MOTChallenge: frames from 1, the detector's box */
        if (ids[i] >= 0)
            fprintf(v->mot, "%ld,%d,%.2f,%.2f,%.2f,%.2f,%.4f,-1,-1,-1\n", f->index + 1, ids[i], (double)dets[i].x1,
                    (double)dets[i].y1, (double)(dets[i].x2 - dets[i].x1), (double)(dets[i].y2 - dets[i].y1),
                    (double)dets[i].score);
    if (v->mot && ferror(v->mot)) {
        set_error(err, STRIX_E_IO, "%s: write failed: %s (check free disk space)", v->p->mot, strerror(errno));
        return -1;
    }
    if (v->hl) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            const strix_detection *d = &dets[i];
            if (d->class_id < v->n_names && v->hl_mask[d->class_id] && d->score >= o->hl_score &&
                (!o->track || ids[i] >= 0))
                v->hl_items[k++] = (strix_frame_item){d->class_id, ids ? ids[i] : -1};
        }
        if (strix_frame_log_add(v->hl, vf->time, v->hl_items, k, err)) return -1;
    }
    if (v->label_path) {
        snprintf(v->label_path, strlen(v->p->label_base) + 32, "%s_%ld.txt", v->p->label_base, f->index + 1);
        if (write_labels(o, f->width, f->height, dets, n, v->label_path)) {
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

static const char *class_name_of(const vrun *v, int id) { return name_of(v->names, v->n_names, id); }

/* OUT/NAME.tracks.json: every track, unique tracks per class, line totals. */
static int write_tracks_json(vrun *v, long frames, double fps)
{
    const options *o = v->o;
    char *tmp = NULL;
    FILE *j = open_temp(v->p->tracks, &tmp);
    if (!j) {
        fprintf(stderr, "infer: %s: cannot create the file: %s\n", v->p->tracks, strerror(errno));
        return EXIT_OUTPUT;
    }
    const strix_track_info *t;
    int n = strix_counter_tracks(v->counter, &t);
    if (n < 0) {
        abandon_temp(j, tmp);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    fputs("{\n  \"video\": ", j);
    strix_json_str(j, v->p->input);
    fprintf(j, ",\n  \"frames\": %ld,\n  \"fps\": ", frames);
    strix_json_double(j, fps);
    fprintf(j, ",\n  \"degenerate_boxes\": %ld", strix_tracker_degenerate(v->tracker));
    fputs(",\n  \"tracker\": {\"name\": \"bytetrack\", \"track_thresh\": ", j);
    strix_json_double(j, o->track_thresh);
    fputs(", \"match_thresh\": ", j);
    strix_json_double(j, o->match_thresh);
    fprintf(j, ", \"track_buffer\": %d, \"conf\": ", o->track_buffer);
    strix_json_double(j, o->conf);
    fputs("},\n  \"counts\": {", j);
    int first = 1;
    for (int c = 0; c < v->n_names; c++) {
        int k = strix_counter_class_tracks(v->counter, c);
        if (!k) continue;
        fputs(first ? "" : ", ", j);
        first = 0;
        strix_json_str(j, class_name_of(v, c));
        fprintf(j, ": %d", k);
    }
    fputs("}", j);
    if (o->has_line) {
        int in, out;
        strix_counter_line(v->counter, &in, &out);
        fputs(",\n  \"line\": {\"points\": [", j);
        for (int k = 0; k < 4; k++) {
            if (k) fputs(", ", j);
            strix_json_float(j, o->line[k]);
        }
        fprintf(j, "], \"in\": %d, \"out\": %d}", in, out);
    }
    fputs(",\n  \"tracks\": [", j);
    for (int i = 0; i < n; i++) {
        fprintf(j, "%s{\"track_id\": %d, \"class_id\": %d, \"class_name\": ", i ? ",\n    " : "\n    ", t[i].id,
                t[i].class_id);
        strix_json_str(j, class_name_of(v, t[i].class_id));
        fprintf(j, ", \"first_frame\": %ld, \"last_frame\": %ld, \"frames\": %ld, \"start\": ", t[i].first,
                t[i].last, t[i].frames);
        strix_json_double(j, t[i].start);
        fputs(", \"end\": ", j);
        strix_json_double(j, t[i].end);
        if (o->has_line) fprintf(j, ", \"in\": %d, \"out\": %d", t[i].line_in, t[i].line_out);
        fputs("}", j);
    }
    fputs(n ? "\n  ]\n}\n" : "]\n}\n", j);
    return commit_temp(j, tmp, v->p->tracks, o->overwrite);
}

static int cmp_hl_item(const void *a, const void *b)
{
    const strix_frame_item *x = a, *y = b;
    return x->class_id != y->class_id ? (x->class_id > y->class_id) - (x->class_id < y->class_id)
                                      : (x->id > y->id) - (x->id < y->id);
}

/* What appeared in a highlight segment, per class (count[n_names]): with
 * tracking the unique identities seen, without the most boxes in one frame.
 * Reads the frame log on from frame *at (segments come in frame order). */
static strix_status segment_appeared(const vrun *v, const strix_highlight_segment *sg, long *at, int *count,
                                     strix_error *err)
{
    memset(count, 0, sizeof *count * (size_t)(v->n_names ? v->n_names : 1));
    int *now = calloc((size_t)(v->n_names ? v->n_names : 1), sizeof *now);
    strix_frame_item *seen = NULL; /* with tracking: the segment's items */
    long n_seen = 0, cap = 0;
    strix_status st = STRIX_OK;
    if (!now) set_error(err, st = STRIX_E_NOMEM, "out of memory");
    for (; !st && *at <= sg->last; ++*at) {
        double pts;
        const strix_frame_item *it;
        int n, got = strix_frame_log_next(v->hl, &pts, &it, &n, err);
        if (got <= 0) {
            if (got) st = err->status;
            else set_error(err, st = STRIX_E_INTERNAL, "highlights: frame %ld missing from the frame log", *at);
            break;
        }
        if (*at < sg->first) continue;
        if (v->o->track) {
            if (n_seen + n > cap) {
                long c = n_seen + n > 2 * cap ? n_seen + n : 2 * cap;
                strix_frame_item *s = realloc(seen, sizeof *s * (size_t)c);
                if (!s) {
                    set_error(err, st = STRIX_E_NOMEM, "out of memory");
                    break;
                }
                seen = s;
                cap = c;
            }
            if (n) memcpy(seen + n_seen, it, sizeof *it * (size_t)n);
            n_seen += n;
            continue;
        }
        for (int i = 0; i < n; i++) now[it[i].class_id]++;
        for (int c = 0; c < v->n_names; c++) {
            if (now[c] > count[c]) count[c] = now[c];
            now[c] = 0;
        }
    }
    if (!st && v->o->track) { /* unique (class, id) pairs */
        if (n_seen) qsort(seen, (size_t)n_seen, sizeof *seen, cmp_hl_item);
        for (long i = 0; i < n_seen; i++)
            if (!i || seen[i].class_id != seen[i - 1].class_id || seen[i].id != seen[i - 1].id)
                count[seen[i].class_id]++;
    }
    free(seen);
    free(now);
    return st;
}

/* The reel's frames are drawn as the annotated video's: from the JSON Lines
 * just written, every record fed to a counter of its own for the trails. */
typedef struct reel {
    vrun *v;
    strix_jsonl_reader *rd;
    strix_counter *counter;
} reel;

static int reel_draw(void *ctx, strix_video_frame *f, strix_error *err)
{
    reel *r = ctx;
    strix_jsonl_record rec;
    for (;;) {
        int got = strix_jsonl_next(r->rd, &rec, err);
        if (got < 0) return -1;
        if (!got || rec.frame > f->index) {
            set_error(err, STRIX_E_INTERNAL, "%s: no record for frame %ld", r->v->p->jsonl, f->index);
            return -1;
        }
        if (strix_counter_add(r->counter, rec.frame, rec.pts, rec.dets, rec.track_ids, rec.n, NULL, NULL, err))
            return -1;
        if (rec.frame == f->index) break;
    }
    draw_frame(r->v->o, r->counter, r->v->names, r->v->n_names, f->rgb, f->width, f->height, f->stride, f->index,
               rec.dets, rec.track_ids, rec.n);
    return 0;
}

/* --highlights: segments from the logged frames, the reel, the JSON and
 * CSV segment lists; an exit code. */
static int write_highlights(vrun *v, double end_time)
{
    const options *o = v->o;
    const video_plan *p = v->p;
    long frames = strix_frame_log_frames(v->hl), next = 0; /* the frame log's next frame */
    double first_pts = strix_frame_log_first_pts(v->hl);
    int rc = 0;
    /* the segmenter takes whole arrays: 16 bytes a frame, only while it runs */
    double *pts = malloc(sizeof *pts * (size_t)(frames ? frames : 1));
    double *activity = calloc((size_t)(frames ? frames : 1), sizeof *activity);
    int *count = calloc((size_t)(v->n_names ? v->n_names : 1), sizeof *count);
    strix_video_segment *cut = NULL;
    strix_highlight_segment *sg = NULL;
    long n_sg = 0;
    char *tmp_v = NULL, *tmp_j = NULL, *tmp_c = NULL;
    FILE *j = NULL, *c = NULL;
    reel rl;
    memset(&rl, 0, sizeof rl);
    strix_error e;
    if (!pts || !activity || !count) goto nomem;
    const strix_track_info *ti = NULL;
    int n_ti = v->counter ? strix_counter_tracks(v->counter, &ti) : 0;
    if (n_ti < 0) goto nomem;
    if (strix_frame_log_rewind(v->hl, &e)) goto failed;
    for (long f = 0; f < frames; f++) {
        const strix_frame_item *it;
        int n, got = strix_frame_log_next(v->hl, &pts[f], &it, &n, &e);
        if (got < 0) goto failed;
        if (!got) {
            set_error(&e, STRIX_E_INTERNAL, "highlights: frame %ld missing from the frame log", f);
            goto failed;
        }
        for (int i = 0; i < n; i++) {
            if (o->hl_min_frames > 1) { /* tracks of at least N frames (ti is sorted by identity) */
                int lo = 0, hi = n_ti, id = it[i].id;
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (ti[mid].id < id) lo = mid + 1;
                    else hi = mid;
                }
                if (lo == n_ti || ti[lo].id != id || ti[lo].frames < o->hl_min_frames) continue;
            }
            activity[f] += 1;
        }
    }
    strix_highlight_options ho;
    strix_highlight_options_init(&ho);
    ho.gap = o->hl_gap;
    ho.pad = o->hl_pad;
    ho.min_len = o->hl_min_len;
    ho.max_total = o->hl_max_len;
    if (strix_highlight_segments(pts, activity, frames, end_time, &ho, &sg, &n_sg, &e)) {
        fprintf(stderr, "infer: %s\n", e.message);
        rc = strix_exit_code(e.status);
        goto out;
    }
    free(pts);
    free(activity);
    pts = activity = NULL;
    if (strix_frame_log_rewind(v->hl, &e)) goto failed;
    double total = 0;
    for (long i = 0; i < n_sg; i++) total += sg[i].end - sg[i].start;

    if (n_sg) {
        if (!(cut = malloc(sizeof *cut * (size_t)n_sg))) goto nomem;
        for (long i = 0; i < n_sg; i++) {
            cut[i].start = sg[i].start;
            cut[i].end = sg[i].end;
        }
        FILE *t = open_temp(p->hl_video, &tmp_v);
        if (!t) {
            fprintf(stderr, "infer: %s: cannot create the file: %s\n", p->hl_video, strerror(errno));
            rc = EXIT_OUTPUT;
            goto out;
        }
        fclose(t);
        if (strix_jsonl_open(&rl.rd, p->jsonl, &e) ||
            strix_counter_create(&rl.counter, o->has_line ? o->line : NULL, o->trail, &e)) {
            fprintf(stderr, "infer: %s\n", e.message);
            rc = strix_exit_code(e.status);
            goto out;
        }
        rl.v = v;
        strix_video_cut_options co;
        strix_video_cut_options_init(&co);
        if (o->codec) co.write.codec = o->codec;
        co.write.crf = o->crf;
        co.write.preset = o->preset;
        co.write.audio = o->audio;
        co.write.name = p->hl_video;
        co.write.notice = print_notice;
        co.write.notice_ctx = v;
        co.draw = reel_draw;
        co.ctx = &rl;
        co.interrupt = stop_requested;
        strix_video_cut_stats cs;
        strix_status st = strix_video_cut(p->input, tmp_v, cut, (int)n_sg, &co, &cs, &e);
        if (st) {
            fprintf(stderr, "infer: %s\n", g_stop ? "highlight reel interrupted: not written" : e.message);
            rc = g_stop ? EXIT_INTERRUPTED : st == STRIX_E_NOMEM ? EXIT_NOMEM : st == STRIX_E_IMAGE ? EXIT_IMAGE
                                                                                                  : EXIT_OUTPUT;
            goto out;
        }
    }

    if (!(j = open_temp(p->hl_json, &tmp_j)) || !(c = open_temp(p->hl_csv, &tmp_c))) {
        fprintf(stderr, "infer: %s: cannot create the file: %s\n", j ? p->hl_csv : p->hl_json, strerror(errno));
        rc = EXIT_OUTPUT;
        goto out;
    }
    fputs("{\n  \"video\": ", j);
    strix_json_str(j, p->input);
    fputs(",\n  \"reel\": ", j);
    if (n_sg) strix_json_str(j, p->hl_video);
    else fputs("null", j);
    fputs(",\n  \"classes\": [", j);
    for (int k = 0, first = 1; k < v->n_names; k++)
        if (v->hl_mask[k]) {
            fputs(first ? "" : ", ", j);
            first = 0;
            strix_json_str(j, class_name_of(v, k));
        }
    fputs("],\n  \"options\": {\"score\": ", j);
    strix_json_double(j, o->hl_score);
    fprintf(j, ", \"min_frames\": %d, \"gap\": ", o->hl_min_frames);
    strix_json_double(j, o->hl_gap);
    fputs(", \"pad\": ", j);
    strix_json_double(j, o->hl_pad);
    fputs(", \"min_len\": ", j);
    strix_json_double(j, o->hl_min_len);
    fputs(", \"max_len\": ", j);
    strix_json_double(j, o->hl_max_len);
    fputs("},\n  \"video_duration\": ", j);
    strix_json_double(j, end_time - first_pts);
    fputs(",\n  \"reel_duration\": ", j);
    strix_json_double(j, total);
    fputs(",\n  \"segments\": [", j);
    fputs("start,end,duration,reel_start,first_frame,last_frame,appeared\n", c);
    double at = 0;
    for (long i = 0; i < n_sg; i++) {
        if (segment_appeared(v, &sg[i], &next, count, &e)) goto failed;
        fputs(i ? ",\n    {\"start\": " : "\n    {\"start\": ", j);
        strix_json_double(j, sg[i].start);
        fputs(", \"end\": ", j);
        strix_json_double(j, sg[i].end);
        fputs(", \"duration\": ", j);
        strix_json_double(j, sg[i].end - sg[i].start);
        fputs(", \"reel_start\": ", j);
        strix_json_double(j, at);
        fprintf(j, ", \"first_frame\": %ld, \"last_frame\": %ld, \"activity\": ", sg[i].first, sg[i].last);
        strix_json_double(j, sg[i].activity);
        fputs(", \"appeared\": {", j);
        fprintf(c, "%.6f,%.6f,%.6f,%.6f,%ld,%ld,\"", sg[i].start, sg[i].end, sg[i].end - sg[i].start, at, sg[i].first,
                sg[i].last);
        for (int k = 0, first = 1; k < v->n_names; k++) {
            if (!count[k]) continue;
            fputs(first ? "" : ", ", j);
            strix_json_str(j, class_name_of(v, k));
            fprintf(j, ": %d", count[k]);
            fprintf(c, "%s%d %s", first ? "" : "; ", count[k], class_name_of(v, k));
            first = 0;
        }
        fputs("}}", j);
        fputs("\"\n", c);
        at += sg[i].end - sg[i].start;
    }
    fputs(n_sg ? "\n  ]\n}\n" : "]\n}\n", j);
    if (tmp_v) {
        rc = commit_file(tmp_v, p->hl_video, o->overwrite);
        tmp_v = NULL;
    }
    if (!rc) rc = commit_temp(j, tmp_j, p->hl_json, o->overwrite);
    else abandon_temp(j, tmp_j);
    j = NULL;
    tmp_j = NULL;
    if (!rc) rc = commit_temp(c, tmp_c, p->hl_csv, o->overwrite);
    else abandon_temp(c, tmp_c);
    c = NULL;
    tmp_c = NULL;
    if (!rc && !o->quiet) {
        if (n_sg)
            printf("infer: %s: highlights: %ld segment%s, %.2f s of %.2f s in %s\n", p->input, n_sg,
                   n_sg == 1 ? "" : "s", total, end_time - first_pts, p->hl_video);
        else
            printf("infer: %s: highlights: nothing matched, no reel written (segment list in %s)\n", p->input,
                   p->hl_json);
    }
    goto out;
nomem:
    fprintf(stderr, "infer: out of memory\n");
    rc = EXIT_NOMEM;
    goto out;
failed: /* the frame log: its temporary file or memory */
    fprintf(stderr, "infer: %s\n", e.message);
    rc = e.status == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
out:
    if (j || tmp_j) abandon_temp(j, tmp_j);
    if (c || tmp_c) abandon_temp(c, tmp_c);
    if (tmp_v) {
        unlink(tmp_v);
        free(tmp_v);
    }
    strix_jsonl_close(rl.rd);
    strix_counter_free(rl.counter);
    free(pts);
    free(activity);
    free(count);
    free(cut);
    free(sg);
    return rc;
}

/* The JSON Lines' first line: what the run found in the whole input, e.g.
 *   {"header": {"video": "clip.mp4", "frames": 300, "damage": {"skipped_packets": 0,
 *    "corrupt_packets": 0, "concealed_frames": 2, "tainted_frames": 47}, "degenerate_boxes": 0}}
 * (degenerate_boxes: null without --track).  The counts are known only at
 * the end, so it is written first with zeros and rewritten in place: every
 * number takes a fixed width, padded with spaces (JSON allows them), so the
 * line keeps its length. */
static void jsonl_header(FILE *j, const vrun *v, long frames, const strix_video_read_stats *rs)
{
    char degen[24] = "null";
    if (v->tracker) snprintf(degen, sizeof degen, "%ld", strix_tracker_degenerate(v->tracker));
    fputs("{\"header\": {\"video\": ", j);
    strix_json_str(j, v->p->input);
    fprintf(j, ", \"frames\": %-12ld, \"damage\": {\"skipped_packets\": %-12ld, \"corrupt_packets\": %-12ld, "
            "\"concealed_frames\": %-12ld, \"tainted_frames\": %-12ld}, \"degenerate_boxes\": %-12s}}\n", frames,
            rs->bad_packets, rs->corrupt_packets, rs->concealed, rs->tainted, degen);
}

/* What the decoder met in a damaged input, e.g. "2 corrupt packets skipped,
 * 1 frame concealed by the decoder, 28 more frames decoded from damaged
 * references before the next keyframe"; "" for a clean input. */
static void describe_damage(const strix_video_read_stats *rs, char *buf, size_t n)
{
    const struct {
        long k;
        const char *one, *many;
    } part[] = {
        {rs->bad_packets, "corrupt packet skipped", "corrupt packets skipped"},
        {rs->corrupt_packets, "packet flagged corrupt by the demuxer", "packets flagged corrupt by the demuxer"},
        {rs->concealed, "frame concealed by the decoder", "frames concealed by the decoder"},
        {rs->tainted, "more frame decoded from damaged references before the next keyframe",
         "more frames decoded from damaged references before the next keyframe"},
    };
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof part / sizeof part[0]; i++)
        if (part[i].k && at < n)
            at += (size_t)snprintf(buf + at, n - at, "%s%ld %s", at ? ", " : "", part[i].k,
                                   part[i].k == 1 ? part[i].one : part[i].many);
}

/* Detect, annotate and encode one video; returns an exit code. */
static int run_video(const options *o, const video_plan *p, strix_model *model, const char *const *names,
                     int n_names, const unsigned char *mask, const unsigned char *hl_mask)
{
    vrun v;
    memset(&v, 0, sizeof v);
    v.o = o;
    v.p = p;
    v.shown = p->input;
    v.model = model;
    v.names = names;
    v.n_names = n_names;
    detect_options(o, mask, &v.dopt);
    char *video_tmp = NULL, *jl_tmp = NULL, *mot_tmp = NULL;
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
    strix_video_read_stats none;
    memset(&none, 0, sizeof none);
    jsonl_header(v.jl, &v, 0, &none);
    v.mask = mask;
    v.hl_mask = hl_mask;
    if (hl_mask && (st = strix_frame_log_open(&v.hl, &e))) {
        fprintf(stderr, "infer: %s\n", e.message);
        rc = st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
        goto done;
    }
    if (o->detections && (st = strix_jsonl_open(&v.replay, o->detections, &e))) {
        fprintf(stderr, "infer: %s\n", e.message);
        rc = strix_exit_code(st);
        goto done;
    }
    if (o->track) {
        strix_track_options to;
        strix_track_options_init(&to);
        to.track_thresh = (float)o->track_thresh;
        to.match_thresh = (float)o->match_thresh;
        to.track_buffer = o->track_buffer;
        double fps = strix_video_reader_info(v.rd)->fps;
        to.frame_rate = (fps > 0 ? fps : 30) / o->vid_stride;
        if ((st = strix_tracker_create(&v.tracker, &to, &e)) ||
            (st = strix_counter_create(&v.counter, o->has_line ? o->line : NULL, o->trail, &e))) {
            fprintf(stderr, "infer: %s\n", e.message);
            rc = strix_exit_code(st);
            goto done;
        }
        if (!(v.mot = open_temp(p->mot, &mot_tmp))) {
            fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n",
                    p->mot, strerror(errno));
            rc = EXIT_OUTPUT;
            goto done;
        }
    }

    strix_pipe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = o->batch;
    cfg.vid_stride = o->detections ? 1 : o->vid_stride; /* a replay has a record for every frame */
    cfg.max_det = o->max_det;
    cfg.ctx = &v;
    cfg.read = video_read;
    cfg.detect = o->detections ? replay_detect : video_detect;
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
            rc = v.fail_rc ? v.fail_rc : pipe_exit_code(ps.failed, st);
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
    /* the header's counts, now known (same length: see jsonl_header) */
    int unwritten = fflush(v.jl) || fseek(v.jl, 0, SEEK_SET);
    if (!unwritten) {
        jsonl_header(v.jl, &v, ps.frames, &rs);
        unwritten = fflush(v.jl) || fseek(v.jl, 0, SEEK_END);
    }
    if (unwritten) {
        fprintf(stderr, "infer: %s: write failed: %s (check free disk space)\n", p->jsonl, strerror(errno));
        rc = EXIT_OUTPUT;
        goto done;
    }
    rc = commit_temp(v.jl, jl_tmp, p->jsonl, o->overwrite);
    v.jl = NULL;
    jl_tmp = NULL;
    if (rc) goto done;
    if (v.mot) {
        rc = commit_temp(v.mot, mot_tmp, p->mot, o->overwrite);
        v.mot = NULL;
        mot_tmp = NULL;
        if (!rc) rc = write_tracks_json(&v, ps.frames, strix_video_reader_info(v.rd)->fps);
        if (rc) goto done;
    }

    double wall = (now_ms() - v.t0) / 1e3, enc = v.wr ? strix_video_writer_ms(v.wr) : 0;
    char damage[320];
    describe_damage(&rs, damage, sizeof damage);
    if (damage[0])
        fprintf(stderr, "infer: %s: damaged input: %s%s%s%s; the %ld frames that decoded are in the output\n",
                p->input, damage, rs.problem[0] ? " (first: " : "", rs.problem, rs.problem[0] ? ")" : "", ps.frames);
    else if (rs.problem[0])
        fprintf(stderr, "infer: %s: %s; the %ld frames before it are in the output\n", p->input, rs.problem,
                ps.frames);
    /* the container's frame count (or the duration's estimate) against what
     * decoded: damage and early ends were reported above from what failed to
     * read or decode; with none, the count in the header is what is off
     * (an AVI's stream header, say): trust the frames, note it neutrally */
    const strix_video_info *info = strix_video_reader_info(v.rd);
    long missing = info->frames - ps.frames;
    if (!g_stop && !o->quiet && !damage[0] && !rs.problem[0] && info->frames > 0 &&
        missing > (info->frames_exact ? 0 : info->frames / 50 > 2 ? info->frames / 50 : 2))
        fprintf(stderr, "infer: notice: %s: the %s %ld frames; %ld decoded, with no read or decode error\n",
                p->input, info->frames_exact ? "container's header counts" : "duration suggests about", info->frames,
                ps.frames);
    FILE *s = g_stop ? stderr : stdout;
    if (!o->quiet || g_stop)
        fprintf(s, "infer: %s: %ld frames (%ld %s), %ld detections in %.2f s, %.1f fps; decode %.2f s, "
                "preprocess %.2f s, inference %.2f s, postprocess %.2f s, annotate %.2f s, encode %.2f s "
                "(stages overlap); peak memory %ld MB; %s%s%s%s\n",
                p->input, ps.frames, ps.inferred, o->detections ? "replayed" : "detected",
                o->detections ? v.replayed : ps.detections, wall, wall > 0 ? (double)ps.frames / wall : 0,
                rs.decode_ms / 1e3, rs.convert_ms / 1e3, ps.detect_ms / 1e3, (ps.post_ms + v.side_ms) / 1e3,
                v.annotate_ms / 1e3, enc / 1e3, peak_rss_mb(), g_stop ? "interrupted: kept the frames read "
                "so far in " : "wrote ", p->video_out ? p->video_out : "", p->video_out ? " and " : "", p->jsonl);
    if (v.counter && (!o->quiet || g_stop)) {
        const strix_track_info *ti;
        int n_ti = strix_counter_tracks(v.counter, &ti);
        fprintf(s, "infer: %s: %d track%s", p->input, n_ti, n_ti == 1 ? "" : "s");
        for (int c = 0, first = 1; c < n_names; c++) {
            int k = strix_counter_class_tracks(v.counter, c);
            if (!k) continue;
            fprintf(s, "%s%d %s", first ? ": " : ", ", k, class_name_of(&v, c));
            first = 0;
        }
        if (o->has_line) {
            int in, out;
            strix_counter_line(v.counter, &in, &out);
            fprintf(s, "; line: %d in, %d out", in, out);
        }
        fprintf(s, "; wrote %s and %s\n", p->mot, p->tracks);
    }
    long degen = v.tracker ? strix_tracker_degenerate(v.tracker) : 0;
    if (degen)
        fprintf(stderr, "infer: %s: %ld detection%s with an empty or non-finite box (no area) not tracked\n", p->input,
                degen, degen == 1 ? "" : "s");
    if (g_stop) rc = EXIT_INTERRUPTED;
    else if (hl_mask) {
        /* the end of the last frame: the next frame's time is unknown, so one average frame */
        double fps = info->fps > 0 ? info->fps : 25, last = strix_frame_log_last_pts(v.hl);
        long logged = strix_frame_log_frames(v.hl);
        double end = logged ? last + 1 / fps : 0;
        if (info->duration > 0 && logged && info->duration > last &&
            info->duration < end)
            end = info->duration;
        rc = write_highlights(&v, end);
    }

done:
    strix_video_writer_free(v.wr);
    strix_video_close(v.rd);
    if (video_tmp) {
        unlink(video_tmp);
        free(video_tmp);
    }
    if (v.jl || jl_tmp) abandon_temp(v.jl, jl_tmp);
    if (v.mot || mot_tmp) abandon_temp(v.mot, mot_tmp);
    free(v.label_path);
    strix_jsonl_close(v.replay);
    strix_tracker_free(v.tracker);
    strix_counter_free(v.counter);
    free(v.rdets);
    free(v.rids);
    free(v.ids);
    free(v.cross);
    strix_frame_log_free(v.hl);
    free(v.hl_items);
    return rc;
}

/* --classes or --highlights (opt) "dog,person" or "16,0": a mask over the
 * model's classes; an exit code. */
static int parse_classes(const char *opt, const char *list, const char *const *names, int nc, unsigned char **mask)
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
            if (id >= nc) rc = usage_error("%s: %s is not a class id of this model (0..%d)", opt, t, nc - 1);
        } else {
            for (int i = 0; i < nc && id < 0; i++)
                if (!strcasecmp(t, names[i])) id = i;
            if (id < 0)
                rc = usage_error("%s: '%s' is not a class of this model (its classes: %s%s%s%s)", opt, t,
                                 nc > 0 ? names[0] : "none", nc > 1 ? ", " : "", nc > 1 ? names[1] : "",
                                 nc > 2 ? ", ..." : "");
        }
        if (!rc) (*mask)[id] = 1;
    }
    free(copy);
    return rc;
}

/* Load the model of --model/--weights and its class names; an exit code. */
static int load_model(const options *o, strix_model **model, const char ***names, int *nc)
{
    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.yaml_path = o->model;
    mo.weights_path = o->weights;
    mo.scale = o->scale;
    mo.nc = o->nc;
    mo.threads = o->threads;
    mo.device = o->device;
    strix_cuda_env_apply(&mo);
    if (!mo.device) {
        mo.device = strix_device_count() > 0 ? "cuda" : "cpu";
        if (!o->quiet && strix_device_count() == 0)
            fprintf(stderr, "infer: no CUDA device found: running on the cpu (--device cpu silences this)\n");
    }
    mo.half = o->half;
    strix_error e;
    strix_status st = strix_model_load(model, &mo, &e);
    if (!st && o->names) st = strix_model_load_names(*model, o->names, &e);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
    }
    *nc = strix_model_class_count(*model);
    if (!(*names = malloc(sizeof **names * (size_t)(*nc > 0 ? *nc : 1)))) {
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    for (int i = 0; i < *nc; i++) (*names)[i] = strix_model_class_name(*model, i);
    return 0;
}

/* --detections: the class names met in the file (read once through); an exit code. */
static int replay_names(const options *o, const char ***names, int *nc)
{
    strix_jsonl_reader *rd;
    strix_error e;
    strix_status st = strix_jsonl_open(&rd, o->detections, &e);
    strix_jsonl_record rec;
    int got = 0;
    while (!st && (got = strix_jsonl_next(rd, &rec, &e)) > 0) {}
    if (st || got < 0) { /* missing, unreadable or malformed: a bad input */
        fprintf(stderr, "infer: %s\n", e.message);
        strix_jsonl_close(rd);
        return e.status == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_INPUT;
    }
    *nc = strix_jsonl_class_count(rd);
    *names = calloc((size_t)(*nc > 0 ? *nc : 1), sizeof **names);
    int rc = *names ? 0 : EXIT_NOMEM;
    for (int i = 0; i < *nc && !rc; i++) {
        const char *n = strix_jsonl_class_name(rd, i);
        char tmp[32];
        snprintf(tmp, sizeof tmp, "class%d", i);
        if (!((*names)[i] = strdup(n ? n : tmp))) rc = EXIT_NOMEM;
    }
    strix_jsonl_close(rd);
    if (rc) fprintf(stderr, "infer: out of memory\n");
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
    unsigned char *mask = NULL, *hl_mask = NULL;
    int nc = 0;
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
    if (o.detections && (n_vid != 1 || n_img)) {
        rc = usage_error("--detections FILE replays one video: give that video, and only it");
        goto out;
    }
    if (o.detections && o.names) {
        rc = usage_error("--names: with --detections the class names come from the detections file");
        goto out;
    }
    if ((o.track || o.highlights) && !n_vid) {
        rc = usage_error("--%s works on videos: no video among the inputs", o.track ? "track" : "highlights");
        goto out;
    }
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
    if (n_img) rc = plan_outputs(&o, &in.images, plan);
    if (!rc && n_vid) rc = plan_videos(&o, &in.videos, vplan);
    if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
    if (rc) goto out;
    if (o.json) {
        struct stat st;
        if (stat(o.json, &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infer: --json %s: is a directory; --json names a file (such as %s/%s)\n", o.json,
                    o.json, n_vid ? "detections.jsonl" : "detections.json");
            rc = EXIT_OUTPUT;
            goto out;
        }
        char *d = dir_of(o.json);
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
    if (!rc) rc = check_outputs(&o, &in, plan, vplan, json_path);
    if (!rc) {
        char *json_dir = o.json ? dir_of(o.json) : NULL;
        const char *dirs[3] = {o.save || o.txt || !o.json ? o.out : NULL, labels_dir, json_dir};
        sweep_stale(&o, dirs, 3);
        free(json_dir);
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

    rc = o.detections ? replay_names(&o, &names, &nc) : load_model(&o, &model, &names, &nc);
    if (rc) goto out;
    if (o.classes && (rc = parse_classes("--classes", o.classes, names, nc, &mask))) goto out;
    if (o.highlights && (rc = parse_classes("--highlights", o.highlights, names, nc, &hl_mask))) goto out;

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
        int vrc = run_video(&o, &vplan[i], model, names, nc, mask, hl_mask);
        if (!rc) rc = vrc;
        if (vrc == EXIT_INTERRUPTED) rc = vrc;
        if (vrc == EXIT_INTERRUPTED || vrc == EXIT_NOMEM || vrc == EXIT_DEVICE || vrc == EXIT_INTERNAL) break;
    }

out:
    if (r.json) abandon_temp(r.json, r.json_tmp);
    if (rc) remove_created(&created); /* only the empty ones go */
    if (model) strix_model_free(model);
    for (int i = 0; o.detections && names && i < nc; i++) free((char *)names[i]); /* replay_names' copies */
    free(names);
    free(mask);
    free(hl_mask);
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
