#include "gpubudget/quantization.h"

// GCC 12 reports a false maybe-uninitialized inside <regex> under -O2 with sanitizers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>

#include <fmt/format.h>

namespace gpubudget {

std::string describe(const QuantFormat& format) {
  switch (format.kind) {
    case QuantKind::kUnquantized: return std::string(dtype_name(format.dtype));
    case QuantKind::kFp8Block: return fmt::format("fp8 block {}x{}", format.block_n, format.block_k);
    case QuantKind::kNvfp4: return fmt::format("nvfp4 group {}", format.group_size);
    case QuantKind::kMxfp4: return "mxfp4";
    case QuantKind::kIntPacked:
      return fmt::format("int{} {} {}", format.bits,
                         format.group_size > 0 ? fmt::format("group {}", format.group_size) : "per-channel",
                         format.symmetric ? "symmetric" : "asymmetric");
    case QuantKind::kFp8Tensor: return format.static_input_scale ? "fp8 per-tensor (static input)" : "fp8 per-tensor";
    case QuantKind::kChannel8: return format.integer ? "int8 per-channel (w8a8)" : "fp8 per-channel";
    case QuantKind::kGptq:
      return fmt::format("gptq int{} {}{}{}", format.bits,
                         format.group_size > 0 ? fmt::format("group {}", format.group_size) : "per-channel",
                         format.act_order ? " act-order" : "", format.symmetric ? "" : " asymmetric");
    case QuantKind::kAwq:
      return fmt::format("awq int{} group {}", format.bits, format.group_size);
  }
  return "?";
}

namespace {

// Glob match where '*' is any run of characters and everything else is literal: vLLM turns a
// ModelOpt pattern into a regex by escaping '.' and mapping '*' to '.*', then full-matches.
bool glob_full_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool pattern_matches(const std::string& pattern, const std::string& name) {
  if (pattern.rfind("re:", 0) == 0) {
    try {
      // compressed-tensors uses Python's re.match: anchored at the start, not at the end.
      return std::regex_search(name, std::regex("^(?:" + pattern.substr(3) + ")"));
    } catch (const std::regex_error&) {
      return false;
    }
  }
  if (pattern == name) return true;
  if (pattern.find('*') != std::string::npos || pattern.find('.') != std::string::npos) {
    return glob_full_match(pattern, name);
  }
  // A bare word ("lm_head") names a module by its last component(s), as vLLM's substring test does.
  return name.find(pattern) != std::string::npos;
}

}  // namespace
#pragma GCC diagnostic pop

bool is_excluded(const std::vector<std::string>& patterns, const std::vector<std::string>& shard_names) {
  if (patterns.empty() || shard_names.empty()) return false;
  for (const auto& shard : shard_names) {
    bool matched = false;
    for (const auto& pattern : patterns) {
      if (pattern_matches(pattern, shard)) {
        matched = true;
        break;
      }
    }
    if (!matched) return false;
  }
  return true;
}

}  // namespace gpubudget
