/* fuzz_image.c — libFuzzer target: image bytes through strix_image_decode
 * (loaders/image.c: JPEGs through libjpeg-turbo, Debian's uninstrumented
 * shared library, and our EXIF parsing; the other formats through our
 * pre-checks and stb_image's decoders, built from source with the same
 * sanitizers by stb_impl.c). */
#include <stdlib.h>

#include "image.h"

/* Pixel limit for the fuzz run: big enough for every decoder path, small
 * enough that a hostile header cannot spend seconds per input. */
#define FUZZ_MAX_PIXELS ((size_t)1 << 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strix_owned_image img;
    strix_error err;
    if (strix_image_decode("fuzz", data, size, FUZZ_MAX_PIXELS, &img, &err) == STRIX_OK) {
        size_t n = (size_t)img.width * (size_t)img.height * 3;
        volatile uint8_t last = img.data[n - 1]; /* ASan: the buffer holds every pixel */
        (void)last;
        strix_image_free(&img);
    }
    return 0;
}
