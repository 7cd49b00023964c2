/* record_signals.h — the signals `gputrace record` passes on to the program it runs (see the .c
 * file for which, and why). The order of calls: rs_install, fork, rs_child_restore in the child
 * (before exec), rs_watch in the parent, then rs_restore once the program has ended. */
#ifndef GT_RECORD_SIGNALS_H
#define GT_RECORD_SIGNALS_H

#include <stdbool.h>
#include <sys/types.h>

/* Handlers for the termination signals and, when capture_signal is not 0, for that signal
 * (--capture signal); all of them stay blocked until rs_watch, so that none arrives before the
 * program's pid is known (it would be lost). */
void rs_install(int capture_signal);
/* In the forked child: the actions and the signal mask gputrace was started with. */
void rs_child_restore(void);
/* In the parent after fork: pass signals on to pid from now on (those that came meanwhile too). */
void rs_watch(pid_t pid);
/* The program ended: the actions and mask gputrace was started with. */
void rs_restore(void);
/* A SIGINT sent to gputrace record was passed on as SIGTERM, because the program ignores SIGINT
 * as it was started with it ignored (a script's background job). */
bool rs_sigint_sent_as_sigterm(void);

#endif
