// The libFuzzer entry point every fuzz target defines. Built two ways (fuzz/CMakeLists.txt): with
// clang's -fsanitize=fuzzer for fuzzing (scripts/fuzz.sh), and with replay_main.cpp as an ordinary
// program that runs the committed corpus in the test suite.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

#include <cstdlib>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget::fuzz {

// The least profile fit() runs with: one batch-defaults row and the two overhead coefficients, so that
// a fuzzed model is judged without reading configs/vllm.
inline VllmProfile minimal_profile() {
  VllmProfile p;
  p.version = "fuzz";
  p.batch_defaults.push_back({});
  p.batch_defaults.back().max_num_batched_tokens = 8192;
  p.batch_defaults.back().max_num_seqs = 1024;
  p.batch_defaults.back().llm_class_max_num_batched_tokens = 16384;
  p.batch_defaults.back().llm_class_max_num_seqs = 1024;
  p.overheads.sampler_bytes_per_logit = 15.2;
  p.overheads.forward_activation_factor = 1.45;
  return p;
}

// fit() of a fuzzed model at TP 1, 2 and 8: numbers or a clean InputError, never anything else.
inline void fit_at_a_few_tps(const ModelSpec& model, const GpuSpec& gpu, const VllmProfile& profile) {
  for (const std::int64_t tp : {1, 2, 8}) {
    Deployment d;
    d.tensor_parallel_size = tp;
    try {
      (void)fit(model, gpu, d, profile);
    } catch (const InputError&) {
    }
  }
}

// A fuzzed model name that looks like a Hub id must not reach the network or the user's caches: every
// target runs offline, with caches of its own (set before the first input).
inline const bool kOffline = [] {
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/gpubudget-fuzz-cache", 1);
  ::setenv("HF_HUB_CACHE", "/tmp/gpubudget-fuzz-cache/hf", 1);
  return true;
}();

}  // namespace gpubudget::fuzz
