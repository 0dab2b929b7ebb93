/* letterbox_lab.c — the kernel lab of the letterbox (llm.c dev/cuda style):
 * the GPU letterbox on random frames checked exactly against the CPU
 * letterbox, then timed on camera-sized frames.
 *
 * Versions (the kernel lives in the library, kernels/letterbox.cu; this
 * file calls it through the launcher the CUDA backend calls):
 *   1  letterbox_bilinear_u8<T, NV12> (strix_cuda_letterbox, every kernel
 *      set): one thread per output pixel, OpenCV's INTER_LINEAR fixed-point
 *      arithmetic recomputed per pixel, padding 114, x / 255; an NV12 frame
 *      converted per source pixel read with strix_yuv_coeffs' integers.
 *
 * Build and run (a CUDA build, on a machine with an NVIDIA GPU):
 *   make kernel-lab                             # builds build/perf/cuda/letterbox_lab
 *   build/perf/cuda/letterbox_lab               # check, then 64 frames a run at 640
 *   build/perf/cuda/letterbox_lab --imgsz 1280 --batch 8 --runs 50
 *   build/perf/cuda/letterbox_lab --random 2000 --seed 7 --runs 5
 *
 * The check: --random random frames (default 200; RGB, BGR and NV12 in
 * turn, 1x1 to 400x400, odd sizes and padded row pitches, NV12 in either
 * matrix and range; letterboxed to 32..640 square or rect as
 * strix_letterbox_plan gives), three fixed ones (no resize, exactly 2x down,
 * one pixel), and the timing frames, each in fp16 and fp32, against
 * strix_letterbox (engine/letterbox.c).  The bound is exact for every input
 * format: kernels/letterbox.cu documents the same integer arithmetic as the
 * CPU for RGB/BGR and, for NV12, the bytes strix_nv12_row_rgb gives each
 * pixel; fp32 equal bit for bit, fp16 equal to the CPU's fp32 value rounded
 * to nearest even (the one rounding the kernel's store does; test_cuda_ops'
 * op_letterbox allows half an fp16 ulp).  The output sits between two NaN-
 * poisoned guard regions, which must stay unchanged (perf/cuda/lab.h).  A
 * failure names the frame and the seed: rerun with --seed.
 * The timing: 1920x1080, 1280x720 and 640x640 frames, RGB and NV12, into
 * --imgsz (default 640, rect as detect does by default), fp16 and fp32:
 * one timed run letterboxes --batch frames (default 64), one launch each
 * into consecutive slots of the input tensor, as the backend does; three
 * warm-up runs, then the median of --runs between CUDA events.  GB/s counts
 * the fewest bytes: the output written once and the source pixels the
 * bilinear filter can touch (at most two source rows and columns per
 * output one: min(src, 2 x new) per axis; NV12 its Y bytes and a quarter as
 * many U,V pairs), as % of the H100 SXM's 3350 GB/s.
 * Exit status: 0, 1 a check failed, 2 usage, 8 out of memory, 9 no CUDA
 * device or a CUDA call failed. */
#define LAB_NAME "letterbox_lab"

#include "letterbox.h"
#include "lab.h"

#define N_VERSIONS 1
#define GUARD 64 /* poisoned elements before and after the output */
#define N_TIMED 6 /* the timing frames: 3 sizes, RGB and NV12 */
#define N_FIXED 3

static const char *const version_name[N_VERSIONS + 1] = {"", "v1 bilinear"};

/* One frame (host and device copies) letterboxed `frames` times into
 * consecutive output slots of the span, after GUARD elements. */
typedef struct lb_case {
    lab_case b;
    strix_image img;
    uint8_t *y, *uv;   /* host planes (uv: NV12 only) */
    uint8_t *dy, *duv; /* their device copies */
    strix_letterbox_info info;
    strix_lb_params lp;
    int frames;
} lb_case;

typedef struct lb_lab {
    cudaStream_t st;
    lb_case c;
} lb_lab;

static size_t out_len(const lb_case *lc) { return (size_t)lc->info.dst_w * lc->info.dst_h * 3; }

static int launch(void *c, int v)
{
    const lb_case *lc = c;
    const size_t esz = lab_esz(lc->b.dt);
    for (int f = 0; f < lc->frames; f++) {
        const int rc = strix_cuda_letterbox((char *)lc->b.s.dev + (GUARD + f * out_len(lc)) * esz, lc->b.dt, lc->dy,
                                            lc->duv, &lc->lp, (strix_stream)lc->b.st);
        if (rc) return rc;
    }
    return 0;
}

static uint8_t *random_bytes(size_t n)
{
    uint8_t *p = lab_alloc(n);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(lab_next() >> 56);
    return p;
}

static const char *format_name(strix_pixel_format f) { return f == STRIX_NV12 ? "NV12" : f == STRIX_BGR ? "BGR" : "RGB"; }

/* A w x h frame of the format (pitches padded by up to pad bytes) letterboxed
 * to imgsz (rect or square), uploaded; its span holds lc->frames outputs. */
static void frame_make(lb_case *lc, strix_pixel_format fmt, int w, int h, int pad, int imgsz, int rect)
{
    const int nv12 = fmt == STRIX_NV12, cw = (w + 1) / 2, ch = (h + 1) / 2;
    const int pitch = w * (nv12 ? 1 : 3) + (pad ? lab_int(0, pad) : 0);
    const int uv_pitch = 2 * cw + (pad ? lab_int(0, pad) : 0);
    lc->y = random_bytes((size_t)pitch * h);
    strix_image img = {.data = lc->y, .width = w, .height = h, .stride = pitch, .format = fmt};
    if (nv12) {
        lc->uv = random_bytes((size_t)uv_pitch * ch);
        img.uv = lc->uv;
        img.uv_stride = uv_pitch;
        img.colorspace = lab_int(0, 1) ? STRIX_BT709 : STRIX_BT601;
        img.full_range = lab_int(0, 1);
    }
    lc->img = img;
    strix_letterbox_plan(w, h, imgsz, 32, rect, &lc->info);
    const strix_letterbox_info *li = &lc->info;
    strix_lb_params lp = {w,  h,  pitch, fmt == STRIX_BGR, li->dst_w, li->dst_h, li->new_w, li->new_h, li->left,
                          li->top, nv12, uv_pitch, {0}};
    if (nv12) {
        strix_yuv_coeffs c;
        strix_yuv_coeffs_init(&c, img.colorspace, img.full_range);
        const int yuv[6] = {c.cy, c.crv, c.cgu, c.cgv, c.cbu, c.yoff};
        memcpy(lp.yuv, yuv, sizeof yuv);
    }
    lc->lp = lp;
    CU(cudaMalloc((void **)&lc->dy, (size_t)pitch * h));
    CU(cudaMemcpy(lc->dy, lc->y, (size_t)pitch * h, cudaMemcpyHostToDevice));
    if (nv12) {
        CU(cudaMalloc((void **)&lc->duv, (size_t)uv_pitch * ch));
        CU(cudaMemcpy(lc->duv, lc->uv, (size_t)uv_pitch * ch, cudaMemcpyHostToDevice));
    }
    lab_span_make(&lc->b.s, 2 * GUARD + lc->frames * out_len(lc), lc->b.dt);
}

/* Cases: the timing frames (1080p, 720p, 640x640, each RGB then NV12), the
 * fixed ones (no resize, exactly 2x down, one pixel), then random ones.  A
 * timing run letterboxes --batch frames, a check one. */
static void make(lab_family *f, int k, strix_dtype dt, int timing, char *label, char *shape)
{
    static const int timed[N_TIMED / 2][2] = {{1920, 1080}, {1280, 720}, {640, 640}};
    static const int fixed[N_FIXED][3] = {{64, 48, 64}, {128, 96, 64}, {1, 1, 64}}; /* w, h, imgsz */
    static const strix_pixel_format fmts[] = {STRIX_RGB, STRIX_NV12, STRIX_BGR};
    lb_lab *lab = f->lab;
    lb_case *lc = &lab->c;
    memset(lc, 0, sizeof *lc);
    lc->b.dt = dt, lc->b.st = lab->st, lc->frames = timing ? f->o->batch : 1;
    if (k < N_TIMED) {
        frame_make(lc, k % 2 ? STRIX_NV12 : STRIX_RGB, timed[k / 2][0], timed[k / 2][1], 0, f->o->imgsz, 1);
        snprintf(label, LAB_LABEL, "frame %d", k);
    } else if (k < N_TIMED + N_FIXED) {
        const int *x = fixed[k - N_TIMED];
        frame_make(lc, fmts[k % 3], x[0], x[1], 0, x[2], 1);
        snprintf(label, LAB_LABEL, "fixed %d", k - N_TIMED);
    } else {
        const int big = lab_int(0, 7) == 0;
        const int w = big ? lab_int(1, 400) : lab_int(1, 130), h = big ? lab_int(1, 400) : lab_int(1, 130);
        frame_make(lc, fmts[k % 3], w, h, 13, 32 * lab_int(1, 20), lab_int(0, 1));
        snprintf(label, LAB_LABEL, "random %d", k - N_TIMED - N_FIXED);
    }
    snprintf(shape, LAB_SHAPE, "%dx%d %s -> %dx%d (x%d)", lc->img.width, lc->img.height, format_name(lc->img.format),
             lc->info.dst_w, lc->info.dst_h, lc->frames);
}

/* The CPU letterbox of the frame into the first slot. */
static void expect(lab_family *f, char *desc, size_t cap)
{
    lb_case *lc = &((lb_lab *)f->lab)->c;
    const strix_letterbox_info *li = &lc->info;
    strix_view out = strix_view_dense(lc->b.s.host + GUARD, 1, li->dst_h, li->dst_w, 3);
    void *scratch = lab_alloc(strix_letterbox_scratch_bytes(li));
    strix_letterbox(out.data, &lc->img, li, scratch);
    free(scratch);
    lab_span_expect(&lc->b.s, &out);
    snprintf(desc, cap, "%s %s %dx%d (pitch %d%s) -> %dx%d (new %dx%d at %d,%d)", lab_dtype_name(lc->b.dt),
             format_name(lc->img.format), lc->img.width, lc->img.height, lc->img.stride,
             lc->img.format == STRIX_NV12 ? (lc->img.full_range ? ", full range" : ", limited range") : "", li->dst_w,
             li->dst_h, li->new_w, li->new_h, li->left, li->top);
}

/* The fewest bytes of a run (see the header). */
static double bytes(const void *c)
{
    const lb_case *lc = c;
    const strix_letterbox_info *li = &lc->info;
    const int resize = li->new_w != li->src_w || li->new_h != li->src_h;
    const double rows = resize && 2 * li->new_h < li->src_h ? 2 * li->new_h : li->src_h;
    const double cols = resize && 2 * li->new_w < li->src_w ? 2 * li->new_w : li->src_w;
    const double src = lc->img.format == STRIX_NV12 ? rows * cols * 1.5 : rows * cols * 3;
    return lc->frames * (src + (double)out_len(lc) * lab_esz(lc->b.dt));
}

static void drop(void *c)
{
    lb_case *lc = c;
    free(lc->y), free(lc->uv);
    cudaFree(lc->dy), cudaFree(lc->duv);
    lab_span_free(&lc->b.s);
}

int main(int argc, char **argv)
{
    lab_opts o;
    struct cudaDeviceProp prop;
    lab_start(argc, argv, &o, N_VERSIONS, 200, 1, &prop);
    static lb_lab lab;
    CU(cudaStreamCreate(&lab.st));
    printf("# letterbox_lab: %s (%d SMs); seed %" PRIu64 "; check: the %d timing frames, %d fixed and %d random ones, "
           "fp16 and fp32, exact; timing: %d frames a run into %d, median of %d\n",
           prop.name, prop.multiProcessorCount, o.seed, N_TIMED, N_FIXED, o.random, o.batch, o.imgsz, o.runs);
    lab_seed(o.seed);
    lab_family f = {&o,    N_VERSIONS, version_name, launch, NULL, "frame -> tensor (frames a run)",
                    N_TIMED + N_FIXED, N_TIMED, &lab, &lab.c, make, expect, bytes, drop};
    int failed = lab_check_all(&f);
    printf("# check: %d failed\n", failed);
    failed += lab_time_all(&f);
    cudaStreamDestroy(lab.st);
    return lab_end(failed);
}
