// How every JSON document of json_documents.h is written: nlohmann's layout with two-space
// indentation and a final newline, invalid UTF-8 replaced rather than thrown.
#pragma once

#include <charconv>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpubudget::detail {

using Document = nlohmann::ordered_json;

inline std::string document_text(const Document& document) {
  return document.dump(2, ' ', false, Document::error_handler_t::replace) + "\n";
}

// `value`, or null when it is empty / absent.
inline Document string_or_null(const std::string& value) { return value.empty() ? Document(nullptr) : Document(value); }
template <typename T>
Document value_or_null(const std::optional<T>& value) {
  return value ? Document(*value) : Document(nullptr);
}

// A figure as vLLM prints it with "%.2f" (the exact binary value rounded, ties to even), read back as a
// number, so that the JSON documents agree with vLLM's log lines and gpubudget's own text.
inline double two_decimals(double value) {
  char text[400];  // the longest fixed double, 309 digits, fits
  const auto printed = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, 2);
  double out = value;
  if (printed.ec == std::errc()) std::from_chars(text, printed.ptr, out);
  return out;
}

}  // namespace gpubudget::detail
