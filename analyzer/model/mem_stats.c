/* mem_stats.c — what a process's model holds, by structure, for GPUTRACE_MEMORY_STATS=1 (issue 33
 * item 0): peak resident memory alone says that memory grows with the trace, not which array
 * grows. Printed on stderr after pass 1 and after pass 2 (the pass state's two fullest points),
 * with the process's resident and peak memory at that moment. Costs nothing when unset. */
#include "mem_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t pagebits_bytes(const md_pagebits *b)
{
    size_t n = b->n_pages * sizeof *b->pages;
    for (size_t i = 0; i < b->n_pages; i++)
        n += b->pages[i] ? (size_t)65536 * b->width / 8 : 0;
    return n;
}

/* VmRSS and VmHWM of this process in KB (0 where /proc is not there) */
static void resident_kb(unsigned long *rss, unsigned long *hwm)
{
    *rss = *hwm = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            *rss = strtoul(line + 6, NULL, 10);
        else if (!strncmp(line, "VmHWM:", 6))
            *hwm = strtoul(line + 6, NULL, 10);
    }
    fclose(f);
}

#define MB(x) ((double)(x) / 1048576.0)

void md_memory_stats(const gt_proc *p, const pass_state *s, const char *when)
{
    const char *e = getenv("GPUTRACE_MEMORY_STATS");
    if (!e || !*e || !strcmp(e, "0"))
        return;
    unsigned long rss, hwm;
    resident_kb(&rss, &hwm);
    fprintf(stderr,
            "gputrace: memory after %s (pid %u): resident %.1f MB, peak %.1f MB\n"
            "  links %.2f MB packed (%zu), %.1f MB fresh (%zu cap), link bits %.1f MB, "
            "calls seen %.1f MB\n"
            "  gaps %.1f MB (%zu), steps %.1f MB (%zu), blocking %.1f MB (%zu cap), "
            "busy intervals %.1f MB (%zu cap)\n"
            "  steady log %.1f MB (%zu cap), collectives %zu, handovers %zu, h2d %zu+%zu, "
            "submits %zu, staging %zu, kernels %zu, cudnn raw %zu\n",
            when, (unsigned)p->hdr.pid, (double)rss / 1024, (double)hwm / 1024,
            MB(s->links_packed ? md_link_pack_bytes(s->links_packed) : 0), md_links_kept(s),
            MB(s->cap_links_v * sizeof *s->links_v), s->cap_links_v,
            MB(pagebits_bytes(&s->link_how)), MB(pagebits_bytes(&s->calls_seen)),
            MB(p->n_gaps * sizeof *p->gaps), p->n_gaps, MB(p->n_steps * sizeof *p->steps),
            p->n_steps, MB(s->cap_blocking * sizeof *s->blocking), s->cap_blocking,
            MB(s->cap_iv * sizeof *s->iv), s->cap_iv, MB(s->cap_sev * sizeof *s->sev), s->cap_sev,
            p->n_collectives, s->n_handovers, s->n_h2d, s->n_h2d_calls, s->n_submit_t, s->n_staging,
            p->n_kernels, s->n_raw);
}
