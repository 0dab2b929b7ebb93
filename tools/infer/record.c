/* record.c — the completion record of a manifest item (worker.h): what
 * says "this item is done with these options", so a retried or re-run worker
 * skips it.  The record is rendered from the present state (input identity,
 * options digest, the item directory's files and sizes) and published last,
 * atomically (loaders/outfile.h); an item is done when the record file holds
 * exactly what would be rendered now, so a changed input, other options, or
 * an output deleted or truncated since all make the item run again. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileread.h"
#include "jsonl.h"
#include "outfile.h"
#include "worker.h"

uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The file's bytes into *h; 0 or -1 with errno. */
static int digest_file(uint64_t *h, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    static const size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return -1;
    }
    size_t got;
    while ((got = fread(buf, 1, chunk, f)) > 0) *h = fnv1a(*h, buf, got);
    int bad = ferror(f);
    free(buf);
    fclose(f);
    if (bad) errno = EIO;
    return bad ? -1 : 0;
}

int options_digest(int argc, char **argv, char hex[17], char *err, size_t errn)
{
    /* options that change no output: skipped with their values */
    static const char *const skip_val[] = {"--manifest", "--shard", "--shards", "--out", "--metrics-port",
                                           "--metrics-file", "--jobs", "--threads", "--batch"};
    static const char *const skip_flag[] = {"--overwrite", "--quiet"};
    static const char *const files[] = {"--model", "--weights", "--names", "--tracker", "--detections"};
    uint64_t h = fnv1a(FNV1A_INIT, STRIX_VERSION, sizeof STRIX_VERSION);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        const char *val = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
        int skip = 0, file = 0;
        for (size_t k = 0; k < sizeof skip_val / sizeof *skip_val; k++)
            if (strlen(skip_val[k]) == nl && !strncmp(a, skip_val[k], nl)) skip = eq ? 1 : 2;
        for (size_t k = 0; k < sizeof skip_flag / sizeof *skip_flag; k++)
            if (!strcmp(a, skip_flag[k])) skip = 1;
        if (skip) {
            i += skip - 1;
            continue;
        }
        for (size_t k = 0; k < sizeof files / sizeof *files; k++)
            if (strlen(files[k]) == nl && !strncmp(a, files[k], nl)) file = 1;
        struct stat st;
        if (file && val && stat(val, &st) == 0 && S_ISREG(st.st_mode)) { /* the name and the file's bytes */
            h = fnv1a(h, a, nl + 1);
            i += !eq;
            if (digest_file(&h, val) != 0) {
                snprintf(err, errn, "%s: cannot read: %s (needed for the options digest)", val, strerror(errno));
                return errno == ENOMEM ? EXIT_NOMEM : EXIT_INPUT;
            }
        } else h = fnv1a(h, a, strlen(a) + 1);
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The files under dir/rel (recursive, sorted, hidden names and the record
 * left out) as {"file": REL, "size": N} items; 0 or -1 (out of memory). */
static int list_outputs(FILE *f, const char *dir, const char *rel, int *first)
{
    size_t dl = strlen(dir) + strlen(rel) + 2;
    char *path = malloc(dl);
    if (!path) return -1;
    snprintf(path, dl, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    free(path);
    if (!d) return 0;
    strlist names = {0};
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) && !rc;)
        if (e->d_name[0] != '.' && (*rel || strcmp(e->d_name, RECORD_NAME)) && !list_add(&names, e->d_name)) rc = -1;
    closedir(d);
    if (names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    for (int i = 0; i < names.n && !rc; i++) {
        size_t n = strlen(rel) + strlen(names.v[i]) + 2;
        char *r = malloc(n), *full = malloc(strlen(dir) + n + 1);
        if (!r || !full) rc = -1;
        struct stat st;
        if (!rc) {
            snprintf(r, n, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
            sprintf(full, "%s/%s", dir, r);
        }
        if (!rc && lstat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode)) rc = list_outputs(f, dir, r, first);
            else if (S_ISREG(st.st_mode)) {
                fprintf(f, "%s\n  {\"file\": ", *first ? "" : ",");
                strix_json_str(f, r);
                fprintf(f, ", \"size\": %lld}", (long long)st.st_size);
                *first = 0;
            }
        }
        free(r);
        free(full);
    }
    list_free(&names);
    return rc;
}

char *record_render(const char *dir, const char *input, const char *digest, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    fprintf(f, "{\"strix_record\": 1,\n \"input\": ");
    strix_json_str(f, input);
    struct stat st;
    if (stat(input, &st) == 0) /* a file: its size and time; a URL: its name only */
        fprintf(f, ", \"size\": %lld, \"mtime_ns\": %lld%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                st.st_mtim.tv_nsec);
    fprintf(f, ",\n \"options\": \"%s\",\n \"outputs\": [", digest);
    int first = 1, rc = list_outputs(f, dir, "", &first);
    fprintf(f, "]}\n");
    if (fclose(f) != 0 || rc) {
        free(text);
        return NULL;
    }
    return text;
}

int record_matches(const char *dir, const char *input, const char *digest)
{
    size_t n = strlen(dir) + sizeof RECORD_NAME + 1, len, want_len;
    char *path = malloc(n), *have = NULL, *want = NULL;
    int match = 0;
    strix_error e;
    if (path) {
        snprintf(path, n, "%s/%s", dir, RECORD_NAME);
        if (strix_file_read(path, 1 << 26, &have, &len, &e) == STRIX_OK &&
            (want = record_render(dir, input, digest, &want_len)))
            match = len == want_len && !memcmp(have, want, len);
    }
    free(path);
    free(have);
    free(want);
    return match;
}

int record_write(const char *dir, const char *input, const char *digest)
{
    size_t n = strlen(dir) + sizeof RECORD_NAME + 1, len;
    char *path = malloc(n), *text = record_render(dir, input, digest, &len), *tmp = NULL;
    FILE *f = NULL;
    int rc = 0;
    if (!path || !text) rc = EXIT_NOMEM;
    if (!rc) snprintf(path, n, "%s/%s", dir, RECORD_NAME);
    if (!rc && !(f = strix_temp_open(path, &tmp))) {
        fprintf(stderr, "infer: %s: cannot create: %s (check the output directory)\n", path, strerror(errno));
        rc = EXIT_OUTPUT;
    }
    if (!rc) {
        fwrite(text, 1, len, f);
        rc = commit_temp(f, tmp, path, 1);
    }
    if (rc == EXIT_NOMEM) fprintf(stderr, "infer: out of memory\n");
    free(path);
    free(text);
    return rc;
}

void item_clear(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    size_t dl = strlen(dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char *p = malloc(dl + strlen(e->d_name) + 2);
        if (!p) break;
        sprintf(p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            item_clear(p);
            rmdir(p);
        } else unlink(p);
        free(p);
    }
    closedir(d);
}
