/* inputs.c — the infer job's inputs: each INPUT (a file, a directory, a
 * glob pattern, an image-sequence pattern, a URL) expanded into the images
 * (stb) and the videos (FFmpeg), in order; and the files an image-sequence
 * pattern names, which the output checks count among the files read. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "job.h"

int list_add(strlist *l, const char *s)
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

void list_free(strlist *l)
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
int is_ffmpeg_source(const char *s)
{
    size_t k = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
    if (k >= 2 && s[k] == ':') return 1;
    for (const char *p = strchr(s, '%'); p; p = strchr(p + 1, '%')) {
        size_t d = strspn(p + 1, "0123456789");
        if (p[1 + d] == 'd') return 1;
    }
    return 0;
}

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

int expand_inputs(const options *o, inputs *l)
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

/* Files an image-sequence pattern ("frames/%04d.png") names, as FFmpeg's
 * image2 reads them: from the first of numbers 0..4 that exists, up to the
 * first gap; added to l.  Patterns with other conversions add nothing. */
int add_sequence_files(const char *pattern, strlist *l)
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
