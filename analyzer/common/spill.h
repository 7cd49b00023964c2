/* spill.h — a temporary file for what the analysis keeps but reads seldom (issue 33 item 0): the
 * structures that grow with a run (the library links, values by call and GPU op id) keep a
 * bounded working set in memory and the rest here, so that memory stays bounded whatever the
 * trace's length. The file is made in $GPUTRACE_TMPDIR, else $TMPDIR, else /tmp, and unlinked at
 * once: nothing is left behind, whatever ends the analyzer. Where no file can be made or written
 * (no such folder, a full disk), the caller keeps its data in memory: slower to bound, never
 * lost. */
#ifndef GT_ANALYZER_SPILL_H
#define GT_ANALYZER_SPILL_H

#include <stddef.h>
#include <stdint.h>

/* All zero: not made yet (the file comes with the first write). */
typedef struct gt_spill {
    int fd, is_open;
    int failed;       /* could not be made or written: callers keep their data in memory */
    uint64_t end;     /* bytes appended (gt_spill_append) */
    uint64_t written; /* bytes written in all, reads of them */
    uint64_t reads;
} gt_spill;

/* Write n bytes at offset (the file is made on first use). 0, or -1: nothing can be kept there
 * (failed is set; the caller keeps the bytes). */
int gt_spill_write(gt_spill *s, uint64_t offset, const void *buf, size_t n);
/* Append n bytes at the end: their offset, or UINT64_MAX as gt_spill_write's -1. */
uint64_t gt_spill_append(gt_spill *s, const void *buf, size_t n);
/* Read up to n bytes at offset: how many were read (a short read past the end). Reading back
 * what was written cannot fail but through the disk: that is an I/O error, exit status 2 as for
 * an unreadable output (the data is not there any more). */
size_t gt_spill_read(gt_spill *s, uint64_t offset, void *buf, size_t n);
void gt_spill_close(gt_spill *s);

/* Pages a spilled structure keeps in memory at most: GPUTRACE_SPILL_PAGES, else its default
 * (the tests make a small trace spill with a small value). */
size_t gt_spill_pages_max(size_t dflt);

#endif
