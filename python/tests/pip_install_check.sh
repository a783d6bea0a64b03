#!/usr/bin/env bash
# The package's acceptance (docs/python.md): in a fresh virtual environment with the system's site
# packages, `pip install --no-build-isolation --no-index SOURCE` works offline, and the installed
# package answers the incident's default launch with the CLI's largest length, from its own configs.
# Usage: pip_install_check.sh SOURCE_DIR WORK_DIR GPUBUDGET_CLI
set -euo pipefail
source_dir=$1 work=$2 cli=$3
python=/usr/bin/python3  # Debian's: its python3-pybind11, python3-setuptools, python3-pip
rm -rf "$work"
mkdir -p "$work"
"$python" -m venv --system-site-packages "$work/venv"
# A quick compile of the library (-O0): the figures, not the speed, are checked here.
GPUBUDGET_BUILD_TYPE=Debug CMAKE_ARGS="-DCMAKE_CXX_FLAGS_DEBUG=-O0" CMAKE_BUILD_PARALLEL_LEVEL=2 PIP_NO_CACHE_DIR=1 \
  "$work/venv/bin/pip" install --no-build-isolation --no-index --quiet "$source_dir"
cd "$work"  # away from the source tree: the installed package is imported
unset GPUBUDGET_CONFIG_DIR
export HF_HUB_OFFLINE=1 HF_HOME="$work/hf" XDG_CACHE_HOME="$work/cache"  # no network, no user cache
got=$("$work/venv/bin/python" -c "import gpubudget; print(gpubudget.fit('nvidia/Kimi-K2.5-NVFP4', gpu='rtx-pro-6000', tensor_parallel_size=8).max_model_len)")
configs=$("$work/venv/bin/python" -c "import gpubudget; print(gpubudget.load_model('nvidia/Kimi-K2.5-NVFP4').config_dir)")
set +e
want=$("$cli" fit nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)["max_model_len"])')
set -e
echo "installed package: max_model_len $got (configs: $configs); CLI: $want"
case "$configs" in
  "$work"/venv/*/site-packages/gpubudget/configs) ;;
  *) echo "FAIL: the installed package did not use its own configs" >&2; exit 1 ;;
esac
[ -n "$want" ] && [ "$got" = "$want" ] || { echo "FAIL: the package and the CLI disagree" >&2; exit 1; }
# The distribution is gpubudget-vllm (the name gpubudget on the package index is another project's); it
# installs the import package gpubudget.
dist=$("$work/venv/bin/python" -c "import importlib.metadata as m; print(m.distribution('gpubudget-vllm').metadata['Name'], ' '.join(sorted({f.parts[0] for f in m.distribution('gpubudget-vllm').files if f.parts[0].startswith('gpubudget')})))")
echo "distribution: $dist"
case "$dist" in
  "gpubudget-vllm gpubudget gpubudget_vllm-"*".dist-info") ;;
  *) echo "FAIL: expected the distribution gpubudget-vllm installing the package gpubudget, got: $dist" >&2; exit 1 ;;
esac
