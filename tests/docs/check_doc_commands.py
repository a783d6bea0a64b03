#!/usr/bin/env python3
"""Every gpubudget command of README.md and docs/guide.md, executed as written.

usage: check_doc_commands.py GPUBUDGET_CLI SOURCE_DIR WORK_DIR

Reads the ```sh blocks of the two documents, keeps each command line that runs gpubudget (continuation
lines joined; the build steps before `&& build/release/apps/cli/gpubudget` and a `| sudo tee` after it
dropped; `a|b|c` alternatives of `--format` expanded, one run each) and runs it with bash in WORK_DIR,
where `gpubudget` and `build/release/apps/cli/gpubudget` are the CLI under test. What the documents
leave to the reader is filled in, and said here:

  vllm.log, logs/*.log   the incident's log (tests/data/logs/incident-kimi-k25-tp8.log)
  my-fleet.jsonl         its observation row (`diagnose --emit-observation`)
  MODEL, GPU             nvidia/Kimi-K2.5-NVFP4, rtx-pro-6000 (the model and GPU of that log)
  `fit ...`              the incident's deployment (INCIDENT_FIT)
  /usr/share/gpubudget/  the source tree's configs/ (an installed copy of them); configs/ a link to it
  --gpu auto             an nvidia-smi on PATH that reports one H100 80GB
  Hub ids and pages      a stand-in Hub on 127.0.0.1 (tests/hub/fake_hub.py) serving the bundled
                         Qwen/Qwen2.5-7B-Instruct config under every id and revision the documents name:
                         it checks that the commands run as written, not those models' figures

Each command must answer (exit 0 or 1, something on stdout or in the file it writes, no `error:`), and
where the prose beside a command states figures, the output must carry them (CLAIMS). Exit 0 when all do.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

# `fit ...`: the incident's deployment (its version left to the command, which may give a --profile).
INCIDENT_FIT = "nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 --kv-cache-dtype bfloat16 --gpu-memory-utilization 0.9"

# (document, text the command contains, strings its output must contain): figures the prose states.
CLAIMS = [
    ("README.md", "--vllm-version 0.15 -- vllm serve", ["DOES NOT FIT", "132,080"]),
    ("README.md", "--vllm-version 0.17", ["85.47 GiB", "70.71 GiB", "70272", "17.16 GiB", "183,504",
                                          "would stop with: To serve at least one request"]),
    ("README.md", "diagnose vllm.log --model", ["kv_cache_too_small", "--decode-context-parallel-size 2"]),
    ("docs/guide.md", "--vllm-version 0.15", ["85.47 GiB", "94.97 GiB", "70.71 GiB", "70272", "17.16 GiB"]),
    ("docs/guide.md", "diagnose vllm.log --model", ["kv_cache_too_small"]),
]

PROGRAM = re.compile(r"(?:^|&&\s*|;\s*|do\s+)((?:build/release/apps/cli/)?gpubudget\s.*)$")


def sh_blocks(text):
    """The logical lines (continuations joined) of every ```sh block."""
    lines, block, pending = [], False, ""
    for raw in text.splitlines():
        if raw.startswith("```"):
            block = raw.strip() == "```sh"
            continue
        if not block:
            continue
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        lines.append(line)
    return lines


def strip_comment(line):
    """The line without a trailing `# comment` (a '#' outside quotes after whitespace)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def doc_commands(source):
    """(document, shell command) for each gpubudget run the documents show."""
    out = []
    for doc in ("README.md", "docs/guide.md"):
        with open(os.path.join(source, doc), encoding="utf-8") as f:
            lines = sh_blocks(f.read())
        for line in lines:
            line = strip_comment(line)
            if line.startswith("for ") and "gpubudget" in line:
                out.append((doc, line))  # a loop: runs as written
                continue
            m = PROGRAM.search(line)
            if not m:
                continue
            command = m.group(1)
            command = re.sub(r"\s*\|\s*sudo tee .*$", " > /dev/null", command)
            # `[--format csv|json|svg]`: optional, each alternative; `--format table|csv|...` likewise.
            command = command.replace("[--format ", "--format ").replace("svg]", "svg")
            alternatives = re.search(r"--format (\w+(?:\|\w+)+)", command)
            if alternatives:
                for choice in alternatives.group(1).split("|"):
                    out.append((doc, command.replace(alternatives.group(0), f"--format {choice}")))
            else:
                out.append((doc, command))
    return out


def prepare(cli, source, work):
    """WORK_DIR with the files and programs the commands expect; returns the environment to run them in."""
    shutil.rmtree(work, ignore_errors=True)
    bin_dir = os.path.join(work, "bin")
    os.makedirs(os.path.join(work, "build/release/apps/cli"))
    os.makedirs(bin_dir)
    os.makedirs(os.path.join(work, "logs"))
    configs = os.path.join(source, "configs")
    # gpubudget: the CLI under test, with the placeholders filled in.
    wrapper = os.path.join(bin_dir, "gpubudget")
    with open(wrapper, "w") as f:
        f.write(f"""#!/usr/bin/env python3
import os, sys
args = []
for a in sys.argv[1:]:
    if a == "...":
        args += {shlex.split(INCIDENT_FIT)!r}
    elif a == "MODEL":
        args.append("nvidia/Kimi-K2.5-NVFP4")
    elif a == "GPU":
        args.append("rtx-pro-6000")
    else:
        args.append(a.replace("/usr/share/gpubudget/configs", {configs!r}))
os.execv({cli!r}, [{cli!r}, "--config-dir", {configs!r}] + args)
""")
    os.chmod(wrapper, 0o755)
    os.symlink(wrapper, os.path.join(work, "build/release/apps/cli/gpubudget"))
    with open(os.path.join(bin_dir, "nvidia-smi"), "w") as f:
        f.write("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559 MiB, 1 MiB, 9.0'\n")
    os.chmod(os.path.join(bin_dir, "nvidia-smi"), 0o755)
    os.symlink(configs, os.path.join(work, "configs"))  # `configs/vllm/0.17.json` as in a checkout
    log = os.path.join(source, "tests/data/logs/incident-kimi-k25-tp8.log")
    shutil.copy(log, os.path.join(work, "vllm.log"))
    shutil.copy(log, os.path.join(work, "logs/incident.log"))
    # The stand-in Hub: one config under every repository the documents fetch.
    hub_root = os.path.join(work, "hub")
    stand_in = os.path.join(configs, "models/Qwen__Qwen2.5-7B-Instruct/config.json")
    for repo in ("Qwen/Qwen2.5-Coder-32B-Instruct", "Qwen/Qwen3-8B"):
        os.makedirs(os.path.join(hub_root, repo))
        shutil.copy(stand_in, os.path.join(hub_root, repo, "config.json"))
    with open(os.path.join(hub_root, "Qwen/Qwen3-8B.hub.json"), "w") as f:
        f.write('{"revisions": {"refs/pr/12": "%s", "v1.0": "%s"}}' % ("1" * 40, "2" * 40))
    port_file = os.path.join(work, "hub.port")
    hub = subprocess.Popen([sys.executable, os.path.join(source, "tests/hub/fake_hub.py"), "--root", hub_root,
                            "--port-file", port_file])
    for _ in range(200):
        if os.path.exists(port_file):
            break
        time.sleep(0.05)
    hub_port = open(port_file).read().split()[0]
    env = {**os.environ, "PATH": bin_dir + ":" + os.environ["PATH"], "HF_ENDPOINT": f"http://127.0.0.1:{hub_port}",
           "HF_HOME": os.path.join(work, "hf"), "XDG_CACHE_HOME": os.path.join(work, "cache"), "NO_COLOR": "1",
           "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1"}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_TOKEN", None)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    # my-fleet.jsonl: the incident log's observation row.
    subprocess.run(["bash", "-c", "gpubudget diagnose vllm.log --model nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 "
                    "--emit-observation my-fleet.jsonl > /dev/null"], cwd=work, env=env, check=True)
    return env, hub


def written_file(command):
    """The file a command writes (`> FILE`, `-o FILE`), if any."""
    m = re.search(r"(?:>|-o)\s+([\w.\-/]+)\s*$", command) or re.search(r"-o\s+([\w.\-/]+)", command)
    return m.group(1) if m and m.group(1) != "/dev/null" else None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cli, source, work = map(os.path.abspath, sys.argv[1:])
    env, hub = prepare(cli, source, work)
    failures, ran = [], 0
    try:
        commands = doc_commands(source)
        for doc, command in commands:
            p = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                               timeout=300)
            ran += 1
            target = written_file(command)
            produced = p.stdout
            if target and os.path.exists(os.path.join(work, target)):
                produced += open(os.path.join(work, target), encoding="utf-8").read()
            where = f"{doc}: {command}"
            if p.returncode not in (0, 1):
                failures.append(f"{where}: exit {p.returncode}: {p.stderr.strip()[:500]}")
                continue
            if not produced.strip() and "completion" not in command:
                failures.append(f"{where}: printed nothing")
            if "error:" in p.stderr:
                failures.append(f"{where}: {p.stderr.strip()[:500]}")
            for claim_doc, contains, expected in CLAIMS:
                if claim_doc == doc and contains in command:
                    for text in expected:
                        if text not in p.stdout:
                            failures.append(f"{where}: the document says {text!r}; the output does not")
        for claim_doc, contains, _ in CLAIMS:
            if not any(doc == claim_doc and contains in command for doc, command in commands):
                failures.append(f"{claim_doc}: no command contains {contains!r} (a claim of this check)")
    finally:
        hub.terminate()
        hub.wait()
    print(f"ran {ran} commands of README.md and docs/guide.md")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
