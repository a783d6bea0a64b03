#!/usr/bin/env bash
# Fuzzes one target for a while with libFuzzer (Debian clang), starting from the committed seed corpus:
#   scripts/fuzz.sh TARGET SECONDS        TARGET: model_config | generic_checkpoint | safetensors_header | vllm_log | vllm_command |
#                                         observations | c_api | cli_args | vllm_profile
# New interesting inputs go to build/fuzz/corpus-TARGET (not committed); a crash leaves its input in
# build/fuzz/artifacts-TARGET/. Add a crashing input to fuzz/corpus/TARGET once fixed: the test suite
# replays that directory (ctest -R fuzz_corpus).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?target}"
seconds="${2:-600}"
cd "$here"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "fuzz_$target"
work="build/fuzz/corpus-$target"
artifacts="build/fuzz/artifacts-$target"
mkdir -p "$work" "$artifacts"
max_len=65536
[ "$target" = vllm_log ] && max_len=262144
"build/fuzz/fuzz/fuzz_$target" "$work" "fuzz/corpus/$target" -max_total_time="$seconds" -max_len="$max_len" \
  -artifact_prefix="$artifacts/" -print_final_stats=1 -timeout=25 -rss_limit_mb=4096
