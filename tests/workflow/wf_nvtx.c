/* wf_nvtx.c — NVTX v3 reachable from Python through ctypes (torch.cuda.nvtx does the same from
 * its C++ side): libwf_nvtx.so exports push/pop/mark. */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) int wf_nvtx_push(const char *name)
{
    return nvtxRangePushA(name);
}
__attribute__((visibility("default"))) int wf_nvtx_pop(void)
{
    return nvtxRangePop();
}
__attribute__((visibility("default"))) void wf_nvtx_mark(const char *name)
{
    nvtxMarkA(name);
}
