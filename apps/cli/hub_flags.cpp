#include "hub_flags.h"

#include <cmath>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "cli_errors.h"
#include "gpubudget/error.h"

namespace gpubudget::cli {

void add_hub_flags(CLI::App& app, HubFlags& flags) {
  app.add_option("--revision", flags.revision, "Hub model: branch, tag or commit (default: main; also MODEL@REV)");
  app.add_option("--download-dir", flags.download_dir,
                 "Hub model: the Hugging Face cache folder vLLM downloads into (vLLM's flag; default: HF_HUB_CACHE)");
  app.add_option("--hub-timeout", flags.hub_timeout_s, "Hub model: seconds per HTTP request (default 60)");
  app.add_flag("--hub-refresh", flags.refresh, "Hub model: ask the Hub for the revision's commit even when cached");
  app.add_flag("--quiet", flags.quiet, "no progress line and no note on where the model came from");
}

HubOptions hub_options(const HubFlags& flags, std::ostream& err) {
  HubOptions o = hub_options_from_environment();
  o.revision = flags.revision;
  o.refresh = flags.refresh;
  if (!flags.download_dir.empty()) o.hf_cache_dir = flags.download_dir;
  if (flags.hub_timeout_s != 0) {
    const double limit = static_cast<double>(kMaxHubTimeout.count()) / 1000.0;
    if (!(flags.hub_timeout_s >= 0.001 && flags.hub_timeout_s <= limit)) {
      throw UsageError(fmt::format("--hub-timeout {}: expected seconds from 0.001 to {}", flags.hub_timeout_s, limit));
    }
    o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(flags.hub_timeout_s * 1000.0)));
  }
  // A progress line only where a person watches: the process's own stderr, a terminal.
  if (!flags.quiet && &err == &std::cerr && ::isatty(STDERR_FILENO) != 0) {
    o.progress = [](const HubProgress& p) {
      std::cerr << fmt::format("\rfetching safetensors headers: {}/{} shards, {:.1f} MB", p.shards_done, p.shards_total,
                               static_cast<double>(p.bytes_received) / 1e6)
                << (p.shards_done == p.shards_total ? "\n" : "") << std::flush;
    };
  }
  return o;
}

void refuse_unmodelled_keys(const ModelSpec& model) {
  if (!model.generic_assumptions.empty()) {
    throw InputError(fmt::format("{}: --strict: {} is no modelled family; the generic estimate from its safetensors "
                                 "headers assumes: {}",
                                 model.source, model.architecture, fmt::join(model.generic_assumptions, "; ")));
  }
  if (model.unmodelled_config_keys.empty()) return;
  throw InputError(fmt::format("{}: --strict: config keys not modelled by the {} parser: {} (the figures may be wrong)",
                               model.source, model.family, fmt::join(model.unmodelled_config_keys, ", ")));
}

ModelSpec load_cli_model(const std::string& model, const HubFlags& flags, const ConfigDir& configs, std::ostream& err,
                         ModelLocation* location) {
  const ModelLocation found = locate_model(model, configs, hub_options(flags, err));
  if (!flags.quiet && found.origin != ModelOrigin::kPath && found.origin != ModelOrigin::kBundled) {
    err << "note: " << found.description() << "\n";
  }
  ModelSpec spec = load_model(found);
  if (location != nullptr) *location = found;
  return spec;
}

ModelSpec load_cli_draft_model(const std::string& model, const HubFlags& flags, const ConfigDir& configs,
                               std::ostream& err) {
  HubFlags own = flags;
  own.revision.clear();
  return load_cli_model(model, own, configs, err);
}

}  // namespace gpubudget::cli
