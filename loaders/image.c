/* image.c — still images in and out: JPEG through libjpeg-turbo, set up as
 * OpenCV's imread (which Ultralytics uses) sets it up, so a JPEG gives
 * Ultralytics' exact pixels; the other formats (PNG, BMP, GIF, TGA, PSD,
 * HDR, PNM) through stb_image; writing through stb_image_write.
 *
 * Loading reads the whole file ourselves (so a missing file, a read error
 * and undecodable bytes get distinct, precise messages), checks the size the
 * header claims before decoding (a hostile header can claim gigapixels),
 * refuses JPEGs that end before their end-of-image marker or whose data
 * libjpeg would have to conceal, decodes to 8-bit RGB and applies the
 * JPEG's EXIF orientation, as cv2.imread does.  Pixels: dense
 * [height, width, 3] uint8 RGB.
 *
 * Writing encodes PNG or JPEG into a temporary file beside the target and
 * renames it into place, so readers never see a partial file.
 */
#include "image.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h> /* after stdio.h: it uses FILE and size_t without including them */
#include <jerror.h>
#include <stb_image.h>
#include <stb_image_write.h>

#include "fileread.h"
#include "outfile.h"
#include "util.h"

/* stb_image takes an int length; files past this cannot be decoded anyway
 * (libjpeg takes an unsigned long). */
#define MAX_FILE_BYTES ((size_t)0x7fffffff)
#define DEFAULT_JPEG_QUALITY 95 /* cv2.imwrite's default, which Ultralytics uses */

/* ------------------------------------------------------------------ JPEG */

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* What stb_image takes for a JPEG: 0xFF, any more fill bytes, then SOI
 * (0xD8).  All of these go to libjpeg, never to stb, so Debian's stb JPEG
 * decoder (which tests/fuzz found writing past its Huffman tables and
 * shifting by 32 on corrupt data) never runs; libjpeg refuses the ones with
 * fill bytes before SOI, as OpenCV does. */
static int stb_would_take_as_jpeg(const uint8_t *buf, size_t len)
{
    size_t pos = 0;
    while (pos < len && buf[pos] == 0xFF) pos++;
    return pos > 0 && pos < len && buf[pos] == 0xD8;
}

/* libjpeg's error manager, made to return instead of exit(): errors and the
 * warnings below longjmp back to jpeg_decode with libjpeg's message code. */
typedef struct jpeg_guard {
    struct jpeg_error_mgr mgr; /* first: libjpeg hands back &mgr as cinfo->err */
    jmp_buf jump;
} jpeg_guard;

static void jpeg_on_error(j_common_ptr c) { longjmp(((jpeg_guard *)(void *)c->err)->jump, 1); }

/* Warnings (level -1; higher levels are traces, never printed here) that
 * mean libjpeg concealed missing or corrupt entropy-coded data (grey or
 * repeated blocks instead of the file's pixels) end the decode as errors:
 * detections on concealed pixels would be garbage, as strix already decided
 * for truncated files, which are the commonest case (JWRN_JPEG_EOF).  The
 * other warnings (extraneous bytes between segments, unknown JFIF revision
 * or Adobe transform code, a bad ICC marker, odd SOS parameters in a
 * sequential file) leave every pixel as the file codes it: they are
 * ignored, as OpenCV does (it only prints them). */
static void jpeg_on_message(j_common_ptr c, int level)
{
    if (level >= 0) return;
    int code = c->err->msg_code;
    if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE ||
        code == JWRN_ARITH_BAD_CODE || code == JWRN_MUST_RESYNC || code == JWRN_BOGUS_PROGRESSION)
        longjmp(((jpeg_guard *)(void *)c->err)->jump, 1);
}

/* Decodes a JPEG to dense RGB with libjpeg-turbo set up as OpenCV's imread
 * (which Ultralytics uses) sets it up, so the pixels are Ultralytics' bit for
 * bit: libjpeg's defaults (accurate integer IDCT, fancy upsampling), RGB out
 * for 1 and 3 components (grey replicated), CMYK out for 4 (YCCK converted
 * by libjpeg) turned into RGB with OpenCV's formula (icvCvt_CMYK2BGR_8u_C4C3R:
 * R = K - (255 - C) * K / 256, as Adobe's inverted CMYK stores it).  Motion-
 * JPEG frames without Huffman tables get the standard ones from libjpeg-turbo
 * itself, as OpenCV gives them.  The size is checked against max_pixels from
 * the header, before anything the size of the image is allocated. */
static strix_status jpeg_decode(const char *path, const uint8_t *buf, size_t len, size_t max_pixels,
                                strix_owned_image *out, strix_error *err)
{
    struct jpeg_decompress_struct d;
    jpeg_guard g;
    uint8_t *volatile px = NULL; /* assigned after setjmp, freed after a longjmp */
    memset(&d, 0, sizeof d); /* jpeg_destroy_decompress is safe even if creating it failed */
    d.err = jpeg_std_error(&g.mgr);
    g.mgr.error_exit = jpeg_on_error;
    g.mgr.emit_message = jpeg_on_message;
    if (setjmp(g.jump)) {
        char msg[JMSG_LENGTH_MAX];
        g.mgr.format_message((j_common_ptr)&d, msg);
        int code = g.mgr.msg_code;
        jpeg_destroy_decompress(&d);
        free(px);
        if (code == JWRN_JPEG_EOF)
            return strix_fail(err, STRIX_E_IMAGE, "%s: truncated JPEG (the data ends before the end-of-image "
                              "marker; copy the file again)", path);
        if (code == JERR_OUT_OF_MEMORY)
            return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory decoding the JPEG (libjpeg: %s)", path, msg);
        return strix_fail(err, STRIX_E_IMAGE, "%s: corrupt JPEG (libjpeg: %s; re-encode it or copy it again)",
                          path, msg);
    }
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, buf, (unsigned long)len);
    jpeg_read_header(&d, TRUE);
    size_t w = d.image_width, h = d.image_height;
    if (w * h > max_pixels) {
        jpeg_destroy_decompress(&d);
        return strix_fail(err, STRIX_E_IMAGE, "%s: image is %zux%zu, more than the limit of %zu pixels "
                          "(downscale it first)", path, w, h, max_pixels);
    }
    int cmyk = d.num_components == 4;
    d.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&d);
    px = malloc(w * h * 3);
    if (!px) {
        jpeg_destroy_decompress(&d);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory decoding a %zux%zu image", path, w, h);
    }
    /* freed with the decoder, after a longjmp too */
    JSAMPARRAY row4 = cmyk ? d.mem->alloc_sarray((j_common_ptr)&d, JPOOL_IMAGE, (JDIMENSION)w * 4, 1) : NULL;
    /* a memory source never suspends: each call returns one row */
    while (d.output_scanline < h) {
        uint8_t *dst = px + (size_t)d.output_scanline * w * 3;
        JSAMPROW row = cmyk ? row4[0] : dst;
        jpeg_read_scanlines(&d, &row, 1);
        for (size_t x = 0; cmyk && x < w; x++) {
            const uint8_t *s = row4[0] + x * 4;
            int k = s[3];
            for (int c = 0; c < 3; c++) dst[x * 3 + c] = (uint8_t)(k - ((255 - s[c]) * k >> 8));
        }
    }
    jpeg_finish_decompress(&d); /* reads on to the end-of-image marker: a file cut there is truncated too */
    jpeg_destroy_decompress(&d);
    out->data = px;
    out->width = (int)w;
    out->height = (int)h;
    return STRIX_OK;
}

/* The size in a PNG's IHDR; 0 when buf is not a PNG with one.  stb_image
 * rejects huge and 0x0 PNGs inside stbi_info with a misleading "unknown image
 * type", so we read the size ourselves to report the real problem. */
static int png_size(const uint8_t *buf, size_t len, uint32_t *w, uint32_t *h)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (len < 24 || memcmp(buf, sig, 8) != 0 || memcmp(buf + 12, "IHDR", 4) != 0) return 0;
    *w = (uint32_t)be16(buf + 16) << 16 | be16(buf + 18);
    *h = (uint32_t)be16(buf + 20) << 16 | be16(buf + 22);
    return 1;
}

/* 1 when buf is a PNG whose first IDAT chunk is empty: Debian's stb_image
 * (2.27) then copies its 0 bytes to NULL + 0, undefined behaviour (found by
 * tests/fuzz/fuzz_image; no encoder writes such a file). */
static int png_empty_first_idat(const uint8_t *buf, size_t len)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (len < 8 || memcmp(buf, sig, 8) != 0) return 0;
    for (size_t pos = 8; pos + 8 <= len;) {
        uint32_t n = (uint32_t)be16(buf + pos) << 16 | be16(buf + pos + 2);
        if (!memcmp(buf + pos + 4, "IDAT", 4)) return n == 0;
        if (!memcmp(buf + pos + 4, "IEND", 4) || n > len - pos - 8) return 0;
        pos += 12 + (size_t)n; /* length, type, data, CRC */
    }
    return 0;
}

/* For a PNG: the first chunk before IEND whose length runs past the end of
 * the data (*claim, *left: its length and the bytes left for it); 0 when
 * there is none or buf is no PNG.  stb_image allocates an IDAT's claimed
 * length before reading it, so a 100-byte file could ask for 4 GB. */
static int png_overlong_chunk(const uint8_t *buf, size_t len, char type[5], uint32_t *claim, size_t *left)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (len < 8 || memcmp(buf, sig, 8) != 0) return 0;
    for (size_t pos = 8; pos + 8 <= len;) {
        uint32_t n = (uint32_t)be16(buf + pos) << 16 | be16(buf + pos + 2);
        if (!memcmp(buf + pos + 4, "IEND", 4)) return 0;
        if (n > len - pos - 8) {
            for (int i = 0; i < 4; i++) {
                uint8_t c = buf[pos + 4 + i];
                type[i] = (char)((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : '?');
            }
            type[4] = 0;
            *claim = n;
            *left = len - pos - 8;
            return 1;
        }
        pos += 12 + (size_t)n; /* length, type, data, CRC */
    }
    return 0;
}

enum { PNM_OK, PNM_OVERFLOW, PNM_GREY16 };

/* For a binary PNM (P5/P6, what stb_image reads), walking the header as stb
 * does (whitespace and '#' comments between width, height and maximum
 * value), the problems Debian's stb_image (2.27) mishandles (both found by
 * tests/fuzz/fuzz_image):
 *  PNM_OVERFLOW: a number above INT_MAX, which overflows stb's signed
 *    parser (undefined behaviour);
 *  PNM_GREY16: a 16-bit greyscale PGM (maximum value above 255), which stb
 *    converts to RGB as if it were 8-bit, reading past its buffer. */
static int pnm_header_problem(const uint8_t *buf, size_t len)
{
    if (len < 2 || buf[0] != 'P' || (buf[1] != '5' && buf[1] != '6')) return PNM_OK;
    size_t pos = 2;
    uint64_t v = 0;
    for (int field = 0; field < 3; field++) {
        for (;;) {
            while (pos < len && buf[pos] && strchr(" \t\n\v\f\r", buf[pos])) pos++;
            if (pos >= len || buf[pos] != '#') break;
            while (pos < len && buf[pos] != '\n' && buf[pos] != '\r') pos++;
        }
        for (v = 0; pos < len && buf[pos] >= '0' && buf[pos] <= '9'; pos++)
            if ((v = v * 10 + (uint64_t)(buf[pos] - '0')) > INT_MAX) return PNM_OVERFLOW;
    }
    return buf[1] == '5' && v > 255 ? PNM_GREY16 : PNM_OK;
}

/* The EXIF orientation (1..8) of a JPEG; 1 when absent or unreadable. */
static int jpeg_exif_orientation(const uint8_t *buf, size_t len)
{
    size_t pos = 2;
    while (pos + 4 <= len && buf[pos] == 0xFF) {
        unsigned m = buf[pos + 1];
        if (m == 0xDA || m == 0xD9) break; /* image data: no EXIF after this */
        size_t seg = be16(buf + pos + 2);
        if (seg < 2 || pos + 2 + seg > len) break;
        const uint8_t *p = buf + pos + 4;
        size_t n = seg - 2;
        if (m == 0xE1 && n >= 14 && memcmp(p, "Exif\0\0", 6) == 0) {
            const uint8_t *t = p + 6; /* TIFF header */
            size_t tn = n - 6;
            int le = t[0] == 'I' && t[1] == 'I';
            if (!le && !(t[0] == 'M' && t[1] == 'M')) return 1;
#define RD16(q) (le ? (unsigned)(q)[0] | (unsigned)(q)[1] << 8 : be16(q))
#define RD32(q) (le ? (uint32_t)(q)[0] | (uint32_t)(q)[1] << 8 | (uint32_t)(q)[2] << 16 | (uint32_t)(q)[3] << 24 \
                    : (uint32_t)(q)[0] << 24 | (uint32_t)(q)[1] << 16 | (uint32_t)(q)[2] << 8 | (uint32_t)(q)[3])
            uint32_t ifd = RD32(t + 4);
            if (ifd > tn || tn - ifd < 2) return 1;
            unsigned count = RD16(t + ifd);
            for (unsigned i = 0; i < count; i++) {
                size_t e = (size_t)ifd + 2 + (size_t)i * 12;
                if (e + 12 > tn) return 1;
                if (RD16(t + e) == 0x0112 && RD16(t + e + 2) == 3) {
                    unsigned v = RD16(t + e + 8);
                    return v >= 1 && v <= 8 ? (int)v : 1;
                }
            }
#undef RD16
#undef RD32
            return 1;
        }
        pos += 2 + seg;
    }
    return 1;
}

/* Apply EXIF orientation o (2..8) to a dense RGB image; returns a new
 * malloc'd buffer and the new size, or NULL when out of memory. */
static uint8_t *orient(const uint8_t *src, int w, int h, int o, int *ow, int *oh)
{
    int swap = o >= 5;
    int nw = swap ? h : w, nh = swap ? w : h;
    uint8_t *dst = malloc((size_t)nw * nh * 3);
    if (!dst) return NULL;
    for (int y = 0; y < nh; y++) {
        for (int x = 0; x < nw; x++) {
            int sx, sy;
            switch (o) {
            case 2: sx = w - 1 - x; sy = y; break;              /* mirror horizontally */
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;      /* rotate 180 */
            case 4: sx = x; sy = h - 1 - y; break;              /* mirror vertically */
            case 5: sx = y; sy = x; break;                      /* transpose */
            case 6: sx = y; sy = h - 1 - x; break;              /* rotate 90 clockwise */
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;      /* transverse */
            default: sx = w - 1 - y; sy = x; break;             /* 8: rotate 90 counter-clockwise */
            }
            memcpy(dst + ((size_t)y * nw + x) * 3, src + ((size_t)sy * w + sx) * 3, 3);
        }
    }
    *ow = nw;
    *oh = nh;
    return dst;
}

/* ------------------------------------------------------------------ load */

/* STRIX_E_IMAGE when len bytes cannot be an image stb decodes, else STRIX_OK. */
static strix_status check_size(const char *path, size_t len, strix_error *err)
{
    if (len == 0)
        return strix_fail(err, STRIX_E_IMAGE, "%s: empty file (0 bytes), not an image (copy it again)", path);
    if (len > MAX_FILE_BYTES)
        return strix_fail(err, STRIX_E_IMAGE, "%s: file is %zu bytes, too large for the image decoder "
                          "(convert it to a smaller JPEG or PNG)", path, len);
    return STRIX_OK;
}

strix_status strix_image_load(const char *path, size_t max_pixels, strix_owned_image *out,
                              strix_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f;
    struct stat st;
    int kind = strix_file_open(path, &f, &st); /* a FIFO is refused at once, not waited on */
    if (kind == STRIX_FILE_UNOPENED)
        return strix_fail(err, STRIX_E_IO, "%s: cannot open: %s (check the path and permissions)",
                          path, strerror(errno));
    if (kind)
        return strix_fail(err, STRIX_E_IO, "%s: %s (give an image file)", path,
                          kind == STRIX_FILE_DIR ? "is a directory" : "is not a regular file");
    size_t len = (size_t)st.st_size;
    strix_status s = check_size(path, len, err);
    if (s) {
        fclose(f);
        return s;
    }
    uint8_t *buf = malloc(len);
    if (!buf) {
        fclose(f);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory reading %zu bytes", path, len);
    }
    size_t got = fread(buf, 1, len, f);
    int rerr = ferror(f);
    fclose(f);
    if (got != len || rerr) {
        free(buf);
        return strix_fail(err, STRIX_E_IO, "%s: read error after %zu of %zu bytes (check the disk or "
                          "whether the file is being written)", path, got, len);
    }
    s = strix_image_decode(path, buf, len, max_pixels, out, err);
    free(buf);
    return s;
}

strix_status strix_image_decode(const char *path, const uint8_t *buf, size_t len, size_t max_pixels,
                                strix_owned_image *out, strix_error *err)
{
    memset(out, 0, sizeof *out);
    if (!max_pixels) max_pixels = STRIX_IMAGE_MAX_PIXELS;
    strix_status s = check_size(path, len, err);
    if (s) return s;

    if (stb_would_take_as_jpeg(buf, len)) {
        s = jpeg_decode(path, buf, len, max_pixels, out, err);
        int orientation = s ? 1 : jpeg_exif_orientation(buf, len);
        if (orientation != 1) {
            int w = out->width, h = out->height;
            uint8_t *o = orient(out->data, w, h, orientation, &out->width, &out->height);
            free(out->data);
            out->data = o;
            if (!o) {
                out->width = out->height = 0;
                return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory rotating a %dx%d image", path, w, h);
            }
        }
        return s;
    }

    uint32_t pw, ph;
    int is_png = png_size(buf, len, &pw, &ph);
    if (is_png && (!pw || !ph)) /* stb calls this "unknown image type" too */
        return strix_fail(err, STRIX_E_IMAGE, "%s: PNG header gives a size of %ux%u: an image needs at least "
                          "1x1 pixel (the file is damaged; export it again)", path, (unsigned)pw, (unsigned)ph);
    if (is_png && (uint64_t)pw * ph > max_pixels) {
        return strix_fail(err, STRIX_E_IMAGE, "%s: image is %ux%u, more than the limit of %zu pixels "
                          "(downscale it first)", path, (unsigned)pw, (unsigned)ph, max_pixels);
    }
    char type[5];
    size_t left;
    if (png_overlong_chunk(buf, len, type, &pw, &left))
        return strix_fail(err, STRIX_E_IMAGE, "%s: not an image stb_image can read (corrupt PNG: a '%s' "
                          "chunk of %u bytes, with %zu bytes left in the file; copy it again)",
                          path, type, (unsigned)pw, left);
    if (png_empty_first_idat(buf, len))
        return strix_fail(err, STRIX_E_IMAGE, "%s: not an image stb_image can read (corrupt PNG: the first "
                          "'IDAT' chunk is empty; export it again)", path);
    int pnm = pnm_header_problem(buf, len);
    if (pnm == PNM_OVERFLOW)
        return strix_fail(err, STRIX_E_IMAGE, "%s: not an image stb_image can read (corrupt PNM header: "
                          "a size or maximum value above %d)", path, INT_MAX);
    if (pnm == PNM_GREY16)
        return strix_fail(err, STRIX_E_IMAGE, "%s: 16-bit greyscale PGM is not supported (convert it to "
                          "8 bits, or to PNG)", path);

    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(buf, (int)len, &w, &h, &comp)) {
        const char *why = stbi_failure_reason();
        return strix_fail(err, STRIX_E_IMAGE, "%s: not an image stb_image can read (%s; JPEG, PNG, BMP, "
                          "TGA, GIF, PSD, HDR and PNM are supported)", path, why ? why : "unknown format");
    }
    if (w <= 0 || h <= 0) {
        return strix_fail(err, STRIX_E_IMAGE, "%s: image has no pixels (%dx%d; the file is damaged)", path, w, h);
    }
    if ((size_t)w * (size_t)h > max_pixels) {
        return strix_fail(err, STRIX_E_IMAGE, "%s: image is %dx%d, more than the limit of %zu pixels "
                          "(downscale it first)", path, w, h, max_pixels);
    }
    int dw = 0, dh = 0;
    uint8_t *px = stbi_load_from_memory(buf, (int)len, &dw, &dh, &comp, 3);
    if (!px) {
        const char *why = stbi_failure_reason();
        if (why && strcmp(why, "outofmem") == 0)
            return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory decoding a %dx%d image", path, w, h);
        return strix_fail(err, STRIX_E_IMAGE, "%s: not an image stb_image can read (%s; the file is "
                          "damaged: re-encode or copy it again)", path, why ? why : "decode failed");
    }
    if (dw != w || dh != h) {
        stbi_image_free(px);
        return strix_fail(err, STRIX_E_IMAGE, "%s: header says %dx%d but the data decodes to %dx%d "
                          "(the file is corrupt)", path, w, h, dw, dh);
    }
    out->data = px;
    out->width = dw;
    out->height = dh;
    return STRIX_OK;
}

/* libstb allocates with the C allocator (it is built without STBI_MALLOC),
 * so pixels from stb, jpeg_decode and orient() are all released with free(). */
void strix_image_free(strix_owned_image *img)
{
    if (!img) return;
    free(img->data);
    img->data = NULL;
    img->width = img->height = 0;
}

strix_image strix_image_view(const strix_owned_image *img)
{
    strix_image v = {.data = img->data, .width = img->width, .height = img->height, .stride = img->width * 3, .format = STRIX_RGB};
    return v;
}

/* ----------------------------------------------------------------- write */

typedef struct sink {
    FILE *f;
    int failed;
} sink;

static void sink_write(void *ctx, void *data, int size)
{
    sink *s = ctx;
    if (!s->failed && size > 0 && fwrite(data, 1, (size_t)size, s->f) != (size_t)size) s->failed = 1;
}

/* 1: PNG, 2: JPEG, 0: neither (by the extension, case-insensitive). */
static int format_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot) return 0;
    if (strcasecmp(dot, ".png") == 0) return 1;
    if (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0) return 2;
    return 0;
}

strix_status strix_image_write(const char *path, const uint8_t *rgb, int width, int height,
                               int stride, int jpeg_quality, int overwrite, strix_error *err)
{
    int fmt = format_of(path);
    if (!fmt)
        return strix_fail(err, STRIX_E_ARG, "%s: unknown image extension (use .png, .jpg or .jpeg)", path);
    if (!rgb || width <= 0 || height <= 0)
        return strix_fail(err, STRIX_E_ARG, "%s: nothing to write (image is %dx%d)", path, width, height);
    if (stride == 0) stride = width * 3;
    if (stride < width * 3)
        return strix_fail(err, STRIX_E_ARG, "%s: row stride %d is smaller than 3 x width %d", path,
                          stride, width);
    if (jpeg_quality <= 0) jpeg_quality = DEFAULT_JPEG_QUALITY;
    if (jpeg_quality > 100) jpeg_quality = 100;

    struct stat st;
    if (!overwrite && lstat(path, &st) == 0)
        return strix_fail(err, STRIX_E_IO, "%s: already exists (remove it or allow overwriting)", path);

    /* stb's JPEG writer takes dense rows only */
    uint8_t *dense = NULL;
    if (fmt == 2 && stride != width * 3) {
        dense = malloc((size_t)width * height * 3);
        if (!dense)
            return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory preparing a %dx%d image", path,
                              width, height);
        for (int y = 0; y < height; y++)
            memcpy(dense + (size_t)y * width * 3, rgb + (size_t)y * stride, (size_t)width * 3);
    }

    char *tmp = NULL;
    FILE *f = strix_temp_open(path, &tmp);
    if (!f) {
        int errnum = errno;
        free(dense);
        return strix_fail(err, STRIX_E_IO, "%s: cannot create a file in its directory: %s (check that "
                          "the directory exists and is writable)", path, strerror(errnum));
    }
    sink s = {f, 0};
    int ok = fmt == 1 ? stbi_write_png_to_func(sink_write, &s, width, height, 3, rgb, stride)
                      : stbi_write_jpg_to_func(sink_write, &s, width, height, 3, dense ? dense : rgb,
                                               jpeg_quality);
    free(dense);
    int errnum = 0;
    if (s.failed || ferror(f)) errnum = errno ? errno : EIO;
    if (fclose(f) != 0 && !errnum) errnum = errno;
    if (!ok || errnum) {
        unlink(tmp);
        free(tmp);
        if (!ok && !errnum)
            return strix_fail(err, STRIX_E_NOMEM, "%s: the image encoder failed (out of memory?)", path);
        return strix_fail(err, STRIX_E_IO, "%s: write failed: %s (check free disk space)", path,
                          strerror(errnum));
    }
    errnum = strix_temp_publish(tmp, path, overwrite) ? errno : 0;
    free(tmp);
    if (errnum == EEXIST)
        return strix_fail(err, STRIX_E_IO, "%s: already exists (remove it or allow overwriting)", path);
    if (errnum)
        return strix_fail(err, STRIX_E_IO, "%s: cannot move the finished file into place: %s", path,
                          strerror(errnum));
    return STRIX_OK;
}
