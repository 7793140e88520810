"""The documented LangGraph example, run as a user runs it, and its run checked by the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Served

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "langgraph_pipeline.py"


def run_example(served: Served, run: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--url", served.socket, "--run", run],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_langgraph_graphs_nodes_are_recorded_as_a_run(served: Served) -> None:
    pytest.importorskip("langgraph", reason="the example needs langgraph: pip install './clients/python[dev]'")
    out = run_example(served, "py-langgraph")
    assert out.strip() == "py-langgraph: released v1.0.0 after a review of 0.92"
    assert "py-langgraph: ok" in served.cli("verify", "py-langgraph")
    rows = {r["id"]: r for r in served.cli_json("status", "py-langgraph")["board"]["rows"]}  # type: ignore[index]
    assert {t: r["status"] for t, r in rows.items()} == {"plan": "done", "implement": "done", "release": "done"}
    # The first review's 0.45 was below the threshold: the gate rescued implement once.
    assert (rows["implement"]["attempt"], rows["implement"]["rescues"]) == (2, 1)
    runs = {r["run"]: r for r in json.loads(served.cli("runs", "--json"))}
    assert runs["py-langgraph"]["status"] == "finished"
    events = runs["py-langgraph"]["events"]
    # The orchestrator run again from the start, as after a crash: every step's key is known,
    # so nothing is recorded twice.
    run_example(served, "py-langgraph")
    again = {r["run"]: r for r in json.loads(served.cli("runs", "--json"))}
    assert again["py-langgraph"]["events"] == events
