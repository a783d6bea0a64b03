// The folder layout the Hugging Face cache uses, and gpubudget's cache copies (docs/guide.md):
//
//   <root>/models--ORG--NAME/refs/REVISION      the commit REVISION points to (40 hex, no newline);
//                                               "refs/pr/1" is stored as refs/refs/pr/1
//   <root>/models--ORG--NAME/snapshots/COMMIT/  the files of that commit
//
// Hugging Face's snapshots hold symlinks into blobs/; gpubudget's hold the small files themselves and
// header copies of the shards (safetensors.h, kHeaderCopiesManifest). A snapshot folder of gpubudget's
// cache appears only when complete (written under a temporary name, then renamed).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gpubudget::detail {

// "org/name" -> "models--org--name".
std::string cache_repo_folder(const std::string& repo);

// A 40-hex-digit commit id.
bool is_commit_id(const std::string& revision);

// The commit `revision` means in the cache folder `repo_dir`: the revision itself when it is a commit
// id, else the content of refs/REVISION; nullopt when there is no such ref or it holds no commit id.
std::optional<std::string> cached_commit(const std::filesystem::path& repo_dir, const std::string& revision);

// Writes refs/REVISION = `commit` atomically (a temporary file renamed over it). InputError naming the
// folder when it cannot be written.
void write_cached_ref(const std::filesystem::path& repo_dir, const std::string& revision, const std::string& commit);

}  // namespace gpubudget::detail
