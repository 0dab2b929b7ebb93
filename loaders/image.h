/* image.h — still images out (PNG, JPEG through stb_image_write), for the
 * tools; reading them (strix_image_load, ...) is public API, in strix.h. */
#ifndef STRIX_IMAGE_H
#define STRIX_IMAGE_H

#include <stdint.h>
#include "strix.h"

/* Write RGB pixels as PNG or JPEG (chosen by the extension: .png, .jpg/.jpeg)
 * through a temporary file in the same directory renamed into place, so a
 * failed write never leaves a partial file.  overwrite == 0 refuses an
 * existing path.  Errors: STRIX_E_ARG (unknown extension), STRIX_E_IO. */
strix_status strix_image_write(const char *path, const uint8_t *rgb, int width, int height,
                               int stride, int jpeg_quality, int overwrite, strix_error *err);

#endif
