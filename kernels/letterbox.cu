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
 */
#include <math.h>

#include "elem.cuh"

using namespace strix_elem;

#define LB_TX 32 /* block: 32 x 8 output pixels */
#define LB_TY 8
#define COEF_SCALE 2048.f /* OpenCV's INTER_RESIZE_COEF_SCALE */
#define PAD_VALUE 114

namespace {

struct LbArgs {
    strix_lb_params p;
    double scale_x, scale_y; /* 1 / (new / src), as OpenCV inverts inv_scale */
    int resize;              /* 0: the frame is copied (cv::resize copies same-size input) */
};

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

template <typename T>
__global__ void __launch_bounds__(LB_TX *LB_TY) letterbox_bilinear_u8(T *dst, const uint8_t *src, LbArgs a)
{
    const strix_lb_params &p = a.p;
    const int x = blockIdx.x * LB_TX + threadIdx.x, y = blockIdx.y * LB_TY + threadIdx.y;
    if (x >= p.dst_w || y >= p.dst_h) return;
    T *o = dst + ((size_t)y * p.dst_w + x) * 3;
    const int iy = y - p.top, ix = x - p.left;
    if (iy < 0 || iy >= p.new_h || ix < 0 || ix >= p.new_w) {
        const float pad = to_unit(PAD_VALUE);
        store(o, pad);
        store(o + 1, pad);
        store(o + 2, pad);
        return;
    }
    const int r = p.bgr ? 2 : 0, b = 2 - r; /* source channel of R and B */
    int rgb[3];
    if (!a.resize) {
        const uint8_t *s = src + (size_t)iy * p.src_pitch + (size_t)ix * 3;
        rgb[0] = s[r], rgb[1] = s[1], rgb[2] = s[b];
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
        const uint8_t *r0 = src + (size_t)y0 * p.src_pitch, *r1 = src + (size_t)y1 * p.src_pitch;
        const int chan[3] = {r, 1, b};
        for (int k = 0; k < 3; k++) {
            const int c = chan[k];
            const int h0 = r0[sx * 3 + c] * a0 + r0[sx1 * 3 + c] * a1;
            const int h1 = r1[sx * 3 + c] * a0 + r1[sx1 * 3 + c] * a1;
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

} /* namespace */

extern "C" strix_cuda_err strix_cuda_letterbox(void *dst, strix_dtype dt, const uint8_t *src,
                                               const strix_lb_params *p, strix_stream s)
{
    if (!dst || !src || !p || !dtype_ok(dt) || p->src_w < 1 || p->src_h < 1 || p->src_pitch < 3 * p->src_w ||
        p->dst_w < 1 || p->dst_h < 1 || p->new_w < 1 || p->new_h < 1 || p->left < 0 || p->top < 0 ||
        p->left + p->new_w > p->dst_w || p->top + p->new_h > p->dst_h)
        return (strix_cuda_err)cudaErrorInvalidValue;
    LbArgs a;
    a.p = *p;
    a.resize = p->new_w != p->src_w || p->new_h != p->src_h;
    a.scale_x = 1.0 / ((double)p->new_w / p->src_w);
    a.scale_y = 1.0 / ((double)p->new_h / p->src_h);
    dim3 block(LB_TX, LB_TY), grid(CEIL_DIV(p->dst_w, LB_TX), CEIL_DIV(p->dst_h, LB_TY));
    cudaStream_t st = (cudaStream_t)s;
    if (dt == STRIX_F16)
        letterbox_bilinear_u8<__half><<<grid, block, 0, st>>>(static_cast<__half *>(dst), src, a);
    else
        letterbox_bilinear_u8<float><<<grid, block, 0, st>>>(static_cast<float *>(dst), src, a);
    return last_error();
}
