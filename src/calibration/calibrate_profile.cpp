// calibrate_profile (calibrate.h): least-squares fits of a profile's overhead coefficients.
#include "gpubudget/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "gpubudget/bytes.h"
#include "gpubudget/error.h"
#include "../json_reader.h"
#include "../profile_reader.h"

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

}  // namespace

Calibration calibrate_profile(const std::vector<ReplayRow>& rows, const std::string& profile_text,
                              const std::string& profile_path, const std::string& base_profiles) {
  // The profile must be one fit() can load (types, ranges, unknown keys), with a calibration block.
  (void)detail::parse_vllm_profile(profile_text, profile_path, base_profiles);
  // The coefficients are fitted on the profile as it resolves (its "extends" applied); the output keeps
  // the file's own document.
  Json own = Json::parse(profile_text);  // parsed once above: no exception here
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

  // Rows of the named versions with the measured overheads logged.
  std::vector<const ReplayRow*> used;
  for (const auto& r : rows) {
    if (r.status != "ok" || r.vllm_version_used.empty()) continue;
    const auto key = version_key(r.vllm_version_used);
    if (!min_version.empty() && key < version_key(min_version)) continue;
    if (!max_version.empty() && !(key < version_key(max_version))) continue;
    if (!r.logged_activation_gib && !r.logged_non_torch_gib && !r.logged_cudagraph_gib) continue;
    used.push_back(&r);
  }
  Calibration out;
  for (const auto* r : used) out.row_ids.push_back(r->id);

  // Activation: assign rows to the dominant term, fit each, until stable.
  double sampler = o.value("sampler_bytes_per_logit", 0.0);
  double forward = o.value("forward_activation_factor", 0.0);
  std::vector<bool> is_sampler;
  for (int round = 0; round < 20; ++round) {
    std::vector<bool> assign;
    std::vector<double> xs, ys, xf, yf;
    for (const auto* r : used) {
      if (!r->logged_activation_gib) continue;
      const bool s = sampler * r->sampler_basis_bytes >= forward * r->forward_basis_bytes;
      // A row whose peak is the (unfitted) encoder pass says nothing about the two coefficients.
      if (r->encoder_pass_bytes >= fitted_activation(*r, sampler, forward)) continue;
      assign.push_back(s);
      const double y = *r->logged_activation_gib * static_cast<double>(kGiB) - r->encoder_cached_bytes;
      (s ? xs : xf).push_back(s ? r->sampler_basis_bytes : r->forward_basis_bytes);
      (s ? ys : yf).push_back(y);
    }
    if (!xs.empty()) sampler = round_to(fit_through_origin(xs, ys), 0.1);
    if (!xf.empty()) forward = round_to(fit_through_origin(xf, yf), 0.05);
    if (assign == is_sampler) break;
    is_sampler = assign;
  }
  std::vector<double> activation_residuals;
  for (const auto* r : used) {
    if (!r->logged_activation_gib) continue;
    activation_residuals.push_back(*r->logged_activation_gib - gib(fitted_activation(*r, sampler, forward)));
  }
  out.terms.push_back({"activation peak", activation_residuals.size(), rmse(activation_residuals)});

  // Non-torch: the mean per class.
  std::map<std::string, std::vector<double>> non_torch;
  for (const auto* r : used) {
    if (r->logged_non_torch_gib) non_torch[r->non_torch_class].push_back(*r->logged_non_torch_gib);
  }
  const std::map<std::string, std::string> key_of = {{"single", "non_torch_single_gpu_gib"},
                                                     {"nvlink", "non_torch_multi_nvlink_gib"},
                                                     {"pcie", "non_torch_multi_pcie_gib"}};
  std::vector<double> non_torch_residuals;
  for (const auto& [cls, values] : non_torch) {
    double mean = 0;
    for (const double v : values) mean += v;
    mean = round_to(mean / static_cast<double>(values.size()), 0.01);
    o[key_of.at(cls)] = mean;
    for (const double v : values) non_torch_residuals.push_back(v - mean);
  }
  out.terms.push_back({"non-torch", non_torch_residuals.size(), rmse(non_torch_residuals)});

  // CUDA graphs: base + per_layer x layers.
  std::vector<double> layers, graphs;
  for (const auto* r : used) {
    if (r->logged_cudagraph_gib && !r->enforce_eager && r->worker_layers > 0) {
      layers.push_back(static_cast<double>(r->worker_layers));
      graphs.push_back(*r->logged_cudagraph_gib);
    }
  }
  double base = o.value("cudagraph_base_gib", 0.0);
  double per_layer = o.value("cudagraph_per_layer_gib", 0.0);
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
    const Eigen::VectorXd c = A.colPivHouseholderQr().solve(b);
    base = round_to(c(0), 0.01);
    per_layer = round_to(c(1), 0.001);
  }
  // Graph memory cannot shrink with more layers: without a positive slope, the mean alone; and it
  // is not negative (logs can show a negative difference when capture frees cached memory).
  if (!layers.empty() && (per_layer < 0 || base < 0)) {
    double mean = 0;
    for (const double g : graphs) mean += g;
    base = std::max(0.0, round_to(mean / static_cast<double>(graphs.size()), 0.01));
    per_layer = 0;
  }
  std::vector<double> graph_residuals;
  for (std::size_t i = 0; i < layers.size(); ++i) graph_residuals.push_back(graphs[i] - (base + per_layer * layers[i]));
  out.terms.push_back({"cuda graphs", graph_residuals.size(), rmse(graph_residuals)});

  // Uncertainty: p90 of the relative error of activation + non-torch.
  std::vector<double> relative;
  for (const auto* r : used) {
    if (!r->logged_activation_gib || !r->logged_non_torch_gib) continue;
    const auto cls = key_of.at(r->non_torch_class);
    const double fitted = gib(fitted_activation(*r, sampler, forward)) + o.value(cls, 0.0);
    if (fitted > 0) relative.push_back(std::fabs(*r->logged_activation_gib + *r->logged_non_torch_gib - fitted) / fitted);
  }
  if (!relative.empty()) {
    std::sort(relative.begin(), relative.end());
    const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(relative.size())));
    const double p90 = relative[std::max<std::size_t>(rank, 1) - 1];
    o["relative_uncertainty"] = std::max(uncertainty_floor, std::ceil(p90 / 0.05 - 1e-9) * 0.05);
  }

  o["sampler_bytes_per_logit"] = sampler;
  o["forward_activation_factor"] = forward;
  o["cudagraph_base_gib"] = base;
  o["cudagraph_per_layer_gib"] = per_layer;
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
  }
  out.profile_json = own.dump(2) + "\n";
  (void)detail::parse_vllm_profile(out.profile_json, profile_path, base_profiles);  // what is written loads
  return out;
}

}  // namespace gpubudget
