// The command line run in process, as the tests of tests/cli/ call it: the exit status and both streams.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace gpubudget::test {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

// `gpubudget --config-dir CONFIG_DIR ARGS...` (the bundled configs by default).
inline CliRun run_cli_with(const std::filesystem::path& config_dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"--config-dir", config_dir.string()});
  std::ostringstream out, err;
  const int code = cli::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

inline CliRun run_cli(std::vector<std::string> args) { return run_cli_with(GPUBUDGET_TEST_CONFIG_DIR, std::move(args)); }

}  // namespace gpubudget::test
