/* report_advice.c — the advice section of `gputrace report` and an advice item's JSON.
 *
 * The text shows the lists the verdict shows, in its order (gt_advice_group_order): failures,
 * the savings per steady step and those over the run (each list by share), the findings without
 * a time, and the minor ones (under 1% of their step or run) folded into one line. Each item
 * says its saving with what it is a share of and where the figure comes from. */
#include <string.h>

#include "report_out.h"
#include "util.h"

/* "per step", or "in the steady window" when no listed item has steps. */
static const char *group_title(const gt_advice_list *l, int g)
{
    if (g != GT_GROUP_STEP)
        return gt_advice_group_name(g);
    for (size_t i = 0; i < l->n; i++)
        if (gt_advice_group(&l->items[i]) == g && l->items[i].basis == GT_BASIS_STEP)
            return "per step";
    return "in the steady window (no steps found)";
}

void gt_advice_print_one(const gt_advice *a, FILE *out, int color, const char *indent, int evidence)
{
    const char *who = gt_advice_who(a);
    fprintf(out, "%s%s[%s]%s %s%s%s", indent, gt_sev_color(a->severity, color),
            gt_severity_name(a->severity), gt_color_reset(color), gt_bold(color), a->id,
            gt_color_reset(color));
    if (who[0])
        fprintf(out, "  (%s)", who);
    if (a->has_saving)
        fprintf(out, "  saves %s", gt_advice_saving_text(a));
    fprintf(out, "\n%s    %s\n", indent, a->message);
    if (a->call_site[0])
        fprintf(out, "%s    at %s\n", indent, a->call_site);
    if (!evidence)
        return;
    if (a->has_saving && a->saving_source[0])
        fprintf(
            out, "%s    saving: %s%s\n", indent, a->saving_source,
            a->saving_before_ms > a->saving_ms
                ? gt_fmt(" (%.3f ms before what other advice already holds)", a->saving_before_ms)
                : "");
    fprintf(out, "%s    evidence:", indent);
    for (int e = 0; e < a->n_evidence; e++)
        fprintf(out, "%s %s=%s%s", e ? "," : "", a->evidence[e].key,
                gt_evidence_number(a->evidence[e].value),
                a->evidence[e].unit[0] && strcmp(a->evidence[e].unit, "count") ? a->evidence[e].unit
                                                                               : "");
    fputc('\n', out);
}

/* The minor items in one line: "sync-stall 0.4% (rank 1), amp 0.2%". */
static void print_minor(const gt_advice_list *l, FILE *out, const char *indent)
{
    int n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const gt_advice *a = &l->items[i];
        if (gt_advice_group(a) != GT_GROUP_MINOR)
            continue;
        const char *who = gt_advice_who(a);
        fprintf(out, "%s%s %s%s%s%s",
                n++ ? ", " : gt_fmt("%sminor (under %.0f%% each): ", indent, GT_ADVICE_MINOR_PCT),
                a->id, a->share_pct < 0.1 ? "<0.1%" : gt_fmt("%.1f%%", a->share_pct),
                who[0] ? " (" : "", who, who[0] ? ")" : "");
    }
    if (n)
        fprintf(out, " -- in --json with their messages\n");
}

void gt_advice_print(const gt_advice_list *l, FILE *out, int color, const char *indent)
{
    if (!l->n) {
        fprintf(out,
                "%sNo advice: no rule's trigger holds (the verdict names the largest idle "
                "cause).\n",
                indent);
        return;
    }
    int order[GT_GROUP_COUNT];
    gt_advice_group_order(l, order);
    for (int k = 0; k < GT_GROUP_COUNT; k++) {
        int g = order[k], shown = 0;
        if (g == GT_GROUP_MINOR) {
            print_minor(l, out, indent);
            continue;
        }
        for (size_t i = 0; i < l->n; i++) {
            if (gt_advice_group(&l->items[i]) != g)
                continue;
            if (!shown++)
                fprintf(out, "%s%s:\n", indent, group_title(l, g));
            gt_advice_print_one(&l->items[i], out, color, indent, 1);
        }
    }
}

json_t *gt_advice_to_json(const gt_advice *a)
{
    json_t *ev = json_object(), *units = json_object(), *pids = json_array(), *ranks = json_array();
    for (int e = 0; e < a->n_evidence; e++) {
        json_object_set_new(ev, a->evidence[e].key, json_real(a->evidence[e].value));
        json_object_set_new(units, a->evidence[e].key, json_string(a->evidence[e].unit));
    }
    int n = a->n_procs > 1 ? a->n_procs : 1;
    for (int i = 0; i < n && i < GT_ADVICE_MAX_PROCS; i++) {
        json_array_append_new(pids, json_integer(a->n_procs > 1 ? a->pids[i] : a->pid));
        json_array_append_new(ranks, json_integer(a->n_procs > 1 ? a->ranks[i] : a->rank));
    }
    const char *basis = gt_saving_basis_name(a->basis);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:b, s:s, s:o, s:I}",
        "id", a->id, "severity", gt_severity_name(a->severity), "impact", gt_impact_name(a->impact),
        "message", a->message, "remedy", a->remedy, "evidence", ev, "evidence_units", units,
        "estimated_saving_ms", a->has_saving ? json_real(a->saving_ms) : json_null(),
        "saving_basis", basis ? json_string(basis) : json_null(), "share_pct",
        a->share_pct >= 0 ? json_real(a->share_pct) : json_null(), "saving_bound", a->saving_bound,
        "saving_source", a->saving_source[0] ? json_string(a->saving_source) : json_null(),
        "base_ms", a->has_saving ? json_real(a->base_ms) : json_null(), "minor", a->minor,
        "framework", gt_framework_name(a->framework), "call_site",
        a->call_site[0] ? json_string(a->call_site) : json_null(), "t_ns", (json_int_t)a->t_ns);
    json_object_set_new(o, "saving_before_overlap_ms",
                        a->saving_before_ms > a->saving_ms ? json_real(a->saving_before_ms)
                                                           : json_null());
    json_object_set_new(o, "pid", json_integer(a->pid));
    json_object_set_new(o, "rank", json_integer(a->rank));
    json_object_set_new(o, "pids", pids);
    json_object_set_new(o, "ranks", ranks);
    return o;
}
