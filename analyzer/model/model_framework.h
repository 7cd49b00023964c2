/* model_framework.h — the framework builder (model_framework.c): which frameworks a process
 * runs, from the modules it loaded, its stacks' Python files and its kernels' names. A leaf: the
 * loader, the calls and the kernels builders hand it what they read. */
#ifndef GT_MODEL_FRAMEWORK_H
#define GT_MODEL_FRAMEWORK_H

#include "model_core.h"

void md_framework_on_module(gt_proc *p, const char *path);
void md_framework_on_python_file(gt_proc *p, const char *file);
void md_framework_on_kernel_name(gt_proc *p, const char *name);
void md_framework_on_nvtx_library(gt_proc *p, const char *lib); /* gt_step_library's name */
void md_framework_finish(gt_proc *p); /* after pass 1: kernels, NVTX, the interpreter */

#endif
