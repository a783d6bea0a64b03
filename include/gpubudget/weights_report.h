// The weights of a deployment as `gpubudget weights` shows them: every pipeline stage's per-GPU bytes,
// grouped by component, decoder layer or tensor, and, when the model folder holds safetensors files,
// the figures derived from their headers beside the config's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/header_weights.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/vllm_profile.h"
#include "gpubudget/weights.h"

namespace gpubudget {

// How the rows of a worker are grouped (`--by`).
enum class WeightsGrouping { kComponent, kLayer, kTensor };
// "component", "layer", "tensor"; static storage.
std::string_view grouping_name(WeightsGrouping grouping);

struct WeightsRow {
  std::string name;       // component, "layer N" / "outside the layers" / "checkpoint only (MTP)", or unit name
  std::string component;  // kTensor only: the unit's component
  Bytes per_gpu;          // config-derived bytes on this worker
  Bytes checkpoint;       // checkpoint bytes, all ranks together
  Bytes header_per_gpu;   // header-derived bytes on this worker (0 without headers)
};

struct WeightsWorker {
  std::int64_t pp_rank = 0;
  std::int64_t first_layer = 0;  // [first_layer, end_layer) decoder layers
  std::int64_t end_layer = 0;
  Bytes config_per_gpu;          // sum of the rows' per_gpu
  std::vector<WeightsRow> rows;  // in model order
  // Per-GPU bytes by component as the report's `source` says (headers when they were read).
  std::vector<ComponentBytes> components;
  std::optional<HeaderComparison> headers;  // when the folder's headers were read
};

struct WeightsReport {
  std::string architecture, model_type, model_source;
  std::string family;  // ModelSpec::family ("generic": sized from the headers, see generic_assumptions)
  std::string gpu;  // preset that decided MXFP4 padding, "" without one
  std::int64_t tensor_parallel_size = 1, pipeline_parallel_size = 1, data_parallel_size = 1;
  bool enable_expert_parallel = false;
  WeightsGrouping by = WeightsGrouping::kComponent;
  Bytes checkpoint;  // checkpoint_bytes(model)
  // What the folder's safetensors files hold ("" / 0 without them).
  bool read_headers = false;
  std::string index_path;
  std::int64_t header_files = 0, header_tensors = 0;
  Bytes header_tensor_bytes;
  std::vector<WeightsWorker> workers;  // one per pipeline stage
  // The worker holding the most weights (the stage that bounds a fit), and its per-GPU bytes as the
  // report's source says: header-derived when the headers were read ("safetensors"), else "config".
  std::size_t binding = 0;
  Bytes per_gpu;
  std::string source;
};

// Builds the report of `model` (already converted with --dtype) under the layout of `deployment`;
// `gpu`, when given, sets the MXFP4 padding of the profile's backend. `headers`: the checkpoint's
// headers, when read. Throws InputError when vLLM would refuse the layout (make_parallel_layout).
WeightsReport weights_report(const ModelSpec& model, const std::optional<GpuSpec>& gpu, const Deployment& deployment,
                             const VllmProfile& profile, WeightsGrouping by,
                             const std::optional<CheckpointHeaders>& headers);

}  // namespace gpubudget
