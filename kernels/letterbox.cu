/* letterbox.cu — Ultralytics' LetterBox on the GPU: a uint8 HWC frame (RGB
 * or BGR, pitched, device memory) to the normalised [dst_h, dst_w, 3] RGB
 * input tensor (fp32 or fp16), bit for bit the arithmetic of
 * engine/letterbox.c (cv2.resize INTER_LINEAR fixed point, padding 114,
 * x / 255.f).
 *
 * letterbox_bilinear_u8<T>: one thread per output pixel.  Each thread
 * recomputes OpenCV's source coordinates and 11-bit weights for its row and
 * column exactly as letterbox.c's tables hold them: the double-precision
 * coordinate and every float step use the _rn intrinsics, so nvcc cannot
 * contract them into an FMA that would round differently from the CPU; the
 * scales 1 / (new / src) are computed on the host, as the CPU computes them.
 * Then the two integer passes (exact) and OpenCV's SIMD vertical rounding.
 *
 * An NV12 frame takes the same path with each source pixel it reads
 * converted first (template argument NV12): the bytes strix_nv12_row_rgb
 * would give that pixel, so the result equals the CPU letterbox of the
 * converted image bit for bit.
 *
 * letterbox_batch_u8<T>: the same pixel function for every frame of a batch
 * in one launch (the asynchronous detect path): block z is the frame, whose
 * descriptor it reads from a device array; the grids' index arithmetic is
 * kernels/lb_batch.h's (checked on the CPU), so each output element gets the
 * per-frame launch's bits.
 */
#include <math.h>

#include "elem.cuh"
#include "lb_batch.h"

using namespace strix_elem;

#define COEF_SCALE 2048.f /* OpenCV's INTER_RESIZE_COEF_SCALE */
#define PAD_VALUE 114

namespace {

/* Source index and fraction of output coordinate d: f = (float)((d + 0.5) * scale - 0.5). */
__device__ __forceinline__ int src_coord(int d, double scale, float *frac)
{
    const float f = __double2float_rn(__dsub_rn(__dmul_rn(__dadd_rn((double)d, 0.5), scale), 0.5));
    const int s = (int)floorf(f);
    *frac = __fsub_rn(f, (float)s);
    return s;
}

/* lrintf(w * 2048): w * 2048 is exact, the rounding is to nearest even. */
__device__ __forceinline__ int weight(float w) { return __float2int_rn(__fmul_rn(w, COEF_SCALE)); }

__device__ __forceinline__ float to_unit(int v) { return __fdiv_rn((float)v, 255.f); }

/* (v + 2^15) >> 16 clamped to [0, 255], as letterbox.c's fix_to_u8. */
__device__ __forceinline__ int fix_to_u8(int v)
{
    v += 1 << 15;
    if (v < 0) return 0;
    v >>= 16;
    return v > 255 ? 255 : v;
}

/* Source pixel (x, y) as R, G, B bytes. */
template <bool NV12>
__device__ __forceinline__ void pixel(const uint8_t *src, const uint8_t *uv, const strix_lb_params &p, int x, int y,
                                      int rgb[3])
{
    if (NV12) {
        const int *c = p.yuv;
        const uint8_t *q = uv + (size_t)(y >> 1) * p.uv_pitch + (x & ~1);
        const int l = c[0] * (src[(size_t)y * p.src_pitch + x] - c[5]), u = q[0] - 128, v = q[1] - 128;
        rgb[0] = fix_to_u8(l + c[1] * v);
        rgb[1] = fix_to_u8(l - c[2] * u - c[3] * v);
        rgb[2] = fix_to_u8(l + c[4] * u);
    } else {
        const uint8_t *s = src + (size_t)y * p.src_pitch + (size_t)x * 3;
        const int r = p.bgr ? 2 : 0; /* source channel of R (B is 2 - r) */
        rgb[0] = s[r], rgb[1] = s[1], rgb[2] = s[2 - r];
    }
}

/* Output pixel (x, y) of the frame (src, uv) with geometry a into its slot
 * dst [dst_h, dst_w, 3] (nothing past the slot). */
template <typename T, bool NV12>
__device__ __forceinline__ void letterbox_at(T *dst, const uint8_t *src, const uint8_t *uv, const strix_lb_geom &a,
                                             int x, int y)
{
    const strix_lb_params &p = a.p;
    if (x >= p.dst_w || y >= p.dst_h) return;
    T *o = dst + strix_lb_pixel_offset(x, y, p.dst_w);
    const int iy = y - p.top, ix = x - p.left;
    if (iy < 0 || iy >= p.new_h || ix < 0 || ix >= p.new_w) {
        const float pad = to_unit(PAD_VALUE);
        store(o, pad);
        store(o + 1, pad);
        store(o + 2, pad);
        return;
    }
    int rgb[3];
    if (!a.resize) {
        pixel<NV12>(src, uv, p, ix, iy, rgb);
    } else {
        /* column: clamped to the edge pixels with weight 0 beyond them */
        float fx;
        int sx = src_coord(ix, a.scale_x, &fx);
        if (sx < 0) sx = 0, fx = 0.f;
        if (sx >= p.src_w - 1) sx = p.src_w - 1, fx = 0.f;
        const int sx1 = sx + 1 < p.src_w ? sx + 1 : sx;
        const int a0 = weight(__fsub_rn(1.f, fx)), a1 = weight(fx);
        /* row: only the indices are clamped, the weights keep the fraction */
        float fy;
        const int sy = src_coord(iy, a.scale_y, &fy);
        const int y0 = sy < 0 ? 0 : sy >= p.src_h ? p.src_h - 1 : sy;
        const int y1 = sy + 1 < 0 ? 0 : sy + 1 >= p.src_h ? p.src_h - 1 : sy + 1;
        const int b0 = weight(__fsub_rn(1.f, fy)), b1 = weight(fy);
        int p00[3], p01[3], p10[3], p11[3];
        pixel<NV12>(src, uv, p, sx, y0, p00);
        pixel<NV12>(src, uv, p, sx1, y0, p01);
        pixel<NV12>(src, uv, p, sx, y1, p10);
        pixel<NV12>(src, uv, p, sx1, y1, p11);
        for (int k = 0; k < 3; k++) {
            const int h0 = p00[k] * a0 + p01[k] * a1;
            const int h1 = p10[k] * a0 + p11[k] * a1;
            /* OpenCV's VResizeLinearVec_32s8u: high halves of 16 x 16-bit
             * products, then two bits rounded off */
            const int v = ((((h0 >> 4) * b0) >> 16) + (((h1 >> 4) * b1) >> 16) + 2) >> 2;
            rgb[k] = v > 255 ? 255 : v;
        }
    }
    store(o, to_unit(rgb[0]));
    store(o + 1, to_unit(rgb[1]));
    store(o + 2, to_unit(rgb[2]));
}

template <typename T, bool NV12>
__global__ void __launch_bounds__(STRIX_LB_TX *STRIX_LB_TY)
    letterbox_bilinear_u8(T *dst, const uint8_t *src, const uint8_t *uv, strix_lb_geom a)
{
    letterbox_at<T, NV12>(dst, src, uv, a, strix_lb_thread_x(blockIdx.x, threadIdx.x),
                          strix_lb_thread_y(blockIdx.y, threadIdx.y));
}

/* frames [gridDim.z]: one descriptor per frame, every one's p.dst_w and
 * p.dst_h those of the launch (its slots' geometry). */
template <typename T>
__global__ void __launch_bounds__(STRIX_LB_TX *STRIX_LB_TY)
    letterbox_batch_u8(T *dst, const strix_lb_frame *__restrict__ frames, int dst_w, int dst_h)
{
    const int x = strix_lb_thread_x(blockIdx.x, threadIdx.x), y = strix_lb_thread_y(blockIdx.y, threadIdx.y);
    if (x >= dst_w || y >= dst_h) return;
    const strix_lb_frame &a = frames[blockIdx.z];
    T *slot = dst + strix_lb_frame_offset(blockIdx.z, dst_w, dst_h);
    if (a.g.p.nv12)
        letterbox_at<T, true>(slot, a.src, a.uv, a.g, x, y);
    else
        letterbox_at<T, false>(slot, a.src, a.uv, a.g, x, y);
}

} /* namespace */

extern "C" strix_cuda_err strix_cuda_letterbox(void *dst, strix_dtype dt, const uint8_t *src, const uint8_t *uv,
                                               const strix_lb_params *p, strix_stream s)
{
    if (!dst || !p || !dtype_ok(dt) || !strix_lb_params_ok(p, src != NULL, uv != NULL))
        return (strix_cuda_err)cudaErrorInvalidValue;
    strix_lb_frame a;
    strix_lb_frame_init(&a, p, src, uv);
    dim3 block(STRIX_LB_TX, STRIX_LB_TY), grid(strix_lb_blocks_x(p->dst_w), strix_lb_blocks_y(p->dst_h));
    cudaStream_t st = (cudaStream_t)s;
    if (dt == STRIX_F16 && p->nv12)
        letterbox_bilinear_u8<__half, true><<<grid, block, 0, st>>>(static_cast<__half *>(dst), src, uv, a.g);
    else if (dt == STRIX_F16)
        letterbox_bilinear_u8<__half, false><<<grid, block, 0, st>>>(static_cast<__half *>(dst), src, uv, a.g);
    else if (p->nv12)
        letterbox_bilinear_u8<float, true><<<grid, block, 0, st>>>(static_cast<float *>(dst), src, uv, a.g);
    else
        letterbox_bilinear_u8<float, false><<<grid, block, 0, st>>>(static_cast<float *>(dst), src, uv, a.g);
    return last_error();
}

extern "C" strix_cuda_err strix_cuda_letterbox_batch(void *dst, strix_dtype dt, const strix_lb_frame *frames, int n,
                                                     int dst_w, int dst_h, strix_stream s)
{
    if (!dst || !frames || !dtype_ok(dt) || n < 1 || n > STRIX_LB_MAX_FRAMES || dst_w < 1 || dst_h < 1)
        return (strix_cuda_err)cudaErrorInvalidValue;
    dim3 block(STRIX_LB_TX, STRIX_LB_TY), grid(strix_lb_blocks_x(dst_w), strix_lb_blocks_y(dst_h), (unsigned)n);
    cudaStream_t st = (cudaStream_t)s;
    if (dt == STRIX_F16)
        letterbox_batch_u8<__half><<<grid, block, 0, st>>>(static_cast<__half *>(dst), frames, dst_w, dst_h);
    else
        letterbox_batch_u8<float><<<grid, block, 0, st>>>(static_cast<float *>(dst), frames, dst_w, dst_h);
    return last_error();
}
