"""What the sync and async clients share: where the server is and how to reach it, what a
call sends, how an answer or an error is read, and where a run's stream stands."""

from __future__ import annotations

import json
import os
import ssl
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from . import models
from ._calls import Call, _run
from .errors import ApiError
from .sse import Message

T = TypeVar("T")

DEFAULT_SOCKET = os.path.join(".runlog", "api.sock")
"""Where `runlog serve` listens by default, in the store's directory."""

RUN_ENDS = frozenset({"run-finished", "run-interrupted"})


@dataclass(frozen=True)
class Server:
    """How to reach a server: its base URL, the socket when it is one, the TLS context."""

    base_url: str
    socket: str | None
    verify: ssl.SSLContext | bool
    headers: dict[str, str]

    @classmethod
    def of(
        cls,
        url: str | None,
        token: str | None,
        ca: str | os.PathLike[str] | None,
        cert: str | os.PathLike[str] | None,
        key: str | os.PathLike[str] | None,
    ) -> Server:
        """`url`: `http(s)://HOST:PORT`, or the path of the store's socket (`unix:PATH` too);
        by default `RUNLOG_URL`, else `.runlog/api.sock`. `token`: by default `RUNLOG_TOKEN`.
        `ca`: the CA file that signed the server's certificate (else the system's). `cert` and
        `key`: a client certificate, for a server that asks for one."""
        url = url or os.environ.get("RUNLOG_URL") or DEFAULT_SOCKET
        token = token if token is not None else os.environ.get("RUNLOG_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if url.startswith(("http://", "https://")):
            context: ssl.SSLContext | bool = True
            if url.startswith("https://"):
                context = ssl.create_default_context(cafile=os.fspath(ca) if ca else None)
                if cert is not None:
                    context.load_cert_chain(os.fspath(cert), os.fspath(key) if key else None)
            return cls(url.rstrip("/"), None, context, headers)
        path = url[len("unix:") :] if url.startswith("unix:") else url
        return cls("http://runlog", path, True, headers)

    def options(self, timeout: float, transport: Callable[..., Any]) -> dict[str, Any]:
        """The arguments httpx's clients take for this server; `transport` makes the Unix
        socket's (httpx's sync or async transport class)."""
        return {
            "base_url": self.base_url,
            "headers": self.headers,
            "verify": self.verify,
            "timeout": httpx.Timeout(timeout, connect=10.0),
            "transport": transport(uds=self.socket) if self.socket else None,
        }


def request(call: Call[Any]) -> dict[str, Any]:
    """A call as httpx's `request` takes it."""
    args: dict[str, Any] = {
        "method": call.method,
        "url": call.path,
        "params": dict(call.query),
        "headers": dict(call.headers),
    }
    if call.body is not None:
        args["json"] = call.body
    return args


def error(method: str, path: str, status: int, content: bytes) -> ApiError:
    """The server's `{"error", "hint"}`, or its raw words when it sent something else."""
    try:
        body = json.loads(content)
        return ApiError(status, str(body["error"]), body.get("hint"), method=method, path=path)
    except (ValueError, KeyError, TypeError):
        text = content.decode(errors="replace").strip() or httpx.codes.get_reason_phrase(status)
        return ApiError(status, text, None, method=method, path=path)


def answer(call: Call[T], response: httpx.Response) -> T:
    """The answer read as its model, or the server's error raised."""
    if response.status_code >= 400:
        raise error(call.method, call.path, response.status_code, response.content)
    return call.read(response.content)


@dataclass
class Following:
    """Where a run's event stream stands: the last seq seen (sent back as `Last-Event-ID` when
    reconnecting, so nothing is missed or seen twice) and, when following to the run's end,
    the run's board when following began: a run that had finished ends with its history; any
    other (running, or interrupted or forked and about to be resumed, as a server does with a
    run it executes) ends with its next `run-finished` or `run-interrupted`."""

    run: str
    start: int | None
    began: models.BoardView | None = None
    last: str | None = None
    done: bool = False
    failures: int = field(default=0)

    def __post_init__(self) -> None:
        if self._history_only() and self.began is not None:
            self.done = (self.start or 1) > self.began.seq

    def _history_only(self) -> bool:
        """Following a run that had finished when it began: its history is all there is."""
        return self.began is not None and self.began.status == "finished"

    @property
    def path(self) -> str:
        return f"{_run(self.run)}/stream"

    def request(self) -> dict[str, Any]:
        if self.last is not None:
            return {"headers": {"Last-Event-ID": self.last}, "params": {}}
        params = {"from": str(self.start)} if self.start is not None else {}
        return {"headers": {}, "params": params}

    def read(self, message: Message) -> models.Worded:
        event = models.Worded.model_validate_json(message.data)
        self.last = message.id or str(event.seq)
        self.failures = 0
        began = self.began
        if began is not None:
            if self._history_only():
                self.done = event.seq >= began.seq
            else:
                self.done = event.event.type in RUN_ENDS and event.seq > began.seq
        return event

    def retry_after(self, max_failures: int) -> float | None:
        """Seconds to wait before reconnecting, or None when it is time to give up."""
        self.failures += 1
        if self.failures > max_failures:
            return None
        return min(0.2 * 2.0 ** (self.failures - 1), 5.0)
