"""The answers a notebook wants as tables: each has `to_pandas()` (pandas is the optional
`pandas` extra: `pip install 'runlog[pandas]'`).

Times are pandas timestamps in UTC (the API's milliseconds since the epoch); money is in USD.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, RootModel

from . import models

if TYPE_CHECKING:
    import pandas


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError(
            "to_pandas() needs pandas: pip install 'runlog[pandas]'"
        ) from e
    return pandas


def _frame(rows: Iterable[Mapping[str, Any]], columns: list[str], times: Iterable[str]) -> pandas.DataFrame:
    pd = _pandas()
    rows = list(rows)
    extra = sorted({c for r in rows for c in r} - set(columns))
    frame = pd.DataFrame(rows, columns=columns + extra)
    for column in times:
        frame[column] = pd.to_datetime(frame[column], unit="ms", utc=True)
    result: pandas.DataFrame = frame
    return result


def word(value: Any) -> str | None:
    """A union's variant in one word: a string variant as it is, a tagged object by its tag,
    an externally tagged one (`{"rescue": {...}}`) by its key."""
    if value is None:
        return None
    if isinstance(value, RootModel):
        return word(value.root)
    if isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json")
        for tag in ("type", "kind", "consequence", "part", "end"):
            if isinstance(dumped.get(tag), str):
                return str(dumped[tag])
        if len(dumped) == 1:
            return str(next(iter(dumped)))
        return type(value).__name__
    return str(getattr(value, "value", value))


VERDICT_COLUMNS = [
    "run",
    "seq",
    "at",
    "task",
    "attempt",
    "evaluator",
    "score",
    "threshold",
    "decision",
    "consequence",
    "rescues_before",
    "rolled_back",
    "cost_usd",
    "notes",
]
"""A verdict's columns (`Audit.to_pandas`, `Verdicts.to_pandas`), then `dimensions.NAME` for
each dimension any verdict scored."""


def verdict_row(run: str, d: models.WordedDecision | models.Waiting) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run": run,
        "seq": d.seq,
        "at": d.at,
        "task": d.task,
        "attempt": d.attempt,
        "evaluator": d.evaluator,
        "score": d.score,
        "threshold": d.threshold,
        "decision": word(d.decision),
        "consequence": word(d.consequence),
        "rescues_before": d.rescues_before,
        "rolled_back": d.rolled_back,
        "cost_usd": d.cost.cost_usd if d.cost is not None else None,
        "notes": d.notes,
    }
    for name, value in d.dimensions.items():
        row[f"dimensions.{name}"] = value
    return row


class Audit(models.AuditView):
    """A run's audit (`Client.audit`)."""

    def to_pandas(self) -> pandas.DataFrame:
        """A row per evaluation decision: `VERDICT_COLUMNS`, then `dimensions.NAME`."""
        return _frame(
            (verdict_row(self.run, d) for d in self.audit.entries), VERDICT_COLUMNS, ["at"]
        )


class Verdicts(list[tuple[str, models.WordedDecision]]):
    """Every verdict of many runs, each with its run (`Client.verdicts`)."""

    def to_pandas(self) -> pandas.DataFrame:
        """A row per verdict: `VERDICT_COLUMNS`, then `dimensions.NAME`."""
        return _frame((verdict_row(run, d) for run, d in self), VERDICT_COLUMNS, ["at"])


EVENT_COLUMNS = ["seq", "at", "kind", "task", "words"]
"""An event's columns (`Events.to_pandas`)."""


class Events(models.EventsPage):
    """A page of a run's events (`Client.events`; `Client.all_events` joins the pages)."""

    def to_pandas(self) -> pandas.DataFrame:
        """A row per event: `EVENT_COLUMNS` (`kind` as `runlog log` names it; `task` when the
        event is about one)."""
        return _frame(
            (
                {
                    "seq": e.seq,
                    "at": e.at,
                    "kind": e.event.type,
                    "task": _task_of(e.event),
                    "words": e.words,
                }
                for e in self.events
            ),
            EVENT_COLUMNS,
            ["at"],
        )


def _task_of(event: BaseModel) -> str | None:
    task = getattr(event, "task", None)
    return task if isinstance(task, str) else None


CALL_COLUMNS = [
    "seq",
    "task",
    "attempt",
    "n",
    "provider",
    "api",
    "model",
    "status",
    "end",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
    "first_byte_ms",
    "duration_ms",
    "streamed",
    "headline",
]
"""A model call's columns (`Calls.to_pandas`): `cached_tokens` are the input read from a cache."""


class Calls(models.CallsView):
    """A task's model calls (`Client.calls`)."""

    def to_pandas(self) -> pandas.DataFrame:
        """A row per call: `CALL_COLUMNS`."""
        return _frame(
            (
                {
                    "seq": c.seq,
                    "task": c.task,
                    "attempt": c.attempt,
                    "n": c.n,
                    "provider": c.provider,
                    "api": word(c.api),
                    "model": c.model,
                    "status": c.status,
                    "end": word(c.end),
                    "input_tokens": c.tokens.input,
                    "cached_tokens": c.tokens.cache_read,
                    "output_tokens": c.tokens.output,
                    "reasoning_tokens": c.tokens.reasoning,
                    "cost_usd": c.cost_usd,
                    "first_byte_ms": c.first_byte_ms,
                    "duration_ms": c.duration_ms,
                    "streamed": c.streamed,
                    "headline": c.headline,
                }
                for c in self.calls
            ),
            CALL_COLUMNS,
            [],
        )


COST_COLUMNS = [
    "key",
    "cost_usd",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "unpriced",
]
"""A cost row's columns (`Cost.to_pandas`): `key` is the task, model, stage or `TASK#ATTEMPT`
the cost was asked `by`."""


class Cost(models.CostView):
    """What a run cost (`Client.cost`)."""

    def to_pandas(self) -> pandas.DataFrame:
        """A row per key: `COST_COLUMNS`."""
        return _frame(
            (
                {
                    "key": r.key,
                    "cost_usd": r.cost_usd,
                    "input_tokens": r.tokens.input,
                    "cached_tokens": r.tokens.cache_read,
                    "output_tokens": r.tokens.output,
                    "reasoning_tokens": r.tokens.reasoning,
                    "unpriced": r.unpriced,
                }
                for r in self.rows
            ),
            COST_COLUMNS,
            [],
        )
