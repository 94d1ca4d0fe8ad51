"""Each intake token's outstanding jobs (created, not yet printed, dead or cancelled), and its cap on them.

The enqueue script adds every job an intake token creates to the token's set ``owned:<token>`` in the same step as
the job. Counting is one ``SCARD``; only when the set looks full is it pruned of the jobs that are final (or gone),
one ``HGET`` of state each, and at most once a second per token, so a token that sits at its cap and keeps asking
costs one ``SCARD`` a request. Creations of a token still in flight in this process count as outstanding, so
concurrent requests cannot pass the cap together (across several intakes, they can by the few in flight at once);
near the cap, a request racing one that just finished may be refused although there would have been room.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from redis.asyncio import Redis

from intake.problem import Problem
from protocol.codec import dec, enc
from protocol.keys import Keys

#: States a job never leaves by itself.
FINAL = ("printed", "dead", "cancelled")
#: Seconds between two prunings of one token's set.
PRUNE_EVERY = 1.0


class Outstanding:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis, self.keys = redis, keys
        self._creating: dict[str, int] = {}  # token -> jobs being created by this process now
        self._pruned: dict[str, float] = {}  # token -> when its set was last pruned (monotonic)
        self._serial: dict[str, asyncio.Lock] = {}  # token -> its creations one at a time (``room_in_turn``)

    async def _prune(self, key: bytes) -> int:
        """Drop the final and missing jobs from the set; returns how many remain."""
        members = list(await self.redis.smembers(key))
        pipe = self.redis.pipeline(transaction=False)
        for member in members:
            pipe.hget(enc(self.keys.job(dec(member))), "state")
        states = await pipe.execute()
        over = [m for m, state in zip(members, states, strict=True) if state is None or dec(state) in FINAL]
        if over:
            await self.redis.srem(key, *over)
        return len(members) - len(over)

    @contextlib.asynccontextmanager
    async def room(self, token: str, cap: int, count: int) -> AsyncIterator[None]:
        """Hold room for ``count`` new jobs of ``token`` for the ``with`` block (the creation); 429 if its cap of
        ``cap`` outstanding jobs has no room for them."""
        key = enc(self.keys.owned(token))
        self._creating[token] = self._creating.get(token, 0) + count
        try:
            held: int = await self.redis.scard(key)
            # The others in flight now (not when this one started: those that finished are in ``held``). One that
            # has just been enqueued but not yet let go may be counted twice: near the cap, a refusal too many.
            in_flight = self._creating[token] - count
            now = time.monotonic()
            if held + in_flight + count > cap and held and now - self._pruned.get(token, 0.0) >= PRUNE_EVERY:
                self._pruned[token] = now
                held = await self._prune(key)
                in_flight = self._creating[token] - count
            if held + in_flight + count > cap:
                raise Problem(
                    429,
                    f"this token has {held} job(s) not yet printed and may have {cap}: "
                    "wait until they print, or ask staff to cancel them",
                    headers={"Retry-After": "5"},
                    outstanding=held,
                    max_outstanding=cap,
                )
            yield
        finally:
            left = self._creating[token] - count
            if left:
                self._creating[token] = left
            else:
                del self._creating[token]

    @contextlib.asynccontextmanager
    async def room_in_turn(self, token: str, cap: int) -> AsyncIterator[None]:
        """``room`` for one new job, the token's creations in this process made one after another: each counts
        every one made before it (its set's count is read after the last one's job joined it), so the cap holds
        exactly however many requests come at once. For a route a token creates one job a request on (an attendee's
        badge), where waiting behind its own earlier request costs a round trip."""
        lock = self._serial.setdefault(token, asyncio.Lock())
        async with lock, self.room(token, cap, 1):
            yield
