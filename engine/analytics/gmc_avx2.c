/* gmc_avx2.c — GMC's per-frame steps (gmc_kernels.h) for x86-64 CPUs with
 * AVX2: 8-wide float vectors and the grey pass's byte shuffles.  The
 * Makefile compiles this file alone with -mavx2 (no -mfma: the numbers stay
 * those of the generic build) and -fno-math-errno; engine/analytics/gmc.c
 * calls it only on a CPU that has AVX2.  Empty on other architectures. */
#if defined(__x86_64__)
#define GMC_SUFFIX avx2
#include "gmc_kernels.h"
#endif
