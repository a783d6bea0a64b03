// Matching safetensors header tensors to weight units (header_weights.h).
#include "gpubudget/header_weights.h"

#include <unordered_map>

namespace gpubudget {

namespace {

// Index of the unit a canonical tensor name belongs to, or -1.
class UnitIndex {
 public:
  explicit UnitIndex(const std::vector<WeightUnit>& units) {
    for (std::size_t i = 0; i < units.size(); ++i) {
      for (const auto& name : units[i].checkpoint_names) {
        if (units[i].prefix_match) {
          prefixes_.emplace_back(name, static_cast<long>(i));
        } else {
          exact_.emplace(name, static_cast<long>(i));
        }
      }
    }
  }

  [[nodiscard]] long find(const std::string& tensor) const {
    // The tensor itself (attention sinks, correction biases), then its module ("x.weight" -> "x").
    if (const auto it = exact_.find(tensor); it != exact_.end()) return it->second;
    if (const auto dot = tensor.rfind('.'); dot != std::string::npos) {
      if (const auto it = exact_.find(tensor.substr(0, dot)); it != exact_.end()) return it->second;
    }
    long best = -1;
    std::size_t best_length = 0;
    for (const auto& [prefix, index] : prefixes_) {
      if (tensor.size() > prefix.size() && tensor.compare(0, prefix.size(), prefix) == 0 &&
          prefix.size() > best_length) {
        best = index;
        best_length = prefix.size();
      }
    }
    return best;
  }

 private:
  std::unordered_map<std::string, long> exact_;
  std::vector<std::pair<std::string, long>> prefixes_;
};

}  // namespace

HeaderComparison compare_with_headers(const std::vector<WeightUnit>& units, const CheckpointHeaders& headers) {
  const UnitIndex index(units);
  std::vector<std::int64_t> header_bytes(units.size(), 0);
  std::vector<bool> seen(units.size(), false);
  HeaderComparison out;
  for (const auto& file : headers.files) {
    for (const auto& t : file.tensors) {
      out.header_checkpoint += t.bytes();
      const long unit = index.find(canonical_module_name(t.name));
      if (unit < 0) {
        out.unmatched_tensors.push_back(t.name);
        out.unmatched_bytes += t.bytes();
        continue;
      }
      header_bytes[static_cast<std::size_t>(unit)] += t.bytes().count();
      seen[static_cast<std::size_t>(unit)] = true;
    }
  }
  out.header_unit_per_gpu.resize(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    const WeightUnit& u = units[i];
    out.config_per_gpu += u.per_gpu;
    out.config_checkpoint += u.checkpoint;
    Bytes per_gpu = u.per_gpu;
    if (!u.runtime_only) {
      if (!seen[i]) out.missing_units.push_back(u.name);
      const std::int64_t config = u.checkpoint.count();
      const std::int64_t header = header_bytes[i];
      if (header != config) {
        out.differences.push_back({u.name, u.checkpoint, Bytes(header)});
        // Scale the unit's per-GPU bytes by what the headers hold (rounded down; long double keeps the
        // 64-bit integers exact).
        per_gpu = config > 0 ? Bytes(static_cast<std::int64_t>(static_cast<long double>(u.per_gpu.count()) *
                                                               static_cast<long double>(header) /
                                                               static_cast<long double>(config)))
                             : Bytes(0);
      }
    }
    out.header_unit_per_gpu[i] = per_gpu;
    out.header_per_gpu += per_gpu;
  }
  out.header_per_gpu += out.unmatched_bytes;
  return out;
}

}  // namespace gpubudget
