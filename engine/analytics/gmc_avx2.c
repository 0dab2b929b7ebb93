/* gmc_avx2.c — GMC's per-frame steps (gmc_kernels.h) for x86-64 CPUs with
 * AVX2 and FMA: 8-wide float vectors and the grey pass's byte shuffles.  The
 * Makefile compiles this file alone with -mavx2 -mfma -ffp-contract=off
 * (fused only where the corner pass asks, with operands that make it the
 * generic build's number) and -fno-math-errno; engine/analytics/gmc.c
 * calls it only on a CPU that has both.  Empty on other architectures. */
#if defined(__x86_64__)
#define GMC_SUFFIX avx2
#include "gmc_kernels.h"
#endif
