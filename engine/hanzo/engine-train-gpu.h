/* hanzo/engine-train-gpu.h — the engine's face for training on the GPU (issue 26 item 6),
 * in GPU builds only (-Dcuda=enabled / -Dhip=enabled): what learner/gpu-train.c needs of the
 * GPU backend, so that the learner reaches the device through the engine and includes
 * nothing of kernels/ itself.
 *
 *   hanzo/engine-train.h         the CPU training face (weights, GGUF, LoRA sets, ...);
 *   backend-hip/hz-gpu.h         the device, its buffers, weight upload and streams;
 *   kernels/hzk.h                the device ops' entry points, among them the training ops
 *                                (hzk_train_*: the twins of learner/train-ops-decl.h) and
 *                                AdamW, which the engine's backend links.
 *
 * Thread safety: as documented in each header.
 */
#pragma once

#include "hanzo/engine-train.h"
#include "hz-gpu.h"
#include "hzk.h"
