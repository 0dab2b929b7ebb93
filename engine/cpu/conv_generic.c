/* conv_generic.c — the convolution for any CPU (conv_kernels.h with 4-wide
 * vectors, MR x NR = 6 x 8: 12 accumulators + 2 B vectors + 1 broadcast fit
 * SSE2's 16 xmm registers).  Built with the library's own flags. */
#define CONV_SUFFIX generic
#define VL 4
#define MR 6
#define NR 8
#include "conv_kernels.h"
