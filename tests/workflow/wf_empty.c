/* wf_empty.c — a harmless library the user had in LD_PRELOAD before gputrace: `record` must keep
 * it. It exports one symbol so the tests can tell it was loaded. */
__attribute__((visibility("default"))) int wf_empty_marker = 42;
