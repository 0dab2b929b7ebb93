/* gmc_kernels.h — the per-frame steps of Ultralytics' GMC "sparseOptFlow"
 * (ultralytics/trackers/utils/gmc.py) for engine/analytics/gmc.c, each as
 * the OpenCV call it makes defines it:
 *   cvtColor BGR2GRAY + resize to half size (INTER_LINEAR at exactly half
 *   size is OpenCV's 2x2 area average), fixed point as OpenCV rounds;
 *   goodFeaturesToTrack(maxCorners 400, qualityLevel 0.01, minDistance 0,
 *   blockSize 3): minimum eigenvalue of the 3x3-summed Sobel structure
 *   tensor with every rounding of OpenCV's (its AVX2 Sobel's fused
 *   multiply-adds, its box filter's double running sums: corner_rows), kept
 *   above 1% of the maximum and at 3x3 local maxima, strongest 400 (ties:
 *   later pixel first, as OpenCV's sort): OpenCV's corners in its order;
 *   calcOpticalFlowPyrLK(winSize 21, maxLevel 3, 30 iterations, eps 0.01,
 *   minEigThreshold 1e-4): Gaussian pyramid (pyrDown), Scharr gradients,
 *   iterative Lucas-Kanade per level in OpenCV's fixed point (14-bit
 *   bilinear weights, the window's image x 32 and gradients rounded to
 *   int16, products in integers, summed in float lanes in the order of
 *   OpenCV's SSE2 code, scaled by 2^-20), and its last test (a point whose
 *   final window lies too far outside the frame is lost): the points and
 *   their status equal OpenCV's to the bit.
 * Included by gmc_generic.c, gmc_avx2.c and gmc_avx512.c (gmc_steps.h),
 * each defining GMC_SUFFIX: the one entry is strix_gmc_steps_<suffix>;
 * everything else is static.  The float loops are written for the
 * vectoriser (restrict helpers, per-lane sums, no border logic in the
 * interiors) and keep the order of the float operations (the corner pass's
 * fused multiply-adds: fused()); Lucas-Kanade's vector paths
 * (AVX-512, AVX2, SSE2, scalar) compute integers exactly: so every build
 * computes the same numbers.
 *
 * Layouts: grey images uint8 [h][w]; pyramid levels are int16 [h][w] with a
 * border of PAD pixels on each side, reflected as OpenCV's
 * BORDER_REFLECT_101 (their gradients: border 0), so a window read never
 * checks bounds.  A level's image holds IMG(v) = 128 v + 2 for the grey
 * value v: Lucas-Kanade's bilinear sums over it come out with OpenCV's
 * rounding in their high 16 bits (gmc_lk_kernels.h).  Level 0 has no gradient planes: Lucas-Kanade makes its
 * gradients inside each window it reads (window_gradients; the AVX2
 * build's window_begin). */
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
    /* 32 pixels of each row a step; the last load reads 4 bytes past them, so stop inside the row.  The
     * rows are asked for 1 KiB ahead (the frame is seldom in cache: 0.68 -> 0.66 ms a 1080p frame) */
    for (; x + 16 <= ow && 6 * x + 100 <= 3 * w; x += 16) {
        __builtin_prefetch(r0 + 6 * x + 1024);
        __builtin_prefetch(r1 + 6 * x + 1024);
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

/* cornerMinEigenVal(blockSize 3, ksize 3) as OpenCV 5 computes it on an
 * x86-64 CPU with AVX2 and FMA (the dispatch its wheels take there, also
 * on AVX-512 CPUs: its filters have no wider build), every rounding
 * included, so that corners of (nearly) equal strength come in OpenCV's
 * order.  Checked against cv2.Sobel, cv2.boxFilter and
 * cv2.cornerMinEigenVal of opencv-python-headless 5.0.0.93 to the bit
 * (docs/tracking-and-highlights.md).  K = (float)(1 / (4 * 3 * 255)), the
 * Sobel kernels' scale, rows and columns reflected (BORDER_REFLECT_101):
 *   Dx: the row filter [-1 0 1] (exact integers d), then the column filter
 *     fma(d[y-1] + d[y+1], K, d[y] * 2K) (SymmColumnSmallVec_32f; its
 *     scalar tail compiles to the same fused multiply-add);
 *   Dy: the row filter [K 2K K] r = fma(g[x+1], K, fma(g[x], 2K, g[x-1] K))
 *     on the 32-column blocks of RowVec_8u32f, and on the columns after the
 *     last whole block (RowFilter's scalar tail) the products rounded
 *     before each addition; then the column filter r[y+1] - r[y-1];
 *   the products Dx^2, Dx Dy, Dy^2 in float;
 *   boxFilter 3x3 in place (BlockSum<double, float>): each row's 3-sums in
 *     double, ((p[x-1] + p[x]) + p[x+1]), then a running sum down the rows
 *     in double, not the sum of the three rows: at source row rc (image row
 *     reflect(rc - 1), rc = 0..h+1) s = SUM + S(rc); output row rc - 2 is
 *     (float)s; SUM = s - S(rc - 2) (0 for rc < 2);
 *   the minimum eigenvalue (a + c) - sqrt(b^2 + (a - c)^2) with a, c half
 *     the box sums, in float.
 * A fused multiply-add (fused()) is the FMA instruction where the build
 * has one, else done in double and rounded once: its product (an integer
 * below 2^11 times K or 2K) is exact there, and so is the sum (all terms
 * multiples of 2^-35 below 1), so the one rounding to float is the fused
 * multiply-add's.  The box filter's double sums are
 * not exact where a product is tiny (Dy's two row filters can differ in
 * the last bit where the true difference is 0), which is where rounding
 * each row differently from OpenCV changes the order of near-equal
 * corners (low-texture frames). */
#define SOBEL_K ((float)(1.0 / (4 * 3 * 255.0)))

/* fma(a, b, c), rounded once, for the corner pass's operands (see
 * above): the instruction where the build has it (AVX2, AVX-512), the
 * double sum elsewhere; the same float either way. */
static GMC_INLINE float fused(float a, float b, float c)
{
#if defined(__FMA__)
    return fmaf(a, b, c);
#else
    return (float)((double)a * (double)b + (double)c);
#endif
}

/* Dy's row filter of grey row g [w] into o [w]: fused on the columns
 * before nv (the whole 32-column blocks), rounded step by step after. */
static void sobel_dy_row(const uint8_t *restrict g, int w, float *restrict o)
{
    const float k = SOBEL_K, k2 = 2 * SOBEL_K;
    int nv = w - w % 32;
    for (int x = 0; x < w; x += w - 1) { /* the edges: g[-1] = g[1], g[w] = g[w - 2] */
        float l = g[x ? x - 1 : 1], m = g[x], r = g[x + 1 < w ? x + 1 : w - 2];
        o[x] = x < nv ? fused(r, k, fused(m, k2, l * k)) : (l * k + m * k2) + r * k;
    }
    int a = nv < w - 1 ? nv : w - 1;
    for (int x = 1; x < a; x++) o[x] = fused((float)g[x + 1], k, fused((float)g[x], k2, (float)g[x - 1] * k));
    for (int x = a > 1 ? a : 1; x < w - 1; x++) o[x] = ((float)g[x - 1] * k + (float)g[x] * k2) + (float)g[x + 1] * k;
}

#if defined(__AVX2__)
/* sobel_row's three products at column j (-1..w: reflected), as it
 * computes them: the columns its vector loop leaves. */
static void sobel_px(const uint8_t *g0, const uint8_t *g1, const uint8_t *g2, const float *r0, const float *r2,
                     int w, int j, double q[3])
{
    j = j < 0 ? 1 : j >= w ? w - 2 : j;
    float dy = r2[j] - r0[j], dx = 0;
    if (j > 0 && j < w - 1) {
        int s = (g0[j + 1] - g0[j - 1]) + (g2[j + 1] - g2[j - 1]), m = g1[j + 1] - g1[j - 1];
        dx = fused((float)s, SOBEL_K, (float)m * (2 * SOBEL_K));
    }
    q[0] = dx * dx;
    q[1] = dx * dy;
    q[2] = dy * dy;
}

/* The 3-sums of one product's two double vectors lo (columns x..x+3) and
 * hi (x+4..x+7), prev the vector before lo: columns x-1..x+6 into o + x - 1
 * and s (x-1..x+2, x+3..x+6), each ((p[j-1] + p[j]) + p[j+1]) as below.  The shifted neighbours come
 * from lane shuffles, not from a product row stored and read back. */
static GMC_INLINE void sum3_avx2(__m256d prev, __m256d lo, __m256d hi, double *o, __m256d s[2])
{
    __m256d a = _mm256_permute2f128_pd(prev, lo, 0x21), b = _mm256_permute2f128_pd(lo, hi, 0x21); /* x-2.., x+2.. */
    s[0] = _mm256_add_pd(_mm256_add_pd(a, _mm256_shuffle_pd(a, lo, 5)), lo);
    s[1] = _mm256_add_pd(_mm256_add_pd(b, _mm256_shuffle_pd(b, hi, 5)), hi);
    _mm256_storeu_pd(o - 1, s[0]);
    _mm256_storeu_pd(o + 3, s[1]);
}

/* sobel_row's products of columns x..x+7 (all inside) as double vectors:
 * pd[i][0] columns x..x+3, pd[i][1] x+4..x+7 (Dx^2, Dx Dy, Dy^2). */
static GMC_INLINE void sobel8(const uint8_t *g0, const uint8_t *g1, const uint8_t *g2, const float *r0,
                              const float *r2, int x, __m256d pd[3][2])
{
    const __m256 vk = _mm256_set1_ps(SOBEL_K), vk2 = _mm256_set1_ps(2 * SOBEL_K);
#define GMC_U8(g, o) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)((g) + x + (o))))
    __m256i si = _mm256_add_epi32(_mm256_sub_epi32(GMC_U8(g0, 1), GMC_U8(g0, -1)),
                                  _mm256_sub_epi32(GMC_U8(g2, 1), GMC_U8(g2, -1)));
    __m256i mi = _mm256_sub_epi32(GMC_U8(g1, 1), GMC_U8(g1, -1));
#undef GMC_U8
    __m256 dx = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si), vk, _mm256_mul_ps(_mm256_cvtepi32_ps(mi), vk2));
    __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(r2 + x), _mm256_loadu_ps(r0 + x));
    __m256 pr[3] = {_mm256_mul_ps(dx, dx), _mm256_mul_ps(dx, dy), _mm256_mul_ps(dy, dy)};
    for (int i = 0; i < 3; i++) {
        pd[i][0] = _mm256_cvtps_pd(_mm256_castps256_ps128(pr[i]));
        pd[i][1] = _mm256_cvtps_pd(_mm256_extractf128_ps(pr[i], 1));
    }
}

/* sobel_row's 3-sums of the columns its vector loop leaves (j0..w-1). */
static void sobel_tail(const uint8_t *g0, const uint8_t *g1, const uint8_t *g2, const float *r0, const float *r2,
                       int w, int j0, double *sa, double *sb, double *sc)
{
    for (int j = j0; j < w; j++) {
        double u[3], v[3], t[3];
        sobel_px(g0, g1, g2, r0, r2, w, j - 1, u);
        sobel_px(g0, g1, g2, r0, r2, w, j, v);
        sobel_px(g0, g1, g2, r0, r2, w, j + 1, t);
        sa[j] = (u[0] + v[0]) + t[0];
        sb[j] = (u[1] + v[1]) + t[1];
        sc[j] = (u[2] + v[2]) + t[2];
    }
}

/* The vector loop's first prev (columns -3..0; only -1 and 0 are read). */
static void sobel_start(const uint8_t *g0, const uint8_t *g1, const uint8_t *g2, const float *r0, const float *r2,
                        int w, __m256d pv[3])
{
    double q0[3], q1[3];
    sobel_px(g0, g1, g2, r0, r2, w, 0, q0);
    sobel_px(g0, g1, g2, r0, r2, w, 1, q1);
    for (int i = 0; i < 3; i++) pv[i] = _mm256_set_pd(q0[i], q1[i], 0, 0);
}
#endif


/* Row y's Sobel products, each row's 3-sums in double: grey rows g0, g1,
 * g2 (above, at, below, reflected), Dy's row filters r0 (above) and r2
 * (below); p: [3][w + 2] scratch (the products, reflected one column
 * beyond each edge; the AVX2 build keeps them in registers); sa, sb, sc
 * [w] the 3-sums of Dx^2, Dx Dy, Dy^2. */
static void sobel_row(const uint8_t *restrict g0, const uint8_t *restrict g1, const uint8_t *restrict g2,
                      const float *restrict r0, const float *restrict r2, int w, double *restrict p,
                      double *restrict sa, double *restrict sb, double *restrict sc)
{
#if defined(__AVX2__)
    /* 8 columns a step, all inside (1..w-2); each product's 3-sums follow
     * in registers (sum3_avx2), a step behind: the columns before x-1 are
     * done.  prev starts as columns -3..0 (only -1 and 0 are read). */
    (void)p;
    __m256d pv[3];
    sobel_start(g0, g1, g2, r0, r2, w, pv);
    int x = 1;
    for (; x + 8 <= w - 1; x += 8) {
        __m256d pd[3][2], s3[2];
        double *o[3] = {sa, sb, sc};
        sobel8(g0, g1, g2, r0, r2, x, pd);
        for (int i = 0; i < 3; i++) {
            sum3_avx2(pv[i], pd[i][0], pd[i][1], o[i] + x, s3);
            pv[i] = pd[i][1];
        }
    }
    sobel_tail(g0, g1, g2, r0, r2, w, x - 1, sa, sb, sc); /* the last columns' 3-sums */
#else
    const float k = SOBEL_K, k2 = 2 * SOBEL_K;
    double *restrict pa = p, *restrict pb = p + w + 2, *restrict pc = p + 2 * (w + 2);
    for (int x = 1; x < w - 1; x++) {
        int s = (g0[x + 1] - g0[x - 1]) + (g2[x + 1] - g2[x - 1]), m = g1[x + 1] - g1[x - 1];
        float dx = fused((float)s, k, (float)m * k2), dy = r2[x] - r0[x];
        pa[x + 1] = dx * dx;
        pb[x + 1] = dx * dy;
        pc[x + 1] = dy * dy;
    }
    for (int x = 0; x < w; x += w - 1) { /* Dx is 0 at the edges (the row filter's reflected ends cancel) */
        float dy = r2[x] - r0[x];
        pa[x + 1] = 0;
        pb[x + 1] = 0 * dy;
        pc[x + 1] = dy * dy;
    }
    for (int c = 0; c < 3; c++) {
        double *q = p + c * (w + 2);
        q[0] = q[2];
        q[w + 1] = q[w - 1];
    }
    for (int x = 0; x < w; x++) {
        sa[x] = (pa[x] + pa[x + 1]) + pa[x + 2];
        sb[x] = (pb[x] + pb[x + 1]) + pb[x + 2];
        sc[x] = (pc[x] + pc[x + 1]) + pc[x + 2];
    }
#endif
}

/* One output row of the box filter's running sums and its minimum
 * eigenvalues, columns x0..w-1: n* the new source row's 3-sums, o* the
 * ones leaving (source row rc - 2), s* the running sums (updated), e [w]
 * the row's minimum eigenvalues; rmax [w] keeps the column-wise maximum. */
static void eig_span(const double *restrict na, const double *restrict nb, const double *restrict nc,
                     const double *restrict oa, const double *restrict ob, const double *restrict oc,
                     double *restrict sa, double *restrict sb, double *restrict sc, int x0, int w, float *restrict e,
                     float *restrict rmax)
{
    for (int x = x0; x < w; x++) {
        double a = sa[x] + na[x], b = sb[x] + nb[x], c = sc[x] + nc[x];
        sa[x] = a - oa[x];
        sb[x] = b - ob[x];
        sc[x] = c - oc[x];
        float fa = (float)a * 0.5f, fb = (float)b, fc = (float)c * 0.5f, t = fa - fc;
        float v = (fa + fc) - sqrtf(fb * fb + t * t);
        e[x] = v;
        rmax[x] = v > rmax[x] ? v : rmax[x];
    }
}

/* hm [w] = e's 3-wide maxima (1..w-2), as two maxima of two: one maxps
 * each (a zero's sign may differ from a three-way select, which no
 * comparison below can see). */
static void hmax_row(const float *restrict e, int w, float *restrict hm)
{
    for (int x = 1; x < w - 1; x++) {
        float m = e[x - 1] > e[x] ? e[x - 1] : e[x];
        hm[x] = m > e[x + 1] ? m : e[x + 1];
    }
}

#if defined(__AVX2__) && !defined(__AVX512BW__)
/* The AVX2 build's sobel_row and eig_span in one pass, for a source row
 * whose 3-sums are new (n [3]: stored for when the row leaves): each 8
 * columns' 3-sums go into the running sums (s [3]; o [3] the row leaving)
 * and the minimum eigenvalues (e, rmax) while in registers, with
 * eig_span's operations (the float ones 8 lanes wide). */
static void sobel_eig_row(const uint8_t *restrict g0, const uint8_t *restrict g1, const uint8_t *restrict g2,
                          const float *restrict r0, const float *restrict r2, int w, double *const n[3],
                          double *const o[3], double *const s[3], float *restrict e, float *restrict rmax)
{
    __m256d pv[3];
    sobel_start(g0, g1, g2, r0, r2, w, pv);
    const __m256 half = _mm256_set1_ps(0.5f);
    int x = 1;
    for (; x + 8 <= w - 1; x += 8) { /* columns x - 1..x + 6 */
        __m256d pd[3][2];
        __m256 f[3];
        sobel8(g0, g1, g2, r0, r2, x, pd);
        for (int i = 0; i < 3; i++) {
            __m256d s3[2], a[2];
            sum3_avx2(pv[i], pd[i][0], pd[i][1], n[i] + x, s3);
            pv[i] = pd[i][1];
            for (int h = 0; h < 2; h++) {
                size_t c = (size_t)(x - 1 + 4 * h);
                a[h] = _mm256_add_pd(_mm256_loadu_pd(s[i] + c), s3[h]);
                _mm256_storeu_pd(s[i] + c, _mm256_sub_pd(a[h], _mm256_loadu_pd(o[i] + c)));
            }
            f[i] = _mm256_set_m128(_mm256_cvtpd_ps(a[1]), _mm256_cvtpd_ps(a[0]));
        }
        __m256 fa = _mm256_mul_ps(f[0], half), fc = _mm256_mul_ps(f[2], half), t = _mm256_sub_ps(fa, fc);
        __m256 v = _mm256_sub_ps(_mm256_add_ps(fa, fc),
                                 _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(f[1], f[1]), _mm256_mul_ps(t, t))));
        _mm256_storeu_ps(e + x - 1, v);
        _mm256_storeu_ps(rmax + x - 1, _mm256_max_ps(v, _mm256_loadu_ps(rmax + x - 1))); /* v > rmax ? v : rmax */
    }
    sobel_tail(g0, g1, g2, r0, r2, w, x - 1, n[0], n[1], n[2]); /* the last columns */
    eig_span(n[0], n[1], n[2], o[0], o[1], o[2], s[0], s[1], s[2], x - 1, w, e, rmax);
}
#endif

/* OpenCV's peak test (threshold, 3x3 dilate, equal) of row c, v [w], with
 * the 3-wide maxima of the rows above, at and below (hu, hc, hd: columns
 * 1..w-2): each peak at 1..w-2 above 0 and at least b's floor goes to b.
 * Peaks are sparse: the flags ok [w + 8] are set in a vectorised loop and
 * the scan skips 8 clear ones at a time (the AVX2 build tests 8 columns
 * into one bit mask instead; ok unused). */
static void peaks_row(cands *b, const float *restrict v, const float *restrict hu, const float *restrict hc,
                      const float *restrict hd, int w, int c, unsigned char *restrict ok)
{
    float floor = b->floor;
#if defined(__AVX2__)
    /* the five tests of 8 columns as one bit mask (ordered compares: NaN
     * fails them as the scalar ones do); the columns past the last whole 8
     * below */
    const __m256 vz = _mm256_setzero_ps(), vf = _mm256_set1_ps(floor);
    int x = 1;
    for (; x + 8 <= w - 1; x += 8) {
        __m256 vv = _mm256_loadu_ps(v + x);
        __m256 m = _mm256_and_ps(_mm256_cmp_ps(vv, vz, _CMP_GT_OQ), _mm256_cmp_ps(vv, vf, _CMP_GE_OQ));
        m = _mm256_and_ps(m, _mm256_cmp_ps(vv, _mm256_loadu_ps(hu + x), _CMP_GE_OQ));
        m = _mm256_and_ps(m, _mm256_cmp_ps(vv, _mm256_loadu_ps(hc + x), _CMP_GE_OQ));
        m = _mm256_and_ps(m, _mm256_cmp_ps(vv, _mm256_loadu_ps(hd + x), _CMP_GE_OQ));
        for (unsigned bits = (unsigned)_mm256_movemask_ps(m); bits; bits &= bits - 1) {
            int k = x + __builtin_ctz(bits);
            cands_add(b, (gmc_cand){v[k], c * w + k});
        }
    }
    for (; x < w - 1; x++)
        if ((v[x] > 0) & (v[x] >= floor) & (v[x] >= hu[x]) & (v[x] >= hc[x]) & (v[x] >= hd[x]))
            cands_add(b, (gmc_cand){v[x], c * w + x});
    (void)ok;
#else
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
#endif
}

/* corners' pass over the rows (w, h >= 3): candidates into bs, returns the
 * maximum of the minimum eigenvalue.  One pass down the box filter's
 * source rows rc = 0..h+1, all in row buffers that stay in cache (sc->cs,
 * GMC_CS_ROWS rows of GMC_CS_ROW(w) doubles): Dy's row filters (a ring of
 * 3, by image row), the rows' 3-sums (a ring of 3 by image row, 3
 * products each) and the running sums, the minimum eigenvalue and its
 * row-wise 3-maxima (rings of 3 by output row), then the 3x3 peak test of
 * the output row above. */
static float corner_rows(gmc_scratch *sc, const uint8_t *img, int w, int h, cands *bs)
{
    size_t rs = GMC_CS_ROW(w);
    double *d = sc->cs, *sp[3][3], *sum[3], *p = d + 12 * rs;
    float *f = (float *)(d + 15 * rs), *rp[3], *eig[3], *hm[3], *rmax = f + 9 * rs;
    int rp_row[3] = {-1, -1, -1}; /* which image row's Dy row filter rp[k] holds */
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) sp[r][k] = d + (3 * (size_t)r + (size_t)k) * rs;
        sum[r] = d + (9 + (size_t)r) * rs;
        rp[r] = f + (size_t)r * rs;
        eig[r] = f + (3 + (size_t)r) * rs;
        hm[r] = f + (6 + (size_t)r) * rs;
    }
    for (int x = 0; x < w; x++) rmax[x] = 0;
    for (int rc = 0; rc <= h + 1; rc++) {
        int r = reflect(rc - 1, h), fused_row = 0;
        if (rc <= 1 || (rc >= 3 && rc <= h)) { /* image row r's 3-sums, first needed now */
            int ra = reflect(r - 1, h), rb = reflect(r + 1, h);
            for (int k = 0; k < 2; k++) {
                int q = k ? rb : ra;
                if (rp_row[q % 3] != q) {
                    sobel_dy_row(img + (size_t)q * (size_t)w, w, rp[q % 3]);
                    rp_row[q % 3] = q;
                }
            }
            double **s = sp[r % 3];
            const uint8_t *ga = img + (size_t)ra * (size_t)w, *gr = img + (size_t)r * (size_t)w,
                          *gb = img + (size_t)rb * (size_t)w;
#if defined(__AVX2__) && !defined(__AVX512BW__)
            fused_row = rc >= 3; /* output row rc - 2's eigenvalues with these 3-sums */
            if (fused_row)
                sobel_eig_row(ga, gr, gb, rp[ra % 3], rp[rb % 3], w, s, sp[reflect(rc - 3, h) % 3], sum,
                              eig[(rc - 2) % 3], rmax);
            else
#endif
                sobel_row(ga, gr, gb, rp[ra % 3], rp[rb % 3], w, p, s[0], s[1], s[2]);
        }
        double **n = sp[r % 3];
        if (rc < 2) { /* the running sums start at 0; nothing leaves yet */
            for (int k = 0; k < 3; k++)
                for (int x = 0; x < w; x++) sum[k][x] = rc ? sum[k][x] + n[k][x] : n[k][x];
            continue;
        }
        int y = rc - 2;
        double **o = sp[reflect(rc - 3, h) % 3];
        if (!fused_row)
            eig_span(n[0], n[1], n[2], o[0], o[1], o[2], sum[0], sum[1], sum[2], 0, w, eig[y % 3], rmax);
        hmax_row(eig[y % 3], w, hm[y % 3]);
        /* the peak test of row c = y - 1 (image border excluded) */
        int c = y - 1;
        if (c < 1 || c > h - 2) continue;
        peaks_row(bs, eig[c % 3], hm[(c - 1) % 3], hm[c % 3], hm[y % 3], w, c, sc->ok);
    }
    float maxv = 0;
    for (int x = 0; x < w; x++) maxv = rmax[x] > maxv ? rmax[x] : maxv;
    return maxv;
}

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
#if defined(__AVX2__)
    /* On the grey values g = IMG >> 7 the vertical sums G (<= 4080) fit
     * int16 lanes, and the row's [1 4 6 4 1] at every second column is
     * three multiply-adds of neighbouring pairs ((1, 4), (6, 4), (1, 0))
     * into 32-bit lanes: the same S, (S + 128) >> 8 as above.  v holds the
     * G as int16 [w + 4]. */
    int16_t *restrict g = (int16_t *)v;
    int x = 0;
    for (; x + 16 <= w + 4; x += 16) {
#define GMC_G(r) _mm256_srai_epi16(_mm256_loadu_si256((const __m256i *)((r) + x)), 7)
        __m256i a = _mm256_add_epi16(GMC_G(r0), GMC_G(r4)), b = _mm256_add_epi16(GMC_G(r1), GMC_G(r3)), c = GMC_G(r2);
#undef GMC_G
        __m256i s = _mm256_add_epi16(_mm256_add_epi16(a, _mm256_slli_epi16(b, 2)),
                                     _mm256_add_epi16(_mm256_slli_epi16(c, 2), _mm256_slli_epi16(c, 1)));
        _mm256_storeu_si256((__m256i *)(g + x), s);
    }
    for (; x < w + 4; x++)
        g[x] = (int16_t)((r0[x] >> 7) + 4 * (r1[x] >> 7) + 6 * (r2[x] >> 7) + 4 * (r3[x] >> 7) + (r4[x] >> 7));
    const __m256i k0 = _mm256_set1_epi32(1 | 4 << 16), k1 = _mm256_set1_epi32(6 | 4 << 16), k2 = _mm256_set1_epi32(1);
    const __m256i rnd = _mm256_set1_epi32(128);
    x = 0;
    for (; x + 16 <= ow && 2 * x + 40 <= w + 4; x += 16) { /* reads g[2x .. 2x + 39] */
        __m256i h[2];
        for (int k = 0; k < 2; k++) {
            const int16_t *q = g + 2 * x + 16 * k;
            __m256i t = _mm256_add_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)q), k0),
                                         _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(q + 2)), k1));
            t = _mm256_add_epi32(t, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(q + 4)), k2));
            h[k] = _mm256_srai_epi32(_mm256_add_epi32(t, rnd), 8);
        }
        /* packing interleaves the 128-bit halves: the permute restores the order */
        __m256i r = _mm256_permute4x64_epi64(_mm256_packs_epi32(h[0], h[1]), 0xD8);
        _mm256_storeu_si256((__m256i *)(o + x), _mm256_add_epi16(_mm256_slli_epi16(r, 7), _mm256_set1_epi16(2)));
    }
    for (; x < ow; x++)
        o[x] = (int16_t)IMG((g[2 * x] + 4 * g[2 * x + 1] + 6 * g[2 * x + 2] + 4 * g[2 * x + 3] + g[2 * x + 4] + 128) >> 8);
#else
    for (int x = 0; x < w + 4; x++) v[x] = r0[x] + 4 * r1[x] + 6 * r2[x] + 4 * r3[x] + r4[x];
    for (int x = 0; x < ow; x++) /* v[c + 2] is column c */
        o[x] = (int16_t)IMG((v[2 * x] + 4 * v[2 * x + 1] + 6 * v[2 * x + 2] + 4 * v[2 * x + 3] + v[2 * x + 4] + 15872) >> 15);
#endif
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
