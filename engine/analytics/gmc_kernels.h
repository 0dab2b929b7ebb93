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
 *   int16, sums of products in integers, scaled by 2^-20 into floats).
 * The window's gradient products are summed exactly here, where OpenCV
 * adds them in float lanes, so a point can differ from OpenCV's in the last
 * bits of a float.
 * Included by gmc_generic.c, gmc_avx2.c and gmc_avx512.c (gmc_steps.h), each defining
 * GMC_SUFFIX: the entry points are strix_gmc_frame_<suffix> and
 * strix_gmc_lk_<suffix>; everything else is static.  The float loops are
 * written for the vectoriser (restrict helpers, per-lane sums, no border
 * logic in the interiors) and the compiler's float operations keep their
 * order; Lucas-Kanade's vector paths (AVX2, SSE2, scalar) compute integers
 * exactly: so every build computes the same numbers.
 *
 * Layouts: grey images uint8 [h][w]; pyramid levels are int16 [h][w] with a
 * border of PAD pixels on each side, reflected as OpenCV's
 * BORDER_REFLECT_101 (their gradients: border 0), so a window read never
 * checks bounds. */
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

#define QUALITY 0.01f
#define WIN 21
#define HALF_WIN 10
#define LK_ITERS 30
#define LK_EPS 0.01 /* OpenCV's criteria are double */
#define MIN_EIG 1e-4
#define WINP 24 /* a window row as computed: 21 columns padded to 16 + 8 lanes; the padding's gradients are 0 */
#define PAD GMC_PAD

/* OpenCV's BORDER_REFLECT_101 index (n >= 2) */
static int reflect(int i, int n)
{
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

/* ----------------------------------------------------------- grey frame */

/* OpenCV's grey in fixed point, (R 4899 + G 9617 + B 1868 + 2^13) >> 14, in
 * 16-bit lanes: each weight is 256 hi + lo (4899 = 19.256 + 35, 9617 =
 * 37.256 + 145, 1868 = 7.256 + 76), so the sum is 256 H + L with H = 19R +
 * 37G + 7B <= 16065 and L = 35R + 145G + 76B <= 65280 (the lo weights add
 * up to 256), and (256 H + L + 2^13) >> 14 = (H + (L >> 8) + 32) >> 6
 * exactly.  Twice the lanes of 32-bit arithmetic for the vectoriser.
 * bgr: B comes first.  Two loops with constant offsets, so the compiler
 * vectorises them (aarch64 reads the three channels with one ld3). */
static void grey_row(const uint8_t *p, int n, int bgr, uint16_t *g)
{
    if (!bgr)
        for (int x = 0; x < n; x++) {
            unsigned r = p[3 * x], gr = p[3 * x + 1], b = p[3 * x + 2];
            uint16_t hi = (uint16_t)(r * 19 + gr * 37 + b * 7), lo = (uint16_t)(r * 35 + gr * 145 + b * 76);
            g[x] = (uint16_t)((hi + (lo >> 8) + 32) >> 6);
        }
    else
        for (int x = 0; x < n; x++) {
            unsigned r = p[3 * x + 2], gr = p[3 * x + 1], b = p[3 * x];
            uint16_t hi = (uint16_t)(r * 19 + gr * 37 + b * 7), lo = (uint16_t)(r * 35 + gr * 145 + b * 76);
            g[x] = (uint16_t)((hi + (lo >> 8) + 32) >> 6);
        }
}

#if defined(__AVX2__)
/* x86 with AVX2: the even-size half grey frame 16 outputs at a time.  GCC
 * deinterleaves 3-byte pixels with long shuffle chains; here one byte
 * shuffle per 4 pixels puts (first, second) channel pairs and (third, 1)
 * pairs in 16-bit lanes and one multiply-add each (pmaddwd) gives the
 * 32-bit weighted sum, the rounding 2^13 riding on the constant 1: the same
 * integer as grey_row.  About twice as fast as grey_row at 1080p.  w0, w1,
 * w2: the weights of the three bytes in memory order. */
static __m256i grey16_avx2(const uint8_t *p, __m256i w01, __m256i w2r)
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
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(_mm256_srli_epi32(ga, 14), _mm256_srli_epi32(gb, 14)), 0xD8);
}

/* One output row from source rows r0, r1 (w pixels each); returns how many
 * outputs it wrote (a multiple of 16; the caller does the rest). */
static int grey_half_avx2(const uint8_t *r0, const uint8_t *r1, int w, int bgr, uint8_t *o, int ow)
{
    int w0 = bgr ? 1868 : 4899, w2 = bgr ? 4899 : 1868;
    __m256i w01 = _mm256_set1_epi32(w0 | 9617 << 16), w2r = _mm256_set1_epi32(w2 | 8192 << 16);
    int x = 0;
    /* 32 pixels of each row a step; the last load reads 4 bytes past them, so stop inside the row */
    for (; x + 16 <= ow && 6 * x + 100 <= 3 * w; x += 16) {
        __m256i s0 = _mm256_add_epi16(grey16_avx2(r0 + 6 * x, w01, w2r), grey16_avx2(r1 + 6 * x, w01, w2r));
        __m256i s1 = _mm256_add_epi16(grey16_avx2(r0 + 6 * x + 48, w01, w2r), grey16_avx2(r1 + 6 * x + 48, w01, w2r));
        /* horizontal pairs (hadd works per 128-bit half: permute back), then (sum + 2) >> 2 */
        __m256i q = _mm256_permute4x64_epi64(_mm256_hadd_epi16(s0, s1), 0xD8);
        q = _mm256_srli_epi16(_mm256_add_epi16(q, _mm256_set1_epi16(2)), 2);
        _mm_storeu_si128((__m128i *)(o + x),
                         _mm_packus_epi16(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)));
    }
    return x;
}
#endif

/* Grey, then half size: the rounded mean of each 2x2 block where the size
 * halves exactly (OpenCV's INTER_LINEAR becomes INTER_AREA there), else
 * bilinear with OpenCV's pixel-centre mapping.  rows: [2][w] scratch. */
static void grey_half(const uint8_t *pix, int w, int h, int stride, int bgr, uint8_t *out, int ow, int oh,
                      uint16_t *rows)
{
    uint16_t *g0 = rows, *g1 = rows + w;
    if (ow * 2 == w && oh * 2 == h) {
        for (int y = 0; y < oh; y++) {
            const uint8_t *r0 = pix + (size_t)(2 * y) * (size_t)stride, *r1 = r0 + stride;
            uint8_t *o = out + (size_t)y * (size_t)ow;
            int x = 0;
#if defined(__AVX2__)
            x = grey_half_avx2(r0, r1, w, bgr, o, ow);
#endif
            /* the rest of the row (all of it without AVX2) */
            grey_row(r0 + 6 * x, w - 2 * x, bgr, g0);
            grey_row(r1 + 6 * x, w - 2 * x, bgr, g1);
            for (int k = 0; k < ow - x; k++)
                o[x + k] = (uint8_t)((g0[2 * k] + g0[2 * k + 1] + g1[2 * k] + g1[2 * k + 1] + 2) >> 2);
        }
        return;
    }
    double sx = (double)w / ow, sy = (double)h / oh;
    for (int y = 0; y < oh; y++) {
        double fy = (y + 0.5) * sy - 0.5;
        int y0 = (int)floor(fy);
        double b = fy - y0;
        if (y0 < 0) y0 = 0, b = 0;
        int y1 = y0 + 1 < h ? y0 + 1 : h - 1;
        grey_row(pix + (size_t)y0 * (size_t)stride, w, bgr, g0);
        grey_row(pix + (size_t)y1 * (size_t)stride, w, bgr, g1);
        for (int x = 0; x < ow; x++) {
            double fx = (x + 0.5) * sx - 0.5;
            int x0 = (int)floor(fx);
            double a = fx - x0;
            if (x0 < 0) x0 = 0, a = 0;
            int x1 = x0 + 1 < w ? x0 + 1 : w - 1;
            double v = (1 - b) * ((1 - a) * g0[x0] + a * g0[x1]) + b * ((1 - a) * g1[x0] + a * g1[x1]);
            out[(size_t)y * (size_t)ow + x] = (uint8_t)lrint(v);
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
 * list (floor; 0 until then).  Appending and a selection now and then
 * cost less than keeping a heap of the strongest, as the peaks come. */
typedef struct cands {
    gmc_cand *c;
    int n;
    float floor;
} cands;

static void cands_add(cands *b, gmc_cand k)
{
    b->c[b->n++] = k;
    if (b->n < GMC_CAND_CAP) return;
    cand_select(b->c, b->n, GMC_MAX_CORNERS);
    b->n = GMC_MAX_CORNERS;
    b->floor = b->c[GMC_MAX_CORNERS - 1].v;
}

/* OpenCV's peak test (threshold, 3x3 dilate, equal) of row c, v [w], with
 * the 3-wide maxima of the rows above, at and below (hu, hc, hd: columns
 * 1..w-2): each peak at 1..w-2 above 0 and at least b's floor goes to b.
 * Peaks are sparse: AVX-512 tests 16 columns into a mask and looks at set
 * bits only; the other builds set flags ok [w + 8] in a vectorised loop and
 * skip 8 clear ones at a time. */
static void peaks_row(cands *b, const float *restrict v, const float *restrict hu, const float *restrict hc,
                      const float *restrict hd, int w, int c, unsigned char *restrict ok)
{
#if defined(__AVX512F__)
    (void)ok;
    __m512 zero = _mm512_setzero_ps();
    for (int x = 1; x < w - 1; x += 16) {
        __mmask16 m = _cvtu32_mask16(w - 1 - x >= 16 ? 0xFFFFu : (1u << (w - 1 - x)) - 1);
        __m512 e = _mm512_maskz_loadu_ps(m, v + x);
        m = _mm512_mask_cmp_ps_mask(m, e, zero, _CMP_GT_OQ);
        m = _mm512_mask_cmp_ps_mask(m, e, _mm512_set1_ps(b->floor), _CMP_GE_OQ);
        m = _mm512_mask_cmp_ps_mask(m, e, _mm512_maskz_loadu_ps(m, hu + x), _CMP_GE_OQ);
        m = _mm512_mask_cmp_ps_mask(m, e, _mm512_maskz_loadu_ps(m, hc + x), _CMP_GE_OQ);
        m = _mm512_mask_cmp_ps_mask(m, e, _mm512_maskz_loadu_ps(m, hd + x), _CMP_GE_OQ);
        for (unsigned bits = _cvtmask16_u32(m); bits; bits &= bits - 1) {
            int k = x + __builtin_ctz(bits);
            cands_add(b, (gmc_cand){v[k], c * w + k});
        }
    }
#else
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
#endif
}

/* goodFeaturesToTrack on img [h][w] (w, h >= 3): up to GMC_MAX_CORNERS (x, y)
 * into pts; returns the count.  One pass down the rows, all in row buffers
 * that stay in cache: the tensor's row sums (a ring of 3 rows), summed
 * down the columns into the minimum eigenvalue (a ring of 3 rows), its
 * row-wise 3-maxima (a ring of 3), then the 3x3 peak test of the row
 * above.  OpenCV keeps the peaks above 1% of the global maximum, not known
 * until the end, then the strongest 400: here the strongest 400 peaks
 * above 0 are kept as they come (the 1% threshold is >= 0, and the
 * peaks above it are the strongest ones, so the strongest 400 of those
 * are the ones of the 400 that pass it: cands), and a peak weaker than
 * the floor cands keeps is dropped in the vectorised test, so few flags
 * are set and the scan skips 8 at a time. */
static int corners(gmc_scratch *sc, const uint8_t *img, int w, int h, float *pts)
{
    float *s = sc->cs, *ring[3][3], *eig[3], *hm[3], *p = s + 15 * (size_t)w, *rmax = s + 18 * (size_t)w;
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++) ring[r][k] = s + (size_t)(3 * r + k) * (size_t)w;
        eig[r] = s + (size_t)(9 + r) * (size_t)w;
        hm[r] = s + (size_t)(12 + r) * (size_t)w;
    }
    unsigned char *ok = sc->ok;
    cands bs = {sc->cand, 0, 0};
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
        const float *v = eig[c % 3];
        peaks_row(&bs, v, hm[(c - 1) % 3], hm[c % 3], hd, w, c, ok);
    }
    float maxv = 0;
    for (int x = 0; x < w; x++) maxv = rmax[x] > maxv ? rmax[x] : maxv;
    float thresh = maxv * QUALITY;
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
    return nc;
}

/* ---------------------------------------------------------------- pyramid */

/* The level's three planes in one block; zeroed, so the gradients' border
 * is 0 from the start (only their interior is written after). */
static int level_alloc(gmc_level *l, int w, int h)
{
    int pw = w + 2 * PAD;
    if (l->w == w && l->h == h && l->img) return 0;
    free(l->img);
    size_t n = (size_t)pw * (size_t)(h + 2 * PAD);
    l->img = calloc(3 * n, sizeof *l->img);
    l->dx = l->img ? l->img + n : NULL;
    l->dy = l->img ? l->img + 2 * n : NULL;
    l->w = w;
    l->h = h;
    l->pw = pw;
    return l->img ? 0 : -1;
}

/* One row of pyrDown's horizontal pass: o[x] = (row * [1 4 6 4 1])(2x),
 * rounded / 256, reflected at the ends (w >= 3).  The interior without
 * border logic, so it vectorises. */
static void pyr_row(const int *restrict row, int w, uint8_t *restrict o, int ow)
{
    int xe = (w - 3) / 2; /* last x with 2x + 2 <= w - 1 */
    for (int x = 1; x <= xe; x++) {
        int c = 2 * x;
        o[x] = (uint8_t)((row[c - 2] + 4 * row[c - 1] + 6 * row[c] + 4 * row[c + 1] + row[c + 2] + 128) >> 8);
    }
    for (int x = 0; x < ow; x = x ? x + 1 : xe + 1) {
        int c = 2 * x;
        int s = row[reflect(c - 2, w)] + 4 * row[reflect(c - 1, w)] + 6 * row[c] + 4 * row[reflect(c + 1, w)] +
                row[reflect(c + 2, w)];
        o[x] = (uint8_t)((s + 128) >> 8);
    }
}

/* pyrDown: 5x5 Gaussian [1 4 6 4 1]^2 / 256, reflected borders, rounded
 * (w, h >= 3).  row: [w] scratch. */
static void pyr_down(const uint8_t *src, int w, int h, uint8_t *dst, int ow, int oh, int *row)
{
    for (int y = 0; y < oh; y++) {
        const uint8_t *r[5];
        for (int i = 0; i < 5; i++) r[i] = src + (size_t)reflect(2 * y + i - 2, h) * (size_t)w;
        for (int x = 0; x < w; x++) row[x] = r[0][x] + 4 * r[1][x] + 6 * r[2][x] + 4 * r[3][x] + r[4][x];
        pyr_row(row, w, dst + (size_t)y * (size_t)ow, ow);
    }
}

/* Fill a level's image from grey img [h][w], with its reflected border. */
static void level_fill(gmc_level *l, const uint8_t *img)
{
    int w = l->w, h = l->h, pw = l->pw;
    for (int y = 0; y < h; y++) {
        const uint8_t *restrict r = img + (size_t)y * (size_t)w;
        int16_t *restrict o = l->img + (size_t)(y + PAD) * (size_t)pw + PAD;
        for (int x = 0; x < w; x++) o[x] = r[x];
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
    for (int y = 1; y <= PAD; y++) {
        memcpy(l->img + (size_t)(PAD - y) * (size_t)pw, l->img + (size_t)(PAD + reflect(-y, h)) * (size_t)pw,
               sizeof *l->img * (size_t)pw);
        memcpy(l->img + (size_t)(PAD + h - 1 + y) * (size_t)pw,
               l->img + (size_t)(PAD + reflect(h - 1 + y, h)) * (size_t)pw, sizeof *l->img * (size_t)pw);
    }
}

/* Scharr's first pass over one row, columns -1..w (n = w + 2): vs = [3 10 3]
 * down the columns of rows a, b, c (above, at, below), d = c - a.  int16
 * lanes: |vs| <= 16 * 255. */
static void scharr_vertical(const int16_t *restrict a, const int16_t *restrict b, const int16_t *restrict c, int n,
                            int16_t *restrict vs, int16_t *restrict d)
{
    for (int x = 0; x < n; x++) {
        vs[x] = (int16_t)((a[x] + c[x]) * 3 + b[x] * 10);
        d[x] = (int16_t)(c[x] - a[x]);
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

/* The level's gradients as OpenCV's calcSharrDeriv makes them: [3 10 3]
 * smoothing across, central difference along, on the image with its
 * reflected border (its border rows and columns are the reflection, so the
 * edge pixels need no other case).  sch: [2][w + 2] scratch. */
static void level_gradients(gmc_level *l, int16_t *sch)
{
    int w = l->w, pw = l->pw;
    int16_t *vs = sch, *d = sch + w + 2;
    for (int y = 0; y < l->h; y++) {
        size_t o = (size_t)(y + PAD) * (size_t)pw + PAD;
        const int16_t *b = l->img + o - 1;
        scharr_vertical(b - pw, b, b + pw, w + 2, vs, d);
        scharr_horizontal(vs, d, w, l->dx + o, l->dy + o);
    }
}

/* The pyramid of grey img [h][w]; tmp: scratch for the smaller levels.
 * Returns -1 on OOM. */
static int pyramid_build(gmc_pyramid *p, const uint8_t *img, int w, int h, gmc_scratch *s)
{
    p->n = 0;
    const uint8_t *src = img;
    uint8_t *bufs[2] = {s->tmp8, s->tmp8 + (size_t)w * (size_t)h / 2 + 1};
    for (int lv = 0; lv <= GMC_MAX_LEVEL; lv++) {
        if (w <= WIN || h <= WIN) break; /* OpenCV stops where the window no longer fits */
        if (level_alloc(&p->lv[lv], w, h)) return -1;
        level_fill(&p->lv[lv], src);
        level_gradients(&p->lv[lv], s->sch);
        p->n = lv + 1;
        int ow = (w + 1) / 2, oh = (h + 1) / 2;
        if (lv == GMC_MAX_LEVEL) break;
        uint8_t *dst = bufs[lv & 1];
        pyr_down(src, w, h, dst, ow, oh, s->row);
        src = dst;
        w = ow;
        h = oh;
    }
    return 0;
}

/* -------------------------------------------------------- Lucas-Kanade */

#include "gmc_lk_kernels.h"

/* ------------------------------------------------------------ entry points */

int GMC_CAT(strix_gmc_frame_, GMC_SUFFIX)(gmc_scratch *s, gmc_pyramid *cur, const uint8_t *pix, int width,
                                          int height, int stride, int bgr, float *pts)
{
    int w = width / 2, h = height / 2;
    grey_half(pix, width, height, stride, bgr, s->grey, w, h, s->rows);
    int nc = corners(s, s->grey, w, h, pts);
    return pyramid_build(cur, s->grey, w, h, s) ? -1 : nc;
}

void GMC_CAT(strix_gmc_lk_, GMC_SUFFIX)(const gmc_pyramid *prev, const gmc_pyramid *cur, const float *pts, int n,
                                        float *next, unsigned char *status)
{
    lk(prev, cur, pts, n, next, status);
}
