/* cupti_cublas_threads_app — several host threads, each with its own stream and cuBLAS handle,
 * calling cublasSgemv and launching a kernel of their own every round, as sample_apps/
 * managed_gemv.cu does from OpenMP threads (issue 30). With FAKE_CUBLAS_GEMV_MEET=THREADS the
 * fake libcublas makes every round's gemv calls overlap, so each gemv kernel lies between the
 * anchors of every thread's call: only the streams tell them apart.
 *   cupti_cublas_threads_app [THREADS] [ROUNDS] [one-stream] [sgemm]
 * one-stream: every thread on the default stream (nothing to tell the calls apart by); sgemm: a
 * 64x64x64 cublasSgemm in place of the gemv (fp32 matrix products the amp advice must see, where
 * the gemv's matrix-vector products are not for tensor cores). */
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16

/* The fake cudart names kernels registered this way, as nvcc's registration code does. */
void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bdim, dim3 *gdim, int *wsize);

static void scale_relu(void) {}

static int rounds;
static int one_stream, sgemm;

static cublasStatus_t product(cublasHandle_t blas, const float *a, const float *x, float *y)
{
    const float one = 1.0f, zero = 0.0f;
    if (sgemm)
        return cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, 64, a, 64, &zero,
                              y, 64);
    return cublasSgemv_v2(blas, CUBLAS_OP_N, 64, 64, &one, a, 64, x, 1, &zero, y, 1);
}

static void *worker(void *arg)
{
    (void)arg;
    cudaStream_t stream = 0;
    cublasHandle_t blas;
    if ((!one_stream && cudaStreamCreate(&stream) != cudaSuccess) ||
        cublasCreate_v2(&blas) != CUBLAS_STATUS_SUCCESS ||
        cublasSetStream_v2(blas, stream) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "setup failed\n");
        return (void *)1;
    }
    static float a[64 * 64], x[64], y[64 * 64];
    float *py = y;
    int n = 64;
    void *args[] = {&py, &n};
    for (int r = 0; r < rounds; r++) {
        if (product(blas, a, x, y) != CUBLAS_STATUS_SUCCESS)
            return (void *)1;
        cudaLaunchKernel((const void *)scale_relu, (dim3){1, 1, 1}, (dim3){64, 1, 1}, args, 0,
                         stream);
        cudaStreamSynchronize(stream);
    }
    cublasDestroy_v2(blas);
    if (stream)
        cudaStreamDestroy(stream);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    rounds = argc > 2 ? atoi(argv[2]) : 10;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "one-stream"))
            one_stream = 1;
        else if (!strcmp(argv[i], "sgemm"))
            sgemm = 1;
        else
            threads = 0; /* the usage below */
    }
    if (threads < 1 || threads > MAX_THREADS || rounds < 1) {
        fprintf(stderr, "usage: %s [THREADS 1..%d] [ROUNDS] [one-stream] [sgemm]\n", argv[0],
                MAX_THREADS);
        return 2;
    }
    __cudaRegisterFunction(NULL, (const char *)scale_relu, "_Z10scale_reluPfi", "_Z10scale_reluPfi",
                           -1, NULL, NULL, NULL, NULL, NULL);
    pthread_t t[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    int bad = 0;
    for (int i = 0; i < threads; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        bad |= rc != NULL;
    }
    cudaDeviceSynchronize();
    printf("%d threads x %d rounds%s: %s\n", threads, rounds, one_stream ? " (one stream)" : "",
           bad ? "failed" : "done");
    return bad;
}
