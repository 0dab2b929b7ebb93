/* outguard.h — the tools' check that no output of a run writes over a file
 * the same run reads (weights, model YAML, names, inputs, a replayed
 * detections file), whatever the flags (--overwrite included), and that no
 * two outputs of a run are one file.  Files are compared by device and
 * inode, so other spellings, symbolic and hard links are caught; an output
 * that does not exist yet is compared by its directory's device and inode
 * and its name.  Header-only: each tool is one .c file. */
#ifndef STRIX_OUTGUARD_H
#define STRIX_OUTGUARD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exitcodes.h"

/* Where a path's file is, or would be: the file's device and inode when it
 * exists; else its directory's and its name.  0 when neither exists. */
typedef struct guard_key {
    dev_t dev;
    ino_t ino;
    const char *name; /* NULL for an existing file */
    const char *path;
} guard_key;

static inline int guard_key_of(const char *path, guard_key *k)
{
    struct stat st;
    memset(k, 0, sizeof *k);
    k->path = path;
    if (stat(path, &st) == 0) {
        k->dev = st.st_dev;
        k->ino = st.st_ino;
        return 1;
    }
    const char *slash = strrchr(path, '/');
    k->name = slash ? slash + 1 : path;
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *dir = malloc(n + 1);
    if (!dir) return 0;
    if (slash) memcpy(dir, slash == path ? "/" : path, slash == path ? 1 : n);
    else dir[0] = '.';
    dir[slash == path ? 1 : n] = 0;
    int ok = stat(dir, &st) == 0;
    free(dir);
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    return ok;
}

static inline int guard_same(const guard_key *a, const guard_key *b)
{
    return a->dev == b->dev && a->ino == b->ino && (a->name == NULL) == (b->name == NULL) &&
           (!a->name || !strcmp(a->name, b->name));
}

static inline int guard_cmp(const void *x, const void *y)
{
    const guard_key *a = x, *b = y;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    if (a->ino != b->ino) return a->ino < b->ino ? -1 : 1;
    if (!a->name || !b->name) return (a->name != NULL) - (b->name != NULL);
    return strcmp(a->name, b->name);
}

/* Refuse, with one line on stderr ("TOOL: ..."), an output (outs, NULLs
 * skipped) that is one of the files the run reads (ins, NULLs skipped;
 * missing ones cannot be written over) or the same file as another output.
 * hint says what to change.  Returns 0, EXIT_OUTPUT or EXIT_NOMEM (not
 * printed: the caller says it). */
static inline int guard_outputs(const char *tool, const char *const *outs, int n_out, const char *const *ins, int n_in,
                         const char *hint)
{
    guard_key *k = malloc(sizeof *k * (size_t)(n_out > 0 ? n_out : 1));
    if (!k) return EXIT_NOMEM;
    int n = 0, rc = 0;
    for (int i = 0; i < n_out; i++)
        if (outs[i] && guard_key_of(outs[i], &k[n])) n++;
    qsort(k, (size_t)n, sizeof *k, guard_cmp);
    for (int i = 1; i < n && !rc; i++)
        if (guard_same(&k[i - 1], &k[i])) {
            fprintf(stderr, "%s: %s and %s are the same file: two outputs of this run would write it (%s)\n", tool,
                    k[i - 1].path, k[i].path, hint);
            rc = EXIT_OUTPUT;
        }
    for (int i = 0; i < n_in && !rc; i++) {
        struct stat st;
        if (!ins[i] || stat(ins[i], &st) != 0) continue;
        guard_key in = {st.st_dev, st.st_ino, NULL, ins[i]};
        const guard_key *hit = bsearch(&in, k, (size_t)n, sizeof *k, guard_cmp);
        if (hit) {
            fprintf(stderr, "%s: %s would write over %s, which this run reads (%s)\n", tool, hit->path, ins[i], hint);
            rc = EXIT_OUTPUT;
        }
    }
    free(k);
    return rc;
}

#endif
