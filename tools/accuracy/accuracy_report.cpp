// The accuracy report (docs/accuracy.md): every replayed observation row beside gpubudget's
// prediction, and summary figures.
#include "accuracy_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace gpubudget {

namespace {

std::string pct(std::optional<double> predicted, std::optional<double> logged) {
  if (!predicted || !logged || *logged == 0) return "";
  return fmt::format("{:+.2f}%", 100.0 * (*predicted - *logged) / *logged);
}

std::string num(std::optional<double> v) { return v ? fmt::format("{:.2f}", *v) : ""; }
std::string num(std::optional<std::int64_t> v) { return v ? fmt::format("{}", *v) : ""; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// The 90th percentile by the nearest-rank method.
double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

void summary(std::string& out, const char* what, const std::vector<double>& errors) {
  if (errors.empty()) return;
  std::vector<double> abs_errors;
  for (const double e : errors) abs_errors.push_back(std::fabs(e));
  out += fmt::format("| {} | {} | {:.2f}% | {:.2f}% | {:.2f}% |\n", what, errors.size(), median(abs_errors),
                     p90(abs_errors), *std::max_element(abs_errors.begin(), abs_errors.end()));
}

// Signed relative errors (%) of one estimated figure over the replayed rows.
using Figure = std::optional<double> (*)(const ReplayRow&, bool predicted);
std::vector<double> errors_of(const std::vector<ReplayRow>& rows, Figure figure) {
  std::vector<double> out;
  for (const auto& r : rows) {
    const auto logged = figure(r, false), predicted = figure(r, true);
    if (r.status == "ok" && logged && predicted && *logged != 0) out.push_back(100.0 * (*predicted - *logged) / *logged);
  }
  return out;
}

std::string median_and_p90(const std::vector<double>& errors) {
  if (errors.empty()) return "| | ";
  std::vector<double> abs_errors;
  for (const double e : errors) abs_errors.push_back(std::fabs(e));
  return fmt::format("{} | {:.2f}% / {:.2f}%", errors.size(), median(abs_errors), p90(abs_errors));
}

// The estimated figures side by side: in sample, leave one model out, leave one GPU kind out.
void out_of_sample_table(std::string& out, const std::vector<ReplayRow>& rows, const std::vector<ReplayRow>& by_model,
                         const std::vector<ReplayRow>& by_gpu) {
  struct Row {
    const char* name;
    Figure figure;
  };
  const Row figures[] = {
      {"weights (deterministic: the same out of sample)",
       [](const ReplayRow& r, bool p) { return p ? r.predicted_weights_gib : r.logged_weights_gib; }},
      {"KV tokens from logged memory (deterministic)",
       [](const ReplayRow& r, bool p) -> std::optional<double> {
         const auto v = p ? r.predicted_tokens : r.logged_tokens;
         return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
       }},
      {"available KV memory (estimated)",
       [](const ReplayRow& r, bool p) { return p ? r.predicted_available_gib : r.logged_available_gib; }},
      {"activation peak (estimated)",
       [](const ReplayRow& r, bool p) { return p ? r.predicted_activation_gib : r.logged_activation_gib; }},
      {"non-torch memory (estimated)",
       [](const ReplayRow& r, bool p) { return p ? r.predicted_non_torch_gib : r.logged_non_torch_gib; }},
      {"estimated max model length (vLLM's error)",
       [](const ReplayRow& r, bool p) -> std::optional<double> {
         const auto v = p ? r.predicted_estimated_len : r.logged_estimated_len;
         return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
       }},
  };
  out += "| figure | rows in sample | median / p90 abs. error | rows, leave one model out | median / p90 | rows, leave "
         "one GPU kind out | median / p90 |\n|---|---|---|---|---|---|---|\n";
  for (const Row& f : figures) {
    out += fmt::format("| {} | {} | {} | {} |\n", f.name, median_and_p90(errors_of(rows, f.figure)),
                       median_and_p90(errors_of(by_model, f.figure)), median_and_p90(errors_of(by_gpu, f.figure)));
  }
}

// A row's predicted available KV range holds its logged value.
bool in_range(const ReplayRow& r) {
  return *r.predicted_available_low_gib <= *r.logged_available_gib &&
         *r.logged_available_gib <= *r.predicted_available_high_gib;
}

bool has_range(const ReplayRow& r) {
  return r.status == "ok" && r.logged_available_gib && r.predicted_available_low_gib && r.predicted_available_high_gib;
}

// The term whose prediction lies farthest from its logged value, for a row outside its range.
std::string term_that_missed(const ReplayRow& r) {
  struct Term {
    const char* name;
    std::optional<double> logged, predicted;
  };
  const Term terms[] = {
      {"weights", r.logged_weights_gib, r.predicted_weights_gib},
      {"activation peak", r.logged_activation_gib, r.predicted_activation_gib},
      {"non-torch", r.logged_non_torch_gib, r.predicted_non_torch_gib},
      {"CUDA graphs", r.cudagraph_charged ? r.logged_cudagraph_gib : std::nullopt, r.predicted_cudagraph_gib},
  };
  const Term* worst = nullptr;
  for (const Term& t : terms) {
    if (!t.logged || !t.predicted) continue;
    if (worst == nullptr || std::fabs(*t.predicted - *t.logged) > std::fabs(*worst->predicted - *worst->logged)) {
      worst = &t;
    }
  }
  if (worst == nullptr) return "not known: the log gives the available memory only";
  return fmt::format("{}: predicted {:.2f}, logged {:.2f} GiB", worst->name, *worst->predicted, *worst->logged);
}

// How often the logged available KV memory falls inside the predicted range, per vLLM profile, in
// sample and with the coefficients (and the uncertainty) fitted without the row's model.
void coverage_section(std::string& out, const std::vector<ReplayRow>& rows, const std::vector<ReplayRow>& by_model) {
  struct Count {
    int rows = 0, inside = 0;
  };
  std::map<std::string, std::pair<Count, Count>> per_profile;
  std::pair<Count, Count> total;
  for (const auto& r : rows) {
    if (!has_range(r)) continue;
    auto& [in, out_of] = per_profile[r.profile];
    (void)out_of;
    ++in.rows;
    ++total.first.rows;
    if (in_range(r)) ++in.inside, ++total.first.inside;
  }
  std::vector<const ReplayRow*> missed;
  for (const auto& r : by_model) {
    if (!has_range(r)) continue;
    auto& c = per_profile[r.profile].second;
    ++c.rows;
    ++total.second.rows;
    if (in_range(r)) {
      ++c.inside, ++total.second.inside;
    } else {
      missed.push_back(&r);
    }
  }
  auto share = [](const Count& c) {
    return c.rows == 0 ? std::string("") : fmt::format("{} of {} ({:.0f}%)", c.inside, c.rows, 100.0 * c.inside / c.rows);
  };
  out += "## The range: how often the logged memory falls inside it\n\n";
  out += "`max_model_len_range` is the largest length again with the KV budget moved by -/+ the profile's "
         "`relative_uncertainty` x the estimated overheads (`per_gpu.kv_cache_uncertainty_bytes`). Below: the rows "
         "whose logged `Available KV cache memory` lies inside the predicted available memory -/+ that swing, per "
         "vLLM profile, in sample and with the coefficients and the uncertainty fitted without the row's model "
         "(`calibrate_profile` sets the uncertainty from such held-out predictions). Rows of an unknown vLLM version "
         "run the newest profile and are out of sample either way.\n\n";
  out += "| vLLM profile | in sample | leave one model out |\n|---|---|---|\n";
  for (const auto& [profile, counts] : per_profile) {
    out += fmt::format("| {} | {} | {} |\n", profile, share(counts.first), share(counts.second));
  }
  out += fmt::format("| all | {} | {} |\n\n", share(total.first), share(total.second));
  if (missed.empty()) return;
  out += "Rows outside the range out of sample, and the term farthest from its logged value:\n\n";
  out += "| id | model | GPU | profile | TP | available GiB logged | range GiB | term that missed |\n"
         "|---|---|---|---|---|---|---|---|\n";
  for (const auto* r : missed) {
    out += fmt::format("| {} | {} | {} | {} | {} | {:.2f} | {:.2f} – {:.2f} | {} |\n", r->id, replayed_model(*r), r->gpu,
                       r->profile, r->tp, *r->logged_available_gib, *r->predicted_available_low_gib,
                       *r->predicted_available_high_gib, term_that_missed(*r));
  }
  out += "\n";
}

}  // namespace

std::string accuracy_markdown(const std::vector<ReplayRow>& rows, const std::vector<ReplayRow>& by_model,
                              const std::vector<ReplayRow>& by_gpu) {
  std::string out;
  out += "# Accuracy against real vLLM startups\n\n";
  out += "Generated by `gpubudget_accuracy` (tools/accuracy) from `tests/data/observations/vllm-runs.jsonl`; do not "
         "edit by hand. Rerun: `build/<preset>/tools/accuracy/gpubudget_accuracy > docs/accuracy.md`.\n\n";
  out += "- **KV tokens** (deterministic): `GPU KV cache size` predicted from the logged `Available KV cache memory` "
         "(rounded to 0.01 GiB in logs) with `--kv-cache-memory-bytes`.\n";
  out += "- **Weights** (deterministic up to runtime buffers): `Model loading took`.\n";
  out += "- **Available KV** (estimated overheads): the whole budget, predicted without the log's help.\n\n";
  std::vector<double> token_errors, weight_errors, available_errors, activation_errors, non_torch_errors, length_errors,
      unaided_errors;
  for (const auto& r : rows) {
    if (r.status != "ok") continue;
    if (r.predicted_tokens_unaided && r.logged_tokens) {
      unaided_errors.push_back(100.0 * static_cast<double>(*r.predicted_tokens_unaided - *r.logged_tokens) /
                               static_cast<double>(*r.logged_tokens));
    }
    if (r.predicted_activation_gib && r.logged_activation_gib && *r.logged_activation_gib > 0) {
      activation_errors.push_back(100.0 * (*r.predicted_activation_gib - *r.logged_activation_gib) /
                                  *r.logged_activation_gib);
    }
    if (r.predicted_non_torch_gib && r.logged_non_torch_gib && *r.logged_non_torch_gib > 0) {
      non_torch_errors.push_back(100.0 * (*r.predicted_non_torch_gib - *r.logged_non_torch_gib) /
                                 *r.logged_non_torch_gib);
    }
    if (r.predicted_estimated_len && r.logged_estimated_len) {
      length_errors.push_back(100.0 * static_cast<double>(*r.predicted_estimated_len - *r.logged_estimated_len) /
                              static_cast<double>(*r.logged_estimated_len));
    }
    if (r.predicted_tokens && r.logged_tokens) {
      token_errors.push_back(100.0 * static_cast<double>(*r.predicted_tokens - *r.logged_tokens) /
                             static_cast<double>(*r.logged_tokens));
    }
    if (r.predicted_weights_gib && r.logged_weights_gib) {
      weight_errors.push_back(100.0 * (*r.predicted_weights_gib - *r.logged_weights_gib) / *r.logged_weights_gib);
    }
    if (r.predicted_available_gib && r.logged_available_gib) {
      available_errors.push_back(100.0 * (*r.predicted_available_gib - *r.logged_available_gib) /
                                 *r.logged_available_gib);
    }
  }
  out += "## Out of sample: deployments nobody calibrated on\n\n";
  out += "The overhead coefficients of every profile refitted (`calibrate_profile`) without the rows of one model (or "
         "of one GPU kind), then that model's (GPU's) rows predicted with them; every model (GPU) in turn. These are "
         "the figures to expect on a deployment that is not in the observations. Weights and KV tokens from logged "
         "memory are deterministic and do not depend on the fit. A row whose vLLM profile has calibration rows of its "
         "own group only cannot be predicted out of sample (its shipped coefficient is that group's fit) and is left "
         "out of the count: most GPU groups are such rows, as most logs per vLLM version come from one GPU kind. Only "
         "the aggregate terms are checked for that (a non-torch class fitted on one group's rows alone is not).\n\n";
  out_of_sample_table(out, rows, by_model, by_gpu);
  out += "\n";
  coverage_section(out, rows, by_model);
  out += "## Summary (in sample: the shipped profiles, fitted on these rows)\n\n| figure | rows | median abs. error | p90 "
         "abs. error | max abs. error |\n|---|---|---|---|---|\n";
  summary(out, "KV tokens from logged memory", token_errors);
  summary(out, "weights", weight_errors);
  summary(out, "available KV memory (estimated)", available_errors);
  summary(out, "estimated max model length (vLLM's error)", length_errors);
  summary(out, "KV tokens, whole budget predicted (rows without logged memory)", unaided_errors);
  summary(out, "activation peak (estimated)", activation_errors);
  summary(out, "non-torch memory (estimated)", non_torch_errors);
  out += "\n## Rows\n\n";
  out += "| id | model (config used) | GPU | vLLM (profile) | TP | tokens logged | predicted | err | weights GiB logged | "
         "predicted | err | available GiB logged | predicted | err | activation GiB logged / predicted | non-torch GiB "
         "logged / predicted | est. max length logged / predicted |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (r.status != "ok") continue;
    const std::string model = r.config == r.model ? r.model : fmt::format("{} ({}{})", r.model, r.config,
                                                                         r.kv_only ? ", KV only" : "");
    const auto tokens = r.predicted_tokens ? r.predicted_tokens : r.predicted_tokens_unaided;
    auto pair = [](const auto& logged, const auto& predicted) {
      return logged ? fmt::format("{} / {}", num(logged), num(predicted)) : std::string();
    };
    out += fmt::format("| {} | {} | {} | {} ({}) | {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       r.id, model,
                       r.gpu, r.vllm_version.empty() ? "?" : r.vllm_version, r.profile, r.tp, num(r.logged_tokens),
                       num(tokens), r.predicted_tokens_unaided ? " (unaided)" : "",
                       tokens && r.logged_tokens
                           ? pct(static_cast<double>(*tokens), static_cast<double>(*r.logged_tokens))
                           : "",
                       num(r.logged_weights_gib), num(r.predicted_weights_gib),
                       pct(r.predicted_weights_gib, r.logged_weights_gib), num(r.logged_available_gib),
                       num(r.predicted_available_gib), pct(r.predicted_available_gib, r.logged_available_gib),
                       pair(r.logged_activation_gib, r.predicted_activation_gib),
                       pair(r.logged_non_torch_gib, r.predicted_non_torch_gib),
                       pair(r.logged_estimated_len, r.predicted_estimated_len));
  }
  out += "\n## Notes on replayed rows\n\n";
  for (const auto& r : rows) {
    if (r.status == "ok" && !r.note.empty()) out += fmt::format("- {}: {}\n", r.id, r.note);
    if (r.status == "ok" && r.kv_only) out += fmt::format("- {}: weights differ from the bundled config ({}); KV only\n", r.id, r.config);
  }
  out += "\n## Rows not replayed\n\n| id | model | why |\n|---|---|---|\n";
  for (const auto& r : rows) {
    if (r.status == "ok") continue;
    std::string why = r.status;
    std::replace(why.begin(), why.end(), '|', '/');
    out += fmt::format("| {} | {} | {} |\n", r.id, r.model, why);
  }
  return out;
}

}  // namespace gpubudget
