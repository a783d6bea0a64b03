// Reading safetensors headers without touching tensor data.
//
// File format: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data section that
// follows), an optional "__metadata__" object, then the data. Only the first 8 + N bytes are read.
// Every check the reference implementation makes is made here, and a file that fails one is an
// InputError naming the file and the reason (exit 3): header length beyond the file or above
// 100,000,000 bytes, header not JSON, unknown dtype, shape and byte range disagreeing, offsets
// outside the data, overlapping or leaving gaps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/bytes.h"

namespace gpubudget {

// The largest header accepted (the safetensors reference limit).
inline constexpr std::int64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;                // safetensors name: "BF16", "F8_E4M3", "I32" ...
  std::vector<std::int64_t> shape;
  std::int64_t begin = 0;           // byte offsets within the data section
  std::int64_t end = 0;

  [[nodiscard]] Bytes bytes() const { return Bytes(end - begin); }
};

struct SafetensorsFile {
  std::string path;
  std::int64_t file_bytes = 0;
  std::int64_t header_bytes = 0;    // N, without the 8-byte length
  std::vector<SafetensorsTensor> tensors;  // in data order
};

// Bytes per element of a safetensors dtype name; nullopt for names this version does not know.
std::optional<std::int64_t> safetensors_dtype_bytes(std::string_view dtype);

// Validates `header_json` as the header of a file whose data section has `data_bytes` bytes.
SafetensorsFile parse_safetensors_header(std::string_view header_json, std::int64_t data_bytes,
                                         const std::string& path);

// Reads and validates the header of one .safetensors file.
SafetensorsFile read_safetensors_header(const std::string& path);

struct CheckpointHeaders {
  std::string index_path;              // model.safetensors.index.json, or "" without an index
  std::vector<SafetensorsFile> files;
  [[nodiscard]] Bytes tensor_bytes() const;
  [[nodiscard]] std::int64_t tensor_count() const;
};

// A folder fetched from the Hub holds header copies instead of shards: `safetensors-headers.json`
// ({"shards": {file name: {"bytes": the shard's size, "copy": a file in safetensors-headers/ holding
// the shard's first 8 + N bytes, "url": where they came from}}}).
inline constexpr const char* kHeaderCopiesManifest = "safetensors-headers.json";
inline constexpr const char* kHeaderCopiesFolder = "safetensors-headers";

// The headers of a model folder's checkpoint: the files model.safetensors.index.json lists (each must
// exist and hold exactly the tensors the index maps to it), or every *.safetensors file when there is
// no index. A folder with header copies (above) is read from them, each shard named by its URL in
// messages. nullopt when the folder has neither (a config-only folder).
std::optional<CheckpointHeaders> read_checkpoint_headers(const std::string& model_dir);

// The distinct shard file names a model.safetensors.index.json maps tensors to, sorted. InputError for
// a malformed index or a name outside the folder ("../x", "a/b").
std::vector<std::string> read_index_shard_names(const std::string& index_path);

// A checkpoint module name without wrapper prefixes: leading "model." and "language_model." are
// dropped, so "model.language_model.layers.3.mlp" and "language_model.model.layers.3.mlp" are both
// "layers.3.mlp".
std::string canonical_module_name(std::string_view name);

}  // namespace gpubudget
