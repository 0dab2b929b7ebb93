/* checkpoint.c — strix_checkpoint_open: tells the format of a weights file
 * and hands it to its reader; the owner the .pt and ONNX tensor sets keep. */
#include "checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileread.h"
#include "util.h"

strix_ckpt_owner *strix_ckpt_owner_new(const uint8_t *map, size_t len, int owns_map)
{
    strix_ckpt_owner *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->map = map;
    o->len = len;
    o->owns_map = owns_map;
    return o;
}

void *strix_ckpt_owner_alloc(strix_ckpt_owner *o, size_t n)
{
    if (o->n == o->cap) {
        size_t c = o->cap ? 2 * o->cap : 16;
        void **b = realloc(o->bufs, c * sizeof *b);
        if (!b) return NULL;
        o->bufs = b;
        o->cap = c;
    }
    void *p = malloc(n ? n : 1);
    if (p) o->bufs[o->n++] = p;
    return p;
}

void strix_ckpt_owner_release(void *owner)
{
    strix_ckpt_owner *o = owner;
    if (!o) return;
    for (size_t i = 0; i < o->n; i++) free(o->bufs[i]);
    free(o->bufs);
    if (o->owns_map) strix_file_unmap(o->map, o->len);
    free(o);
}

void strix_checkpoint_close(strix_checkpoint *c)
{
    strix_st_close(c->tensors);
    free(c->yaml);
    for (int i = 0; i < c->n_names; i++) free(c->names[i]);
    free(c->names);
    free(c->description);
    memset(c, 0, sizeof *c);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

strix_status strix_checkpoint_open(strix_checkpoint *c, const char *path, strix_error *err)
{
    memset(c, 0, sizeof *c);
    int onnx = ends_with(path, ".onnx") || ends_with(path, ".ONNX");
    if (!onnx) {
        /* a .pt is a ZIP: "PK\3\4"; a safetensors file starts with its header size */
        FILE *f;
        struct stat sb;
        strix_file_open(path, &f, &sb); /* not a regular file: strix_st_open says so */
        unsigned char sig[4] = {0};
        size_t got = f ? fread(sig, 1, 4, f) : 0;
        if (f) fclose(f);
        if (got < 4 || memcmp(sig, "PK\3\4", 4)) {
            c->format = "safetensors";
            return strix_st_open(&c->tensors, path, err);
        }
    }
    const uint8_t *map;
    size_t len;
    strix_status st = strix_file_map(path, STRIX_CKPT_MAX_BYTES, &map, &len, err);
    if (st) return st;
    return onnx ? strix_onnx_read(c, path, map, len, 1, err) : strix_pt_read(c, path, map, len, 1, err);
}
