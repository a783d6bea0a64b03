// Small text helpers for reading vLLM log lines (internal to src/log).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpubudget::detail {

[[nodiscard]] inline bool contains(std::string_view line, std::string_view needle) {
  return line.find(needle) != std::string_view::npos;
}

// The number right after the first `key` in `line` (spaces skipped; "1,234" thousands separators and
// a leading '-' accepted), or nothing. `from` moves past the match so repeated keys can be read.
std::optional<double> number_after(std::string_view line, std::string_view key, std::size_t from = 0);
std::optional<std::int64_t> integer_after(std::string_view line, std::string_view key, std::size_t from = 0);

// A value in an engine-config line "key=value, key2=value2" or a Python dict "'key': value": the
// text up to the next ',' / ')' / '}' with quotes removed.
std::optional<std::string> config_value(std::string_view line, std::string_view key);
std::optional<std::string> dict_value(std::string_view line, std::string_view key);

// A number in GiB from "12.5 GiB", "12.5GiB", "800 MiB", "12.5 GB" (V0's GB are GiB) after `key`.
std::optional<double> gib_after(std::string_view line, std::string_view key, std::size_t from = 0);

// strip_log_prefix without copying: a view into `raw`, or into `scratch` when ANSI escapes had to
// be removed.
std::string_view strip_log_prefix_view(const std::string& raw, std::string& scratch, std::string* worker);

}  // namespace gpubudget::detail
