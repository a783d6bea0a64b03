// configs/vllm-log-wordings.json → LogWordings (log_wordings.h), and the public handle of vllm_log.h.
#include "log/log_wordings.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "core/json_reader.h"
#include "gpubudget/error.h"

namespace gpubudget {

namespace detail {

namespace {

// The VllmLogFacts members a rule may fill, by the name the wordings file gives them.
const std::pair<std::string_view, LogField> kFields[] = {
    {"vllm_version", &VllmLogFacts::vllm_version},
    {"max_model_len", &VllmLogFacts::max_model_len},
    {"max_num_batched_tokens", &VllmLogFacts::max_num_batched_tokens},
    {"block_size", &VllmLogFacts::block_size},
    {"gpu_memory_utilization", &VllmLogFacts::gpu_memory_utilization},
    {"model_loading_gib", &VllmLogFacts::model_loading_gib},
    {"activation_peak_gib", &VllmLogFacts::activation_peak_gib},
    {"non_torch_gib", &VllmLogFacts::non_torch_gib},
    {"total_non_kv_gib", &VllmLogFacts::total_non_kv_gib},
    {"available_kv_cache_gib", &VllmLogFacts::available_kv_cache_gib},
    {"cudagraph_gib", &VllmLogFacts::cudagraph_gib},
    {"estimated_cudagraph_gib", &VllmLogFacts::estimated_cudagraph_gib},
    {"requested_gib", &VllmLogFacts::requested_gib},
    {"total_gpu_gib", &VllmLogFacts::total_gpu_gib},
    {"kv_cache_tokens", &VllmLogFacts::kv_cache_tokens},
    {"max_concurrency_tokens", &VllmLogFacts::max_concurrency_tokens},
    {"gpu_blocks", &VllmLogFacts::gpu_blocks},
    {"cpu_blocks", &VllmLogFacts::cpu_blocks},
    {"max_concurrency", &VllmLogFacts::max_concurrency},
    {"auto_fit_from", &VllmLogFacts::auto_fit_from},
    {"auto_fit_to", &VllmLogFacts::auto_fit_to},
    {"error_max_seq_len", &VllmLogFacts::error_max_seq_len},
    {"estimated_max_model_len", &VllmLogFacts::estimated_max_model_len},
    {"error_kv_token_capacity", &VllmLogFacts::error_kv_token_capacity},
    {"error_needed_gib", &VllmLogFacts::error_needed_gib},
    {"error_available_gib", &VllmLogFacts::error_available_gib},
    {"startup_free_gib", &VllmLogFacts::startup_free_gib},
    {"startup_total_gib", &VllmLogFacts::startup_total_gib},
    {"startup_requested_gib", &VllmLogFacts::startup_requested_gib},
    {"out_of_memory.tried_gib", &LoggedOutOfMemory::tried_gib},
    {"out_of_memory.capacity_gib", &LoggedOutOfMemory::capacity_gib},
    {"out_of_memory.free_gib", &LoggedOutOfMemory::free_gib},
};

const std::pair<std::string_view, LogMark> kMarks[] = {
    {"v0_engine", LogMark::kV0Engine},
    {"kv_allocated", LogMark::kKvAllocated},
    {"counts", LogMark::kCounts},
    {"error", LogMark::kError},
    {"kv_check_error", LogMark::kKvCheckError},
    {"kv_check_in_traceback", LogMark::kKvCheckInTraceback},
    {"no_kv_memory", LogMark::kNoKvMemory},
    {"startup_free_memory", LogMark::kStartupFreeMemory},
    {"out_of_memory", LogMark::kOutOfMemory},
    {"engine_failed", LogMark::kEngineFailed},
};

template <typename Value, std::size_t N>
Value lookup(const std::pair<std::string_view, Value> (&table)[N], const JsonReader& r, std::string_view key,
             const std::string& name) {
  for (const auto& [known, value] : table) {
    if (known == name) return value;
  }
  r.fail(key, "a name this version of gpubudget knows");
}

// Whether a figure of `kind` can go to `field` (numbers to numbers, counts to counts, texts to texts).
bool compatible(const LogField& field, FigureKind kind) {
  switch (kind) {
    case FigureKind::kGib:
    case FigureKind::kNumber:
      return std::holds_alternative<std::optional<double> VllmLogFacts::*>(field) ||
             std::holds_alternative<std::optional<double> LoggedOutOfMemory::*>(field);
    case FigureKind::kInteger: return std::holds_alternative<std::optional<std::int64_t> VllmLogFacts::*>(field);
    case FigureKind::kVersion: return std::holds_alternative<std::optional<std::string> VllmLogFacts::*>(field);
  }
  return false;
}

LogFigure read_figure(const JsonReader& f) {
  f.reject_unknown_keys({"field", "from", "after", "kind", "keep", "counts"});
  LogFigure figure;
  figure.field = lookup(kFields, f, "field", f.string("field"));
  figure.from = f.string_list("from");
  figure.after = f.string("after");
  if (figure.after.empty()) f.fail("after", "a non-empty text");
  const std::string kind = f.string("kind");
  if (kind == "gib") {
    figure.kind = FigureKind::kGib;
  } else if (kind == "number") {
    figure.kind = FigureKind::kNumber;
  } else if (kind == "integer") {
    figure.kind = FigureKind::kInteger;
  } else if (kind == "version") {
    figure.kind = FigureKind::kVersion;
  } else {
    f.fail("kind", "\"gib\", \"number\", \"integer\" or \"version\"");
  }
  if (!compatible(figure.field, figure.kind)) f.fail("kind", "a kind that fits the field's type");
  const std::string keep = f.optional_string("keep").value_or("last");
  if (keep == "max") {
    figure.keep = Keep::kMax;
  } else if (keep == "min") {
    figure.keep = Keep::kMin;
  } else if (keep != "last") {
    f.fail("keep", "\"last\", \"max\" or \"min\"");
  }
  if (figure.keep != Keep::kLast && !std::holds_alternative<std::optional<double> VllmLogFacts::*>(figure.field)) {
    f.fail("keep", "\"last\" for a count or a text");
  }
  figure.counts = f.boolean("counts", false);
  return figure;
}

std::vector<std::string> nonempty_texts(const JsonReader& r, std::string_view key) {
  auto texts = r.string_list(key);
  for (const auto& t : texts) {
    if (t.empty()) r.fail(key, "non-empty texts");
  }
  return texts;
}

}  // namespace

LogWordings parse_log_wordings(const std::string& text, const std::string& path) {
  const nlohmann::json json = parse_json(text, path);
  const JsonReader r(json, path);
  r.reject_unknown_keys({"schema_version", "description", "gates", "settings_lines", "backend_lines", "rules",
                         "error_lines", "tracebacks"});
  if (r.integer("schema_version", 1, 1) != 1) r.fail("schema_version", "1");
  LogWordings w;
  const JsonReader gates = r.object("gates");
  gates.reject_unknown_keys({"settings", "memory", "errors"});
  w.settings_gate = nonempty_texts(gates, "settings");
  w.memory_gate = nonempty_texts(gates, "memory");
  w.errors_gate = nonempty_texts(gates, "errors");

  const auto array_of = [&](const nlohmann::json& owner, const JsonReader& reader, const char* key) -> const nlohmann::json& {
    if (!owner.contains(key) || !owner[key].is_array()) reader.fail(key, "an array");
    return owner[key];
  };
  const auto& lines = array_of(json, r, "settings_lines");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const JsonReader l(lines[i], path, fmt::format("/settings_lines/{}", i));
    l.reject_unknown_keys({"marker", "syntax", "length_key"});
    const std::string syntax = l.string("syntax");
    if (syntax != "key=value" && syntax != "dict") l.fail("syntax", "\"key=value\" or \"dict\"");
    w.settings_lines.push_back({l.string("marker"), syntax == "dict", l.string("length_key")});
  }

  const JsonReader backends = r.object("backend_lines");
  backends.reject_unknown_keys({"block_size_marker", "block_size_backend_between", "used_marker", "used_suffixes",
                                "name_prefixes_dropped"});
  w.block_size_marker = backends.string("block_size_marker");
  const auto between = backends.string_list("block_size_backend_between");
  if (between.size() != 2) backends.fail("block_size_backend_between", "[before, after]");
  w.backend_before = between[0];
  w.backend_after = between[1];
  w.used_marker = backends.string("used_marker");
  w.used_suffixes = nonempty_texts(backends, "used_suffixes");
  w.backend_prefixes_dropped = nonempty_texts(backends, "name_prefixes_dropped");

  const auto& rules = array_of(json, r, "rules");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const JsonReader rule(rules[i], path, fmt::format("/rules/{}", i));
    rule.reject_unknown_keys({"stage", "when", "when_any", "unless", "marks", "marks_need_a_figure", "figures"});
    LogRule out;
    const std::string stage = rule.string("stage");
    if (stage == "settings") {
      out.stage = LogStage::kSettings;
    } else if (stage == "memory") {
      out.stage = LogStage::kMemory;
    } else if (stage == "errors") {
      out.stage = LogStage::kErrors;
    } else {
      rule.fail("stage", "\"settings\", \"memory\" or \"errors\"");
    }
    out.when = nonempty_texts(rule, "when");
    out.when_any = nonempty_texts(rule, "when_any");
    out.unless = nonempty_texts(rule, "unless");
    for (const auto& mark : rule.string_list("marks")) out.marks.push_back(lookup(kMarks, rule, "marks", mark));
    out.marks_need_a_figure = rule.boolean("marks_need_a_figure", false);
    if (rule.has("figures")) {
      const auto& figures = array_of(rules[i], rule, "figures");
      for (std::size_t k = 0; k < figures.size(); ++k) {
        out.figures.push_back(read_figure(JsonReader(figures[k], path, fmt::format("/rules/{}/figures/{}", i, k))));
      }
    }
    if (out.figures.empty() && out.when.empty() && out.when_any.empty()) {
      rule.fail("when", "a text to match (a rule without figures needs one)");
    }
    w.rules.push_back(std::move(out));
  }

  const JsonReader errors = r.object("error_lines");
  errors.reject_unknown_keys({"levels", "texts", "first_error_bytes"});
  w.error_levels = nonempty_texts(errors, "levels");
  w.error_texts = nonempty_texts(errors, "texts");
  w.first_error_bytes = static_cast<std::size_t>(errors.integer("first_error_bytes", 1, 1 << 16));

  const JsonReader tracebacks = r.object("tracebacks");
  tracebacks.reject_unknown_keys({"start", "frame", "phases"});
  w.traceback_start = tracebacks.string("start");
  w.traceback_frame = tracebacks.string("frame");
  const auto& phases = array_of(json["tracebacks"], tracebacks, "phases");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const JsonReader p(phases[i], path, fmt::format("/tracebacks/phases/{}", i));
    p.reject_unknown_keys({"function", "phase"});
    w.phases.push_back({p.string("function"), p.string("phase")});
  }
  return w;
}

}  // namespace detail

VllmLogWordings load_vllm_log_wordings(const ConfigDir& configs) {
  const std::string path = (configs.root / "vllm-log-wordings.json").string();
  return VllmLogWordings(std::make_shared<const detail::LogWordings>(
      detail::parse_log_wordings(detail::read_text_file(path), path)));
}

}  // namespace gpubudget
