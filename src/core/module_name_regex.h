// A `re:` module-name pattern of a quantization config (ignore / modules_to_not_convert lists), matched
// as Python's re.match reads it: anchored at the start of the name, not at its end.
//
// Two implementations, chosen by the build (src/CMakeLists.txt): RE2 natively (module_name_regex_re2.cpp:
// linear time, no recursion; Python syntax RE2 lacks — backreferences, lookaround — is refused), and the
// C++ standard library's ECMAScript grammar in the WebAssembly build (module_name_regex_std.cpp), which has
// no RE2. Either refuses what it cannot read with an InputError naming the pattern; none matches a pattern
// differently from Python without saying so.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace gpubudget::detail {

class ModuleNameRegex {
 public:
  virtual ~ModuleNameRegex() = default;
  // Whether `name` starts with a match of the pattern.
  [[nodiscard]] virtual bool matches_prefix(std::string_view name) const = 0;
};

// Compiles `regex` (the pattern without its `re:`); `pattern` is the config's text, for messages.
// InputError when it is longer than kMaxPatternBytes or not a regular expression this build reads.
std::shared_ptr<const ModuleNameRegex> compile_module_name_regex(const std::string& pattern, const std::string& regex);

// The longest `re:` pattern accepted: real checkpoints' patterns are tens of characters.
inline constexpr std::size_t kMaxModuleNamePatternBytes = 4096;

}  // namespace gpubudget::detail
