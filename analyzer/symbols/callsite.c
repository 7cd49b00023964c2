/* callsite.c — the call site of a stack and the library frames under it (see callsite.h). Kept
 * apart from symbolize.c: symbolizing says what a frame is, this file says which ones matter. */
#include "callsite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codekind.h"

/* ---------------------------------------------------------------- the chain */

typedef struct text_out {
    char *buf;
    size_t cap, len;
} text_out;

static void put(text_out *t, const char *s)
{
    size_t n = strlen(s);
    if (t->cap == 0)
        return;
    size_t room = t->cap - 1 - t->len;
    if (n > room)
        n = room;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static bool bare(const gt_frame *f)
{
    return !f->python && !f->function && f->module;
}

static bool shown_under(const gt_frame *f)
{
    gt_code_kind k = gt_frame_kind(f);
    return k != GT_CODE_GPUTRACE && k != GT_CODE_RUNTIME && k != GT_CODE_UNKNOWN;
}

size_t gt_callsite_chain(gt_symtab *st, uint32_t stack_id, int max_under, const char *indent,
                         char *buf, size_t cap)
{
    enum { FETCH = 512 };
    text_out t = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    gt_frame *fr = malloc(FETCH * sizeof *fr);
    int n = fr ? gt_symbolize_stack(st, stack_id, fr, FETCH) : 0;
    bool user;
    int site = gt_callsite_pick(fr, n, &user);
    if (site < 0) {
        free(fr);
        return 0;
    }
    char line[1024];
    gt_frame_format(&fr[site], line, sizeof line);
    put(&t, line);
    int lines = 0;
    for (int i = site - 1; i >= 0; i--) { /* outermost first: from the site toward the call */
        if (!shown_under(&fr[i]))
            continue;
        if (lines == max_under) {
            put(&t, "\n");
            put(&t, indent);
            put(&t, "...");
            break;
        }
        int run = 0; /* further nameless frames of the same module, shown on this line */
        while (bare(&fr[i]) && i - run - 1 >= 0 && bare(&fr[i - run - 1]) &&
               strcmp(fr[i - run - 1].module, fr[i].module) == 0)
            run++;
        size_t len = gt_frame_format(&fr[i], line, sizeof line - 32);
        if (len >= sizeof line - 32)
            len = sizeof line - 33;
        if (run)
            snprintf(line + len, sizeof line - len, " +%d more", run);
        put(&t, "\n");
        put(&t, indent);
        put(&t, line);
        lines++;
        i -= run;
    }
    free(fr);
    return t.len;
}
