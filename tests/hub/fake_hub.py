#!/usr/bin/env python3
"""A Hugging Face Hub stand-in on 127.0.0.1 for gpubudget's tests (tests/unit/hub_test.cpp, bench/).

Two servers: the "Hub" (127.0.0.1:P1) and its file "CDN" (named localhost:P2, so that it is another
host). The Hub answers as huggingface.co does, as far as gpubudget uses it:

  GET /api/models/ORG/NAME/revision/REV   {"id", "sha", "siblings": [{"rfilename"}]}
  GET /ORG/NAME/resolve/REV/FILE          *.safetensors: 302 to the CDN (X-Repo-Commit, X-Linked-Size,
                                          X-Linked-Etag); other files: a relative 307 to
                                          /ORG/NAME/resolve-cache/REV/FILE, which serves them
  errors                                  401/403/404 with X-Error-Code (RepoNotFound, RevisionNotFound,
                                          EntryNotFound, GatedRepo) and X-Error-Message

Repositories are the folders ROOT/ORG/NAME (files under them, recursively). ROOT/ORG/NAME.hub.json may
set behaviours: {"gated": true, "revisions": {"v1.0": SHA}, "api": "malformed" | "huge",
"range": "truncate" | "lie" | "ignore", "index_shard": NAME}. The commit of a repository is the SHA-1 of
its id. Every request waits --latency-ms first. GET /__requests (on the Hub) lists the requests both
servers saw: {"server", "path", "authorization", "range"}.

Usage: fake_hub.py --root ROOT --port-file FILE [--latency-ms N] [--token TOKEN]
"""

import argparse
import hashlib
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOG = []
LOG_LOCK = threading.Lock()
PORTS = {}


def commit_of(repo):
    return hashlib.sha1(repo.encode()).hexdigest()


def behaviours(repo):
    path = os.path.join(ARGS.root, repo + ".hub.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}


def repo_files(repo):
    base = os.path.join(ARGS.root, repo)
    out = []
    for folder, _, files in os.walk(base):
        for name in files:
            out.append(os.path.relpath(os.path.join(folder, name), base))
    return sorted(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_name = "hub"

    def log_message(self, *args):
        pass

    def record(self):
        with LOG_LOCK:
            LOG.append({"server": self.server_name, "path": self.path,
                        "authorization": self.headers.get("Authorization") is not None,
                        "range": self.headers.get("Range")})

    def send(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error(self, status, code, message, extra=None):
        headers = {"X-Error-Code": code, "X-Error-Message": message}
        headers.update(extra or {})
        self.send(status, json.dumps({"error": message}).encode(), headers)

    def authorized(self):
        return ARGS.token is not None and self.headers.get("Authorization") == "Bearer " + ARGS.token

    def repo_and_revision(self, org, name, revision):
        """(repo, commit) or None after answering the error."""
        repo = org + "/" + name
        if not os.path.isdir(os.path.join(ARGS.root, repo)):
            if self.headers.get("Authorization") is None:
                self.error(401, "RepoNotFound", "Repository not found")
            else:
                self.error(404, "RepoNotFound", "Repository not found")
            return None
        b = behaviours(repo)
        commit = commit_of(repo)
        revisions = {"main": commit, commit: commit}
        revisions.update(b.get("revisions", {}))
        revisions.update({sha: sha for sha in b.get("revisions", {}).values()})
        if revision not in revisions:
            self.error(404, "RevisionNotFound", "Invalid rev id: " + revision)
            return None
        return repo, revisions[revision]

    def serve_file(self, path, headers, mode=None):
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            wanted = self.headers.get("Range")
            if wanted is None or mode == "ignore":
                self.send_response(200)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                remaining = size
                while remaining > 0:
                    chunk = f.read(min(remaining, 1 << 20))
                    try:
                        self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    remaining -= len(chunk)
                return
            begin, end = wanted.replace("bytes=", "").split("-")
            begin = int(begin)
            end = min(int(end), size - 1)
            if begin >= size:
                self.send(416, b"", {"Content-Range": "bytes */%d" % size})
                return
            f.seek(begin)
            body = f.read(end - begin + 1)
        total = size
        if mode == "lie":
            total = max(end + 1, size // 2)  # states a smaller file than the header needs
        self.send_response(206)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Range", "bytes %d-%d/%d" % (begin, end, total))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "truncate":
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        time.sleep(ARGS.latency_ms / 1000.0)
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if self.server_name == "cdn":
            return self.cdn(parts)
        if parts == ["__requests"]:
            with LOG_LOCK:
                return self.send(200, json.dumps(LOG).encode())
        if len(parts) >= 6 and parts[0] == "api" and parts[1] == "models" and parts[4] == "revision":
            return self.model_info(parts[2], parts[3], "/".join(parts[5:]))
        if len(parts) >= 5 and parts[2] in ("resolve", "resolve-cache"):
            return self.resolve(parts[0], parts[1], parts[3], "/".join(parts[4:]), parts[2] == "resolve-cache")
        self.error(404, "NotFound", "no such endpoint")

    do_HEAD = do_GET

    def model_info(self, org, name, revision):
        found = self.repo_and_revision(org, name, revision)
        if found is None:
            return
        repo, commit = found
        b = behaviours(repo)
        if b.get("api") == "malformed":
            return self.send(200, b"<html>not json")
        if b.get("api") == "huge":
            return self.send(200, b" " * (70 << 20))
        info = {"id": repo, "sha": commit, "private": False, "gated": "manual" if b.get("gated") else False,
                "siblings": [{"rfilename": f} for f in repo_files(repo)]}
        self.send(200, json.dumps(info).encode())

    def resolve(self, org, name, revision, file, cached):
        found = self.repo_and_revision(org, name, revision)
        if found is None:
            return
        repo, commit = found
        b = behaviours(repo)
        if b.get("gated") and not self.authorized():
            status = 403 if self.headers.get("Authorization") else 401
            return self.error(status, "GatedRepo", "Access to model %s is restricted." % repo)
        path = os.path.join(ARGS.root, repo, file)
        if not os.path.isfile(path):
            return self.error(404, "EntryNotFound", "Entry not found", {"X-Repo-Commit": commit})
        etag = '"%s"' % hashlib.sha1((repo + file).encode()).hexdigest()
        if file.endswith(".safetensors"):
            location = "http://localhost:%d/cdn/%s/%s?sig=%s" % (PORTS["cdn"], repo, urllib.parse.quote(file),
                                                                 commit[:8])
            return self.send(302, b"", {"Location": location, "X-Repo-Commit": commit, "ETag": etag,
                                        "X-Linked-Etag": etag, "X-Linked-Size": str(os.path.getsize(path))})
        if not cached:
            return self.send(307, b"", {"Location": "/%s/resolve-cache/%s/%s" % (repo, commit, urllib.parse.quote(file)),
                                        "X-Repo-Commit": commit})
        self.serve_file(path, {"X-Repo-Commit": commit, "ETag": etag})

    def cdn(self, parts):
        if len(parts) < 4 or parts[0] != "cdn":
            return self.error(404, "NotFound", "no such object")
        repo = parts[1] + "/" + parts[2]
        path = os.path.join(ARGS.root, repo, "/".join(parts[3:]))
        if not os.path.isfile(path):
            return self.error(404, "NotFound", "no such object")
        self.serve_file(path, {}, behaviours(repo).get("range"))


class CdnHandler(Handler):
    server_name = "cdn"


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # gpubudget opens up to 64 connections at once
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hung up early (a cut range, an oversized answer) is expected


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument("--token")
    ARGS = parser.parse_args()
    hub = Server(("127.0.0.1", 0), Handler)
    cdn = Server(("127.0.0.1", 0), CdnHandler)
    PORTS["hub"], PORTS["cdn"] = hub.server_address[1], cdn.server_address[1]
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write("%d %d\n" % (PORTS["hub"], PORTS["cdn"]))
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    hub.serve_forever()


if __name__ == "__main__":
    main()
