"""The venue protocol's calls on one Redis client. Most methods are one Redis round trip: one script, one command,
or one pipeline (``enqueue_many``, ``confirm_then_take``, ``leave``). These make more than one call:

* ``peek``: two reads (a pipeline of both lists' next ids, then the job's payload);
* ``reprint``: reads the printers (``HKEYS``), then the script; ``cancel``: reads the job's pin (``HGET``), then the
  script, again while it answers "retry" (at most 5 times);
* ``steal``: one ``ZRANGE`` of the pinned index, then a script call per candidate it tries (two for a zone's job
  whose printers it does not know yet);
* ``reclaim``, ``drain``, ``handback``: read the queue (reclaim also the held job, in the same round trip), then call
  the script; both again while the script answers that the queue changed or asks for the zone printers' keys (at
  most ``HAND_ON_TRIES`` times);
* ``release``: a second call for a zone's job, whose printers' keys the script asks for; ``confirm`` and
  ``confirm_then_take``: another call when a late confirm's job waits in a printer's queue since (rare).

A script the server cannot run yet (the functions library not loaded, or on Redis 6.2 the script not in its cache)
takes a few more calls, once, to load it (scripts.py, ``VenueScript.run_again``); ``enqueue_many`` makes sure of it
before its pipeline (``Scripts.prepare``).

Every script call is built by its spec (specs.py: KEYS, ARGV, and the reply's type) and sent by ``Scripts``. Ids and
names travel as bytes (codec.py), keys from ``EncodedKeys``, built once.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from redis.asyncio import Redis
from redis.exceptions import OutOfMemoryError, RedisError

from protocol import replies, specs
from protocol.codec import dec, enc
from protocol.keys import EncodedKeys, Keys, PrinterKeys, split_pinned_member
from protocol.library import Library
from protocol.scripts import Scripts
from protocol.specs import ReleaseOutcome as ReleaseOutcome  # noqa: PLC0414 (re-exported: callers import it here)
from protocol.specs import ScriptCall

EVENTS_MAXLEN = 100_000

#: A job's zone and its printers (``Job.zoned``).
Zoned = tuple[str, Sequence[str]]


def zone_args(zone: Zoned | None) -> tuple[bytes, bytes] | None:
    """A job's zone as enqueue and attendee_badge take it: its name, and its printers apart by spaces."""
    return None if zone is None else (enc(zone[0]), enc(" ".join(zone[1])))


STEAL_LOOK = 16  # pinned-index entries read per idle look: the oldest few, enough to skip our own and a lost race
#: How old a zone printer's last heartbeat may be for it to count as able to print its zone's jobs, for a ``Store``
#: built by a process that knows no agent's timing: the agents' default dead-after window (agent/config.py,
#: TimingConfig: 1 s x 3). Only ``Store`` reads it; everything else asks its store (``Store.zone_dead_after_ms``).
ZONE_DEAD_AFTER_MS = 3000
#: Calls of a step that hands pinned jobs on before giving up: the queue it read kept changing, or it asked for more
#: zone printers' keys.
HAND_ON_TRIES = 10
#: Waiting groups one claim looks at (the oldest): the few boxes ahead, enough to pass those for other printers.
GROUP_LOOK = 32
#: Zone jobs whose printers one store remembers for its steal looks (a few halls' waiting badges; cleared when full).
JOB_ZONES_KEPT = 1024


@functools.lru_cache(maxsize=256)
def _enc_name(text: str) -> bytes:
    """``enc`` for the few strings every call repeats (this printer's location), encoded once."""
    return enc(text)


class QueueKeptChanging(RedisError):
    """A pinned queue changed between every read of it and the step that hands it on (``HAND_ON_TRIES`` times):
    nothing moved. A Redis error as far as callers go: the step is tried again later, as after a lost connection."""


class Store:
    """One venue's keys and scripts on one Redis client (created with ``decode_responses=False``)."""

    def __init__(
        self,
        redis: Redis,
        venue: str,
        events_maxlen: int = EVENTS_MAXLEN,
        dedicated: bool = False,
        library: Library | None = None,
        zone_dead_after_ms: int = ZONE_DEAD_AFTER_MS,
    ) -> None:
        """``dedicated``: begin, confirm and take keep one connection for themselves (the agent's pull loop, which
        makes them one after another; see ``scripts.Lane``). ``library``: the functions library to call (the
        installed one by default; ``library.build`` makes one of other .lua files). ``zone_dead_after_ms``: how old
        a zone printer's last heartbeat may be for it to count as able to print its zone's jobs, in every step that
        hands a zone's job on (release, reclaim, steal, drain, handback): the venue's dead-after window where the
        process knows it (an agent, a command given the venue's config)."""
        self.redis = redis
        self.keys = Keys(venue)
        self.encoded_keys = EncodedKeys(self.keys)
        self.scripts = Scripts(redis, dedicated, library)
        self.events_maxlen = events_maxlen
        # Stated once, at construction (read-only after): all of a process's steps judge a zone printer alike.
        self._zone_dead_after_ms = zone_dead_after_ms
        # Redis time at our last heartbeat and the monotonic clock then: the idle steal look judges a pinned job's
        # age on the server's clock (a Pi may have none) without asking the server for the time.
        self._beat_clock: tuple[int, float] | None = None
        # job id -> the printers of its zone, as steal.lua asked for them (a job's zone never changes): the next look
        # at that job sends their keys with its first call.
        self._job_zones: dict[str, tuple[str, ...]] = {}

    @property
    def zone_dead_after_ms(self) -> int:
        """How old a zone printer's last heartbeat may be for it to count as able to print (given at construction)."""
        return self._zone_dead_after_ms

    # -- producers -----------------------------------------------------------------------------------------------

    async def enqueue(
        self,
        job_id: str,
        payload: str,
        pinned: str | None,
        creator: str = "",
        zone: Zoned | None = None,
        only: bool = False,
    ) -> replies.Enqueued:
        """Add a job unless its id exists. Returns (added, state). ``creator``: the intake token that asks (recorded
        on the job and in the token's set of jobs, in the same step), or "" from the CLI; ``zone``: the job's zone
        and its printers (``Job.zoned``), recorded on the job for steal and the steps that hand pinned jobs on;
        ``only``: ``pinned`` alone may print it (a test badge), never a peer, not even by steal or reclaim."""
        return await self.scripts.run(self.enqueue_call(job_id, payload, pinned, creator, zone, only))

    async def enqueue_many(self, jobs: Sequence[tuple[str, str, str | None, Zoned | None]]) -> list[replies.Enqueued]:
        """``enqueue`` each (job id, payload, pinned printer, zone) in one round trip, in order (the enqueue
        command)."""
        if self.scripts.functions is None:
            # Learn whether the server runs functions, and have the library on every master of a Cluster, first.
            await self.scripts.prepare("enqueue")
        return await self.scripts.run_together(
            [self.enqueue_call(job_id, payload, pinned, "", zone) for job_id, payload, pinned, zone in jobs]
        )

    def enqueue_call(
        self,
        job_id: str,
        payload: str,
        pinned: str | None,
        creator: str = "",
        zone: Zoned | None = None,
        only: bool = False,
    ) -> ScriptCall[replies.Enqueued]:
        k = self.encoded_keys
        return specs.ENQUEUE.call(
            k,
            enc(job_id),
            enc(payload),
            k.printer(pinned) if pinned else None,
            self.events_maxlen,
            enc(creator),
            zone_args(zone),
            only=only and pinned is not None,
        )

    # -- the hot path --------------------------------------------------------------------------------------------

    async def take(self, me: str, room: int = 1) -> replies.Taken | None:
        """Move the next job (pinned queue first, then pool) into in-flight. Returns (source, id) or None.

        ``room``: how many jobs the printer may hold at once; 2 hands it the next badge while one prints."""
        k = self.encoded_keys
        return await self.scripts.run(specs.TAKE.call(k, k.printer(me), room))

    async def wait_pool(self, me: str, timeout: float) -> str | None:
        """Block up to ``timeout`` seconds for a pool job, moving it into in-flight as it arrives.

        A Redis over ``maxmemory`` refuses ``BLMOVE`` (a plain write); the printer's own steps still run there
        (``allow-oom`` functions), so the wait becomes a pause of ``timeout`` and the caller's next ``take`` looks.
        """
        k = self.encoded_keys
        try:
            raw = await self.redis.execute_command(  # type: ignore[no-untyped-call]
                "BLMOVE", k.pool, k.printer(me).inflight, "RIGHT", "LEFT", timeout
            )
        except OutOfMemoryError:
            await asyncio.sleep(timeout)
            return None
        return None if raw is None else dec(raw)

    async def peek(self, me: str) -> tuple[str, bytes] | None:
        """The job ``take`` would move next (this printer's queue first, then the pool, then the rest of its claimed
        group) and its payload, or None.

        Reads only, two round trips: the pull loop draws that badge while the current one prints (agent/pull.py);
        whoever takes the job in the end, nothing here changed it.
        """
        k = self.encoded_keys
        mine = k.printer(me)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lindex(mine.queue, -1)
            pipe.lindex(k.pool, -1)
            pipe.lindex(mine.group_held, -1)
            own, pooled, grouped = await pipe.execute()
        raw = own if own is not None else pooled if pooled is not None else grouped
        if raw is None:
            return None
        payload = cast(bytes | None, await self.redis.hget(k.job(bytes(raw)), "payload"))
        return None if payload is None else (dec(raw), payload)

    async def begin(self, me: str, location: str, job_id: str) -> replies.Begun:
        k = self.encoded_keys
        return await self.scripts.run(
            specs.BEGIN.call(k, k.printer(me), enc(job_id), _enc_name(location), self.events_maxlen)
        )

    def _confirm_call(
        self,
        me: str,
        location: str,
        job_id: str,
        epoch: int,
        layout: tuple[str, int] | None = None,
        waits: str | None = None,
        confirmed_by: str | None = None,
    ) -> ScriptCall[replies.Confirmed]:
        k = self.encoded_keys
        queue = k.printer(waits) if waits else None
        return specs.CONFIRM.call(
            k, k.printer(me), enc(job_id), _enc_name(location), epoch, self.events_maxlen, layout, queue, confirmed_by
        )

    async def confirm(
        self,
        me: str,
        location: str,
        job_id: str,
        epoch: int,
        layout: tuple[str, int] | None = None,
        confirmed_by: str | None = None,
    ) -> replies.Confirmed:
        """Record a badge the printer proved printed. Returns ("printed", maybe_where) or ("duplicate", first).

        ``layout``: the badge layout and version it was drawn with, for the printed event (None: built-in design).
        ``confirmed_by``: whose word the print is on (``device`` or ``spooler``, the driver's ``confirmed_by``),
        written on the job, the printed event and the printed record; None: not said.
        """
        confirmed = await self.scripts.run(self._confirm_call(me, location, job_id, epoch, layout, None, confirmed_by))
        return await self._confirm_waiting(me, location, job_id, epoch, layout, confirmed, confirmed_by)

    async def _confirm_waiting(
        self,
        me: str,
        location: str,
        job_id: str,
        epoch: int,
        layout: tuple[str, int] | None,
        confirmed: replies.Confirmed,
        confirmed_by: str | None = None,
    ) -> replies.Confirmed:
        """A late confirm of a job that waits in a printer's queue since (a reclaim handed a zone's badge on): the
        script named that printer; confirm again with its queue, which the print voids. Rare: never on the hot path
        of a printer confirming what it holds."""
        for _ in range(HAND_ON_TRIES):
            if confirmed.kind is not replies.ConfirmKind.WAITS:
                return confirmed
            call = self._confirm_call(me, location, job_id, epoch, layout, confirmed.where, confirmed_by)
            confirmed = await self.scripts.run(call)
        raise QueueKeptChanging(f"confirm of {job_id}: the queue it waits in kept changing")

    async def confirm_then_take(
        self,
        me: str,
        location: str,
        job_id: str,
        epoch: int,
        layout: tuple[str, int] | None = None,
        confirmed_by: str | None = None,
    ) -> tuple[replies.Confirmed, replies.Taken | None]:
        """``confirm`` this badge and ``take`` the next job in one round trip (two atomic steps, in this order).

        The hot path's round trip saver: a printer that just proved a badge is ready for the next one. Returns the
        confirm reply and what ``take`` moved into in-flight (None when both lists were empty).
        """
        k = self.encoded_keys
        confirmed, taken = await self.scripts.run_pair(
            self._confirm_call(me, location, job_id, epoch, layout, None, confirmed_by),
            specs.TAKE.call(k, k.printer(me)),
        )
        if taken is not None and taken == (replies.Source.HELD, job_id):
            # The confirm had to run again (the library was loaded meanwhile) after take, which saw this job still held.
            taken = None
        # A "waits" answer changed nothing, so the take after it stands.
        return await self._confirm_waiting(me, location, job_id, epoch, layout, confirmed, confirmed_by), taken

    async def release(
        self, me: str, location: str, job_id: str, outcome: ReleaseOutcome, reason: str, max_attempts: int
    ) -> replies.ReleaseKind:
        """Hand a held job back to the front of the pool (or the DLQ), a zone's job to the front of another of its
        printers that can print when one can. Returns released, dead, done or not_owner.

        One call; two for a job of a zone, whose printers' keys the script names in its first answer."""
        k = self.encoded_keys
        mine, job, where, why = k.printer(me), enc(job_id), enc(location), enc(reason)
        dead_after, maxlen = self.zone_dead_after_ms, self.events_maxlen
        released = await self.scripts.run(
            specs.RELEASE.call(k, mine, job, where, outcome, why, max_attempts, maxlen, dead_after)
        )
        if released.kind is replies.ReleaseKind.ZONES:
            released = await self.scripts.run(
                specs.RELEASE.call(
                    k, mine, job, where, outcome, why, max_attempts, maxlen, dead_after, released.printers
                )
            )
        if released.kind is replies.ReleaseKind.ZONES:
            raise RuntimeError(f"release of {job_id}: the zone printers' keys were given and asked for again")
        return released.kind

    async def reflag(self, me: str, location: str, job_id: str, epoch: int) -> replies.ReflagKind:
        """Mark a job maybe printed here again, from the journal's record of an unknown outcome (reflag.lua): a
        failover can lose the flag ``release`` wrote. Changes nothing where Redis kept it."""
        k = self.encoded_keys
        return await self.scripts.run(
            specs.REFLAG.call(k, k.printer(me), enc(job_id), _enc_name(location), epoch, self.events_maxlen)
        )

    async def dead_letter(self, me: str, job_id: str, reason: str) -> replies.DeadLetterKind:
        k = self.encoded_keys
        return await self.scripts.run(
            specs.DEAD_LETTER.call(k, k.printer(me), enc(job_id), enc(reason), self.events_maxlen)
        )

    async def inflight(self, me: str) -> list[str]:
        return [dec(x) for x in await self.redis.lrange(self.encoded_keys.printer(me).inflight, 0, -1)]

    async def begun_here(self, me: str, job_id: str) -> bool:
        """True when the job's record says this printer began it and nothing settled it since: it may be at the
        printer or on paper.

        One read of the record (state and printer in one HMGET): begin.lua sets state ``printing`` and the printer,
        and every step that moves a job out of an in-flight list sets state ``queued`` and printer "" (the same
        record reclaim.lua reads to flag a dead printer's held job). A job held here with any other record was moved
        into in-flight and never begun (a take or pool pop whose reply was lost).
        """
        k = self.encoded_keys
        state, printer = await self.redis.hmget(k.job(enc(job_id)), [b"state", b"printer"])
        return state == b"printing" and printer == k.printer(me).name

    # -- liveness ------------------------------------------------------------------------------------------------

    async def beat(self, me: str, health: dict[str, Any], ttl_ms: int, first: bool) -> replies.Beat:
        k = self.encoded_keys
        health_json = enc(json.dumps(health, ensure_ascii=False))
        location = enc(str(health.get("location", "")))
        beat = await self.scripts.run(
            specs.BEAT.call(k, k.printer(me), health_json, ttl_ms, self.events_maxlen, first, location)
        )
        self._beat_clock = (beat.server_ms, time.monotonic())
        return beat

    async def sweep(self, me: str, dead_after_ms: int, lease_ms: int, limit: int = 16) -> list[str]:
        """Names of peers whose heartbeat is stale, if we won this interval's sweep lease (else [])."""
        k = self.encoded_keys
        return await self.scripts.run(specs.SWEEP.call(k, k.printer(me), dead_after_ms, lease_ms, limit))

    async def reclaim(
        self,
        victim: str,
        by: str,
        dead_after_ms: int | None,
        dead_ttl_ms: int = 3_600_000,
    ) -> replies.Reclaimed:
        """Hand a dead agent's held and pinned jobs on: a zone's job to another of its printers that can print, any
        other to the front of the pool. ``dead_after_ms=None`` forces it.

        Two steps because the held job's and the queued jobs' keys must be named in KEYS: look at what it holds and
        has queued, then reclaim on the condition that it still holds and has queued exactly that (the script
        answers "retry" otherwise, or "zones" with the zone printers whose keys it needs as well).
        """
        k = self.encoded_keys
        theirs = k.printer(victim)
        # The rest of a group it claimed goes on whole first (group_back), so that its job in hand, when of the
        # group, goes with it, not to the pool.
        back = await self.group_back(victim, by, dead_after_ms, "agent stopped beating")
        if back.kind is replies.GroupBackKind.ALIVE:
            return replies.Reclaimed(replies.ReclaimKind.ALIVE)
        zone: tuple[str, ...] = ()
        for _ in range(HAND_ON_TRIES):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.lrange(theirs.inflight, 0, -1)
                pipe.lrange(theirs.queue, 0, -1)
                held, queue = await pipe.execute()
            result = await self.scripts.run(
                specs.RECLAIM.call(
                    k,
                    theirs,
                    dead_after_ms,
                    held,
                    enc(by),
                    self.events_maxlen,
                    dead_ttl_ms,
                    self.zone_dead_after_ms,
                    queue,
                    zone,
                )
            )
            if result.kind is replies.ReclaimKind.ZONES:
                zone = tuple(sorted({*zone, *result.printers}))
            elif result.kind is not replies.ReclaimKind.RETRY:
                return result
        return replies.Reclaimed(replies.ReclaimKind.RETRY)

    async def steal(self, me: str, affinity_ms: int, look: int = STEAL_LOOK) -> str | None:
        """Take the oldest pinned job of another printer that has waited ``affinity_ms``. Returns its id or None.

        One ZRANGE on the venue's pinned index, whatever the number of printers; the ``steal`` script runs only for
        a job that looks old enough on the server's clock, and re-checks everything itself. A job of a zone this
        printer is not in is taken only when none of its zone's printers can print (beating within
        ``zone_dead_after_ms``, ready or printing, not drained): the script asks for their keys once, and while one of
        them can, the look goes on past that queue (only a queue's oldest job can be stolen) to the next oldest job.
        A job's zone never changes, so the printers the script asked for are remembered and sent with the first call
        the next time: an idle outsider's look at a zone job kept for its zone costs one script call.
        """
        k = self.encoded_keys
        oldest = cast(list[tuple[bytes, float]], await self.redis.zrange(k.pinned, 0, look - 1, withscores=True))
        now = self._server_now_ms()
        kept: set[str] = set()  # queues whose oldest job waits for its zone: nothing behind it can be stolen
        for raw, score in oldest:
            owner, job_id = split_pinned_member(dec(raw))
            if owner == me or owner in kept:
                continue  # ours (`take` serves it), or behind a job kept for its zone
            if now is not None and now - score < affinity_ms:
                return None  # the oldest job a peer has waiting is not old enough, so none is
            for _ in range(2):  # a second time only when the script asked for a zone's printers
                stole = await self.scripts.run(
                    specs.STEAL.call(
                        k,
                        k.printer(me),
                        k.printer(owner),
                        enc(job_id),
                        affinity_ms,
                        self.events_maxlen,
                        self.zone_dead_after_ms,
                        self._job_zones.get(job_id, ()),
                    )
                )
                if stole.kind is not replies.StealKind.ZONES:
                    break
                if len(self._job_zones) >= JOB_ZONES_KEPT:
                    self._job_zones.clear()
                self._job_zones[job_id] = stole.printers
            if stole.kind is replies.StealKind.STOLEN:
                return job_id
            if stole.kind in (replies.StealKind.ZONE, replies.StealKind.ONLY):
                kept.add(owner)
            elif stole.kind not in (replies.StealKind.MOVED, replies.StealKind.STALE):
                return None  # busy, drained, or young after all (no beat yet to judge by): nothing to try further
            # Its owner or another peer took it since we looked, or it waits for its zone: the next oldest may not.
        return None

    def _server_now_ms(self) -> float | None:
        """Redis time now, from the last heartbeat's server time plus the monotonic time since; None before one."""
        if self._beat_clock is None:
            return None
        server_ms, at = self._beat_clock
        return server_ms + (time.monotonic() - at) * 1000

    async def drain(self, printer: str, order: Literal["drain", "resume"], by: str) -> int:
        """Drain a printer (its pinned jobs handed on as ``handback`` does) or resume it. Returns the jobs moved."""
        k = self.encoded_keys
        mine = k.printer(printer)
        return await self._hand_on(
            mine,
            lambda queue, zone: specs.DRAIN.call(
                k, mine, order, enc(by), self.events_maxlen, self.zone_dead_after_ms, queue, zone
            ),
        )

    async def _hand_on(
        self, printer: PrinterKeys, call: Callable[[list[bytes], tuple[str, ...]], ScriptCall[replies.HandedOn]]
    ) -> int:
        """Run a step that hands a printer's pinned queue on (handback, drain): read the queue, call the step with it
        (and the zone printers' keys it asked for), again while the queue changed in between. Returns the jobs moved."""
        zone: tuple[str, ...] = ()
        for _ in range(HAND_ON_TRIES):
            queue = cast(list[bytes], await self.redis.lrange(printer.queue, 0, -1))
            result = await self.scripts.run(call(queue, zone))
            if result.kind is replies.HandOnKind.MOVED:
                return result.moved
            if result.kind is replies.HandOnKind.ZONES:
                zone = tuple(sorted({*zone, *result.printers}))
        raise QueueKeptChanging(f"the pinned queue of {dec(printer.name)} kept changing ({HAND_ON_TRIES} tries)")

    async def requeue(self, job_id: str, by: str) -> replies.RequeueKind:
        return await self.scripts.run(specs.REQUEUE.call(self.encoded_keys, enc(job_id), enc(by), self.events_maxlen))

    # -- staff operations: reprint and cancel (reprint.lua, cancel.lua) ----------------------------------------------

    async def reprint(
        self,
        job_id: str,
        reason: str,
        by: str,
        cap: int,
        force: bool,
        pinned: str | None = None,
        zone: Zoned | None = None,
    ) -> replies.Reprinted:
        """Start a new print round of a printed or dead job. Returns ("reprint", count), ("no_job", ""),
        ("refused", state) or ("cap", count). Every printer's in-flight list is named (reprint.lua): a printer must
        beat, and so be in ``printers``, before it takes anything, so none that could hold the job is left out.
        ``pinned``: the printer the round waits for (the desk's; None: the front of the pool); ``zone``: the zone
        the round then belongs to and its printers (``Job.zoned``), as enqueue records them."""
        k = self.encoded_keys
        inflight = [k.printer(dec(name)).inflight for name in sorted(await self.redis.hkeys(k.printers))]
        return await self.scripts.run(
            specs.REPRINT.call(
                k,
                enc(job_id),
                enc(reason),
                enc(by),
                cap,
                force,
                self.events_maxlen,
                inflight,
                k.printer(pinned) if pinned else None,
                zone_args(zone),
            )
        )

    async def round_epoch(self, job_id: str) -> int:
        """The epoch at which the job's latest reprint round began (0 when never reprinted)."""
        raw = await self.redis.hget(self.encoded_keys.job(enc(job_id)), "round_epoch")
        return int(dec(raw) or 0)

    async def cancel(self, job_id: str, by: str) -> replies.Cancelled:
        """Withdraw a job no printer has taken. Returns ("cancelled", ""), ("no_job", "") or ("refused", state)."""
        k = self.encoded_keys
        job = enc(job_id)
        for _ in range(5):  # "retry": its pin changed between the read and the script (a job's pin never does)
            pinned = dec(await self.redis.hget(k.job(job), "pinned"))
            result = await self.scripts.run(
                specs.CANCEL.call(k, job, k.printer(pinned) if pinned else None, enc(by), self.events_maxlen)
            )
            if result.kind is not replies.CancelKind.RETRY:
                return result
        return replies.Cancelled(replies.CancelKind.REFUSED, "changing")

    async def dlq(self) -> list[str]:
        return [dec(x) for x in await self.redis.lrange(self.encoded_keys.dlq, 0, -1)]

    async def printers(self) -> dict[str, str]:
        """Every printer that ever beat in this venue -> its location."""
        raw = await self.redis.hgetall(self.encoded_keys.printers)
        return {dec(name): dec(location) for name, location in raw.items()}

    async def handback(self, me: str, reason: str) -> int:
        """Hand this printer's pinned jobs on (it is down): a zone's job to another of its printers that can print,
        any other to the front of the pool. Returns the jobs moved."""
        k = self.encoded_keys
        mine = k.printer(me)
        return await self._hand_on(
            mine,
            lambda queue, zone: specs.HANDBACK.call(
                k, mine, enc(reason), self.events_maxlen, self.zone_dead_after_ms, queue, zone
            ),
        )

    # -- groups: jobs one printer prints whole and in order (a box of pre-printed badges) ----------------------------

    async def add_group(
        self, group_id: str, jobs: Sequence[specs.GroupJob], printers: Sequence[str] = (), cont: str = ""
    ) -> replies.GroupAdded:
        """Add a group of jobs (in print order) for one printer to claim whole; ``printers``: who may (none: any);
        ``cont``: the payload of the label that opens its rest when it is handed on mid-way, with ``{first}`` and
        ``{count}`` filled in (group_back.lua)."""
        k = self.encoded_keys
        return await self.scripts.run(
            specs.GROUP_ADD.call(k, enc(group_id), printers, enc(cont), self.events_maxlen, jobs)
        )

    async def claim_group(self, me: str, look: int = GROUP_LOOK) -> replies.GroupClaimed | None:
        """Claim the oldest waiting group this printer may print (one read of the list, one of each candidate's
        printers, then the script, which checks again). None when none is waiting for it."""
        k = self.encoded_keys
        waiting = cast(list[bytes], await self.redis.lrange(k.groups, -look, -1))
        if not waiting:
            return None
        oldest_first = [bytes(g) for g in reversed(waiting)]
        async with self.redis.pipeline(transaction=False) as pipe:
            for group_id in oldest_first:
                pipe.hget(k.group(group_id), "printers")
            allowed = await pipe.execute()
        for group_id, printers in zip(oldest_first, allowed, strict=True):
            if printers and me not in dec(printers).split():
                continue
            claimed = await self.scripts.run(specs.GROUP_CLAIM.call(k, k.printer(me), group_id, self.events_maxlen))
            if claimed.kind is replies.GroupClaimKind.CLAIMED or claimed.why in ("drained", "busy"):
                return claimed
        return None

    async def group_back(self, printer: str, by: str, dead_after_ms: int | None, reason: str) -> replies.GroupBack:
        """Hand the rest of the group ``printer`` claimed back whole (group_back.lua); ``dead_after_ms=None``: do
        it whatever its heartbeat says (its own agent asks)."""
        k = self.encoded_keys
        theirs = k.printer(printer)
        for _ in range(HAND_ON_TRIES):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(theirs.group_claim)
                pipe.lrange(theirs.inflight, 0, -1)
                claimed, held = await pipe.execute()
            if claimed is None:
                return replies.GroupBack(replies.GroupBackKind.NONE)
            group_id = bytes(claimed)
            continued = dec(await self.redis.hget(k.group(group_id), "continued") or b"")
            # A count that is no number (written by hand) restarts in the script (bump); the label's id too.
            done_before = int(continued) if continued.isdigit() else 0
            cont_id = group_id + b":c" + str(done_before + 1).encode()
            back = await self.scripts.run(
                specs.GROUP_BACK.call(
                    k,
                    theirs,
                    dead_after_ms,
                    group_id,
                    [bytes(job_id) for job_id in held],
                    cont_id,
                    enc(by),
                    self.events_maxlen,
                    enc(reason),
                )
            )
            if back.kind is not replies.GroupBackKind.RETRY:
                return back
        return replies.GroupBack(replies.GroupBackKind.RETRY)

    async def event(self, event: str, printer: str, **fields: str) -> bool:
        """Write one audit event that goes with no other change (device_down, device_up, agent_stopped). False when
        a Redis over ``maxmemory`` refused it: such an event is told in the agent's log and health only, and the
        step it reports goes on."""
        data = {"event": event, "printer": printer, **fields}
        try:
            await self.redis.xadd(
                self.encoded_keys.events, {k: enc(v) for k, v in data.items()}, maxlen=self.events_maxlen
            )
        except OutOfMemoryError:
            return False
        return True

    async def leave(self, me: str, health: dict[str, Any]) -> None:
        """A clean stop: publish the final health and leave the heartbeat set, so no peer reclaims anything."""
        k = self.encoded_keys
        mine = k.printer(me)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(mine.health, json.dumps(health, ensure_ascii=False), px=24 * 3600 * 1000)
            pipe.zrem(k.hb, mine.name)
            await pipe.execute()

    async def server_ms(self) -> int:
        sec, usec = await self.redis.time()
        return int(sec) * 1000 + int(usec) // 1000
