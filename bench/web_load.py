#!/usr/bin/python3
"""The web calculator's load time and size (docs/web.md), for bench/README.md.

Usage: /usr/bin/python3 bench/web_load.py [build/wasm/web] [loads]
Serves the built page on 127.0.0.1 and opens the incident's link (Kimi-K2.5-NVFP4, 8 x RTX PRO 6000,
TP 8, bf16 KV, utilization 0.9, vLLM 0.15) in headless Chromium `loads` times with the browser cache
off, reading the page's own clock (performance.now() since navigation) when the engine is ready and when
the first result is shown (the fit with its remedies, and the TP sweep). Prints the median and the
slowest, and the size of what a browser downloads, raw and gzip-compressed (level 9).
"""

import gzip
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "web"))
from browser_session import browser_page  # noqa: E402

WEB_DIR = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/wasm/web")
LOADS = int(sys.argv[2]) if len(sys.argv) > 2 else 15
LINK = "#model=nvidia/Kimi-K2.5-NVFP4&gpu=rtx-pro-6000&tp=8&kv=bfloat16&util=0.9&version=0.15"

sizes = {}
for f in sorted(WEB_DIR.iterdir()):
    if f.suffix in (".html", ".js", ".css", ".wasm", ".data"):
        raw = f.read_bytes()
        sizes[f.name] = (len(raw), len(gzip.compress(raw, 9)))
engine = [sizes[n] for n in ("gpubudget.wasm", "gpubudget.data", "gpubudget.js")]

ready, first = [], []
with browser_page(WEB_DIR) as (page, base):
    page.call("Network.enable")
    page.call("Network.setCacheDisabled", cacheDisabled=True)
    for _ in range(LOADS):
        page.call("Page.navigate", url="about:blank")
        page.wait_for("document.readyState === 'complete' && location.href === 'about:blank'")
        page.call("Page.navigate", url=base + LINK)
        page.wait_for("document.body && document.body.dataset.computed === '1'")
        ready.append(page.eval("Number(document.body.dataset.engineReadyMs)"))
        first.append(page.eval("Number(document.body.dataset.firstResultMs)"))

MB = 1e6
print(f"{LOADS} cold loads of the incident's link (browser cache off), page clock since navigation:")
print(f"  engine ready:  median {statistics.median(ready):.0f} ms, slowest {max(ready):.0f} ms")
print(f"  first result:  median {statistics.median(first):.0f} ms, slowest {max(first):.0f} ms")
print("sizes (raw -> gzip -9):")
for name, (raw, packed) in sizes.items():
    print(f"  {name:16} {raw / MB:6.2f} MB -> {packed / MB:5.2f} MB")
print(f"  engine (wasm + data + glue): {sum(r for r, _ in engine) / MB:.2f} MB -> {sum(p for _, p in engine) / MB:.2f} MB")
