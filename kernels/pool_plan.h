/* pool_plan.h — the index arithmetic of kernel set 3's SPPF kernel
 * (pool.cu, maxpool_sppf_v3), in plain C so that it is checked on machines
 * without a GPU (tests/test_cuda_ops.c, sppf_plan: the kernel's passes
 * emulated on the CPU with these functions against strix_cpu_maxpool2d).
 *
 * Why one pass per stage from x: k x k stride-1 max-pools with -inf padding
 * (pad = k/2) compose.  With r = k/2, stage s of the cascade is the
 * (2*s*r + 1)^2 window max of the input x, clipped to the image: for any
 * pixel q of the wider window, clamp(q, p - r, p + r) lies between q and p,
 * so it is inside the image and within r of q.  SPPF (k 5, three stages) is
 * x's 5x5, 9x9 and 13x13 window max.  NaN: a window holding one gives NaN
 * either way.
 *
 * Geometry.  A block owns one STRIX_SPPF_TILE^2 output tile of one image and
 * one 16-byte channel group; the tile is clipped to the image, rows
 * [y0, y1) and columns [x0, x1).  It loads the region: the tile grown by
 * halo = stages * r on each side and clipped to the image (the -inf padding
 * needs no storage; a 20x20 image is one tile with no halo).  Region cell
 * (y, x) sits at shared index (y - ry0) * (rx1 - rx0) + (x - rx0).  Stage s,
 * radius R = s * r <= halo:
 *   rows pass: for rows [max(ry0, y0 - R), min(ry1, y1 + R)) and tile
 *     columns, b = max of the region cells [x - R, x + R] clipped to
 *     [rx0, rx1) (which is the clip to the image, since R <= halo);
 *     b cell (y, x) at (y - ry0) * STRIX_SPPF_TILE + (x - x0);
 *   columns pass: for tile pixels, out = max of b's rows [y - R, y + R]
 *     clipped to [ry0, ry1), all computed by the rows pass.
 * Coordinates are the image's (pixels); every function is total for
 * 0 <= R <= halo and tiles inside the image. */
#ifndef STRIX_KERNELS_POOL_PLAN_H
#define STRIX_KERNELS_POOL_PLAN_H

#ifdef __CUDACC__
#define STRIX_POOL_FN static inline __host__ __device__
#else
#define STRIX_POOL_FN static inline
#endif

#define STRIX_SPPF_TILE 24     /* output pixels per tile side */
#define STRIX_SPPF_HALO_MAX 6  /* the largest stages * (k/2) the kernel takes (SPPF: 3 * 2) */
#define STRIX_SPPF_REGION_MAX (STRIX_SPPF_TILE + 2 * STRIX_SPPF_HALO_MAX)
/* shared cells (16 bytes each) of the region and of the rows pass's output */
#define STRIX_SPPF_A_CELLS (STRIX_SPPF_REGION_MAX * STRIX_SPPF_REGION_MAX)
#define STRIX_SPPF_B_CELLS (STRIX_SPPF_REGION_MAX * STRIX_SPPF_TILE)

typedef struct strix_sppf_tile {
    int y0, y1, x0, x1;     /* the output tile, clipped to the image */
    int ry0, ry1, rx0, rx1; /* the loaded region: the tile +- halo, clipped to the image */
} strix_sppf_tile;

static inline int strix_sppf_tiles(int extent) { return (extent + STRIX_SPPF_TILE - 1) / STRIX_SPPF_TILE; }

/* Tile `index` (row-major over strix_sppf_tiles(w) tiles per row) of an
 * h x w image (h, w >= 1). */
STRIX_POOL_FN strix_sppf_tile strix_sppf_tile_make(int h, int w, int index, int halo)
{
    const int tiles_x = (w + STRIX_SPPF_TILE - 1) / STRIX_SPPF_TILE;
    strix_sppf_tile t;
    t.y0 = index / tiles_x * STRIX_SPPF_TILE;
    t.x0 = index % tiles_x * STRIX_SPPF_TILE;
    t.y1 = t.y0 + STRIX_SPPF_TILE < h ? t.y0 + STRIX_SPPF_TILE : h;
    t.x1 = t.x0 + STRIX_SPPF_TILE < w ? t.x0 + STRIX_SPPF_TILE : w;
    t.ry0 = t.y0 - halo > 0 ? t.y0 - halo : 0;
    t.rx0 = t.x0 - halo > 0 ? t.x0 - halo : 0;
    t.ry1 = t.y1 + halo < h ? t.y1 + halo : h;
    t.rx1 = t.x1 + halo < w ? t.x1 + halo : w;
    return t;
}

/* [*lo, *hi): the window [c - r, c + r] clipped to [from, to). */
STRIX_POOL_FN void strix_sppf_window(int from, int to, int c, int r, int *lo, int *hi)
{
    *lo = c - r > from ? c - r : from;
    *hi = c + r + 1 < to ? c + r + 1 : to;
}

/* The rows pass's rows at radius r: [*lo, *hi). */
STRIX_POOL_FN void strix_sppf_rows(const strix_sppf_tile *t, int r, int *lo, int *hi)
{
    *lo = t->y0 - r > t->ry0 ? t->y0 - r : t->ry0;
    *hi = t->y1 + r < t->ry1 ? t->y1 + r : t->ry1;
}

STRIX_POOL_FN int strix_sppf_a_index(const strix_sppf_tile *t, int y, int x)
{
    return (y - t->ry0) * (t->rx1 - t->rx0) + (x - t->rx0);
}

STRIX_POOL_FN int strix_sppf_b_index(const strix_sppf_tile *t, int y, int x)
{
    return (y - t->ry0) * STRIX_SPPF_TILE + (x - t->x0);
}

#endif
