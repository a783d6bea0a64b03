#include "suggestions.h"

#include <algorithm>
#include <cstddef>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_errors.h"

namespace gpubudget::cli {
namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

constexpr std::size_t kMaxEdits = 2;
constexpr std::size_t kLongestChecked = 64;  // longer words are not compared (the cost is quadratic)

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> long_flags(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* level = &app; level != nullptr; level = level->get_parent()) {
    for (const CLI::Option* option : level->get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    }
  }
  return names;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  const auto nearest = nearest_name(typed, known);
  return nearest ? fmt::format("; did you mean {}?", *nearest) : std::string();
}

}  // namespace

std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& known) {
  if (typed.empty() || typed.size() > kLongestChecked) return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_distance = kMaxEdits + 1;
  std::vector<std::string> prefixed;  // names `typed` starts, or that start `typed`
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(typed, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
    if (name.rfind(typed, 0) == 0 || typed.rfind(name, 0) == 0) prefixed.push_back(name);
  }
  if (best) return best;
  if (prefixed.size() == 1) return prefixed.front();
  return std::nullopt;
}

void check_command_and_flag_names(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = &app;
  bool expect_subcommand = true;  // the top level takes exactly one
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return;
    if (word.rfind("--", 0) == 0) {
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* option = nullptr;
      for (const CLI::App* level = command; level != nullptr && option == nullptr; level = level->get_parent()) {
        option = level->get_option_no_throw(name);
      }
      if (option == nullptr) {
        const std::string where = command == &app ? "gpubudget" : command->get_name();
        throw UsageError(fmt::format("{}: unknown flag {}{} (see gpubudget {}--help)", where, name,
                                     did_you_mean(name, long_flags(*command)),
                                     command == &app ? "" : command->get_name() + " "));
      }
      // A flag's value is the next word when it takes one and `=` did not give it.
      if (word.find('=') == std::string::npos && option->get_type_size() != 0 && i + 1 < args.size()) ++i;
      continue;
    }
    if (expect_subcommand && word.rfind('-', 0) != 0) {
      const std::vector<std::string> names = subcommand_names(app);
      if (std::find(names.begin(), names.end(), word) == names.end()) {
        throw UsageError(fmt::format("unknown command '{}'{} (commands: {})", word, did_you_mean(word, names),
                                     fmt::join(names, ", ")));
      }
      command = app.get_subcommand(word);
      expect_subcommand = false;
    }
  }
}

}  // namespace gpubudget::cli
