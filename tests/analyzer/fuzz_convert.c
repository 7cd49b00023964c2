/* fuzz_convert.c — libFuzzer target for `gputrace convert`: any bytes, as one trace or split in
 * two (a merge), into both output formats. Must never crash, hang or leak.
 *
 * Without libFuzzer (GPUTRACE_FUZZ off, or gcc) the same entry point is driven by main() below:
 * it takes seed files, mutates them deterministically (bit flips, truncations, byte runs) and runs
 * every mutant, so CI exercises the damage paths under ASan/UBSan too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *sinkf = fopen("/dev/null", "wb");
    if (!sinkf)
        return 0;
    gt_convert_opts opts = {.quiet = 1};
    gt_convert_stats st;
    const void *bufs[2] = {data, data};
    size_t lens[2] = {size, size};
    (void)gt_convert_mem(bufs, lens, 1, sinkf, &opts, &st);
    if (size > 16) { /* the second half as another process of the same run */
        size_t half = size / 2;
        bufs[1] = data + half;
        lens[0] = half;
        lens[1] = size - half;
        opts.format = GT_CONVERT_JSON;
        (void)gt_convert_mem(bufs, lens, 2, sinkf, &opts, &st);
    }
    fclose(sinkf);
    return 0;
}

#ifndef GT_LIBFUZZER
static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    int rounds = 300;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f)
            continue;
        size_t cap = 1 << 20, n = 0;
        uint8_t *buf = malloc(cap), *mut = malloc(cap);
        if (!buf || !mut)
            return 1;
        n = fread(buf, 1, cap, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        for (int r = 0; r < rounds && n; r++) {
            memcpy(mut, buf, n);
            size_t len = n;
            switch (next_rand() % 4) {
            case 0: /* flip a few bits anywhere (header CRC, chunk CRC, bodies) */
                for (int k = 0; k < 4; k++)
                    mut[next_rand() % len] ^= (uint8_t)(1u << (next_rand() % 8));
                break;
            case 1: /* truncate */
                len = next_rand() % n;
                break;
            case 2: { /* a run of 0xff or 0x00 */
                size_t at = next_rand() % len, run = 1 + next_rand() % 64;
                memset(mut + at, (next_rand() & 1) ? 0xff : 0, at + run < len ? run : len - at);
                break;
            }
            default: /* random bytes in record bodies (past the header) */
                for (int k = 0; k < 16; k++)
                    mut[(len > 512 ? 512 + next_rand() % (len - 512) : next_rand() % len)] =
                        (uint8_t)next_rand();
                break;
            }
            LLVMFuzzerTestOneInput(mut, len);
        }
        free(buf);
        free(mut);
    }
    printf("fuzz_convert: %d seed(s), %d mutants each: no crash\n", argc - 1, rounds);
    return 0;
}
#endif
