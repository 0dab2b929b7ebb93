/* conv_avx2.c — the convolution for x86-64 CPUs with AVX2 and FMA
 * (conv_kernels.h, 8-wide, MR x NR = 6 x 16: 12 accumulators + 2 B vectors
 * + 1 broadcast of the 16 ymm registers).  The Makefile compiles this file
 * alone with -mavx2 -mfma; engine/cpu/conv.c calls it only on a CPU that has
 * both.  Empty on other architectures.
 *
 * CONV_DIRECT: this build also has conv_kernels.h's direct kernel (no
 * im2col, 6 pixels x 16 channels in registers through all taps, the
 * epilogue fused; results the GEMM's to the bit), taken by the rule
 * DIRECT_FITS: kernels larger than 1x1, output rows at least 40 pixels
 * wide, at most 64 output channels (and, conv_kernels.h's bounds, one group
 * and K = KH*KW*Cin <= 576).  Measured with perf/bench_conv --threads 1
 * --isa avx2 --cpu-time (medians of 3 x 25 runs, yolov8n and yolo11n
 * shapes, AMD EPYC Zen 3, 2 vCPUs), im2col GEMM -> direct, ms:
 *   stem 640x640x3 -> 320x320x16 s2            4.94 -> 3.20
 *   320x320x16 -> 160x160x32 s2                3.87 -> 3.51
 *   160x160x16 -> 160x160x16                   2.34 -> 1.76
 *   160x160x8 -> 160x160x16                    1.66 -> 1.22
 *   160x160x64 -> 80x80x64 s2                  6.22 -> 6.04
 *   80x80x32 -> 80x80x32                       1.67 -> 1.54
 *   80x80x64 -> 80x80x64                       5.67 -> 5.60
 *   40x40x32 -> 40x40x32                       0.411 -> 0.377
 *   40x40x64 -> 40x40x64                       1.41 -> 1.39
 * Left to the GEMM, where the direct kernel lost: 20x20 outputs (20x20x64
 * -> 64: 0.348 -> 0.381 ms; a row of 20 is 4 blocks of 6, a fifth of them
 * padding, while the GEMM's rows run across image rows), 80 and 128
 * output channels (80x80x64 -> 80x80x80: 6.89 -> 7.01; 80x80x64 ->
 * 40x40x128 s2: 2.75 -> 2.81; 5 or 8 B panels of 36 KiB re-read per block,
 * where the GEMM keeps one in L1 across all rows), and every 1x1 (5-37%
 * slower: the GEMM already reads their A in place). */
#if defined(__x86_64__)
#define CONV_SUFFIX avx2
#define VL 8
#define MR 6
#define NR 16
#define CONV_DIRECT
#define DIRECT_FITS(out, p) ((p)->kh * (p)->kw > 1 && (out)->w >= 40 && (out)->c <= 64)
#include "conv_kernels.h"
#endif
