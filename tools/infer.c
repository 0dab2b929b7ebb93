/* infer.c — the `infer` command: detect objects in images with a YOLO model,
 * write annotated copies, a JSON report and, optionally, YOLO txt labels.
 *
 *   infer --model weights/yolov8.yaml --scale n --weights w.safetensors \
 *         [options] INPUT...
 * INPUT: an image file, a directory (its images, sorted by name, not
 * recursive) or a glob pattern (quoted, expanded with glob(3)).
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
 * Exit status (also in --help):
 *   0 ok; 1 internal error; 2 usage error (bad or missing option or value);
 *   3 an input is missing or unreadable; 4 bad model YAML; 5 bad weights;
 *   6 an image could not be decoded (the others are still processed: each
 *   bad one is reported on stderr and listed under "errors"); 7 output not
 *   writable, or an output file exists without --overwrite; 8 out of memory;
 *   9 device error or device not in this build; 130 interrupted (SIGINT or
 *   SIGTERM: the images finished so far are written, JSON included).
 * When several images fail, the status is that of the first failure.
 *
 * Frames come from a frame_source (one image per file here; video decoding
 * will be another source), processed in batches of --batch frames per
 * strix_model_detect call.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "annotate.h"
#include "exitcodes.h"
#include "image.h"
#include "strix.h"

/* Beyond the shared codes of exitcodes.h: a run stopped by SIGINT/SIGTERM. */
enum { EXIT_INTERRUPTED = 130 };

/* Set from the signal handler; a flag is all a handler may safely touch. */
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
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
    char scale;
    int nc, max_det, imgsz, batch, threads;
    double conf, iou;
    int txt, save_conf, save, overwrite, quiet;
    char **inputs;
    int n_inputs;
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: infer --model YAML --weights FILE [options] INPUT...\n"
            "Detect objects in images; write annotated copies and a JSON report.\n"
            "INPUT: an image file, a directory (its images, sorted, not recursive) or a\n"
            "quoted glob pattern such as 'photos/*.jpg'.\n"
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
            "  --batch N         images per forward pass (default 1)\n"
            "  --threads N       CPU threads (default 0: all)\n"
            "  --device NAME     compute device (default cpu)\n"
            "  --out DIR         output directory (default runs/infer; created, not emptied)\n"
            "  --json FILE       JSON report (default OUT/detections.json)\n"
            "  --txt             YOLO labels in OUT/labels/NAME.txt\n"
            "  --save-conf       add the score to each --txt line\n"
            "  --no-save         do not write annotated images\n"
            "  --overwrite       replace existing output files (default: refuse)\n"
            "  --quiet           print errors only\n"
            "  -h, --help        this help\n"
            "  --version         print the version\n"
            "\n"
            "Exit status: 0 ok; 1 internal error; 2 usage error; 3 input missing or\n"
            "unreadable; 4 bad model YAML; 5 bad weights; 6 an image could not be decoded\n"
            "(the other images are still processed); 7 output not writable or already\n"
            "exists; 8 out of memory; 9 device error or unavailable; 130 interrupted.\n");
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
    o->device = "cpu";
    o->out = "runs/infer";
    o->conf = 0.25;
    o->iou = 0.7;
    o->max_det = 300;
    o->imgsz = 640;
    o->batch = 1;
    o->save = 1;
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
                  : !strcmp(a, "--overwrite") ? &o->overwrite : !strcmp(a, "--quiet") ? &o->quiet : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        if (!strcmp(a, "--no-save")) {
            o->save = 0;
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
                                                 "--threads", "--device", "--out", "--json"};
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

static int has_image_ext(const char *name)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".png", ".bmp", ".tga", ".gif", ".psd",
                                      ".hdr", ".pic", ".pnm", ".ppm", ".pgm"};
    const char *dot = strrchr(name, '.');
    if (!dot) return 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (!strcasecmp(dot, ext[i])) return 1;
    return 0;
}

/* Append the images of a directory, sorted by name; returns an exit code. */
static int add_dir(strlist *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "infer: %s: cannot list the directory: %s (check permissions)\n", dir, strerror(errno));
        return EXIT_INPUT;
    }
    strlist names = {0};
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !has_image_ext(e->d_name)) continue;
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
            if (!list_add(l, p)) rc = EXIT_NOMEM;
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
        fprintf(stderr, "infer: %s: no images in this directory (jpg, png, bmp, ... files expected)\n", dir);
        return EXIT_INPUT;
    }
    return 0;
}

static int expand_inputs(const options *o, strlist *l)
{
    for (int i = 0; i < o->n_inputs; i++) {
        const char *in = o->inputs[i];
        struct stat st;
        if (stat(in, &st) == 0) {
            int rc = S_ISDIR(st.st_mode) ? add_dir(l, in) : list_add(l, in) ? 0 : EXIT_NOMEM;
            if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
            if (rc) return rc;
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
            else if (!list_add(l, p)) rc = EXIT_NOMEM;
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

/* Close tmp and move it to path (refusing to replace an existing file unless
 * overwrite); the temporary file is gone afterwards either way. */
static int commit_temp(FILE *f, char *tmp, const char *path, int overwrite)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    int rc = 0;
    if (bad) {
        fprintf(stderr, "infer: %s: write failed: %s (check free disk space)\n", path, strerror(errno));
        rc = EXIT_OUTPUT;
    } else if (overwrite) {
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
    FILE *json;
    char *json_tmp;
    int first_image;
    strlist err_names, err_msgs; /* the frames that failed, and why */
    int first_fail;           /* exit code of the first per-image failure */
    long images, detections;
    double t_decode, t_detect, t_annotate, t_write;
} run;

static int write_labels(run *r, const frame *f, const strix_detections *d, const char *path)
{
    char *tmp = NULL;
    FILE *t = open_temp(path, &tmp);
    if (!t) {
        fprintf(stderr, "infer: %s: cannot create the file: %s (check that the directory is writable)\n", path,
                strerror(errno));
        return EXIT_OUTPUT;
    }
    float w = (float)f->img.width, h = (float)f->img.height;
    for (int i = 0; i < d->count; i++) {
        const strix_detection *b = &d->items[i];
        /* Ultralytics: xyxy2xywh in float32, then divided by the image size */
        float cx = (b->x1 + b->x2) / 2 / w, cy = (b->y1 + b->y2) / 2 / h;
        float bw = (b->x2 - b->x1) / w, bh = (b->y2 - b->y1) / h;
        fprintf(t, "%d %g %g %g %g", b->class_id, (double)cx, (double)cy, (double)bw, (double)bh);
        if (r->o->save_conf) fprintf(t, " %g", (double)b->score);
        fputc('\n', t);
    }
    return commit_temp(t, tmp, path, r->o->overwrite);
}

static const char *class_name(const run *r, int id)
{
    return id >= 0 && id < r->n_names ? r->names[id] : "?";
}

static void json_image(run *r, const frame *f, const strix_detections *d)
{
    FILE *j = r->json;
    fputs(r->first_image ? "\n    " : ",\n    ", j);
    r->first_image = 0;
    fputs("{\"image\": ", j);
    json_str(j, f->name);
    fprintf(j, ", \"width\": %d, \"height\": %d, \"detections\": [", f->img.width, f->img.height);
    for (int i = 0; i < d->count; i++) {
        const strix_detection *b = &d->items[i];
        fprintf(j, "%s\n      {\"class_id\": %d, \"class_name\": ", i ? "," : "", b->class_id);
        json_str(j, class_name(r, b->class_id));
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
            int rc = write_labels(r, f, &dets[i], p->label_out);
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

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        free(o.inputs);
        return rc < 0 ? 0 : rc;
    }
    double t_start = now_ms();

    strlist inputs = {0}, created = {0};
    plan_entry *plan = NULL;
    char *json_path = NULL, *labels_dir = NULL;
    strix_model *model = NULL;
    const char **names = NULL;
    run r;
    memset(&r, 0, sizeof r);

    rc = expand_inputs(&o, &inputs);
    if (rc) goto out;

    if (o.json) {
        json_path = strdup(o.json);
    } else {
        size_t n = strlen(o.out) + 32;
        if ((json_path = malloc(n))) snprintf(json_path, n, "%s/detections.json", o.out);
    }
    plan = calloc((size_t)inputs.n, sizeof *plan);
    if (!json_path || !plan) {
        rc = EXIT_NOMEM;
        fprintf(stderr, "infer: out of memory\n");
        goto out;
    }
    rc = plan_outputs(&o, &inputs, plan, json_path);
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

    /* from here on a signal finishes the current batch and stops cleanly */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND; /* a second signal stops at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.yaml_path = o.model;
    mo.weights_path = o.weights;
    mo.scale = o.scale;
    mo.nc = o.nc;
    mo.threads = o.threads;
    mo.device = o.device;
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

    r.o = &o;
    r.plan = plan;
    r.model = model;
    r.names = names;
    r.n_names = nc;
    if (g_stop) { /* interrupted while loading: nothing written yet */
        fprintf(stderr, "infer: interrupted before the first image\n");
        rc = EXIT_INTERRUPTED;
        goto out;
    }
    rc = start_json(&r, json_path);
    if (rc) goto out;

    image_list il = {&inputs, 0};
    frame_source src = {image_list_next, &il};
    rc = process_all(&r, &src, inputs.n);
    if (!rc) rc = finish_json(&r, json_path);

    if (!o.quiet || rc || r.first_fail || g_stop) {
        FILE *s = rc || r.first_fail || g_stop ? stderr : stdout;
        fprintf(s, "infer: %ld image%s, %ld detection%s in %.2f s (decode %.0f ms, detect %.0f ms, "
                "annotate %.0f ms, write %.0f ms)",
                r.images, r.images == 1 ? "" : "s", r.detections, r.detections == 1 ? "" : "s",
                (now_ms() - t_start) / 1e3, r.t_decode, r.t_detect, r.t_annotate, r.t_write);
        int failed = r.err_names.n;
        if (failed) fprintf(s, "; %d image%s failed", failed, failed == 1 ? "" : "s");
        if (g_stop) fprintf(s, "; interrupted after %ld of %d", r.images + failed, inputs.n);
        if (!rc) fprintf(s, "; results in %s", o.save || o.txt ? o.out : json_path);
        fputc('\n', s);
    }
    if (!rc && g_stop) rc = EXIT_INTERRUPTED;
    if (!rc) rc = r.first_fail;

out:
    if (r.json) abandon_temp(r.json, r.json_tmp);
    if (rc) remove_created(&created); /* only the empty ones go */
    if (model) strix_model_free(model);
    free(names);
    if (plan)
        for (int i = 0; i < inputs.n; i++) {
            free(plan[i].image_out);
            free(plan[i].label_out);
        }
    free(plan);
    free(json_path);
    free(labels_dir);
    list_free(&r.err_names);
    list_free(&r.err_msgs);
    list_free(&inputs);
    list_free(&created);
    free(o.inputs);
    return rc;
}
