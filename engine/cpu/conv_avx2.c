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
 * wide, at most 64 output channels, stride 1 or else K <= 288 (and,
 * conv_kernels.h's bounds, one group and K = KH*KW*Cin <= 576).  Measured
 * with perf/bench_conv --threads 1 --isa avx2 --cpu-time (medians of 3
 * alternating rounds x 25 runs, yolov8n and yolo11n shapes, AMD EPYC Zen 3,
 * 2 vCPUs), im2col GEMM -> direct, ms:
 *   stem 640x640x3 -> 320x320x16 s2            4.80 -> 2.90
 *   320x320x16 -> 160x160x32 s2                3.85 -> 3.25
 *   160x160x16 -> 160x160x16                   2.34 -> 1.70
 *   160x160x8 -> 160x160x16                    1.64 -> 1.15
 *   160x160x32 -> 80x80x64 s2                  3.04 -> 2.94
 *   80x80x32 -> 80x80x32                       1.66 -> 1.50
 *   80x80x32 -> 80x80x16                       0.971 -> 0.766
 *   40x40x32 -> 40x40x32                       0.411 -> 0.369
 *   40x40x64 -> 40x40x64                       1.40 -> 1.35
 * Left to the GEMM, where the direct kernel lost or tied: 20x20 outputs
 * (20x20x64 -> 64: 0.348 -> 0.381; a row of 20 is 4 blocks of 6, a fifth
 * of them padding, while the GEMM's rows run across image rows), 80 and
 * 128 output channels (80x80x64 -> 80x80x80: 6.89 -> 7.01; 80x80x64 ->
 * 40x40x128 s2: 2.70 -> 2.70; 5 or 8 B panels of 36 KiB re-read per
 * block, where the GEMM keeps one in L1 across all rows), stride 2 at
 * K = 576 (160x160x64 -> 80x80x64 s2: 5.92 -> 6.00, 8 alternating rounds),
 * and every 1x1 (4-5% slower: 160x160x32 -> 32 1.25 -> 1.31; the GEMM
 * already reads their A in place).
 *
 * CONV_WINOGRAD: and conv_winograd.h's Winograd F(4x4, 3x3) for 3x3
 * stride-1 pad-1 one-group layers on weights packed beforehand (the
 * backend's), taken before the direct kernel by the rules WINO_PACKS (at
 * least 8 input and 8 output channels: the thinnest measured, so thinner
 * layers keep only their GEMM weights) and WINO_FITS (outputs at least
 * 10 x 10).  Measured as the table above but with perf/bench_conv
 * --exact-too (the path it replaces, STRIX_CPU_CONV_EXACT, interleaved in
 * the same process; medians of 3 rounds x 25 runs, CPU time, 1 thread; raw
 * logs in perf/results/2026-11-29-amd-epyc-2c-winograd/), direct or GEMM
 * -> Winograd, ms:
 *   160x160x16 -> 160x160x16                   1.70 -> 1.19
 *   160x160x16 -> 160x160x8                    1.71 -> 0.94
 *   160x160x8 -> 160x160x16                    1.17 -> 0.91
 *   80x80x32 -> 80x80x32                       1.49 -> 0.71
 *   80x80x32 -> 80x80x16                       0.76 -> 0.45
 *   80x80x64 -> 80x80x64                       5.51 -> 2.27
 *   80x80x80 -> 80x80x80                       8.54 -> 3.15
 *   40x40x64 -> 40x40x64                       1.34 -> 0.56
 *   40x40x32 -> 40x40x32                       0.37 -> 0.18
 *   40x40x128 -> 40x40x80                      3.36 -> 1.18
 *   20x20x128 -> 20x20x128                     1.32 -> 0.52
 *   20x20x256 -> 20x20x64                      1.36 -> 0.55
 *   20x20x64 -> 20x20x64                       0.35 -> 0.15
 * so every 3x3 stride-1 shape of yolov8n and yolo11n at 640 (1.29x-2.84x;
 * all convolutions of a yolov8n forward 107.7 -> 67.9 ms).  At --imgsz 160
 * without WINO_FITS (conv_yolov8n_160_nofits_*.txt there) 10 x 10 outputs
 * still won (10x10x64 -> 10x10x64: 0.090 -> 0.058) but 5 x 5 ones ranged
 * from a tie to a loss (5x5x128 -> 5x5x128 0.097 -> 0.092, 5x5x256 ->
 * 5x5x64 0.101 -> 0.117: 4 tiles compute 64 pixels for 25). */
#if defined(__x86_64__)
#define CONV_SUFFIX avx2
#define VL 8
#define MR 6
#define NR 16
#define CONV_DIRECT
#define DIRECT_FITS(pl, out, p)                                                                    \
    ((p)->kh * (p)->kw > 1 && (out)->w >= 40 && (out)->c <= 64 && ((p)->sh == 1 || (pl)->k <= 288))
#define CONV_WINOGRAD
#define WINO_PACKS(cin, cout) ((cin) >= 8 && (cout) >= 8)
#define WINO_FITS(out, pl) ((out)->w >= 10 && (out)->h >= 10)
#include "conv_kernels.h"
#endif
