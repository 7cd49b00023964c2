/* convert_counters.c — Counter tracks: GPU memory allocated (live allocations), pinned host memory,
 * GPU busy % per 10 ms bin. */
#include "convert_internal.h"

static cv_alloc *cv_alloc_slot(cv_file *f, uint64_t ptr, int create)
{
    if (create && (f->alloc_used + 1) * 2 > f->alloc_cap) {
        if (f->alloc_cap >= MAX_ALLOCS)
            return NULL;
        size_t ncap = f->alloc_cap ? f->alloc_cap * 2 : 1024;
        cv_alloc *n = calloc(ncap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < f->alloc_cap; i++) {
            if (!f->allocs[i].ptr)
                continue;
            size_t k = gt_mix64(f->allocs[i].ptr) & (ncap - 1);
            while (n[k].ptr)
                k = (k + 1) & (ncap - 1);
            n[k] = f->allocs[i];
        }
        free(f->allocs);
        f->allocs = n;
        f->alloc_cap = ncap;
    }
    if (!f->alloc_cap)
        return NULL;
    size_t k = gt_mix64(ptr) & (f->alloc_cap - 1);
    while (f->allocs[k].ptr) {
        if (f->allocs[k].ptr == ptr)
            return &f->allocs[k];
        k = (k + 1) & (f->alloc_cap - 1);
    }
    if (!create)
        return NULL;
    f->allocs[k].ptr = ptr;
    f->alloc_used++;
    return &f->allocs[k];
}

/* Remove with backward shift so probing chains stay intact. */
static void cv_alloc_remove(cv_file *f, cv_alloc *slot)
{
    size_t mask = f->alloc_cap - 1;
    size_t i = (size_t)(slot - f->allocs);
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!f->allocs[j].ptr)
            break;
        size_t k = gt_mix64(f->allocs[j].ptr) & mask;
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            f->allocs[i] = f->allocs[j];
            i = j;
        }
    }
    f->allocs[i].ptr = 0;
    f->alloc_used--;
}

static void cv_counter(cv_ctx *c, uint64_t track, uint32_t seq, int64_t ts, int64_t v, double dv,
                       int is_double)
{
    cv_event e = {.type = CV_COUNTER,
                  .track = track,
                  .seq = seq,
                  .ts = ts,
                  .counter = v,
                  .dcounter = dv,
                  .counter_is_double = is_double};
    cv_emit(c, &e);
    c->st->counters++;
}

static void cv_busy_flush_bin(cv_ctx *c, cv_file *f, cv_device *d)
{
    int64_t ts;
    uint32_t *bin = &d->bins[d->bin0 % BIN_RING];
    double pct = 100.0 * (double)*bin / (double)BIN_NS;
    if (pct > 100.0)
        pct = 100.0; /* concurrent streams: busy means at least one stream had work */
    if (cv_ts(c, (uint64_t)(d->bin0 * BIN_NS), &ts)) {
        if (!d->busy_described) {
            char name[48];
            snprintf(name, sizeof name, "GPU %u busy %%", d->device);
            cv_counter_track(c, f, d->busy_uuid, name, CV_UNIT_NONE, "%");
            d->busy_described = 1;
        }
        cv_counter(c, d->busy_uuid, d->seq, ts, 0, pct, 1);
    }
    *bin = 0;
    d->bin0++;
}

/* Add GPU work [start, end) (realtime) to the device's 10 ms bins, writing bins that fell out
 * of the window. Work older than the window is dropped from the busy counter only. */
void cv_busy_add(cv_ctx *c, cv_file *f, cv_device *d, uint64_t start, uint64_t end)
{
    if (end <= start || start > (uint64_t)INT64_MAX || end > (uint64_t)INT64_MAX)
        return;
    int64_t first = (int64_t)start / BIN_NS, last = ((int64_t)end - 1) / BIN_NS;
    if (last - first > BIN_RING)
        first = last - BIN_RING; /* a kernel longer than the window: keep its tail */
    if (d->bin0 < 0)
        d->bin0 = first;
    if (last - d->bin0 >= 4 * BIN_RING) { /* long idle: write the window, then jump */
        for (int i = 0; i < BIN_RING; i++)
            cv_busy_flush_bin(c, f, d);
        d->bin0 = last - BIN_RING + 1;
    }
    while (last - d->bin0 >= BIN_RING)
        cv_busy_flush_bin(c, f, d);
    for (int64_t i = first; i <= last; i++) {
        if (i < d->bin0)
            continue;
        int64_t lo = i * BIN_NS, hi = lo + BIN_NS;
        int64_t s = (int64_t)start > lo ? (int64_t)start : lo;
        int64_t e = (int64_t)end < hi ? (int64_t)end : hi;
        uint32_t *bin = &d->bins[i % BIN_RING];
        uint64_t v = (uint64_t)*bin + (uint64_t)(e - s);
        *bin = v > (uint64_t)BIN_NS * 4 ? (uint32_t)BIN_NS * 4 : (uint32_t)v;
    }
}

void cv_busy_finish(cv_ctx *c, cv_file *f, cv_device *d)
{
    if (d->bin0 < 0)
        return;
    int64_t last = d->bin0 + BIN_RING - 1;
    while (last > d->bin0 && d->bins[last % BIN_RING] == 0)
        last--;
    while (d->bin0 <= last)
        cv_busy_flush_bin(c, f, d);
    cv_busy_flush_bin(c, f, d); /* a closing bin brings the counter back to 0 */
}

void cv_alloc_record(cv_ctx *c, cv_file *f, const gt_rec_api_alloc *a, int64_t ts)
{
    if (a->c.result != 0 || !a->ptr)
        return;
    int pinned = a->alloc_kind == GT_ALLOC_HOST_PINNED || a->alloc_kind == GT_ALLOC_HOST_REGISTERED;
    uint32_t device = a->c.device < 0 ? 0 : (uint32_t)a->c.device;
    cv_alloc *slot = cv_alloc_slot(f, a->ptr, !a->is_free);
    if (!a->is_free) {
        if (!slot) {
            f->allocs_untracked++;
            return;
        }
        if (slot->bytes) /* the same pointer again without a free we saw: replace it */
            (slot->pinned ? &f->pinned_live : &cv_device_get(c, f, slot->device)->mem_live)[0] -=
                (int64_t)slot->bytes;
        slot->bytes = a->bytes;
        slot->device = device;
        slot->pinned = (uint32_t)pinned;
    } else {
        if (!slot)
            return; /* freeing something allocated before recording started */
        pinned = (int)slot->pinned;
        device = slot->device;
    }
    int64_t delta = a->is_free ? -(int64_t)slot->bytes : (int64_t)slot->bytes;
    if (a->is_free)
        cv_alloc_remove(f, slot);
    if (pinned) {
        f->pinned_live += delta;
        if (!f->pinned_described) {
            cv_counter_track(c, f, f->pinned_uuid, "pinned host memory", CV_UNIT_BYTES, NULL);
            f->pinned_described = 1;
        }
        cv_counter(c, f->pinned_uuid, f->proc_seq, ts, f->pinned_live, 0, 0);
    } else {
        cv_device *d = cv_device_get(c, f, device);
        d->mem_live += delta;
        if (!d->mem_described) {
            char name[48];
            snprintf(name, sizeof name, "GPU %u memory allocated", d->device);
            cv_counter_track(c, f, d->mem_uuid, name, CV_UNIT_BYTES, NULL);
            d->mem_described = 1;
        }
        cv_counter(c, d->mem_uuid, d->seq, ts, d->mem_live, 0, 0);
    }
}
