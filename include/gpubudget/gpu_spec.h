// A GPU as vLLM sees it: the CUDA-visible total it divides by, not the marketing size.
#pragma once

#include <cstdint>
#include <string>

#include "gpubudget/bytes.h"

namespace gpubudget {

enum class Platform { kCuda, kRocm };

// A CUDA compute capability ("9.0": major 9, minor 0).
struct ComputeCapability {
  int major = 0;
  int minor = 0;
};

struct GpuSpec {
  std::string name;          // preset name ("rtx-pro-6000") or "custom"
  std::string device_name;   // as torch reports it ("NVIDIA H100 80GB HBM3"); vLLM tests it for "a100"
  Bytes memory;              // cudaMemGetInfo total: what vLLM multiplies by gpu_memory_utilization
  std::int64_t nvidia_smi_mib = 0;  // what nvidia-smi / rocm-smi prints as total (0 if unknown)
  Platform platform = Platform::kCuda;
  int compute_capability_major = 0;  // CUDA only; 0 on ROCm
  int compute_capability_minor = 0;
  bool nvlink = true;  // all GPUs of a node on NVLink/xGMI (custom all-reduce possible)
  // Streaming multiprocessors (cudaDevAttrMultiProcessorCount); 0 when the preset does not say. Sizes
  // FlashInfer's two-sided all-to-all workspace.
  std::int64_t multiprocessors = 0;
  std::string memory_source;  // where `memory` comes from
  bool memory_estimated = false;  // `memory` is not measured on this GPU (memory_source says how it is derived)
};

}  // namespace gpubudget
