// module_name_regex.h with std::regex (ECMAScript grammar): the WebAssembly build's matcher, which has
// no RE2. ECMAScript reads the patterns real quantization configs hold (`.*`, `\d+`, classes,
// alternation, `$`) as Python does; Python-only syntax it lacks — `(?P<name>…)`, inline flags `(?i)`,
// `\A`, `\Z` — is refused with the pattern named, never matched differently. Unlike RE2, std::regex
// backtracks: names are module paths (tens of characters) and patterns are capped at
// kMaxModuleNamePatternBytes.
#include <regex>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "platform/module_name_regex.h"

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

}  // namespace

std::shared_ptr<const ModuleNameRegex> compile_module_name_regex(const std::string& pattern, const std::string& regex) {
  // Python syntax ECMAScript reads differently or not at all.
  for (const char* python_only : {"(?P", "(?i", "(?m", "(?s", "(?x", "(?a", "(?u", "(?#", "\\A", "\\Z"}) {
    if (regex.find(python_only) != std::string::npos) {
      throw InputError(fmt::format("quantization pattern \"{}\" uses Python regex syntax ({}) this build cannot read",
                                   shown(pattern), python_only));
    }
  }
  try {
    return std::make_shared<const StdModuleNameRegex>(regex);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("quantization pattern \"{}\" is not a regular expression gpubudget can read ({})",
                                 shown(pattern), e.what()));
  }
}

}  // namespace gpubudget::detail
