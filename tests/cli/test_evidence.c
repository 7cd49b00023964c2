/* test_evidence.c — advice evidence as text: whole numbers as they are, fractions with a few
 * digits, never %g's scientific notation ("sync_calls_total=1.464e+04" was printed before). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "report_out.h"

static int failures;

static void expect_in(const char *text, const char *want)
{
    if (!strstr(text, want)) {
        fprintf(stderr, "FAIL: '%s' not in:\n%s\n", want, text);
        failures++;
    }
}

int main(void)
{
    gt_advice item;
    memset(&item, 0, sizeof item);
    snprintf(item.id, sizeof item.id, "sync-every-step");
    snprintf(item.message, sizeof item.message, "test");
    static const struct {
        const char *key;
        double value;
        const char *unit;
    } ev[] = {{"sync_calls_total", 14640, "count"},
              {"step_ms", 12345.678, "ms"},
              {"share", 0.35, "%"},
              {"tiny_ms", 0.00001234, "ms"},
              {"mean_us", 6.17, "us"},
              {"big", 123456789012.0, ""}};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        gt_evidence *e = &item.evidence[item.n_evidence++];
        snprintf(e->key, sizeof e->key, "%s", ev[i].key);
        snprintf(e->unit, sizeof e->unit, "%s", ev[i].unit);
        e->value = ev[i].value;
    }
    gt_advice_list list = {.items = &item, .n = 1};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gt_advice_print(&list, f, 0, "");
    fclose(f);
    expect_in(text, "sync_calls_total=14640,");
    expect_in(text, "step_ms=12345.7ms");
    expect_in(text, "share=0.35%");
    expect_in(text, "tiny_ms=0.000012ms");
    expect_in(text, "mean_us=6.17us");
    expect_in(text, "big=123456789012");
    if (strstr(text, "e+") || strstr(text, "e-0")) {
        fprintf(stderr, "FAIL: scientific notation in:\n%s\n", text);
        failures++;
    }
    free(text);
    printf("test_evidence: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
