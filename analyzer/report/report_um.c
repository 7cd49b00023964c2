/* report_um.c — unified memory in the report (issue 30): the managed allocations, prefetches and
 * advice the program made; the faults and migrations CUPTI counted, and the GPU time kernels
 * stalled on them (model_um.c). Printed only for a process that used managed memory or had the
 * counters on; says when they are unknown rather than absent. */
#include <string.h>

#include "report_out.h"
#include "util.h"

int gt_um_seen(const gt_proc *p)
{
    const gt_um_stats *u = &p->um;
    return u->managed_allocs || u->records || u->counters_on || u->counters_refused ||
           u->prefetch_calls || u->advise_calls;
}

static const char *counters_state(const gt_um_stats *u)
{
    return u->counters_on ? "on" : u->counters_refused ? "refused" : "off";
}

static double per_step(const gt_proc *p, double v)
{
    return p->steady_steps > 0 ? v / p->steady_steps : v;
}

void gt_um_print(const gt_proc *p, FILE *out)
{
    const gt_um_stats *u = &p->um;
    const char *site = gt_proc_call_site(p, u->first_alloc_stack);
    fprintf(out,
            "  managed     %llu allocation(s), %.2f MB%s%s%s; %llu prefetch(es) (%.2f MB), "
            "%llu advice call(s)\n",
            (unsigned long long)u->managed_allocs, (double)u->managed_bytes / 1e6,
            site ? " (first at " : "", site ? site : "", site ? ")" : "",
            (unsigned long long)u->prefetch_calls, (double)u->prefetch_bytes / 1e6,
            (unsigned long long)u->advise_calls);
    if (u->counters_refused) {
        fprintf(out, "  counters    CUPTI refused its unified-memory counters: page faults and "
                     "migrations are unknown, not absent\n");
        return;
    }
    if (!u->counters_on) {
        fprintf(out, "  counters    off (GPUTRACE_UM=off, or a recorder before format 1.4): page "
                     "faults and migrations not recorded\n");
        return;
    }
    fprintf(out,
            "  GPU faults  %llu (%llu groups), %.3f ms of fault service; kernels stalled "
            "%.3f ms on faults and migrations on demand (steady %.3f ms/step)\n",
            (unsigned long long)u->gpu_faults, (unsigned long long)u->gpu_fault_groups,
            (double)u->gpu_fault_ns / 1e6, (double)u->stall_ns / 1e6,
            per_step(p, (double)u->steady_stall_ns / 1e6));
    for (int d = 0; d < 2; d++)
        fprintf(out,
                "  %s        %llu migration(s), %.2f MB in %.3f ms: %.2f MB on demand, %.2f "
                "MB prefetched\n",
                d ? "DtoH" : "HtoD", (unsigned long long)u->migrations[d],
                (double)u->migration_bytes[d] / 1e6, (double)u->migration_ns[d] / 1e6,
                (double)u->demand_bytes[d] / 1e6, (double)u->user_bytes[d] / 1e6);
    fprintf(out, "  CPU faults  %llu\n", (unsigned long long)u->cpu_faults);
    if (u->thrashing || u->throttling || u->remote_maps || u->evicted_bytes || u->dtod_bytes)
        fprintf(out,
                "  pressure    %llu thrashing, %llu throttling (%.3f ms), %llu remote maps, "
                "%.2f MB evicted, %.2f MB device to device\n",
                (unsigned long long)u->thrashing, (unsigned long long)u->throttling,
                (double)u->throttling_ns / 1e6, (unsigned long long)u->remote_maps,
                (double)u->evicted_bytes / 1e6, (double)u->dtod_bytes / 1e6);
}

static json_t *direction_json(const gt_um_stats *u, int d)
{
    return json_pack("{s:I, s:I, s:f, s:I, s:I}", "count", (json_int_t)u->migrations[d], "bytes",
                     (json_int_t)u->migration_bytes[d], "ms", (double)u->migration_ns[d] / 1e6,
                     "on_demand_bytes", (json_int_t)u->demand_bytes[d], "prefetched_bytes",
                     (json_int_t)u->user_bytes[d]);
}

json_t *gt_um_json(const gt_proc *p)
{
    if (!gt_um_seen(p))
        return json_null();
    const gt_um_stats *u = &p->um;
    const char *site = gt_proc_call_site(p, u->first_alloc_stack);
    json_t *o = json_pack(
        "{s:s, s:I, s:I, s:o, s:I, s:I, s:I}", "counters", counters_state(u), "managed_allocations",
        (json_int_t)u->managed_allocs, "managed_bytes", (json_int_t)u->managed_bytes,
        "first_allocation_call_site", site ? json_string(site) : json_null(), "prefetch_calls",
        (json_int_t)u->prefetch_calls, "prefetch_bytes", (json_int_t)u->prefetch_bytes,
        "advise_calls", (json_int_t)u->advise_calls);
    if (!u->counters_on)
        return o;
    json_object_set_new(o, "faults",
                        json_pack("{s:I, s:I, s:I, s:f}", "cpu", (json_int_t)u->cpu_faults, "gpu",
                                  (json_int_t)u->gpu_faults, "gpu_groups",
                                  (json_int_t)u->gpu_fault_groups, "gpu_service_ms",
                                  (double)u->gpu_fault_ns / 1e6));
    json_object_set_new(o, "htod", direction_json(u, 0));
    json_object_set_new(o, "dtoh", direction_json(u, 1));
    json_object_set_new(o, "pressure",
                        json_pack("{s:I, s:I, s:f, s:I, s:I, s:I}", "thrashing",
                                  (json_int_t)u->thrashing, "throttling", (json_int_t)u->throttling,
                                  "throttling_ms", (double)u->throttling_ns / 1e6, "remote_maps",
                                  (json_int_t)u->remote_maps, "evicted_bytes",
                                  (json_int_t)u->evicted_bytes, "dtod_bytes",
                                  (json_int_t)u->dtod_bytes));
    json_object_set_new(
        o, "stall",
        json_pack("{s:f, s:f, s:f}", "ms", (double)u->stall_ns / 1e6, "steady_ms_per_step",
                  per_step(p, (double)u->steady_stall_ns / 1e6), "steady_gpu_faults_per_step",
                  per_step(p, (double)u->steady_gpu_faults)));
    return o;
}
