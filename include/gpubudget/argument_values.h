// Parsers for command-line values in vLLM's syntax.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubudget {

// vLLM's human_readable_int: "131072", "128k" (×1000), "128K" (×1024), "1m"/"1M", "2g"/"2G",
// "1t"/"1T"; decimals only with decimal suffixes ("1.5k"). Throws ArgumentError naming `flag`.
std::int64_t parse_human_int(const std::string& flag, const std::string& text);
// A fraction such as --gpu-memory-utilization's ("0.9", ".95", "1"). Throws ArgumentError naming `flag`.
double parse_fraction(const std::string& flag, const std::string& text);
// A decimal count of GiB (--kv-offloading-size "64", "0.5"). Throws ArgumentError naming `flag`.
double parse_gib(const std::string& flag, const std::string& text);
// --max-model-len as vLLM reads it: N (128k, 128K), or `auto` / -1 for vLLM's auto-fit (0.14+); ""
// (the flag absent) is neither: the model's derived maximum.
struct MaxModelLenFlag {
  std::optional<std::int64_t> length;
  bool auto_fit = false;
};
MaxModelLenFlag parse_max_model_len(const std::string& text);
// A vLLM pair of switches (--X / --no-X): nullopt when neither is given, a ArgumentError when both are.
std::optional<bool> paired_flag(const std::string& flag, bool given, bool negated);
// An environment variable's boolean as vLLM reads it ("1", "true", "True" / "0", "false", "False").
bool env_bool(const std::string& var, const std::string& value);
// The kv_connector of a --kv-transfer-config JSON object ("" when it names none). ArgumentError when the
// text is not a JSON object or kv_connector not a string.
std::string kv_connector_of(const std::string& flag, const std::string& json_text);
// --gpu-memory: "96GiB", "97887MiB", "80GB" (decimal), "1024KiB", or plain bytes.
std::int64_t parse_memory_size(const std::string& flag, const std::string& text);
// "a,b,c" -> {"a", "b", "c"} (empty parts kept, so that "a,,b" is reported by the caller's parser).
std::vector<std::string> split_list(const std::string& text);
// An integer with thousands separators, as reports print lengths: 133296 -> "133,296".
std::string with_commas(std::int64_t n);
// vLLM's multi-letter short flags (-tp, -pp, -dp, -dcp) rewritten to their long names.
std::vector<std::string> expand_vllm_short_flags(std::vector<std::string> args);

}  // namespace gpubudget
