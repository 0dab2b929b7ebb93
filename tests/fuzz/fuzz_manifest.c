/* fuzz_manifest.c — libFuzzer target: a work list (`infer --manifest FILE`,
 * what a batch engine hands every worker) through manifest_parse.
 * tools/infer/manifest.c is compiled into this target, not linked: the
 * infer job's archive needs FFmpeg, and the fuzz build is the library alone
 * (manifest.c itself needs only the library's JSON reader).
 * Checked beyond memory safety: a list it accepts has items, each with an
 * input and a name that can be a directory's (1..200 bytes, not hidden, no
 * '/' or control character), lines and indexes in order, no two names
 * alike; a list it refuses has a message of one line and no items (and
 * LeakSanitizer sees anything left allocated). */
#define _GNU_SOURCE /* memfd_create in fuzz.h */
#include "tools/infer/manifest.c"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    work_list wl;
    char err[512] = "";
    int rc = manifest_parse("fuzz.txt", (const char *)data, size, &wl, err, sizeof err);
    if (rc) {
        if (!err[0] || strchr(err, '\n') || wl.n || wl.v) __builtin_trap();
        return 0;
    }
    if (wl.n < 1) __builtin_trap();
    for (long i = 0; i < wl.n; i++) {
        const work_item *w = &wl.v[i];
        if (!w->input || !w->input[0] || !w->name || !w->name[0] || w->name[0] == '.' ||
            strlen(w->name) > NAME_MAX_LEN || w->index != i)
            __builtin_trap();
        for (const char *c = w->name; *c; c++)
            if (*c == '/' || (unsigned char)*c < 0x20) __builtin_trap();
        if (i && w->line <= wl.v[i - 1].line) __builtin_trap();
        for (long j = 0; j < i; j++)
            if (!strcmp(wl.v[j].name, w->name)) __builtin_trap();
    }
    work_list_free(&wl);
    return 0;
}
