"""A live `runlog serve` for the client's tests: a store with the repository's fixture runs
imported and one run the server executed itself, served on its Unix socket (open to its owner)
and over HTTPS with a private CA and scoped tokens.

The runlog binary is `RUNLOG_BIN`, else the workspace's `target/debug/runlog` (`cargo build`
makes it); openssl makes the certificates.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import runlog

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures"


def runlog_bin() -> str:
    path = os.environ.get("RUNLOG_BIN") or str(REPO / "target" / "debug" / "runlog")
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"no runlog binary at {path}: run `cargo build` at the repository's root, or set RUNLOG_BIN",
            pytrace=False,
        )
    return path


@dataclass
class Served:
    """The server and what a test needs to reach it and check what it says."""

    store: Path
    workdir: Path
    socket: str
    url: str
    ca: str
    other_ca: str
    tokens: dict[str, str]
    executed: str
    bin: str

    def cli(self, *args: str) -> str:
        """`runlog --store STORE ARGS...` (the server owns the store: the CLI goes through it)."""
        done = subprocess.run(
            [self.bin, "--store", str(self.store), *args],
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise AssertionError(f"runlog {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout

    def cli_json(self, *args: str) -> object:
        return json.loads(self.cli(*args, "--json"))

    def client(self) -> runlog.Client:
        return runlog.Client(self.socket)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def make_certificates(dir: Path) -> None:
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=dir, check=True, capture_output=True)

    for name, subject in [("ca", "runlog client test CA"), ("other-ca", "another CA")]:
        openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-days", "30", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-subj", f"/CN={subject}",
        )
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1",
    )
    (dir / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "30", "-extfile", "san.ext", "-out", "server.pem",
    )


def wait_for(check: object, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except (OSError, httpx.TransportError, runlog.RunlogError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what} after {seconds} s")


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    bin = runlog_bin()
    if shutil.which("openssl") is None:
        pytest.fail("openssl makes the tests' certificates: apt-get install openssl", pytrace=False)
    root = tmp_path_factory.mktemp("served")
    # The workflows' commands write where they run: a copy, never the repository.
    workdir = root / "work"
    shutil.copytree(FIXTURES, workdir / "fixtures")
    store = root / "store"
    for log in sorted((FIXTURES / "runs").glob("*.jsonl")):
        subprocess.run([bin, "--store", str(store), "import", str(log)], check=True, capture_output=True)
    certs = root / "certs"
    certs.mkdir()
    make_certificates(certs)
    tokens = {"read": "reader-" + os.urandom(12).hex(), "steer": "steerer-" + os.urandom(12).hex()}
    (certs / "tokens").write_text("".join(f"py-{scope} {scope} {t}\n" for scope, t in tokens.items()))
    port = free_port()
    server = subprocess.Popen(
        [
            bin, "--store", str(store), "serve", "--http", f"127.0.0.1:{port}",
            "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
            "--token-file", str(certs / "tokens"),
        ],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    sock = str(store / "api.sock")
    try:
        wait_for(lambda: runlog.Client(sock).runs() is not None, "runlog serve's socket")
        with runlog.Client(sock) as client:
            executed = client.execute("fixtures/workflows/quickstart.toml", run="served-quickstart").run
        yield Served(
            store=store,
            workdir=workdir,
            socket=sock,
            url=f"https://127.0.0.1:{port}",
            ca=str(certs / "ca.pem"),
            other_ca=str(certs / "other-ca.pem"),
            tokens=tokens,
            executed=executed,
            bin=bin,
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
