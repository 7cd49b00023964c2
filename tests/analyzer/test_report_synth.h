/* test_report_synth.h — synthetic training-loop traces for the report/advice/diff tests.
 * One scenario describes a loop (steps × kernels) plus the pathologies to put in it; the writer
 * simulates CPU calls and a single GPU queue and writes what gputrace would have recorded. */
#ifndef TEST_REPORT_SYNTH_H
#define TEST_REPORT_SYNTH_H

#include <stdint.h>

typedef struct scenario {
    int steps;
    int kernels_per_step;
    uint64_t kernel_ns;          /* GPU time of each plain kernel */
    uint64_t launch_ns;          /* CPU time of each launch call */
    uint64_t cpu_between_ns;     /* CPU work between launches (Python overhead) */
    uint64_t data_load_ns;       /* CPU work without CUDA calls at the start of each step */
    int sync_every_step;         /* cudaStreamSynchronize at the end of each step (call site 7) */
    int item_every_step;         /* a synchronous 4-byte D2H copy at the end of each step */
    uint64_t pageable_h2d_bytes; /* one pageable cudaMemcpyAsync H2D per step */
    uint64_t pinned_h2d_bytes;   /* one pinned async H2D per step */
    uint64_t blocking_h2d_bytes; /* one synchronous cudaMemcpy H2D from pinned memory per step */
    int allocs_per_step;         /* cudaMalloc+cudaFree pairs per step */
    int cudnn;            /* 0 none, 1 heuristic, 2 autotuned (step 0), 3 autotuned, new shapes */
    int cudnn_ops;        /* convolution signatures per step */
    int64_t cudnn_engine; /* engine global index of the chosen plan */
    int cudnn_tensor_cores;
    int cudnn_dtype;             /* cudnnDataType_t: 0 float, 2 half */
    uint64_t conv_kernel_ns;     /* GPU time of each convolution */
    int conv_batch;              /* N of the convolutions' input, 0 = 32 */
    uint64_t autotune_ns;        /* CPU time of each autotune trial execute */
    uint64_t trial_kernel_ns[3]; /* GPU time of candidate c's trials (engine 10 + c; the first
                                    is the heuristics' pick), 0 = conv_kernel_ns */
    int inferred_conv;           /* conv kernels named like cuDNN's but no cuDNN call */
    int nvtx;                    /* NVTX push/pop "train_step" around each step */
    int rank, world_size;
    int pid;
    int cc_major, cc_minor;
    int cudnn_cudart_version; /* 0 = same as runtime */
    int kernel_image_error;   /* a launch fails with cudaErrorNoKernelImageForDevice */
    uint64_t lost_records;
    uint32_t lost_reason;   /* gt_lost_reason of lost_records, 0 = buffer full */
    int nccl_per_step;      /* NCCL all-reduce kernels per step, after the step's kernels */
    uint64_t nccl_ns;       /* their transfer time once every rank has arrived */
    int dataloader_workers; /* forked children of the process, as DataLoader workers leave */
    int gloo_per_step;      /* CPU all-reduces per step through a "pt_gloo_runloop" thread: it waits
                               for the gradients (stream sync), the main thread waits for it (no call),
                               it copies the result back (H2D) */
    uint64_t gloo_ns;       /* their transfer time once every rank has arrived */
    /* JIT compilation before step jit_step's launches (issue 21 item 1): jit_ns of CPU time with
     * the GPU idle; with jit_child the time is a ptxas child's (a line "<pid> <ppid> <start>
     * <end> <exe>" appended to procs_path, as the recorder writes), else the front end runs in
     * the process without a call and a cuModuleLoadData call takes its last 40%. */
    uint64_t jit_ns;
    int jit_step, jit_child;
    int jit_step2; /* > 0: the same compilation again before this step's launches (a recompile) */
    /* An autotuner's own NVTX range (XLA's "gemm-algorithm-picker" pass) of tuner_ns CPU time
     * before step tuner_step's launches, the GPU idle meanwhile. */
    uint64_t tuner_ns;
    int tuner_step;
    const char *procs_path;
    /* CPU work without CUDA calls before each autotuning trial but the first (cudnn >= 2), as
     * when cuDNN builds the next candidate */
    uint64_t autotune_pause_ns;
    /* GPUTRACE_SAMPLE: GPU records (kernels, copies) only sample_on_ns of every sample_on_ns +
     * sample_off_ns from the first call, each switch a CAPTURE record of source 4, the header
     * flag GT_HDR_GPU_SAMPLED; calls are recorded all along. sample_no_window: the flag and no
     * window at all (CUPTI never switched on). */
    uint64_t sample_on_ns, sample_off_ns;
    int sample_no_window;
    /* Unified memory (issue 30): um_buffers managed buffers of um_bytes each, allocated before
     * the loop (call site train.py:33), on the host. The first kernel that finds them there
     * faults them over: a GPU fault of um_fault_ns of service, then one on-demand HtoD migration
     * per buffer at 10 GB/s, while the kernel stalls (it lasts that much longer); only in the
     * first um_fault_steps steps when that is not 0. um_cpu_touch: the CPU reads them at the end
     * of each step (a CPU fault, a DtoH migration), so the next step faults them over again.
     * um_prefetch: a cudaMemPrefetchAsync per buffer at the start of each step where they are on
     * the host (migrations the program asked for, no fault). um_refused: CUPTI refused the
     * counters (header flag, no counter record); um_off: the counters were off (neither flag). */
    int um_buffers;
    uint64_t um_bytes, um_fault_ns;
    int um_fault_steps, um_prefetch, um_cpu_touch, um_refused, um_off;
    /* A library the process loaded (a GT_REC_MODULE record), which tells its framework:
     * ".../site-packages/torch/lib/libtorch_cuda.so" (the healthy default), ".../jaxlib/_jax.so",
     * NULL for none; exe: the program ("/usr/bin/python3" by default). */
    const char *module;
    const char *exe;
    /* A second stream that copies device-to-host in parallel with the kernels, each step
     * synchronized once (multi-stream copies that keep the GPU busy while the CPU waits). */
    uint64_t side_copy_bytes;
    /* The first execution of each convolution flagged as a trial though no other plan is tried
     * (an event recorded before it, as PyTorch's DDP does): first use, not autotuning. */
    int first_exec_flagged;
    /* launch-bound (issue 30): the launch entry point (0: __cudaLaunchKernel; GT_FN_cuLaunchKernel
     * or GT_FN_cuLaunchKernelEx: the driver API CuPy and Triton use); launch_unrecorded: no wrapper
     * sees the launches (CUPTI's kernels only; the process's other calls are recorded); modules:
     * paths of loaded modules (GT_REC_MODULE), which say the framework */
    uint32_t launch_func;
    int launch_unrecorded;
    uint64_t startup_ns; /* a cudaMalloc, then this much CPU time before the first step */
    const char *modules[4];
    /* compilation (issue 30): before step compile_step's work a framework's compiler runs for
     * compile_ns: a silent front end (Dynamo tracing, half of it), then every 10 ms a copy and a
     * sync made from an Inductor frame (stacks unless compile_no_stacks) with a little GPU work,
     * and a cuModuleLoadData at the end; compile_workers traces of Inductor's pool beside the
     * process (PATH.cworkerN.gtrace, their command line naming it as parent); every
     * recompile_every steps after that, a recompile of compile_ns / 4 (0: never) */
    uint64_t compile_ns;
    int compile_step, compile_workers, recompile_every, compile_no_stacks;
    const char *compile_file, *compile_func; /* the frame over those calls (NULL: Inductor's
                                                pad_mm.py should_pad) */
    /* x.cpu() (issue 30): a pageable device-to-host copy of d2h_bytes at the end of each step, the
     * call waiting for it: CUPTI records it in d2h_chunks pieces (>= 1) that cover d2h_gpu_share
     * of the call, the CPU staging the data between them and after the last (the GPU idle);
     * d2h_unrecorded: no wrapper sees the call */
    uint64_t d2h_bytes;
    int d2h_chunks;
    double d2h_gpu_share;
    int d2h_unrecorded;
    /* DDP over gloo (scenario_write_ddp): buckets per step, all-reduced by the gloo thread as the
     * backward fills them (one after the other, gloo_ns each once every rank is there; the
     * backward on an autograd thread that hands each bucket over on a stream of gloo's pool), the
     * forward taking a third of kernels_per_step; this rank's extra time without CUDA calls
     * (delay_ns) and where: DELAY_FORWARD before the forward, DELAY_BACKWARD after the first
     * bucket's gradients (a hook), DELAY_DATA before the batch's copy (data loading) */
    int buckets;
    uint64_t delay_ns;
    int delay_where;
    /* > 0: DDP broadcasts its buffers (batch norm's) from rank 0 at each forward, after the delay
     * before it, down gloo's tree (broadcast_ns a level); the receivers' gloo threads make no
     * blocking call */
    uint64_t broadcast_ns;
} scenario;
enum { DELAY_FORWARD = 0, DELAY_BACKWARD = 1, DELAY_DATA = 2 };

/* A healthy loop: 10 steps, 20 kernels of 500 us, launches of 5 us, pinned async copies. */
scenario scenario_healthy(void);
/* Write the trace; returns 0 on success. */
int scenario_write(const char *path, const scenario *sc);
/* Write the ranks of one job (one scenario each, n <= 8) simulated together: their NCCL kernels
 * end when the last rank's has started plus nccl_ns, so a rank with more CPU work per step
 * (data_load_ns) makes the others' NCCL kernels wait. Returns 0 on success. Either writer puts a
 * scenario's DataLoader workers beside its trace (PATH.workerN.gtrace). */
int scenario_write_ranks(const char *const *paths, const scenario *scs, int n);
/* The ranks of a DDP job over gloo (buckets, delay_ns/delay_where above), simulated together:
 * each bucket's all-reduce ends gloo_ns after the last rank's gloo thread hands it over. 0 on
 * success. */
int scenario_write_ddp(const char *const *paths, const scenario *scs, int n);

#endif
