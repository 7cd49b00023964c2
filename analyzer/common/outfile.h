/* outfile.h — how the analyzer writes an output file (convert, record): never in place, never
 * through a link, never over something that is not a regular file.
 *
 * The data goes to a fresh temporary file created with O_EXCL beside the target (mkstemp: a link
 * planted under a guessable name is never followed), and is renamed over the target only when every
 * byte was written. The target may be missing or a regular file; a device, FIFO, socket, folder or
 * symbolic link is refused with an error naming it. "-" means standard output. A failed write (full
 * disk, file size limit) removes the temporary file and is an error. */
#ifndef GT_OUTFILE_H
#define GT_OUTFILE_H

#include <stdio.h>

typedef struct gt_outfile {
    FILE *f;          /* write here */
    const char *path; /* the target as given ("-": standard output) */
    char *tmp;        /* the temporary file, NULL for standard output */
    int write_errno;  /* first failed write's errno, 0 none */
    int fd;
} gt_outfile;

/* Opens o for path. who is the command ("convert") for messages. 0 ok; -1 with the reason printed
 * as "gputrace WHO: ...". */
int gt_outfile_open(gt_outfile *o, const char *path, const char *who);

/* Flushes, closes and renames the temporary file over the target. 0 ok; -1 when any write failed
 * or the rename did (reason printed, temporary file removed, the target left as it was). */
int gt_outfile_commit(gt_outfile *o, const char *who);

/* Closes and removes the temporary file: nothing is written under the target's name. */
void gt_outfile_discard(gt_outfile *o);

/* The name to show for the target: the path, or "standard output". */
const char *gt_outfile_name(const gt_outfile *o);

/* A write past `ulimit -f` raises SIGXFSZ, whose default action kills the process and leaves the
 * temporary file behind. The analyzer ignores it (main.c) so the write fails with EFBIG and is
 * handled; programs started by `record` get the disposition gputrace was started with back. */
void gt_ignore_sigxfsz(void);
void gt_restore_sigxfsz(void);

/* For commands that print to standard output (info, report, diff): flushes it; 0 ok, -1 when a
 * write failed (full disk, closed pipe reader...), with "gputrace WHO: cannot write ..." printed.
 */
int gt_stdout_finish(const char *who);

#endif
