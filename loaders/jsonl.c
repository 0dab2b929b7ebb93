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
    unsigned char *recovered;
    int det_cap;
    /* the task fields (jsonl.h), grown like dets: every one is bounded by the line's length */
    int *seg_at;      /* [det_cap + 1] */
    float *seg_xy;
    int seg_cap;      /* floats */
    float *kpts;
    int kpt_cap;      /* floats */
    float *obb, *raw_obb; /* [det_cap, 8] */
    float *col[3];    /* one detection's "x", "y", "visible" columns while they are read */
    int col_cap[3];
    int *prob_class;
    float *prob_conf;
    int prob_cap, conf_cap;
    strix_task task;  /* the task of the file's records with one, STRIX_TASK_DETECT before any */
    long task_line;   /* the line it was first seen on */
    int nk, kd;       /* pose: the file's keypoint shape, 0 before any */
    long kpt_line;
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

enum { K_CLASS = 1, K_NAME = 2, K_SCORE = 4, K_BOX = 8, K_TRACK = 16, K_DBOX = 32, K_SEG = 64, K_KPT = 128,
       K_OBB = 256, K_DOBB = 512, K_REC = 1024 };

typedef struct det_ctx {
    int seen; /* K_ flags */
    strix_detection d;
    int track;
    int recovered; /* "recovered" */
    float dbox[4]; /* "detection_box", when K_DBOX */
    const char *name; /* NULL: none given */
    int n_pts, kd;    /* segments, keypoints: the columns' length (in r->col); keypoints: 2 or 3 columns */
    float obb[8], dobb[8]; /* K_OBB, K_DOBB */
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

/* Room for n elements of size bytes in *p (*cap of them); -1 with the error. */
static int grow(parser *P, void *pp, int *cap, long n, size_t size, const char *what)
{
    void **p = pp;
    if (n <= *cap && *p) return 0;
    if (n > INT_MAX / 2) return failv(P, STRIX_E_NOMEM, "too many %s", what);
    int c = *cap ? *cap : 16;
    while (c < n) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return failv(P, STRIX_E_NOMEM, "out of memory for %d %s", c, what);
    *p = q;
    *cap = c;
    return 0;
}

/* One finite number into *v. */
static int finite_value(parser *P, const char *name, float *v)
{
    const char *tok = NULL;
    int n = 0;
    if (num_value(P, name, &tok, &n)) return -1;
    *v = strtof(tok, NULL);
    if (!isfinite(*v)) return FAIL(P, "\"%s\" number %.*s is not finite", name, n, tok);
    return 0;
}

/* An array of finite numbers into r->col[c]; *n its length. */
static int column(parser *P, const char *name, int c, int *n)
{
    strix_jsonl_reader *r = P->r;
    if (peek(P) != '[') return FAIL(P, "\"%s\" must be an array of numbers", name);
    P->j.pos++;
    int k = 0, more;
    while ((more = strix_json_more(&P->j, ']', &k)) > 0)
        if (grow(P, &r->col[c], &r->col_cap[c], k, sizeof(float), "points") ||
            finite_value(P, name, &r->col[c][k - 1]))
            return -1;
    if (more < 0) return syntax(P);
    *n = k;
    return 0;
}

/* "segments" {"x", "y"} and "keypoints" {"x", "y", "visible"}: the
 * columns into r->col[0..2], their length in ctx->n_pts, K_X.. in ctx->seen. */
enum { K_X = 1, K_Y = 2, K_VIS = 4 };
typedef struct points_ctx {
    const char *field;
    int seen, n[3];
} points_ctx;

static int points_member(parser *P, const char *key, size_t len, void *vctx)
{
    points_ctx *c = vctx;
    static const char *const keys[3] = {"x", "y", "visible"};
    for (int k = 0; k < 3; k++) {
        if (!key_is(key, len, keys[k]) || (k == 2 && !strcmp(c->field, "segments"))) continue;
        char name[32];
        snprintf(name, sizeof name, "%s.%s", c->field, keys[k]);
        if (twice(P, &c->seen, 1 << k, name)) return -1;
        return column(P, name, k, &c->n[k]);
    }
    return skip_value(P);
}

static int points(parser *P, const char *field, int *seen, int flag, det_ctx *d)
{
    if (twice(P, seen, flag, field)) return -1;
    if (peek(P) != '{') return FAIL(P, "\"%s\" must be an object {\"x\": [...], \"y\": [...]}", field);
    points_ctx c = {field, 0, {0, 0, 0}};
    if (object(P, points_member, &c)) return -1;
    if ((c.seen & (K_X | K_Y)) != (K_X | K_Y)) return FAIL(P, "\"%s\" needs both \"x\" and \"y\"", field);
    if (c.n[1] != c.n[0] || ((c.seen & K_VIS) && c.n[2] != c.n[0])) {
        char vis[24] = "";
        if (c.seen & K_VIS) snprintf(vis, sizeof vis, ", %d visible", c.n[2]);
        return FAIL(P, "\"%s\" has columns of different lengths (%d x, %d y%s)", field, c.n[0], c.n[1], vis);
    }
    d->n_pts = c.n[0];
    d->kd = c.seen & K_VIS ? 3 : 2;
    if (flag == K_KPT && !d->n_pts) return FAIL(P, "\"keypoints\" has no points");
    return 0;
}

/* "obb" and "detection_obb": {"x1": ., "y1": ., ..., "x4": ., "y4": .} into 8 floats. */
typedef struct corners_ctx {
    const char *field;
    int seen;
    float *v;
} corners_ctx;

static int corners_member(parser *P, const char *key, size_t len, void *vctx)
{
    corners_ctx *c = vctx;
    if (len == 2 && (key[0] == 'x' || key[0] == 'y') && key[1] >= '1' && key[1] <= '4') {
        int k = 2 * (key[1] - '1') + (key[0] == 'y');
        char name[40];
        snprintf(name, sizeof name, "%s.%c%c", c->field, key[0], key[1]);
        if (twice(P, &c->seen, 1 << k, name)) return -1;
        return finite_value(P, name, &c->v[k]);
    }
    return skip_value(P);
}

static int corners(parser *P, const char *field, int *seen, int flag, float v[8])
{
    if (twice(P, seen, flag, field)) return -1;
    if (peek(P) != '{') return FAIL(P, "\"%s\" must be an object {\"x1\": ., \"y1\": ., ..., \"y4\": .}", field);
    corners_ctx c = {field, 0, v};
    if (object(P, corners_member, &c)) return -1;
    if (c.seen != 255) return FAIL(P, "\"%s\" needs the 4 corners x1 y1 ... x4 y4", field);
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
    } else if (key_is(key, len, "recovered")) {
        if (twice(P, &c->seen, K_REC, "recovered")) return -1;
        if (!strix_json_bool(&P->j, &c->recovered)) return FAIL(P, "\"recovered\" must be true or false");
    } else if (key_is(key, len, "segments")) {
        return points(P, "segments", &c->seen, K_SEG, c);
    } else if (key_is(key, len, "keypoints")) {
        return points(P, "keypoints", &c->seen, K_KPT, c);
    } else if (key_is(key, len, "obb")) {
        return corners(P, "obb", &c->seen, K_OBB, c->obb);
    } else if (key_is(key, len, "detection_obb")) {
        return corners(P, "detection_obb", &c->seen, K_DOBB, c->dobb);
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

static const char *task_field(strix_task t)
{
    return t == STRIX_TASK_SEGMENT ? "\"segments\"" : t == STRIX_TASK_POSE ? "\"keypoints\""
         : t == STRIX_TASK_OBB     ? "\"obb\""
         : t == STRIX_TASK_CLASSIFY ? "\"probs\""
                                    : "no task field";
}

/* Detection i's task fields (c) into the record's arrays; rec->task, nk, kd
 * set by detection 0 and checked against it for the others. */
static int det_task(parser *P, strix_jsonl_record *rec, int i, const det_ctx *c)
{
    strix_jsonl_reader *r = P->r;
    int kinds = !!(c->seen & K_SEG) + !!(c->seen & K_KPT) + !!(c->seen & K_OBB);
    if (kinds > 1) return FAIL(P, "a detection carries one of \"segments\", \"keypoints\" and \"obb\"");
    if ((c->seen & K_DOBB) && !(c->seen & K_OBB)) return FAIL(P, "\"detection_obb\" without \"obb\"");
    strix_task t = c->seen & K_SEG ? STRIX_TASK_SEGMENT : c->seen & K_KPT ? STRIX_TASK_POSE
                 : c->seen & K_OBB ? STRIX_TASK_OBB
                                   : STRIX_TASK_DETECT;
    if (i == 0) {
        rec->task = t;
        rec->nk = t == STRIX_TASK_POSE ? c->n_pts : 0;
        rec->kd = t == STRIX_TASK_POSE ? c->kd : 0;
    } else if (t != rec->task) {
        return FAIL(P, "carries %s but detection 0 carries %s (one task per file)", task_field(t),
                    task_field(rec->task));
    }
    r->seg_at[i + 1] = r->seg_at[i];
    if (t == STRIX_TASK_SEGMENT) {
        long at = r->seg_at[i];
        if (grow(P, &r->seg_xy, &r->seg_cap, 2 * (at + c->n_pts), sizeof *r->seg_xy, "polygon points")) return -1;
        for (int k = 0; k < c->n_pts; k++) {
            r->seg_xy[2 * (at + k)] = r->col[0][k];
            r->seg_xy[2 * (at + k) + 1] = r->col[1][k];
        }
        r->seg_at[i + 1] = (int)(at + c->n_pts);
    } else if (t == STRIX_TASK_POSE) {
        if (c->n_pts != rec->nk || c->kd != rec->kd)
            return FAIL(P, "\"keypoints\" has %d points of %d values but detection 0 has %d of %d (one shape per "
                        "file)", c->n_pts, c->kd, rec->nk, rec->kd);
        long per = (long)rec->nk * rec->kd;
        if (grow(P, &r->kpts, &r->kpt_cap, per * (i + 1), sizeof *r->kpts, "keypoint values")) return -1;
        for (int k = 0; k < rec->nk; k++)
            for (int d = 0; d < rec->kd; d++) r->kpts[per * i + (long)k * rec->kd + d] = r->col[d][k];
    } else if (t == STRIX_TASK_OBB) {
        memcpy(r->obb + 8 * (size_t)i, c->obb, sizeof c->obb);
        memcpy(r->raw_obb + 8 * (size_t)i, c->seen & K_DOBB ? c->dobb : c->obb, sizeof c->obb);
    }
    return 0;
}

static int detections(parser *P, strix_jsonl_record *rec)
{
    strix_jsonl_reader *r = P->r;
    if (peek(P) != '[') return FAIL(P, "\"detections\" must be an array");
    P->j.pos++;
    int n = 0, more;
    while ((more = strix_json_more(&P->j, ']', &n)) > 0) {
        if (n > r->det_cap) {
            if (r->det_cap > INT_MAX / 16) return failv(P, STRIX_E_NOMEM, "too many detections");
            int cap = r->det_cap ? r->det_cap * 2 : 64;
            strix_detection *d = realloc(r->dets, (size_t)cap * sizeof *d);
            if (d) r->dets = d;
            int *t = d ? realloc(r->track_ids, (size_t)cap * sizeof *t) : NULL;
            if (t) r->track_ids = t;
            strix_detection *raw = t ? realloc(r->raw, (size_t)cap * sizeof *raw) : NULL;
            if (raw) r->raw = raw;
            unsigned char *rc = raw ? realloc(r->recovered, (size_t)cap) : NULL;
            if (rc) r->recovered = rc;
            int *at = rc ? realloc(r->seg_at, ((size_t)cap + 1) * sizeof *at) : NULL;
            if (at) r->seg_at = at;
            float *obb = at ? realloc(r->obb, (size_t)cap * 8 * sizeof *obb) : NULL;
            if (obb) r->obb = obb;
            float *robb = obb ? realloc(r->raw_obb, (size_t)cap * 8 * sizeof *robb) : NULL;
            if (!robb) return failv(P, STRIX_E_NOMEM, "out of memory for %d detections", cap);
            r->raw_obb = robb;
            r->det_cap = cap;
        }
        P->det = n - 1;
        det_ctx c = {0, {0, 0, 0, 0, 0, 0}, -1, 0, {0, 0, 0, 0}, NULL, 0, 0, {0}, {0}};
        if (peek(P) != '{') return FAIL(P, "must be an object");
        if (object(P, det_member, &c)) return -1;
        const char *missing = !(c.seen & K_CLASS) ? "class_id" : !(c.seen & K_SCORE) ? "score"
                            : !(c.seen & K_BOX)   ? "box"
                                                  : NULL;
        if (missing) return FAIL(P, "\"%s\" is missing", missing);
        if (class_seen(P, c.d.class_id, c.name)) return -1;
        if (n == 1) r->seg_at[0] = 0;
        if (det_task(P, rec, n - 1, &c)) return -1;
        r->dets[n - 1] = c.d;
        r->track_ids[n - 1] = c.track;
        r->recovered[n - 1] = (unsigned char)c.recovered;
        r->raw[n - 1] = c.d;
        if (c.seen & K_DBOX)
            r->raw[n - 1] = (strix_detection){c.dbox[0], c.dbox[1], c.dbox[2], c.dbox[3], c.d.score, c.d.class_id};
        P->det = -1;
    }
    return more < 0 ? syntax(P) : n;
}

/* "probs": [{"name": ., "class": ., "confidence": .}, ...] into the record. */
typedef struct prob_ctx {
    int seen;
    long long cls;
    float conf;
    const char *name;
} prob_ctx;

enum { K_PNAME = 1, K_PCLASS = 2, K_PCONF = 4 };

static int prob_member(parser *P, const char *key, size_t len, void *vctx)
{
    prob_ctx *c = vctx;
    if (key_is(key, len, "name")) {
        if (twice(P, &c->seen, K_PNAME, "probs.name")) return -1;
        if (strix_json_null(&P->j)) return 0;
        if (peek(P) != '"') return FAIL(P, "\"probs.name\" must be a string or null");
        if (strix_json_string(&P->j, &c->name, NULL)) return syntax(P);
        if (P->j.nul) return FAIL(P, "\"probs.name\" contains a NUL character (\\u0000)");
        return 0;
    }
    if (key_is(key, len, "class"))
        return twice(P, &c->seen, K_PCLASS, "probs.class") ||
               integer(P, "probs.class", 0, STRIX_JSONL_MAX_CLASSES - 1, 0, &c->cls);
    if (key_is(key, len, "confidence")) {
        if (twice(P, &c->seen, K_PCONF, "probs.confidence") || finite_value(P, "probs.confidence", &c->conf))
            return -1;
        if (!(c->conf >= 0 && c->conf <= 1)) return FAIL(P, "\"probs.confidence\" %g is outside [0, 1]", (double)c->conf);
        return 0;
    }
    return skip_value(P);
}

static int probs(parser *P, strix_jsonl_record *rec)
{
    strix_jsonl_reader *r = P->r;
    if (peek(P) != '[') return FAIL(P, "\"probs\" must be an array");
    P->j.pos++;
    int n = 0, more;
    while ((more = strix_json_more(&P->j, ']', &n)) > 0) {
        prob_ctx c = {0, 0, 0, NULL};
        if (peek(P) != '{') return FAIL(P, "\"probs\" entry %d must be an object", n - 1);
        if (object(P, prob_member, &c)) return -1;
        if ((c.seen & (K_PCLASS | K_PCONF)) != (K_PCLASS | K_PCONF))
            return FAIL(P, "\"probs\" entry %d needs \"class\" and \"confidence\"", n - 1);
        if (class_seen(P, (int)c.cls, c.name) ||
            grow(P, &r->prob_class, &r->prob_cap, n, sizeof *r->prob_class, "probabilities"))
            return -1;
        if (grow(P, &r->prob_conf, &r->conf_cap, n, sizeof *r->prob_conf, "probabilities")) return -1;
        r->prob_class[n - 1] = (int)c.cls;
        r->prob_conf[n - 1] = c.conf;
    }
    if (more < 0) return syntax(P);
    rec->n_probs = n;
    return 0;
}

enum { K_FRAME = 1, K_PTS = 2, K_INFERRED = 4, K_DETS = 8, K_HEADER = 16, K_EVENT = 32, K_PROBS = 64 };

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
        if (twice(P, &c->seen, K_DETS, "detections") || (n = detections(P, c->rec)) < 0) return -1;
        c->rec->n = n;
    } else if (key_is(key, len, "probs")) {
        if (twice(P, &c->seen, K_PROBS, "probs") || probs(P, c->rec)) return -1;
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

/* The record's task (one per file, jsonl.h), and a pose file's keypoint
 * shape, against the file's so far. */
static int task_check(parser *P, strix_jsonl_record *rec, int has_probs)
{
    strix_jsonl_reader *r = P->r;
    if (has_probs) {
        if (rec->task != STRIX_TASK_DETECT)
            return FAIL(P, "\"probs\" beside detections that carry %s (one task per file)", task_field(rec->task));
        rec->task = STRIX_TASK_CLASSIFY;
    }
    if (rec->task == STRIX_TASK_DETECT && !rec->n) return 0; /* nothing to tell the task by */
    if (!r->task_line) {
        r->task = rec->task;
        r->task_line = r->lineno;
    } else if (rec->task != r->task) {
        return FAIL(P, "this frame carries %s but line %ld carries %s (one task per file)", task_field(rec->task),
                    r->task_line, task_field(r->task));
    }
    if (rec->task != STRIX_TASK_POSE) return 0;
    if (!r->kpt_line) {
        r->nk = rec->nk;
        r->kd = rec->kd;
        r->kpt_line = r->lineno;
    } else if (rec->nk != r->nk || rec->kd != r->kd) {
        return FAIL(P, "\"keypoints\" have %d points of %d values but %d of %d on line %ld (one shape per file)",
                    rec->nk, rec->kd, r->nk, r->kd, r->kpt_line);
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
    rec->n = rec->n_probs = rec->nk = rec->kd = 0;
    rec->task = STRIX_TASK_DETECT;
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
    if (task_check(&P, rec, c.seen & K_PROBS)) return -1;
    r->prev_frame = rec->frame;
    r->prev_line = r->lineno;
    rec->dets = r->dets;
    rec->track_ids = r->track_ids;
    rec->raw = r->raw;
    rec->recovered = r->recovered;
    rec->seg_at = r->seg_at;
    rec->seg_xy = r->seg_xy;
    rec->kpts = r->kpts;
    rec->obb = r->obb;
    rec->raw_obb = r->raw_obb;
    rec->prob_class = r->prob_class;
    rec->prob_conf = r->prob_conf;
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
    free(r->recovered);
    free(r->seg_at);
    free(r->seg_xy);
    free(r->kpts);
    free(r->obb);
    free(r->raw_obb);
    for (int i = 0; i < 3; i++) free(r->col[i]);
    free(r->prob_class);
    free(r->prob_conf);
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
