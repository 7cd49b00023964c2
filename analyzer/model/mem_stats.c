/* mem_stats.c — what a process's model holds, by structure, for GPUTRACE_MEMORY_STATS=1 (issue 33
 * item 0): peak resident memory alone says that memory grows with the trace, not which array
 * grows. Printed on stderr after pass 1 and after pass 2 (the pass state's two fullest points),
 * with the process's resident and peak memory at that moment. Costs nothing when unset. */
#include "mem_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static unsigned long long spilled_pages(const pass_state *s)
{
    return s->link_how.spilled_pages + s->calls_seen.spilled_pages + s->call_agg.spilled_pages;
}

static unsigned long long read_back(const pass_state *s)
{
    return s->link_how.read_back + s->calls_seen.read_back + s->call_agg.read_back;
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
            "  links %.2f MB in memory (%zu, %.1f MB packed), %.1f MB fresh (%zu cap), link bits "
            "%.1f MB, "
            "calls seen %.1f MB, call aggregates %.1f MB; id pages spilled %llu, read back %llu\n"
            "  gaps %.1f MB (%zu), steps %.1f MB (%zu), gaps after waits %.1f MB, "
            "busy intervals %.1f MB (%zu cap)\n"
            "  steady log %.1f MB (%zu cap), collectives %zu, handovers %zu, "
            "submits %zu, staging %zu, kernels %zu, cudnn raw %zu\n",
            when, (unsigned)p->hdr.pid, (double)rss / 1024, (double)hwm / 1024,
            MB(s->links_packed ? md_link_pack_bytes(s->links_packed) : 0), md_links_kept(s),
            MB(s->links_packed ? md_link_pack_size(s->links_packed) : 0),
            MB(s->cap_links_v * sizeof *s->links_v), s->cap_links_v,
            MB(md_bits_bytes(&s->link_how)), MB(md_bits_bytes(&s->calls_seen)),
            MB(md_bits_bytes(&s->call_agg)), spilled_pages(s), read_back(s),
            MB(p->n_gaps * sizeof *p->gaps), p->n_gaps, MB(p->n_steps * sizeof *p->steps),
            p->n_steps, MB(s->gap_after_wait ? (s->n_iv / 64 + 1) * sizeof(uint64_t) : 0),
            MB(s->cap_iv * sizeof *s->iv), s->cap_iv, MB(s->cap_sev * sizeof *s->sev), s->cap_sev,
            p->n_collectives, s->n_handovers, s->submits.n, s->n_staging, p->n_kernels, s->n_raw);
}
