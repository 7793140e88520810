#!/usr/bin/env python3
"""Drive a run through `runlog serve`'s Unix socket with nothing but Python's standard library:
start a run, record an attempt of its task, wait for the task to wait for its evaluation
(pending-eval), and approve it as a person would.

    runlog serve &                       # in the store's directory (or --store DIR)
    python3 examples/approve_over_socket.py .runlog/api.sock my-run

Or over HTTPS, to `runlog serve --http ADDR --tls-cert cert.pem --tls-key key.pem
--token-file tokens`, trusting the CA that signed the server's certificate:

    RUNLOG_TOKEN=... python3 examples/approve_over_socket.py https://HOST:7700 my-run --ca ca.pem

Any language with HTTP over a Unix socket (or TCP, with `runlog serve --http`) does the same.
"""

import http.client
import json
import os
import socket
import ssl
import sys
import time


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over the store's Unix socket."""

    def __init__(self, path):
        super().__init__("runlog")
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


CA = None


def connect(server):
    """The store's socket, or an https:// server trusting the CA given with --ca."""
    if server.startswith("https://"):
        host = server[len("https://"):].rstrip("/")
        return http.client.HTTPSConnection(host, context=ssl.create_default_context(cafile=CA))
    return UnixHTTPConnection(server)


def call(sock, method, path, body=None):
    conn = connect(sock)
    payload = None if body is None else json.dumps(body)
    headers = {"Content-Type": "application/json"}
    if os.environ.get("RUNLOG_TOKEN"):
        headers["Authorization"] = f"Bearer {os.environ['RUNLOG_TOKEN']}"
    conn.request(method, path, body=payload, headers=headers)
    response = conn.getresponse()
    answer = json.loads(response.read() or b"null")
    conn.close()
    if response.status >= 400:
        raise SystemExit(f"{method} {path}: {response.status} {answer['error']} (hint: {answer.get('hint')})")
    return answer


def command(sock, run, body):
    return call(sock, "POST", f"/v1/runs/{run}/commands", body)


def status_of(sock, run, task):
    board = call(sock, "GET", f"/v1/runs/{run}")["board"]
    return next(row["status"] for row in board["rows"] if row["id"] == task)


def main():
    global CA
    sock, run = sys.argv[1], sys.argv[2]
    if "--ca" in sys.argv:
        CA = sys.argv[sys.argv.index("--ca") + 1]
    # The short form: a workflow file's defaults, tasks without commands (we do the work).
    command(sock, run, {"command": "start-run", "run": run,
                        "tasks": [{"id": "draft", "eval": "a reviewer"},
                                  {"id": "publish", "after": ["draft"]}]})
    command(sock, run, {"command": "start-task", "task": "draft", "agent": "py", "worktree": None})
    command(sock, run, {"command": "submit-task", "task": "draft", "summary": "drafted",
                        "result": {"words": 812}, "duration_ms": 1500})
    deadline = time.time() + 30
    while status_of(sock, run, "draft") != "pending-eval":
        if time.time() > deadline:
            raise SystemExit("draft never reached pending-eval")
        time.sleep(0.1)
    approved = command(sock, run, {"command": "approve", "task": "draft", "by": "python"})
    print(f"approved draft at seq {approved['head']}; publish is now {status_of(sock, run, 'publish')}")


if __name__ == "__main__":
    main()
