"""The venue protocol: each method is one Redis round trip (one script or one command).

Job ids are handled as ``str`` but travel as bytes with ``surrogateescape``, so even a non-UTF-8 id pushed into the
pool by hand round-trips exactly and can be dead-lettered instead of wedging the agent on a decode error.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, cast

from redis.asyncio import Redis

from agent.protocol.keys import Keys, split_pinned_member
from agent.protocol.scripts import ScriptCall, Scripts

ReleaseOutcome = Literal["failed", "unknown", "unsent"]

EVENTS_MAXLEN = 100_000

STEAL_LOOK = 16  # pinned-index entries read per idle look: the oldest few, enough to skip our own and a lost race


def enc(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@functools.lru_cache(maxsize=256)
def _enc_name(text: str) -> bytes:
    """``enc`` for the few strings every call repeats (this printer's name and location), encoded once."""
    return enc(text)


def dec(raw: bytes | str | int | None) -> str:
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "surrogateescape")
    return str(raw)


def _call(name: str, keys: list[str], args: list[str | int]) -> ScriptCall:
    return name, [enc(k) for k in keys], [enc(a) if isinstance(a, str) else a for a in args]


def _taken(reply: Any) -> tuple[str, str] | None:
    return (dec(reply[0]), dec(reply[1])) if reply else None


@dataclass(frozen=True)
class Begun:
    """The reply of ``begin``. ``kind`` is print, not_owner, done, dead or dropped."""

    kind: str
    payload: bytes = b""
    attempts: int = 0
    epoch: int = 0
    maybe_printed_where: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Beat:
    server_ms: int
    was_declared_dead: bool
    depth: int
    inflight: str
    order: str  # an operator's order to this agent ("drain"), or ""


@dataclass(frozen=True)
class Reclaimed:
    """What ``reclaim`` did: ``kind`` is reclaimed, alive or gone."""

    kind: str
    held: str = ""
    pinned: int = 0


class _PrinterKeys(NamedTuple):
    """One printer's keys, encoded once: the hot path names them in every call."""

    name: bytes
    inflight: bytes
    queue: bytes
    control: bytes


class Store:
    """One venue's keys and scripts on one Redis client (created with ``decode_responses=False``)."""

    def __init__(self, redis: Redis, venue: str, events_maxlen: int = EVENTS_MAXLEN, dedicated: bool = False) -> None:
        """``dedicated``: begin, confirm and take keep one connection for themselves (the agent's pull loop, which
        makes them one after another; see ``scripts._Lane``)."""
        self.redis = redis
        self.keys = Keys(venue)
        self.scripts = Scripts(redis, dedicated)
        self.events_maxlen = events_maxlen
        # The hot path's keys as bytes, built once (Keys stays the one place that spells them): a job's own keys
        # are its prefix plus the encoded id.
        k = self.keys
        self._pool, self._events, self._dlq = enc(k.pool), enc(k.events), enc(k.dlq)
        self._stats, self._pinned = enc(k.stats), enc(k.pinned)
        self._job_prefix, self._done_prefix = enc(k.job("")), enc(k.done(""))
        self._printers: dict[str, _PrinterKeys] = {}
        # Redis time at our last heartbeat and the monotonic clock then: the idle steal look judges a pinned job's
        # age on the server's clock (a Pi may have none) without asking the server for the time.
        self._beat_clock: tuple[int, float] | None = None

    def _printer(self, me: str) -> _PrinterKeys:
        mine = self._printers.get(me)
        if mine is None:
            k = self.keys
            mine = _PrinterKeys(enc(me), enc(k.inflight(me)), enc(k.queue(me)), enc(k.control(me)))
            self._printers[me] = mine
        return mine

    async def _run(self, name: str, keys: list[str], args: list[str | int]) -> Any:
        _, bkeys, bargs = _call(name, keys, args)
        return await self.scripts[name](keys=bkeys, args=bargs)

    # -- producers -----------------------------------------------------------------------------------------------

    async def enqueue(self, job_id: str, payload: str, pinned: str | None) -> tuple[bool, str]:
        """Add a job unless its id exists. Returns (added, state)."""
        added, state = await self._run(
            "enqueue", self.enqueue_keys(job_id, pinned), [job_id, payload, pinned or "", self.events_maxlen]
        )
        return bool(added), dec(state)

    def enqueue_keys(self, job_id: str, pinned: str | None) -> list[str]:
        """The ``enqueue`` script's KEYS, also for callers that queue it in a pipeline (the enqueue command)."""
        k = self.keys
        return [k.job(job_id), k.queue(pinned) if pinned else k.pool, k.events, k.stats, k.pinned]

    # -- the hot path --------------------------------------------------------------------------------------------

    async def take(self, me: str) -> tuple[str, str] | None:
        """Move the next job (pinned queue first, then pool) into in-flight. Returns (source, id) or None."""
        _, keys, args = self._take_encoded(me)
        return _taken(await self.scripts["take"].run(keys, args))

    def _take_encoded(self, me: str) -> ScriptCall:
        """The ``take`` script's KEYS and ARGV as sent (bytes), from the keys encoded once (take.lua)."""
        mine = self._printer(me)
        return "take", [mine.queue, self._pool, mine.inflight, mine.control, self._pinned], [mine.name]

    async def wait_pool(self, me: str, timeout: float) -> str | None:
        """Block up to ``timeout`` seconds for a pool job, moving it into in-flight as it arrives."""
        raw = await self.redis.execute_command(  # type: ignore[no-untyped-call]
            "BLMOVE", enc(self.keys.pool), enc(self.keys.inflight(me)), "RIGHT", "LEFT", timeout
        )
        return None if raw is None else dec(raw)

    async def peek(self, me: str) -> tuple[str, bytes] | None:
        """The job ``take`` would move next (this printer's queue first, then the pool) and its payload, or None.

        Reads only, two round trips: the pull loop draws that badge while the current one prints (agent/pull.py);
        whoever takes the job in the end, nothing here changed it.
        """
        mine = self._printer(me)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lindex(mine.queue, -1)
            pipe.lindex(self._pool, -1)
            own, pooled = await pipe.execute()
        raw = own if own is not None else pooled
        if raw is None:
            return None
        payload = cast(bytes | None, await self.redis.hget(self._job_prefix + bytes(raw), "payload"))
        return None if payload is None else (dec(raw), payload)

    async def begin(self, me: str, location: str, job_id: str) -> Begun:
        # KEYS inflight:<me>, job:<id>, done:<id>, events, dlq, stats; ARGV id, me, location, maxlen (begin.lua).
        mine = self._printer(me)
        bid = enc(job_id)
        reply = await self.scripts["begin"].run(
            [mine.inflight, self._job_prefix + bid, self._done_prefix + bid, self._events, self._dlq, self._stats],
            [bid, mine.name, _enc_name(location), self.events_maxlen],
        )
        kind = dec(reply[0])
        if kind == "print":
            return Begun(kind, bytes(reply[1]), int(reply[2]), int(reply[3]), dec(reply[4]))
        return Begun(kind, detail=dec(reply[1]) if len(reply) > 1 else "")

    def _confirm(self, me: str, location: str, job_id: str, epoch: int) -> ScriptCall:
        # KEYS inflight:<me>, job:<id>, done:<id>, events, pool, stats; ARGV id, me, location, epoch, maxlen.
        mine = self._printer(me)
        bid = enc(job_id)
        return (
            "confirm",
            [mine.inflight, self._job_prefix + bid, self._done_prefix + bid, self._events, self._pool, self._stats],
            [bid, mine.name, _enc_name(location), str(epoch).encode(), self.events_maxlen],
        )

    async def confirm(self, me: str, location: str, job_id: str, epoch: int) -> tuple[str, str]:
        """Record a badge the printer proved printed. Returns ("printed", maybe_where) or ("duplicate", first)."""
        name, keys, args = self._confirm(me, location, job_id, epoch)
        reply = await self.scripts[name].run(keys, args)
        return dec(reply[0]), dec(reply[1])

    async def confirm_then_take(
        self, me: str, location: str, job_id: str, epoch: int
    ) -> tuple[tuple[str, str], tuple[str, str] | None]:
        """``confirm`` this badge and ``take`` the next job in one round trip (two atomic steps, in this order).

        The hot path's round trip saver: a printer that just proved a badge is ready for the next one. Returns the
        confirm reply and what ``take`` moved into in-flight (None when both lists were empty).
        """
        confirmed, taken = await self.scripts.run_together(
            [self._confirm(me, location, job_id, epoch), self._take_encoded(me)]
        )
        nxt = _taken(taken)
        if nxt is not None and nxt == ("held", job_id):
            # The confirm had to be reloaded (NOSCRIPT) and ran after take, which saw this very job still held.
            nxt = None
        return (dec(confirmed[0]), dec(confirmed[1])), nxt

    async def release(
        self, me: str, location: str, job_id: str, outcome: ReleaseOutcome, reason: str, max_attempts: int
    ) -> str:
        """Hand a held job back to the front of the pool (or the DLQ). Returns released, dead, done or not_owner."""
        k = self.keys
        reply = await self._run(
            "release",
            [k.inflight(me), k.job(job_id), k.done(job_id), k.pool, k.dlq, k.events, k.stats],
            [job_id, me, location, outcome, reason, max_attempts, self.events_maxlen],
        )
        return dec(reply[0])

    async def dead_letter(self, me: str, job_id: str, reason: str) -> str:
        k = self.keys
        reply = await self._run(
            "dead_letter",
            [k.inflight(me), k.job(job_id), k.dlq, k.events, k.stats],
            [job_id, me, reason, self.events_maxlen],
        )
        return dec(reply[0])

    async def inflight(self, me: str) -> list[str]:
        return [dec(x) for x in await self.redis.lrange(enc(self.keys.inflight(me)), 0, -1)]

    # -- liveness ------------------------------------------------------------------------------------------------

    async def beat(self, me: str, health: dict[str, Any], ttl_ms: int, first: bool) -> Beat:
        k = self.keys
        reply = await self._run(
            "beat",
            [k.hb, k.health(me), k.queue(me), k.inflight(me), k.printers, k.events, k.control(me)],
            [
                me,
                json.dumps(health, ensure_ascii=False),
                ttl_ms,
                self.events_maxlen,
                "1" if first else "0",
                str(health.get("location", "")),
            ],
        )
        self._beat_clock = (int(reply[0]), time.monotonic())
        return Beat(int(reply[0]), bool(int(reply[1])), int(reply[2]), dec(reply[3]), dec(reply[4]))

    async def sweep(self, me: str, dead_after_ms: int, lease_ms: int, limit: int = 16) -> list[str]:
        """Names of peers whose heartbeat is stale, if we won this interval's sweep lease (else [])."""
        k = self.keys
        reply = await self._run("sweep", [k.hb, k.sweep_lease], [me, dead_after_ms, lease_ms, limit])
        return [dec(x) for x in reply or []]

    async def reclaim(self, victim: str, by: str, dead_after_ms: int | None, dead_ttl_ms: int = 3_600_000) -> Reclaimed:
        """Move a dead agent's held and pinned jobs to the front of the pool. ``dead_after_ms=None`` forces it.

        Two steps because the held job's own keys must be named in KEYS: look at what it holds, then reclaim on the
        condition that it still holds exactly that (the script answers "retry" otherwise).
        """
        k = self.keys
        for _ in range(10):
            held = dec(await self.redis.lindex(enc(k.inflight(victim)), 0))
            keys = [k.hb, k.inflight(victim), k.queue(victim), k.pool, k.health(victim), k.events, k.stats]
            keys += [k.printers, k.pinned]
            if held:
                keys += [k.job(held), k.done(held)]
            reply = await self._run(
                "reclaim",
                keys,
                [
                    victim,
                    "force" if dead_after_ms is None else dead_after_ms,
                    held,
                    by,
                    self.events_maxlen,
                    dead_ttl_ms,
                ],
            )
            kind = dec(reply[0])
            if kind != "retry":
                return Reclaimed(kind, dec(reply[1]), int(reply[2])) if kind == "reclaimed" else Reclaimed(kind)
        return Reclaimed("retry")

    async def steal(self, me: str, affinity_ms: int, look: int = STEAL_LOOK) -> str | None:
        """Take the oldest pinned job of another printer that has waited ``affinity_ms``. Returns its id or None.

        One ZRANGE on the venue's pinned index, whatever the number of printers; the ``steal`` script runs only for
        a job that looks old enough on the server's clock, and re-checks everything itself.
        """
        k = self.keys
        oldest = cast(list[tuple[bytes, float]], await self.redis.zrange(enc(k.pinned), 0, look - 1, withscores=True))
        now = self._server_now_ms()
        for raw, score in oldest:
            owner, job_id = split_pinned_member(dec(raw))
            if owner == me:
                continue  # ours: `take` serves it
            if now is not None and now - score < affinity_ms:
                return None  # the oldest job a peer has waiting is not old enough, so none is
            reply = await self._run(
                "steal",
                [k.queue(owner), k.inflight(me), k.job(job_id), k.events, k.control(me), k.pinned],
                [me, owner, job_id, affinity_ms, self.events_maxlen],
            )
            if dec(reply[0]) == "stolen":
                return job_id
            if dec(reply[1]) not in ("moved", "stale"):
                return None  # busy, drained, or young after all (no beat yet to judge by): nothing to try further
            # Its owner or another peer took it since we looked: the next oldest may still be waiting.
        return None

    def _server_now_ms(self) -> float | None:
        """Redis time now, from the last heartbeat's server time plus the monotonic time since; None before one."""
        if self._beat_clock is None:
            return None
        server_ms, at = self._beat_clock
        return server_ms + (time.monotonic() - at) * 1000

    async def drain(self, printer: str, order: Literal["drain", "resume"], by: str) -> int:
        k = self.keys
        return int(
            await self._run(
                "drain",
                [k.control(printer), k.queue(printer), k.pool, k.events, k.pinned],
                [printer, order, by, self.events_maxlen],
            )
        )

    async def requeue(self, job_id: str, by: str) -> str:
        k = self.keys
        reply = await self._run(
            "requeue", [k.dlq, k.job(job_id), k.pool, k.events, k.done(job_id)], [job_id, by, self.events_maxlen]
        )
        return dec(reply[0])

    # -- staff operations: reprint and cancel (reprint.lua, cancel.lua) ----------------------------------------------

    async def reprint(self, job_id: str, reason: str, by: str, cap: int, force: bool) -> tuple[str, str]:
        """Start a new print round of a printed or dead job. Returns ("reprint", count), ("no_job", ""),
        ("refused", state) or ("cap", count)."""
        k = self.keys
        reply = await self._run(
            "reprint",
            [k.job(job_id), k.done(job_id), k.pool, k.dlq, k.events, k.stats],
            [job_id, reason, by, cap, "1" if force else "0", self.events_maxlen],
        )
        return dec(reply[0]), dec(reply[1]) if len(reply) > 1 else ""

    async def round_epoch(self, job_id: str) -> int:
        """The epoch at which the job's latest reprint round began (0 when never reprinted)."""
        raw = await self.redis.hget(enc(self.keys.job(job_id)), "round_epoch")
        return int(dec(raw) or 0)

    async def cancel(self, job_id: str, by: str) -> tuple[str, str]:
        """Withdraw a job no printer has taken. Returns ("cancelled", ""), ("no_job", "") or ("refused", state)."""
        k = self.keys
        for _ in range(5):  # "retry": its pin changed between the read and the script (a job's pin never does)
            pinned = dec(await self.redis.hget(enc(k.job(job_id)), "pinned"))
            queue = k.queue(pinned) if pinned else k.pool
            reply = await self._run(
                "cancel",
                [k.job(job_id), k.pool, queue, k.pinned, k.events, k.stats],
                [job_id, pinned, by, self.events_maxlen],
            )
            if dec(reply[0]) != "retry":
                return dec(reply[0]), dec(reply[1]) if len(reply) > 1 else ""
        return "refused", "changing"

    async def dlq(self) -> list[str]:
        return [dec(x) for x in await self.redis.lrange(enc(self.keys.dlq), 0, -1)]

    async def printers(self) -> dict[str, str]:
        """Every printer that ever beat in this venue -> its location."""
        raw = await self.redis.hgetall(enc(self.keys.printers))
        return {dec(name): dec(location) for name, location in raw.items()}

    async def handback(self, me: str, reason: str) -> int:
        k = self.keys
        return int(
            await self._run("handback", [k.queue(me), k.pool, k.events, k.pinned], [me, reason, self.events_maxlen])
        )

    async def event(self, event: str, printer: str, **fields: str) -> None:
        """Write one audit event that goes with no other change (device_down, device_up, agent_stopped)."""
        data = {"event": event, "printer": printer, **fields}
        await self.redis.xadd(enc(self.keys.events), {k: enc(v) for k, v in data.items()}, maxlen=self.events_maxlen)

    async def leave(self, me: str, health: dict[str, Any]) -> None:
        """A clean stop: publish the final health and leave the heartbeat set, so no peer reclaims anything."""
        k = self.keys
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(enc(k.health(me)), json.dumps(health, ensure_ascii=False), px=24 * 3600 * 1000)
            pipe.zrem(enc(k.hb), enc(me))
            await pipe.execute()

    async def server_ms(self) -> int:
        sec, usec = await self.redis.time()
        return int(sec) * 1000 + int(usec) // 1000
