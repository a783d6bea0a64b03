// How every JSON document of json_documents.h is written: nlohmann's layout with two-space
// indentation and a final newline, invalid UTF-8 replaced rather than thrown.
#pragma once

#include <cmath>
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

// A figure rounded to two decimals for the JSON documents.
inline double two_decimals(double value) { return std::round(value * 100.0) / 100.0; }

}  // namespace gpubudget::detail
