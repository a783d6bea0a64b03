// Helpers shared by the tests: the bundled configs and models, and error expectations.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "gpubudget/error.h"
#include "gpubudget/load.h"
#include "gpubudget/parallel_layout.h"
#include "gpubudget/weights.h"

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

// The bytes of `c` in a weights breakdown (0 when the component is absent).
inline Bytes component(const WeightsBreakdown& w, Component c) {
  for (const auto& item : w.components) {
    if (item.component == c) return item.bytes;
  }
  return Bytes(0);
}

// Expects `action` to throw an `Error` (InputError, ArgumentError, ...) whose message contains
// `substring` (the type and the text).
template <class Error, class Action>
void expect_error(Action&& action, const std::string& substring) {
  try {
    action();
    ADD_FAILURE() << "no exception; expected one containing: " << substring;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << substring;
  }
}

template <class Action>
void expect_input_error(Action&& action, const std::string& substring) {
  expect_error<InputError>(std::forward<Action>(action), substring);
}

// An error in a launch argument itself (the CLI's exit 2).
template <class Action>
void expect_argument_error(Action&& action, const std::string& substring) {
  expect_error<ArgumentError>(std::forward<Action>(action), substring);
}

}  // namespace gpubudget::test
