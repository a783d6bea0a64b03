#!/usr/bin/env python3
"""`sweep --format svg` rendered in headless Chromium: every label and figure inside the picture, no two
texts on top of each other, each refused row's whole reason readable, the bars as long as the figures
say. Screenshots are left in ARTIFACTS_DIR for a person to look at.

usage: sweep_chart_test.py GPUBUDGET_CLI CONFIG_DIR ARTIFACTS_DIR
"""
import json
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_session import browser_page  # noqa: E402

# (file name, sweep arguments): the incident's what-ifs with refused rows (TP 3 does not divide the 64
# heads; FP8 KV has no MLA backend on SM120 under vLLM 0.15), and a dense model over GPUs of every size.
CHARTS = [
    ("sweep-kimi.svg", ["sweep", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000,h200", "-tp", "3,8", "-dcp", "1,8",
                        "--kv-cache-dtype", "bfloat16,fp8", "--vllm-version", "0.15"]),
    ("sweep-llama-70b.svg", ["sweep", "meta-llama/Llama-3.1-70B", "--layout", "rtx-4090:2,l40s:2,h100:1,h100:2,h200:4",
                             "--max-model-len", "32768"]),
]

# Everything measured in the page: each <text>'s box and its whole text, the picture's size, each bar.
MEASURE = """(() => {
  const svg = document.querySelector('svg');
  const texts = [...svg.querySelectorAll('text')].map(t => {
    const b = t.getBBox();
    return {text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height};
  });
  const bars = [...svg.querySelectorAll('rect')].map(r => ({x: +r.getAttribute('x'), y: +r.getAttribute('y'),
      w: +r.getAttribute('width'), h: +r.getAttribute('height'), fill: r.getAttribute('fill')}));
  const lines = [...svg.querySelectorAll('line')].map(l => ({x: +l.getAttribute('x1'), y1: +l.getAttribute('y1'),
      y2: +l.getAttribute('y2')}));
  return {width: +svg.getAttribute('width'), height: +svg.getAttribute('height'), texts, bars, lines};
})()"""


def overlap(a, b):
    return a["x"] < b["x"] + b["w"] - 1 and b["x"] < a["x"] + a["w"] - 1 and a["y"] < b["y"] + b["h"] - 1 and \
        b["y"] < a["y"] + a["h"] - 1


def check_chart(page, url, rows, failures, name):
    page.call("Page.navigate", url=url)
    page.wait_for("document.readyState === 'complete' && !!document.querySelector('svg')")
    m = page.eval(MEASURE)
    for t in m["texts"]:
        if t["x"] < 0 or t["y"] < 0 or t["x"] + t["w"] > m["width"] + 0.5 or t["y"] + t["h"] > m["height"] + 0.5:
            failures.append(f"{name}: {t['text'][:60]!r} is outside the {m['width']}x{m['height']} picture: {t}")
    for i, a in enumerate(m["texts"]):
        for b in m["texts"][i + 1:]:
            if overlap(a, b):
                failures.append(f"{name}: {a['text'][:50]!r} and {b['text'][:50]!r} overlap")
    for line in m["lines"]:
        for t in m["texts"]:
            if t["x"] < line["x"] < t["x"] + t["w"] and t["y"] < max(line["y1"], line["y2"]) and \
                    min(line["y1"], line["y2"]) < t["y"] + t["h"]:
                failures.append(f"{name}: a reference line crosses {t['text'][:50]!r}")
    # Legend swatches and words apart: no text over a swatch (the 12 x 12 squares).
    for b in m["bars"]:
        if b["w"] == 12 and b["h"] == 12:
            for t in m["texts"]:
                if overlap(t, b):
                    failures.append(f"{name}: {t['text'][:50]!r} covers a legend swatch")
    words = " ".join(" ".join(t["text"].split()) for t in m["texts"])
    for r in rows:
        if not r["valid"]:
            # The whole reason, as the JSON gives it, is on the page (its lines joined).
            reason = " ".join(r["error"].split())
            if reason not in words:
                failures.append(f"{name}: the reason {reason[:80]!r}... is not readable in full")
        elif r["vllm_would_start"] and r["max_model_len"] > 0 and f"{r['kv_cache_tokens']:,}" not in words:
            failures.append(f"{name}: KV tokens {r['kv_cache_tokens']:,} not shown")
    # Bars are proportional: the KV-token bars (the first panel's, top to bottom) over their rows' figures
    # give one scale, within half a pixel.
    coloured = [b for b in m["bars"] if b["fill"] in ("#2e8b57", "#e08a1e") and not (b["w"] == 12 and b["h"] == 12)]
    panel_x = min(b["x"] for b in coloured)
    bars = sorted((b for b in coloured if b["x"] == panel_x), key=lambda b: b["y"])
    drawn = [r for r in rows if r["valid"] and r["vllm_would_start"] and r["kv_cache_tokens"] > 0 and
             r["max_model_len"] > 0]
    if len(bars) != len(drawn):
        failures.append(f"{name}: {len(bars)} KV bars for {len(drawn)} rows with a KV cache")
    else:
        scale = max(b["w"] for b in bars) / max(r["kv_cache_tokens"] for r in drawn)
        for b, r in zip(bars, drawn):
            if abs(b["w"] - r["kv_cache_tokens"] * scale) > 0.5:
                failures.append(f"{name}: the bar of {r['kv_cache_tokens']:,} tokens is {b['w']} px wide")
    return m


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cli, configs, artifacts = sys.argv[1:]
    artifacts = pathlib.Path(artifacts)
    artifacts.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    failures = []
    charts = []
    for name, args in CHARTS:
        svg = subprocess.run([cli, "--config-dir", configs] + args + ["--format", "svg"], capture_output=True,
                             text=True, env=env, timeout=120)
        rows = subprocess.run([cli, "--config-dir", configs] + args + ["--format", "json"], capture_output=True,
                              text=True, env=env, timeout=120)
        if svg.returncode != 0 or rows.returncode != 0:
            failures.append(f"{name}: exit {svg.returncode}/{rows.returncode}: {svg.stderr}{rows.stderr}")
            continue
        (artifacts / name).write_text(svg.stdout)
        charts.append((name, json.loads(rows.stdout)))
    with browser_page(artifacts) as (page, index_url):
        base = index_url.rsplit("/", 1)[0]
        for name, rows in charts:
            m = check_chart(page, f"{base}/{name}", rows, failures, name)
            page.screenshot(artifacts / (name[:-4] + ".png"), width=int(m["width"]), height=int(m["height"]))
            time.sleep(0.1)
    print(f"{len(charts)} charts rendered; screenshots in {artifacts}")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
