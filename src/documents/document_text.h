// How every JSON document of json_documents.h is written: nlohmann's layout with two-space
// indentation and a final newline, invalid UTF-8 replaced rather than thrown.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/decimal_text.h"

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

// A figure as vLLM prints it with "%.2f" (the exact binary value rounded, ties to even: fmt prints
// as printf does), read back as a number, so that the JSON documents agree with vLLM's log lines and gpubudget's own text.
inline double two_decimals(double value) {
  if (!std::isfinite(value)) return value;
  return parse_decimal(fmt::format("{:.2f}", value)).value_or(value);
}

}  // namespace gpubudget::detail
