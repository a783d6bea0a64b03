#!/usr/bin/python3
"""The web calculator in a real browser (docs/web.md): headless Chromium, driven over the DevTools
protocol, loads the built page from a static server on 127.0.0.1, enters deployments as a user would
(form fields, a pasted config.json, Enter to compute) and checks that the page shows the CLI's figures
to the byte. Screenshots go to ARTIFACT_DIR, with timings in ARTIFACT_DIR/timings.json.

Usage: browser_test.py WEB_DIR GPUBUDGET_CLI CONFIG_DIR ARTIFACT_DIR
"""

import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

from browser_session import browser_page

WEB_DIR, CLI, CONFIG_DIR, ARTIFACTS = (pathlib.Path(a) for a in sys.argv[1:5])

# Three deployments (the incident as it happened, a hybrid Mamba/attention model, an MXFP4 MoE with
# sliding windows), and a config pasted into the page instead of a bundled id.
DEPLOYMENTS = [
    {"name": "incident", "model": "nvidia/Kimi-K2.5-NVFP4", "gpu": "rtx-pro-6000", "tp": "8", "kv": "bfloat16",
     "util": "0.9", "version": "0.15", "cli": ["--gpu", "rtx-pro-6000", "-tp", "8", "--kv-cache-dtype", "bfloat16",
                                                "--gpu-memory-utilization", "0.9", "--vllm-version", "0.15"]},
    {"name": "qwen3-next", "model": "Qwen/Qwen3-Next-80B-A3B-Instruct", "gpu": "h100", "tp": "2", "len": "131072",
     "cli": ["--gpu", "h100", "-tp", "2", "--max-model-len", "131072"]},
    {"name": "gpt-oss", "model": "openai/gpt-oss-120b", "gpu": "h200", "kv": "fp8", "util": "0.85", "seqs": "64",
     "cli": ["--gpu", "h200", "--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.85", "--max-num-seqs", "64"]},
]
HUB = {"name": "hub-qwen3", "model": "Qwen/Qwen3-8B", "gpu": "a100-80gb", "len": "40960",
       "cli": ["--gpu", "a100-80gb", "--max-model-len", "40960"]}
# Launch lines pasted into the page, each against the CLI given the same line after `--`: two of the
# page's own, then every launch line of the parity cases (tests/data/launch_lines/cases.json, which
# tests/cli/launch_line_parity_test.cpp and python/tests/test_vllm_args.py hold the CLI's flags, the C
# ABI and Python to).
LINES = [
    {"name": "line-incident", "gpu": "rtx-pro-6000", "version": "0.15", "model": "nvidia/Kimi-K2.5-NVFP4",
     "line": "vllm serve nvidia/Kimi-K2.5-NVFP4 -tp 8 --kv-cache-dtype bfloat16 --gpu-memory-utilization 0.9"},
    {"name": "line-mtp-lora", "gpu": "h200", "version": "", "model": "deepseek-ai/DeepSeek-V3",
     "line": "VLLM_MLA_DISABLE=0 vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --max-model-len 64k "
             "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}' --port 8000"},
]
PARITY_CASES = pathlib.Path(__file__).resolve().parent.parent / "data" / "launch_lines" / "cases.json"
LINES += [{"name": "parity-" + c["name"], "gpu": c["gpu"], "version": c.get("vllm_version", ""), "model": c["model"],
           "line": c["line"]} for c in json.loads(PARITY_CASES.read_text())["cases"]]
PASTED = {"name": "pasted-llama", "folder": "meta-llama__Llama-3.1-8B", "gpu": "l4", "len": "32768",
          "cli": ["--gpu", "l4", "--max-model-len", "32768"]}


def cli_fit(model, flags):
    run = subprocess.run([str(CLI), "fit", model, *flags, "--json"], capture_output=True, text=True, check=False,
                         env={**os.environ, "GPUBUDGET_CONFIG_DIR": str(CONFIG_DIR), "HF_HUB_OFFLINE": "1"})
    if run.returncode not in (0, 1):
        raise AssertionError(f"gpubudget fit {model} {flags} exited {run.returncode}: {run.stderr}")
    return json.loads(run.stdout)


def cli_fit_line(gpu, version, line):
    flags = ["--gpu", gpu] + (["--vllm-version", version] if version else [])
    run = subprocess.run([str(CLI), "fit", *flags, "--json", "--", *shlex.split(line)], capture_output=True, text=True,
                         check=False, env={**os.environ, "GPUBUDGET_CONFIG_DIR": str(CONFIG_DIR), "HF_HUB_OFFLINE": "1"})
    if run.returncode not in (0, 1):
        raise AssertionError(f"gpubudget fit {flags} -- {line} exited {run.returncode}: {run.stderr}")
    return json.loads(run.stdout)


def shown(page):
    """What the page displays, read from its elements."""
    return page.eval("""(() => {
        const num = (id) => Number(document.getElementById(id).dataset.value);
        const text = (id) => document.getElementById(id).textContent;
        return {
          verdict: text('verdict'), fits: document.getElementById('verdict').dataset.fits === 'true',
          max_model_len: num('max-model-len'), max_model_len_text: text('max-model-len'),
          range_text: text('max-model-len-range'), bytes_per_token: num('kv-bytes-per-token'),
          bytes_per_token_text: text('kv-bytes-per-token'), needed_bytes: num('needed-bytes'),
          kv_cache_bytes: num('kv-cache-bytes'), serve_line: text('serve-line'), vllm_print: text('vllm-print'),
          legend: [...document.querySelectorAll('#memory-legend li[data-bytes]')].map(li => [li.textContent, Number(li.dataset.bytes)]),
          remedies: document.querySelectorAll('#remedies li').length, warnings: document.querySelectorAll('#warnings p').length,
          sweep_rows: document.querySelectorAll('#sweep-chart svg text').length,
          document: JSON.parse(text('result-json')), error: document.getElementById('error').hidden ? null : text('error'),
        }; })()""")


def digits(text):
    return int("".join(c for c in text.split(" ")[0] if c.isdigit()))


def check(name, got, want, serve_model):
    failures = []

    def expect(what, a, b):
        if a != b:
            failures.append(f"{name}: {what}: page {a!r}, CLI {b!r}")

    expect("error", got["error"], None)
    expect("fits", got["fits"], want["request"]["fits"])
    expect("verdict", got["verdict"].split(" —")[0], "FITS" if want["request"]["fits"] else "DOES NOT FIT")
    expect("max_model_len", got["max_model_len"], want["max_model_len"])
    expect("max_model_len shown", digits(got["max_model_len_text"]), want["max_model_len"])
    low, high = want["max_model_len_range"]
    expect("range shown", got["range_text"], f"{low:,} – {high:,} tokens")
    expect("bytes_per_token", got["bytes_per_token"], want["kv_cache"]["bytes_per_token"])
    expect("bytes_per_token shown", digits(got["bytes_per_token_text"]), want["kv_cache"]["bytes_per_token"])
    expect("needed_bytes", got["needed_bytes"], want["request"]["needed_bytes"])
    expect("kv_cache_bytes", got["kv_cache_bytes"], want["per_gpu"]["kv_cache_bytes"])
    g = want["per_gpu"]
    weights = sum(b for label, b in got["legend"] if label.startswith("weights"))
    expect("weights in the bar", weights, g["weights_bytes"])
    legend = dict((label.split(":")[0], b) for label, b in got["legend"])
    expect("activation in the bar", legend.get("activation peak (estimated)"), g["activation_peak_bytes"])
    expect("non-torch in the bar", legend.get("non-torch memory (estimated)"), g["non_torch_bytes"])
    expect("KV in the bar", legend.get("KV cache"), max(0, g["kv_cache_bytes"]))
    expect("remedies", got["remedies"], len(want.get("remedies", [])))
    expect("warnings", got["warnings"], len(want["warnings"]))
    length = want["request"]["max_model_len"] if want["request"]["fits"] else want["max_model_len"]
    command = got["serve_line"][got["serve_line"].find("vllm serve"):]  # after any VLLM_*=… of a pasted line
    if f"--max-model-len {length}" not in command or not command.startswith(f"vllm serve {serve_model}"):
        failures.append(f"{name}: serve line {got['serve_line']!r} lacks vllm serve {serve_model} ... --max-model-len {length}")
    if want["kv_cache"]["tokens"] > 0:
        line = f"GPU KV cache size: {want['kv_cache']['tokens']:,} tokens"
        if line not in got["vllm_print"]:
            failures.append(f"{name}: 'What vLLM would print' lacks {line!r}: {got['vllm_print']!r}")
    # The whole document, field for field (the model's source path is where each found its config).
    page_doc, cli_doc = got["document"], want
    for doc in (page_doc, cli_doc):
        doc.get("model", {}).pop("source", None)
    if page_doc != cli_doc:
        keys = sorted(k for k in set(page_doc) | set(cli_doc) if page_doc.get(k) != cli_doc.get(k))
        failures.append(f"{name}: the page's document differs from the CLI's in {keys}")
    if got["sweep_rows"] < 4:
        failures.append(f"{name}: the sweep chart has {got['sweep_rows']} labels, expected a row per TP 1, 2, 4, 8")
    return failures


def enter(page, d):
    """Fills the form as a user would and computes (Enter in the last field typed)."""
    page.eval("document.querySelector('input[name=source][value=bundled]').click()")
    page.choose("model", d["model"])
    page.choose("gpu", d["gpu"])
    page.choose("kv", d.get("kv", "auto"))
    page.choose("version", d.get("version", ""))
    page.set_checked("ep", False)
    page.set_checked("eager", False)
    for field, key in (("pp", "pp"), ("dp", "dp"), ("dcp", "dcp"), ("util", "util"), ("seqs", "seqs"), ("len", "len"),
                       ("tp", "tp")):
        page.type_text(field, d.get(key, "1" if field in ("pp", "dp", "dcp", "tp") else ""))
    before = page.eval("Number(document.body.dataset.computed || 0)")
    page.press_enter()
    page.wait_for(f"Number(document.body.dataset.computed || 0) > {before}")


def open_link(page, url):
    """Opens `url` as a new page load (not a fragment change of the page already open)."""
    page.call("Page.navigate", url="about:blank")
    page.wait_for("location.href === 'about:blank' && document.readyState === 'complete'")
    page.call("Page.navigate", url=url)


def main():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    failures = []
    timings = {}
    with browser_page(WEB_DIR, hub_models=CONFIG_DIR / "models") as (page, base):
        # Page load to first result: the incident given by a link, timed by the page itself.
        incident = DEPLOYMENTS[0]
        link = (f"{base}#model={incident['model']}&gpu={incident['gpu']}&tp=8&kv=bfloat16&util=0.9&version=0.15")
        started = time.monotonic()
        page.call("Page.navigate", url=link)
        page.wait_for("document.body && document.body.dataset.computed === '1'")
        timings["link_to_first_result_s"] = round(time.monotonic() - started, 3)
        timings["page_first_result_ms"] = page.eval("Number(document.body.dataset.firstResultMs)")
        failures += check("incident by link", shown(page), cli_fit(incident["model"], incident["cli"]), incident["model"])
        page.screenshot(ARTIFACTS / "incident-link.png")

        for d in DEPLOYMENTS:
            enter(page, d)
            failures += check(d["name"], shown(page), cli_fit(d["model"], d["cli"]), d["model"])
            page.screenshot(ARTIFACTS / f"{d['name']}.png")
        page.screenshot(ARTIFACTS / "gpt-oss-phone.png", width=390, height=2400, mobile=True)

        # A pasted launch line replaces the fields: the page's document is the CLI's for the same line.
        for d in LINES:
            page.choose("gpu", d["gpu"])
            page.choose("version", d["version"])
            page.type_text("vllm-line", d["line"])
            before = page.eval("Number(document.body.dataset.computed || 0)")
            page.eval("document.getElementById('compute').click()")
            page.wait_for(f"Number(document.body.dataset.computed || 0) > {before}")
            failures += check(d["name"], shown(page), cli_fit_line(d["gpu"], d["version"], d["line"]), d["model"])
            if not d["name"].startswith("parity-"):
                page.screenshot(ARTIFACTS / f"{d['name']}.png")
        page.type_text("vllm-line", "")

        # A config pasted into the page: the same answer as the CLI on that folder.
        folder = CONFIG_DIR / "models" / PASTED["folder"]
        page.eval("document.querySelector('input[name=source][value=files]').click()")
        page.eval(f"(() => {{ const t = document.getElementById('config-paste'); t.value = {json.dumps((folder / 'config.json').read_text())};"
                  " t.dispatchEvent(new Event('input', {bubbles: true})); })()")
        page.choose("gpu", PASTED["gpu"])
        page.choose("kv", "auto")
        page.choose("version", "")
        for field in ("tp", "pp", "dp", "dcp"):
            page.type_text(field, "1")
        page.type_text("util", "")
        page.type_text("seqs", "")
        page.type_text("len", PASTED["len"])
        before = page.eval("Number(document.body.dataset.computed || 0)")
        page.press_enter()
        page.wait_for(f"Number(document.body.dataset.computed || 0) > {before}")
        failures += check(PASTED["name"], shown(page), cli_fit(str(folder), PASTED["cli"]), "MODEL")
        page.screenshot(ARTIFACTS / f"{PASTED['name']}.png")

        # A Hub id, fetched by the page from a stand-in Hub on this server (#endpoint=, as HF_ENDPOINT).
        hub = HUB
        open_link(page, f"{base}#source=hub&hub={hub['model']}&gpu={hub['gpu']}&len={hub['len']}"
                                       f"&endpoint={base.rsplit('/', 1)[0]}/hub")
        page.wait_for("document.body && document.body.dataset.computed === '1'")
        failures += check(hub["name"], shown(page), cli_fit(hub["model"], hub["cli"]), hub["model"])
        page.screenshot(ARTIFACTS / f"{hub['name']}.png")
        open_link(page, f"{base}#source=hub&hub=no-such-org/no-such-model&gpu=h100"
                                       f"&endpoint={base.rsplit('/', 1)[0]}/hub")
        page.wait_for("document.body && document.body.dataset.ready === '1' && !document.getElementById('error').hidden")
        error = page.eval("document.getElementById('error').textContent")
        if "HTTP 404" not in error or "no-such-org/no-such-model" not in error:
            failures.append(f"a missing Hub model: the page's error is {error!r}")

        # Bad input is an error on the page, not a figure.
        page.eval("document.querySelector('input[name=source][value=bundled]').click()")
        page.type_text("tp", "0")
        page.press_enter()
        page.wait_for("!document.getElementById('error').hidden")
        error = page.eval("document.getElementById('error').textContent")
        if "Tensor parallel" not in error:
            failures.append(f"-tp 0: the page's error is {error!r}")
    (ARTIFACTS / "timings.json").write_text(json.dumps(timings, indent=2) + "\n")
    print(json.dumps(timings))
    for f in failures:
        print("FAIL", f)
    print(f"{'FAILED' if failures else 'passed'}: {len(DEPLOYMENTS) + len(LINES) + 3} page states checked against the CLI; screenshots in {ARTIFACTS}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
