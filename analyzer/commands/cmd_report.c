/* cmd_report.c — `gputrace report TRACE... [--json] [--html FILE] [--fail-on=SEVERITY]`: a run
 * summary and advice, as text (report_text.c), JSON (docs/report-schema.md) or one HTML page
 * (report_html.c). `report --summary [-o FILE] TRACE...` writes the per-rank summary
 * (report_summary.c); `report SUMMARY...` analyses many ranks' summaries (report_xrank.c,
 * docs/many-ranks.md). Exit status: 0; 3 with --fail-on when advice at that severity or above
 * exists; 1 when an input is damaged (the report is still printed); 2 when an input is not a trace,
 * an output cannot be written, or bad usage. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "cli_args.h"
#include "commands.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "outfile.h"
#include "peaks.h"
#include "report_html.h"
#include "report_json.h"
#include "report_out.h"
#include "report_summary.h"
#include "report_text.h"
#include "report_verdict.h"
#include "report_xrank.h"
#include "util.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace report [--json | --html FILE] [--fail-on=SEVERITY] [--top=N]\n"
            "                      [--step-range=NAME] TRACE|FOLDER...\n"
            "       gputrace report --summary [-o FILE] [--step-range=NAME] TRACE|FOLDER...\n"
            "       gputrace report [--json] [--top=N] SUMMARY|FOLDER|'PATTERN'...\n\n"
            "Summarize a recorded run and say why the GPU is underused: run and versions, steps\n"
            "(warm-up vs steady state), GPU busy time and idle gaps with what the CPU did, top\n"
            "kernels, API calls, copies, sync stalls with call sites, cuDNN choices per\n"
            "convolution, and advice with numbers (docs/advice.md).\n\n"
            "  --json             JSON output (schema: docs/report-schema.md)\n"
            "  --html FILE        write the report as one self-contained HTML page (verdict,\n"
            "                     GPU busy over time, phases and the steady step by cause, top\n"
            "                     kernels and copies, advice) instead of printing it\n"
            "  --fail-on=SEV      exit 3 when advice of severity SEV or above exists\n"
            "                     (info, warning, critical) -- for CI\n"
            "  --top=N            rows of every long table (default 15, 0 = all)\n"
            "  --brief            the verdict and the advice only (what record prints)\n"
            "  --text-file FILE   also write the full text report to FILE\n"
            "  --step-range=NAME  the NVTX range that is one step (ProfilerStep#N for\n"
            "                     torch.profiler's), instead of the marker chosen\n"
            "  --summary          write each process's per-rank summary (a small JSON:\n"
            "                     identity, steps, idle causes, every collective) instead\n"
            "  -o, --output FILE  where --summary writes (default: standard output)\n"
            "  -h, --help         this help\n\n"
            "A FOLDER stands for the *.gtrace files in it (a run folder, one file per process).\n"
            "Given summaries (files written by --summary, a folder of *.json summaries, or a\n"
            "quoted pattern), report matches the collectives across ranks: the straggler\n"
            "per collective and per step, whether lateness follows a rank, a host or a GPU,\n"
            "and the spread of step times across ranks and hosts (docs/many-ranks.md).\n"
            "Exit status: 0 ok, 1 damaged input (still reported), 2 not a trace or bad usage,\n"
            "3 advice at the --fail-on level. Colour only on a terminal; NO_COLOR turns it off.\n"
            "Lines fit the terminal (COLUMNS, else 100 columns when not a terminal).\n");
}

static int print_json(const gt_run *run, const gt_advice_list *adv, FILE *out, int top_n)
{
    json_t *root = gt_report_json(run, adv, top_n);
    if (!root)
        return -1;
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    fputc('\n', out);
    json_decref(root);
    return rc;
}

/* The full text report into a file of its own (record keeps it beside the run). */
static int write_text_file(const gt_run *run, const gt_advice_list *adv, const char *path,
                           int top_n)
{
    gt_outfile o;
    if (gt_outfile_open(&o, path, "report") != 0)
        return -1;
    gt_report_text(run, adv, o.f, top_n, 0);
    return gt_outfile_commit(&o, "report");
}

typedef struct report_options {
    int json, fail_on, top_n, brief, summary;
    const char *output; /* -o FILE, with --summary */
    const char *step_range;
    const char *html;      /* --html FILE */
    const char *text_file; /* --text-file FILE */
} report_options;

static int report_option(void *ctx, int c, const char *arg)
{
    report_options *o = ctx;
    long top;
    switch (c) {
    case 'j':
        o->json = 1;
        return GT_CLI_OK;
    case 'f':
        o->fail_on = gt_severity_parse(arg);
        if (o->fail_on >= 0)
            return GT_CLI_OK;
        gt_cli_usage_error("report", "--fail-on takes info, warning or critical, not '%s'", arg);
        return GT_CLI_USAGE;
    case 't':
        if (gt_cli_int("report", "--top", arg, 0, INT_MAX, &top) != 0)
            return GT_CLI_USAGE;
        o->top_n = (int)top;
        return GT_CLI_OK;
    case 'S':
        o->step_range = arg;
        return GT_CLI_OK;
    case 'H':
        o->html = arg;
        return GT_CLI_OK;
    case 'T':
        o->text_file = arg;
        return GT_CLI_OK;
    case 'b':
        o->brief = 1;
        return GT_CLI_OK;
    case 's':
        o->summary = 1;
        return GT_CLI_OK;
    case 'o':
        o->output = arg;
        return GT_CLI_OK;
    default: /* 'h' */
        usage(stdout);
        return GT_CLI_HELP;
    }
}

/* 1 when every input is a summary (or a folder or pattern of them), 0 when none is; -1 after a
 * message when they are mixed. */
static int summary_inputs(char **inputs, int n)
{
    int summaries = 0;
    for (int i = 0; i < n; i++)
        summaries += gt_xrank_path_is_summary(inputs[i]);
    if (summaries && summaries < n) {
        gt_cli_usage_error("report",
                           "give traces or summaries, not both (%d of %d inputs are "
                           "summaries)",
                           summaries, n);
        return -1;
    }
    return summaries > 0;
}

/* Options that do not go with what the inputs ask for: a usage error printed, 1. */
static int bad_combination(const report_options *o, int summaries)
{
    const char *why = NULL;
    if (summaries && (o->summary || o->html || o->brief || o->text_file || o->fail_on >= 0 ||
                      o->step_range || o->output))
        why = "summaries are reported as text or --json (with --top) only";
    else if (o->summary && (o->json || o->html || o->brief || o->text_file || o->fail_on >= 0))
        why = "--summary writes the summary only: not with --json, --html, --brief, --text-file "
              "or --fail-on";
    else if (o->output && !o->summary)
        why = "-o goes with --summary (the report prints; --html and --text-file name files)";
    if (why)
        gt_cli_usage_error("report", "%s", why);
    return why != NULL;
}

/* --summary: the run's processes' summary, to -o FILE or standard output. Exit status as the
 * report's: 2 not a trace or not written, 1 damaged (the summary is still written). */
static int write_summary(const report_options *o, const char *const *inputs, int n)
{
    gt_run run = {0};
    run.opts.step_range = o->step_range;
    if (gt_run_load(&run, inputs, n, 1) != 0 || !gt_run_step_range_check(&run)) {
        gt_run_free(&run);
        return 2;
    }
    json_t *root = gt_summary_json(&run);
    gt_outfile out;
    int rc = run.any_not_trace ? 2 : run.any_damaged ? 1 : 0;
    if (!root || gt_outfile_open(&out, o->output ? o->output : "-", "report") != 0) {
        rc = 2;
    } else {
        int failed = json_dumpf(root, out.f, JSON_COMPACT) != 0 || fputc('\n', out.f) == EOF;
        if (failed) {
            gt_outfile_discard(&out);
            fprintf(stderr, "gputrace report: could not write the summary\n");
        }
        if (failed || gt_outfile_commit(&out, "report") != 0)
            rc = 2;
    }
    json_decref(root);
    gt_run_free(&run);
    return rc;
}

/* Summaries in: the cross-rank report. Exit status 2 when a summary could not be read (the rest
 * are still reported) or none could. */
static int report_summaries(const report_options *o, const char *const *inputs, int n)
{
    gt_xrank x = {0};
    if (gt_xrank_load(&x, inputs, n, "report") == 0) {
        fprintf(stderr, "gputrace report: no summary could be read\n");
        gt_xrank_free(&x);
        return 2;
    }
    gt_xrank_analyse(&x);
    if (o->json) {
        json_t *root = gt_xrank_json(&x);
        if (!root || json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) != 0)
            fprintf(stderr, "gputrace report: could not write JSON\n");
        fputc('\n', stdout);
        json_decref(root);
    } else {
        gt_xrank_print(&x, stdout, o->top_n);
    }
    int rc = x.files_bad ? 2 : 0;
    if (gt_stdout_finish("report") != 0)
        rc = 2;
    gt_xrank_free(&x);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"fail-on", required_argument, NULL, 'f'},
                                             {"top", required_argument, NULL, 't'},
                                             {"step-range", required_argument, NULL, 'S'},
                                             {"html", required_argument, NULL, 'H'},
                                             {"text-file", required_argument, NULL, 'T'},
                                             {"brief", no_argument, NULL, 'b'},
                                             {"summary", no_argument, NULL, 's'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    report_options o = {.json = 0, .fail_on = -1, .top_n = 15};
    const gt_cli cli = {.command = "report",
                        .shortopts = "ho:",
                        .longopts = longopts,
                        .on_option = report_option,
                        .ctx = &o};
    char **inputs;
    int n_inputs;
    int parsed = gt_cli_parse(&cli, argc, argv, &inputs, &n_inputs);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? 0 : 2;
    if (n_inputs < 1 || (o.json && (o.html || o.brief))) {
        gt_cli_usage_error("report", n_inputs < 1 ? "no trace given"
                                                  : "--json is not taken with --html or --brief");
        free(inputs);
        return 2;
    }
    int modes = summary_inputs(inputs, n_inputs);
    if (modes < 0 || bad_combination(&o, modes)) {
        free(inputs);
        return 2;
    }
    if (modes == 1) {
        int rc = report_summaries(&o, (const char *const *)inputs, n_inputs);
        free(inputs);
        return rc;
    }
    if (o.summary) {
        int rc = write_summary(&o, (const char *const *)inputs, n_inputs);
        free(inputs);
        return rc;
    }
    int json = o.json, fail_on = o.fail_on, top_n = o.top_n;
    gt_run run = {0};
    run.opts.step_range = o.step_range;
    int loaded = gt_run_load(&run, (const char *const *)inputs, n_inputs, 1);
    free(inputs);
    if (loaded != 0 || !gt_run_step_range_check(&run)) {
        gt_run_free(&run);
        return 2;
    }
    gt_advice_list adv = {0};
    gt_advice_from_run(&run, &adv);
    int out_failed = 0;
    if (json) {
        if (print_json(&run, &adv, stdout, top_n) != 0)
            fprintf(stderr, "gputrace report: could not write JSON\n");
    } else if (o.brief) {
        gt_report_brief(&run, &adv, stdout, gt_use_color(stdout), GT_REPORT_BRIEF_LINES);
    } else if (!o.html) { /* --html alone writes the page and prints nothing */
        gt_report_text(&run, &adv, stdout, top_n, gt_use_color(stdout));
    }
    if (o.text_file && write_text_file(&run, &adv, o.text_file, top_n) != 0)
        out_failed = 1;
    if (o.html && gt_report_html(&run, &adv, o.html, top_n) != 0)
        out_failed = 1;
    int rc = 0;
    if (run.any_not_trace)
        rc = 2;
    else if (run.any_damaged)
        rc = 1;
    else if (fail_on >= 0)
        for (size_t i = 0; i < adv.n; i++)
            if (adv.items[i].severity >= fail_on)
                rc = 3;
    if (gt_stdout_finish("report") != 0 || out_failed)
        rc = 2;
    gt_advice_list_free(&adv);
    gt_run_free(&run);
    return rc;
}
