// Fuzzes the command line: input = arguments separated by newlines, run in process against the
// bundled configs. Any exit status but 4 (internal error) is fine; a crash, a hang or exit 4 is a bug.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"--config-dir", GPUBUDGET_FUZZ_CONFIG_DIR};
  std::string word;
  for (std::size_t i = 0; i < size && args.size() < 64; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(word);
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  args.push_back(word);
  // Commands that read standard input or write files are not fuzzed here (they have their own targets).
  for (const auto& a : args) {
    if (a == "-" || a == "-o" || a == "--output" || a == "--emit-observation" || a == "completion") return 0;
  }
  std::ostringstream out, err;
  if (gpubudget::cli::run_cli(args, out, err) == 4) std::abort();
  return 0;
}
