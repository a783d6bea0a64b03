// module_name_regex.h with std::regex (ECMAScript grammar): the WebAssembly build's matcher, which has
// no RE2. ECMAScript reads the patterns real quantization configs hold (`.*`, `\d+`, classes,
// alternation, `$`) as Python does; Python-only syntax it lacks — `(?P<name>…)`, inline flags `(?i)`,
// `\A`, `\Z` — is refused with the pattern named, never matched differently. Unlike RE2, std::regex
// backtracks: a pattern that repeats a repetition ("(.*)*") is refused, names are module paths (tens of
// characters) and patterns are capped at kMaxModuleNamePatternBytes.
#include <regex>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "core/module_name_regex.h"

namespace gpubudget::detail {
namespace {

class StdModuleNameRegex final : public ModuleNameRegex {
 public:
  explicit StdModuleNameRegex(const std::string& regex) : regex_(regex, std::regex::ECMAScript) {}
  [[nodiscard]] bool matches_prefix(std::string_view name) const override {
    // match_continuous anchors the search at the name's start, as re.match does.
    return std::regex_search(name.begin(), name.end(), regex_, std::regex_constants::match_continuous);
  }

 private:
  std::regex regex_;
};

std::string shown(const std::string& pattern) { return pattern.size() > 80 ? pattern.substr(0, 77) + "..." : pattern; }

bool is_repetition(char c) { return c == '*' || c == '+' || c == '{'; }

// Whether a group that holds a repetition is itself repeated — "(.*)*", "(a+b)+", "(x|y*){2,}" — the
// shape that makes a backtracking matcher take exponential time on a name that does not match.
bool has_nested_repetition(std::string_view regex) {
  std::vector<bool> group_repeats_inside;  // one per open group
  for (std::size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c == '\\') {
      ++i;  // an escaped character is a literal
    } else if (c == '[') {  // a class: its characters are literals
      ++i;
      if (i < regex.size() && regex[i] == '^') ++i;
      if (i < regex.size() && regex[i] == ']') ++i;
      while (i < regex.size() && regex[i] != ']') i += regex[i] == '\\' ? 2 : 1;
    } else if (c == '(') {
      group_repeats_inside.push_back(false);
    } else if (c == ')' && !group_repeats_inside.empty()) {
      const bool inside = group_repeats_inside.back();
      group_repeats_inside.pop_back();
      const bool repeated = i + 1 < regex.size() && is_repetition(regex[i + 1]);
      if (inside && repeated) return true;
      if (!group_repeats_inside.empty() && (inside || repeated)) group_repeats_inside.back() = true;
    } else if (is_repetition(c) && !group_repeats_inside.empty()) {
      group_repeats_inside.back() = true;
    }
  }
  return false;
}

}  // namespace

std::shared_ptr<const ModuleNameRegex> compile_module_name_regex(const std::string& pattern, const std::string& regex) {
  // Python syntax ECMAScript reads differently or not at all.
  for (const char* python_only : {"(?P", "(?i", "(?m", "(?s", "(?x", "(?a", "(?u", "(?#", "\\A", "\\Z"}) {
    if (regex.find(python_only) != std::string::npos) {
      throw InputError(fmt::format("quantization pattern \"{}\" uses Python regex syntax ({}) this build cannot read",
                                   shown(pattern), python_only));
    }
  }
  // std::regex backtracks (RE2 does not): a repeated repetition could take longer than any user waits.
  if (has_nested_repetition(regex)) {
    throw InputError(fmt::format("quantization pattern \"{}\" repeats a repetition (as in \"(.*)*\"), which this build's "
                                 "regular-expression engine could take exponential time to match; the native build reads it",
                                 shown(pattern)));
  }
  try {
    return std::make_shared<const StdModuleNameRegex>(regex);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("quantization pattern \"{}\" is not a regular expression gpubudget can read ({})",
                                 shown(pattern), e.what()));
  }
}

}  // namespace gpubudget::detail
