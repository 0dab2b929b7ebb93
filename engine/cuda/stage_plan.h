/* stage_plan.h — where the CUDA detect path (engine/cuda/backend.c,
 * stage_frames) puts a batch's frames in its device frame buffer, and which
 * copies take them there, in plain C so that it is checked on machines
 * without a GPU (tests/test_cuda_ops.c, stage_plan: random batches emulated
 * on the CPU).
 *
 * Device frame buffer, bytes:
 *   [0, staged)     the host frames (STRIX_HOST) in batch order, each packed
 *                   densely (RGB/BGR rows of w * 3 bytes; NV12's Y rows of w
 *                   bytes, then its U,V rows of 2 * ((w + 1) / 2) bytes) from
 *                   a 256-byte boundary: exactly as they lie in the pinned
 *                   staging buffer the CPU packs them into, which is DMA'd
 *                   to the same offsets;
 *   [staged, total) the pinned frames (STRIX_PINNED), each plane as it lies
 *                   in the caller's memory (its pitch; the last row without
 *                   the padding after it), in batch order, each from a
 *                   256-byte boundary unless it starts where the previous
 *                   pinned plane ends in host memory: then it follows that
 *                   plane on the device too, and the two are one copy.
 * Frames in device memory (STRIX_DEVICE) take no room: read where they are.
 * The pinned copies: maximal runs of planes contiguous both in host memory
 * and on the device, each one cudaMemcpyAsync from the caller's memory. */
#ifndef STRIX_CUDA_STAGE_PLAN_H
#define STRIX_CUDA_STAGE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "strix.h"

#define STRIX_STAGE_ALIGN 256 /* byte alignment of each frame's place (but a contiguous run's) */

/* Where a staged or pinned frame lies in the device frame buffer: its Y (or
 * RGB/BGR) plane at byte offset y, rows `pitch` bytes apart; NV12's U,V
 * plane at uv, rows uv_pitch apart. */
typedef struct strix_stage_place {
    size_t y, uv;
    int pitch, uv_pitch;
} strix_stage_place;

/* One copy of pinned planes: len bytes from src to byte offset dev. */
typedef struct strix_stage_run {
    const uint8_t *src;
    size_t dev, len;
} strix_stage_run;

/* Bytes of one dense row of plane `plane` (0: Y or RGB/BGR, 1: NV12's U,V). */
static inline int strix_stage_row_bytes(const strix_image *im, int plane)
{
    if (im->format != STRIX_NV12) return im->width * 3;
    return plane ? 2 * ((im->width + 1) / 2) : im->width;
}

static inline int strix_stage_planes(const strix_image *im) { return im->format == STRIX_NV12 ? 2 : 1; }

/* Rows of a packed host frame: Y rows then U,V rows for NV12. */
static inline int strix_stage_rows(const strix_image *im)
{
    return im->format == STRIX_NV12 ? im->height + (im->height + 1) / 2 : im->height;
}

static inline size_t strix_stage_align(size_t bytes)
{
    return (bytes + STRIX_STAGE_ALIGN - 1) / STRIX_STAGE_ALIGN * STRIX_STAGE_ALIGN;
}

/* Bytes a host frame takes packed (its place's end rounded to the alignment). */
static inline size_t strix_stage_bytes(const strix_image *im)
{
    size_t bytes = (size_t)strix_stage_row_bytes(im, 0) * im->height;
    if (im->format == STRIX_NV12) bytes += (size_t)strix_stage_row_bytes(im, 1) * ((im->height + 1) / 2);
    return strix_stage_align(bytes);
}

/* Plane `plane` of a pinned frame in the caller's memory: its start, its
 * pitch, and the bytes from its first pixel to its last (the padding after
 * the last row may lie beyond the caller's allocation: never read). */
static inline const uint8_t *strix_stage_pinned_plane(const strix_image *im, int plane, int *pitch, size_t *span)
{
    const int row = strix_stage_row_bytes(im, plane), rows = plane ? (im->height + 1) / 2 : im->height;
    const int given = plane ? im->uv_stride : im->stride;
    *pitch = given ? given : row;
    *span = (size_t)*pitch * (size_t)(rows - 1) + (size_t)row;
    return plane ? im->uv : im->data;
}

/* Row r of a host frame's packed rows (Y rows, then U,V rows for NV12):
 * where it is in the image, and its offset in the packed frame. */
static inline const uint8_t *strix_stage_row(const strix_image *im, int r, size_t *dst_off, size_t *len)
{
    const int plane = r >= im->height, y = plane ? r - im->height : r;
    const size_t row = (size_t)strix_stage_row_bytes(im, plane);
    size_t stride = plane ? (size_t)im->uv_stride : (size_t)im->stride;
    if (!stride) stride = row;
    *len = row;
    *dst_off = (plane ? (size_t)strix_stage_row_bytes(im, 0) * im->height : 0) + (size_t)y * row;
    return (plane ? im->uv : im->data) + (size_t)y * stride;
}

/* The places of the n frames (place[i] left untouched for a device frame);
 * *staged: the bytes of the host frames (the staging buffer's size);
 * returns the device buffer's size. */
static inline size_t strix_stage_place_frames(const strix_image *imgs, int n, strix_stage_place *place,
                                              size_t *staged)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (imgs[i].memory != STRIX_HOST) continue;
        const int row0 = strix_stage_row_bytes(&imgs[i], 0);
        place[i] = (strix_stage_place){at, at + (size_t)row0 * imgs[i].height, row0,
                                       strix_stage_row_bytes(&imgs[i], 1)};
        at += strix_stage_bytes(&imgs[i]);
    }
    *staged = at;
    const uint8_t *src_end = NULL;
    for (int i = 0; i < n; i++) {
        if (imgs[i].memory != STRIX_PINNED) continue;
        for (int pl = 0; pl < strix_stage_planes(&imgs[i]); pl++) {
            int pitch;
            size_t span;
            const uint8_t *src = strix_stage_pinned_plane(&imgs[i], pl, &pitch, &span);
            const size_t dev = src == src_end ? at : strix_stage_align(at);
            if (pl) place[i].uv = dev, place[i].uv_pitch = pitch;
            else place[i].y = dev, place[i].pitch = pitch;
            src_end = src + span;
            at = dev + span;
        }
    }
    return at;
}

/* The pinned copies, one at a time: *cursor starts at 0; each call gives
 * the next maximal run (planes contiguous in host memory and at their
 * places) and returns 1, then 0 when there is none left. */
static inline int strix_stage_next_run(const strix_image *imgs, int n, const strix_stage_place *place, int *cursor,
                                       strix_stage_run *run)
{
    run->len = 0;
    for (; *cursor < 2 * n; ++*cursor) { /* plane p of frame i: cursor 2 * i + p */
        const int i = *cursor / 2, pl = *cursor % 2;
        if (imgs[i].memory != STRIX_PINNED || pl >= strix_stage_planes(&imgs[i])) continue;
        int pitch;
        size_t span;
        const uint8_t *src = strix_stage_pinned_plane(&imgs[i], pl, &pitch, &span);
        const size_t dev = pl ? place[i].uv : place[i].y;
        if (!run->len) {
            *run = (strix_stage_run){src, dev, span};
        } else if (src == run->src + run->len && dev == run->dev + run->len) {
            run->len += span;
        } else {
            return 1; /* this plane starts the next run */
        }
    }
    return run->len != 0;
}

#endif
