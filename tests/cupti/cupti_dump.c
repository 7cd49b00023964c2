/* cupti_dump — prints what the CUPTI module put into a .gtrace, one fact per line, for the shell
 * tests in this folder to grep. Reads with the gtformat reader (the analyzer's reader).
 *   header state=<cupti_state> flags=<hdr flags> cupti_version=<v>
 *   count <kind-number> <n>            (every kind present)
 *   lost reason=<r> count=<n>
 *   stats dropped= refused= completed= converted= overhead_ns=   (the last one seen)
 *   clock skew_us=<|cupti - realtime|>  (each clock sync carrying a CUPTI time)
 *   kernel name= grid=x,y,z block=x,y,z regs= ssmem= dsmem= stream= corr= dur=
 *   memcpy kind= src= dst= bytes= async= stream= corr=
 *   memset bytes= memkind= async= stream=
 *   sync type= stream= corr=
 *   extcorr kind= ext= corr=
 *   gpuapi domain= cbid= corr=
 *   gpuapidur corr= dur=               (after each gpuapi: CUPTI's time of the call, ns)
 *   um kind= value= src= dst= flags= dur=   (unified memory: faults, migrations)
 *   cpucall kind= func= corr= name= stack= flags=   (CPU-side API records, for correlation checks)
 *   cputhread corr= tid= stream=       (after each cpucall: its thread and stream handle)
 *   cpudur corr= dur=                  (after each cputhread: the call's time as recorded, ns)
 *   cpucopy name= dir= src= dst= bytes= peer=    (after a copy's cpucall)
 *   cpualloc name= kind= bytes= free= flags=     (after an allocation's cpucall)
 *   timelink ext= corr=                (a kernel's call found by its queued time:
 * analyzer/model/kernel_link.c, over the whole file, whether or not a callback paired it)
 *   orderlink ext= corr=               (a kernel's call found by anchors and launch order, in
 * files flagged GT_HDR_ORDER_LINKS: analyzer/model/order_link.c, whole file, pairs not consulted)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gt_reader.h"
#include "gtrace_api.h"
#include "kernel_link.h"
#include "order_link.h"

static gt_linker linker; /* every call of the file, fed before the records are printed */
static gt_olinker olinker;

static void print_order_link(void *ctx, uint64_t corr, uint64_t call)
{
    (void)ctx;
    printf("orderlink ext=%" PRIu64 " corr=%" PRIu64 "\n", call, corr);
}

static void print_gpu(const gt_reader *r, const gt_record *rec)
{
    switch (rec->kind) {
    case GT_REC_GPU_KERNEL: {
        const gt_rec_gpu_kernel *k = rec->body;
        const char *name = gt_reader_string(r, k->name_id);
        printf("kernel name=%s grid=%d,%d,%d block=%d,%d,%d regs=%u ssmem=%u dsmem=%u stream=%u "
               "corr=%" PRIu64 " dur=%" PRIu64 "\n",
               name ? name : "?", k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
               k->block[2], k->registers, k->static_smem, k->dynamic_smem, k->stream, k->corr_id,
               k->end_ns - k->start_ns);
        uint64_t call =
            rec->body_size >= sizeof *k ? gt_linker_find(&linker, k->queued_ns, k->name_id) : 0;
        if (call)
            printf("timelink ext=%" PRIu64 " corr=%" PRIu64 "\n", call, k->corr_id);
        break;
    }
    case GT_REC_GPU_MEMCPY: {
        const gt_rec_gpu_memcpy *m = rec->body;
        printf(
            "memcpy kind=%u src=%u dst=%u bytes=%" PRIu64 " async=%u stream=%u corr=%" PRIu64 "\n",
            m->copy_kind, m->src_kind, m->dst_kind, m->bytes, m->is_async, m->stream, m->corr_id);
        break;
    }
    case GT_REC_GPU_MEMSET: {
        const gt_rec_gpu_memset *m = rec->body;
        printf("memset bytes=%" PRIu64 " memkind=%u async=%u stream=%u\n", m->bytes, m->mem_kind,
               m->is_async, m->stream);
        break;
    }
    case GT_REC_GPU_SYNC: {
        const gt_rec_gpu_sync *s = rec->body;
        printf("sync type=%u stream=%u corr=%" PRIu64 "\n", s->sync_type, s->stream, s->corr_id);
        break;
    }
    case GT_REC_GPU_EXT_CORR: {
        const gt_rec_gpu_ext_corr *e = rec->body;
        printf("extcorr kind=%u ext=%" PRIu64 " corr=%" PRIu64 "\n", e->ext_kind, e->external_id,
               e->corr_id);
        break;
    }
    case GT_REC_GPU_API: {
        const gt_rec_gpu_api *a = rec->body;
        printf("gpuapi domain=%u cbid=%u corr=%" PRIu64 "\n", a->domain, a->cbid, a->corr_id);
        printf("gpuapidur corr=%" PRIu64 " dur=%" PRIu64 "\n", a->corr_id,
               a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0);
        break;
    }
    case GT_REC_GPU_UM: {
        const gt_rec_gpu_um *u = rec->body;
        printf("um kind=%u value=%" PRIu64 " src=%d dst=%d flags=%u dur=%" PRIu64 "\n", u->um_kind,
               u->value, (int)u->src_id, (int)u->dst_id, u->flags,
               u->end_ns > u->start_ns ? u->end_ns - u->start_ns : 0);
        break;
    }
    default:
        break;
    }
}

/* The calls of the whole file, as the report's model reads them (window 0: none forgotten). */
static int feed_linker(const char *path)
{
    gt_reader *r = NULL;
    char err[512];
    if (gt_reader_open(path, &r, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "cupti_dump: %s\n", err);
        return 2;
    }
    bool order = gt_reader_header(r)->flags & GT_HDR_ORDER_LINKS;
    gt_olink_init(&olinker, 0, NULL, print_order_link, NULL);
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1) {
        gt_linker_on_record(&linker, &rec);
        if (order)
            gt_olink_on_record(&olinker, &rec);
    }
    gt_olink_finish(&olinker);
    gt_olink_free(&olinker);
    gt_reader_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cupti_dump FILE.gtrace\n");
        return 2;
    }
    gt_linker_init(&linker, 0);
    if (feed_linker(argv[1]) != 0)
        return 2;
    gt_reader *r = NULL;
    char err[512];
    int st = gt_reader_open(argv[1], &r, err, sizeof err);
    if (st != GT_OPEN_OK) {
        fprintf(stderr, "cupti_dump: %s\n", err);
        return 2;
    }
    const gt_file_header *h = gt_reader_header(r);
    printf("header state=%u flags=%u cupti_version=%d\n", h->runtime.cupti_state, h->flags,
           h->runtime.cupti_version);
    uint64_t counts[GT_REC_KIND_MAX] = {0};
    gt_rec_cupti_stats last = {0};
    int have_stats = 0;
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1) {
        if (rec.kind < GT_REC_KIND_MAX)
            counts[rec.kind]++;
        if (rec.kind == GT_REC_LOST) {
            const gt_rec_lost *l = rec.body;
            printf("lost reason=%u count=%" PRIu64 "\n", l->reason, l->count);
        } else if (rec.kind == GT_REC_CAPTURE) {
            const gt_rec_capture *c = rec.body;
            printf("capture on=%u source=%u\n", c->on, c->source);
        } else if (rec.kind == GT_REC_FLIGHT) {
            const gt_rec_flight *f = rec.body;
            printf("flight reason=%u records=%" PRIu64 " evicted_chunks=%" PRIu64
                   " evicted_records=%" PRIu64 " window_ms=%" PRIu64 " span_ms=%" PRIu64 "\n",
                   f->reason, f->records, f->evicted_chunks, f->evicted_records,
                   f->window_ns / 1000000, f->t_from_ns ? (f->t_ns - f->t_from_ns) / 1000000 : 0);
        } else if (rec.kind == GT_REC_CUPTI_STATS) {
            memcpy(&last, rec.body, sizeof last);
            have_stats = 1;
        } else if (rec.kind == GT_REC_CLOCK_SYNC) {
            const gt_rec_clock_sync *c = rec.body;
            if (c->cupti_ns) {
                int64_t d = (int64_t)(c->cupti_ns - c->realtime_ns);
                printf("clock skew_us=%lld\n", (long long)((d < 0 ? -d : d) / 1000));
            }
        } else if (rec.kind >= GT_REC_API && rec.kind <= GT_REC_API_CUBLAS) {
            const gt_api_common *c = rec.body;
            const char *name = gt_api_func_name(c->func);
            printf("cpucall kind=%u func=%u corr=%" PRIu64 " name=%s stack=%u flags=%u\n", rec.kind,
                   c->func, c->corr_id, name ? name : "?", c->stack_id, (unsigned)rec.flags);
            printf("cputhread corr=%" PRIu64 " tid=%u stream=%#" PRIx64 "\n", c->corr_id, rec.tid,
                   c->stream);
            printf("cpudur corr=%" PRIu64 " dur=%" PRIu64 "\n", c->corr_id,
                   c->t_end_ns > c->t_begin_ns ? c->t_end_ns - c->t_begin_ns : 0);
            if (rec.kind == GT_REC_API_MEMCPY) {
                const gt_rec_api_memcpy *m = rec.body;
                printf("cpucopy name=%s dir=%u src=%u dst=%u bytes=%" PRIu64 " peer=%d\n",
                       name ? name : "?", m->direction, m->src_kind, m->dst_kind, m->bytes,
                       m->peer_device);
            } else if (rec.kind == GT_REC_API_ALLOC) {
                const gt_rec_api_alloc *a = rec.body;
                printf("cpualloc name=%s kind=%u bytes=%" PRIu64 " free=%u flags=%u\n",
                       name ? name : "?", a->alloc_kind, a->bytes, a->is_free, (unsigned)rec.flags);
            }
            if (gt_api_func_category(c->func) == GT_CAT_JIT) /* whole ms the call took */
                printf("jitcall name=%s ms=%" PRIu64 " device=%d\n", name ? name : "?",
                       (c->t_end_ns - c->t_begin_ns) / 1000000, c->device);
        } else {
            print_gpu(r, &rec);
        }
    }
    for (int k = 0; k < GT_REC_KIND_MAX; k++)
        if (counts[k])
            printf("count %d %" PRIu64 "\n", k, counts[k]);
    if (have_stats)
        printf("stats dropped=%" PRIu64 " refused=%" PRIu64 " completed=%" PRIu64
               " converted=%" PRIu64 " overhead_ns=%" PRIu64 "\n",
               last.dropped_records, last.buffers_refused, last.buffers_completed,
               last.records_converted, last.overhead_ns);
    const gt_reader_stats *s = gt_reader_get_stats(r);
    int damaged = s->truncated || s->chunks_damaged;
    gt_reader_close(r);
    gt_linker_free(&linker);
    return damaged ? 1 : 0;
}
