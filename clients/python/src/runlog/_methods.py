"""Each resource of `_calls.py` as a method of the sync client and of the async one, with
the resource's own signature and docstring (checked by mypy through `ParamSpec`)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from ._calls import Call

if TYPE_CHECKING:
    from .async_client import AsyncClient
    from .client import Client

P = ParamSpec("P")
T = TypeVar("T")


def sync(build: Callable[P, Call[T]]) -> Callable[Concatenate[Client, P], T]:
    @functools.wraps(build)
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.send(build(*args, **kwargs))

    return method


def asynchronous(
    build: Callable[P, Call[T]],
) -> Callable[Concatenate[AsyncClient, P], Awaitable[T]]:
    @functools.wraps(build)
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.send(build(*args, **kwargs))

    return method
