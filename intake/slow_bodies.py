"""Requests whose body has not arrived yet: what each token and each address may hold of them at once.

A request that announces a body and sends it slowly (or never) is inside a request for ``body_timeout`` seconds: its
connection is not idle, so the connection guard (intake/guard.py) cannot close it to make room. Without a bound, two
kiosk tokens holding such requests fill ``max_connections`` and every desk is turned away. So, when a handler starts
to wait for a body that is not there yet (one that came with its headers is never counted):

* a token may have ``bodies_per_token`` such requests at once (429 past it, naming the token's bound);
* kiosks, viewers and callers without a token may have ``bodies_per_address`` of them from one address (429), and
  ``bodies_public`` all together (503): desks and staff have the rest of the connections to themselves, as they
  have a Redis lane of their own (intake/budget.py);
* and should the connections be full all the same, the guard closes the oldest connection waiting for a public
  body to make room for the newcomer (``Activity.bodies``), before it would refuse anyone.

A refused request's connection is closed after its answer (the server does not linger to read a body it will not
use), so a refusal frees its socket at once.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

from aiohttp import web

from intake.budget import DESK_LANE
from intake.guard import Activity
from intake.problem import Problem

#: Where ``authorize`` (intake/context.py) leaves who the request is from, as (role, token name).
CALLER: web.RequestKey[tuple[str, str]] = web.RequestKey("badge_intake_caller")
#: A refusal's headers: when to try again, and that the connection ends with the answer (the body is not read).
REFUSED = {"Retry-After": "5", "Connection": "close"}


class Bodies:
    """Requests waiting for their bodies: per token, per address (public callers) and of all public callers."""

    def __init__(self, activity: Activity, per_token: int, per_address: int, public: int) -> None:
        self.activity = activity
        self.per_token, self.per_address, self.public = per_token, per_address, public
        self._tokens: dict[str, int] = {}
        self._addresses: dict[str, int] = {}
        self.public_count = 0

    def _check(self, token: str, address: str, public: bool) -> None:
        if token and self._tokens.get(token, 0) >= self.per_token:
            raise Problem(
                429,
                f"this token has {self.per_token} requests whose bodies have not arrived, its most: send their "
                "bodies, or close them, first",
                headers=REFUSED,
                retry_after=5,
            )
        if not public:
            return
        if self._addresses.get(address, 0) >= self.per_address:
            raise Problem(
                429,
                f"this address has {self.per_address} requests of kiosks whose bodies have not arrived, its most: "
                "send their bodies, or close them, first",
                headers=REFUSED,
                retry_after=5,
            )
        if self.public_count >= self.public:
            raise Problem(
                503,
                f"the intake holds {self.public} requests of kiosks whose bodies have not arrived, its most; try again",
                headers=REFUSED,
            )

    @contextlib.asynccontextmanager
    async def waiting(self, request: web.Request) -> AsyncIterator[None]:
        """The ``with`` block waits for ``request``'s body; raises the 429 or 503 Problem past a bound, closing the
        connection after the answer. A body that is already here passes without counting."""
        if request.content.is_eof():
            yield
            return
        role, token = request.get(CALLER, ("", ""))
        public = role not in DESK_LANE
        address = request.remote or ""
        try:
            self._check(token, address, public)
        except Problem:
            # Answer, then hang up: reading on for the body it will not use would hold the socket.
            request.protocol.close()
            raise
        conn = request.protocol
        if token:
            self._tokens[token] = self._tokens.get(token, 0) + 1
        if public:
            self._addresses[address] = self._addresses.get(address, 0) + 1
            self.public_count += 1
            self.activity.bodies[conn] = time.monotonic()
        try:
            yield
        finally:
            if token:
                _less(self._tokens, token)
            if public:
                _less(self._addresses, address)
                self.public_count -= 1
                self.activity.bodies.pop(conn, None)


def _less(counts: dict[str, int], key: str) -> None:
    left = counts.get(key, 1) - 1
    if left > 0:
        counts[key] = left
    else:
        counts.pop(key, None)
