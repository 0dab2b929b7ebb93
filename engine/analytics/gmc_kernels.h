/* gmc_kernels.h — the per-frame steps of Ultralytics' GMC "sparseOptFlow"
 * (ultralytics/trackers/utils/gmc.py) for engine/analytics/gmc.c, each as
 * the OpenCV call it makes defines it:
 *   cvtColor BGR2GRAY + resize to half size (INTER_LINEAR at exactly half
 *   size is OpenCV's 2x2 area average), fixed point as OpenCV rounds;
 *   goodFeaturesToTrack(maxCorners 400, qualityLevel 0.01, minDistance 0,
 *   blockSize 3): minimum eigenvalue of the 3x3-summed Sobel structure
 *   tensor, kept above 1% of the maximum and at 3x3 local maxima, strongest
 *   400 (ties: later pixel first, as OpenCV's sort);
 *   calcOpticalFlowPyrLK(winSize 21, maxLevel 3, 30 iterations, eps 0.01,
 *   minEigThreshold 1e-4): Gaussian pyramid (pyrDown), Scharr gradients,
 *   iterative Lucas-Kanade per level in OpenCV's fixed point (14-bit
 *   bilinear weights, the window's image x 32 and gradients rounded to
 *   int16, products in integers, summed in float lanes in the order of
 *   OpenCV's SSE2 code, scaled by 2^-20), and its last test (a point whose
 *   final window lies too far outside the frame is lost): the points and
 *   their status equal OpenCV's to the bit.
 * The corner strengths are OpenCV's formula, but OpenCV's dispatched AVX2
 * Sobel rounds through fused multiply-adds and its box filter's double
 * sums are not exactly rounded, so a strength can differ in its last bit,
 * and two corners of (nearly) equal strength come in the other order (seen
 * on low-texture frames; docs/tracking-and-highlights.md).
 * Included by gmc_generic.c, gmc_avx2.c and gmc_avx512.c (gmc_steps.h),
 * each defining GMC_SUFFIX: the one entry is strix_gmc_steps_<suffix>;
 * everything else is static.  The float loops are written for the
 * vectoriser (restrict helpers, per-lane sums, no border logic in the
 * interiors) or in a thin vector layer (the AVX2 and AVX-512 corner pass),
 * and keep the order of the float operations; Lucas-Kanade's vector paths
 * (AVX-512, AVX2, SSE2, scalar) compute integers exactly: so every build
 * computes the same numbers.
 *
 * Layouts: grey images uint8 [h][w]; pyramid levels are int16 [h][w] with a
 * border of PAD pixels on each side, reflected as OpenCV's
 * BORDER_REFLECT_101 (their gradients: border 0), so a window read never
 * checks bounds.  A level's image holds IMG(v) = 128 v + 2 for the grey
 * value v: Lucas-Kanade's bilinear sums over it come out with OpenCV's
 * rounding in their high 16 bits (gmc_lk_kernels.h).  Level 0 has no gradient planes: Lucas-Kanade makes its
 * gradients inside each window it reads (window_gradients). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "gmc_steps.h"

#define GMC_CAT2(a, b) a##b
#define GMC_CAT(a, b) GMC_CAT2(a, b)
/* helpers inlined where they are used: called, they pass their vectors
 * through memory (GCC otherwise keeps Lucas-Kanade's bil_pair apart), and
 * window_at sits on every iteration's path */
#define GMC_INLINE inline __attribute__((always_inline))

/* goodFeaturesToTrack's qualityLevel, a double: OpenCV thresholds at
 * (float)(maxVal * qualityLevel) in double (threshold() on a float image
 * rounds its double threshold to float), 1 ulp away from the float product
 * for a quarter of maxima: a corner at the threshold then in or out */
#define QUALITY 0.01
#define WIN 21
#define HALF_WIN 10
#define LK_ITERS 30
#define LK_EPS 0.01 /* OpenCV's criteria are double */
#define MIN_EIG 1e-4
#define WINP 24 /* a window row as computed: 21 columns padded to 16 + 8 lanes; the padding's gradients are 0 */
#define PAD GMC_PAD
#define IMG(v) (128 * (v) + 2) /* a grey value as a pyramid level holds it: v = IMG(v) >> 7 */

/* OpenCV's BORDER_REFLECT_101 index (n >= 2) */
static int reflect(int i, int n)
{
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

/* ----------------------------------------------------------- grey frame */

/* OpenCV's grey in fixed point: OpenCV 5's (R 9798 + G 19235 + B 3735 +
 * 2^14) >> 15 (what `pip install ultralytics` brings since opencv-python
 * 5.0), or OpenCV 4's (R 4899 + G 9617 + B 1868 + 2^13) >> 14 (opencv4: 1);
 * they give different greys for 43864 of the 2^24 colours, which moves
 * corners and so the transforms.  In 16-bit lanes: each weight is 256 hi +
 * lo (OpenCV 5: 9798 = 38.256 + 70, 19235 = 75.256 + 35, 3735 = 14.256 +
 * 151; OpenCV 4: 4899 = 19.256 + 35, 9617 = 37.256 + 145, 1868 = 7.256 +
 * 76), so the sum is 256 H + L with H <= 127.255 and L <= 65280 (the lo
 * weights add up to 256), and (256 H + L + 2^(s-1)) >> s = (H + (L >> 8) +
 * 2^(s-9)) >> (s - 8) exactly.  Twice the lanes of 32-bit arithmetic for
 * the vectoriser.  bgr: B comes first.  Two loops with constant offsets, so
 * the compiler vectorises them (aarch64 reads the three channels with one
 * ld3). */
typedef struct grey_weights {
    uint16_t hr, hg, hb, lr, lg, lb, round, shift; /* the 16-bit split above */
    int32_t r, g, b, round32, shift32;              /* the whole weights, for the 32-bit lanes of AVX2 / AVX-512 */
} grey_weights;

static const grey_weights GREY_WEIGHTS[2] = {
    {38, 75, 14, 70, 35, 151, 64, 7, 9798, 19235, 3735, 1 << 14, 15}, /* OpenCV 5 */
    {19, 37, 7, 35, 145, 76, 32, 6, 4899, 9617, 1868, 1 << 13, 14},   /* OpenCV 4 */
};

static void grey_row(const uint8_t *p, int n, int bgr, const grey_weights *k, uint16_t *g)
{
    const unsigned hr = k->hr, hg = k->hg, hb = k->hb, lr = k->lr, lg = k->lg, lb = k->lb, rnd = k->round,
                   sh = k->shift;
    if (!bgr)
        for (int x = 0; x < n; x++) {
            unsigned r = p[3 * x], gr = p[3 * x + 1], b = p[3 * x + 2];
            uint16_t hi = (uint16_t)(r * hr + gr * hg + b * hb), lo = (uint16_t)(r * lr + gr * lg + b * lb);
            g[x] = (uint16_t)((hi + (lo >> 8) + rnd) >> sh);
        }
    else
        for (int x = 0; x < n; x++) {
            unsigned r = p[3 * x + 2], gr = p[3 * x + 1], b = p[3 * x];
            uint16_t hi = (uint16_t)(r * hr + gr * hg + b * hb), lo = (uint16_t)(r * lr + gr * lg + b * lb);
            g[x] = (uint16_t)((hi + (lo >> 8) + rnd) >> sh);
        }
}

#if defined(__AVX2__) && !defined(__AVX512BW__)
/* x86 with AVX2: the even-size half grey frame 16 outputs at a time.  GCC
 * deinterleaves 3-byte pixels with long shuffle chains; here one byte
 * shuffle per 4 pixels puts (first, second) channel pairs and (third, 1)
 * pairs in 16-bit lanes and one multiply-add each (pmaddwd) gives the
 * 32-bit weighted sum, the rounding riding on the constant 1, then the
 * shift (sh): the same integer as grey_row.  About twice as fast as
 * grey_row at 1080p.  w01, w2r: the weights of the three bytes in memory
 * order, and the rounding. */
static __m256i grey16_avx2(const uint8_t *p, __m256i w01, __m256i w2r, __m128i sh)
{
    /* pixels 0-3 | 4-7 and 8-11 | 12-15: 12 bytes at the start of each 128-bit half */
    __m256i a = _mm256_loadu2_m128i((const __m128i *)(p + 12), (const __m128i *)p);
    __m256i b = _mm256_loadu2_m128i((const __m128i *)(p + 36), (const __m128i *)(p + 24));
    const __m256i s01 = _mm256_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1, 0, -1, 1, -1, 3,
                                         -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1);
    const __m256i s2 = _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1, 2, -1, -1, -1,
                                        5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1);
    const __m256i one = _mm256_set1_epi32(1 << 16);
    __m256i ga = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(a, s01), w01),
                                  _mm256_madd_epi16(_mm256_or_si256(_mm256_shuffle_epi8(a, s2), one), w2r));
    __m256i gb = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(b, s01), w01),
                                  _mm256_madd_epi16(_mm256_or_si256(_mm256_shuffle_epi8(b, s2), one), w2r));
    /* 16-bit greys: packing interleaves the halves (0-3, 8-11 | 4-7, 12-15); the permute restores the order */
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(_mm256_srl_epi32(ga, sh), _mm256_srl_epi32(gb, sh)), 0xD8);
}

/* One output row from source rows r0, r1 (w pixels each); returns how many
 * outputs it wrote (a multiple of 16; the caller does the rest). */
static int grey_half_avx2(const uint8_t *r0, const uint8_t *r1, int w, int bgr, const grey_weights *k, uint8_t *o,
                          int ow)
{
    int w0 = bgr ? k->b : k->r, w2 = bgr ? k->r : k->b;
    __m256i w01 = _mm256_set1_epi32(w0 | k->g << 16), w2r = _mm256_set1_epi32(w2 | k->round32 << 16);
    __m128i sh = _mm_cvtsi32_si128(k->shift32);
    int x = 0;
    /* 32 pixels of each row a step; the last load reads 4 bytes past them, so stop inside the row */
    for (; x + 16 <= ow && 6 * x + 100 <= 3 * w; x += 16) {
        __m256i s0 = _mm256_add_epi16(grey16_avx2(r0 + 6 * x, w01, w2r, sh), grey16_avx2(r1 + 6 * x, w01, w2r, sh));
        __m256i s1 = _mm256_add_epi16(grey16_avx2(r0 + 6 * x + 48, w01, w2r, sh),
                                     grey16_avx2(r1 + 6 * x + 48, w01, w2r, sh));
        /* horizontal pairs (hadd works per 128-bit half: permute back), then (sum + 2) >> 2 */
        __m256i q = _mm256_permute4x64_epi64(_mm256_hadd_epi16(s0, s1), 0xD8);
        q = _mm256_srli_epi16(_mm256_add_epi16(q, _mm256_set1_epi16(2)), 2);
        _mm_storeu_si128((__m128i *)(o + x),
                         _mm_packus_epi16(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)));
    }
    return x;
}
#endif

#if defined(__AVX512BW__)
/* grey16_avx2's arithmetic for 16 pixels in 32-bit lanes: one permute puts
 * the 12 bytes of pixels 0-3, 4-7, 8-11, 12-15 at the start of each 128-bit
 * lane (the masked load reads the 48 bytes only), then the same byte
 * shuffles and multiply-adds. */
static __m512i grey16_avx512(const uint8_t *p, __m512i w01, __m512i w2r, __m128i sh)
{
    const __m512i idx = _mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0);
    const __m512i s01 = _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1));
    const __m512i s2 = _mm512_broadcast_i32x4(_mm_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1));
    __m512i a = _mm512_permutexvar_epi32(idx, _mm512_maskz_loadu_epi8(0xFFFFFFFFFFFFull, p));
    __m512i g = _mm512_add_epi32(
        _mm512_madd_epi16(_mm512_shuffle_epi8(a, s01), w01),
        _mm512_madd_epi16(_mm512_or_si512(_mm512_shuffle_epi8(a, s2), _mm512_set1_epi32(1 << 16)), w2r));
    return _mm512_srl_epi32(g, sh);
}

/* grey_half_avx2 with 16 outputs a step from 16-lane greys: the two rows'
 * greys added, then the even and odd columns of each pair gathered by two
 * permutes and added, rounded, narrowed to bytes.  Returns how many
 * outputs it wrote (a multiple of 16). */
static int grey_half_avx512(const uint8_t *r0, const uint8_t *r1, int bgr, const grey_weights *k, uint8_t *o, int ow)
{
    int w0 = bgr ? k->b : k->r, w2 = bgr ? k->r : k->b;
    __m512i w01 = _mm512_set1_epi32(w0 | k->g << 16), w2r = _mm512_set1_epi32(w2 | k->round32 << 16);
    __m128i sh = _mm_cvtsi32_si128(k->shift32);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    int x = 0;
    for (; x + 16 <= ow; x += 16) {
        __m512i a = _mm512_add_epi32(grey16_avx512(r0 + 6 * x, w01, w2r, sh), grey16_avx512(r1 + 6 * x, w01, w2r, sh));
        __m512i b = _mm512_add_epi32(grey16_avx512(r0 + 6 * x + 48, w01, w2r, sh),
                                     grey16_avx512(r1 + 6 * x + 48, w01, w2r, sh));
        __m512i q = _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b), _mm512_permutex2var_epi32(a, odd, b));
        q = _mm512_srli_epi32(_mm512_add_epi32(q, _mm512_set1_epi32(2)), 2);
        _mm_storeu_si128((__m128i *)(o + x), _mm512_cvtepi32_epi8(q));
    }
    return x;
}
#endif

/* cv::resize's INTER_LINEAR position of output d along a side of n pixels
 * made m: the source index *s and the two 11-bit weights c
 * (INTER_RESIZE_COEF_BITS), the position in float and clamped at both ends
 * as OpenCV computes them. */
static void linear_coef(int d, int n, int m, int *s, int c[2])
{
    float f = (float)((d + 0.5) * (1.0 / ((double)m / n)) - 0.5);
    int i = (int)floorf(f);
    f -= (float)i;
    if (i < 0) i = 0, f = 0;
    if (i >= n - 1) i = n - 1, f = 0;
    *s = i;
    c[0] = (int)lrintf((1.f - f) * 2048.f);
    c[1] = (int)lrintf(f * 2048.f);
}

/* Grey, then half size: the rounded mean of each 2x2 block where the size
 * halves exactly (OpenCV's INTER_LINEAR becomes INTER_AREA there), else
 * OpenCV 5's fixed-point INTER_LINEAR: 11-bit weights, the rows' sums in
 * integers, the vertical step as its SIMD code does it (equal to
 * cv2.resize on every size tried, odd widths and heights from 6 to 1921,
 * vector tails included; a bilinear blend in double was 1 level off on
 * 10% of pixels).  rows: [2][w] scratch. */
static void grey_half(const uint8_t *pix, int w, int h, int stride, int bgr, int opencv4, uint8_t *out, int ow, int oh,
                      uint16_t *rows)
{
    const grey_weights *wt = &GREY_WEIGHTS[opencv4 != 0];
    uint16_t *g0 = rows, *g1 = rows + w;
    if (ow * 2 == w && oh * 2 == h) {
        for (int y = 0; y < oh; y++) {
            const uint8_t *r0 = pix + (size_t)(2 * y) * (size_t)stride, *r1 = r0 + stride;
            uint8_t *o = out + (size_t)y * (size_t)ow;
            int x = 0;
#if defined(__AVX512BW__)
            x = grey_half_avx512(r0, r1, bgr, wt, o, ow);
#elif defined(__AVX2__)
            x = grey_half_avx2(r0, r1, w, bgr, wt, o, ow);
#endif
            /* the rest of the row (all of it without AVX2) */
            grey_row(r0 + 6 * x, w - 2 * x, bgr, wt, g0);
            grey_row(r1 + 6 * x, w - 2 * x, bgr, wt, g1);
            for (int k = 0; k < ow - x; k++)
                o[x + k] = (uint8_t)((g0[2 * k] + g0[2 * k + 1] + g1[2 * k] + g1[2 * k + 1] + 2) >> 2);
        }
        return;
    }
    for (int y = 0; y < oh; y++) {
        int y0, b[2];
        linear_coef(y, h, oh, &y0, b);
        int y1 = y0 + 1 < h ? y0 + 1 : h - 1; /* b[1] is 0 on the last row */
        grey_row(pix + (size_t)y0 * (size_t)stride, w, bgr, wt, g0);
        grey_row(pix + (size_t)y1 * (size_t)stride, w, bgr, wt, g1);
        for (int x = 0; x < ow; x++) {
            int x0, a[2];
            linear_coef(x, w, ow, &x0, a);
            int x1 = x0 + 1 < w ? x0 + 1 : x0; /* a[1] is 0 on the last column */
            int s0 = g0[x0] * a[0] + g0[x1] * a[1], s1 = g1[x0] * a[0] + g1[x1] * a[1];
            /* VResizeLinearVec_32s8u: 16-bit high halves of the products, then a rounding shift by 2 (<= 255) */
            out[(size_t)y * (size_t)ow + x] = (uint8_t)(((((s0 >> 4) * b[0]) >> 16) + (((s1 >> 4) * b[1]) >> 16) + 2) >> 2);
        }
    }
}

/* ---------------------------------------------------------------- corners */

/* OpenCV's order: larger response first; on a tie the later pixel first. */
static int cand_before(const gmc_cand *a, const gmc_cand *b) { return a->v > b->v || (a->v == b->v && a->at > b->at); }

static int cand_cmp(const void *pa, const void *pb)
{
    const gmc_cand *a = pa, *b = pb;
    return cand_before(a, b) ? -1 : cand_before(b, a);
}

/* Reorder c [n] so that its first k (1 <= k <= n) are the k that come first
 * in OpenCV's order (cand_before, a strict order: no two share a pixel),
 * c[k - 1] the last of them (quickselect; median-of-three pivots). */
static void cand_select(gmc_cand *c, int n, int k)
{
    int lo = 0, hi = n - 1, t = k - 1;
    while (lo < hi) {
        gmc_cand a = c[lo], b = c[lo + (hi - lo) / 2], d = c[hi], p;
        if (cand_before(&a, &b)) p = cand_before(&b, &d) ? b : cand_before(&a, &d) ? d : a;
        else p = cand_before(&a, &d) ? a : cand_before(&b, &d) ? d : b;
        int i = lo, j = hi;
        while (i <= j) {
            while (cand_before(&c[i], &p)) i++;
            while (cand_before(&p, &c[j])) j--;
            if (i <= j) {
                gmc_cand x = c[i];
                c[i++] = c[j];
                c[j--] = x;
            }
        }
        if (t <= j) hi = j;
        else if (t >= i) lo = i;
        else break;
    }
}

/* The peaks kept so far, unordered, in c [GMC_CAND_CAP]: when it fills up
 * the first GMC_MAX_CORNERS in OpenCV's order are kept and the rest
 * dropped, and a peak weaker than the last of those can never make the
 * list (floor; from the start, corners' guess).  Appending and a selection
 * now and then cost less than keeping a heap of the strongest, as the
 * peaks come.  seen: how many were appended. */
typedef struct cands {
    gmc_cand *c;
    int n;
    float floor;
    int seen;
} cands;

static void cands_add(cands *b, gmc_cand k)
{
    b->seen++;
    b->c[b->n++] = k;
    if (b->n < GMC_CAND_CAP) return;
    cand_select(b->c, b->n, GMC_MAX_CORNERS);
    b->n = GMC_MAX_CORNERS;
    b->floor = b->c[GMC_MAX_CORNERS - 1].v;
}

#if !defined(__AVX2__)
/* Sum of three neighbours along a row with reflected ends: o[x] = r[x-1] + r[x] + r[x+1]. */
static void sum3(const float *r, float *o, int w)
{
    o[0] = r[1] + r[0] + r[1];
    for (int x = 1; x < w - 1; x++) o[x] = r[x - 1] + r[x] + r[x + 1];
    o[w - 1] = r[w - 2] + r[w - 1] + r[w - 2];
}

/* Sobel products of one row from its image rows r0, r1, r2 (above, at,
 * below; reflected at the image border): pa, pb, pc [w] = dx^2, dx dy,
 * dy^2 at OpenCV's scale.  The pointers are restrict parameters: with the
 * six of them unqualified the compiler gives up on run-time overlap checks
 * and stays scalar. */
static void sobel_products(const uint8_t *restrict r0, const uint8_t *restrict r1, const uint8_t *restrict r2, int w,
                           float *restrict pa, float *restrict pb, float *restrict pc)
{
    const float scale = (float)(1.0 / (4 * 3 * 255.0)); /* OpenCV: 1 / (2^(ksize-1) blockSize 255) */
    /* interior columns without border logic (vectorised), then the two edges */
    for (int x = 1; x < w - 1; x++) {
        int dx = (r0[x + 1] - r0[x - 1]) + 2 * (r1[x + 1] - r1[x - 1]) + (r2[x + 1] - r2[x - 1]);
        int dy = (r2[x - 1] + 2 * r2[x] + r2[x + 1]) - (r0[x - 1] + 2 * r0[x] + r0[x + 1]);
        float fx = (float)dx * scale, fy = (float)dy * scale;
        pa[x] = fx * fx;
        pb[x] = fx * fy;
        pc[x] = fy * fy;
    }
    for (int x = 0; x < w; x += w - 1) {
        int xl = x ? x - 1 : 1, xr = x + 1 < w ? x + 1 : w - 2;
        int dx = (r0[xr] - r0[xl]) + 2 * (r1[xr] - r1[xl]) + (r2[xr] - r2[xl]);
        int dy = (r2[xl] + 2 * r2[x] + r2[xr]) - (r0[xl] + 2 * r0[x] + r0[xr]);
        float fx = (float)dx * scale, fy = (float)dy * scale;
        pa[x] = fx * fx;
        pb[x] = fx * fy;
        pc[x] = fy * fy;
    }
}

/* Row y of the structure tensor's products, summed along the row: sa, sb,
 * sc [w] = 3-sums of dx^2, dx dy, dy^2 (Sobel 3x3 on img [h][w], reflected
 * borders).  p: [3][w] scratch. */
static void tensor_row(const uint8_t *img, int w, int h, int y, float *p, float *sa, float *sb, float *sc)
{
    sobel_products(img + (size_t)reflect(y - 1, h) * (size_t)w, img + (size_t)y * (size_t)w,
                   img + (size_t)reflect(y + 1, h) * (size_t)w, w, p, p + w, p + 2 * w);
    sum3(p, sa, w);
    sum3(p + w, sb, w);
    sum3(p + 2 * w, sc, w);
}

/* Minimum eigenvalue of one row from the tensor's row sums of the rows
 * above, at and below (a*, b*, c*: dx^2, dx dy, dy^2), summed in that
 * order: e [w]; rmax [w] keeps the column-wise maximum (vectorises; the
 * maximum is exact in any order); hm [w] = e's 3-wide maxima (1..w-2). */
static void eig_row(const float *restrict a0, const float *restrict a1, const float *restrict a2,
                    const float *restrict b0, const float *restrict b1, const float *restrict b2,
                    const float *restrict c0, const float *restrict c1, const float *restrict c2, int w,
                    float *restrict e, float *restrict rmax, float *restrict hm)
{
    for (int x = 0; x < w; x++) {
        float a = (a0[x] + a1[x] + a2[x]) * 0.5f;
        float b = b0[x] + b1[x] + b2[x];
        float c = (c0[x] + c1[x] + c2[x]) * 0.5f;
        e[x] = (a + c) - sqrtf((a - c) * (a - c) + b * b);
    }
    for (int x = 0; x < w; x++) rmax[x] = e[x] > rmax[x] ? e[x] : rmax[x];
    /* as two maxima of two: one maxps each (a zero's sign may differ from a
     * three-way select, which no comparison below can see) */
    for (int x = 1; x < w - 1; x++) {
        float m = e[x - 1] > e[x] ? e[x - 1] : e[x];
        hm[x] = m > e[x + 1] ? m : e[x + 1];
    }
}

/* OpenCV's peak test (threshold, 3x3 dilate, equal) of row c, v [w], with
 * the 3-wide maxima of the rows above, at and below (hu, hc, hd: columns
 * 1..w-2): each peak at 1..w-2 above 0 and at least b's floor goes to b.
 * Peaks are sparse: the flags ok [w + 8] are set in a vectorised loop and
 * the scan skips 8 clear ones at a time. */
static void peaks_row(cands *b, const float *restrict v, const float *restrict hu, const float *restrict hc,
                      const float *restrict hd, int w, int c, unsigned char *restrict ok)
{
    float floor = b->floor;
    for (int x = 1; x < w - 1; x++)
        ok[x] = (v[x] > 0) & (v[x] >= floor) & (v[x] >= hu[x]) & (v[x] >= hc[x]) & (v[x] >= hd[x]);
    ok[w - 1] = 0;
    for (int x = 1; x < w - 1; x += 8) {
        uint64_t any;
        memcpy(&any, ok + x, sizeof any); /* ok has 8 bytes of slack past w */
        if (!any) continue;
        for (int k = x; k < x + 8 && k < w - 1; k++)
            if (ok[k]) cands_add(b, (gmc_cand){v[k], c * w + k});
    }
}

/* corners' pass over the rows (w, h >= 3): candidates into bs, returns the
 * maximum of the minimum eigenvalue.  One pass down the rows, all in row
 * buffers that stay in cache (sc->cs, [19][w] of its rows): the tensor's
 * row sums (a ring of 3 rows), summed down the columns into the minimum
 * eigenvalue (a ring of 3 rows), its row-wise 3-maxima (a ring of 3), then
 * the 3x3 peak test of the row above. */
static float corner_rows(gmc_scratch *sc, const uint8_t *img, int w, int h, cands *bs)
{
    float *s = sc->cs, *ring[3][3], *eig[3], *hm[3], *p = s + 15 * (size_t)w, *rmax = s + 18 * (size_t)w;
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) ring[r][k] = s + (size_t)(3 * r + k) * (size_t)w;
        eig[r] = s + (size_t)(9 + r) * (size_t)w;
        hm[r] = s + (size_t)(12 + r) * (size_t)w;
    }
    for (int x = 0; x < w; x++) rmax[x] = 0;
    tensor_row(img, w, h, 0, p, ring[0][0], ring[0][1], ring[0][2]);
    for (int y = 0; y < h; y++) {
        if (y + 1 < h) {
            float **t = ring[(y + 1) % 3];
            tensor_row(img, w, h, y + 1, p, t[0], t[1], t[2]);
        }
        /* minimum eigenvalue of row y: rows y-1, y, y+1 reflected */
        float *const *t0 = ring[reflect(y - 1, h) % 3], *const *t1 = ring[y % 3], *const *t2 = ring[reflect(y + 1, h) % 3];
        float *hd = hm[y % 3];
        eig_row(t0[0], t1[0], t2[0], t0[1], t1[1], t2[1], t0[2], t1[2], t2[2], w, eig[y % 3], rmax, hd);
        /* the peak test of row c = y - 1 (image border excluded) */
        int c = y - 1;
        if (c < 1 || c > h - 2) continue;
        peaks_row(bs, eig[c % 3], hm[(c - 1) % 3], hm[c % 3], hd, w, c, sc->ok);
    }
    float maxv = 0;
    for (int x = 0; x < w; x++) maxv = rmax[x] > maxv ? rmax[x] : maxv;
    return maxv;
}
#endif

#if defined(__AVX2__)
/* ------------------------------------ corners, AVX2 and AVX-512 builds */

/* The vector layer the fused corner pass is written in: VN float lanes
 * (8: AVX2, 16: AVX-512), each operation the C one of the generic pass
 * (+ - * on the vector types are GCC's lane-wise operators; C11 mode fuses
 * no multiply-add), compares into lane bit masks. */
#if defined(__AVX512BW__)
#define VN 16
typedef __m512 vf;
typedef int32_t vi __attribute__((vector_size(64))); /* int32 lanes: + - * act per lane */
static GMC_INLINE vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static GMC_INLINE void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
static GMC_INLINE vf vf_sqrt(vf a) { return _mm512_sqrt_ps(a); }
static GMC_INLINE vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); } /* a > b ? a : b */
static GMC_INLINE vf vf_set1(float x) { return _mm512_set1_ps(x); }
static GMC_INLINE vf vf_from(vi v) { return _mm512_cvtepi32_ps((__m512i)v); }
/* lanes one column to the left (lane 0: prev's last) and to the right (last lane: next's first) */
static GMC_INLINE vf vf_left1(vf cur, vf prev)
{
    return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(cur), _mm512_castps_si512(prev), 15));
}
static GMC_INLINE vf vf_right1(vf next, vf cur)
{
    return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(next), _mm512_castps_si512(cur), 1));
}
/* the lanes of b where bits has a 1, of a elsewhere */
static GMC_INLINE vf vf_pick(unsigned bits, vf a, vf b) { return _mm512_mask_blend_ps(_cvtu32_mask16(bits), a, b); }
static GMC_INLINE unsigned vf_gt(vf a, vf b) { return _cvtmask16_u32(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)); }
static GMC_INLINE unsigned vf_ge(vf a, vf b) { return _cvtmask16_u32(_mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)); }
static GMC_INLINE vi vi_u8(const uint8_t *p) { return (vi)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)); }
#else
#define VN 8
typedef __m256 vf;
typedef int32_t vi __attribute__((vector_size(32)));
static GMC_INLINE vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static GMC_INLINE void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static GMC_INLINE vf vf_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static GMC_INLINE vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); } /* a > b ? a : b */
static GMC_INLINE vf vf_set1(float x) { return _mm256_set1_ps(x); }
static GMC_INLINE vf vf_from(vi v) { return _mm256_cvtepi32_ps((__m256i)v); }
static GMC_INLINE vf vf_left1(vf cur, vf prev)
{
    /* (prev's last, cur's first 7): rotate cur up by one, then lane 0 from prev rotated the same way */
    const __m256i up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
    return _mm256_blend_ps(_mm256_permutevar8x32_ps(cur, up), _mm256_permutevar8x32_ps(prev, up), 1);
}
static GMC_INLINE vf vf_right1(vf next, vf cur)
{
    const __m256i down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
    return _mm256_blend_ps(_mm256_permutevar8x32_ps(cur, down), _mm256_permutevar8x32_ps(next, down), 0x80);
}
static GMC_INLINE vf vf_pick(unsigned bits, vf a, vf b)
{
    const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i m = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)bits), lane), lane);
    return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m));
}
static GMC_INLINE unsigned vf_gt(vf a, vf b) { return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
static GMC_INLINE unsigned vf_ge(vf a, vf b) { return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GE_OQ)); }
static GMC_INLINE vi vi_u8(const uint8_t *p) { return (vi)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)); }
#endif
#define VALL ((1u << VN) - 1) /* every lane's bit */

/* Grey row r [w] as corner_rows reads it: g[0] = r[1], g[1..w] = r,
 * g[w + 1] = r[w - 2] (OpenCV's BORDER_REFLECT_101), zeros to g[gn - 1]. */
static void grey_pad_row(const uint8_t *r, int w, uint8_t *g, int gn)
{
    g[0] = r[1];
    memcpy(g + 1, r, (size_t)w);
    g[w + 1] = r[w - 2];
    memset(g + w + 2, 0, (size_t)(gn - w - 2));
}

/* sobel_products of VN columns from x (padded rows g0, g1, g2: column c at
 * g[c + 1]): the same integers, the same float steps. */
static GMC_INLINE void prod_block(const uint8_t *g0, const uint8_t *g1, const uint8_t *g2, int x, vf *pa, vf *pb, vf *pc)
{
    vi l0 = vi_u8(g0 + x), r0 = vi_u8(g0 + x + 2), l2 = vi_u8(g2 + x), r2 = vi_u8(g2 + x + 2);
    vi dx = (r0 - l0) + 2 * (vi_u8(g1 + x + 2) - vi_u8(g1 + x)) + (r2 - l2);
    vi dy = (l2 + 2 * vi_u8(g2 + x + 1) + r2) - (l0 + 2 * vi_u8(g0 + x + 1) + r0);
    vf scale = vf_set1((float)(1.0 / (4 * 3 * 255.0)));
    vf fx = vf_from(dx) * scale, fy = vf_from(dy) * scale;
    *pa = fx * fx;
    *pb = fx * fy;
    *pc = fy * fy;
}

/* tensor_row from padded rows: the products of block k + 1 are made before
 * block k's 3-sums, which take their neighbours from registers; columns 0
 * and w - 1 (whose neighbours are reflected products) are redone after in
 * scalar.  sa, sb, sc: [VN * nb] (lanes past w hold anything). */
static void tensor_row_vec(const uint8_t *g0, const uint8_t *g1, const uint8_t *g2, int w, float *sa, float *sb, float *sc)
{
    int nb = (w + VN - 1) / VN;
    vf z = vf_set1(0), a0 = z, b0 = z, c0 = z, a1, b1, c1;
    prod_block(g0, g1, g2, 0, &a1, &b1, &c1);
    for (int k = 0; k < nb; k++) {
        vf a2 = z, b2 = z, c2 = z;
        if (k + 1 < nb) prod_block(g0, g1, g2, VN * (k + 1), &a2, &b2, &c2);
        vf_store(sa + VN * k, vf_left1(a1, a0) + a1 + vf_right1(a2, a1));
        vf_store(sb + VN * k, vf_left1(b1, b0) + b1 + vf_right1(b2, b1));
        vf_store(sc + VN * k, vf_left1(c1, c0) + c1 + vf_right1(c2, c1));
        a0 = a1, b0 = b1, c0 = c1;
        a1 = a2, b1 = b2, c1 = c2;
    }
    /* the two edge columns: sum3's reflected ends, products as sobel_products makes them */
    const float scale = (float)(1.0 / (4 * 3 * 255.0));
    float p[4][3];
    int xs[4] = {0, 1, w - 2, w - 1};
    for (int i = 0; i < 4; i++) {
        int x = xs[i] + 1; /* in the padded rows */
        int dx = (g0[x + 1] - g0[x - 1]) + 2 * (g1[x + 1] - g1[x - 1]) + (g2[x + 1] - g2[x - 1]);
        int dy = (g2[x - 1] + 2 * g2[x] + g2[x + 1]) - (g0[x - 1] + 2 * g0[x] + g0[x + 1]);
        float fx = (float)dx * scale, fy = (float)dy * scale;
        p[i][0] = fx * fx;
        p[i][1] = fx * fy;
        p[i][2] = fy * fy;
    }
    float *o[3] = {sa, sb, sc};
    for (int k = 0; k < 3; k++) {
        o[k][0] = p[1][k] + p[0][k] + p[1][k];
        o[k][w - 1] = p[2][k] + p[3][k] + p[2][k];
    }
}

/* The minimum eigenvalue of VN columns from the tensor's row sums of the
 * rows above, at and below (eig_row's arithmetic). */
static GMC_INLINE vf eig_block(float *const *t0, float *const *t1, float *const *t2, int x)
{
    vf half = vf_set1(0.5f);
    vf a = (vf_load(t0[0] + x) + vf_load(t1[0] + x) + vf_load(t2[0] + x)) * half;
    vf b = vf_load(t0[1] + x) + vf_load(t1[1] + x) + vf_load(t2[1] + x);
    vf c = (vf_load(t0[2] + x) + vf_load(t1[2] + x) + vf_load(t2[2] + x)) * half;
    vf d = a - c;
    return a + c - vf_sqrt(d * d + b * b);
}

/* corners' pass for the AVX2 and AVX-512 builds, the same numbers as the
 * generic one in fewer passes over memory: per row y the tensor row y + 1
 * from three padded grey rows, then one loop over VN-column blocks that
 * makes row y's minimum eigenvalues (their maximum kept in a register),
 * their 3-wide maxima (neighbours from the next block, made one ahead)
 * and the peak test of row y - 1, whose few set lanes go to bs.  Buffers:
 * sc->cs, rows of GMC_CS_ROW(w) floats: the tensor ring [3][3],
 * eigenvalues [3], 3-maxima [3], and the padded grey rows [3] in the place
 * of three more.  Returns the maximum eigenvalue. */
static float corner_rows(gmc_scratch *sc, const uint8_t *img, int w, int h, cands *bs)
{
    size_t rs = GMC_CS_ROW(w);
    float *s = sc->cs, *ring[3][3], *eig[3], *hm[3];
    uint8_t *gp[3];
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) ring[r][k] = s + (3 * (size_t)r + (size_t)k) * rs;
        eig[r] = s + (9 + (size_t)r) * rs;
        hm[r] = s + (12 + (size_t)r) * rs;
        gp[r] = (uint8_t *)(s + (15 + (size_t)r) * rs);
    }
    int gn = (int)(rs * sizeof(float)), nb = (w + VN - 1) / VN;
    /* padded grey rows: row r in gp[r % 3]; rows 0 and 1 to start (row -1 is row 1) */
    grey_pad_row(img, w, gp[0], gn);
    grey_pad_row(img + w, w, gp[1], gn);
    tensor_row_vec(gp[1], gp[0], gp[1], w, ring[0][0], ring[0][1], ring[0][2]);
    vf z = vf_set1(0), rmax = z;
    for (int y = 0; y < h; y++) {
        if (y + 1 < h) {
            int t = y + 1, tn = reflect(t + 1, h);
            if (t + 1 < h) grey_pad_row(img + (size_t)tn * (size_t)w, w, gp[tn % 3], gn);
            float **o = ring[t % 3];
            tensor_row_vec(gp[(t - 1) % 3], gp[t % 3], gp[tn % 3], w, o[0], o[1], o[2]);
        }
        float *const *t0 = ring[reflect(y - 1, h) % 3], *const *t1 = ring[y % 3], *const *t2 = ring[reflect(y + 1, h) % 3];
        float *e = eig[y % 3], *hd = hm[y % 3];
        int c = y - 1, peaks = c >= 1 && c <= h - 2;
        const float *v = eig[(c + 3) % 3], *hu = hm[(c + 2) % 3], *hc = hm[(c + 3) % 3];
        vf ep = z, ec = eig_block(t0, t1, t2, 0);
        for (int k = 0; k < nb; k++) {
            int x = VN * k;
            vf en = k + 1 < nb ? eig_block(t0, t1, t2, x + VN) : z;
            unsigned in = w - x >= VN ? VALL : (1u << (w - x)) - 1; /* lanes inside the row */
            rmax = vf_pick(in, rmax, vf_max(ec, rmax));
            vf_store(e + x, ec);
            vf m = vf_max(vf_max(vf_left1(ec, ep), ec), vf_right1(en, ec)); /* eig_row's two maxima of two */
            vf_store(hd + x, m);
            if (peaks) { /* peaks_row's test of columns 1..w-2 */
                unsigned t = (w - 1 - x >= VN ? VALL : (1u << (w - 1 - x)) - 1) & (x ? VALL : VALL - 1);
                vf pv = vf_load(v + x);
                t &= vf_gt(pv, z) & vf_ge(pv, vf_set1(bs->floor));
                if (t) t &= vf_ge(pv, vf_load(hu + x)) & vf_ge(pv, vf_load(hc + x)) & vf_ge(pv, m);
                for (; t; t &= t - 1) {
                    int xk = x + __builtin_ctz(t);
                    cands_add(bs, (gmc_cand){v[xk], c * w + xk});
                }
            }
            ep = ec;
            ec = en;
        }
    }
    float r[VN], maxv = 0;
    vf_store(r, rmax);
    for (int i = 0; i < VN; i++) maxv = r[i] > maxv ? r[i] : maxv;
    return maxv;
}
#endif

/* goodFeaturesToTrack on img [h][w] (w, h >= 3): up to GMC_MAX_CORNERS (x, y)
 * into pts; returns the count.  OpenCV keeps the peaks above 1% of the
 * global maximum, not known until the end, then the strongest 400: here
 * the strongest 400 peaks above 0 are kept as they come (the 1% threshold
 * is >= 0, and the peaks above it are the strongest ones, so the strongest
 * 400 of those are the ones of the 400 that pass it: cands), and a peak
 * weaker than the floor cands keeps is dropped in the vectorised test.
 * The floor starts at a guess, a fraction of the weakest kept corner of
 * the frame before (sc->hint), not at 0: from the first row on, most peaks
 * fail the cheap test rather than go to the list (a clip's frames differ
 * little).  It changes no corner: when at least 400 peaks reach the guess,
 * the strongest 400 are all among them; when fewer do (seen < 400: no
 * selection raised the floor, so seen counts exactly those), the pass is
 * made again from 0. */
#define HINT_FRACTION 0.5f
static int corners(gmc_scratch *sc, const uint8_t *img, int w, int h, float *pts)
{
    cands bs = {sc->cand, 0, sc->hint, 0};
    float thresh = (float)((double)corner_rows(sc, img, w, h, &bs) * QUALITY);
    if (bs.seen < GMC_MAX_CORNERS && sc->hint > 0) {
        bs = (cands){sc->cand, 0, 0, 0};
        thresh = (float)((double)corner_rows(sc, img, w, h, &bs) * QUALITY);
    }
    if (bs.n > GMC_MAX_CORNERS) cand_select(bs.c, bs.n, GMC_MAX_CORNERS);
    gmc_cand *cd = bs.c;
    int nc = 0;
    for (int i = 0; i < bs.n && i < GMC_MAX_CORNERS; i++)
        if (cd[i].v > thresh) cd[nc++] = cd[i];
    qsort(cd, (size_t)nc, sizeof *cd, cand_cmp);
    for (int i = 0; i < nc; i++) {
        pts[2 * i] = (float)(cd[i].at % w);
        pts[2 * i + 1] = (float)(cd[i].at / w);
    }
    sc->hint = nc == GMC_MAX_CORNERS ? cd[nc - 1].v * HINT_FRACTION : 0;
    return nc;
}

/* ---------------------------------------------------------------- pyramid */

/* The level's planes in one block: the image, and the gradients above
 * level 0 (grads); zeroed, so the gradients' border is 0 from the start
 * (only their interior is written after). */
static int level_alloc(gmc_level *l, int w, int h, int grads)
{
    int pw = w + 2 * PAD;
    if (l->w == w && l->h == h && l->img && !l->dx == !grads) return 0;
    free(l->img);
    size_t n = (size_t)pw * (size_t)(h + 2 * PAD);
    l->img = calloc(grads ? 3 * n : n, sizeof *l->img);
    l->dx = l->img && grads ? l->img + n : NULL;
    l->dy = l->img && grads ? l->img + 2 * n : NULL;
    l->w = w;
    l->h = h;
    l->pw = pw;
    return l->img ? 0 : -1;
}

/* Row y of a level's image (interior column 0 at o, w values set): its
 * reflected border columns. */
static void row_mirror(int16_t *o, int w)
{
#if defined(__AVX512BW__)
    if (w >= 34) { /* each border is PAD lanes of one reversed 32-lane load (o[1..32], o[w-33..w-2]) */
        const __m512i rev = _mm512_set_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                             21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31); /* lane i: 31 - i */
        const __mmask32 last = (__mmask32)(~0u << (32 - PAD)), first = (__mmask32)((1u << PAD) - 1);
        _mm512_mask_storeu_epi16(o - 32, last, _mm512_permutexvar_epi16(rev, _mm512_loadu_si512(o + 1)));
        _mm512_mask_storeu_epi16(o + w, first, _mm512_permutexvar_epi16(rev, _mm512_loadu_si512(o + w - 33)));
        return;
    }
#endif
    if (w > PAD) /* the mirror stays inside the row: a plain copy */
        for (int x = 1; x <= PAD; x++) {
            o[-x] = o[x];
            o[w - 1 + x] = o[w - 1 - x];
        }
    else
        for (int x = 1; x <= PAD; x++) {
            o[-x] = o[reflect(-x, w)];
            o[w - 1 + x] = o[reflect(w - 1 + x, w)];
        }
}

/* A level's border rows: copies of the reflected rows. */
static void rows_mirror(gmc_level *l)
{
    int h = l->h, pw = l->pw;
    for (int y = 1; y <= PAD; y++) {
        memcpy(l->img + (size_t)(PAD - y) * (size_t)pw, l->img + (size_t)(PAD + reflect(-y, h)) * (size_t)pw,
               sizeof *l->img * (size_t)pw);
        memcpy(l->img + (size_t)(PAD + h - 1 + y) * (size_t)pw,
               l->img + (size_t)(PAD + reflect(h - 1 + y, h)) * (size_t)pw, sizeof *l->img * (size_t)pw);
    }
}

/* pyrDown's row y of the level below L (5x5 Gaussian [1 4 6 4 1]^2 / 256,
 * rounded) into o [(L->w + 1) / 2], from L's image, whose reflected border
 * is OpenCV's BORDER_REFLECT_101: rows 2y - 2..2y + 2 and columns -2..w + 1
 * are all there, so no index needs a test.  On IMG values the weighted sum
 * is 128 S + 512 for OpenCV's S, and OpenCV's (S + 128) >> 8 is
 * (sum + 15872) >> 15.  v: [w + 4] scratch. */
static void pyr_down_row(const gmc_level *L, int y, int16_t *restrict o, int *restrict v)
{
    int w = L->w, ow = (w + 1) / 2;
    const int16_t *r0 = L->img + (size_t)(2 * y - 2 + PAD) * (size_t)L->pw + PAD - 2;
    const int16_t *restrict r1 = r0 + L->pw, *restrict r2 = r1 + L->pw, *restrict r3 = r2 + L->pw, *restrict r4 = r3 + L->pw;
    for (int x = 0; x < w + 4; x++) v[x] = r0[x] + 4 * r1[x] + 6 * r2[x] + 4 * r3[x] + r4[x];
    for (int x = 0; x < ow; x++) /* v[c + 2] is column c */
        o[x] = (int16_t)IMG((v[2 * x] + 4 * v[2 * x + 1] + 6 * v[2 * x + 2] + 4 * v[2 * x + 3] + v[2 * x + 4] + 15872) >> 15);
}

/* Scharr's first pass over one row, columns -1..w (n = w + 2): vs = [3 10 3]
 * down the columns of rows a, b, c (above, at, below; IMG values), d = c -
 * a, on the grey values.  int16 lanes: |vs| <= 16 * 255, and c - a of IMG
 * values is 128 times the grey values' (|.| <= 32640). */
static void scharr_vertical(const int16_t *restrict a, const int16_t *restrict b, const int16_t *restrict c, int n,
                            int16_t *restrict vs, int16_t *restrict d)
{
    for (int x = 0; x < n; x++) {
        vs[x] = (int16_t)(((a[x] >> 7) + (c[x] >> 7)) * 3 + (b[x] >> 7) * 10);
        d[x] = (int16_t)((int16_t)(c[x] - a[x]) >> 7);
    }
}

/* The second pass: gx = vs's central difference, gy = [3 10 3] of d along
 * the row (vs, d from column -1: gx[x] uses vs[x], vs[x + 2]). */
static void scharr_horizontal(const int16_t *restrict vs, const int16_t *restrict d, int w, int16_t *restrict gx,
                              int16_t *restrict gy)
{
    for (int x = 0; x < w; x++) {
        gx[x] = (int16_t)(vs[x + 2] - vs[x]);
        gy[x] = (int16_t)((d[x] + d[x + 2]) * 3 + d[x + 1] * 10);
    }
}

/* Row y's gradients over columns x0..x1-1 as OpenCV's calcSharrDeriv makes
 * them: [3 10 3] smoothing across, central difference along, on the image
 * with its reflected border (rows y - 1..y + 1 and their border columns
 * must be there).  sch: [2][w + 2] scratch. */
static void gradient_span(gmc_level *l, int y, int x0, int x1, int16_t *sch)
{
    int pw = l->pw;
    int16_t *vs = sch, *d = sch + l->w + 2;
    size_t o = (size_t)(y + PAD) * (size_t)pw + PAD + (size_t)x0;
    const int16_t *b = l->img + o - 1;
    scharr_vertical(b - pw, b, b + pw, x1 - x0 + 2, vs, d);
    scharr_horizontal(vs, d, x1 - x0, l->dx + o, l->dy + o);
}

/* The pyramid of grey img [h][w].  Each level is made row by row: the
 * image row (level 0: the grey frame's; above: pyrDown of the level below)
 * with its border columns, then above level 0 the gradients of the row
 * above it, while the rows they read are still in cache; the border rows
 * when the level is done (row -1 as soon as row 1 is there, for row 0's
 * gradients).  Returns -1 on OOM. */
static int pyramid_build(gmc_pyramid *p, const uint8_t *img, int w, int h, gmc_scratch *s)
{
    p->n = 0;
    for (int lv = 0; lv <= GMC_MAX_LEVEL; lv++) {
        if (lv > 0) w = (w + 1) / 2, h = (h + 1) / 2;
        if (w <= WIN || h <= WIN) break; /* OpenCV stops where the window no longer fits */
        gmc_level *l = &p->lv[lv];
        if (level_alloc(l, w, h, lv > 0)) return -1;
        size_t pw = (size_t)l->pw;
        for (int y = 0; y < h; y++) {
            int16_t *restrict o = l->img + (size_t)(y + PAD) * pw + PAD;
            if (lv == 0) {
                const uint8_t *restrict r = img + (size_t)y * (size_t)w;
                for (int x = 0; x < w; x++) o[x] = (int16_t)IMG(r[x]);
            } else {
                pyr_down_row(&p->lv[lv - 1], y, o, s->row);
            }
            row_mirror(o, w);
            if (y == 1) memcpy(o - 2 * pw - PAD, o - PAD, sizeof *o * pw); /* row -1 = row 1 */
            if (y >= 1 && lv > 0) gradient_span(l, y - 1, 0, w, s->sch);
        }
        rows_mirror(l);
        if (lv > 0) gradient_span(l, h - 1, 0, w, s->sch);
        p->n = lv + 1;
    }
    return 0;
}

/* -------------------------------------------------------- Lucas-Kanade */

#include "gmc_lk_kernels.h"

/* ------------------------------------------------------------ entry points */

static void step_grey(const uint8_t *pix, int width, int height, int stride, int bgr, int opencv4, uint8_t *out,
                      uint16_t *rows)
{
    grey_half(pix, width, height, stride, bgr, opencv4, out, width / 2, height / 2, rows);
}

static int step_corners(gmc_scratch *s, int w, int h, float *pts) { return corners(s, s->img, w, h, pts); }

static int step_pyramid(gmc_scratch *s, gmc_pyramid *cur, int w, int h) { return pyramid_build(cur, s->img, w, h, s); }

const gmc_steps GMC_CAT(strix_gmc_steps_, GMC_SUFFIX) = {step_grey, step_corners, step_pyramid, lk};
