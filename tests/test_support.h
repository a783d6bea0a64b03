// Helpers shared by the tests: the bundled configs and models.
#pragma once

#include <string>

#include "gpubudget/load.h"

namespace gpubudget::test {

inline ConfigDir configs() { return ConfigDir{GPUBUDGET_TEST_CONFIG_DIR}; }
inline std::string data_dir() { return GPUBUDGET_TEST_DATA_DIR; }
inline ModelSpec bundled(const std::string& id) { return load_model(id, configs()); }

}  // namespace gpubudget::test
