// gpubudget_accuracy: writes the accuracy report (docs/accuracy.md) to stdout.
//   gpubudget_accuracy [OBSERVATIONS.jsonl [MODEL_ALIASES.json [CONFIG_DIR]]]
#include <iostream>

#include "gpubudget/error.h"
#include "accuracy_report.h"
#include "out_of_sample.h"

#ifndef GPUBUDGET_SOURCE_DIR
#define GPUBUDGET_SOURCE_DIR "."
#endif

int main(int argc, char** argv) {
  const std::string source = GPUBUDGET_SOURCE_DIR;
  const std::string observations = argc > 1 ? argv[1] : source + "/tests/data/observations/vllm-runs.jsonl";
  const std::string aliases = argc > 2 ? argv[2] : source + "/tests/data/observations/model_aliases.json";
  const std::string config_dir = argc > 3 ? argv[3] : source + "/configs";
  try {
    const gpubudget::ConfigDir configs{config_dir};
    const auto rows = gpubudget::replay_observations(observations, aliases, configs);
    const auto by_model = gpubudget::leave_one_group_out(rows, observations, aliases, configs, gpubudget::model_group);
    const auto by_gpu = gpubudget::leave_one_group_out(rows, observations, aliases, configs, gpubudget::gpu_group);
    std::cout << gpubudget::accuracy_markdown(rows, by_model, by_gpu);
  } catch (const std::exception& e) {
    std::cerr << "gpubudget_accuracy: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
