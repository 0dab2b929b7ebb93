/* bench_util.h — timing helpers shared by the perf/ programs. */
#ifndef STRIX_BENCH_UTIL_H
#define STRIX_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Monotonic wall clock in seconds. */
static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort comparator for doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A whole decimal string in [lo, hi] -> *out; 0 (and *out untouched) otherwise. */
static inline int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

/* The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them
 * ("unknown" where it cannot be read): the machine may be shared. */
static inline void loadavg(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(out, n, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

#endif
