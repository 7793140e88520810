"""Recording an orchestrator's steps as a run's tasks, through the engine's rules.

    recorder = Recorder(client, "pipeline-42")
    recorder.start([{"id": "plan"}, {"id": "implement", "after": ["plan"], "eval": "reviewer"}])
    with recorder.attempt("plan") as attempt:
        attempt.result = {"steps": 3}
    recorder.score("implement", evaluator="reviewer", score=0.9)

Every command carries an idempotency key made of the run, the task, the attempt's number and
the step: a command retried after a lost answer is recorded once. An orchestrator that crashes
and runs its steps again from the start sends the same keys: each attempt it had recorded is
answered back (`replayed`), and one that had ended is not ended again, though its time differs.
The keys are this process's count of attempts, so one run is recorded by one orchestrator at a
time.
"""

from __future__ import annotations

import functools
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from . import models
from .client import Client

P = ParamSpec("P")

ATTEMPT_ENDS = frozenset({"task-submitted", "stage-failed"})
U = TypeVar("U")


@dataclass
class Attempt:
    """What an attempt reports when it ends well: a one-line summary and a JSON result."""

    task: str
    number: int
    summary: str = ""
    result: Any = field(default_factory=dict)


def _json(value: Any) -> Any:
    """`value` as JSON holds it (what does not serialise becomes its text)."""
    return json.loads(json.dumps(value, default=str))


class Recorder:
    """Records one run's tasks from Python code: starts, ends (submitted or failed) and scores.

    `agent` is the identity recorded for each attempt (a retry reuses it)."""

    def __init__(self, client: Client, run: str, *, agent: str = "python") -> None:
        self.client = client
        self.run = run
        self.agent = agent
        self._attempts: Counter[str] = Counter()

    def _key(self, task: str, step: str) -> str:
        return f"{self.run}/{task}/{self._attempts[task]}/{step}"

    def start(
        self, tasks: Sequence[Mapping[str, Any]], *, workflow: str | None = None
    ) -> models.Recorded:
        """The run started with these tasks (each `{"id": ...}`, with `after`, `eval`, ...)."""
        return self.client.start_run(
            self.run, tasks, workflow=workflow, key=f"{self.run}/start-run"
        )

    @contextmanager
    def attempt(self, task: str) -> Iterator[Attempt]:
        """An attempt of `task`: started on entry, submitted with the `Attempt`'s summary and
        result on a normal exit, failed with the exception's words if one escapes (and the
        exception goes on)."""
        self._attempts[task] += 1
        attempt = Attempt(task, self._attempts[task])
        started = self.client.start_task(
            self.run, task, agent=self.agent, key=self._key(task, "start")
        )
        ended = started.replayed and self._ended(task, started)
        began = time.monotonic()

        def elapsed() -> int:
            return int((time.monotonic() - began) * 1000)

        try:
            yield attempt
        except Exception as e:
            if ended:
                raise
            self.client.fail_task(
                self.run,
                task,
                error=f"{type(e).__name__}: {e}",
                error_type="exception",
                duration_ms=elapsed(),
                key=self._key(task, "fail"),
            )
            raise
        if ended:
            return
        self.client.submit_task(
            self.run,
            task,
            summary=attempt.summary or f"{task} done",
            result=_json(attempt.result),
            duration_ms=elapsed(),
            key=self._key(task, "submit"),
        )

    def _ended(self, task: str, started: models.Recorded) -> bool:
        """Whether the attempt `started` recorded had ended (submitted or failed) in the log."""
        after = started.events[-1].seq + 1
        page = self.client.events(self.run, task=task, from_=after)
        return any(e.event.type in ATTEMPT_ENDS for e in page.events)

    def score(
        self,
        task: str,
        *,
        evaluator: str,
        score: float,
        dimensions: Mapping[str, float] | None = None,
        notes: str = "",
    ) -> models.Recorded:
        """An evaluator's verdict on `task`'s last attempt: the gate passes it, rescues it (a
        new attempt is due) or holds it for a person, by the run's threshold."""
        return self.client.score(
            self.run,
            task,
            evaluator=evaluator,
            score=score,
            dimensions=dimensions,
            notes=notes,
            key=self._key(task, f"score-{evaluator}"),
        )

    def finish(self) -> models.Recorded:
        """The run finished: its outcome recorded from its tasks'."""
        return self.client.finish(self.run, key=f"{self.run}/finish")

    def node(self, task: str, fn: Callable[P, U]) -> Callable[P, U]:
        """`fn` (a graph's node: state in, update out) recorded as an attempt of `task` each
        time it runs, its update as the attempt's result. It keeps `fn`'s signature, so a
        graph's types still check."""

        @functools.wraps(fn)
        def recorded(*args: P.args, **kwargs: P.kwargs) -> U:
            with self.attempt(task) as attempt:
                update = fn(*args, **kwargs)
                attempt.result = update
                keys = sorted(update) if isinstance(update, Mapping) else []
                attempt.summary = f"{task}: " + (", ".join(map(str, keys)) or "no update")
            return update

        return recorded
