/* model_steps_pattern.c — steps from a repeating pattern, when the program has no marker: of the
 * GPU's operations (kernels by name, copies by kind and size, CPU-blocking waits), or, in a
 * GPU-sampled trace (GPUTRACE_SAMPLE), of the calls. A sampled trace holds GPU records only in its
 * windows, so a GPU pattern would make steps there and one long "step" over each stretch between
 * them; the calls are recorded all along, so their pattern (kernel launches by function, graph
 * launches, copies by kind and size, cuDNN and cuBLAS calls, CPU-blocking syncs) gives every step,
 * timed at the calls as NVTX steps are. */
#include "model_steps.h"
#include "model_steps_internal.h"

#include "demangle.h"
#include "textfmt.h"

/* The repeating launch pattern: an operation (a kernel, or a copy of one size and direction) that
 * recurs every k GPU operations almost always is the start of a pattern; the one that recurs
 * most often (one kernel repeated included) with its steps holding most of the GPU's busy time
 * marks the steps. An operation seen at uneven distances (5 times a step) is no marker. */
typedef struct pattern {
    uint32_t id;
    size_t count, first, period;
} pattern;

/* The operations searched: the GPU's (s->ops), or the calls of one thread. */
typedef struct op_list {
    step_op *ops;
    size_t n;
    int calls;        /* calls, not the GPU's operations */
    gt_u64_log *tail; /* the operations past STEP_OPS_MAX: time, key (, thread for calls) */
    uint32_t tid;     /* calls: the loop thread's only (UINT32_MAX: all) */
} op_list;

/* ---- pass 1: the calls ---- */

static void add_call(pass_state *s, uint64_t t, uint64_t key, uint32_t tid)
{
    if (!t)
        return;
    if (s->n_calls >= md_step_ops_max()) /* a long run: the list keeps its beginning */
        s->n_calls =
            md_steps_cut(s->calls, s->call_tids, s->n_calls, &s->calls_tail, &s->calls_cut);
    if (s->calls_cut && t >= s->calls_cut) { /* past it, on disk */
        md_steps_tail_add(&s->calls_tail, t, key, &tid);
        return;
    }
    gt_grow((void **)&s->calls, &s->cap_calls, s->n_calls, sizeof *s->calls);
    gt_grow((void **)&s->call_tids, &s->cap_call_tids, s->n_calls, sizeof *s->call_tids);
    s->call_tids[s->n_calls] = tid;
    s->calls[s->n_calls++] = (step_op){t, key};
}

/* A launch's identity: its function (one kernel name may be several functions: a CuPy loop on the
 * H200 launched one name from two), else its kernel name; the name is kept for the report. */
static uint64_t launch_key(pass_state *s, const gt_rec_api_launch *l)
{
    uint64_t key =
        CPU_KEY(CPU_TAG_LAUNCH) | CPU_KEY_PAYLOAD(l->function ? l->function : l->name_id);
    if (l->name_id && gt_map_get(&s->call_names, key) == UINT32_MAX)
        gt_map_put(&s->call_names, key, l->name_id);
    return key;
}

/* A copy call as the GPU side keys its copy: CUPTI's kind (HtoD 1, DtoH 2, DtoD 8, HtoH 9). */
static uint64_t copy_key(const gt_rec_api_memcpy *m)
{
    static const uint8_t cupti_kind[] = {9, 1, 2, 8, 0};
    uint64_t kind = m->direction < 5 ? cupti_kind[m->direction] : 0;
    return COPY_KEY | kind << 48 | (m->bytes & ((1ull << 48) - 1));
}

void md_steps_on_call(pass_state *s, const gt_record *r)
{
    union {
        gt_api_common c;
        gt_rec_api_launch launch;
        gt_rec_api_memcpy copy;
        gt_rec_api_sync sync;
    } u;
    gt_body_copy(&u, sizeof u, r);
    switch (r->kind) {
    case GT_REC_API_LAUNCH:
        if (u.launch.graph_exec)
            add_call(s, u.c.t_begin_ns,
                     CPU_KEY(CPU_TAG_GRAPH) | CPU_KEY_PAYLOAD(u.launch.graph_exec), r->tid);
        else if (u.launch.function || u.launch.name_id)
            add_call(s, u.c.t_begin_ns, launch_key(s, &u.launch), r->tid);
        break;
    case GT_REC_API_MEMCPY:
        add_call(s, u.c.t_begin_ns, copy_key(&u.copy), r->tid);
        break;
    case GT_REC_API_CUDNN:
    case GT_REC_API_CUBLAS:
        add_call(s, u.c.t_begin_ns, CPU_KEY(CPU_TAG_LIBRARY) | u.c.func, r->tid);
        break;
    case GT_REC_API_SYNC: /* the wait's end ends the step, as on the GPU side */
        if (md_sync_blocks(u.sync.sync_kind))
            add_call(s, u.c.t_end_ns, SYNC_KEY | u.c.func, r->tid);
        break;
    default:
        break;
    }
}

/* ---- the search ---- */

static int cmp_op_time(const void *a, const void *b)
{
    const step_op *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_pattern(const void *a, const void *b)
{
    const pattern *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The commonest distance between successive places (place NULL: the positions themselves), 0
 * when under STEP_MIN_REGULAR of all. */
static size_t regular_period(const size_t *pos, const size_t *place, size_t n, uint64_t *tmp)
{
    for (size_t i = 0; i + 1 < n; i++)
        tmp[i] = place ? place[pos[i + 1]] - place[pos[i]] : pos[i + 1] - pos[i];
    md_sort_u64(tmp, n - 1);
    uint64_t mode = tmp[0];
    size_t best = 0;
    for (size_t i = 0; i + 1 < n;) {
        size_t j = i;
        while (j + 1 < n && tmp[j] == tmp[i])
            j++;
        if (j - i > best) {
            best = j - i;
            mode = tmp[i];
        }
        i = j;
    }
    /* other streams' work shifts long periods by an operation or so; short ones must be exact
     * (a kernel launched 4 times then a copy: distances 1, 1, 1, 2 are no period of 1) */
    uint64_t tol = mode >= 50 ? mode / 50 : mode >= 8;
    size_t near = 0;
    for (size_t i = 0; i + 1 < n; i++)
        near += tmp[i] + tol >= mode && tmp[i] <= mode + tol;
    return (double)near >= STEP_MIN_REGULAR * (double)(n - 1) ? (size_t)mode : 0;
}

static void call_name(const chooser *c, uint64_t key, char *buf, size_t size)
{
    uint64_t what = CPU_KEY_PAYLOAD(key);
    if (CPU_KEY_TAG(key) == CPU_TAG_GRAPH) {
        snprintf(buf, size, "cudaGraphLaunch");
    } else if (CPU_KEY_TAG(key) == CPU_TAG_LIBRARY) {
        const char *fn = gt_api_func_name((uint32_t)what);
        snprintf(buf, size, "%s", fn ? fn : "a library call");
    } else {
        const char *mangled = gt_reader_string(c->s->reader, gt_map_get(&c->s->call_names, key));
        if (mangled)
            gt_demangle_into(mangled, buf, size);
        else
            snprintf(buf, size, "kernel at 0x%llx", (unsigned long long)what);
    }
}

void md_steps_op_name(const chooser *c, uint64_t key, char *buf, size_t size)
{
    static const char *const kinds[] = {"?",    "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    if (key & COPY_KEY) {
        unsigned kind = (unsigned)(key >> 48 & 0x7fff);
        snprintf(buf, size, "Memcpy %s %llu B", kinds[kind <= 10 ? kind : 0],
                 (unsigned long long)(key & ((1ull << 48) - 1)));
        return;
    }
    if (key & SYNC_KEY) {
        uint32_t f = (uint32_t)(key & 0xfffff);
        static const char *const cupti[] = {"a sync", "an event sync", "a sync", "a stream sync",
                                            "a device sync"};
        const char *fn = !(key & 1u << 20) ? gt_api_func_name(f)
                         : (f & 0xff) <= 4 ? cupti[f & 0xff]
                                           : "a sync";
        if (key & SYNC_COPY_BIT)
            snprintf(buf, size, "%s of %llu B", fn ? fn : "a copy",
                     (unsigned long long)SYNC_COPY_BYTES(key));
        else
            snprintf(buf, size, "%s", fn ? fn : "a sync");
        return;
    }
    if (CPU_KEY_TAG(key) != CPU_TAG_NONE) {
        call_name(c, key, buf, size);
        return;
    }
    uint32_t k = gt_map_get(&c->s->kern_by_name, key);
    snprintf(buf, size, "%s",
             gt_short_name(k < c->p->n_kernels ? c->p->kernels[k].name : "?", 50, GT_NAME_KERNEL));
}

/* A wait for the GPU: a sync, or a copy back to the host (a read-back such as loss.item() or a
 * checksum, which the CPU waits for). */
int md_steps_waits_for_gpu(uint64_t key)
{
    return (key & SYNC_KEY) || ((key & COPY_KEY) && (key >> 48 & 0x7fff) == 2 /* DtoH */);
}

/* Whether a wait repeats at one distance through the program's loop: the distances between its
 * runs, less the leading and trailing ones of other lengths (a set-up before the loop, a timing
 * or a checkpoint after it), are regular, and that loop holds at least STEP_MIN_LOOP_WAITS
 * waits and most of the wait's runs. */
#define STEP_MIN_LOOP_WAITS 5
static int wait_regular_in_loop(const size_t *pos, const size_t *place, size_t n)
{
    if (n < STEP_MIN_LOOP_WAITS)
        return 0;
    uint64_t *d = gt_xrealloc(NULL, (n - 1) * sizeof *d),
             *sorted = gt_xrealloc(NULL, n * sizeof *d);
    for (size_t i = 0; i + 1 < n; i++)
        d[i] = sorted[i] = place[pos[i + 1]] - place[pos[i]];
    md_sort_u64(sorted, n - 1);
    uint64_t mode = sorted[(n - 1) / 2]; /* the loop's distance, when it holds most runs */
    uint64_t tol = mode >= 50 ? mode / 50 : mode >= 8;
    size_t lo = 0, hi = n - 1, near = 0;
    while (lo < hi && (d[lo] + tol < mode || d[lo] > mode + tol))
        lo++;
    while (hi > lo && (d[hi - 1] + tol < mode || d[hi - 1] > mode + tol))
        hi--;
    for (size_t i = lo; i < hi; i++)
        near += d[i] + tol >= mode && d[i] <= mode + tol;
    free(sorted);
    free(d);
    return mode > 1 && hi - lo + 1 >= STEP_MIN_LOOP_WAITS && 2 * (hi - lo + 1) > n &&
           (double)near >= STEP_MIN_REGULAR * (double)(hi - lo);
}

/* A program that waits for the GPU at regular intervals times its iterations by those waits
 * (a host clock needs one): one kernel launched over and over between them is the iteration's
 * work, not the iteration (a benchmark's 100 launches and a read-back), so such a period-1
 * pattern gives way when a wait repeats regularly, over the whole run or through its loop. */
static size_t drop_single_ops_between_waits(const op_list *l, pattern *pt, size_t np,
                                            int regular_wait)
{
    for (size_t i = 0; i < np; i++)
        regular_wait |= pt[i].period > 1 && md_steps_waits_for_gpu(l->ops[pt[i].first].key);
    if (!regular_wait)
        return np;
    size_t kept = 0;
    for (size_t i = 0; i < np; i++)
        if (pt[i].period != 1 || md_steps_waits_for_gpu(l->ops[pt[i].first].key))
            pt[kept++] = pt[i];
    return kept;
}

/* Regular operations, most frequent first. pos: the positions of each id, from off[id]. */
static pattern *find_patterns(const op_list *l, const uint32_t *ids, size_t n_ids, size_t *n_out,
                              size_t **pos_out, size_t **off_out)
{
    size_t n = l->n;
    size_t *off = gt_xcalloc(n_ids + 1, sizeof *off), *pos = gt_xrealloc(NULL, n * sizeof *pos);
    for (size_t i = 0; i < n; i++)
        off[ids[i] + 1]++;
    for (size_t k = 0; k < n_ids; k++)
        off[k + 1] += off[k];
    size_t *fill = gt_xcalloc(n_ids + 1, sizeof *fill);
    for (size_t i = 0; i < n; i++)
        pos[off[ids[i]] + fill[ids[i]]++] = i;
    free(fill);
    /* A kernel's or a copy's place counts GPU operations only: CPU waits come every few steps
     * in many programs (a loss logged every 10 steps) and would break a GPU pattern. A wait's
     * place counts everything, so a wait after each iteration's launches is a pattern. (Calls:
     * a launch's or a copy's place counts the calls that give the GPU work.) */
    size_t *place = gt_xrealloc(NULL, n * sizeof *place);
    size_t gpu = 0;
    for (size_t i = 0; i < n; i++)
        place[i] = l->ops[i].key & SYNC_KEY ? i : gpu++;
    uint64_t *tmp = gt_xrealloc(NULL, n * sizeof *tmp);
    pattern *pt = gt_xcalloc(n_ids + 1, sizeof *pt);
    size_t np = 0;
    int loop_wait = 0;
    for (uint32_t k = 0; k < n_ids; k++) {
        size_t cnt = off[k + 1] - off[k];
        size_t period = cnt >= 3 ? regular_period(pos + off[k], place, cnt, tmp) : 0;
        /* one kernel over and over, unless a wait comes between its runs (4 launches and a
         * sync: the iteration is the launches up to the wait) */
        if (period == 1 && regular_period(pos + off[k], NULL, cnt, tmp) != 1)
            period = 0;
        /* a wait right after the same wait, no GPU work between: the waits of a program's
         * tear-down (a static runtime's device syncs as it frees), not an iteration's end */
        if (period == 1 && l->ops[pos[off[k]]].key & SYNC_KEY)
            period = 0;
        if (period)
            pt[np++] = (pattern){k, cnt, pos[off[k]], period};
        else if (md_steps_waits_for_gpu(l->ops[pos[off[k]]].key))
            loop_wait |= wait_regular_in_loop(pos + off[k], place, cnt);
    }
    free(tmp);
    free(place);
    np = drop_single_ops_between_waits(l, pt, np, loop_wait);
    qsort(pt, np, sizeof *pt, cmp_pattern);
    *n_out = np;
    *pos_out = pos;
    *off_out = off;
    return pt;
}

/* The step source and why of a pattern of the GPU's operations. */
static void describe_gpu(const pattern *pt, uint64_t key, const char *name, char *src,
                         size_t src_size, char *why, size_t why_size)
{
    snprintf(src, src_size, "%s (%zu\xc3\x97 %s)",
             key & COPY_KEY   ? "repeating copy"
             : key & SYNC_KEY ? "repeating sync"
                              : "kernel pattern",
             pt->count, name);
    if (key & SYNC_KEY)
        snprintf(why, why_size,
                 "no program marker; the program waits for the GPU ('%s') after every "
                 "%zu GPU operations: each wait ends a step",
                 name, pt->period - 1);
    else if (pt->period == 1)
        snprintf(why, why_size,
                 "no program marker; the GPU runs one kernel over and over: each '%s' "
                 "is a step",
                 name);
    else
        snprintf(why, why_size,
                 "no program marker; the GPU repeats a pattern of %zu operations, each "
                 "starting with '%s'",
                 pt->period, name);
}

/* The same for a pattern of calls: the source says it is the CPU side's, and why the calls. */
static void describe_calls(const pattern *pt, uint64_t key, const char *name, int sampled,
                           char *src, size_t src_size, char *why, size_t why_size)
{
    unsigned tag = key & (COPY_KEY | SYNC_KEY) ? CPU_TAG_NONE : CPU_KEY_TAG(key);
    snprintf(src, src_size, "%s (%zu\xc3\x97 %s) \xe2\x80\x94 CPU side%s",
             key & COPY_KEY           ? "repeating copy"
             : key & SYNC_KEY         ? "repeating sync"
             : tag == CPU_TAG_LIBRARY ? "repeating call"
                                      : "repeating launch",
             pt->count, gt_short_name(name, 40, 0), sampled ? ", GPU sampled" : "");
    const char *lead = sampled ? "no program marker; GPU sampled, so from the calls (recorded all "
                                 "along):"
                               : "no program marker; the GPU's work of several threads or streams "
                                 "interleaves, so from the calls of the thread that launches most:";
    if (key & SYNC_KEY)
        snprintf(why, why_size,
                 "%s the program waits for the GPU ('%s') after every %zu calls: "
                 "each wait ends a step",
                 lead, name, pt->period - 1);
    else if (pt->period == 1)
        snprintf(why, why_size,
                 "%s the program launches one kernel over and over: each '%s' "
                 "is a step",
                 lead, name);
    else
        snprintf(why, why_size, "%s a pattern of %zu calls repeats, each starting with '%s'", lead,
                 pt->period, name);
}

/* Threads that make the step's call exactly as often as the loop thread run one loop together
 * (a parallel-for over tasks, each thread a stream of its own): an iteration is over when every
 * one of them has made its call, so step i ends at the latest of their i-th calls. */
static void join_lockstep_threads(const pass_state *s, uint64_t key, uint64_t *t, size_t n)
{
    gt_u64map index = {0};
    size_t n_tids = 0, *count = gt_xcalloc(s->n_calls + 1, sizeof *count);
    uint32_t *tid_of = gt_xcalloc(s->n_calls + 1, sizeof *tid_of);
    for (size_t i = 0; i < s->n_calls; i++) {
        if (s->calls[i].key != key)
            continue;
        uint32_t k = gt_map_get(&index, s->call_tids[i]);
        if (k == UINT32_MAX) {
            k = (uint32_t)n_tids;
            tid_of[n_tids++] = s->call_tids[i];
            gt_map_put(&index, s->call_tids[i], k);
        }
        count[k]++;
    }
    uint64_t *mine = gt_xrealloc(NULL, n * sizeof *mine);
    for (size_t k = 0; k < n_tids; k++) {
        if (count[k] != n)
            continue;
        size_t m = 0;
        for (size_t i = 0; i < s->n_calls; i++)
            if (s->calls[i].key == key && s->call_tids[i] == tid_of[k])
                mine[m++] = s->calls[i].t;
        qsort(mine, m, sizeof *mine, md_cmp_u64);
        for (size_t i = 0; i < n; i++)
            t[i] = mine[i] > t[i] ? mine[i] : t[i];
    }
    free(mine);
    free(tid_of);
    free(count);
    gt_map_free(&index);
}

/* The calls are the last resort of a fully recorded trace: a loop of them, not a few calls made
 * once per configuration (three convolutions set up one after the other), makes its steps. */
#define STEP_MIN_CALL_LOOP 5

/* The waits for the GPU among the operations searched, each key's positions. */
typedef struct wait_list {
    step_key_ops *waits;
    uint64_t *keys;
    size_t n;
} wait_list;

/* ---- a long run: the operations past STEP_OPS_MAX ---- */

/* The tail's times come nearly in time order (CUPTI hands its records over in batches, a few
 * seconds late): a heap this large puts them in order as they are read. */
#define TAIL_REORDER (1u << 16)

/* Reading the tail: tuples of `stride` numbers (time, key, and the thread for calls); the
 * marker's times after `after` are counted (a first read), then put in order and thinned to
 * every thin-th of the whole series (index: the place of the next one in it). */
typedef struct tail_reader {
    unsigned stride, k;
    uint64_t cur[3];
    uint64_t marker, after;
    uint32_t tid;
    int counting;
    size_t count;
    uint64_t *heap;
    size_t n_heap, index, thin;
    uint64_t *out;
    size_t n_out, cap_out;
} tail_reader;

static void heap_sift_down(uint64_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && h[l] < h[m])
            m = l;
        if (r < n && h[r] < h[m])
            m = r;
        if (m == i)
            return;
        uint64_t x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

static void heap_push(uint64_t *h, size_t *n, uint64_t v)
{
    size_t i = (*n)++;
    h[i] = v;
    while (i && h[(i - 1) / 2] > h[i]) {
        uint64_t x = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

static uint64_t heap_pop(uint64_t *h, size_t *n)
{
    uint64_t top = h[0];
    h[0] = h[--*n];
    heap_sift_down(h, *n, 0);
    return top;
}

/* The next time of the series, in order: kept when its place is a multiple of thin. */
static void tail_emit(tail_reader *r, uint64_t t)
{
    if (r->index++ % r->thin)
        return;
    gt_grow((void **)&r->out, &r->cap_out, r->n_out, sizeof *r->out);
    r->out[r->n_out++] = t;
}

static void tail_value(void *ctx, uint64_t v)
{
    tail_reader *r = ctx;
    r->cur[r->k++] = v;
    if (r->k < r->stride)
        return;
    r->k = 0;
    if (r->cur[1] != r->marker || r->cur[0] <= r->after ||
        (r->stride == 3 && r->tid != UINT32_MAX && r->cur[2] != r->tid))
        return;
    if (r->counting) {
        r->count++;
        return;
    }
    heap_push(r->heap, &r->n_heap, r->cur[0]);
    if (r->n_heap == TAIL_REORDER)
        tail_emit(r, heap_pop(r->heap, &r->n_heap));
}

/* A pattern found in the first STEP_OPS_MAX operations of a long run, carried over the rest:
 * the step boundaries' operation (the pattern's first, or the wait that ends each iteration)
 * past the list, on disk, in time order, appended to *t (n of them). Only when that operation
 * comes once a step in the list (then each later run of it is a step's boundary too); otherwise
 * the steps stay the list's. A series longer than twice the steps kept (a loop of microseconds
 * for hours: tens of millions) is thinned to every *thin-th time as it is read, so that its
 * memory is bounded too; *runs gets the whole series' length. */
static void carry_over_tail(const op_list *l, uint64_t marker, uint64_t **t, size_t *n,
                            size_t *thin, size_t *runs)
{
    *thin = 1;
    *runs = *n;
    if (!l->tail || !l->tail->n || *n < 2)
        return;
    size_t in_list = 0;
    for (size_t i = 0; i < l->n; i++)
        in_list += l->ops[i].key == marker && l->ops[i].t >= (*t)[0] && l->ops[i].t <= (*t)[*n - 1];
    if (in_list > *n + 1)
        return;
    tail_reader r = {.stride = l->calls ? 3 : 2,
                     .marker = marker,
                     .after = (*t)[*n - 1],
                     .tid = l->tid,
                     .counting = 1};
    gt_u64_log_each(l->tail, tail_value, &r);
    if (!r.count)
        return;
    *runs = *n + r.count;
    size_t most = 2 * md_steps_max();
    r.thin = *runs > most ? (*runs + most - 1) / most : 1;
    for (size_t i = 0; i < *n; i++) /* the list's part, thinned alike */
        tail_emit(&r, (*t)[i]);
    r.counting = 0;
    r.heap = gt_xrealloc(NULL, TAIL_REORDER * sizeof *r.heap);
    gt_u64_log_each(l->tail, tail_value, &r);
    while (r.n_heap)
        tail_emit(&r, heap_pop(r.heap, &r.n_heap));
    free(r.heap);
    md_sort_u64(r.out, r.n_out); /* in order but where the disorder passed the heap */
    free(*t);
    *t = r.out;
    *n = r.n_out;
    *thin = r.thin;
}

/* A kernel pattern's first kernel starts when the GPU gets to it, after whatever the host did
 * first in that iteration (a new input shape's cuDNN plans, a batch's preparation): a program that
 * waits for the GPU once an iteration ends its iterations when that wait returns, so the steps
 * run from one such wait to the next. t gets their times; returns how many (0: no such wait). */
static size_t ends_at_waits(const op_list *l, const wait_list *w, const size_t *pos,
                            const pattern *pt, uint64_t key, uint64_t *t, uint64_t *wait_key)
{
    /* kernels only: a copy's own call, as a wait, would end each run of that copy */
    if (l->calls || (key & (COPY_KEY | SYNC_KEY)) || !w->n)
        return 0;
    step_key_ops x = {pos, pt->count};
    long k = md_steps_best_wait(l->ops, l->n, &x, w->waits, w->n);
    if (k < 0)
        return 0;
    *wait_key = w->keys[k];
    size_t n = md_steps_wait_times(l->ops, l->n, &x, &w->waits[k], t);
    return n >= 3 ? n : 0;
}

/* A loop, not several (the pattern's own times passed): its steps end at the waits, t and *n
 * replaced, when those hold the GPU's work (they may cover the loop alone, without its
 * autotuning or compilation, which the pattern's own times hold). Not the pause test: an
 * iteration that builds a new shape's plans is long, and it is a step of the loop (one X, one
 * wait), not a pause between two loops. Returns the wait's key, 0 when the steps stay. */
static uint64_t steps_to_waits(chooser *c, const op_list *l, const wait_list *w, const size_t *pos,
                               const pattern *pt, uint64_t key, uint64_t **t, size_t *n)
{
    uint64_t *at_waits = gt_xrealloc(NULL, pt->count * sizeof *at_waits), wait_key = 0;
    size_t n_waits = ends_at_waits(l, w, pos, pt, key, at_waits, &wait_key), thin = 1, runs = 0;
    if (n_waits)
        carry_over_tail(l, wait_key, &at_waits, &n_waits, &thin, &runs);
    if (n_waits) {
        size_t before = strlen(c->passed);
        if (md_steps_share_implausible(c, at_waits, n_waits, "the waits")) {
            wait_key = 0;
        } else {
            free(*t);
            *t = at_waits;
            at_waits = NULL;
            *n = n_waits;
            c->thin = thin;
            c->runs = runs;
        }
        c->passed[before] = 0; /* the pattern's own steps are noted, if any */
    }
    free(at_waits);
    return wait_key;
}

static int try_pattern(chooser *c, const op_list *l, const wait_list *w, const pattern *pt,
                       const size_t *pos, uint64_t key)
{
    if (l->calls && !c->p->gpu_sampled && pt->count < STEP_MIN_CALL_LOOP)
        return 0;
    uint64_t *t = gt_xrealloc(NULL, pt->count * sizeof *t), wait_key = 0;
    size_t n = pt->count;
    for (size_t i = 0; i < n; i++)
        t[i] = l->ops[pos[i]].t;
    if (l->calls)
        join_lockstep_threads(c->s, key, t, n);
    carry_over_tail(l, key, &t, &n, &c->thin, &c->runs);
    pattern shown = *pt; /* its runs, those past the list's cap too */
    shown.count = c->runs;
    char name[96], src[128], why[512];
    md_steps_op_name(c, key, name, sizeof name);
    char what[sizeof name + 16];
    snprintf(what, sizeof what, "the steps of '%s'", name);
    size_t before = strlen(c->passed);
    int first = !strstr(c->passed, "the steps of '"); /* one such note is enough */
    int ok = !md_steps_times_implausible(c, t, n, what);
    if (!first)
        c->passed[before] = 0;
    if (ok)
        wait_key = steps_to_waits(c, l, w, pos, pt, key, &t, &n);
    if (ok) {
        if (l->calls)
            describe_calls(&shown, key, name, c->p->gpu_sampled, src, sizeof src, why, sizeof why);
        else
            describe_gpu(&shown, key, name, src, sizeof src, why, sizeof why);
        if (wait_key) {
            char wait[96];
            md_steps_op_name(c, wait_key, wait, sizeof wait);
            size_t used = strlen(why);
            snprintf(why + used, sizeof why - used,
                     ", and the program waits for the GPU ('%s') once an iteration: each step "
                     "ends when that wait returns",
                     gt_short_name(wait, 40, 0));
        }
        md_steps_take_times(c, t, n, l->calls ? GT_STEPSRC_CALL_PATTERN : GT_STEPSRC_KERNEL_PATTERN,
                            src);
        md_steps_set_why(c, why);
    } else {
        c->thin = c->runs = 0; /* a refused series: the next source's is its own */
    }
    free(t);
    return ok;
}

static int choose_in(chooser *c, const op_list *l)
{
    size_t n = l->n;
    if (n < 3)
        return 0;
    qsort(l->ops, n, sizeof *l->ops, cmp_op_time);
    gt_u64map dense = {0};
    uint32_t *ids = gt_xrealloc(NULL, n * sizeof *ids);
    uint64_t *keys = gt_xrealloc(NULL, n * sizeof *keys);
    size_t n_ids = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = gt_map_get(&dense, l->ops[i].key);
        if (k == UINT32_MAX) {
            k = (uint32_t)n_ids;
            keys[n_ids++] = l->ops[i].key;
            gt_map_put(&dense, l->ops[i].key, k);
        }
        ids[i] = k;
    }
    gt_map_free(&dense);
    size_t np, *pos, *off;
    pattern *pt = find_patterns(l, ids, n_ids, &np, &pos, &off);
    wait_list w = {gt_xrealloc(NULL, (n_ids + 1) * sizeof *w.waits),
                   gt_xrealloc(NULL, (n_ids + 1) * sizeof *w.keys), 0};
    for (size_t k = 0; k < n_ids; k++)
        if (md_steps_waits_for_gpu(keys[k])) {
            w.keys[w.n] = keys[k];
            w.waits[w.n++] = (step_key_ops){pos + off[k], off[k + 1] - off[k]};
        }
    int ok = 0;
    for (size_t i = 0; i < np && i < STEP_PATTERN_TRIES && !ok; i++)
        ok = try_pattern(c, l, &w, &pt[i], pos + off[pt[i].id], keys[pt[i].id]);
    free(w.waits);
    free(w.keys);
    free(pt);
    free(pos);
    free(off);
    free(ids);
    free(keys);
    return ok;
}

int md_steps_choose_pattern(chooser *c)
{
    op_list l = {c->s->ops, c->s->n_ops, 0, &c->s->ops_tail, UINT32_MAX};
    return choose_in(c, &l);
}

/* ---- the calls: a GPU-sampled trace, or GPU work that interleaves ---- */

/* The thread that gives the GPU most work (launches, graph launches, library calls): the loop's.
 * Other threads' calls (a gloo thread's copies and waits, a data loader's pinned copies) come at
 * their own times and would shift the loop's pattern. UINT32_MAX: none gives the GPU work (copies
 * and waits only), all threads count. */
static uint32_t loop_thread(const pass_state *s)
{
    gt_u64map count = {0};
    uint32_t *n = gt_xcalloc(s->n_calls + 1, sizeof *n), best = UINT32_MAX, best_n = 0;
    uint32_t *tid_of = gt_xcalloc(s->n_calls + 1, sizeof *tid_of);
    size_t n_tids = 0;
    for (size_t i = 0; i < s->n_calls; i++) {
        if (s->calls[i].key & (COPY_KEY | SYNC_KEY))
            continue;
        uint32_t k = gt_map_get(&count, s->call_tids[i]);
        if (k == UINT32_MAX) {
            k = (uint32_t)n_tids;
            tid_of[n_tids++] = s->call_tids[i];
            gt_map_put(&count, s->call_tids[i], k);
        }
        if (++n[k] > best_n) {
            best_n = n[k];
            best = tid_of[k];
        }
    }
    gt_map_free(&count);
    free(n);
    free(tid_of);
    return best;
}

/* Graph launches of the graph exec launched most, in time order; NULL when none. */
static uint64_t *graph_launch_times(const step_op *ops, size_t n, size_t *n_out, size_t *graphs)
{
    gt_u64map index = {0};
    size_t *count = gt_xcalloc(n + 1, sizeof *count), n_graphs = 0, best = SIZE_MAX;
    uint64_t *exec = gt_xcalloc(n + 1, sizeof *exec);
    for (size_t i = 0; i < n; i++) {
        if (ops[i].key & (COPY_KEY | SYNC_KEY) || CPU_KEY_TAG(ops[i].key) != CPU_TAG_GRAPH)
            continue;
        uint32_t k = gt_map_get(&index, ops[i].key);
        if (k == UINT32_MAX) {
            k = (uint32_t)n_graphs;
            exec[n_graphs++] = ops[i].key;
            gt_map_put(&index, ops[i].key, k);
        }
        count[k]++;
        if (best == SIZE_MAX || count[k] > count[best]) /* ties: the one launched first */
            best = k;
    }
    gt_map_free(&index);
    *graphs = n_graphs;
    *n_out = 0;
    uint64_t *t = NULL;
    if (best != SIZE_MAX) {
        t = gt_xrealloc(NULL, count[best] * sizeof *t);
        for (size_t i = 0; i < n; i++)
            if (ops[i].key == exec[best])
                t[(*n_out)++] = ops[i].t;
    }
    free(count);
    free(exec);
    return t;
}

static int choose_graph_calls(chooser *c, const op_list *l)
{
    size_t n = 0, graphs = 0;
    uint64_t *t = graph_launch_times(l->ops, l->n, &n, &graphs);
    int ok = t && md_steps_take_graph_launches(c, t, n, graphs, 1);
    free(t);
    return ok;
}

/* Whether one thread made every call kept. */
static int one_thread(const pass_state *s)
{
    for (size_t i = 1; i < s->n_calls; i++)
        if (s->call_tids[i] != s->call_tids[0])
            return 0;
    return 1;
}

int md_steps_choose_calls(chooser *c)
{
    pass_state *s = c->s;
    if (s->n_calls < 3)
        return 0;
    uint32_t tid = loop_thread(s);
    op_list l = {NULL, 0, 1, &s->calls_tail, tid};
    if (one_thread(s)) {
        /* Every call is the loop thread's: the list itself, sorted in place (a copy would add
         * its size to the step finder's peak, the calls' list being at its cap on a long run;
         * join_lockstep_threads reads the calls in any order, and all of one thread). */
        l.ops = s->calls;
        l.n = s->n_calls;
    } else {
        l.ops = gt_xrealloc(NULL, s->n_calls * sizeof *l.ops);
        for (size_t i = 0; i < s->n_calls; i++)
            if (tid == UINT32_MAX || s->call_tids[i] == tid)
                l.ops[l.n++] = s->calls[i];
    }
    qsort(l.ops, l.n, sizeof *l.ops, cmp_op_time);
    int ok = choose_graph_calls(c, &l) || choose_in(c, &l);
    if (l.ops != s->calls)
        free(l.ops);
    return ok;
}
