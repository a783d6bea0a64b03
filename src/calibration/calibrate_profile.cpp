// calibrate_profile (calibrate.h): least-squares fits of a profile's overhead coefficients.
#include "gpubudget/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "gpubudget/bytes.h"
#include "gpubudget/error.h"
#include "core/json_reader.h"
#include "engine/profile_reader.h"

namespace gpubudget {

namespace {

using Json = nlohmann::ordered_json;

// A version's numbers; one that does not parse sorts first.
std::array<int, 3> version_key(const std::string& v) { return parse_vllm_version(v).value_or(VllmVersionNumber{}); }

double round_to(double value, double step) { return std::round(value / step) * step; }
double gib(double bytes) { return bytes / static_cast<double>(kGiB); }

// The activation peak estimate_overheads gives for a row with these coefficients, in bytes.
double fitted_activation(const ReplayRow& r, double sampler, double forward) {
  const double text = std::max(sampler * r.sampler_basis_bytes, forward * r.forward_basis_bytes);
  return std::max(r.encoder_pass_bytes, text + r.encoder_cached_bytes);
}

// Least squares through the origin: argmin_c sum (y - c x)^2.
double fit_through_origin(const std::vector<double>& x, const std::vector<double>& y) {
  Eigen::Map<const Eigen::VectorXd> X(x.data(), static_cast<Eigen::Index>(x.size()));
  Eigen::Map<const Eigen::VectorXd> Y(y.data(), static_cast<Eigen::Index>(y.size()));
  return X.dot(Y) / X.dot(X);
}

double rmse(const std::vector<double>& residuals) {
  double sum = 0;
  for (const double r : residuals) sum += r * r;
  return residuals.empty() ? 0 : std::sqrt(sum / static_cast<double>(residuals.size()));
}


const std::map<std::string, std::string>& non_torch_key_of_class() {
  static const std::map<std::string, std::string> keys = {{"single", "non_torch_single_gpu_gib"},
                                                          {"nvlink", "non_torch_multi_nvlink_gib"},
                                                          {"pcie", "non_torch_multi_pcie_gib"}};
  return keys;
}

// A profile's fitted overhead coefficients (GiB where not per element).
struct Coefficients {
  double sampler = 0, forward = 0;
  std::map<std::string, double> non_torch;  // by class: "single", "nvlink", "pcie"
  double graph_base = 0, graph_per_layer = 0;
};

Coefficients coefficients_of(const Json& overheads) {
  Coefficients c;
  c.sampler = overheads.value("sampler_bytes_per_logit", 0.0);
  c.forward = overheads.value("forward_activation_factor", 0.0);
  for (const auto& [cls, key] : non_torch_key_of_class()) c.non_torch[cls] = overheads.value(key, 0.0);
  c.graph_base = overheads.value("cudagraph_base_gib", 0.0);
  c.graph_per_layer = overheads.value("cudagraph_per_layer_gib", 0.0);
  return c;
}

Coefficients coefficients_of(const OverheadModel& o) {
  Coefficients c;
  c.sampler = o.sampler_bytes_per_logit;
  c.forward = o.forward_activation_factor;
  c.non_torch = {{"single", to_gib(o.non_torch_single_gpu)},
                 {"nvlink", to_gib(o.non_torch_multi_nvlink)},
                 {"pcie", to_gib(o.non_torch_multi_pcie)}};
  c.graph_base = to_gib(o.cudagraph_base);
  c.graph_per_layer = to_gib(o.cudagraph_per_layer);
  return c;
}

double graphs_gib(const ReplayRow& r, const Coefficients& c) {
  return r.enforce_eager ? 0.0 : c.graph_base + c.graph_per_layer * r.graph_layers;
}

// The overheads taken off a row's KV budget with coefficients `c`, in GiB: the replayed estimate with
// its fitted parts exchanged (what the coefficients do not touch, e.g. a profile-run workspace, stays).
double overheads_gib(const ReplayRow& r, const Coefficients& c) {
  const Coefficients replayed = coefficients_of(r.coefficients);
  const double activation = r.predicted_activation_gib.value_or(0) +
                            gib(fitted_activation(r, c.sampler, c.forward)) -
                            gib(fitted_activation(r, replayed.sampler, replayed.forward));
  double total = activation + c.non_torch.at(r.non_torch_class);
  if (r.cudagraph_charged) total += graphs_gib(r, c);
  return total;
}

// The terms fitted on `used`, starting from `c` (a term without rows keeps its value).
Coefficients fit_coefficients(const std::vector<const ReplayRow*>& used, Coefficients c, std::vector<TermFit>* terms) {
  // Activation: assign rows to the dominant term, fit each, until stable.
  std::vector<bool> is_sampler;
  for (int round = 0; round < 20; ++round) {
    std::vector<bool> assign;
    std::vector<double> xs, ys, xf, yf;
    for (const auto* r : used) {
      if (!r->logged_activation_gib) continue;
      const bool s = c.sampler * r->sampler_basis_bytes >= c.forward * r->forward_basis_bytes;
      // A row whose peak is the (unfitted) encoder pass says nothing about the two coefficients.
      if (r->encoder_pass_bytes >= fitted_activation(*r, c.sampler, c.forward)) continue;
      assign.push_back(s);
      const double y = *r->logged_activation_gib * static_cast<double>(kGiB) - r->encoder_cached_bytes;
      (s ? xs : xf).push_back(s ? r->sampler_basis_bytes : r->forward_basis_bytes);
      (s ? ys : yf).push_back(y);
    }
    if (!xs.empty()) c.sampler = round_to(fit_through_origin(xs, ys), 0.1);
    if (!xf.empty()) c.forward = round_to(fit_through_origin(xf, yf), 0.05);
    if (assign == is_sampler) break;
    is_sampler = assign;
  }
  std::vector<double> activation_residuals;
  for (const auto* r : used) {
    if (!r->logged_activation_gib) continue;
    activation_residuals.push_back(*r->logged_activation_gib - gib(fitted_activation(*r, c.sampler, c.forward)));
  }

  // Non-torch: the mean per class.
  std::map<std::string, std::vector<double>> non_torch;
  for (const auto* r : used) {
    if (r->logged_non_torch_gib) non_torch[r->non_torch_class].push_back(*r->logged_non_torch_gib);
  }
  std::vector<double> non_torch_residuals;
  for (const auto& [cls, values] : non_torch) {
    double mean = 0;
    for (const double v : values) mean += v;
    mean = round_to(mean / static_cast<double>(values.size()), 0.01);
    c.non_torch[cls] = mean;
    for (const double v : values) non_torch_residuals.push_back(v - mean);
  }

  // CUDA graphs: base + per_layer x layers x extra graphs / the reference count (graph_layers).
  std::vector<double> layers, graphs;
  for (const auto* r : used) {
    if (r->logged_cudagraph_gib && !r->enforce_eager && r->graph_layers > 0) {
      layers.push_back(r->graph_layers);
      graphs.push_back(*r->logged_cudagraph_gib);
    }
  }
  const bool distinct = !layers.empty() && *std::min_element(layers.begin(), layers.end()) !=
                                               *std::max_element(layers.begin(), layers.end());
  if (layers.size() >= 2 && distinct) {
    Eigen::MatrixXd A(static_cast<Eigen::Index>(layers.size()), 2);
    Eigen::VectorXd b(static_cast<Eigen::Index>(layers.size()));
    for (std::size_t i = 0; i < layers.size(); ++i) {
      A(static_cast<Eigen::Index>(i), 0) = 1.0;
      A(static_cast<Eigen::Index>(i), 1) = layers[i];
      b(static_cast<Eigen::Index>(i)) = graphs[i];
    }
    const Eigen::VectorXd solved = A.colPivHouseholderQr().solve(b);
    c.graph_base = round_to(solved(0), 0.01);
    c.graph_per_layer = round_to(solved(1), 0.001);
  }
  // Graph memory cannot shrink with more layers: without a positive slope, the mean alone; and it
  // is not negative (logs can show a negative difference when capture frees cached memory).
  if (!layers.empty() && (c.graph_per_layer < 0 || c.graph_base < 0)) {
    double mean = 0;
    for (const double g : graphs) mean += g;
    c.graph_base = std::max(0.0, round_to(mean / static_cast<double>(graphs.size()), 0.01));
    c.graph_per_layer = 0;
  }
  std::vector<double> graph_residuals;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    graph_residuals.push_back(graphs[i] - (c.graph_base + c.graph_per_layer * layers[i]));
  }
  if (terms != nullptr) {
    terms->push_back({"activation peak", activation_residuals.size(), rmse(activation_residuals)});
    terms->push_back({"non-torch", non_torch_residuals.size(), rmse(non_torch_residuals)});
    terms->push_back({"cuda graphs", graph_residuals.size(), rmse(graph_residuals)});
  }
  return c;
}

// How far a row's logged budget lies from the prediction with coefficients `c`, as a fraction of the
// predicted overheads: the available KV memory where the row logs it (weights errors included), else
// activation + non-torch. Empty for a row that logs neither.
std::optional<double> miss_ratio(const ReplayRow& r, const Coefficients& c) {
  if (r.logged_available_gib && r.predicted_available_gib) {
    const double before = overheads_gib(r, coefficients_of(r.coefficients));
    const double after = overheads_gib(r, c);
    const double predicted = *r.predicted_available_gib + before - after;
    if (after > 0) return std::fabs(*r.logged_available_gib - predicted) / after;
  }
  if (r.logged_activation_gib && r.logged_non_torch_gib) {
    const double fitted = gib(fitted_activation(r, c.sampler, c.forward)) + c.non_torch.at(r.non_torch_class);
    if (fitted > 0) return std::fabs(*r.logged_activation_gib + *r.logged_non_torch_gib - fitted) / fitted;
  }
  return std::nullopt;
}

}  // namespace

std::string replayed_model(const ReplayRow& row) { return row.config.empty() ? row.model : row.config; }

Calibration calibrate_profile(const std::vector<ReplayRow>& rows, const std::string& profile_text,
                              const std::string& profile_path, const std::string& base_profiles) {
  // The profile must be one fit() can load (types, ranges, unknown keys), with a calibration block.
  (void)detail::parse_vllm_profile(profile_text, profile_path, base_profiles);
  // The coefficients are fitted on the profile as it resolves (its "extends" applied); the output keeps
  // the file's own document.
  Json own = Json::parse(profile_text);  // parsed once above: no exception here
  // Coefficients kept apart from the hand-written rules are the file's own "overheads" (read above too).
  const auto coefficients_path = detail::coefficients_path_of(profile_path);
  std::error_code ec;
  const bool separate_coefficients = std::filesystem::is_regular_file(coefficients_path, ec);
  if (separate_coefficients) own["overheads"] = Json::parse(detail::read_text_file(coefficients_path))["overheads"];
  Json profile = Json::parse(detail::resolve_profile_json(profile_text, profile_path, base_profiles).dump());
  if (!profile.contains("calibration") || !profile["calibration"].is_object()) {
    throw InputError(fmt::format("{}:/calibration: expected {{\"min_version\", \"max_version\"}} naming the vLLM "
                                 "versions whose logs feed this profile",
                                 profile_path));
  }
  const nlohmann::json calibration_block = profile["calibration"];  // JsonReader reads nlohmann::json
  const detail::JsonReader calibration(calibration_block, profile_path, "/calibration");
  const std::string min_version = calibration.optional_string("min_version").value_or("");
  const std::string max_version = calibration.optional_string("max_version").value_or("");
  const double uncertainty_floor = calibration.optional_number("min_relative_uncertainty", 0.0, 10.0).value_or(0.1);
  Json& o = profile["overheads"];

  // Rows of the named versions; those with a measured overhead logged feed the coefficients.
  std::vector<const ReplayRow*> in_versions, used;
  for (const auto& r : rows) {
    if (r.status != "ok") continue;
    // A row whose vLLM version is unknown runs the newest profile (fit's default): it counts in the
    // uncertainty of the profile whose versions have no upper end, never in the coefficients.
    if (r.vllm_version_used.empty()) {
      if (max_version.empty() && (r.logged_available_gib || r.logged_activation_gib)) in_versions.push_back(&r);
      continue;
    }
    const auto key = version_key(r.vllm_version_used);
    if (!min_version.empty() && key < version_key(min_version)) continue;
    if (!max_version.empty() && !(key < version_key(max_version))) continue;
    in_versions.push_back(&r);
    if (!r.logged_activation_gib && !r.logged_non_torch_gib && !r.logged_cudagraph_gib) continue;
    used.push_back(&r);
  }
  Calibration out;
  for (const auto* r : used) out.row_ids.push_back(r->id);
  const Coefficients given = coefficients_of(o);
  const Coefficients fitted = fit_coefficients(used, given, &out.terms);

  // Uncertainty: each model's rows missed by the coefficients fitted without that model.
  std::map<std::string, std::vector<const ReplayRow*>> by_model;
  for (const auto* r : in_versions) by_model[replayed_model(*r)].push_back(r);
  std::vector<double> relative;
  for (const auto& [model, held_out] : by_model) {
    std::vector<const ReplayRow*> training;
    for (const auto* r : used) {
      if (replayed_model(*r) != model) training.push_back(r);
    }
    const Coefficients without = fit_coefficients(training, given, nullptr);
    for (const auto* r : held_out) {
      if (const auto ratio = miss_ratio(*r, without)) relative.push_back(*ratio);
    }
  }
  if (!relative.empty()) {
    // The split-conformal quantile: the ceil((n + 1) x 0.9)-th smallest of n held-out misses covers a
    // further deployment like them with probability at least 0.9 (the plain 90th percentile of a small
    // sample covers less).
    std::sort(relative.begin(), relative.end());
    const auto rank = std::min(relative.size(),
                               static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(relative.size() + 1))));
    const double quantile = relative[std::max<std::size_t>(rank, 1) - 1];
    o["relative_uncertainty"] = std::max(uncertainty_floor, std::ceil(quantile / 0.05 - 1e-9) * 0.05);
  }

  o["sampler_bytes_per_logit"] = fitted.sampler;
  o["forward_activation_factor"] = fitted.forward;
  for (const auto& [cls, key] : non_torch_key_of_class()) {
    if (fitted.non_torch.at(cls) != given.non_torch.at(cls)) o[key] = fitted.non_torch.at(cls);
  }
  o["cudagraph_base_gib"] = fitted.graph_base;
  o["cudagraph_per_layer_gib"] = fitted.graph_per_layer;
  // Coefficients a profile could not hold (not finite, negative, beyond its ranges) are refused with the
  // rows that produced them, never written.
  std::vector<std::string> ids;
  for (const auto* r : used) ids.push_back(r->id);
  for (const auto& [key, value] : o.items()) {
    if (!value.is_number()) continue;
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < 0 || v > 1e6) {
      throw InputError(fmt::format("calibration of {}: overheads.{} = {} is not a physical coefficient; it was "
                                   "fitted on rows {}",
                                   profile_path, key, v, fmt::join(ids.begin(), ids.begin() + std::min<std::ptrdiff_t>(
                                                                                    12, static_cast<std::ptrdiff_t>(ids.size())), ", ")));
    }
  }
  std::string notes = fmt::format("calibrated by `gpubudget calibrate` on {} observation rows of vLLM [{}, {}):",
                                  used.size(), min_version.empty() ? "any" : min_version,
                                  max_version.empty() ? "any" : max_version);
  for (const auto& t : out.terms) notes += fmt::format(" {} {} rows, rmse {:.2f} GiB;", t.term, t.rows, t.rmse_gib);
  if (!relative.empty()) {
    notes += fmt::format(" relative_uncertainty: the conformal 90% bound of the misses of {} rows of {} models, each "
                         "predicted without its model;",
                         relative.size(), by_model.size());
  }
  if (used.empty()) notes = "no observation rows of these versions: coefficients kept as given";
  o["fit_notes"] = notes;
  // Fixed decimal places for every coefficient, so that the file is stable byte for byte.
  for (auto& [key, value] : o.items()) {
    if (value.is_number_float()) value = std::stod(fmt::format("{:.4f}", value.get<double>()));
  }
  // An inherited "overheads" stays inherited when the fit reproduces it.
  const Json inherited = Json::parse(detail::resolve_profile_json(profile_text, profile_path, base_profiles).dump());
  if (own.contains("overheads") || inherited.value("overheads", Json()) != profile["overheads"]) {
    // Keys keep the order the file gives them (then the canonical order), so a rerun is byte-stable.
    Json ordered = Json::object();
    std::vector<std::string> keys;
    if (own.contains("overheads") && own["overheads"].is_object()) {
      for (const auto& [key, value] : own["overheads"].items()) keys.push_back(key);
    }
    for (const char* key : {"sampler_bytes_per_logit", "forward_activation_factor", "non_torch_single_gpu_gib",
                            "non_torch_multi_nvlink_gib", "non_torch_multi_pcie_gib", "cudagraph_base_gib",
                            "cudagraph_per_layer_gib", "relative_uncertainty", "fit_notes"}) {
      keys.emplace_back(key);
    }
    for (const auto& [key, value] : o.items()) keys.push_back(key);
    for (const auto& key : keys) {
      if (o.contains(key) && !ordered.contains(key)) ordered[key] = o[key];
    }
    own["overheads"] = ordered;
    out.coefficients_json = Json{{"overheads", ordered}}.dump(2) + "\n";
  }
  out.profile_json = own.dump(2) + "\n";
  // What is written loads, as a file of its own beside the input (its coefficients in it).
  const std::filesystem::path written = std::filesystem::path(profile_path).parent_path() /
                                        (std::filesystem::path(profile_path).stem().string() + ".calibrated.json");
  (void)detail::parse_vllm_profile(out.profile_json, written.string(), base_profiles);
  return out;
}

}  // namespace gpubudget
