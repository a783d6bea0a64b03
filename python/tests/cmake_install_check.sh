#!/usr/bin/env bash
# `cmake --install` installs the Python package too (docs/python.md): into PREFIX/lib/python3/dist-packages,
# where it finds the configs installed under PREFIX/share/gpubudget (named in _configs_path.txt) and
# answers the incident's default launch with the CLI's largest length.
# Usage: cmake_install_check.sh BUILD_DIR WORK_DIR GPUBUDGET_CLI
set -euo pipefail
build=$1 work=$2 cli=$3
python=/usr/bin/python3
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.log"
cd "$work"  # away from the source and build trees
unset GPUBUDGET_CONFIG_DIR
export HF_HUB_OFFLINE=1 HF_HOME="$work/hf" XDG_CACHE_HOME="$work/cache" PYTHONPATH="$work/prefix/lib/python3/dist-packages"
read -r got configs < <("$python" -c "import gpubudget; m = gpubudget.load_model('nvidia/Kimi-K2.5-NVFP4'); print(gpubudget.fit(m, gpu='rtx-pro-6000', tensor_parallel_size=8).max_model_len, m.config_dir)")
set +e
want=$("$cli" fit nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)["max_model_len"])')
set -e
echo "cmake --install: max_model_len $got (configs: $configs); CLI: $want"
[ "$configs" = "$work/prefix/share/gpubudget/configs" ] || { echo "FAIL: the installed package did not use the installed configs" >&2; exit 1; }
[ -n "$want" ] && [ "$got" = "$want" ] || { echo "FAIL: the package and the CLI disagree" >&2; exit 1; }
