/* conv_neon.c — the convolution for aarch64 (conv_kernels.h with 4-wide
 * vectors, MR x NR = 6 x 16: 24 accumulators + 4 B vectors + 1 broadcast of
 * the 32 q registers).  Advanced SIMD is part of the aarch64 baseline, so no
 * extra flags; engine/cpu/conv.c still checks HWCAP_ASIMD.  Empty on other
 * architectures. */
#if defined(__aarch64__)
#define CONV_SUFFIX neon
#define VL 4
#define MR 6
#define NR 16
#include "conv_kernels.h"
#endif
