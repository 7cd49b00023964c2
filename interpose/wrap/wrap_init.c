/* wrap_init.c — the wrappers' module (gt_core.h, GT_MODULE): what the wrap layer sets up once at
 * load, before any wrapper may run on another thread, and the table of wrapped entry points that
 * the interposed dlsym and cuGetProcAddress hand out (wrap_dlsym.c). */
#include "gt_wrap.h"

/* The GT_ENTRY definitions put one gt_wrap_entry each in this section; the linker defines its
 * bounds (NULL where no entry was linked). */
extern const gt_wrap_entry __start_gt_wrap_tab[] __attribute__((weak, visibility("hidden")));
extern const gt_wrap_entry __stop_gt_wrap_tab[] __attribute__((weak, visibility("hidden")));

const gt_wrap_entry *gt_wrap_table_begin(void)
{
    return __start_gt_wrap_tab;
}

const gt_wrap_entry *gt_wrap_table_end(void)
{
    return __stop_gt_wrap_tab;
}

/* GPUTRACE_STACKS as the hot path reads it (gt_wrap.h); the core's config is final at load. */
int gt_wrap_stacks_mode = GT_STACKS_ADVICE;

/* Resolve the C library's dlsym before anyone needs it (the interposed dlsym jumps to it). */
static void wrap_init(void)
{
    gt_core_on_fork_child(gt_wrap_runtime_fork_child);
    gt_wrap_stacks_mode = gt_core_config()->stacks_mode;
    gt_wrap_unseen_init();
    (void)gt_real_dlsym_address();
    (void)gt_real_dlvsym_address();
}

/* First: CUPTI's module may start CUPTI from its init, and its callbacks run wrapped code. */
GT_MODULE(wrap_module) = {"wrap", GT_MODULE_ORDER_WRAP, wrap_init};
