/* assign.h — optimal linear assignment (minimum total cost) of a rectangular
 * cost matrix, used by the tracker (engine/analytics/track.c) and the MOT evaluator
 * (engine/eval/moteval.c).  Optimal, not greedy: greedy matching by best IoU
 * first swaps identities when two objects cross. */
#ifndef STRIX_ASSIGN_H
#define STRIX_ASSIGN_H

/* cost: [rows, cols] row-major, finite.  Matches min(rows, cols) pairs with
 * the least total cost: row_to_col[r] = the column of row r, or -1 when row r
 * is left over (rows > cols).  Ties are broken as SciPy's
 * linear_sum_assignment breaks them (same algorithm, same visiting order),
 * so results equal reference trackers built on it.
 * Returns 0, or -1 when memory runs out or a cost is not finite. */
int strix_assign(const double *cost, int rows, int cols, int *row_to_col);

#endif
