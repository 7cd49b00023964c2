/* own_trace.h — a traced test program reads its own .gtrace while gputrace writes it, to wait for
 * what the writer thread does (a capture window switched, CUPTI's records converted) by its effect
 * in the file, not by a sleep: on a busy machine the writer comes late. */
#ifndef GT_OWN_TRACE_H
#define GT_OWN_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* Records of kind in this process's trace (GPUTRACE_DIR/gputrace-<host>-<pid>*.gtrace) so far;
 * -1 when there is no such file yet. hdr_flags (may be NULL): the header's flags. */
int own_trace_count(uint16_t kind, uint32_t *hdr_flags);
/* Polls until the trace holds at least want records of kind; false after ceiling_s seconds (a
 * ceiling, not an expected time). */
bool own_trace_wait(uint16_t kind, int want, int ceiling_s);

#endif
