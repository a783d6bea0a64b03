#include "hub/cache_layout.h"

#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

#include "gpubudget/error.h"

namespace gpubudget::detail {

std::string cache_repo_folder(const std::string& repo) {
  const auto slash = repo.find('/');
  return "models--" + repo.substr(0, slash) + "--" + repo.substr(slash + 1);
}

bool is_commit_id(const std::string& revision) {
  return revision.size() == 40 &&
         revision.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<std::string> cached_commit(const std::filesystem::path& repo_dir, const std::string& revision) {
  if (is_commit_id(revision)) return revision;
  std::ifstream in(repo_dir / "refs" / revision, std::ios::binary);
  if (!in) return std::nullopt;
  char text[64] = {};
  in.read(text, sizeof text);
  std::string commit(text, static_cast<std::size_t>(in.gcount()));
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
  if (!is_commit_id(commit)) return std::nullopt;
  return commit;
}

void write_cached_ref(const std::filesystem::path& repo_dir, const std::string& revision, const std::string& commit) {
  if (is_commit_id(revision)) return;  // a commit needs no ref
  namespace fs = std::filesystem;
  const fs::path ref = repo_dir / "refs" / revision;
  const fs::path temporary = ref.parent_path() / fmt::format(".{}.{}.tmp", ref.filename().string(), ::getpid());
  std::error_code ec;
  fs::create_directories(ref.parent_path(), ec);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << commit;
    out.close();
    if (!out) {
      throw InputError(fmt::format("{}: cannot write gpubudget's cache (set XDG_CACHE_HOME to a writable folder)",
                                   temporary.string()));
    }
  }
  fs::rename(temporary, ref, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw InputError(fmt::format("{}: cannot write gpubudget's cache (set XDG_CACHE_HOME to a writable folder)",
                                 ref.string()));
  }
}

}  // namespace gpubudget::detail
