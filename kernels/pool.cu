/* pool.cu — max pooling on the GPU, same semantics as strix_cpu_maxpool2d
 * (engine/cpu/pool.c): -inf padding, the window clipped to the image, a NaN
 * anywhere in the window wins.
 *
 * Layouts: in and every out are strided NHWC views [N, H, W, C] (fp32 or
 * fp16; the max itself is exact, so fp32 inside changes nothing).
 *   maxpool2d_nhwc<T>: one thread per output element, channels across a warp
 *     (coalesced), any k / stride / pad.
 *   maxpool_cascade_s1_nhwc<T>: SPPF's `cascade` k x k stride-1 'same' pools
 *     in one kernel.  A block owns a CASCADE_TILE^2 output tile of
 *     CASCADE_CH channels and loads it with a halo of cascade * (k/2) pixels;
 *     each stage is a separable max (rows into buffer b, then columns back
 *     into a) over a region that shrinks by k/2 per side, whose central tile
 *     is written to that stage's output.  Pixels outside the image are reset
 *     to -inf after every stage: the next pool pads with -inf, it never sees
 *     values computed there.  When the two buffers would exceed
 *     CASCADE_SMEM_MAX (large k or long cascades), the launcher runs the
 *     stages as separate maxpool2d_nhwc launches instead.
 *   maxpool_sppf_v3<T> (kernel set 3, not yet run on a GPU): the same
 *     cascade, each stage computed straight from the input as one wider
 *     window (5, 9, 13 for SPPF; why that is exact and the geometry:
 *     pool_plan.h).  A block owns a STRIX_SPPF_TILE^2 tile and one 16-byte
 *     channel group (8 fp16 or 4 fp32 channels): every global access is a
 *     16-byte vector, shared memory holds the tensor's own dtype in 16-byte
 *     cells (the max is exact), and the loaded region is clipped to the
 *     image, so a 20x20 SPPF input is one tile with no halo, where the
 *     kernel above loads four 28x28 regions.  Taken when channels, strides
 *     and pointers allow the vectors and stages * (k/2) <= STRIX_SPPF_HALO_MAX;
 *     otherwise set 3 runs the kernel above.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "elem.cuh"
#include "pool_plan.h"

using namespace strix_elem;

#define POOL_THREADS 256
#define CASCADE_TILE 16 /* output pixels per block side */
#define CASCADE_CH 4    /* channels per block */
#define CASCADE_THREADS 256
#define CASCADE_MAX 8   /* stages in one launch (SPPF uses 3) */
#define CASCADE_SMEM_MAX (48 * 1024)
#define SPPF_THREADS 256

namespace {

template <typename T>
__global__ void __launch_bounds__(POOL_THREADS)
    maxpool2d_nhwc(strix_dview out, strix_dview in, strix_pool_params p)
{
    const size_t total = (size_t)out.n * out.h * out.w * out.c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const int c = (int)(i % out.c);
        size_t pix = i / out.c;
        const int ox = (int)(pix % out.w);
        pix /= out.w;
        const int oy = (int)(pix % out.h), n = (int)(pix / out.h);
        int y0 = oy * p.stride - p.pad, y1 = y0 + p.k;
        int x0 = ox * p.stride - p.pad, x1 = x0 + p.k;
        y0 = y0 < 0 ? 0 : y0;
        y1 = y1 > in.h ? in.h : y1;
        x0 = x0 < 0 ? 0 : x0;
        x1 = x1 > in.w ? in.w : x1;
        const T *src = static_cast<const T *>(in.data) + (size_t)n * in.batch_stride + c;
        float m = -INFINITY;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) m = nan_max(m, load(src + ((size_t)y * in.w + x) * in.pix_stride));
        store(static_cast<T *>(out.data) + (size_t)n * out.batch_stride +
                  ((size_t)oy * out.w + ox) * out.pix_stride + c,
              m);
    }
}

struct CascadeOuts {
    strix_dview v[CASCADE_MAX];
};

/* Shared memory: two fp32 buffers of region^2 pixels x CASCADE_CH channels,
 * element (ry, rx, cc) at (ry * region + rx) * CASCADE_CH + cc. */
template <typename T>
__global__ void __launch_bounds__(CASCADE_THREADS)
    maxpool_cascade_s1_nhwc(CascadeOuts outs, int cascade, strix_dview in, int pad, int tiles_x,
                            int chunks)
{
    extern __shared__ float smem[];
    const int halo = cascade * pad, region = CASCADE_TILE + 2 * halo;
    const int cells = region * region * CASCADE_CH;
    float *a = smem, *b = smem + cells;
    const int ty0 = (int)(blockIdx.x / tiles_x) * CASCADE_TILE;
    const int tx0 = (int)(blockIdx.x % tiles_x) * CASCADE_TILE;
    for (int z = blockIdx.y; z < in.n * chunks; z += gridDim.y) {
        const int n = z / chunks, c0 = (z % chunks) * CASCADE_CH;
        const T *src = static_cast<const T *>(in.data) + (size_t)n * in.batch_stride;
        for (int i = threadIdx.x; i < cells; i += blockDim.x) {
            const int cc = i % CASCADE_CH, pix = i / CASCADE_CH;
            const int gy = ty0 - halo + pix / region, gx = tx0 - halo + pix % region;
            const bool inside = gy >= 0 && gy < in.h && gx >= 0 && gx < in.w && c0 + cc < in.c;
            a[i] = inside ? load(src + ((size_t)gy * in.w + gx) * in.pix_stride + c0 + cc) : -INFINITY;
        }
        for (int s = 1; s <= cascade; s++) {
            const int lo_prev = (s - 1) * pad, lo = s * pad;
            __syncthreads();
            /* rows: b[ry][rx] = max over a[ry][rx - pad .. rx + pad] */
            const int hrows = region - 2 * lo_prev, hcols = region - 2 * lo;
            for (int i = threadIdx.x; i < hrows * hcols * CASCADE_CH; i += blockDim.x) {
                const int cc = i % CASCADE_CH, pix = i / CASCADE_CH;
                const int ry = lo_prev + pix / hcols, rx = lo + pix % hcols;
                float m = -INFINITY;
                for (int d = -pad; d <= pad; d++) m = nan_max(m, a[(ry * region + rx + d) * CASCADE_CH + cc]);
                b[(ry * region + rx) * CASCADE_CH + cc] = m;
            }
            __syncthreads();
            /* columns: a[ry][rx] = max over b[ry - pad .. ry + pad][rx]; then
             * the stage's output tile, and -inf outside the image */
            for (int i = threadIdx.x; i < hcols * hcols * CASCADE_CH; i += blockDim.x) {
                const int cc = i % CASCADE_CH, pix = i / CASCADE_CH;
                const int ry = lo + pix / hcols, rx = lo + pix % hcols;
                float m = -INFINITY;
                for (int d = -pad; d <= pad; d++) m = nan_max(m, b[((ry + d) * region + rx) * CASCADE_CH + cc]);
                const int gy = ty0 - halo + ry, gx = tx0 - halo + rx;
                const bool inside = gy >= 0 && gy < in.h && gx >= 0 && gx < in.w;
                a[(ry * region + rx) * CASCADE_CH + cc] = inside ? m : -INFINITY;
                const bool central = ry >= halo && ry < halo + CASCADE_TILE && rx >= halo &&
                                     rx < halo + CASCADE_TILE;
                if (inside && central && c0 + cc < in.c) {
                    const strix_dview &o = outs.v[s - 1];
                    store(static_cast<T *>(o.data) + (size_t)n * o.batch_stride +
                              ((size_t)gy * o.w + gx) * o.pix_stride + c0 + cc,
                          m);
                }
            }
        }
        __syncthreads(); /* the next z slice reloads a */
    }
}


/* A 16-byte cell of CellT<T>::CH channels, unpacked to fp32 and back (the
 * values are the tensor's own, so the round trip is exact). */
template <typename T> struct CellT;
template <> struct CellT<float> {
    static constexpr int CH = 4;
    static __device__ __forceinline__ void max_into(float m[CH], uint4 v)
    {
        m[0] = nan_max(m[0], __uint_as_float(v.x));
        m[1] = nan_max(m[1], __uint_as_float(v.y));
        m[2] = nan_max(m[2], __uint_as_float(v.z));
        m[3] = nan_max(m[3], __uint_as_float(v.w));
    }
    static __device__ __forceinline__ uint4 pack(const float m[CH])
    {
        return make_uint4(__float_as_uint(m[0]), __float_as_uint(m[1]), __float_as_uint(m[2]), __float_as_uint(m[3]));
    }
};
template <> struct CellT<__half> {
    static constexpr int CH = 8;
    static __device__ __forceinline__ void max_into(float m[CH], uint4 v)
    {
        const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
            __half2 h2;
            memcpy(&h2, &u[j], sizeof h2);
            const float2 f = __half22float2(h2);
            m[2 * j] = nan_max(m[2 * j], f.x);
            m[2 * j + 1] = nan_max(m[2 * j + 1], f.y);
        }
    }
    static __device__ __forceinline__ uint4 pack(const float m[CH])
    {
        unsigned u[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const __half2 h2 = __floats2half2_rn(m[2 * j], m[2 * j + 1]);
            memcpy(&u[j], &h2, sizeof h2);
        }
        return make_uint4(u[0], u[1], u[2], u[3]);
    }
};

/* Grid: x the tiles of one image (pool_plan.h), y (strided) image x channel
 * group.  Shared memory: a = the region, b = the rows pass's output, 16-byte
 * cells at the indices of pool_plan.h. */
template <typename T>
__global__ void __launch_bounds__(SPPF_THREADS)
    maxpool_sppf_v3(CascadeOuts outs, int cascade, strix_dview in, int pad, int groups)
{
    using Cell = CellT<T>;
    __shared__ uint4 a[STRIX_SPPF_A_CELLS], b[STRIX_SPPF_B_CELLS];
    const strix_sppf_tile t = strix_sppf_tile_make(in.h, in.w, (int)blockIdx.x, cascade * pad);
    const int rw = t.rx1 - t.rx0, tw = t.x1 - t.x0, th = t.y1 - t.y0;
    for (int z = blockIdx.y; z < in.n * groups; z += gridDim.y) {
        const int n = z / groups, c0 = (z % groups) * Cell::CH;
        const T *src = static_cast<const T *>(in.data) + (size_t)n * in.batch_stride + c0;
        /* the previous z's last reads of a were in its last rows pass, which
         * every thread left through the barrier before its columns pass */
        for (int i = threadIdx.x; i < (t.ry1 - t.ry0) * rw; i += blockDim.x) {
            const int y = t.ry0 + i / rw, x = t.rx0 + i % rw;
            a[i] = *reinterpret_cast<const uint4 *>(src + ((size_t)y * in.w + x) * in.pix_stride);
        }
        for (int s = 1; s <= cascade; s++) {
            const int r = s * pad;
            int lo, hi;
            strix_sppf_rows(&t, r, &lo, &hi);
            __syncthreads(); /* a loaded; the previous columns pass done with b */
            for (int i = threadIdx.x; i < (hi - lo) * tw; i += blockDim.x) {
                const int y = lo + i / tw, x = t.x0 + i % tw;
                int w0, w1;
                strix_sppf_window(t.rx0, t.rx1, x, r, &w0, &w1);
                float m[Cell::CH];
#pragma unroll
                for (int j = 0; j < Cell::CH; j++) m[j] = -INFINITY;
                for (int xx = w0; xx < w1; xx++) Cell::max_into(m, a[strix_sppf_a_index(&t, y, xx)]);
                b[strix_sppf_b_index(&t, y, x)] = Cell::pack(m);
            }
            __syncthreads();
            const strix_dview &o = outs.v[s - 1];
            for (int i = threadIdx.x; i < th * tw; i += blockDim.x) {
                const int y = t.y0 + i / tw, x = t.x0 + i % tw;
                int w0, w1;
                strix_sppf_window(t.ry0, t.ry1, y, r, &w0, &w1);
                float m[Cell::CH];
#pragma unroll
                for (int j = 0; j < Cell::CH; j++) m[j] = -INFINITY;
                for (int yy = w0; yy < w1; yy++) Cell::max_into(m, b[strix_sppf_b_index(&t, yy, x)]);
                *reinterpret_cast<uint4 *>(static_cast<T *>(o.data) + (size_t)n * o.batch_stride +
                                           ((size_t)y * o.w + x) * o.pix_stride + c0) = Cell::pack(m);
            }
        }
    }
}

/* The 16-byte vectors of maxpool_sppf_v3 fit view v: whole channel groups,
 * group-aligned strides, a 16-byte aligned start. */
bool sppf_vec_ok(const strix_dview *v, int ch)
{
    return v->c % ch == 0 && v->pix_stride % ch == 0 && v->batch_stride % ch == 0 && (uintptr_t)v->data % 16 == 0;
}

int pooled(int x, const strix_pool_params *p) { return (x + 2 * p->pad - p->k) / p->stride + 1; }

strix_cuda_err launch_maxpool2d(const strix_dview *out, const strix_dview *in, const strix_pool_params *p,
                                strix_dtype dt, cudaStream_t s)
{
    const size_t total = (size_t)out->n * out->h * out->w * out->c;
    if (total == 0) return (strix_cuda_err)cudaSuccess;
    const unsigned grid = grid_for(total, POOL_THREADS);
    if (dt == STRIX_F16)
        maxpool2d_nhwc<__half><<<grid, POOL_THREADS, 0, s>>>(*out, *in, *p);
    else
        maxpool2d_nhwc<float><<<grid, POOL_THREADS, 0, s>>>(*out, *in, *p);
    return last_error();
}

} /* namespace */

extern "C" strix_cuda_err strix_cuda_maxpool2d(const strix_dview *out, const strix_dview *in,
                                               const strix_pool_params *p, strix_dtype dt, strix_stream s)
{
    if (!view_ok(out) || !view_ok(in) || !p || p->k < 1 || p->stride < 1 || p->pad < 0 ||
        2 * p->pad > p->k || !dtype_ok(dt) || out->n != in->n ||
        out->c != in->c || out->h != pooled(in->h, p) || out->w != pooled(in->w, p))
        return (strix_cuda_err)cudaErrorInvalidValue;
    return launch_maxpool2d(out, in, p, dt, (cudaStream_t)s);
}

extern "C" strix_cuda_err strix_cuda_maxpool_cascade(const strix_dview *outs, int cascade,
                                                     const strix_dview *in, const strix_pool_params *p,
                                                     strix_dtype dt, int kernels, strix_stream s)
{
    if (!outs || !view_ok(in) || !p || cascade < 1 || p->stride != 1 || p->k < 1 ||
        2 * p->pad != p->k - 1 || !dtype_ok(dt) || kernels < STRIX_CUDA_KERNELS_V1 || kernels > STRIX_CUDA_KERNELS_V3)
        return (strix_cuda_err)cudaErrorInvalidValue;
    for (int i = 0; i < cascade; i++)
        if (!view_ok(&outs[i]) || outs[i].n != in->n || outs[i].h != in->h || outs[i].w != in->w ||
            outs[i].c != in->c)
            return (strix_cuda_err)cudaErrorInvalidValue;
    cudaStream_t st = (cudaStream_t)s;
    if (in->n == 0 || in->h == 0 || in->w == 0 || in->c == 0) return (strix_cuda_err)cudaSuccess;
    CascadeOuts o;
    for (int i = 0; i < cascade && i < CASCADE_MAX; i++) o.v[i] = outs[i];
    const int ch = dt == STRIX_F16 ? CellT<__half>::CH : CellT<float>::CH;
    bool vec = kernels == STRIX_CUDA_KERNELS_V3 && cascade <= CASCADE_MAX && cascade * p->pad <= STRIX_SPPF_HALO_MAX &&
               sppf_vec_ok(in, ch);
    for (int i = 0; i < cascade && vec; i++) vec = sppf_vec_ok(&outs[i], ch);
    if (vec) {
        const int groups = in->c / ch;
        const long long slices = (long long)in->n * groups;
        dim3 grid((unsigned)(strix_sppf_tiles(in->h) * strix_sppf_tiles(in->w)),
                  slices < 65535 ? (unsigned)slices : 65535u);
        if (dt == STRIX_F16)
            maxpool_sppf_v3<__half><<<grid, SPPF_THREADS, 0, st>>>(o, cascade, *in, p->pad, groups);
        else
            maxpool_sppf_v3<float><<<grid, SPPF_THREADS, 0, st>>>(o, cascade, *in, p->pad, groups);
        return last_error();
    }
    const int region = CASCADE_TILE + 2 * cascade * p->pad;
    const size_t smem = 2 * (size_t)region * region * CASCADE_CH * sizeof(float);
    if (cascade > CASCADE_MAX || smem > CASCADE_SMEM_MAX) {
        for (int i = 0; i < cascade; i++) {
            strix_cuda_err e = launch_maxpool2d(&outs[i], i ? &outs[i - 1] : in, p, dt, st);
            if (e) return e;
        }
        return (strix_cuda_err)cudaSuccess;
    }
    const int tiles_x = CEIL_DIV(in->w, CASCADE_TILE), tiles_y = CEIL_DIV(in->h, CASCADE_TILE);
    const int chunks = CEIL_DIV(in->c, CASCADE_CH);
    const long long slices = (long long)in->n * chunks;
    dim3 grid((unsigned)(tiles_x * tiles_y), slices < 65535 ? (unsigned)slices : 65535u);
    if (dt == STRIX_F16)
        maxpool_cascade_s1_nhwc<__half><<<grid, CASCADE_THREADS, smem, st>>>(o, cascade, *in, p->pad,
                                                                             tiles_x, chunks);
    else
        maxpool_cascade_s1_nhwc<float><<<grid, CASCADE_THREADS, smem, st>>>(o, cascade, *in, p->pad,
                                                                            tiles_x, chunks);
    return last_error();
}
