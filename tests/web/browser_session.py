"""Headless Chromium over the DevTools protocol, on a page served from a folder on 127.0.0.1: what the
web calculator's browser test (browser_test.py) and load benchmark (bench/web_load.py) share."""

import base64
import contextlib
import functools
import http.server
import json
import pathlib
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

import websocket  # Debian's python3-websocket


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """The page's folder, and under /hub/ a stand-in for the Hub's file URLs
    (/hub/ORG/NAME/resolve/REVISION/FILE), answered from a folder of ORG__NAME model folders."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".js": "text/javascript", ".data": "application/octet-stream"}

    def __init__(self, *args, hub_models=None, **kwargs):
        self.hub_models = hub_models
        super().__init__(*args, **kwargs)

    def do_GET(self):
        parts = self.path.split("?")[0].split("/")
        if len(parts) == 7 and parts[1] == "hub" and parts[4] == "resolve" and self.hub_models is not None:
            file = self.hub_models / f"{parts[2]}__{parts[3]}" / parts[6]
            if "/" in parts[6] or ".." in parts[6] or not file.is_file():
                self.send_error(404)
                return
            body = file.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


class Page:
    """One tab over the DevTools protocol."""

    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=120, suppress_origin=True)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def eval(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.eval(expression):
                return
            time.sleep(0.05)
        page_error = self.eval("document.getElementById('error').textContent")
        raise TimeoutError(f"waited {seconds} s for {expression}; the page's error: {page_error!r}")

    def screenshot(self, path, width=1280, height=2400, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)
        time.sleep(0.3)
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        path.write_bytes(base64.b64decode(data))
        self.call("Emulation.clearDeviceMetricsOverride")

    def type_text(self, element_id, text):
        """Focuses a field, empties it and types `text` as keystrokes."""
        self.eval(f"(() => {{ const e = document.getElementById({json.dumps(element_id)}); e.focus(); e.value = ''; }})()")
        if text:
            self.call("Input.insertText", text=text)

    def press_enter(self):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                      **({"text": "\r"} if kind == "keyDown" else {}))

    def choose(self, element_id, value):
        found = self.eval(f"""(() => {{ const e = document.getElementById({json.dumps(element_id)});
            if (![...e.options].some(o => o.value === {json.dumps(value)})) return false;
            e.focus(); e.value = {json.dumps(value)}; e.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()""")
        if not found:
            raise AssertionError(f"#{element_id} has no option {value!r}")

    def set_checked(self, element_id, checked):
        self.eval(f"document.getElementById({json.dumps(element_id)}).checked = {json.dumps(checked)}")


@contextlib.contextmanager
def browser_page(web_dir, hub_models=None):
    """Serves `web_dir` on 127.0.0.1 (and `hub_models` as a Hub under /hub/) and starts headless
    Chromium; yields (Page, the page's URL)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(web_dir), hub_models=hub_models))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = pathlib.Path(tempfile.mkdtemp(prefix="gpubudget-chromium-"))
    browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={profile}",
                                "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or len(port_file.read_text().splitlines()) < 2:
            if time.monotonic() > deadline or browser.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = port_file.read_text().splitlines()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Runtime.enable")
        yield page, f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
