// module_name_regex.h with RE2: the native build's matcher.
#include <cstdint>

#include <fmt/format.h>
#include <re2/re2.h>

#include "gpubudget/error.h"
#include "core/module_name_regex.h"

namespace gpubudget::detail {
namespace {

// The memory RE2 may use to compile one pattern (its default).
constexpr std::int64_t kMaxPatternMemory = std::int64_t{8} << 20;

class Re2ModuleNameRegex final : public ModuleNameRegex {
 public:
  Re2ModuleNameRegex(const std::string& regex, const re2::RE2::Options& options) : regex_(regex, options) {}
  [[nodiscard]] bool ok() const { return regex_.ok(); }
  [[nodiscard]] const std::string& error() const { return regex_.error(); }
  [[nodiscard]] bool matches_prefix(std::string_view name) const override {
    return regex_.Match(name, 0, name.size(), re2::RE2::ANCHOR_START, nullptr, 0);
  }

 private:
  re2::RE2 regex_;
};

}  // namespace

std::shared_ptr<const ModuleNameRegex> compile_module_name_regex(const std::string& pattern, const std::string& regex) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxPatternMemory);
  auto compiled = std::make_shared<const Re2ModuleNameRegex>(regex, options);
  if (!compiled->ok()) {
    throw InputError(fmt::format("quantization pattern \"{}\" is not a regular expression gpubudget can read ({})",
                                 pattern.size() > 80 ? pattern.substr(0, 77) + "..." : pattern, compiled->error()));
  }
  return compiled;
}

}  // namespace gpubudget::detail
