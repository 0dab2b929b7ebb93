/* lb_batch.h — the index arithmetic of the letterbox launches (letterbox.cu):
 * the per-frame launch (strix_cuda_letterbox, one grid per frame) and the
 * per-batch launch (strix_cuda_letterbox_batch, the asynchronous detect
 * path's one launch for all frames of a batch), in plain C so that it is
 * checked on machines without a GPU (tests/test_cuda_ops.c,
 * letterbox_batch_plan: both grids emulated on the CPU over random batches
 * of mixed frame sizes and formats).
 *
 * Output: the batch's input tensor [n, dst_h, dst_w, 3] (every frame of a
 * batch is letterboxed to the batch's planned shape); frame f's slot starts
 * at element f * dst_h * dst_w * 3.
 *   per frame: grid (ceil(dst_w / TX), ceil(dst_h / TY)), block (TX, TY),
 *     launched with dst = the frame's slot; thread (x, y) writes elements
 *     (y * dst_w + x) * 3 + c of it;
 *   per batch: grid (ceil(dst_w / TX), ceil(dst_h / TY), n), block (TX, TY),
 *     dst = the tensor; block z is the frame, whose descriptor
 *     (strix_lb_frame: its geometry, source pointers and the scales the
 *     per-frame launcher computes) the kernel reads from a device array of
 *     n; thread (x, y) of block z writes element
 *     ((z * dst_h + y) * dst_w + x) * 3 + c, the same element the per-frame
 *     launch of frame z writes, computed by the same device function
 *     (so RGB and NV12 give the per-frame launch's bits).
 * Threads past dst_w or dst_h write nothing.  gridDim.z <= 65535 frames. */
#ifndef STRIX_KERNELS_LB_BATCH_H
#define STRIX_KERNELS_LB_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h" /* strix_lb_params, strix_lb_geom, strix_lb_frame */

#ifdef __CUDACC__
#define STRIX_LB_FN static inline __host__ __device__
#else
#define STRIX_LB_FN static inline
#endif

#define STRIX_LB_TX 32 /* block: 32 x 8 output pixels */
#define STRIX_LB_TY 8

/* Blocks along x and y of either launch. */
STRIX_LB_FN unsigned strix_lb_blocks_x(int dst_w) { return (unsigned)((dst_w + STRIX_LB_TX - 1) / STRIX_LB_TX); }
STRIX_LB_FN unsigned strix_lb_blocks_y(int dst_h) { return (unsigned)((dst_h + STRIX_LB_TY - 1) / STRIX_LB_TY); }

/* Thread (tx, ty) of block (bx, by) of either launch: its output pixel. */
STRIX_LB_FN int strix_lb_thread_x(unsigned bx, unsigned tx) { return (int)(bx * STRIX_LB_TX + tx); }
STRIX_LB_FN int strix_lb_thread_y(unsigned by, unsigned ty) { return (int)(by * STRIX_LB_TY + ty); }

/* Element of pixel (x, y)'s channel 0 in a frame's slot, and of frame f's
 * slot in the batch tensor. */
STRIX_LB_FN size_t strix_lb_pixel_offset(int x, int y, int dst_w) { return ((size_t)y * dst_w + x) * 3; }
STRIX_LB_FN size_t strix_lb_frame_offset(unsigned f, int dst_w, int dst_h) { return (size_t)f * dst_h * dst_w * 3; }

/* What thread (tx, ty) of block (bx, by) of a per-frame launch writes: its
 * pixel (x, y) and the element of the frame's slot holding its channel 0;
 * 0 when it is past the image (it writes nothing). */
STRIX_LB_FN int strix_lb_frame_pixel(unsigned bx, unsigned by, unsigned tx, unsigned ty, int dst_w, int dst_h,
                                     int *x, int *y, size_t *dst)
{
    *x = strix_lb_thread_x(bx, tx);
    *y = strix_lb_thread_y(by, ty);
    if (*x >= dst_w || *y >= dst_h) return 0;
    *dst = strix_lb_pixel_offset(*x, *y, dst_w);
    return 1;
}

/* The same for block (bx, by, bz) of a per-batch launch: its frame (bz),
 * pixel and the element of the batch tensor holding its channel 0. */
STRIX_LB_FN int strix_lb_batch_pixel(unsigned bx, unsigned by, unsigned bz, unsigned tx, unsigned ty, int dst_w,
                                     int dst_h, int *frame, int *x, int *y, size_t *dst)
{
    *frame = (int)bz;
    if (!strix_lb_frame_pixel(bx, by, tx, ty, dst_w, dst_h, x, y, dst)) return 0;
    *dst += strix_lb_frame_offset(bz, dst_w, dst_h);
    return 1;
}

#endif
