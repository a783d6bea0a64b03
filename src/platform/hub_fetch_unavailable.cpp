// hub_fetch.h in the WebAssembly build, which has no HTTP client: a model that is neither bundled nor
// a folder is refused with an InputError that says so. (The web page fetches a Hub model's config
// files in the browser and passes them as a folder.)
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "hub/hub_fetch.h"

namespace gpubudget::detail {

HubSnapshot fetch_hub_snapshot(const std::string& repo, const std::string&, const HubOptions&,
                               const std::filesystem::path&) {
  throw InputError(fmt::format("{}: not a bundled model, and the web build does not fetch from the Hub itself "
                               "(the page fetches a Hub id's config.json in the browser)",
                               repo));
}

}  // namespace gpubudget::detail
