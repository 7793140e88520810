"""The client: `Client(url, token=None, ca=None)`, one method per resource of the API."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx

from . import _calls, models
from ._calls import Call
from ._methods import sync
from ._transport import Following, Server, answer, error, request
from .errors import StreamLagged
from .sse import Decoder
from .tables import Verdicts

T = TypeVar("T")


class Client:
    """A runlog server, reached over HTTP(S) or the store's Unix socket.

    `url`: `https://HOST:PORT`, `http://127.0.0.1:PORT`, or the socket's path (default:
    `RUNLOG_URL`, else `.runlog/api.sock`). `token`: the bearer token (default: `RUNLOG_TOKEN`).
    `ca`: the CA file that signed the server's certificate; `cert` and `key`: a client
    certificate. Every error the server answers is raised as `runlog.ApiError`.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        ca: str | os.PathLike[str] | None = None,
        *,
        cert: str | os.PathLike[str] | None = None,
        key: str | os.PathLike[str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.server = Server.of(url, token, ca, cert, key)
        self._http = httpx.Client(**self.server.options(timeout, httpx.HTTPTransport))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def send(self, call: Call[T]) -> T:
        """One call: its answer as its model, or `ApiError`."""
        return answer(call, self._http.request(**request(call)))

    # Reading
    runs = sync(_calls.runs)
    board = sync(_calls.board)
    events = sync(_calls.events)
    task = sync(_calls.task)
    calls = sync(_calls.calls)
    audit = sync(_calls.audit)
    judges = sync(_calls.judges)
    review = sync(_calls.review)
    cost = sync(_calls.cost)
    diff = sync(_calls.diff)
    stack = sync(_calls.stack)
    stages = sync(_calls.stages)
    timeline = sync(_calls.timeline)
    verify = sync(_calls.verify)
    digest = sync(_calls.digest)
    export = sync(_calls.export)
    blob = sync(_calls.blob)
    experiments = sync(_calls.experiments)
    experiment = sync(_calls.experiment)
    openapi = sync(_calls.openapi)

    # Executing on the server
    execute = sync(_calls.execute)
    fork = sync(_calls.fork)
    rerun = sync(_calls.rerun)
    resume = sync(_calls.resume)
    interrupt = sync(_calls.interrupt)
    start_experiment = sync(_calls.start_experiment)
    set_budget = sync(_calls.set_budget)

    # Recording through the engine's rules
    command = sync(_calls.command)
    start_run = sync(_calls.start_run)
    start_task = sync(_calls.start_task)
    submit_task = sync(_calls.submit_task)
    fail_task = sync(_calls.fail_task)
    score = sync(_calls.score)
    approve = sync(_calls.approve)
    reject = sync(_calls.reject)
    rollback = sync(_calls.rollback)
    finish = sync(_calls.finish)

    def all_events(self, run: str, *, task: str | None = None, kind: str | None = None) -> Iterator[models.Worded]:
        """Every event of a run, page after page."""
        start: int | None = None
        while True:
            page = self.events(run, from_=start, task=task, kind=kind)
            yield from page.events
            if page.next is None:
                return
            start = page.next

    def verdicts(self, runs: Sequence[str] | None = None) -> Verdicts:
        """Every evaluation decision of these runs (default: all the store's), each with its
        run: `.to_pandas()` makes them a table."""
        found = Verdicts()
        for run in runs if runs is not None else [r.run for r in self.runs()]:
            found.extend((run, d) for d in self.audit(run).audit.entries)
        return found

    def stream(self, run: str, *, from_: int | None = None, max_retries: int = 5) -> Iterator[models.Worded]:
        """A run's events as they are appended, from seq `from_` (default: its first), without
        end: a dropped connection is resumed where it stopped."""
        return self._follow(Following(run, from_), max_retries)

    def follow(self, run: str, *, from_: int | None = None, max_retries: int = 5) -> Iterator[models.Worded]:
        """A run's events until it finishes or is interrupted; for a run that had finished,
        its history. A run that is interrupted is followed until it is resumed and ends."""
        began = self.board(run)
        return self._follow(Following(run, from_, began), max_retries)

    def _follow(self, state: Following, max_retries: int) -> Iterator[models.Worded]:
        while not state.done:
            try:
                with self._http.stream("GET", state.path, timeout=httpx.Timeout(None, connect=10.0), **state.request()) as response:
                    if response.status_code >= 400:
                        raise error("GET", state.path, response.status_code, response.read())
                    decoder = Decoder()
                    for line in response.iter_lines():
                        for message in decoder.feed(line):
                            yield state.read(message)
                            if state.done:
                                return
            except httpx.TransportError:
                pass
            wait = state.retry_after(max_retries)
            if wait is None:
                raise StreamLagged(f"the stream of run {state.run} closed {max_retries + 1} times in a row (last seq {state.last})")
            time.sleep(wait)
