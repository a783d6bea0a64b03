// "Did you mean": the nearest known name to a mistyped command or flag, and the check that runs before
// CLI11 parses, so that `gpubudget fti` and `--max-model-length` are answered with the name meant
// (exit 2) instead of CLI11's "A subcommand is required" / "arguments were not expected".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace gpubudget::cli {

// The name in `known` closest to `typed`: at most 2 edits away (insertions, deletions, substitutions,
// adjacent swaps), or the only one that `typed` is a prefix of or begins with. nullopt when none is.
std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& known);

// Throws UsageError for the first word of `args` (in command-line order, before `--`) that is neither a
// subcommand of `app` where one is expected nor a long flag of the command it follows, naming the
// nearest known name. Values of flags are not checked here (CLI11 does that).
void check_command_and_flag_names(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace gpubudget::cli
