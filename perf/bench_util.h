/* bench_util.h — timing helpers shared by the perf/ programs. */
#ifndef STRIX_BENCH_UTIL_H
#define STRIX_BENCH_UTIL_H

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

#endif
