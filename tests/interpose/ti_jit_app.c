/* ti_jit_app.c — run-time compilation (issue 21 item 1): nvrtcCompileProgram called directly (the
 * program links libnvrtc, as CuPy's module does), then looked up with dlopen + dlsym (as torch's
 * lazy NVRTC does), and one nvJitLinkComplete. For interpose_check "jit". */
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdio.h>

int main(void)
{
    const char *opts[] = {"--gpu-architecture=sm_90"};
    nvrtcProgram prog = (nvrtcProgram)(void *)opts; /* the fake never reads it */
    int r0 = nvrtcCompileProgram(prog, 1, opts);
    void *h = dlopen("libnvrtc.so.13", RTLD_NOW);
    typedef nvrtcResult (*compile_fn)(nvrtcProgram, int, const char *const *);
    compile_fn compile = h ? (compile_fn)dlsym(h, "nvrtcCompileProgram") : NULL;
    const char *bad[] = {"--fail"};
    int r1 = compile ? (int)compile(prog, 1, bad) : -1;
    int r2 = nvJitLinkComplete((nvJitLinkHandle)(void *)opts);
    printf("compile %d %d link %d\n", r0, r1, r2);
    return r0 == NVRTC_SUCCESS && r1 == NVRTC_ERROR_COMPILATION && r2 == NVJITLINK_SUCCESS ? 0 : 1;
}
