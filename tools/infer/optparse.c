/* optparse.c — infer's option values: integers, numbers, seconds, 0..1
 * fractions and --line's two points, each checked against its range, and
 * the one-line usage error every bad option gets. */
#include "optparse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/exitcodes.h"

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "infer: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see infer --help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return usage_error("%s: '%s' is not an integer in %d..%d", opt, s, lo, hi);
    *out = (int)v;
    return 0;
}

/* A number in lo..hi ("what" names the range in the message). */
int parse_number(const char *opt, const char *s, double lo, double hi, const char *what, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return usage_error("%s: '%s' is not %s", opt, s, what);
    *out = v;
    return 0;
}

int parse_seconds(const char *opt, const char *s, double *out)
{
    return parse_number(opt, s, 0, 1e7, "a number of seconds (0 or more)", out);
}

/* "4s", "10m", "1h" or a number of seconds; at least 0.1 s */
int parse_duration(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end), unit = !strcmp(end, "") || !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60
                                     : !strcmp(end, "h") ? 3600 : 0;
    if (errno || end == s || !unit || !(v * unit >= 0.1 && v * unit <= 1e7))
        return usage_error("%s: '%s' is not a duration of 0.1 s or more (4s, 10m, 1h, or seconds)", opt, s);
    *out = v * unit;
    return 0;
}

/* --line "x1,y1,x2,y2" */
int parse_line(const char *s, float *l)
{
    const char *p = s;
    for (int k = 0; k < 4; k++) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !(v > -1e7 && v < 1e7) || (k < 3 ? *end != ',' : *end != 0))
            return usage_error("--line: '%s' is not four numbers x1,y1,x2,y2 (pixels)", s);
        l[k] = (float)v;
        p = end + 1;
    }
    if (l[0] == l[2] && l[1] == l[3]) return usage_error("--line: '%s' has two equal points", s);
    return 0;
}

int parse_unit(const char *opt, const char *s, double *out)
{
    return parse_number(opt, s, 0, 1, "a number in 0..1", out);
}
