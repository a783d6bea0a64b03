"use strict";
// The engine: gpubudget's C ABI (include/gpubudget/gpubudget.h, docs/api.md) compiled to WebAssembly
// (gpubudget.js + gpubudget.wasm + gpubudget.data, built by web/CMakeLists.txt). One JSON request in,
// the CLI's JSON document out, as text: the page shows what the document says and computes nothing.
//
// The bundled configs are mounted at /gpubudget/configs; a model given as files (an upload, a paste, or a
// Hub id the page fetched) is written to /models/<name>/ and passed to the engine as that folder.

/* global createGpubudget */

const GpubudgetEngine = {
  /** Starts the module; resolves to {version, run(request), writeModel(name, files), profiles()}. */
  async load() {
    const m = await createGpubudget({
      print: (line) => console.log(line),
      printErr: (line) => console.warn(line),
    });
    const configRoot = "/gpubudget/configs";

    /** Answers one request: {status, text, doc} (status as docs/api.md: 0, 1 computed; 3, 4 errors). */
    function run(request) {
      const outSlot = m._malloc(4);
      try {
        const status = m.ccall("gpubudget_run_json", "number", ["string", "number"],
                               [JSON.stringify(request), outSlot]);
        const textPtr = m.getValue(outSlot, "i32");
        const text = textPtr ? m.UTF8ToString(textPtr) : "";
        if (textPtr) m._gpubudget_free(textPtr);
        let doc = null;
        try { doc = JSON.parse(text); } catch (e) { doc = { error: "unreadable answer: " + text, status: 4 }; }
        return { status, text, doc };
      } finally {
        m._free(outSlot);
      }
    }

    /** Writes `files` ({file name: text}) to /models/<name>/, replacing what was there; returns the folder. */
    function writeModel(name, files) {
      const safe = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 100) || "model";
      const dir = "/models/" + safe;
      if (!m.FS.analyzePath("/models").exists) m.FS.mkdir("/models");
      if (m.FS.analyzePath(dir).exists) {
        for (const f of m.FS.readdir(dir)) if (f !== "." && f !== "..") m.FS.unlink(dir + "/" + f);
      } else {
        m.FS.mkdir(dir);
      }
      for (const [file, text] of Object.entries(files)) {
        if (!/^[A-Za-z0-9._-]+$/.test(file)) throw new Error("file name " + file + " is not a plain name");
        m.FS.writeFile(dir + "/" + file, text);
      }
      return dir;
    }

    /** The bundled vLLM version profiles (configs/vllm/*.json), oldest first. */
    function profiles() {
      const names = m.FS.readdir(configRoot + "/vllm").filter((f) => /^\d[\d.]*\.json$/.test(f))
        .map((f) => f.slice(0, -5));
      const key = (v) => v.split(".").map(Number);
      return names.sort((a, b) => {
        const x = key(a), y = key(b);
        for (let i = 0; i < Math.max(x.length, y.length); i++) {
          const d = (x[i] || 0) - (y[i] || 0);
          if (d) return d;
        }
        return 0;
      });
    }

    const version = m.ccall("gpubudget_version", "string", [], []);
    return { version, run, writeModel, profiles, configRoot };
  },
};
