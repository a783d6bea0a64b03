#!/usr/bin/env bash
# Renders a `gpubudget sweep --format svg` chart in headless Chromium (Debian package `chromium`) and
# writes a PNG to look at: scripts/render-sweep-svg.sh OUT.png [sweep arguments...]
# Default sweep: the incident's what-ifs for Kimi-K2.5-NVFP4 on RTX PRO 6000 and H200.
set -euo pipefail
out="${1:-sweep.png}"
shift || true
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${GPUBUDGET:-$here/build/release/apps/cli/gpubudget}"
if [ $# -eq 0 ]; then
  set -- nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000,h200 -tp 4,8 -dcp 1,8 --kv-cache-dtype bfloat16,fp8 --vllm-version 0.15
fi
svg="$(mktemp --suffix=.svg)"
"$bin" sweep "$@" --format svg > "$svg"
python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$svg"   # well-formed XML
width="$(sed -n 's/.* width="\([0-9]*\)" height=.*/\1/p' "$svg" | head -1)"
height="$(sed -n 's/.*height="\([0-9]*\)" viewBox.*/\1/p' "$svg" | head -1)"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="${width},${height}" \
  --screenshot="$out" "file://$svg" 2>/dev/null
rm -f "$svg"
echo "$out"
