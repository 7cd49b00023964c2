/* test_advice_data.c — advice on real traces recorded on the GPU (tests/data/NAME.gtrace), checked
 * against tests/data/expect_advice.txt. One line per trace:
 *     sync_every_step.gtrace: sync-stall
 *     pageable.gtrace: pinned-memory !sync-stall
 *     healthy.gtrace: none
 *     train_item_every_step.gtrace: sync-stall@train.py:114
 * A rule id must fire, "!id" must not, "id@TEXT" must fire with TEXT in its call site,
 * "id[SEVERITY]" must fire with that severity ("id[minor]": folded, under 1%), "none" means no
 * advice at all (not even info). Lines starting with '#' are comments. Adding a trace and a line
 * is all a new case needs.
 * Usage: test_advice_data DATA_DIR (a missing expectations file or no case is a failure). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gt_check.h"
#include "advice.h"

/* Checks one line's expectations (failures counted by CHECK); returns 1 when one failed. */
static int check_line(const char *data_dir, char *line)
{
    char *colon = strchr(line, ':');
    if (!colon)
        return 0;
    *colon = 0;
    char path[4096];
    snprintf(path, sizeof path, "%.2000s/%.2000s", data_dir, line);
    const char *paths[] = {path};
    gt_advice_list l = {0};
    int readable = gt_advice_compute(paths, 1, &l) == 0;
    CHECK(readable, "%s: not readable", line);
    if (!readable)
        return 1;
    int before = failures;
    for (char *tok = strtok(colon + 1, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        int negate = tok[0] == '!';
        char id[64];
        snprintf(id, sizeof id, "%s", tok + negate);
        char *at = strchr(id, '@'); /* id@TEXT: TEXT must be in the item's call site */
        if (at)
            *at++ = 0;
        char *sev = strchr(id, '['); /* id[warning]: that severity; id[minor]: folded */
        if (sev) {
            *sev++ = 0;
            sev[strcspn(sev, "]")] = 0;
        }
        int found = 0;
        for (size_t i = 0; i < l.n; i++)
            found |= !strcmp(l.items[i].id, id) && (!at || strstr(l.items[i].call_site, at)) &&
                     (!sev || (!strcmp(sev, "minor")
                                   ? l.items[i].minor
                                   : !strcmp(sev, gt_severity_name(l.items[i].severity))));
        CHECK(!strcmp(id, "none") ? l.n == 0
              : negate            ? !found
                                  : found,
              "%s: expected %s", line, tok);
    }
    int bad = failures > before;
    if (bad) {
        fprintf(stderr, "  advice:");
        for (size_t i = 0; i < l.n; i++)
            fprintf(stderr, " %s(%s%s, %.1f%%)%s%s", l.items[i].id,
                    gt_severity_name(l.items[i].severity), l.items[i].minor ? ", minor" : "",
                    l.items[i].share_pct, l.items[i].call_site[0] ? "@" : "", l.items[i].call_site);
        fputc('\n', stderr);
    } else {
        printf("ok %s\n", line);
    }
    gt_advice_list_free(&l);
    return bad;
}

int main(int argc, char **argv)
{
    setenv("GPUTRACE_PEAKS", "off", 1); /* this machine's peaks must not change a figure */
    const char *data_dir = argc > 1 ? argv[1] : "tests/data";
    char path[1024];
    snprintf(path, sizeof path, "%s/expect_advice.txt", data_dir);
    FILE *f = fopen(path, "r");
    CHECK(f, "no %s (the expectations for the committed GPU traces)", path);
    if (!f)
        return 1;
    char line[2048];
    int cases = 0, bad_cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strchr(line, ':'))
            continue;
        cases++;
        bad_cases += check_line(data_dir, line);
    }
    fclose(f);
    CHECK(cases > 0, "no case in %s", path); /* no case checked is a failure */
    printf("%d case(s), %d failing\n", cases, bad_cases);
    return failures ? 1 : 0;
}
