/* json.c — the one JSON reader of strix (interface and use in json.h).
 *
 * Hand-written, not jansson/json-c/cJSON: they fix numbers (int64, double) and duplicate keys for us; we need exact uint64, bit-exact floats, our own duplicate rules.
 *
 * In detail (all three are in Debian bookworm and in OSS-Fuzz; jansson and
 * json-c ship a static .a of 109 KB and 152 KB, cJSON none): jansson keeps
 * integers in int64 (safetensors sizes and offsets are uint64) and reals as
 * double (the replay reads floats with strtof from the text, bit-exactly),
 * and keeps the last of duplicate keys unless told to refuse them all (the
 * replay skips unknown keys, duplicates inside them included, and refuses a
 * schema key given twice); json-c keeps the last silently (duplicate tensor
 * names must be refused); cJSON keeps its last error in a global.  All
 * three allocate a node per value, per line of a 100k-line replay, and word
 * errors their own way where the readers name the byte of the file or the
 * column of the line and what to fix.  And libyaml, linked for the model
 * YAML, is no JSON parser: it refuses JSON's surrogate pairs
 * ("\ud83d\ude00"), accepts what is not JSON ({a: 1}, trailing commas) and
 * keeps the last of duplicate keys silently.  This reader is fuzzed through
 * both readers' targets (tests/fuzz/fuzz_safetensors.c, fuzz_jsonl.c).
 */
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static int fail(strix_json *j, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err, sizeof j->err, fmt, ap);
    va_end(ap);
    j->err_pos = at;
    return -1;
}

void strix_json_init(strix_json *j, const char *s, size_t n, char *dst, const char *end_name)
{
    memset(j, 0, sizeof *j);
    j->s = (const unsigned char *)s;
    j->n = n;
    j->dst = dst;
    j->end_name = end_name;
    snprintf(j->end_found, sizeof j->end_found, "the end of the %s", end_name);
}

const char *strix_json_found(strix_json *j)
{
    switch (strix_json_peek(j)) {
    case -1: return j->end_found;
    case '"': return "a string";
    case '{': return "an object";
    case '[': return "an array";
    case 't': case 'f': return "a boolean";
    case 'n': return "null";
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return "a number";
    default: return "an unexpected character";
    }
}

int strix_json_syntax(strix_json *j, const char *what)
{
    int c = strix_json_peek(j);
    if (c < 0)
        return fail(j, j->pos, "expected %s, found %s", what, j->end_found);
    if (c >= 0x20 && c < 0x7f)
        return fail(j, j->pos, "expected %s, found '%c'", what, c);
    return fail(j, j->pos, "expected %s, found byte 0x%02x", what, (unsigned)c);
}

size_t strix_utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    unsigned lo = 0x80, hi = 0xbf;
    size_t len;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (avail < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0u) != 0x80u)
            return 0;
    return len;
}

const char *strix_quote(char buf[STRIX_QUOTE_MAX], const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t k = 0, n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t l = p[i] < 0x80 ? 1 : strix_utf8_len(p + i, n - i);
        int esc = l == 0 || p[i] < 0x20 || p[i] == 0x7f;
        size_t need = esc ? 4 : l;
        if (k + need + 4 > STRIX_QUOTE_MAX) {
            memcpy(buf + k, "...", 3);
            k += 3;
            break;
        }
        if (esc) {
            snprintf(buf + k, 5, "\\x%02x", p[i]);
            k += 4;
            i++;
        } else {
            memcpy(buf + k, p + i, l);
            k += l;
            i += l;
        }
    }
    buf[k] = 0;
    return buf;
}

/* Four hex digits at s[0..4) (avail bytes there) into *v; 0 when not. */
static int hex4(const unsigned char *s, size_t avail, unsigned *v)
{
    if (avail < 4)
        return 0;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        *v = *v * 16 + d;
    }
    return 1;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* Every byte is read before the decoded bytes that replace it are written
 * (an escape never decodes to more bytes than it takes), so dst may be the
 * text itself. */
int strix_json_string(strix_json *j, const char **out, size_t *len)
{
    if (strix_json_peek(j) != '"')
        return strix_json_syntax(j, "a string");
    j->tok = j->pos++;
    j->nul = 0;
    const unsigned char *s = j->s;
    size_t n = j->n, p = j->pos;
    char *start = j->dst + p, *o = start;
    for (;;) {
        /* the common case, a run of printable ASCII: copied, or only
         * skipped when decoding in place with no escape before it */
        if (o == (const char *)s + p) {
            while (p < n && s[p] >= 0x20 && s[p] < 0x80 && s[p] != '"' && s[p] != '\\')
                p++;
            o = (char *)j->dst + p;
        } else {
            while (p < n && s[p] >= 0x20 && s[p] < 0x80 && s[p] != '"' && s[p] != '\\')
                *o++ = (char)s[p++];
        }
        if (p >= n || (s[p] == '\\' && p + 1 >= n))
            return fail(j, n, "unterminated string (not terminated before the end of the %s)",
                        j->end_name);
        unsigned c = s[p];
        if (c == '"')
            break;
        if (c < 0x20)
            return fail(j, p, "control character in a string (control byte 0x%02x: write it as a "
                        "\\u escape)", c);
        if (c >= 0x80) {
            size_t l = strix_utf8_len(s + p, n - p);
            if (!l)
                return fail(j, p, "invalid UTF-8 in a string");
            memmove(o, s + p, l);
            o += l;
            p += l;
            continue;
        }
        unsigned e = s[p + 1], cp, lo;
        const char *simple = strchr("\"\\/bfnrt", (int)e);
        if (e && simple) {
            *o++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            p += 2;
            continue;
        }
        if (e != 'u')
            return fail(j, p, "invalid escape in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
                        "\\uXXXX)");
        if (!hex4(s + p + 2, n - p - 2, &cp))
            return fail(j, p, "\\u must be followed by 4 hex digits (exactly four hex digits, as in "
                        "\\u00e9)");
        if (cp >= 0xdc00 && cp <= 0xdfff)
            return fail(j, p, "unpaired surrogate \\u%04x (a low half needs a high half before it)", cp);
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (p + 7 >= n || s[p + 6] != '\\' || s[p + 7] != 'u' ||
                !hex4(s + p + 8, n - p - 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
                return fail(j, p, "unpaired surrogate \\u%04x (a high half needs a low half next)", cp);
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            p += 6;
        }
        p += 6;
        j->nul |= cp == 0;
        o = put_utf8(o, cp);
    }
    j->pos = p + 1;
    *o = 0;
    *out = start;
    if (len)
        *len = (size_t)(o - start);
    return 0;
}

static int digit(const strix_json *j, size_t p)
{
    return p < j->n && j->s[p] >= '0' && j->s[p] <= '9';
}

int strix_json_number(strix_json *j, const char **tok, size_t *len, int *integral)
{
    strix_json_peek(j);
    size_t p = j->pos, start = p;
    j->tok = start;
    *integral = 1;
    if (p < j->n && j->s[p] == '-')
        p++;
    if (digit(j, p) && j->s[p] == '0') {
        if (digit(j, ++p))
            return fail(j, start, "invalid number (a leading zero)");
    } else if (digit(j, p)) {
        while (digit(j, p))
            p++;
    } else if (p > start) {
        return fail(j, start, "expected a number (digits must follow '-')");
    } else {
        return strix_json_syntax(j, "a number");
    }
    if (p < j->n && j->s[p] == '.') {
        *integral = 0;
        if (!digit(j, ++p))
            return fail(j, start, "invalid number (digits must follow '.')");
        while (digit(j, p))
            p++;
    }
    if (p < j->n && (j->s[p] == 'e' || j->s[p] == 'E')) {
        *integral = 0;
        p++;
        if (p < j->n && (j->s[p] == '+' || j->s[p] == '-'))
            p++;
        if (!digit(j, p))
            return fail(j, start, "invalid number (digits must follow the exponent)");
        while (digit(j, p))
            p++;
    }
    if (p < j->n) {
        unsigned c = j->s[p];
        if ((c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || (c >= 'a' && c <= 'z') ||
            (c >= 'A' && c <= 'Z'))
            return fail(j, start, "invalid number");
    }
    *tok = (const char *)j->s + start;
    *len = p - start;
    j->pos = p;
    return 0;
}

/* Whether the text at the cursor starts with word (consumed if so). */
static int word(strix_json *j, const char *w, size_t n)
{
    if (j->n - j->pos < n || memcmp(j->s + j->pos, w, n))
        return 0;
    j->pos += n;
    return 1;
}

int strix_json_bool(strix_json *j, int *v)
{
    int c = strix_json_peek(j);
    if (c == 't' && word(j, "true", 4)) {
        *v = 1;
        return 1;
    }
    if (c == 'f' && word(j, "false", 5)) {
        *v = 0;
        return 1;
    }
    return 0;
}

int strix_json_null(strix_json *j)
{
    return strix_json_peek(j) == 'n' && word(j, "null", 4);
}

static int skip(strix_json *j, int depth)
{
    if (depth > STRIX_JSON_MAX_DEPTH)
        return fail(j, j->pos, "values nested too deeply");
    int c = strix_json_peek(j), count = 0, more, v;
    const char *s;
    size_t len;
    switch (c) {
    case '"':
        return strix_json_string(j, &s, &len);
    case 't': case 'f': case 'n':
        if (strix_json_bool(j, &v) || strix_json_null(j))
            return 0;
        return fail(j, j->pos, "expected a JSON value (true, false and null are the only words)");
    case '[':
        j->pos++;
        while ((more = strix_json_more(j, ']', &count)) > 0)
            if (skip(j, depth + 1))
                return -1;
        return more;
    case '{':
        j->pos++;
        while ((more = strix_json_more(j, '}', &count)) > 0)
            if (strix_json_string(j, &s, &len) || strix_json_expect(j, ':', "':'") || skip(j, depth + 1))
                return -1;
        return more;
    default:
        if (c != '-' && !(c >= '0' && c <= '9'))
            return strix_json_syntax(j, "a JSON value");
        return strix_json_number(j, &s, &len, &v);
    }
}

int strix_json_skip(strix_json *j)
{
    return skip(j, 1);
}
