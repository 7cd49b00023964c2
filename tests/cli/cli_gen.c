/* cli_gen.c — writes the crafted .gtrace files the CLI tests feed to every command.
 * Usage: cli_gen KIND PATH, KIND one of:
 *   endless  a chunk whose record_count is 0xFFFFFFFF (the value gt_payload_count_records returns
 *            for a broken payload) holding a padding record of size 0. Before the reader checked
 *            for that value the chunk passed as intact, and the size-0 record kept
 *            gt_reader_next in place: info, report, convert and diff never ended (found by
 *            fuzz_reader). The file is also a seed of the fuzz corpora (tests/core, tests/cli).
 *   module FILE  a sync call whose stack points into a module the trace says lives at FILE (a
 *            FIFO in the test): the symbolizer must not open anything but a regular file, or
 *            opening a FIFO with no writer blocks report, convert and diff forever. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gt_encode.h"
#include "gt_test_writer.h"
#include "gtrace_api.h"

static int write_endless(const char *path)
{
    gt_file_header h = {.pid = 4242, .ppid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    strcpy(h.host, "crafted");
    static unsigned char header[4096];
    const char cmd[] = "crafted";
    size_t hsize = gt_header_encode(header, sizeof header, &h, "/bin/crafted", cmd, sizeof cmd);
    if (!hsize)
        return 1;
    /* one record header of size 0: not a valid record sequence */
    gt_record_header rh = {.kind = GT_REC_PAD, .flags = 0, .size = 0}; /* skipped: never returns */
    unsigned char payload[8];
    memcpy(payload, &rh, sizeof rh);
    gt_chunk_header ch = {.magic = GT_CHUNK_MAGIC,
                          .payload_len = sizeof payload,
                          .seq = 0,
                          .crc32 = (uint32_t)crc32(0L, payload, sizeof payload),
                          .record_count = UINT32_MAX,
                          .tid = 1};
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    int ok = fwrite(header, 1, hsize, f) == hsize && fwrite(&ch, 1, sizeof ch, f) == sizeof ch &&
             fwrite(payload, 1, sizeof payload, f) == sizeof payload;
    return fclose(f) == 0 && ok ? 0 : 1;
}

static int write_module(const char *path, const char *module_path)
{
    gt_file_header h = {.pid = 4243, .ppid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    strcpy(h.host, "crafted");
    const char cmd[] = "crafted";
    gt_test_writer *w = calloc(1, sizeof *w);
    if (!w || gt_test_writer_open(w, path, &h, "/bin/crafted", cmd, sizeof cmd) != 0)
        return 1;
    int rc = gt_test_writer_string(w, 1, module_path);
    gt_rec_module mod = {.base = 0x400000, .size = 0x10000, .path_id = 1};
    rc |= gt_test_writer_add(w, GT_REC_MODULE, 0, &mod, sizeof mod);
    struct {
        gt_rec_stack s;
        uint64_t pc;
    } stack = {{.stack_id = 1, .depth = 1}, 0x401234};
    rc |= gt_test_writer_add(w, GT_REC_STACK, 0, &stack, sizeof stack);
    uint64_t t0 = 1700000000000000000ull;
    for (int i = 0; i < 3; i++) {
        gt_rec_api_sync sync = {.c = {.t_begin_ns = t0 + (uint64_t)i * 1000000,
                                      .t_end_ns = t0 + (uint64_t)i * 1000000 + 500000,
                                      .corr_id = (uint64_t)i + 1,
                                      .func = GT_FN_cudaDeviceSynchronize,
                                      .device = 0,
                                      .stack_id = 1}};
        rc |= gt_test_writer_add(w, GT_REC_API_SYNC, 0, &sync, sizeof sync);
    }
    rc |= gt_test_writer_close(w);
    free(w);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "endless"))
        return write_endless(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "module"))
        return write_module(argv[2], argv[3]);
    fprintf(stderr, "usage: cli_gen endless PATH | cli_gen module PATH MODULE-FILE\n");
    return 2;
}
