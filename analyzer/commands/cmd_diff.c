/* cmd_diff.c — `gputrace diff A B [--json]`: compare two runs operation by operation.
 * A and B are trace files or run folders; processes are paired by rank when both runs have ranks,
 * else in file order. Exit status: 0; 1 when an input is damaged; 2 when one is not a trace. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "cli_args.h"
#include "commands.h"
#include "diff_steady.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "outfile.h"
#include "report_out.h"
#include "textfmt.h"
#include "util.h"
#include "xrank.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace diff [--json] [--top=N] [--step-range=NAME] A B\n\n"
            "Compare two runs (e.g. two cuDNN versions, or benchmark on/off): versions side by\n"
            "side; the steady state per step and per sample (the batch from the cuDNN op\n"
            "signatures), busy shares in percentage points, with warnings when step markers,\n"
            "step counts, batch or work per step differ; the phases side by side; whole-run\n"
            "totals; the steps aligned one by one; per cuDNN op signature the engine/algorithm\n"
            "and GPU time in A and B (marked '*' where the choice changed), kernels by total\n"
            "time, sync stalls and copies matched by call site, and advice present in only one\n"
            "run. A and B are .gtrace files or run folders\n"
            "(compared rank by rank when ranks are present).\n\n"
            "  --json      JSON output (schema: docs/report-schema.md, \"gputrace-diff\")\n"
            "  --top=N     kernels listed (default 15, 0 = all)\n"
            "  --step-range=NAME  the NVTX range that is one step in both runs\n"
            "  -h, --help  this help\n\n"
            "Exit status: 0 ok, 1 damaged input (still compared), 2 not a trace or bad usage.\n");
}

/* ------------------------------------------------------------------ pairing */

static const gt_proc *usable(const gt_run *r, size_t i)
{
    return i < r->n && gt_proc_has_data(&r->procs[i]) ? &r->procs[i] : NULL;
}

static size_t pair_up(const gt_run *a, const gt_run *b, const gt_proc **pa, const gt_proc **pb,
                      size_t cap)
{
    size_t n = 0;
    int ranks = 1;
    for (size_t i = 0; i < a->n; i++)
        ranks &= usable(a, i) == NULL || a->procs[i].hdr.rank >= 0;
    for (size_t i = 0; i < b->n; i++)
        ranks &= usable(b, i) == NULL || b->procs[i].hdr.rank >= 0;
    if (ranks) {
        for (size_t i = 0; i < a->n && n < cap; i++) {
            const gt_proc *x = usable(a, i);
            if (!x)
                continue;
            for (size_t j = 0; j < b->n; j++) {
                const gt_proc *y = usable(b, j);
                if (y && y->hdr.rank == x->hdr.rank) {
                    pa[n] = x;
                    pb[n++] = y;
                    break;
                }
            }
        }
        if (n)
            return n;
    }
    size_t i = 0, j = 0;
    while (n < cap) {
        while (i < a->n && !usable(a, i))
            i++;
        while (j < b->n && !usable(b, j))
            j++;
        if (i >= a->n || j >= b->n)
            break;
        pa[n] = &a->procs[i++];
        pb[n++] = &b->procs[j++];
    }
    return n;
}

/* ------------------------------------------------------------------ comparisons */

static double ratio(double a, double b)
{
    return a > 0 ? b / a : (b > 0 ? INFINITY : 1.0);
}

static const char *ratio_text(double a, double b)
{
    double r = ratio(a, b);
    return isinf(r) ? "new" : gt_fmt("%.2fx", r);
}

static const gt_cudnn_opstat *op_by_sig(const gt_proc *p, const char *sig)
{
    for (size_t i = 0; i < p->n_cudnn; i++)
        if (!strcmp(p->cudnn[i].signature, sig))
            return &p->cudnn[i];
    return NULL;
}

static const gt_cudnn_choice *chosen(const gt_cudnn_opstat *op)
{
    return op && op->chosen >= 0 ? &op->choices[op->chosen] : NULL;
}

static uint64_t op_gpu_ns(const gt_cudnn_opstat *op)
{
    uint64_t t = 0;
    for (int c = 0; op && c < op->n_choices; c++)
        t += op->choices[c].gpu_ns;
    return t;
}

static int op_changed(const gt_cudnn_opstat *x, const gt_cudnn_opstat *y)
{
    const gt_cudnn_choice *a = chosen(x), *b = chosen(y);
    return !a || !b || strcmp(a->text, b->text) != 0;
}

/* Same engine/algorithm, other configuration: backend notes carry the knob choices. */
static int config_changed(const gt_cudnn_opstat *x, const gt_cudnn_opstat *y)
{
    const gt_cudnn_choice *a = chosen(x), *b = chosen(y);
    return a && b && !strcmp(a->text, b->text) &&
           strcmp(a->notes ? a->notes : "", b->notes ? b->notes : "") != 0;
}

static const char *change_mark(const gt_cudnn_opstat *x, const gt_cudnn_opstat *y)
{
    return op_changed(x, y) ? "*" : config_changed(x, y) ? "~" : "";
}

/* Union of signatures: A's in order, then those only in B. */
static size_t op_union(const gt_proc *a, const gt_proc *b, const char **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_cudnn && n < cap; i++)
        out[n++] = a->cudnn[i].signature;
    for (size_t i = 0; i < b->n_cudnn && n < cap; i++)
        if (!op_by_sig(a, b->cudnn[i].signature))
            out[n++] = b->cudnn[i].signature;
    return n;
}

static const gt_kernel_agg *kernel_by_name(const gt_proc *p, const char *name)
{
    for (size_t i = 0; i < p->n_kernels; i++)
        if (!strcmp(p->kernels[i].mangled, name))
            return &p->kernels[i];
    return NULL;
}

typedef struct kpair {
    const char *mangled, *name;
    uint64_t a_ns, b_ns;
} kpair;

static int cmp_kpair(const void *x, const void *y)
{
    const kpair *a = x, *b = y;
    uint64_t ma = a->a_ns > a->b_ns ? a->a_ns : a->b_ns, mb = b->a_ns > b->b_ns ? b->a_ns : b->b_ns;
    return ma < mb ? 1 : ma > mb ? -1 : 0;
}

static kpair *kernel_pairs(const gt_proc *a, const gt_proc *b, size_t *n_out)
{
    kpair *v = malloc((a->n_kernels + b->n_kernels + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < a->n_kernels; i++) {
        const gt_kernel_agg *kb = kernel_by_name(b, a->kernels[i].mangled);
        v[n++] = (kpair){a->kernels[i].mangled, a->kernels[i].name, a->kernels[i].total_ns,
                         kb ? kb->total_ns : 0};
    }
    for (size_t i = 0; i < b->n_kernels; i++)
        if (!kernel_by_name(a, b->kernels[i].mangled))
            v[n++] = (kpair){b->kernels[i].mangled, b->kernels[i].name, 0, b->kernels[i].total_ns};
    qsort(v, n, sizeof *v, cmp_kpair);
    *n_out = n;
    return v;
}

/* ------------------------------------------------------------------ call sites */

/* Sync stalls (and blocking copies) per call, and the costliest call site of each copy class,
 * matched between the runs by what was called and the call-site text: the text carries no
 * address when a file:line or function is known, so the same line matches across runs. */
typedef struct site_pair {
    char what[64];
    const char *site;
    uint64_t a_count, a_ns, b_count, b_ns;
} site_pair;

typedef struct site_pairs {
    site_pair *v;
    size_t n, cap;
} site_pairs;

static void site_add(site_pairs *sp, const char *what, const char *site, int in_b, uint64_t count,
                     uint64_t ns)
{
    size_t i = 0;
    while (i < sp->n && (strcmp(sp->v[i].what, what) != 0 || strcmp(sp->v[i].site, site) != 0))
        i++;
    if (i == sp->n) {
        if (sp->n == sp->cap) {
            size_t cap = sp->cap ? sp->cap * 2 : 32;
            site_pair *v = realloc(sp->v, cap * sizeof *v);
            if (!v)
                return;
            sp->v = v;
            sp->cap = cap;
        }
        sp->v[i] = (site_pair){.site = site};
        snprintf(sp->v[i].what, sizeof sp->v[i].what, "%s", what);
        sp->n++;
    }
    site_pair *e = &sp->v[i];
    if (in_b) {
        e->b_count += count;
        e->b_ns += ns;
    } else {
        e->a_count += count;
        e->a_ns += ns;
    }
}

static void sites_of(const gt_proc *p, int in_b, site_pairs *sp)
{
    for (size_t i = 0; i < p->n_sync_sites; i++) {
        const gt_site_agg *g = &p->sync_sites[i];
        const char *site = gt_proc_call_site(p, g->stack_id);
        const char *fn = gt_api_func_name(g->func);
        if (site)
            site_add(sp, fn ? fn : "?", site, in_b, g->count, g->total_ns);
    }
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 6; k++) {
            const gt_copy_agg *c = &p->copies[d][k];
            const char *site = gt_proc_call_site(p, c->top_stack);
            char what[64];
            snprintf(what, sizeof what, "copy %s %s (costliest)", gt_memcpy_dir_name((uint8_t)d),
                     gt_mem_kind_name((uint8_t)k));
            if (site)
                site_add(sp, what, site, in_b, 1, c->top_stack_ns);
        }
}

static int cmp_site_pair(const void *x, const void *y)
{
    const site_pair *a = x, *b = y;
    uint64_t ma = a->a_ns > a->b_ns ? a->a_ns : a->b_ns, mb = b->a_ns > b->b_ns ? b->a_ns : b->b_ns;
    return ma < mb ? 1 : ma > mb ? -1 : strcmp(a->site, b->site);
}

static site_pairs site_pairs_of(const gt_proc *a, const gt_proc *b)
{
    site_pairs sp = {0};
    sites_of(a, 0, &sp);
    sites_of(b, 1, &sp);
    if (sp.n)
        qsort(sp.v, sp.n, sizeof *sp.v, cmp_site_pair);
    return sp;
}

static void text_sites(const gt_proc *a, const gt_proc *b, FILE *out, int top_n)
{
    site_pairs sp = site_pairs_of(a, b);
    if (sp.n) {
        fprintf(out, "\n  sync stalls and copies by call site (matched by the call site's text)\n");
        static const char *const h[] = {"call site", "call", "A n", "A ms", "B n", "B ms", "B/A"};
        gt_table t;
        gt_table_init(&t, 7, h);
        t.max_width[0] = 60;
        t.shrink[0] = 1;
        t.right[2] = t.right[3] = t.right[4] = t.right[5] = t.right[6] = 1;
        for (size_t i = 0; i < sp.n && (top_n <= 0 || i < (size_t)top_n); i++) {
            const site_pair *e = &sp.v[i];
            double x = (double)e->a_ns / 1e6, y = (double)e->b_ns / 1e6;
            gt_table_row(&t, e->site, e->what, gt_fmt("%llu", (unsigned long long)e->a_count),
                         gt_fmt("%.3f", x), gt_fmt("%llu", (unsigned long long)e->b_count),
                         gt_fmt("%.3f", y),
                         !e->a_count   ? "only B"
                         : !e->b_count ? "only A"
                                       : ratio_text(x, y));
        }
        gt_table_print(&t, out, "  ");
        gt_table_free(&t);
    }
    free(sp.v);
}

static json_t *sites_json(const gt_proc *a, const gt_proc *b)
{
    json_t *arr = json_array();
    site_pairs sp = site_pairs_of(a, b);
    for (size_t i = 0; i < sp.n; i++) {
        const site_pair *e = &sp.v[i];
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:I, s:f, s:I, s:f}", "call_site", e->site, "call", e->what,
                           "a_count", (json_int_t)e->a_count, "a_ms", (double)e->a_ns / 1e6,
                           "b_count", (json_int_t)e->b_count, "b_ms", (double)e->b_ns / 1e6));
    }
    free(sp.v);
    return arr;
}

/* ------------------------------------------------------------------ advice only in one run */

/* One of a's ranks (a merged item names several) among b's. */
static int same_ranks(const gt_advice *a, const gt_advice *b)
{
    int na = a->n_procs > 1 ? a->n_procs : 1, nb = b->n_procs > 1 ? b->n_procs : 1;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if ((a->n_procs > 1 ? a->ranks[i] : a->rank) ==
                (b->n_procs > 1 ? b->ranks[j] : b->rank))
                return 1;
    return 0;
}

static int advice_has(const gt_advice_list *l, const gt_advice *a)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].id, a->id) && same_ranks(&l->items[i], a))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ text */

static const char *ver(int v, int cudnn)
{
    if (v <= 0)
        return "-";
    return cudnn ? gt_fmt("%d.%d.%d", v / 10000, (v / 100) % 100, v % 100)
                 : gt_fmt("%d.%d", v / 1000, (v % 1000) / 10);
}

static void text_pair(const gt_proc *a, const gt_proc *b, FILE *out, int color, int top_n)
{
    fprintf(out, "\n%s== %s  vs  %s ==%s\n", gt_bold(color), a->path, b->path,
            gt_color_reset(color));
    static const char *const vh[] = {"", "A", "B"};
    gt_table t;
    gt_table_init(&t, 3, vh);
    const gt_runtime_info *ra = &a->hdr.runtime, *rb = &b->hdr.runtime;
    gt_table_row(&t, "GPU", ra->device_count ? ra->devices[0].name : "-",
                 rb->device_count ? rb->devices[0].name : "-");
    gt_table_row(&t, "driver", ver(ra->driver_version, 0), ver(rb->driver_version, 0));
    gt_table_row(&t, "runtime", ver(ra->runtime_version, 0), ver(rb->runtime_version, 0));
    gt_table_row(&t, "cuDNN", ver(ra->cudnn_version, 1), ver(rb->cudnn_version, 1));
    gt_table_row(&t, "cuDNN built for", ver(ra->cudnn_cudart_version, 0),
                 ver(rb->cudnn_cudart_version, 0));
    gt_table_row(&t, "rank", a->hdr.rank >= 0 ? gt_fmt("%d", a->hdr.rank) : "-",
                 b->hdr.rank >= 0 ? gt_fmt("%d", b->hdr.rank) : "-");
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);

    gt_diff_steady_text(a, b, out, top_n);

    const char *sigs[512];
    size_t ns = op_union(a, b, sigs, 512);
    if (ns) {
        fprintf(out,
                "\n  cuDNN ops, matched by signature ('*' = engine/algorithm changed, '~' = same "
                "engine, other knobs)\n");
        static const char *const ch[] = {"",         "op signature", "A engine", "B engine",
                                         "A GPU ms", "B GPU ms",     "B/A"};
        gt_table c;
        gt_table_init(&c, 7, ch);
        c.max_width[1] = 80;
        c.shrink[1] = 1;
        c.name_flags[1] = GT_NAME_TAIL; /* shapes first, layout and type last */
        c.right[4] = c.right[5] = c.right[6] = 1;
        for (size_t i = 0; i < ns; i++) {
            const gt_cudnn_opstat *x = op_by_sig(a, sigs[i]), *y = op_by_sig(b, sigs[i]);
            const gt_cudnn_choice *cx = chosen(x), *cy = chosen(y);
            double gx = (double)op_gpu_ns(x) / 1e6, gy = (double)op_gpu_ns(y) / 1e6;
            gt_table_row(&c, change_mark(x, y), sigs[i],
                         cx ? gt_fmt("%s%s%s", cx->text, cx->tensor_cores ? " (TC)" : "",
                                     x->inferred ? " inferred" : "")
                            : "-",
                         cy ? gt_fmt("%s%s%s", cy->text, cy->tensor_cores ? " (TC)" : "",
                                     y->inferred ? " inferred" : "")
                            : "-",
                         gt_fmt("%.3f", gx), gt_fmt("%.3f", gy),
                         gx > 0 || gy > 0 ? ratio_text(gx, gy) : "-");
        }
        gt_table_print(&c, out, "  ");
        gt_table_free(&c);
        for (size_t i = 0; i < ns; i++) { /* what '~' hides: the notes with the knob choices */
            const gt_cudnn_opstat *x = op_by_sig(a, sigs[i]), *y = op_by_sig(b, sigs[i]);
            if (config_changed(x, y))
                fprintf(out, "  ~ %s\n      A: %s\n      B: %s\n", sigs[i], chosen(x)->notes,
                        chosen(y)->notes);
        }
    }

    size_t nk;
    kpair *kp = kernel_pairs(a, b, &nk);
    if (nk) {
        fprintf(out, "\n  kernels by total time\n");
        static const char *const kh[] = {"A ms", "B ms", "B/A", "kernel"};
        gt_table k;
        gt_table_init(&k, 4, kh);
        k.right[0] = k.right[1] = k.right[2] = 1;
        k.max_width[3] = 90;
        k.shrink[3] = 1;
        k.name_flags[3] = GT_NAME_KERNEL;
        for (size_t i = 0; i < nk && (top_n <= 0 || i < (size_t)top_n); i++)
            gt_table_row(&k, gt_fmt("%.3f", (double)kp[i].a_ns / 1e6),
                         gt_fmt("%.3f", (double)kp[i].b_ns / 1e6),
                         kp[i].a_ns ? ratio_text((double)kp[i].a_ns, (double)kp[i].b_ns) : "only B",
                         kp[i].name);
        gt_table_print(&k, out, "  ");
        gt_table_free(&k);
    }
    free(kp);
    text_sites(a, b, out, top_n);
}

static void text_advice_only(const gt_advice_list *x, const gt_advice_list *y, const char *label,
                             FILE *out, int color)
{
    int any = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (advice_has(y, &x->items[i]))
            continue;
        if (!any)
            fprintf(out, "  only in %s:\n", label);
        any = 1;
        fprintf(out, "    %s[%s]%s %s: %s\n", gt_sev_color(x->items[i].severity, color),
                gt_severity_name(x->items[i].severity), gt_color_reset(color), x->items[i].id,
                x->items[i].message);
    }
    if (!any)
        fprintf(out, "  only in %s: none\n", label);
}

/* ------------------------------------------------------------------ JSON */

static json_t *versions(const gt_proc *p)
{
    const gt_runtime_info *r = &p->hdr.runtime;
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:i, s:i}", "path", p->path, "pid", p->hdr.pid,
                     "rank", p->hdr.rank, "driver", r->driver_version, "runtime",
                     r->runtime_version, "gpu", r->device_count ? r->devices[0].name : "", "cudnn",
                     r->cudnn_version, "cudnn_cudart", r->cudnn_cudart_version);
}

static json_t *pair_json(const gt_proc *a, const gt_proc *b)
{
    json_t *ops = json_array();
    const char *sigs[512];
    size_t ns = op_union(a, b, sigs, 512);
    for (size_t i = 0; i < ns; i++) {
        const gt_cudnn_opstat *x = op_by_sig(a, sigs[i]), *y = op_by_sig(b, sigs[i]);
        double gx = (double)op_gpu_ns(x) / 1e6, gy = (double)op_gpu_ns(y) / 1e6, r = ratio(gx, gy);
        int no_time = gx <= 0 && gy <= 0; /* no GPU time joined: a ratio would mean nothing */
        json_array_append_new(
            ops, json_pack("{s:s, s:o, s:o, s:f, s:f, s:o, s:b, s:b}", "signature", sigs[i], "a",
                           x ? gt_cudnn_op_json(a, x) : json_null(), "b",
                           y ? gt_cudnn_op_json(b, y) : json_null(), "a_gpu_ms", gx, "b_gpu_ms", gy,
                           "gpu_ratio", isinf(r) || no_time ? json_null() : json_real(r), "changed",
                           op_changed(x, y), "config_changed", config_changed(x, y)));
    }
    json_t *kernels = json_array();
    size_t nk;
    kpair *kp = kernel_pairs(a, b, &nk);
    for (size_t i = 0; i < nk; i++) {
        double r = ratio((double)kp[i].a_ns, (double)kp[i].b_ns);
        json_array_append_new(kernels,
                              json_pack("{s:s, s:f, s:f, s:o}", "name", kp[i].name, "a_ms",
                                        (double)kp[i].a_ns / 1e6, "b_ms", (double)kp[i].b_ns / 1e6,
                                        "ratio", isinf(r) ? json_null() : json_real(r)));
    }
    free(kp);
    json_t *pair = json_pack("{s:o, s:o, s:o, s:o, s:o}", "a", versions(a), "b", versions(b),
                             "cudnn", ops, "kernels", kernels, "call_sites", sites_json(a, b));
    gt_diff_steady_json(a, b, pair);
    return pair;
}

static json_t *only_json(const gt_advice_list *x, const gt_advice_list *y)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < x->n; i++)
        if (!advice_has(y, &x->items[i]))
            json_array_append_new(arr, gt_advice_to_json(&x->items[i]));
    return arr;
}

/* ------------------------------------------------------------------ command */

typedef struct diff_options {
    int json, top_n;
    const char *step_range;
} diff_options;

static int diff_option(void *ctx, int c, const char *arg)
{
    diff_options *o = ctx;
    long top;
    switch (c) {
    case 'j':
        o->json = 1;
        return GT_CLI_OK;
    case 't':
        if (gt_cli_int("diff", "--top", arg, 0, INT_MAX, &top) != 0)
            return GT_CLI_USAGE;
        o->top_n = (int)top;
        return GT_CLI_OK;
    case 'S':
        o->step_range = arg;
        return GT_CLI_OK;
    default: /* 'h' */
        usage(stdout);
        return GT_CLI_HELP;
    }
}

typedef struct diff_text {
    const char *path_a, *path_b;
    const gt_proc *const *pa, *const *pb;
    size_t n;
    const gt_advice_list *aa, *ab;
    int color, top_n;
} diff_text;

static void compose_text(void *ctx, FILE *out)
{
    const diff_text *t = ctx;
    fprintf(out, "%sgputrace diff%s  A = %s  B = %s\n", gt_bold(t->color), gt_color_reset(t->color),
            t->path_a, t->path_b);
    if (!t->n)
        fprintf(out, "  no processes with CUDA activity to compare\n");
    for (size_t i = 0; i < t->n; i++)
        text_pair(t->pa[i], t->pb[i], out, t->color, t->top_n);
    fprintf(out, "\n%s== advice ==%s\n", gt_bold(t->color), gt_color_reset(t->color));
    text_advice_only(t->aa, t->ab, "A", out, t->color);
    text_advice_only(t->ab, t->aa, "B", out, t->color);
}

int cmd_diff(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"top", required_argument, NULL, 't'},
                                             {"step-range", required_argument, NULL, 'S'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    diff_options o = {.json = 0, .top_n = 15};
    const gt_cli cli = {.command = "diff",
                        .shortopts = "h",
                        .longopts = longopts,
                        .on_option = diff_option,
                        .ctx = &o};
    char **runs;
    int n_runs;
    int parsed = gt_cli_parse(&cli, argc, argv, &runs, &n_runs);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? 0 : 2;
    if (n_runs != 2) {
        gt_cli_usage_error("diff", "give exactly two runs (files or folders), not %d", n_runs);
        free(runs);
        return 2;
    }
    for (int i = 0; i < 2; i++)
        if (gt_xrank_path_is_summary(runs[i])) { /* say so, rather than "not a trace" */
            fprintf(stderr,
                    "gputrace diff: %s: a per-rank summary; diff compares traces "
                    "(`gputrace report SUMMARY...` analyses summaries)\n",
                    runs[i]);
            free(runs);
            return 2;
        }
    int json = o.json, top_n = o.top_n;
    const char *path_a = runs[0], *path_b = runs[1];
    free(runs);
    gt_run ra = {0}, rb = {0};
    ra.opts.step_range = rb.opts.step_range = o.step_range;
    const char *pa_path[] = {path_a}, *pb_path[] = {path_b};
    /* One run at a time, its advice made and its gaps freed before the other is read: a long
     * run's gaps are not in memory twice (diff compares figures, steps and advice, not gaps). */
    gt_advice_list aa = {0}, ab = {0};
    int ok_a = gt_run_load(&ra, pa_path, 1, 1) == 0 && gt_run_step_range_check(&ra);
    if (ok_a) {
        gt_advice_from_run(&ra, &aa);
        gt_run_drop_gaps(&ra);
    }
    int ok_b = gt_run_load(&rb, pb_path, 1, 1) == 0 && gt_run_step_range_check(&rb);
    if (!ok_a || !ok_b) {
        gt_advice_list_free(&aa);
        gt_run_free(&ra);
        gt_run_free(&rb);
        return 2;
    }
    gt_advice_from_run(&rb, &ab);
    gt_run_drop_gaps(&rb);
    const gt_proc *pa[256], *pb[256];
    size_t n = pair_up(&ra, &rb, pa, pb, 256);
    if (json) {
        json_t *pairs = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(pairs, pair_json(pa[i], pb[i]));
        json_t *root = json_pack("{s:s, s:i, s:s, s:s, s:o, s:o, s:o}", "schema", "gputrace-diff",
                                 "schema_version", GT_DIFF_SCHEMA_VERSION, "a", path_a, "b", path_b,
                                 "pairs", pairs, "advice_only_a", only_json(&aa, &ab),
                                 "advice_only_b", only_json(&ab, &aa));
        if (root) {
            json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            fputc('\n', stdout);
            json_decref(root);
        }
    } else {
        diff_text t = {path_a, path_b, pa, pb, n, &aa, &ab, gt_use_color(stdout), top_n};
        gt_print_fitted(stdout, compose_text, &t); /* lines fit the terminal (textfmt.h) */
    }
    int rc = ra.any_not_trace || rb.any_not_trace ? 2 : ra.any_damaged || rb.any_damaged ? 1 : 0;
    if (gt_stdout_finish("diff") != 0)
        rc = 2;
    gt_advice_list_free(&aa);
    gt_advice_list_free(&ab);
    gt_run_free(&ra);
    gt_run_free(&rb);
    return rc;
}
