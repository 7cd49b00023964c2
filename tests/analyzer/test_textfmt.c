/* test_textfmt — the text outputs' shaping helpers (analyzer/common/textfmt.h): a duration in the
 * unit that suits it, counts as integers, no "-0", names shortened between tokens (the kernel
 * names of real H200 traces), prose wrapped to a width without a cut word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textfmt.h"
#include "../gt_check.h"

#define EQ(got, want) CHECK(!strcmp((got), (want)), "got '%s', want '%s'", (got), (want))

static void test_durations(void)
{
    EQ(gt_dur(0), "0.0 \xc2\xb5s");
    EQ(gt_dur(-0.00001), "0.0 \xc2\xb5s"); /* never "-0" */
    EQ(gt_dur(0.0025), "2.5 \xc2\xb5s");
    EQ(gt_dur(0.85), "850 \xc2\xb5s");
    EQ(gt_dur(0.9996), "1.00 ms"); /* rounds up into the next unit, not "1000 µs" */
    EQ(gt_dur(4.333), "4.33 ms");
    EQ(gt_dur(44.33), "44.3 ms");
    EQ(gt_dur(813.04), "813 ms");
    EQ(gt_dur(1827.4), "1827 ms");
    EQ(gt_dur(12500), "12.5 s");
    EQ(gt_dur(125000), "125 s");
    EQ(gt_dur(-3.5), "-3.50 ms");
    EQ(gt_dur_ns(2500), "2.5 \xc2\xb5s");
    EQ(gt_count(2727.0), "2727");
    EQ(gt_count(2.6), "3");
    EQ(gt_count(-0.2), "0");
    EQ(gt_counted(1, "step", "steps"), "1 step");
    EQ(gt_counted(3.0, "blocking call", "blocking calls"), "3 blocking calls");
    EQ(gt_signed(8.04, 1, " pts"), "+8.0 pts");
    EQ(gt_signed(-0.02, 1, "%"), "0.0%"); /* diff printed "-0.0%" */
    EQ(gt_signed(-3.46, 1, "%"), "-3.5%");
    EQ(gt_pct(45.2), "45%");
    EQ(gt_pct(3.46), "3.5%");
    EQ(gt_pct(0.01), "<0.1%");
    EQ(gt_pct(0), "0%");
    EQ(gt_pct(-0.01), "-<0.1%");
}

/* Names as CUPTI and libiberty give them on the H200 (tests/data/resnet50_train.gtrace and the
 * corpus), each shortened to a width: what is kept must be whole tokens. */
static void test_names(void)
{
    const char *bn = "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, "
                     "float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, "
                     "float const*, cudnnTensorStruct, float*, float const*, float*, float*, "
                     "float const*, float const*, float)";
    EQ(gt_short_name(bn, 80, GT_NAME_KERNEL),
       "cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>");
    /* All arguments plain: the values tell the variants apart (128 vs 512), the types do not. */
    EQ(gt_short_name(bn, 44, GT_NAME_KERNEL), "cudnn::bn_bw_1C11_kernel_new<\xe2\x80\xa6"
                                              "128, true, 1>");
    const char *clamp = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
                        "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, "
                        "c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
                        "const::{lambda()#8}::operator()() const::{lambda(float)#1}, "
                        "std::array<char*, 2ul> >(int, float, std::array<char*, 2ul>)";
    EQ(gt_short_name(clamp, 70, GT_NAME_KERNEL),
       "at::native::vectorized_elementwise_kernel<\xe2\x80\xa6"
       "launch_clamp_scalar(\xe2\x80\xa6)\xe2\x80\xa6>");
    const char *add =
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
    EQ(gt_short_name(add, 90, GT_NAME_KERNEL),
       "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >");
    EQ(gt_short_name(add, 76, GT_NAME_KERNEL),
       "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<\xe2\x80\xa6>, "
       "array<\xe2\x80\xa6> >");
    EQ(gt_short_name(add, 64, GT_NAME_KERNEL),
       "at::native::vectorized_elementwise_kernel<\xe2\x80\xa6"
       "CUDAFunctor_add<\xe2\x80\xa6>\xe2\x80\xa6>");
    const char *pool = "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, "
                       "float, int>(float const*, long const*, int, long)";
    EQ(gt_short_name(pool, 60, GT_NAME_KERNEL),
       "at::native::max_pool_backward_nchw<float, float, int>");
    /* One long identifier: its middle gives way between tokens, never inside one. */
    const char *gemm = "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_"
                       "tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
                       "cudnn";
    const char *g = gt_short_name(gemm, 60, GT_NAME_KERNEL);
    CHECK(gt_text_cols(g) <= 60, "'%s' is wider than 60", g);
    CHECK(!strncmp(g, "sm90_xmma_wgrad_indexed_implicit_\xe2\x80\xa6", 36), "head: %s", g);
    CHECK(strstr(g, "_5x_cudnn") && strstr(g, "\xe2\x80\xa6_"), "tail from a boundary: %s", g);
    const char *cut =
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>(cutlass_80_"
        "tensorop_s1688gemm_128x128_32x3_tn_align4::Params)";
    EQ(gt_short_name(cut, 80, GT_NAME_KERNEL),
       "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>");
    g = gt_short_name(cut, 50, GT_NAME_KERNEL);
    /* The name proper stays whole; its argument gives way from the end, between tokens. */
    EQ(g, "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_\xe2\x80\xa6>");
    /* A frame: the parameter list reads "(…)" only when the name does not fit. */
    const char *frame = "stream_executor::gpu::CudaStream::Memcpy(void*, "
                        "stream_executor::DeviceAddressBase const&, unsigned long)";
    EQ(gt_short_name(frame, 200, 0), frame);
    EQ(gt_short_name(frame, 60, 0), "stream_executor::gpu::CudaStream::Memcpy(\xe2\x80\xa6)");
    /* Operators are names, not brackets. */
    EQ(gt_short_name("std::function<void ()>::operator()() const", 50, 0),
       "std::function<void ()>::operator()() const");
    g = gt_short_name("std::function<void ()>::operator()(int) const", 44, 0);
    EQ(g, "std::function<void ()>::operator()(\xe2\x80\xa6) const");
    EQ(gt_short_name("foo::operator<<(std::ostream&, foo const&)", 30, 0),
       "foo::operator<<(\xe2\x80\xa6)");
    EQ(gt_short_name("short", 60, GT_NAME_KERNEL), "short");
    EQ(gt_short_name("", 10, 0), "");
    /* Unbalanced brackets (a name cut by the recorder) neither crash nor read past the end. */
    g = gt_short_name("void f<a, b<c, d(e", 8, GT_NAME_KERNEL);
    CHECK(gt_text_cols(g) <= 8, "%s", g);
}

static void test_wrap(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/wrap.txt", dir);
    FILE *f = fopen(path, "w+");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    const char *text = "The CPU waits for the GPU 6.92 ms per step in 3 blocking calls per step, "
                       "mostly in cudaStreamSynchronize at dataloader_bound.py:113 in main, "
                       "void_at_native_vectorized_elementwise_kernel_CUDAFunctor_add_float_std_"
                       "array_char_3ul_int.";
    int lines = gt_wrap(f, "  - ", "    ", text, 40);
    rewind(f);
    char line[256];
    int n = 0, words = 0;
    while (fgets(line, sizeof line, f)) {
        n++;
        line[strcspn(line, "\n")] = 0;
        CHECK(gt_text_cols(line) <= 40, "line %d is %zu wide: '%s'", n, gt_text_cols(line), line);
        CHECK(!strncmp(line, n == 1 ? "  - " : "    ", 4), "indent of line %d: '%s'", n, line);
        for (char *w = strtok(line, " "); w; w = strtok(NULL, " "))
            words++;
    }
    CHECK(n == lines && n >= 5, "%d lines printed, %d returned", n, lines);
    CHECK(words == 25, "%d words: every word of the text (and the '-') printed whole or shortened",
          words);
    fclose(f);
}

/* Composed report text fitted to 60 columns: a label's continuation lines start under its text,
 * a short line keeps its own spacing, colour escapes take no column. */
static void test_fit(void)
{
    const char *text =
        "  steady step  44.3 ms (median of 19 steps after 1 warm-up, from NVTX range 'step'); "
        "GPU busy 80%\n"
        "  file      a.gtrace\n"
        "  1. \033[33msync-stall\033[0m: the CPU waits for the GPU, saves 6.92 ms per step (7.2%) "
        "at dataloader_bound.py:113 in main\n";
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int lines = gt_fit_text(m, text, strlen(text), 60);
    fclose(m);
    CHECK(lines == 5, "%d lines:\n%s", lines, buf);
    CHECK(strstr(buf, "  file      a.gtrace\n") != NULL, "spacing kept:\n%s", buf);
    CHECK(strstr(buf, "\n               steps after") || strstr(buf, "\n               "),
          "continuation under the label's text:\n%s", buf);
    CHECK(strstr(buf, "\n     ") != NULL, "list item continues after its marker:\n%s", buf);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        size_t cols = gt_text_cols(line) - (strchr(line, '\033') ? 9 : 0); /* two escapes */
        CHECK(cols <= 60, "%zu columns: '%s'", cols, line);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    setenv("COLUMNS", "123", 1);
    CHECK(gt_text_width(stdout) == 123, "COLUMNS");
    setenv("COLUMNS", "12", 1);
    CHECK(gt_text_width(stdout) == 40, "never below 40");
    unsetenv("COLUMNS");
    FILE *f = tmpfile();
    CHECK(f && gt_text_width(f) == GT_TEXT_WIDTH_DEFAULT, "100 when not a terminal");
    if (f)
        fclose(f);
    test_durations();
    test_names();
    test_wrap(argc > 1 ? argv[1] : ".");
    test_fit();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("textfmt: all checks passed\n");
    return failures != 0;
}
