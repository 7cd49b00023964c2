/* kernel_link.c — kernels to calls by queued time (kernel_link.h). */
#include "kernel_link.h"

#include <stdlib.h>
#include <string.h>

#include "gtrace_format.h"
#include "util.h"

#define EVICT_EVERY 4096u /* finds between two evictions */

void gt_linker_init(gt_linker *l, uint64_t window_ns)
{
    memset(l, 0, sizeof *l);
    l->window_ns = window_ns;
}

void gt_linker_free(gt_linker *l)
{
    for (size_t i = 0; i < l->n_threads; i++)
        free(l->threads[i].v);
    free(l->threads);
    memset(l, 0, sizeof *l);
}

/* Room for one more element in a growing array; false when memory ran out. */
static bool room_for_one(void **v, size_t n, size_t *cap, size_t elem, size_t first_cap)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? 2 * *cap : first_cap;
    void *nv = realloc(*v, c * elem);
    if (!nv)
        return false;
    *v = nv;
    *cap = c;
    return true;
}

static gt_link_thread *thread_of(gt_linker *l, uint32_t tid)
{
    for (size_t i = 0; i < l->n_threads; i++)
        if (l->threads[i].tid == tid)
            return &l->threads[i];
    if (!room_for_one((void **)&l->threads, l->n_threads, &l->cap_threads, sizeof *l->threads, 8))
        return NULL;
    gt_link_thread *t = &l->threads[l->n_threads++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

/* Drop what eviction left behind before growing: the live part moves to the front. */
static bool make_room(gt_link_thread *t)
{
    if (t->n < t->cap)
        return true;
    if (t->head > t->n / 2) {
        memmove(t->v, t->v + t->head, (t->n - t->head) * sizeof *t->v);
        t->n -= t->head;
        t->head = 0;
        return true;
    }
    return room_for_one((void **)&t->v, t->n, &t->cap, sizeof *t->v, 1024);
}

bool gt_linker_add(gt_linker *l, uint32_t tid, const gt_link_call *c)
{
    if (c->t_end < c->t_begin)
        return true;
    gt_link_thread *t = thread_of(l, tid);
    if (!t || !make_room(t))
        return false;
    /* A thread's records come in the order its calls ended: only an outer call (ending after
     * the calls nested in it) begins before the last one kept; it goes before them, also when
     * both began at the same instant. */
    size_t i = t->n;
    while (i > t->head && (t->v[i - 1].t_begin > c->t_begin ||
                           (t->v[i - 1].t_begin == c->t_begin && t->v[i - 1].t_end < c->t_end))) {
        t->v[i] = t->v[i - 1];
        i--;
    }
    t->v[i] = *c;
    t->n++;
    if (c->t_end > t->last_end)
        t->last_end = c->t_end;
    for (size_t j = i; j < t->n; j++) {
        uint64_t before = j > t->head ? t->v[j - 1].max_end : 0;
        t->v[j].max_end = t->v[j].t_end > before ? t->v[j].t_end : before;
    }
    return true;
}

bool gt_link_call_of_record(const gt_record *r, gt_link_call *out)
{
    if (r->kind != GT_REC_API_LAUNCH && r->kind != GT_REC_API_CUDNN && r->kind != GT_REC_API_CUBLAS)
        return false;
    gt_rec_api_launch a;
    gt_body_copy(&a, sizeof a, r);
    if (r->body_size < sizeof a.c || a.c.result != 0)
        return false; /* a failed call launched nothing */
    *out = (gt_link_call){.t_begin = a.c.t_begin_ns,
                          .t_end = a.c.t_end_ns,
                          .call_id = a.c.corr_id,
                          .is_launch = r->kind == GT_REC_API_LAUNCH};
    if (out->is_launch)
        out->name_id = a.name_id;
    return true;
}

bool gt_linker_on_record(gt_linker *l, const gt_record *r)
{
    gt_link_call c;
    return gt_link_call_of_record(r, &c) ? gt_linker_add(l, r->tid, &c) : true;
}

bool gt_link_call_holds(const gt_link_call *c, uint64_t queued_ns, uint32_t kernel_name_id)
{
    return queued_ns && c->t_begin <= queued_ns && queued_ns <= c->t_end &&
           (!c->is_launch || c->name_id == kernel_name_id);
}

bool gt_linker_call_may_follow(const gt_linker *l, uint64_t queued_ns, uint64_t recent_ns)
{
    for (size_t i = 0; i < l->n_threads; i++) {
        uint64_t e = l->threads[i].last_end;
        if (e < queued_ns && queued_ns - e <= recent_ns)
            return true;
    }
    return false;
}

static void evict(gt_linker *l)
{
    if (!l->window_ns || l->newest_queued < l->window_ns)
        return;
    uint64_t horizon = l->newest_queued - l->window_ns;
    for (size_t i = 0; i < l->n_threads; i++) {
        gt_link_thread *t = &l->threads[i];
        /* Calls that ended before the horizon; a long call still running keeps the ones after
         * it (max_end) only as a bound on the scan, never as candidates. */
        while (t->head < t->n && t->v[t->head].t_end < horizon)
            t->head++;
    }
}

/* The best candidate of one thread: a launch of this kernel (innermost), else the outermost
 * library call, else a launch under another name (the wrapper could not name its kernel the way
 * CUPTI does: unknown, or a stub's symbol). */
typedef struct thread_pick {
    const gt_link_call *named, *library, *unnamed;
} thread_pick;

static thread_pick pick_in_thread(const gt_link_thread *t, uint64_t q, uint32_t name_id)
{
    thread_pick p = {0};
    size_t lo = t->head, hi = t->n; /* first index with t_begin > q */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].t_begin <= q)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > t->head && t->v[i].max_end >= q;) {
        const gt_link_call *c = &t->v[i];
        if (c->t_end < q)
            continue;
        if (!c->is_launch)
            p.library = c; /* scanning backwards: the last one seen is the outermost */
        else if (c->name_id == name_id && !p.named)
            p.named = c;
        else if (c->name_id != name_id && !p.unnamed)
            p.unnamed = c;
    }
    return p;
}

uint64_t gt_linker_find(gt_linker *l, uint64_t queued_ns, uint32_t kernel_name_id)
{
    if (!queued_ns)
        return 0;
    if (queued_ns > l->newest_queued)
        l->newest_queued = queued_ns;
    if (++l->finds % EVICT_EVERY == 0)
        evict(l);
    const gt_link_call *named = NULL, *library = NULL, *unnamed = NULL;
    int n_named = 0, n_library = 0, n_unnamed = 0;
    for (size_t i = 0; i < l->n_threads; i++) {
        thread_pick p = pick_in_thread(&l->threads[i], queued_ns, kernel_name_id);
        if (p.named)
            named = p.named, n_named++;
        if (p.library)
            library = p.library, n_library++;
        if (p.unnamed)
            unnamed = p.unnamed, n_unnamed++;
    }
    const gt_link_call *c = NULL;
    int n = 0;
    if (n_named)
        c = named, n = n_named;
    else if (n_library)
        c = library, n = n_library;
    else if (n_unnamed)
        c = unnamed, n = n_unnamed;
    if (n > 1) {
        l->st.ambiguous++;
        return 0;
    }
    if (!c) {
        l->st.no_call++;
        return 0;
    }
    l->st.linked++;
    return c->call_id;
}
