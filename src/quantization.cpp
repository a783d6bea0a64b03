#include "gpubudget/quantization.h"

// GCC 12 reports a false maybe-uninitialized inside <regex> under -O2 with sanitizers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unordered_map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "gpubudget/error.h"

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

}  // namespace

namespace {

// One prepared pattern.
struct Prepared {
  enum class Kind { kRegex, kGlob, kSubstring };
  Kind kind = Kind::kSubstring;
  std::string text;  // the pattern without `re:`
  std::regex regex;  // kRegex only
};

}  // namespace

// The prepared patterns. Globs are filed under their literal prefix (the text before the first '*'),
// which every name they match starts with: a name is tried only against the globs filed under one of
// its own prefixes, so a list of one pattern per layer costs a few lookups, not one compare per layer.
struct ModuleNamePatterns::Index {
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::vector<Prepared>, Hash, std::equal_to<>> globs_by_prefix;
  std::set<std::size_t> prefix_lengths;
  std::vector<Prepared> others;  // regexes and bare words, tried in turn
};

ModuleNamePatterns::ModuleNamePatterns(const std::vector<std::string>& patterns) {
  if (patterns.empty()) return;
  auto index = std::make_shared<Index>();
  for (const auto& pattern : patterns) {
    Prepared p;
    if (pattern.rfind("re:", 0) == 0) {
      p.kind = Prepared::Kind::kRegex;
      p.text = pattern.substr(3);
      try {
        // compressed-tensors uses Python's re.match: anchored at the start, not at the end.
        p.regex = std::regex("^(?:" + p.text + ")", std::regex::optimize);
      } catch (const std::regex_error&) {
        throw InputError(fmt::format("quantization pattern \"{}\" is not a regular expression gpubudget can read",
                                     pattern));
      }
      index->others.push_back(std::move(p));
    } else if (pattern.find('*') != std::string::npos || pattern.find('.') != std::string::npos) {
      p.kind = Prepared::Kind::kGlob;
      p.text = pattern;
      std::string prefix = pattern.substr(0, pattern.find('*'));
      index->prefix_lengths.insert(prefix.size());
      index->globs_by_prefix[std::move(prefix)].push_back(std::move(p));
    } else {
      p.text = pattern;
      index->others.push_back(std::move(p));
    }
  }
  index_ = std::move(index);
}

bool ModuleNamePatterns::matches(std::string_view name) const {
  if (!index_) return false;
  for (const std::size_t length : index_->prefix_lengths) {
    if (length > name.size()) break;
    const auto filed = index_->globs_by_prefix.find(name.substr(0, length));
    if (filed == index_->globs_by_prefix.end()) continue;
    for (const Prepared& glob : filed->second) {
      if (glob_full_match(glob.text, name)) return true;
    }
  }
  for (const Prepared& p : index_->others) {
    if (p.kind == Prepared::Kind::kRegex) {
      if (std::regex_search(name.begin(), name.end(), p.regex)) return true;
    } else if (name.find(p.text) != std::string_view::npos) {
      // A bare word ("lm_head") names a module by its last component(s), as vLLM's substring test does.
      return true;
    }
  }
  return false;
}

bool ModuleNamePatterns::excludes_all(std::span<const std::string> shard_names) const {
  if (!index_ || shard_names.empty()) return false;
  for (const auto& shard : shard_names) {
    if (!matches(shard)) return false;
  }
  return true;
}

bool is_excluded(const std::vector<std::string>& patterns, const std::vector<std::string>& shard_names) {
  return ModuleNamePatterns(patterns).excludes_all(shard_names);
}

}  // namespace gpubudget
#pragma GCC diagnostic pop
