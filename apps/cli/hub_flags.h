// The flags that say where a MODEL argument is looked for beyond paths and bundled ids: the Hugging
// Face cache and the Hub (include/gpubudget/hub.h), shared by every command that takes a model.
#pragma once

#include <ostream>
#include <string>

#include "gpubudget/hub.h"
#include "gpubudget/load.h"
#include "gpubudget/model_spec.h"

namespace CLI {
class App;
}

namespace gpubudget::cli {

struct HubFlags {
  std::string revision;       // --revision (vLLM's flag): branch, tag or commit
  std::string download_dir;   // --download-dir (vLLM's flag): the Hugging Face cache vLLM downloads into
  double hub_timeout_s = 0;   // --hub-timeout: seconds per HTTP request; 0 = the default
  bool refresh = false;       // --hub-refresh: ask the Hub for the revision's commit again
  bool quiet = false;         // --quiet: no progress line, no note on where the model came from
};

void add_hub_flags(CLI::App& app, HubFlags& flags);

// The environment's Hub options (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, caches) with the flags
// applied, and a progress line on stderr when it is a terminal and not --quiet.
HubOptions hub_options(const HubFlags& flags, std::ostream& err);

// InputError naming every config key of `model` that no parser models (the refusal of --strict).
void refuse_unmodelled_keys(const ModelSpec& model);

// Locates and loads `model`; a model from a cache or the Hub is named on `err` ("note: ...") unless
// --quiet. The location is returned through `location` when given.
ModelSpec load_cli_model(const std::string& model, const HubFlags& flags, const ConfigDir& configs, std::ostream& err,
                         ModelLocation* location = nullptr);
// The draft checkpoint --speculative-config names, read like the command's model but at its own
// revision (`model`@REV, or its default branch): the command's --revision is the target's.
ModelSpec load_cli_draft_model(const std::string& model, const HubFlags& flags, const ConfigDir& configs,
                               std::ostream& err);

}  // namespace gpubudget::cli
