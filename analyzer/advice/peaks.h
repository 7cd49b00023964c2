/* peaks.h — this machine's own copy and GEMM peaks (measured by `gputrace doctor --save`) next to
 * what a recorded run reached, so the report can say "pageable H2D 6.8 GB/s; this machine: pinned
 * 54 GB/s, pageable 6.9 GB/s" instead of comparing a run only with itself.
 *
 * The peaks file of a trace: GPUTRACE_PEAKS when it names a file; otherwise the newest
 * peaks-*.json in GPUTRACE_PEAKS (a folder) or ~/.cache/gputrace (XDG_CACHE_HOME/gputrace) whose
 * host and GPU name are the trace's. GPUTRACE_PEAKS=off turns the comparison off. */
#ifndef GT_PEAKS_H
#define GT_PEAKS_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

enum gt_peak_copy { /* the keys of the file's copies_gbps, in this order */
                    GT_PEAK_H2D_PAGEABLE,
                    GT_PEAK_H2D_PINNED,
                    GT_PEAK_H2D_REGISTERED,
                    GT_PEAK_D2H_PAGEABLE,
                    GT_PEAK_D2H_PINNED,
                    GT_PEAK_D2H_REGISTERED,
                    GT_PEAK_D2D,
                    GT_PEAK_N_COPIES
};
enum gt_peak_gemm { GT_PEAK_FP32, GT_PEAK_TF32, GT_PEAK_BF16, GT_PEAK_N_GEMMS };

typedef struct gt_peaks {
    char path[1024];
    char host[128], gpu_name[96], measured_at[32];
    double copies_gbps[GT_PEAK_N_COPIES]; /* 0: not measured */
    double gemm_tflops[GT_PEAK_N_GEMMS];
    int same_machine; /* host and GPU name are the trace's */
} gt_peaks;

/* Reads one peaks file. Returns 0, or -1 (not a peaks file; errors are not printed). */
int gt_peaks_read(const char *path, gt_peaks *out);
/* The peaks for a process's trace. Returns 0 when found. */
int gt_peaks_for_proc(const gt_proc *p, gt_peaks *out);

/* Report hooks: lines under the copy table and the GEMM table (nothing without a peaks file). */
void gt_peaks_print_copies(const gt_proc *p, FILE *out);
void gt_peaks_print_gemms(const gt_proc *p, FILE *out);
/* The report JSON's "machine_peaks" (null without a peaks file). */
json_t *gt_peaks_json(const gt_proc *p);
/* For the pinned-memory advice: how long these pageable bytes would take at this machine's
 * pinned peaks, in ms, with a sentence saying so in note; -1 without a peaks file. */
double gt_peaks_pinned_ms(const gt_proc *p, uint64_t h2d_bytes, uint64_t d2h_bytes, char *note,
                          size_t note_len);

#endif
