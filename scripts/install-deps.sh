#!/usr/bin/env bash
# Installs gpubudget's build and test dependencies from Debian's packages (Debian 12 or later).
set -euo pipefail
packages=(g++ cmake make pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev libeigen3-dev libgtest-dev
          libsimdjson-dev libre2-dev libcurl4-openssl-dev python3 python3-dev python3-pybind11 python3-pytest
          python3-venv python3-pip python3-setuptools python3-wheel
          python3-jsonschema emscripten chromium python3-websocket fonts-liberation)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
