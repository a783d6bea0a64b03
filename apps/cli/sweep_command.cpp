#include "sweep_command.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/argument_values.h"
#include "cli_errors.h"
#include "gpubudget/error.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/sweep.h"
#include "sweep_svg.h"
#include "text_width.h"

namespace gpubudget::cli {

namespace {

std::vector<std::int64_t> int_list(const std::string& flag, const std::string& text) {
  std::vector<std::int64_t> out;
  for (const auto& part : split_list(text)) {
    const auto v = parse_human_int(flag, part);
    if (v < 1) throw UsageError(fmt::format("{}: expected positive values, got {}", flag, part));
    out.push_back(v);
  }
  return out;
}

std::vector<std::optional<double>> utilization_list(const std::string& text) {
  if (text.empty()) return {std::nullopt};
  std::vector<std::optional<double>> out;
  for (const auto& part : split_list(text)) {
    const double v = parse_fraction("--gpu-memory-utilization", part);
    if (!(v > 0.0 && v <= 1.0)) {
      throw UsageError(fmt::format("--gpu-memory-utilization: expected values in (0, 1], got \"{}\"", part));
    }
    out.emplace_back(v);
  }
  return out;
}

std::string short_error(const std::string& error, const std::string& source) {  // as in sweep_json
  if (error.rfind(source + ": ", 0) == 0) return error.substr(source.size() + 2);
  return error;
}

std::string label_of(const SweepRow& r, const SweepOptions& o) {
  const Deployment& d = r.deployment;
  std::string label = fmt::format("{} tp{}", r.gpu, d.tensor_parallel_size);
  if (d.pipeline_parallel_size > 1 || o.pp != "1") label += fmt::format(" pp{}", d.pipeline_parallel_size);
  if (d.decode_context_parallel_size > 1 || o.dcp != "1") label += fmt::format(" dcp{}", d.decode_context_parallel_size);
  label += " kv " + (r.valid ? r.kv_cache_dtype : std::string(kv_cache_dtype_choice_name(d.kv_cache_dtype)));
  if (d.gpu_memory_utilization) label += fmt::format(" util {:.2f}", *d.gpu_memory_utilization);
  if (d.max_num_seqs) label += fmt::format(" seqs {}", *d.max_num_seqs);
  return label;
}

void write_sweep_csv(const std::vector<SweepRow>& rows, std::int64_t target_shown, const std::string& source,
                     std::ostream& out) {
  out << "gpu,tp,pp,dcp,kv_cache_dtype,gpu_memory_utilization,max_num_seqs,max_model_len,kv_cache_tokens,"
         "target_len,concurrency_at_target,weights_bytes,kv_cache_bytes,vllm_would_start,error\n";
  for (const auto& r : rows) {
    const Deployment& d = r.deployment;
    const std::string util = d.gpu_memory_utilization ? fmt::format("{:.2f}", *d.gpu_memory_utilization) : "";
    const std::string seqs = d.max_num_seqs ? std::to_string(*d.max_num_seqs) : "";
    const std::string kv = r.valid ? r.kv_cache_dtype : std::string(kv_cache_dtype_choice_name(d.kv_cache_dtype));
    std::string error = short_error(r.error, source);
    for (auto& ch : error) {
      if (ch == '"') ch = '\'';
    }
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.2f},{},{},{},\"{}\"\n", r.gpu, d.tensor_parallel_size,
                       d.pipeline_parallel_size, d.decode_context_parallel_size, kv, util, seqs,
                       r.valid ? std::to_string(r.max_model_len) : "", r.valid ? std::to_string(r.kv_cache_tokens) : "",
                       target_shown, r.concurrency_at_target, r.valid ? std::to_string(r.weights_per_gpu.count()) : "",
                       r.valid ? std::to_string(r.kv_cache_per_gpu.count()) : "", r.valid && r.starts, error);
  }
}

// The table, within 80 columns: the pp, dcp, util and seqs columns only when a row sets them; a
// row's note or refusal on the lines below it, wrapped. A KV budget below zero is said in words.
void write_sweep_table(const std::vector<SweepRow>& rows, std::int64_t target_shown, const std::string& source,
                       std::ostream& out) {
  constexpr std::size_t kWidth = kDefaultColumns;
  constexpr std::size_t kIndent = 4;
  const auto any = [&rows](auto&& set) { return std::any_of(rows.begin(), rows.end(), set); };
  const bool pp = any([](const SweepRow& r) { return r.deployment.pipeline_parallel_size > 1; });
  const bool dcp = any([](const SweepRow& r) { return r.deployment.decode_context_parallel_size > 1; });
  const bool util = any([](const SweepRow& r) { return r.deployment.gpu_memory_utilization.has_value(); });
  const bool seqs = any([](const SweepRow& r) { return r.deployment.max_num_seqs.has_value(); });
  const auto layout = [&](const std::string& gpu, const std::string& tp, const std::string& p, const std::string& c,
                          const std::string& kv, const std::string& u, const std::string& n) {
    std::string text = fmt::format("{:<12} {:>3}", gpu, tp);
    if (pp) text += fmt::format(" {:>3}", p);
    if (dcp) text += fmt::format(" {:>3}", c);
    text += fmt::format(" {:<9}", kv);
    if (util) text += fmt::format(" {:>4}", u);
    if (seqs) text += fmt::format(" {:>5}", n);
    return text;
  };
  out << layout("gpu", "tp", "pp", "dcp", "kv", "util", "seqs")
      << fmt::format(" {:>9} {:>10} {:>7} {:>7} {:>7}\n", "largest", "KV tokens", fmt::format("@{}k", target_shown / 1000),
                     "weights", "KV GiB");
  for (const auto& r : rows) {
    const Deployment& d = r.deployment;
    const std::string kv = r.valid ? r.kv_cache_dtype : std::string(kv_cache_dtype_choice_name(d.kv_cache_dtype));
    const std::string start =
        layout(r.gpu, std::to_string(d.tensor_parallel_size), std::to_string(d.pipeline_parallel_size),
               std::to_string(d.decode_context_parallel_size), kv,
               d.gpu_memory_utilization ? fmt::format("{:.2f}", *d.gpu_memory_utilization) : "",
               d.max_num_seqs ? std::to_string(*d.max_num_seqs) : "");
    if (!r.valid) {
      out << start << "  refused\n" << wrap_paragraph(short_error(r.error, source), kIndent, kWidth);
      continue;
    }
    const bool no_kv = r.kv_cache_per_gpu.count() <= 0;
    out << start
        << fmt::format(" {:>9} {:>10} {:>6.2f}x {:>7.2f} {:>7}\n", r.max_model_len, r.kv_cache_tokens,
                       r.concurrency_at_target, to_gib(r.weights_per_gpu),
                       no_kv ? std::string("none") : fmt::format("{:.2f}", to_gib(r.kv_cache_per_gpu)));
    if (no_kv) {
      out << wrap_paragraph(fmt::format("no KV cache: the weights and overheads need {:.2f} GiB more than vLLM may use",
                                 -to_gib(r.kv_cache_per_gpu)),
                     kIndent, kWidth);
    }
    if (!r.starts) out << wrap_paragraph("vLLM would not start: " + r.start_blocker, kIndent, kWidth);
  }
}

}  // namespace

int run_sweep_command(const SweepOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  if (o.format != "table" && o.format != "csv" && o.format != "json" && o.format != "svg") {
    throw UsageError(fmt::format("--format: expected table, csv, json or svg, got \"{}\"", o.format));
  }
  if (o.gpus.empty() && o.layouts.empty()) {
    throw UsageError("sweep: give --gpu NAME[,NAME...] (see `gpubudget gpus`) or --layout GPU:TP[,GPU:TP...]");
  }
  if (!o.layouts.empty() && (!o.gpus.empty() || o.tp != "1")) {
    throw UsageError("sweep: --layout pairs each GPU with its TP size; give it instead of --gpu and -tp");
  }
  const ModelSpec model = load_cli_model(o.model, o.hub, configs, err);
  const VllmProfile profile = load_vllm_profile(o.vllm_version, configs);
  SweepAxes axes;
  if (!o.gpus.empty()) {
    for (const auto& name : split_list(o.gpus)) axes.gpus.push_back(load_gpu_preset(name, configs));
  }
  axes.tensor_parallel = int_list("--tensor-parallel-size", o.tp);
  for (const auto& pair : o.layouts.empty() ? std::vector<std::string>{} : split_list(o.layouts)) {
    const auto colon = pair.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw UsageError(fmt::format("--layout {}: expected GPU:TP, e.g. h200:4", pair));
    }
    const auto tp = int_list("--layout " + pair, pair.substr(colon + 1));
    if (tp.size() != 1) throw UsageError(fmt::format("--layout {}: expected GPU:TP, e.g. h200:4", pair));
    axes.layouts.push_back({load_gpu_preset(pair.substr(0, colon), configs), tp.front()});
  }
  if (!axes.layouts.empty()) axes.tensor_parallel.clear();
  axes.pipeline_parallel = int_list("--pipeline-parallel-size", o.pp);
  axes.decode_context_parallel = int_list("--decode-context-parallel-size", o.dcp);
  axes.kv_cache_dtypes.clear();
  for (const auto& name : split_list(o.kv_cache_dtypes)) axes.kv_cache_dtypes.push_back(parse_kv_cache_dtype_choice(name));
  axes.utilizations = utilization_list(o.utilizations);
  if (!o.max_num_seqs.empty()) {
    axes.max_num_seqs.clear();
    for (const auto v : int_list("--max-num-seqs", o.max_num_seqs)) axes.max_num_seqs.emplace_back(v);
  }
  Deployment base = o.deployment;
  std::vector<Notice> launch_warnings;
  apply_launch_options(
      o.launch, model, [&](const std::string& id) { return load_cli_draft_model(id, o.hub, configs, err); },
      launch_warnings, base);
  for (const auto& w : launch_warnings) err << "warning: " << w.text << "\n";
  base.dtype = parse_model_dtype_choice(o.dtype);
  if (!o.max_num_batched_tokens.empty()) {
    base.max_num_batched_tokens = parse_human_int("--max-num-batched-tokens", o.max_num_batched_tokens);
  }
  if (!o.target_len_deprecated.empty()) {
    if (!o.max_model_len.empty()) throw UsageError("sweep: give --max-model-len, or its old name --target-len, not both");
    err << "note: sweep --target-len is now --max-model-len, as in fit, plan and vLLM (the old name still works)\n";
  }
  const std::int64_t target = !o.max_model_len.empty()           ? parse_human_int("--max-model-len", o.max_model_len)
                              : !o.target_len_deprecated.empty() ? parse_human_int("--target-len", o.target_len_deprecated)
                                                                 : 0;
  const std::vector<SweepRow> rows = run_sweep(model, axes, base, profile, target);
  const std::int64_t target_shown = target > 0 ? target : model.derived_max_model_len;

  if (o.format == "json") {
    out << sweep_json(model, rows, target_shown, o.vllm_version.empty() ? profile.version : o.vllm_version);
    return 0;
  }
  if (o.format == "svg") {
    SweepChart chart;
    chart.title = fmt::format("{} ({})", o.model, model.architecture);
    chart.model_max = model.derived_max_model_len;
    chart.target_len = target_shown;
    for (const auto& r : rows) {
      chart.labels.push_back(label_of(r, o));
      std::string note;
      if (!r.valid) {
        note = short_error(r.error, model.source);
      } else if (!r.starts) {
        note = "vLLM would not start: " + r.start_blocker;
      } else if (r.kv_cache_per_gpu.count() <= 0) {
        note = fmt::format("no KV cache: the weights and overheads need {:.2f} GiB more than vLLM may use",
                           -to_gib(r.kv_cache_per_gpu));
      } else if (r.max_model_len == 0) {
        note = "no --max-model-len fits in the KV cache that is left";
      }
      chart.notes.push_back(note);
    }
    out << sweep_svg(chart, rows);
    return 0;
  }
  if (o.format == "csv") {
    write_sweep_csv(rows, target_shown, model.source, out);
  } else {
    write_sweep_table(rows, target_shown, model.source, out);
  }
  return 0;
}

}  // namespace gpubudget::cli
