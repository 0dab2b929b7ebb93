/* util.h — small internal helpers shared by the library: error reporting, aligned scratch buffers, the decimal a
 * float was typed as. */
#ifndef STRIX_UTIL_H
#define STRIX_UTIL_H

#include <stddef.h>

#include "strix.h"

/* Fill err (if non-NULL) with a printf-style one-line message and return st.
 * Usage: return strix_fail(err, STRIX_E_MODEL, "%s:%d: unknown module '%s'", ...); */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
strix_status strix_fail(strix_error *err, strix_status st, const char *fmt, ...);

/* Mark err as success (status OK, empty message). */
void strix_error_clear(strix_error *err);

/* Grow *buf (freed, contents not kept) to at least need bytes, 64-byte
 * aligned; *cap tracks its size.  0 when out of memory (*buf unchanged). */
int strix_reserve(void **buf, size_t *cap, size_t need);

/* The double a Python caller typed where strix holds a float: the shortest
 * decimal that rounds to f (0.3, not 0.3f = 0.30000001), read as a double.
 * Ultralytics compares and accumulates its thresholds in those doubles. */
double strix_typed_double(float f);

/* Bounded string copy and append: always NUL-terminate, truncate silently
 * (used for names whose length the caller already bounds). */
static inline void strix_strlcpy(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; i + 1 < n && src[i]; i++) dst[i] = src[i];
    if (n) dst[i] = 0;
}

static inline void strix_strlcat(char *dst, size_t n, const char *src)
{
    size_t l = 0;
    while (l < n && dst[l]) l++;
    if (l < n) strix_strlcpy(dst + l, n - l, src);
}

#endif
