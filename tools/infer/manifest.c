/* manifest.c — the work list of `infer --manifest FILE` (worker.h): one
 * item per line, a bare path/URL or a JSON object {"input": ..., "output":
 * ...} read with the strict JSON reader (loaders/json.h); each item's output
 * name checked and unique, so two items never share an output directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileread.h"
#include "json.h"
#include "worker.h"

#define MANIFEST_MAX_BYTES ((size_t)1 << 30)
#define NAME_MAX_LEN 200

void work_list_free(work_list *wl)
{
    for (long i = 0; i < wl->n; i++) {
        free(wl->v[i].input);
        free(wl->v[i].name);
    }
    free(wl->v);
    memset(wl, 0, sizeof *wl);
}

/* The default output name: the base name without its extension (a URL's
 * last path component, query dropped), other characters than
 * [A-Za-z0-9._+-] made '_', its first NAME_MAX_LEN bytes (a URL's last
 * component can be longer than a file name may be: the item's directory
 * could not be made, and the worker stopped there); "item" when nothing is
 * left.  malloc'd. */
static char *default_name(const char *input)
{
    size_t n = strcspn(input, "?#");
    while (n > 1 && input[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && input[b - 1] != '/') b--;
    size_t e = n;
    for (size_t k = n; k > b + 1; k--)
        if (input[k - 1] == '.') {
            e = k - 1;
            break;
        }
    if (e - b > NAME_MAX_LEN) e = b + NAME_MAX_LEN;
    char *s = malloc(e - b + 5);
    if (!s) return NULL;
    size_t m = 0;
    for (size_t k = b; k < e; k++) {
        char c = input[k];
        s[m++] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("._+-", c)
                     ? c : '_';
    }
    if (!m) m = (size_t)sprintf(s, "item");
    if (s[0] == '.') s[0] = '_'; /* hidden names are the worker's own (lock, temporaries) */
    s[m] = 0;
    return s;
}

/* An explicit output name: a single path component that is not hidden. */
static const char *bad_name(const char *s)
{
    if (!*s) return "is empty";
    if (s[0] == '.') return "starts with '.' (hidden names are the worker's own)";
    if (strlen(s) > NAME_MAX_LEN) return "is longer than 200 bytes";
    for (const char *c = s; *c; c++)
        if (*c == '/' || (unsigned char)*c < 0x20) return "holds a '/' or a control character";
    return NULL;
}

static int add_item(work_list *wl, const char *input, size_t in_len, char *name, long line)
{
    if (wl->n == wl->cap) {
        long cap = wl->cap ? 2 * wl->cap : 64;
        work_item *v = realloc(wl->v, sizeof *v * (size_t)cap);
        if (!v) return EXIT_NOMEM;
        wl->v = v;
        wl->cap = cap;
    }
    char *in = malloc(in_len + 1);
    if (!in) return EXIT_NOMEM;
    memcpy(in, input, in_len);
    in[in_len] = 0;
    if (!name && !(name = default_name(in))) {
        free(in);
        return EXIT_NOMEM;
    }
    wl->v[wl->n] = (work_item){in, name, line, wl->n};
    wl->n++;
    return 0;
}

/* A JSON line, in place (strings decode into the line itself). */
static int parse_object(const char *path, long line, char *s, size_t n, work_list *wl, char *err, size_t errn)
{
    strix_json j;
    strix_json_init(&j, s, n, s, "line");
    const char *input = NULL, *output = NULL, *key;
    size_t in_len = 0, len;
    int count = 0, more;
    if (strix_json_expect(&j, '{', "'{'")) goto syntax;
    while ((more = strix_json_more(&j, '}', &count)) > 0) {
        if (strix_json_string(&j, &key, &len) || strix_json_expect(&j, ':', "':'")) goto syntax;
        int is_in = !strcmp(key, "input"), is_out = !strcmp(key, "output");
        if (!is_in && !is_out) {
            char q[STRIX_QUOTE_MAX];
            snprintf(err, errn, "%s:%ld: unknown key \"%s\" (an item has \"input\" and optionally \"output\")", path,
                     line, strix_quote(q, key));
            return EXIT_USAGE;
        }
        if ((is_in && input) || (is_out && output)) {
            snprintf(err, errn, "%s:%ld: \"%s\" given twice", path, line, key);
            return EXIT_USAGE;
        }
        if (strix_json_peek(&j) != '"') {
            snprintf(err, errn, "%s:%ld: \"%s\" must be a string, found %s", path, line, key, strix_json_found(&j));
            return EXIT_USAGE;
        }
        if (strix_json_string(&j, is_in ? &input : &output, &len)) goto syntax;
        if (j.nul) {
            snprintf(err, errn, "%s:%ld: \"%s\" holds a \\u0000", path, line, key);
            return EXIT_USAGE;
        }
        if (is_in) in_len = len;
    }
    if (more < 0) goto syntax;
    if (strix_json_peek(&j) >= 0) {
        strix_json_syntax(&j, "the end of the line");
        goto syntax;
    }
    if (!input || !in_len) {
        snprintf(err, errn, "%s:%ld: the item has no \"input\" (or an empty one)", path, line);
        return EXIT_USAGE;
    }
    const char *why = output ? bad_name(output) : NULL;
    if (why) {
        char q[STRIX_QUOTE_MAX];
        snprintf(err, errn, "%s:%ld: \"output\" \"%s\" %s (give a plain file name)", path, line,
                 strix_quote(q, output), why);
        return EXIT_USAGE;
    }
    char *name = output ? strdup(output) : NULL;
    if (output && !name) return EXIT_NOMEM;
    int rc = add_item(wl, input, in_len, name, line);
    if (rc) free(name);
    return rc;
syntax:
    snprintf(err, errn, "%s:%ld: %s at byte %zu (a JSON item is {\"input\": \"PATH\", \"output\": \"NAME\"})", path,
             line, j.err, j.err_pos + 1);
    return EXIT_USAGE;
}

static int cmp_name(const void *a, const void *b)
{
    const work_item *x = *(const work_item *const *)a, *y = *(const work_item *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Two items with one output name: report the pair with the earliest second line. */
static int check_unique(const char *path, work_list *wl, char *err, size_t errn)
{
    if (wl->n < 2) return 0;
    work_item **p = malloc(sizeof *p * (size_t)wl->n);
    if (!p) return EXIT_NOMEM;
    for (long i = 0; i < wl->n; i++) p[i] = &wl->v[i];
    qsort(p, (size_t)wl->n, sizeof *p, cmp_name);
    const work_item *a = NULL, *b = NULL;
    for (long i = 1; i < wl->n; i++)
        if (!strcmp(p[i - 1]->name, p[i]->name) && (!b || p[i]->line < b->line)) {
            a = p[i - 1];
            b = p[i];
        }
    free(p);
    if (!b) return 0;
    snprintf(err, errn, "%s:%ld: output name \"%.60s\" is also that of line %ld (give each item its own \"output\")",
             path, b->line, b->name, a->line);
    return EXIT_USAGE;
}

int manifest_parse(const char *path, const char *text, size_t n, work_list *wl, char *err, size_t errn)
{
    memset(wl, 0, sizeof *wl);
    char *copy = malloc(n + 1);
    if (!copy) {
        snprintf(err, errn, "%s: out of memory", path);
        return EXIT_NOMEM;
    }
    memcpy(copy, text, n);
    copy[n] = 0;
    int rc = 0;
    long line = 0;
    for (size_t at = 0; at < n && !rc;) {
        char *s = copy + at;
        size_t len = strcspn(s, "\n");
        at += len + 1;
        line++;
        if (memchr(s, 0, len)) {
            snprintf(err, errn, "%s:%ld: holds a NUL byte (a manifest is text)", path, line);
            rc = EXIT_USAGE;
            break;
        }
        s[len] = 0;
        while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t')) s[--len] = 0;
        while (*s == ' ' || *s == '\t') {
            s++;
            len--;
        }
        if (!len || *s == '#') continue;
        if (*s == '{') rc = parse_object(path, line, s, len, wl, err, errn);
        else rc = add_item(wl, s, len, NULL, line);
        if (rc == EXIT_NOMEM) snprintf(err, errn, "%s:%ld: out of memory", path, line);
    }
    free(copy);
    if (!rc && !wl->n) {
        snprintf(err, errn, "%s: no items (one path or {\"input\": ...} per line expected)", path);
        rc = EXIT_USAGE;
    }
    if (!rc && (rc = check_unique(path, wl, err, errn)) == EXIT_NOMEM) snprintf(err, errn, "%s: out of memory", path);
    if (rc) work_list_free(wl);
    return rc;
}

int manifest_read(const char *path, work_list *wl, char *err, size_t errn)
{
    char *text;
    size_t n;
    strix_error e;
    strix_status st = strix_file_read(path, MANIFEST_MAX_BYTES, &text, &n, &e);
    if (st) {
        memset(wl, 0, sizeof *wl);
        snprintf(err, errn, "%s (the --manifest file)", e.message);
        return st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_INPUT;
    }
    int rc = manifest_parse(path, text, n, wl, err, errn);
    free(text);
    return rc;
}
