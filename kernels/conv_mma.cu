/* conv_mma.cu — the v2 convolution kernels (model option cuda_kernels 2):
 * an fp16 implicit GEMM on tensor cores through mma.sync, and a direct stem
 * convolution for inputs of at most STEM_MAX_CIN channels.  Same semantics,
 * layouts and epilogue as conv.cu (read its header first):
 *   in  [N, H, W, Cin] strided NHWC view, fp16;  w [Cout, KH, KW, Cin] OHWI;
 *   C[M][Cout] = A[M][K] * B[K][Cout], M = N*OH*OW, K = KH*KW*Cin, row m of A
 *   the receptive field of output pixel m in (ky, kx, ci) order.
 *
 * conv_mma_f16<BM, BN, WARPS_M, WARPS_N>: a block computes a BM x BN tile of
 * C with WARPS_M x WARPS_N warps, each a (BM/WARPS_M) x (BN/WARPS_N) block of
 * m16n8k16 accumulators (fp32).  K advances MMA_BK = 32 at a time through an
 * MMA_STAGES-deep ring of shared-memory slices filled by cp.async (16 bytes,
 * zero-filled for padding taps and every tail), so the loads of slice k+2
 * overlap the tensor-core work on slice k.  Each 16-byte chunk of an A row is
 * 8 consecutive channels of one tap (Cin % 8 == 0), so a chunk is one aligned
 * global load and the im2col is only address arithmetic.  Shared rows are
 * MMA_LDS = 40 halves (80 bytes): the 8 row addresses of an ldmatrix phase
 * then fall in 8 distinct 16-byte bank groups (conflict-free).  The epilogue
 * (bias, SiLU, residual, one rounding) runs on the accumulators in registers
 * and writes half2 pairs straight into the strided output view, so a 1x1
 * convolution needs no cuBLAS call, no fp32 staging and no second kernel.
 * Tile shape per layer: conv_mma_pick (one place).
 *
 * conv_stem_direct<T>: one thread per output pixel and STEM_CO output
 * channels; the chunk's weights (fp32) in shared memory; fp32 FMAs over
 * (ky, kx, ci).  The implicit GEMM wastes most of a tile on K = 27. */
#include <climits>
#include <cstdint>

#include "conv.cuh"

namespace strix_conv {

namespace {

#define MMA_BK 32
#define MMA_STAGES 3
#define MMA_LDS (MMA_BK + 8) /* halves per shared row: see the header */
#define MMA_CHUNKS (MMA_BK / 8) /* 16-byte chunks per row of a slice */

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

/* bias, SiLU, residual for one value, as epilogue_store computes it. */
__device__ __forceinline__ float epi_value(const Epi &e, int co, float acc)
{
    float v = acc + e.bias[co];
    if (e.act == STRIX_ACT_SILU) v = v / (1.0f + expf(-v));
    return v;
}

template <int BM, int BN, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(WARPS_M *WARPS_N * 32) conv_mma_f16(ConvArgs a)
{
    constexpr int THREADS = WARPS_M * WARPS_N * 32;
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* a warp's block of C */
    constexpr int MI = WM / 16, NI = WN / 8;            /* its m16 x n8 accumulators */
    static_assert(WM % 16 == 0 && WN % 16 == 0, "ldmatrix.x4 loads B two n8 tiles at a time");
    static_assert(THREADS % MMA_CHUNKS == 0, "a thread keeps one chunk column");
    constexpr int A_PER_T = BM * MMA_CHUNKS / THREADS; /* A chunks a thread loads per slice */
    static_assert(A_PER_T * THREADS == BM * MMA_CHUNKS, "the A loader covers the slice exactly");
    constexpr int B_PER_T = CEIL_DIV(BN * MMA_CHUNKS, THREADS);

    extern __shared__ __align__(128) unsigned char smem[];
    __half(*As)[BM][MMA_LDS] = reinterpret_cast<__half(*)[BM][MMA_LDS]>(smem);
    __half(*Bs)[BN][MMA_LDS] =
        reinterpret_cast<__half(*)[BN][MMA_LDS]>(smem + MMA_STAGES * BM * MMA_LDS * sizeof(__half));

    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const __half *in = static_cast<const __half *>(a.in);
    const __half *wt = static_cast<const __half *>(a.wt);

    /* the loader: chunk column kc of rows t/4 + i*THREADS/4 */
    const int kc = t % MMA_CHUNKS;
    size_t a_base[A_PER_T];
    int a_iy[A_PER_T], a_ix[A_PER_T];
#pragma unroll
    for (int i = 0; i < A_PER_T; i++) {
        int m = m0 + t / MMA_CHUNKS + i * (THREADS / MMA_CHUNKS);
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
#pragma unroll
        for (int i = 0; i < A_PER_T; i++) {
            int iy = a_iy[i] + ky * a.dh, ix = a_ix[i] + kx * a.dw;
            bool ok = kin && iy >= 0 && iy < a.h && ix >= 0 && ix < a.w;
            const __half *src = ok ? in + a_base[i] + ((size_t)iy * a.w + ix) * a.in_pix + ci : in;
            cp_async16(&As[stage][t / MMA_CHUNKS + i * (THREADS / MMA_CHUNKS)][kc * 8], src, ok ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < B_PER_T; i++) {
            int c = t + i * THREADS;
            if (c < BN * MMA_CHUNKS) {
                int row = c / MMA_CHUNKS, kb = k0 + c % MMA_CHUNKS * 8, co = n0 + row;
                bool ok = co < a.ng && kb < a.k;
                const __half *src = ok ? wt + (size_t)co * a.k + kb : wt;
                cp_async16(&Bs[stage][row][c % MMA_CHUNKS * 8], src, ok ? 16 : 0);
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

    const int kt_count = CEIL_DIV(a.k, MMA_BK);
#pragma unroll
    for (int s = 0; s < MMA_STAGES - 1; s++) {
        if (s < kt_count) load_slice(s, s * MMA_BK);
        cp_async_commit(); /* one group per slice, empty past K: the wait count stays fixed */
    }
    for (int kt = 0; kt < kt_count; kt++) {
        cp_async_wait<MMA_STAGES - 2>(); /* slice kt has landed (this thread's part) */
        __syncthreads();                 /* ... every thread's, and slice kt-1 is consumed */
        const int next = kt + MMA_STAGES - 1;
        if (next < kt_count) load_slice(next % MMA_STAGES, next * MMA_BK);
        cp_async_commit();
        const int st = kt % MMA_STAGES;
#pragma unroll
        for (int kk = 0; kk < MMA_BK; kk += 16) {
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
    cp_async_wait<0>(); /* nothing in flight when the block exits */

    /* accumulator (i, j, r): row wm + 16i + lane/4 (+8 for r >= 2), column
     * wn + 8j + 2*(lane%4) (+1 for odd r) */
    const Epi &e = a.epi;
    __half *out = static_cast<__half *>(e.out);
    const __half *res = static_cast<const __half *>(e.res);
    const bool pairs = ((uintptr_t)out % 4 == 0) && e.out_pix % 2 == 0 && e.out_batch % 2 == 0 &&
                       (!res || ((uintptr_t)res % 4 == 0 && e.res_pix % 2 == 0 && e.res_batch % 2 == 0));
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = m0 + wm + i * 16 + lane / 4 + h * 8;
            if (m >= a.m) continue;
            const int n = m / a.ohw, pix = m - n * a.ohw;
            __half *orow = out + (size_t)n * e.out_batch + (size_t)pix * e.out_pix;
            const __half *rrow = res ? res + (size_t)n * e.res_batch + (size_t)pix * e.res_pix : nullptr;
#pragma unroll
            for (int j = 0; j < NI; j++) {
                const int co = n0 + wn + j * 8 + 2 * (lane % 4);
                if (co >= a.ng) continue;
                float v0 = epi_value(e, co, acc[i][j][2 * h]);
                if (pairs && co + 1 < a.ng) {
                    float v1 = epi_value(e, co + 1, acc[i][j][2 * h + 1]);
                    if (rrow) {
                        float2 r = __half22float2(*reinterpret_cast<const __half2 *>(rrow + co));
                        v0 += r.x, v1 += r.y;
                    }
                    *reinterpret_cast<__half2 *>(orow + co) = __floats2half2_rn(v0, v1);
                } else {
                    if (rrow) v0 += __half2float(rrow[co]);
                    orow[co] = __float2half_rn(v0);
                    if (co + 1 < a.ng) {
                        float v1 = epi_value(e, co + 1, acc[i][j][2 * h + 1]);
                        if (rrow) v1 += __half2float(rrow[co + 1]);
                        orow[co + 1] = __float2half_rn(v1);
                    }
                }
            }
        }
}

template <int BM, int BN, int WARPS_M, int WARPS_N>
strix_cuda_err mma_run(const ConvArgs &a, cudaStream_t s)
{
    constexpr int threads = WARPS_M * WARPS_N * 32;
    constexpr size_t bytes = (size_t)MMA_STAGES * (BM + BN) * MMA_LDS * sizeof(__half);
    auto kern = conv_mma_f16<BM, BN, WARPS_M, WARPS_N>;
    /* above 48 KiB a kernel must opt in to its dynamic shared memory; a host-side
     * attribute, also legal while a stream is being captured */
    if (bytes > 48 * 1024) {
        cudaError_t rc = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        if (rc != cudaSuccess) return (strix_cuda_err)rc;
    }
    dim3 grid(CEIL_DIV(a.m, BM), CEIL_DIV(a.ng, BN));
    kern<<<grid, threads, bytes, s>>>(a);
    return last_error();
}

/* ---- the stem */
#define STEM_CO 16     /* output channels per thread */
#define STEM_THREADS 128
#define STEM_MAX_TAPS 49 /* kernels up to 7x7 */

template <typename T>
__global__ void __launch_bounds__(STEM_THREADS) conv_stem_direct(ConvArgs a)
{
    __shared__ float ws[STEM_CO][STEM_MAX_TAPS * STEM_MAX_CIN]; /* [co - co0][k], k = (ky*KW + kx)*Cin + ci */
    const int co0 = blockIdx.y * STEM_CO, nco = min(STEM_CO, a.ng - co0);
    const T *wt = static_cast<const T *>(a.wt);
    for (int i = threadIdx.x; i < STEM_CO * a.k; i += STEM_THREADS) {
        int c = i / a.k, k = i - c * a.k;
        ws[c][k] = c < nco ? load(wt + (size_t)(co0 + c) * a.k + k) : 0.0f;
    }
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
#pragma unroll
    for (int c = 0; c < STEM_CO; c++)
        if (c < nco) epilogue_store<T>(a.epi, n, pix, co0 + c, acc[c]);
}

} /* namespace */

bool mma_ok(const ConvArgs &a, const strix_dview *in, const void *w, strix_dtype dt)
{
    return dt == STRIX_F16 && a.groups == 1 && a.cg % 8 == 0 && in->pix_stride % 8 == 0 &&
           in->batch_stride % 8 == 0 && (uintptr_t)in->data % 16 == 0 && (uintptr_t)w % 16 == 0;
}

/* The tile for a layer, in one place: BN the narrowest of 16/32/64/128 that
 * covers Cout (no tensor-core work on padding columns), BM 128 unless that
 * leaves fewer than two blocks per SM, then 64 (small spatial sizes, batch 1). */
strix_cuda_err mma_launch(const ConvArgs &a, cudaStream_t s)
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return last_error();
    const int bn = a.ng <= 16 ? 16 : a.ng <= 32 ? 32 : a.ng <= 64 ? 64 : 128;
    const long long blocks128 = (long long)CEIL_DIV(a.m, 128) * CEIL_DIV(a.ng, bn);
    const bool big = blocks128 >= 2LL * sms;
    switch (bn) {
    case 16: return big ? mma_run<128, 16, 4, 1>(a, s) : mma_run<64, 16, 2, 1>(a, s);
    case 32: return big ? mma_run<128, 32, 4, 1>(a, s) : mma_run<64, 32, 2, 1>(a, s);
    case 64: return big ? mma_run<128, 64, 2, 2>(a, s) : mma_run<64, 64, 2, 2>(a, s);
    default: return big ? mma_run<128, 128, 2, 4>(a, s) : mma_run<64, 128, 2, 2>(a, s);
    }
}

bool stem_ok(const ConvArgs &a)
{
    return a.groups == 1 && a.cg <= STEM_MAX_CIN && a.kh * a.kw <= STEM_MAX_TAPS;
}

strix_cuda_err stem_launch(const ConvArgs &a, strix_dtype dt, cudaStream_t s)
{
    dim3 grid(CEIL_DIV(a.m, STEM_THREADS), CEIL_DIV(a.ng, STEM_CO));
    if (dt == STRIX_F16)
        conv_stem_direct<__half><<<grid, STEM_THREADS, 0, s>>>(a);
    else
        conv_stem_direct<float><<<grid, STEM_THREADS, 0, s>>>(a);
    return last_error();
}

} /* namespace strix_conv */
