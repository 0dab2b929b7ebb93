/* conv_avx512_n16.c — the AVX-512F convolution for layers whose output
 * channels per group are not a multiple of 32 (the 16-channel layers of the
 * nano models, their 80-channel class branch): conv_kernels.h with 16-wide
 * vectors, MR x NR = 14 x 16, so a 16-channel layer does not pay for the
 * 32-wide block's zero half.  engine/cpu/conv.c picks it over conv_avx512.c
 * per layer (the same rule for packing and running).  Compiled with
 * -mavx512f -mfma (Makefile); empty on other architectures. */
#if defined(__x86_64__)
#define CONV_SUFFIX avx512_n16
#define VL 16
#define MR 14
#define NR 16
#include "conv_kernels.h"
#endif
