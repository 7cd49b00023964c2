/* cli_gen.c — writes the crafted .gtrace files the CLI tests feed to every command.
 * Usage: cli_gen KIND PATH, KIND one of:
 *   endless  a chunk whose record_count is 0xFFFFFFFF (the value gt_payload_count_records returns
 *            for a broken payload) holding a padding record of size 0. Before the reader checked
 *            for that value the chunk passed as intact, and the size-0 record kept
 *            gt_reader_next in place: info, report, convert and diff never ended (found by
 *            fuzz_reader). The file is also a seed of the fuzz corpora (tests/core, tests/cli). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gt_encode.h"

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

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "endless"))
        return write_endless(argv[2]);
    fprintf(stderr, "usage: cli_gen endless PATH\n");
    return 2;
}
