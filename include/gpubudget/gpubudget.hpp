// The gpubudget C++ API in one include: the stable surface deployment tools build on.
//
//   load        load_model, load_gpu_preset / custom_gpu, load_vllm_profile, find_config_dir (load.h);
//               models from the Hugging Face cache and the Hub: locate_model, HubOptions (hub.h);
//               this machine's GPUs: detect_nvidia_gpus, gpu_for_detected (gpu_detect.h)
//   describe    Deployment: the `vllm serve` arguments that change memory, with vLLM's names (deployment.h)
//   budget      fit(): per-GPU requested / weights / overheads / KV cache, with each formula (fit.h)
//   solve       FitResult::max_model_len: the largest --max-model-len that fits; fits for the judged one
//   what-ifs    find_remedies (remedies.h), run_sweep (sweep.h), plan_deployments (plan.h)
//   diagnose    read_vllm_log + diagnose_log (vllm_log.h, diagnosis.h)
//
// Conventions on every declaration: sizes are `Bytes` (exact bytes, GiB = 2^30 only in printed text);
// lengths are tokens; functions take inputs by const reference and return values; loaders and fit()
// throw InputError (error.h) naming the file, field or flag and the value; nothing else throws except
// std::bad_alloc. Functions are thread-safe on distinct or const arguments; a FitMemo is not shared
// between threads. docs/api.md has the whole surface and its stability promise.
#pragma once

#include "gpubudget/deployment.h"
#include "gpubudget/diagnosis.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/gpu_detect.h"
#include "gpubudget/hub.h"
#include "gpubudget/launch_command.h"
#include "gpubudget/load.h"
#include "gpubudget/notice.h"
#include "gpubudget/plan.h"
#include "gpubudget/remedies.h"
#include "gpubudget/sweep.h"
#include "gpubudget/version.h"
#include "gpubudget/vllm_args.h"
#include "gpubudget/vllm_log.h"
