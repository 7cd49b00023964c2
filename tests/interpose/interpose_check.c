/* interpose_check.c — reads the .gtrace a test app produced under LD_PRELOAD=libgputrace.so and
 * asserts exactly what the wrappers must have recorded for that app (one case per app).
 * Usage: interpose_check CASE DIR. Exit 0 when every expectation holds, 1 otherwise. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_reader.h"
#include "gtrace_api.h"

typedef struct rec {
    uint16_t kind, flags;
    uint32_t size;
    void *body;
} rec;

static rec *recs;
static size_t nrecs;
static gt_reader *reader;
static int failures;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

#define EXPECT_EQ(what, got, want)                                                                \
    do {                                                                                          \
        long long g_ = (long long)(got), w_ = (long long)(want);                                  \
        if (g_ != w_) fail("%s: got %lld, expected %lld (line %d)", what, g_, w_, __LINE__);     \
    } while (0)

static void load(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096] = "";
    int files = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".gtrace")) snprintf(path, sizeof path, "%s/%s", dir, e->d_name), files++;
    if (d) closedir(d);
    if (files != 1) {
        fprintf(stderr, "FAIL: expected one .gtrace in %s, found %d\n", dir, files);
        exit(1);
    }
    char err[512];
    if (gt_reader_open(path, &reader, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "FAIL: %s\n", err);
        exit(1);
    }
    gt_record r;
    size_t cap = 0;
    while (gt_reader_next(reader, &r) == 1) {
        if (nrecs == cap) recs = realloc(recs, (cap = cap ? cap * 2 : 256) * sizeof *recs);
        recs[nrecs] = (rec){r.kind, r.flags, r.body_size, malloc(r.body_size ? r.body_size : 1)};
        memcpy(recs[nrecs].body, r.body, r.body_size);
        nrecs++;
    }
    EXPECT_EQ("lost records", gt_reader_get_stats(reader)->lost_records, 0);
}

static const char *str(uint32_t id) {
    const char *s = gt_reader_string(reader, id);
    return s ? s : "?";
}

/* The i-th record of a kind whose gt_api_common.func is func (any func when 0); NULL when absent. */
static rec *nth(uint16_t kind, uint32_t func, int i) {
    for (size_t j = 0; j < nrecs; j++) {
        if (recs[j].kind != kind) continue;
        if (func && ((gt_api_common *)recs[j].body)->func != func) continue;
        if (i-- == 0) return &recs[j];
    }
    return NULL;
}

static int count(uint16_t kind, uint32_t func) {
    int n = 0;
    while (nth(kind, func, n)) n++;
    return n;
}

static int count_api_records(void) {
    int n = 0;
    for (size_t j = 0; j < nrecs; j++)
        if (recs[j].kind >= GT_REC_API && recs[j].kind <= GT_REC_API_CUBLAS) n++;
    return n;
}

/* Every API record: times ordered, correlation ids unique and non-zero. */
static void check_common_fields(void) {
    uint64_t last_corr = 0;
    for (size_t j = 0; j < nrecs; j++) {
        if (recs[j].kind < GT_REC_API || recs[j].kind > GT_REC_API_CUBLAS) continue;
        gt_api_common *c = recs[j].body;
        if (c->t_end_ns < c->t_begin_ns || c->t_begin_ns == 0) fail("record %zu: bad times", j);
        if (c->corr_id == 0 || c->corr_id == last_corr) fail("record %zu: corr id %llu", j,
                                                             (unsigned long long)c->corr_id);
        last_corr = c->corr_id;
        if (!gt_api_func_name(c->func)) fail("record %zu: unknown func %u", j, c->func);
    }
}

/* ------------------------------------------------------------------ runtime */

static void expect_copy(int i, uint32_t func, uint64_t bytes, int dir, int src, int dst, int async,
                        uint16_t flags) {
    rec *r = nth(GT_REC_API_MEMCPY, 0, i);
    if (!r) {
        fail("copy %d missing", i);
        return;
    }
    gt_rec_api_memcpy *m = r->body;
    char what[64];
    snprintf(what, sizeof what, "copy %d func", i);
    EXPECT_EQ(what, m->c.func, func);
    snprintf(what, sizeof what, "copy %d bytes", i);
    EXPECT_EQ(what, m->bytes, bytes);
    snprintf(what, sizeof what, "copy %d direction", i);
    EXPECT_EQ(what, m->direction, dir);
    snprintf(what, sizeof what, "copy %d src kind", i);
    EXPECT_EQ(what, m->src_kind, src);
    snprintf(what, sizeof what, "copy %d dst kind", i);
    EXPECT_EQ(what, m->dst_kind, dst);
    snprintf(what, sizeof what, "copy %d async", i);
    EXPECT_EQ(what, m->is_async, async);
    snprintf(what, sizeof what, "copy %d flags", i);
    EXPECT_EQ(what, r->flags, flags);
    snprintf(what, sizeof what, "copy %d result", i);
    EXPECT_EQ(what, m->c.result, 0);
}

static void check_runtime(void) {
    const gt_file_header *h = gt_reader_header(reader);
    EXPECT_EQ("runtime version", h->runtime.runtime_version, 13000);
    EXPECT_EQ("driver version", h->runtime.driver_version, 13000);
    EXPECT_EQ("device count", h->runtime.device_count, 1);
    if (strcmp(h->runtime.devices[0].name, "Fake H200") != 0)
        fail("device name '%s'", h->runtime.devices[0].name);
    EXPECT_EQ("sm count", h->runtime.devices[0].sm_count, 132);

    EXPECT_EQ("cudaMalloc records", count(GT_REC_API_ALLOC, GT_FN_cudaMalloc), 2);
    gt_rec_api_alloc *a0 = nth(GT_REC_API_ALLOC, GT_FN_cudaMalloc, 0)->body;
    gt_rec_api_alloc *a1 = nth(GT_REC_API_ALLOC, GT_FN_cudaMalloc, 1)->body;
    EXPECT_EQ("malloc 0 result", a0->c.result, 0);
    EXPECT_EQ("malloc 0 bytes", a0->bytes, 1 << 20);
    EXPECT_EQ("malloc 0 kind", a0->alloc_kind, GT_ALLOC_DEVICE);
    if (!a0->ptr) fail("malloc 0 pointer missing");
    EXPECT_EQ("malloc 1 result (injected failure passed through)", a1->c.result, 2);
    EXPECT_EQ("malloc 1 pointer", a1->ptr, 0);
    EXPECT_EQ("cudaMallocHost", count(GT_REC_API_ALLOC, GT_FN_cudaMallocHost), 1);
    EXPECT_EQ("cudaHostRegister", count(GT_REC_API_ALLOC, GT_FN_cudaHostRegister), 1);
    EXPECT_EQ("cudaHostUnregister", count(GT_REC_API_ALLOC, GT_FN_cudaHostUnregister), 1);
    EXPECT_EQ("cudaFreeHost", count(GT_REC_API_ALLOC, GT_FN_cudaFreeHost), 1);
    gt_rec_api_alloc *fh = nth(GT_REC_API_ALLOC, GT_FN_cudaFreeHost, 0)->body;
    EXPECT_EQ("cudaFreeHost bytes from the pinned table", fh->bytes, 1 << 20);
    EXPECT_EQ("cudaFree", count(GT_REC_API_ALLOC, GT_FN_cudaFree), 2);
    EXPECT_EQ("bad cudaFree result", ((gt_rec_api_alloc *)nth(GT_REC_API_ALLOC, GT_FN_cudaFree, 1)->body)->c.result,
              1);

    EXPECT_EQ("copies", count(GT_REC_API_MEMCPY, 0), 7);
    expect_copy(0, GT_FN_cudaMemcpy, 1 << 20, GT_DIR_H2D, GT_MEM_PAGEABLE, GT_MEM_DEVICE, 0, 0);
    expect_copy(1, GT_FN_cudaMemcpyAsync, 4096, GT_DIR_H2D, GT_MEM_PINNED, GT_MEM_DEVICE, 1, 0);
    expect_copy(2, GT_FN_cudaMemcpyAsync, 4096, GT_DIR_D2H, GT_MEM_DEVICE, GT_MEM_PINNED, 1, 0);
    expect_copy(3, GT_FN_cudaMemcpyAsync, 1000, GT_DIR_H2D, GT_MEM_PINNED, GT_MEM_DEVICE, 1, 0);
    expect_copy(4, GT_FN_cudaMemcpyAsync, 1000, GT_DIR_H2D, GT_MEM_PAGEABLE, GT_MEM_DEVICE, 1, 0);
    expect_copy(5, GT_FN_cudaMemcpyAsync, 512, GT_DIR_H2D, GT_MEM_PINNED, GT_MEM_DEVICE, 1, GT_RF_PTDS);
    expect_copy(6, GT_FN_cudaMemcpy, 2048, GT_DIR_D2H, GT_MEM_DEVICE, GT_MEM_PAGEABLE, 0, 0);
    gt_rec_api_memcpy *c1 = nth(GT_REC_API_MEMCPY, 0, 1)->body;
    if (c1->c.stream == 0) fail("copy 1 stream not recorded");
    EXPECT_EQ("copy 2 stream (default)", ((gt_rec_api_memcpy *)nth(GT_REC_API_MEMCPY, 0, 2)->body)->c.stream, 0);
    EXPECT_EQ("device", c1->c.device, 0);

    EXPECT_EQ("memsets", count(GT_REC_API_MEMSET, 0), 2);
    gt_rec_api_memset *s1 = nth(GT_REC_API_MEMSET, 0, 1)->body;
    EXPECT_EQ("memset value", s1->value, 7);
    EXPECT_EQ("memset bytes", s1->bytes, 200);
    EXPECT_EQ("memset async", s1->is_async, 1);

    EXPECT_EQ("cudaLaunchKernel", count(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernel), 3);
    EXPECT_EQ("__cudaLaunchKernel", count(GT_REC_API_LAUNCH, GT_FN___cudaLaunchKernel), 2);
    EXPECT_EQ("cudaLaunchKernelExC", count(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernelExC), 1);
    for (int i = 0; i < 6; i++) {
        gt_rec_api_launch *l = nth(GT_REC_API_LAUNCH, 0, i)->body;
        if (strcmp(str(l->name_id), "_Z6kernelPf") != 0) fail("launch %d name '%s'", i, str(l->name_id));
    }
    gt_rec_api_launch *l0 = nth(GT_REC_API_LAUNCH, 0, 0)->body;
    EXPECT_EQ("grid x", l0->grid[0], 4);
    EXPECT_EQ("grid y", l0->grid[1], 2);
    EXPECT_EQ("block x", l0->block[0], 128);
    EXPECT_EQ("shared mem", l0->shared_mem, 256);
    gt_rec_api_launch *lx = nth(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernelExC, 0)->body;
    EXPECT_EQ("ExC grid", lx->grid[0], 8);
    EXPECT_EQ("ExC smem", lx->shared_mem, 32);
    if (!lx->c.stream) fail("ExC stream");

    EXPECT_EQ("event record", count(GT_REC_API_SYNC, GT_FN_cudaEventRecord), 1);
    EXPECT_EQ("event sync", count(GT_REC_API_SYNC, GT_FN_cudaEventSynchronize), 1);
    EXPECT_EQ("stream sync", count(GT_REC_API_SYNC, GT_FN_cudaStreamSynchronize), 1);
    EXPECT_EQ("stream query", count(GT_REC_API_SYNC, GT_FN_cudaStreamQuery), 1);
    EXPECT_EQ("device sync", count(GT_REC_API_SYNC, GT_FN_cudaDeviceSynchronize), 1);
    gt_rec_api_sync *ss = nth(GT_REC_API_SYNC, GT_FN_cudaStreamSynchronize, 0)->body;
    EXPECT_EQ("stream sync kind", ss->sync_kind, GT_SYNC_STREAM);
    /* 2 malloc + host + register + unregister + freehost + 2 free, 7 copies, 2 sets, 6 launches,
     * 5 syncs: and nothing else (no call of gputrace's own, no double recording). */
    EXPECT_EQ("API records in all", count_api_records(), 8 + 7 + 2 + 6 + 5);
    check_common_fields();
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: interpose_check CASE DIR\n");
        return 2;
    }
    load(argv[2]);
    const char *c = argv[1];
    if (strcmp(c, "runtime") == 0) check_runtime();
    else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    if (failures) fprintf(stderr, "%d expectation(s) failed in case %s\n", failures, c);
    else printf("ok: %s (%zu records)\n", c, nrecs);
    gt_reader_close(reader);
    for (size_t j = 0; j < nrecs; j++) free(recs[j].body);
    free(recs);
    return failures ? 1 : 0;
}
