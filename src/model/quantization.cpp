#include "gpubudget/quantization.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "core/module_name_regex.h"

#if defined(__clang__)
#define GPUBUDGET_WRAPS_AROUND __attribute__((no_sanitize("unsigned-integer-overflow")))
#else
#define GPUBUDGET_WRAPS_AROUND
#endif

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
    case QuantKind::kBnbNf4: return "bitsandbytes nf4 block 64";
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
  std::string text;                  // the pattern without `re:`
  std::shared_ptr<const detail::ModuleNameRegex> regex;  // kRegex only
};

}  // namespace

// The prepared patterns. Globs are filed under their literal prefix (the text before the first '*'),
// which every name they match starts with: a name is tried only against the globs filed under one of
// its own prefixes, so a list of one pattern per layer costs a few lookups, not one compare per layer.
// Prefixes are filed by a hash that is computed a byte at a time (FNV-1a), so one pass over a name
// yields the hash of every one of its prefixes.
struct ModuleNamePatterns::Index {
  static constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
  static constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
  // FNV-1a wraps around 2^64 by design (clang's unsigned-overflow check is told so; GCC has no such check).
  GPUBUDGET_WRAPS_AROUND static std::uint64_t step(std::uint64_t hash, char c) {
    return (hash ^ static_cast<unsigned char>(c)) * kFnvPrime;
  }
  struct IdentityHash {
    std::size_t operator()(std::uint64_t h) const { return static_cast<std::size_t>(h); }
  };
  struct Filed {
    std::string prefix;
    Prepared glob;
  };
  std::unordered_map<std::uint64_t, std::vector<Filed>, IdentityHash> globs_by_prefix_hash;
  std::vector<std::size_t> prefix_lengths;  // ascending, distinct
  std::vector<Prepared> others;             // regexes and bare words, tried in turn
};

ModuleNamePatterns::ModuleNamePatterns(const std::vector<std::string>& patterns) {
  if (patterns.empty()) return;
  auto index = std::make_shared<Index>();
  for (const auto& pattern : patterns) {
    Prepared p;
    if (pattern.rfind("re:", 0) == 0) {
      p.kind = Prepared::Kind::kRegex;
      p.text = pattern.substr(3);
      if (p.text.size() > detail::kMaxModuleNamePatternBytes) {
        throw InputError(fmt::format("quantization pattern \"{}...\" is {} bytes long (limit {})", pattern.substr(0, 40),
                                     p.text.size(), detail::kMaxModuleNamePatternBytes));
      }
      p.regex = detail::compile_module_name_regex(pattern, p.text);
      index->others.push_back(std::move(p));
    } else if (pattern.find('*') != std::string::npos || pattern.find('.') != std::string::npos) {
      p.kind = Prepared::Kind::kGlob;
      p.text = pattern;
      std::string prefix = pattern.substr(0, pattern.find('*'));
      std::uint64_t hash = Index::kFnvOffset;
      for (const char c : prefix) hash = Index::step(hash, c);
      index->prefix_lengths.push_back(prefix.size());
      index->globs_by_prefix_hash[hash].push_back({std::move(prefix), std::move(p)});
    } else {
      p.text = pattern;
      index->others.push_back(std::move(p));
    }
  }
  std::sort(index->prefix_lengths.begin(), index->prefix_lengths.end());
  index->prefix_lengths.erase(std::unique(index->prefix_lengths.begin(), index->prefix_lengths.end()),
                              index->prefix_lengths.end());
  index_ = std::move(index);
}

bool ModuleNamePatterns::matches(std::string_view name) const {
  if (!index_) return false;
  std::uint64_t hash = Index::kFnvOffset;
  std::size_t hashed = 0;  // bytes of `name` in `hash`
  for (const std::size_t length : index_->prefix_lengths) {
    if (length > name.size()) break;
    for (; hashed < length; ++hashed) hash = Index::step(hash, name[hashed]);
    const auto filed = index_->globs_by_prefix_hash.find(hash);
    if (filed == index_->globs_by_prefix_hash.end()) continue;
    for (const Index::Filed& f : filed->second) {
      if (f.prefix.size() != length || name.substr(0, length) != f.prefix) continue;
      // The prefix is matched; the glob's rest ("*", "*.mlp*" ...) decides on the name's rest.
      const std::string_view rest = std::string_view(f.glob.text).substr(length);
      if (rest == "*" || glob_full_match(rest, name.substr(length))) return true;
    }
  }
  for (const Prepared& p : index_->others) {
    if (p.kind == Prepared::Kind::kRegex) {
      if (p.regex->matches_prefix(name)) return true;
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
