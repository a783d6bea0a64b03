#include "cli.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/argument_values.h"
#include "diagnose_command.h"
#include "fit_command.h"
#include "gpubudget/vllm_command.h"
#include "gpubudget/calibrate.h"
#include "plan_command.h"
#include "suggestions.h"
#include "terminal_style.h"
#include "text_width.h"
#include "sweep_command.h"
#include "weights_command.h"
#include "cli_errors.h"
#include "hub_flags.h"
#include "gpubudget/error.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/limits.h"
#include "gpubudget/load.h"
#include "gpubudget/plan.h"
#include "gpubudget/weights.h"
#include "gpubudget/version.h"

namespace gpubudget::cli {

namespace {

constexpr const char* kModelHelp =
    "model directory, config.json, bundled id, or Hugging Face Hub id (org/name, org/name@revision, model page URL)";

// A range check whose message names the range in plain numbers ("-tp 0: expected 1 to 1024").
CLI::Validator within(std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
          return fmt::format("expected an integer from {} to {}, got {}", min, max, text);
        }
        return "";
      },
      fmt::format("INT in [{} - {}]", min, max));
}

// The parallel layout flags fit and weights share, with vLLM's names.
void add_parallel_options(CLI::App& app, Deployment& d) {
  app.add_option("--tensor-parallel-size", d.tensor_parallel_size, "-tp: tensor-parallel size")->check(within(1, kMaxTensorParallelSize));
  app.add_option("--pipeline-parallel-size", d.pipeline_parallel_size, "-pp: pipeline stages")->check(within(1, kMaxPipelineParallelSize));
  app.add_option("--data-parallel-size", d.data_parallel_size, "-dp: data-parallel size")->check(within(1, kMaxDataParallelSize));
  app.add_flag("--enable-expert-parallel", d.enable_expert_parallel, "shard routed experts whole over TPxDP");
  app.add_option("--num-redundant-experts", d.num_redundant_experts, "EPLB extra experts (with expert parallel)")
      ->check(within(0, kMaxRedundantExperts));
}

// What vLLM's startup does beyond the layout, shared by fit and sweep: CUDA graphs and the encoder profile.
void add_startup_flags(CLI::App& app, Deployment& d) {
  app.add_flag("--enforce-eager", d.enforce_eager, "no CUDA graphs");
  app.add_flag("--skip-mm-profiling", d.skip_mm_profiling, "vLLM skips the multimodal encoder in its profile run");
}

void add_fit_options(CLI::App& fit, FitOptions& o) {
  fit.add_option("MODEL", o.model, kModelHelp)->required();
  add_hub_flags(fit, o.hub);
  fit.add_option("--gpu", o.gpu,
                 "GPU preset (see `gpubudget gpus`), a preset-format FILE.json, one per pipeline stage (a,b), or auto (nvidia-smi)");
  fit.add_option("--gpu-memory", o.gpu_memory, "CUDA-visible total per GPU (96GiB, 97887MiB, bytes)");
  fit.add_option("--compute-capability", o.compute_capability,
                 "with --gpu-memory alone: the GPU's compute capability (8.0, 9.0, 12.0; default 9.0), which picks the attention backend");
  fit.add_option("--vllm-version", o.vllm_version, "vLLM version whose behaviour to reproduce (default: newest)");
  fit.add_option("--profile", o.profile_file, "a vLLM profile file (e.g. from `gpubudget calibrate`) instead of --vllm-version");
  auto& d = o.vllm.deployment;
  add_parallel_options(fit, d);
  fit.add_option("--decode-context-parallel-size", d.decode_context_parallel_size, "-dcp: decode context parallel")
      ->check(within(1, kMaxDecodeContextParallelSize));
  fit.add_option("--pp-layer-partition", o.vllm.pp_layer_partition, "decoder layers per stage, e.g. 31,30 (VLLM_PP_LAYER_PARTITION)");
  fit.add_option("--vllm-env", o.vllm.vllm_env, "VAR=VALUE for one of: " + fmt::format("{}", fmt::join(modelled_vllm_env_vars(), ", ")));
  fit.add_option("--gpu-memory-utilization", d.gpu_memory_utilization, "fraction of the GPU vLLM may use");
  fit.add_option("--dtype", o.vllm.dtype, "auto, bfloat16, float16, float32: unquantized weights and auto KV dtype");
  fit.add_option("--kv-cache-dtype", o.vllm.kv_cache_dtype,
                 "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, nvfp4, int8_per_token_head, "
                 "fp8_per_token_head (as the version accepts)");
  fit.add_option("--max-model-len", o.vllm.max_model_len, "length to judge: N, 128k, auto or -1 (default: model maximum)");
  fit.add_option("--max-num-seqs", d.max_num_seqs, "default: vLLM's for the GPU")->check(within(1, kMaxNumSeqs));
  fit.add_option("--max-num-batched-tokens", o.vllm.max_num_batched_tokens, "default: vLLM's for the GPU");
  fit.add_option("--block-size", d.block_size, "default: the attention backend's")->check(within(1, kMaxBlockSize));
  add_startup_flags(fit, d);
  add_launch_flags(fit, o.vllm.launch);
  fit.add_option("--entry-point", o.vllm.entry_point, "serve (vllm serve, default) or llm (the offline LLM class): scheduler defaults");
  fit.add_option("--mamba-cache-mode", o.vllm.mamba_cache_mode, "hybrid models: none, align or all (default: from prefix caching)");
  fit.add_flag("--enable-prefix-caching", o.vllm.enable_prefix_caching, "prefix caching on (hybrid models: mamba align mode)");
  fit.add_flag("--no-enable-prefix-caching", o.vllm.no_enable_prefix_caching, "prefix caching off");
  fit.add_option("--mamba-cache-dtype", o.vllm.mamba_cache_dtype, "hybrid models: auto, float32, float16, bfloat16");
  fit.add_option("--mamba-ssm-cache-dtype", o.vllm.mamba_ssm_cache_dtype, "hybrid models' SSM state: auto, float32, ...");
  fit.add_option("--mamba-block-size", d.mamba_block_size, "hybrid models, mamba_cache_mode all: tokens per cached state")
      ->check(within(1, kMaxMambaBlockSize));
  fit.add_option("--num-gpu-blocks-override", d.num_gpu_blocks_override, "KV blocks vLLM allocates, whatever the memory")
      ->check(within(1, kMaxNumGpuBlocks));
  fit.add_option("--kv-cache-dtype-skip-layers", d.kv_cache_dtype_skip_layers,
                 "layer indices or sliding_window kept in the model dtype (0.19+), comma-separated")
      ->delimiter(',');
  fit.add_flag("--disable-hybrid-kv-cache-manager", o.vllm.disable_hybrid_kv_cache_manager,
               "sliding-window and chunked layers at full length");
  fit.add_flag("--no-disable-hybrid-kv-cache-manager", o.vllm.no_disable_hybrid_kv_cache_manager,
               "keep the hybrid KV cache manager where vLLM allows it");
  fit.add_option("--kv-transfer-config", o.vllm.kv_transfer_config, "JSON; its kv_connector decides the hybrid KV manager");
  fit.add_option("--kv-offloading-size", o.vllm.kv_offloading_size, "GiB of CPU memory for offloaded KV blocks (all ranks)");
  fit.add_option("--kv-offloading-backend", o.vllm.kv_offloading_backend, "native (default) or lmcache");
  fit.add_option("--kv-cache-memory-bytes", o.vllm.kv_cache_memory_bytes, "fixed KV budget, bypasses utilization");
  fit.add_flag("--json", o.json, "one JSON document on stdout");
  fit.add_flag("--explain", o.explain, "show the formula and inputs behind each figure");
  fit.add_flag("--vllm-args", o.vllm_args, "print the `vllm serve` line to launch with (the length that fits)");
  fit.add_option("--safety-margin", o.safety_margin_percent,
                 "--vllm-args: percent of the length kept below the computed edge (default 5; 0 = the edge)")
      ->check(CLI::Range(0.0, 50.0).description("0 to 50"));
  fit.add_flag("--strict", o.strict, "exit 3 when the config has a key no parser models (instead of a warning)");
}

void add_weights_options(CLI::App& w, WeightsOptions& o) {
  w.add_option("MODEL", o.model, kModelHelp)->required();
  add_hub_flags(w, o.hub);
  w.add_option("--gpu", o.gpu, "GPU preset: decides MXFP4 padding (optional)");
  w.add_option("--vllm-version", o.vllm_version, "vLLM version whose behaviour to reproduce (default: newest)");
  auto& d = o.deployment;
  add_parallel_options(w, d);
  w.add_option("--dtype", o.dtype, "auto, bfloat16, float16, float32: unquantized weights");
  w.add_option("--by", o.by, "component (default), layer or tensor");
  w.add_flag("--no-headers", o.no_headers, "ignore safetensors files in the model folder");
  w.add_flag("--json", o.json, "one JSON document on stdout");
  w.add_flag("--strict", o.strict, "exit 3 when the config has a key no parser models (instead of a warning)");
}

void add_sweep_options(CLI::App& s, SweepOptions& o) {
  s.add_option("MODEL", o.model, kModelHelp)->required();
  add_hub_flags(s, o.hub);
  s.add_option("--gpu", o.gpus, "GPU presets, comma-separated (or --layout)");
  s.add_option("--layout", o.layouts, "GPU:TP pairs instead of --gpu x -tp, e.g. h200:4,h100:8 (4 x H200 or 8 x H100)");
  s.add_option("--tensor-parallel-size", o.tp, "-tp: sizes, comma-separated");
  s.add_option("--pipeline-parallel-size", o.pp, "-pp: sizes, comma-separated");
  s.add_option("--decode-context-parallel-size", o.dcp, "-dcp: sizes, comma-separated");
  s.add_option("--kv-cache-dtype", o.kv_cache_dtypes, "KV dtypes, comma-separated");
  s.add_option("--gpu-memory-utilization", o.utilizations, "fractions, comma-separated (default: the version's)");
  s.add_option("--max-num-seqs", o.max_num_seqs, "values, comma-separated (default: vLLM's)");
  s.add_option("--max-model-len", o.max_model_len,
               "length of the requests the concurrency column counts, as vLLM's \"Maximum concurrency for M tokens "
               "per request\" (default: the model's maximum)");
  s.add_option("--target-len", o.target_len_deprecated, "the old name of --max-model-len (deprecated)");
  s.add_option("--format", o.format, "table (default), csv, json or svg");
  s.add_option("--vllm-version", o.vllm_version, "vLLM version whose behaviour to reproduce (default: newest)");
  s.add_option("--max-num-batched-tokens", o.max_num_batched_tokens, "default: vLLM's for the GPU");
  auto& d = o.deployment;
  s.add_option("--data-parallel-size", d.data_parallel_size, "-dp: data-parallel size")->check(within(1, kMaxDataParallelSize));
  s.add_flag("--enable-expert-parallel", d.enable_expert_parallel, "shard routed experts whole over TPxDP");
  s.add_option("--dtype", o.dtype, "auto, bfloat16, float16, float32");
  add_startup_flags(s, d);
  add_launch_flags(s, o.launch);
}

void add_plan_options(CLI::App& p, PlanOptions& o) {
  p.add_option("MODEL", o.model, kModelHelp)->required();
  add_hub_flags(p, o.hub);
  p.add_option("--max-model-len", o.max_model_len, "L: tokens per request (default: the model's maximum)");
  p.add_option("--concurrency", o.concurrency, "C: requests of L tokens held at once")->check(within(1, kMaxPlanConcurrency));
  p.add_option("--gpu", o.gpus, "GPU presets to plan for, comma-separated (default: every preset)");
  p.add_option("--max-pipeline-parallel-size", o.max_pipeline, "largest PP tried (stages of whole nodes)")
      ->check(within(1, kMaxPlanPipeline));
  p.add_option("--gpus-per-node", o.gpus_per_node, "GPUs in one node: TP 1, 2, 4, 8 up to it, PP only with whole nodes (default 8)")
      ->check(within(1, kMaxTensorParallelSize));
  p.add_option("--vllm-version", o.vllm_version, "vLLM version whose behaviour to reproduce (default: newest)");
  auto& d = o.deployment;
  p.add_option("--kv-cache-dtype", o.kv_cache_dtype, "auto, bfloat16, fp8, ...");
  p.add_option("--gpu-memory-utilization", d.gpu_memory_utilization, "fraction of the GPU vLLM may use");
  p.add_option("--dtype", o.dtype, "auto, bfloat16, float16, float32");
  p.add_flag("--enable-expert-parallel", d.enable_expert_parallel,
             "every layout with expert parallelism (default: plain first, EP when plain does not serve)");
  p.add_flag("--json", o.json, "JSON array");
}

struct CalibrateOptions {
  std::string observations;
  std::string profile;
  std::string aliases;
  std::string output;
  bool coefficients_only = false;
};

// The profile a calibration without --profile starts from: the one every replayed row ran under when
// they agree, else the newest.
std::string default_calibration_profile(const std::vector<ReplayRow>& rows, const ConfigDir& configs) {
  std::string version;
  for (const auto& r : rows) {
    if (r.profile.empty()) continue;
    if (!version.empty() && r.profile != version) return load_vllm_profile("", configs).source;
    version = r.profile;
  }
  return load_vllm_profile(version, configs).source;
}

// `gpubudget calibrate OBSERVATIONS.jsonl [--profile P.json] [-o OUT.json] [--coefficients-only]`.
int run_calibrate(const CalibrateOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  std::string aliases = o.aliases;
  if (aliases.empty()) {
    const auto beside = std::filesystem::path(o.observations).parent_path() / "model_aliases.json";
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) aliases = beside.string();
  }
  const auto rows = replay_observations(o.observations, aliases, configs);
  const std::string profile = o.profile.empty() ? default_calibration_profile(rows, configs) : o.profile;
  if (o.profile.empty()) err << "calibrating " << profile << "\n";
  std::ifstream in(profile);
  if (!in) throw InputError(fmt::format("{}: cannot be read", profile));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Calibration c = calibrate_profile(rows, text, profile, (configs.root / "vllm").string());
  for (const auto& t : c.terms) {
    err << fmt::format("{:<16} {:>3} rows  rmse {:.3f} GiB\n", t.term, t.rows, t.rmse_gib);
  }
  const std::string& document = o.coefficients_only ? c.coefficients_json : c.profile_json;
  if (o.output.empty()) {
    out << document;
  } else {
    std::ofstream file(o.output, std::ios::binary);
    file << document;
    file.close();
    if (!file) throw InputError(fmt::format("{}: cannot be written", o.output));
  }
  return 0;
}

int run_gpus(const ConfigDir& configs, bool json, std::ostream& out) {
  const auto presets = list_gpu_presets(configs);
  if (json) {
    out << gpus_json(presets);
    return 0;
  }
  out << fmt::format("{:<18} {:<56} {:>12} {:>12}  {}\n", "name", "device", "visible GiB", "smi MiB", "cc");
  for (const auto& g : presets) {
    out << fmt::format("{:<18} {:<56} {:>12.2f} {:>12}  {}{}\n", g.name, g.device_name, to_gib(g.memory),
                       g.nvidia_smi_mib,
                       g.platform == Platform::kCuda
                           ? fmt::format("{}.{}", g.compute_capability_major, g.compute_capability_minor)
                           : "rocm",
                       g.memory_estimated ? "  (total estimated)" : "");
  }
  return 0;
}

// Parameters as a model card rounds them: "8.03B", "685B", "752M".
std::string parameters_text(std::int64_t parameters) {
  const double billions = static_cast<double>(parameters) / 1e9;
  if (billions >= 100) return fmt::format("{:.0f}B", billions);
  if (billions >= 1) return fmt::format("{:.2f}B", billions);
  return fmt::format("{:.0f}M", static_cast<double>(parameters) / 1e6);
}

// One line per bundled model, within 80 columns: its parameters, vLLM's derived maximum length and
// whether it loads ("partial" for an excerpt of a config, which cannot be sized).
void write_models_table(const std::vector<std::string>& ids, const ConfigDir& configs, std::ostream& out) {
  out << fmt::format("{:<45} {:>8} {:>9}  {}\n", "model", "params", "max len", "status");
  for (const auto& id : ids) {
    const auto slash = id.find('/');
    const auto folder = configs.root / "models" / (id.substr(0, slash) + "__" + id.substr(slash + 1));
    std::error_code ec;
    if (std::filesystem::exists(folder / "config.partial.json", ec) && !std::filesystem::exists(folder / "config.json", ec)) {
      out << fmt::format("{:<45} {:>8} {:>9}  {}\n", id, "", "", "partial config");
      continue;
    }
    try {
      const ModelSpec m = load_model(id, configs);
      const std::string state = m.eagle_head                        ? "draft head"
                                : m.unmodelled_config_keys.empty() ? "loads"
                                                                   : "loads, warns";
      out << fmt::format("{:<45} {:>8} {:>9}  {}\n", id, parameters_text(checkpoint_parameters(m)),
                         m.derived_max_model_len > 0 ? with_commas(m.derived_max_model_len) : std::string(),
                         state);
    } catch (const InputError&) {
      out << fmt::format("{:<45} {:>8} {:>9}  {}\n", id, "", "", "unsupported");
    }
  }
  out << "warns: config keys no parser models; unsupported: `models --status` says why\n";
}

int run_models(const ConfigDir& configs, bool status, bool json, std::ostream& out) {
  const std::vector<std::string> ids = list_bundled_models(configs);
  if (json) {
    out << models_json(ids);
    return 0;
  }
  if (!status) {
    write_models_table(ids, configs, out);
    return 0;
  }
  // A Markdown table: does each bundled model load, and if not, exactly why.
  out << "| model | status | family | architecture | attention | checkpoint GiB |\n|---|---|---|---|---|---|\n";
  std::map<std::string, int> loading;  // bundled models that load, by family
  for (const auto& id : ids) {
    try {
      const ModelSpec m = load_model(id, configs);
      if (m.eagle_head) {  // sized only beside a target (--speculative-config)
        out << fmt::format("| {} | loads as a draft head | {} | {} ({}) | {} | |\n", id, m.family, m.architecture,
                           m.model_type, attention_mix(m));
        continue;
      }
      ++loading[m.family];
      out << fmt::format("| {} | loads | {}{} | {} ({}) | {} | {:.2f} |\n", id, m.family,
                         m.unmodelled_config_keys.empty()
                             ? ""
                             : fmt::format(" (keys not modelled: {})", fmt::join(m.unmodelled_config_keys, ", ")),
                         m.architecture, m.model_type,
                         attention_mix(m), to_gib(checkpoint_bytes(m)));
    } catch (const InputError& e) {
      std::string why = e.what();
      const auto root = configs.root.string();
      for (auto at = why.find(root); at != std::string::npos; at = why.find(root)) why.replace(at, root.size(), "configs");
      std::replace(why.begin(), why.end(), '|', '/');
      out << fmt::format("| {} | exit 3 | | {} | | |\n", id, why);
    }
  }
  // Every family, bundled or not (docs/models.md gives each one's support level and evidence).
  out << "\n| family | model types | bundled models that load |\n|---|---|---|\n";
  for (const FamilyInfo& f : list_families()) {
    out << fmt::format("| {} | {} | {} |\n", f.name, fmt::join(f.model_types, ", "), loading[f.name]);
  }
  out << "| generic | any other, with safetensors headers (a labelled estimate; --strict refuses) | 0 |\n";
  return 0;
}

// A bash completion function from the parser itself: subcommands, then each one's long flags; file
// names where a path is expected. Install: `gpubudget completion bash > /etc/bash_completion.d/gpubudget`.
std::string bash_completion(const CLI::App& app) {
  std::string out =
      "# bash completion for gpubudget (generated by `gpubudget completion bash`)\n"
      "_gpubudget() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" sub=\"${COMP_WORDS[1]}\"\n"
      "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n";
  std::string subcommands;
  std::string cases;
  for (const CLI::App* sub : app.get_subcommands({})) {
    subcommands += (subcommands.empty() ? "" : " ") + sub->get_name();
    std::string flags;
    for (const CLI::Option* option : sub->get_options()) {
      for (const std::string& name : option->get_lnames()) flags += " --" + name;
    }
    cases += fmt::format("    {}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\") $(compgen -f -- \"$cur\"));;\n",
                         sub->get_name(), flags.empty() ? "" : flags.substr(1));
  }
  out += fmt::format("    COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n    return\n  fi\n", subcommands);
  out += "  case \"$sub\" in\n" + cases + "  esac\n}\ncomplete -o filenames -F _gpubudget gpubudget\n";
  return out;
}

void add_calibrate_options(CLI::App& calibrate, CalibrateOptions& options) {
  calibrate.add_option("OBSERVATIONS", options.observations, "JSONL of vLLM startups (tests/data/observations)")
      ->required();
  calibrate.add_option("--profile", options.profile,
                       "the profile to calibrate (default: the one the rows ran under, else the newest)");
  calibrate.add_option("--aliases", options.aliases, "model_aliases.json (default: beside the observations)");
  calibrate.add_option("-o,--output", options.output, "write the calibrated profile here (default: stdout)");
  calibrate.add_flag("--coefficients-only", options.coefficients_only,
                     "write only {\"overheads\": ...} (nothing when the profile inherits its base's unchanged), "
                     "as configs/vllm/coefficients/ keeps them");
}

void add_diagnose_options(CLI::App& diagnose, DiagnoseOptions& options) {
  diagnose.add_option("LOG", options.log, "vLLM log file, or - for standard input")->required();
  diagnose.add_option("--model", options.model, "the model the log ran (path, bundled or Hub id): predictions and remedies");
  add_hub_flags(diagnose, options.hub);
  diagnose.add_option("--gpu", options.gpu, "GPU preset (default: inferred from the log's total capacity)");
  diagnose.add_option("--vllm-version", options.vllm_version, "vLLM version (default: the log's)");
  diagnose.add_option("--kv-cache-dtype", options.kv_cache_dtype, "the KV dtype the run used, if the log is silent");
  diagnose.add_option("--emit-observation", options.emit_observation,
                      "write the log's figures as one observations JSONL row to this file (- = stdout)");
  diagnose.add_flag("--json", options.json, "one JSON document on stdout");
}

}  // namespace

namespace {

int run_command(std::vector<std::string> args, std::ostream& out, std::ostream& err,
                const std::filesystem::path& executable, std::string& color_mode, std::size_t columns);

}  // namespace

int run_cli(std::vector<std::string> args, std::ostream& out, std::ostream& err,
            const std::filesystem::path& executable, const Terminal& terminal) {
  std::string color_mode = "auto";
  const bool may_color = terminal.out_is_tty || terminal.err_is_tty ||
                         std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("--color", 0) == 0; });
  int status = 0;
  if (!may_color) {
    status = run_command(std::move(args), out, err, executable, color_mode, terminal.out_columns);
  } else {
    // Held, then coloured where the streams are terminals (terminal_style.h).
    std::ostringstream held_out, held_err;
    status = run_command(std::move(args), held_out, held_err, executable, color_mode, terminal.out_columns);
    const ColorChoice color = choose_color(color_mode, terminal);
    out << (color.out ? color_verdicts(held_out.str()) : held_out.str());
    err << (color.err ? color_diagnostics(held_err.str()) : held_err.str());
  }
  // An answer that could not be written (a full disk, a closed pipe) is not an answer.
  out.flush();
  if (out.fail()) {
    err << "gpubudget: the output could not be written (standard output is full, closed or not writable)\n";
    return static_cast<int>(ExitCode::kBadInput);
  }
  return status;
}

namespace {

int run_command(std::vector<std::string> args, std::ostream& out, std::ostream& err,
                const std::filesystem::path& executable, std::string& color_mode, std::size_t columns) {
  CLI::App app{"gpubudget: will this model fit these GPUs under vLLM, and with how much context?", "gpubudget"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpubudget ") + kVersion);
  app.add_option("--color", color_mode, "colour the verdict and warnings: auto (on a terminal, unless NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  std::size_t width = columns > 0 ? columns : kDefaultColumns;
  app.add_option("--width", width, "columns of the text reports (default: the terminal's, else 80; 0: no wrapping)")
      ->check(CLI::Range(0, 10000).description("0 to 10000"));
  std::string config_dir;
  app.add_option("--config-dir", config_dir, "directory with gpus/, vllm/, models/ (default: bundled)");

  FitOptions fit_options;
  CLI::App* fit = app.add_subcommand("fit", "per-GPU budget and the largest --max-model-len that fits");
  add_fit_options(*fit, fit_options);
  WeightsOptions weights_options;
  CLI::App* weights = app.add_subcommand("weights", "per-GPU weights by component, layer or tensor (+ safetensors headers)");
  add_weights_options(*weights, weights_options);
  SweepOptions sweep_options;
  CLI::App* sweep = app.add_subcommand("sweep", "every combination of GPUs and settings: table, csv, json or svg");
  add_sweep_options(*sweep, sweep_options);
  PlanOptions plan_options;
  CLI::App* plan = app.add_subcommand("plan", "smallest deployments for C concurrent requests of L tokens");
  add_plan_options(*plan, plan_options);
  CalibrateOptions calibrate_options;
  CLI::App* calibrate = app.add_subcommand("calibrate", "fit a vLLM profile's overhead coefficients to real startups");
  add_calibrate_options(*calibrate, calibrate_options);
  DiagnoseOptions diagnose_options;
  CLI::App* diagnose = app.add_subcommand("diagnose", "read a vLLM log: what went wrong, and what to launch instead");
  add_diagnose_options(*diagnose, diagnose_options);
  bool gpus_json = false;
  CLI::App* gpus = app.add_subcommand("gpus", "list GPU presets");
  gpus->add_flag("--json", gpus_json, "JSON array");
  bool models_status = false, models_json_output = false;
  CLI::App* models = app.add_subcommand("models", "list bundled models");
  models->add_flag("--status", models_status, "load each one and report whether it is supported (Markdown)");
  models->add_flag("--json", models_json_output, "JSON array of the bundled model ids");
  models->footer("Without flags: one line per model: parameters, vLLM's derived maximum length, and whether it loads.");
  CLI::App* version = app.add_subcommand("version", "print the version");
  std::string completion_shell;
  CLI::App* completion = app.add_subcommand("completion", "print a shell completion script: completion bash");
  completion->add_option("SHELL", completion_shell, "bash")->required()->check(CLI::IsMember({"bash"}));

  // The top-level flags (--config-dir, --color) may also come after the command.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) sub->fallthrough();
  try {
    // `gpubudget fit [flags] -- vllm serve MODEL ...`: the pasted command becomes fit's own flags.
    if (const auto dash = std::find(args.begin(), args.end(), "--"); dash != args.end()) {
      // The engine-argument list lives in the config folder, which --config-dir (before `--`) may name.
      std::string early_config_dir;
      for (auto it = args.begin(); it != dash; ++it) {
        if (*it == "--config-dir" && it + 1 != dash) early_config_dir = *(it + 1);
        if (it->rfind("--config-dir=", 0) == 0) early_config_dir = it->substr(std::string("--config-dir=").size());
      }
      // A folder of one's own without the list (made before it existed) uses the bundled one.
      ConfigDir engine_args_dir = find_config_dir(early_config_dir, executable);
      if (!std::filesystem::exists(engine_args_dir.root / "vllm-engine-args.json")) {
        engine_args_dir = find_config_dir("", executable);
      }
      const EngineArgs engine_args = load_engine_args(engine_args_dir);
      const VllmCommand command =
          translate_vllm_command(std::vector<std::string>(dash + 1, args.end()), engine_args);
      args.erase(dash, args.end());
      args.insert(args.end(), command.flags.begin(), command.flags.end());
      if (!command.ignored.empty()) {
        err << fmt::format("note: vLLM settings without an effect on the modelled memory, ignored: {}\n",
                           fmt::join(command.ignored, " "));
      }
      for (const auto& note : command.notes) err << "warning: " << note.text << "\n";
      fit_options.pasted_command_warnings = command.notes;  // also into fit's JSON `warnings`
    }
    args = expand_vllm_short_flags(std::move(args));
    check_command_and_flag_names(app, args);  // "did you mean" for a mistyped command or flag
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "gpubudget: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const UsageError& e) {
    err << "gpubudget: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const InputError& e) {  // the config folder or its engine-argument list
    err << "gpubudget: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kBadInput);
  }

  try {
    if (completion->parsed()) {
      out << bash_completion(app);
      return 0;
    }
    if (version->parsed()) {
      out << "gpubudget " << kVersion << "\n";
      return 0;
    }
    const ConfigDir configs = find_config_dir(config_dir, executable);
    if (fit->parsed()) {
      fit_options.width = width;
      return run_fit(fit_options, configs, out, err);
    }
    if (weights->parsed()) {
      weights_options.width = width;
      return run_weights(weights_options, configs, out, err);
    }
    if (sweep->parsed()) return run_sweep_command(sweep_options, configs, out, err);
    if (plan->parsed()) {
      plan_options.width = width;
      return run_plan(plan_options, configs, out, err);
    }
    if (diagnose->parsed()) {
      diagnose_options.width = width;
      return run_diagnose(diagnose_options, configs, out, err);
    }
    if (calibrate->parsed()) return run_calibrate(calibrate_options, configs, out, err);
    if (gpus->parsed()) return run_gpus(configs, gpus_json, out);
    if (models->parsed()) return run_models(configs, models_status, models_json_output, out);
  } catch (const UsageError& e) {
    err << "gpubudget: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const InputError& e) {
    err << "gpubudget: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::exception& e) {
    err << "gpubudget: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  err << "gpubudget: internal error: no subcommand ran\n";
  return static_cast<int>(ExitCode::kInternal);
}

}  // namespace

}  // namespace gpubudget::cli
