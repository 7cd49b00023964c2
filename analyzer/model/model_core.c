/* model_core.c — what every builder of the model shares (model_core.h): what a record is (a
 * blocking sync, a copy's host memory, a read-back that is a sync), the arrays several builders
 * fill (busy intervals, idle gaps, timeline bins, per-thread state), the searches over sorted
 * intervals, and the gt_proc accessors. It calls no builder: builders depend on it, never the
 * other way (model_load.c gives their order). */
#include "model_core.h"

int md_contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

int md_sync_blocks(uint32_t kind)
{
    return kind == GT_SYNC_DEVICE || kind == GT_SYNC_STREAM || kind == GT_SYNC_EVENT;
}

uint8_t md_host_kind_of(uint8_t dir, uint8_t src_kind, uint8_t dst_kind)
{
    if (dir == GT_DIR_H2D || dir == GT_DIR_H2H)
        return src_kind < 6 ? src_kind : GT_MEM_UNKNOWN;
    if (dir == GT_DIR_D2H)
        return dst_kind < 6 ? dst_kind : GT_MEM_UNKNOWN;
    return GT_MEM_DEVICE;
}

/* A copy the CPU waits for: synchronous calls, and pageable D2H (staged, returns when done). */
int md_copy_blocks(const gt_rec_api_memcpy *m, uint8_t hk)
{
    return !m->is_async || (m->direction == GT_DIR_D2H && hk == GT_MEM_PAGEABLE);
}

/* A blocking read-back of a small result (loss.item()): a synchronization, not a data copy. */
int md_copy_is_item_like(const gt_rec_api_memcpy *m, uint8_t hk)
{
    return m->direction == GT_DIR_D2H && md_copy_blocks(m, hk) &&
           m->bytes <= GT_ITEM_COPY_MAX_BYTES;
}

void md_note_time(gt_proc *p, uint64_t a, uint64_t b)
{
    if (!a)
        return;
    if (!p->t_min || a < p->t_min)
        p->t_min = a;
    if (b > p->t_max)
        p->t_max = b;
    if (a > p->t_max)
        p->t_max = a;
}

tid_stack *md_tid_for(pass_state *s, uint32_t tid)
{
    for (size_t i = 0; i < s->n_tids; i++)
        if (s->tids[i].tid == tid)
            return &s->tids[i];
    if (s->n_tids >= MAX_TIDS)
        return NULL;
    tid_stack *t = &s->tids[s->n_tids++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

static int cmp_iv(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Halves the buckets' number by doubling their width: pairs are added. */
static void merged_coarsen(md_merged *m)
{
    for (size_t i = 0; i < MD_MERGED_BUCKETS / 2; i++) {
        md_merged_bucket *x = &m->buckets[2 * i], *y = &m->buckets[2 * i + 1];
        m->buckets[i] = (md_merged_bucket){x->ns + y->ns, x->gaps + y->gaps};
    }
    memset(&m->buckets[MD_MERGED_BUCKETS / 2], 0, MD_MERGED_BUCKETS / 2 * sizeof *m->buckets);
    m->n = (m->n + 1) / 2;
    m->width *= 2;
}

/* One gap [a, b) merged into busy time: in its bucket (a gap before the first bucket in it). */
static void merged_add(md_merged *m, uint64_t a, uint64_t b)
{
    m->ns += b - a;
    m->gaps++;
    if (!m->buckets && !(m->buckets = calloc(MD_MERGED_BUCKETS, sizeof *m->buckets)))
        return; /* the totals stay right; md_merged_in then finds no bucket */
    uint64_t t = a > m->origin ? a - m->origin : 0;
    while (t / m->width >= MD_MERGED_BUCKETS)
        merged_coarsen(m);
    size_t i = (size_t)(t / m->width);
    m->buckets[i].ns += b - a;
    m->buckets[i].gaps++;
    if (i + 1 > m->n)
        m->n = i + 1;
}

void md_merged_in(const gt_proc *p, const md_merged *m, md_span_fn inside, uint64_t *ns,
                  uint64_t *gaps)
{
    *ns = *gaps = 0;
    if (!m->buckets)
        return;
    for (size_t i = 0; i < m->n; i++) {
        const md_merged_bucket *k = &m->buckets[i];
        if (!k->ns)
            continue;
        uint64_t x = m->origin + i * m->width, y = x + m->width;
        uint64_t in = inside(p, x, y);
        if (in > m->width)
            in = m->width;
        *ns += (uint64_t)((unsigned __int128)k->ns * in / m->width);
        *gaps += (uint64_t)((unsigned __int128)k->gaps * in / m->width);
    }
}

size_t md_merge_intervals(uint64_t (*iv)[2], size_t n, uint64_t gap, md_merged *merged)
{
    if (!n)
        return 0;
    qsort(iv, n, sizeof iv[0], cmp_iv);
    if (merged && !merged->width) /* the buckets start at the earliest busy time known now */
        merged->origin = iv[0][0], merged->width = 1000;
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i][0] <= iv[w][1] + gap) {
            if (iv[i][0] > iv[w][1] && merged) /* a real gap, taken into busy time */
                merged_add(merged, iv[w][1], iv[i][0]);
            if (iv[i][1] > iv[w][1])
                iv[w][1] = iv[i][1];
        } else {
            iv[++w][0] = iv[i][0];
            iv[w][1] = iv[i][1];
        }
    }
    return w + 1;
}

void md_iv_merge(pass_state *s, uint64_t gap)
{
    s->n_iv = md_merge_intervals(s->iv, s->n_iv, gap, gap ? &s->merged : NULL);
}

size_t md_intervals_max(void)
{
    static size_t max;
    if (!max)
        max = gt_env_count("GPUTRACE_INTERVALS_MAX", 64, INTERVALS_MAX);
    return max;
}

void md_iv_add(pass_state *s, uint64_t a, uint64_t b)
{
    if (!a || b < a)
        return;
    size_t max = md_intervals_max();
    if (s->n_iv >= max) {
        /* Bound memory: merge overlaps; if that is not enough, also merge ever larger gaps, the
         * idle time so taken counted over time (s->merged): md_busy and the steady figures
         * give it back, and the report says it was done. */
        md_iv_merge(s, s->merge_gap);
        while (s->n_iv > max / 2) {
            s->merge_gap = s->merge_gap ? s->merge_gap * 2 : 1000;
            md_iv_merge(s, s->merge_gap);
        }
    }
    gt_grow((void **)&s->iv, &s->cap_iv, s->n_iv, sizeof s->iv[0]);
    s->iv[s->n_iv][0] = a;
    s->iv[s->n_iv][1] = b;
    s->n_iv++;
}

_Static_assert(sizeof(gt_gap) == 64, "a gap is 64 bytes: a long run keeps millions");

uint64_t gt_gap_ns(const gt_gap *g, int part)
{
    return (uint64_t)g->part[part] << g->shift;
}

void gt_gap_add(gt_gap *g, int part, uint64_t ns)
{
    gt_gap_set(g, part, gt_gap_ns(g, part) + ns);
}

uint64_t md_gap_copy_ns(const gt_gap *g)
{
    uint64_t copy = gt_gap_ns(g, GT_GAP_COPY), staging = gt_gap_ns(g, GT_GAP_STAGING);
    return copy > staging ? copy : staging;
}

void gt_gap_set(gt_gap *g, int part, uint64_t ns)
{
    while (g->shift < 63 && (ns >> g->shift) > UINT32_MAX) { /* one more bit for every part */
        for (int k = 0; k < GT_GAP_PARTS; k++)
            g->part[k] >>= 1;
        g->shift++;
    }
    g->part[part] = (uint32_t)(ns >> g->shift);
}

void md_gap_add(gt_proc *p, size_t *cap, uint64_t a, uint64_t b)
{
    if (b - a < GT_GAP_MIN_NS) {
        p->small_gap_ns += b - a;
        p->small_gap_count++;
        return;
    }
    gt_grow((void **)&p->gaps, cap, p->n_gaps, sizeof *p->gaps);
    memset(&p->gaps[p->n_gaps], 0, sizeof *p->gaps);
    p->gaps[p->n_gaps].start_ns = a;
    p->gaps[p->n_gaps].end_ns = b;
    p->n_gaps++;
}

/* [a, b] spread over the timeline's bins: busy GPU time, or (covered) time inside a sampled
 * window. */
void md_bins_add(gt_proc *p, uint64_t a, uint64_t b, int covered)
{
    while (a < b) {
        size_t bi = (a - p->bin_origin) / p->bin_ns;
        if (bi >= GT_TIMELINE_BINS)
            break;
        uint64_t bend = p->bin_origin + (bi + 1) * p->bin_ns;
        uint64_t e = b < bend ? b : bend;
        if (covered)
            p->bins[bi].covered_ns += e - a;
        else
            p->bins[bi].gpu_busy_ns += e - a;
        a = e;
    }
}

int md_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sift_down(uint64_t *v, size_t i, size_t n)
{
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (v[i] >= v[c])
            return;
        uint64_t t = v[i];
        v[i] = v[c];
        v[c] = t;
    }
}

void md_sort_u64(uint64_t *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(v, i, n);
    for (size_t end = n; end > 1; end--) {
        uint64_t t = v[0];
        v[0] = v[end - 1];
        v[end - 1] = t;
        sift_down(v, 0, end - 1);
    }
}

/* First gap whose end is after t (gaps are sorted and disjoint). */
size_t md_first_ending_after(const void *v, size_t n, size_t stride, size_t end_offset, uint64_t t)
{
    return gt_first_past(v, n, stride, end_offset, t);
}

size_t md_gap_lower(const gt_proc *p, uint64_t t)
{
    return MD_FIRST_ENDING_AFTER(p->gaps, p->n_gaps, t);
}

/* ---- a library call's aggregate ---- */

void md_call_agg_set(pass_state *s, uint64_t call, uint32_t agg)
{
    if (!s->call_agg.width)
        s->call_agg.width = 32;
    if (md_bits_set(&s->call_agg, call, agg + 1u) != 0) /* 0: none */
        gt_map_put(&s->call_by_corr, call, agg);
}

uint32_t md_call_agg(pass_state *s, uint64_t call)
{
    if (call >> 32)
        return gt_map_get(&s->call_by_corr, call);
    return s->call_agg.width ? md_bits_get(&s->call_agg, call) - 1u : UINT32_MAX;
}

/* ---- the links of pass 1 ---- */

/* Stable (a later decision for the same op stays after the earlier): bottom-up merge sort. */
static void links_merge_sort(md_link *v, size_t n)
{
    md_link *tmp = gt_xrealloc(NULL, n * sizeof *tmp), *src = v, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = src[j].corr < src[i].corr ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        md_link *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(tmp);
}

/* Sorted by corr, each op once: its last decision (a map's overwrite). Returns the count. */
static size_t links_sort_last(md_link *v, size_t n)
{
    size_t i = 1;
    while (i < n && v[i - 1].corr < v[i].corr) /* decisions come mostly in order */
        i++;
    if (i >= n)
        return n;
    links_merge_sort(v, n);
    size_t w = 0;
    for (i = 1; i < n; i++) {
        if (v[i].corr != v[w].corr)
            w++;
        v[w] = v[i];
    }
    return w + 1;
}

/* Links in order (sorted by corr) merged with the newly kept ones (sorted) into pack out: a newer
 * decision replaces an older one, and an op in drop (sorted: its newer decision went to
 * link_how) goes. next(ctx, &link) gives the old ones. */
typedef int (*links_next_fn)(void *ctx, md_link *out);
static void links_merge_into(md_link_pack *out, links_next_fn next, void *ctx, const md_link *kept,
                             size_t n_kept, const uint64_t *drop, size_t n_drop)
{
    md_link o;
    int have_old = next(ctx, &o);
    size_t j = 0, d = 0;
    while (have_old || j < n_kept) {
        if (have_old && (j == n_kept || o.corr <= kept[j].corr)) {
            while (d < n_drop && drop[d] < o.corr)
                d++;
            int replaced = j < n_kept && o.corr == kept[j].corr;
            if (!replaced && !(d < n_drop && drop[d] == o.corr))
                md_link_pack_append(out, &o);
            have_old = next(ctx, &o);
        } else {
            md_link_pack_append(out, &kept[j++]);
        }
    }
}

typedef struct pack_cursor {
    md_link_pack *pk;
    md_link_pack_iter it;
} pack_cursor;

static int pack_next(void *ctx, md_link *out)
{
    pack_cursor *c = ctx;
    return md_link_pack_next(c->pk, &c->it, out);
}

typedef struct link_array {
    const md_link *v;
    size_t n, i;
} link_array;

static int array_next(void *ctx, md_link *out)
{
    link_array *a = ctx;
    if (a->i >= a->n)
        return 0;
    *out = a->v[a->i++];
    return 1;
}

/* Links decided late reach back a few blocks at most: those blocks are read, the pack cut there
 * and the merge appended, so a compaction costs what it adds, not the pack's size (the pack may be
 * mostly on disk). A merge that reaches further back than this rewrites the pack into a new one. */
#define LINKS_TAIL_MAX (1u << 20)

/* The packed links and the newly kept ones (sorted), merged. */
static void links_merge_kept(pass_state *s, const md_link *kept, size_t n_kept,
                             const uint64_t *drop, size_t n_drop)
{
    if (!s->links_packed) {
        s->links_packed = gt_xcalloc(1, sizeof *s->links_packed);
        s->links_packed->memory_max = s->link_pack_memory;
    }
    md_link_pack *pk = s->links_packed;
    uint64_t lowest = n_kept ? kept[0].corr : UINT64_MAX;
    if (n_drop && drop[0] < lowest)
        lowest = drop[0];
    size_t from = md_link_pack_block_of(pk, lowest);
    size_t tail = pk->n - from * MD_LINK_PACK_BLOCK; /* from is a block of the pack, or 0 */
    if (pk->n == 0 || lowest > pk->last_corr) {      /* all after the pack: appended */
        link_array none = {0};
        links_merge_into(pk, array_next, &none, kept, n_kept, NULL, 0);
    } else if (tail <= (s->links_tail_max ? s->links_tail_max : LINKS_TAIL_MAX)) {
        md_link *old = gt_xrealloc(NULL, (tail ? tail : 1) * sizeof *old);
        md_link_pack_iter *it = gt_xcalloc(1, sizeof *it);
        it->i = from * MD_LINK_PACK_BLOCK;
        for (size_t k = 0; k < tail; k++)
            md_link_pack_next(pk, it, &old[k]);
        free(it);
        md_link_pack_truncate(pk, from);
        link_array a = {old, tail, 0};
        links_merge_into(pk, array_next, &a, kept, n_kept, drop, n_drop);
        free(old);
    } else {
        pack_cursor *c = gt_xcalloc(1, sizeof *c);
        c->pk = pk;
        md_link_pack *merged = gt_xcalloc(1, sizeof *merged);
        merged->memory_max = s->link_pack_memory;
        links_merge_into(merged, pack_next, c, kept, n_kept, drop, n_drop);
        free(c);
        md_link_pack_free(pk);
        free(pk);
        s->links_packed = merged;
    }
}

/* Append the es bytes at x to the array *v of *n elements (capacity *cap). */
static void push(void **v, size_t *n, size_t *cap, const void *x, size_t es)
{
    gt_grow(v, cap, *n, es);
    memcpy((char *)*v + (*n)++ * es, x, es);
}

/* The decisions since the last compaction: a link to a cuDNN call or a GEMM is kept (pass 2
 * gives the call its kernel's time); a link to any other call that pass 1 has read (all of them
 * when final) leaves only how it was made, 2 bits by corr, and supersedes an older kept one; a
 * link to a call not read yet waits for the next compaction. */
static void links_compact(pass_state *s, int final)
{
    if (!s->link_how.width)
        s->link_how.width = 2;
    if (s->n_links_v == 0)
        return; /* no decision since the last one (links_v may still be NULL) */
    size_t n = links_sort_last(s->links_v, s->n_links_v), n_kept = 0;
    md_link *waiting = NULL;
    uint64_t *drop = NULL;
    size_t n_waiting = 0, cap_waiting = 0, n_drop = 0, cap_drop = 0;
    for (size_t i = 0; i < n; i++) {
        md_link l = s->links_v[i]; /* kept ones move down in place: i >= n_kept */
        int library = l.call != UINT32_MAX && md_call_agg(s, l.call) != UINT32_MAX;
        int read = final || md_bits_get(&s->calls_seen, l.call);
        unsigned how = l.call == UINT32_MAX ? 0 : l.how; /* no such call: not linked */
        md_link older;
        if (library || (read && md_bits_set(&s->link_how, l.corr, how) != 0))
            s->links_v[n_kept++] = l; /* also an op whose corr has no bits (past 32 bits) */
        else if (read && s->links_packed && md_link_pack_find(s->links_packed, l.corr, &older))
            push((void **)&drop, &n_drop, &cap_drop, &l.corr, sizeof l.corr);
        else if (!read)
            push((void **)&waiting, &n_waiting, &cap_waiting, &l, sizeof l);
    }
    links_merge_kept(s, s->links_v, n_kept, drop, n_drop);
    free(drop);
    if (n_waiting > 0)
        memcpy(s->links_v, waiting, n_waiting * sizeof *waiting);
    s->n_links_v = s->n_links_waiting = n_waiting;
    free(waiting);
}

/* Decisions between compactions (besides those still waiting for their call): the fresh
 * decisions are 16 bytes each, so this bounds them (16 MB); a compaction costs about what it
 * adds (links_merge_kept). */
#define LINKS_COMPACT_MIN (1u << 20)

void md_link_add(pass_state *s, uint64_t corr, uint32_t call, uint32_t how)
{
    gt_grow((void **)&s->links_v, &s->cap_links_v, s->n_links_v, sizeof *s->links_v);
    s->links_v[s->n_links_v++] = (md_link){.corr = corr, .call = call, .how = how};
    if (s->n_links_v >= s->n_links_waiting + LINKS_COMPACT_MIN)
        links_compact(s, 0);
}

void md_link_call_seen(pass_state *s, uint64_t call)
{
    if (!s->calls_seen.width)
        s->calls_seen.width = 1;
    md_bits_set(&s->calls_seen, call, 1); /* past 32 bits: its links wait until the end */
}

void md_links_sort(pass_state *s)
{
    links_compact(s, 1);
    free(s->links_v); /* every decision is packed or in link_how now */
    s->links_v = NULL;
    s->n_links_v = s->cap_links_v = 0;
    md_bits_free(&s->calls_seen); /* pass 2 does not ask */
}

int md_link_of(pass_state *s, uint64_t corr, uint32_t *call)
{
    md_link l;
    if (s->links_packed && md_link_pack_find(s->links_packed, corr, &l)) {
        if (l.call == UINT32_MAX) /* the maps of before held no such call */
            return 0;
        *call = l.call;
        return (int)l.how;
    }
    return (int)md_bits_get(&s->link_how, corr);
}

size_t md_links_kept(const pass_state *s)
{
    return s->links_packed ? s->links_packed->n : 0;
}

void md_links_free(pass_state *s)
{
    free(s->links_v);
    s->links_v = NULL;
    s->n_links_v = s->cap_links_v = 0;
    if (s->links_packed) {
        md_link_pack_free(s->links_packed);
        free(s->links_packed);
        s->links_packed = NULL;
    }
    md_bits_free(&s->link_how);
    md_bits_free(&s->calls_seen);
    md_bits_free(&s->call_agg);
}

double gt_proc_duration_ms(const gt_proc *p)
{
    return p->t_max > p->t_min ? (double)(p->t_max - p->t_min) / 1e6 : 0;
}

double gt_proc_busy_pct(const gt_proc *p)
{
    uint64_t span = p->gpu_sampled ? p->gpu_span_ns : p->gpu_last_ns - p->gpu_first_ns;
    return span ? 100.0 * (double)p->gpu_busy_ns / (double)span : 0;
}

int gt_proc_has_data(const gt_proc *p)
{
    return p->open_status == GT_OPEN_OK && (p->cpu_api_records || p->gpu_records);
}

int gt_proc_rank(const gt_proc *p)
{
    return p->hdr.rank;
}

int gt_proc_gpu_device(const gt_proc *p)
{
    int best = -1;
    for (int d = 0; d < GT_MAX_DEVICES; d++)
        if (p->kernel_ns_by_device[d] &&
            (best < 0 || p->kernel_ns_by_device[d] > p->kernel_ns_by_device[best]))
            best = d;
    return best;
}
