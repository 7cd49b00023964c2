/* symarchive.h — the names of a run's captured frames, kept with the run (what `perf archive` does
 * for perf): DIR/gputrace-symbols.txt, written by `gputrace record` right after the program ends,
 * on the machine whose libraries the frames point into. A run folder copied to another machine (no
 * libtorch there, another driver, a stripped copy) then still reads "at::native::copy_
 * [libtorch_cuda.so]" instead of "[libtorch_cuda.so+0x1e4baad]": symbolize.c consults the archive
 * for every module it cannot read or whose build-id differs.
 *
 * The file is text, one line each (fields separated by tabs, empty when unknown):
 *     # gputrace symbols 1                       first line: format and version
 *     M <build-id hex> <path>                     a module; the F lines below are in it
 *     F <offset hex> <line> <file> <function>     one frame: offset = pc - load address
 * Modules match by build-id where both sides have one, else by path. Lines it does not know are
 * skipped, so a damaged file loses only those lines. */
#ifndef GT_SYMARCHIVE_H
#define GT_SYMARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GT_SYMARCHIVE_NAME "gputrace-symbols.txt"
/* The first line of an archive: the format and its version. */
#define GT_SYMARCHIVE_HEADER "# gputrace symbols 1"

typedef struct gt_symarchive gt_symarchive;

/* Reads path; NULL when it is missing or not a version-1 archive (a message on stderr for a file
 * that exists but is not one). */
gt_symarchive *gt_symarchive_load(const char *path);
/* The same over a buffer (not copied, used only during the call): tests and fuzzing. */
gt_symarchive *gt_symarchive_load_mem(const void *data, size_t len);
void gt_symarchive_free(gt_symarchive *a);

/* The archive's module for a module of a trace: by build-id (hex) when both have one, else by path.
 * Returns -1 when the archive holds nothing for it. */
int gt_symarchive_module(const gt_symarchive *a, const char *build_id_hex, const char *path);

/* Names of module+offset; false when the archive has no entry. Strings live as long as a. */
bool gt_symarchive_find(const gt_symarchive *a, int module, uint64_t offset, const char **function,
                        const char **file, int *line);

#endif
