/* conv_neon.c — the convolution for aarch64 (conv_kernels.h with 4-wide
 * vectors, MR x NR = 5 x 16: 20 accumulators + 4 B vectors + 5 A scalars,
 * used by element in fmla, of the 32 q registers; at 6 x 16 gcc 12 spills
 * accumulators to the stack inside the k loop).  16 wide because the channel
 * counts of YOLO layers are multiples of 16, so the block never pads where
 * 12 would.  Advanced SIMD is part of the aarch64 baseline, so no extra
 * flags; engine/cpu/conv.c still checks HWCAP_ASIMD.  Empty on other
 * architectures. */
#if defined(__aarch64__)
#define CONV_SUFFIX neon
#define VL 4
#define MR 5
#define NR 16
#include "conv_kernels.h"
#endif
