/* flight.c — the flight recorder's memory (GPUTRACE_FLIGHT_RECORDER=SECONDS): the application's
 * chunks are kept here instead of being written, the oldest given up once they are older than the
 * window or the memory cap (GPUTRACE_FLIGHT_RECORDER_MB) is reached; the writer writes what is
 * held on a trigger, at exit or at a fatal signal (writer.c: flight_dump). Writer-thread only
 * (or a signal handler holding the writer's pass lock): no locking here.
 *
 * One anonymous mapping, taken at the first chunk (never at load: a process that records nothing
 * costs nothing): a byte ring of whole chunks (header + payload, contiguous: a chunk that would
 * straddle the end starts at the beginning instead), and an index ring of the chunks held. Pages
 * are touched only as chunks fill them. */
#include <string.h>
#include <sys/mman.h>

#include "core_internal.h"
#include "gt_encode.h"

typedef struct flight_entry {
    uint64_t start; /* logical offset in the byte ring (grows; modulo cap in the mapping) */
    uint32_t len;   /* header + payload */
    uint32_t pad;
    uint64_t t_ns;    /* when it was stored */
    uint64_t records; /* real records in it */
} flight_entry;

static unsigned char *g_buf;
static size_t g_cap;
static flight_entry *g_idx;
static uint32_t g_idx_cap, g_first, g_count; /* index ring: g_count entries from g_first */
static uint64_t g_head;                      /* where the next chunk goes (logical) */
static uint64_t g_window_ns;
static uint64_t g_evicted_chunks, g_evicted_records;
static bool g_failed; /* the mapping could not be had: chunks are counted as evicted */

void gt_flight_configure(uint32_t seconds, uint32_t cap_mb)
{
    g_window_ns = (uint64_t)seconds * 1000000000ull;
    g_cap = (size_t)cap_mb << 20;
}

static bool map_once(void)
{
    if (g_buf || g_failed)
        return g_buf != NULL;
    g_idx_cap = (uint32_t)(g_cap / 512) + 1024; /* chunks are rarely under 512 bytes */
    size_t idx_bytes = (size_t)g_idx_cap * sizeof(flight_entry);
    void *m = mmap(NULL, g_cap + idx_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        g_failed = true;
        gt_warn("flight recorder: cannot reserve %zu MB; its chunks are counted as evicted",
                g_cap >> 20);
        return false;
    }
    g_buf = m;
    g_idx = (flight_entry *)(g_buf + g_cap);
    return true;
}

static flight_entry *oldest(void)
{
    return g_count ? &g_idx[g_first] : NULL;
}

static void drop_oldest(bool count_it)
{
    flight_entry *e = oldest();
    if (count_it) {
        g_evicted_chunks++;
        g_evicted_records += e->records;
    }
    g_first = (g_first + 1) % g_idx_cap;
    g_count--;
}

static uint64_t tail(void)
{
    return g_count ? oldest()->start : g_head;
}

/* Give up chunks older than the window (relative to now). */
static void evict_old(uint64_t now_ns)
{
    while (g_count && now_ns - oldest()->t_ns > g_window_ns)
        drop_oldest(true);
}

void gt_flight_store(const gt_chunk_header *h, const void *payload, uint64_t records,
                     uint64_t now_ns)
{
    uint32_t len = (uint32_t)sizeof *h + h->payload_len;
    if (len > g_cap || !map_once()) {
        g_evicted_chunks++;
        g_evicted_records += records;
        return;
    }
    evict_old(now_ns);
    uint64_t pos = g_head % g_cap;
    uint64_t skip = pos + len > g_cap ? g_cap - pos : 0; /* start at the beginning instead */
    while (g_count && (g_head + skip + len - tail() > g_cap || g_count == g_idx_cap))
        drop_oldest(true);
    if (!g_count) { /* empty: start afresh at the beginning */
        g_head = 0;
        skip = 0;
    }
    g_head += skip;
    unsigned char *dst = g_buf + g_head % g_cap;
    memcpy(dst, h, sizeof *h);
    memcpy(dst + sizeof *h, payload, h->payload_len);
    g_idx[(g_first + g_count) % g_idx_cap] =
        (flight_entry){.start = g_head, .len = len, .t_ns = now_ns, .records = records};
    g_count++;
    g_head += len;
}

uint64_t gt_flight_oldest_ns(uint64_t now_ns)
{
    evict_old(now_ns);
    return g_count ? oldest()->t_ns : 0;
}

bool gt_flight_take(gt_chunk_header **h, uint64_t *records)
{
    if (!g_count)
        return false;
    flight_entry *e = oldest();
    *h = (gt_chunk_header *)(g_buf + e->start % g_cap);
    *records = e->records;
    drop_oldest(false);
    return true;
}

void gt_flight_counts(uint64_t *evicted_chunks, uint64_t *evicted_records, uint64_t *held_records)
{
    *evicted_chunks = g_evicted_chunks;
    *evicted_records = g_evicted_records;
    uint64_t held = 0;
    for (uint32_t i = 0; i < g_count; i++)
        held += g_idx[(g_first + i) % g_idx_cap].records;
    *held_records = held;
}

/* The child of a fork records its own file: what the parent held is the parent's, never written
 * by the child, and not the child's loss. The mapping is reused. */
void gt_flight_fork_child(void)
{
    g_first = g_count = 0;
    g_head = 0;
    g_evicted_chunks = g_evicted_records = 0;
}

/* Records that later records refer to by id (strings, stacks, modules, cuDNN plans and
 * signatures), and the bookkeeping a reader needs whatever the window (CUPTI's clock snapshots,
 * its losses and statistics, capture switches): written to the file as they come (by define),
 * never held, so that what the window keeps can always be read and no loss is evicted. */
static bool is_definition(uint16_t kind)
{
    return (kind != GT_REC_PAD && kind < GT_REC_API) || kind == GT_REC_STACK ||
           kind == GT_REC_MODULE || kind == GT_REC_CUDNN_PLAN || kind == GT_REC_CUDNN_CONV_SIG ||
           kind == GT_REC_CUPTI_STATS;
}

/* One drained ring's chunk payload (whole records of thread tid): definitions go to define(),
 * the rest is held as a chunk of its own. Returns the records defined. */
uint64_t gt_flight_keep(const unsigned char *payload, uint32_t len, uint64_t real_total,
                        uint32_t tid, uint64_t now_ns, bool (*define)(const gt_record_header *rec))
{
    static unsigned char kept[GT_CHUNK_LIMIT] __attribute__((aligned(8)));
    uint32_t used = 0, count = 0;
    uint64_t real = 0;
    uint64_t defined = 0;
    bool split = len <= sizeof kept; /* a single larger record is held as it is */
    for (uint32_t off = 0; split && off < len;) {
        gt_record_header h;
        memcpy(&h, payload + off, sizeof h);
        if (h.kind == GT_REC_PAD) {
            /* filler: not kept */
        } else if (is_definition(h.kind) && define((const gt_record_header *)(payload + off))) {
            defined++;
        } else {
            memcpy(kept + used, payload + off, h.size);
            used += h.size;
            count++;
            real += h.kind != GT_REC_PAD;
        }
        off += h.size;
    }
    if (!split) {
        used = len;
        count = 1;
        real = real_total;
    }
    if (!count)
        return defined;
    gt_chunk_header ch;
    const unsigned char *body = split ? kept : payload;
    gt_chunk_header_fill(&ch, body, used, 0, tid);
    gt_flight_store(&ch, body, real, now_ns);
    return defined;
}
