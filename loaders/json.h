/* json.h — the one JSON reader of strix: a cursor over a JSON text in
 * memory, used by the safetensors header reader and by the detections
 * (JSON Lines) reader.  It checks the grammar strictly (RFC 8259: UTF-8,
 * every escape and surrogate pair, the number grammar, no trailing commas)
 * and leaves the schema to the caller, which walks the text value by value:
 * no tree is built and nothing is allocated.
 *
 *   strix_json j;
 *   strix_json_init(&j, text, n, dst, "line");
 *   if (strix_json_expect(&j, '{', "'{'")) goto fail;
 *   int count = 0, more;
 *   while ((more = strix_json_more(&j, '}', &count)) > 0) {
 *       const char *key; size_t len;
 *       if (strix_json_string(&j, &key, &len) || strix_json_expect(&j, ':', "':'")) goto fail;
 *       ... read the value with strix_json_string/number/bool/null/skip ...
 *   }
 *   if (more < 0) goto fail;
 * fail:  j.err says what is wrong at byte j.err_pos of the text.
 *
 * Strings decode into dst (n + 1 writable bytes, which may be the text
 * itself for in-place decoding): a string whose opening quote is at byte i
 * decodes to dst + i + 1, NUL-terminated, never past its closing quote, so
 * decoded strings stay valid together until dst is reused.  Numbers are
 * handed back as their text (the caller converts: exact 64-bit integers,
 * float or double as needed).  Duplicate keys are the caller's business.
 */
#ifndef STRIX_JSON_H
#define STRIX_JSON_H

#include <stddef.h>

#define STRIX_JSON_MAX_DEPTH 128 /* nesting strix_json_skip accepts: bounds its recursion */

typedef struct strix_json {
    const unsigned char *s; /* the text, n bytes (need not be NUL-terminated) */
    size_t n, pos;
    char *dst;              /* where strings decode (see above) */
    const char *end_name;   /* what the text is, for messages: "header", "line" */
    char end_found[40];     /* "the end of the header" */
    size_t tok;             /* start of the last string or number read */
    int nul;                /* whether the last string read held a \u0000 */
    size_t err_pos;         /* after a failed call: where the error is, */
    char err[192];          /* and what it is (one line, no position) */
} strix_json;

void strix_json_init(strix_json *j, const char *s, size_t n, char *dst, const char *end_name);

/* Records "expected WHAT, found ..." at the cursor; returns -1. */
int strix_json_syntax(strix_json *j, const char *what);

/* The next byte after whitespace (the cursor moves past the whitespace), or
 * -1 at the end of the text.  Inline: the readers call it between every two
 * tokens. */
static inline int strix_json_peek(strix_json *j)
{
    while (j->pos < j->n && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' || j->s[j->pos] == '\n' ||
                             j->s[j->pos] == '\r'))
        j->pos++;
    return j->pos < j->n ? j->s[j->pos] : -1;
}

/* What the value at the cursor looks like, for "found X" messages: "a
 * string", "an object", ..., "the end of the header". */
const char *strix_json_found(strix_json *j);

/* Consumes c after whitespace, else strix_json_syntax(what). 0 or -1. */
static inline int strix_json_expect(strix_json *j, char c, const char *what)
{
    if (strix_json_peek(j) != (unsigned char)c)
        return strix_json_syntax(j, what);
    j->pos++;
    return 0;
}

/* Inside an object or array whose opening bracket was consumed: 1 when a
 * member or item follows (the ',' before it consumed), 0 when the closing
 * bracket `close` came (consumed), -1 on anything else ("expected ',' or
 * '}'").  *count, 0 before the first call, counts the members seen. */
static inline int strix_json_more(strix_json *j, char close, int *count)
{
    int c = strix_json_peek(j);
    if (c == (unsigned char)close) {
        j->pos++;
        return 0;
    }
    if (*count > 0) {
        if (c != ',')
            return strix_json_syntax(j, close == '}' ? "',' or '}'" : "',' or ']'");
        j->pos++;
    }
    ++*count;
    return 1;
}

/* The string at the cursor, decoded: *out NUL-terminated (in dst), *len
 * bytes unless len is NULL (a \u0000 inside counts; j->nul says whether
 * there was one).  0 or -1. */
int strix_json_string(strix_json *j, const char **out, size_t *len);

/* The number at the cursor, its grammar checked: *tok its text, *len
 * bytes, *integral whether it has neither fraction nor exponent (in a
 * NUL-terminated text, strtod and strtoll stop at its end).  0 or -1. */
int strix_json_number(strix_json *j, const char **tok, size_t *len, int *integral);

/* 1 when the value at the cursor is `true` or `false` (consumed, *v set),
 * 0 when it is something else (nothing consumed). */
int strix_json_bool(strix_json *j, int *v);

/* 1 when the value at the cursor is `null` (consumed), else 0. */
int strix_json_null(strix_json *j);

/* Any value, checked and skipped (up to STRIX_JSON_MAX_DEPTH deep).  0 or -1. */
int strix_json_skip(strix_json *j);

/* Length of the valid UTF-8 sequence at s (1..4, avail bytes there), 0 when
 * invalid: no overlong forms, no surrogates, nothing above U+10FFFF. */
size_t strix_utf8_len(const unsigned char *s, size_t avail);

/* s as it can appear inside a one-line message: control bytes (newlines,
 * terminal escapes) and bytes that are not valid UTF-8 as \xNN, a long s
 * cut between characters with "...".  Returns buf. */
#define STRIX_QUOTE_MAX 160
const char *strix_quote(char buf[STRIX_QUOTE_MAX], const char *s);

#endif
