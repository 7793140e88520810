"""Every resource of the API, once: what to send for it and how to read its answer.

`Client` and `AsyncClient` take each function here as a method (`_methods.py`), so the two
cannot differ in a name, a parameter or an answer's type; only how they send does.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import TypeAdapter

from . import models
from .tables import Audit, Calls, Cost, Events

T = TypeVar("T")


class _Keep:
    """A budget's bound left as it is (the default): `None` removes it."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the reading of its answer."""

    method: str
    path: str
    read: Callable[[bytes], T]
    query: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@functools.cache
def _model(kind: type[T]) -> Callable[[bytes], T]:
    # Built once per answer type: building an adapter (a `list[...]` one above all) costs far
    # more than reading an answer with it.
    adapter = TypeAdapter(kind)
    return adapter.validate_json


def _text(raw: bytes) -> str:
    return raw.decode()


def _segment(value: str) -> str:
    return quote(value, safe="")


def _query(**params: Any) -> dict[str, str]:
    """The parameters given, as the API spells them (`from_` is `from`; lists joined by commas;
    booleans as `true`)."""
    out: dict[str, str] = {}
    for name, value in params.items():
        if value is None:
            continue
        name = name.rstrip("_")
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, Mapping):
            out[name] = ",".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            out[name] = ",".join(str(v) for v in value)
        else:
            out[name] = str(value)
    return out


def _body(**fields: Any) -> dict[str, Any]:
    return {name.rstrip("_"): value for name, value in fields.items() if value is not None}


def _run(run: str) -> str:
    return f"/v1/runs/{_segment(run)}"


# Reading


def runs(
    *,
    status: str | None = None,
    outcome: str | None = None,
    workflow: str | None = None,
    limit: int | None = None,
) -> Call[list[models.Row]]:
    """The store's runs, newest first (`GET /v1/runs`): filtered by status word, outcome
    (succeeded, failed, paused) or workflow file."""
    return Call(
        "GET",
        "/v1/runs",
        _model(list[models.Row]),
        _query(status=status, outcome=outcome, workflow=workflow, limit=limit),
    )


def board(run: str, *, at: int | None = None) -> Call[models.BoardView]:
    """A run's board: each task's status, attempts and score, as it stands or as it stood after
    seq `at` (`GET /v1/runs/{run}`)."""
    return Call("GET", _run(run), _model(models.BoardView), _query(at=at))


def events(
    run: str,
    *,
    from_: int | None = None,
    to: int | None = None,
    task: str | None = None,
    kind: str | None = None,
) -> Call[Events]:
    """One page of a run's events (at most 10,000), each with its words; `next` is where the
    next page starts (`GET /v1/runs/{run}/events`). `Client.all_events` follows the pages."""
    return Call(
        "GET",
        f"{_run(run)}/events",
        _model(Events),
        _query(from_=from_, to=to, task=task, kind=kind),
    )


def task(run: str, task: str) -> Call[models.TaskView]:
    """A task's whole story: its board row, spec, every event about it with its words, and its
    model calls (`GET /v1/runs/{run}/tasks/{task}`)."""
    return Call("GET", f"{_run(run)}/tasks/{_segment(task)}", _model(models.TaskView))


def calls(
    run: str, task: str, *, attempt: int | None = None, turns: bool | None = None
) -> Call[Calls]:
    """A task's model calls with what each asked and was answered; with `turns=True`, each
    call's conversation as turns: those kept from earlier calls, those it added, and its answer
    (`GET /v1/runs/{run}/tasks/{task}/calls`)."""
    return Call(
        "GET",
        f"{_run(run)}/tasks/{_segment(task)}/calls",
        _model(Calls),
        _query(attempt=attempt, turns=turns),
    )


def audit(run: str) -> Call[Audit]:
    """Every evaluation decision of a run, with its score, threshold, dimensions and what it led
    to, and the decisions made outside the gate (`GET /v1/runs/{run}/audit`)."""
    return Call("GET", f"{_run(run)}/audit", _model(Audit))


def judges(
    *,
    runs: Sequence[str] | None = None,
    since: str | None = None,
    workflow: str | None = None,
    evaluator: str | None = None,
    threshold: float | None = None,
    weights: Mapping[str, float] | None = None,
) -> Call[models.JudgesReport]:
    """Each evaluator audited across runs: its agreement with people's decisions and with what
    happened next; `threshold` and `weights` ask what another gate would have decided
    (`GET /v1/judges`)."""
    return Call(
        "GET",
        "/v1/judges",
        _model(models.JudgesReport),
        _query(
            runs=runs,
            since=since,
            workflow=workflow,
            evaluator=evaluator,
            threshold=threshold,
            weights=weights,
        ),
    )


def review(*, runs: Sequence[str] | None = None) -> Call[list[models.Waiting]]:
    """The verdicts waiting for a person, oldest first (`GET /v1/review`)."""
    return Call("GET", "/v1/review", _model(list[models.Waiting]), _query(runs=runs))


def cost(run: str, *, by: str | None = None, at: int | None = None) -> Call[Cost]:
    """What a run's commands used and cost, by task, model, stage, attempt or call, with its
    budgets and what is left (`GET /v1/runs/{run}/cost`)."""
    return Call("GET", f"{_run(run)}/cost", _model(Cost), _query(by=by, at=at))


def diff(left: str, right: str) -> Call[models.DiffView]:
    """Two runs (each `RUN` or `RUN@SEQ`) compared task by task; a run and its rerun also by how
    each call was answered and where each attempt first diverged (`GET /v1/diff`)."""
    return Call("GET", "/v1/diff", _model(models.DiffView), _query(left=left, right=right))


def stack(run: str, *, at: int | None = None) -> Call[models.StackView]:
    """A run's stack of work: what is done, running, waiting and next (`GET /v1/runs/{run}/stack`)."""
    return Call("GET", f"{_run(run)}/stack", _model(models.StackView), _query(at=at))


def stages(run: str, *, at: int | None = None) -> Call[models.StagesView]:
    """Each stage's health and retry strategy (`GET /v1/runs/{run}/stages`)."""
    return Call("GET", f"{_run(run)}/stages", _model(models.StagesView), _query(at=at))


def timeline(run: str) -> Call[models.Timeline]:
    """A run over wall-clock time: a row per task with its bars and marks
    (`GET /v1/runs/{run}/timeline`)."""
    return Call("GET", f"{_run(run)}/timeline", _model(models.Timeline))


def verify(run: str) -> Call[models.Checked]:
    """A run's hash chain checked from its first event (`GET /v1/runs/{run}/verify`)."""
    return Call("GET", f"{_run(run)}/verify", _model(models.Checked))


def digest(run: str) -> Call[models.Digest]:
    """A run's head seq and chain hash (`GET /v1/runs/{run}/digest`)."""
    return Call("GET", f"{_run(run)}/digest", _model(models.Digest))


def export(run: str) -> Call[str]:
    """A run's events as JSON lines, as `runlog export` writes them (`GET /v1/runs/{run}/export`)."""
    return Call("GET", f"{_run(run)}/export", _text)


def blob(hash: str) -> Call[str]:
    """A large output, or a model call's request or answer, whole (`GET /v1/blobs/{hash}`)."""
    return Call("GET", f"/v1/blobs/{_segment(hash)}", _text)


def experiments() -> Call[list[models.ExperimentRow]]:
    """The store's experiments (`GET /v1/experiments`)."""
    return Call("GET", "/v1/experiments", _model(list[models.ExperimentRow]))


def experiment(name: str) -> Call[models.ExperimentView]:
    """An experiment's report: each variant against the runs it was tried on
    (`GET /v1/experiments/{name}`)."""
    return Call("GET", f"/v1/experiments/{_segment(name)}", _model(models.ExperimentView))


def openapi() -> Call[dict[str, Any]]:
    """The OpenAPI document the server serves (`GET /v1/openapi.json`)."""
    return Call("GET", "/v1/openapi.json", json.loads)


# Executing on the server


def execute(
    workflow: str, *, run: str | None = None, jobs: int | None = None
) -> Call[models.Executing]:
    """A run of `workflow` (a path on the server's host) executed by the server, which outlives
    this client (`POST /v1/runs`)."""
    return Call(
        "POST", "/v1/runs", _model(models.Executing), body=_body(workflow=workflow, run=run, jobs=jobs)
    )


def fork(run: str, *, at: int | None = None, as_: str | None = None) -> Call[models.Forked]:
    """A new run from the state after seq `at` (default: the head) (`POST /v1/runs/{run}/fork`)."""
    return Call("POST", f"{_run(run)}/fork", _model(models.Forked), body=_body(at=at, as_=as_))


def rerun(
    run: str,
    *,
    at: int | None = None,
    tasks: Sequence[str] | None = None,
    workflow: str | None = None,
    answers: str | None = None,
    as_: str | None = None,
) -> Call[models.Executing]:
    """The run executed again by the server, its model calls answered from its recording
    (`answers`: recorded, live, recorded-then-live) (`POST /v1/runs/{run}/rerun`)."""
    return Call(
        "POST",
        f"{_run(run)}/rerun",
        _model(models.Executing),
        body=_body(
            at=at,
            tasks=list(tasks) if tasks is not None else None,
            workflow=workflow,
            answers=answers,
            as_=as_,
        ),
    )


def resume(run: str) -> Call[models.Executing]:
    """An interrupted, crashed or paused run driven on by the server (`POST /v1/runs/{run}/resume`)."""
    return Call("POST", f"{_run(run)}/resume", _model(models.Executing), body={})


def interrupt(run: str) -> Call[models.Interrupting]:
    """A run the server executes stopped as Ctrl-C stops it (`POST /v1/runs/{run}/interrupt`)."""
    return Call("POST", f"{_run(run)}/interrupt", _model(models.Interrupting), body={})


def start_experiment(
    name: str,
    variants: Mapping[str, str],
    *,
    runs: Sequence[str] | None = None,
    since: str | None = None,
    workflow: str | None = None,
    outcome: str | None = None,
    suite: str | None = None,
    repeat: int | None = None,
    answers: str | None = None,
    max_cost_usd: float | None = None,
) -> Call[models.ExperimentStarted]:
    """An experiment: each variant (a workflow file on the server's host) rerun on the suite's
    runs, executed by the server (`POST /v1/experiments`)."""
    return Call(
        "POST",
        "/v1/experiments",
        _model(models.ExperimentStarted),
        body=_body(
            name=name,
            variants=dict(variants),
            runs=list(runs) if runs is not None else None,
            since=since,
            workflow=workflow,
            outcome=outcome,
            suite=suite,
            repeat=repeat,
            answers=answers,
            max_cost_usd=max_cost_usd,
        ),
    )


def set_budget(
    run: str,
    *,
    task: str | None = None,
    max_cost_usd: float | None = KEEP,
    max_tokens: int | None = KEEP,
    by: str | None = None,
) -> Call[models.Recorded]:
    """A run's budget (or `task`'s own) changed: a bound given sets it, `None` removes it, left
    out keeps it (`POST /v1/runs/{run}/budget`)."""
    body: dict[str, Any] = _body(task=task, by=by)
    if max_cost_usd is not KEEP:
        body["max_cost_usd"] = max_cost_usd
    if max_tokens is not KEEP:
        body["max_tokens"] = max_tokens
    return Call("POST", f"{_run(run)}/budget", _model(models.Recorded), body=body)


# Recording: commands through the engine's rules


def command(run: str, command: Mapping[str, Any], *, key: str | None = None) -> Call[models.Recorded]:
    """One command, as the API's commands resource takes it (`{"command": "approve", ...}`),
    through the engine's rules (`POST /v1/runs/{run}/commands`). With `key`, sending it again
    (a retry after a lost answer) is answered with what the first recorded, not recorded twice."""
    headers = {"Idempotency-Key": key} if key is not None else {}
    return Call(
        "POST", f"{_run(run)}/commands", _model(models.Recorded), body=dict(command), headers=headers
    )


def start_run(
    run: str,
    tasks: Sequence[Mapping[str, Any]],
    *,
    workflow: str | None = None,
    settings: Mapping[str, Any] | None = None,
    key: str | None = None,
) -> Call[models.Recorded]:
    """A run started with a workflow file's defaults and these tasks (each `{"id": ...}` with
    optional `after`, `eval`, ...), recorded by this client, not executed by the server."""
    body = _body(command="start-run", run=run, tasks=[dict(t) for t in tasks], workflow=workflow)
    if settings is not None:
        body["settings"] = dict(settings)
    return command(run, body, key=key)


def start_task(
    run: str,
    task: str,
    *,
    agent: str | None = None,
    worktree: str | None = None,
    key: str | None = None,
) -> Call[models.Recorded]:
    """An attempt of `task` started, by `agent` (a retry reuses the recorded agent)."""
    return command(
        run, {"command": "start-task", "task": task, "agent": agent, "worktree": worktree}, key=key
    )


def submit_task(
    run: str,
    task: str,
    *,
    summary: str,
    result: Any = None,
    duration_ms: int = 0,
    key: str | None = None,
) -> Call[models.Recorded]:
    """The attempt finished: what it said and its result (any JSON value)."""
    return command(
        run,
        {
            "command": "submit-task",
            "task": task,
            "summary": summary,
            "result": result if result is not None else {},
            "duration_ms": duration_ms,
        },
        key=key,
    )


def fail_task(
    run: str,
    task: str,
    *,
    error: str,
    error_type: str = "agent",
    duration_ms: int = 0,
    key: str | None = None,
) -> Call[models.Recorded]:
    """The attempt failed, with its error."""
    return command(
        run,
        {
            "command": "fail-stage",
            "task": task,
            "error": error,
            "error_type": error_type,
            "duration_ms": duration_ms,
        },
        key=key,
    )


def score(
    run: str,
    task: str,
    *,
    evaluator: str,
    score: float,
    dimensions: Mapping[str, float] | None = None,
    notes: str = "",
    key: str | None = None,
) -> Call[models.Recorded]:
    """An evaluator's verdict on the attempt: the gate decides from it as the runner's would."""
    return command(
        run,
        {
            "command": "score-eval",
            "task": task,
            "evaluator": evaluator,
            "score": score,
            "dimensions": dict(dimensions or {}),
            "notes": notes,
        },
        key=key,
    )


def approve(run: str, task: str, *, by: str, key: str | None = None) -> Call[models.Recorded]:
    """A person approves the task's attempt waiting for them."""
    return command(run, {"command": "approve", "task": task, "by": by}, key=key)


def reject(
    run: str, task: str, *, by: str, reason: str, reopen: bool = True, key: str | None = None
) -> Call[models.Recorded]:
    """A person rejects it: reopened for another attempt, or failed (`reopen=False`)."""
    return command(
        run,
        {"command": "reject", "task": task, "by": by, "reason": reason, "reopen": reopen},
        key=key,
    )


def rollback(
    run: str, to_seq: int, *, by: str, reason: str, key: str | None = None
) -> Call[models.Recorded]:
    """The run's state taken back to what it was after `to_seq`; the history stays."""
    return command(
        run,
        {"command": "rollback", "to_seq": to_seq, "by": by, "reason": reason},
        key=key,
    )


def finish(run: str, *, key: str | None = None) -> Call[models.Recorded]:
    """The run finished, every task having ended: its outcome is recorded (succeeded, failed)."""
    return command(run, {"command": "finish"}, key=key)
