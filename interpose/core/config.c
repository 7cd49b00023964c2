/* config.c — GPUTRACE_* settings, read once at load, and the diagnostics channel.
 * A bad value is never fatal: one warning naming the variable, then the default. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"

gt_config g_cfg;

const gt_config *gt_core_config(void)
{
    return &g_cfg;
}

static void vsay(const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "gputrace: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    for (size_t off = 0; off < len;) { /* write(2): usable where stdio is not */
        ssize_t w = write(2, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

void gt_warn(const char *fmt, ...)
{
    if (g_cfg.quiet)
        return;
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    errno = saved;
}

void gt_debug(const char *fmt, ...)
{
    if (!g_cfg.verbose)
        return;
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    errno = saved;
}

/* ---------------------------------------------------------------- parsing */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int gt_parse_bool_value(const char *v)
{
    static const char *const YES[] = {"1", "true", "yes", "on"};
    static const char *const NO[] = {"0", "false", "no", "off"};
    for (int i = 0; v && i < 4; i++) {
        if (!strcasecmp(v, YES[i]))
            return 1;
        if (!strcasecmp(v, NO[i]))
            return 0;
    }
    return -1;
}

static bool parse_bool(const char *name, bool def)
{
    const char *v = env(name);
    if (!v)
        return def;
    int b = gt_parse_bool_value(v);
    if (b >= 0)
        return b;
    gt_warn("%s=%s is not 0 or 1; using %d", name, v, def);
    return def;
}

static uint32_t parse_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
    const char *v = env(name);
    if (!v)
        return def;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || end == v || *v == '-' || x < lo || x > hi) {
        gt_warn("%s=%s is not a number from %u to %u; using %u", name, v, lo, hi, def);
        return def;
    }
    return (uint32_t)x;
}

static int parse_choice(const char *name, const char *const *choices, int n, int def)
{
    const char *v = env(name);
    if (!v)
        return def;
    for (int i = 0; i < n; i++)
        if (!strcasecmp(v, choices[i]))
            return i;
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n)
            strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    gt_warn("%s=%s is not one of %s; using %s", name, v, list, choices[def]);
    return def;
}

/* A path longer than cap - 1 is refused (false): never silently cut or replaced by another. */
static bool parse_path(const char *name, char *dst, size_t cap, const char *def)
{
    const char *v = env(name);
    if (v && strlen(v) >= cap) {
        dst[0] = 0;
        return false;
    }
    snprintf(dst, cap, "%s", v ? v : def);
    return true;
}

/* USR1, USR2 (with or without SIG) or a number: a signal whose default action the application does
 * not need (never KILL or STOP, which cannot be caught). */
static int parse_signal(const char *name, int def)
{
    const char *v = env(name);
    if (!v)
        return def;
    const char *n = strncasecmp(v, "SIG", 3) ? v : v + 3;
    if (!strcasecmp(n, "USR1"))
        return SIGUSR1;
    if (!strcasecmp(n, "USR2"))
        return SIGUSR2;
    char *end;
    long x = strtol(v, &end, 10);
    if (!*end && end != v && x > 0 && x < NSIG && x != SIGKILL && x != SIGSTOP)
        return (int)x;
    gt_warn("%s=%s is not USR1, USR2 or a signal number; using %d", name, v, def);
    return def;
}

/* 1 (or any yes), gil, 0 (or any no). */
static int parse_stack_python(void)
{
    const char *v = env("GPUTRACE_STACK_PYTHON");
    if (!v)
        return GT_STACK_PYTHON_ON;
    if (!strcasecmp(v, "gil"))
        return GT_STACK_PYTHON_GIL;
    int b = gt_parse_bool_value(v);
    if (b >= 0)
        return b ? GT_STACK_PYTHON_ON : GT_STACK_PYTHON_OFF;
    gt_warn("GPUTRACE_STACK_PYTHON=%s is not 1, gil or 0; using 1", v);
    return GT_STACK_PYTHON_ON;
}

/* A comma list of activity kinds ("kernel,memcpy"), "all" or "none". */
static uint32_t parse_kinds(const char *name)
{
    static const struct {
        const char *name;
        uint32_t bit;
    } KINDS[] = {{"kernel", GT_KIND_KERNEL}, {"memcpy", GT_KIND_MEMCPY},
                 {"memset", GT_KIND_MEMSET}, {"overhead", GT_KIND_OVERHEAD},
                 {"all", GT_KIND_ALL},       {"none", 0}};
    const char *v = env(name);
    if (!v)
        return GT_KIND_ALL;
    uint32_t bits = 0;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < sizeof KINDS / sizeof *KINDS &&
               (strlen(KINDS[i].name) != len || strncasecmp(p, KINDS[i].name, len)))
            i++;
        if (i == sizeof KINDS / sizeof *KINDS) {
            gt_warn("%s=%s: '%.*s' is not one of kernel,memcpy,memset,overhead,all,none; using all",
                    name, v, (int)len, p);
            return GT_KIND_ALL;
        }
        bits |= KINDS[i].bit;
        p += len + (p[len] == ',');
    }
    return bits;
}

/* all, profiler-api, signal or trigger-file:PATH (a path too long for capture_file is refused). */
static void parse_capture(void)
{
    static const char *const MODES[] = {"all", "profiler-api", "signal"};
    static const char TRIGGER[] = "trigger-file:";
    const char *v = env("GPUTRACE_CAPTURE");
    g_cfg.capture_mode = GT_CAPTURE_ALL;
    g_cfg.capture_signal = parse_signal("GPUTRACE_CAPTURE_SIGNAL", SIGUSR2);
    if (!v)
        return;
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(v, MODES[i])) {
            g_cfg.capture_mode = i;
            return;
        }
    size_t plen = sizeof TRIGGER - 1;
    if (!strncasecmp(v, TRIGGER, plen) && v[plen] && strlen(v + plen) < sizeof g_cfg.capture_file) {
        snprintf(g_cfg.capture_file, sizeof g_cfg.capture_file, "%s", v + plen);
        g_cfg.capture_mode = GT_CAPTURE_TRIGGER_FILE;
        return;
    }
    gt_warn("GPUTRACE_CAPTURE=%s is not all, profiler-api, signal or trigger-file:PATH (a path "
            "under %zu bytes); recording everything",
            v, sizeof g_cfg.capture_file);
}

/* GPUTRACE_SAMPLE=ON/OFF in seconds (decimals allowed: "0.5/9.5"), each from 0.01 to 86400. */
static void parse_sample(void)
{
    const char *v = env("GPUTRACE_SAMPLE");
    g_cfg.sample_on_ms = g_cfg.sample_off_ms = 0;
    if (!v)
        return;
    char *end, *end2;
    double on = strtod(v, &end), off = *end == '/' ? strtod(end + 1, &end2) : -1;
    if (*end != '/' || *end2 || !(on >= 0.01 && on <= 86400) || !(off >= 0.01 && off <= 86400)) {
        gt_warn("GPUTRACE_SAMPLE=%s is not ON/OFF in seconds (e.g. 2/18); GPU activity recorded "
                "all along",
                v);
        return;
    }
    if (g_cfg.capture_mode != GT_CAPTURE_ALL && !g_cfg.flight_s) {
        gt_warn("GPUTRACE_SAMPLE is ignored with GPUTRACE_CAPTURE windows");
        return;
    }
    g_cfg.sample_on_ms = (uint32_t)(on * 1000 + 0.5);
    g_cfg.sample_off_ms = (uint32_t)(off * 1000 + 0.5);
}

void gt_config_load(void)
{
    memset(&g_cfg, 0, sizeof g_cfg);
    /* Quiet and verbose first: they decide whether the other warnings print. */
    g_cfg.quiet = false;
    g_cfg.quiet = parse_bool("GPUTRACE_QUIET", false);
    g_cfg.verbose = parse_bool("GPUTRACE_VERBOSE", false);
    g_cfg.disabled = parse_bool("GPUTRACE_DISABLE", false);
    if (!g_cfg.disabled && !parse_path("GPUTRACE_DIR", g_cfg.dir, sizeof g_cfg.dir, ".")) {
        /* Not the current folder instead: the files would turn up where nobody looks. */
        gt_warn("GPUTRACE_DIR is longer than %zu bytes; not recording (the application continues)",
                sizeof g_cfg.dir - 1);
        g_cfg.disabled = true;
    }
    g_cfg.buffer_kb = parse_u32("GPUTRACE_BUFFER_KB", 4096, 64, 1u << 20);
    g_cfg.flush_ms = parse_u32("GPUTRACE_FLUSH_MS", 200, 1, 60000);
    g_cfg.cupti_mb = parse_u32("GPUTRACE_CUPTI_MB", 256, 1, 1u << 16);
    g_cfg.cupti = parse_bool("GPUTRACE_CUPTI", true);
    static const char *const CALLBACKS[] = {"0", "1", "runtime", "probe", "auto"};
    g_cfg.cupti_callbacks =
        parse_choice("GPUTRACE_CUPTI_CALLBACKS", CALLBACKS, 5, GT_CUPTI_CB_AUTO);
    enum { LINK_ORDER, LINK_QUEUED, LINK_CALLBACKS };
    static const char *const LINK[] = {"order", "queued", "callbacks"};
    int link = parse_choice("GPUTRACE_CUPTI_LINK", LINK, 3, LINK_ORDER);
    g_cfg.cupti_latency = link == LINK_QUEUED;
    g_cfg.cupti_anchors = link == LINK_ORDER;
    static const char *const API[] = {"auto", "full", "off"};
    g_cfg.api_mode = parse_choice("GPUTRACE_API", API, 3, GT_API_AUTO);
    static const char *const STACKS[] = {"off", "advice", "all"};
    g_cfg.stacks_mode = parse_choice("GPUTRACE_STACKS", STACKS, 3, GT_STACKS_ADVICE);
    g_cfg.stack_depth = parse_u32("GPUTRACE_STACK_DEPTH", 24, 1, 256);
    if (!parse_path("GPUTRACE_CUPTI_LIB", g_cfg.cupti_lib, sizeof g_cfg.cupti_lib, ""))
        gt_warn("GPUTRACE_CUPTI_LIB is longer than %zu bytes; searching the usual places",
                sizeof g_cfg.cupti_lib - 1);
    static const char *const CLOCK[] = {"auto", "tsc", "realtime"};
    g_cfg.clock_mode = parse_choice("GPUTRACE_CLOCK", CLOCK, 3, GT_CLOCK_AUTO);
    parse_capture();
    g_cfg.nvtx = parse_bool("GPUTRACE_NVTX", true);
    g_cfg.stack_cache = parse_bool("GPUTRACE_STACK_CACHE", true);
    g_cfg.stack_python = parse_stack_python();
    g_cfg.cupti_kinds = parse_kinds("GPUTRACE_CUPTI_KINDS");
    g_cfg.cupti_hw_trace = parse_bool("GPUTRACE_CUPTI_HW_TRACE", true);
    g_cfg.cupti_detach = parse_bool("GPUTRACE_CUPTI_DETACH", false);
    g_cfg.flight_s = parse_u32("GPUTRACE_FLIGHT_RECORDER", 0, 0, 7 * 86400);
    g_cfg.flight_mb = parse_u32("GPUTRACE_FLIGHT_RECORDER_MB", 256, 4, 1u << 16);
    if (g_cfg.flight_s && g_cfg.capture_mode == GT_CAPTURE_PROFILER_API) {
        gt_warn("GPUTRACE_FLIGHT_RECORDER takes its trigger from GPUTRACE_CAPTURE=signal or "
                "trigger-file:PATH, not profiler-api; recording everything into it");
        g_cfg.capture_mode = GT_CAPTURE_ALL;
    }
    parse_sample();
    static const char *const UM[] = {"auto", "on", "off"};
    g_cfg.um_mode = parse_choice("GPUTRACE_UM", UM, 3, GT_UM_AUTO);
}
