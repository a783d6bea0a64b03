// The launch options' command-line flags, shared by fit and sweep (the library's LaunchOptions,
// launch_options.h, with vLLM's names; docs/cli.md §Launch options).
#pragma once

#include "gpubudget/launch_options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gpubudget::cli {

void add_launch_flags(CLI::App& app, LaunchOptions& options);

}  // namespace gpubudget::cli
