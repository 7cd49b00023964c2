/* symarchive_write.h — write a run folder's symbol archive (its format: symarchive.h). Apart from
 * the reader because it symbolizes (symbolize.h), while the symbolizer reads archives. */
#ifndef GT_SYMARCHIVE_WRITE_H
#define GT_SYMARCHIVE_WRITE_H

#include <stddef.h>

/* Symbolizes every .gtrace file in dir here and writes dir/gputrace-symbols.txt (through a
 * temporary file, so a reader never sees half of it). Returns the number of frames written (0:
 * no stacks, or none with a name; no file then), or -1 with a message in err. */
int gt_symarchive_write_dir(const char *dir, char *err, size_t errlen);

#endif
