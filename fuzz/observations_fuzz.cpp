// Fuzzes the observation reader behind `gpubudget calibrate` and the fit it runs: input = the text of
// an observations JSONL file. Rows that replay are calibrated against the newest profile. A row either
// yields a clean InputError (naming the row and field) or a profile that loads; never a crash, a
// non-finite coefficient or another exception.
#include <string>

#include "fuzz_target.h"
#include "gpubudget/calibrate.h"
#include "gpubudget/error.h"
#include "gpubudget/load.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubudget::ConfigDir configs{GPUBUDGET_FUZZ_CONFIG_DIR};
  static const std::string profile_path = gpubudget::load_vllm_profile("", configs).source;
  static const std::string profile_text = [] {
    std::string text;
    std::FILE* f = std::fopen(profile_path.c_str(), "rb");
    char buffer[4096];
    for (std::size_t n; f != nullptr && (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
    if (f != nullptr) std::fclose(f);
    return text;
  }();
  try {
    const auto rows = gpubudget::replay_observation_text(std::string(reinterpret_cast<const char*>(data), size),
                                                         "fuzz.jsonl", "", configs);
    (void)gpubudget::calibrate_profile(rows, profile_text, profile_path);
  } catch (const gpubudget::InputError&) {
  }
  return 0;
}
