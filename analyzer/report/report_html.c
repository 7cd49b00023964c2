/* report_html.c — `gputrace report --html FILE` (issue 32 item 6): the report as one HTML page a
 * person would rather look at than read: the verdict, GPU busy over time, each phase and the
 * steady step by cause as stacked bars, the top kernels and copies, the advice with call sites.
 *
 * The page (report_page.html, compiled in by embed_page.cmake) draws itself from the report's
 * JSON, the very object `report --json` prints (gt_report_json), written into its data block: one
 * model, one JSON, three outputs, so the page cannot say what the text does not. Nothing is
 * fetched: CSS, script and charts (SVG) are in the page. */
#include "report_html.h"

#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "report_json.h"
#include "report_out.h"

extern const unsigned char gt_report_page[];
extern const size_t gt_report_page_len;

#define DATA_MARK "@GPUTRACE_REPORT_JSON@"

/* JSON inside <script>: a "</script>" (or "<!--") in a kernel name or a path must not end the
 * block, so every '<' is written as its JSON escape. */
static int write_json_for_script(FILE *f, const char *json)
{
    for (const char *s = json; *s; s++) {
        if (*s == '<') {
            if (fputs("\\u003c", f) < 0)
                return -1;
        } else if (fputc(*s, f) == EOF) {
            return -1;
        }
    }
    return 0;
}

int gt_report_html(const gt_run *run, const gt_advice_list *adv, const char *path, int top_n)
{
    const char *page = (const char *)gt_report_page;
    const char *mark = strstr(page, DATA_MARK);
    json_t *root = gt_report_json(run, adv, top_n);
    char *json = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(root);
    if (!mark || !json) {
        fprintf(stderr, "gputrace report: could not build the HTML page\n");
        free(json);
        return -1;
    }
    gt_outfile o;
    if (gt_outfile_open(&o, path, "report") != 0) {
        free(json);
        return -1;
    }
    fwrite(page, 1, (size_t)(mark - page), o.f);
    write_json_for_script(o.f, json);
    fputs(mark + strlen(DATA_MARK), o.f);
    free(json);
    return gt_outfile_commit(&o, "report");
}
