"""What one token, or all of them, may hold of the intake at once: open watches, and Redis work by lane.

* **Watches** (SSE streams and ``?wait=`` long-polls) cost a socket and a task each while they wait: a token may hold
  ``watch_per_token`` of them and the process ``watch_total``; one more answers 429 (the token's) or 503 (the
  process's), with ``Retry-After``.
* **Lanes**: desks and staff run their Redis work in a lane of their own, kiosks, viewers and anonymous readers in
  another, each with a fixed number of requests at a time. Kiosks that flood the intake wait behind each other;
  a desk's request never waits behind them, and the two lanes together stay below the Redis pool's size.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

from intake.problem import Problem

#: Roles whose Redis work runs in the desk lane; every other caller (kiosk, viewer, no token) in the public one.
DESK_LANE = ("desk", "staff")


class Watches:
    """Open SSE streams and long-polls, per token and in total."""

    def __init__(self, per_token: int, total: int) -> None:
        self.per_token, self.total = per_token, total
        self._held: dict[str, int] = {}
        self.count = 0

    def held(self, token: str) -> int:
        return self._held.get(token, 0)

    def check(self, token: str) -> None:
        """Raise the 429 or 503 Problem when ``token`` could not take one more watch now."""
        if self._held.get(token, 0) >= self.per_token:
            raise Problem(
                429,
                f"this token has {self.per_token} streams and long-polls open, its most; close one first",
                headers={"Retry-After": "5"},
                retry_after=5,
            )
        if self.count >= self.total:
            raise Problem(
                503,
                f"the intake holds {self.total} streams and long-polls, its most; try again",
                headers={"Retry-After": "5"},
            )

    @contextlib.contextmanager
    def hold(self, token: str) -> Iterator[None]:
        """One watch for ``token`` for the ``with`` block; raises the 429 or 503 Problem past a limit."""
        self.check(token)
        self._held[token] = self._held.get(token, 0) + 1
        self.count += 1
        try:
            yield
        finally:
            self.count -= 1
            left = self._held[token] - 1
            if left:
                self._held[token] = left
            else:
                del self._held[token]


class Lanes:
    """A semaphore per lane: at most ``desk`` Redis requests of desks and staff at a time, ``public`` of the rest."""

    def __init__(self, desk: int, public: int) -> None:
        self._desk = asyncio.Semaphore(desk)
        self._public = asyncio.Semaphore(public)

    @contextlib.asynccontextmanager
    async def lane(self, role: str | None) -> AsyncIterator[None]:
        async with self._desk if role in DESK_LANE else self._public:
            yield
