"use strict";
// The page: reads the form, asks the engine (engine.js) for `fit` and `sweep` documents, and shows
// them. Every figure shown is a field of the document (docs/cli.md, "JSON"), formatted and nothing else;
// the URL's fragment carries the inputs (#model=…&gpu=…&tp=…), so a result is a link.

/* global GpubudgetEngine */

const GIB = 1024 ** 3;
const $ = (id) => document.getElementById(id);
const fmtInt = (n) => Number(n).toLocaleString("en-US");
const fmtGib = (bytes) => (bytes / GIB).toFixed(2) + " GiB";
// The fields a link carries, with the form element behind each.
const LINK_FIELDS = ["source", "model", "hub", "revision", "gpu", "tp", "pp", "dp", "dcp", "ep", "kv", "util", "len",
                     "seqs", "version", "eager", "endpoint", "line"];
// Where Hub ids are fetched from: huggingface.co, or a mirror given in the link (#endpoint=https://…, as
// HF_ENDPOINT is to the CLI); the mirror must allow this page's origin (CORS), as huggingface.co does.
function hubEndpoint() {
  const given = new URLSearchParams(location.hash.slice(1)).get("endpoint");
  return given && /^https?:\/\/[^\s]+$/.test(given) ? given.replace(/\/+$/, "") : "https://huggingface.co";
}
const HUB_FILES_REQUIRED = ["config.json"];
const HUB_FILES_OPTIONAL = ["hf_quant_config.json", "quant_config.json", "quantize_config.json",
                            "preprocessor_config.json", "processor_config.json"];

let engine = null;
let pastedLaunch = null;        // the parse_vllm_args document of the pasted launch line, or null
let gpuPresets = [];
const hubFolders = new Map();   // "id@revision" -> engine folder
let uploadedFolder = null;      // the engine folder of the user's files

function sourceKind() { return document.querySelector('input[name="source"]:checked').value; }

function setSourceKind(kind) {
  for (const r of document.querySelectorAll('input[name="source"]')) r.checked = r.value === kind;
  for (const block of document.querySelectorAll("[data-source]")) block.hidden = block.dataset.source !== kind;
}

// ---- the form and the link ----

function formValues() {
  return {
    source: sourceKind(), model: $("model").value, hub: $("hub-id").value.trim(), revision: $("hub-revision").value.trim(),
    gpu: $("gpu").value, tp: $("tp").value, pp: $("pp").value, dp: $("dp").value, dcp: $("dcp").value,
    ep: $("ep").checked ? "1" : "", kv: $("kv").value, util: $("util").value.trim(), len: $("len").value.trim(),
    seqs: $("seqs").value.trim(), version: $("version").value, eager: $("eager").checked ? "1" : "",
    endpoint: new URLSearchParams(location.hash.slice(1)).get("endpoint") || "",
    line: $("vllm-line").value.trim(),
  };
}

function applyValues(v) {
  if (v.source) setSourceKind(v.source);
  const set = (id, value) => { if (value !== undefined && value !== null) $(id).value = value; };
  set("model", v.model); set("hub-id", v.hub); set("hub-revision", v.revision); set("gpu", v.gpu);
  set("tp", v.tp); set("pp", v.pp); set("dp", v.dp); set("dcp", v.dcp); set("kv", v.kv); set("util", v.util);
  set("len", v.len); set("seqs", v.seqs); set("version", v.version); set("vllm-line", v.line);
  if (v.ep !== undefined) $("ep").checked = v.ep === "1";
  if (v.eager !== undefined) $("eager").checked = v.eager === "1";
}

function linkFor(values) {
  const params = new URLSearchParams();
  for (const k of LINK_FIELDS) {
    const value = values[k];
    if (value === "" || value === undefined) continue;
    if (["tp", "pp", "dp", "dcp"].includes(k) && value === "1") continue;
    if (k === "kv" && value === "auto") continue;
    if (k === "model" && values.source !== "bundled") continue;
    if ((k === "hub" || k === "revision") && values.source !== "hub") continue;
    params.set(k, value);
  }
  return "#" + params.toString();
}

function valuesFromLink() {
  const params = new URLSearchParams(location.hash.slice(1));
  const v = {};
  for (const k of LINK_FIELDS) if (params.has(k)) v[k] = params.get(k);
  return v;
}

// ---- the request ----

function positiveInt(id, label) {
  const text = $(id).value.trim();
  if (text === "") return null;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(label + ": expected a whole number ≥ 1, got \"" + text + "\"");
  return Number(text);
}

function deploymentFields() {
  const d = {
    tensor_parallel_size: positiveInt("tp", "Tensor parallel") || 1,
    pipeline_parallel_size: positiveInt("pp", "Pipeline parallel") || 1,
    data_parallel_size: positiveInt("dp", "Data parallel") || 1,
    decode_context_parallel_size: positiveInt("dcp", "Decode context parallel") || 1,
    enable_expert_parallel: $("ep").checked,
    kv_cache_dtype: $("kv").value,
    enforce_eager: $("eager").checked,
  };
  const util = $("util").value.trim();
  if (util !== "") {
    const u = Number(util);
    if (!(u > 0 && u <= 1)) throw new Error("GPU memory utilization: expected a number in (0, 1], got \"" + util + "\"");
    d.gpu_memory_utilization = u;
  }
  const len = $("len").value.trim();
  if (len === "auto" || len === "-1") d.max_model_len = "auto";
  else if (len !== "") {
    const m = /^(\d+)\s*([kK])?$/.exec(len);
    if (!m) throw new Error("Max model len: expected a number of tokens (e.g. 131072 or 128k) or \"auto\", got \"" + len + "\"");
    d.max_model_len = Number(m[1]) * (m[2] ? 1024 : 1);
  }
  const seqs = positiveInt("seqs", "Max num seqs");
  if (seqs !== null) d.max_num_seqs = seqs;
  return d;
}

async function readFiles(fileList) {
  const files = {};
  for (const f of fileList) files[f.name] = await f.text();
  return files;
}

async function fetchHubModel(id, revision) {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) {
    throw new Error("Hub id: expected org/name, got \"" + id + "\"");
  }
  const rev = revision || "main";
  const key = hubEndpoint() + " " + id + "@" + rev;
  if (hubFolders.has(key)) return hubFolders.get(key);
  const base = hubEndpoint() + "/" + id + "/resolve/" + encodeURIComponent(rev) + "/";
  const files = {};
  for (const name of HUB_FILES_REQUIRED.concat(HUB_FILES_OPTIONAL)) {
    let response;
    try {
      response = await fetch(base + name);
    } catch (e) {
      if (HUB_FILES_REQUIRED.includes(name)) throw new Error(base + name + ": could not be fetched (" + e.message + ")");
      continue;
    }
    if (response.ok) files[name] = await response.text();
    else if (HUB_FILES_REQUIRED.includes(name)) {
      throw new Error(base + name + ": HTTP " + response.status +
                      (response.status === 401 || response.status === 403 ? " (a gated model: download its config.json and give it as a file)" : ""));
    }
  }
  const folder = engine.writeModel("hub__" + id.replace("/", "__") + "__" + rev, files);
  hubFolders.set(key, folder);
  return folder;
}

async function modelArgument() {
  const kind = sourceKind();
  if (kind === "bundled") return { model: $("model").value, label: $("model").value, serveName: $("model").value };
  if (kind === "hub") {
    const id = $("hub-id").value.trim();
    return { model: await fetchHubModel(id, $("hub-revision").value.trim()), label: id, serveName: id };
  }
  if (!uploadedFolder) {
    const pasted = $("config-paste").value.trim();
    if (pasted === "") throw new Error("My config.json: drop or choose the model's config.json, or paste it");
    uploadedFolder = engine.writeModel("upload", { "config.json": pasted });
  }
  return { model: uploadedFolder, label: "your config.json", serveName: "MODEL" };
}

// ---- showing a document ----

function show(id, text) { $(id).textContent = text; }

function clear(element) { while (element.firstChild) element.removeChild(element.firstChild); }

function listInto(id, items, render) {
  const list = $(id);
  clear(list);
  for (const item of items) {
    const li = document.createElement("li");
    render(li, item);
    list.appendChild(li);
  }
}

function memorySegments(doc) {
  const g = doc.per_gpu;
  const segments = [];
  const components = g.weights_components && g.weights_components.length ? g.weights_components
                                                                           : [{ name: "weights", bytes: g.weights_bytes }];
  if (g.cpu_offloaded_bytes > 0) {
    // --cpu-offload-gb or the prefetch offloader: the components are the model's, the GPU holds weights_bytes.
    segments.push({ label: "weights on the GPU (" + fmtGib(g.cpu_offloaded_bytes) + " in CPU memory)", bytes: g.weights_bytes, kind: "weights" });
  } else {
    for (const c of components) segments.push({ label: "weights: " + c.name.replace(/_/g, " "), bytes: c.bytes, kind: "weights" });
  }
  segments.push({ label: "activation peak (estimated)", bytes: g.activation_peak_bytes, kind: "activation" });
  if (g.encoder_profile_bytes) segments.push({ label: "encoder profile (estimated)", bytes: g.encoder_profile_bytes, kind: "activation" });
  segments.push({ label: "non-torch memory (estimated)", bytes: g.non_torch_bytes, kind: "nontorch" });
  if (g.cudagraph_bytes) segments.push({ label: "CUDA graphs (estimated)", bytes: g.cudagraph_bytes, kind: "graphs" });
  segments.push({ label: "KV cache", bytes: Math.max(0, g.kv_cache_bytes), kind: "kv" });
  const unused = doc.deployment.gpu_memory_bytes - g.requested_bytes;
  if (unused > 0) segments.push({ label: "not given to vLLM (1 − utilization)", bytes: unused, kind: "unused" });
  return segments;
}

function drawMemoryBar(doc) {
  const bar = $("memory-bar");
  clear(bar);
  const total = doc.deployment.gpu_memory_bytes;
  const segments = memorySegments(doc);
  bar.setAttribute("aria-label", "Per-GPU memory: " + segments.map((s) => s.label + " " + fmtGib(s.bytes)).join(", "));
  for (const s of segments) {
    const part = document.createElement("div");
    part.className = "seg seg-" + s.kind;
    part.style.width = Math.max(0, (100 * s.bytes) / total) + "%";
    part.title = s.label + ": " + fmtGib(s.bytes) + " (" + fmtInt(s.bytes) + " bytes)";
    bar.appendChild(part);
  }
  listInto("memory-legend", segments, (li, s) => {
    const swatch = document.createElement("span");
    swatch.className = "swatch seg-" + s.kind;
    li.appendChild(swatch);
    li.appendChild(document.createTextNode(s.label + ": " + fmtGib(s.bytes)));
    li.dataset.bytes = String(s.bytes);
  });
  if (doc.per_gpu.kv_cache_bytes < 0) {
    const li = document.createElement("li");
    li.className = "bad";
    li.textContent = "The weights and overheads exceed the memory vLLM may use by " + fmtGib(-doc.per_gpu.kv_cache_bytes) + ": no KV cache is left.";
    $("memory-legend").appendChild(li);
  }
}

// A word as a POSIX shell reads it back: single-quoted unless it is plain.
function shellWord(word) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'";
}

// The pasted line's own arguments (the engine's reading of them, `vllm_args`) with the length that fits.
function pastedServeLine(doc, serveName, launch) {
  const env = [], flags = [];
  const words = launch.vllm_args;
  for (let i = 0; i < words.length; ++i) {
    if (!words[i].startsWith("--")) { env.push(words[i]); continue; }
    if (words[i] === "--max-model-len") { ++i; continue; }
    flags.push(words[i]);
    if (i + 1 < words.length && !words[i + 1].startsWith("--") && launch.arguments[words[i]] !== true) flags.push(words[++i]);
  }
  flags.push("--max-model-len", String(doc.request.fits ? doc.request.max_model_len : doc.max_model_len));
  return [...env, "vllm serve", serveName, ...flags].map((w) => (w === "vllm serve" ? w : shellWord(w))).join(" ");
}

function serveLine(doc, serveName) {
  if (pastedLaunch) return pastedServeLine(doc, serveName, pastedLaunch);
  const d = doc.deployment;
  const parts = ["vllm serve", serveName];
  const add = (flag, value) => parts.push(flag + " " + value);
  if (d.tensor_parallel_size > 1) add("--tensor-parallel-size", d.tensor_parallel_size);
  if (d.pipeline_parallel_size > 1) add("--pipeline-parallel-size", d.pipeline_parallel_size);
  if (d.data_parallel_size > 1) add("--data-parallel-size", d.data_parallel_size);
  if (d.decode_context_parallel_size > 1) add("--decode-context-parallel-size", d.decode_context_parallel_size);
  if (d.enable_expert_parallel) parts.push("--enable-expert-parallel");
  if ($("kv").value !== "auto") add("--kv-cache-dtype", $("kv").value);
  add("--max-model-len", doc.request.fits ? doc.request.max_model_len : doc.max_model_len);
  add("--gpu-memory-utilization", d.gpu_memory_utilization);
  if (d.max_num_seqs && $("seqs").value.trim() !== "") add("--max-num-seqs", d.max_num_seqs);
  if (d.enforce_eager) parts.push("--enforce-eager");
  return parts.join(" ");
}

function vllmPrint(doc) {
  const lines = [];
  if (doc.kv_cache.tokens > 0) {
    lines.push("GPU KV cache size: " + fmtInt(doc.kv_cache.tokens) + " tokens");
    lines.push("Maximum concurrency for " + fmtInt(doc.request.max_model_len) + " tokens per request: " +
               Number(doc.kv_cache.max_concurrency).toFixed(2) + "x");
  }
  if (doc.request.vllm_error) lines.push(doc.request.vllm_error);
  if (doc.start_blocker) lines.push(doc.start_blocker);
  return lines.join("\n") || "(nothing: vLLM would start with this length)";
}

function showFit(doc, model) {
  const fits = doc.request.fits;
  const verdict = $("verdict");
  const nWarnings = doc.warnings.length;
  verdict.textContent = (fits ? "FITS" : "DOES NOT FIT") + (nWarnings ? " — " + nWarnings + " warning" + (nWarnings > 1 ? "s" : "") : "");
  verdict.className = fits ? "good" : "bad";
  verdict.dataset.fits = String(fits);
  const d = doc.deployment;
  const gpus = d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size;
  show("verdict-detail", model.label + " on " + gpus + " × " + d.gpu + " (" + fmtGib(d.gpu_memory_bytes) + " each): " +
       fmtInt(doc.request.max_model_len) + " tokens need " + fmtGib(doc.request.needed_bytes) + " of KV cache per GPU; " +
       fmtGib(Math.max(0, doc.per_gpu.kv_cache_bytes)) + " is available." +
       (doc.vllm_would_start ? "" : " vLLM would not start: " + doc.start_blocker));
  const warnings = $("warnings");
  clear(warnings);
  doc.warnings.forEach((w, i) => {
    const p = document.createElement("p");
    p.className = "warning";
    p.textContent = "warning: " + w;
    p.dataset.code = doc.warning_codes[i];  // stable (docs/warnings.md); shown on hover
    p.title = doc.warning_codes[i];
    warnings.appendChild(p);
  });
  show("max-model-len", fmtInt(doc.max_model_len) + " tokens");
  $("max-model-len").dataset.value = String(doc.max_model_len);
  const range = doc.max_model_len_range;
  show("max-model-len-range", fmtInt(range[0]) + " – " + fmtInt(range[1]) + " tokens");
  show("kv-bytes-per-token", fmtInt(doc.kv_cache.bytes_per_token) + " B");
  $("kv-bytes-per-token").dataset.value = String(doc.kv_cache.bytes_per_token);
  show("needed-bytes", fmtGib(doc.request.needed_bytes) + " (" + fmtInt(doc.request.needed_bytes) + " B) for " +
       fmtInt(doc.request.max_model_len) + " tokens");
  $("needed-bytes").dataset.value = String(doc.request.needed_bytes);
  show("kv-cache-bytes", fmtGib(doc.per_gpu.kv_cache_bytes) + " (" + fmtInt(doc.per_gpu.kv_cache_bytes) + " B), " +
       fmtInt(doc.kv_cache.tokens) + " tokens");
  $("kv-cache-bytes").dataset.value = String(doc.per_gpu.kv_cache_bytes);
  show("kv-settings", "block " + d.block_size + " tokens, " + d.kv_cache_dtype + ", vLLM " + d.vllm_profile);
  drawMemoryBar(doc);
  show("vllm-print", vllmPrint(doc));
  show("serve-line", serveLine(doc, model.serveName));
  const remedies = doc.remedies || [];
  $("remedies-block").hidden = remedies.length === 0;
  listInto("remedies", remedies, (li, r) => {
    li.textContent = r.change + " → " + fmtInt(r.max_model_len) + " tokens" + (r.reaches_target ? "" : " (short of the requested length)") +
                     (r.vllm_would_start ? "" : " (vLLM would not start)") + (r.caveat ? " — " + r.caveat : "");
    if (r.flags.length) {
      const code = document.createElement("code");
      code.textContent = " " + r.flags.join(" ");
      li.appendChild(code);
    }
  });
  listInto("notes", doc.notes, (li, n) => { li.textContent = n; });
  show("result-json", JSON.stringify(doc, null, 2));
}

function drawSweep(rows, modelMax) {
  const box = $("sweep-chart");
  clear(box);
  const ns = "http://www.w3.org/2000/svg";
  // Drawn at the box's own width, so that its text stays legible on a phone.
  const width = Math.max(300, Math.min(760, box.clientWidth || 640)), rowHeight = 28, left = 56;
  const right = Math.min(190, width * 0.42);
  const svg = document.createElementNS(ns, "svg");
  const height = rows.length * rowHeight + 10;
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Largest --max-model-len by tensor parallel size");
  const scale = (width - left - right) / Math.max(1, modelMax);
  rows.forEach((row, i) => {
    const y = 5 + i * rowHeight;
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", "4"); label.setAttribute("y", String(y + 18));
    label.textContent = "TP " + row.tensor_parallel_size;
    svg.appendChild(label);
    const value = document.createElementNS(ns, "text");
    value.setAttribute("y", String(y + 18));
    if (!row.valid || !row.vllm_would_start || row.max_model_len <= 0) {
      value.setAttribute("x", String(left));
      value.setAttribute("class", "refused");
      const reason = !row.valid ? "refused: " + row.error
                   : !row.vllm_would_start ? "vLLM would not start" + (row.warnings.length ? ": " + row.warnings[0] : "")
                   : "no KV cache left: weights and overheads need " + fmtGib(-row.kv_cache_bytes) + " more";
      const fitsIn = Math.floor((width - left) / 6.5);  // characters of 12 px text in the row
      value.textContent = reason.length > fitsIn ? reason.slice(0, fitsIn - 1) + "…" : reason;
      const title = document.createElementNS(ns, "title");  // the whole reason on hover
      title.textContent = reason;
      value.appendChild(title);
    } else {
      const bar = document.createElementNS(ns, "rect");
      const w = Math.max(1, Math.min(modelMax, row.max_model_len) * scale);
      bar.setAttribute("x", String(left)); bar.setAttribute("y", String(y + 4));
      bar.setAttribute("width", String(w)); bar.setAttribute("height", "18");
      bar.setAttribute("class", row.max_model_len >= modelMax ? "reach" : row.max_model_len > 0 ? "short" : "none");
      svg.appendChild(bar);
      value.setAttribute("x", String(left + w + 6));
      value.textContent = fmtInt(row.max_model_len) + " tok · KV " + fmtInt(row.kv_cache_tokens);
    }
    svg.appendChild(value);
  });
  box.appendChild(svg);
}

function showError(message) {
  const e = $("error");
  e.textContent = message;
  e.hidden = false;
}

// ---- computing ----

let computing = Promise.resolve();

async function compute() {
  $("error").hidden = true;
  let model, deployment;
  try {
    deployment = deploymentFields();
    model = await modelArgument();
  } catch (e) {
    showError(e.message);
    $("result").hidden = true;
    return;
  }
  const values = formValues();
  history.replaceState(null, "", linkFor(values));
  // A pasted launch line: read by the engine as the C ABI's vllm_args (docs/api.md), in place of the fields.
  pastedLaunch = null;
  if (values.line !== "") {
    const parsed = engine.run({ operation: "parse_vllm_args", line: values.line });
    if (parsed.status >= 2) {
      showError("Launch line: " + (parsed.doc.error || parsed.text));
      $("result").hidden = true;
      return;
    }
    pastedLaunch = parsed.doc;
    if (pastedLaunch.model) model = { model: pastedLaunch.model, label: pastedLaunch.model, serveName: pastedLaunch.model };
  }
  const request = { operation: "fit", model: model.model, gpu: $("gpu").value, hub: { offline: true } };
  // The line's own words, so that its notes (flags read with a caveat, or unknown) reach the warnings as the CLI's.
  if (pastedLaunch) request.vllm_args = pastedLaunch.words;
  else request.deployment = deployment;
  if ($("version").value) request.vllm_version = $("version").value;
  const fit = engine.run(request);
  if (fit.status >= 2) {
    showError(fit.doc.error || fit.text);
    $("result").hidden = true;
    return;
  }
  showFit(fit.doc, model);
  $("result").hidden = false;
  const sweepRequest = {
    operation: "sweep", model: model.model, gpus: [$("gpu").value], tensor_parallel_sizes: [1, 2, 4, 8],
    kv_cache_dtypes: [pastedLaunch ? pastedLaunch.arguments["--kv-cache-dtype"] || "auto" : deployment.kv_cache_dtype],
    hub: { offline: true },
  };
  if (pastedLaunch) sweepRequest.vllm_args = pastedLaunch.vllm_args;
  else sweepRequest.deployment = { pipeline_parallel_size: deployment.pipeline_parallel_size, data_parallel_size: deployment.data_parallel_size,
                                   enable_expert_parallel: deployment.enable_expert_parallel, enforce_eager: deployment.enforce_eager };
  if (!pastedLaunch && deployment.gpu_memory_utilization) sweepRequest.gpu_memory_utilizations = [deployment.gpu_memory_utilization];
  if (request.vllm_version) sweepRequest.vllm_version = request.vllm_version;
  const sweep = engine.run(sweepRequest);
  if (sweep.status < 2 && Array.isArray(sweep.doc)) drawSweep(sweep.doc, fit.doc.model.derived_max_model_len);
  else show("sweep-chart", sweep.doc && sweep.doc.error ? "sweep: " + sweep.doc.error : "");
  const computed = Number(document.body.dataset.computed || 0) + 1;
  if (computed === 1) document.body.dataset.firstResultMs = performance.now().toFixed(0);  // since navigation
  document.body.dataset.computed = String(computed);
}

function computeSoon() {
  computing = computing.then(compute, compute);
  return computing;
}

// ---- start ----

async function start() {
  try {
    engine = await GpubudgetEngine.load();
  } catch (e) {
    show("engine-status", "The engine did not load: " + e.message);
    return;
  }
  document.body.dataset.engineReadyMs = performance.now().toFixed(0);  // since navigation
  show("engine-version", engine.version);
  const models = engine.run({ operation: "models" }).doc;
  for (const id of models) $("model").add(new Option(id, id));
  gpuPresets = engine.run({ operation: "gpus" }).doc;
  for (const g of gpuPresets) {
    $("gpu").add(new Option(g.name + " — " + g.device_name + ", " + (g.memory_bytes / GIB).toFixed(1) + " GiB", g.name));
  }
  $("version").add(new Option("newest (" + engine.profiles().slice(-1)[0] + ")", ""));
  for (const v of engine.profiles().reverse()) $("version").add(new Option(v, v));
  applyValues({ model: "nvidia/Kimi-K2.5-NVFP4", gpu: "rtx-pro-6000" });
  const linked = valuesFromLink();
  applyValues(linked);

  for (const r of document.querySelectorAll('input[name="source"]')) r.addEventListener("change", () => setSourceKind(r.value));
  $("inputs").addEventListener("submit", (e) => { e.preventDefault(); computeSoon(); });
  $("hub-fetch").addEventListener("click", () => computeSoon());
  $("config-files").addEventListener("change", async (e) => {
    uploadedFolder = engine.writeModel("upload", await readFiles(e.target.files));
    computeSoon();
  });
  $("config-paste").addEventListener("input", () => { uploadedFolder = null; });
  const drop = $("drop-zone");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", async (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    uploadedFolder = engine.writeModel("upload", await readFiles(e.dataTransfer.files));
    computeSoon();
  });
  $("copy-link").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(location.href));
  $("copy-serve").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($("serve-line").textContent));
  window.addEventListener("hashchange", () => { applyValues(valuesFromLink()); computeSoon(); });
  show("engine-status", "Engine ready.");
  document.body.dataset.ready = "1";
  if (sourceKind() !== "files") await computeSoon();
}

start();
