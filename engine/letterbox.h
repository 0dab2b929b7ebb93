/* letterbox.h — Ultralytics' LetterBox preprocessing, bit-compatible with
 * cv2.resize(INTER_LINEAR) on uint8 followed by copyMakeBorder(114), then
 * RGB order and /255 into an fp32 NHWC tensor. */
#ifndef STRIX_LETTERBOX_H
#define STRIX_LETTERBOX_H

#include <stdint.h>
#include "strix.h"

/* Geometry of one letterboxed image. */
typedef struct strix_letterbox_info {
    int src_w, src_h;    /* source size */
    int dst_w, dst_h;    /* tensor size */
    int new_w, new_h;    /* resized image size inside the tensor */
    int left, top;       /* padding before the image (right/bottom pad the rest) */
    float gain;          /* the resize scale r (min(imgsz/src_h, imgsz/src_w) in rect mode) */
} strix_letterbox_info;

/* Tensor size and geometry for one source size, exactly as the predictor's
 * LetterBox(imgsz, auto=rect, stride) computes them.  imgsz is first rounded
 * up to a multiple of stride (check_imgsz).  rect == 0: imgsz x imgsz.
 * rect != 0: the image scaled (up or down) so its long side is imgsz, then
 * each side padded only up to the next multiple of stride (auto=True). */
void strix_letterbox_plan(int src_w, int src_h, int imgsz, int stride, int rect,
                          strix_letterbox_info *info);

/* Just the tensor size of strix_letterbox_plan. */
void strix_letterbox_shape(int src_w, int src_h, int imgsz, int stride, int rect,
                           int *dst_w, int *dst_h);

/* Geometry of fitting a src_w x src_h image into a given dst_w x dst_h
 * tensor, as LetterBox(new_shape=(dst_h, dst_w), auto=False) computes it.
 * For rect tensors use strix_letterbox_plan: there the scale comes from
 * imgsz, and for some sizes (1600x1201 at 640: 640x480, not 639x480) fitting
 * into the final tensor rounds differently. */
void strix_letterbox_geometry(int src_w, int src_h, int dst_w, int dst_h,
                              strix_letterbox_info *info);

/* NV12 -> RGB in 16-bit fixed point (see strix_image in strix.h):
 *   R = (cy (Y - yoff) + crv (V - 128) + 2^15) >> 16
 *   G = (cy (Y - yoff) - cgu (U - 128) - cgv (V - 128) + 2^15) >> 16
 *   B = (cy (Y - yoff) + cbu (U - 128) + 2^15) >> 16,   each clamped to [0, 255].
 * The CUDA letterbox gets the same integers, so both give the same bytes. */
typedef struct strix_yuv_coeffs {
    int cy, crv, cgu, cgv, cbu, yoff;
} strix_yuv_coeffs;
void strix_yuv_coeffs_init(strix_yuv_coeffs *c, strix_colorspace cs, int full_range);
/* One NV12 row (y) as packed RGB ([width * 3]). */
void strix_nv12_row_rgb(uint8_t *rgb, const strix_image *src, const strix_yuv_coeffs *c, int y);

/* Letterbox src (host memory, any format) into dst ([dst_h, dst_w, 3] fp32
 * NHWC, RGB, /255).
 * scratch must hold strix_letterbox_scratch_bytes(info) bytes. */
size_t strix_letterbox_scratch_bytes(const strix_letterbox_info *info);
void strix_letterbox(float *dst, const strix_image *src, const strix_letterbox_info *info,
                     void *scratch);

/* The uint8 core: resize src (3 channels, pitched) to new_w x new_h with
 * OpenCV's INTER_LINEAR fixed-point arithmetic.  dst is dense [new_h, new_w, 3]. */
void strix_resize_bilinear_u8(uint8_t *dst, int new_w, int new_h, const uint8_t *src, int src_w,
                              int src_h, int src_stride, void *scratch);
size_t strix_resize_bilinear_u8_scratch_bytes(int new_w, int new_h, int src_w, int src_h);

#endif
