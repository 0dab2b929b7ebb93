/* image.h — still images in and out (JPEG: libjpeg-turbo, decoded as OpenCV
 * decodes it; other formats: stb_image / stb_image_write), with the limits
 * and error lines a batch job needs. */
#ifndef STRIX_IMAGE_H
#define STRIX_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "strix.h"

/* Refuse images with more pixels than this unless the caller asks for more:
 * a hostile header can claim gigapixels and exhaust memory. */
#define STRIX_IMAGE_MAX_PIXELS ((size_t)1 << 28)

typedef struct strix_owned_image {
    uint8_t *data;  /* dense [height, width, 3] RGB */
    int width, height;
} strix_owned_image;

/* Load a JPEG (libjpeg-turbo: grey, YCbCr, CMYK and YCCK, EXIF orientation
 * applied; the pixels cv2.imread gives) or any other format stb_image reads
 * (PNG, BMP, TGA, GIF's first frame, PSD, HDR/PNM) as 8-bit RGB.  Errors:
 * STRIX_E_IO (missing/unreadable), STRIX_E_IMAGE (empty, corrupt, truncated,
 * 0x0, over max_pixels).  0 = the default limit. */
strix_status strix_image_load(const char *path, size_t max_pixels, strix_owned_image *out,
                              strix_error *err);
/* The same from len bytes in memory (what strix_image_load read); name
 * stands for the file in messages.  buf is only read. */
strix_status strix_image_decode(const char *name, const uint8_t *buf, size_t len, size_t max_pixels,
                                strix_owned_image *out, strix_error *err);
void strix_image_free(strix_owned_image *img);

/* A borrowed view of an owned image. */
strix_image strix_image_view(const strix_owned_image *img);

/* Write RGB pixels as PNG or JPEG (chosen by the extension: .png, .jpg/.jpeg)
 * through a temporary file in the same directory renamed into place, so a
 * failed write never leaves a partial file.  overwrite == 0 refuses an
 * existing path.  Errors: STRIX_E_ARG (unknown extension), STRIX_E_IO. */
strix_status strix_image_write(const char *path, const uint8_t *rgb, int width, int height,
                               int stride, int jpeg_quality, int overwrite, strix_error *err);

#endif
