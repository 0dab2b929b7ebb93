/* stb_impl.c — stb_image and stb_image_write compiled from Debian's headers
 * into the fuzz targets, so that the decoders run under ASan + UBSan and
 * give libFuzzer coverage (the packaged libstb is neither).  Same options as
 * Debian's libstb: the C allocator, every format. */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>
