// Helpers shared by the tests: the bundled configs and models.
#pragma once

#include <string>

#include "gpubudget/load.h"
#include "gpubudget/parallel_layout.h"

namespace gpubudget::test {

inline ConfigDir configs() { return ConfigDir{GPUBUDGET_TEST_CONFIG_DIR}; }
inline std::string data_dir() { return GPUBUDGET_TEST_DATA_DIR; }
inline ModelSpec bundled(const std::string& id) { return load_model(id, configs()); }
// Stage 0 of `model` at tensor parallel `tp` (nothing else set).
inline ParallelLayout layout_for(const ModelSpec& model, std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  return make_parallel_layout(model, d, 0);
}

}  // namespace gpubudget::test
