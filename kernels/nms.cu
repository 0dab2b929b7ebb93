/* nms.cu — Ultralytics' non_max_suppression on the GPU, exactly the
 * semantics of strix_nms (engine/postprocess.c), so the same decoded head
 * gives the same detections bit for bit:
 *   candidates: best class score > conf (the first maximum wins; a NaN score
 *   anywhere in the row rejects the anchor), and with a class filter that
 *   best class among the kept ones (Ultralytics' classes=, before NMS); order: score descending, then
 *   anchor ascending; at most max_nms (0 = 30000) enter the greedy pass;
 *   boxes offset by class * 7680 unless agnostic; a box is dropped when its
 *   IoU with an earlier kept box is > iou (compared in double with the
 *   decimal the caller typed, as torchvision does); at most max_det kept.
 *
 * Layouts: decoded [N, A, 4 + nc] fp32 (cx, cy, w, h, scores); dets
 * [N, max_det, 6] fp32 (x1, y1, x2, y2, score, class) with the rows past
 * counts[i] zeroed; counts [N].
 *
 * Stages (all on the stream, nothing crosses to the host):
 *   1. nms_segments_init: begin[i] = end[i] = i * A.
 *   2. nms_threshold_compact: one thread per anchor; a passing anchor writes
 *      its box to cand[i*A + anchor] and only then reserves a slot with
 *      atomicAdd(&end[i], 1) for its sort key; end[] is then directly the
 *      segments' end offsets.
 *   3. cub::DeviceSegmentedRadixSort over 64-bit keys (~order(score) << 32 |
 *      anchor): unique keys, so the order is total and deterministic however
 *      the atomics interleaved.
 *   4. per image: nms_iou_bitmask sets bit j of word (i, j/64) when sorted
 *      box j > i overlaps box i by IoU > iou (64 x 64 tiles, upper triangle,
 *      a grid-stride loop over the tiles the actual candidate count needs);
 *      nms_greedy_sweep, one block, walks the candidates 64 at a time:
 *      thread 0 resolves a word serially against the removed-mask, then all
 *      threads OR the kept boxes' rows into the later words.
 * The IoU uses _rn intrinsics so no FMA contraction changes a rounding
 * relative to the CPU.  Workspace (strix_cuda_nms_workspace): bounds,
 * two key buffers and the candidates for N x A anchors, one bitmask of
 * min(A, max_nms)^2 bits reused image after image, CUB's scratch.
 */
#include <cub/device/device_segmented_radix_sort.cuh>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elem.cuh"

using namespace strix_elem;

#define MAX_WH 7680.f /* Ultralytics' per-class coordinate offset */
#define DEFAULT_MAX_NMS 30000
#define NMS_COMPACT_THREADS 256
#define NMS_WORD 64 /* candidates per mask word = threads of nms_iou_bitmask */
#define NMS_MASK_MAX_BLOCKS 4096
#define NMS_SWEEP_THREADS 256
#define NMS_SWEEP_SMEM_MAX (48 * 1024) /* removed-mask words: min(A, max_nms) <= 393216 */
#define WS_ALIGN 256

namespace {

typedef unsigned long long u64;

struct Cand {
    float x1, y1, x2, y2, score;
    int cls;
};

/* A sorted candidate as the IoU sees it: class-offset box and its area. */
struct OBox {
    float x1, y1, x2, y2, area;
};

/* Ascending order of the key = descending score, then ascending anchor. */
__device__ __forceinline__ u64 sort_key(float score, int anchor)
{
    unsigned u = __float_as_uint(score);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u); /* order-preserving map of the float */
    return ((u64)~u << 32) | (unsigned)anchor;
}

__device__ __forceinline__ float mx(float a, float b) { return a < b ? b : a; } /* std::max */
__device__ __forceinline__ float mn(float a, float b) { return b < a ? b : a; } /* std::min */

/* Whether kept box k suppresses the later box b (strix_nms's test). */
__device__ __forceinline__ bool suppresses(const OBox &k, const OBox &b, double thr)
{
    const float w = mx(0.f, __fsub_rn(mn(k.x2, b.x2), mx(k.x1, b.x1)));
    const float h = mx(0.f, __fsub_rn(mn(k.y2, b.y2), mx(k.y1, b.y1)));
    const float inter = __fmul_rn(w, h);
    if (!(inter > 0.f) && thr >= 0) return false;
    const float iou = __fdiv_rn(inter, __fsub_rn(__fadd_rn(k.area, b.area), inter));
    return (double)iou > thr;
}

__device__ __forceinline__ OBox offset_box(const Cand &c, int agnostic)
{
    const float off = agnostic ? 0.f : __fmul_rn((float)c.cls, MAX_WH);
    OBox o;
    o.x1 = __fadd_rn(c.x1, off);
    o.y1 = __fadd_rn(c.y1, off);
    o.x2 = __fadd_rn(c.x2, off);
    o.y2 = __fadd_rn(c.y2, off);
    o.area = __fmul_rn(__fsub_rn(o.x2, o.x1), __fsub_rn(o.y2, o.y1));
    return o;
}

/* The candidate at sorted position i of an image's segment. */
__device__ __forceinline__ const Cand &sorted_cand(const u64 *keys, const Cand *cand, int i)
{
    return cand[(unsigned)(keys[i] & 0xffffffffu)];
}

/* Candidates of image img entering the greedy pass. */
__device__ __forceinline__ int pass_count(const int *end, int img, int seg_begin, int max_nms)
{
    const int c = end[img] - seg_begin;
    return c < max_nms ? c : max_nms;
}

__global__ void nms_segments_init(int *begin, int *end, int n, int anchors)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        begin[i] = end[i] = i * anchors;
}

/* The class filter as a kernel argument (512 bytes of bits: no device
 * buffer to allocate or upload); on == 0 keeps every class. */
struct ClassBits {
    unsigned w[STRIX_NMS_MAX_CLASSES / 32];
    int on;
};

__global__ void __launch_bounds__(NMS_COMPACT_THREADS)
    nms_threshold_compact(u64 *keys, Cand *cand, int *end, const float *decoded, int n, int anchors, int nc,
                          float conf, ClassBits keep)
{
    const size_t total = (size_t)n * anchors;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const float *r = decoded + i * (4 + (size_t)nc), *s = r + 4;
        float best = s[0];
        int bi = 0;
        bool nan = s[0] != s[0];
        for (int j = 1; j < nc; j++) {
            const float v = s[j];
            if (v > best) best = v, bi = j;
            nan |= v != v;
        }
        if (nan || !(best > conf) || (keep.on && !(keep.w[bi >> 5] >> (bi & 31) & 1u))) continue;
        const float hw = __fdiv_rn(r[2], 2.f), hh = __fdiv_rn(r[3], 2.f);
        Cand c;
        c.x1 = __fsub_rn(r[0], hw);
        c.y1 = __fsub_rn(r[1], hh);
        c.x2 = __fadd_rn(r[0], hw);
        c.y2 = __fadd_rn(r[1], hh);
        c.score = best;
        c.cls = bi;
        cand[i] = c;
        const int img = (int)(i / anchors);
        const int slot = atomicAdd(&end[img], 1); /* reserved only after the test */
        keys[slot] = sort_key(best, (int)(i % anchors));
    }
}

/* mask (M x nb words, nb = ceil(M/64)): bit j%64 of word (i, j/64) = sorted
 * box i suppresses sorted box j, for j > i; only tiles with col >= row. */
__global__ void __launch_bounds__(NMS_WORD)
    nms_iou_bitmask(u64 *mask, const u64 *keys, const Cand *cand, const int *end, int img, int seg_begin,
                    int max_nms, int agnostic, double thr)
{
    __shared__ OBox cols[NMS_WORD];
    const int m = pass_count(end, img, seg_begin, max_nms), nb = CEIL_DIV(m, NMS_WORD);
    for (int t = blockIdx.x; t < nb * nb; t += gridDim.x) {
        const int rb = t / nb, cb = t % nb;
        if (cb < rb) continue; /* the whole block skips together */
        const int j0 = cb * NMS_WORD, i = rb * NMS_WORD + threadIdx.x;
        if (j0 + (int)threadIdx.x < m)
            cols[threadIdx.x] = offset_box(sorted_cand(keys, cand, j0 + threadIdx.x), agnostic);
        __syncthreads();
        if (i < m) {
            const OBox bi = offset_box(sorted_cand(keys, cand, i), agnostic);
            const int cols_here = m - j0 < NMS_WORD ? m - j0 : NMS_WORD;
            u64 bits = 0;
            for (int jj = 0; jj < cols_here; jj++)
                if (j0 + jj > i && suppresses(bi, cols[jj], thr)) bits |= 1ull << jj;
            mask[(size_t)i * nb + cb] = bits;
        }
        __syncthreads(); /* cols is reloaded for the next tile */
    }
}

/* Greedy pass of one image; dets rows written in kept order (score order). */
__global__ void __launch_bounds__(NMS_SWEEP_THREADS)
    nms_greedy_sweep(float *dets, int *counts, const u64 *mask, const u64 *keys, const Cand *cand, const int *end,
                     int img, int seg_begin, int max_nms, int max_det)
{
    extern __shared__ u64 removed[]; /* [nb]: bit set = suppressed by a kept box */
    __shared__ u64 diag[NMS_WORD];
    __shared__ u64 kept_bits;
    __shared__ int kept;
    const int m = pass_count(end, img, seg_begin, max_nms), nb = CEIL_DIV(m, NMS_WORD);
    float *out = dets + (size_t)img * max_det * 6;
    for (int w = threadIdx.x; w < nb; w += blockDim.x) removed[w] = 0;
    if (threadIdx.x == 0) kept = 0;
    __syncthreads();
    for (int b = 0; b < nb; b++) {
        if (threadIdx.x < NMS_WORD) {
            const int i = b * NMS_WORD + threadIdx.x;
            diag[threadIdx.x] = i < m ? mask[(size_t)i * nb + b] : 0;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            u64 r = removed[b], bits = 0;
            int k = kept;
            for (int j = 0; j < NMS_WORD && b * NMS_WORD + j < m && k < max_det; j++) {
                if (r >> j & 1) continue;
                const Cand &c = sorted_cand(keys, cand, b * NMS_WORD + j);
                float *d = out + (size_t)k * 6;
                d[0] = c.x1, d[1] = c.y1, d[2] = c.x2, d[3] = c.y2, d[4] = c.score, d[5] = (float)c.cls;
                k++;
                bits |= 1ull << j;
                r |= diag[j];
            }
            kept = k;
            kept_bits = bits;
        }
        __syncthreads();
        if (kept >= max_det) break; /* uniform: read after the barrier */
        const u64 kb = kept_bits;
        for (int w = b + 1 + threadIdx.x; w < nb; w += blockDim.x) {
            u64 acc = removed[w], bits = kb;
            while (bits) {
                const int j = __ffsll((long long)bits) - 1;
                bits &= bits - 1;
                acc |= mask[(size_t)(b * NMS_WORD + j) * nb + w];
            }
            removed[w] = acc;
        }
        __syncthreads();
    }
    const int k = kept;
    for (size_t e = (size_t)k * 6 + threadIdx.x; e < (size_t)max_det * 6; e += blockDim.x) out[e] = 0.f;
    if (threadIdx.x == 0) counts[img] = k;
}

size_t align_up(size_t x) { return (x + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN; }

/* Byte offsets of the workspace's parts. */
struct Layout {
    size_t bounds, keys0, keys1, cand, mask, temp, temp_bytes, total;
    int mcap; /* candidates a pass can hold: min(A, max_nms) */
};

int max_nms_of(const strix_nms_gpu_params *p) { return p->max_nms > 0 ? p->max_nms : DEFAULT_MAX_NMS; }

cudaError_t make_layout(const strix_nms_gpu_params *p, Layout *L)
{
    const size_t items = (size_t)p->n * p->anchors;
    L->mcap = p->anchors < max_nms_of(p) ? p->anchors : max_nms_of(p);
    const size_t words = (size_t)CEIL_DIV(L->mcap, NMS_WORD);
    L->bounds = 0;
    L->keys0 = L->bounds + align_up(2 * (size_t)p->n * sizeof(int));
    L->keys1 = L->keys0 + align_up(items * sizeof(u64));
    L->cand = L->keys1 + align_up(items * sizeof(u64));
    L->mask = L->cand + align_up(items * sizeof(Cand));
    L->temp = L->mask + align_up((size_t)L->mcap * words * sizeof(u64));
    cub::DoubleBuffer<u64> none(nullptr, nullptr);
    int *no_offsets = nullptr; /* the same iterator types as the real call */
    L->temp_bytes = 0;
    cudaError_t e = cub::DeviceSegmentedRadixSort::SortKeys(nullptr, L->temp_bytes, none, (int)items, p->n, no_offsets,
                                                            no_offsets, 0, 64);
    L->total = L->temp + align_up(L->temp_bytes);
    return e;
}

bool params_ok(const strix_nms_gpu_params *p)
{
    return p && p->n >= 0 && p->anchors >= 0 && p->nc >= 0 && p->max_det >= 0 && p->max_nms >= 0 &&
           (long long)p->n * p->anchors <= INT_MAX && (long long)p->max_det * 6 * p->n <= INT_MAX &&
           (!p->classes || p->nc <= STRIX_NMS_MAX_CLASSES);
}

/* torchvision compares the float IoU with the threshold as the Python float
 * the caller typed (0.3, not 0.3f): the shortest decimal that rounds to the
 * given float, as strix_typed_double recovers it (engine/util.c). */
double typed_threshold(float f)
{
    char buf[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f) return strtod(buf, NULL);
    }
    return f;
}

} /* namespace */

extern "C" size_t strix_cuda_nms_workspace(const strix_nms_gpu_params *p)
{
    Layout L;
    if (!params_ok(p) || make_layout(p, &L) != cudaSuccess) return SIZE_MAX;
    return L.total;
}

extern "C" strix_cuda_err strix_cuda_nms(float *dets, int *counts, const float *decoded,
                                         const strix_nms_gpu_params *p, void *workspace, strix_stream s)
{
    if (!params_ok(p) || !counts || (p->max_det > 0 && !dets)) return (strix_cuda_err)cudaErrorInvalidValue;
    cudaStream_t st = (cudaStream_t)s;
    if (p->n == 0) return (strix_cuda_err)cudaSuccess;
    if (p->nc == 0 || p->max_det == 0 || p->anchors == 0) {
        cudaError_t e = cudaMemsetAsync(counts, 0, (size_t)p->n * sizeof(int), st);
        if (e == cudaSuccess && p->max_det > 0)
            e = cudaMemsetAsync(dets, 0, (size_t)p->n * p->max_det * 6 * sizeof(float), st);
        return (strix_cuda_err)e;
    }
    if (!decoded || !workspace) return (strix_cuda_err)cudaErrorInvalidValue;
    Layout L;
    cudaError_t e = make_layout(p, &L);
    if (e != cudaSuccess) return (strix_cuda_err)e;
    if ((size_t)CEIL_DIV(L.mcap, NMS_WORD) * sizeof(u64) > NMS_SWEEP_SMEM_MAX)
        return (strix_cuda_err)cudaErrorInvalidValue;
    char *ws = static_cast<char *>(workspace);
    int *begin = reinterpret_cast<int *>(ws + L.bounds), *end = begin + p->n;
    u64 *keys0 = reinterpret_cast<u64 *>(ws + L.keys0), *keys1 = reinterpret_cast<u64 *>(ws + L.keys1);
    Cand *cand = reinterpret_cast<Cand *>(ws + L.cand);
    u64 *mask = reinterpret_cast<u64 *>(ws + L.mask);
    const size_t items = (size_t)p->n * p->anchors;

    ClassBits keep;
    memset(&keep, 0, sizeof keep);
    keep.on = p->classes != nullptr;
    for (int c = 0; keep.on && c < p->nc; c++)
        if (p->classes[c]) keep.w[c >> 5] |= 1u << (c & 31);
    nms_segments_init<<<grid_for((size_t)p->n, 128), 128, 0, st>>>(begin, end, p->n, p->anchors);
    nms_threshold_compact<<<grid_for(items, NMS_COMPACT_THREADS), NMS_COMPACT_THREADS, 0, st>>>(
        keys0, cand, end, decoded, p->n, p->anchors, p->nc, p->conf, keep);
    if ((e = cudaGetLastError()) != cudaSuccess) return (strix_cuda_err)e;
    cub::DoubleBuffer<u64> keys(keys0, keys1);
    e = cub::DeviceSegmentedRadixSort::SortKeys(ws + L.temp, L.temp_bytes, keys, (int)items, p->n, begin, end, 0,
                                                64, st);
    if (e != cudaSuccess) return (strix_cuda_err)e;

    const double thr = typed_threshold(p->iou);
    const int words = CEIL_DIV(L.mcap, NMS_WORD);
    const long long tiles = (long long)words * words;
    const unsigned mask_grid = tiles < NMS_MASK_MAX_BLOCKS ? (unsigned)tiles : NMS_MASK_MAX_BLOCKS;
    const size_t sweep_smem = (size_t)words * sizeof(u64);
    const int max_nms = max_nms_of(p);
    for (int img = 0; img < p->n; img++) {
        const int seg = img * p->anchors;
        const u64 *k = keys.Current() + seg;
        const Cand *c = cand + seg;
        nms_iou_bitmask<<<mask_grid, NMS_WORD, 0, st>>>(mask, k, c, end, img, seg, max_nms, p->agnostic, thr);
        nms_greedy_sweep<<<1, NMS_SWEEP_THREADS, sweep_smem, st>>>(dets, counts, mask, k, c, end, img, seg,
                                                                   max_nms, p->max_det);
        if ((e = cudaGetLastError()) != cudaSuccess) return (strix_cuda_err)e;
    }
    return (strix_cuda_err)cudaSuccess;
}
