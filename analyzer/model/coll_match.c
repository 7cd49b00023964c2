/* coll_match.c — one collective matched across ranks (coll_match.h). */
#include "coll_match.h"

const gt_collective *gt_coll_pick(const gt_collective *all, const size_t *idx, size_t i)
{
    return &all[idx ? idx[i] : i];
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

uint64_t gt_coll_tolerance(const gt_collective *all, const size_t *idx, size_t n, size_t j,
                           uint64_t spread)
{
    uint64_t t = gt_coll_pick(all, idx, j)->done_ns, tol = UINT64_MAX;
    if (j > 0)
        tol = (t - gt_coll_pick(all, idx, j - 1)->done_ns) / 2;
    if (j + 1 < n && (gt_coll_pick(all, idx, j + 1)->done_ns - t) / 2 < tol)
        tol = (gt_coll_pick(all, idx, j + 1)->done_ns - t) / 2;
    if (tol == UINT64_MAX)
        return 1000000000ull;
    return tol > spread ? tol : spread;
}

size_t gt_coll_match_one(const gt_collective *all, const size_t *idx, size_t n, size_t *at,
                         uint64_t t, uint64_t tol, uint64_t spread)
{
    while (*at < n && gt_coll_pick(all, idx, *at)->done_ns + tol < t)
        (*at)++;
    size_t best = SIZE_MAX;
    for (size_t i = *at; i < n && gt_coll_pick(all, idx, i)->done_ns <= t + tol; i++) {
        uint64_t d = absdiff(gt_coll_pick(all, idx, i)->done_ns, t);
        if (d <= spread) { /* in flight together: the first in order of their end */
            best = i;
            break;
        }
        if (best == SIZE_MAX || d < absdiff(gt_coll_pick(all, idx, best)->done_ns, t))
            best = i;
    }
    if (best != SIZE_MAX)
        *at = best + 1;
    return best;
}
