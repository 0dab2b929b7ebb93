/* testlib.h — the tiny test harness every C test program in tests/ uses.
 *
 * Each test prints exactly one line: "PASS name", "FAIL name: why (seed=S)"
 * or "SKIP name: why"; tests/run.sh counts those lines across all programs.
 * Random inputs come from a per-run seed (env STRIX_TEST_SEED to replay one),
 * printed with every failure.
 */
#ifndef STRIX_TESTLIB_H
#define STRIX_TESTLIB_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct tl_state {
    uint64_t seed;      /* the run's seed, printed on failure */
    uint64_t rng;       /* current generator state */
    int failed;         /* set by tl_fail in the running test */
    int skipped;
    char why[512];
    int n_fail;         /* failures in this program */
} tl_state;

static tl_state tl_g; /* test-program state: tests are single-threaded programs */

static inline uint64_t tl_u64(void)
{
    /* splitmix64: small, fast, good enough for test inputs */
    uint64_t z = (tl_g.rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [lo, hi) */
static inline float tl_uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)((tl_u64() >> 40) * (1.0 / 16777216.0));
}
static inline int tl_int(int lo, int hi) /* inclusive */
{
    return lo + (int)(tl_u64() % (uint64_t)(hi - lo + 1));
}

static inline void tl_fail(const char *fmt, ...)
{
    if (tl_g.failed) return; /* keep the first reason */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_g.why, sizeof tl_g.why, fmt, ap);
    va_end(ap);
    tl_g.failed = 1;
}
static inline void tl_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_g.why, sizeof tl_g.why, fmt, ap);
    va_end(ap);
    tl_g.skipped = 1;
}

#define TL_CHECK(cond, ...) do { if (!(cond)) { tl_fail(__VA_ARGS__); return; } } while (0)

static inline void tl_init(void)
{
    const char *s = getenv("STRIX_TEST_SEED");
    tl_g.seed = s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)clock() << 20));
    tl_g.n_fail = 0;
}

static inline void tl_run(const char *name, void (*fn)(void))
{
    tl_g.rng = tl_g.seed;
    tl_g.failed = tl_g.skipped = 0;
    tl_g.why[0] = 0;
    fn();
    if (tl_g.failed) {
        printf("FAIL %s: %s (seed=%llu)\n", name, tl_g.why, (unsigned long long)tl_g.seed);
        tl_g.n_fail++;
    } else if (tl_g.skipped) {
        printf("SKIP %s: %s\n", name, tl_g.why);
    } else {
        printf("PASS %s\n", name);
    }
    fflush(stdout);
}

/* Filter: `prog [substring]` runs only tests whose name contains it. */
static inline int tl_selected(int argc, char **argv, const char *name)
{
    return argc < 2 || strstr(name, argv[1]) != NULL;
}
#define TL_RUN(fn) do { if (tl_selected(argc, argv, #fn)) tl_run(#fn, fn); } while (0)
#define TL_MAIN_END() return tl_g.n_fail ? 1 : 0

#endif
