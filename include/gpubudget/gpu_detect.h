// This machine's NVIDIA GPUs, as nvidia-smi reports them (`fit --gpu auto`, docs/gpus.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/gpu_spec.h"

namespace gpubudget {

struct ConfigDir;

// One row of `nvidia-smi --query-gpu=name,memory.total,memory.used,compute_cap --format=csv`.
struct DetectedGpu {
  std::int64_t index = 0;                      // nvidia-smi's order (CUDA_VISIBLE_DEVICES applied)
  std::string name;                            // "NVIDIA H100 80GB HBM3"
  std::optional<std::int64_t> total_mib;       // nullopt where nvidia-smi prints "[N/A]" (GB10)
  std::optional<std::int64_t> used_mib;
  std::optional<ComputeCapability> compute_capability;
};

// The command gpubudget runs (from PATH).
inline constexpr const char* kNvidiaSmiQuery[] = {"nvidia-smi", "--query-gpu=name,memory.total,memory.used,compute_cap",
                                                  "--format=csv,noheader,nounits"};

// Parses nvidia-smi's CSV (with or without the header line and the " MiB" units). InputError naming
// the line for a row that is not four fields.
std::vector<DetectedGpu> parse_nvidia_smi_csv(std::string_view text);

// Runs nvidia-smi (at most `timeout`) and parses its answer; keeps only the GPUs CUDA_VISIBLE_DEVICES
// names when it lists indices. InputError when nvidia-smi is not on PATH, fails (no driver), times out
// or lists no GPU.
std::vector<DetectedGpu> detect_nvidia_gpus(std::chrono::milliseconds timeout = std::chrono::seconds(20));

// The GPU a detected one is for budgeting: its preset (by device name, gpu-names.json), with the
// CUDA-visible total moved by the difference between this card's nvidia-smi total and the preset's
// (ECC on or off); else a custom GPU whose CUDA-visible total is estimated as nvidia-smi's total less
// 1% (the gap the presets show is 0.4 to 1.7%). memory_source says which.
GpuSpec gpu_for_detected(const DetectedGpu& detected, const ConfigDir& configs);

}  // namespace gpubudget
