// vLLM's launch options beyond the layout and the KV cache, as a launch line gives them (vLLM's
// spellings), and what they make of a deployment: speculative decoding, LoRA slots, online
// quantization, weight offload, the vision tower's mode, the attention backend, the all-to-all
// backend and the compilation settings (docs/cli.md §Launch options).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/notice.h"

namespace gpubudget {

struct LaunchOptions {
  std::string speculative_config;   // --speculative-config JSON
  bool enable_lora = false;         // --enable-lora
  std::int64_t max_loras = 1;       // --max-loras
  std::int64_t max_lora_rank = 16;  // --max-lora-rank
  std::string lora_dtype = "auto";  // --lora-dtype
  bool fully_sharded_loras = false;
  std::vector<std::string> lora_target_modules;
  std::string quantization;         // -q / --quantization ("" = the checkpoint's)
  double cpu_offload_gb = 0;
  std::string limit_mm_per_prompt;  // --limit-mm-per-prompt JSON
  std::string mm_processor_kwargs;  // --mm-processor-kwargs JSON
  bool language_model_only = false;
  std::string mm_encoder_tp_mode = "weights";
  std::string attention_backend;    // --attention-backend
  std::string all2all_backend;      // --all2all-backend ("" = vLLM's default or VLLM_ALL2ALL_BACKEND)
  std::int64_t optimization_level = -1;  // -O / --optimization-level (-1: not given)
  std::string compilation_config;   // --compilation-config JSON
  std::vector<std::int64_t> cudagraph_capture_sizes;  // --cudagraph-capture-sizes (tokens)
  std::int64_t max_cudagraph_capture_size = 0;        // --max-cudagraph-capture-size (0: not given)
  std::int64_t offload_group_size = 0;                // --offload-group-size (0: no prefetch offloader)
  std::int64_t offload_num_in_group = 1;              // --offload-num-in-group
  std::int64_t offload_prefetch_step = 1;             // --offload-prefetch-step
};

// The options as a `vllm serve` line takes them (" --speculative-config '{...}' --enable-lora ..."), ""
// when none was given; JSON values single-quoted for a POSIX shell.
std::string launch_options_for_vllm(const LaunchOptions& options);

// Reads a model the way the caller reads its own (a bundled id, a folder, a Hub id).
using ModelLoader = std::function<ModelSpec(const std::string& model)>;

// Parses the options into `d` (`model` says which modalities its tower serves); `load_draft` reads the
// draft checkpoint --speculative-config names (empty: such a draft is an InputError); what is read with a caveat is appended to `warnings`
// (one sentence each, without a "warning: " prefix). Throws ArgumentError / InputError naming the flag,
// the key and the value.
void apply_launch_options(const LaunchOptions& options, const ModelSpec& model, const ModelLoader& load_draft,
                          std::vector<Notice>& warnings, Deployment& d);

}  // namespace gpubudget
