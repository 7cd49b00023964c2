/* cmd_convert.c — `gputrace convert`: .gtrace files -> one Perfetto trace (or Chrome JSON). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advice.h"
#include "cli_args.h"
#include "commands.h"
#include "convert.h"
#include "model.h"
#include "util.h"
#include "outfile.h"

static void convert_usage(FILE *out)
{
    fprintf(
        out,
        "usage: gputrace convert TRACE... [-o OUT] [--format=perfetto|json] [--no-advice]\n"
        "                        [--step-range=NAME] [--max-mb=N] [--ranks=LIST]\n"
        "\n"
        "Write one Perfetto trace from one or several .gtrace files (or folders of them: a\n"
        "parent and its workers, the ranks of a torchrun job). Open it in ui.perfetto.dev.\n"
        "Each process gets its threads (CUDA/cuDNN/cuBLAS calls with their arguments, NVTX\n"
        "ranges), a track per GPU stream (\"GPU 0 \xc2\xb7 stream 7\": kernels, copies, sets),\n"
        "arrows from each call to the GPU work it caused and from each sync stall to the\n"
        "work it waited for, counters (GPU memory, pinned host memory, GPU busy %% per\n"
        "10 ms) and a \"gputrace advice\" track. Files are aligned on CLOCK_REALTIME.\n"
        "\n"
        "options:\n"
        "  -o, --output=OUT    output file (default: the input's name with .perfetto-trace,\n"
        "                      or .json; for several inputs, named after their folder);\n"
        "                      - for standard output. Only a regular file is replaced, and\n"
        "                      only once the whole trace is written.\n"
        "  --format=FORMAT     perfetto (default) or json (Chrome trace-event JSON)\n"
        "  --no-advice         do not compute advice (faster on very large traces)\n"
        "  --step-range=NAME   the NVTX range that is one step, for the advice\n"
        "  --max-mb=N          keep the output under about N MB (default 256, what\n"
        "                      ui.perfetto.dev opens comfortably; 0: no limit): a longer\n"
        "                      run keeps whole steps (the slowest, the median, the first\n"
        "                      steady ones) and leaves the rest out, marked on the\n"
        "                      timeline; the advice (and gputrace report) cover it all\n"
        "  --ranks=LIST        only these ranks of a multi-rank run (their DataLoader\n"
        "                      workers and other children follow them): ranks and\n"
        "                      ranges (0,3,8-11), slowest (the straggler at the\n"
        "                      collectives), fastest (the rank that waits longest for\n"
        "                      the others), combined: --ranks slowest,fastest,0\n"
        "  -q, --quiet         no warnings\n"
        "  -h, --help          this help\n"
        "\n"
        "exit status: 0 converted; 1 an input was damaged or truncated (what was readable is\n"
        "converted); 2 an input is not a trace, or the output could not be written.\n");
}

/* x.gtrace -> x.perfetto-trace; dir/ -> dir.perfetto-trace; several files -> named after their
 * common folder. */
static char *default_output(char *const *inputs, int n, const char *ext)
{
    char base[4096];
    if (n == 1) {
        snprintf(base, sizeof base, "%s", inputs[0]);
        size_t len = strlen(base);
        while (len > 1 && base[len - 1] == '/')
            base[--len] = 0;
        struct stat sb;
        int is_dir = stat(base, &sb) == 0 && S_ISDIR(sb.st_mode);
        if (!is_dir && len > 7 && !strcmp(base + len - 7, ".gtrace"))
            base[len - 7] = 0;
    } else {
        /* the longest common folder prefix of all inputs */
        snprintf(base, sizeof base, "%s", inputs[0]);
        char *slash = strrchr(base, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(base, sizeof base, ".");
        for (int i = 1; i < n; i++) {
            while (strncmp(inputs[i], base, strlen(base)) != 0 ||
                   (inputs[i][strlen(base)] != '/' && inputs[i][strlen(base)] != 0)) {
                char *s = strrchr(base, '/');
                if (!s) {
                    snprintf(base, sizeof base, ".");
                    break;
                }
                *s = 0;
            }
        }
        if (!strcmp(base, ".")) {
            snprintf(base, sizeof base, "gputrace");
        } else {
            /* folder/leaf: the output sits inside the common folder, named after it; too
             * long a path keeps the folder's own name */
            char tmp[2 * sizeof base + 2];
            const char *name = strrchr(base, '/');
            int w = snprintf(tmp, sizeof tmp, "%s/%s", base, name ? name + 1 : base);
            if (w > 0 && (size_t)w < sizeof base)
                memcpy(base, tmp, (size_t)w + 1);
        }
    }
    size_t len = strlen(base) + strlen(ext) + 1;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s%s", base, ext);
    return out;
}

/* The model behind the advice: pass 1 before the conversion, pass 2 along with it. */
typedef struct advice_ctx {
    gt_run run;
    int loaded, decided;
    gt_proc **by_file; /* converter's file index -> process of the run */
    size_t n_files;
    gt_advice_list list;
} advice_ctx;

static gt_proc *proc_of_file(advice_ctx *a, int file_index, const char *path)
{
    if ((size_t)file_index >= a->n_files) {
        size_t n = (size_t)file_index + 1;
        a->by_file = gt_xrealloc(a->by_file, n * sizeof *a->by_file);
        for (size_t i = a->n_files; i < n; i++)
            a->by_file[i] = NULL;
        a->n_files = n;
    }
    if (!a->by_file[file_index]) /* the same expansion of the same inputs: same paths */
        for (size_t i = 0; i < a->run.n; i++)
            if (a->run.procs[i].priv && !strcmp(a->run.procs[i].path, path))
                a->by_file[file_index] = &a->run.procs[i];
    return a->by_file[file_index];
}

static void model_record(void *ctx, int file_index, const char *path, const gt_record *r)
{
    gt_proc *p = proc_of_file(ctx, file_index, path);
    if (p)
        gt_proc_pass2_record(p, r);
}

static int model_link_lag(void *ctx, int file_index, const char *path, gt_link_lag *out)
{
    const gt_proc *p = proc_of_file(ctx, file_index, path);
    if (!p)
        return -1;
    *out = p->link_lag;
    return 0;
}

static void model_file_end(void *ctx, int file_index, const char *path, int complete)
{
    gt_proc *p = proc_of_file(ctx, file_index, path);
    if (p)
        gt_proc_finish(p, complete);
}

static struct gt_symtab *model_symtab(void *ctx, int file_index, const char *path)
{
    gt_proc *p = path ? proc_of_file(ctx, file_index, path) : NULL;
    return p ? gt_proc_symtab(p) : NULL;
}

static void advice_for_file(void *ctx, int file_index, const char *path, int32_t pid,
                            gt_convert_advice_emit emit, void *emit_ctx)
{
    advice_ctx *a = ctx;
    if (!a->decided) { /* every file was read: the model is complete */
        for (size_t i = 0; i < a->run.n; i++)
            if (a->run.procs[i].priv)
                gt_proc_finish(&a->run.procs[i], 0); /* the converter could not read it */
        gt_run_cross_process(&a->run); /* workers and ranks: the straggler, collective waits */
        gt_advice_from_run(&a->run, &a->list);
        a->decided = 1;
    }
    const gt_proc *p = proc_of_file(a, file_index, path);
    for (size_t i = 0; p && i < p->n_phases; i++) { /* the phases, drawn as a track */
        const gt_phase_span *ph = &p->phases[i];
        char detail[96];
        snprintf(detail, sizeof detail, "%.3f ms", (double)(ph->end_ns - ph->start_ns) / 1e6);
        gt_convert_advice item = {.t_ns = ph->start_ns,
                                  .title = gt_phase_name(ph->kind),
                                  .detail = detail,
                                  .end_ns = ph->end_ns};
        emit(emit_ctx, &item);
    }
    for (size_t i = 0; i < a->list.n; i++) {
        const gt_advice *ad = &a->list.items[i];
        /* Run-wide items (pid 0) go on the first process; merged ones on each of their ranks. */
        if (!(gt_advice_has_pid(ad, pid) || (ad->pid == 0 && file_index == 0)))
            continue;
        char title[96], detail[sizeof ad->message + sizeof ad->call_site + 8];
        snprintf(title, sizeof title, "%s (%s)", ad->id, gt_severity_name(ad->severity));
        snprintf(detail, sizeof detail, "%s%s%s", ad->message, ad->call_site[0] ? " at " : "",
                 ad->call_site);
        gt_convert_advice item = {.t_ns = ad->t_ns, .title = title, .detail = detail};
        emit(emit_ctx, &item);
    }
}

static void advice_free(advice_ctx *a)
{
    if (a->loaded)
        gt_run_free(&a->run);
    gt_advice_list_free(&a->list);
    free(a->by_file);
}

typedef struct convert_options {
    const char *output, *step_range, *ranks;
    gt_convert_opts opts;
    int want_advice;
    uint64_t max_mb;
} convert_options;

#define GT_CONVERT_DEFAULT_MAX_MB 256

static int convert_option(void *ctx, int c, const char *arg)
{
    convert_options *o = ctx;
    switch (c) {
    case 'o':
        o->output = arg;
        return GT_CLI_OK;
    case 'f':
        if (!strcmp(arg, "json") || !strcmp(arg, "perfetto")) {
            o->opts.format = !strcmp(arg, "json") ? GT_CONVERT_JSON : GT_CONVERT_PERFETTO;
            return GT_CLI_OK;
        }
        gt_cli_usage_error("convert", "--format takes perfetto or json, not '%s'", arg);
        return GT_CLI_USAGE;
    case 'A':
        o->want_advice = 0;
        return GT_CLI_OK;
    case 'q':
        o->opts.quiet = 1;
        return GT_CLI_OK;
    case 'S':
        o->step_range = arg;
        return GT_CLI_OK;
    case 'R':
        o->ranks = arg;
        return GT_CLI_OK;
    case 'M': {
        char *end;
        unsigned long long v = strtoull(arg, &end, 10);
        if (*arg && *arg != '-' && !*end && v <= (1ull << 30)) {
            o->max_mb = v;
            return GT_CLI_OK;
        }
        gt_cli_usage_error("convert", "--max-mb takes a number of MB (0: no limit), not '%s'", arg);
        return GT_CLI_USAGE;
    }
    default: /* 'h' */
        convert_usage(stdout);
        return GT_CLI_HELP;
    }
}

/* --max-mb: when the whole run would not fit, load the model (steps) and choose what to keep.
 * Returns the estimate of the whole output's size (0 when it fits or there is no limit). */
static uint64_t choose_budget(uint64_t max_mb, const char *step_range, char *const *inputs, int n,
                              gt_convert_opts *opts, gt_convert_budget *b)
{
    uint64_t limit = max_mb << 20;
    uint64_t estimate = gt_convert_estimate_bytes((const char *const *)inputs, n);
    if (!max_mb || estimate <= limit)
        return 0;
    gt_run run = {.opts.step_range = step_range}; /* the steps kept are the report's steps */
    if (gt_run_load(&run, (const char *const *)inputs, n, 0) != 0)
        return 0; /* nothing readable: the conversion says so */
    int rc = gt_convert_budget_choose(&run, limit, b);
    if (rc == 0) /* (while the run, and its steps, are loaded) */
        gt_convert_budget_fit((const char *const *)inputs, n, opts->format, limit, b);
    gt_run_free(&run);
    if (rc != 0)
        return 0;
    opts->keep = b->keep;
    opts->n_keep = b->n_keep;
    opts->left_out_why = b->why;
    return estimate;
}

static void say_left_out(uint64_t max_mb, uint64_t estimate, const gt_convert_budget *b,
                         const gt_convert_stats *st)
{
    if (!b->keep)
        return;
    fprintf(stderr,
            "gputrace convert: the whole run would take about %.1f"
            " MB, over --max-mb %" PRIu64 ": %s; %" PRIu64
            " events left out (marked on the timeline; the advice and `gputrace "
            "report` cover the whole run; --max-mb 0 keeps everything)\n",
            (double)estimate / 1048576.0, max_mb, b->why, st->left_out);
    if (st->bytes_out > (max_mb << 20))
        fprintf(stderr,
                "gputrace convert: warning: the output still takes %" PRIu64 " MB, over "
                "--max-mb %" PRIu64 " (the steps kept are heavier than the average)\n",
                st->bytes_out >> 20, max_mb);
}

/* --ranks: the files of the ranks chosen replace the inputs; what was kept and left out is said
 * on stderr (unless quiet) and in the trace (note). Returns 0, or 2 with the reason printed. */
static int choose_ranks(const char *list, char *const *inputs, int n, int quiet,
                        gt_rank_choice *choice, char *note, size_t note_len)
{
    char err[512];
    if (gt_convert_choose_ranks(list, (const char *const *)inputs, n, choice, err, sizeof err)) {
        fprintf(stderr, "gputrace convert: %s\n", err);
        return 2;
    }
    int w = snprintf(note, note_len, "ranks kept: %s%s%s%s; left out: %s (%zu files)", choice->kept,
                     choice->named[0] ? " (" : "", choice->named, choice->named[0] ? ")" : "",
                     choice->left_out, choice->files_left_out);
    if (choice->without_rank && w > 0 && (size_t)w < note_len)
        snprintf(note + w, note_len - (size_t)w, ", and %zu file%s of no rank",
                 choice->without_rank, choice->without_rank == 1 ? "" : "s");
    if (!quiet)
        fprintf(stderr, "gputrace convert: --ranks %s: %s\n", list, note);
    return 0;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"no-advice", no_argument, NULL, 'A'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"step-range", required_argument, NULL, 'S'},
                                             {"max-mb", required_argument, NULL, 'M'},
                                             {"ranks", required_argument, NULL, 'R'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    convert_options co = {.want_advice = 1, .max_mb = GT_CONVERT_DEFAULT_MAX_MB};
    const gt_cli cli = {.command = "convert",
                        .shortopts = "o:qh",
                        .longopts = longopts,
                        .on_option = convert_option,
                        .ctx = &co};
    char **operands;
    int n;
    int parsed = gt_cli_parse(&cli, argc, argv, &operands, &n);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? 0 : 2;
    if (n < 1) {
        gt_cli_usage_error("convert", "no trace given");
        free(operands);
        return 2;
    }
    if (co.step_range && !co.want_advice) {
        gt_cli_usage_error("convert", "--step-range is for the advice; drop --no-advice");
        free(operands);
        return 2;
    }
    const char *output = co.output;
    gt_convert_opts opts = co.opts;
    int want_advice = co.want_advice;
    char *const *inputs = operands;
    char *owned = NULL;
    if (!output) {
        owned =
            default_output(inputs, n, opts.format == GT_CONVERT_JSON ? ".json" : ".perfetto-trace");
        if (!owned) {
            free(operands);
            return 2;
        }
        output = owned;
    }
    gt_rank_choice ranks;
    memset(&ranks, 0, sizeof ranks);
    char note[1024];
    if (co.ranks) {
        if (choose_ranks(co.ranks, inputs, n, opts.quiet, &ranks, note, sizeof note) != 0) {
            free(owned);
            free(operands);
            return 2;
        }
        inputs = ranks.paths;
        n = (int)ranks.n_paths;
        opts.note = note;
    }
    /* --max-mb loads a model of its own and frees it: before the advice's model is opened, so
     * that the two are never in memory together (the peak of a long run). */
    gt_convert_budget budget;
    memset(&budget, 0, sizeof budget);
    uint64_t estimate = choose_budget(co.max_mb, co.step_range, inputs, n, &opts, &budget);
    advice_ctx adv;
    memset(&adv, 0, sizeof adv);
    adv.run.opts.step_range = co.step_range;
    int opened = want_advice ? gt_run_open(&adv.run, (const char *const *)inputs, n, 0) : -1;
    if (opened == 0 && !gt_run_step_range_check(&adv.run)) {
        adv.loaded = 1;
        advice_free(&adv);
        gt_convert_budget_free(&budget);
        gt_rank_choice_free(&ranks);
        free(owned);
        free(operands);
        return 2;
    }
    if (opened == 0) {
        opts.advice = advice_for_file;
        opts.advice_ctx = &adv;
        opts.on_record = model_record;
        opts.on_file_end = model_file_end;
        opts.symtab = model_symtab;
        opts.link_lag = model_link_lag;
        opts.record_ctx = &adv;
    }
    adv.loaded = want_advice;
    opts.progress = isatty(STDERR_FILENO);

    /* Through a temporary file renamed at the end: never half a trace under its name, never
     * over a device, FIFO or link (outfile.h). */
    gt_outfile out;
    if (gt_outfile_open(&out, output, "convert") != 0) {
        advice_free(&adv);
        gt_convert_budget_free(&budget);
        gt_rank_choice_free(&ranks);
        free(owned);
        free(operands);
        return 2;
    }
    gt_convert_stats st;
    int rc = gt_convert_run((const char *const *)inputs, n, out.f, &opts, &st);
    if (st.files == 0) {
        gt_outfile_discard(&out);
    } else if (gt_outfile_commit(&out, "convert") != 0) {
        rc = 2;
    } else if (!opts.quiet) {
        fprintf(stderr,
                "gputrace convert: wrote %s (%" PRIu64 " bytes) from %" PRIu64 " file%s, %" PRIu64
                " records: %" PRIu64 " slices, %" PRIu64 " GPU ops, %" PRIu64 " flows, %" PRIu64
                " counter values",
                gt_outfile_name(&out), st.bytes_out, st.files, st.files == 1 ? "" : "s", st.records,
                st.slices, st.gpu_ops, st.flows, st.counters);
        if (st.linked_by_pair)
            fprintf(stderr, ", %" PRIu64 " kernels linked by callback pairs", st.linked_by_pair);
        if (st.linked_by_order)
            fprintf(stderr, ", %" PRIu64 " kernels linked by anchors and launch order",
                    st.linked_by_order);
        if (st.link_by_stream)
            fprintf(stderr,
                    " (%" PRIu64 " of them from library calls made at once on several threads, "
                    "told apart by stream)",
                    st.link_by_stream);
        if (st.linked_by_time || st.link_ambiguous)
            fprintf(stderr,
                    ", %" PRIu64 " kernels linked by queued time (%" PRIu64 " ambiguous, unlinked)",
                    st.linked_by_time, st.link_ambiguous);
        if (st.link_not_anchored)
            fprintf(stderr,
                    ", %" PRIu64
                    " kernels between a library call's anchors not linked to it (began "
                    "before it, or another thread's launch made them)",
                    st.link_not_anchored);
        if (st.link_other_stream)
            fprintf(stderr,
                    ", %" PRIu64 " kernels between library calls' anchors on none of their "
                    "streams (left to the launches)",
                    st.link_other_stream);
        if (st.links_undrawn)
            fprintf(stderr, ", %" PRIu64 " links not drawn (their call or GPU op was forgotten)",
                    st.links_undrawn);
        if (st.wait_arrows_undrawn)
            fprintf(stderr,
                    ", %" PRIu64 " wait arrows not drawn (the op waited for was moved past the "
                    "wait's end to nest)",
                    st.wait_arrows_undrawn);
        if (st.lost_records)
            fprintf(stderr, ", %" PRIu64 " records lost while recording", st.lost_records);
        if (st.clamped)
            fprintf(stderr, ", %" PRIu64 " slices adjusted to nest", st.clamped);
        if (st.bad_timestamps)
            fprintf(stderr, ", %" PRIu64 " events with unusable timestamps skipped",
                    st.bad_timestamps);
        fprintf(stderr, "\n");
        say_left_out(co.max_mb, estimate, &budget, &st);
    }
    gt_convert_budget_free(&budget);
    advice_free(&adv);
    gt_rank_choice_free(&ranks);
    free(owned);
    free(operands);
    return rc;
}
