/* wf_dump.c — prints what the workflow tests check in a .gtrace file, one fact per line:
 *   header pid=P ppid=Q flags=F
 *   kind NAME COUNT                   (records per kind, strings included)
 *   nvtx TID KIND NAME DOMAIN COLOR RANGE   (KIND push|pop|mark|start|end|thread; "-" for none)
 *   thread TID NAME
 *   lost N
 * Names are printed with spaces as "%20" so every line splits on blanks.
 * Exit status 1 when the file cannot be opened. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gt_reader.h"

static const char *nvtx_kind_name(uint32_t kind)
{
    static const char *const NAMES[] = {"?", "push", "pop", "mark", "start", "end", "thread"};
    return kind < sizeof NAMES / sizeof NAMES[0] ? NAMES[kind] : "?";
}

static const char *name_or_dash(const gt_reader *r, uint32_t id)
{
    static char buf[4][1024]; /* a few per printf call */
    static int next;
    if (!id)
        return "-";
    const char *s = gt_reader_string(r, id);
    if (!s)
        return "?";
    char *out = buf[next++ % 4];
    size_t n = 0;
    for (; *s && n + 4 < sizeof buf[0]; s++) {
        if (*s == ' ') {
            memcpy(out + n, "%20", 3);
            n += 3;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
    return out;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: wf_dump FILE.gtrace\n");
        return 2;
    }
    gt_reader *r = NULL;
    char err[512];
    if (gt_reader_open(argv[1], &r, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "wf_dump: %s\n", err);
        return 1;
    }
    const gt_file_header *h = gt_reader_header(r);
    printf("header pid=%d ppid=%d flags=%u\n", h->pid, h->ppid, h->flags);
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1) {
        if (rec.kind == GT_REC_NVTX && rec.body_size >= sizeof(gt_rec_nvtx)) {
            const gt_rec_nvtx *n = rec.body;
            printf("nvtx %u %s %s %s %08x %" PRIu64 "\n", rec.tid, nvtx_kind_name(n->nvtx_kind),
                   name_or_dash(r, n->name_id), name_or_dash(r, n->domain_id), n->color,
                   n->range_id);
        } else if (rec.kind == GT_REC_THREAD && rec.body_size >= sizeof(gt_rec_thread)) {
            const gt_rec_thread *t = rec.body;
            printf("thread %u %s\n", t->tid, name_or_dash(r, t->name_id));
        }
    }
    const gt_reader_stats *st = gt_reader_get_stats(r);
    for (int k = 0; k < GT_REC_KIND_MAX; k++) {
        if (!st->records_by_kind[k])
            continue;
        const char *name = gt_record_kind_name((uint16_t)k);
        printf("kind %s %" PRIu64 "\n", name ? name : "?", st->records_by_kind[k]);
    }
    printf("lost %" PRIu64 "\n", st->lost_records);
    printf("end state=%d reason=%u signal=%d\n", gt_reader_end_state(r), st->end.reason,
           st->end.signal);
    printf("chunks ok=%" PRIu64 " damaged=%" PRIu64 " gaps=%" PRIu64 " unknown=%" PRIu64
           " truncated=%d records=%" PRIu64 "\n",
           st->chunks_ok, st->chunks_damaged, st->chunk_seq_gaps, st->unknown_kinds, st->truncated,
           st->records);
    gt_reader_close(r);
    return 0;
}
