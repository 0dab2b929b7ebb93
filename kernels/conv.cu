/* conv.cu — strix_cuda_conv2d: NHWC convolution on the GPU, same semantics as
 * strix_cpu_conv2d (engine/cpu/conv.c), and its workspace size.
 *
 * Layouts: in [N, H, W, Cin] and out/res [N, OH, OW, Cout] strided NHWC views
 * (element (n, y, x, c) at data[n*batch_stride + (y*W + x)*pix_stride + c], so
 * out may be a channel slice of a Concat buffer and in a C2f chunk);
 * w [Cout, KH, KW, Cin/g] (OHWI) in the tensors' dtype; bias [Cout] fp32.
 *
 * Per group g the convolution is the GEMM C[M][Ng] = A[M][K] * B[K][Ng] with
 * M = N*OH*OW output pixels, Ng = Cout/g, K = KH*KW*Cin/g, where row m of A is
 * the receptive field of pixel m in (ky, kx, ci) order — the order of a row of
 * the OHWI weights, so B[k][co] = w[g*Ng + co][k] and both operands are read
 * along contiguous channel runs.  Paths, chosen by strix_cuda_conv2d:
 *   1. conv_igemm_f32_tile64x64: fp32 implicit GEMM (im2col addresses computed
 *      on the fly), shared-memory tiles, 4x4 register blocks, plain fp32 FMA.
 *   2. conv_igemm_f16_wmma_tile64x64<VEC>: fp16 implicit GEMM on tensor cores
 *      (WMMA 16x16x16, fp32 accumulators); VEC loads 8 halves at a time when
 *      channels and strides allow 16-byte accesses (every layer but the stem).
 *   3. conv_depthwise_direct<T>: groups == Cin == Cout, one thread per output
 *      element (channels across a warp), fp32 accumulation, same tap order as
 *      the CPU.
 *   4. Other grouped convolutions: paths 1/2, one group per grid z-slice.
 *   5. 1x1 stride-1 unpadded ungrouped convolutions with a cuBLAS handle and
 *      Cin, Cout >= CUBLAS_MIN_CHANNELS: one cublasGemmEx (or strided-batched
 *      when images are not contiguous) reading the input view in place
 *      (ldb = pix_stride), then conv1x1_cublas_epilogue<T>.  Sets 1 and 2
 *      only: in set 3 no epilogue is a kernel of its own (cublas_path).
 * With STRIX_CUDA_KERNELS_V2 or _V3 (conv_mma.cu) two paths come before 4 and 5:
 *   6. conv_stem_direct<T>: Cin <= STEM_MAX_CIN, one group (the stem); with
 *      V3 conv_stem_smem<T>, the same through a shared-memory input tile;
 *   7. conv_mma_f16<...>: fp16, one group, Cin % 8 == 0, aligned: mma.sync
 *      implicit GEMM with cp.async pipelining and the epilogue in registers,
 *      1x1 convolutions included; with V3, where the grid is smaller than
 *      the SM count, split-K (conv_mma_f16<..., true> + conv_splitk_reduce,
 *      partials in the workspace); with V3 also strix_cuda_conv2d_fold, this
 *      path with some input channels read as the nearest upsample of another
 *      view (conv_mma_f16<..., FOLD = true>, kernels/fold_plan.h), which the
 *      CUDA backend runs where the program folds an upsample into its
 *      consumer (strix_program_upsample_fold).  Shapes of this path that
 *      it declines at launch (alignment, a GPU older than sm_80) take path
 *      2, never path 5, whose staging strix_cuda_conv2d_workspace did not
 *      count.
 * Every path ends in epilogue_store: act(acc + bias) (+ residual) in fp32,
 * rounded once to the output dtype, written into the strided output view.
 * The residual is read and the output written by the same thread for the same
 * element, so res == out (the CPU op's one permitted alias) is safe.
 */
#include <climits>
#include <cstddef>
#include <cstdint>

#include <cublas_v2.h>
#include <mma.h>

#include "conv.cuh" /* ConvArgs, Epi, epilogue_store; the v2 kernels (conv_mma.cu) */
#include "elem.cuh" /* CEIL_DIV, fp32/fp16 element load/store, argument checks */

using namespace strix_elem;
using namespace strix_conv;

/* Path 5 threshold: below this many input or output channels a 1x1 conv is
 * memory-bound and the fused implicit GEMM (one pass, no fp32 staging) is
 * the better choice.  Not yet tuned on hardware: see perf/notes. */
#define CUBLAS_MIN_CHANNELS 32

namespace {

/* The receptive-field origin of GEMM row m (output pixel m); ok = false past M. */
struct RowSrc {
    size_t base; /* n * in_batch */
    int iy0, ix0;
    bool ok;
};

__device__ __forceinline__ RowSrc row_src(const ConvArgs &a, int m)
{
    RowSrc r;
    r.ok = m < a.m;
    int mm = r.ok ? m : 0;
    int n = mm / a.ohw, pix = mm - n * a.ohw;
    int oy = pix / a.ow, ox = pix - oy * a.ow;
    r.base = (size_t)n * a.in_batch;
    r.iy0 = oy * a.sh - a.ph;
    r.ix0 = ox * a.sw - a.pw;
    return r;
}

/* Depth index k = (ky*KW + kx)*cg + ci, decomposed once per run and then
 * advanced without divisions. */
struct KPos {
    int k, ky, kx, ci;
};

__device__ __forceinline__ KPos kpos(const ConvArgs &a, int k)
{
    KPos p;
    int tap = k / a.cg;
    p.k = k;
    p.ci = k - tap * a.cg;
    p.ky = tap / a.kw;
    p.kx = tap - p.ky * a.kw;
    return p;
}

/* Advance by step, 1 <= step <= cg with cg % step == 0 (so one wrap at most). */
__device__ __forceinline__ void kpos_next(const ConvArgs &a, KPos &p, int step)
{
    p.k += step;
    p.ci += step;
    if (p.ci >= a.cg) {
        p.ci -= a.cg;
        if (++p.kx == a.kw) {
            p.kx = 0;
            ++p.ky;
        }
    }
}

/* Offset of A[m][k] from the group's first input channel, or -1 where A is
 * zero: padding taps, k >= K, m >= M. */
__device__ __forceinline__ long long a_offset(const ConvArgs &a, const RowSrc &r, const KPos &p)
{
    if (!r.ok || p.k >= a.k) return -1;
    int iy = r.iy0 + p.ky * a.dh, ix = r.ix0 + p.kx * a.dw;
    if (iy < 0 || iy >= a.h || ix < 0 || ix >= a.w) return -1;
    return (long long)(r.base + ((size_t)iy * a.w + ix) * a.in_pix + p.ci);
}

/* ---- path 1: fp32 implicit GEMM.
 * A block computes a 64 x 64 tile of C; its 256 threads form a 16 x 16 grid,
 * thread (ty, tx) owning rows ty + 16i and columns tx + 16j (i, j < 4) so the
 * shared-memory reads broadcast or hit 16 distinct banks and the epilogue's
 * stores are coalesced along channels.  Each K step stages a 64 x 16 slice of
 * A and of B: thread t loads row t/4, depth run (t%4)*4 .. +4 of both (the
 * run follows the channels of NHWC input and of OHWI weights).  The next
 * slice is fetched into registers while the current one is multiplied. */
#define F32_BM 64
#define F32_BN 64
#define F32_BK 16
#define F32_THREADS 256
#define F32_TM (F32_BM / 16)                    /* rows per thread */
#define F32_TN (F32_BN / 16)                    /* columns per thread */
#define F32_RUN (F32_BM * F32_BK / F32_THREADS) /* depth run per thread */
#define F32_LDS (F32_BK + 1) /* padded smem row: the inner loop's reads are conflict-free */
static_assert(F32_BM == F32_BN, "one loader row index serves the A and B slices");
static_assert(F32_BK % F32_RUN == 0 && F32_THREADS / (F32_BK / F32_RUN) == F32_BM,
              "the loader covers the slices exactly");

/* Loads the F32_RUN consecutive depths from k of loader row lr: A from the
 * input (zero outside), B from weight row wrow (NULL past Ng). */
__device__ __forceinline__ void f32_load_run(const ConvArgs &a, const float *in, const RowSrc &rs,
                                             const float *wrow, int k, float *ra, float *rb)
{
    KPos p = kpos(a, k);
#pragma unroll
    for (int j = 0; j < F32_RUN; j++) {
        long long off = a_offset(a, rs, p);
        ra[j] = off >= 0 ? in[off] : 0.0f;
        rb[j] = wrow && p.k < a.k ? wrow[p.k] : 0.0f;
        kpos_next(a, p, 1);
    }
}

__global__ void __launch_bounds__(F32_THREADS) conv_igemm_f32_tile64x64(ConvArgs a)
{
    __shared__ float As[F32_BM][F32_LDS]; /* As[r][kk] = A[m0 + r][k0 + kk] */
    __shared__ float Bs[F32_BN][F32_LDS]; /* Bs[c][kk] = B[k0 + kk][n0 + c] */
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int lr = t / (F32_BK / F32_RUN), lk = t % (F32_BK / F32_RUN) * F32_RUN;
    const int m0 = blockIdx.x * F32_BM, n0 = blockIdx.y * F32_BN;
    const RowSrc rs = row_src(a, m0 + lr);
    for (int g = blockIdx.z; g < a.groups; g += gridDim.z) {
        const float *in = static_cast<const float *>(a.in) + (size_t)g * a.cg;
        const float *wrow = n0 + lr < a.ng ? static_cast<const float *>(a.wt) +
                                                 (size_t)(g * a.ng + n0 + lr) * a.k
                                           : nullptr;
        float acc[F32_TM][F32_TN];
#pragma unroll
        for (int i = 0; i < F32_TM; i++)
#pragma unroll
            for (int j = 0; j < F32_TN; j++) acc[i][j] = 0.0f;
        float ra[F32_RUN], rb[F32_RUN];
        f32_load_run(a, in, rs, wrow, lk, ra, rb);
        for (int k0 = 0; k0 < a.k; k0 += F32_BK) {
            __syncthreads(); /* the previous slice (or group's epilogue) is done */
#pragma unroll
            for (int j = 0; j < F32_RUN; j++) {
                As[lr][lk + j] = ra[j];
                Bs[lr][lk + j] = rb[j];
            }
            __syncthreads();
            if (k0 + F32_BK < a.k) f32_load_run(a, in, rs, wrow, k0 + F32_BK + lk, ra, rb);
#pragma unroll
            for (int kk = 0; kk < F32_BK; kk++) {
                float av[F32_TM], bv[F32_TN];
#pragma unroll
                for (int i = 0; i < F32_TM; i++) av[i] = As[ty + 16 * i][kk];
#pragma unroll
                for (int j = 0; j < F32_TN; j++) bv[j] = Bs[tx + 16 * j][kk];
#pragma unroll
                for (int i = 0; i < F32_TM; i++)
#pragma unroll
                    for (int j = 0; j < F32_TN; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
        }
#pragma unroll
        for (int i = 0; i < F32_TM; i++) {
            int m = m0 + ty + 16 * i;
            if (m >= a.m) continue;
            int n = m / a.ohw, pix = m - n * a.ohw;
#pragma unroll
            for (int j = 0; j < F32_TN; j++) {
                int co = n0 + tx + 16 * j;
                if (co < a.ng) epilogue_store<float>(a.epi, n, pix, g * a.ng + co, acc[i][j]);
            }
        }
    }
}

/* ---- path 2: fp16 implicit GEMM on tensor cores.
 * A block computes a 64 x 64 tile of C with 4 warps in a 2 x 2 layout, each
 * warp a 32 x 32 block of 2 x 2 WMMA 16x16x16 fp32 accumulators.  Each K step
 * stages a 64 x 32 slice of A row-major (As[r][kk]) and of B as its transpose
 * (Bs[c][kk] = the weights' own layout, read by WMMA as col_major B): thread t
 * loads row t/2, depths (t%2)*16 .. +16 of both, zero past M, Ng and K, so
 * every tail is a zero-filled tile.  After the K loop the accumulators go
 * through shared memory (aliasing the A/B slices) and the fp32 epilogue. */
#define F16_BM 64
#define F16_BN 64
#define F16_BK 32
#define F16_THREADS 128
#define F16_RUN (F16_BM * F16_BK / F16_THREADS) /* depth run per thread: 16 halves */
#define F16_LDS (F16_BK + 8) /* halves per A/B smem row: 16-byte aligned rows, shifted banks */
#define F16_LDC (F16_BN + 4) /* floats per row of the staged C tile */
#define F16_AB_BYTES (2 * F16_BM * F16_LDS * (int)sizeof(__half))
#define F16_C_BYTES (F16_BM * F16_LDC * (int)sizeof(float))
#define F16_SMEM_BYTES (F16_AB_BYTES > F16_C_BYTES ? F16_AB_BYTES : F16_C_BYTES)
static_assert(F16_BM == F16_BN, "one loader row index serves the A and B slices");
static_assert(F16_RUN == 16 && F16_BK / F16_RUN == 2 && F16_THREADS / 2 == F16_BM,
              "the loader covers the slices exactly, as two 8-half vectors per operand");
static_assert(F16_LDS % 8 == 0 && F16_LDC % 4 == 0, "WMMA leading dimensions");

/* Loads depths k .. k+16 of loader row lr into two 8-half vectors per operand.
 * VEC: cg % 8 == 0 and 16-byte aligned addresses (checked by the launcher),
 * so each 8-run is one tap's contiguous channels and one 16-byte load. */
template <bool VEC>
__device__ __forceinline__ void f16_load_run(const ConvArgs &a, const __half *in, const RowSrc &rs,
                                             const __half *wrow, int k, uint4 *ra, uint4 *rb)
{
    KPos p = kpos(a, k);
#pragma unroll
    for (int v = 0; v < 2; v++) {
        if (VEC) {
            long long off = a_offset(a, rs, p);
            uint4 zero = make_uint4(0, 0, 0, 0);
            ra[v] = off >= 0 ? *reinterpret_cast<const uint4 *>(in + off) : zero;
            rb[v] = wrow && p.k < a.k ? *reinterpret_cast<const uint4 *>(wrow + p.k) : zero;
            kpos_next(a, p, 8);
        } else {
            /* the 8 halves' bits packed into the vector, lowest address first */
            unsigned int wa[4], wb[4];
#pragma unroll
            for (int e = 0; e < 8; e++) {
                long long off = a_offset(a, rs, p);
                unsigned int ba = off >= 0 ? __half_as_ushort(in[off]) : 0u;
                unsigned int bb = wrow && p.k < a.k ? __half_as_ushort(wrow[p.k]) : 0u;
                wa[e / 2] = e % 2 ? wa[e / 2] | ba << 16 : ba;
                wb[e / 2] = e % 2 ? wb[e / 2] | bb << 16 : bb;
                kpos_next(a, p, 1);
            }
            ra[v] = make_uint4(wa[0], wa[1], wa[2], wa[3]);
            rb[v] = make_uint4(wb[0], wb[1], wb[2], wb[3]);
        }
    }
}

template <bool VEC>
__global__ void __launch_bounds__(F16_THREADS) conv_igemm_f16_wmma_tile64x64(ConvArgs a)
{
    using namespace nvcuda;
    __shared__ __align__(128) unsigned char smem[F16_SMEM_BYTES];
    __shared__ int2 rows[F16_BM]; /* (image, pixel) of tile row r; image -1 past M */
    __half(*As)[F16_LDS] = reinterpret_cast<__half(*)[F16_LDS]>(smem);
    __half(*Bs)[F16_LDS] =
        reinterpret_cast<__half(*)[F16_LDS]>(smem + F16_BM * F16_LDS * sizeof(__half));
    float(*Cs)[F16_LDC] = reinterpret_cast<float(*)[F16_LDC]>(smem);
    const int t = threadIdx.x, warp = t / 32;
    const int wm = warp / 2 * 32, wn = warp % 2 * 32; /* the warp's 32 x 32 block */
    const int lr = t / 2, lk = t % 2 * F16_RUN;
    const int m0 = blockIdx.x * F16_BM, n0 = blockIdx.y * F16_BN;
    const RowSrc rs = row_src(a, m0 + lr);
    if (t < F16_BM) {
        int m = m0 + t;
        rows[t] = m < a.m ? make_int2(m / a.ohw, m % a.ohw) : make_int2(-1, 0);
    }
    for (int g = blockIdx.z; g < a.groups; g += gridDim.z) {
        const __half *in = static_cast<const __half *>(a.in) + (size_t)g * a.cg;
        const __half *wrow = n0 + lr < a.ng ? static_cast<const __half *>(a.wt) +
                                                  (size_t)(g * a.ng + n0 + lr) * a.k
                                            : nullptr;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
        uint4 ra[2], rb[2];
        f16_load_run<VEC>(a, in, rs, wrow, lk, ra, rb);
        for (int k0 = 0; k0 < a.k; k0 += F16_BK) {
            __syncthreads(); /* the previous slice (or group's C tile) is done */
            *reinterpret_cast<uint4 *>(&As[lr][lk]) = ra[0];
            *reinterpret_cast<uint4 *>(&As[lr][lk + 8]) = ra[1];
            *reinterpret_cast<uint4 *>(&Bs[lr][lk]) = rb[0];
            *reinterpret_cast<uint4 *>(&Bs[lr][lk + 8]) = rb[1];
            __syncthreads();
            if (k0 + F16_BK < a.k) f16_load_run<VEC>(a, in, rs, wrow, k0 + F16_BK + lk, ra, rb);
#pragma unroll
            for (int kk = 0; kk < F16_BK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[2];
#pragma unroll
                for (int i = 0; i < 2; i++)
                    wmma::load_matrix_sync(fa[i], &As[wm + 16 * i][kk], F16_LDS);
#pragma unroll
                for (int j = 0; j < 2; j++)
                    wmma::load_matrix_sync(fb[j], &Bs[wn + 16 * j][kk], F16_LDS);
#pragma unroll
                for (int i = 0; i < 2; i++)
#pragma unroll
                    for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
        }
        __syncthreads(); /* every warp is done with As/Bs, which Cs overwrites */
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 2; j++)
                wmma::store_matrix_sync(&Cs[wm + 16 * i][wn + 16 * j], acc[i][j], F16_LDC,
                                        wmma::mem_row_major);
        __syncthreads();
        /* consecutive threads take consecutive channels: coalesced stores */
        for (int e = t; e < F16_BM * F16_BN; e += F16_THREADS) {
            int r = e / F16_BN, c = e % F16_BN, co = n0 + c;
            int2 rw = rows[r];
            if (rw.x >= 0 && co < a.ng)
                epilogue_store<__half>(a.epi, rw.x, rw.y, g * a.ng + co, Cs[r][c]);
        }
    }
}

/* ---- path 3: depthwise (groups == Cin == Cout), direct.
 * Block = DW_TY output pixels x DW_TX channel lanes; a warp covers 32
 * consecutive channels of one pixel (coalesced NHWC reads and writes) and
 * loops over the remaining channels.  Taps in (ky, kx) order with fmaf, as
 * the CPU does. */
#define DW_TX 32
#define DW_TY 8

template <typename T>
__global__ void __launch_bounds__(DW_TX *DW_TY) conv_depthwise_direct(ConvArgs a)
{
    const int m = blockIdx.x * DW_TY + threadIdx.y;
    if (m >= a.m) return; /* no block-wide synchronisation below */
    const int n = m / a.ohw, pix = m - n * a.ohw, oy = pix / a.ow, ox = pix - oy * a.ow;
    const T *img = static_cast<const T *>(a.in) + (size_t)n * a.in_batch;
    const T *wt = static_cast<const T *>(a.wt);
    const int taps = a.kh * a.kw;
    for (int c = threadIdx.x; c < a.groups; c += DW_TX) {
        float acc = 0.0f;
        for (int ky = 0; ky < a.kh; ky++) {
            int iy = oy * a.sh - a.ph + ky * a.dh;
            if (iy < 0 || iy >= a.h) continue;
            for (int kx = 0; kx < a.kw; kx++) {
                int ix = ox * a.sw - a.pw + kx * a.dw;
                if (ix < 0 || ix >= a.w) continue;
                acc = fmaf(load(img + ((size_t)iy * a.w + ix) * a.in_pix + c),
                           load(wt + (size_t)c * taps + ky * a.kw + kx), acc);
            }
        }
        epilogue_store<T>(a.epi, n, pix, c, acc);
    }
}

/* ---- path 5's epilogue: C (fp32, element (n, pix, co) at
 * c[n*c_batch + pix*c_pix + co]; may be the output view itself, fp32 only)
 * through epilogue_store.  Same block shape as the depthwise kernel. */
#define EPI_TX 32
#define EPI_TY 8

template <typename T>
__global__ void __launch_bounds__(EPI_TX *EPI_TY)
    conv1x1_cublas_epilogue(const float *c, size_t c_pix, size_t c_batch, int m_all, int ohw,
                            int channels, Epi e)
{
    const int m = blockIdx.x * EPI_TY + threadIdx.y;
    if (m >= m_all) return;
    const int n = m / ohw, pix = m - n * ohw;
    const float *src = c + (size_t)n * c_batch + (size_t)pix * c_pix;
    for (int co = threadIdx.x; co < channels; co += EPI_TX)
        epilogue_store<T>(e, n, pix, co, src[co]);
}

/* ---- host side */

/* The CPU op's preconditions plus what the kernels' int indices need. */
bool conv_args_valid(const strix_dview *out, const strix_dview *in, const void *w,
                     const float *bias, const strix_dview *res, const strix_conv_params *p,
                     strix_dtype dt)
{
    if (!view_ok(out) || !view_ok(in) || !w || !bias || !p || !dtype_ok(dt)) return false;
    if (p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1 || p->dh < 1 || p->dw < 1 ||
        p->ph < 0 || p->pw < 0 || p->groups < 1)
        return false;
    if (p->act != STRIX_ACT_NONE && p->act != STRIX_ACT_SILU) return false;
    if (in->c < 1 || in->c % p->groups || out->c % p->groups || in->n != out->n) return false;
    if (out->h != (in->h + 2 * p->ph - p->dh * (p->kh - 1) - 1) / p->sh + 1 ||
        out->w != (in->w + 2 * p->pw - p->dw * (p->kw - 1) - 1) / p->sw + 1)
        return false;
    if (res && (!view_ok(res) || res->n != out->n || res->h != out->h || res->w != out->w ||
                res->c != out->c))
        return false;
    /* row and depth indices up to a tile past M and K stay within int */
    if ((long long)out->n * out->h * out->w > INT_MAX - 1024) return false;
    if ((long long)p->kh * p->kw * (in->c / p->groups) > INT_MAX - 1024) return false;
    if (out->c / p->groups > 65535 * 64) return false; /* grid.y of the GEMM paths */
    return true;
}

/* Path 5's shape condition (the handle is checked at run time). */
bool cublas_shape(const strix_dview *out, const strix_dview *in, const strix_conv_params *p)
{
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0 &&
           p->groups == 1 && in->c >= CUBLAS_MIN_CHANNELS && out->c >= CUBLAS_MIN_CHANNELS &&
           in->pix_stride <= (size_t)INT_MAX && out->pix_stride <= (size_t)INT_MAX &&
           in->batch_stride <= (size_t)LLONG_MAX && out->batch_stride <= (size_t)LLONG_MAX;
}

/* Path 5's GEMM into an fp32 C: C[m][co] = sum_ci in[m][ci] * w[co][ci], in
 * cuBLAS's column-major terms C^T (Cout x HW per image, ldc) = W (Cout x Cin,
 * the row-major weights read transposed) * In^T (Cin x HW, ld pix_stride).
 * One GEMM over all images when their pixels are evenly spaced, else one
 * strided-batched call. */
cublasStatus_t gemm_1x1(cublasHandle_t h, const strix_dview *in, const void *w, strix_dtype dt,
                        int cout, float *c, size_t ldc, size_t c_batch)
{
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType ab = dt == STRIX_F16 ? CUDA_R_16F : CUDA_R_32F;
    /* fp32: pedantic, so no TF32 whatever the handle's math mode */
    const cublasComputeType_t ct =
        dt == STRIX_F16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_PEDANTIC;
    const long long hw = (long long)in->h * in->w;
    const bool merged = in->n == 1 ||
                        ((long long)in->batch_stride == hw * (long long)in->pix_stride &&
                         (long long)c_batch == hw * (long long)ldc);
    if (merged)
        return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, cout, (int)(hw * in->n), in->c, &one, w,
                            ab, in->c, in->data, ab, (int)in->pix_stride, &zero, c, CUDA_R_32F,
                            (int)ldc, ct, CUBLAS_GEMM_DEFAULT);
    return cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, cout, (int)hw, in->c, &one, w,
                                      ab, in->c, 0, in->data, ab, (int)in->pix_stride,
                                      (long long)in->batch_stride, &zero, c, CUDA_R_32F, (int)ldc,
                                      (long long)c_batch, in->n, ct, CUBLAS_GEMM_DEFAULT);
}

/* Path 5: returns false (nothing enqueued) when cuBLAS declines, so the
 * caller falls back to the implicit GEMM.  The GEMM writes fp32 C straight
 * into an fp32 output view (ldc = pix_stride) unless the residual aliases it;
 * fp16, and that case, stage C densely in the workspace
 * ([N*H*W][Cout] fp32), so the epilogue always starts from fp32 sums. */
bool conv1x1_cublas(const strix_dview *out, const strix_dview *in, const void *w,
                    const strix_dview *res, const Epi &epi, strix_dtype dt, cublasHandle_t h,
                    void *workspace, cudaStream_t s)
{
    const bool in_place = dt == STRIX_F32 && !(res && res->data == out->data);
    if (!in_place && !workspace) return false;
    /* cublasSetStream also resets a workspace set with cublasSetWorkspace:
     * only call it when the stream really changes */
    cudaStream_t cur = nullptr;
    if (cublasGetStream(h, &cur) != CUBLAS_STATUS_SUCCESS) return false;
    if (cur != s && cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) return false;
    float *c = in_place ? static_cast<float *>(out->data) : static_cast<float *>(workspace);
    size_t ldc = in_place ? out->pix_stride : (size_t)out->c;
    size_t c_batch = in_place ? out->batch_stride : (size_t)out->h * out->w * out->c;
    if (gemm_1x1(h, in, w, dt, out->c, c, ldc, c_batch) != CUBLAS_STATUS_SUCCESS) return false;
    const int m = out->n * out->h * out->w;
    dim3 block(EPI_TX, EPI_TY), grid(CEIL_DIV(m, EPI_TY));
    if (dt == STRIX_F16)
        conv1x1_cublas_epilogue<__half><<<grid, block, 0, s>>>(c, ldc, c_batch, m, out->h * out->w,
                                                               out->c, epi);
    else
        conv1x1_cublas_epilogue<float><<<grid, block, 0, s>>>(c, ldc, c_batch, m, out->h * out->w,
                                                              out->c, epi);
    return true;
}

/* VEC loads of path 2: every 8-run of depths is one 16-byte aligned vector. */
bool f16_vec_ok(const strix_dview *in, const void *w, int cg)
{
    return cg % 8 == 0 && in->pix_stride % 8 == 0 && in->batch_stride % 8 == 0 &&
           (uintptr_t)in->data % 16 == 0 && (uintptr_t)w % 16 == 0;
}

/* The argument block of a convolution the launchers have validated. */
ConvArgs conv_args(const strix_dview *out, const strix_dview *in, const void *w, const float *bias,
                   const strix_dview *res, const strix_conv_params *p)
{
    ConvArgs a;
    a.in = in->data;
    a.in_pix = in->pix_stride;
    a.in_batch = in->batch_stride;
    a.h = in->h;
    a.w = in->w;
    a.wt = w;
    a.groups = p->groups;
    a.cg = in->c / p->groups;
    a.ng = out->c / p->groups;
    a.kh = p->kh;
    a.kw = p->kw;
    a.sh = p->sh;
    a.sw = p->sw;
    a.ph = p->ph;
    a.pw = p->pw;
    a.dh = p->dh;
    a.dw = p->dw;
    a.ow = out->w;
    a.ohw = out->h * out->w;
    a.m = out->n * a.ohw;
    a.k = p->kh * p->kw * a.cg;
    a.epi.out = out->data;
    a.epi.out_pix = out->pix_stride;
    a.epi.out_batch = out->batch_stride;
    a.epi.res = res ? res->data : nullptr;
    a.epi.res_pix = res ? res->pix_stride : 0;
    a.epi.res_batch = res ? res->batch_stride : 0;
    a.epi.bias = bias;
    a.epi.act = p->act;
    return a;
}

/* The sets this dispatcher takes. */
bool kernels_ok(int kernels)
{
    return kernels == STRIX_CUDA_KERNELS_V1 || kernels == STRIX_CUDA_KERNELS_V2 || kernels == STRIX_CUDA_KERNELS_V3;
}

/* Path 7's shapes (it still checks alignment and the GPU at launch). */
bool mma_shape(const strix_dview *in, const strix_conv_params *p, strix_dtype dt, int kernels)
{
    return kernels != STRIX_CUDA_KERNELS_V1 && dt == STRIX_F16 && p->groups == 1 && in->c % 8 == 0;
}

/* V3's split-K partials for a shape of the mma path (0 when it does not
 * split, and for shapes the launcher refuses). */
size_t splitk_bytes(const strix_dview *out, const strix_dview *in, const strix_conv_params *p, int sms)
{
    const long long m = (long long)out->n * out->h * out->w, k = (long long)p->kh * p->kw * in->c;
    if (sms < 1 || m < 1 || k < 1 || out->c < 1 || m > INT_MAX - 1024 || k > INT_MAX - 1024) return 0;
    return strix_mma_plan_make((int)m, out->c, (int)k, sms, 0, 1).ws_bytes;
}

/* Path 5 (cuBLAS, then the separate epilogue kernel) in sets 1 and 2 only:
 * set 3 fuses every epilogue, so its 1x1 convolutions outside the mma path
 * (fp32, fp16 with Cin % 8 != 0) take paths 1 and 2 (not yet measured
 * against path 5 on a GPU: its per-layer table decides). */
bool cublas_path(const strix_dview *out, const strix_dview *in, const strix_conv_params *p, strix_dtype dt,
                 int kernels)
{
    return kernels != STRIX_CUDA_KERNELS_V3 && !mma_shape(in, p, dt, kernels) && cublas_shape(out, in, p);
}

} /* namespace */

extern "C" size_t strix_cuda_conv2d_workspace(const strix_dview *out, const strix_dview *in,
                                              const strix_conv_params *p, strix_dtype dt, int kernels, int sms)
{
    /* path 7 (V3: its split-K partials), or path 2 where it declines at
     * launch: neither stages anything else */
    if (mma_shape(in, p, dt, kernels))
        return kernels == STRIX_CUDA_KERNELS_V3 ? splitk_bytes(out, in, p, sms) : 0;
    /* path 5 stages fp16 (and fp32 whose residual aliases the output) */
    if (!cublas_path(out, in, p, dt, kernels)) return 0;
    return (size_t)out->n * out->h * out->w * out->c * sizeof(float);
}

extern "C" strix_cuda_err strix_cuda_conv2d(const strix_dview *out, const strix_dview *in,
                                            const void *w, const float *bias,
                                            const strix_dview *res, const strix_conv_params *p,
                                            strix_dtype dt, int kernels, int sms, void *cublas_handle,
                                            void *workspace, strix_stream s)
{
    if (!conv_args_valid(out, in, w, bias, res, p, dt) || !kernels_ok(kernels) || sms < 1)
        return (strix_cuda_err)cudaErrorInvalidValue;
    if (out->n == 0 || out->h == 0 || out->w == 0 || out->c == 0)
        return (strix_cuda_err)cudaSuccess;
    cudaStream_t st = (cudaStream_t)s;
    const ConvArgs a = conv_args(out, in, w, bias, res, p);

    if (a.cg == 1 && a.ng == 1) {
        dim3 block(DW_TX, DW_TY), grid(CEIL_DIV(a.m, DW_TY));
        if (dt == STRIX_F16)
            conv_depthwise_direct<__half><<<grid, block, 0, st>>>(a);
        else
            conv_depthwise_direct<float><<<grid, block, 0, st>>>(a);
        return last_error();
    }
    if (kernels != STRIX_CUDA_KERNELS_V1) {
        if (stem_ok(a)) return stem_launch(a, dt, kernels == STRIX_CUDA_KERNELS_V3, st);
        if (mma_ok(a, in, w, dt)) return mma_launch(a, 0, sms, kernels == STRIX_CUDA_KERNELS_V3, nullptr, workspace, st);
    }
    if (cublas_handle && cublas_path(out, in, p, dt, kernels) &&
        conv1x1_cublas(out, in, w, res, a.epi, dt, static_cast<cublasHandle_t>(cublas_handle),
                       workspace, st))
        return last_error();
    /* groups beyond the grid's z limit are looped inside the kernels */
    const unsigned gz = p->groups < 65535 ? (unsigned)p->groups : 65535u;
    if (dt == STRIX_F16) {
        dim3 grid(CEIL_DIV(a.m, F16_BM), CEIL_DIV(a.ng, F16_BN), gz);
        if (f16_vec_ok(in, w, a.cg))
            conv_igemm_f16_wmma_tile64x64<true><<<grid, F16_THREADS, 0, st>>>(a);
        else
            conv_igemm_f16_wmma_tile64x64<false><<<grid, F16_THREADS, 0, st>>>(a);
    } else {
        dim3 grid(CEIL_DIV(a.m, F32_BM), CEIL_DIV(a.ng, F32_BN), gz);
        conv_igemm_f32_tile64x64<<<grid, F32_THREADS, 0, st>>>(a);
    }
    return last_error();
}

extern "C" int strix_cuda_conv2d_fold_ok(const strix_dview *out, const strix_dview *in, const strix_dview *up,
                                         int c0, int scale, const void *w, const float *bias,
                                         const strix_dview *res, const strix_conv_params *p, strix_dtype dt,
                                         int kernels)
{
    if (kernels != STRIX_CUDA_KERNELS_V3 || !conv_args_valid(out, in, w, bias, res, p, dt) || !up ||
        !view_ok(up) || up->n != in->n || (uintptr_t)up->data % 16)
        return 0;
    if (out->n == 0 || out->h == 0 || out->w == 0 || out->c == 0) return 0;
    if (!strix_fold_fits(in->c, c0, up->c, scale, up->h, up->w, in->h, in->w, up->pix_stride, up->batch_stride))
        return 0;
    /* strix_cuda_conv2d's choice for this shape must be path 7 */
    const ConvArgs a = conv_args(out, in, w, bias, res, p);
    return !(a.cg == 1 && a.ng == 1) && !stem_ok(a) && mma_ok(a, in, w, dt);
}

extern "C" strix_cuda_err strix_cuda_conv2d_fold(const strix_dview *out, const strix_dview *in,
                                                 const strix_dview *up, int c0, int scale, const void *w,
                                                 const float *bias, const strix_dview *res,
                                                 const strix_conv_params *p, strix_dtype dt, int kernels, int sms,
                                                 void *workspace, strix_stream s)
{
    if (sms < 1) return (strix_cuda_err)cudaErrorInvalidValue;
    if (!strix_cuda_conv2d_fold_ok(out, in, up, c0, scale, w, bias, res, p, dt, kernels))
        return (strix_cuda_err)cudaErrorNotSupported;
    const strix_up_fold f{up->data, up->pix_stride, up->batch_stride, up->w, c0, c0 + up->c, scale};
    return mma_launch(conv_args(out, in, w, bias, res, p), 0, sms, true, &f, workspace, (cudaStream_t)s);
}

extern "C" int strix_cuda_conv2d_mma_variants(void) { return STRIX_MMA_N_TILES; }

extern "C" strix_cuda_err strix_cuda_conv2d_mma_variant(const strix_dview *out, const strix_dview *in,
                                                        const void *w, const float *bias,
                                                        const strix_dview *res,
                                                        const strix_conv_params *p, int variant,
                                                        strix_stream s)
{
    if (!conv_args_valid(out, in, w, bias, res, p, STRIX_F16) || variant < 1 || variant > STRIX_MMA_N_TILES)
        return (strix_cuda_err)cudaErrorInvalidValue;
    if (out->n == 0 || out->h == 0 || out->w == 0 || out->c == 0)
        return (strix_cuda_err)cudaSuccess;
    const ConvArgs a = conv_args(out, in, w, bias, res, p);
    if (!mma_ok(a, in, w, STRIX_F16)) return (strix_cuda_err)cudaErrorNotSupported;
    /* a fixed tile, never split: the SM count plays no part */
    return mma_launch(a, variant, 1, false, nullptr, nullptr, (cudaStream_t)s);
}
