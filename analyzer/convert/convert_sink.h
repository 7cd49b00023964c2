/* convert_sink.h — what the conversion core (convert_run.c and its parts) hands to an output
 * format.
 *
 * The core decides tracks, nesting, flows and counters; a sink only encodes. Two sinks exist:
 * Perfetto protobuf (convert_perfetto.c) and Chrome trace-event JSON (convert_json.c). Timestamps
 * given to a sink are already on the output clock (ns). */
#ifndef GT_CONVERT_SINK_H
#define GT_CONVERT_SINK_H

#include <stdint.h>
#include <stdio.h>

enum cv_track_kind {
    CV_TRACK_PROCESS = 1,
    CV_TRACK_THREAD = 2,
    CV_TRACK_CHILD = 3,   /* a named track under a process (GPU streams, advice, NVTX ranges) */
    CV_TRACK_COUNTER = 4, /* a counter track under a process */
};

enum cv_counter_unit { CV_UNIT_NONE = 0, CV_UNIT_BYTES = 3 };

typedef struct cv_track_desc {
    uint64_t uuid, parent;
    uint32_t seq;
    int kind;         /* cv_track_kind */
    const char *name; /* track / thread / process name */
    int32_t pid;      /* process and thread tracks */
    int64_t tid;      /* thread tracks; JSON uses it as the lane id of child tracks too */
    const char *cmdline;
    int unit; /* cv_counter_unit, counters only */
    const char *unit_name;
    int rank_order; /* sibling order (tracks sorted by it), 0 = none */
} cv_track_desc;

enum cv_event_type { CV_BEGIN = 1, CV_END = 2, CV_INSTANT = 3, CV_COUNTER = 4 };
enum cv_arg_type { CV_ARG_INT, CV_ARG_UINT, CV_ARG_STR, CV_ARG_PTR, CV_ARG_DOUBLE };

typedef struct cv_arg {
    const char *name;
    uint32_t name_iid; /* index of name in the sink's arg_names; 0 = write the name inline */
    int type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
    } v;
} cv_arg;

#define CV_MAX_ARGS 16
#define CV_MAX_FLOWS 4

typedef struct cv_event {
    int type; /* cv_event_type */
    uint64_t track;
    uint32_t seq;
    int64_t ts;
    const char *name;
    uint64_t name_iid; /* stable key of name within the file, 0 = do not intern */
    const char *cat;
    uint64_t cat_iid; /* its own key space (Perfetto interns names and categories apart) */
    const cv_arg *args;
    int n_args;
    uint64_t flows[CV_MAX_FLOWS];
    int n_flows;
    uint64_t term_flows[CV_MAX_FLOWS];
    int n_term_flows;
    int64_t counter;
    double dcounter;
    int counter_is_double;
} cv_event;

typedef struct cv_sink cv_sink;
struct cv_sink {
    void (*track)(cv_sink *s, const cv_track_desc *d);
    void (*event)(cv_sink *s, const cv_event *e);
    /* The relation of the input clock (CLOCK_REALTIME) to the output clock (BOOTTIME). */
    void (*clock)(cv_sink *s, uint32_t seq, uint64_t realtime_ns, uint64_t boottime_ns);
    void (*seq_end)(cv_sink *s, uint32_t seq); /* no more packets on this sequence */
    int (*finish)(cv_sink *s);                 /* flush; -1 on a write error */
    void (*destroy)(cv_sink *s);
    /* Every argument name the core uses, by cv_arg.name_iid (entry 0 unused): the Perfetto sink
     * interns them all on a sequence's first event with arguments. Set by the core. */
    const char *const *arg_names;
    uint32_t n_arg_names;
    FILE *out;
    uint64_t bytes;  /* written so far */
    uint64_t events; /* events and descriptors encoded */
    int io_error;
};

cv_sink *cv_sink_perfetto(FILE *out);
cv_sink *cv_sink_json(FILE *out);

#endif
