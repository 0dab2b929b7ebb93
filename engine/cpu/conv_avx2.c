/* conv_avx2.c — the convolution for x86-64 CPUs with AVX2 and FMA
 * (conv_kernels.h, 8-wide, MR x NR = 6 x 16: 12 accumulators + 2 B vectors
 * + 1 broadcast of the 16 ymm registers).  The Makefile compiles this file
 * alone with -mavx2 -mfma; engine/cpu/conv.c calls it only on a CPU that has
 * both.  Empty on other architectures. */
#if defined(__x86_64__)
#define CONV_SUFFIX avx2
#define VL 8
#define MR 6
#define NR 16
#include "conv_kernels.h"
#endif
