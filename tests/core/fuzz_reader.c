/* fuzz_reader.c — libFuzzer target: the reader must survive any bytes (no crash, no leak, no UB).
 */
#include <stddef.h>
#include <stdint.h>

#include "gt_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gt_reader *r;
    char err[256];
    if (gt_reader_open_mem(data, size, &r, err, sizeof err) != GT_OPEN_OK)
        return 0;
    gt_record rec;
    uint64_t sum = 0;
    for (int pass = 0; pass < 2; pass++) {
        while (gt_reader_next(r, &rec)) {
            const unsigned char *b = rec.body;
            for (uint32_t i = 0; i < rec.body_size; i += 64) /* touch the whole body */
                sum += b[i];
            if (rec.kind == GT_REC_THREAD && rec.body_size >= sizeof(gt_rec_thread)) {
                const char *s = gt_reader_string(r, ((const gt_rec_thread *)rec.body)->name_id);
                sum += s ? (unsigned char)s[0] : 0;
            }
        }
        gt_reader_rewind(r);
    }
    (void)gt_reader_exe(r);
    (void)gt_reader_cmdline(r);
    gt_reader_close(r);
    return (int)(sum & 0);
}
