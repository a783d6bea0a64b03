#!/usr/bin/env bash
# Regenerates every generated artefact of the repository from its sources, in dependency order:
#   scripts/regenerate.sh [BUILD_DIR]      (default build/dev; built first)
# 1. the shipped vLLM profiles' overhead coefficients (configs/vllm/coefficients/*.json), fitted on
#    tests/data/observations by `gpubudget calibrate` (scripts/calibrate-profiles.sh);
# 2. docs/accuracy.md, the accuracy report of those profiles on the same observations (gpubudget_accuracy).
# The family list (model/family_list.inc) is written by CMake at configure time, not committed.
# Tests fail while an artefact is stale: Calibrate.ReproducesEveryShippedProfileByteForByte and
# AccuracyReplay.TheCommittedReportIsCurrent (docs/development.md).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build/dev}"
cmake --build "$build" --target gpubudget_cli gpubudget_accuracy
bash "$here/scripts/calibrate-profiles.sh" "$build/apps/cli/gpubudget"
"$build/tools/accuracy/gpubudget_accuracy" > "$here/docs/accuracy.md.new"
mv "$here/docs/accuracy.md.new" "$here/docs/accuracy.md"
git -C "$here" status --short -- configs/vllm docs/accuracy.md
