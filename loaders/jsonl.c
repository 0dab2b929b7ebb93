/* jsonl.c — reads infer's video JSON Lines (format in jsonl.h) with strix's
 * JSON reader (json.h, shared with the safetensors header reader), and
 * holds the JSON writers infer uses, so what it writes and what this reads
 * are kept together.
 *
 * Lines are read with getline(3) at any length; strings decode in place in
 * the line buffer and numbers convert from their text (strtof/strtod/strtoll,
 * the C locale as everywhere in strix, so floats read back bit-exactly), so
 * a record allocates nothing once the buffers have grown.
 */
#include "jsonl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "json.h"
#include "util.h"

struct strix_jsonl_reader {
    FILE *fp;
    char *path;
    char *line; /* getline's buffer */
    size_t line_cap;
    long lineno;
    long prev_frame, prev_line; /* the last record's frame and line; prev_line 0 before any */
    int had_header;
    int failed;
    strix_detection *dets;
    int *track_ids;
    strix_detection *raw; /* the detections with "detection_box" where given */
    int det_cap;
    char **names;     /* [name_cap]: class names, NULL where none seen */
    long *name_lines; /* [name_cap]: line where each name was first seen */
    int name_cap;
    int class_count;
};

/* The line being parsed. */
typedef struct parser {
    strix_jsonl_reader *r;
    strix_json j;   /* over the line, decoding strings in place */
    int det;        /* index of the detection being read, -1 outside */
    strix_error *err;
} parser;

/* "path:line: [detection N: ]what" — returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int failv(parser *P, strix_status st, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char where[32] = "";
    if (P->det >= 0) snprintf(where, sizeof where, "detection %d: ", P->det);
    strix_fail(P->err, st, "%s:%ld: %s%s", P->r->path, P->r->lineno, where, what);
    return -1;
}
#define FAIL(P, ...) failv(P, STRIX_E_IO, __VA_ARGS__)

/* The JSON reader's error, with the 1-based byte column where it is. */
static int syntax(parser *P)
{
    return FAIL(P, "column %ld: %s", (long)P->j.err_pos + 1, P->j.err);
}

/* The next byte after whitespace, -1 at the end of the line. */
static int peek(parser *P) { return strix_json_peek(&P->j); }

/* Walks an object's members: calls member(P, key, keylen, ctx) with the
 * cursor on each value. */
typedef int (*member_fn)(parser *P, const char *key, size_t len, void *ctx);

static int object(parser *P, member_fn member, void *ctx)
{
    if (strix_json_expect(&P->j, '{', "'{'")) return syntax(P);
    int count = 0, more;
    while ((more = strix_json_more(&P->j, '}', &count)) > 0) {
        const char *key;
        size_t len;
        if (strix_json_string(&P->j, &key, &len) || strix_json_expect(&P->j, ':', "':'")) return syntax(P);
        if (member(P, key, len, ctx)) return -1;
    }
    return more < 0 ? syntax(P) : 0;
}

static int skip_value(parser *P) { return strix_json_skip(&P->j) ? syntax(P) : 0; }

static int key_is(const char *key, size_t len, const char *name)
{
    return len == strlen(name) && !memcmp(key, name, len);
}

/* An integer value in [lo, hi]; `null_ok` lets null through as *v = -1. */
static int integer(parser *P, const char *name, long long lo, long long hi, int null_ok, long long *v)
{
    if (null_ok && strix_json_null(&P->j)) {
        *v = -1;
        return 0;
    }
    const char *tok;
    size_t len;
    int integral, c = peek(P);
    if (c != '-' && !(c >= '0' && c <= '9'))
        return FAIL(P, "\"%s\" must be an integer%s", name, null_ok ? " or null" : "");
    if (strix_json_number(&P->j, &tok, &len, &integral)) return syntax(P);
    if (!integral) return FAIL(P, "\"%s\" must be an integer (got %.*s)", name, (int)len, tok);
    errno = 0;
    long long x = strtoll(tok, NULL, 10); /* stops at the number's end (the line is NUL-terminated) */
    if (errno == ERANGE || x < lo || x > hi)
        return FAIL(P, "\"%s\" %.*s is out of range (%lld..%lld)", name, (int)len, tok, lo, hi);
    *v = x;
    return 0;
}

/* A number value (not null); *tok and *len give its text for messages. */
static int num_value(parser *P, const char *name, const char **tok, int *len)
{
    int integral, c = peek(P);
    size_t n;
    if (c != '-' && !(c >= '0' && c <= '9')) return FAIL(P, "\"%s\" must be a number", name);
    if (strix_json_number(&P->j, tok, &n, &integral)) return syntax(P);
    *len = (int)n;
    return 0;
}

enum { K_CLASS = 1, K_NAME = 2, K_SCORE = 4, K_BOX = 8, K_TRACK = 16, K_DBOX = 32 };

typedef struct det_ctx {
    int seen; /* K_ flags */
    strix_detection d;
    int track;
    float dbox[4]; /* "detection_box", when K_DBOX */
    const char *name; /* NULL: none given */
} det_ctx;

static int twice(parser *P, int *seen, int flag, const char *name)
{
    if (*seen & flag) return FAIL(P, "\"%s\" appears twice", name);
    *seen |= flag;
    return 0;
}

/* An array of exactly 4 finite numbers into b. */
static int box_value(parser *P, const char *name, float b[4])
{
    const char *tok = NULL;
    int n = 0;
    if (peek(P) != '[') return FAIL(P, "\"%s\" must be an array of 4 numbers", name);
    P->j.pos++;
    for (int i = 0; i < 4; i++) {
        if (i) { /* a comma between numbers */
            if (peek(P) != ',') return FAIL(P, "\"%s\" must be an array of 4 numbers", name);
            P->j.pos++;
        }
        int ch = peek(P);
        if (ch != '-' && !(ch >= '0' && ch <= '9')) return FAIL(P, "\"%s\" must be an array of 4 numbers", name);
        if (num_value(P, name, &tok, &n)) return -1;
        b[i] = strtof(tok, NULL);
        if (!isfinite(b[i])) return FAIL(P, "\"%s\" number %.*s is not finite", name, n, tok);
    }
    if (peek(P) != ']') return FAIL(P, "\"%s\" must be an array of 4 numbers", name);
    P->j.pos++;
    return 0;
}

static int det_member(parser *P, const char *key, size_t len, void *vctx)
{
    det_ctx *c = vctx;
    long long v;
    const char *tok = NULL;
    int n = 0;
    if (key_is(key, len, "class_id")) {
        if (twice(P, &c->seen, K_CLASS, "class_id") ||
            integer(P, "class_id", 0, STRIX_JSONL_MAX_CLASSES - 1, 0, &v))
            return -1;
        c->d.class_id = (int)v;
    } else if (key_is(key, len, "class_name")) {
        if (twice(P, &c->seen, K_NAME, "class_name")) return -1;
        if (strix_json_null(&P->j)) return 0;
        if (peek(P) != '"') return FAIL(P, "\"class_name\" must be a string or null");
        const char *s;
        if (strix_json_string(&P->j, &s, NULL)) return syntax(P);
        if (P->j.nul) return FAIL(P, "\"class_name\" contains a NUL character (\\u0000)");
        c->name = s;
    } else if (key_is(key, len, "score")) {
        if (twice(P, &c->seen, K_SCORE, "score") || num_value(P, "score", &tok, &n)) return -1;
        c->d.score = strtof(tok, NULL);
        if (!(c->d.score >= 0 && c->d.score <= 1)) return FAIL(P, "\"score\" %.*s is outside [0, 1]", n, tok);
    } else if (key_is(key, len, "box")) {
        float b[4];
        if (twice(P, &c->seen, K_BOX, "box") || box_value(P, "box", b)) return -1;
        c->d.x1 = b[0];
        c->d.y1 = b[1];
        c->d.x2 = b[2];
        c->d.y2 = b[3];
    } else if (key_is(key, len, "detection_box")) {
        if (twice(P, &c->seen, K_DBOX, "detection_box") || box_value(P, "detection_box", c->dbox)) return -1;
    } else if (key_is(key, len, "track_id")) {
        if (twice(P, &c->seen, K_TRACK, "track_id") || integer(P, "track_id", 0, INT_MAX, 1, &v)) return -1;
        c->track = (int)v;
    } else {
        return skip_value(P);
    }
    return 0;
}

/* Records the name of class_id (growing the table to it), or checks it
 * against the one seen before. */
static int class_seen(parser *P, int id, const char *name)
{
    strix_jsonl_reader *r = P->r;
    if (id >= r->name_cap) {
        int cap = r->name_cap ? r->name_cap : 16;
        while (cap <= id) cap = cap > STRIX_JSONL_MAX_CLASSES / 2 ? STRIX_JSONL_MAX_CLASSES : cap * 2;
        char **names = realloc(r->names, (size_t)cap * sizeof *names);
        if (names) r->names = names;
        long *lines = names ? realloc(r->name_lines, (size_t)cap * sizeof *lines) : NULL;
        if (!lines) return failv(P, STRIX_E_NOMEM, "out of memory for %d class names", cap);
        r->name_lines = lines;
        for (int i = r->name_cap; i < cap; i++) names[i] = NULL;
        r->name_cap = cap;
    }
    if (id + 1 > r->class_count) r->class_count = id + 1;
    if (!name) return 0;
    if (!r->names[id]) {
        if (!(r->names[id] = strdup(name))) return failv(P, STRIX_E_NOMEM, "out of memory for a class name");
        r->name_lines[id] = r->lineno;
        return 0;
    }
    if (strcmp(r->names[id], name))
        return FAIL(P, "class_id %d is \"%s\" here but \"%s\" on line %ld (one name per class)", id, name,
                    r->names[id], r->name_lines[id]);
    return 0;
}

static int detections(parser *P)
{
    strix_jsonl_reader *r = P->r;
    if (peek(P) != '[') return FAIL(P, "\"detections\" must be an array");
    P->j.pos++;
    int n = 0, more;
    while ((more = strix_json_more(&P->j, ']', &n)) > 0) {
        if (n > r->det_cap) {
            if (r->det_cap > INT_MAX / 2) return failv(P, STRIX_E_NOMEM, "too many detections");
            int cap = r->det_cap ? r->det_cap * 2 : 64;
            strix_detection *d = realloc(r->dets, (size_t)cap * sizeof *d);
            if (d) r->dets = d;
            int *t = d ? realloc(r->track_ids, (size_t)cap * sizeof *t) : NULL;
            if (t) r->track_ids = t;
            strix_detection *raw = t ? realloc(r->raw, (size_t)cap * sizeof *raw) : NULL;
            if (!raw) return failv(P, STRIX_E_NOMEM, "out of memory for %d detections", cap);
            r->raw = raw;
            r->det_cap = cap;
        }
        P->det = n - 1;
        det_ctx c = {0, {0, 0, 0, 0, 0, 0}, -1, {0, 0, 0, 0}, NULL};
        if (peek(P) != '{') return FAIL(P, "must be an object");
        if (object(P, det_member, &c)) return -1;
        const char *missing = !(c.seen & K_CLASS) ? "class_id" : !(c.seen & K_SCORE) ? "score"
                            : !(c.seen & K_BOX)   ? "box"
                                                  : NULL;
        if (missing) return FAIL(P, "\"%s\" is missing", missing);
        if (class_seen(P, c.d.class_id, c.name)) return -1;
        r->dets[n - 1] = c.d;
        r->track_ids[n - 1] = c.track;
        r->raw[n - 1] = c.d;
        if (c.seen & K_DBOX)
            r->raw[n - 1] = (strix_detection){c.dbox[0], c.dbox[1], c.dbox[2], c.dbox[3], c.d.score, c.d.class_id};
        P->det = -1;
    }
    return more < 0 ? syntax(P) : n;
}

enum { K_FRAME = 1, K_PTS = 2, K_INFERRED = 4, K_DETS = 8, K_HEADER = 16, K_EVENT = 32 };

typedef struct rec_ctx {
    int seen; /* K_FRAME ... flags */
    strix_jsonl_record *rec;
} rec_ctx;

static int rec_member(parser *P, const char *key, size_t len, void *vctx)
{
    rec_ctx *c = vctx;
    long long v;
    const char *tok = NULL;
    int n = 0;
    if (key_is(key, len, "frame")) {
        if (twice(P, &c->seen, K_FRAME, "frame") || integer(P, "frame", 0, LONG_MAX, 0, &v)) return -1;
        c->rec->frame = (long)v;
    } else if (key_is(key, len, "pts")) {
        if (twice(P, &c->seen, K_PTS, "pts") || num_value(P, "pts", &tok, &n)) return -1;
        c->rec->pts = strtod(tok, NULL);
        if (!isfinite(c->rec->pts)) return FAIL(P, "\"pts\" %.*s is not finite", n, tok);
    } else if (key_is(key, len, "inferred")) {
        if (twice(P, &c->seen, K_INFERRED, "inferred")) return -1;
        if (!strix_json_bool(&P->j, &c->rec->inferred)) return FAIL(P, "\"inferred\" must be true or false");
    } else if (key_is(key, len, "detections")) {
        if (twice(P, &c->seen, K_DETS, "detections") || (n = detections(P)) < 0) return -1;
        c->rec->n = n;
    } else if (key_is(key, len, "header")) { /* the run's header line: checked, not read */
        if (twice(P, &c->seen, K_HEADER, "header")) return -1;
        if (peek(P) != '{') return FAIL(P, "\"header\" must be an object");
        return skip_value(P);
    } else if (key_is(key, len, "event")) { /* a live run's event (a reconnect): checked, not read */
        if (twice(P, &c->seen, K_EVENT, "event")) return -1;
        if (peek(P) != '{') return FAIL(P, "\"event\" must be an object");
        return skip_value(P);
    } else {
        return skip_value(P);
    }
    return 0;
}

/* One non-blank line of len bytes (NUL-terminated, no NUL inside) into
 * rec; 1 for the header line or an event line (nothing in rec).  The line end ("\n", "\r\n",
 * a last "\r") is not part of the JSON: a string open there is
 * unterminated. */
static int parse_line(strix_jsonl_reader *r, char *line, size_t len, strix_jsonl_record *rec, strix_error *err)
{
    if (len && line[len - 1] == '\n') len--;
    if (len && line[len - 1] == '\r') len--;
    parser P = {.r = r, .det = -1, .err = err};
    strix_json_init(&P.j, line, len, line, "line");
    rec_ctx c = {0, rec};
    rec->inferred = 1;
    rec->n = 0;
    if (peek(&P) != '{') return FAIL(&P, "a line must hold one JSON object (one per frame)");
    if (object(&P, rec_member, &c)) return -1;
    if (peek(&P) >= 0)
        return FAIL(&P, "column %ld: unexpected text after the object (one object per line)", (long)P.j.pos + 1);
    if (c.seen & K_HEADER) {
        if (c.seen != K_HEADER) return FAIL(&P, "a \"header\" line holds no frame keys");
        if (r->prev_line || r->had_header) return FAIL(&P, "a \"header\" line must come first");
        r->had_header = 1;
        return 1;
    }
    if (c.seen & K_EVENT) {
        if (c.seen != K_EVENT) return FAIL(&P, "an \"event\" line holds no frame keys");
        return 1;
    }
    const char *missing = !(c.seen & K_FRAME) ? "frame" : !(c.seen & K_PTS) ? "pts"
                        : !(c.seen & K_DETS)  ? "detections"
                                              : NULL;
    if (missing) return FAIL(&P, "\"%s\" is missing", missing);
    if (r->prev_line && rec->frame <= r->prev_frame)
        return FAIL(&P, "frame %ld is not after frame %ld (line %ld): frames must increase", rec->frame,
                    r->prev_frame, r->prev_line);
    r->prev_frame = rec->frame;
    r->prev_line = r->lineno;
    rec->dets = r->dets;
    rec->track_ids = r->track_ids;
    rec->raw = r->raw;
    return 0;
}

strix_status strix_jsonl_open(strix_jsonl_reader **out, const char *path, strix_error *err)
{
    *out = NULL;
    strix_jsonl_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    }
    if (!(r->fp = fopen(path, "rb"))) {
        strix_status st = strix_fail(err, STRIX_E_IO, "%s: cannot open: %s (check the path)", path, strerror(errno));
        strix_jsonl_close(r);
        return st;
    }
    *out = r;
    return STRIX_OK;
}

int strix_jsonl_next(strix_jsonl_reader *r, strix_jsonl_record *rec, strix_error *err)
{
    if (r->failed) {
        strix_fail(err, STRIX_E_IO, "%s:%ld: reading stopped at an earlier error", r->path, r->lineno);
        return -1;
    }
    for (;;) {
        errno = 0;
        ssize_t len = getline(&r->line, &r->line_cap, r->fp);
        if (len < 0) {
            if (!ferror(r->fp) && errno != ENOMEM) return 0;
            r->failed = 1;
            strix_fail(err, errno == ENOMEM ? STRIX_E_NOMEM : STRIX_E_IO, "%s:%ld: read failed: %s", r->path,
                       r->lineno + 1, strerror(errno));
            return -1;
        }
        r->lineno++;
        char *s = r->line;
        if (r->lineno == 1 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) { /* a UTF-8 byte order mark */
            s += 3;
            len -= 3;
        }
        if (memchr(s, 0, (size_t)len)) {
            r->failed = 1;
            strix_fail(err, STRIX_E_IO, "%s:%ld: the line contains a NUL byte (not a text file?)", r->path,
                       r->lineno);
            return -1;
        }
        if (!s[strspn(s, " \t\r\n")]) continue; /* blank line */
        int got = parse_line(r, s, (size_t)len, rec, err);
        if (got < 0) {
            r->failed = 1;
            return -1;
        }
        if (got == 0) return 1;
    }
}

const char *strix_jsonl_class_name(const strix_jsonl_reader *r, int class_id)
{
    return class_id >= 0 && class_id < r->name_cap ? r->names[class_id] : NULL;
}

int strix_jsonl_class_count(const strix_jsonl_reader *r) { return r->class_count; }

void strix_jsonl_close(strix_jsonl_reader *r)
{
    if (!r) return;
    if (r->fp) fclose(r->fp);
    for (int i = 0; i < r->name_cap; i++) free(r->names[i]);
    free(r->names);
    free(r->name_lines);
    free(r->dets);
    free(r->track_ids);
    free(r->raw);
    free(r->line);
    free(r->path);
    free(r);
}

/* ------------------------------------------------------------- writing */

/* A JSON string: escapes, and U+FFFD for bytes that are not UTF-8. */
void strix_json_str(FILE *f, const char *s)
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
void strix_json_float(FILE *f, float v)
{
    if (!(v == v) || v > 3.4e38f || v < -3.4e38f) {
        fputs("null", f);
        return;
    }
    char buf[32];
    if (fabsf(v) < 1e7f && v == (float)(long)v) { /* whole numbers as such: 130, not 1.3e+02 */
        fprintf(f, "%ld", (long)v);
        return;
    }
    for (int d = 1; d <= 9; d++) {
        snprintf(buf, sizeof buf, "%.*g", d, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
    fputs(buf, f);
}

void strix_json_double(FILE *f, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    if (fabs(v) < 1e15 && v == (double)(long long)v) { /* whole numbers as such */
        fprintf(f, "%lld", (long long)v);
        return;
    }
    for (int d = 1; d <= 17; d++) {
        snprintf(buf, sizeof buf, "%.*g", d, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, f);
}
