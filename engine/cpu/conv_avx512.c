/* conv_avx512.c — the convolution for x86-64 CPUs with AVX-512F
 * (conv_kernels.h, 16-wide, MR x NR = 14 x 32: 28 accumulators + 2 B vectors
 * of the 32 zmm registers, A broadcast from memory into the FMA).  NR 32
 * fits the 32/64/128/256-channel layers exactly and pads the 80-channel
 * class branch to 96 as 48 would.  The Makefile compiles this file alone
 * with -mavx512f -mfma; engine/cpu/conv.c calls it only on a CPU (and OS)
 * with AVX-512F.  Empty on other architectures. */
#if defined(__x86_64__)
#define CONV_SUFFIX avx512
#define VL 16
#define MR 14
#define NR 32
#include "conv_kernels.h"
#endif
