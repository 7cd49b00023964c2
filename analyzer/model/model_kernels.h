/* model_kernels.h — the kernels builder (model_kernels.c): kernel families and names, GPU copies'
 * figures, and the call each kernel links to (op_link.h decided it in pass 1). */
#ifndef GT_MODEL_KERNELS_H
#define GT_MODEL_KERNELS_H

#include "model_core.h"

int md_conv_like(const char *name);
void md_on_kernel(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k);
void md_on_gpu_memcpy(gt_proc *p, pass_state *s, const gt_rec_gpu_memcpy *m);
void md_resolve_kernel_names(gt_proc *p, pass_state *s);
/* The cuDNN call or GEMM (top bit) a kernel's GPU time belongs to, UINT32_MAX for none. */
uint32_t md_kernel_call(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k);

#endif
