/* gmc_avx512.c — GMC's per-frame steps (gmc_kernels.h) for x86-64 CPUs with
 * AVX-512 F, BW, VL and VNNI (Cascade Lake, Ice Lake and later, Zen 4):
 * 16-wide float and 32-wide int16 vectors, Lucas-Kanade's multiply-adds
 * fused with their sums (vpdpwssd).  The Makefile compiles this file alone
 * with those flags, -mfma -ffp-contract=off and -fno-math-errno: no
 * multiply-add is fused but where the corner pass asks (fmaf, equal there
 * to the generic build's double sum), so the numbers stay those of the
 * generic build.
 * engine/analytics/gmc.c calls it only on a CPU (and OS) that has them.
 * Empty on other architectures. */
#if defined(__x86_64__)
#define GMC_SUFFIX avx512
#include "gmc_kernels.h"
#endif
