"""What the client raises."""

from __future__ import annotations


class RunlogError(Exception):
    """Anything this client raises on its own account."""


class ApiError(RunlogError):
    """The server answered with an error: its HTTP status, and the `error` and `hint` it sent.

    Every error the API answers has both (`hint` may be None); the hint says, in the API's own
    terms, what to send instead.
    """

    def __init__(self, status: int, error: str, hint: str | None, *, method: str, path: str):
        self.status = status
        self.error = error
        self.hint = hint
        self.method = method
        self.path = path
        super().__init__(str(self))

    def __str__(self) -> str:
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{self.method} {self.path}: {self.status} {self.error}{hint}"


class StreamLagged(RunlogError):
    """The server closed a run's event stream and reconnecting did not bring it back."""
