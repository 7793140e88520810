"""The asyncio client: `AsyncClient(url, token=None, ca=None)`, the same methods as `Client`, awaited."""

from __future__ import annotations

import os
import asyncio
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx

from . import _calls, models
from ._calls import Call
from ._methods import asynchronous
from ._transport import Following, Server, answer, error, request
from .errors import StreamLagged
from .sse import Decoder
from .tables import Verdicts

T = TypeVar("T")


class AsyncClient:
    """A runlog server for asyncio code, reached over HTTP(S) or the store's Unix socket.

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
        self._http = httpx.AsyncClient(**self.server.options(timeout, httpx.AsyncHTTPTransport))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def send(self, call: Call[T]) -> T:
        """One call: its answer as its model, or `ApiError`."""
        return answer(call, await self._http.request(**request(call)))

    # Reading
    runs = asynchronous(_calls.runs)
    board = asynchronous(_calls.board)
    events = asynchronous(_calls.events)
    task = asynchronous(_calls.task)
    calls = asynchronous(_calls.calls)
    audit = asynchronous(_calls.audit)
    judges = asynchronous(_calls.judges)
    review = asynchronous(_calls.review)
    cost = asynchronous(_calls.cost)
    diff = asynchronous(_calls.diff)
    stack = asynchronous(_calls.stack)
    stages = asynchronous(_calls.stages)
    timeline = asynchronous(_calls.timeline)
    verify = asynchronous(_calls.verify)
    digest = asynchronous(_calls.digest)
    export = asynchronous(_calls.export)
    blob = asynchronous(_calls.blob)
    experiments = asynchronous(_calls.experiments)
    experiment = asynchronous(_calls.experiment)
    openapi = asynchronous(_calls.openapi)

    # Executing on the server
    execute = asynchronous(_calls.execute)
    fork = asynchronous(_calls.fork)
    rerun = asynchronous(_calls.rerun)
    resume = asynchronous(_calls.resume)
    interrupt = asynchronous(_calls.interrupt)
    start_experiment = asynchronous(_calls.start_experiment)
    set_budget = asynchronous(_calls.set_budget)

    # Recording through the engine's rules
    command = asynchronous(_calls.command)
    start_run = asynchronous(_calls.start_run)
    start_task = asynchronous(_calls.start_task)
    submit_task = asynchronous(_calls.submit_task)
    fail_task = asynchronous(_calls.fail_task)
    score = asynchronous(_calls.score)
    approve = asynchronous(_calls.approve)
    reject = asynchronous(_calls.reject)
    rollback = asynchronous(_calls.rollback)
    finish = asynchronous(_calls.finish)

    async def all_events(self, run: str, *, task: str | None = None, kind: str | None = None) -> AsyncIterator[models.Worded]:
        """Every event of a run, page after page."""
        start: int | None = None
        while True:
            page = await self.events(run, from_=start, task=task, kind=kind)
            for event in page.events:
                yield event
            if page.next is None:
                return
            start = page.next

    async def verdicts(self, runs: Sequence[str] | None = None) -> Verdicts:
        """Every evaluation decision of these runs (default: all the store's), each with its
        run: `.to_pandas()` makes them a table."""
        found = Verdicts()
        for run in runs if runs is not None else [r.run for r in await self.runs()]:
            found.extend((run, d) for d in (await self.audit(run)).audit.entries)
        return found

    def stream(self, run: str, *, from_: int | None = None, max_retries: int = 5) -> AsyncIterator[models.Worded]:
        """A run's events as they are appended, from seq `from_` (default: its first), without
        end: a dropped connection is resumed where it stopped."""
        return self._follow(Following(run, from_), max_retries)

    async def follow(self, run: str, *, from_: int | None = None, max_retries: int = 5) -> AsyncIterator[models.Worded]:
        """A run's events until it finishes or is interrupted; for a run that had finished,
        its history. A run that is interrupted is followed until it is resumed and ends."""
        began = await self.board(run)
        async for event in self._follow(Following(run, from_, began), max_retries):
            yield event

    async def _follow(self, state: Following, max_retries: int) -> AsyncIterator[models.Worded]:
        while not state.done:
            try:
                async with self._http.stream("GET", state.path, timeout=httpx.Timeout(None, connect=10.0), **state.request()) as response:
                    if response.status_code >= 400:
                        raise error("GET", state.path, response.status_code, await response.aread())
                    decoder = Decoder()
                    async for line in response.aiter_lines():
                        for message in decoder.feed(line):
                            yield state.read(message)
                            if state.done:
                                return
            except httpx.TransportError:
                pass
            wait = state.retry_after(max_retries)
            if wait is None:
                raise StreamLagged(f"the stream of run {state.run} closed {max_retries + 1} times in a row (last seq {state.last})")
            await asyncio.sleep(wait)
