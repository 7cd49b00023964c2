/* convert_stacks.c — Call sites: the symbolized stack of a call as its "call_site" and "stack"
 * arguments (the table borrowed from the model, or read from the file once). */
#include "convert_internal.h"

/* The file's stack table and module maps, read in one pass of their own when the first record
 * with a stack shows up: symbolizing resolves every stack kept so far at once (each module read
 * once), so feeding stacks as they stream by would redo that for each new stack. Files without
 * stacks never get here. */
static int cv_syms_ready(cv_file *f)
{
    if (f->syms_state)
        return f->syms_state > 0;
    f->syms_state = -1;
    if (f->ctx_opts->symtab) { /* read already by whoever reads along: no third read */
        f->syms = f->ctx_opts->symtab(f->ctx_opts->record_ctx, f->index, f->src.path);
        if (f->syms) {
            f->syms_borrowed = 1;
            f->syms_state = 1;
            return 1;
        }
    }
    gt_reader *r = NULL;
    char err[512];
    int rc = f->src.path ? gt_reader_open(f->src.path, &r, err, sizeof err)
                         : gt_reader_open_mem(f->src.mem, f->src.len, &r, err, sizeof err);
    if (rc != GT_OPEN_OK)
        return 0;
    gt_symtab *st = gt_symtab_new();
    if (gt_symtab_load(st, r) > 0) {
        f->syms = st;
        f->syms_state = 1;
    } else {
        gt_symtab_free(st);
    }
    gt_reader_close(r);
    return f->syms_state > 0;
}

/* A native frame known only by its module and offset. */
static int cv_frame_bare(const gt_frame *fr)
{
    return !fr->python && !fr->function && fr->module;
}

/* Innermost first, one frame per line, at most STACK_FRAMES lines and STACK_TEXT_MAX bytes;
 * "..." ends a stack that goes on (or was cut when recorded). A run of bare frames of one
 * module (a library without symbols here: libtorch recorded on another machine) takes one
 * line, so the Python frames above it still fit. NULL when the stack has no frames. */
static char *cv_stack_format(gt_symtab *st, uint32_t id)
{
    enum { FETCH = 256 };
    gt_frame *fr = malloc(FETCH * sizeof *fr);
    char *text = malloc(STACK_TEXT_MAX);
    int n = fr && text ? gt_symbolize_stack(st, id, fr, FETCH) : 0;
    if (n <= 0) {
        free(fr);
        free(text);
        return NULL;
    }
    size_t used = 0;
    int lines = 0, i = 0;
    char line[600];
    while (i < n && lines < STACK_FRAMES) {
        size_t len = gt_frame_format(&fr[i], line, 512);
        int run = 1;
        while (cv_frame_bare(&fr[i]) && i + run < n && cv_frame_bare(&fr[i + run]) &&
               strcmp(fr[i + run].module, fr[i].module) == 0)
            run++;
        if (len >= 512)
            len = 511;
        if (run > 1)
            len += (size_t)snprintf(line + len, sizeof line - len, " +%d more", run - 1);
        if (used + len + 1 + 4 >= STACK_TEXT_MAX) /* room for "\n..." and the NUL */
            break;
        if (used)
            text[used++] = '\n';
        memcpy(text + used, line, len);
        used += len;
        lines++;
        i += run;
    }
    if (i < n || gt_symtab_stack_truncated(st, id)) {
        memcpy(text + used, used ? "\n..." : "...", used ? 4 : 3);
        used += used ? 4 : 3;
    }
    text[used] = '\0';
    free(fr);
    return text;
}

/* The cached texts of stack id; NULL when the table is full or memory ran out. */
static cv_stack_text *cv_stack_text_of(cv_file *f, uint32_t id)
{
    if (f->stack_text_used * 2 >= f->stack_text_cap) {
        if (f->stack_text_cap >= STACK_TEXT_SLOTS)
            goto lookup; /* full: known stacks still hit, new ones go without */
        uint32_t ncap = f->stack_text_cap ? f->stack_text_cap * 2 : 256;
        cv_stack_text *n = calloc(ncap, sizeof *n);
        if (!n)
            goto lookup;
        for (uint32_t i = 0; i < f->stack_text_cap; i++) {
            cv_stack_text *o = &f->stack_texts[i];
            if (!o->id)
                continue;
            uint32_t j = (uint32_t)gt_mix64(o->id) & (ncap - 1);
            while (n[j].id)
                j = (j + 1) & (ncap - 1);
            n[j] = *o;
        }
        free(f->stack_texts);
        f->stack_texts = n;
        f->stack_text_cap = ncap;
    }
lookup:
    if (!f->stack_text_cap)
        return NULL;
    uint32_t i = (uint32_t)gt_mix64(id) & (f->stack_text_cap - 1);
    for (uint32_t probes = 0; probes < f->stack_text_cap; probes++) {
        cv_stack_text *e = &f->stack_texts[i];
        if (e->id == id)
            return e;
        if (!e->id) {
            if (f->stack_text_used * 2 >= f->stack_text_cap)
                return NULL;
            e->id = id;
            e->site = gt_symtab_callsite(f->syms, id);
            e->text = cv_stack_format(f->syms, id);
            f->stack_text_used++;
            return e;
        }
        i = (i + 1) & (f->stack_text_cap - 1);
    }
    return NULL;
}

/* "call_site" and "stack" arguments of a slice whose record points at a stack. A stack the
 * table does not hold (a damaged file) leaves the slice without them. */
void cv_stack_args(cv_file *f, uint32_t stack_id, cv_args *x)
{
    if (!cv_syms_ready(f))
        return;
    cv_stack_text *t = cv_stack_text_of(f, stack_id);
    if (!t)
        return;
    if (t->site)
        cv_arg_s(x, AN_CALL_SITE, t->site);
    if (t->text)
        cv_arg_s(x, AN_STACK, t->text);
}

void cv_stack_texts_free(cv_file *f)
{
    for (uint32_t i = 0; i < f->stack_text_cap; i++)
        free(f->stack_texts[i].text);
    free(f->stack_texts);
    if (!f->syms_borrowed)
        gt_symtab_free(f->syms);
}
