/* conv_winograd.h — Winograd F(4x4, 3x3) for 3x3 stride-1 pad-1 convolutions
 * of one group, part of conv_kernels.h (included there, after its vector
 * helpers, micro-kernel and plan, by builds that define CONV_WINOGRAD and
 * the rules WINO_PACKS / WINO_FITS: conv_avx2.c, which says which shapes and
 * why).
 *
 * Each 4x4 block of output pixels (a tile) of one image is computed from the
 * 6x6 input pixels around it as
 *   Y = A^T [ sum over ci of (G g G^T)[ci] . (B^T d B)[ci] ] A,
 * elementwise (.) over the 36 points of the 6x6 transformed tile, with
 * Lavin and Gray's matrices for the interpolation points 0, 1, -1, 2, -2
 * and infinity (the choice of ncnn's F(4,3) too: the smallest points, so the
 * transforms' coefficients, and the rounding they amplify, stay small):
 *   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
 *          0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
 *   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6;
 *          1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
 *   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
 * So for each of the 36 points the sum over input channels is a GEMM
 *   M[xi][tile][co] = V[xi][tile][ci] * U[xi][ci][co],
 * 2.25x fewer multiply-adds than the direct 3x3 (36 per 16 outputs, not
 * 144), paid for by the transforms.
 *
 * Weights (strix_cpu_conv2d_pack, once at load): U = G g G^T computed in
 * double and rounded once, packed per point into the GEMM's NR-wide panels
 * (pack_b_panel's layout with k = Cin): point xi, panel s at
 * u[(xi * npad/NR + s) * Cin * NR], element (ci, j) at + ci * NR + j.
 * 36 * Cin * npad floats, 4x the GEMM's 9 * Cin * npad, stored after the
 * GEMM's panels (which WINO_FITS may still pick at run time).
 *
 * Per call, tasks of the team: a block of wt tiles (a multiple of MR) of
 * one image, each thread in its own workspace:
 *   V [36][wt][cinp]  the input tiles transformed (cinp = Cin rounded up to
 *                     VL; rows past the block's tiles zero), vectors across
 *                     channels;
 *   M [36][wt][npad]  the GEMM's result, the same micro-kernel as the
 *                     convolution's (k ascending, KC-deep blocks);
 * then A^T m A per tile and VL channels, with bias + SiLU + residual
 * (epi_vec, as the GEMM's epilogue) applied before the store into the strided
 * output view.  Every tile's arithmetic is the same whatever its block, so
 * results do not depend on the thread count.
 *
 * Numerics: not the direct convolution's to the bit; measured against a
 * double reference in tests/test_cpu_ops.c (test_conv_winograd). */

#define WINO_POINTS 36

/* The weight rule, within what this code handles: 3x3, stride 1, padding 1,
 * undilated, one group. */
static int wino_packs(int cin, int cout, const strix_conv_params *p)
{
    return p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->ph == 1 && p->pw == 1 &&
           p->dh == 1 && p->dw == 1 && p->groups == 1 && WINO_PACKS(cin, cout);
}

/* Floats of U (above). */
static size_t wino_u_floats(const conv_plan *pl)
{
    return round_floats((size_t)WINO_POINTS * pl->cg * pl->npad);
}

/* U of output channels [s*NR, s*NR + NR) (panel s), zero past ng. */
static void wino_pack_panel(float *u, const float *w, const conv_plan *pl, int s)
{
    static const double G[6][3] = {{1.0 / 4, 0, 0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0, 0, 1}};
    int cin = pl->cg, panels = pl->npad / NR;
    for (int j = 0; j < NR; j++) {
        int co = s * NR + j;
        for (int ci = 0; ci < cin; ci++) {
            double g[3][3] = {{0}}, gg[6][3], t[6][6];
            if (co < pl->ng)
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) g[ky][kx] = w[(((size_t)co * 3 + ky) * 3 + kx) * cin + ci];
            for (int a = 0; a < 6; a++)
                for (int kx = 0; kx < 3; kx++)
                    gg[a][kx] = G[a][0] * g[0][kx] + G[a][1] * g[1][kx] + G[a][2] * g[2][kx];
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++) t[a][b] = gg[a][0] * G[b][0] + gg[a][1] * G[b][1] + gg[a][2] * G[b][2];
            for (int xi = 0; xi < WINO_POINTS; xi++)
                u[(((size_t)xi * panels + s) * cin + ci) * NR + j] = (float)t[xi / 6][xi % 6];
        }
    }
}

/* B^T x for one column of 6 vectors (stride st apart), in place. */
static inline void wino_in_1d(vf *x, int st)
{
    vf d0 = x[0], d1 = x[st], d2 = x[2 * st], d3 = x[3 * st], d4 = x[4 * st], d5 = x[5 * st];
    vf four = v_splat(4.0f), five = v_splat(5.0f), two = v_splat(2.0f);
    vf a = d4 - d2, b = d3 - d1;               /* shared by rows 3, 4 */
    vf c = d4 - four * d2, e = d3 - four * d1; /* shared by rows 1, 2 */
    x[0] = v_fma(four, d0, d4 - five * d2);
    x[st] = c + e;
    x[2 * st] = c - e;
    x[3 * st] = v_fma(two, b, a);
    x[4 * st] = a - two * b;
    x[5 * st] = v_fma(four, d1, d5 - five * d3);
}

/* A^T x for one column of 6 vectors (stride st apart) into 4 (stride so). */
static inline void wino_out_1d(vf *y, int so, const vf *x, int st)
{
    vf m0 = x[0], m1 = x[st], m2 = x[2 * st], m3 = x[3 * st], m4 = x[4 * st], m5 = x[5 * st];
    vf s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    y[0] = m0 + s12 + s34;
    y[so] = v_fma(v_splat(2.0f), d34, d12);
    y[2 * so] = v_fma(v_splat(4.0f), s34, s12);
    y[3 * so] = v_fma(v_splat(8.0f), d34, d12) + m5;
}

typedef struct wino_job {
    const strix_view *out, *in, *residual;
    const float *u, *bias;
    strix_act act;
    const conv_plan *pl;
    float *ws;
    int tiles_x, tiles, blocks; /* tiles per row and per image, blocks per image */
    int wt, cinp;               /* tiles per block (a multiple of MR), Cin rounded up to VL */
    size_t v_floats, m_floats;  /* per thread */
} wino_job;

/* V rows [0, cnt) from tiles t0.. of image n; rows up to the next multiple
 * of MR zero. */
static void wino_input(float *v, const wino_job *j, int n, int t0, int cnt)
{
    const strix_view *in = j->in;
    int cin = j->pl->cg, full = cin / VL * VL, rows = STRIX_CEIL_DIV(cnt, MR) * MR;
    size_t xs = (size_t)j->wt * j->cinp; /* floats between points */
    const float *img = in->data + (size_t)n * in->batch_stride;
    for (int r = 0; r < rows; r++) {
        float *dst = v + (size_t)r * j->cinp;
        if (r >= cnt) {
            for (int xi = 0; xi < WINO_POINTS; xi++) memset(dst + xi * xs, 0, (size_t)j->cinp * sizeof(float));
            continue;
        }
        int t = t0 + r, iy0 = t / j->tiles_x * 4 - 1, ix0 = t % j->tiles_x * 4 - 1;
        const float *src[6][6];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                int iy = iy0 + a, ix = ix0 + b;
                src[a][b] = iy >= 0 && iy < in->h && ix >= 0 && ix < in->w
                                ? img + ((size_t)iy * in->w + ix) * in->pix_stride
                                : NULL;
            }
        for (int c = 0; c < j->cinp; c += VL) {
            vf d[36];
            size_t len = c < full ? VL * sizeof(float) : (size_t)(cin - full) * sizeof(float);
            for (int e = 0; e < 36; e++) {
                const float *s = src[e / 6][e % 6];
                if (!s) d[e] = v_splat(0.0f);
                else if (c < full) d[e] = v_load(s + c);
                else {
                    d[e] = v_splat(0.0f);
                    memcpy(&d[e], s + c, len);
                }
            }
            for (int b = 0; b < 6; b++) wino_in_1d(d + b, 6); /* columns: B^T d */
            for (int a = 0; a < 6; a++) wino_in_1d(d + 6 * a, 1); /* rows: (B^T d) B */
            for (int xi = 0; xi < WINO_POINTS; xi++) v_store(dst + xi * xs + c, d[xi]);
        }
    }
}

/* The 36 GEMMs of a block: M[xi] = V[xi] * U[xi], rows [0, rows). */
static void wino_gemm(float *m, const float *v, const wino_job *j, int rows)
{
    const conv_plan *pl = j->pl;
    int cin = pl->cg, panels = pl->npad / NR;
    for (int xi = 0; xi < WINO_POINTS; xi++) {
        const float *vx = v + (size_t)xi * j->wt * j->cinp;
        float *mx = m + (size_t)xi * j->wt * pl->npad;
        for (int k0 = 0; k0 < cin; k0 += KC) {
            int kc = cin - k0 < KC ? cin - k0 : KC;
            for (int s = 0; s < panels; s++) {
                const float *b = j->u + (((size_t)xi * panels + s) * cin + k0) * NR;
                for (int ir = 0; ir < rows; ir += MR)
                    micro_kernel(kc, vx + (size_t)ir * j->cinp + k0, j->cinp, b,
                                 mx + (size_t)ir * pl->npad + s * NR, pl->npad, k0 > 0);
            }
        }
    }
}

/* A^T m A for tiles t0 .. t0 + cnt - 1 of image n, the epilogue fused, into
 * out (the pixels inside it). */
static void wino_output(const float *m, const wino_job *j, int n, int t0, int cnt)
{
    const strix_view *out = j->out, *res = j->residual;
    int ng = j->pl->ng, full = ng / VL * VL;
    size_t xs = (size_t)j->wt * j->pl->npad;
    for (int r = 0; r < cnt; r++) {
        int t = t0 + r, oy0 = t / j->tiles_x * 4, ox0 = t % j->tiles_x * 4;
        int ny = out->h - oy0 < 4 ? out->h - oy0 : 4, nx = out->w - ox0 < 4 ? out->w - ox0 : 4;
        const float *src = m + (size_t)r * j->pl->npad;
        for (int c = 0; c < ng; c += VL) {
            size_t len = c < full ? VL * sizeof(float) : (size_t)(ng - full) * sizeof(float);
            vf x[36], tmp[24], y[16], bv = v_splat(0.0f);
            for (int xi = 0; xi < WINO_POINTS; xi++) x[xi] = v_load(src + xi * xs + c);
            for (int b = 0; b < 6; b++) wino_out_1d(tmp + b, 6, x + b, 6); /* A^T m: 4 x 6 */
            for (int a = 0; a < 4; a++) wino_out_1d(y + 4 * a, 1, tmp + 6 * a, 1); /* (A^T m) A */
            memcpy(&bv, j->bias + c, len);
            for (int a = 0; a < ny; a++)
                for (int b = 0; b < nx; b++) {
                    float *o = strix_view_at(out, n, oy0 + a, ox0 + b) + c;
                    vf rv = v_splat(0.0f), ov;
                    if (res) memcpy(&rv, strix_view_at(res, n, oy0 + a, ox0 + b) + c, len);
                    ov = epi_vec(y[4 * a + b], bv, rv, j->act);
                    memcpy(o, &ov, len);
                }
        }
    }
}

/* Task: block t % blocks of image t / blocks. */
static void wino_task(void *ctx, int t, int worker)
{
    const wino_job *j = ctx;
    float *v = j->ws + (size_t)worker * (j->v_floats + j->m_floats), *m = v + j->v_floats;
    int n = t / j->blocks, t0 = (t % j->blocks) * j->wt;
    int cnt = j->tiles - t0 < j->wt ? j->tiles - t0 : j->wt;
    wino_input(v, j, n, t0, cnt);
    wino_gemm(m, v, j, STRIX_CEIL_DIV(cnt, MR) * MR);
    wino_output(m, j, n, t0, cnt);
}

/* The job of a call (everything but the pointers the run adds); its
 * per-thread workspace is j.v_floats + j.m_floats floats.  wt: as many
 * tiles as keep V and M within about WINO_BLOCK_BYTES (L2), balanced over
 * the team as the GEMM's row blocks are. */
#define WINO_BLOCK_BYTES (192 * 1024)
static wino_job wino_plan(const strix_view *out, const conv_plan *pl)
{
    wino_job j;
    memset(&j, 0, sizeof j);
    j.pl = pl;
    j.cinp = STRIX_CEIL_DIV(pl->cg, VL) * VL;
    j.tiles_x = STRIX_CEIL_DIV(out->w, 4);
    j.tiles = j.tiles_x * STRIX_CEIL_DIV(out->h, 4);
    int most = (int)(WINO_BLOCK_BYTES / (WINO_POINTS * sizeof(float) * (size_t)(j.cinp + pl->npad))) / MR * MR;
    j.wt = strix_cpu_row_block(j.tiles, out->n, pl->threads, MR, most < MR ? MR : most);
    j.blocks = STRIX_CEIL_DIV(j.tiles, j.wt);
    j.v_floats = round_floats((size_t)WINO_POINTS * j.wt * j.cinp);
    j.m_floats = round_floats((size_t)WINO_POINTS * j.wt * pl->npad);
    return j;
}

static void conv_winograd(const strix_view *out, const strix_view *in, const float *u, const float *bias,
                          const strix_view *residual, const strix_conv_params *p, const conv_plan *pl,
                          float *ws, strix_cpu_team *team)
{
    wino_job j = wino_plan(out, pl);
    j.out = out, j.in = in, j.residual = residual, j.u = u, j.bias = bias, j.act = p->act, j.ws = ws;
    strix_cpu_team_run(team, out->n * j.blocks, wino_task, &j);
}
