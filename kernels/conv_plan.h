/* conv_plan.h — the host-side arithmetic of the mma.sync implicit-GEMM
 * convolution (conv_mma.cu), in plain C so that it is checked on machines
 * without a GPU (tests/test_cuda_ops.c, conv_mma_plan): the tile table's
 * geometry, which tile a layer gets (strix_mma_pick, kernel sets 2 and 3),
 * how kernel set 3 splits K when that tile's grid leaves SMs idle
 * (strix_splitk_count, strix_mma_plan_make), where each K slice's fp32
 * partial sums live in the caller's workspace (strix_splitk_index), and
 * kernel set 3's shared-memory stem tile (strix_stem_*).
 * conv_mma.cu builds its kernel table from the same list (STRIX_MMA_TILES)
 * and calls the same functions, so the test checks what the kernels run.
 *
 * GEMM terms (conv.cu's header): C[M][Ng] = A[M][K] * B[K][Ng], M = N*OH*OW,
 * Ng = Cout, K = KH*KW*Cin; a block computes a BM x BN tile of C, stepping
 * through K BK at a time.  Split-K partials: fp32 [splits][M][ldp], ldp =
 * Ng rounded up to 8 (each row's 8-channel groups are two aligned 16-byte
 * vectors); slice s covers the BK steps [s*slice_steps, (s+1)*slice_steps)
 * of the ceil(K / BK), the last slice the rest (at least one). */
#ifndef STRIX_KERNELS_CONV_PLAN_H
#define STRIX_KERNELS_CONV_PLAN_H

#include <stddef.h>

#ifdef __CUDACC__
#define STRIX_PLAN_FN static inline __host__ __device__
#else
#define STRIX_PLAN_FN static inline
#endif

/* The tile table, variants 1.. in this order (variant 0: the pick's choice;
 * `conv_lab --variants` times each):
 * X(BM, BN, WARPS_M, WARPS_N, BK, STAGES, SPLITK), SPLITK 1 where kernel set
 * 3 may split K for this tile (its split kernel is compiled only there; the
 * pick hands small grids tile 1 alone). */
#define STRIX_MMA_TILES(X)              \
    X(128, 16, 4, 1, 32, 3, 1)  /* 1 */  \
    X(128, 32, 4, 1, 32, 3, 0)  /* 2 */  \
    X(128, 48, 4, 1, 32, 3, 0)  /* 3 */  \
    X(128, 64, 2, 2, 32, 3, 0)  /* 4 */  \
    X(128, 80, 4, 1, 32, 3, 0)  /* 5 */  \
    X(128, 128, 2, 4, 32, 3, 0) /* 6 */  \
    X(64, 16, 2, 1, 32, 3, 0)   /* 7 */  \
    X(64, 32, 2, 1, 32, 3, 0)   /* 8 */  \
    X(64, 64, 2, 2, 32, 3, 0)   /* 9 */  \
    X(64, 128, 2, 2, 32, 3, 0)  /* 10 */ \
    X(128, 64, 2, 2, 64, 3, 0)  /* 11 */ \
    X(128, 128, 2, 4, 64, 3, 0) /* 12 */ \
    X(256, 32, 8, 1, 32, 3, 0)  /* 13 */ \
    X(256, 64, 4, 2, 32, 3, 0)  /* 14 */ \
    X(128, 64, 2, 2, 32, 4, 0)  /* 15 */ \
    X(64, 80, 2, 1, 32, 3, 0)   /* 16 */ \
    X(256, 16, 8, 1, 32, 3, 0)  /* 17 */

typedef struct strix_mma_tile {
    int bm, bn, bk, stages, threads, splitk;
} strix_mma_tile;

#define STRIX_MMA_TILE_ROW(bm, bn, wm, wn, bk, stages, splitk) {bm, bn, bk, stages, (wm) * (wn) * 32, splitk},
static const strix_mma_tile strix_mma_tiles[] = {{0, 0, 0, 0, 0, 0}, STRIX_MMA_TILES(STRIX_MMA_TILE_ROW)};
#undef STRIX_MMA_TILE_ROW
#define STRIX_MMA_N_TILES ((int)(sizeof strix_mma_tiles / sizeof *strix_mma_tiles) - 1)

/* Split-K bounds: a slice keeps at least STRIX_SPLITK_MIN_STEPS BK steps
 * (a 3-stage pipeline spends its first two filling: fewer steps would be
 * mostly fill and drain), and K is cut into at most STRIX_SPLITK_MAX slices
 * (the partials of M x Ng fp32 per slice go through L2 twice). */
#define STRIX_SPLITK_MIN_STEPS 4
#define STRIX_SPLITK_MAX 16

/* The tile for a layer of M rows and Ng output channels on a GPU of `sms`
 * SMs, from `conv_lab --variants` on an H100
 * (perf/results/2026-11-25-h100-dev/run2: every yolov8n shape at batch 1, 64
 * and 256).  Grids of at least two blocks per SM: the narrowest tile that
 * covers Cout (no tensor-core work on padding columns), 256 rows tall up to
 * 64 wide, 128x80, then 128x128 with 64-deep slices (fastest on 42 of 44
 * shapes at batch 256 within 5%).  Smaller grids (batch 1, small images):
 * 128x16, whose extra blocks beat every wider tile on 37 of 44 shapes. */
static inline int strix_mma_pick(int m, int ng, int sms)
{
    const int big = ng <= 16 ? 17 : ng <= 32 ? 13 : ng <= 48 ? 3 : ng <= 64 ? 14 : ng <= 80 ? 5 : 12;
    const strix_mma_tile *t = &strix_mma_tiles[big];
    const long long blocks = (long long)((m + t->bm - 1) / t->bm) * ((ng + t->bn - 1) / t->bn);
    return blocks >= 2LL * sms ? big : 1;
}

/* How many K slices a grid of `blocks` blocks with `steps` BK steps each
 * gets on `sms` SMs: 1 when the grid already fills the SMs; else enough
 * slices for blocks * slices >= sms (one block per SM: at these sizes every
 * block is latency-bound, so a second block per SM would halve K again for
 * a smaller gain, a guess the kernel lab's batch-1 run is to settle),
 * bounded so that each slice keeps STRIX_SPLITK_MIN_STEPS steps and by
 * STRIX_SPLITK_MAX.  The one place this choice is made. */
static inline int strix_splitk_count(long long blocks, int steps, int sms)
{
    if (blocks < 1 || blocks >= sms) return 1;
    long long want = (sms + blocks - 1) / blocks;
    int most = steps / STRIX_SPLITK_MIN_STEPS;
    if (most > STRIX_SPLITK_MAX) most = STRIX_SPLITK_MAX;
    return want < most ? (int)want : most < 1 ? 1 : most;
}

/* A convolution's launch on the mma.sync path. */
typedef struct strix_mma_plan {
    int tile;            /* index into strix_mma_tiles */
    int grid_m, grid_n;  /* blocks along M and along Ng */
    int m, steps;        /* GEMM rows; BK steps over the whole K */
    int splits;          /* K slices (grid z); 1: no split, the output written directly */
    int slice_steps;     /* BK steps of every slice but the last (the whole K when splits == 1) */
    int ldp;             /* floats per row of a slice's partials: Ng rounded up to 8 */
    size_t ws_bytes;     /* the partials' workspace: splits * m * ldp floats; 0 when splits == 1 */
} strix_mma_plan;

/* The plan of an M x Ng x K convolution (M, Ng, K >= 1) on `sms` SMs (>= 1):
 * tile `variant` (1 .. STRIX_MMA_N_TILES) or, for variant 0, the pick's;
 * splitk: kernel set 3 (K split as strix_splitk_count says, where the tile
 * allows), else never split (kernel set 2, the lab's fixed variants). */
static inline strix_mma_plan strix_mma_plan_make(int m, int ng, int k, int sms, int variant, int splitk)
{
    strix_mma_plan p;
    p.tile = variant ? variant : strix_mma_pick(m, ng, sms);
    const strix_mma_tile *t = &strix_mma_tiles[p.tile];
    p.grid_m = (m + t->bm - 1) / t->bm;
    p.grid_n = (ng + t->bn - 1) / t->bn;
    p.m = m;
    p.steps = (k + t->bk - 1) / t->bk;
    int s = splitk && t->splitk ? strix_splitk_count((long long)p.grid_m * p.grid_n, p.steps, sms) : 1;
    /* equal slices of whole steps; rounding the slice up may leave fewer
     * slices than asked, never an empty one */
    p.slice_steps = (p.steps + s - 1) / s;
    p.splits = (p.steps + p.slice_steps - 1) / p.slice_steps;
    p.ldp = (ng + 7) / 8 * 8;
    p.ws_bytes = p.splits > 1 ? (size_t)p.splits * (size_t)m * (size_t)p.ldp * sizeof(float) : 0;
    return p;
}

/* The partial sum of slice s for GEMM row m, column c (c < ldp): its float
 * index in the workspace, [splits][M][ldp]. */
STRIX_PLAN_FN size_t strix_splitk_index(int m_total, int ldp, int s, int m, int c)
{
    return ((size_t)s * (size_t)m_total + (size_t)m) * (size_t)ldp + (size_t)c;
}

/* Kernel set 3's stem (conv_mma.cu, conv_stem_smem): a block computes a
 * STRIX_STEM_TILE_H x STRIX_STEM_TILE_W tile of output pixels of one image
 * (one thread each) and loads, once, the input those pixels read: rows
 * [oy0*sh - ph, +strix_stem_in_extent(TILE_H, sh, kh, dh)) and likewise for
 * columns, all cg channels, into shared fp32 [rows][cols][cg] (zeros
 * outside the image, never read: the kernel skips those taps as set 2's
 * stem does).  Output (oy, ox), tap (ky, kx), channel ci reads the cell
 * strix_stem_smem_index(...).  Where the tile's floats exceed
 * STRIX_STEM_SMEM_FLOATS (large strides or dilations) set 2's stem runs. */
#define STRIX_STEM_TILE_W 16
#define STRIX_STEM_TILE_H 8
#define STRIX_STEM_SMEM_FLOATS 8192 /* 32 KiB; with the 12.5 KiB of weights under the 48 KiB of static shared memory */

/* Input rows (or columns) that `tile` consecutive outputs read. */
STRIX_PLAN_FN int strix_stem_in_extent(int tile, int stride, int k, int dil)
{
    return (tile - 1) * stride + (k - 1) * dil + 1;
}

/* The shared-memory cell of output (oy, ox) of the tile at (oy0, ox0), tap
 * (ky, kx), channel ci, in a tile `cols` input columns wide. */
STRIX_PLAN_FN int strix_stem_smem_index(int oy, int ox, int oy0, int ox0, int ky, int kx, int ci, int sh, int sw,
                                        int dh, int dw, int cols, int cg)
{
    return (((oy - oy0) * sh + ky * dh) * cols + (ox - ox0) * sw + kx * dw) * cg + ci;
}

#endif
