/* assign.c — rectangular linear assignment by shortest augmenting paths
 * (Jonker-Volgenant without the initialisation phase, in the form of
 * D. F. Crouse, "On implementing 2D rectangular assignment algorithms",
 * IEEE TAES 2016), the algorithm behind SciPy's linear_sum_assignment.
 *
 * One augmenting path per row: a Dijkstra-like search over reduced costs
 * cost[i][j] - u[i] - v[j] from the new row to a free column, then the dual
 * variables u, v are updated and the path is flipped.  O(rows^2 * cols).
 * Needs rows <= cols: a tall matrix is solved transposed.
 */
#include "assign.h"

#include <math.h>
#include <stdlib.h>

/* Solve a [nr, nc] problem, nr <= nc, cost read as c(i, j) = cost[i*rs + j*cs]
 * (so a transposed view needs no copy); col4row[i] receives row i's column. */
static int solve(const double *cost, int nr, int nc, int rs, int cs, int *col4row)
{
    double *u = calloc((size_t)nr, sizeof *u), *v = calloc((size_t)nc, sizeof *v);
    double *spc = malloc(sizeof *spc * (size_t)nc);
    int *path = malloc(sizeof *path * (size_t)nc), *row4col = malloc(sizeof *row4col * (size_t)nc);
    int *remaining = malloc(sizeof *remaining * (size_t)nc);
    char *sr = malloc((size_t)nr), *sc = malloc((size_t)nc);
    int rc = -1;
    if (!u || !v || !spc || !path || !row4col || !remaining || !sr || !sc) goto out;
    for (int i = 0; i < nr; i++) col4row[i] = -1;
    for (int j = 0; j < nc; j++) row4col[j] = -1;

    for (int cur = 0; cur < nr; cur++) {
        int left = nc;
        for (int it = 0; it < nc; it++) remaining[it] = nc - it - 1; /* SciPy's visiting order */
        for (int j = 0; j < nc; j++) {
            spc[j] = INFINITY;
            path[j] = -1;
            sc[j] = 0;
        }
        for (int i = 0; i < nr; i++) sr[i] = 0;
        double min_val = 0;
        int i = cur, sink = -1;
        while (sink < 0) {
            sr[i] = 1;
            int index = -1;
            double lowest = INFINITY;
            for (int it = 0; it < left; it++) {
                int j = remaining[it];
                double r = min_val + cost[(long)i * rs + (long)j * cs] - u[i] - v[j];
                if (r < spc[j]) {
                    path[j] = i;
                    spc[j] = r;
                }
                /* prefer a free column among equals: ends the search sooner */
                if (spc[j] < lowest || (spc[j] == lowest && row4col[j] < 0)) {
                    lowest = spc[j];
                    index = it;
                }
            }
            min_val = lowest;
            if (index < 0 || !isfinite(min_val)) goto out; /* only with non-finite costs */
            int j = remaining[index];
            if (row4col[j] < 0) sink = j;
            else i = row4col[j];
            sc[j] = 1;
            remaining[index] = remaining[--left];
        }
        u[cur] += min_val;
        for (int r = 0; r < nr; r++)
            if (sr[r] && r != cur) u[r] += min_val - spc[col4row[r]];
        for (int j = 0; j < nc; j++)
            if (sc[j]) v[j] -= min_val - spc[j];
        for (int j = sink;;) { /* flip the path */
            int r = path[j];
            row4col[j] = r;
            int t = col4row[r];
            col4row[r] = j;
            j = t;
            if (r == cur) break;
        }
    }
    rc = 0;
out:
    free(u);
    free(v);
    free(spc);
    free(path);
    free(row4col);
    free(remaining);
    free(sr);
    free(sc);
    return rc;
}

int strix_assign(const double *cost, int rows, int cols, int *row_to_col)
{
    if (rows <= 0 || cols <= 0) {
        for (int r = 0; r < rows; r++) row_to_col[r] = -1;
        return 0;
    }
    if (rows <= cols) return solve(cost, rows, cols, cols, 1, row_to_col);
    int *row_of = malloc(sizeof *row_of * (size_t)cols);
    if (!row_of) return -1;
    int rc = solve(cost, cols, rows, 1, cols, row_of); /* transposed: columns are the rows */
    if (!rc) {
        for (int r = 0; r < rows; r++) row_to_col[r] = -1;
        for (int c = 0; c < cols; c++) row_to_col[row_of[c]] = c;
    }
    free(row_of);
    return rc;
}
