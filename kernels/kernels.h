/* kernels.h — extern "C" launchers of strix's CUDA kernels (the kernels/<op>.cu files).
 * Conventions: output first, a small typed parameter struct, stream last;
 * tensors are NHWC strided views (engine/tensor.h layout) in device memory,
 * fp32 (`float`) or fp16 (`__half`, passed as `void *` so this header stays C);
 * every tail handled (channels not a multiple of a tile, odd sizes, any batch).
 * Launchers return cudaError_t of the launch (cudaGetLastError), or
 * STRIX_CUDA_ERR_CUBLAS + the cublasStatus_t when a cuBLAS call they cannot
 * do without fails; they never allocate: scratch comes from the caller.
 * A cuBLAS handle passed in is rebound to the launcher's stream only when it
 * is bound to another one (cublasSetStream also drops the handle's
 * cublasSetWorkspace buffer, which CUDA graph capture relies on). */
#ifndef STRIX_KERNELS_H
#define STRIX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h" /* engine/ops.h: strix_conv_params, strix_pool_params, strix_attn_params, strix_decode_params */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *strix_stream; /* cudaStream_t without the CUDA headers */
typedef int strix_cuda_err;               /* cudaError_t */

/* A device view: element (n, y, x, c) at data[n*batch_stride + (y*w + x)*pix_stride + c]. */
typedef struct strix_dview {
    void *data;
    int n, h, w, c;
    size_t pix_stride, batch_stride;
} strix_dview;

typedef enum strix_dtype { STRIX_F32 = 0, STRIX_F16 = 1 } strix_dtype;

/* Above every cudaError_t value: a launcher's cuBLAS failure (see above). */
#define STRIX_CUDA_ERR_CUBLAS 100000

/* Kernel sets (model option cuda_kernels): V1 the first set (WMMA implicit
 * GEMM, cuBLAS + epilogue for 1x1, element-wise upsample); V2 (the default)
 * the tensor-core set of conv_mma.cu and the vectorised upsample; V3 = V2
 * with split-K where a convolution's grid is smaller than the SM count, the
 * stem reading its input tile through shared memory, the one-pass SPPF
 * pool and the folded upsample (strix_cuda_conv2d_fold) (not yet run on a
 * GPU).  Launchers that take `kernels` refuse any other value. */
#define STRIX_CUDA_KERNELS_V1 1
#define STRIX_CUDA_KERNELS_V2 2
#define STRIX_CUDA_KERNELS_V3 3

/* ---- conv.cu: convolution, out = act(conv(in, w) + bias) [+ res]
 * w: [Cout, KH, KW, Cin/groups] (OHWI) in the dtype of the tensors; bias fp32.
 * Chooses implicit-GEMM (fp32 SIMT tiles, or fp16 tensor cores with fp32
 * accumulation), a depthwise kernel when groups == Cin == Cout, or a
 * cuBLAS path for 1x1 stride-1 convolutions (handle may be NULL: no cuBLAS);
 * with kernels = V2 or V3 (conv_mma.cu) a direct stem kernel for Cin <= 4
 * and an mma.sync implicit GEMM for fp16 Cin % 8 == 0 (1x1 included) come
 * first; V3 splits that GEMM's K where its grid is smaller than `sms`, its
 * stem reads each block's input tile through shared memory, and it never
 * takes the cuBLAS path (every epilogue fused: 1x1 convolutions outside the
 * mma.sync path run on the implicit GEMMs).
 * sms: the device's SM count (cudaDevAttrMultiProcessorCount, >= 1; the
 * caller queries it once): V2 and V3 pick tiles by it, V3 its K splits.
 * workspace: strix_cuda_conv2d_workspace() bytes (same kernels and sms),
 * 16-byte aligned (cudaMalloc's are). */
size_t strix_cuda_conv2d_workspace(const strix_dview *out, const strix_dview *in,
                                   const strix_conv_params *p, strix_dtype dt, int kernels, int sms);
strix_cuda_err strix_cuda_conv2d(const strix_dview *out, const strix_dview *in, const void *w,
                                 const float *bias, const strix_dview *res,
                                 const strix_conv_params *p, strix_dtype dt, int kernels, int sms,
                                 void *cublas_handle, void *workspace, strix_stream s);

/* Kernel set 3's folded upsample (kernels/fold_plan.h; not yet run on a
 * GPU): strix_cuda_conv2d of `in` whose channels [c0, c0 + up->c) are read
 * as the nearest upsample by `scale` of `up` (the values the upsample would
 * have written there, which it then need not write); the rest of `in` as
 * usual.  strix_cuda_conv2d_fold_ok: whether the launch applies (kernels
 * V3, fp16, the mma.sync path on a GPU of compute capability 8.0 or newer,
 * and shapes and alignment as strix_fold_fits says); where it does not, run
 * strix_cuda_upsample_nearest and strix_cuda_conv2d instead (the fold
 * returns cudaErrorNotSupported).  Workspace: strix_cuda_conv2d_workspace's. */
int strix_cuda_conv2d_fold_ok(const strix_dview *out, const strix_dview *in, const strix_dview *up, int c0,
                              int scale, const void *w, const float *bias, const strix_dview *res,
                              const strix_conv_params *p, strix_dtype dt, int kernels);
strix_cuda_err strix_cuda_conv2d_fold(const strix_dview *out, const strix_dview *in, const strix_dview *up, int c0,
                                      int scale, const void *w, const float *bias, const strix_dview *res,
                                      const strix_conv_params *p, strix_dtype dt, int kernels, int sms,
                                      void *workspace, strix_stream s);

/* The kernel lab's handle on the v2 implicit GEMM (perf/cuda/conv_lab.c):
 * strix_cuda_conv2d's fp16 convolution with tile configuration `variant`
 * (1 .. strix_cuda_conv2d_mma_variants()) instead of the one the shape gets;
 * cudaErrorNotSupported where that path does not apply (conv_mma.cu). */
int strix_cuda_conv2d_mma_variants(void);
strix_cuda_err strix_cuda_conv2d_mma_variant(const strix_dview *out, const strix_dview *in, const void *w,
                                             const float *bias, const strix_dview *res,
                                             const strix_conv_params *p, int variant, strix_stream s);

/* ---- pool.cu: max-pool (-inf padding); `cascade` k x k stride-1 pools applied
 * in a row in one kernel (SPPF): out_i = pool(out_{i-1}), out_0 = pool(in),
 * writing every intermediate to outs[i] (all views shaped like in: odd k,
 * pad k/2).  With kernels = V3 each stage is computed from `in` as one wider
 * window, 16-byte vectors throughout, where the views allow (pool.cu). */
strix_cuda_err strix_cuda_maxpool2d(const strix_dview *out, const strix_dview *in,
                                    const strix_pool_params *p, strix_dtype dt, strix_stream s);
strix_cuda_err strix_cuda_maxpool_cascade(const strix_dview *outs, int cascade, const strix_dview *in,
                                          const strix_pool_params *p, strix_dtype dt, int kernels,
                                          strix_stream s);

/* ---- resize.cu: nearest upsample by an integer factor (V2 and V3: 16-byte
 * vectors when channels and strides allow); element copy. */
strix_cuda_err strix_cuda_upsample_nearest(const strix_dview *out, const strix_dview *in, int scale,
                                           strix_dtype dt, int kernels, strix_stream s);
strix_cuda_err strix_cuda_copy(const strix_dview *out, const strix_dview *in, strix_dtype dt,
                               strix_stream s);
/* Dense element conversion dst[i] = src[i], i < count (fp32 <-> fp16 with
 * round-to-nearest-even, or a plain copy when the dtypes agree). */
strix_cuda_err strix_cuda_convert(void *dst, strix_dtype dst_dt, const void *src, strix_dtype src_dt,
                                  size_t count, strix_stream s);

/* ---- attention.cu: Ultralytics' Attention core (same semantics as
 * strix_cpu_attention); scores through cuBLAS strided-batched GEMM, softmax
 * kernel. workspace: strix_cuda_attention_workspace() bytes. */
size_t strix_cuda_attention_workspace(const strix_dview *qkv, const strix_attn_params *p, strix_dtype dt);
strix_cuda_err strix_cuda_attention(const strix_dview *out, const strix_dview *v_out,
                                    const strix_dview *qkv, const strix_attn_params *p, strix_dtype dt,
                                    void *cublas_handle, void *workspace, strix_stream s);

/* ---- letterbox.cu: a uint8 frame in device memory (RGB or BGR HWC,
 * pitched; or NV12: the Y plane src and the U,V plane uv) to the normalised
 * [h, w, 3] RGB input tensor, the same fixed-point bilinear arithmetic as
 * engine/letterbox.c, padding 114.  NV12 pixels are converted with the
 * integers of strix_yuv_coeffs (engine/letterbox.h), yuv[] = cy, crv, cgu,
 * cgv, cbu, yoff, exactly as strix_nv12_row_rgb does. */
typedef struct strix_lb_params {
    int src_w, src_h, src_pitch, bgr;
    int dst_w, dst_h, new_w, new_h, left, top;
    int nv12, uv_pitch; /* nv12: 1 for an NV12 frame (uv used, bgr ignored) */
    int yuv[6];
} strix_lb_params;
strix_cuda_err strix_cuda_letterbox(void *dst, strix_dtype dt, const uint8_t *src, const uint8_t *uv,
                                    const strix_lb_params *p, strix_stream s);
/* The asynchronous detect path's letterbox: all n frames of a batch in one
 * launch into dst [n, dst_h, dst_w, 3] (every frame's p.dst_w, p.dst_h),
 * frame f from frames[f] (a device array of n descriptors, each made by
 * strix_lb_frame_init from parameters that strix_lb_params_ok takes, RGB,
 * BGR and NV12 mixed freely), each element the bits strix_cuda_letterbox
 * gives it (kernels/lb_batch.h: both launches' index arithmetic).  Not yet
 * run on a GPU. */
#define STRIX_LB_MAX_FRAMES 65535 /* frames of one per-batch launch (gridDim.z's limit) */

/* A frame's geometry as both kernels read it (the per-frame kernel takes it
 * by value, with the source pointers as separate arguments). */
typedef struct strix_lb_geom {
    strix_lb_params p;
    double scale_x, scale_y; /* 1 / (new / src), as OpenCV inverts inv_scale (computed on the host) */
    int resize;              /* 0: the frame is copied (cv::resize copies same-size input) */
} strix_lb_geom;

/* One frame of a per-batch launch, in device memory. */
typedef struct strix_lb_frame {
    strix_lb_geom g;
    const uint8_t *src, *uv; /* the frame (RGB/BGR, or NV12's Y plane) and NV12's U,V plane (else NULL) */
} strix_lb_frame;

/* Whether the launchers take p (with uv given for NV12): the checks
 * strix_cuda_letterbox makes before launching. */
static inline int strix_lb_params_ok(const strix_lb_params *p, int has_src, int has_uv)
{
    return has_src && p->src_w >= 1 && p->src_h >= 1 && p->src_pitch >= (p->nv12 ? 1 : 3) * p->src_w &&
           (!p->nv12 || (has_uv && p->uv_pitch >= 2 * ((p->src_w + 1) / 2))) && p->dst_w >= 1 && p->dst_h >= 1 &&
           p->new_w >= 1 && p->new_h >= 1 && p->left >= 0 && p->top >= 0 && p->left + p->new_w <= p->dst_w &&
           p->top + p->new_h <= p->dst_h;
}

/* The descriptor of frame (src, uv) with parameters p: the scales and the
 * resize flag exactly as strix_cuda_letterbox computes them. */
static inline void strix_lb_frame_init(strix_lb_frame *f, const strix_lb_params *p, const uint8_t *src,
                                       const uint8_t *uv)
{
    f->g.p = *p;
    f->g.resize = p->new_w != p->src_w || p->new_h != p->src_h;
    f->g.scale_x = 1.0 / ((double)p->new_w / p->src_w);
    f->g.scale_y = 1.0 / ((double)p->new_h / p->src_h);
    f->src = src;
    f->uv = p->nv12 ? uv : NULL;
}

strix_cuda_err strix_cuda_letterbox_batch(void *dst, strix_dtype dt, const strix_lb_frame *frames, int n,
                                          int dst_w, int dst_h, strix_stream s);

/* ---- decode.cu: Detect decode (as strix_cpu_detect_decode): head
 * [N, A, 4*reg_max + nc] (dt) into out [N, A, 4 + nc] fp32. */
strix_cuda_err strix_cuda_detect_decode(float *out, const void *head, strix_dtype dt, int n,
                                        const strix_decode_params *p, strix_stream s);

/* ---- nms.cu: threshold + compaction of candidates into a fixed-capacity
 * buffer (a slot reserved only after the test), then class-aware NMS on the
 * GPU (sorted by score, ties by anchor index, bitmask IoU), exactly the
 * semantics of strix_nms (engine/postprocess.h), giving at most max_det
 * detections per image:
 * dets [N, max_det, 6] (x1 y1 x2 y2 score class, input-tensor pixels; rows
 * past counts[i] zeroed) and counts [N]. workspace: strix_cuda_nms_workspace()
 * bytes (SIZE_MAX when the runtime cannot size the sort: no usable device). */
typedef struct strix_nms_gpu_params {
    int n, anchors, nc;
    float conf, iou;
    int max_det, max_nms, agnostic;
    const unsigned char *classes; /* host memory; NULL keeps all, else nc <= STRIX_NMS_MAX_CLASSES
                                     flags: drop an anchor whose best class is not flagged */
} strix_nms_gpu_params;
#define STRIX_NMS_MAX_CLASSES 4096 /* = STRIX_MAX_CLASSES: the class filter's bitset size */
size_t strix_cuda_nms_workspace(const strix_nms_gpu_params *p);
strix_cuda_err strix_cuda_nms(float *dets, int *counts, const float *decoded,
                              const strix_nms_gpu_params *p, void *workspace, strix_stream s);

#ifdef __cplusplus
}
#endif
#endif
