/* elfdebug.h — an ELF module's debug information, wherever the distribution put it: in the module
 * itself, or in a separate debug file found by build-id (/usr/lib/debug/.build-id/xx/rest.debug)
 * or by its .gnu_debuglink name (beside the module, in its .debug/ folder, or under
 * /usr/lib/debug/<the module's folder>/), the places gdb looks. A stripped library whose
 * symbols live in such a file still gets function names. Readers of mapped bytes: every offset is
 * checked against the mapping, so a damaged file gives "nothing found", never a crash. */
#ifndef GT_ELFDEBUG_H
#define GT_ELFDEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The contents of the section called name in the ELF64 image map[0..len); NULL when absent. */
const unsigned char *gt_elf_section(const void *map, size_t len, const char *name, size_t *size);

/* Whether the image holds DWARF line or info sections (plain or compressed). */
bool gt_elf_has_dwarf(const void *map, size_t len);

/* The GNU build-id of the image, from its note sections; 0 when none (out holds at most cap). */
uint32_t gt_elf_build_id(const void *map, size_t len, uint8_t *out, uint32_t cap);

/* The separate debug file of the module at module_path (mapped at map/len, build-id as recorded):
 * by build-id first, then by .gnu_debuglink. A candidate whose build-id differs from the recorded
 * one is skipped. Returns a malloc'd path, or NULL when there is none. root replaces
 * "/usr/lib/debug" (tests; NULL for the real one). */
char *gt_elf_find_debug_file(const char *module_path, const void *map, size_t len,
                             const uint8_t *build_id, uint32_t build_id_len, const char *root);

#endif
