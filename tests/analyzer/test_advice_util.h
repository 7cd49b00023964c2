/* test_advice_util.h — what the advice and model tests share: finding an advice item and its
 * evidence, and writing a scenario as a run folder (its trace, the traces and .procs lines it
 * writes beside it) and loading it. Header-only, like test_report_util.h. */
#ifndef TEST_ADVICE_UTIL_H
#define TEST_ADVICE_UTIL_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "advice.h"
#include "model.h"
#include "test_report_synth.h"

/* The first advice item of rule id (for that rank; rank < 0: any), NULL when none. */
static inline const gt_advice *advice_find(const gt_advice_list *l, const char *id, int rank)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].id, id) && (rank < 0 || l->items[i].rank == rank))
            return &l->items[i];
    return NULL;
}

/* The value of an evidence key, -1 when absent. */
static inline double advice_evidence(const gt_advice *a, const char *key)
{
    for (int i = 0; i < a->n_evidence; i++)
        if (!strcmp(a->evidence[i].key, key))
            return a->evidence[i].value;
    return -1;
}

/* sc written as the run folder WORKDIR/NAME (gputrace-testhost-PID.gtrace, the .procs lines it
 * writes), loaded into run; the folder's path in dir. 0 on success. */
static inline int run_folder_load(const char *workdir, const char *name, scenario *sc, gt_run *run,
                                  char *dir, size_t cap)
{
    char path[700], procs[700];
    snprintf(dir, cap, "%s/%s", workdir, name);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/gputrace-testhost-%d.gtrace", dir, sc->pid);
    snprintf(procs, sizeof procs, "%s/gputrace-testhost.procs", dir);
    sc->procs_path = procs;
    memset(run, 0, sizeof *run);
    if (scenario_write(path, sc) != 0)
        return -1;
    const char *paths[] = {dir};
    return gt_run_load(run, paths, 1, 0);
}

#endif
