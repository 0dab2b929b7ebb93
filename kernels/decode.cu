/* decode.cu — the Detect-head decode on the GPU (same semantics as
 * strix_cpu_detect_decode, engine/cpu/decode.c): DFL expectation of each box
 * side, anchor points at cell centres, boxes to cx, cy, w, h in input
 * pixels, sigmoid class scores.
 *
 * Layouts: head [N, A, 4*reg_max + nc] dense (fp32 or fp16), anchors level
 * by level and row-major within a level; out [N, A, 4 + nc] dense fp32.
 *   detect_decode_boxes_dfl<T>: one thread per anchor (4 softmax
 *     expectations over reg_max bins each, fp32).
 *   detect_decode_scores_sigmoid<T>: one thread per (anchor, class), so
 *     reads and writes of the class columns are coalesced.
 */
#include <math.h>

#include "elem.cuh"

using namespace strix_elem;

#define DECODE_THREADS 256

namespace {

/* sum_i i * softmax(l)_i over `bins` logits, max subtracted; with one bin
 * (reg_max 1, YOLO26: no DFL) the logit is the distance. */
template <typename T>
__device__ float dfl_distance(const T *l, int bins)
{
    if (bins == 1) return load(l);
    float mx = load(l);
    for (int i = 1; i < bins; i++) {
        const float v = load(l + i);
        mx = v > mx ? v : mx;
    }
    float sum = 0.0f, wsum = 0.0f;
    for (int i = 0; i < bins; i++) {
        const float e = expf(load(l + i) - mx);
        sum += e;
        wsum += (float)i * e;
    }
    return wsum / sum;
}

template <typename T>
__global__ void __launch_bounds__(DECODE_THREADS)
    detect_decode_boxes_dfl(float *out, const T *head, int n, size_t anchors, strix_decode_params p)
{
    const size_t in_w = (size_t)4 * p.reg_max + p.nc, out_w = (size_t)4 + p.nc;
    const size_t total = (size_t)n * anchors;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        size_t a = i % anchors;
        int l = 0;
        while (l < p.levels - 1 && a >= (size_t)p.level_h[l] * p.level_w[l]) {
            a -= (size_t)p.level_h[l] * p.level_w[l];
            l++;
        }
        const int x = (int)(a % p.level_w[l]), y = (int)(a / p.level_w[l]);
        const float s = (float)p.level_stride[l];
        const T *hp = head + i * in_w;
        const float ax = (float)x + 0.5f, ay = (float)y + 0.5f;
        const float x1 = ax - dfl_distance(hp, p.reg_max), y1 = ay - dfl_distance(hp + p.reg_max, p.reg_max);
        const float x2 = ax + dfl_distance(hp + 2 * p.reg_max, p.reg_max);
        const float y2 = ay + dfl_distance(hp + 3 * p.reg_max, p.reg_max);
        float *op = out + i * out_w;
        op[0] = (x1 + x2) * 0.5f * s;
        op[1] = (y1 + y2) * 0.5f * s;
        op[2] = (x2 - x1) * s;
        op[3] = (y2 - y1) * s;
    }
}

template <typename T>
__global__ void __launch_bounds__(DECODE_THREADS)
    detect_decode_scores_sigmoid(float *out, const T *head, size_t rows, int reg_max, int nc)
{
    const size_t in_w = (size_t)4 * reg_max + nc, out_w = (size_t)4 + nc;
    const size_t total = rows * nc;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / nc;
        const int c = (int)(i % nc);
        out[r * out_w + 4 + c] = 1.0f / (1.0f + expf(-load(head + r * in_w + 4 * reg_max + c)));
    }
}

} /* namespace */

extern "C" strix_cuda_err strix_cuda_detect_decode(float *out, const void *head, strix_dtype dt, int n,
                                                   const strix_decode_params *p, strix_stream s)
{
    if (!out || !head || !p || !dtype_ok(dt) || n < 0 || p->levels < 1 || p->levels > STRIX_MAX_LEVELS ||
        p->reg_max < 1 || p->nc < 0)
        return (strix_cuda_err)cudaErrorInvalidValue;
    size_t anchors = 0;
    for (int l = 0; l < p->levels; l++) {
        if (p->level_h[l] < 0 || p->level_w[l] < 0) return (strix_cuda_err)cudaErrorInvalidValue;
        anchors += (size_t)p->level_h[l] * p->level_w[l];
    }
    const size_t rows = (size_t)n * anchors;
    if (rows == 0) return (strix_cuda_err)cudaSuccess;
    cudaStream_t st = (cudaStream_t)s;
    const unsigned gb = grid_for(rows, DECODE_THREADS);
    const unsigned gs = grid_for(rows * (size_t)p->nc, DECODE_THREADS);
    if (dt == STRIX_F16) {
        const __half *h = static_cast<const __half *>(head);
        detect_decode_boxes_dfl<__half><<<gb, DECODE_THREADS, 0, st>>>(out, h, n, anchors, *p);
        if (p->nc) detect_decode_scores_sigmoid<__half><<<gs, DECODE_THREADS, 0, st>>>(out, h, rows, p->reg_max, p->nc);
    } else {
        const float *h = static_cast<const float *>(head);
        detect_decode_boxes_dfl<float><<<gb, DECODE_THREADS, 0, st>>>(out, h, n, anchors, *p);
        if (p->nc) detect_decode_scores_sigmoid<float><<<gs, DECODE_THREADS, 0, st>>>(out, h, rows, p->reg_max, p->nc);
    }
    return last_error();
}
