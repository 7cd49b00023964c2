/* cmd_report.c — `gputrace report TRACE... [--json] [--html FILE] [--fail-on=SEVERITY]`: a run
 * summary and advice, as text (report_text.c), JSON (docs/report-schema.md) or one HTML page
 * (report_html.c). Exit status: 0; 3 with --fail-on when advice at that severity or above exists;
 * 1 when an input is damaged (the report is still printed); 2 when an input is not a trace, an
 * output cannot be written, or bad usage. */
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
#include "report_text.h"
#include "report_verdict.h"
#include "util.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace report [--json | --html FILE] [--fail-on=SEVERITY] [--top=N]\n"
            "                      [--step-range=NAME] TRACE|FOLDER...\n\n"
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
            "  -h, --help         this help\n\n"
            "A FOLDER stands for the *.gtrace files in it (a run folder, one file per process).\n"
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
    int json, fail_on, top_n, brief;
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
    default: /* 'h' */
        usage(stdout);
        return GT_CLI_HELP;
    }
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
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    report_options o = {.json = 0, .fail_on = -1, .top_n = 15};
    const gt_cli cli = {.command = "report",
                        .shortopts = "h",
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
