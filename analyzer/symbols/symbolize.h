/* symbolize.h — offline symbolization of the call-site stacks in a trace (issue 8).
 *
 * Feed it the GT_REC_MODULE and GT_REC_STACK records of a trace (gt_symtab_load reads them all),
 * then ask for a stack by the id found in gt_api_common.stack_id. Native frames get their module,
 * function (symbol tables, C++ demangled) and, where debug info exists, file:line (DWARF, read
 * with libdwfl from the module or its separate debug file; GPUTRACE_SOURCE_LINES=off skips it).
 * Python frames carry file, function and line as recorded.
 *
 * Frames come innermost first, Python frames merged in where the interpreter's own native frames
 * begin (or after the native frames when the native stack was cut before reaching them).
 *
 * Names of modules this machine cannot read (recorded elsewhere, or replaced since) come from the
 * run's symbol archive, DIR/gputrace-symbols.txt beside the trace (symarchive.h), when there is
 * one: `gputrace record` writes it after the run, on the machine that has the modules.
 *
 * Typical use in a command:
 *     gt_symtab *st = gt_symtab_new();
 *     gt_symtab_load(st, reader);                        // rewinds the reader before and after
 *     const char *site = gt_symtab_callsite(st, rec->c.stack_id); // "train.py:57 in train_step"
 *     gt_frame frames[64]; int n = gt_symbolize_stack(st, id, frames, 64);
 *     gt_symtab_free(st);
 * Strings returned stay valid until gt_symtab_free. Not thread-safe. */
#ifndef GT_SYMBOLIZE_H
#define GT_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "gt_reader.h"

typedef struct gt_symtab gt_symtab;

gt_symtab *gt_symtab_new(void);
void gt_symtab_free(gt_symtab *st);

/* Keep one record if it is a GT_REC_MODULE or GT_REC_STACK (others are ignored). The reader is
 * used to look up string ids (pass the reader the record came from). */
void gt_symtab_add_record(gt_symtab *st, const gt_reader *r, const gt_record *rec);
/* Read every record of r (rewinding before and after). Returns the number of stacks kept. */
int gt_symtab_load(gt_symtab *st, gt_reader *r);

/* false: do not read the run's symbol archive (the archive's own writer reads the modules). */
void gt_symtab_use_archive(gt_symtab *st, bool use);

/* Number of stacks kept; whether a stack was cut at GPUTRACE_STACK_DEPTH. */
int gt_symtab_stack_count(const gt_symtab *st);
bool gt_symtab_stack_truncated(const gt_symtab *st, uint32_t stack_id);

/* Frames of stack_id, innermost first, into out[0..max). Returns the number of frames written, 0
 * for an unknown id or id 0. The first call symbolizes every stack kept (each module read once). */
int gt_symbolize_stack(gt_symtab *st, uint32_t stack_id, gt_frame *out, int max);

/* The innermost frame in the user's own code: Python frames outside site-packages and the standard
 * library when there are any, else the innermost native frame outside gputrace, the CUDA libraries
 * (libcudart, libcuda, libcudnn*, libcublas*, libnv*), PyTorch (libtorch*, libc10*, torch/_C),
 * what site-packages and the system's library folders hold, the interpreter (python, libpython)
 * and the C/C++ runtime (callsite.h). Returns true and fills *out when one was found. */
bool gt_symbolize_innermost_user_frame(gt_symtab *st, uint32_t stack_id, gt_frame *out);

/* Calls visit once for every distinct native pc of the kept stacks that lies in a module,
 * symbolized (the first call resolves every stack). Python fields of the frame are unset. */
void gt_symtab_each_native_frame(gt_symtab *st, void (*visit)(void *ctx, const gt_frame *f),
                                 void *ctx);

/* "train.py:57 in train_step", "chain.c:12 in do_sync", "do_sync [chain]" or
 * "[libfoo.so+0x1a2b]": one frame on one line (file names shortened to their base name, GCC's
 * clone suffixes such as ".isra.0" left out). */
size_t gt_frame_format(const gt_frame *f, char *buf, size_t cap);

/* The call site of stack_id, formatted (callsite.h picks the frame: the innermost user frame, else
 * the library frame nearest to it); NULL only for a stack with no frames. The same call site gives
 * the same text in another run (addresses do not appear unless nothing else is known: then
 * module+offset), so `diff` can match call sites by it. Cached per stack. */
const char *gt_symtab_callsite(gt_symtab *st, uint32_t stack_id);

#endif
