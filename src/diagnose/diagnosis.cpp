// diagnose: from a vLLM log's facts to the cause, the fitting length and the fixes
// (docs/diagnose.md). Figures from the log are used as printed (GiB rounded to 0.01); predictions
// come from fit() with the settings read back from the log.
#include "gpubudget/diagnosis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"

namespace gpubudget {

namespace {

constexpr double kGiBd = 1073741824.0;

Bytes bytes_of_gib(double gib) { return bytes_from_double(std::round(gib * kGiBd)); }
double gib_of(Bytes b) { return static_cast<double>(b.count()) / kGiBd; }
std::string gib_text(double g) { return fmt::format("{:.2f} GiB", g); }

// The settings vLLM ran with, as far as the log states them; the rest are vLLM's defaults.
Deployment deployment_from(const VllmLogFacts& f, const DiagnosisContext& c) {
  Deployment d;
  d.tensor_parallel_size = f.tensor_parallel_size.value_or(1);
  d.pipeline_parallel_size = f.pipeline_parallel_size.value_or(1);
  d.data_parallel_size = f.data_parallel_size.value_or(1);
  d.decode_context_parallel_size = f.decode_context_parallel_size.value_or(1);
  d.enable_expert_parallel = f.enable_expert_parallel.value_or(false);
  d.gpu_memory_utilization = f.gpu_memory_utilization;
  if (f.auto_fit_from) {
    d.max_model_len = f.auto_fit_from;  // auto-fit judged the derived length first
  } else if (f.error_max_seq_len) {
    d.max_model_len = f.error_max_seq_len;
  } else {
    d.max_model_len = f.max_model_len;
  }
  // An unknown spelling in the log throws InputError: the prediction becomes a note, not a guess.
  if (c.kv_cache_dtype) {
    d.kv_cache_dtype = *c.kv_cache_dtype;
  } else if (f.kv_cache_dtype) {
    d.kv_cache_dtype = parse_kv_cache_dtype_choice(*f.kv_cache_dtype, "the log's kv_cache_dtype");
  }
  d.block_size = f.block_size;
  d.max_num_seqs = f.max_num_seqs;
  d.max_num_batched_tokens = f.max_num_batched_tokens;
  d.enforce_eager = f.enforce_eager.value_or(false);
  return d;
}

std::optional<double> logged_available(const VllmLogFacts& f) {
  if (f.available_kv_cache_gib) return f.available_kv_cache_gib;
  return f.error_available_gib;
}

// The one-sentence cause and the remedies that need no model.
void explain_from_log(const VllmLogFacts& f, Diagnosis& d) {
  d.max_model_len = f.error_max_seq_len ? f.error_max_seq_len : f.max_model_len;
  d.needed_gib = f.error_needed_gib;
  d.available_gib = logged_available(f);
  const std::string len = d.max_model_len ? fmt::format("{}", *d.max_model_len) : std::string("the configured length");
  switch (f.outcome) {
    case StartupOutcome::kFailedKvCheck: {
      d.root_cause = "kv_cache_too_small";
      if (f.error_kv_token_capacity) {
        d.sentence = fmt::format("KV cache too small for max_model_len {}: it holds {} tokens per GPU worker set.", len,
                                 *f.error_kv_token_capacity);
        d.fitting_max_model_len = f.error_kv_token_capacity;
        d.fitting_basis = "the KV-cache capacity in vLLM's error";
      } else if (d.needed_gib && d.available_gib) {
        d.sentence = fmt::format("KV cache too small for max_model_len {}: one request of that length needs {} of KV "
                                 "cache per GPU, {} was left after weights and overheads.",
                                 len, gib_text(*d.needed_gib), gib_text(*d.available_gib));
      } else {
        d.sentence = fmt::format("KV cache too small for max_model_len {}: vLLM stopped in "
                                 "_check_enough_kv_cache_memory (the error text itself is not in the log).",
                                 len);
      }
      if (f.estimated_max_model_len && *f.estimated_max_model_len > 0) {
        d.fitting_max_model_len = f.estimated_max_model_len;
        d.fitting_basis = "vLLM's estimate in the error";
      } else if (!d.fitting_max_model_len && d.needed_gib && d.available_gib && d.max_model_len &&
                 *d.needed_gib > 0) {
        const double fitting = std::floor(static_cast<double>(*d.max_model_len) * *d.available_gib / *d.needed_gib);
        if (fitting >= 0 && fitting <= static_cast<double>(kMaxLoggedCount)) {
          d.fitting_max_model_len = static_cast<std::int64_t>(fitting);
        }
        d.fitting_basis = "max_model_len x available / needed from the error (±1 block; --model gives it exactly)";
      }
      break;
    }
    case StartupOutcome::kFailedNoKvMemory:
      d.root_cause = "no_kv_memory";
      d.sentence = "No memory left for the KV cache: weights and startup overheads take the whole "
                   "gpu_memory_utilization budget.";
      break;
    case StartupOutcome::kFailedFreeMemory:
      d.root_cause = "startup_free_memory";
      d.sentence = fmt::format("Not enough free GPU memory at startup: {} free of {}, but gpu_memory_utilization {} "
                               "asks for {}; another process holds GPU memory.",
                               gib_text(f.startup_free_gib.value_or(0)), gib_text(f.startup_total_gib.value_or(0)),
                               f.gpu_memory_utilization.value_or(0), gib_text(f.startup_requested_gib.value_or(0)));
      break;
    case StartupOutcome::kFailedOutOfMemory: {
      d.root_cause = "cuda_oom";
      const auto& oom = *f.out_of_memory;
      d.sentence = fmt::format("CUDA out of memory{}{}.", oom.phase.empty() ? "" : " during " + oom.phase,
                               oom.tried_gib ? fmt::format(" allocating {} with {} free", gib_text(*oom.tried_gib),
                                                           gib_text(oom.free_gib.value_or(0)))
                                             : std::string());
      break;
    }
    case StartupOutcome::kKvAllocated:
      d.root_cause = "none";
      d.sentence = fmt::format("vLLM started: {}{}.",
                               f.kv_cache_tokens ? fmt::format("{} tokens of KV cache", *f.kv_cache_tokens)
                               : f.gpu_blocks    ? fmt::format("{} GPU blocks of KV cache", *f.gpu_blocks)
                                                 : std::string("the KV cache was allocated"),
                               f.available_kv_cache_gib ? fmt::format(" ({} per GPU)", gib_text(*f.available_kv_cache_gib))
                                                        : std::string());
      if (f.auto_fit_to) {
        d.fitting_max_model_len = f.auto_fit_to;
        d.fitting_basis = "vLLM's auto-fit";
      }
      break;
    case StartupOutcome::kFailedOther:
      d.root_cause = "unknown";
      d.sentence = "vLLM failed to start for a reason that is not a memory check" +
                   (f.first_error ? ": " + *f.first_error : std::string(".")) ;
      break;
    case StartupOutcome::kUnknown:
      d.root_cause = "unknown";
      d.sentence = f.memory_lines == 0 ? "The log has no vLLM memory lines and no recognised error: nothing to diagnose."
                                       : "The log ends before the KV cache is allocated and shows no error.";
      break;
  }
}

// A length that fits and is shorter than the one the log failed with (suggesting the same length, or a
// longer one, would not fix anything).
bool shorter_length_fits(const Diagnosis& d) {
  return d.fitting_max_model_len && *d.fitting_max_model_len > 0 &&
         (!d.max_model_len || *d.fitting_max_model_len < *d.max_model_len);
}

// A lower --gpu-memory-utilization for an out-of-memory failure, unless the log shows it could not hold
// the weights the run loaded ("Model loading took"): then it is a note, not a remedy.
void suggest_lower_utilization(const VllmLogFacts& f, double lowered, double total, Diagnosis& d) {
  if (f.model_loading_gib && total > 0 && lowered * total <= *f.model_loading_gib) {
    d.notes.push_back({NoticeCode::kRemedyNotSuggested,
                       fmt::format("not suggested: --gpu-memory-utilization {:.2f} ({:.2f} GiB cannot hold the logged "
                                   "{:.2f} GiB of weights)",
                                   lowered, lowered * total, *f.model_loading_gib)});
    return;
  }
  d.remedies.push_back(fmt::format("--gpu-memory-utilization {:.2f}", lowered));
}

// Flag changes that follow from the log's own numbers.
void remedies_from_log(const VllmLogFacts& f, Diagnosis& d) {
  const double util = f.gpu_memory_utilization.value_or(0);
  const double total = f.total_gpu_gib.value_or(f.startup_total_gib.value_or(0));
  if (d.root_cause == "kv_cache_too_small") {
    if (shorter_length_fits(d)) {
      d.remedies.push_back(fmt::format("--max-model-len {}", *d.fitting_max_model_len));
    }
    if (d.needed_gib && d.available_gib && total > 0 && util > 0) {
      const double wanted = std::ceil((util + (*d.needed_gib - *d.available_gib) / total) * 100.0) / 100.0;
      // Only a higher utilization that a GPU can still give (a lower one would give less than the log's).
      if (wanted > util && wanted < 0.99) d.remedies.push_back(fmt::format("--gpu-memory-utilization {:.2f}", wanted));
    }
    d.remedies.push_back("--kv-cache-dtype fp8 (where an attention backend of that vLLM supports it)");
  } else if (d.root_cause == "no_kv_memory") {
    d.remedies.push_back("--gpu-memory-utilization higher (e.g. 0.95)");
    d.remedies.push_back("--tensor-parallel-size x2 (weights split over more GPUs)");
  } else if (d.root_cause == "startup_free_memory" && f.startup_free_gib && f.startup_total_gib &&
             *f.startup_total_gib > 0) {
    const double fits = std::floor(*f.startup_free_gib / *f.startup_total_gib * 100.0 - 1.0) / 100.0;
    if (fits > 0) d.remedies.push_back(fmt::format("--gpu-memory-utilization {:.2f}", fits));
    d.remedies.push_back("free the GPU memory other processes hold (nvidia-smi)");
  } else if (d.root_cause == "cuda_oom") {
    const std::string& phase = f.out_of_memory->phase;
    if (phase == "sampler" || phase == "profile run") {
      d.remedies.push_back("--max-num-seqs 256");
      d.remedies.push_back("--max-num-batched-tokens 4096");
    } else if (phase == "CUDA graph capture" || phase == "warm-up") {
      suggest_lower_utilization(f, std::max(0.5, util - 0.03), total, d);
      d.remedies.push_back("--enforce-eager");
    } else if (phase == "model loading") {
      d.remedies.push_back("--tensor-parallel-size x2 (the weights do not fit one GPU)");
    } else {
      suggest_lower_utilization(f, std::max(0.5, util - 0.05), total, d);
    }
  }
}

// With a 16-bit KV cache the need doubles against FP8: when the log's need or its failure disagrees
// with the checkpoint's FP8 KV, the checkpoint setting was not in effect (it was edited away, or the
// backend refused it).
std::string reconcile_kv_dtype(const VllmLogFacts& f, const ModelSpec& model, const GpuSpec& gpu, Deployment& dep,
                               const VllmProfile& profile, bool user_set) {
  if (user_set || dep.kv_cache_dtype != KvCacheDtypeChoice::kAuto) return "";
  const KvCacheDtype resolved = resolve_kv_cache_dtype(model, KvCacheDtypeChoice::kAuto, profile.kv_cache);
  if (resolved.element_bytes >= 2) return "";
  Deployment sixteen = dep;
  sixteen.kv_cache_dtype = model.dtype == Dtype::kFloat16 ? KvCacheDtypeChoice::kFloat16 : KvCacheDtypeChoice::kBFloat16;
  const std::string sixteen_name(kv_cache_dtype_choice_name(sixteen.kv_cache_dtype));
  const FitResult as_is = fit(model, gpu, dep, profile);
  const FitResult wide = fit(model, gpu, sixteen, profile);
  bool use_wide = false;
  if (f.error_needed_gib) {
    use_wide = std::fabs(gib_of(wide.needed) - *f.error_needed_gib) < std::fabs(gib_of(as_is.needed) - *f.error_needed_gib);
  } else if (f.outcome == StartupOutcome::kFailedKvCheck && as_is.kv_fits && !wide.kv_fits) {
    use_wide = true;
  }
  if (!use_wide) return "";
  dep.kv_cache_dtype = sixteen.kv_cache_dtype;
  return fmt::format("the checkpoint declares a {} KV cache, but the log's {} matches {}: the checkpoint setting was "
                     "not in effect (edited away, or refused by the attention backend); predicting with {}",
                     resolved.name, f.error_needed_gib ? "KV need" : "failure", sixteen_name, sixteen_name);
}

void compare(Diagnosis& d, const std::string& figure, const std::string& unit, std::optional<double> logged,
             std::optional<double> predicted, const std::string& basis) {
  if (!logged && !predicted) return;
  d.comparison.push_back({figure, unit, logged, predicted, basis});
}

void predict(const VllmLogFacts& f, const DiagnosisContext& c, Diagnosis& d) {
  if (!c.model || !c.profile) return;
  if (!c.gpu) {
    d.notes.push_back({NoticeCode::kNoPrediction,
                       "no GPU given (--gpu) and the log's total capacity matches no preset: no prediction"});
    return;
  }
  const ModelSpec& model = *c.model;
  const VllmProfile& profile = *c.profile;
  d.gpu = c.gpu->name;
  try {
    Deployment dep = deployment_from(f, c);
    const std::string kv_note = reconcile_kv_dtype(f, model, *c.gpu, dep, profile, c.kv_cache_dtype.has_value());
    if (!kv_note.empty()) d.notes.push_back({NoticeCode::kKvDtypeFromLog, kv_note});
    const FitResult predicted = fit(model, *c.gpu, dep, profile);
    const WorkerBudget& w = predicted.binding_worker();
    d.deployment = dep;
    if (!d.max_model_len) d.max_model_len = predicted.judged_max_model_len;
    if (!d.needed_gib) {
      d.needed_gib = gib_of(predicted.needed);
      d.needed_predicted = true;
    }
    if (!d.available_gib) {
      d.available_gib = gib_of(w.kv_cache);
      d.available_predicted = true;
    }

    const auto available = logged_available(f);
    std::optional<FitResult> from_logged;
    if (available) {
      Deployment given = dep;
      given.kv_cache_memory = bytes_of_gib(*available);
      from_logged = fit(model, *c.gpu, given, profile);
    }
    compare(d, "weights (Model loading took)", "GiB", f.model_loading_gib, gib_of(w.weights.total), "exact sharding");
    compare(d, "activation peak", "GiB", f.activation_peak_gib, gib_of(w.overheads.activation_peak), "estimate");
    compare(d, "non-torch memory", "GiB", f.non_torch_gib, gib_of(w.overheads.non_torch), "estimate");
    compare(d, "CUDA graphs", "GiB", f.cudagraph_gib, gib_of(w.overheads.cudagraph),
            w.overheads.cudagraph_charged ? "estimate, charged to the budget" : "estimate, not charged by this vLLM");
    compare(d, "available KV cache", "GiB", available, gib_of(w.kv_cache), "whole budget predicted");
    compare(d, "KV needed for max_model_len", "GiB", f.error_needed_gib, gib_of(predicted.needed), "exact");
    if (f.kv_cache_tokens) {
      compare(d, "GPU KV cache size", "tokens", static_cast<double>(*f.kv_cache_tokens),
              static_cast<double>(from_logged ? from_logged->kv_cache_tokens : predicted.kv_cache_tokens),
              from_logged ? "exact, from the logged available memory" : "whole budget predicted");
    }
    if (f.estimated_max_model_len) {
      compare(d, "estimated maximum model length", "tokens", static_cast<double>(*f.estimated_max_model_len),
              static_cast<double>(from_logged ? from_logged->max_model_len : predicted.max_model_len),
              from_logged ? "exact, from the logged available memory" : "whole budget predicted");
    }
    // The fitting length: exact from the logged available memory, else vLLM's own, else predicted.
    // vLLM's own estimate (in the error, or its auto-fit) stays the answer when the log has it.
    if (from_logged && !d.fitting_max_model_len) {
      d.fitting_max_model_len = from_logged->max_model_len;
      d.fitting_basis = fmt::format("gpubudget's KV arithmetic on the logged {} available", gib_text(*available));
    } else if (!d.fitting_max_model_len) {
      d.fitting_max_model_len = predicted.max_model_len;
      d.fitting_basis = fmt::format("gpubudget's prediction, {}–{} with the overhead uncertainty",
                                    predicted.max_model_len_low, predicted.max_model_len_high);
    }
    if (d.root_cause == "kv_cache_too_small" && !f.error_needed_gib) {
      d.sentence += fmt::format(" gpubudget: one request of {} tokens needs {} per GPU; {} is left ({}).",
                                predicted.judged_max_model_len, gib_text(gib_of(predicted.needed)),
                                gib_text(available ? *available : gib_of(w.kv_cache)),
                                available ? "logged" : "predicted");
    }
    if (d.root_cause != "none") {
      // Remedies start from what the run measured: the logged available memory, the prediction's
      // budget moved by the difference, so that each change is judged against this run's memory.
      Deployment anchored = dep;
      std::optional<FitResult> anchored_fit;
      if (available) {
        anchored.kv_budget_correction = bytes_of_gib(*available) - w.kv_cache;
        anchored_fit = fit(model, *c.gpu, anchored, profile);
        const Bytes held = w.weights.total + bytes_of_gib(*available);
        if (!f.model_loading_gib && held > w.requested) {
          d.notes.push_back(
              {NoticeCode::kLogFiguresDisagree,
               fmt::format(
                   "the log's {} available and the predicted {} of weights exceed the {} vLLM may use on {}: the "
                   "GPU (its memory), the model or the layout differ from the run's; remedies rest on the logged "
                   "figure",
                   gib_text(*available), gib_text(gib_of(w.weights.total)), gib_text(gib_of(w.requested)),
                   c.gpu->name)});
        }
      }
      d.model_remedies = find_remedies(model, {*c.gpu}, anchored, profile, anchored_fit ? *anchored_fit : predicted);
      std::vector<std::string> flags;
      if (d.root_cause == "kv_cache_too_small" && shorter_length_fits(d)) {
        flags.push_back(fmt::format("--max-model-len {}", *d.fitting_max_model_len));
      }
      for (const Remedy& r : d.model_remedies) {
        if (r.blocked) {
          d.notes.push_back(
              {NoticeCode::kRemedyNotSuggested, fmt::format("not suggested: {} ({})", r.change, r.caveat)});
          continue;
        }
        if (r.flags.empty()) continue;
        std::string line;
        for (const auto& flag : r.flags) line += (line.empty() ? "" : " ") + flag;
        if (line.rfind("--max-model-len", 0) == 0) continue;
        // A change that leaves less than the length the run asked for is no remedy for that run.
        if (f.max_model_len && r.max_model_len < *f.max_model_len && !r.reaches_target) {
          d.notes.push_back(
              {NoticeCode::kRemedyNotSuggested,
               fmt::format("not suggested: {} (largest length {}, less than the log's --max-model-len {})", r.change,
                           r.max_model_len, *f.max_model_len)});
          continue;
        }
        flags.push_back(fmt::format("{}  (largest length {})", line, r.max_model_len));
      }
      if (!flags.empty()) d.remedies = flags;
    }
  } catch (const InputError& e) {
    d.notes.push_back({NoticeCode::kNoPrediction, fmt::format("no prediction: {}", e.what())});
  }
}

}  // namespace

Diagnosis diagnose_log(const VllmLogFacts& facts, const DiagnosisContext& context) {
  Diagnosis d;
  explain_from_log(facts, d);
  remedies_from_log(facts, d);
  predict(facts, context, d);
  if (facts.truncated_lines > 0) {
    d.notes.push_back({NoticeCode::kLogLinesCut, fmt::format("{} line(s) longer than {} bytes were cut",
                                                             facts.truncated_lines, kMaxLogLineBytes)});
  }
  if (facts.workers > 1 && facts.available_kv_cache_gib) {
    d.notes.push_back({NoticeCode::kLogWorkers,
                       fmt::format("{} workers logged; the smallest available KV memory is used", facts.workers)});
  }
  if (facts.implausible_figures > 0) {
    d.notes.push_back(
        {NoticeCode::kLogFiguresIgnored,
         fmt::format("{} figure(s) in the log are beyond what any GPU or startup shows (more than {} GiB, "
                     "a utilization outside (0, 1], a count beyond {}) and were ignored",
                     facts.implausible_figures, kMaxLoggedGib, kMaxLoggedCount)});
  }
  return d;
}

std::string observation_row(const VllmLogFacts& f, const Diagnosis& d, const DiagnosisContext& c) {
  using Json = nlohmann::ordered_json;
  auto opt = [](const auto& v) -> Json { return v ? Json(*v) : Json(nullptr); };
  const std::int64_t tp = f.tensor_parallel_size.value_or(1);
  const std::int64_t pp = f.pipeline_parallel_size.value_or(1);
  const std::int64_t dp = f.data_parallel_size.value_or(1);
  std::string id = f.source;
  const auto slash = id.find_last_of('/');
  if (slash != std::string::npos) id = id.substr(slash + 1);
  std::string startup = "unknown";
  switch (f.outcome) {
    case StartupOutcome::kKvAllocated: startup = "kv_allocated"; break;
    case StartupOutcome::kFailedKvCheck: startup = "failed_kv_check"; break;
    case StartupOutcome::kFailedNoKvMemory: startup = "failed_negative_kv"; break;
    case StartupOutcome::kFailedFreeMemory:
    case StartupOutcome::kFailedOutOfMemory:
    case StartupOutcome::kFailedOther: startup = "failed"; break;
    case StartupOutcome::kUnknown: break;
  }
  Json row;
  row["id"] = "log-" + id;
  row["source_url"] = f.source;
  row["source_kind"] = "gpubudget diagnose";
  row["vllm_version"] = opt(f.vllm_version);
  row["model"] = !c.model_name.empty() ? Json(c.model_name) : opt(f.model);
  row["arch_class"] = c.model ? Json(c.model->architecture) : Json(nullptr);
  row["quant"] = opt(f.quantization);
  row["gpu_model"] = c.gpu ? Json(c.gpu->device_name.empty() ? c.gpu->name : c.gpu->device_name) : Json(nullptr);
  row["gpu_total_memory_gib"] = opt(f.total_gpu_gib);
  row["num_gpus"] = tp * pp * dp;
  row["tp"] = tp;
  row["pp"] = pp;
  row["dp"] = dp;
  row["dcp"] = opt(f.decode_context_parallel_size);
  row["ep"] = nullptr;
  row["gpu_memory_utilization"] = opt(f.gpu_memory_utilization);
  row["max_model_len"] = opt(d.max_model_len);
  row["max_num_seqs"] = opt(f.max_num_seqs);
  row["max_num_batched_tokens"] = opt(f.max_num_batched_tokens);
  row["kv_cache_dtype"] = opt(f.kv_cache_dtype);
  row["block_size"] = opt(f.block_size);
  row["enforce_eager"] = opt(f.enforce_eager);
  row["speculative"] = nullptr;
  row["model_loading_gib"] = opt(f.model_loading_gib);
  row["activation_peak_gib"] = opt(f.activation_peak_gib);
  row["non_torch_gib"] = opt(f.non_torch_gib);
  row["cudagraph_gib"] = opt(f.cudagraph_gib);
  row["available_kv_cache_gib"] = opt(f.available_kv_cache_gib);
  row["kv_cache_tokens"] = opt(f.kv_cache_tokens);
  row["max_concurrency"] = opt(f.max_concurrency);
  row["max_concurrency_tokens"] = opt(f.max_concurrency_tokens);
  row["error_needed_gib"] = opt(f.error_needed_gib);
  row["error_available_gib"] = opt(f.error_available_gib);
  row["estimated_max_model_len"] = opt(f.estimated_max_model_len);
  row["error_kv_token_capacity"] = opt(f.error_kv_token_capacity);
  row["gpu_blocks"] = opt(f.gpu_blocks);
  row["cpu_blocks"] = opt(f.cpu_blocks);
  row["startup_outcome"] = startup;
  row["extra"] = Json{{"attention_backend", opt(f.attention_backend)}, {"root_cause", d.root_cause}};
  row["note"] = d.sentence;
  return row.dump(-1, ' ', false, Json::error_handler_t::replace);
}

LogDiagnosis diagnose_with_settings(VllmLogFacts facts, const DiagnoseSettings& settings, const ConfigDir& configs) {
  LogDiagnosis out;
  out.facts = std::move(facts);
  DiagnosisContext& context = out.context;
  if (!settings.gpu.empty()) context.gpu = load_gpu_preset(settings.gpu, configs);
  // The model: --model, else the one the log names (its engine-config line) when it is found without the
  // network (a path, a bundled id, the Hugging Face or gpubudget cache); a logged model that is not is a
  // note, not an error, and not a fetch.
  std::string model_name = settings.model;
  std::optional<Notice> model_note, version_note;
  if (model_name.empty() && out.facts.model) {
    HubOptions offline = settings.hub ? *settings.hub : hub_options_from_environment();
    offline.offline = true;
    try {
      out.model = std::make_shared<const ModelSpec>(load_model(*out.facts.model, configs, offline));
      model_name = *out.facts.model;
      model_note = Notice{NoticeCode::kModelFromLog,
                          fmt::format("model {} taken from the log (--model to give another)", model_name)};
    } catch (const InputError& e) {
      model_note =
          Notice{NoticeCode::kNoPrediction,
                 fmt::format("the log names model {}, not found without the network, so there is no prediction "
                             "(--model fetches it): {}",
                             *out.facts.model, e.what())};
    }
  } else if (!model_name.empty()) {
    out.model = std::make_shared<const ModelSpec>(settings.hub ? load_model(model_name, configs, *settings.hub)
                                                               : load_model(model_name, configs));
  }
  if (out.model) {
    context.model = out.model.get();
    context.model_name = model_name;
    if (!context.gpu) {
      const auto total = out.facts.total_gpu_gib ? out.facts.total_gpu_gib : out.facts.startup_total_gib;
      if (total) context.gpu = find_gpu_preset_by_memory(configs, *total);
    }
    std::string version = settings.vllm_version;
    if (version.empty() && out.facts.vllm_version) version = *out.facts.vllm_version;
    try {
      context.profile = load_vllm_profile(version, configs);
      // The nearest profile, when there is none of that release.
      if (!context.profile->version_note.empty()) {
        version_note = Notice{NoticeCode::kProfileNearest, context.profile->version_note};
      }
    } catch (const InputError& e) {
      if (!settings.vllm_version.empty()) throw;
      // A logged release older than any gpubudget answers (the V0 engine's accounting): no prediction
      // rather than one by another release's rules.
      version_note =
          Notice{NoticeCode::kNoPrediction,
                 fmt::format("no prediction for the log's vLLM {} ({}); --vllm-version to predict with a profile",
                             version, e.what())};
    }
  }
  context.kv_cache_dtype = settings.kv_cache_dtype;
  out.diagnosis = diagnose_log(out.facts, context);
  if (version_note) out.diagnosis.notes.insert(out.diagnosis.notes.begin(), *version_note);
  if (model_note) out.diagnosis.notes.insert(out.diagnosis.notes.begin(), *model_note);
  return out;
}

}  // namespace gpubudget
