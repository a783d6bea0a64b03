#include "diagnose_command.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "gpubudget/diagnosis.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/error.h"
#include "gpubudget/vllm_log.h"
#include "text_width.h"

namespace gpubudget::cli {

namespace {

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
    // 74 columns of figures; each row's basis on the line below it.
    out << fmt::format("  {:<32}{:>7}{:>12}{:>12}{:>9}\n      {}\n", "figure", "unit", "logged", "predicted", "diff",
                       "(basis)");
    for (const auto& c : d.comparison) {
      std::string diff = "";
      if (c.logged && c.predicted && *c.logged != 0) {
        diff = fmt::format("{:+.1f}%", (*c.predicted - *c.logged) / std::fabs(*c.logged) * 100.0);
      }
      out << fmt::format("  {:<32}{:>7}{:>12}{:>12}{:>9}\n      {}\n", c.figure, c.unit, figure_text(c.logged, c.unit),
                         figure_text(c.predicted, c.unit), diff, c.basis);
    }
  }
  for (const auto& n : d.notes) out << "note: " << n.text << "\n";
}

}  // namespace

int run_diagnose(const DiagnoseOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  DiagnoseSettings settings{o.model, o.gpu, o.vllm_version, std::nullopt, std::nullopt};
  if (!o.model.empty()) settings.hub = hub_options(o.hub, err);
  if (!o.kv_cache_dtype.empty()) settings.kv_cache_dtype = parse_kv_cache_dtype_choice(o.kv_cache_dtype);
  const LogDiagnosis result =
      diagnose_with_settings(o.log == "-" ? read_vllm_log(std::cin, "-", load_vllm_log_wordings(configs))
                                          : read_vllm_log_file(o.log, load_vllm_log_wordings(configs)),
                             settings, configs);
  const VllmLogFacts& facts = result.facts;
  const DiagnosisContext& context = result.context;
  const Diagnosis& d = result.diagnosis;
  // With `--emit-observation -` stdout carries only the row (for `>> fleet.jsonl`); the report goes to stderr.
  std::ostream& report = o.emit_observation == "-" ? err : out;
  if (o.json) {
    report << diagnosis_json(facts, d);
  } else {
    std::ostringstream text;
    print_human(facts, d, text);
    report << wrap_long_lines(text.str(), o.width);
  }
  if (!o.emit_observation.empty()) {
    const std::string row = observation_row(facts, d, context);
    if (o.emit_observation == "-") {
      out << row << "\n";
    } else {
      std::ofstream file(o.emit_observation);
      file << row << "\n";
      file.close();
      if (!file) throw InputError(fmt::format("{}: cannot be written", o.emit_observation));
    }
  }
  return 0;
}

}  // namespace gpubudget::cli
