/* coll_match.h — matching one collective across ranks, on plain arrays: the rule model_ranks.c
 * (a run's traces) and xrank.c (per-rank summaries) both follow, so that the two give the same
 * answer. The collectives of a process group are the same, in the same order, on every rank, and
 * each ends on the ranks that waited for each other at about the same moment: a rank's collective
 * is matched to the reference rank's that ends nearest, within half the distance to the
 * reference's neighbours and at least `spread`, how far one collective's ends lie apart over the
 * ranks (two in flight together, gloo's threads, end in either order within it: the first in
 * order of their end is taken). model_ranks.c says why. */
#ifndef GT_COLL_MATCH_H
#define GT_COLL_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* The i-th of a rank's collectives taken for matching: all[idx[i]], or all[i] when idx is NULL
 * (all of them, in order of their end). */
const gt_collective *gt_coll_pick(const gt_collective *all, const size_t *idx, size_t i);

/* The tolerance for the reference's j-th collective (of n): half the distance to its neighbours,
 * at least spread; 1 s when it has none. */
uint64_t gt_coll_tolerance(const gt_collective *all, const size_t *idx, size_t n, size_t j,
                           uint64_t spread);

/* The rank's collective (of n, from *at on: those before are matched already) that ends nearest
 * to t within tol, or the first within spread of t; *at moves past it. SIZE_MAX when none. */
size_t gt_coll_match_one(const gt_collective *all, const size_t *idx, size_t n, size_t *at,
                         uint64_t t, uint64_t tol, uint64_t spread);

#endif
