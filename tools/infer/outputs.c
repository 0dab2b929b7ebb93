/* outputs.c — the infer job's output paths: planned for every image and
 * video before any work, refused when two inputs would write one file, when
 * an output would write over a file the run reads or exists without
 * --overwrite (tools/outguard.h); the output directories made (and removed
 * again when still empty after a failed run); stale temporary files swept;
 * and each finished file published whole (loaders/outfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job.h"
#include "outfile.h"
#include "tools/outguard.h"

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
void remove_created(strlist *created)
{
    for (int i = created->n - 1; i >= 0; i--) rmdir(created->v[i]);
}

/* Move the finished file tmp to path (refusing to replace an existing file
 * unless overwrite); tmp is gone afterwards either way, and freed. */
int commit_file(char *tmp, const char *path, int overwrite)
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
int commit_temp(FILE *f, char *tmp, const char *path, int overwrite)
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

void abandon_temp(FILE *f, char *tmp)
{
    if (f) fclose(f);
    if (tmp) unlink(tmp);
    free(tmp);
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

void free_run_outputs(inputs *in, plan_entry *plan, video_plan *vplan, char *json_path, char *labels_dir,
                      strlist *created)
{
    for (int i = 0; plan && i < in->images.n; i++) {
        free(plan[i].image_out);
        free(plan[i].label_out);
    }
    free(plan);
    free_video_plans(vplan, in->videos.n);
    free(json_path);
    free(labels_dir);
    list_free(&in->images);
    list_free(&in->videos);
    list_free(created);
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

/* The run's output paths (*json_path_out: the images' JSON report;
 * *plan_out, *vplan_out: each image's and video's outputs; *labels_dir_out:
 * OUT/labels with --txt), the output directories made (recorded in
 * created), the checks before any work and the sweep of stale temporary
 * files; an exit code, its message printed.  The caller frees what it
 * received, on failure too. */
int plan_run_outputs(const options *o, const inputs *in, char **json_path_out, plan_entry **plan_out,
                     video_plan **vplan_out, char **labels_dir_out, strlist *created)
{
    int n_img = in->images.n, n_vid = in->videos.n, rc = 0;
    char *json_path, *labels_dir = NULL;
    plan_entry *plan;
    video_plan *vplan;
    if (o->json) {
        *json_path_out = json_path = strdup(o->json);
    } else {
        size_t n = strlen(o->out) + 32;
        if ((*json_path_out = json_path = malloc(n))) snprintf(json_path, n, "%s/detections.json", o->out);
    }
    *plan_out = plan = calloc((size_t)n_img + 1, sizeof *plan);
    *vplan_out = vplan = calloc((size_t)n_vid + 1, sizeof *vplan);
    if (!json_path || !plan || !vplan) {
        rc = EXIT_NOMEM;
        fprintf(stderr, "infer: out of memory\n");
        return rc;
    }
    if (n_img) rc = plan_outputs(o, &in->images, plan);
    if (!rc && n_vid) rc = plan_videos(o, &in->videos, vplan);
    if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
    if (rc) return rc;
    if (o->json) {
        struct stat st;
        if (stat(o->json, &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infer: --json %s: is a directory; --json names a file (such as %s/%s)\n", o->json,
                    o->json, n_vid ? "detections.jsonl" : "detections.json");
            rc = EXIT_OUTPUT;
            return rc;
        }
        char *d = dir_of(o->json);
        int ok = d && stat(d, &st) == 0 && S_ISDIR(st.st_mode);
        if (!ok) fprintf(stderr, "infer: %s: the directory %s does not exist (create it first)\n", o->json, d ? d : "?");
        free(d);
        if (!ok) {
            rc = EXIT_OUTPUT;
            return rc;
        }
    }

    /* output directories before the model: a bad --out fails fast */
    if (o->save || o->txt || !o->json) rc = make_dirs(o->out, created);
    if (!rc && o->txt) {
        size_t n = strlen(o->out) + 8;
        if (!(*labels_dir_out = labels_dir = malloc(n))) rc = EXIT_NOMEM;
        else {
            snprintf(labels_dir, n, "%s/labels", o->out);
            rc = make_dirs(labels_dir, created);
        }
    }
    if (!rc) rc = check_outputs(o, in, plan, vplan, json_path);
    if (!rc) {
        char *json_dir = o->json ? dir_of(o->json) : NULL;
        const char *dirs[3] = {o->save || o->txt || !o->json ? o->out : NULL, labels_dir, json_dir};
        sweep_stale(o, dirs, 3);
        free(json_dir);
    }
    if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
    return rc;
}
