#!/usr/bin/env bash
# Regenerates the shipped vLLM profiles' overhead coefficients from the bundled observations:
# scripts/calibrate-profiles.sh [path/to/gpubudget]. The coefficients are generated files,
# configs/vllm/coefficients/<version>.json beside the hand-written rules (configs/vllm/<version>.json);
# a profile whose fit reproduces its base's has none. A test checks that the files are this output.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$here/build/release/apps/cli/gpubudget}"
mkdir -p "$here/configs/vllm/coefficients"
# In version order: a profile is calibrated after the base it extends.
for profile in $(printf '%s\n' "$here"/configs/vllm/*.json | sort -V); do
  coefficients="$here/configs/vllm/coefficients/$(basename "$profile")"
  "$bin" calibrate "$here/tests/data/observations/vllm-runs.jsonl" --profile "$profile" --coefficients-only \
    -o "$coefficients.new" 2>/dev/null
  if [ -s "$coefficients.new" ]; then mv "$coefficients.new" "$coefficients"; else rm -f "$coefficients.new" "$coefficients"; fi
  echo "$(basename "$profile"): $(python3 -c 'import json,sys,os; p=sys.argv[1]; print(json.load(open(p))["overheads"]["fit_notes"] if os.path.exists(p) else "overheads inherited from its base")' "$coefficients")"
done
