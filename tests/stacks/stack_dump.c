/* stack_dump — prints the call-site stacks of a trace, symbolized, in a line format the tests read:
 *   stack <id> truncated <0|1> frames <n> callsite <text|->
 *   frame <id> <i> py <file> <function> <line>
 *   frame <id> <i> native <module basename|-> <function|-> <file|-> <line>
 *   api <function name> stack <id>          (one line per API record, in file order)
 *   module <path>
 *   stack_records <n>                       (GT_REC_STACK records in the file)
 * Usage: stack_dump <trace file or folder holding exactly one .gtrace> */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gt_reader.h"
#include "gtrace_api.h"
#include "callsite.h"
#include "symbolize.h"

static int find_trace(const char *arg, char *out, size_t cap)
{
    struct stat sb;
    if (stat(arg, &sb) != 0) {
        fprintf(stderr, "stack_dump: %s: not found\n", arg);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(out, cap, "%s", arg);
        return 0;
    }
    DIR *d = opendir(arg);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > 7 && strcmp(e->d_name + n - 7, ".gtrace") == 0) {
            snprintf(out, cap, "%s/%s", arg, e->d_name);
            found++;
        }
    }
    if (d)
        closedir(d);
    if (found != 1) {
        fprintf(stderr, "stack_dump: %s holds %d .gtrace files, expected 1\n", arg, found);
        return -1;
    }
    return 0;
}

static const char *base(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : (p ? p : "-");
}

static void dump_stack(gt_symtab *st, uint32_t id)
{
    gt_frame frames[512];
    int n = gt_symbolize_stack(st, id, frames, 512);
    const char *site = gt_symtab_callsite(st, id);
    printf("stack %u truncated %d frames %d callsite %s\n", id, gt_symtab_stack_truncated(st, id),
           n, site ? site : "-");
    for (int i = 0; i < n; i++) {
        const gt_frame *f = &frames[i];
        if (f->python)
            printf("frame %u %d py %s %s %d\n", id, i, f->file ? f->file : "-",
                   f->function ? f->function : "-", f->line);
        else
            printf("frame %u %d native %s %s %s %d +0x%llx\n", id, i, base(f->module),
                   f->function ? f->function : "-", f->file ? base(f->file) : "-", f->line,
                   (unsigned long long)f->module_offset);
    }
    /* The call site and the library frames under it, as advice shows them: one "chain" line each.
     */
    static char chain[16384];
    gt_callsite_chain(st, id, 32, "", chain, sizeof chain);
    for (char *line = chain, *next; *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        else
            next = line + strlen(line);
        printf("chain %u %s\n", id, line);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: stack_dump <trace file or folder>\n");
        return 2;
    }
    char path[4096];
    if (find_trace(argv[1], path, sizeof path) != 0)
        return 1;
    gt_reader *r = NULL;
    char err[512];
    if (gt_reader_open(path, &r, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "stack_dump: %s\n", err);
        return 1;
    }
    gt_symtab *st = gt_symtab_new();
    gt_symtab_load(st, r);
    gt_record rec;
    uint32_t max_id = 0, stack_records = 0;
    while (gt_reader_next(r, &rec) == 1) {
        if (rec.kind >= GT_REC_API && rec.kind <= GT_REC_API_CUBLAS &&
            rec.body_size >= sizeof(gt_api_common)) {
            const gt_api_common *c = rec.body;
            const char *name = gt_api_func_name(c->func);
            printf("api %s stack %u\n", name ? name : "?", c->stack_id);
        } else if (rec.kind == GT_REC_STACK && rec.body_size >= sizeof(gt_rec_stack)) {
            const gt_rec_stack *s = rec.body;
            stack_records++;
            if (s->stack_id > max_id)
                max_id = s->stack_id;
        } else if (rec.kind == GT_REC_MODULE && rec.body_size >= sizeof(gt_rec_module)) {
            const gt_rec_module *m = rec.body;
            const char *p = gt_reader_string(r, m->path_id);
            printf("module %s build_id_len %u\n", p ? p : "?", m->build_id_len);
        }
    }
    printf("stack_records %u\n", stack_records);
    for (uint32_t id = 1; id <= max_id; id++)
        dump_stack(st, id);
    gt_symtab_free(st);
    gt_reader_close(r);
    return 0;
}
