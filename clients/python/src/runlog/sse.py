"""Server-Sent Events, as a run's stream sends them: each event's id is its seq."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Message:
    """One event of the stream, before its data is read as a model."""

    id: str | None
    event: str | None
    data: str


@dataclass
class Decoder:
    """Turns the stream's lines into messages (the WHATWG rules a server's stream needs:
    fields, comments, multi-line data, a blank line ending each)."""

    _id: str | None = None
    _event: str | None = None
    _data: list[str] = field(default_factory=list)

    def feed(self, line: str) -> Iterator[Message]:
        if line == "":
            if self._data:
                yield Message(self._id, self._event, "\n".join(self._data))
            self._event, self._data = None, []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
