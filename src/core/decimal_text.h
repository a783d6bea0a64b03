// Decimal text to double and back, exactly, with the C library and fmt rather than std::from_chars /
// std::to_chars for double (which libc++ 14, the WebAssembly build's, lacks). strtod rounds correctly
// (glibc, musl) and reads the "C" locale's '.', which gpubudget never changes.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace gpubudget::detail {

// The double `text` spells in full ("12.5", "3e-2"), or nullopt when it is not a finite number or does
// not end where `text` does (out of range included).
inline std::optional<double> parse_decimal(std::string_view text) {
  const std::string copy(text);  // strtod needs a terminated string
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace gpubudget::detail
