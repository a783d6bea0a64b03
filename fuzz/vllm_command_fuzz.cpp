// Fuzzes the pasted `vllm serve ...` translation and vLLM's short-flag expansion. Input: words
// separated by newlines.
#include <string>
#include <vector>

#include "gpubudget/argument_values.h"
#include "gpubudget/engine_args.h"
#include "fuzz_target.h"
#include "cli_errors.h"
#include "gpubudget/error.h"
#include "gpubudget/vllm_command.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words(1);
  for (std::size_t i = 0; i < size && words.size() < 4096; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      words.emplace_back();
    } else {
      words.back().push_back(c);
    }
  }
  try {
    static const gpubudget::EngineArgs engine_args =
        gpubudget::load_engine_args(gpubudget::ConfigDir{GPUBUDGET_FUZZ_CONFIG_DIR});
    const auto command = gpubudget::translate_vllm_command(words, engine_args);
    (void)gpubudget::expand_vllm_short_flags(command.flags);
  } catch (const gpubudget::cli::UsageError&) {
  } catch (const gpubudget::InputError&) {
  }
  return 0;
}
