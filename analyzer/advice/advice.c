/* advice.c — the advice list and the names its readers print: severities, saving bases, the ranks
 * an item concerns, the texts of a saving and of the lists. The rules are in rule_*.c (listed,
 * with their few words, in advice_table.c), the decisions every rule shares in advice_engine.c.
 * Nothing here calls a rule: the rules call this file, never the other way round. */
#include "advice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textfmt.h"
#include "util.h"

void gt_advice_list_free(gt_advice_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

int gt_advice_has_pid(const gt_advice *a, int pid)
{
    if (a->pid == pid)
        return 1;
    for (int i = 0; i < a->n_procs && i < GT_ADVICE_MAX_PROCS; i++)
        if (a->pids[i] == pid)
            return 1;
    return 0;
}

const char *gt_advice_who(const gt_advice *a)
{
    if (a->n_procs > 1) {
        char list[160] = "";
        size_t used = 0;
        for (int i = 0; i < a->n_procs && i < GT_ADVICE_MAX_PROCS && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", i ? ", " : "",
                                     a->ranks[i]);
        return gt_fmt("ranks %s", list);
    }
    if (!a->pid)
        return "";
    return a->rank >= 0 ? gt_fmt("rank %d", a->rank) : gt_fmt("pid %d", a->pid);
}

const char *gt_advice_ms_text(double ms)
{
    return gt_dur(ms); /* textfmt: µs under 1 ms, three significant digits, s from 10 s */
}

const char *gt_advice_saving_text(const gt_advice *a)
{
    if (!a->has_saving || a->share_pct < 0)
        return "";
    const char *base = a->basis == GT_BASIS_STEP     ? "step"
                       : a->basis == GT_BASIS_WINDOW ? "steady window"
                                                     : "run";
    const char *saving = gt_advice_ms_text(a->saving_ms), *of = gt_advice_ms_text(a->base_ms);
    return gt_fmt("%s%s of the %s %s (%.*f%%)", a->saving_bound ? "up to " : "~", saving, of, base,
                  a->share_pct < 1 && a->share_pct > 0 ? 1 : 0, a->share_pct);
}

int gt_advice_group(const gt_advice *a)
{
    if (a->impact == GT_IMPACT_FAILURE)
        return GT_GROUP_FAILURE;
    if (a->impact != GT_IMPACT_TIME || !a->has_saving)
        return GT_GROUP_OTHER;
    if (a->minor)
        return GT_GROUP_MINOR;
    return a->basis == GT_BASIS_RUN ? GT_GROUP_RUN : GT_GROUP_STEP;
}

void gt_advice_group_order(const gt_advice_list *l, int order[GT_GROUP_COUNT])
{
    double top[GT_GROUP_COUNT] = {0};
    for (size_t i = 0; i < l->n; i++) {
        int g = gt_advice_group(&l->items[i]);
        if (l->items[i].share_pct > top[g])
            top[g] = l->items[i].share_pct;
    }
    int run_first = top[GT_GROUP_RUN] > top[GT_GROUP_STEP];
    int k = 0;
    order[k++] = GT_GROUP_FAILURE;
    order[k++] = run_first ? GT_GROUP_RUN : GT_GROUP_STEP;
    order[k++] = run_first ? GT_GROUP_STEP : GT_GROUP_RUN;
    order[k++] = GT_GROUP_OTHER;
    order[k] = GT_GROUP_MINOR;
}

const char *gt_advice_group_name(int group)
{
    static const char *const names[GT_GROUP_COUNT] = {"failures", "per step", "over the run",
                                                      "other findings", "minor"};
    return group >= 0 && group < GT_GROUP_COUNT ? names[group] : "?";
}

const char *gt_impact_name(int impact)
{
    static const char *const names[] = {"time", "failure", "risk", "note"};
    return impact >= 0 && impact <= GT_IMPACT_NOTE ? names[impact] : "?";
}

const char *gt_severity_name(int severity)
{
    switch (severity) {
    case GT_SEV_CRITICAL:
        return "critical";
    case GT_SEV_WARNING:
        return "warning";
    default:
        return "info";
    }
}

int gt_severity_parse(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "info"))
        return GT_SEV_INFO;
    if (!strcmp(name, "warning") || !strcmp(name, "warn"))
        return GT_SEV_WARNING;
    if (!strcmp(name, "critical") || !strcmp(name, "crit"))
        return GT_SEV_CRITICAL;
    return -1;
}

const char *gt_saving_basis_name(int basis)
{
    switch (basis) {
    case GT_BASIS_STEP:
        return "per_step";
    case GT_BASIS_WINDOW:
        return "steady_window";
    case GT_BASIS_RUN:
        return "run";
    default:
        return NULL;
    }
}
