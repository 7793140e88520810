"""The stream's reading and the rule that ends `follow`, without a server."""

from __future__ import annotations

import json
from collections.abc import Mapping

from runlog import models
from runlog._transport import Following
from runlog.sse import Decoder, Message


def feed(lines: list[str]) -> list[Message]:
    decoder = Decoder()
    return [m for line in lines for m in decoder.feed(line)]


def test_server_sent_events_are_read_as_the_standard_says() -> None:
    got = feed([": keep-alive", "", "id: 7", "event: note", "data: {\"a\":", "data: 1}", "", "data:x", ""])
    assert got == [Message("7", "note", '{"a":\n1}'), Message("7", None, "x")]
    # An unknown field and an id holding NUL change nothing; a bare `data` is an empty event.
    assert feed(["retry: 10", "id: bad\0", "data", ""]) == [Message(None, None, "")]


def worded(seq: int, kind: Mapping[str, object]) -> Message:
    body = {"seq": seq, "at": 1_700_000_000_000 + seq, "event": kind, "words": "w"}
    return Message(str(seq), str(kind["type"]), json.dumps(body))


def board(seq: int, status: str) -> models.BoardView:
    return models.BoardView.model_construct(run="r", seq=seq, status=status)


FINISHED = {"type": "run-finished", "outcome": "succeeded"}
NOTE = {"type": "message-posted", "task": None, "from": "me", "text": "hi"}


def test_a_finished_run_is_followed_to_its_head_though_its_end_came_earlier() -> None:
    state = Following("r", None, board(3, "finished"))
    state.read(worded(2, FINISHED))
    assert not state.done
    state.read(worded(3, NOTE))
    assert state.done and state.last == "3"


def test_a_run_about_to_be_resumed_is_followed_to_its_next_end() -> None:
    state = Following("r", None, board(2, "interrupted"))
    for seq in (1, 2, 3):
        state.read(worded(seq, NOTE))
    assert not state.done
    state.read(worded(4, FINISHED))
    assert state.done


def test_an_old_end_does_not_end_a_run_that_runs_again() -> None:
    state = Following("r", None, board(5, "running"))
    state.read(worded(3, FINISHED))
    assert not state.done
    state.read(worded(9, FINISHED))
    assert state.done


def test_reconnecting_sends_the_last_seq_seen_and_backs_off_then_gives_up() -> None:
    state = Following("r", 10)
    assert state.request() == {"headers": {}, "params": {"from": "10"}}
    state.read(worded(12, NOTE))
    assert state.request() == {"headers": {"Last-Event-ID": "12"}, "params": {}}
    waits = [state.retry_after(3) for _ in range(4)]
    assert waits == [0.2, 0.4, 0.8, None]
