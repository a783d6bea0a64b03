// The C ABI's operations on the library API (c_requests.h). Each request is read with JsonReader, so
// a malformed one is an InputError naming the field ("request:/deployment/tensor_parallel_size: ...").
#include "c_api/c_requests.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "core/json_reader.h"
#include "gpubudget/hub.h"
#include "gpubudget/diagnosis.h"
#include "gpubudget/error.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/launch_command.h"
#include "gpubudget/limits.h"
#include "gpubudget/load.h"
#include "gpubudget/plan.h"
#include "gpubudget/remedies.h"
#include "gpubudget/sweep.h"
#include "gpubudget/version.h"
#include "gpubudget/vllm_args.h"
#include "gpubudget/vllm_log.h"
#include "gpubudget/weights_report.h"

namespace gpubudget::c_api {

namespace {

using detail::JsonReader;

constexpr std::int64_t kAnyCount = std::numeric_limits<std::int64_t>::max();

// The deployment's fields, with vLLM's argument names; absent ones keep Deployment's defaults.
Deployment read_deployment(const JsonReader& r) {
  r.reject_unknown_keys({"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                         "decode_context_parallel_size", "enable_expert_parallel", "num_redundant_experts",
                         "pp_layer_partition", "gpu_memory_utilization", "dtype", "kv_cache_dtype", "max_model_len",
                         "max_num_seqs", "max_num_batched_tokens", "block_size", "entry_point", "enforce_eager",
                         "skip_mm_profiling", "mamba_cache_mode", "kv_cache_memory_bytes", "enable_prefix_caching",
                         "mamba_cache_dtype", "mamba_ssm_cache_dtype", "mamba_block_size", "num_gpu_blocks_override",
                         "kv_cache_dtype_skip_layers", "disable_hybrid_kv_cache_manager", "kv_connector",
                         "allow_chunked_local_attn_with_hybrid_kv_cache"});
  Deployment d;
  d.tensor_parallel_size = r.optional_integer("tensor_parallel_size", 1, kAnyCount).value_or(1);
  d.pipeline_parallel_size = r.optional_integer("pipeline_parallel_size", 1, kAnyCount).value_or(1);
  d.data_parallel_size = r.optional_integer("data_parallel_size", 1, kAnyCount).value_or(1);
  d.decode_context_parallel_size = r.optional_integer("decode_context_parallel_size", 1, kAnyCount).value_or(1);
  d.enable_expert_parallel = r.boolean("enable_expert_parallel", false);
  d.num_redundant_experts = r.optional_integer("num_redundant_experts", 0, kAnyCount).value_or(0);
  d.pp_layer_partition = r.integer_list("pp_layer_partition", 1, kAnyCount);
  d.gpu_memory_utilization = r.optional_number("gpu_memory_utilization", 0.0, 1.0);
  if (const auto text = r.optional_string("dtype")) d.dtype = parse_model_dtype_choice(*text, r.path("dtype"));
  if (const auto text = r.optional_string("kv_cache_dtype")) {
    d.kv_cache_dtype = parse_kv_cache_dtype_choice(*text, r.path("kv_cache_dtype"));
  }
  // max_model_len: a length, or "auto" / -1 for vLLM's auto-fit (0.14+); absent: the model's maximum.
  if (r.has("max_model_len")) {
    const auto& v = r.value()["max_model_len"];
    if ((v.is_string() && v.get<std::string>() == "auto") || (v.is_number_integer() && v.get<std::int64_t>() == -1)) {
      d.max_model_len_auto = true;
    } else {
      d.max_model_len = r.integer("max_model_len", 1, kAnyCount);
    }
  }
  d.max_num_seqs = r.optional_integer("max_num_seqs", 1, kAnyCount);
  d.max_num_batched_tokens = r.optional_integer("max_num_batched_tokens", 1, kAnyCount);
  d.block_size = r.optional_integer("block_size", 1, kAnyCount);
  if (const auto text = r.optional_string("entry_point")) d.entry_point = parse_entry_point(*text, r.path("entry_point"));
  d.enforce_eager = r.boolean("enforce_eager", false);
  d.skip_mm_profiling = r.boolean("skip_mm_profiling", false);
  if (const auto text = r.optional_string("mamba_cache_mode")) {
    d.mamba_cache_mode = parse_mamba_cache_mode(*text, r.path("mamba_cache_mode"));
  }
  if (const auto bytes = r.optional_integer("kv_cache_memory_bytes", 0, kAnyCount)) d.kv_cache_memory = Bytes(*bytes);
  auto optional_boolean = [&r](std::string_view key) -> std::optional<bool> {
    if (!r.has(key)) return std::nullopt;
    return r.boolean(key, false);
  };
  d.enable_prefix_caching = optional_boolean("enable_prefix_caching");
  if (const auto text = r.optional_string("mamba_cache_dtype")) {
    d.mamba_cache_dtype = parse_mamba_dtype_choice(*text, r.path("mamba_cache_dtype"));
  }
  if (const auto text = r.optional_string("mamba_ssm_cache_dtype")) {
    d.mamba_ssm_cache_dtype = parse_mamba_dtype_choice(*text, r.path("mamba_ssm_cache_dtype"));
  }
  d.mamba_block_size = r.optional_integer("mamba_block_size", 1, kAnyCount);
  d.num_gpu_blocks_override = r.optional_integer("num_gpu_blocks_override", 1, kAnyCount);
  d.kv_cache_dtype_skip_layers = r.string_list("kv_cache_dtype_skip_layers");
  d.disable_hybrid_kv_cache_manager = optional_boolean("disable_hybrid_kv_cache_manager");
  d.kv_connector = r.optional_string("kv_connector").value_or("");
  d.allow_chunked_local_attn_with_hybrid_kv_cache = optional_boolean("allow_chunked_local_attn_with_hybrid_kv_cache");
  return d;
}

Deployment deployment_of(const JsonReader& request) {
  const auto deployment = request.optional_object("deployment");
  return deployment ? read_deployment(*deployment) : Deployment{};
}

// "gpu": a preset name or a list of names (one per pipeline stage); "gpu_memory_bytes" overrides
// the total, or stands alone for a custom GPU.
std::vector<std::string> gpu_names(const JsonReader& request, const char* key) {
  if (!request.has(key)) return {};
  if (request.value()[key].is_string()) return {request.string(key)};
  return request.string_list(key);
}

std::optional<Bytes> gpu_memory(const JsonReader& request) {
  const auto bytes = request.optional_integer("gpu_memory_bytes", 1, kAnyCount);
  return bytes ? std::optional<Bytes>(Bytes(*bytes)) : std::nullopt;
}

VllmProfile profile_of(const JsonReader& request, const ConfigDir& configs) {
  if (request.has("profile")) {
    if (request.has("vllm_version")) request.fail("profile", "either \"profile\" or \"vllm_version\", not both");
    return load_vllm_profile_file(request.string("profile"), configs);
  }
  return load_vllm_profile(request.optional_string("vllm_version").value_or(""), configs);
}

// Where "model" is looked for beyond paths and bundled ids: the environment's Hugging Face settings
// (hub.h), with the request's "revision" and "hub": {"offline", "refresh", "timeout_seconds"}.
HubOptions hub_of(const JsonReader& r) {
  HubOptions o = hub_options_from_environment();
  o.revision = r.optional_string("revision").value_or("");
  if (const auto hub = r.optional_object("hub")) {
    hub->reject_unknown_keys({"offline", "refresh", "timeout_seconds"});
    o.offline = hub->boolean("offline", o.offline);
    o.refresh = hub->boolean("refresh", false);
    const double limit = static_cast<double>(kMaxHubTimeout.count()) / 1000.0;
    if (const auto seconds = hub->optional_number("timeout_seconds", 0.001, limit)) {
      o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*seconds * 1000.0 + 0.5));
    }
  }
  return o;
}

// "vllm_args": the launch line as words (vllm_args.h), or absent. One of it and "deployment".
std::optional<VllmLaunchLine> launch_line_of(const JsonReader& r, const ConfigDir& configs) {
  if (!r.has("vllm_args")) return std::nullopt;
  if (r.has("deployment")) r.fail("vllm_args", "absent when \"deployment\" is given (one of the two describes the launch)");
  const auto words = r.string_list("vllm_args");
  return parse_vllm_args(words, load_engine_args(configs));
}

// The request's deployment: its "vllm_args" resolved as vLLM resolves them (with what they change of
// `profile`, and their warnings), else its "deployment" fields.
LaunchDeployment launch_of(const JsonReader& r, const std::optional<VllmLaunchLine>& line, const ModelSpec& model,
                           VllmProfile& profile, const ConfigDir& configs) {
  if (!line) return {deployment_of(r), {}};
  const HubOptions hub = hub_of(r);
  return deployment_from_launch_line(*line, model, profile,
                                     [&](const std::string& id) { return load_model(id, configs, hub); });
}

// The request's "model", or the caller's model already loaded (then the request names none), or the
// model its "vllm_args" serve (`vllm serve MODEL`, with their --revision and --download-dir).
ModelSpec model_of(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded,
                   const std::optional<VllmLaunchLine>& line = std::nullopt) {
  if (preloaded != nullptr) {
    for (const char* key : {"model", "revision", "hub"}) {
      if (r.has(key)) r.fail(key, "nothing: the model is given already loaded");
    }
    return *preloaded;
  }
  HubOptions hub = hub_of(r);
  if (line && !line->download_dir.empty()) hub.hf_cache_dir = line->download_dir;
  if (line && !line->revision.empty()) {
    if (!hub.revision.empty() && hub.revision != line->revision) {
      r.fail("revision", fmt::format("the revision vllm_args give (--revision {})", line->revision));
    }
    hub.revision = line->revision;
  }
  if (!r.has("model") && line && !line->model.empty()) return load_model(line->model, configs, hub);
  if (line && !line->model.empty() && r.string("model") != line->model) {
    r.fail("model", fmt::format("the model vllm_args serve ({}), or absent", line->model));
  }
  return load_model(r.string("model"), configs, hub);
}

// One fit as the request describes it, with what its documents need.
struct RequestFit {
  std::optional<VllmLaunchLine> line;
  ModelSpec model;
  VllmProfile profile;
  LaunchDeployment launch;
  std::vector<GpuSpec> gpus;
  FitResult result;  // with the launch line's warnings after the fit's own
};

RequestFit request_fit(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded) {
  RequestFit f;
  f.line = launch_line_of(r, configs);
  f.model = model_of(r, configs, preloaded, f.line);
  f.profile = profile_of(r, configs);
  f.launch = launch_of(r, f.line, f.model, f.profile, configs);
  const Deployment& d = f.launch.deployment;
  f.gpus = load_stage_gpus(gpu_names(r, "gpu"), gpu_memory(r), d.pipeline_parallel_size, configs);
  return f;
}

Answer fit_operation(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded) {
  r.reject_unknown_keys({"operation", "config_dir", "model", "revision", "hub", "gpu", "gpu_memory_bytes", "vllm_version", "profile",
                         "deployment", "vllm_args"});
  RequestFit f = request_fit(r, configs, preloaded);
  const Deployment& d = f.launch.deployment;
  FitMemo memo(f.model);
  const FitResult result = fit(f.model, f.gpus, d, f.profile, &memo);
  std::vector<Remedy> remedies;
  if (!result.fits) remedies = find_remedies(f.model, f.gpus, d, f.profile, result, &memo);
  const FitQuery query{f.model, f.gpus, d, f.profile, r.optional_string("vllm_version").value_or("")};
  FitResult shown = result;
  for (const auto& w : f.launch.warnings) add_unique(shown.warnings, w);
  return {result.fits ? 0 : 1, fit_json(query, shown, remedies)};
}

// The `vllm serve` command to launch the fit's deployment with (the CLI's `fit --vllm-args`): the length
// that fits kept "safety_margin_percent" (default 5) below the edge, and the model's id as the request
// (or its vllm_args) names it.
Answer vllm_serve_operation(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded) {
  r.reject_unknown_keys({"operation", "config_dir", "model", "revision", "hub", "gpu", "gpu_memory_bytes", "vllm_version", "profile",
                         "deployment", "vllm_args", "safety_margin_percent"});
  const double margin =
      r.optional_number("safety_margin_percent", 0.0, kMaxSafetyMarginPercent).value_or(kDefaultSafetyMarginPercent);
  RequestFit f = request_fit(r, configs, preloaded);
  const FitResult result = fit(f.model, f.gpus, f.launch.deployment, f.profile);
  const LaunchLength length = launch_length(result, margin);
  const std::string served = r.has("model") ? r.string("model") : f.line && !f.line->model.empty() ? f.line->model : "MODEL";
  nlohmann::ordered_json j;
  j["max_model_len"] = length.max_model_len;
  j["vllm_serve"] = length.max_model_len > 0 ? nlohmann::ordered_json(vllm_serve_command(
                                                   served, f.line ? f.line->arguments : VllmArguments{},
                                                   f.launch.deployment, result, length.max_model_len))
                                             : nlohmann::ordered_json();
  std::string note = length.note;
  if (const std::string caveat = vllm_serve_caveat(f.launch.deployment); !caveat.empty() && length.max_model_len > 0) {
    note += (note.empty() ? "" : "; ") + caveat;
  }
  j["note"] = note.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(note);
  return {length.max_model_len > 0 ? 0 : 1, j.dump(2) + "\n"};
}

Answer weights_operation(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded) {
  r.reject_unknown_keys({"operation", "config_dir", "model", "revision", "hub", "gpu", "vllm_version", "deployment",
                         "vllm_args", "by", "read_headers"});
  const auto line = launch_line_of(r, configs);
  const ModelSpec checkpoint = model_of(r, configs, preloaded, line);
  VllmProfile profile = load_vllm_profile(r.optional_string("vllm_version").value_or(""), configs);
  const Deployment d = launch_of(r, line, checkpoint, profile, configs).deployment;
  const ModelSpec model = model_for_dtype(checkpoint, d.dtype);
  std::optional<GpuSpec> gpu;
  if (r.has("gpu")) gpu = load_gpu_preset(r.string("gpu"), configs);
  const std::string by = r.optional_string("by").value_or("component");
  WeightsGrouping grouping = WeightsGrouping::kComponent;
  if (by == "layer") {
    grouping = WeightsGrouping::kLayer;
  } else if (by == "tensor") {
    grouping = WeightsGrouping::kTensor;
  } else if (by != "component") {
    r.fail("by", "\"component\", \"layer\" or \"tensor\"");
  }
  std::optional<CheckpointHeaders> headers;
  if (r.boolean("read_headers", true)) {
    std::error_code ec;
    const std::filesystem::path source(model.source);
    headers = read_checkpoint_headers((std::filesystem::is_directory(source, ec) ? source : source.parent_path()).string());
  }
  return {0, weights_json(weights_report(model, gpu, d, profile, grouping, headers))};
}

// A list of integers, or the default when absent.
std::vector<std::int64_t> counts(const JsonReader& r, const char* key, std::int64_t default_value) {
  auto values = r.integer_list(key, 1, kAnyCount);
  if (!r.has(key)) values = {default_value};
  if (values.empty()) r.fail(key, "a non-empty array of positive integers");
  return values;
}

Answer sweep_operation(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded) {
  r.reject_unknown_keys({"operation", "config_dir", "model", "revision", "hub", "gpus", "tensor_parallel_sizes", "pipeline_parallel_sizes",
                         "decode_context_parallel_sizes", "kv_cache_dtypes", "gpu_memory_utilizations", "max_num_seqs",
                         "max_model_len", "target_len", "vllm_version", "deployment", "vllm_args", "layouts"});
  if (r.has("max_model_len") && r.has("target_len")) {
    r.fail("target_len", "absent when max_model_len is given (target_len is its older name)");
  }
  const auto line = launch_line_of(r, configs);
  const ModelSpec model = model_of(r, configs, preloaded, line);
  VllmProfile profile = load_vllm_profile(r.optional_string("vllm_version").value_or(""), configs);
  const Deployment base = launch_of(r, line, model, profile, configs).deployment;
  SweepAxes axes;
  // (GPU, TP) pairs, as the CLI's --layout h200:4,h100:8, instead of gpus x tensor_parallel_sizes.
  for (const auto& pair : r.object_list("layouts")) {
    pair.reject_unknown_keys({"gpu", "tensor_parallel_size"});
    axes.layouts.push_back({load_gpu_preset(pair.string("gpu"), configs),
                            pair.integer("tensor_parallel_size", 1, kMaxTensorParallelSize)});
  }
  if (r.has("layouts")) {
    if (axes.layouts.empty()) r.fail("layouts", "a non-empty array of {gpu, tensor_parallel_size} objects");
    if (r.has("gpus") || r.has("tensor_parallel_sizes")) {
      r.fail("layouts", "given instead of gpus and tensor_parallel_sizes (each pair names its GPU and TP)");
    }
    axes.tensor_parallel.clear();
  } else {
    const auto names = r.string_list("gpus");
    if (names.empty()) r.fail("gpus", "a non-empty array of GPU preset names");
    for (const auto& name : names) axes.gpus.push_back(load_gpu_preset(name, configs));
    axes.tensor_parallel = counts(r, "tensor_parallel_sizes", 1);
  }
  axes.pipeline_parallel = counts(r, "pipeline_parallel_sizes", 1);
  axes.decode_context_parallel = counts(r, "decode_context_parallel_sizes", 1);
  if (r.has("kv_cache_dtypes")) {
    axes.kv_cache_dtypes.clear();
    for (const auto& name : r.string_list("kv_cache_dtypes")) {
      axes.kv_cache_dtypes.push_back(parse_kv_cache_dtype_choice(name, r.path("kv_cache_dtypes")));
    }
    if (axes.kv_cache_dtypes.empty()) r.fail("kv_cache_dtypes", "a non-empty array of KV dtypes");
  }
  if (r.has("gpu_memory_utilizations")) {
    const auto& list = r.value()["gpu_memory_utilizations"];
    if (!list.is_array() || list.empty()) r.fail("gpu_memory_utilizations", "a non-empty array of numbers in (0, 1]");
    axes.utilizations.clear();
    for (const auto& v : list) {
      if (!v.is_number() || !(v.get<double>() > 0.0 && v.get<double>() <= 1.0)) {
        r.fail("gpu_memory_utilizations", "a non-empty array of numbers in (0, 1]");
      }
      axes.utilizations.emplace_back(v.get<double>());
    }
  }
  if (r.has("max_num_seqs")) {
    axes.max_num_seqs.clear();
    for (const auto v : counts(r, "max_num_seqs", 1)) axes.max_num_seqs.emplace_back(v);
  }
  // The length the concurrency column is for: max_model_len, as the CLI's sweep --max-model-len
  // (target_len is its older name, still read).
  const std::int64_t target = r.optional_integer(r.has("target_len") ? "target_len" : "max_model_len", 1, kAnyCount)
                                  .value_or(0);
  const auto rows = run_sweep(model, axes, base, profile, target);
  const std::string version = r.optional_string("vllm_version").value_or(profile.version);
  return {0, sweep_json(model, rows, target > 0 ? target : model.derived_max_model_len, version)};
}

Answer plan_operation(const JsonReader& r, const ConfigDir& configs, const ModelSpec* preloaded) {
  r.reject_unknown_keys({"operation", "config_dir", "model", "revision", "hub", "gpus", "max_model_len", "concurrency",
                         "max_pipeline_parallel_size", "gpus_per_node", "vllm_version", "deployment", "vllm_args"});
  const auto line = launch_line_of(r, configs);
  const ModelSpec model = model_of(r, configs, preloaded, line);
  VllmProfile profile = load_vllm_profile(r.optional_string("vllm_version").value_or(""), configs);
  const Deployment base = launch_of(r, line, model, profile, configs).deployment;
  PlanRequest request;
  request.max_model_len = r.optional_integer("max_model_len", 1, kAnyCount).value_or(model.derived_max_model_len);
  request.concurrency = r.optional_integer("concurrency", 1, kAnyCount).value_or(1);
  request.max_pipeline = r.optional_integer("max_pipeline_parallel_size", 1, kAnyCount).value_or(request.max_pipeline);
  request.gpus_per_node = r.optional_integer("gpus_per_node", 1, kAnyCount).value_or(request.gpus_per_node);
  std::vector<GpuSpec> gpus;
  if (r.has("gpus")) {
    for (const auto& name : r.string_list("gpus")) gpus.push_back(load_gpu_preset(name, configs));
  } else {
    gpus = list_gpu_presets(configs);
  }
  const auto answers = plan_deployments(model, gpus, base, profile, request);
  const bool found = std::any_of(answers.begin(), answers.end(), [](const PlanAnswer& a) { return a.found; });
  return {found ? 0 : 1, plan_json(answers)};
}

Answer diagnose_operation(const JsonReader& r, const ConfigDir& configs) {
  r.reject_unknown_keys(
      {"operation", "config_dir", "log", "model", "revision", "hub", "gpu", "vllm_version", "kv_cache_dtype"});
  DiagnoseSettings settings{r.optional_string("model").value_or(""), r.optional_string("gpu").value_or(""),
                            r.optional_string("vllm_version").value_or(""), std::nullopt, std::nullopt};
  if (!settings.model.empty()) settings.hub = hub_of(r);
  if (const auto text = r.optional_string("kv_cache_dtype")) {
    settings.kv_cache_dtype = parse_kv_cache_dtype_choice(*text, r.path("kv_cache_dtype"));
  }
  const LogDiagnosis result =
      diagnose_with_settings(read_vllm_log_file(r.string("log"), load_vllm_log_wordings(configs)), settings, configs);
  return {0, diagnosis_json(result.facts, result.diagnosis)};
}

// The launch line read, not resolved: "vllm_args" (words) or "line" (one string, split as a shell does).
Answer parse_vllm_args_operation(const JsonReader& r, const ConfigDir& configs) {
  r.reject_unknown_keys({"operation", "config_dir", "vllm_args", "line"});
  if (r.has("vllm_args") == r.has("line")) r.fail("vllm_args", "given, or \"line\" instead (one of the two)");
  const auto words = r.has("line") ? split_command_line(r.string("line")) : r.string_list("vllm_args");
  const VllmLaunchLine line = parse_vllm_args(words, load_engine_args(configs));
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
  nlohmann::ordered_json environment = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < line.flags.size(); ++i) {
    const std::string& flag = line.flags[i];
    if (flag.rfind("--", 0) != 0) {  // VAR=VALUE
      const auto eq = flag.find('=');
      environment[flag.substr(0, eq)] = flag.substr(eq + 1);
      continue;
    }
    const auto table = vllm_arguments();
    const auto row = std::find_if(table.begin(), table.end(), [&](const VllmArgument& a) { return a.flag == flag; });
    const bool value = (row == table.end() || row->takes_value) && i + 1 < line.flags.size();
    const std::string text = value ? line.flags[++i] : "";
    if (value) {
      arguments[flag] = text;
    } else {
      arguments[flag] = true;
    }
  }
  const auto text_or_null = [](const std::string& s) { return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s); };
  nlohmann::ordered_json j;
  j["model"] = text_or_null(line.model);
  j["revision"] = text_or_null(line.revision);
  j["download_dir"] = text_or_null(line.download_dir);
  j["words"] = words;  // the line as words: what "vllm_args" of another operation takes, notes and all
  j["vllm_args"] = line.flags;
  j["arguments"] = arguments;
  j["environment"] = environment;
  j["notes"] = notice_texts(line.notes);
  j["note_codes"] = notice_code_names(line.notes);
  j["ignored"] = line.ignored;
  return {0, j.dump(2) + "\n"};
}

Answer catalog_operation(const std::string& operation, const JsonReader& r, const ConfigDir& configs) {
  r.reject_unknown_keys({"operation", "config_dir"});
  if (operation == "gpus") return {0, gpus_json(list_gpu_presets(configs))};
  return {0, models_json(list_bundled_models(configs))};
}

}  // namespace

std::string error_document(const std::string& message, int status) {
  return nlohmann::ordered_json{{"error", message}, {"status", status}}.dump(
      -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Deployment read_deployment_fields(const nlohmann::json& fields, const std::string& origin) {
  if (!fields.is_object()) throw InputError(origin + ": expected an object of deployment fields");
  return read_deployment(JsonReader(fields, origin));
}

Answer answer_request(const nlohmann::json& request, const std::filesystem::path& library, const ModelSpec* preloaded) {
  try {
    if (!request.is_object()) throw InputError("request: expected a JSON object with an \"operation\"");
    const JsonReader r(request, "request");
    const std::string operation = r.string("operation");
    if (operation == "version") {
      r.reject_unknown_keys({"operation"});
      return {0, nlohmann::ordered_json{{"version", kVersion}}.dump(2) + "\n"};
    }
    const ConfigDir configs = find_config_dir(r.optional_string("config_dir").value_or(""), library);
    if (operation == "fit") return fit_operation(r, configs, preloaded);
    if (operation == "vllm_serve") return vllm_serve_operation(r, configs, preloaded);
    if (operation == "weights") return weights_operation(r, configs, preloaded);
    if (operation == "sweep") return sweep_operation(r, configs, preloaded);
    if (operation == "plan") return plan_operation(r, configs, preloaded);
    if (operation == "diagnose") return diagnose_operation(r, configs);
    if (operation == "parse_vllm_args") return parse_vllm_args_operation(r, configs);
    if (operation == "gpus" || operation == "models") return catalog_operation(operation, r, configs);
    r.fail("operation", "one of version, fit, vllm_serve, weights, sweep, plan, diagnose, parse_vllm_args, gpus, models");
  } catch (const InputError& e) {
    return {3, error_document(e.what(), 3)};
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return {4, error_document(std::string("internal error: ") + e.what(), 4)};
  }
}

}  // namespace gpubudget::c_api
