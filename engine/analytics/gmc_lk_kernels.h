/* gmc_lk_kernels.h — pyramidal Lucas-Kanade of GMC's steps, the
 * calcOpticalFlowPyrLK part of gmc_kernels.h: included by it (after the
 * pyramid, whose levels it reads), once per instruction-set build, with its
 * constants (WIN, HALF_WIN, PAD, LK_*) and helpers in scope.  Not a header
 * of its own: every function here is static to the including build. */

/* OpenCV's fixed point: bilinear weights with 14 fractional bits; the
 * image interpolated to 5 fractional bits (the image x 32), gradients to
 * none, each rounded to int16; the window's products are integers, summed
 * in floats in OpenCV's order (sums_A, sums_b).
 * The image is interpolated from its IMG values, 128 v + 2: with weights
 * summing to 2^14 the sum is 2^7 (S + 2^8) for OpenCV's sum S over v, so
 * its high 16 bits are OpenCV's (S + 2^8) >> 9, rounding term and shift
 * included (the sum stays below 2^14 x 32642 < 2^31).
 * The windows are integers in every build, and the float sums over them
 * one fixed order, so every build gives the same numbers.  Ranges: image
 * x 32 <= 8160, |gradient| <= 4080, so a pair of products of (J - I) and a
 * gradient, <= 2 x 8160 x 4080, fits int32. */
#define W_BITS 14

/* The AVX2 build sets a window up in one pass (window_begin: the window,
 * A's sums and sums_b's gradient pairs row by row, level 0's gradients
 * made in registers); the other builds in steps (window_gradients,
 * window_setup, sums_A, grad_pairs). */
#if defined(__AVX2__) && !defined(__AVX512BW__)
#define LK_AVX2 1
#else
#define LK_AVX2 0
#endif

/* COPY: at a whole pixel the weights are (2^14, 0, 0, 0), and interpolating
 * there gives the values themselves: IMG(p) >> 2 = 32 p and
 * (g 2^14 + 2^13) >> 14 = g for every integer p, g (the rounding term is
 * below one unit of the shift).  Level 0's windows start at whole pixels
 * (goodFeaturesToTrack's corners), so its set-ups copy instead. */

/* A window's top-left corner (px, py) on level L: its whole pixel (ix, iy)
 * and bilinear weights w (top-left, top-right, bottom-left, bottom-right,
 * summing to 2^14, rounded as OpenCV's cvRound: to nearest even); 0 when it
 * lies too far outside the level (OpenCV's test). */
static GMC_INLINE int window_at(const gmc_level *L, float px, float py, int *ix, int *iy, int w[4])
{
    *ix = (int)floorf(px);
    *iy = (int)floorf(py);
    if (*ix < -WIN || *ix >= L->w || *iy < -WIN || *iy >= L->h) return 0;
    float a = px - (float)*ix, b = py - (float)*iy;
    w[0] = (int)lrintf((1.f - a) * (1.f - b) * (float)(1 << W_BITS));
    w[1] = (int)lrintf(a * (1.f - b) * (float)(1 << W_BITS));
    w[2] = (int)lrintf((1.f - a) * b * (float)(1 << W_BITS));
    w[3] = (1 << W_BITS) - w[0] - w[1] - w[2];
    return 1;
}

/* A window as LK keeps it (iw, gx, gy: int16 [WSTORE]): in the AVX-512
 * build one 32-lane vector a row, [WIN][32]; in the SSE2 and AVX2 builds
 * columns 0..15 of each row [WIN][16], then columns 16..23 [WIN][8] (the
 * AVX2 build computes the last columns of two rows as one 16-lane vector);
 * elsewhere row-major [WIN][WINP].  The gradients of the columns past 20
 * are 0, so those columns add nothing to any sum. */
#define WMAIN 16
#define WTAIL (WIN * WMAIN)
#if defined(__AVX512BW__)
#define WSTORE (WIN * 32)
#else
#define WSTORE (WIN * WINP)
#endif

#if !defined(__SSE2__)
/* One window row's WINP values interpolated at p[0..] (p[x + 1] the right
 * neighbour, p[x + st] the one below) into o: img 1 rounds to the image x
 * 32, 0 to whole gradients.  What the vector paths compute in 16-bit lanes,
 * as plain loops the vectoriser takes (NEON: widening multiply-adds); this
 * build keeps a window row-major, [WIN][WINP]. */
static void bil_row(const int16_t *restrict p, ptrdiff_t st, const int w[4], int img, int16_t *restrict o)
{
    const int16_t *restrict q = p + st;
    int w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
    if (!w1 && !w2 && !w3) /* COPY */
        for (int x = 0; x < WINP; x++) o[x] = (int16_t)(img ? p[x] >> 2 : p[x]);
    else if (img)
        for (int x = 0; x < WINP; x++) o[x] = (int16_t)((p[x] * w0 + p[x + 1] * w1 + q[x] * w2 + q[x + 1] * w3) >> 16);
    else
        for (int x = 0; x < WINP; x++)
            o[x] = (int16_t)((p[x] * w0 + p[x + 1] * w1 + q[x] * w2 + q[x + 1] * w3 + (1 << (W_BITS - 1))) >> W_BITS);
}
#endif

#if defined(__SSE2__)
/* Two weights as the 16-bit pair a multiply-add takes (lo first). */
static int32_t wpair(int lo, int hi) { return (int32_t)((uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16); }

/* bil_row for 8 neighbours (p[0..7]) in 16-bit lanes: each lane's four pixels
 * paired with their weights (w0: top pair, w1: bottom pair), one
 * multiply-add per row; packing the low and high halves back restores the
 * order.  The results fit int16, so the pack never saturates. */
static GMC_INLINE __m128i bil8(const int16_t *p, ptrdiff_t st, __m128i w0, __m128i w1, int img)
{
    __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 1));
    __m128i c = _mm_loadu_si128((const __m128i *)(p + st)), d = _mm_loadu_si128((const __m128i *)(p + st + 1));
    __m128i lo = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(a, b), w0), _mm_madd_epi16(_mm_unpacklo_epi16(c, d), w1));
    __m128i hi = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(a, b), w0), _mm_madd_epi16(_mm_unpackhi_epi16(c, d), w1));
    if (img) {
        lo = _mm_srai_epi32(lo, 16);
        hi = _mm_srai_epi32(hi, 16);
    } else {
        __m128i r = _mm_set1_epi32(1 << (W_BITS - 1));
        lo = _mm_srai_epi32(_mm_add_epi32(lo, r), W_BITS);
        hi = _mm_srai_epi32(_mm_add_epi32(hi, r), W_BITS);
    }
    return _mm_packs_epi32(lo, hi);
}

#endif

/* The AVX2 and AVX-512 paths interpolate without shuffles: a multiply-add
 * of the values as loaded takes the pairs (2i, 2i + 1), so the top row
 * loaded from its first column (t0) gives the even columns (column 2i from
 * its pixel and right neighbour), loaded from its second (t1) the odd
 * ones, each with the bottom row's (b0, b1), in 32-bit lanes.  After the
 * rounding shift each fits int16: the even ones are the low halves of
 * their lanes, the odd ones are shifted into the high halves (bits s..s+15
 * of the sum moved to 16..31), and one blend of 16-bit lanes puts the
 * columns back in order. */
#if defined(__AVX2__) && !defined(__AVX512BW__)
/* The even/odd interpolation in 16 lanes (img: of IMG values, each value
 * the high half of its sum). */
static GMC_INLINE __m256i bil16(__m256i t0, __m256i t1, __m256i b0, __m256i b1, __m256i w0, __m256i w1, int img)
{
    __m256i ev = _mm256_add_epi32(_mm256_madd_epi16(t0, w0), _mm256_madd_epi16(b0, w1));
    __m256i od = _mm256_add_epi32(_mm256_madd_epi16(t1, w0), _mm256_madd_epi16(b1, w1));
    if (img) return _mm256_blend_epi16(_mm256_srli_epi32(ev, 16), od, 0xAA);
    __m256i r = _mm256_set1_epi32(1 << (W_BITS - 1));
    ev = _mm256_srai_epi32(_mm256_add_epi32(ev, r), W_BITS);
    od = _mm256_slli_epi32(_mm256_add_epi32(od, r), 16 - W_BITS);
    return _mm256_blend_epi16(ev, od, 0xAA);
}

/* bil16 of p[0..7] and of the row below's p[st..st + 7], in the low and
 * high halves: the window's last columns of two rows in one vector. */
static GMC_INLINE __m256i bil_pair(const int16_t *p, ptrdiff_t st, __m256i w0, __m256i w1, int img)
{
    __m256i t0 = _mm256_loadu2_m128i((const __m128i *)(p + st), (const __m128i *)p);
    __m256i t1 = _mm256_loadu2_m128i((const __m128i *)(p + st + 1), (const __m128i *)(p + 1));
    __m256i b0 = _mm256_loadu2_m128i((const __m128i *)(p + 2 * st), (const __m128i *)(p + st));
    __m256i b1 = _mm256_loadu2_m128i((const __m128i *)(p + 2 * st + 1), (const __m128i *)(p + st + 1));
    return bil16(t0, t1, b0, b1, w0, w1, img);
}
#endif

#if defined(__AVX512BW__)
/* AVX-512: a window row is one 32-lane vector.  A row reads 33 values from
 * its first column (ix + PAD >= PAD - WIN), so up to 7 past the plane's
 * right border on the last columns (ix < w): into the next row's left
 * border, which exists also after the window's last row (PAD > WIN), so
 * every read stays inside the level's planes.  Values from past the border
 * (the row's 27th on) feed only the window's columns past 25, whose
 * gradients are 0. */
_Static_assert(PAD > WIN, "a window row's 33 values must stay inside the level's planes");

/* acc + the multiply-add of a and b's 16-bit pairs, in 32-bit lanes: one
 * VNNI instruction (it wraps where it would pass int32, which no sum here
 * does, so it is exact). */
static GMC_INLINE __m512i madd_acc(__m512i acc, __m512i a, __m512i b) { return _mm512_dpwssd_epi32(acc, a, b); }

/* The even/odd interpolation in 32 lanes.  img: of IMG values, each value
 * the high half of its sum (one shift, no rounding term: four instructions
 * a row fewer than the gradients' form in Lucas-Kanade's hottest loop).
 * Gradients: the rounding term first; their columns past 20 come back 0
 * (the shifts' zero masks: the even columns' lanes 11..15, the odd ones'
 * 10..15). */
static GMC_INLINE __m512i bil32(__m512i t0, __m512i t1, __m512i b0, __m512i b1, __m512i w0, __m512i w1, int img)
{
    if (img) {
        __m512i ev = madd_acc(_mm512_madd_epi16(t0, w0), b0, w1), od = madd_acc(_mm512_madd_epi16(t1, w0), b1, w1);
        return _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_srli_epi32(ev, 16), od);
    }
    __m512i r = _mm512_set1_epi32(1 << (W_BITS - 1));
    __m512i ev = madd_acc(madd_acc(r, t0, w0), b0, w1), od = madd_acc(madd_acc(r, t1, w0), b1, w1);
    return _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_maskz_srai_epi32((1u << 11) - 1, ev, W_BITS),
                                   _mm512_maskz_slli_epi32((1u << 10) - 1, od, 16 - W_BITS));
}


/* Window row r of the image (x 32) and the gradients (columns 21..31 0), stored. */
static GMC_INLINE void setup_row(int16_t *iw, int16_t *gx, int16_t *gy, int r, __m512i I, __m512i X, __m512i Y)
{
    _mm512_store_si512(iw + r * 32, I);
    _mm512_store_si512(gx + r * 32, X);
    _mm512_store_si512(gy + r * 32, Y);
}
#endif

#if defined(__SSE2__) && !defined(__AVX2__)
/* Window row y's columns 16..23 (the gradients' 21..23 0), stored. */
static GMC_INLINE void setup_tail(int16_t *iw, int16_t *gx, int16_t *gy, int y, __m128i I, __m128i X, __m128i Y)
{
    _mm_storeu_si128((__m128i *)(iw + WTAIL + y * 8), I);
    _mm_storeu_si128((__m128i *)(gx + WTAIL + y * 8), X);
    _mm_storeu_si128((__m128i *)(gy + WTAIL + y * 8), Y);
}
#endif

#if !LK_AVX2
/* One row of window_gradients, all 32 columns: the Scharr sums of image
 * rows a, b, c (above, at, below; IMG values) at columns 0..31 (reading
 * -1..32), each and-ed with its column's mask m (0 or -1).  Its own
 * function with restrict rows, a fixed count and no branch, so that every
 * build vectorises it (16-bit lanes: every value fits, |v| <= 4080; a
 * difference of IMG values is 128 times the grey values' and fits too). */
static void gradient_row32(const int16_t *restrict a, const int16_t *restrict b, const int16_t *restrict c,
                           const int16_t *restrict m, int16_t *restrict ox, int16_t *restrict oy)
{
    for (int x = 0; x < 32; x++) {
        int16_t da = (int16_t)(a[x + 1] - a[x - 1]) >> 7, db = (int16_t)(b[x + 1] - b[x - 1]) >> 7,
                dc = (int16_t)(c[x + 1] - c[x - 1]) >> 7;
        int16_t dl = (int16_t)(c[x - 1] - a[x - 1]) >> 7, dm = (int16_t)(c[x] - a[x]) >> 7,
                dr = (int16_t)(c[x + 1] - a[x + 1]) >> 7;
        ox[x] = (int16_t)(((da + dc) * 3 + db * 10) & m[x]);
        oy[x] = (int16_t)(((dl + dr) * 3 + dm * 10) & m[x]);
    }
}

/* Level 0's gradients over the window at whole pixel (ix, iy), where
 * Lucas-Kanade reads them (level 0 keeps no gradient planes: its windows
 * are the only place they are used, and made here they never go through
 * memory): OpenCV's calcSharrDeriv sums of the image with its reflected
 * border, 0 outside the image (OpenCV's border for the gradients) and past
 * the window's column 20.  gx, gy: [WIN][32].  The rows read 34 values
 * from column ix - 1, inside the planes as a window row of the AVX-512
 * build is (PAD > WIN). */
static void window_gradients(const gmc_level *L, int ix, int iy, int16_t *restrict gx, int16_t *restrict gy)
{
    ptrdiff_t st = L->pw;
    int c0 = ix < 0 ? -ix : 0, c1 = L->w - ix < WIN ? L->w - ix : WIN; /* the columns inside the image */
    int16_t m[32];
    for (int x = 0; x < 32; x++) m[x] = (int16_t)(x >= c0 && x < c1 ? -1 : 0);
    for (int r = 0; r < WIN; r++) {
        int16_t *ox = gx + r * 32, *oy = gy + r * 32;
        if (iy + r < 0 || iy + r >= L->h) {
            memset(ox, 0, 32 * sizeof *ox);
            memset(oy, 0, 32 * sizeof *oy);
            continue;
        }
        const int16_t *b = L->img + (size_t)(iy + r + PAD) * (size_t)st + (size_t)(ix + PAD);
        gradient_row32(b - st, b, b + st, m, ox, oy);
    }
}

/* The previous frame's window at (ix, iy) of level L with weights wt: the
 * image x 32 and the gradients (iw, gx, gy: the layout above).  The
 * gradients come from L's planes, or, where g is not NULL (level 0, whose
 * windows start at whole pixels: wt is COPY), from g's window_gradients
 * [2][WIN][32]. */
static void window_setup(const gmc_level *L, int ix, int iy, const int wt[4], const int16_t *g, int16_t *restrict iw,
                         int16_t *restrict gx, int16_t *restrict gy)
{
    ptrdiff_t st = L->pw, gs = g ? 32 : st; /* rows of the image, of the gradients */
    size_t o = (size_t)(iy + PAD) * (size_t)st + (size_t)(ix + PAD);
    const int16_t *pl[3] = {L->img + o, g ? g : L->dx + o, g ? g + WIN * 32 : L->dy + o}; /* image, gx, gy */
    int copy = !wt[1] && !wt[2] && !wt[3];                                                 /* COPY */
#if defined(__AVX512BW__)
    const __mmask32 keep = ((__mmask32)1 << WIN) - 1;
    if (copy) {
        for (int r = 0; r < WIN; r++) {
            size_t k = (size_t)r * (size_t)st, kg = (size_t)r * (size_t)gs;
            setup_row(iw, gx, gy, r, _mm512_srli_epi16(_mm512_loadu_si512(pl[0] + k), 2),
                      _mm512_maskz_loadu_epi16(keep, pl[1] + kg), _mm512_maskz_loadu_epi16(keep, pl[2] + kg));
        }
    } else {
        __m512i v0 = _mm512_set1_epi32(wpair(wt[0], wt[1])), v1 = _mm512_set1_epi32(wpair(wt[2], wt[3]));
        /* each plane's image row is the bottom row of one window row and the top row of the next: loaded once */
        __m512i u[3][2];
        for (int k = 0; k < 3; k++) {
            u[k][0] = _mm512_loadu_si512(pl[k]);
            u[k][1] = _mm512_loadu_si512(pl[k] + 1);
        }
        for (int r = 0; r < WIN; r++) {
            __m512i v[3];
            for (int k = 0; k < 3; k++) {
                const int16_t *q = pl[k] + (size_t)(r + 1) * (size_t)st;
                __m512i n0 = _mm512_loadu_si512(q), n1 = _mm512_loadu_si512(q + 1);
                v[k] = bil32(u[k][0], u[k][1], n0, n1, v0, v1, k == 0);
                u[k][0] = n0;
                u[k][1] = n1;
            }
            setup_row(iw, gx, gy, r, v[0], v[1], v[2]);
        }
    }
#elif defined(__SSE2__)
    const __m128i keep = _mm_setr_epi16(-1, -1, -1, -1, -1, 0, 0, 0); /* columns 16..20 of 16..23 */
    if (copy) {
        for (int r = 0; r < WIN; r++) {
            size_t k = (size_t)r * (size_t)st, kg = (size_t)r * (size_t)gs;
            for (int x = 0; x < WMAIN; x += 8) {
                _mm_storeu_si128((__m128i *)(iw + r * WMAIN + x),
                                 _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(pl[0] + k + x)), 2));
                _mm_storeu_si128((__m128i *)(gx + r * WMAIN + x), _mm_loadu_si128((const __m128i *)(pl[1] + kg + x)));
                _mm_storeu_si128((__m128i *)(gy + r * WMAIN + x), _mm_loadu_si128((const __m128i *)(pl[2] + kg + x)));
            }
            k += WMAIN;
            kg += WMAIN;
            setup_tail(iw, gx, gy, r, _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(pl[0] + k)), 2),
                       _mm_and_si128(_mm_loadu_si128((const __m128i *)(pl[1] + kg)), keep),
                       _mm_and_si128(_mm_loadu_si128((const __m128i *)(pl[2] + kg)), keep));
        }
    } else {
        __m128i w0 = _mm_set1_epi32(wpair(wt[0], wt[1])), w1 = _mm_set1_epi32(wpair(wt[2], wt[3]));
        for (int r = 0; r < WIN; r++)
            for (int x = 0; x < WMAIN; x += 8) {
                size_t k = (size_t)r * (size_t)st + (size_t)x;
                _mm_storeu_si128((__m128i *)(iw + r * WMAIN + x), bil8(pl[0] + k, st, w0, w1, 1));
                _mm_storeu_si128((__m128i *)(gx + r * WMAIN + x), bil8(pl[1] + k, st, w0, w1, 0));
                _mm_storeu_si128((__m128i *)(gy + r * WMAIN + x), bil8(pl[2] + k, st, w0, w1, 0));
            }
        for (int y = 0; y < WIN; y++) { /* the last columns row by row */
            size_t k = (size_t)y * (size_t)st + WMAIN;
            setup_tail(iw, gx, gy, y, bil8(pl[0] + k, st, w0, w1, 1),
                       _mm_and_si128(bil8(pl[1] + k, st, w0, w1, 0), keep),
                       _mm_and_si128(bil8(pl[2] + k, st, w0, w1, 0), keep));
        }
    }
#else
    (void)copy; /* bil_row copies where the weights say so */
    for (int y = 0; y < WIN; y++) {
        int16_t *rx = gx + y * WINP, *ry = gy + y * WINP;
        size_t k = (size_t)y * (size_t)st, kg = (size_t)y * (size_t)gs;
        bil_row(pl[0] + k, st, wt, 1, iw + y * WINP);
        bil_row(pl[1] + kg, gs, wt, 0, rx);
        bil_row(pl[2] + kg, gs, wt, 0, ry);
        for (int x = WIN; x < WINP; x++) rx[x] = ry[x] = 0;
    }
#endif
}
#endif

#if !LK_AVX2
/* The current frame's window at (jx, jy) of level J with weights wt,
 * interpolated as window_setup's image (x 32), into jw (the layout above). */
static void window_next(const gmc_level *J, int jx, int jy, const int wt[4], int16_t *restrict jw)
{
    ptrdiff_t st = J->pw;
    const int16_t *jp = J->img + (size_t)(jy + PAD) * (size_t)st + (size_t)(jx + PAD);
#if defined(__AVX512BW__)
    __m512i v0 = _mm512_set1_epi32(wpair(wt[0], wt[1])), v1 = _mm512_set1_epi32(wpair(wt[2], wt[3]));
    /* each image row is the bottom row of one window row and the top row of the next: loaded once */
    __m512i t0 = _mm512_loadu_si512(jp), t1 = _mm512_loadu_si512(jp + 1);
    for (int r = 0; r < WIN; r++) {
        const int16_t *q = jp + (size_t)(r + 1) * (size_t)st;
        __m512i n0 = _mm512_loadu_si512(q), n1 = _mm512_loadu_si512(q + 1);
        _mm512_store_si512(jw + r * 32, bil32(t0, t1, n0, n1, v0, v1, 1));
        t0 = n0;
        t1 = n1;
    }
#elif defined(__SSE2__)
    __m128i w0 = _mm_set1_epi32(wpair(wt[0], wt[1])), w1 = _mm_set1_epi32(wpair(wt[2], wt[3]));
    for (int r = 0; r < WIN; r++)
        for (int x = 0; x < WMAIN; x += 8)
            _mm_storeu_si128((__m128i *)(jw + r * WMAIN + x),
                             bil8(jp + (size_t)r * (size_t)st + (size_t)x, st, w0, w1, 1));
    for (int y = 0; y < WIN; y++) /* the last columns row by row */
        _mm_storeu_si128((__m128i *)(jw + WTAIL + y * 8), bil8(jp + (size_t)y * (size_t)st + WMAIN, st, w0, w1, 1));
#else
    for (int y = 0; y < WIN; y++) bil_row(jp + (size_t)y * (size_t)st, st, wt, 1, jw + y * WINP);
#endif
}
#endif

/* Where window row r's columns 0..15 (MAIN) and 16..20 (TAIL) lie in the
 * layout above. */
#if defined(__AVX512BW__)
#define MAIN(r) ((r) * 32)
#define TAIL(r) ((r) * 32 + WMAIN)
#elif defined(__SSE2__)
#define MAIN(r) ((r) * WMAIN)
#define TAIL(r) (WTAIL + (r) * 8)
#else
#define MAIN(r) ((r) * WINP)
#define TAIL(r) ((r) * WINP + WMAIN)
#endif

/* OpenCV's sums over a window are float sums in the order its SSE2 code
 * adds (its x86 build, where no wider code is dispatched for
 * Lucas-Kanade): each window row's columns 0..15 in four float lanes,
 * column 16..20 in one float; the lanes summed at the end.  Every product
 * is an exact integer; the float additions round, so only this order
 * gives OpenCV's points to the bit (the exact integer sums gave a
 * different last bit on about half the points).  Written as plain float
 * loops over 4 lanes: every build computes the same numbers.
 *
 * A = the sums of gx^2, gx gy, gy^2: lane k adds columns k, k + 4, k + 8,
 * k + 12 of each row in turn; OpenCV's lane sum is (l0 + l2) + (l1 + l3),
 * added to the columns 16..20's sum.  Products below 2^24: exact floats. */
#if defined(__SSE2__)
/* |v| of int32 lanes (SSE2 has no abs) */
static GMC_INLINE __m128i abs32(__m128i v)
{
    __m128i m = _mm_srai_epi32(v, 31);
    return _mm_sub_epi32(_mm_xor_si128(v, m), m);
}

#if defined(__AVX2__)
/* One block of 8 columns of a window row (X, Y: its gx, gy) added to A's
 * lanes: the gx^2 and gy^2 lanes side by side in one 8-lane vector (l02:
 * gx^2 low, gy^2 high), the 8 columns' products made in one multiply-add
 * (columns c..c+3 low, c+4..c+7 high) and added half after half, the
 * gx gy lanes in l1: each lane's chain as above. */
static GMC_INLINE void a_block(__m128i X, __m128i Y, __m256 *l02, __m128 *l1)
{
    __m256i px = _mm256_cvtepu16_epi32(X), py = _mm256_cvtepu16_epi32(Y); /* (v, 0) pairs: v^2 from a multiply-add */
    __m256 sx = _mm256_cvtepi32_ps(_mm256_madd_epi16(px, px)), sy = _mm256_cvtepi32_ps(_mm256_madd_epi16(py, py));
    __m256 xy = _mm256_cvtepi32_ps(_mm256_madd_epi16(px, py));
    *l02 = _mm256_add_ps(*l02, _mm256_permute2f128_ps(sx, sy, 0x20));
    *l02 = _mm256_add_ps(*l02, _mm256_permute2f128_ps(sx, sy, 0x31));
    *l1 = _mm_add_ps(*l1, _mm256_castps256_ps128(xy));
    *l1 = _mm_add_ps(*l1, _mm256_extractf128_ps(xy, 1));
}
#endif

/* OpenCV's sum of four float lanes: (l0 + l2) + (l1 + l3) */
static GMC_INLINE float lane_sum(__m128 l)
{
    __m128 p = _mm_add_ps(l, _mm_movehl_ps(l, l));
    return _mm_cvtss_f32(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)));
}

#if !LK_AVX2
/* The lanes as four float lanes (the products exact in integers first);
 * the last columns' chains one addition at a time, or, where the sum of
 * their magnitudes stays within 2^24 (every partial sum then an integer a
 * float holds), as their integer sums (see sums_b_end). */
static void sums_A(const int16_t *restrict gx, const int16_t *restrict gy, float A[3])
{
    const __m128i z = _mm_setzero_si128();
    __m128 l[3] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    __m128i t[3] = {z, z, z}, m = z; /* the last columns' sums, |gx gy|'s */
#if defined(__AVX2__)
    __m256 l02 = _mm256_setzero_ps(); /* a_block's */
#endif
    for (int r = 0; r < WIN; r++) {
        for (int c = 0; c < WMAIN; c += 8) {
            __m128i X = _mm_loadu_si128((const __m128i *)(gx + MAIN(r) + c));
            __m128i Y = _mm_loadu_si128((const __m128i *)(gy + MAIN(r) + c));
#if defined(__AVX2__)
            a_block(X, Y, &l02, &l[1]);
#else
            for (int h = 0; h < 2; h++) { /* columns c..c+3, then c+4..c+7 */
                __m128i x = h ? _mm_unpackhi_epi16(X, z) : _mm_unpacklo_epi16(X, z);
                __m128i y = h ? _mm_unpackhi_epi16(Y, z) : _mm_unpacklo_epi16(Y, z);
                l[0] = _mm_add_ps(l[0], _mm_cvtepi32_ps(_mm_madd_epi16(x, x)));
                l[1] = _mm_add_ps(l[1], _mm_cvtepi32_ps(_mm_madd_epi16(x, y)));
                l[2] = _mm_add_ps(l[2], _mm_cvtepi32_ps(_mm_madd_epi16(y, y)));
            }
#endif
        }
        __m128i X = _mm_loadu_si128((const __m128i *)(gx + TAIL(r)));
        __m128i Y = _mm_loadu_si128((const __m128i *)(gy + TAIL(r)));
        __m128i xl = _mm_unpacklo_epi16(X, z), xh = _mm_unpackhi_epi16(X, z);
        __m128i yl = _mm_unpacklo_epi16(Y, z), yh = _mm_unpackhi_epi16(Y, z);
        __m128i pl = _mm_madd_epi16(xl, yl), ph = _mm_madd_epi16(xh, yh);
        t[0] = _mm_add_epi32(t[0], _mm_add_epi32(_mm_madd_epi16(xl, xl), _mm_madd_epi16(xh, xh)));
        t[1] = _mm_add_epi32(t[1], _mm_add_epi32(pl, ph));
        t[2] = _mm_add_epi32(t[2], _mm_add_epi32(_mm_madd_epi16(yl, yl), _mm_madd_epi16(yh, yh)));
        m = _mm_add_epi32(m, _mm_add_epi32(abs32(pl), abs32(ph)));
    }
#if defined(__AVX2__)
    l[0] = _mm256_castps256_ps128(l02);
    l[2] = _mm256_extractf128_ps(l02, 1);
#endif
    uint32_t tv[4][4];
    for (int i = 0; i < 3; i++) _mm_storeu_si128((__m128i *)tv[i], t[i]);
    _mm_storeu_si128((__m128i *)tv[3], m);
    const uint64_t lim = (uint64_t)1 << 24;
    float t3[3];
    int chain = 0; /* a last-columns sum past the bound: all three added one by one, side by side */
    for (int i = 0; i < 3; i++) {
        const uint32_t *mag = tv[i == 1 ? 3 : i]; /* gx^2 and gy^2 are their own magnitudes */
        chain |= (uint64_t)mag[0] + mag[1] + mag[2] + mag[3] > lim;
        t3[i] = (float)((int32_t)tv[i][0] + (int32_t)tv[i][1] + (int32_t)tv[i][2] + (int32_t)tv[i][3]);
    }
    if (chain) {
        float c[3] = {0, 0, 0};
        for (int r = 0; r < WIN; r++)
            for (int k = 0; k < WIN - WMAIN; k++) {
                int x = gx[TAIL(r) + k], y = gy[TAIL(r) + k];
                c[0] += (float)(x * x);
                c[1] += (float)(x * y);
                c[2] += (float)(y * y);
            }
        for (int i = 0; i < 3; i++) t3[i] = c[i]; /* the chains are the sums: the same where within the bound */
    }
    for (int i = 0; i < 3; i++) A[i] = t3[i] + lane_sum(l[i]);
}
#endif
#else
static void sums_A(const int16_t *restrict gx, const int16_t *restrict gy, float A[3])
{
    float l[3][4] = {{0}}, s[3] = {0};
    for (int r = 0; r < WIN; r++) {
        const int16_t *x = gx + MAIN(r), *y = gy + MAIN(r);
        for (int c = 0; c < WMAIN; c += 4)
            for (int k = 0; k < 4; k++) {
                l[0][k] += (float)(x[c + k] * x[c + k]);
                l[1][k] += (float)(x[c + k] * y[c + k]);
                l[2][k] += (float)(y[c + k] * y[c + k]);
            }
        x = gx + TAIL(r);
        y = gy + TAIL(r);
        for (int c = 0; c < WIN - WMAIN; c++) {
            s[0] += (float)(x[c] * x[c]);
            s[1] += (float)(x[c] * y[c]);
            s[2] += (float)(y[c] * y[c]);
        }
    }
    for (int i = 0; i < 3; i++) A[i] = s[i] + ((l[i][0] + l[i][2]) + (l[i][1] + l[i][3]));
}
#endif

/* b = the sums of (J - I) gx and (J - I) gy (jw: window_next's J, iw:
 * window_setup's I): OpenCV multiplies columns k and k + 4 of each 8 in
 * one integer multiply-add, so lane k adds, per row, the pair (k, k + 4)
 * and then (k + 8, k + 12), each pair converted to float (rounded above
 * 2^24); the lanes summed as (l0 + l2) + (l1 + l3), added to the columns
 * 16..20's sum.  Float additions one at a time, in that order. */
#if !defined(__SSE2__)
static void sums_b(const int16_t *restrict jw, const int16_t *restrict iw, const int16_t *restrict gx,
                         const int16_t *restrict gy, float b[2])
{
    float l[2][4] = {{0}}, s[2] = {0};
    for (int r = 0; r < WIN; r++) {
        const int16_t *j = jw + MAIN(r), *i = iw + MAIN(r), *x = gx + MAIN(r), *y = gy + MAIN(r);
        for (int c = 0; c < WMAIN; c += 8)
            for (int k = 0; k < 4; k++) {
                int d0 = j[c + k] - i[c + k], d1 = j[c + k + 4] - i[c + k + 4];
                l[0][k] += (float)(d0 * x[c + k] + d1 * x[c + k + 4]);
                l[1][k] += (float)(d0 * y[c + k] + d1 * y[c + k + 4]);
            }
        j = jw + TAIL(r);
        i = iw + TAIL(r);
        x = gx + TAIL(r);
        y = gy + TAIL(r);
        for (int c = 0; c < WIN - WMAIN; c++) {
            int d = j[c] - i[c];
            s[0] += (float)(d * x[c]);
            s[1] += (float)(d * y[c]);
        }
    }
    for (int i = 0; i < 2; i++) b[i] = s[i] + ((l[i][0] + l[i][2]) + (l[i][1] + l[i][3]));
}
#else
/* A window's gradients rearranged for sums_b, made once per point and
 * level (grad_pairs; the AVX2 build: window_begin): columns 0..15 of each
 * row as OpenCV pairs them, in each block of 8 columns k and k + 4 side by
 * side (gx, gy), with their magnitudes (ax, ay; not made by the AVX2
 * build, whose bounds need none: next_sums); the magnitudes of columns
 * 16..23 (tx, ty). */
typedef struct lk_grad {
    _Alignas(32) int16_t gx[WIN * 16], gy[WIN * 16], ax[WIN * 16], ay[WIN * 16], tx[WIN * 8], ty[WIN * 8];
} lk_grad;

/* |v| of int16 lanes (SSE2 has no abs; no lane here is -32768) */
static GMC_INLINE __m128i abs16(__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v)); }

/* columns (k, k + 4) of a block of 8 side by side */
static GMC_INLINE __m128i pairs(__m128i v) { return _mm_unpacklo_epi16(v, _mm_srli_si128(v, 8)); }

#if !LK_AVX2
static void grad_pairs(const int16_t *restrict gx, const int16_t *restrict gy, lk_grad *restrict pg)
{
    for (int r = 0; r < WIN; r++) {
        for (int c = 0; c < WMAIN; c += 8) {
            __m128i X = pairs(_mm_loadu_si128((const __m128i *)(gx + MAIN(r) + c)));
            __m128i Y = pairs(_mm_loadu_si128((const __m128i *)(gy + MAIN(r) + c)));
            _mm_store_si128((__m128i *)(pg->gx + r * 16 + c), X);
            _mm_store_si128((__m128i *)(pg->gy + r * 16 + c), Y);
            _mm_store_si128((__m128i *)(pg->ax + r * 16 + c), abs16(X));
            _mm_store_si128((__m128i *)(pg->ay + r * 16 + c), abs16(Y));
        }
        _mm_store_si128((__m128i *)(pg->tx + r * 8), abs16(_mm_loadu_si128((const __m128i *)(gx + TAIL(r)))));
        _mm_store_si128((__m128i *)(pg->ty + r * 8), abs16(_mm_loadu_si128((const __m128i *)(gy + TAIL(r)))));
    }
}
#endif

#if defined(__AVX2__)
/* The 32-bit lanes of v's two halves added: the AVX2 loop below holds
 * block 0..7 (and even tail rows) in the low half, block 8..15 (odd tail
 * rows) in the high one; the sum is the SSE2 loop's lane, to the bit
 * (integers). */
static GMC_INLINE __m128i fold(__m256i v) { return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }
#endif

#if !LK_AVX2
/* sums_b's integer sums and bounds (see sums_b_end): i[0..7] = the lanes'
 * sums lx, ly, their bounds ax, ay, the last columns' sums tx, ty and
 * their bounds bx, by.  AVX-512 takes a row's columns 0..15 in one
 * 16-lane vector and the last columns of two rows in one.  (The AVX2
 * build makes them with the window: next_sums.) */
static GMC_INLINE void sums_b_int(const int16_t *restrict jw, const int16_t *restrict iw, const int16_t *restrict gx,
                                  const int16_t *restrict gy, const lk_grad *restrict pg, __m128i i[8])
{
#if defined(__AVX2__)
    const __m256i z = _mm256_setzero_si256();
    __m256i lx = z, ly = z, ax = z, ay = z, tx = z, ty = z, bx = z, by = z;
    for (int r = 0; r < WIN; r++) {
        __m256i d = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(jw + MAIN(r))),
                                     _mm256_loadu_si256((const __m256i *)(iw + MAIN(r))));
        __m256i dd = _mm256_unpacklo_epi16(d, _mm256_srli_si256(d, 8)), ad = _mm256_abs_epi16(dd); /* pairs per block */
        lx = _mm256_add_epi32(lx, _mm256_madd_epi16(dd, _mm256_loadu_si256((const __m256i *)(pg->gx + r * 16))));
        ly = _mm256_add_epi32(ly, _mm256_madd_epi16(dd, _mm256_loadu_si256((const __m256i *)(pg->gy + r * 16))));
        ax = _mm256_add_epi32(ax, _mm256_madd_epi16(ad, _mm256_loadu_si256((const __m256i *)(pg->ax + r * 16))));
        ay = _mm256_add_epi32(ay, _mm256_madd_epi16(ad, _mm256_loadu_si256((const __m256i *)(pg->ay + r * 16))));
    }
    for (int r = 0; r + 1 < WIN; r += 2) { /* columns 16..23 of rows r, r + 1 */
        __m256i d = _mm256_sub_epi16(_mm256_loadu2_m128i((const __m128i *)(jw + TAIL(r + 1)), (const __m128i *)(jw + TAIL(r))),
                                     _mm256_loadu2_m128i((const __m128i *)(iw + TAIL(r + 1)), (const __m128i *)(iw + TAIL(r))));
        __m256i ad = _mm256_abs_epi16(d);
        tx = _mm256_add_epi32(tx, _mm256_madd_epi16(d, _mm256_loadu2_m128i((const __m128i *)(gx + TAIL(r + 1)),
                                                                         (const __m128i *)(gx + TAIL(r)))));
        ty = _mm256_add_epi32(ty, _mm256_madd_epi16(d, _mm256_loadu2_m128i((const __m128i *)(gy + TAIL(r + 1)),
                                                                         (const __m128i *)(gy + TAIL(r)))));
        bx = _mm256_add_epi32(bx, _mm256_madd_epi16(ad, _mm256_loadu_si256((const __m256i *)(pg->tx + r * 8))));
        by = _mm256_add_epi32(by, _mm256_madd_epi16(ad, _mm256_loadu_si256((const __m256i *)(pg->ty + r * 8))));
    }
    /* the last row's (WIN is odd) */
    __m128i d = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(jw + TAIL(WIN - 1))),
                              _mm_loadu_si128((const __m128i *)(iw + TAIL(WIN - 1))));
    __m128i ad = _mm_abs_epi16(d);
    i[0] = fold(lx);
    i[1] = fold(ly);
    i[2] = fold(ax);
    i[3] = fold(ay);
    i[4] = _mm_add_epi32(fold(tx), _mm_madd_epi16(d, _mm_loadu_si128((const __m128i *)(gx + TAIL(WIN - 1)))));
    i[5] = _mm_add_epi32(fold(ty), _mm_madd_epi16(d, _mm_loadu_si128((const __m128i *)(gy + TAIL(WIN - 1)))));
    i[6] = _mm_add_epi32(fold(bx), _mm_madd_epi16(ad, _mm_loadu_si128((const __m128i *)(pg->tx + (WIN - 1) * 8))));
    i[7] = _mm_add_epi32(fold(by), _mm_madd_epi16(ad, _mm_loadu_si128((const __m128i *)(pg->ty + (WIN - 1) * 8))));
#else
    const __m128i z = _mm_setzero_si128();
    __m128i lx = z, ly = z, ax = z, ay = z, tx = z, ty = z, bx = z, by = z;
    for (int r = 0; r < WIN; r++) {
        for (int c = 0; c < WMAIN; c += 8) {
            __m128i dd = pairs(_mm_sub_epi16(_mm_loadu_si128((const __m128i *)(jw + MAIN(r) + c)),
                                             _mm_loadu_si128((const __m128i *)(iw + MAIN(r) + c))));
            __m128i ad = abs16(dd);
            lx = _mm_add_epi32(lx, _mm_madd_epi16(dd, _mm_load_si128((const __m128i *)(pg->gx + r * 16 + c))));
            ly = _mm_add_epi32(ly, _mm_madd_epi16(dd, _mm_load_si128((const __m128i *)(pg->gy + r * 16 + c))));
            ax = _mm_add_epi32(ax, _mm_madd_epi16(ad, _mm_load_si128((const __m128i *)(pg->ax + r * 16 + c))));
            ay = _mm_add_epi32(ay, _mm_madd_epi16(ad, _mm_load_si128((const __m128i *)(pg->ay + r * 16 + c))));
        }
        /* columns 16..23 (the gradients past 20 are 0): adjacent pairs, the sum is all that counts */
        __m128i d = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(jw + TAIL(r))),
                                  _mm_loadu_si128((const __m128i *)(iw + TAIL(r))));
        __m128i ad = abs16(d);
        tx = _mm_add_epi32(tx, _mm_madd_epi16(d, _mm_loadu_si128((const __m128i *)(gx + TAIL(r)))));
        ty = _mm_add_epi32(ty, _mm_madd_epi16(d, _mm_loadu_si128((const __m128i *)(gy + TAIL(r)))));
        bx = _mm_add_epi32(bx, _mm_madd_epi16(ad, _mm_load_si128((const __m128i *)(pg->tx + r * 8))));
        by = _mm_add_epi32(by, _mm_madd_epi16(ad, _mm_load_si128((const __m128i *)(pg->ty + r * 8))));
    }
    i[0] = lx, i[1] = ly, i[2] = ax, i[3] = ay, i[4] = tx, i[5] = ty, i[6] = bx, i[7] = by;
#endif
}
#endif

/* The sum of v's four int32 lanes (wrapping as the lanes do). */
static GMC_INLINE int32_t hsum32(__m128i v)
{
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
    return _mm_cvtsi128_si32(_mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1)));
}

/* b from sums_b_int's integer sums and bounds in[8] (the AVX2 build:
 * next_sums'): the numbers of the loops above (other builds), fast where
 * they can be had from integer sums: a
 * chain of float additions of integer terms gives their exact sum as long
 * as no partial sum passes 2^24 (every float up to 2^24 is an integer),
 * which the sum of the terms' magnitudes bounds.  Each of OpenCV's five
 * chains per sum (four lanes, the last columns) is summed here in integers
 * with a bound on its magnitudes (|d_k g_k| + |d_k+4 g_k+4| for a lane's
 * pair; any order: exact; the bounds in unsigned 32 bits, at most 42
 * pairs below 2^27 each).  A chain within 2^24 is its integer sum, which
 * is then also what adding it as OpenCV does gives; past that, the lanes
 * (or the last columns) of both sums are added as OpenCV adds them (the
 * lanes in float vectors, the last columns one by one).  Near convergence the mismatch J - I is small
 * and the bounds hold. */
static void sums_b_end(const __m128i in[8], const int16_t *restrict jw, const int16_t *restrict iw,
                       const int16_t *restrict gx, const int16_t *restrict gy, const lk_grad *restrict pg, float b[2])
{
    /* a bound past 2^24: unsigned lanes compared as signed ones with their sign bits flipped */
    const __m128i sgn = _mm_set1_epi32(INT32_MIN), lim = _mm_set1_epi32((int32_t)(0x80000000u | (1u << 24)));
#define GMC_OVER(v) _mm_movemask_epi8(_mm_cmpgt_epi32(_mm_xor_si128(v, sgn), lim))
    /* chains past their bound: those of both sums added one by one, side by side */
    int lanes = GMC_OVER(in[2]) | GMC_OVER(in[3]), tail = 0;
    __m128 l[2] = {_mm_cvtepi32_ps(in[0]), _mm_cvtepi32_ps(in[1])};
    float t[2];
    for (int i = 0; i < 2; i++) {
        /* the last columns' bound is the sum of the four lanes': past 2^24 if one lane is, else summed exactly */
        tail |= GMC_OVER(in[6 + i]) || (uint32_t)hsum32(in[6 + i]) > 1u << 24;
        t[i] = (float)hsum32(in[4 + i]);
    }
#undef GMC_OVER
    if (lanes) { /* the four lanes as OpenCV adds them */
        __m128 f = _mm_setzero_ps(), h = _mm_setzero_ps();
        for (int r = 0; r < WIN; r++)
            for (int c = 0; c < WMAIN; c += 8) {
                __m128i dd = pairs(_mm_sub_epi16(_mm_loadu_si128((const __m128i *)(jw + MAIN(r) + c)),
                                                 _mm_loadu_si128((const __m128i *)(iw + MAIN(r) + c))));
                __m128i px = _mm_madd_epi16(dd, _mm_load_si128((const __m128i *)(pg->gx + r * 16 + c)));
                __m128i py = _mm_madd_epi16(dd, _mm_load_si128((const __m128i *)(pg->gy + r * 16 + c)));
                f = _mm_add_ps(f, _mm_cvtepi32_ps(px));
                h = _mm_add_ps(h, _mm_cvtepi32_ps(py));
            }
        l[0] = f;
        l[1] = h;
    }
    if (tail) { /* the last columns one by one */
        float c0 = 0, c1 = 0;
        for (int r = 0; r < WIN; r++)
            for (int c = 0; c < WIN - WMAIN; c++) {
                int d = jw[TAIL(r) + c] - iw[TAIL(r) + c];
                c0 += (float)(d * gx[TAIL(r) + c]);
                c1 += (float)(d * gy[TAIL(r) + c]);
            }
        t[0] = c0;
        t[1] = c1;
    }
    for (int i = 0; i < 2; i++) b[i] = t[i] + lane_sum(l[i]);
}

#if !LK_AVX2
static void sums_b(const int16_t *restrict jw, const int16_t *restrict iw, const int16_t *restrict gx,
                   const int16_t *restrict gy, const lk_grad *restrict pg, float b[2])
{
    __m128i in[8];
    sums_b_int(jw, iw, gx, gy, pg, in);
    sums_b_end(in, jw, iw, gx, gy, pg, b);
}
#endif
#endif

/* Ask for the rows of a window (WIN + 1 rows from (ix, iy)) of a plane
 * ahead of use: the next point's window is not in cache on the large
 * levels (points come in corner-strength order, scattered over the frame),
 * and its loads would otherwise wait on memory one by one.  A row as read
 * (at most 33 values, 66 bytes, from r) lies in r's cache line and the
 * next, which r + 32 (64 bytes on) is in. */
static void prefetch_window(const int16_t *plane, int pw, int ix, int iy)
{
    for (int y = 0; y <= WIN; y++) {
        const int16_t *r = plane + (size_t)(iy + y + PAD) * (size_t)pw + (size_t)(ix + PAD);
        __builtin_prefetch(r);
        __builtin_prefetch(r + 32);
    }
}

/* Where point i's windows start on level lv (for prefetch_window): in the
 * previous frame (pts) and, as first guess, in the current one. */
static void lk_guess(const float *pts, const float *next, int i, int lv, int top, float *px, float *py, float *nx,
                     float *ny)
{
    float s = 1.0f / (float)(1 << lv);
    *px = pts[2 * i] * s;
    *py = pts[2 * i + 1] * s;
    if (lv == top) *nx = *px, *ny = *py;
    else *nx = next[2 * i] * 2, *ny = next[2 * i + 1] * 2;
}

/* A point being tracked on a level: its window (window_setup's or window_begin's), A and
 * its inverse determinant D, where its iterations stand. */
typedef struct lk_track {
    _Alignas(64) int16_t iw[WSTORE], gx[WSTORE], gy[WSTORE];
#if defined(__SSE2__)
    lk_grad pg; /* gx and gy as sums_b reads them */
#endif
    int i, it;
    float nx, ny, pdx, pdy, A11, A12, A22, D;
} lk_track;

#if LK_AVX2
/* window_begin's sums as it goes: A's float lanes (a_block's l02 and l1)
 * and the last columns' chains (c: gx^2, gx gy, gy^2 and a lane unused;
 * OpenCV adds those columns one at a time, row after row: begin_tail). */
typedef struct a_acc {
    __m256 l02;
    __m128 l1, c;
} a_acc;

/* One window row's columns 16..20 added to the chains c, one column at a
 * time (an addition of three float lanes is the three additions): sx, xy,
 * sy the row's gx^2, gx gy, gy^2 as floats (exact: integers below 2^24),
 * columns 16..19 (lo) and 20.. (hi), transposed to (gx^2, gx gy, gy^2, 0)
 * a column. */
static GMC_INLINE __m128 tail_chain(__m128 c, __m128 sx, __m128 xy, __m128 sy, __m128 hx, __m128 hxy, __m128 hy)
{
    const __m128 z = _mm_setzero_ps();
    __m128 p0 = _mm_unpacklo_ps(sx, xy), p1 = _mm_unpackhi_ps(sx, xy); /* columns 16, 17 | 18, 19 */
    __m128 q0 = _mm_unpacklo_ps(sy, z), q1 = _mm_unpackhi_ps(sy, z);
    c = _mm_add_ps(c, _mm_movelh_ps(p0, q0));
    c = _mm_add_ps(c, _mm_movehl_ps(q0, p0));
    c = _mm_add_ps(c, _mm_movelh_ps(p1, q1));
    c = _mm_add_ps(c, _mm_movehl_ps(q1, p1));
    return _mm_add_ps(c, _mm_movelh_ps(_mm_unpacklo_ps(hx, hxy), _mm_unpacklo_ps(hy, z)));
}

/* Window row r's columns 0..15 (I: the image x 32, X, Y: the gradients):
 * the image stored, A's lanes, sums_b's pairs (grad_pairs' layout; their
 * magnitudes ax, ay are not needed: next_sums).  The gradients' columns
 * 0..15 are not stored: only their pairs are read. */
static GMC_INLINE void begin_main(lk_track *t, int r, __m256i I, __m256i X, __m256i Y, a_acc *a)
{
    _mm256_storeu_si256((__m256i *)(t->iw + r * WMAIN), I);
    a_block(_mm256_castsi256_si128(X), _mm256_castsi256_si128(Y), &a->l02, &a->l1);
    a_block(_mm256_extracti128_si256(X, 1), _mm256_extracti128_si256(Y, 1), &a->l02, &a->l1);
    /* columns (k, k + 4) of each block of 8 side by side, as grad_pairs' pairs() */
    __m256i xp = _mm256_unpacklo_epi16(X, _mm256_srli_si256(X, 8)), yp = _mm256_unpacklo_epi16(Y, _mm256_srli_si256(Y, 8));
    _mm256_store_si256((__m256i *)(t->pg.gx + r * 16), xp);
    _mm256_store_si256((__m256i *)(t->pg.gy + r * 16), yp);
}

/* Window rows y and y + 1's columns 16..23 (low and high halves; two 0:
 * row y alone, the high halves 0), the gradients' 21..23 0: stored, their
 * magnitudes for sums_b, A's integer sums. */
static GMC_INLINE void begin_tail(lk_track *t, int y, __m256i I, __m256i X, __m256i Y, int two, a_acc *a)
{
    __m256i AX = _mm256_abs_epi16(X), AY = _mm256_abs_epi16(Y);
    if (two) {
        _mm256_storeu_si256((__m256i *)(t->iw + TAIL(y)), I);
        _mm256_storeu_si256((__m256i *)(t->gx + TAIL(y)), X);
        _mm256_storeu_si256((__m256i *)(t->gy + TAIL(y)), Y);
        _mm256_storeu_si256((__m256i *)(t->pg.tx + y * 8), AX);
        _mm256_storeu_si256((__m256i *)(t->pg.ty + y * 8), AY);
    } else {
        _mm_storeu_si128((__m128i *)(t->iw + TAIL(y)), _mm256_castsi256_si128(I));
        _mm_storeu_si128((__m128i *)(t->gx + TAIL(y)), _mm256_castsi256_si128(X));
        _mm_storeu_si128((__m128i *)(t->gy + TAIL(y)), _mm256_castsi256_si128(Y));
        _mm_storeu_si128((__m128i *)(t->pg.tx + y * 8), _mm256_castsi256_si128(AX));
        _mm_storeu_si128((__m128i *)(t->pg.ty + y * 8), _mm256_castsi256_si128(AY));
    }
    const __m256i z = _mm256_setzero_si256();
    __m256i xl = _mm256_unpacklo_epi16(X, z), xh = _mm256_unpackhi_epi16(X, z); /* (v, 0) pairs */
    __m256i yl = _mm256_unpacklo_epi16(Y, z), yh = _mm256_unpackhi_epi16(Y, z);
    __m256 sx = _mm256_cvtepi32_ps(_mm256_madd_epi16(xl, xl)), xy = _mm256_cvtepi32_ps(_mm256_madd_epi16(xl, yl));
    __m256 sy = _mm256_cvtepi32_ps(_mm256_madd_epi16(yl, yl)), hx = _mm256_cvtepi32_ps(_mm256_madd_epi16(xh, xh));
    __m256 hxy = _mm256_cvtepi32_ps(_mm256_madd_epi16(xh, yh)), hy = _mm256_cvtepi32_ps(_mm256_madd_epi16(yh, yh));
#define GMC_LO(v) _mm256_castps256_ps128(v)
#define GMC_HI(v) _mm256_extractf128_ps(v, 1)
    a->c = tail_chain(a->c, GMC_LO(sx), GMC_LO(xy), GMC_LO(sy), GMC_LO(hx), GMC_LO(hxy), GMC_LO(hy));
    if (two) a->c = tail_chain(a->c, GMC_HI(sx), GMC_HI(xy), GMC_HI(sy), GMC_HI(hx), GMC_HI(hxy), GMC_HI(hy));
#undef GMC_LO
#undef GMC_HI
}

/* Level 0's gradients at 16 lanes (from image row b at pb, a above,
 * c below; IMG values, whose differences >> 7 are the grey values'
 * differences, exact in int16), and-ed with m: OpenCV's calcSharrDeriv
 * sums (window_gradients'): gx = [3 10 3] down the rows' horizontal
 * differences da, db, dc (hdiff), gy = [3 10 3] along the vertical
 * differences c - a.  The lanes: 16 columns of a row (pair 0), or 8
 * columns of a row and of the one pair values on (low, high half).  Only
 * the differences stay in registers; the rows are read again where needed
 * (in cache). */
static GMC_INLINE __m256i lanes_at(const int16_t *q, ptrdiff_t pair)
{
    return pair ? _mm256_loadu2_m128i((const __m128i *)(q + pair), (const __m128i *)q) : _mm256_loadu_si256((const __m256i *)q);
}

static GMC_INLINE __m256i hdiff(const int16_t *p, ptrdiff_t pair)
{
    return _mm256_srai_epi16(_mm256_sub_epi16(lanes_at(p + 1, pair), lanes_at(p - 1, pair)), 7);
}

static GMC_INLINE __m256i vdiff(const int16_t *a, const int16_t *c, ptrdiff_t pair)
{
    return _mm256_srai_epi16(_mm256_sub_epi16(lanes_at(c, pair), lanes_at(a, pair)), 7);
}

static GMC_INLINE void grad_scharr(const int16_t *pb, ptrdiff_t st, ptrdiff_t pair, __m256i da, __m256i db, __m256i dc,
                                   __m256i m, __m256i *X, __m256i *Y)
{
    const __m256i k3 = _mm256_set1_epi16(3), k10 = _mm256_set1_epi16(10);
    const int16_t *a = pb - st, *c = pb + st;
    __m256i sy = _mm256_add_epi16(vdiff(a - 1, c - 1, pair), vdiff(a + 1, c + 1, pair));
    *X = _mm256_and_si256(_mm256_add_epi16(_mm256_mullo_epi16(_mm256_add_epi16(da, dc), k3), _mm256_mullo_epi16(db, k10)), m);
    *Y = _mm256_and_si256(_mm256_add_epi16(_mm256_mullo_epi16(sy, k3), _mm256_mullo_epi16(vdiff(a, c, pair), k10)), m);
}

/* window_setup, sums_A and grad_pairs in one pass over the window at
 * (ix, iy) of level L with weights wt: each row's vectors go to the
 * window, A's lanes (each lane's chain in its order: OpenCV's) and the
 * pairs while in registers, and the chains of A's float additions overlap
 * the rows' other work.  Level 0 (no gradient planes; its windows start at
 * whole pixels) makes its gradients here from the image rows as they come
 * (window_gradients' sums, masks and reads: 34 values from column ix - 1,
 * inside the planes as the AVX-512 build's window rows are). */
static void window_begin(const gmc_level *L, int ix, int iy, const int wt[4], lk_track *t, float A[3])
{
    ptrdiff_t st = L->pw;
    size_t o = (size_t)(iy + PAD) * (size_t)st + (size_t)(ix + PAD);
    /* image, gx, gy (level 0: image only, no gradient planes) */
    const int16_t *pl[3] = {L->img + o, L->dx ? L->dx + o : NULL, L->dy ? L->dy + o : NULL};
    const __m256i z = _mm256_setzero_si256();
    const __m256i keep2 = _mm256_setr_epi16(-1, -1, -1, -1, -1, 0, 0, 0, -1, -1, -1, -1, -1, 0, 0, 0); /* 16..20 */
    a_acc a = {_mm256_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    int y = 0;
    if (!L->dx) {
        /* the columns inside the image (c0..c1 - 1) as masks of columns 0..15 and 16..31 */
        int c0 = ix < 0 ? -ix : 0, c1 = L->w - ix < WIN ? L->w - ix : WIN;
        const __m256i col = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        __m256i m[2];
        for (int h = 0; h < 2; h++) {
            __m256i c = _mm256_add_epi16(col, _mm256_set1_epi16((short)(16 * h)));
            m[h] = _mm256_andnot_si256(_mm256_cmpgt_epi16(_mm256_set1_epi16((short)c0), c),
                                       _mm256_cmpgt_epi16(_mm256_set1_epi16((short)c1), c));
        }
        /* columns 0..15 row by row (image rows iy - 1, iy, iy + 1 around window row 0) */
        const int16_t *p = pl[0];
        __m256i da = hdiff(p - st, 0), db = hdiff(p, 0);
        for (int r = 0; r < WIN; r++, p += st) {
            __m256i dc = hdiff(p + st, 0), X, Y;
            int in = iy + r >= 0 && iy + r < L->h; /* rows outside the image: gradients 0 */
            grad_scharr(p, st, 0, da, db, dc, in ? m[0] : z, &X, &Y);
            begin_main(t, r, _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)p), 2), X, Y, &a);
            da = db, db = dc;
        }
        /* columns 16..23, rows y and y + 1 a vector (the last row alone: its high half 0; the row after it,
         * read, is masked) */
        const __m128i m8 = _mm256_castsi256_si128(m[1]), z8 = _mm_setzero_si128();
        for (; y < WIN; y += 2) {
            const int16_t *b = pl[0] + (size_t)y * (size_t)st + WMAIN;
            int in0 = iy + y >= 0 && iy + y < L->h, in1 = y + 1 < WIN && iy + y + 1 >= 0 && iy + y + 1 < L->h;
            __m256i X, Y;
            grad_scharr(b, st, st, hdiff(b - st, st), hdiff(b, st), hdiff(b + st, st),
                        _mm256_set_m128i(in1 ? m8 : z8, in0 ? m8 : z8), &X, &Y);
            begin_tail(t, y, _mm256_srli_epi16(lanes_at(b, st), 2), X, Y, y + 1 < WIN, &a);
        }
    } else if (!wt[1] && !wt[2] && !wt[3]) { /* COPY */
        for (int r = 0; r < WIN; r++) {
            size_t k = (size_t)r * (size_t)st;
            begin_main(t, r, _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(pl[0] + k)), 2),
                       _mm256_loadu_si256((const __m256i *)(pl[1] + k)), _mm256_loadu_si256((const __m256i *)(pl[2] + k)), &a);
        }
        for (; y < WIN; y += 2) { /* the last columns, two rows at a time (the last row alone: high half 0) */
            const int16_t *q[3];
            for (int k = 0; k < 3; k++) q[k] = pl[k] + (size_t)y * (size_t)st + WMAIN;
#define GMC_TAIL2(p) (y + 1 < WIN ? _mm256_loadu2_m128i((const __m128i *)((p) + st), (const __m128i *)(p)) \
                                  : _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)(p))))
            begin_tail(t, y, _mm256_srli_epi16(GMC_TAIL2(q[0]), 2), _mm256_and_si256(GMC_TAIL2(q[1]), keep2),
                       _mm256_and_si256(GMC_TAIL2(q[2]), keep2), y + 1 < WIN, &a);
#undef GMC_TAIL2
        }
    } else {
        __m256i v0 = _mm256_set1_epi32(wpair(wt[0], wt[1])), v1 = _mm256_set1_epi32(wpair(wt[2], wt[3]));
        /* columns 0..15, each row's pixels loaded again (in cache) rather than kept from the row before:
         * kept, they crowd A's accumulators out of the registers, and the chains of additions then go
         * through memory */
        for (int r = 0; r < WIN; r++) {
            __m256i v[3];
            for (int k = 0; k < 3; k++) {
                const int16_t *q = pl[k] + (size_t)r * (size_t)st;
#define GMC_LD(o) _mm256_loadu_si256((const __m256i *)(q + (o)))
                v[k] = bil16(GMC_LD(0), GMC_LD(1), GMC_LD(st), GMC_LD(st + 1), v0, v1, k == 0);
#undef GMC_LD
            }
            begin_main(t, r, v[0], v[1], v[2], &a);
        }
        for (; y + 1 < WIN; y += 2) { /* the last columns, two rows at a time */
            size_t k = (size_t)y * (size_t)st + WMAIN;
            begin_tail(t, y, bil_pair(pl[0] + k, st, v0, v1, 1), _mm256_and_si256(bil_pair(pl[1] + k, st, v0, v1, 0), keep2),
                       _mm256_and_si256(bil_pair(pl[2] + k, st, v0, v1, 0), keep2), 1, &a);
        }
        /* the last row's */
        __m128i w0 = _mm256_castsi256_si128(v0), w1 = _mm256_castsi256_si128(v1), keep = _mm256_castsi256_si128(keep2);
        size_t k = (size_t)y * (size_t)st + WMAIN;
        begin_tail(t, y, _mm256_zextsi128_si256(bil8(pl[0] + k, st, w0, w1, 1)),
                   _mm256_zextsi128_si256(_mm_and_si128(bil8(pl[1] + k, st, w0, w1, 0), keep)),
                   _mm256_zextsi128_si256(_mm_and_si128(bil8(pl[2] + k, st, w0, w1, 0), keep)), 0, &a);
    }
    __m128 l[3] = {_mm256_castps256_ps128(a.l02), a.l1, _mm256_extractf128_ps(a.l02, 1)};
    float c[4];
    _mm_storeu_ps(c, a.c);
    for (int i = 0; i < 3; i++) A[i] = c[i] + lane_sum(l[i]);
}

/* window_next and sums_b_int in one pass over the current frame's window
 * at (jx, jy) of level J with weights wt: each row of J interpolated
 * (stored in jw for sums_b_end's slow paths), its difference from t's I
 * multiplied with the gradient pairs while in registers; in[8] as
 * sums_b_int's.  The lanes' bounds are the sums of the pairs' |products|
 * (|d_k g_k + d_k+4 g_k+4|), not of |d_k g_k| + |d_k+4 g_k+4|: OpenCV's
 * float chains add whole pairs, so a chain whose pairs' magnitudes sum
 * within 2^24 is exact as well, and the bound costs no multiply-add.  The
 * last columns are added one product at a time: their bounds stay
 * sums_b_int's. */
static void next_sums(const gmc_level *J, int jx, int jy, const int wt[4], const lk_track *t, int16_t *restrict jw,
                      __m128i in[8])
{
    ptrdiff_t st = J->pw;
    const int16_t *jp = J->img + (size_t)(jy + PAD) * (size_t)st + (size_t)(jx + PAD);
    __m256i v0 = _mm256_set1_epi32(wpair(wt[0], wt[1])), v1 = _mm256_set1_epi32(wpair(wt[2], wt[3]));
    const __m256i z = _mm256_setzero_si256();
    __m256i lx = z, ly = z, ax = z, ay = z, tx = z, ty = z, bx = z, by = z;
    /* columns 0..15: each image row is the bottom row of one window row and the top row of the next */
    __m256i t0 = _mm256_loadu_si256((const __m256i *)jp), t1 = _mm256_loadu_si256((const __m256i *)(jp + 1));
    for (int r = 0; r < WIN; r++) {
        const int16_t *q = jp + (size_t)(r + 1) * (size_t)st;
        __m256i n0 = _mm256_loadu_si256((const __m256i *)q), n1 = _mm256_loadu_si256((const __m256i *)(q + 1));
        __m256i j = bil16(t0, t1, n0, n1, v0, v1, 1);
        t0 = n0;
        t1 = n1;
        _mm256_storeu_si256((__m256i *)(jw + MAIN(r)), j);
        __m256i d = _mm256_sub_epi16(j, _mm256_loadu_si256((const __m256i *)(t->iw + MAIN(r))));
        __m256i dd = _mm256_unpacklo_epi16(d, _mm256_srli_si256(d, 8)); /* pairs per block */
        __m256i px = _mm256_madd_epi16(dd, _mm256_load_si256((const __m256i *)(t->pg.gx + r * 16)));
        __m256i py = _mm256_madd_epi16(dd, _mm256_load_si256((const __m256i *)(t->pg.gy + r * 16)));
        lx = _mm256_add_epi32(lx, px);
        ly = _mm256_add_epi32(ly, py);
        ax = _mm256_add_epi32(ax, _mm256_abs_epi32(px));
        ay = _mm256_add_epi32(ay, _mm256_abs_epi32(py));
    }
    int y = 0;
    for (; y + 1 < WIN; y += 2) { /* columns 16..23 of rows y, y + 1 */
        __m256i j = bil_pair(jp + (size_t)y * (size_t)st + WMAIN, st, v0, v1, 1);
        _mm256_storeu_si256((__m256i *)(jw + TAIL(y)), j);
        __m256i d = _mm256_sub_epi16(j, _mm256_loadu_si256((const __m256i *)(t->iw + TAIL(y))));
        __m256i ad = _mm256_abs_epi16(d);
        tx = _mm256_add_epi32(tx, _mm256_madd_epi16(d, _mm256_loadu_si256((const __m256i *)(t->gx + TAIL(y)))));
        ty = _mm256_add_epi32(ty, _mm256_madd_epi16(d, _mm256_loadu_si256((const __m256i *)(t->gy + TAIL(y)))));
        bx = _mm256_add_epi32(bx, _mm256_madd_epi16(ad, _mm256_load_si256((const __m256i *)(t->pg.tx + y * 8))));
        by = _mm256_add_epi32(by, _mm256_madd_epi16(ad, _mm256_load_si256((const __m256i *)(t->pg.ty + y * 8))));
    }
    /* the last row's (WIN is odd) */
    __m128i j = bil8(jp + (size_t)y * (size_t)st + WMAIN, st, _mm256_castsi256_si128(v0), _mm256_castsi256_si128(v1), 1);
    _mm_storeu_si128((__m128i *)(jw + TAIL(y)), j);
    __m128i d = _mm_sub_epi16(j, _mm_loadu_si128((const __m128i *)(t->iw + TAIL(y)))), ad = _mm_abs_epi16(d);
    in[0] = fold(lx);
    in[1] = fold(ly);
    in[2] = fold(ax);
    in[3] = fold(ay);
    in[4] = _mm_add_epi32(fold(tx), _mm_madd_epi16(d, _mm_loadu_si128((const __m128i *)(t->gx + TAIL(y)))));
    in[5] = _mm_add_epi32(fold(ty), _mm_madd_epi16(d, _mm_loadu_si128((const __m128i *)(t->gy + TAIL(y)))));
    in[6] = _mm_add_epi32(fold(bx), _mm_madd_epi16(ad, _mm_load_si128((const __m128i *)(t->pg.tx + y * 8))));
    in[7] = _mm_add_epi32(fold(by), _mm_madd_epi16(ad, _mm_load_si128((const __m128i *)(t->pg.ty + y * 8))));
}
#endif

/* Start point i on level L (see lk_level): its guess into next, its window
 * set up into t; 0 when it ends there (outside, or too flat to track).
 * ahead: the point that starts next (its windows are fetched), or -1. */
static int lk_begin(const gmc_level *L, const gmc_level *J, int lv, int top, const float *pts, float *next,
                    unsigned char *status, int i, int ahead, lk_track *t)
{
    const float fscale = 1.0f / (1 << 20); /* OpenCV's FLT_SCALE: the sums in its units */
    float px, py, nx, ny;
    lk_guess(pts, next, i, lv, top, &px, &py, &nx, &ny);
    if (L->w * L->h > 40000 && ahead >= 0) { /* prefetch where the level outgrows the caches */
        float qx, qy, mx, my;
        lk_guess(pts, next, ahead, lv, top, &qx, &qy, &mx, &my);
        int ax = (int)floorf(qx - HALF_WIN), ay = (int)floorf(qy - HALF_WIN);
        int bx = (int)floorf(mx - HALF_WIN), by = (int)floorf(my - HALF_WIN);
        if (ax >= -WIN && ax < L->w && ay >= -WIN && ay < L->h) {
            prefetch_window(L->img, L->pw, ax, ay);
            if (L->dx) { /* level 0 has no gradient planes */
                prefetch_window(L->dx, L->pw, ax, ay);
                prefetch_window(L->dy, L->pw, ax, ay);
            }
        }
        if (bx >= -WIN && bx < J->w && by >= -WIN && by < J->h) prefetch_window(J->img, J->pw, bx, by);
    }
    next[2 * i] = nx;
    next[2 * i + 1] = ny;
    int ix, iy, wt[4];
    if (!window_at(L, px - HALF_WIN, py - HALF_WIN, &ix, &iy, wt)) {
        if (lv == 0) status[i] = 0;
        return 0;
    }
    float A[3];
#if LK_AVX2
    window_begin(L, ix, iy, wt, t, A);
#else
    _Alignas(64) int16_t g[2 * WIN * 32];
    if (!L->dx) window_gradients(L, ix, iy, g, g + WIN * 32);
    window_setup(L, ix, iy, wt, L->dx ? NULL : g, t->iw, t->gx, t->gy);
    sums_A(t->gx, t->gy, A);
#if defined(__SSE2__)
    grad_pairs(t->gx, t->gy, &t->pg);
#endif
#endif
    float A11 = A[0] * fscale, A12 = A[1] * fscale, A22 = A[2] * fscale;
    float D = A11 * A22 - A12 * A12;
    float min_eig = (A22 + A11 - sqrtf((A11 - A22) * (A11 - A22) + 4.f * A12 * A12)) / (2 * WIN * WIN);
    if (min_eig < MIN_EIG || D < FLT_EPSILON) {
        if (lv == 0) status[i] = 0;
        return 0;
    }
    t->i = i;
    t->it = 0;
    t->nx = nx - HALF_WIN;
    t->ny = ny - HALF_WIN;
    t->pdx = t->pdy = 0;
    t->A11 = A11;
    t->A12 = A12;
    t->A22 = A22;
    t->D = 1.f / D;
    return 1;
}

/* One iteration of t's point; 0 when it ends (converged, stalled, lost
 * or out of iterations). */
static int lk_iterate(const gmc_level *J, int lv, float *next, unsigned char *status, lk_track *t)
{
    const float fscale = 1.0f / (1 << 20);
    int jx, jy, wt[4], i = t->i;
    if (!window_at(J, t->nx, t->ny, &jx, &jy, wt)) {
        if (lv == 0) status[i] = 0;
        return 0;
    }
    _Alignas(64) int16_t jw[WSTORE];
    float b[2];
#if LK_AVX2
    __m128i in[8];
    next_sums(J, jx, jy, wt, t, jw, in);
    sums_b_end(in, jw, t->iw, t->gx, t->gy, &t->pg, b);
#else
    window_next(J, jx, jy, wt, jw);
#if defined(__SSE2__)
    sums_b(jw, t->iw, t->gx, t->gy, &t->pg, b);
#else
    sums_b(jw, t->iw, t->gx, t->gy, b);
#endif
#endif
    float B1 = b[0] * fscale, B2 = b[1] * fscale;
    float ddx = (t->A12 * B2 - t->A22 * B1) * t->D, ddy = (t->A12 * B1 - t->A11 * B2) * t->D;
    t->nx += ddx;
    t->ny += ddy;
    next[2 * i] = t->nx + HALF_WIN;
    next[2 * i + 1] = t->ny + HALF_WIN;
    if ((double)ddx * ddx + (double)ddy * ddy <= LK_EPS * LK_EPS) return 0;
    if (t->it > 0 && fabsf(ddx + t->pdx) < 0.01 && fabsf(ddy + t->pdy) < 0.01) {
        next[2 * i] -= ddx * 0.5f;
        next[2 * i + 1] -= ddy * 0.5f;
        return 0;
    }
    t->pdx = ddx;
    t->pdy = ddy;
    return ++t->it < LK_ITERS;
}

/* One pyramid level of tracking prev's points pts [n][2] into cur (L: the
 * previous frame's level, J: the current one's): each point's guess
 * next [n][2] (from the level above, or pts on the top level) is refined
 * there; status[i] drops to 0 where the point is lost on level 0.  The
 * points are independent: doing all of them level by level (rather than
 * each through all levels) gives the same numbers and lets the next
 * point's windows be fetched ahead; two of them are tracked at a time,
 * their iterations alternating, so that one's vector work overlaps the
 * other's chain of scalar steps (each iteration's window waits on the one
 * before).  They start in the order ord [n] (lk's).  The float steps are
 * OpenCV's, in its types (float, compared with its double constants). */
static void lk_level(const gmc_level *L, const gmc_level *J, int lv, int top, const float *pts, const short *ord, int n,
                     float *next, unsigned char *status)
{
    lk_track t[2];
    int on[2] = {0, 0}, k = 0;
    for (;;) {
        for (int s = 0; s < 2; s++) {
            while (!on[s] && k < n) {
                k++;
                on[s] = lk_begin(L, J, lv, top, pts, next, status, ord[k - 1], k < n ? ord[k] : -1, &t[s]);
            }
            if (on[s]) on[s] = lk_iterate(J, lv, next, status, &t[s]);
        }
        if (!on[0] && !on[1] && k >= n) break;
    }
}

/* Bands of rows lk takes the points in (the frame's top to bottom) */
#define LK_BANDS 256

/* Track prev's points pts [n][2] (n <= GMC_MAX_CORNERS) into cur: next
 * [n][2], status[n].  The points go in bands of rows down the frame, not
 * in corner order: their windows on the previous frame's levels (out of
 * cache by now) then come in the order of memory, neighbours sharing cache
 * lines; the order changes no number (each point's steps use its own
 * data only). */
static void lk(const gmc_pyramid *prev, const gmc_pyramid *cur, const float *pts, int n, float *next, unsigned char *status)
{
    memset(status, 1, (size_t)n);
    short ord[GMC_MAX_CORNERS];
    int count[LK_BANDS + 1] = {0}, band[GMC_MAX_CORNERS];
    float bs = (float)LK_BANDS / (float)prev->lv[0].h;
    for (int i = 0; i < n; i++) {
        float b = pts[2 * i + 1] * bs; /* outside the frame (or NaN): the first or the last band */
        band[i] = b >= 0 ? (b < LK_BANDS - 1 ? (int)b : LK_BANDS - 1) : 0;
        count[band[i] + 1]++;
    }
    for (int b = 0; b < LK_BANDS; b++) count[b + 1] += count[b];
    for (int i = 0; i < n; i++) ord[count[band[i]]++] = (short)i;
    int top = prev->n - 1;
    for (int lv = top; lv >= 0; lv--) lk_level(&prev->lv[lv], &cur->lv[lv], lv, top, pts, ord, n, next, status);
    /* OpenCV's last test, made where it computes the error (always, from Python): a point whose final
     * window lies too far outside level 0 is lost, whatever its iterations said */
    const gmc_level *J = &cur->lv[0];
    for (int i = 0; i < n; i++) {
        if (!status[i]) continue;
        int jx = (int)floorf(next[2 * i] - HALF_WIN), jy = (int)floorf(next[2 * i + 1] - HALF_WIN);
        if (jx < -WIN || jx >= J->w || jy < -WIN || jy >= J->h) status[i] = 0;
    }
}

