/* gmc_generic.c — GMC's per-frame steps (gmc_kernels.h) for the compiler's
 * default target: SSE2 on any x86-64, NEON on aarch64, scalar elsewhere.
 * The Makefile adds -fno-math-errno (the corner response's square roots
 * vectorise; they are correctly rounded either way). */
#define GMC_SUFFIX generic
#include "gmc_kernels.h"
