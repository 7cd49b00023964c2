/* wrap_cudnn_ops.c — cuDNN's legacy entry points other than convolutions that PyTorch calls
 * (issue 30): batch norm (aten/native/cudnn/BatchNorm.cpp: ForwardTrainingEx in training,
 * ForwardInference in eval, BackwardEx), the generic normalization calls, RNNs (RNN.cpp: the v8
 * API), CTC loss (LossCTC.cpp) and grid sampling (GridSampler.cpp, AffineGridGenerator.cpp).
 * Without them, a ResNet's batch-norm kernels (cudnn::bn_fw_tr_*, bn_fw_inf_*, bn_bw_*) came "from
 * calls no wrapper sees": 1,600 of 13,838 kernels of a training run on an H200.
 *
 * Each wrapper records one GT_REC_API_CUDNN (handle, stream, workspace; no signature: the
 * analyzer's cuDNN table is about convolutions) and brackets the call with the anchors, so the
 * kernels cuDNN launches through its own static runtime link to it with its call site. */
#include "wrap_cudnn.h"

/* The normalization types are marked deprecated in cuDNN 9's headers; wrapping them is not a
 * use of the deprecated API, and the wrappers must keep the exact signatures. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define OP_BODY(fnid, call_real, ws, algo_v)                                                       \
    GT_CUDNN_CALL(fnid, call_real)                                                                 \
    gt_rec_api_cudnn f = {.handle = (uint64_t)(uintptr_t)h,                                        \
                          .algo = (int32_t)(algo_v),                                               \
                          .math_type = -1,                                                         \
                          .workspace_bytes = (uint64_t)(ws)};                                      \
    gt_cudnn_record(&c, t_end, flags, r, gt_cudnn_handle_stream(h), &f);                           \
    gt_fast_guard_leave();                                                                         \
    return r;

/* The implementation and the entry point of `name`: params are cuDNN's parameter list (the handle
 * named h), args its names; ws the workspace bytes the call was given, algo its algorithm or -1. */
#define OP_ENTRY(name, ws, algo, params, args)                                                     \
    static cudnnStatus_t name##_impl(gt_sym *s, uint16_t flags, GT_UNPAREN params)                 \
    {                                                                                              \
        CUDNN_REAL(s, cudnnStatus_t(*) params)                                                     \
        OP_BODY(GT_FN_##name, real args, ws, algo)                                                 \
    }                                                                                              \
    GT_ENTRY(cudnnStatus_t, name, GT_LIB_CUDNN, name##_impl, 0, params, args)

typedef const cudnnTensorDescriptor_t td;
typedef const void *cv;
typedef void *vp;
typedef cudnnActivationDescriptor_t ad;

/* ------------------------------------------------------------------ batch norm */

OP_ENTRY(cudnnBatchNormalizationForwardTraining, 0, -1,
         (cudnnHandle_t h, cudnnBatchNormMode_t mode, cv alpha, cv beta, td xd, cv x, td yd, vp y,
          td sd, cv scale, cv bias, double factor, vp run_mean, vp run_var, double eps,
          vp save_mean, vp save_inv_var),
         (h, mode, alpha, beta, xd, x, yd, y, sd, scale, bias, factor, run_mean, run_var, eps,
          save_mean, save_inv_var))
OP_ENTRY(cudnnBatchNormalizationForwardTrainingEx, wss, -1,
         (cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, cv alpha, cv beta,
          td xd, cv x, td zd, cv z, td yd, vp y, td sd, cv scale, cv bias, double factor,
          vp run_mean, vp run_var, double eps, vp save_mean, vp save_inv_var, ad act, vp ws,
          size_t wss, vp reserve, size_t reserve_size),
         (h, mode, ops, alpha, beta, xd, x, zd, z, yd, y, sd, scale, bias, factor, run_mean,
          run_var, eps, save_mean, save_inv_var, act, ws, wss, reserve, reserve_size))
OP_ENTRY(cudnnBatchNormalizationForwardInference, 0, -1,
         (cudnnHandle_t h, cudnnBatchNormMode_t mode, cv alpha, cv beta, td xd, cv x, td yd, vp y,
          td sd, cv scale, cv bias, cv mean, cv var, double eps),
         (h, mode, alpha, beta, xd, x, yd, y, sd, scale, bias, mean, var, eps))
OP_ENTRY(cudnnBatchNormalizationBackward, 0, -1,
         (cudnnHandle_t h, cudnnBatchNormMode_t mode, cv a_data, cv b_data, cv a_param, cv b_param,
          td xd, cv x, td dyd, cv dy, td dxd, vp dx, td sd, cv scale, vp dscale, vp dbias,
          double eps, cv save_mean, cv save_inv_var),
         (h, mode, a_data, b_data, a_param, b_param, xd, x, dyd, dy, dxd, dx, sd, scale, dscale,
          dbias, eps, save_mean, save_inv_var))
OP_ENTRY(cudnnBatchNormalizationBackwardEx, wss, -1,
         (cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, cv a_data, cv b_data,
          cv a_param, cv b_param, td xd, cv x, td yd, cv y, td dyd, cv dy, td dzd, vp dz, td dxd,
          vp dx, td sd, cv scale, cv bias, vp dscale, vp dbias, double eps, cv save_mean,
          cv save_inv_var, ad act, vp ws, size_t wss, vp reserve, size_t reserve_size),
         (h, mode, ops, a_data, b_data, a_param, b_param, xd, x, yd, y, dyd, dy, dzd, dz, dxd, dx,
          sd, scale, bias, dscale, dbias, eps, save_mean, save_inv_var, act, ws, wss, reserve,
          reserve_size))

/* ------------------------------------------------------------------ normalization */

OP_ENTRY(cudnnNormalizationForwardTraining, wss, algo,
         (cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, cv alpha,
          cv beta, td xd, cv x, td sd, cv scale, cv bias, double factor, td mvd, vp run_mean,
          vp run_var, double eps, vp save_mean, vp save_inv_var, ad act, td zd, cv z, td yd, vp y,
          vp ws, size_t wss, vp reserve, size_t reserve_size, int groups),
         (h, mode, ops, algo, alpha, beta, xd, x, sd, scale, bias, factor, mvd, run_mean, run_var,
          eps, save_mean, save_inv_var, act, zd, z, yd, y, ws, wss, reserve, reserve_size, groups))
OP_ENTRY(cudnnNormalizationForwardInference, 0, algo,
         (cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, cv alpha,
          cv beta, td xd, cv x, td sd, cv scale, cv bias, td mvd, cv mean, cv var, td zd, cv z,
          ad act, td yd, vp y, double eps, int groups),
         (h, mode, ops, algo, alpha, beta, xd, x, sd, scale, bias, mvd, mean, var, zd, z, act, yd,
          y, eps, groups))
OP_ENTRY(cudnnNormalizationBackward, wss, algo,
         (cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo,
          cv a_data, cv b_data, cv a_param, cv b_param, td xd, cv x, td yd, cv y, td dyd, cv dy,
          td dzd, vp dz, td dxd, vp dx, td sd, cv scale, cv bias, vp dscale, vp dbias, double eps,
          td mvd, cv save_mean, cv save_inv_var, ad act, vp ws, size_t wss, vp reserve,
          size_t reserve_size, int groups),
         (h, mode, ops, algo, a_data, b_data, a_param, b_param, xd, x, yd, y, dyd, dy, dzd, dz, dxd,
          dx, sd, scale, bias, dscale, dbias, eps, mvd, save_mean, save_inv_var, act, ws, wss,
          reserve, reserve_size, groups))

/* ------------------------------------------------------------------ RNN (v8 API) */

typedef cudnnRNNDataDescriptor_t rd;
OP_ENTRY(cudnnRNNForward, wss, -1,
         (cudnnHandle_t h, cudnnRNNDescriptor_t rnn, cudnnForwardMode_t mode, const int32_t *lens,
          rd xd, cv x, rd yd, vp y, cudnnTensorDescriptor_t hd, cv hx, vp hy,
          cudnnTensorDescriptor_t cd, cv cx, vp cy, size_t wsize, cv w, size_t wss, vp ws,
          size_t rss, vp reserve),
         (h, rnn, mode, lens, xd, x, yd, y, hd, hx, hy, cd, cx, cy, wsize, w, wss, ws, rss,
          reserve))
OP_ENTRY(cudnnRNNBackwardData_v8, wss, -1,
         (cudnnHandle_t h, cudnnRNNDescriptor_t rnn, const int32_t *lens, rd yd, cv y, cv dy, rd xd,
          vp dx, cudnnTensorDescriptor_t hd, cv hx, cv dhy, vp dhx, cudnnTensorDescriptor_t cd,
          cv cx, cv dcy, vp dcx, size_t wsize, cv w, size_t wss, vp ws, size_t rss, vp reserve),
         (h, rnn, lens, yd, y, dy, xd, dx, hd, hx, dhy, dhx, cd, cx, dcy, dcx, wsize, w, wss, ws,
          rss, reserve))
OP_ENTRY(cudnnRNNBackwardWeights_v8, wss, -1,
         (cudnnHandle_t h, cudnnRNNDescriptor_t rnn, cudnnWgradMode_t add, const int32_t *lens,
          rd xd, cv x, cudnnTensorDescriptor_t hd, cv hx, rd yd, cv y, size_t wsize, vp dw,
          size_t wss, vp ws, size_t rss, vp reserve),
         (h, rnn, add, lens, xd, x, hd, hx, yd, y, wsize, dw, wss, ws, rss, reserve))

/* ------------------------------------------------------------------ CTC loss */

OP_ENTRY(cudnnCTCLoss, wss, algo,
         (cudnnHandle_t h, td pd, cv probs, const int *labels, const int *label_lens,
          const int *input_lens, vp costs, td gd, vp grads, cudnnCTCLossAlgo_t algo,
          cudnnCTCLossDescriptor_t ctc, vp ws, size_t wss),
         (h, pd, probs, labels, label_lens, input_lens, costs, gd, grads, algo, ctc, ws, wss))
OP_ENTRY(cudnnCTCLoss_v8, wss, algo,
         (cudnnHandle_t h, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctc, td pd, cv probs,
          const int *labels, const int *label_lens, const int *input_lens, vp costs, td gd,
          vp grads, size_t wss, vp ws),
         (h, algo, ctc, pd, probs, labels, label_lens, input_lens, costs, gd, grads, wss, ws))

/* ------------------------------------------------------------------ spatial transformer */

typedef cudnnSpatialTransformerDescriptor_t sd_t;
OP_ENTRY(cudnnSpatialTfGridGeneratorForward, 0, -1,
         (cudnnHandle_t h, const sd_t st, cv theta, vp grid), (h, st, theta, grid))
OP_ENTRY(cudnnSpatialTfGridGeneratorBackward, 0, -1,
         (cudnnHandle_t h, const sd_t st, cv dgrid, vp dtheta), (h, st, dgrid, dtheta))
OP_ENTRY(cudnnSpatialTfSamplerForward, 0, -1,
         (cudnnHandle_t h, sd_t st, cv alpha, td xd, cv x, cv grid, cv beta,
          cudnnTensorDescriptor_t yd, vp y),
         (h, st, alpha, xd, x, grid, beta, yd, y))
OP_ENTRY(cudnnSpatialTfSamplerBackward, 0, -1,
         (cudnnHandle_t h, sd_t st, cv alpha, td xd, cv x, cv beta, td dxd, vp dx, cv alpha_grid,
          td dyd, cv dy, cv grid, cv beta_grid, vp dgrid),
         (h, st, alpha, xd, x, beta, dxd, dx, alpha_grid, dyd, dy, grid, beta_grid, dgrid))
