#include "diagnose_command.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpubudget/diagnosis.h"
#include "gpubudget/error.h"
#include "gpubudget/vllm_log.h"

namespace gpubudget::cli {

namespace {

using Json = nlohmann::ordered_json;
constexpr double kGiBd = 1073741824.0;

Json bytes_or_null(const std::optional<double>& gib) {
  return gib ? Json(static_cast<std::int64_t>(std::llround(*gib * kGiBd))) : Json(nullptr);
}

// The preset whose CUDA-visible total is within 0.5% of the log's "total capacity".
std::optional<GpuSpec> preset_with_total(const ConfigDir& configs, const std::optional<double>& total_gib) {
  if (!total_gib || *total_gib <= 0) return std::nullopt;
  std::optional<GpuSpec> best;
  for (const GpuSpec& g : list_gpu_presets(configs)) {
    const double gib = static_cast<double>(g.memory.count()) / kGiBd;
    if (std::fabs(gib - *total_gib) / *total_gib > 0.005) continue;
    if (best) return std::nullopt;  // two presets match: do not guess
    best = g;
  }
  return best;
}

Json to_json(const VllmLogFacts& f, const Diagnosis& d) {
  Json j;
  j["schema_version"] = 1;
  j["log"] = f.source;
  j["root_cause"] = d.root_cause;
  j["summary"] = d.sentence;
  j["startup_outcome"] = outcome_name(f.outcome);
  j["vllm_version"] = f.vllm_version ? Json(*f.vllm_version) : Json(nullptr);
  j["model"] = f.model ? Json(*f.model) : Json(nullptr);
  j["max_model_len"] = d.max_model_len ? Json(*d.max_model_len) : Json(nullptr);
  j["needed_kv_cache_bytes"] = bytes_or_null(d.needed_gib);
  j["needed_kv_cache_basis"] = d.needed_gib ? (d.needed_predicted ? "predicted" : "logged") : "";
  j["available_kv_cache_bytes"] = bytes_or_null(d.available_gib);
  j["available_kv_cache_basis"] = d.available_gib ? (d.available_predicted ? "predicted" : "logged") : "";
  j["estimated_max_model_len"] = d.fitting_max_model_len ? Json(*d.fitting_max_model_len) : Json(nullptr);
  j["estimated_max_model_len_basis"] = d.fitting_basis;
  j["remedies"] = d.remedies;
  Json logged;
  auto put = [&logged](const char* key, const auto& v) {
    if (v) logged[key] = *v;
  };
  put("tensor_parallel_size", f.tensor_parallel_size);
  put("pipeline_parallel_size", f.pipeline_parallel_size);
  put("data_parallel_size", f.data_parallel_size);
  put("decode_context_parallel_size", f.decode_context_parallel_size);
  put("gpu_memory_utilization", f.gpu_memory_utilization);
  put("kv_cache_dtype", f.kv_cache_dtype);
  put("block_size", f.block_size);
  put("attention_backend", f.attention_backend);
  put("quantization", f.quantization);
  put("model_loading_gib", f.model_loading_gib);
  put("activation_peak_gib", f.activation_peak_gib);
  put("non_torch_gib", f.non_torch_gib);
  put("cudagraph_gib", f.cudagraph_gib);
  put("available_kv_cache_gib", f.available_kv_cache_gib);
  put("kv_cache_tokens", f.kv_cache_tokens);
  put("max_concurrency", f.max_concurrency);
  put("gpu_blocks", f.gpu_blocks);
  put("error_needed_gib", f.error_needed_gib);
  put("error_available_gib", f.error_available_gib);
  put("error_estimated_max_model_len", f.estimated_max_model_len);
  if (f.out_of_memory) {
    logged["oom_phase"] = f.out_of_memory->phase;
    put("oom_tried_gib", f.out_of_memory->tried_gib);
  }
  j["logged"] = logged.is_null() ? Json::object() : logged;
  Json comparison = Json::array();
  for (const auto& c : d.comparison) {
    comparison.push_back({{"figure", c.figure},
                          {"unit", c.unit},
                          {"logged", c.logged ? Json(*c.logged) : Json(nullptr)},
                          {"predicted", c.predicted ? Json(*c.predicted) : Json(nullptr)},
                          {"basis", c.basis}});
  }
  j["comparison"] = comparison;
  j["gpu"] = d.gpu.empty() ? Json(nullptr) : Json(d.gpu);
  j["notes"] = d.notes;
  j["lines"] = f.lines;
  return j;
}

std::string figure_text(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  return unit == "tokens" ? fmt::format("{:.0f}", *v) : fmt::format("{:.2f}", *v);
}

void print_human(const VllmLogFacts& f, const Diagnosis& d, std::ostream& out) {
  out << fmt::format("{}: {} lines{}{}\n", f.source, f.lines,
                     f.vllm_version ? fmt::format(", vLLM {}", *f.vllm_version) : std::string(),
                     f.model ? fmt::format(", model {}", *f.model) : std::string());
  out << "\nRoot cause (" << d.root_cause << "): " << d.sentence << "\n";
  if (d.needed_gib || d.available_gib) {
    auto shown = [](const std::optional<double>& v, bool predicted) {
      return v ? fmt::format("{:.2f} GiB{}", *v, predicted ? " (predicted)" : " (logged)") : std::string("-");
    };
    out << fmt::format("  KV cache per GPU: needed {}, available {}\n", shown(d.needed_gib, d.needed_predicted),
                       shown(d.available_gib, d.available_predicted));
  }
  if (f.model_loading_gib || f.activation_peak_gib || f.non_torch_gib || f.cudagraph_gib) {
    out << fmt::format("  logged per GPU: weights {}, activation peak {}, non-torch {}, CUDA graphs {} (GiB)\n",
                       figure_text(f.model_loading_gib, "GiB"), figure_text(f.activation_peak_gib, "GiB"),
                       figure_text(f.non_torch_gib, "GiB"), figure_text(f.cudagraph_gib, "GiB"));
  }
  if (d.fitting_max_model_len) {
    out << fmt::format("  largest --max-model-len that fits: {} — {}\n", *d.fitting_max_model_len, d.fitting_basis);
  }
  if (!d.remedies.empty()) {
    out << "\nLaunch with, best first:\n";
    for (const auto& r : d.remedies) out << "  " << r << "\n";
  }
  if (!d.comparison.empty()) {
    out << fmt::format("\ngpubudget beside the log ({}):\n", d.gpu);
    out << fmt::format("  {:<32}{:>7}{:>12}{:>12}{:>9}  {}\n", "figure", "unit", "logged", "predicted", "diff",
                       "basis");
    for (const auto& c : d.comparison) {
      std::string diff = "";
      if (c.logged && c.predicted && *c.logged != 0) {
        diff = fmt::format("{:+.1f}%", (*c.predicted - *c.logged) / std::fabs(*c.logged) * 100.0);
      }
      out << fmt::format("  {:<32}{:>7}{:>12}{:>12}{:>9}  {}\n", c.figure, c.unit, figure_text(c.logged, c.unit),
                         figure_text(c.predicted, c.unit), diff, c.basis);
    }
  }
  for (const auto& n : d.notes) out << "note: " << n << "\n";
}

}  // namespace

int run_diagnose(const DiagnoseOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  VllmLogFacts facts;
  if (o.log == "-") {
    facts = read_vllm_log(std::cin, "-");
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(o.log, ec)) throw InputError(fmt::format("{}: is a directory, not a log", o.log));
    std::ifstream in(o.log, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot be read", o.log));
    facts = read_vllm_log(in, o.log);
  }
  DiagnosisContext context;
  std::optional<ModelSpec> model;
  if (!o.model.empty()) {
    model = load_model(o.model, configs);
    context.model = &*model;
    context.model_name = o.model;
    if (!o.gpu.empty()) {
      context.gpu = load_gpu_preset(o.gpu, configs);
    } else {
      context.gpu = preset_with_total(configs, facts.total_gpu_gib ? facts.total_gpu_gib : facts.startup_total_gib);
    }
    std::string version = o.vllm_version;
    if (version.empty() && facts.vllm_version) version = *facts.vllm_version;
    try {
      context.profile = load_vllm_profile(version, configs);
    } catch (const InputError&) {
      if (!o.vllm_version.empty()) throw;
      context.profile = load_vllm_profile("", configs);  // a logged version older than every profile
    }
  } else if (!o.gpu.empty()) {
    context.gpu = load_gpu_preset(o.gpu, configs);
  }
  if (!o.kv_cache_dtype.empty()) context.kv_cache_dtype = o.kv_cache_dtype;

  const Diagnosis d = diagnose_log(facts, context);
  // With `--emit-observation -` stdout carries only the row (for `>> fleet.jsonl`); the report goes to stderr.
  std::ostream& report = o.emit_observation == "-" ? err : out;
  if (o.json) {
    report << to_json(facts, d).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    print_human(facts, d, report);
  }
  if (!o.emit_observation.empty()) {
    const std::string row = observation_row(facts, d, context);
    if (o.emit_observation == "-") {
      out << row << "\n";
    } else {
      std::ofstream file(o.emit_observation);
      if (!file) throw InputError(fmt::format("{}: cannot be written", o.emit_observation));
      file << row << "\n";
    }
  }
  return 0;
}

}  // namespace gpubudget::cli
