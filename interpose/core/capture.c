/* capture.c — capture windows: recording runs only inside them (GPUTRACE_CAPTURE).
 *   profiler-api  between cudaProfilerStart and cudaProfilerStop, the convention of
 *                 nsys --capture-range=cudaProfilerApi (torch.cuda.profiler.start()/stop());
 *   signal        each capture signal (SIGUSR2 unless GPUTRACE_CAPTURE_SIGNAL) opens or closes one,
 *                 without touching the program: `kill -USR2 PID`;
 *   trigger-file  a window is open while the file exists (`touch F` / `rm F`).
 * Pausing is a state of g_recording (PAUSED), so the wrappers' fast path keeps its single load; the
 * capture hooks tell CUPTI to stop producing records, and what it produced before the pause is
 * still accepted and written. Each switch writes a GT_REC_CAPTURE record, and the header carries
 * GT_HDR_CAPTURE_WINDOWS, so readers know the trace covers windows, not the whole run.
 *
 * GPUTRACE_SAMPLE=ON/OFF samples the GPU side instead: the calls are recorded all along, CUPTI's
 * records ON seconds of every ON + OFF (poll_sample), each switch a GT_REC_CAPTURE record of
 * source GT_CAPTURE_SRC_SAMPLE; the analysis scales what it measures on the GPU from the windows.
 *
 * With the flight recorder (GPUTRACE_FLIGHT_RECORDER) there are no windows: recording runs all
 * along, and the signal, or the trigger file appearing, asks the writer to write what the flight
 * recorder holds instead.
 *
 * The signal handler only counts (an atomic add and a futex wake of the writer, both
 * async-signal-safe): the switch itself, which calls into CUPTI, runs on the writer thread
 * (gt_capture_poll), which also looks for the trigger file on each of its rounds. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"

#define TRIGGER_POLL_NS 10000000ull /* look for the trigger file at most every 10 ms */

static _Atomic uint32_t g_signal_toggles; /* capture signals received; odd: a window is wanted */
static uint64_t g_last_trigger_poll_ns;   /* writer thread only */
static uint32_t g_signals_seen;           /* flight recorder: signals already acted on */
static bool g_file_seen;                  /* flight recorder: the trigger file was there */

bool gt_capture_windows(void)
{
    return g_cfg.capture_mode != GT_CAPTURE_ALL && !g_cfg.flight_s;
}

static void capture_switch(bool on, uint32_t source)
{
    int from = on ? GT_RECORDING_PAUSED : GT_RECORDING_ON;
    int to = on ? GT_RECORDING_ON : GT_RECORDING_PAUSED;
    /* Stopped (0: exit, full disk) stays stopped; a repeated start or stop changes nothing. */
    if (!atomic_compare_exchange_strong(&g_recording, &from, to))
        return;
    gt_rec_capture rec = {.t_ns = gt_now_ns(), .on = on, .source = source};
    gt_record_write(GT_REC_CAPTURE, 0, &rec, sizeof rec);
    static const char *const WHY[] = {"", "cudaProfilerStart/Stop", "the capture signal",
                                      "the trigger file"};
    gt_debug("capture %s (%s)", on ? "resumed" : "paused", WHY[source <= 3 ? source : 0]);
    gt_run_hooks_capture(on); /* CUPTI stops or restarts its records */
}

void gt_core_capture_set(bool on)
{
    if (g_cfg.capture_mode == GT_CAPTURE_PROFILER_API)
        capture_switch(on, GT_CAPTURE_SRC_PROFILER_API);
}

bool gt_core_capture_paused(void)
{
    int st = atomic_load_explicit(&g_recording, memory_order_relaxed);
    return st == GT_RECORDING_PAUSED || (st == GT_RECORDING_LAZY && gt_capture_windows());
}

static void on_capture_signal(int sig)
{
    (void)sig;
    atomic_fetch_add_explicit(&g_signal_toggles, 1, memory_order_relaxed);
    gt_writer_kick();
}

/* The writer thread, each round, no lock of ours held (the switch calls into CUPTI). The wanted
 * state is compared with the current one, not counted: a forked child, which inherits the count,
 * or two signals within one round, end in the state the signals' parity asks for. */
static uint64_t g_sample_t0;  /* writer thread only: when sampling began */
static int g_sample_gpu = -1; /* writer thread only: the state last recorded (-1: none yet) */

/* GPUTRACE_SAMPLE, each writer round (so windows are as exact as GPUTRACE_FLUSH_MS): CUPTI's
 * records on or off by where the round falls in the period. The hook runs every round, not only
 * on a change: CUPTI may have started since (it ignores a switch before it is active). */
static void poll_sample(void)
{
    if (!g_cfg.sample_on_ms || atomic_load(&g_recording) != GT_RECORDING_ON)
        return;
    uint64_t now = gt_now_ns();
    if (!g_sample_t0)
        g_sample_t0 = now;
    uint64_t on_ns = (uint64_t)g_cfg.sample_on_ms * 1000000u;
    uint64_t period = on_ns + (uint64_t)g_cfg.sample_off_ms * 1000000u;
    int want = (now - g_sample_t0) % period < on_ns;
    if (want != g_sample_gpu) {
        g_sample_gpu = want;
        gt_rec_capture rec = {.t_ns = now, .on = (uint32_t)want, .source = GT_CAPTURE_SRC_SAMPLE};
        gt_record_write(GT_REC_CAPTURE, 0, &rec, sizeof rec);
        gt_debug("GPU sampling: CUPTI records %s", want ? "on" : "off");
    }
    gt_run_hooks_capture(want);
}

/* Flight recorder: each new signal, or the trigger file appearing, is a trigger. */
static void poll_flight_trigger(void)
{
    bool fire = false;
    if (g_cfg.capture_mode == GT_CAPTURE_SIGNAL) {
        uint32_t n = atomic_load_explicit(&g_signal_toggles, memory_order_relaxed);
        fire = n != g_signals_seen;
        g_signals_seen = n;
    } else if (g_cfg.capture_mode == GT_CAPTURE_TRIGGER_FILE) {
        uint64_t now = gt_now_ns();
        if (now - g_last_trigger_poll_ns < TRIGGER_POLL_NS)
            return;
        g_last_trigger_poll_ns = now;
        bool there = access(g_cfg.capture_file, F_OK) == 0;
        fire = there && !g_file_seen;
        g_file_seen = there;
    }
    if (fire) {
        gt_debug("flight recorder: triggered; writing what it holds");
        gt_writer_flight_request();
    }
}

void gt_capture_poll(void)
{
    poll_sample();
    if (g_cfg.flight_s) {
        poll_flight_trigger();
        return;
    }
    if (g_cfg.capture_mode == GT_CAPTURE_SIGNAL) {
        bool want = atomic_load_explicit(&g_signal_toggles, memory_order_relaxed) & 1u;
        capture_switch(want, GT_CAPTURE_SRC_SIGNAL);
    } else if (g_cfg.capture_mode == GT_CAPTURE_TRIGGER_FILE) {
        uint64_t now = gt_now_ns();
        if (now - g_last_trigger_poll_ns < TRIGGER_POLL_NS)
            return;
        g_last_trigger_poll_ns = now;
        capture_switch(access(g_cfg.capture_file, F_OK) == 0, GT_CAPTURE_SRC_TRIGGER_FILE);
    }
}

/* At load. The handler is installed only over the default action or an ignored signal: a handler
 * of the application's own stays (and its signal then opens no window: said once). */
void gt_capture_init(void)
{
    if (g_cfg.capture_mode == GT_CAPTURE_ALL)
        return;
    if (g_cfg.capture_mode == GT_CAPTURE_TRIGGER_FILE)
        gt_debug("capture windows while %s exists", g_cfg.capture_file);
    if (g_cfg.capture_mode != GT_CAPTURE_SIGNAL)
        return;
    int sig = g_cfg.capture_signal;
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) < 0 ||
        ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
        gt_warn("signal %d already has a handler of the application: GPUTRACE_CAPTURE=signal "
                "opens no window (choose another with GPUTRACE_CAPTURE_SIGNAL)",
                sig);
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_capture_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    gt_debug("%s by signal %d (kill -%d %d)",
             g_cfg.flight_s ? "flight recorder written" : "capture windows toggled", sig, sig,
             (int)getpid());
}
