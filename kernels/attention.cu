/* attention.cu — Ultralytics' Attention core on the GPU (same semantics as
 * strix_cpu_attention, engine/cpu/attention.c): per image and head,
 * out = softmax(scale * Q K^T) V, plus V gathered densely for Attention.pe.
 *
 * Layouts: qkv [N, H, W, heads*(2kd+hd)] (per head: q, k, v channels);
 * out and v_out [N, H, W, heads*hd] strided views; P = H*W pixels.
 * In cuBLAS's column-major terms a head's Q is the kd x P matrix whose column
 * i is pixel i's q (leading dimension pix_stride), likewise K (kd x P) and
 * V (hd x P); heads are a strided batch (stride 2kd+hd), images a loop.
 *   1. S = scale * K^T Q: P x P, column i = the scores of query i, stored
 *      row-major [head][i][j] in the workspace (fp32; the fp16 path reads
 *      fp16 Q/K and accumulates and stores in fp32).
 *   2. attention_softmax_rows<To>: each row max-subtracted softmax in fp32,
 *      written in place (fp32) or to an fp16 copy (fp16 path).
 *   3. O = V S': hd x P, column i written at out pixel i (ldc pix_stride).
 *   4. attention_gather_v<T>: v_out[i, h*hd + d] = v of head h at pixel i.
 * fp32 GEMMs use CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, whatever the handle's
 * math mode); fp16 GEMMs CUBLAS_COMPUTE_32F (tensor cores, fp32 sums).
 * Workspace: heads*P*P fp32 scores, plus heads*P*P fp16 probabilities on
 * the fp16 path, reused image after image (the fp16 path zeroes the scores
 * once per call: see strix_cuda_attention).
 */
#include <cublas_v2.h>
#include <math.h>

#include "elem.cuh"

using namespace strix_elem;

#define SOFTMAX_THREADS 256 /* one block per score row */
#define GATHER_THREADS 256
#define WS_ALIGN 256

namespace {

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* A block-wide reduction; every thread gets the result. red: 32 floats. */
template <bool MAX>
__device__ float block_reduce(float v, float *red)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    v = MAX ? warp_max(v) : warp_sum(v);
    __syncthreads(); /* red is free: the previous reduction has been read */
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < warps ? red[lane] : (MAX ? -INFINITY : 0.0f);
    return MAX ? warp_max(v) : warp_sum(v);
}

/* rows x len scores (fp32, row-major) -> probabilities in `probs` (may be
 * `scores` itself for fp32): p_j = exp(s_j - max) / sum. */
template <typename To>
__global__ void __launch_bounds__(SOFTMAX_THREADS)
    attention_softmax_rows(To *probs, float *scores, int rows, int len)
{
    __shared__ float red[32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        float *s = scores + (size_t)r * len;
        float m = -INFINITY;
        for (int j = threadIdx.x; j < len; j += blockDim.x) m = fmaxf(m, s[j]);
        m = block_reduce<true>(m, red);
        float sum = 0.0f;
        for (int j = threadIdx.x; j < len; j += blockDim.x) {
            const float e = expf(s[j] - m);
            s[j] = e; /* each thread rereads only its own elements below */
            sum += e;
        }
        const float inv = 1.0f / block_reduce<false>(sum, red);
        To *p = probs + (size_t)r * len;
        for (int j = threadIdx.x; j < len; j += blockDim.x) store(p + j, s[j] * inv);
    }
}

template <typename T>
__global__ void __launch_bounds__(GATHER_THREADS)
    attention_gather_v(strix_dview v_out, strix_dview qkv, int heads, int kd, int hd)
{
    const int pixels = qkv.h * qkv.w, c = heads * hd;
    const size_t total = (size_t)qkv.n * pixels * c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const int ch = (int)(i % c), h = ch / hd, d = ch % hd;
        const size_t pix = i / c;
        const int n = (int)(pix / pixels), px = (int)(pix % pixels);
        const T *src = static_cast<const T *>(qkv.data) + (size_t)n * qkv.batch_stride +
                       (size_t)px * qkv.pix_stride + (size_t)h * (2 * kd + hd) + 2 * kd + d;
        static_cast<T *>(v_out.data)[(size_t)n * v_out.batch_stride + (size_t)px * v_out.pix_stride + ch] = *src;
    }
}

size_t align_up(size_t x) { return (x + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN; }

size_t score_bytes(const strix_dview *qkv, const strix_attn_params *p)
{
    const size_t pixels = (size_t)qkv->h * qkv->w;
    return align_up((size_t)p->heads * pixels * pixels * sizeof(float));
}

strix_cuda_err cublas_err(cublasStatus_t st) { return (strix_cuda_err)(STRIX_CUDA_ERR_CUBLAS + (int)st); }

bool shapes_ok(const strix_dview *out, const strix_dview *v_out, const strix_dview *qkv,
               const strix_attn_params *p)
{
    if (!view_ok(out) || !view_ok(v_out) || !view_ok(qkv) || !p || p->heads < 1 || p->key_dim < 1 ||
        p->head_dim < 1)
        return false;
    const int c = p->heads * p->head_dim;
    const long long pixels = (long long)qkv->h * qkv->w;
    return qkv->c == p->heads * (2 * p->key_dim + p->head_dim) && out->c == c && v_out->c == c &&
           out->n == qkv->n && out->h == qkv->h && out->w == qkv->w && v_out->n == qkv->n &&
           v_out->h == qkv->h && v_out->w == qkv->w && pixels * pixels <= INT32_MAX &&
           qkv->pix_stride <= INT32_MAX && out->pix_stride <= INT32_MAX;
}

} /* namespace */

extern "C" size_t strix_cuda_attention_workspace(const strix_dview *qkv, const strix_attn_params *p,
                                                 strix_dtype dt)
{
    const size_t pixels = (size_t)qkv->h * qkv->w;
    size_t bytes = score_bytes(qkv, p);
    if (dt == STRIX_F16) bytes += align_up((size_t)p->heads * pixels * pixels * sizeof(__half));
    return bytes;
}

extern "C" strix_cuda_err strix_cuda_attention(const strix_dview *out, const strix_dview *v_out,
                                               const strix_dview *qkv, const strix_attn_params *p,
                                               strix_dtype dt, void *cublas_handle, void *workspace,
                                               strix_stream s)
{
    if (!shapes_ok(out, v_out, qkv, p) || !dtype_ok(dt) || !cublas_handle || !workspace)
        return (strix_cuda_err)cudaErrorInvalidValue;
    const int pixels = qkv->h * qkv->w, kd = p->key_dim, hd = p->head_dim, heads = p->heads;
    if (pixels == 0 || qkv->n == 0) return (strix_cuda_err)cudaSuccess;
    cudaStream_t st = (cudaStream_t)s;
    cublasHandle_t h = static_cast<cublasHandle_t>(cublas_handle);
    cudaStream_t bound = nullptr;
    cublasStatus_t cs = cublasGetStream(h, &bound);
    if (cs == CUBLAS_STATUS_SUCCESS && bound != st) cs = cublasSetStream(h, st);
    if (cs != CUBLAS_STATUS_SUCCESS) return cublas_err(cs);

    const bool f16 = dt == STRIX_F16;
    const size_t esz = f16 ? sizeof(__half) : sizeof(float);
    const cudaDataType io = f16 ? CUDA_R_16F : CUDA_R_32F;
    const cublasComputeType_t ct = f16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_PEDANTIC;
    float *scores = static_cast<float *>(workspace);
    __half *probs16 = reinterpret_cast<__half *>(static_cast<char *>(workspace) + score_bytes(qkv, p));
    const long long pp = (long long)pixels * pixels, head_stride = 2 * kd + hd;
    const int rows = heads * pixels;
    const unsigned softmax_grid = rows < 65535 ? (unsigned)rows : 65535u;
    const float zero = 0.0f, one = 1.0f;
    /* fp16 path: the scores are zeroed once per call.  Every score the
     * softmax reads is first written by the scores GEMM (beta 0, heads
     * batches of P x P, ldc P: exactly rows * pixels elements), and the
     * results match the CPU; yet compute-sanitizer initcheck (CUDA 13.0,
     * H100) flags the softmax's reads of them on this path alone, where
     * cuBLAS runs its tensor-core kernels, whose stores it apparently does
     * not track.  A zeroed buffer keeps initcheck usable on everything else
     * (4 * heads * P^2 bytes, about 1.3 MB for a 640 input's PSA). */
    if (f16) {
        const cudaError_t me = cudaMemsetAsync(scores, 0, (size_t)heads * pp * sizeof(float), st);
        if (me != cudaSuccess) return (strix_cuda_err)me;
    }
    for (int n = 0; n < qkv->n; n++) {
        const char *base = static_cast<const char *>(qkv->data) + (size_t)n * qkv->batch_stride * esz;
        const void *q = base, *k = base + (size_t)kd * esz, *v = base + (size_t)2 * kd * esz;
        void *o = static_cast<char *>(out->data) + (size_t)n * out->batch_stride * esz;
        /* S (P x P per head, column i = query i) = scale * K^T Q */
        cs = cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, pixels, pixels, kd, &p->scale, k, io,
                                        (int)qkv->pix_stride, head_stride, q, io, (int)qkv->pix_stride,
                                        head_stride, &zero, scores, CUDA_R_32F, pixels, pp, heads, ct,
                                        CUBLAS_GEMM_DEFAULT);
        if (cs != CUBLAS_STATUS_SUCCESS) return cublas_err(cs);
        const void *probs;
        if (f16) {
            attention_softmax_rows<__half><<<softmax_grid, SOFTMAX_THREADS, 0, st>>>(probs16, scores, rows, pixels);
            probs = probs16;
        } else {
            attention_softmax_rows<float><<<softmax_grid, SOFTMAX_THREADS, 0, st>>>(scores, scores, rows, pixels);
            probs = scores;
        }
        strix_cuda_err e = last_error();
        if (e) return e;
        /* O (hd x P per head, column i = out pixel i) = V probs' */
        cs = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, hd, pixels, pixels, &one, v, io,
                                        (int)qkv->pix_stride, head_stride, probs, io, pixels, pp, &zero, o,
                                        io, (int)out->pix_stride, hd, heads, ct, CUBLAS_GEMM_DEFAULT);
        if (cs != CUBLAS_STATUS_SUCCESS) return cublas_err(cs);
    }
    const size_t total = (size_t)qkv->n * pixels * heads * hd;
    const unsigned grid = grid_for(total, GATHER_THREADS);
    if (f16)
        attention_gather_v<__half><<<grid, GATHER_THREADS, 0, st>>>(*v_out, *qkv, heads, kd, hd);
    else
        attention_gather_v<float><<<grid, GATHER_THREADS, 0, st>>>(*v_out, *qkv, heads, kd, hd);
    return last_error();
}
