#!/usr/bin/env python3
"""A LangGraph graph whose nodes are recorded as a runlog run's tasks.

The graph plans, implements and reviews; a review below the run's threshold (0.7) sends the
work back to implement, as runlog's gate rescues it, then the release follows. Its model is
scripted (LangChain's FakeListChatModel), so the example runs anywhere; a real chat model
takes its place unchanged.

    runlog serve &                                   # in the store's directory
    python examples/langgraph_pipeline.py --run langgraph-demo
    runlog status langgraph-demo                     # the run, as the graph recorded it
"""

from __future__ import annotations

import argparse
from typing import Any, TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.graph import END, START, StateGraph

from runlog import Client
from runlog.recording import Recorder

SCRIPT = [
    "1. parse the input 2. handle empty input 3. test both",
    "def parse(text): return text.split()",
    "0.45 empty input is not handled",
    "def parse(text): return text.split() if text else []",
    "0.92 handles empty input; tested",
    "released v1.0.0",
]


class Work(TypedDict, total=False):
    goal: str
    plan: str
    code: str
    score: float
    notes: str
    release: str


def build(recorder: Recorder, model: Any) -> Any:
    def plan(state: Work) -> Work:
        return {"plan": model.invoke(f"Plan: {state['goal']}").content}

    def implement(state: Work) -> Work:
        return {"code": model.invoke(f"Implement: {state['plan']} {state.get('notes', '')}").content}

    def review(state: Work) -> Work:
        # The judge: its verdict goes to runlog's gate, which decides as it would for any run.
        verdict = model.invoke(f"Score 0-1: {state['code']}").content
        score, _, notes = verdict.partition(" ")
        recorder.score("implement", evaluator="langgraph-review", score=float(score), notes=notes)
        return {"score": float(score), "notes": notes}

    def release(state: Work) -> Work:
        return {"release": model.invoke(f"Release: {state['code']}").content}

    graph = StateGraph(Work)
    graph.add_node("plan", recorder.node("plan", plan))
    graph.add_node("implement", recorder.node("implement", implement))
    graph.add_node("review", review)
    graph.add_node("release", recorder.node("release", release))
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "implement")
    graph.add_edge("implement", "review")
    graph.add_conditional_edges("review", lambda s: "implement" if s["score"] < 0.7 else "release")
    graph.add_edge("release", END)
    return graph.compile()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="the server (default: RUNLOG_URL, else .runlog/api.sock)")
    parser.add_argument("--run", default="langgraph-demo", help="the run's id (new)")
    args = parser.parse_args()
    with Client(args.url) as client:
        recorder = Recorder(client, args.run, agent="langgraph")
        recorder.start(
            [
                {"id": "plan"},
                {"id": "implement", "after": ["plan"], "eval": "langgraph-review"},
                {"id": "release", "after": ["implement"]},
            ],
            workflow="langgraph-pipeline",
        )
        final = build(recorder, FakeListChatModel(responses=SCRIPT)).invoke({"goal": "a word parser"})
        recorder.finish()
        print(f"{args.run}: {final['release']} after a review of {final['score']}")


if __name__ == "__main__":
    main()
