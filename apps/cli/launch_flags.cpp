#include "launch_flags.h"

#include <CLI/CLI.hpp>

namespace gpubudget::cli {

void add_launch_flags(CLI::App& app, LaunchOptions& f) {
  app.add_option("--speculative-config", f.speculative_config,
                 "JSON: method (mtp, eagle3, ngram ...), num_speculative_tokens, model (the draft)");
  app.add_flag("--enable-lora", f.enable_lora, "LoRA adapter slots on every adapted module");
  app.add_option("--max-loras", f.max_loras, "LoRA slots on the GPU (default 1)");
  app.add_option("--max-lora-rank", f.max_lora_rank, "LoRA rank the slots hold (default 16)");
  app.add_option("--lora-dtype", f.lora_dtype, "auto (the model dtype), float16 or bfloat16");
  app.add_flag("--fully-sharded-loras", f.fully_sharded_loras, "split the LoRA rank over TP as well");
  app.add_option("--lora-target-modules", f.lora_target_modules, "module suffixes to adapt (default: all), comma-separated")
      ->delimiter(',');
  app.add_option("-q,--quantization", f.quantization, "fp8: quantize an unquantized checkpoint at load");
  app.add_option("--cpu-offload-gb", f.cpu_offload_gb, "GiB of weights per GPU kept in CPU memory");
  app.add_option("--offload-group-size", f.offload_group_size,
                 "prefetch offloader (vLLM 0.17+): of every N decoder layers the last --offload-num-in-group live "
                 "in CPU memory");
  app.add_option("--offload-num-in-group", f.offload_num_in_group, "layers offloaded per group (default 1)");
  app.add_option("--offload-prefetch-step", f.offload_prefetch_step, "GPU slots for prefetched layers (default 1)");
  app.add_option("--limit-mm-per-prompt", f.limit_mm_per_prompt, "JSON: items per modality; all 0 drops the tower");
  app.add_flag("--language-model-only", f.language_model_only, "no vision tower, no encoder profile");
  app.add_option("--all2all-backend", f.all2all_backend,
                 "expert-parallel all-to-all with DP > 1: DeepEP buffers counted; others warned");
  app.add_option("--mm-processor-kwargs", f.mm_processor_kwargs,
                 "JSON: processor overrides; max_pixels / size.longest_edge size the Qwen2-VL family's encoder profile");
  app.add_option("--mm-encoder-tp-mode", f.mm_encoder_tp_mode, "weights (default) or data: the tower whole per rank");
  app.add_option("--attention-backend", f.attention_backend, "the attention backend vLLM must use");
  app.add_option("-O,--optimization-level", f.optimization_level, "0-3; -O0: no compile and no CUDA graphs (vLLM 0.13+)");
  app.add_option("--compilation-config", f.compilation_config,
                 "JSON; cudagraph_mode, cudagraph_capture_sizes, max_cudagraph_capture_size (other keys are warned)");
  app.add_option("--cudagraph-capture-sizes", f.cudagraph_capture_sizes,
                 "batch sizes (tokens) captured as CUDA graphs, e.g. 1,2,4,8 (default: the version's list)")
      ->delimiter(',');
  app.add_option("--max-cudagraph-capture-size", f.max_cudagraph_capture_size,
                 "largest CUDA-graph capture size (default: min(2 x max_num_seqs x (1 + k), 512))");
}

}  // namespace gpubudget::cli
