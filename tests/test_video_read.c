/* test_video_read.c — the reader's NV12 frames (loaders/video_read.c,
 * strix_video_read_options.nv12) on clips made here with the ffmpeg CLI
 * (lavfi testsrc2: colour bars, gradients, moving text), 4:2:0 and 4:2:2,
 * BT.601 and BT.709, limited and full range, odd sizes, rotated:
 *   - NV12 and RGB frames of one read describe the same picture: the NV12
 *     planes converted by the engine (strix_nv12_row_rgb, what the
 *     letterbox does) against swscale's RGB of the same frame stay within
 *     a bound, measured here: the two
 *     differ in rounding and in chroma upsampling (swscale interpolates,
 *     strix takes the 2x2 block's chroma);
 *   - 4:2:0 planes are the decoder's own bytes: equal to ffmpeg's raw
 *     NV12 of the clip;
 *   - rgb 0 leaves f->rgb unset; sizes, strides and orientation;
 *   - NVDEC (with a GPU): frames in device memory, their download equal to
 *     the CPU decoder's pixels;
 *   - a pixel allocator (strix_video_read_options.pixel_alloc, what infer
 *     gives it for pinned frames): rgb and nv12 are its blocks, one each
 *     for the whole clip, the pixels those of a malloc reader, the images
 *     of its memory kind; every block back through its pixel_free; a
 *     failing allocator fails the read with its own message; pixel_alloc
 *     without pixel_free is refused;
 *   - the rows callback (strix_video_read_options.rows): bands in order
 *     covering each frame once, each band's rows already final when it is
 *     called, one call for a turned frame, and a failing callback fails
 *     the read with its message;
 *   - a FIFO no one writes: the open waits for a writer, asking the
 *     interrupt callback at least every 100 ms, and fails with STRIX_E_IO
 *     "interrupted while opening" once it says stop (its open(2) used to
 *     block for good).
 * SKIPs every test but the FIFO's when ffmpeg is missing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "letterbox.h"
#include "testlib.h"
#include "video.h"

static char g_dir[64];

/* |strix - swscale| over every RGB channel of a frame of testsrc2's hard
 * colour edges: the mean's bound, and the max's for 4:2:0 input (rounding:
 * measured 3).  From 4:2:2 the NV12 planes lose half the vertical chroma
 * resolution that swscale's RGB keeps, so single pixels at colour edges
 * differ by what the edge is worth (measured 84); the mean still bounds it. */
#define MEAN_DIFF 1.5
#define MAX_DIFF_420 6

typedef struct clip {
    const char *name, *filter, *opts; /* lavfi size/format chain and output options */
    int w, h;                         /* delivered size */
    int max_diff;                     /* bound of the max difference */
    double mean_diff;                 /* bound of the mean difference */
    int raw420;                       /* 4:2:0: the planes must be the decoder's bytes */
    strix_colorspace cs;
    int full;
} clip;

static int make(const clip *c, char *path, size_t n)
{
    if (system("ffmpeg -version >/dev/null 2>&1") != 0) {
        tl_skip("ffmpeg is not installed (sh tools/deps.sh)");
        return 0;
    }
    snprintf(path, n, "%s/%s", g_dir, c->name);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -v error -nostdin -y -f lavfi -i 'testsrc2=d=0.4:r=25,%s' -c:v libx264 -preset ultrafast %s '%s'", /* a later -c:v wins */
             c->filter, c->opts, path);
    if (system(cmd) != 0) {
        tl_fail("ffmpeg could not make %s (%s)", c->name, cmd);
        return 0;
    }
    return 1;
}

/* base remuxed as g_dir/name with a 90-degree display matrix (the rotate
 * tag, FFmpeg 5; else -display_rotation, 6 on): 1, or 0 (test failed). */
static int make_rotated(const char *base, const char *name, char *path, size_t n)
{
    char cmd[768];
    snprintf(path, n, "%s/%s", g_dir, name);
    snprintf(cmd, sizeof cmd, "ffmpeg -v error -nostdin -y -i '%s' -c copy -metadata:s:v:0 rotate=90 '%s' || "
             "ffmpeg -v error -nostdin -y -display_rotation:v:0 -90 -i '%s' -c copy '%s'", base, path, base, path);
    if (system(cmd) == 0) return 1;
    tl_fail("ffmpeg could not tag %s with a rotation", base);
    return 0;
}

/* A reader with NV12 frames (and RGB ones unless rgb is 0), decoding with
 * NVDEC on device nvdec (-1: on the CPU). */
static strix_status open_nv12(strix_video_reader **r, const char *path, int rgb, int nvdec, strix_error *e)
{
    strix_video_read_options o;
    strix_video_read_options_init(&o);
    o.nv12 = 1;
    o.rgb = rgb;
    o.nvdec = nvdec;
    return strix_video_open(r, path, &o, e);
}

/* The first frame's NV12 planes against ffmpeg's own NV12 of the clip (for
 * 4:2:0 input a plain interleave of the decoder's planes). */
static void check_planes(const clip *c, const char *path)
{
    char raw[192], cmd[512];
    snprintf(raw, sizeof raw, "%s.nv12", path);
    snprintf(cmd, sizeof cmd, "ffmpeg -v error -nostdin -y -i '%s' -frames:v 1 -pix_fmt nv12 -f rawvideo '%s'", path, raw);
    TL_CHECK(system(cmd) == 0, "%s: ffmpeg could not write raw NV12", c->name);
    const int cw = (c->w + 1) / 2, ch = (c->h + 1) / 2;
    const size_t ybytes = (size_t)c->w * c->h, bytes = ybytes + (size_t)2 * cw * ch;
    uint8_t *want = malloc(bytes + 1);
    FILE *fp = fopen(raw, "rb");
    size_t got = fp ? fread(want, 1, bytes + 1, fp) : 0;
    if (fp) fclose(fp);
    strix_video_reader *r;
    strix_video_frame f = {0};
    strix_error e;
    int ok = got == bytes && open_nv12(&r, path, 0, -1, &e) == STRIX_OK;
    if (ok) {
        ok = strix_video_read(r, &f, &e) == 1;
        strix_video_close(r);
    }
    int same = ok;
    for (int y = 0; same && y < c->h + ch; y++) {
        const int len = y < c->h ? c->w : 2 * cw;
        const uint8_t *w = want + (y < c->h ? (size_t)y * c->w : ybytes + (size_t)(y - c->h) * 2 * cw);
        same = !memcmp(f.nv12 + (size_t)y * f.nv12_stride, w, (size_t)len);
        if (!same) tl_fail("%s: NV12 row %d (of Y then U,V) differs from ffmpeg's", c->name, y);
    }
    free(want);
    strix_video_frame_free(&f);
    TL_CHECK(ok, "%s: raw NV12 of %zu bytes (want %zu), or reading the clip failed", c->name, got, bytes);
}

static void check_clip(const clip *c)
{
    char path[160];
    if (!make(c, path, sizeof path)) return;
    strix_video_reader *r;
    strix_error e;
    TL_CHECK(open_nv12(&r, path, 1, -1, &e) == STRIX_OK, "%s: %s", c->name, e.message);
    strix_video_frame f = {0};
    uint8_t *row = malloc((size_t)c->w * 3);
    double sum = 0, n = 0;
    int maxd = 0, frames = 0, rc;
    while ((rc = strix_video_read(r, &f, &e)) == 1 && !tl_g.failed) {
        frames++;
        strix_image im = strix_video_frame_image(&f, 1);
        TL_CHECK(f.width == c->w && f.height == c->h && f.rgb && f.nv12 && f.nv12_stride >= 2 * ((c->w + 1) / 2),
                 "%s: frame %dx%d (want %dx%d), stride %d", c->name, f.width, f.height, c->w, c->h, f.nv12_stride);
        TL_CHECK(f.colorspace == c->cs && f.full_range == c->full, "%s: tagged %s %s range, want %s %s", c->name,
                 f.colorspace == STRIX_BT709 ? "BT.709" : "BT.601", f.full_range ? "full" : "limited",
                 c->cs == STRIX_BT709 ? "BT.709" : "BT.601", c->full ? "full" : "limited");
        strix_yuv_coeffs k;
        strix_yuv_coeffs_init(&k, f.colorspace, f.full_range);
        for (int y = 0; y < f.height; y++) {
            strix_nv12_row_rgb(row, &im, &k, y);
            const uint8_t *ref = f.rgb + (size_t)y * f.stride;
            for (int i = 0; i < f.width * 3; i++) {
                int d = abs(row[i] - ref[i]);
                sum += d;
                if (d > maxd) maxd = d;
            }
            n += f.width * 3;
        }
    }
    TL_CHECK(rc == 0, "%s: read failed: %s", c->name, e.message);
    printf("    %s: %d frames, |strix NV12 -> RGB - swscale RGB| mean %.3f max %d\n", c->name, frames, sum / n, maxd);
    TL_CHECK(frames == 10, "%s: %d frames, want 10", c->name, frames);
    TL_CHECK(sum / n <= c->mean_diff && maxd <= c->max_diff, "%s: mean difference %.3f (bound %g), max %d (bound %d)",
             c->name, sum / n, c->mean_diff, maxd, c->max_diff);
    if (c->raw420) check_planes(c, path);
    free(row);
    strix_video_frame_free(&f);
    strix_video_close(r);
}

static void nv12_bt601_limited(void)
{
    const clip c = {"601.mp4", "scale=320:240,format=yuv420p", "-colorspace smpte170m -color_range tv", 320, 240,
                    MAX_DIFF_420, MEAN_DIFF, 1, STRIX_BT601, 0};
    check_clip(&c);
}

static void nv12_bt709_odd_size(void)
{
    /* 4:2:0 of an odd size (VP9: H.264 needs even sizes): the last chroma
     * column and row cover one pixel.  swscale takes its generic path for
     * odd sizes and interpolates the chroma, so its RGB differs from the
     * 2x2 block's chroma at every colour edge (measured mean 9.9); the
     * planes themselves are checked exactly. */
    const clip c = {"709odd.mkv", "scale=161:121,format=yuv420p", "-c:v libvpx-vp9 -deadline realtime -colorspace bt709 -color_range tv", 161,
                    121, 255, 16, 1, STRIX_BT709, 0};
    check_clip(&c);
}

static void nv12_full_range(void)
{
    /* (not compared with ffmpeg's raw NV12: ffmpeg squeezes it to limited range) */
    const clip c = {"full.mp4", "scale=320:240,format=yuvj420p", "-color_range pc", 320, 240, MAX_DIFF_420, MEAN_DIFF,
                    0, STRIX_BT601, 1};
    check_clip(&c);
}

static void nv12_from_422(void)
{
    /* not 4:2:0: through swscale to limited-range NV12 */
    const clip c = {"422.mp4", "scale=320:240,format=yuv422p", "-colorspace bt709", 320, 240, 255, MEAN_DIFF, 0,
                    STRIX_BT709, 0};
    check_clip(&c);
}

static void nv12_rotated(void)
{
    /* a 90-degree display matrix: planes turned like the RGB picture */
    char base[160], path[160];
    const clip c = {"rot-src.mp4", "scale=160:96,format=yuv420p", "", 160, 96, MAX_DIFF_420, MEAN_DIFF, 1,
                    STRIX_BT601, 0};
    if (!make(&c, base, sizeof base)) return;
    if (!make_rotated(base, "rot.mp4", path, sizeof path)) return;
    strix_video_reader *r;
    strix_error e;
    TL_CHECK(open_nv12(&r, path, 1, -1, &e) == STRIX_OK, "rot.mp4: %s", e.message);
    TL_CHECK(strix_video_reader_info(r)->rotation != 0, "rot.mp4: no rotation read");
    strix_video_frame f = {0};
    TL_CHECK(strix_video_read(r, &f, &e) == 1, "rot.mp4: %s", e.message);
    const strix_video_info *in = strix_video_reader_info(r);
    TL_CHECK(f.width == in->width && f.height == in->height && f.width == in->coded_height,
             "rot.mp4: frame %dx%d, info %dx%d coded %dx%d", f.width, f.height, in->width, in->height,
             in->coded_width, in->coded_height);
    strix_image im = strix_video_frame_image(&f, 1);
    strix_yuv_coeffs k;
    strix_yuv_coeffs_init(&k, f.colorspace, f.full_range);
    uint8_t *row = malloc((size_t)f.width * 3);
    double sum = 0;
    for (int y = 0; y < f.height; y++) {
        strix_nv12_row_rgb(row, &im, &k, y);
        for (int i = 0; i < f.width * 3; i++) sum += abs(row[i] - f.rgb[(size_t)y * f.stride + i]);
    }
    double mean = sum / ((double)f.width * f.height * 3);
    printf("    rot.mp4 (%d degrees): mean |NV12 - RGB| %.3f\n", in->rotation, mean);
    TL_CHECK(mean <= MEAN_DIFF, "rot.mp4: NV12 and RGB frames differ by %.3f on average: not turned alike", mean);
    free(row);
    strix_video_frame_free(&f);
    strix_video_close(r);
}

static void nv12_only(void)
{
    const clip c = {"only.mp4", "scale=64:48,format=yuv420p", "", 64, 48, MAX_DIFF_420, MEAN_DIFF, 1, STRIX_BT601,
                    0};
    char path[160];
    if (!make(&c, path, sizeof path)) return;
    strix_video_reader *r;
    strix_error e;
    TL_CHECK(open_nv12(&r, path, 0, -1, &e) == STRIX_OK, "only.mp4: %s", e.message);
    strix_video_frame f = {0};
    TL_CHECK(strix_video_read(r, &f, &e) == 1, "only.mp4: %s", e.message);
    TL_CHECK(!f.rgb && f.nv12 && f.width == 64 && f.height == 48, "only.mp4: rgb %p nv12 %p %dx%d", (void *)f.rgb,
             (void *)f.nv12, f.width, f.height);
    strix_video_frame_free(&f);
    strix_video_close(r);
}

/* NVDEC (FFmpeg's CUDA hwaccel): H.264 decoding is bit-exact, so the RGB
 * that a device frame is downloaded to equals the CPU decoder's byte for
 * byte, and every frame is handed out in device memory.  SKIPs where FFmpeg
 * or the machine has no NVDEC, saying which. */
/* What the rows callback saw of one frame: the bands, and a copy of the
 * rows when each was called. */
typedef struct rows_seen {
    int bands, next, bad, fail;
    uint8_t *copy; /* [height][width * 3] */
    size_t cap;
} rows_seen;

static int rows_cb(void *ctx, const strix_video_frame *f, int y0, int y1, strix_error *err)
{
    rows_seen *s = ctx;
    if (s->fail) {
        snprintf(err->message, sizeof err->message, "the rows callback refused rows %d..%d", y0, y1);
        err->status = STRIX_E_IO;
        return -1;
    }
    size_t need = (size_t)f->height * (size_t)f->width * 3;
    if (y0 == 0) {
        s->bands = s->next = 0;
        if (s->cap < need) {
            free(s->copy);
            s->cap = (s->copy = malloc(need)) ? need : 0;
        }
    }
    if (y0 != s->next || y1 <= y0 || y1 > f->height || !s->copy) s->bad++;
    else
        for (int y = y0; y < y1; y++)
            memcpy(s->copy + (size_t)y * f->width * 3, f->rgb + (size_t)y * f->stride, (size_t)f->width * 3);
    s->next = y1;
    s->bands++;
    return 0;
}

/* Read path with the rows callback beside a plain reader: every frame's
 * bands cover it once, in order (more than one when the frame keeps its
 * size and is taller than a band; one when turned), the rows as they were
 * at each call are the final frame's and the plain reader's. */
static void rows_on(const char *path, int turned)
{
    rows_seen seen = {0};
    strix_video_read_options o;
    strix_video_read_options_init(&o);
    o.rows = rows_cb;
    o.rows_ctx = &seen;
    strix_video_reader *ra, *rp;
    strix_error e;
    TL_CHECK(strix_video_open(&ra, path, &o, &e) == STRIX_OK && open_nv12(&rp, path, 1, -1, &e) == STRIX_OK, "%s: %s",
             path, e.message);
    if (tl_g.failed) return;
    strix_video_frame fa = {0}, fp = {0};
    int frames = 0;
    while (!tl_g.failed && strix_video_read(ra, &fa, &e) == 1 && strix_video_read(rp, &fp, &e) == 1) {
        frames++;
        int want_one = turned || fa.height <= STRIX_VIDEO_ROWS_BAND;
        TL_CHECK(!seen.bad && seen.next == fa.height && (want_one ? seen.bands == 1 : seen.bands > 1),
                 "%s frame %d (%dx%d): %d bands, %d out of order, ending at row %d", path, frames, fa.width, fa.height,
                 seen.bands, seen.bad, seen.next);
        for (int y = 0; y < fa.height && !tl_g.failed; y++) {
            TL_CHECK(!memcmp(seen.copy + (size_t)y * fa.width * 3, fa.rgb + (size_t)y * fa.stride, (size_t)fa.width * 3),
                     "%s frame %d row %d: not final when the callback had it", path, frames, y);
            TL_CHECK(!memcmp(fa.rgb + (size_t)y * fa.stride, fp.rgb + (size_t)y * fp.stride, (size_t)fa.width * 3),
                     "%s frame %d row %d: not the plain reader's", path, frames, y);
        }
    }
    TL_CHECK(frames == 10, "%s: %d frames read (%s)", path, frames, e.message);
    strix_video_frame_free(&fa);
    strix_video_frame_free(&fp);
    strix_video_close(ra);
    strix_video_close(rp);
    /* a failing callback fails the read with its message */
    seen.fail = 1;
    TL_CHECK(strix_video_open(&ra, path, &o, &e) == STRIX_OK, "%s: %s", path, e.message);
    strix_video_frame ff = {0};
    int r = strix_video_read(ra, &ff, &e);
    TL_CHECK(r == -1 && strstr(e.message, "the rows callback refused"), "%s: a refusing callback: read %d: %s", path, r,
             e.message);
    strix_video_frame_free(&ff);
    strix_video_close(ra);
    free(seen.copy);
}

static void rows_callback(void)
{
    const clip even = {"rows.mp4", "scale=98:66,format=yuv420p", "", 98, 66, MAX_DIFF_420, MEAN_DIFF, 1, STRIX_BT601, 0};
    const clip odd = {"rows-odd.mp4", "scale=97:75,format=yuv444p", "-pix_fmt yuv444p", 97, 75, MAX_DIFF_420, MEAN_DIFF,
                      0, STRIX_BT601, 0};
    char path[160], base[160];
    if (!make(&even, path, sizeof path)) return;
    rows_on(path, 0);
    if (!make(&odd, path, sizeof path)) return;
    rows_on(path, 0);
    const clip c = {"rows-rot-src.mp4", "scale=160:96,format=yuv420p", "", 160, 96, MAX_DIFF_420, MEAN_DIFF, 1,
                    STRIX_BT601, 0};
    if (!make(&c, base, sizeof base)) return;
    if (make_rotated(base, "rows-rot.mp4", path, sizeof path)) rows_on(path, 1);
}

static void nvdec_matches_cpu(void)
{
    const clip c = {"nvdec.mp4", "scale=320:240,format=yuv420p", "", 320, 240, MAX_DIFF_420, MEAN_DIFF, 1,
                    STRIX_BT601, 0};
    char path[160];
    if (!make(&c, path, sizeof path)) return;
    strix_video_reader *hw, *sw;
    strix_error e;
    strix_status st = open_nv12(&hw, path, 1, 0, &e);
    if (st == STRIX_E_DEVICE || st == STRIX_E_UNSUPPORTED) {
        TL_CHECK(strstr(e.message, "NVDEC") && !strchr(e.message, '\n'), "unclear error: %s", e.message);
        tl_skip("no NVDEC here: %s", e.message);
        return;
    }
    TL_CHECK(st == STRIX_OK, "nvdec.mp4: %s", e.message);
    TL_CHECK(open_nv12(&sw, path, 1, -1, &e) == STRIX_OK, "nvdec.mp4: %s", e.message);
    strix_video_frame fh = {0}, fs = {0};
    int frames = 0, rh, rs;
    while ((rh = strix_video_read(hw, &fh, &e)) == 1 && (rs = strix_video_read(sw, &fs, &e)) == 1 && !tl_g.failed) {
        frames++;
        TL_CHECK(fh.device.data && fh.device.memory == STRIX_DEVICE && fh.device.format == STRIX_NV12 &&
                 strix_video_frame_image(&fh, 1).data == fh.device.data, "frame %d not in device memory", frames);
        int same = 1;
        for (int y = 0; y < fh.height && same; y++)
            same = !memcmp(fh.rgb + (size_t)y * fh.stride, fs.rgb + (size_t)y * fs.stride, (size_t)fh.width * 3);
        TL_CHECK(same, "frame %d: NVDEC's RGB differs from the CPU decoder's", frames);
    }
    strix_video_read_stats stats;
    strix_video_reader_stats(hw, &stats);
    TL_CHECK(frames == 10 && stats.device_frames == 10, "%d frames compared, %ld in device memory, want 10", frames,
             stats.device_frames);
    strix_video_frame_free(&fh);
    strix_video_frame_free(&fs);
    strix_video_close(hw);
    strix_video_close(sw);
}

/* A test allocator: blocks it handed out (live until freed), poisoned
 * when new so that a frame not written into shows. */
typedef struct test_alloc {
    void *block[8];
    size_t bytes[8];
    int allocs, frees, refuse;
} test_alloc;

static strix_status ta_alloc(void *ctx, size_t bytes, void **out, strix_error *err)
{
    test_alloc *a = ctx;
    if (a->refuse || a->allocs == 8 || !(*out = malloc(bytes))) {
        err->status = STRIX_E_NOMEM;
        snprintf(err->message, sizeof err->message, "the test allocator refused %zu bytes", bytes);
        return STRIX_E_NOMEM;
    }
    memset(*out, 0xCD, bytes);
    a->block[a->allocs] = *out;
    a->bytes[a->allocs++] = bytes;
    return STRIX_OK;
}

static void ta_free(void *ctx, void *p)
{
    test_alloc *a = ctx;
    for (int i = 0; i < a->allocs; i++)
        if (a->block[i] == p) {
            a->block[i] = NULL;
            a->frees++;
            free(p);
            return;
        }
    tl_fail("pixel_free of %p, which the allocator did not give", p);
}

static int ta_holds(const test_alloc *a, const uint8_t *p)
{
    for (int i = 0; i < a->allocs; i++)
        if (a->block[i] == p) return 1;
    return 0;
}

static void pixel_allocator(void)
{
    const clip c = {"alloc.mp4", "scale=98:66,format=yuv420p", "", 98, 66, MAX_DIFF_420, MEAN_DIFF, 1, STRIX_BT601, 0};
    char path[160];
    if (!make(&c, path, sizeof path)) return;
    test_alloc a;
    memset(&a, 0, sizeof a);
    strix_video_read_options o;
    strix_video_read_options_init(&o);
    o.nv12 = 1;
    o.pixel_alloc = ta_alloc;
    o.pixel_free = ta_free;
    o.pixel_ctx = &a;
    o.pixel_memory = STRIX_PINNED;
    strix_video_reader *ra, *rm;
    strix_error e;
    TL_CHECK(strix_video_open(&ra, path, &o, &e) == STRIX_OK, "alloc.mp4: %s", e.message);
    TL_CHECK(open_nv12(&rm, path, 1, -1, &e) == STRIX_OK, "alloc.mp4: %s", e.message);
    strix_video_frame fa = {0}, fm = {0};
    int frames = 0;
    while (!tl_g.failed && strix_video_read(ra, &fa, &e) == 1 && strix_video_read(rm, &fm, &e) == 1) {
        frames++;
        const strix_image ia = strix_video_frame_image(&fa, 0), na = strix_video_frame_image(&fa, 1);
        const strix_image im = strix_video_frame_image(&fm, 0), nm = strix_video_frame_image(&fm, 1);
        TL_CHECK(ta_holds(&a, fa.rgb) && ta_holds(&a, fa.nv12) && a.allocs == 2,
                 "frame %d: rgb %p, nv12 %p not the allocator's, or %d allocations", frames, (void *)fa.rgb,
                 (void *)fa.nv12, a.allocs);
        TL_CHECK(ia.memory == STRIX_PINNED && na.memory == STRIX_PINNED && im.memory == STRIX_HOST &&
                 nm.memory == STRIX_HOST, "frame %d: memory kinds %d %d (malloc reader %d %d)", frames, ia.memory,
                 na.memory, im.memory, nm.memory);
        TL_CHECK(fa.stride == fm.stride && fa.nv12_stride == fm.nv12_stride, "frame %d: strides differ", frames);
        for (int y = 0; y < fa.height; y++)
            TL_CHECK(!memcmp(fa.rgb + (size_t)y * fa.stride, fm.rgb + (size_t)y * fm.stride, (size_t)fa.width * 3),
                     "frame %d: RGB row %d differs from the malloc reader's", frames, y);
        for (int y = 0; y < fa.height + (fa.height + 1) / 2; y++)
            TL_CHECK(!memcmp(fa.nv12 + (size_t)y * fa.nv12_stride, fm.nv12 + (size_t)y * fm.nv12_stride,
                             (size_t)fa.width), "frame %d: NV12 row %d differs from the malloc reader's", frames, y);
    }
    TL_CHECK(!tl_g.failed && frames == 10, "%d frames read (%s)", frames, e.message);
    /* the same frame struct read into by the malloc reader: the blocks go back first */
    strix_video_close(rm);
    TL_CHECK(open_nv12(&rm, path, 1, -1, &e) == STRIX_OK, "alloc.mp4: %s", e.message);
    TL_CHECK(strix_video_read(rm, &fa, &e) == 1, "alloc.mp4: %s", e.message);
    TL_CHECK(a.frees == 2 && !ta_holds(&a, fa.rgb) && strix_video_frame_image(&fa, 0).memory == STRIX_HOST,
             "a malloc reader into the allocator's frame: %d of 2 blocks freed, memory %d", a.frees,
             strix_video_frame_image(&fa, 0).memory);
    strix_video_frame_free(&fa);
    strix_video_frame_free(&fm);
    strix_video_close(rm);
    strix_video_close(ra);
    /* a failing allocator: the read fails with its message */
    a.refuse = 1;
    TL_CHECK(strix_video_open(&ra, path, &o, &e) == STRIX_OK, "alloc.mp4: %s", e.message);
    strix_video_frame ff = {0};
    int r = strix_video_read(ra, &ff, &e);
    strix_video_frame_free(&ff);
    strix_video_close(ra);
    TL_CHECK(r == -1 && e.status == STRIX_E_NOMEM && strstr(e.message, "test allocator refused"),
             "a refusing allocator: read %d, status %d: %s", r, e.status, e.message);
    o.pixel_free = NULL;
    TL_CHECK(strix_video_open(&ra, path, &o, &e) == STRIX_E_ARG && strstr(e.message, "pixel_free"),
             "pixel_alloc without pixel_free: %s", e.message);
}

/* Read every frame of path; the stats after the end, 1 (0: test failed). */
static int read_all(const char *path, strix_video_read_stats *rs)
{
    strix_video_reader *r;
    strix_error e;
    if (strix_video_open(&r, path, NULL, &e) != STRIX_OK) {
        tl_fail("%s: %s", path, e.message);
        return 0;
    }
    strix_video_frame f = {0};
    int rc;
    while ((rc = strix_video_read(r, &f, &e)) == 1) {}
    strix_video_reader_stats(r, rs);
    strix_video_frame_free(&f);
    strix_video_close(r);
    if (rc != 0) tl_fail("%s: %s", path, e.message);
    return rc == 0;
}

/* Damage FFmpeg's H.264 decoder only logs: 26 frames, one slice each, IDR
 * frames 0 and 25, the last one's slice_type turned from 7 (I, ue code
 * 0001000 after first_mb_in_slice's "1": the byte 0x88) to 8 (SI: 0x89).
 * FFmpeg logs "A non-intra slice in an IDR NAL unit" and
 * "decode_slice_header error" and drops the frame, flagging nothing; the
 * reader counts the errors and the frame lost.  The clean clip: none. */
static void decoder_errors(void)
{
    if (system("ffmpeg -version >/dev/null 2>&1") != 0) {
        tl_skip("ffmpeg is not installed (sh tools/deps.sh)");
        return;
    }
    char raw[160], mp4[2][192], cmd[640];
    snprintf(raw, sizeof raw, "%s/idr.h264", g_dir);
    snprintf(cmd, sizeof cmd, "ffmpeg -v error -nostdin -y -f lavfi -i 'testsrc2=r=25' -frames:v 26 -c:v libx264 "
             "-preset ultrafast -g 25 -bf 0 -f h264 '%s'", raw);
    TL_CHECK(system(cmd) == 0, "ffmpeg could not make %s", raw);
    FILE *fp = fopen(raw, "rb");
    TL_CHECK(fp, "cannot open %s", raw);
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    TL_CHECK(n > 0 && n < sizeof buf, "%s: %zu bytes", raw, n);
    long idr[2] = {-1, -1};
    int k = 0;
    for (size_t i = 0; i + 4 < n && k < 2; i++)
        if (buf[i] == 0 && buf[i + 1] == 0 && buf[i + 2] == 1 && buf[i + 3] == 0x65) idr[k++] = (long)i + 4;
    TL_CHECK(k == 2 && buf[idr[1]] == 0x88, "%s: no second IDR slice of type 7 (%d IDR slices)", raw, k);
    for (int d = 0; d < 2; d++) {
        snprintf(mp4[d], sizeof mp4[d], "%s/%s.mp4", g_dir, d ? "damaged" : "clean");
        snprintf(cmd, sizeof cmd, "ffmpeg -v error -nostdin -y -r 25 -f h264 -i '%s' -c copy '%s'", raw, mp4[d]);
        TL_CHECK(system(cmd) == 0, "ffmpeg could not mux %s", mp4[d]);
        buf[idr[1]] = 0x89; /* the damaged file is written next */
        fp = fopen(raw, "wb");
        TL_CHECK(fp && fwrite(buf, 1, n, fp) == n && fclose(fp) == 0, "cannot rewrite %s", raw);
    }
    strix_video_read_stats rs;
    if (!read_all(mp4[0], &rs)) return;
    TL_CHECK(rs.frames == 26 && rs.decode_errors == 0 && rs.frames_lost == 0 && !rs.decoder_error[0],
             "clean clip: %ld frames, %ld decoder errors, %ld lost, '%s'", rs.frames, rs.decode_errors,
             rs.frames_lost, rs.decoder_error);
    if (!read_all(mp4[1], &rs)) return;
    TL_CHECK(rs.frames == 25 && rs.decode_errors >= 2 && rs.frames_lost == 1 &&
             !strcmp(rs.decoder_error, "h264: A non-intra slice in an IDR NAL unit"),
             "damaged clip: %ld frames, %ld decoder errors, %ld lost, '%s'", rs.frames, rs.decode_errors,
             rs.frames_lost, rs.decoder_error);
}

/* The interrupt callback of fifo_interrupted: stop from the 4th call on. */
static int stop_after_three(void *ctx)
{
    int *calls = ctx;
    return ++*calls > 3;
}

static void fifo_interrupted(void)
{
    char path[96];
    snprintf(path, sizeof path, "%s/nobody.mp4", g_dir);
    TL_CHECK(mkfifo(path, 0600) == 0, "cannot make the FIFO %s", path);
    strix_video_read_options o;
    strix_video_read_options_init(&o);
    int calls = 0;
    o.interrupt = stop_after_three;
    o.interrupt_ctx = &calls;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    strix_video_reader *r = NULL;
    strix_error e;
    strix_status st = strix_video_open(&r, path, &o, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    strix_video_close(r);
    unlink(path);
    TL_CHECK(st == STRIX_E_IO && strstr(e.message, "nobody.mp4: interrupted while opening"),
             "status %s, '%s'", strix_status_name(st), st ? e.message : "opened");
    TL_CHECK(s < 2.0 && calls >= 4, "stopped after %.2f s and %d interrupt calls (want < 2 s, >= 4 calls)", s,
             calls);
}

int main(int argc, char **argv)
{
    tl_init();
    strix_video_log_level(0);
    snprintf(g_dir, sizeof g_dir, "/tmp/strix_vread_XXXXXX");
    if (!mkdtemp(g_dir)) {
        printf("FAIL test_video_read: cannot make a temporary directory\n");
        return 1;
    }
    TL_RUN(nv12_bt601_limited);
    TL_RUN(nv12_bt709_odd_size);
    TL_RUN(nv12_full_range);
    TL_RUN(nv12_from_422);
    TL_RUN(nv12_rotated);
    TL_RUN(nv12_only);
    TL_RUN(pixel_allocator);
    TL_RUN(rows_callback);
    TL_RUN(nvdec_matches_cpu);
    TL_RUN(decoder_errors);
    TL_RUN(fifo_interrupted);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (!getenv("STRIX_KEEP_TMP") && system(cmd) != 0) fprintf(stderr, "test_video_read: could not remove %s\n", g_dir);
    TL_MAIN_END();
}
