/* model_procs.c — every process of a run, CUDA or not (gt_proc_note): the trace files' headers
 * and the lines of the recorder's per-host gputrace-<host>.procs files in the run folders.
 *
 * Why. A process that never uses CUDA (ptxas, gcc, a shell) leaves no trace file, only one
 * line (docs/format.md): "<pid> <ppid> <start_ns> <end_ns> <exe>". Those lines fold into the
 * report's "N other processes without CUDA activity" line, and a compiler among them is JIT time
 * of the CUDA process it descends from (model_phases.c). Older recordings left an empty trace
 * per such process instead: its header gives the same facts, its GT_REC_END the end. The notes
 * are read before the traces' passes, so that a parent's phases know its children whatever the
 * order of the files. */
#include <dirent.h>
#include <sys/stat.h>

#include "model_procs.h"

#define NOTE_SCAN_RECORDS 4096 /* a compiler's trace without CUDA holds a handful of records */
#define NOTE_SCAN_MAX_BYTES (64 << 10)

static gt_proc_note *note_add(gt_run *run, size_t *cap)
{
    gt_grow((void **)&run->notes, cap, run->n_notes, sizeof *run->notes);
    gt_proc_note *n = &run->notes[run->n_notes++];
    memset(n, 0, sizeof *n);
    return n;
}

/* Inductor's compile workers run "torch/_inductor/compile_worker/__main__.py ... --parent=PID"
 * (the pool's process, and the workers it forks keep its command line): PID, else 0. */
static int32_t compile_parent_of(const char *cmdline)
{
    const char *arg =
        cmdline && strstr(cmdline, "compile_worker") ? strstr(cmdline, "--parent=") : NULL;
    return arg ? (int32_t)strtol(arg + strlen("--parent="), NULL, 10) : 0;
}

static void note_set_cmdline(gt_proc_note *n, const char *cmdline)
{
    free(n->cmdline);
    n->cmdline = gt_xstrdup(cmdline ? cmdline : "");
    n->compile_parent = compile_parent_of(n->cmdline);
}

/* When the recorder ended a small trace: its GT_REC_END, else (format 1.1) its last clock sync,
 * which the writer's final pass writes; 0 when it has neither or is large. */
static uint64_t trace_end(gt_reader *r)
{
    gt_record rec;
    uint64_t last_sync = 0;
    for (int i = 0; i < NOTE_SCAN_RECORDS; i++) {
        if (gt_reader_next(r, &rec) != 1)
            return last_sync;
        if (rec.kind == GT_REC_END) {
            gt_rec_end e;
            gt_body_copy(&e, sizeof e, &rec);
            return e.t_begin_ns ? e.t_begin_ns : e.t_ns;
        }
        if (rec.kind == GT_REC_CLOCK_SYNC) {
            gt_rec_clock_sync cs;
            gt_body_copy(&cs, sizeof cs, &rec);
            if (cs.realtime_ns > last_sync)
                last_sync = cs.realtime_ns;
        }
    }
    return 0;
}

/* One note per trace file, in the order of list (note i is the file of procs[i]). Only the
 * small files of a run of several are read here (a compiler's trace holds a few records): the
 * others' notes come from their header when they are loaded (md_run_note_proc), so that a large
 * trace is still read twice only (convert's promise). */
static void notes_from_traces(gt_run *run, size_t *cap, char **list, size_t cnt)
{
    for (size_t i = 0; i < cnt; i++) {
        gt_proc_note *n = note_add(run, cap);
        gt_reader *r = NULL;
        char err[256];
        struct stat sb;
        note_set_cmdline(n, "");
        if (cnt < 2 || stat(list[i], &sb) != 0 || sb.st_size > NOTE_SCAN_MAX_BYTES) {
            n->pending = 1;
            n->exe = gt_xstrdup("");
            n->host = gt_xstrdup("");
            continue;
        }
        if (gt_reader_open(list[i], &r, err, sizeof err) != GT_OPEN_OK) {
            n->exe = gt_xstrdup("");
            n->host = gt_xstrdup("");
            continue;
        }
        const gt_file_header *h = gt_reader_header(r);
        char host[sizeof h->host + 1];
        memcpy(host, h->host, sizeof h->host);
        host[sizeof h->host] = 0;
        n->pid = h->pid;
        n->ppid = h->ppid;
        n->start_ns = h->start_realtime_ns;
        n->exe = gt_xstrdup(gt_reader_exe(r));
        n->host = gt_xstrdup(host);
        note_set_cmdline(n, gt_reader_cmdline(r));
        n->compiler = gt_exe_is_compiler(n->exe);
        if (n->compiler)
            n->end_ns = trace_end(r);
        gt_reader_close(r);
    }
}

/* "<pid> <ppid> <start_ns> <end_ns> <exe>"; lines that do not parse are skipped. */
static void notes_from_file(gt_run *run, size_t *cap, const char *path, const char *host)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4200];
    while (fgets(line, sizeof line, f)) {
        long long pid, ppid;
        unsigned long long start, end;
        int used = 0;
        if (sscanf(line, "%lld %lld %llu %llu %n", &pid, &ppid, &start, &end, &used) != 4 || !used)
            continue;
        char *exe = line + used;
        exe[strcspn(exe, "\n")] = 0;
        gt_proc_note *n = note_add(run, cap);
        n->pid = (int32_t)pid;
        n->ppid = (int32_t)ppid;
        n->start_ns = start;
        n->end_ns = end;
        n->exe = gt_xstrdup(exe);
        n->host = gt_xstrdup(host);
        note_set_cmdline(n, "");
        n->quiet = 1;
        n->compiler = gt_exe_is_compiler(exe);
    }
    fclose(f);
}

/* gputrace-<host>.procs files of the folders among paths. */
static void notes_from_folders(gt_run *run, size_t *cap, const char *const *paths, int n)
{
    for (int i = 0; i < n; i++) {
        struct stat sb;
        DIR *d = stat(paths[i], &sb) == 0 && S_ISDIR(sb.st_mode) ? opendir(paths[i]) : NULL;
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len <= 15 || strncmp(e->d_name, "gputrace-", 9) ||
                strcmp(e->d_name + len - 6, ".procs"))
                continue;
            char host[256];
            snprintf(host, sizeof host, "%.*s", (int)(len - 15), e->d_name + 9);
            size_t plen = strlen(paths[i]) + len + 2;
            char *full = gt_xmalloc(plen);
            snprintf(full, plen, "%s/%s", paths[i], e->d_name);
            notes_from_file(run, cap, full, host);
            free(full);
        }
        closedir(d);
    }
}

void md_run_notes(gt_run *run, const char *const *paths, int n, char **list, size_t cnt)
{
    size_t cap = 0;
    notes_from_traces(run, &cap, list, cnt);
    notes_from_folders(run, &cap, paths, n);
}

/* The note of a trace not read beforehand, from its header once loaded. */
void md_run_note_proc(gt_run *run, size_t i, const gt_proc *p)
{
    if (i >= run->n_notes || !run->notes[i].pending)
        return;
    gt_proc_note *n = &run->notes[i];
    n->pending = 0;
    if (p->open_status != GT_OPEN_OK)
        return;
    n->pid = p->hdr.pid;
    n->ppid = p->hdr.ppid;
    n->start_ns = p->hdr.start_realtime_ns;
    free(n->exe);
    free(n->host);
    n->exe = gt_xstrdup(p->exe ? p->exe : "");
    n->host = gt_xstrdup(p->host ? p->host : "");
    note_set_cmdline(n, p->cmdline);
    n->compiler = gt_exe_is_compiler(n->exe);
}

void md_run_notes_finish(gt_run *run)
{
    for (size_t i = 0; i < run->n && i < run->n_notes; i++) {
        const gt_proc *p = &run->procs[i];
        gt_proc_note *n = &run->notes[i];
        n->quiet = p->open_status == GT_OPEN_OK && !gt_proc_has_data(p);
        if (!n->end_ns)
            n->end_ns = p->end_ns;
    }
}

void md_run_notes_free(gt_run *run)
{
    for (size_t i = 0; i < run->n_notes; i++) {
        free(run->notes[i].exe);
        free(run->notes[i].host);
        free(run->notes[i].cmdline);
    }
    free(run->notes);
    run->notes = NULL;
    run->n_notes = 0;
}
