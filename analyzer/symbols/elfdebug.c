/* elfdebug.c — finding a module's debug information (see elfdebug.h). */
#include "elfdebug.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUG_ROOT "/usr/lib/debug"

static bool in_image(size_t len, uint64_t off, uint64_t n)
{
    return off <= len && n <= len - off;
}

static const Elf64_Ehdr *elf64(const void *map, size_t len)
{
    const Elf64_Ehdr *eh = map;
    if (!map || len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        !in_image(len, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
        return NULL;
    return eh;
}

const unsigned char *gt_elf_section(const void *map, size_t len, const char *name, size_t *size)
{
    const Elf64_Ehdr *eh = elf64(map, len);
    if (!eh || eh->e_shstrndx >= eh->e_shnum)
        return NULL;
    const unsigned char *base = map;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    const Elf64_Shdr *names = &sh[eh->e_shstrndx];
    if (!in_image(len, names->sh_offset, names->sh_size))
        return NULL;
    const char *strtab = (const char *)base + names->sh_offset;
    size_t want = strlen(name) + 1;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= names->sh_size || names->sh_size - sh[i].sh_name < want ||
            memcmp(strtab + sh[i].sh_name, name, want) != 0)
            continue;
        if (sh[i].sh_type == SHT_NOBITS || !in_image(len, sh[i].sh_offset, sh[i].sh_size))
            return NULL;
        *size = sh[i].sh_size;
        return base + sh[i].sh_offset;
    }
    return NULL;
}

bool gt_elf_has_dwarf(const void *map, size_t len)
{
    static const char *const names[] = {".debug_line", ".debug_info", ".zdebug_line",
                                        ".zdebug_info"};
    size_t size;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (gt_elf_section(map, len, names[i], &size) && size > 0)
            return true;
    return false;
}

uint32_t gt_elf_build_id(const void *map, size_t len, uint8_t *out, uint32_t cap)
{
    const Elf64_Ehdr *eh = elf64(map, len);
    if (!eh)
        return 0;
    const unsigned char *base = map;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_NOTE || !in_image(len, sh[i].sh_offset, sh[i].sh_size))
            continue;
        const unsigned char *p = base + sh[i].sh_offset, *end = p + sh[i].sh_size;
        while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
            Elf64_Nhdr n;
            memcpy(&n, p, sizeof n);
            size_t nsz = (n.n_namesz + 3u) & ~3u, dsz = (n.n_descsz + 3u) & ~3u;
            if (nsz > (size_t)(end - p) - sizeof n || dsz > (size_t)(end - p) - sizeof n - nsz)
                break;
            const unsigned char *name = p + sizeof n, *desc = name + nsz;
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                uint32_t k = n.n_descsz < cap ? n.n_descsz : cap;
                memcpy(out, desc, k);
                return k;
            }
            p = desc + dsz;
        }
    }
    return 0;
}

/* Whether path is a readable ELF64 file whose build-id (when both have one) is the recorded one. */
static bool debug_file_fits(const char *path, const char *module_path, const uint8_t *build_id,
                            uint32_t build_id_len)
{
    char real_a[4096], real_b[4096];
    if (realpath(path, real_a) && realpath(module_path, real_b) && strcmp(real_a, real_b) == 0)
        return false; /* the module itself */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat sb;
    bool fits = false;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            uint8_t id[32];
            uint32_t n = elf64(map, (size_t)sb.st_size)
                             ? gt_elf_build_id(map, (size_t)sb.st_size, id, sizeof id)
                             : 0;
            fits = elf64(map, (size_t)sb.st_size) &&
                   (n == 0 || build_id_len == 0 ||
                    (n >= build_id_len && memcmp(id, build_id, build_id_len) == 0));
            munmap(map, (size_t)sb.st_size);
        }
    }
    close(fd);
    return fits;
}

static char *copy_if_fits(const char *candidate, const char *module_path, const uint8_t *build_id,
                          uint32_t build_id_len)
{
    if (!debug_file_fits(candidate, module_path, build_id, build_id_len))
        return NULL;
    return strdup(candidate);
}

char *gt_elf_find_debug_file(const char *module_path, const void *map, size_t len,
                             const uint8_t *build_id, uint32_t build_id_len, const char *root)
{
    if (!root)
        root = DEBUG_ROOT;
    char path[4096];
    if (build_id_len >= 2) { /* ROOT/.build-id/ab/cdef....debug */
        int off = snprintf(path, sizeof path, "%s/.build-id/%02x/", root, build_id[0]);
        for (uint32_t i = 1; i < build_id_len && off > 0 && off < (int)sizeof path - 8; i++)
            off += snprintf(path + off, sizeof path - (size_t)off, "%02x", build_id[i]);
        if (off > 0 && off < (int)sizeof path - 8) {
            snprintf(path + off, sizeof path - (size_t)off, ".debug");
            char *found = copy_if_fits(path, module_path, build_id, build_id_len);
            if (found)
                return found;
        }
    }
    size_t size = 0;
    const unsigned char *link = gt_elf_section(map, len, ".gnu_debuglink", &size);
    if (!link || size < 2 || !memchr(link, '\0', size))
        return NULL;
    const char *name = (const char *)link;
    if (strchr(name, '/') || !*name)
        return NULL; /* a bare file name, as the linker writes it */
    const char *slash = strrchr(module_path, '/');
    int dir_len = !slash ? 1 : slash == module_path ? 1 : (int)(slash - module_path);
    const char *dir = slash ? module_path : ".";
    /* beside the module, in its .debug/ folder, then under the debug root */
    for (int i = 0; i < 2; i++) {
        int n = i == 0 ? snprintf(path, sizeof path, "%.*s/%s", dir_len, dir, name)
                       : snprintf(path, sizeof path, "%.*s/.debug/%s", dir_len, dir, name);
        if (n > 0 && n < (int)sizeof path) {
            char *found = copy_if_fits(path, module_path, build_id, build_id_len);
            if (found)
                return found;
        }
    }
    int n = snprintf(path, sizeof path, "%s%s%.*s/%s", root, dir[0] == '/' ? "" : "/", dir_len, dir,
                     name);
    return n > 0 && n < (int)sizeof path ? copy_if_fits(path, module_path, build_id, build_id_len)
                                         : NULL;
}
