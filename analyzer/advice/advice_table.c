/* advice_table.c — the registration of every advice rule (advice_rule.h says what a rule is). A
 * new rule is a file analyzer/advice/rule_<name>.c ending with its gt_rule, one line here, and
 * its row in docs/advice.md. The order is the order findings are built in; what the user reads
 * is ordered by severity and share (advice_engine.c). */
#include <string.h>

#include "advice_rule.h"

extern const gt_rule gt_rule_env_cuda_major, gt_rule_env_kernel_image, gt_rule_env_driver,
    gt_rule_env_cupti, gt_rule_env_incomplete, gt_rule_sync_stall, gt_rule_pinned_memory,
    gt_rule_non_blocking_copy, gt_rule_launch_bound, gt_rule_gpu_idle, gt_rule_amp,
    gt_rule_alloc_in_loop, gt_rule_cudnn_benchmark, gt_rule_first_use, gt_rule_compilation,
    gt_rule_recompilation, gt_rule_cudnn_inferred, gt_rule_unified_memory, gt_rule_straggler;

const gt_rule *const gt_rules[] = {
    &gt_rule_env_cuda_major,
    &gt_rule_env_kernel_image,
    &gt_rule_env_driver,
    &gt_rule_env_cupti,
    &gt_rule_env_incomplete,
    &gt_rule_sync_stall,
    &gt_rule_pinned_memory,
    &gt_rule_non_blocking_copy,
    &gt_rule_launch_bound,
    &gt_rule_gpu_idle,
    &gt_rule_amp,
    &gt_rule_alloc_in_loop,
    &gt_rule_cudnn_benchmark,
    &gt_rule_first_use,
    &gt_rule_compilation,
    &gt_rule_recompilation,
    &gt_rule_cudnn_inferred,
    &gt_rule_unified_memory,
    &gt_rule_straggler,
};

const size_t gt_n_rules = sizeof gt_rules / sizeof gt_rules[0];

const char *gt_advice_what(const char *id)
{
    for (size_t i = 0; i < gt_n_rules; i++)
        if (!strcmp(gt_rules[i]->id, id))
            return gt_rules[i]->what;
    return "";
}
