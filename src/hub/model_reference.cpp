// MODEL arguments that name a Hub repository: "org/name", "org/name@revision", pasted Hub URLs.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/hub.h"

namespace gpubudget {

namespace {

// The Hub's rule for an organisation or repository name: letters, digits, '-', '_', '.', at most 96
// characters, not "." or "..", and no ".." or "--" inside.
bool is_repo_part(std::string_view part) {
  if (part.empty() || part.size() > 96 || part == "." || part == "..") return false;
  if (part.find("..") != std::string_view::npos || part.find("--") != std::string_view::npos) return false;
  return std::all_of(part.begin(), part.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.';
  });
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() + 0 && std::isxdigit(static_cast<unsigned char>(text[i + 1])) != 0 &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2])) != 0) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

void check_revision(std::string_view text, const std::string& revision) {
  const bool control = std::any_of(revision.begin(), revision.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  bool dot_part = false;
  for (std::size_t begin = 0; begin <= revision.size();) {
    const auto end = std::min(revision.find('/', begin), revision.size());
    const std::string_view part(revision.data() + begin, end - begin);
    dot_part = dot_part || part.empty() || part == "." || part == "..";
    begin = end + 1;
  }
  if (revision.empty() || revision.size() > 255 || control || dot_part) {
    throw InputError(fmt::format("{}: \"{}\" is no revision (a branch, tag or commit; at most 255 characters, no "
                                 "empty, '.' or '..' parts)",
                                 text, revision));
  }
}

std::optional<ModelReference> parse_model_reference(std::string_view text) {
  std::string_view rest = text;
  std::string revision;
  bool url = false;
  for (const std::string_view scheme : {"https://", "http://"}) {
    if (rest.substr(0, scheme.size()) == scheme) {
      rest.remove_prefix(scheme.size());
      url = true;
    }
  }
  if (url) {
    // https://huggingface.co/org/name[/tree|blob|resolve|raw/REV[/path]][?query][#fragment]
    rest = rest.substr(0, std::min(rest.find('?'), rest.find('#')));
    const auto host_end = rest.find('/');
    const std::string_view host = rest.substr(0, host_end);
    if (host != "huggingface.co" && host != "www.huggingface.co" && host != "hf.co") {
      return std::nullopt;  // another site's URL is no Hub reference (and no path either)
    }
    rest = host_end == std::string_view::npos ? std::string_view() : rest.substr(host_end + 1);
    if (rest.substr(0, 9) == "datasets/" || rest.substr(0, 7) == "spaces/") {
      throw InputError(fmt::format("{}: a dataset or Space, not a model repository", text));
    }
    std::vector<std::string_view> parts;
    for (std::size_t begin = 0; begin < rest.size();) {
      const auto end = std::min(rest.find('/', begin), rest.size());
      parts.push_back(rest.substr(begin, end - begin));
      begin = end + 1;
    }
    if (parts.size() < 2 || !is_repo_part(parts[0]) || !is_repo_part(parts[1])) {
      throw InputError(fmt::format("{}: expected a model page, https://huggingface.co/ORG/NAME[/tree/REVISION]", text));
    }
    if (parts.size() >= 4 && (parts[2] == "tree" || parts[2] == "blob" || parts[2] == "resolve" || parts[2] == "raw")) {
      revision = percent_decode(parts[3]);
      // "refs/pr/1" written out: /tree/refs/pr/1
      if (revision == "refs" && parts.size() >= 6 && parts[4] == "pr") revision = fmt::format("refs/pr/{}", parts[5]);
      check_revision(text, revision);
    } else if (parts.size() > 2 && !(parts.size() == 3 && parts[2].empty())) {
      throw InputError(fmt::format("{}: expected a model page, https://huggingface.co/ORG/NAME[/tree/REVISION]", text));
    }
    return ModelReference{fmt::format("{}/{}", parts[0], parts[1]), revision};
  }
  const auto at = rest.find('@');
  const std::string_view repo = rest.substr(0, at);
  const auto slash = repo.find('/');
  if (slash == std::string_view::npos || repo.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  const std::string_view org = repo.substr(0, slash), name = repo.substr(slash + 1);
  if (!is_repo_part(org) || !is_repo_part(name)) return std::nullopt;
  if (at != std::string_view::npos) {
    revision = std::string(rest.substr(at + 1));
    check_revision(text, revision);
  }
  return ModelReference{std::string(repo), revision};
}

}  // namespace gpubudget
