// gpubudget._native: the library's operations for the Python package (python/gpubudget, docs/python.md).
//
// Contracts:
// - Every call that computes releases the GIL first; no Python object is touched while it is released.
//   Loaded models are immutable and shared between threads; the GPU presets and vLLM profiles a fit
//   reads are loaded once per process, config directory and name (PresetCache, under a mutex).
// - gpubudget::InputError (bad input: a file, a field, a value) becomes _native.InputError, a
//   ValueError, with the library's message, which is the CLI's. Anything else is a RuntimeError.
// - Sizes cross as Python int bytes; the documents are the CLI's `--json` text (json_documents.h).
#include <dlfcn.h>

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "c_requests.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/hub.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/load.h"
#include "gpubudget/remedies.h"
#include "gpubudget/version.h"
#include "gpubudget/vllm_args.h"

namespace py = pybind11;

namespace {

using gpubudget::Bytes;
using gpubudget::ConfigDir;
using gpubudget::GpuSpec;
using gpubudget::InputError;
using gpubudget::ModelSpec;
using gpubudget::VllmProfile;

// The deepest nesting accepted in a value converted to JSON (the C ABI's limit).
constexpr int kMaxDepth = 16;

// This module's own file, so that configs are found as the C ABI finds them (load.h, find_config_dir).
std::filesystem::path module_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_path), &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return {};
}

// A Python value as JSON: None, bool, int (64-bit), float (finite), str, list / tuple, dict with str keys.
// InputError naming `where` for anything else.
nlohmann::json to_json(py::handle value, const std::string& where, int depth = 0) {
  if (depth > kMaxDepth) throw InputError(where + ": nested deeper than " + std::to_string(kMaxDepth));
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    const long long v = PyLong_AsLongLong(value.ptr());
    if (v == -1 && PyErr_Occurred() != nullptr) {
      PyErr_Clear();
      throw InputError(where + ": expected an integer within 64 bits, got " + py::repr(value).cast<std::string>());
    }
    return static_cast<std::int64_t>(v);
  }
  if (py::isinstance<py::float_>(value)) {
    const double v = value.cast<double>();
    if (!std::isfinite(v)) throw InputError(where + ": expected a finite number, got " + py::repr(value).cast<std::string>());
    return v;
  }
  if (py::isinstance<py::str>(value)) {
    try {
      return value.cast<std::string>();
    } catch (const py::error_already_set&) {
      throw InputError(where + ": a string that is not valid UTF-8");
    } catch (const py::cast_error&) {
      throw InputError(where + ": a string that is not valid UTF-8");
    }
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json out = nlohmann::json::array();
    std::size_t i = 0;
    for (const auto item : value) out.push_back(to_json(item, where + "[" + std::to_string(i++) + "]", depth + 1));
    return out;
  }
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) throw InputError(where + ": keys must be strings");
      const auto name = key.cast<std::string>();
      out[name] = to_json(item, where + "." + name, depth + 1);
    }
    return out;
  }
  throw InputError(where + ": expected None, a bool, an int, a float, a str, a list or a dict, got " +
                   py::str(value.get_type().attr("__name__")).cast<std::string>());
}

// A model as load_model read it, with the config directory its fits use by default.
struct LoadedModel {
  ModelSpec spec;
  ConfigDir configs;
};

// GPU presets and vLLM profiles, read once per (config directory, name): a fit then costs the
// computation alone. Bounded: a cache grown past kMaxEntries starts again.
class PresetCache {
 public:
  std::shared_ptr<const std::vector<GpuSpec>> stage_gpus(const std::vector<std::string>& names,
                                                         std::optional<Bytes> memory, std::int64_t pipeline,
                                                         const ConfigDir& configs) {
    std::string key = configs.root.string();
    for (const auto& name : names) key += '\0' + name;
    key += '\0' + std::to_string(memory ? memory->count() : -1) + '\0' + std::to_string(pipeline);
    return lookup(gpus_, key, [&] { return gpubudget::load_stage_gpus(names, memory, pipeline, configs); });
  }

  std::shared_ptr<const VllmProfile> profile(const std::string& version, const ConfigDir& configs) {
    return lookup(profiles_, configs.root.string() + '\0' + version,
                  [&] { return gpubudget::load_vllm_profile(version, configs); });
  }

 private:
  static constexpr std::size_t kMaxEntries = 1024;

  template <typename T, typename Load>
  std::shared_ptr<const T> lookup(std::map<std::string, std::shared_ptr<const T>>& entries, const std::string& key,
                                  Load load) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (const auto it = entries.find(key); it != entries.end()) return it->second;
    }
    auto loaded = std::make_shared<const T>(load());  // outside the lock: it reads files
    const std::lock_guard<std::mutex> lock(mutex_);
    if (entries.size() >= kMaxEntries) entries.clear();
    return entries.emplace(key, std::move(loaded)).first->second;
  }

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const std::vector<GpuSpec>>> gpus_;
  std::map<std::string, std::shared_ptr<const VllmProfile>> profiles_;
};

PresetCache& preset_cache() {
  static PresetCache cache;
  return cache;
}

// One fit and what its document needs; the document (with the remedies, which cost many fits) is
// built on first request.
class FitAnswer {
 public:
  // `launch_warnings`: what reading the launch line warned about, shown after the fit's own (as the CLI).
  FitAnswer(std::shared_ptr<const LoadedModel> model, std::shared_ptr<const std::vector<GpuSpec>> gpus,
            gpubudget::Deployment deployment, std::shared_ptr<const VllmProfile> profile, std::string vllm_version,
            const std::vector<gpubudget::Notice>& launch_warnings = {})
      : model_(std::move(model)),
        gpus_(std::move(gpus)),
        deployment_(std::move(deployment)),
        profile_(std::move(profile)),
        vllm_version_(std::move(vllm_version)),
        result_(gpubudget::fit(model_->spec, *gpus_, deployment_, *profile_)) {
    for (const auto& w : launch_warnings) gpubudget::add_unique(result_.warnings, w);
  }

  const gpubudget::FitResult& result() const { return result_; }
  const gpubudget::Deployment& deployment() const { return deployment_; }
  const VllmProfile& profile() const { return *profile_; }
  const GpuSpec& gpu() const { return gpus_->front(); }

  // The `fit --json` document; thread-safe, computed once.
  const std::string& document() {
    std::call_once(document_once_, [this] {
      std::vector<gpubudget::Remedy> remedies;
      if (!result_.fits) remedies = gpubudget::find_remedies(model_->spec, *gpus_, deployment_, *profile_, result_);
      const gpubudget::FitQuery query{model_->spec, *gpus_, deployment_, *profile_, vllm_version_};
      document_ = gpubudget::fit_json(query, result_, remedies);
    });
    return document_;
  }

 private:
  std::shared_ptr<const LoadedModel> model_;
  std::shared_ptr<const std::vector<GpuSpec>> gpus_;
  gpubudget::Deployment deployment_;
  std::shared_ptr<const VllmProfile> profile_;
  std::string vllm_version_;
  gpubudget::FitResult result_;
  std::once_flag document_once_;
  std::string document_;
};

std::shared_ptr<LoadedModel> load_model(const std::string& model, const std::string& config_dir,
                                        const std::string& revision, std::optional<bool> offline) {
  auto loaded = std::make_shared<LoadedModel>();
  loaded->configs = gpubudget::find_config_dir(config_dir, module_path());
  gpubudget::HubOptions hub = gpubudget::hub_options_from_environment();
  hub.revision = revision;
  if (offline) hub.offline = *offline;
  loaded->spec = gpubudget::load_model(model, loaded->configs, hub);
  return loaded;
}

// The figures FitResult's dataclass holds (python/gpubudget/_results.py), named as in the document.
py::dict fit_summary(const FitAnswer& answer) {
  const gpubudget::FitResult& r = answer.result();
  const gpubudget::WorkerBudget& w = r.binding_worker();
  py::dict per_gpu;
  per_gpu["requested_bytes"] = w.requested.count();
  per_gpu["weights_bytes"] = w.weights.total.count();
  per_gpu["activation_peak_bytes"] = w.overheads.activation_peak.count();
  per_gpu["encoder_profile_bytes"] = w.overheads.encoder.pass.count();
  per_gpu["non_torch_bytes"] = w.overheads.non_torch.count();
  per_gpu["cudagraph_bytes"] = w.overheads.cudagraph_charged ? w.overheads.cudagraph.count() : 0;
  per_gpu["kv_cache_bytes"] = w.kv_cache.count();
  per_gpu["kv_cache_uncertainty_bytes"] = r.kv_budget_swing.count();
  py::dict kv;
  kv["bytes_per_token"] = w.kv.bytes_per_token().count();
  kv["block_bytes"] = w.kv.block_bytes().count();
  kv["num_blocks"] = r.num_blocks;
  kv["tokens"] = r.kv_cache_tokens;
  py::dict request;
  request["max_model_len"] = r.judged_max_model_len;
  request["needed_bytes"] = r.needed.count();
  request["fits"] = r.fits;
  request["kv_fits"] = r.kv_fits;
  request["auto_fitted"] = r.auto_fitted;
  request["vllm_error"] = r.vllm_error.empty() ? py::object(py::none()) : py::object(py::str(r.vllm_error));
  py::dict out;
  out["fits"] = r.fits;
  out["max_model_len"] = r.max_model_len;
  out["max_model_len_range"] = py::make_tuple(r.max_model_len_low, r.max_model_len_high);
  out["vllm_would_start"] = r.vllm_would_start;
  out["start_blocker"] = r.start_blocker.empty() ? py::object(py::none()) : py::object(py::str(r.start_blocker));
  out["gpu"] = answer.gpu().name;
  out["kv_cache_dtype"] = r.kv_cache_dtype.name;
  out["block_size"] = r.block_size;
  out["vllm_profile"] = answer.profile().version;
  out["per_gpu"] = per_gpu;
  out["kv_cache"] = kv;
  out["request"] = request;
  out["warnings"] = py::tuple(py::cast(gpubudget::notice_texts(r.warnings)));
  out["warning_codes"] = py::tuple(py::cast(gpubudget::notice_code_names(r.warnings)));
  out["notes"] = py::tuple(py::cast(gpubudget::notice_texts(r.notes)));
  out["note_codes"] = py::tuple(py::cast(gpubudget::notice_code_names(r.notes)));
  return out;
}

std::shared_ptr<FitAnswer> fit(const std::shared_ptr<const LoadedModel>& model, const std::vector<std::string>& gpus,
                               std::optional<std::int64_t> gpu_memory_bytes, const std::string& vllm_version,
                               const py::dict& deployment, const std::vector<std::string>& vllm_args) {
  if (!model) throw InputError("gpubudget.fit: model is None");
  if (gpu_memory_bytes && *gpu_memory_bytes < 1) {
    throw InputError("gpubudget.fit: gpu_memory_bytes: expected a positive number of bytes, got " +
                     std::to_string(*gpu_memory_bytes));
  }
  const nlohmann::json fields = to_json(deployment, "gpubudget.fit");
  const py::gil_scoped_release released;
  gpubudget::Deployment d = gpubudget::c_api::read_deployment_fields(fields, "gpubudget.fit");
  auto profile = preset_cache().profile(vllm_version, model->configs);
  std::vector<gpubudget::Notice> launch_warnings;
  if (!vllm_args.empty()) {
    // The launch line as the C ABI's "vllm_args" reads it (vllm_args.h); the environment may change the
    // version's behaviour, so the profile is this fit's own copy.
    const auto line = gpubudget::parse_vllm_args(vllm_args, gpubudget::load_engine_args(model->configs));
    auto own = std::make_shared<VllmProfile>(*profile);
    const gpubudget::HubOptions hub = gpubudget::hub_options_from_environment();
    auto launch = gpubudget::deployment_from_launch_line(
        line, model->spec, *own, [&](const std::string& id) { return gpubudget::load_model(id, model->configs, hub); });
    d = std::move(launch.deployment);
    launch_warnings = std::move(launch.warnings);
    profile = std::move(own);
  }
  std::optional<Bytes> memory;
  if (gpu_memory_bytes) memory = Bytes(*gpu_memory_bytes);
  if (gpus.empty() && !memory) throw InputError("gpubudget.fit: give gpu (a preset name, see gpubudget.gpus()) or gpu_memory_bytes");
  auto stage_gpus = preset_cache().stage_gpus(gpus, memory, d.pipeline_parallel_size, model->configs);
  return std::make_shared<FitAnswer>(model, std::move(stage_gpus), std::move(d), std::move(profile), vllm_version,
                                     launch_warnings);
}

// Any other operation (c_requests.h): `request` as the C ABI takes it, with `model` already loaded
// when given. Returns (status, document): 0 computed, 1 computed and nothing fits / found; bad
// input raises InputError, an internal error RuntimeError.
py::tuple run(const py::dict& request, const std::shared_ptr<const LoadedModel>& model) {
  const nlohmann::json value = to_json(request, "request");
  gpubudget::c_api::Answer answer;
  {
    const py::gil_scoped_release released;
    answer = gpubudget::c_api::answer_request(value, module_path(), model ? &model->spec : nullptr);
  }
  if (answer.status == 3 || answer.status == 4) {
    const auto error = nlohmann::json::parse(answer.document, nullptr, false);
    const std::string message = error.is_object() && error.contains("error") && error["error"].is_string()
                                    ? error["error"].get<std::string>()
                                    : answer.document;
    if (answer.status == 3) throw InputError(message);
    throw std::runtime_error(message);
  }
  return py::make_tuple(answer.status, answer.document);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "gpubudget's C++ library for the gpubudget package; use the package's functions, not these.";
  m.attr("__version__") = gpubudget::kVersion;
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<LoadedModel, std::shared_ptr<LoadedModel>>(m, "Model")
      .def_property_readonly("source", [](const LoadedModel& x) { return x.spec.source; })
      .def_property_readonly("architecture", [](const LoadedModel& x) { return x.spec.architecture; })
      .def_property_readonly("model_type", [](const LoadedModel& x) { return x.spec.model_type; })
      .def_property_readonly("family", [](const LoadedModel& x) { return x.spec.family; })
      .def_property_readonly("num_layers", [](const LoadedModel& x) { return x.spec.layers.size(); })
      .def_property_readonly("derived_max_model_len", [](const LoadedModel& x) { return x.spec.derived_max_model_len; })
      .def_property_readonly("unmodelled_config_keys", [](const LoadedModel& x) { return x.spec.unmodelled_config_keys; })
      .def_property_readonly("generic_assumptions", [](const LoadedModel& x) { return x.spec.generic_assumptions; })
      .def_property_readonly("config_dir", [](const LoadedModel& x) { return x.configs.root.string(); });

  py::class_<FitAnswer, std::shared_ptr<FitAnswer>>(m, "FitAnswer")
      .def("summary", &fit_summary)
      .def(
          "document", [](FitAnswer& x) { return x.document(); }, py::call_guard<py::gil_scoped_release>());

  m.def("load_model", &load_model, py::arg("model"), py::arg("config_dir"), py::arg("revision"), py::arg("offline"),
        py::call_guard<py::gil_scoped_release>());
  m.def("fit", &fit, py::arg("model"), py::arg("gpus"), py::arg("gpu_memory_bytes"), py::arg("vllm_version"),
        py::arg("deployment"), py::arg("vllm_args"));
  m.def("run", &run, py::arg("request"), py::arg("model"));
}
