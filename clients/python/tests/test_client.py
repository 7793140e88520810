"""The client against a live `runlog serve`: every method once, as a user would call it, each
answer checked against what the CLI says of the same store."""

from __future__ import annotations

import asyncio
import json
import ssl
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

import runlog
from runlog import models

from .conftest import REPO, Served, wait_for

DOCUMENT = REPO / "cli" / "src" / "server" / "api" / "openapi.json"

# Each route of the API and the method that reaches it.
ROUTES = {
    ("get", "/v1/runs"): "runs",
    ("post", "/v1/runs"): "execute",
    ("get", "/v1/runs/{run}"): "board",
    ("get", "/v1/runs/{run}/events"): "events",
    ("get", "/v1/runs/{run}/stream"): "stream",
    ("get", "/v1/runs/{run}/audit"): "audit",
    ("get", "/v1/judges"): "judges",
    ("get", "/v1/review"): "review",
    ("get", "/v1/experiments"): "experiments",
    ("post", "/v1/experiments"): "start_experiment",
    ("get", "/v1/experiments/{name}"): "experiment",
    ("get", "/v1/runs/{run}/stack"): "stack",
    ("get", "/v1/runs/{run}/stages"): "stages",
    ("get", "/v1/runs/{run}/verify"): "verify",
    ("get", "/v1/runs/{run}/digest"): "digest",
    ("get", "/v1/runs/{run}/export"): "export",
    ("get", "/v1/diff"): "diff",
    ("get", "/v1/blobs/{hash}"): "blob",
    ("get", "/v1/runs/{run}/tasks/{task}"): "task",
    ("get", "/v1/runs/{run}/tasks/{task}/calls"): "calls",
    ("get", "/v1/runs/{run}/timeline"): "timeline",
    ("post", "/v1/runs/{run}/fork"): "fork",
    ("post", "/v1/runs/{run}/rerun"): "rerun",
    ("post", "/v1/runs/{run}/resume"): "resume",
    ("post", "/v1/runs/{run}/interrupt"): "interrupt",
    ("get", "/v1/runs/{run}/cost"): "cost",
    ("post", "/v1/runs/{run}/budget"): "set_budget",
    ("post", "/v1/runs/{run}/commands"): "command",
    ("get", "/v1/openapi.json"): "openapi",
}


def test_every_route_of_the_api_has_a_method_on_both_clients() -> None:
    document = json.loads(DOCUMENT.read_text())
    routes = {
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "delete", "patch")
    }
    assert routes == set(ROUTES), "a route of the API has no method here, or a method no route"
    for name in ROUTES.values():
        assert callable(getattr(runlog.Client, name)), name
        assert callable(getattr(runlog.AsyncClient, name)), name


def test_reading_a_stores_history(served: Served) -> None:
    with served.client() as c:
        runs = c.runs()
        assert {r.run for r in runs} >= {"quickstart", "claude", "agent-costs", served.executed}
        failed = {r.run for r in c.runs(outcome="failed")}
        assert failed == {"seed-001-eval-gate", "seed-002-supervisor"}

        board = c.board("quickstart")
        assert board.seq == 50
        assert {row.id: row.status for row in board.board.rows} == {
            row["id"]: row["status"] for row in served.cli_json("status", "quickstart")["board"]["rows"]  # type: ignore[index]
        }
        earlier = c.board("quickstart", at=10)
        assert earlier.seq == 10

        page = c.events("quickstart", kind="eval-scored")
        assert page.events and all(e.event.type == "eval-scored" for e in page.events)
        every = list(c.all_events("quickstart"))
        assert [e.seq for e in every] == list(range(1, 51))
        assert isinstance(every[0].event, models.RunStarted)

        story = c.task("quickstart", "implement")
        assert story.task is not None and story.task.attempt == 2
        calls = c.calls("claude", "claude", turns=True)
        assert len(calls.calls) == 2 and calls.calls[1].turns is not None
        assert calls.calls[1].turns.kept > 0

        audit = c.audit("quickstart")
        assert [e.score for e in audit.audit.entries] == [0.55, 0.86, 0.86, 0.86][: len(audit.audit.entries)]
        judges = c.judges(runs=["quickstart", "seed-001-eval-gate"])
        assert judges.runs == 2 and judges.verdicts > 0
        assert isinstance(c.review(), list)
        cost = c.cost("agent-costs", by="task")
        assert cost.total.cost_usd == pytest.approx(0.15215)
        assert c.stack("quickstart").run == "quickstart"
        assert c.stages("quickstart").run == "quickstart"
        assert c.timeline("quickstart").rows
        checked = c.verify("quickstart")
        assert checked.ok and checked.head_seq == 50
        digest = c.digest("quickstart")
        assert digest.head_seq == 50 and len(digest.head_hash) == 64
        lines = c.export("quickstart").splitlines()
        assert len(lines) >= 50
        diff = c.diff("quickstart@10", "quickstart")
        changed = {d.task: d.status for d in diff.tasks}
        assert changed["release"] is not None
        request = c.calls("claude", "claude").calls[0].request
        assert request is not None
        sent = json.loads(c.blob(request.blob))
        assert sent["model"].startswith("claude") and len(sent["messages"]) >= 1
        assert isinstance(c.experiments(), list)
        assert c.openapi()["openapi"].startswith("3.1")


def test_a_run_the_server_executes_is_followed_to_its_end(served: Served) -> None:
    with served.client() as c:
        seen = list(c.follow(served.executed))
    assert seen[0].seq == 1 and seen[0].event.type == "run-started"
    assert seen[-1].event.type == "run-finished"
    assert [e.seq for e in seen] == list(range(1, seen[-1].seq + 1))
    # What the stream delivered is what the log holds.
    logged = [json.loads(line) for line in served.cli("log", served.executed, "--json").splitlines()]
    assert [(e.seq, e.event.type) for e in seen] == [(e["seq"], e["event"]["type"]) for e in logged]


def test_the_stream_resumes_after_a_seq_and_goes_on_without_end(served: Served) -> None:
    with served.client() as c:
        stream = c.stream("quickstart", from_=45)
        got = [next(stream).seq for _ in range(6)]
    assert got == [45, 46, 47, 48, 49, 50]


def test_fork_rerun_budget_resume_and_interrupt(served: Served) -> None:
    with served.client() as c:
        c_done = list(c.follow(served.executed))
        assert c_done[-1].event.type == "run-finished"
        forked = c.fork(served.executed, at=5, as_="served-fork")
        assert (forked.run, forked.from_run, forked.at_seq) == ("served-fork", served.executed, 5)
        assert c.board("served-fork").board.rows == c.board(served.executed, at=5).board.rows
        # Its agents called no model through the gateway: nothing recorded to answer from.
        with pytest.raises(runlog.ApiError) as unrecorded:
            c.rerun(served.executed, as_="served-rerun")
        assert unrecorded.value.status == 400 and '"answers": "live"' in (unrecorded.value.hint or "")
        rerun = c.rerun(served.executed, answers="live", as_="served-rerun")
        assert rerun.run == "served-rerun" and rerun.from_run == served.executed
        ended = list(c.follow("served-rerun"))
        assert ended[-1].event.type == "run-finished"
        recorded = c.set_budget(served.executed, max_cost_usd=5.0, by="py")
        assert any(e.event.type == "budget-set" for e in recorded.events)
        removed = c.set_budget(served.executed, max_cost_usd=None, by="py")
        assert removed.head > recorded.head
        with pytest.raises(runlog.ApiError) as finished:
            c.resume(served.executed)
        assert finished.value.status == 409 and finished.value.hint
        with pytest.raises(runlog.ApiError) as idle:
            c.interrupt(served.executed)
        assert idle.value.status in (404, 409)


def test_an_experiment_is_started_and_reported(served: Served) -> None:
    with served.client() as c:
        started = c.start_experiment(
            "py-notes", {"tested": "fixtures/experiments/tested.toml"}, runs=["release-notes"]
        )
        assert started.experiment == "py-notes" and started.executing
        assert any(x.name == "py-notes" for x in c.experiments())

        def reported() -> bool:
            progress = c.experiment("py-notes").progress
            return progress.ended == progress.total

        wait_for(reported, "the experiment's reruns to end", seconds=120)
        view = c.experiment("py-notes")
        assert view.name == "py-notes" and view.progress.total == 1
        assert [v.name for v in view.variants] == ["base", "tested"]
    shown = served.cli_json("experiment", "show", "py-notes")
    assert view.model_dump(mode="json") == shown


def key() -> str:
    return f"py-{uuid.uuid4()}"


def test_recording_through_the_engines_rules_with_idempotency_keys(served: Served) -> None:
    run = "py-recorded"
    with served.client() as c:
        k = key()
        plan: list[dict[str, Any]] = [{"id": "draft", "eval": "a reviewer"}, {"id": "publish", "after": ["draft"]}, {"id": "notes"}]
        # Every verdict waits for a person before the gate's decision takes effect.
        started = c.start_run(run, plan, settings={"review": "all"}, key=k)
        again = c.start_run(run, plan, settings={"review": "all"}, key=k)
        # The retry is answered with what the first recorded, and records nothing.
        assert [e.seq for e in again.events] == [e.seq for e in started.events]
        assert again.head == started.head
        assert again.replayed and not started.replayed
        assert started.events[-1].event.type == "command-keyed"
        with pytest.raises(runlog.ApiError) as reused:
            c.start_task(run, "draft", agent="py", key=k)
        assert reused.value.status == 422 and "another command" in reused.value.error
        assert reused.value.hint

        def status(task: str) -> str:
            return {r.id: r.status.value for r in c.board(run).board.rows}[task]

        c.start_task(run, "draft", agent="py", key=key())
        c.submit_task(run, "draft", summary="drafted", result={"words": 812}, duration_ms=1500, key=key())
        scored = c.score(run, "draft", evaluator="py-judge", score=0.4, dimensions={"clarity": 0.4}, key=key())
        assert any(e.event.type == "eval-scored" for e in scored.events)
        waiting = c.review(runs=[run])
        assert [(w.run, w.task, w.score) for w in waiting] == [(run, "draft", 0.4)]
        c.reject(run, "draft", by="py", reason="too short", reopen=True, key=key())
        assert status("draft") == "open"
        c.start_task(run, "draft", key=key())
        c.submit_task(run, "draft", summary="drafted again", key=key())
        c.score(run, "draft", evaluator="py-judge", score=0.9, key=key())
        assert status("draft") == "pending-eval"
        c.approve(run, "draft", by="py", key=key())
        assert status("draft") == "done" and c.review(runs=[run]) == []
        c.start_task(run, "notes", agent="py", key=key())
        failed = c.fail_task(run, "notes", error="the model timed out", error_type="timeout", key=key())
        assert any(e.event.type == "stage-failed" for e in failed.events)
        head = c.digest(run).head_seq
        rolled = c.rollback(run, 3, by="py", reason="start over", key=key())
        assert rolled.head > head
        assert status("draft") == "open"
        with pytest.raises(runlog.ApiError) as refused:
            c.reject(run, "publish", by="py", reason="not started", key=key())
        assert refused.value.status == 409
        posted = c.command(run, {"command": "post-message", "task": None, "from": "py", "text": "hello"})
        assert posted.events[0].event.type == "message-posted"
    verified = served.cli("verify", run)
    assert "ok" in verified


def test_errors_carry_the_servers_status_error_and_hint(served: Served) -> None:
    with served.client() as c:
        with pytest.raises(runlog.ApiError) as missing:
            c.board("no-such-run")
    assert missing.value.status == 404
    assert "no-such-run" in missing.value.error
    assert missing.value.hint and "GET /v1/runs" in missing.value.hint
    assert "404" in str(missing.value) and "hint:" in str(missing.value)


def test_https_with_a_private_ca_and_tokens(served: Served) -> None:
    with runlog.Client(served.url, token=served.tokens["read"], ca=served.ca) as c:
        assert c.board("quickstart").seq == 50
        with pytest.raises(runlog.ApiError) as scope:
            c.approve("quickstart", "implement", by="py")
        assert scope.value.status == 403 and scope.value.hint
    with runlog.Client(served.url, ca=served.ca) as anonymous:
        with pytest.raises(runlog.ApiError) as unauthorized:
            anonymous.runs()
    assert unauthorized.value.status == 401 and unauthorized.value.hint
    with runlog.Client(served.url, token="not-a-token-of-this-server", ca=served.ca) as wrong:
        with pytest.raises(runlog.ApiError) as bad:
            wrong.runs()
    assert bad.value.status == 401
    # A server whose certificate the given CA did not sign is refused before anything is sent.
    with runlog.Client(served.url, token=served.tokens["read"], ca=served.other_ca) as untrusted:
        with pytest.raises(httpx.ConnectError) as refused:
            untrusted.runs()
    assert isinstance(refused.value.__context__, ssl.SSLCertVerificationError) or "CERTIFICATE" in str(
        refused.value
    ).upper()


def test_the_async_client_reads_follows_and_records(served: Served) -> None:
    async def main() -> None:
        async with runlog.AsyncClient(served.url, token=served.tokens["steer"], ca=served.ca) as c:
            board, audit = await asyncio.gather(c.board("quickstart"), c.audit("quickstart"))
            assert board.seq == 50 and audit.audit.entries
            events = [e async for e in c.all_events("quickstart")]
            assert len(events) == 50
            # A run that is not running any more: its history, to its head.
            followed = [e async for e in c.follow(served.executed)]
            assert "run-finished" in [e.event.type for e in followed]
            assert followed[-1].seq == (await c.digest(served.executed)).head_seq
            run = "py-async"
            k = key()
            first, second = await asyncio.gather(
                c.start_run(run, [{"id": "a"}], key=k), c.start_run(run, [{"id": "a"}], key=k), return_exceptions=True
            )
            # Sent twice at once: one records, the other gets the same events back.
            assert not isinstance(first, BaseException) and not isinstance(second, BaseException)
            assert [e.seq for e in first.events] == [e.seq for e in second.events]
            with pytest.raises(runlog.ApiError) as missing:
                await c.task("quickstart", "no-such-task")
            assert missing.value.status == 404

    asyncio.run(main())


def test_tables_match_the_cli(served: Served) -> None:
    pd = pytest.importorskip("pandas")
    with served.client() as c:
        verdicts = c.verdicts(["quickstart", "seed-001-eval-gate"]).to_pandas()
        audit = served.cli_json("audit", "quickstart")
        entries: list[dict[str, Any]] = audit["audit"]["entries"]  # type: ignore[index]
        mine = verdicts[verdicts.run == "quickstart"]
        assert list(mine.columns[: len(runlog.tables.VERDICT_COLUMNS)]) == runlog.tables.VERDICT_COLUMNS
        assert list(mine.seq) == [e["seq"] for e in entries]
        assert list(mine.score) == [e["score"] for e in entries]
        assert list(mine["dimensions.correctness"]) == [e["dimensions"]["correctness"] for e in entries]
        assert list(mine["at"]) == [pd.Timestamp(e["at"], unit="ms", tz="UTC") for e in entries]
        assert list(mine.decision) == [next(iter(e["decision"])) if isinstance(e["decision"], dict) else e["decision"] for e in entries]

        calls = c.calls("claude", "claude").to_pandas()
        shown = served.cli_json("show", "claude", "claude", "--calls")["calls"]  # type: ignore[index]
        assert list(calls.columns) == runlog.tables.CALL_COLUMNS
        assert list(calls.input_tokens) == [x["tokens"]["input"] for x in shown]
        assert list(calls.cost_usd) == [x["cost_usd"] for x in shown]
        assert list(calls.end) == [x["end"]["end"] for x in shown]

        cost = c.cost("agent-costs", by="model").to_pandas()
        rows = served.cli_json("cost", "agent-costs", "--by", "model")["rows"]  # type: ignore[index]
        assert list(cost.columns) == runlog.tables.COST_COLUMNS
        assert list(cost.key) == [r["key"] for r in rows]
        assert list(cost.cost_usd) == [r["cost_usd"] for r in rows]
        assert list(cost.cached_tokens) == [r["tokens"]["cache_read"] for r in rows]

        events = c.events("quickstart").to_pandas()
        logged = [json.loads(line) for line in served.cli("log", "quickstart", "--json").splitlines()]
        assert list(events.columns) == runlog.tables.EVENT_COLUMNS
        assert list(events.kind) == [e["event"]["type"] for e in logged]
        assert [None if pd.isna(t) else t for t in events.task] == [e["event"].get("task") for e in logged]
        # A judge's scores by week, as the docs plot them.
        weekly = verdicts[verdicts.evaluator.str.startswith("bin/judge.sh")].resample("W", on="at").score.mean()
        assert weekly.notna().any()


def test_the_models_are_what_the_document_generates() -> None:
    import subprocess
    import sys

    generate = Path(__file__).resolve().parent.parent / "scripts" / "generate.py"
    done = subprocess.run([sys.executable, str(generate), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
