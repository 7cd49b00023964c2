/* gt_cupti.h — the CUPTI module's public face, for the wrappers (interpose/wrap). The module is
 * part of libgputrace.so in every build; the core never calls it: the module registers itself
 * (GT_MODULE in gt_cupti.c) and hangs its start, flush, exit, fork and capture-range work on the
 * core's hooks. Everything else of cupti/ stays in gt_cupti_internal.h. */
#ifndef GT_CUPTI_H
#define GT_CUPTI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* True while CUPTI takes our call ids (external correlation, or the callbacks that pair them): the
 * wrappers read it inline and skip the calls below while it is false. */
extern atomic_bool gt_cupti_push_allowed;

/* Push our call id around a wrapped call that may launch GPU work; no-ops when CUPTI is not
 * active. */
void gt_cupti_push_correlation(uint64_t corr_id);
void gt_cupti_pop_correlation(void);
/* GPUTRACE_CUPTI_LINK=order: brackets the outermost wrapped cuDNN/cuBLAS call in progress with two
 * correlation ids (begin before the real call, end after it) by calling runtime_get_version, the
 * real cudaRuntimeGetVersion (NULL: none). Returns whether it anchored. */
bool gt_cupti_anchor(bool begin, void *runtime_get_version);
/* Called the first time any runtime wrapper fires: CUPTI may start now, and its API records stay
 * off (the wrappers see the calls). */
void gt_cupti_note_wrapper_fired(void);

#endif
