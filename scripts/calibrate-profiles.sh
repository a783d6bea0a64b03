#!/usr/bin/env bash
# Regenerates the shipped vLLM profiles' overhead coefficients from the bundled observations:
# scripts/calibrate-profiles.sh [path/to/gpubudget]. A test checks that the files are this output.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$here/build/release/apps/cli/gpubudget}"
# In version order: a profile is calibrated after the base it extends.
for profile in $(printf '%s\n' "$here"/configs/vllm/*.json | sort -V); do
  "$bin" calibrate "$here/tests/data/observations/vllm-runs.jsonl" --profile "$profile" -o "$profile.new" 2>/dev/null
  mv "$profile.new" "$profile"
  echo "$(basename "$profile"): $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("overheads", {}).get("fit_notes", "overheads inherited from its base"))' "$profile")"
done
