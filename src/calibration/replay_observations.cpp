// replay_observations (calibrate.h): every observation row through fit(), with the bundled config
// of its model and the profile of its vLLM version.
#include "gpubudget/calibrate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_reader.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/limits.h"

namespace gpubudget {

namespace {

using Json = nlohmann::json;

template <typename T>
std::optional<T> field(const Json& row, const char* key) {
  if (!row.contains(key) || row[key].is_null()) return std::nullopt;
  try {
    return row[key].get<T>();
  } catch (const Json::exception&) {
    throw InputError(fmt::format("observation {}: field \"{}\" has the wrong type: {}",
                                 row.contains("id") ? row["id"].dump() : "?", key, row[key].dump()));
  }
}

// The leading "X.Y.Z" of a logged version ("0.11.0 (per replication pod spec)").
std::string version_of(const std::optional<std::string>& logged) {
  if (!logged) return "";
  std::size_t start = !logged->empty() && (*logged)[0] == 'v' ? 1 : 0;
  std::size_t end = start;
  while (end < logged->size() && (std::isdigit(static_cast<unsigned char>((*logged)[end])) || (*logged)[end] == '.')) {
    ++end;
  }
  const std::string version = logged->substr(start, end - start);
  return version.find('.') == std::string::npos ? "" : version;
}

double gib_of(Bytes b) { return to_gib(b); }

// The largest observations file read, and its longest line (real rows are about 1.5 KB).
constexpr std::int64_t kMaxObservationsBytes = std::int64_t{256} << 20;
constexpr std::size_t kMaxRowBytes = std::size_t{1} << 20;
// What a GPU can hold, in GiB (figures beyond it are not a GPU's), and the longest length.
constexpr double kMaxGib = 16384;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 40;

// Every figure of a row has the type and the range a real startup can show; the error names the row,
// the field, the value and the range. Overheads can be logged slightly negative (memory freed while
// profiling); weights and needs cannot.
void check_observation_row(const detail::JsonReader& row) {
  for (const char* key : {"model_loading_gib", "activation_peak_gib", "error_needed_gib"}) {
    (void)row.optional_number(key, 0, kMaxGib);
  }
  for (const char* key : {"non_torch_gib", "cudagraph_gib", "available_kv_cache_gib", "error_available_gib"}) {
    (void)row.optional_number(key, -kMaxGib, kMaxGib);
  }
  (void)row.optional_number("gpu_total_memory_gib", 0.001, kMaxGib);
  (void)row.optional_number("gpu_memory_utilization", 0.001, 1.0);
  (void)row.optional_number("max_concurrency", 0, 1e9);
  for (const char* key : {"tp", "pp", "dp", "dcp"}) (void)row.optional_integer(key, 1, kMaxTensorParallelSize);
  for (const char* key : {"max_model_len", "max_num_batched_tokens"}) (void)row.optional_integer(key, 1, kMaxModelLen);
  (void)row.optional_integer("max_num_seqs", 1, kMaxNumSeqs);
  (void)row.optional_integer("block_size", 1, kMaxBlockSize);
  for (const char* key : {"kv_cache_tokens", "max_concurrency_tokens", "estimated_max_model_len",
                          "error_kv_token_capacity", "gpu_blocks", "cpu_blocks"}) {
    (void)row.optional_integer(key, 0, kMaxTokens);
  }
  for (const char* key : {"vllm_version", "gpu_model", "kv_cache_dtype", "quant"}) (void)row.optional_string(key);
  (void)row.boolean("enforce_eager", false);
}

}  // namespace

std::vector<ReplayRow> replay_observations(const std::string& observations, const std::string& aliases_path,
                                           const ConfigDir& configs) {
  return replay_observation_text(detail::read_text_file(observations, kMaxObservationsBytes), observations,
                                 aliases_path, configs);
}

std::vector<ReplayRow> replay_observation_text(const std::string& text, const std::string& observations,
                                               const std::string& aliases_path, const ConfigDir& configs) {
  Json aliases = Json::object();
  Json version_hints = Json::object();
  if (!aliases_path.empty()) {
    const Json file = detail::parse_json(detail::read_text_file(aliases_path), aliases_path);
    const detail::JsonReader r(file, aliases_path);
    aliases = file.value("aliases", Json::object());
    if (!r.has("aliases") || !aliases.is_object()) r.fail("aliases", "an object of logged model id -> {config, kv_only}");
    for (const auto& [id, entry] : aliases.items()) {
      const detail::JsonReader alias(entry, aliases_path, "/aliases/" + id);
      (void)alias.string("config");
      (void)alias.boolean("kv_only", false);
    }
    if (r.has("version_hints")) {
      version_hints = file["version_hints"];
      if (!version_hints.is_object()) r.fail("version_hints", "an object of row id -> {vllm_version, why}");
      for (const auto& [id, entry] : version_hints.items()) {
        const detail::JsonReader hint(entry, aliases_path, "/version_hints/" + id);
        (void)hint.string("vllm_version");
        (void)hint.string("why");
      }
    }
  }
  const auto profiles = list_vllm_profiles(configs);
  std::vector<ReplayRow> rows;
  std::int64_t line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t newline = text.find('\n', begin);
    const std::size_t end = newline == std::string::npos ? text.size() : newline;
    const std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", observations, line_number);
    if (line.size() > kMaxRowBytes) {
      throw InputError(fmt::format("{}: a row of {} bytes, above the {}-byte limit", where, line.size(), kMaxRowBytes));
    }
    Json row;
    try {
      row = detail::parse_json(std::string(line), where);
    } catch (const InputError&) {
      row = nullptr;
    }
    if (!row.is_object() || !row.contains("id") || !row["id"].is_string() || !row.contains("model") ||
        !row["model"].is_string()) {
      throw InputError(fmt::format("{}: not an observation row (one JSON object with string \"id\" and "
                                   "\"model\" per line)",
                                   where));
    }
    check_observation_row(detail::JsonReader(row, where));
    ReplayRow r;
    r.id = row.at("id").get<std::string>();
    r.model = row.at("model").get<std::string>();
    r.vllm_version = field<std::string>(row, "vllm_version").value_or("");
    r.tp = field<std::int64_t>(row, "tp").value_or(1);
    r.logged_tokens = field<std::int64_t>(row, "kv_cache_tokens");
    r.logged_weights_gib = field<double>(row, "model_loading_gib");
    r.logged_available_gib = field<double>(row, "available_kv_cache_gib");
    r.logged_activation_gib = field<double>(row, "activation_peak_gib");
    r.logged_non_torch_gib = field<double>(row, "non_torch_gib");
    r.logged_estimated_len = field<std::int64_t>(row, "estimated_max_model_len");
    r.logged_cudagraph_gib = field<double>(row, "cudagraph_gib");

    r.config = r.model;
    if (aliases.contains(r.model)) {
      r.config = aliases[r.model].at("config").get<std::string>();
      r.kv_only = aliases[r.model].at("kv_only").get<bool>();
    }
    // "../configs/x": a test config folder, relative to the aliases file (reported as "tests/data/configs/x").
    std::string load_from = r.config;
    if (r.config.rfind("../", 0) == 0) {
      load_from = (std::filesystem::path(aliases_path).parent_path() / r.config).lexically_normal().string();
      r.config = "tests/data/" + r.config.substr(3);
    }
    ModelSpec model;
    try {
      model = load_model(load_from, configs);
    } catch (const InputError& e) {
      r.status = "model not supported or not bundled";
      r.config.clear();
      rows.push_back(r);
      continue;
    }
    const auto gpu_model = field<std::string>(row, "gpu_model").value_or("");
    r.gpu = gpu_preset_for_device_name(gpu_model, configs);
    GpuSpec gpu;
    if (!r.gpu.empty()) {
      gpu = load_gpu_preset(r.gpu, configs);
    } else if (const auto total = field<double>(row, "gpu_total_memory_gib")) {
      gpu = custom_gpu(bytes_from_double(*total * static_cast<double>(kGiB)));
      r.gpu = "custom";
    } else {
      r.status = fmt::format("GPU \"{}\" unknown", gpu_model);
      rows.push_back(r);
      continue;
    }
    if (const auto total = field<double>(row, "gpu_total_memory_gib")) {
      gpu.memory = bytes_from_double(std::round(*total * static_cast<double>(kGiB)));
    }
    // A version between 0.10 and the oldest profile runs the oldest profile.
    std::string version = version_of(field<std::string>(row, "vllm_version"));
    if (version.empty() && version_hints.contains(r.id)) {
      version = version_hints[r.id].at("vllm_version").get<std::string>();
      r.note = fmt::format("vLLM version inferred as {}: {}", version, version_hints[r.id].at("why").get<std::string>());
    }
    // Before 0.10 (the V0 engine, early V1) vLLM sized memory otherwise; fit refuses those versions.
    if (const auto number = parse_vllm_version(version); number && *number < VllmVersionNumber{0, 10, 0}) {
      r.vllm_version_used = version;
      r.status = fmt::format("vLLM {} predates the oldest behaviour modelled (0.10)", version);
      rows.push_back(r);
      continue;
    }
    VllmProfile profile;
    try {
      profile = load_vllm_profile(version, configs);
    } catch (const InputError&) {
      profile = load_vllm_profile(profiles.front(), configs);
    }
    r.profile = profile.version;
    r.vllm_version_used = version;

    Deployment d;
    d.tensor_parallel_size = r.tp;
    d.pipeline_parallel_size = field<std::int64_t>(row, "pp").value_or(1);
    d.decode_context_parallel_size = field<std::int64_t>(row, "dcp").value_or(1);
    d.max_model_len = field<std::int64_t>(row, "max_model_len");
    d.max_num_seqs = field<std::int64_t>(row, "max_num_seqs");
    d.max_num_batched_tokens = field<std::int64_t>(row, "max_num_batched_tokens");
    d.block_size = field<std::int64_t>(row, "block_size");
    d.enforce_eager = field<bool>(row, "enforce_eager").value_or(false);
    d.gpu_memory_utilization = field<double>(row, "gpu_memory_utilization");
    d.enable_expert_parallel = field<bool>(row, "ep").value_or(false);
    // An online --quantization changes the weights but not the KV cache.
    const auto quant = field<std::string>(row, "quant").value_or("");
    if (quant.find("online") != std::string::npos) r.kv_only = true;
    const auto kv_dtype = field<std::string>(row, "kv_cache_dtype");
    try {
      d.kv_cache_dtype = parse_kv_cache_dtype_choice(kv_dtype.value_or("auto"), "kv_cache_dtype");
      if (row.contains("extra") && row["extra"].is_object()) {
        d.dtype = parse_model_dtype_choice(field<std::string>(row["extra"], "dtype_arg").value_or("auto"),
                                           "extra.dtype_arg");
        // The launch's --enable-prefix-caching (hybrid models keep more state pages with it).
        d.enable_prefix_caching = field<bool>(row["extra"], "prefix_caching");
        // --language-model-only: the vision tower is not built.
        d.language_model_only = field<bool>(row["extra"], "language_model_only").value_or(false);
        // The offline LLM class has its own batch defaults (EngineArgs.get_batch_defaults, LLM_CLASS).
        if (field<std::string>(row["extra"], "entry_point").value_or("serve") == "llm") d.entry_point = EntryPoint::kLlm;
      }
      const FitResult predicted = fit(model, gpu, d, profile);
      const WorkerBudget& w = predicted.binding_worker();
      if (!r.kv_only) r.predicted_weights_gib = gib_of(w.weights.total);
      if (!r.kv_only) r.predicted_available_gib = gib_of(w.kv_cache);
      r.predicted_activation_gib = gib_of(w.overheads.activation_peak);
      r.predicted_non_torch_gib = gib_of(w.overheads.non_torch);
      r.predicted_cudagraph_gib = gib_of(w.overheads.cudagraph);
      r.cudagraph_charged = w.overheads.cudagraph_charged;
      r.coefficients = profile.overheads;
      if (r.predicted_available_gib) {
        r.predicted_available_low_gib = gib_of(w.kv_cache - predicted.kv_budget_swing);
        r.predicted_available_high_gib = gib_of(w.kv_cache + predicted.kv_budget_swing);
        // With pipeline stages the log shows one worker's line, not saying which: the range spans every
        // stage's (each stage's budget moved by its own overheads x the uncertainty).
        for (const auto& stage : predicted.workers) {
          const double swing = static_cast<double>(stage.overheads.charged().count()) * stage.overheads.relative_uncertainty;
          r.predicted_available_low_gib = std::min(*r.predicted_available_low_gib, to_gib(stage.kv_cache) - swing / static_cast<double>(kGiB));
          r.predicted_available_high_gib = std::max(*r.predicted_available_high_gib, to_gib(stage.kv_cache) + swing / static_cast<double>(kGiB));
        }
      }
      if (r.logged_estimated_len && !r.kv_only) r.predicted_estimated_len = predicted.max_model_len;
      // The overhead model's inputs: the same estimate with unit coefficients.
      VllmProfile unit = profile;
      unit.overheads.sampler_bytes_per_logit = 1;
      unit.overheads.forward_activation_factor = 1;
      const ParallelLayout layout = make_worker_layout(model, gpu, d, profile, w.pp_rank);
      const OverheadEstimate basis =
          estimate_overheads(model_for_dtype(model, d.dtype), layout, gpu, unit, predicted.scheduler, d.enforce_eager);
      r.sampler_basis_bytes = static_cast<double>(basis.sampler.count());
      r.forward_basis_bytes = static_cast<double>(basis.forward.count());
      r.encoder_pass_bytes = static_cast<double>(basis.encoder.pass.count());
      r.encoder_cached_bytes = static_cast<double>(basis.encoder.cached_outputs.count());
      r.worker_layers = layout.end_layer - layout.first_layer;
      const std::int64_t extra_graphs = std::max<std::int64_t>(predicted.cuda_graphs_piecewise - 1, 0) +
                                        std::max<std::int64_t>(predicted.cuda_graphs_full - 1, 0);
      r.graph_layers = static_cast<double>(r.worker_layers) * static_cast<double>(extra_graphs) /
                       static_cast<double>(kReferenceExtraCudaGraphs);
      r.non_torch_class = d.tensor_parallel_size == 1 ? "single"
                          : gpu.nvlink                                         ? "nvlink"
                                                                               : "pcie";
      r.enforce_eager = d.enforce_eager;
      if (d.pipeline_parallel_size > 1) {
        r.status = "ok";
        r.note = "pipeline stages differ; the log shows one worker's available memory, so tokens are not compared";
      } else if (!r.logged_available_gib && r.logged_tokens && !r.kv_only) {
        r.predicted_tokens_unaided = predicted.kv_cache_tokens;
      } else if (r.logged_available_gib && r.logged_tokens) {
        Deployment given = d;
        given.kv_cache_memory =
            bytes_from_double(std::round(*r.logged_available_gib * static_cast<double>(kGiB)));
        r.predicted_tokens = fit(model, gpu, given, profile).kv_cache_tokens;
      }
      r.status = "ok";
    } catch (const InputError& e) {
      r.status = e.what();
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace gpubudget
