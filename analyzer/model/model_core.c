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

/* Sort and merge intervals closer than gap ns. */
size_t md_merge_intervals(uint64_t (*iv)[2], size_t n, uint64_t gap)
{
    if (!n)
        return 0;
    qsort(iv, n, sizeof iv[0], cmp_iv);
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i][0] <= iv[w][1] + gap) {
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
    s->n_iv = md_merge_intervals(s->iv, s->n_iv, gap);
}

void md_iv_add(pass_state *s, uint64_t a, uint64_t b)
{
    if (!a || b < a)
        return;
    if (s->n_iv >= INTERVALS_MAX) {
        /* Bound memory: merge overlaps; if that is not enough, also merge ever larger gaps
         * (they are below GT_GAP_MIN_NS for a long time, so kept gaps stay exact). */
        md_iv_merge(s, s->merge_gap);
        while (s->n_iv > INTERVALS_MAX / 2) {
            s->merge_gap = s->merge_gap ? s->merge_gap * 2 : 1000;
            md_iv_merge(s, s->merge_gap);
        }
    }
    gt_grow((void **)&s->iv, &s->cap_iv, s->n_iv, sizeof s->iv[0]);
    s->iv[s->n_iv][0] = a;
    s->iv[s->n_iv][1] = b;
    s->n_iv++;
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
    const unsigned char *base = v;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t end;
        memcpy(&end, base + mid * stride + end_offset, sizeof end);
        if (end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t md_gap_lower(const gt_proc *p, uint64_t t)
{
    return MD_FIRST_ENDING_AFTER(p->gaps, p->n_gaps, t);
}

void md_link_add(pass_state *s, uint64_t corr, uint32_t call, uint32_t how)
{
    gt_grow((void **)&s->links_v, &s->cap_links_v, s->n_links_v, sizeof *s->links_v);
    s->links_v[s->n_links_v++] = (md_link){.corr = corr, .call = call, .how = how};
}

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

void md_links_sort(pass_state *s)
{
    md_link *v = s->links_v;
    size_t n = s->n_links_v, i = 1;
    while (i < n && v[i - 1].corr < v[i].corr) /* decisions come mostly in order */
        i++;
    if (i >= n)
        return;
    links_merge_sort(v, n);
    size_t w = 0; /* the last decision for an op wins */
    for (i = 1; i < n; i++) {
        if (v[i].corr != v[w].corr)
            w++;
        v[w] = v[i];
    }
    s->n_links_v = w + 1;
}

const md_link *md_link_find(const pass_state *s, uint64_t corr)
{
    size_t lo = 0, hi = s->n_links_v;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->links_v[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_links_v && s->links_v[lo].corr == corr ? &s->links_v[lo] : NULL;
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
