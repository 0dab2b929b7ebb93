/* resize.cu — element movement on the GPU: nearest upsampling and view copy
 * (same results as strix_cpu_upsample_nearest / strix_cpu_copy, which only
 * move values), and dense fp32 <-> fp16 conversion (input upload, fp16
 * weight copies).
 *
 * Layouts: strided NHWC views [N, H, W, C]; one thread per output element,
 * channels fastest so a warp reads and writes contiguous runs of a pixel.
 * The V2 upsample (STRIX_CUDA_KERNELS_V2, and V3, which differs only in the
 * convolutions) moves 16-byte vectors instead: one thread per vector of an
 * input pixel, written to its scale x scale outputs, so the index arithmetic
 * is paid once per 16 bytes read, not per element.
 */
#include <cstdint>

#include "elem.cuh"

using namespace strix_elem;

#define MOVE_THREADS 256

namespace {

/* (n, y, x, c) of flat element i of an [n, h, w, c] shape. */
struct Coord {
    int n, y, x, c;
};

__device__ __forceinline__ Coord coord_of(size_t i, int h, int w, int c)
{
    Coord k;
    k.c = (int)(i % c);
    size_t pix = i / c;
    k.x = (int)(pix % w);
    pix /= w;
    k.y = (int)(pix % h);
    k.n = (int)(pix / h);
    return k;
}

__device__ __forceinline__ size_t offset_of(const strix_dview &v, int n, int y, int x, int c)
{
    return (size_t)n * v.batch_stride + ((size_t)y * v.w + x) * v.pix_stride + c;
}

/* out[n, y, x, c] = in[n, y / scale, x / scale, c] */
template <typename T>
__global__ void __launch_bounds__(MOVE_THREADS) upsample_nearest_nhwc(strix_dview out, strix_dview in, int scale)
{
    const size_t total = (size_t)out.n * out.h * out.w * out.c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const Coord k = coord_of(i, out.h, out.w, out.c);
        static_cast<T *>(out.data)[offset_of(out, k.n, k.y, k.x, k.c)] =
            static_cast<const T *>(in.data)[offset_of(in, k.n, k.y / scale, k.x / scale, k.c)];
    }
}

/* The V2 upsample: vector v (16 bytes, channels 16/sizeof(T)*v ...) of input
 * pixel (n, y, x) to out[n, y*scale + dy, x*scale + dx] for dy, dx < scale. */
template <typename T>
__global__ void __launch_bounds__(MOVE_THREADS) upsample_nearest_nhwc_vec16(strix_dview out, strix_dview in,
                                                                          int scale)
{
    constexpr int vec = 16 / sizeof(T);
    const int cv = in.c / vec;
    const size_t total = (size_t)in.n * in.h * in.w * cv;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const Coord k = coord_of(i, in.h, in.w, cv);
        const uint4 v = *reinterpret_cast<const uint4 *>(static_cast<const T *>(in.data) +
                                                         offset_of(in, k.n, k.y, k.x, k.c * vec));
        for (int dy = 0; dy < scale; dy++)
            for (int dx = 0; dx < scale; dx++)
                *reinterpret_cast<uint4 *>(static_cast<T *>(out.data) +
                                           offset_of(out, k.n, k.y * scale + dy, k.x * scale + dx, k.c * vec)) = v;
    }
}

/* Whether view v's every channel run of `vec` elements is one aligned 16-byte vector. */
static inline bool vec16_ok(const strix_dview *v, size_t esz)
{
    const size_t vec = 16 / esz;
    return v->c % vec == 0 && v->pix_stride % vec == 0 && v->batch_stride % vec == 0 && (uintptr_t)v->data % 16 == 0;
}

template <typename T>
__global__ void __launch_bounds__(MOVE_THREADS) copy_view_nhwc(strix_dview out, strix_dview in)
{
    const size_t total = (size_t)out.n * out.h * out.w * out.c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const Coord k = coord_of(i, out.h, out.w, out.c);
        static_cast<T *>(out.data)[offset_of(out, k.n, k.y, k.x, k.c)] =
            static_cast<const T *>(in.data)[offset_of(in, k.n, k.y, k.x, k.c)];
    }
}

template <typename To, typename Ti>
__global__ void __launch_bounds__(MOVE_THREADS) convert_dense(To *dst, const Ti *src, size_t count)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        store(dst + i, load(src + i));
}


} /* namespace */

extern "C" strix_cuda_err strix_cuda_upsample_nearest(const strix_dview *out, const strix_dview *in, int scale,
                                                      strix_dtype dt, int kernels, strix_stream s)
{
    if (!view_ok(out) || !view_ok(in) || scale < 1 || !dtype_ok(dt) || out->n != in->n ||
        out->c != in->c || out->h != in->h * scale || out->w != in->w * scale ||
        (kernels != STRIX_CUDA_KERNELS_V1 && kernels != STRIX_CUDA_KERNELS_V2 && kernels != STRIX_CUDA_KERNELS_V3))
        return (strix_cuda_err)cudaErrorInvalidValue;
    const size_t total = (size_t)out->n * out->h * out->w * out->c;
    if (total == 0) return (strix_cuda_err)cudaSuccess;
    cudaStream_t st = (cudaStream_t)s;
    const size_t esz = dt == STRIX_F16 ? 2 : 4;
    if (kernels != STRIX_CUDA_KERNELS_V1 && vec16_ok(in, esz) && vec16_ok(out, esz)) {
        const unsigned vgrid = grid_for(total / (16 / esz) / ((size_t)scale * scale), MOVE_THREADS);
        if (dt == STRIX_F16)
            upsample_nearest_nhwc_vec16<__half><<<vgrid, MOVE_THREADS, 0, st>>>(*out, *in, scale);
        else
            upsample_nearest_nhwc_vec16<float><<<vgrid, MOVE_THREADS, 0, st>>>(*out, *in, scale);
        return last_error();
    }
    const unsigned grid = grid_for(total, MOVE_THREADS);
    if (dt == STRIX_F16)
        upsample_nearest_nhwc<__half><<<grid, MOVE_THREADS, 0, st>>>(*out, *in, scale);
    else
        upsample_nearest_nhwc<float><<<grid, MOVE_THREADS, 0, st>>>(*out, *in, scale);
    return last_error();
}

extern "C" strix_cuda_err strix_cuda_copy(const strix_dview *out, const strix_dview *in, strix_dtype dt,
                                          strix_stream s)
{
    if (!view_ok(out) || !view_ok(in) || !dtype_ok(dt) || out->n != in->n || out->h != in->h ||
        out->w != in->w || out->c != in->c)
        return (strix_cuda_err)cudaErrorInvalidValue;
    const size_t total = (size_t)out->n * out->h * out->w * out->c;
    if (total == 0) return (strix_cuda_err)cudaSuccess;
    const unsigned grid = grid_for(total, MOVE_THREADS);
    cudaStream_t st = (cudaStream_t)s;
    if (dt == STRIX_F16)
        copy_view_nhwc<__half><<<grid, MOVE_THREADS, 0, st>>>(*out, *in);
    else
        copy_view_nhwc<float><<<grid, MOVE_THREADS, 0, st>>>(*out, *in);
    return last_error();
}

extern "C" strix_cuda_err strix_cuda_convert(void *dst, strix_dtype dst_dt, const void *src, strix_dtype src_dt,
                                             size_t count, strix_stream s)
{
    if (!dst || !src || !dtype_ok(dst_dt) || !dtype_ok(src_dt)) return (strix_cuda_err)cudaErrorInvalidValue;
    if (count == 0) return (strix_cuda_err)cudaSuccess;
    const unsigned grid = grid_for(count, MOVE_THREADS);
    cudaStream_t st = (cudaStream_t)s;
    if (dst_dt == STRIX_F16 && src_dt == STRIX_F32)
        convert_dense<__half, float><<<grid, MOVE_THREADS, 0, st>>>(static_cast<__half *>(dst),
                                                                    static_cast<const float *>(src), count);
    else if (dst_dt == STRIX_F32 && src_dt == STRIX_F16)
        convert_dense<float, __half><<<grid, MOVE_THREADS, 0, st>>>(static_cast<float *>(dst),
                                                                    static_cast<const __half *>(src), count);
    else
        return (strix_cuda_err)cudaMemcpyAsync(dst, src, count * (dst_dt == STRIX_F16 ? 2 : 4),
                                               cudaMemcpyDeviceToDevice, st);
    return last_error();
}
