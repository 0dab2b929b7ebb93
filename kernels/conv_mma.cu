/* conv_mma.cu — the v2 convolution kernels (model option cuda_kernels 2):
 * an fp16 implicit GEMM on tensor cores through mma.sync, and a direct stem
 * convolution for inputs of at most STEM_MAX_CIN channels; and the v3 set
 * (cuda_kernels 3, not yet run on a GPU): the same, with K split where the
 * grid would leave SMs idle.  Same semantics,
 * layouts and epilogue as conv.cu (read its header first):
 *   in  [N, H, W, Cin] strided NHWC view, fp16;  w [Cout, KH, KW, Cin] OHWI;
 *   C[M][Cout] = A[M][K] * B[K][Cout], M = N*OH*OW, K = KH*KW*Cin, row m of A
 *   the receptive field of output pixel m in (ky, kx, ci) order.
 *
 * conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, SPLIT, FOLD>: a block computes a
 * BM x BN tile of C with WARPS_M x WARPS_N warps, each a (BM/WARPS_M) x
 * (BN/WARPS_N) block of m16n8k16 accumulators (fp32).  K advances BK at a
 * time through a STAGES-deep ring of shared-memory slices filled by cp.async
 * (16 bytes, zero-filled for padding taps and every tail), so the loads of
 * slice k+STAGES-1 overlap the tensor-core work on slice k.  Each 16-byte
 * chunk of an A row is 8 consecutive channels of one tap (Cin % 8 == 0), so a
 * chunk is one aligned global load and the im2col is only address
 * arithmetic.  Shared rows are BK + 8 halves (80 or 144 bytes): the 8 row
 * addresses of an ldmatrix phase then fall in 8 distinct 16-byte bank groups
 * (conflict-free).  The epilogue computes act(acc + bias) in fp32, stages the
 * tile in shared memory (fp32, [BM][BN + 4]) and writes 16-byte vectors of 8
 * channels (adding the residual in fp32, one rounding) straight into the
 * strided output view: a 1x1 convolution needs no cuBLAS call, no fp32
 * staging in global memory and no second kernel.  mma.sync m16n8k16 and
 * cp.async need sm_80: on sm_75 the kernel body is empty and mma_ok says no,
 * so those GPUs keep the WMMA path of conv.cu.
 * Tile shapes: conv_plan.h's STRIX_MMA_TILES (one table, mma_kernels here);
 * which one a layer gets: strix_mma_pick there.
 *
 * Split-K (v3): where the picked tile's grid has fewer blocks than the GPU
 * has SMs (batch 1: the 20x20 and 40x40 layers), strix_mma_plan_make cuts K
 * into slices of whole BK steps.  conv_mma_f16<..., true> runs the same
 * block code on its slice (grid z) and writes the raw fp32 sums as 16-byte
 * vectors into the workspace, [splits][M][ldp]; conv_splitk_reduce adds the
 * slices in a fixed order and applies the v2 epilogue.
 *
 * Folded upsample (v3, not yet run on a GPU): conv_mma_f16<..., FOLD = true>
 * reads the input channels [f.c0, f.c1) from the source of the nearest
 * upsample that would have written them (into a Concat slice that this
 * convolution alone reads), at (y / scale, x / scale): the upsample kernel
 * does not run and its output is never written nor read.  A chunk's source
 * is chosen by its first channel (fold_plan.h: chunks never straddle the two
 * sources); everything else is the FOLD = false kernel, whose instructions
 * FOLD leaves unchanged (if constexpr).
 *
 * conv_stem_direct<T>: one thread per output pixel and STEM_CO output
 * channels; the chunk's weights (fp32) in shared memory; fp32 FMAs over
 * (ky, kx, ci); the 16 results written as two 16-byte vectors when the view
 * allows.  The implicit GEMM would waste most of a tile on K = 27.
 * conv_stem_smem<T> (v3, not yet run on a GPU): the same per thread, over
 * an output tile whose input (with its halo) a block loads into shared
 * memory once (conv_plan.h: strix_stem_*). */
#include <climits>
#include <cstdint>

#include "conv.cuh"

namespace strix_conv {

namespace {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define MMA_DEVICE 0 /* no mma.sync m16n8k16 / cp.async: bodies compiled out */
#else
#define MMA_DEVICE 1
#endif

#if MMA_DEVICE
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* 16 bytes global -> shared, asynchronously; bytes = 0 writes zeros. */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* d += a * b, m16n8k16, fp16 inputs, fp32 accumulators. */
__device__ __forceinline__ void mma_16816(float d[4], const unsigned a[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif

/* act(acc + bias[co]) in fp32, as epilogue_store computes it before the residual. */
__device__ __forceinline__ float epi_value(const Epi &e, int co, float acc)
{
    float v = acc + e.bias[co];
    if (e.act == STRIX_ACT_SILU) v = v / (1.0f + expf(-v));
    return v;
}

/* Whether 8-channel runs of a view (data, pixel and image strides) are aligned 16-byte vectors. */
__host__ __device__ __forceinline__ bool vec8_ok(const void *p, size_t pix, size_t batch)
{
    return (uintptr_t)p % 16 == 0 && pix % 8 == 0 && batch % 8 == 0;
}

/* 8 fp32 values (+ 8 fp16 residuals) rounded once into one 16-byte vector. */
__device__ __forceinline__ uint4 pack8(const float *v, const __half *res)
{
    float r[8];
#pragma unroll
    for (int i = 0; i < 8; i++) r[i] = v[i];
    if (res) {
        uint4 rv = *reinterpret_cast<const uint4 *>(res);
        const __half2 *h = reinterpret_cast<const __half2 *>(&rv);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float2 f = __half22float2(h[i]);
            r[2 * i] += f.x, r[2 * i + 1] += f.y;
        }
    }
    uint4 out;
    __half2 *o = reinterpret_cast<__half2 *>(&out);
#pragma unroll
    for (int i = 0; i < 4; i++) o[i] = __floats2half2_rn(r[2 * i], r[2 * i + 1]);
    return out;
}

template <int BM, int BN, int BK, int STAGES>
struct MmaSmem {
    static constexpr int LDS = BK + 8;  /* halves per pipeline row */
    static constexpr int LDC = BN + 4;  /* floats per row of the staged C tile */
    static constexpr size_t PIPE = (size_t)STAGES * (BM + BN) * LDS * sizeof(__half);
    static constexpr size_t C = (size_t)BM * LDC * sizeof(float);
    static constexpr size_t BYTES = PIPE > C ? PIPE : C;
};

/* Where kernel set 3's split kernel writes its partial sums (conv_plan.h). */
struct SplitK {
    float *ws;       /* [splits][M][ldp] fp32 */
    int splits, slice_steps, ldp;
};

/* SPLIT false (kernel set 2, and 3 where K is not split): the whole K and
 * the epilogue; sk unused.  (Its instructions are those of the v2 kernel
 * before split-K existed: a __device__ body shared by two __global__
 * wrappers compiled to different code, so SPLIT is a template argument of
 * the kernel itself.)  SPLIT true: the K slice blockIdx.z of sk.slice_steps
 * BK steps, its raw fp32 sums written to the workspace for
 * conv_splitk_reduce. */
template <int BM, int BN, int WARPS_M, int WARPS_N, int BK, int STAGES, bool SPLIT, bool FOLD>
__global__ void __launch_bounds__(WARPS_M *WARPS_N * 32) conv_mma_f16(ConvArgs a, SplitK sk, strix_up_fold f)
{
#if MMA_DEVICE
    constexpr int THREADS = WARPS_M * WARPS_N * 32;
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* a warp's block of C */
    constexpr int MI = WM / 16, NI = WN / 8;            /* its m16 x n8 accumulators */
    constexpr int CHUNKS = BK / 8;                      /* 16-byte chunks per slice row */
    using S = MmaSmem<BM, BN, BK, STAGES>;
    constexpr int LDS = S::LDS, LDC = S::LDC;
    static_assert(WM % 16 == 0 && WN % 16 == 0, "ldmatrix.x4 loads B two n8 tiles at a time");
    static_assert(BK % 16 == 0 && THREADS % CHUNKS == 0, "a thread keeps one chunk column");
    constexpr int A_PER_T = BM * CHUNKS / THREADS; /* A chunks a thread loads per slice */
    static_assert(A_PER_T * THREADS == BM * CHUNKS, "the A loader covers the slice exactly");
    constexpr int B_PER_T = CEIL_DIV(BN * CHUNKS, THREADS);

    extern __shared__ __align__(128) unsigned char smem[];
    __half(*As)[BM][LDS] = reinterpret_cast<__half(*)[BM][LDS]>(smem);
    __half(*Bs)[BN][LDS] = reinterpret_cast<__half(*)[BN][LDS]>(smem + STAGES * BM * LDS * sizeof(__half));
    float(*Cs)[LDC] = reinterpret_cast<float(*)[LDC]>(smem); /* after the K loop */

    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const __half *in = static_cast<const __half *>(a.in);
    const __half *wt = static_cast<const __half *>(a.wt);

    /* the loader: chunk column kc of rows t/CHUNKS + i*THREADS/CHUNKS */
    const int kc = t % CHUNKS;
    size_t a_base[A_PER_T];
    int a_iy[A_PER_T], a_ix[A_PER_T];
    int a_n[FOLD ? A_PER_T : 1]; /* FOLD: the row's image (read only where its taps are in the image) */
#pragma unroll
    for (int i = 0; i < A_PER_T; i++) {
        int m = m0 + t / CHUNKS + i * (THREADS / CHUNKS);
        if constexpr (FOLD) a_n[i] = m < a.m ? m / a.ohw : 0;
        if (m < a.m) {
            int n = m / a.ohw, pix = m - n * a.ohw, oy = pix / a.ow, ox = pix - oy * a.ow;
            a_base[i] = (size_t)n * a.in_batch;
            a_iy[i] = oy * a.sh - a.ph;
            a_ix[i] = ox * a.sw - a.pw;
        } else {
            a_base[i] = 0;
            a_iy[i] = INT_MIN / 2; /* every tap out of the image: zero rows */
            a_ix[i] = 0;
        }
    }

    auto load_slice = [&](int stage, int k0) {
        const int k = k0 + kc * 8;
        int tap = k / a.cg, ci = k - tap * a.cg, ky = tap / a.kw, kx = tap - ky * a.kw;
        const bool kin = k < a.k;
        bool up = false; /* FOLD: this chunk column's channels are the upsample's (fold_plan.h) */
        if constexpr (FOLD) up = strix_fold_hit(&f, ci);
#pragma unroll
        for (int i = 0; i < A_PER_T; i++) {
            int iy = a_iy[i] + ky * a.dh, ix = a_ix[i] + kx * a.dw;
            bool ok = kin && iy >= 0 && iy < a.h && ix >= 0 && ix < a.w;
            const __half *src = ok ? in + a_base[i] + ((size_t)iy * a.w + ix) * a.in_pix + ci : in;
            if constexpr (FOLD)
                if (ok && up) src = static_cast<const __half *>(f.src) + strix_fold_offset(&f, a_n[i], iy, ix, ci);
            cp_async16(&As[stage][t / CHUNKS + i * (THREADS / CHUNKS)][kc * 8], src, ok ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < B_PER_T; i++) {
            int c = t + i * THREADS;
            if (c < BN * CHUNKS) {
                int row = c / CHUNKS, kb = k0 + c % CHUNKS * 8, co = n0 + row;
                bool ok = co < a.ng && kb < a.k;
                const __half *src = ok ? wt + (size_t)co * a.k + kb : wt;
                cp_async16(&Bs[stage][row][c % CHUNKS * 8], src, ok ? 16 : 0);
            }
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;

    /* this block's BK steps: kt0 .. kt0 + kt_count - 1 */
    const int kt_total = CEIL_DIV(a.k, BK);
    const int kt0 = SPLIT ? (int)blockIdx.z * sk.slice_steps : 0;
    const int kt_count = SPLIT ? min(sk.slice_steps, kt_total - kt0) : kt_total;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < kt_count) load_slice(s, (kt0 + s) * BK);
        cp_async_commit(); /* one group per slice, empty past K: the wait count stays fixed */
    }
    for (int kt = 0; kt < kt_count; kt++) {
        cp_async_wait<STAGES - 2>(); /* slice kt has landed (this thread's part) */
        __syncthreads();             /* ... every thread's, and slice kt-1 is consumed */
        const int next = kt + STAGES - 1;
        if (next < kt_count) load_slice(next % STAGES, (kt0 + next) * BK);
        cp_async_commit();
        const int st = kt % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; i++)
                ldmatrix_x4(af[i], &As[st][wm + i * 16 + (lane & 15)][kk + (lane >> 4) * 8]);
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                unsigned r[4];
                ldmatrix_x4(r, &Bs[st][wn + j * 8 + (lane & 7) + ((lane >> 4) << 3)][kk + ((lane >> 3) & 1) * 8]);
                bf[j][0] = r[0], bf[j][1] = r[1], bf[j + 1][0] = r[2], bf[j + 1][1] = r[3];
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) mma_16816(acc[i][j], af[i], bf[j][0], bf[j][1]);
        }
    }
    cp_async_wait<0>();
    __syncthreads(); /* every warp is done with the slices, which Cs overwrites */

    /* accumulator (i, j, r): row wm + 16i + lane/4 (+8 for r >= 2), column
     * wn + 8j + 2*(lane%4) (+1 for odd r); staged in fp32: act(acc + bias),
     * or SPLIT the raw sums */
    const Epi &e = a.epi;
#pragma unroll
    for (int j = 0; j < NI; j++) {
        const int c = wn + j * 8 + 2 * (lane % 4), co = n0 + c;
        const float b0 = !SPLIT && co < a.ng ? e.bias[co] : 0.0f, b1 = !SPLIT && co + 1 < a.ng ? e.bias[co + 1] : 0.0f;
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
                if (!SPLIT) {
                    v0 += b0, v1 += b1;
                    if (e.act == STRIX_ACT_SILU) v0 = v0 / (1.0f + expf(-v0)), v1 = v1 / (1.0f + expf(-v1));
                }
                *reinterpret_cast<float2 *>(&Cs[wm + i * 16 + lane / 4 + h * 8][c]) = make_float2(v0, v1);
            }
    }
    __syncthreads();

    if (SPLIT) {
        /* 16-byte vectors of 4 partials: consecutive threads take consecutive
         * vectors of a row; columns past Ng (zero: B is zero-filled there)
         * up to ldp keep every vector whole */
        constexpr int QPR = BN / 4; /* vectors per tile row */
        for (int idx = t; idx < BM * QPR; idx += THREADS) {
            const int r = idx / QPR, c = idx % QPR * 4, m = m0 + r, co = n0 + c;
            if (m >= a.m || co >= sk.ldp) continue;
            *reinterpret_cast<float4 *>(sk.ws + strix_splitk_index(a.m, sk.ldp, blockIdx.z, m, co)) =
                *reinterpret_cast<const float4 *>(&Cs[r][c]);
        }
        return;
    }

    /* 8-channel vectors: consecutive threads take consecutive vectors of a row */
    __half *out = static_cast<__half *>(e.out);
    const __half *res = static_cast<const __half *>(e.res);
    const bool vec = vec8_ok(out, e.out_pix, e.out_batch) && (!res || vec8_ok(res, e.res_pix, e.res_batch));
    constexpr int VPR = BN / 8; /* vectors per tile row */
    for (int idx = t; idx < BM * VPR; idx += THREADS) {
        const int r = idx / VPR, c = idx % VPR * 8, m = m0 + r, co = n0 + c;
        if (m >= a.m || co >= a.ng) continue;
        const int n = m / a.ohw, pix = m - n * a.ohw;
        __half *orow = out + (size_t)n * e.out_batch + (size_t)pix * e.out_pix + co;
        const __half *rrow = res ? res + (size_t)n * e.res_batch + (size_t)pix * e.res_pix + co : nullptr;
        if (vec && co + 8 <= a.ng) {
            *reinterpret_cast<uint4 *>(orow) = pack8(&Cs[r][c], rrow);
        } else {
            for (int q = 0; q < 8 && co + q < a.ng; q++) {
                float v = Cs[r][c + q];
                if (rrow) v += __half2float(rrow[q]);
                orow[q] = __float2half_rn(v);
            }
        }
    }
#endif
}

/* Kernel set 3's second pass: out = epilogue(sum of the slices' partials).
 * One thread per 8-channel group of a GEMM row; the slices are added in
 * slice order 0, 1, ..., so the result is the same bits on every run
 * whichever blocks of the first pass finished first.  A separate kernel
 * rather than the last-arriving block of each tile (a counter per tile):
 * split-K only runs where the first pass has fewer tiles than SMs, and this
 * spreads the reduction and the epilogue's stores over every SM instead of
 * one block per tile, needs no counters to zero before the first use (nor to
 * reset inside a captured graph), and adds one launch, which graph replay
 * makes cheap.  The epilogue is set 2's: act(sum + bias) in fp32, the
 * residual added in fp32, one rounding, 16-byte vectors into the strided
 * output view where it allows. */
#define SPLITK_REDUCE_THREADS 256

__global__ void __launch_bounds__(SPLITK_REDUCE_THREADS) conv_splitk_reduce(ConvArgs a, SplitK sk)
{
    const int groups = sk.ldp / 8;
    const long long idx = (long long)blockIdx.x * SPLITK_REDUCE_THREADS + threadIdx.x;
    if (idx >= (long long)a.m * groups) return;
    const int m = (int)(idx / groups), co = (int)(idx % groups) * 8;
    float v[8];
#pragma unroll
    for (int q = 0; q < 8; q++) v[q] = 0.0f;
    for (int s = 0; s < sk.splits; s++) {
        const float4 *p = reinterpret_cast<const float4 *>(sk.ws + strix_splitk_index(a.m, sk.ldp, s, m, co));
        const float4 lo = p[0], hi = p[1];
        v[0] += lo.x, v[1] += lo.y, v[2] += lo.z, v[3] += lo.w;
        v[4] += hi.x, v[5] += hi.y, v[6] += hi.z, v[7] += hi.w;
    }
    const Epi &e = a.epi;
#pragma unroll
    for (int q = 0; q < 8; q++)
        if (co + q < a.ng) v[q] = epi_value(e, co + q, v[q]);
    const int n = m / a.ohw, pix = m - n * a.ohw;
    __half *orow = static_cast<__half *>(e.out) + (size_t)n * e.out_batch + (size_t)pix * e.out_pix + co;
    const __half *res = static_cast<const __half *>(e.res);
    const __half *rrow = res ? res + (size_t)n * e.res_batch + (size_t)pix * e.res_pix + co : nullptr;
    if (co + 8 <= a.ng && vec8_ok(e.out, e.out_pix, e.out_batch) && (!res || vec8_ok(res, e.res_pix, e.res_batch))) {
        *reinterpret_cast<uint4 *>(orow) = pack8(v, rrow);
        return;
    }
    for (int q = 0; q < 8 && co + q < a.ng; q++) {
        float r = v[q];
        if (rrow) r += __half2float(rrow[q]);
        orow[q] = __float2half_rn(r);
    }
}

/* ---- the tile table (conv_plan.h's STRIX_MMA_TILES): each tile's kernels
 * (the split one only where the tile may split) and shared memory */
using MmaKernel = void (*)(ConvArgs, SplitK, strix_up_fold);
struct MmaKernels {
    MmaKernel kernel;
    MmaKernel split;      /* nullptr: the tile never splits */
    MmaKernel fold;       /* kernel set 3's folded upsample (fold_plan.h) */
    MmaKernel fold_split; /* the same, K split; nullptr with split */
    size_t smem;
};

template <int BM, int BN, int WARPS_M, int WARPS_N, int BK, int STAGES, int SPLITK>
constexpr MmaKernels mma_kernels_of()
{
    constexpr size_t smem = MmaSmem<BM, BN, BK, STAGES>::BYTES;
    if constexpr (SPLITK)
        return MmaKernels{conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, false, false>,
                          conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, true, false>,
                          conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, false, true>,
                          conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, true, true>, smem};
    else
        return MmaKernels{conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, false, false>, nullptr,
                          conv_mma_f16<BM, BN, WARPS_M, WARPS_N, BK, STAGES, false, true>, nullptr, smem};
}

#define MMA_KERNELS_ROW(bm, bn, wm, wn, bk, stages, splitk) mma_kernels_of<bm, bn, wm, wn, bk, stages, splitk>(),
/* index 0 unused, as in strix_mma_tiles */
const MmaKernels mma_kernels[] = {{nullptr, nullptr, nullptr, nullptr, 0}, STRIX_MMA_TILES(MMA_KERNELS_ROW)};
#undef MMA_KERNELS_ROW
static_assert(sizeof mma_kernels / sizeof *mma_kernels == STRIX_MMA_N_TILES + 1, "one kernel row per tile");

/* Above 48 KiB a kernel must opt in to its dynamic shared memory; a
 * host-side attribute, also legal while a stream is being captured. */
template <typename K>
strix_cuda_err smem_opt_in(K kernel, size_t smem)
{
    if (smem <= 48 * 1024) return (strix_cuda_err)cudaSuccess;
    return (strix_cuda_err)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
}

/* ---- the stem */
#define STEM_CO 16     /* output channels per thread */
#define STEM_THREADS 128
#define STEM_MAX_TAPS 49 /* kernels up to 7x7 */

/* The stem's 16 weights rows of chunk co0 into shared memory (fp32;
 * rows past Cout zero). */
template <typename T>
__device__ __forceinline__ void stem_weights(const ConvArgs &a, int co0, int nco,
                                             float (*ws)[STEM_MAX_TAPS * STEM_MAX_CIN])
{
    const T *wt = static_cast<const T *>(a.wt);
    for (int i = threadIdx.x; i < STEM_CO * a.k; i += STEM_THREADS) {
        int c = i / a.k, k = i - c * a.k;
        ws[c][k] = c < nco ? load(wt + (size_t)(co0 + c) * a.k + k) : 0.0f;
    }
}

/* The epilogue of output pixel pix of image n, channels co0 .. co0 + nco. */
template <typename T>
__device__ __forceinline__ void stem_store(const ConvArgs &a, int n, int pix, int co0, int nco, float acc[STEM_CO])
{
    const Epi &e = a.epi;
    if (sizeof(T) == 2 && nco == STEM_CO && vec8_ok(e.out, e.out_pix, e.out_batch) &&
        (!e.res || vec8_ok(e.res, e.res_pix, e.res_batch))) {
        /* two 16-byte vectors: consecutive threads write consecutive pixels */
        size_t o = (size_t)n * e.out_batch + (size_t)pix * e.out_pix + co0;
        const __half *res = e.res ? static_cast<const __half *>(e.res) + (size_t)n * e.res_batch +
                                        (size_t)pix * e.res_pix + co0
                                  : nullptr;
#pragma unroll
        for (int c = 0; c < STEM_CO; c++) acc[c] = epi_value(e, co0 + c, acc[c]);
#pragma unroll
        for (int v = 0; v < STEM_CO / 8; v++)
            *reinterpret_cast<uint4 *>(static_cast<__half *>(e.out) + o + 8 * v) =
                pack8(acc + 8 * v, res ? res + 8 * v : nullptr);
        return;
    }
#pragma unroll
    for (int c = 0; c < STEM_CO; c++)
        if (c < nco) epilogue_store<T>(e, n, pix, co0 + c, acc[c]);
}

template <typename T>
__global__ void __launch_bounds__(STEM_THREADS) conv_stem_direct(ConvArgs a)
{
    __shared__ float ws[STEM_CO][STEM_MAX_TAPS * STEM_MAX_CIN]; /* [co - co0][k], k = (ky*KW + kx)*Cin + ci */
    const int co0 = blockIdx.y * STEM_CO, nco = min(STEM_CO, a.ng - co0);
    stem_weights<T>(a, co0, nco, ws);
    __syncthreads();
    const int m = blockIdx.x * STEM_THREADS + threadIdx.x;
    if (m >= a.m) return; /* no block-wide synchronisation below */
    const int n = m / a.ohw, pix = m - n * a.ohw, oy = pix / a.ow, ox = pix - oy * a.ow;
    const T *img = static_cast<const T *>(a.in) + (size_t)n * a.in_batch;
    float acc[STEM_CO];
#pragma unroll
    for (int c = 0; c < STEM_CO; c++) acc[c] = 0.0f;
    for (int ky = 0; ky < a.kh; ky++) {
        int iy = oy * a.sh - a.ph + ky * a.dh;
        if (iy < 0 || iy >= a.h) continue;
        for (int kx = 0; kx < a.kw; kx++) {
            int ix = ox * a.sw - a.pw + kx * a.dw;
            if (ix < 0 || ix >= a.w) continue;
            const T *px = img + ((size_t)iy * a.w + ix) * a.in_pix;
            const int kb = (ky * a.kw + kx) * a.cg;
            for (int ci = 0; ci < a.cg; ci++) {
                float v = load(px + ci);
#pragma unroll
                for (int c = 0; c < STEM_CO; c++) acc[c] = fmaf(v, ws[c][kb + ci], acc[c]);
            }
        }
    }
    stem_store<T>(a, n, pix, co0, nco, acc);
}

/* Kernel set 3's stem: conv_stem_direct's arithmetic (the same taps skipped,
 * the same FMAs in the same order, so the same bits), the block's input
 * tile read from global memory once (conv_plan.h: strix_stem_*) instead of
 * 27 scalar loads per thread through L1/L2.  Grid: x = image * tiles_y *
 * tiles_x, y = chunk of STEM_CO output channels; dynamic shared memory: the
 * input tile, rows * cols * cg floats. */
template <typename T>
__global__ void __launch_bounds__(STEM_THREADS) conv_stem_smem(ConvArgs a, int oh, int tiles_x, int tiles_y,
                                                               int rows, int cols)
{
    __shared__ float ws[STEM_CO][STEM_MAX_TAPS * STEM_MAX_CIN];
    extern __shared__ float tile[];
    const int co0 = blockIdx.y * STEM_CO, nco = min(STEM_CO, a.ng - co0);
    const int tiles = tiles_x * tiles_y, n = blockIdx.x / tiles, ti = blockIdx.x - n * tiles;
    const int oy0 = ti / tiles_x * STRIX_STEM_TILE_H, ox0 = (ti % tiles_x) * STRIX_STEM_TILE_W;
    const int iy0 = oy0 * a.sh - a.ph, ix0 = ox0 * a.sw - a.pw;
    stem_weights<T>(a, co0, nco, ws);
    const T *img = static_cast<const T *>(a.in) + (size_t)n * a.in_batch;
    /* consecutive threads, consecutive channels then pixels of a row: one
     * contiguous run per input row when the image is dense */
    for (int i = threadIdx.x; i < rows * cols * a.cg; i += STEM_THREADS) {
        const int ci = i % a.cg, p = i / a.cg, iy = iy0 + p / cols, ix = ix0 + p % cols;
        tile[i] = iy >= 0 && iy < a.h && ix >= 0 && ix < a.w ? load(img + ((size_t)iy * a.w + ix) * a.in_pix + ci)
                                                             : 0.0f;
    }
    __syncthreads();
    const int oy = oy0 + threadIdx.x / STRIX_STEM_TILE_W, ox = ox0 + threadIdx.x % STRIX_STEM_TILE_W;
    if (oy >= oh || ox >= a.ow) return; /* no block-wide synchronisation below */
    float acc[STEM_CO];
#pragma unroll
    for (int c = 0; c < STEM_CO; c++) acc[c] = 0.0f;
    for (int ky = 0; ky < a.kh; ky++) {
        int iy = oy * a.sh - a.ph + ky * a.dh;
        if (iy < 0 || iy >= a.h) continue;
        for (int kx = 0; kx < a.kw; kx++) {
            int ix = ox * a.sw - a.pw + kx * a.dw;
            if (ix < 0 || ix >= a.w) continue;
            const float *px = tile + strix_stem_smem_index(oy, ox, oy0, ox0, ky, kx, 0, a.sh, a.sw, a.dh, a.dw, cols, a.cg);
            const int kb = (ky * a.kw + kx) * a.cg;
            for (int ci = 0; ci < a.cg; ci++) {
                float v = px[ci];
#pragma unroll
                for (int c = 0; c < STEM_CO; c++) acc[c] = fmaf(v, ws[c][kb + ci], acc[c]);
            }
        }
    }
    stem_store<T>(a, n, oy * a.ow + ox, co0, nco, acc);
}

} /* namespace */

bool mma_ok(const ConvArgs &a, const strix_dview *in, const void *w, strix_dtype dt)
{
    if (dt != STRIX_F16 || a.groups != 1 || a.cg % 8 || in->pix_stride % 8 || in->batch_stride % 8 ||
        (uintptr_t)in->data % 16 || (uintptr_t)w % 16)
        return false;
    int dev = 0, major = 0;
    return cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 8;
}

strix_cuda_err mma_launch(const ConvArgs &a, int variant, int sms, bool splitk, const strix_up_fold *fold,
                          void *workspace, cudaStream_t s)
{
    if (variant < 0 || variant > STRIX_MMA_N_TILES || sms < 1) return (strix_cuda_err)cudaErrorInvalidValue;
    const strix_mma_plan p = strix_mma_plan_make(a.m, a.ng, a.k, sms, variant, splitk);
    const MmaKernels &k = mma_kernels[p.tile];
    const int threads = strix_mma_tiles[p.tile].threads;
    const strix_up_fold f = fold ? *fold : strix_up_fold{};
    strix_cuda_err rc;
    if (p.splits == 1) {
        const MmaKernel kernel = fold ? k.fold : k.kernel;
        if ((rc = smem_opt_in(kernel, k.smem))) return rc;
        kernel<<<dim3(p.grid_m, p.grid_n), threads, k.smem, s>>>(a, SplitK{}, f);
        return last_error();
    }
    /* the plan splits only tiles that have a split kernel */
    if (!workspace || (uintptr_t)workspace % 16) return (strix_cuda_err)cudaErrorInvalidValue;
    const SplitK sk{static_cast<float *>(workspace), p.splits, p.slice_steps, p.ldp};
    const MmaKernel split = fold ? k.fold_split : k.split;
    if ((rc = smem_opt_in(split, k.smem))) return rc;
    split<<<dim3(p.grid_m, p.grid_n, p.splits), threads, k.smem, s>>>(a, sk, f);
    if ((rc = last_error())) return rc;
    const long long vectors = (long long)a.m * (p.ldp / 8);
    conv_splitk_reduce<<<(unsigned)CEIL_DIV(vectors, SPLITK_REDUCE_THREADS), SPLITK_REDUCE_THREADS, 0, s>>>(a, sk);
    return last_error();
}

bool stem_ok(const ConvArgs &a)
{
    return a.groups == 1 && a.cg <= STEM_MAX_CIN && a.kh * a.kw <= STEM_MAX_TAPS;
}

strix_cuda_err stem_launch(const ConvArgs &a, strix_dtype dt, bool smem, cudaStream_t s)
{
    if (smem) {
        const int oh = a.ohw / a.ow, n = a.m / a.ohw;
        const int rows = strix_stem_in_extent(STRIX_STEM_TILE_H, a.sh, a.kh, a.dh);
        const int cols = strix_stem_in_extent(STRIX_STEM_TILE_W, a.sw, a.kw, a.dw);
        const int tiles_x = CEIL_DIV(a.ow, STRIX_STEM_TILE_W), tiles_y = CEIL_DIV(oh, STRIX_STEM_TILE_H);
        const long long blocks = (long long)n * tiles_x * tiles_y, floats = (long long)rows * cols * a.cg;
        if (floats <= STRIX_STEM_SMEM_FLOATS && blocks <= INT_MAX) {
            dim3 grid((unsigned)blocks, CEIL_DIV(a.ng, STEM_CO));
            const size_t bytes = (size_t)floats * sizeof(float);
            if (dt == STRIX_F16)
                conv_stem_smem<__half><<<grid, STEM_THREADS, bytes, s>>>(a, oh, tiles_x, tiles_y, rows, cols);
            else
                conv_stem_smem<float><<<grid, STEM_THREADS, bytes, s>>>(a, oh, tiles_x, tiles_y, rows, cols);
            return last_error();
        }
    }
    dim3 grid(CEIL_DIV(a.m, STEM_THREADS), CEIL_DIV(a.ng, STEM_CO));
    if (dt == STRIX_F16)
        conv_stem_direct<__half><<<grid, STEM_THREADS, 0, s>>>(a);
    else
        conv_stem_direct<float><<<grid, STEM_THREADS, 0, s>>>(a);
    return last_error();
}

} /* namespace strix_conv */
