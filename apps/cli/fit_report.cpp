#include "fit_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/argument_values.h"

namespace gpubudget::cli {

namespace {

// A file path relative to the working directory when it lies under it (shorter, as the user typed
// it); other paths and non-paths (Hub ids) as given.
std::string path_as_shown(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute(path);
  if (!absolute.is_absolute()) return path;
  const std::filesystem::path relative = std::filesystem::relative(absolute, std::filesystem::current_path(ec), ec);
  if (ec || relative.empty() || *relative.begin() == "..") return path;
  return relative.string();
}

std::string gib2(Bytes b) { return fmt::format("{:.2f} GiB", to_gib(b)); }

// `text` cut to at most `limit` bytes at a UTF-8 character boundary, "..." marking the cut.
std::string abbreviated(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

const char* kind_name(AttentionKind k) {
  switch (k) {
    case AttentionKind::kFull: return "full attention";
    case AttentionKind::kMla: return "MLA";
    case AttentionKind::kSlidingWindow: return "sliding window";
    case AttentionKind::kChunkedLocal: return "chunked local";
    case AttentionKind::kMamba: return "linear attention / Mamba state";
    case AttentionKind::kNone: return "no cache";
  }
  return "?";
}

// One line per kind of KV layer: how many, bytes per token, and what one request needs of them.
// `target_layers`: the model's decoder layers; KV layers numbered from there on are the drafter's.
std::vector<std::string> kv_group_lines(const KvCacheLayout& kv, std::int64_t max_model_len,
                                        std::int64_t target_layers) {
  struct Line {
    KvLayer spec;
    std::int64_t layers = 0;
  };
  std::vector<Line> lines;
  for (const auto& l : kv.layers) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const Line& x) {
      return x.spec.kind == l.kind && x.spec.token_bytes == l.token_bytes && x.spec.window == l.window &&
             x.spec.state_bytes == l.state_bytes && x.spec.compress_ratio == l.compress_ratio &&
             x.spec.page_bytes() == l.page_bytes();
    });
    if (it == lines.end()) {
      lines.push_back({l, 1});
    } else {
      ++it->layers;
    }
  }
  std::vector<std::string> out;
  for (const auto& line : lines) {
    const Bytes need = line.spec.max_memory_usage(max_model_len, kv.max_num_batched_tokens, kv.dcp) * line.layers;
    if (line.spec.kind == AttentionKind::kMamba) {
      out.push_back(fmt::format("{:>3} x {}: {} B of state per request and layer (padded to the attention page), "
                                "{} per request whatever its length",
                                line.layers, kind_name(line.spec.kind), line.spec.state_bytes.count(), gib2(need)));
      continue;
    }
    if (line.spec.alignment > 0) {
      // DeepSeek-V4's caches: fixed-size entries, pages aligned (and padded by grouping).
      out.push_back(fmt::format("{:>3} x {}{}: {} B per {}, pages of {} tokens = {} B, {} for one {}-token request{}",
                                line.layers, kind_name(line.spec.kind),
                                line.spec.window > 0 ? fmt::format(" (window {})", line.spec.window) : "",
                                line.spec.token_bytes.count(),
                                line.spec.compress_ratio > 1 ? fmt::format("entry of {} tokens", line.spec.compress_ratio)
                                                             : std::string("token"),
                                line.spec.block_size, line.spec.page_bytes().count(), gib2(need),
                                with_commas(max_model_len), line.spec.grows_with_length() ? "" : " (fixed past the window)"));
      continue;
    }
    out.push_back(fmt::format("{:>3} x {}{}: {} B/token/layer, {} for one {}-token request{}", line.layers,
                              kind_name(line.spec.kind),
                              line.spec.window > 0 ? fmt::format(" (window {})", line.spec.window) : "",
                              line.spec.token_bytes.count(), gib2(need), with_commas(max_model_len),
                              line.spec.grows_with_length() ? "" : " (fixed past the window)"));
  }
  const auto draft = std::count_if(kv.layers.begin(), kv.layers.end(),
                                   [&](const KvLayer& l) { return l.index >= target_layers; });
  if (draft > 0) out.push_back(fmt::format("{} of these layers are the drafter's (speculative decoding)", draft));
  if (kv.grouping == KvGrouping::kHybrid) {
    out.push_back(fmt::format("vLLM groups them into {} KV-cache groups of {} layers, page {} B", kv.groups.size(),
                              kv.group_size, kv.page_bytes.count()));
  }
  if (kv.grouping == KvGrouping::kUniformGroups) {
    out.push_back(fmt::format("vLLM groups them into {} KV-cache groups sharing one pool; a block holds {} tuples of "
                              "the full-MLA pages ({} B each) = {} B, whichever group uses it",
                              kv.groups.size(), kv.layer_tuples, kv.layer_tuple_bytes.count(),
                              kv.block_bytes().count()));
  }
  return out;
}

}  // namespace

void write_fit_text(const FitQuery& c, const FitResult& r, const std::vector<Remedy>& remedies,
                    const std::vector<Explanation>& explanations, std::ostream& out) {
  const WorkerBudget& w = r.binding_worker();
  const auto& d = c.deployment;
  const GpuSpec& gpu = c.gpus.front();
  const std::string vllm_version = c.vllm_version.empty() ? c.profile.version : c.vllm_version;
  std::string gpus = fmt::format("{} x {} ({})", d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size,
                                 gpu.name, gib2(gpu.memory));
  for (const auto& wk : r.workers) {
    if (wk.gpu != gpu.name) {
      std::vector<std::string> names;
      for (const auto& each : r.workers) names.push_back(each.gpu);
      gpus = fmt::format("{} GPUs, one per pipeline stage: {}", d.tensor_parallel_size * d.pipeline_parallel_size *
                                                                 d.data_parallel_size,
                         fmt::join(names, " | "));
      break;
    }
  }
  out << fmt::format("{} ({}){} on {}, TP={} PP={} DP={}{}\n", c.model.architecture, path_as_shown(c.model.source),
                     c.model.family == "generic" ? " [GENERIC ESTIMATE: no modelled family, sized from the safetensors "
                                                   "headers; see the warnings]"
                                                 : "",
                     gpus,
                     d.tensor_parallel_size, d.pipeline_parallel_size, d.data_parallel_size,
                     d.decode_context_parallel_size > 1 ? fmt::format(" DCP={}", d.decode_context_parallel_size) : "");
  out << fmt::format("vLLM {} behaviour (profile {}), KV cache {} ({}), block size {}{}\n\n", vllm_version,
                     c.profile.version, r.kv_cache_dtype.name, r.kv_cache_dtype.reason, r.block_size,
                     r.attention_backend.empty() ? "" : fmt::format(" ({})", r.attention_backend));
  out << fmt::format("Per-GPU budget{}:\n", r.workers.size() > 1 ? fmt::format(" (binding stage {})", w.pp_rank) : "");
  auto row = [&out](const std::string& label, Bytes value, const std::string& note = "") {
    out << fmt::format("  {:<34}{:>11}{}\n", label, gib2(value), note);
  };
  row(fmt::format("requested ({} x {})", r.gpu_memory_utilization, w.gpu), w.requested);
  row("- weights", w.weights.total);
  for (const auto& comp : w.weights.components) row(fmt::format("    {}", component_name(comp.component)), comp.bytes);
  if (w.weights.cpu_offloaded.count() > 0) {
    row("    less kept in CPU memory", w.weights.cpu_offloaded,
        d.offload_group_size > 0 ? "   prefetch offloader" : "   --cpu-offload-gb");
  }
  if (w.weights.prefetch_buffers.count() > 0) {
    row("    prefetch slots (outside the budget)", w.weights.prefetch_buffers, "   --offload-prefetch-step");
  }
  row("- activation peak (estimate)", w.overheads.activation_peak);
  if (w.overheads.encoder.items > 0) {
    row("    of which encoder profile", w.overheads.encoder.pass >= w.overheads.activation_peak
                                             ? w.overheads.encoder.pass
                                             : w.overheads.encoder.cached_outputs,
        fmt::format("   {} {}(s), {} ViT patches", w.overheads.encoder.items,
                    w.overheads.encoder.video ? "video" : "image",
                    with_commas(w.overheads.encoder.patches)));
  }
  row("- non-torch (estimate)", w.overheads.non_torch);
  row("- CUDA graphs (estimate)", w.overheads.cudagraph_charged ? w.overheads.cudagraph : Bytes(0),
      w.overheads.cudagraph_charged
          ? ""
          : fmt::format("   not charged by this vLLM; ~{} at runtime", gib2(w.overheads.cudagraph)));
  if (w.kv_cache.count() < 0) {
    // No negative KV figure: the deficit is said in words.
    row("= KV cache", Bytes(0), fmt::format("   none: the weights and overheads exceed it by {}", gib2(Bytes(0) - w.kv_cache)));
  } else {
  row("= KV cache", w.kv_cache,
      c.model.generic_assumptions.empty()
          ? fmt::format("   overheads +/- {:.0f}%", w.overheads.relative_uncertainty * 100)
          : fmt::format("   overheads +/- {:.0f}%, weights +/- {:.0f}% (generic estimate)",
                        w.overheads.relative_uncertainty * kGenericOverheadUncertaintyFactor * 100,
                        kGenericWeightsUncertainty * 100));
  }
  out << "\n";
  out << fmt::format("KV cache ({}{}): {} bytes per token per GPU, {} blocks of {} tokens\n", attention_mix(c.model),
                     d.mla_disabled ? ", run as multi-head attention: VLLM_MLA_DISABLE=1" : "",
                     w.kv.bytes_per_token().count(), r.num_blocks, r.block_size);
  for (const auto& g : kv_group_lines(w.kv, r.judged_max_model_len, static_cast<std::int64_t>(c.model.layers.size()))) {
    out << "  " << g << "\n";
  }
  out << fmt::format("GPU KV cache size: {} tokens\n", with_commas(r.kv_cache_tokens));
  out << fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x\n\n",
                     with_commas(r.judged_max_model_len), r.max_concurrency);
  if (w.weights.total > w.requested) {
    const std::size_t stage = static_cast<std::size_t>(w.pp_rank);
    const GpuSpec& stage_gpu = c.gpus.size() > stage ? c.gpus[stage] : c.gpus.front();
    out << fmt::format("The weights alone need {} per GPU; vLLM may use {} of the {}'s {} (--gpu-memory-utilization {}). "
                       "No context length fits: it takes more GPUs (tensor or pipeline parallel) or smaller weights.\n",
                       gib2(w.weights.total), gib2(w.requested), stage_gpu.name, gib2(stage_gpu.memory), r.gpu_memory_utilization);
  }
  out << fmt::format("Largest --max-model-len that fits: {}", with_commas(r.max_model_len));
  if (r.max_model_len_low != r.max_model_len_high) {
    auto k = [](std::int64_t n) { return fmt::format("{}k", (n + 500) / 1000); };
    out << fmt::format("  (≈{}, {}–{} with the overheads ±{:.0f}%)", k(r.max_model_len), k(r.max_model_len_low),
                       k(r.max_model_len_high), w.overheads.relative_uncertainty * 100);
  }
  out << "\n";
  out << fmt::format("Requested length {}{}: needs {} of KV cache per GPU -> {}\n", with_commas(r.judged_max_model_len),
                     r.auto_fitted         ? " (--max-model-len auto: lowered to the largest that fits)"
                     : r.judged_is_derived ? " (the model's maximum)"
                                           : "",
                     gib2(r.needed),
                     r.fits       ? "FITS"
                     : r.kv_fits ? "fits in memory, but vLLM WOULD NOT START"
                                 : "DOES NOT FIT");
  if (!r.warnings.empty()) {
    out << fmt::format("  with {} warning{} (printed after this report): {}\n", r.warnings.size(),
                       r.warnings.size() > 1 ? "s" : "", abbreviated(r.warnings.front().text, 100));
  }
  if (!r.vllm_error.empty()) out << "vLLM " << vllm_version << " would stop with: " << r.vllm_error << "\n";
  if (!remedies.empty()) {
    out << fmt::format("\nTo fit {} tokens, best first:\n", with_commas(r.judged_max_model_len));
    for (const auto& rem : remedies) {
      out << fmt::format("  {:<44} {:<40} largest {:>9}{}\n", rem.change, fmt::format("{}", fmt::join(rem.flags, " ")),
                         with_commas(rem.max_model_len),
                         rem.blocked ? "  (vLLM would not start)" : rem.reaches_target ? "  fits" : "");
      if (!rem.caveat.empty()) out << fmt::format("      caveat: {}\n", rem.caveat);
    }
  }
  if (!explanations.empty()) {
    out << "\nHow each figure was computed (binding worker):\n";
    for (const auto& e : explanations) {
      out << fmt::format("  {:<20} {}\n  {:<20} = {}\n", e.figure, e.formula, "", e.value);
    }
  }
}

}  // namespace gpubudget::cli
