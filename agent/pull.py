"""The pull loop: take the next badge, begin it, print it, confirm it. One badge at a time, read top-down in ``run``.

Ownership of a badge is decided in Redis (``inflight:<me>``), never in this process's memory: ``begin`` checks right
before printing that the job is still ours, and after any Redis error the loop settles its in-flight list from the
journal (agent/recovery.py) instead of trusting what it believed before the error.

The loop owns all of its state, each piece written here only:

- ``lookahead``: what the ``take`` that rode with the last confirm said about the next job (unknown, empty,
  taken(id), drained);
- ``must_recover``: set at start and after a Redis error, cleared by recovery; a master change (Sentinel) or a
  heartbeat answer "peers declared you dead" is noticed by comparing counters the connection and the heartbeat
  keep, so no other task writes a flag here;
- ``printing``: the job id between the first byte and the outcome;
- ``ahead``: the next badge, drawn while the current one prints (agent/draw_ahead.py).

One rule decides whether this printer may take another badge now (``blocked``): the top of the loop waits on it,
and a confirm lets ``take`` ride along only when it allows.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from agent.connection import master_changes, wait_for_redis
from agent.draw_ahead import DrawAhead
from agent.errors import JobError
from agent.jobs import job_from_payload
from agent.liveness import Loop
from agent.logs import kv
from agent.printer import clear_buffer, print_badge
from agent.protocol.replies import BeginKind, Begun, Source
from agent.protocol.store import ReleaseOutcome
from agent.recovery import recover
from agent.venue_fault import venue_fault_name
from drivers.base import Outcome, PrintResult, RenderError

if TYPE_CHECKING:
    from agent.runtime import Agent

log = logging.getLogger("agent")


class Lookahead(enum.Enum):
    UNKNOWN = "unknown"  # ask ``take``
    EMPTY = "empty"  # the take that rode with the last confirm found both lists empty: wait on the pool
    DRAINED = "drained"  # take answered that an operator drained this printer (before the heartbeat said so)


@dataclass(frozen=True)
class TakenAhead:
    """The take that rode with the last confirm moved this job into our in-flight list."""

    job_id: str


class Blocked(enum.Enum):
    """Why this printer may not take a badge now (``PullLoop.blocked``)."""

    STOPPING = "stopping"
    LOST_TRACK = "lost track"  # the master moved or peers declared us dead: recover before anything else
    NO_LEASE = "no lease"  # our heartbeat is too old: a peer may be taking our work
    DRAINED = "drained by an operator"
    NOT_READY = "printer not ready"


class PullLoop:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.store = agent.store
        self.journal = agent.journal
        self.me = agent.me
        self.location = agent.location
        self.max_attempts = agent.config.jobs.max_attempts
        self.lookahead: Lookahead | TakenAhead = Lookahead.UNKNOWN
        self.must_recover = True
        self.printing: str | None = None
        self.printed = 0
        self._seen_master_changes = 0
        self._seen_declared_dead = 0
        self._last_steal_look = 0.0
        self.ahead = DrawAhead(self.store, self.me, agent.driver, agent.metrics, agent.layouts_generation)

    # -- the loop --------------------------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            self.ahead.cancel()

    async def _run(self) -> None:
        agent = self.agent
        while not agent.stopping.is_set():
            agent.mark_alive(Loop.PULL)
            try:
                if self.must_recover or self._lost_track():
                    await self.recover()
                blocked = self.blocked()
                if blocked is not None:
                    await self.wait(blocked)
                    continue
                job_id = await self._next_job()
                if job_id is not None:
                    await self.handle(job_id)
            except (RedisError, OSError) as exc:
                self.must_recover = True
                await self._after_redis_error(exc)

    def blocked(self) -> Blocked | None:
        """The one "may this printer take another badge now" rule; None when it may."""
        agent = self.agent
        if agent.stopping.is_set():
            return Blocked.STOPPING
        if self._lost_track():
            return Blocked.LOST_TRACK
        if not agent.lease_ok():
            return Blocked.NO_LEASE
        if agent.drained or self.lookahead is Lookahead.DRAINED:
            return Blocked.DRAINED
        if not agent.device.ready.is_set():
            return Blocked.NOT_READY
        return None

    async def wait(self, blocked: Blocked) -> None:
        """Wait (bounded) for what blocks this printer to clear; the loop then asks ``blocked`` again."""
        agent = self.agent
        timing = agent.timing
        if blocked in (Blocked.STOPPING, Blocked.LOST_TRACK):
            return
        if blocked is Blocked.NO_LEASE:
            # Not yet beating (start-up, Redis back from an outage): taking work now would only release it again.
            # A job the last confirm's take moved in stays held: peers reclaim it if they declare us dead, and begin
            # checks it is still ours before anything is printed.
            await asyncio.sleep(min(0.05, timing.heartbeat_interval))
            return
        if isinstance(self.lookahead, TakenAhead):
            await self._put_back(self.lookahead.job_id, blocked)
        if blocked is Blocked.DRAINED:
            self.lookahead = Lookahead.UNKNOWN  # ask take again after the pause: the order may have been lifted
            await agent.sleep_unless_stopping(timing.block_timeout)
            return
        ready = asyncio.create_task(agent.device.ready.wait())
        stop = asyncio.create_task(agent.stopping.wait())
        try:
            await asyncio.wait([ready, stop], timeout=timing.block_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:  # also when the shutdown cancels us here: no waiter outlives the loop
            ready.cancel()
            stop.cancel()

    async def _put_back(self, job_id: str, blocked: Blocked) -> None:
        """The printer stopped being able to print after the next job was taken: give it back rather than sit on it."""
        self.lookahead = Lookahead.UNKNOWN
        await self.store.release(self.me, self.location, job_id, "unsent", blocked.value, self.max_attempts)

    async def _next_job(self) -> str | None:
        """The job to print next, moved into our in-flight list: the lookahead's, or take's, a stolen one, or the
        pool's next within one blocking pop. None when nothing came."""
        ahead, self.lookahead = self.lookahead, Lookahead.UNKNOWN
        if isinstance(ahead, TakenAhead):
            self.agent.venue_fault.clear()
            return ahead.job_id
        if ahead is Lookahead.UNKNOWN:
            taken = await self.store.take(self.me)
            self.agent.venue_fault.clear()
            if taken is not None and taken.source is Source.DRAINED:
                self.lookahead = Lookahead.DRAINED
                return None
            if taken is not None:
                return taken.job_id
        stolen = await self._steal()
        if stolen is not None:
            return stolen
        popped = await self.store.wait_pool(self.me, self.agent.timing.block_timeout)
        if popped is not None and await self._drained_while_waiting(popped):
            return None
        return popped

    async def _drained_while_waiting(self, job_id: str) -> bool:
        """True when an operator drained this printer while it waited in the blocking pop: the job went back.

        The pop cannot read the drain order the way ``take`` and ``steal`` do, and the heartbeat may not have heard
        of it yet. ``take`` reads the order first (otherwise it answers with the job we now hold), so it is asked
        once more: a job that arrived after the drain goes back unbegun to the front of the pool it came from.
        """
        taken = await self.store.take(self.me)
        if taken is None or taken.source is not Source.DRAINED:
            return False
        await self._put_back(job_id, Blocked.DRAINED)
        self.lookahead = Lookahead.DRAINED
        return True

    async def _steal(self) -> str | None:
        """Idle: take a pinned job another printer has left waiting longer than ``affinity_wait``."""
        timing = self.agent.timing
        now = time.monotonic()
        # A look is one read of the venue's pinned index; a few looks per affinity window steal a job at most a fifth
        # of the window late, and keep an idle venue's reads at one per agent every couple of seconds.
        if now - self._last_steal_look < max(timing.block_timeout, timing.affinity_wait / 5):
            return None
        self._last_steal_look = now
        stolen = await self.store.steal(self.me, int(timing.affinity_wait * 1000))
        if stolen is not None:
            log.info("took a pinned job its printer left waiting", extra=kv(job=stolen))
        return stolen

    # -- one badge -------------------------------------------------------------------------------------------------

    async def handle(self, job_id: str, *, may_take_next: bool = True) -> None:
        """Begin, draw, print and settle one job found in our in-flight list.

        ``may_take_next``: a confirm may take the next job in the same round trip (not while recovery settles the
        in-flight list, which must end with nothing taken behind its back).
        """
        agent = self.agent
        begun = await self.store.begin(self.me, self.location, job_id)
        if begun.kind is not BeginKind.PRINT:
            # dead, dropped: the record or the list contradicted the protocol (begin.lua): staff must look.
            (log.warning if begun.kind in (BeginKind.DEAD, BeginKind.DROPPED) else log.info)(
                "not printing", extra=kv(job=job_id, because=begun.kind, detail=begun.detail)
            )
            agent.metrics.skipped.labels(begun.kind).inc()
            return
        if await self._printed_this_round(job_id):
            # Redis lost our confirm (restart or failover) and handed the job out again: it is on paper already.
            kind, _ = await self.store.confirm(self.me, self.location, job_id, begun.epoch)
            log.warning(
                "job came back after Redis lost its confirm; confirmed again, not reprinted",
                extra=kv(job=job_id, confirm=kind),
            )
            return
        try:
            badge = job_from_payload(begun.payload).badge()
            data = await self.ahead.take(begun.payload) or await self.ahead.draw(badge)
        except (JobError, RenderError) as exc:
            await self.store.dead_letter(self.me, job_id, str(exc))
            log.error("job dead-lettered", extra=kv(job=job_id, reason=exc))
            agent.metrics.dead_lettered.inc()
            return
        # Recorded before the lease is checked: where each record is synced, a slow card can stall here, and that
        # must not open a gap between the check and the first byte in which peers declare us dead and take the job.
        await self.journal.append(job_id, begun.epoch, "sending", durable=True)
        if agent.stopping.is_set() or not agent.lease_ok():
            why = "agent stopping" if agent.stopping.is_set() else "agent lost contact with Redis before sending"
            await self.journal.append(job_id, begun.epoch, "closed")  # nothing was sent: not "maybe printed"
            released = await self.store.release(self.me, self.location, job_id, "unsent", why, self.max_attempts)
            agent.metrics.released.labels("unsent", released).inc()
            return
        self.printing = job_id
        send_started = time.monotonic()
        self.ahead.start()
        try:
            result = await print_badge(agent.driver, data, badge, agent.config.printer.driver.print_timeout)
        finally:
            self.printing = None
        seconds = time.monotonic() - send_started
        if result.status is not None:
            await agent.device.observe(result.status)
        if result.outcome is Outcome.PRINTED:
            await self._confirm(job_id, begun, seconds, may_take_next)
        else:
            await self._release(job_id, begun, result, seconds)

    async def _printed_this_round(self, job_id: str) -> bool:
        """True when the journal says this printer printed the job in its current round (not before a reprint)."""
        printed_epoch = self.journal.printed_here(job_id)
        # A print from before the job's latest reprint round (reprint.lua) is not this round's copy.
        return printed_epoch is not None and printed_epoch > await self.store.round_epoch(job_id)

    async def _confirm(self, job_id: str, begun: Begun, seconds: float, may_take_next: bool) -> None:
        """The printer proved the badge: record it, tell Redis, and let ``take`` ride along when the rule allows."""
        await self.journal.append(job_id, begun.epoch, "printed", durable=True)
        self.ahead.print_seconds.append(seconds)
        layout = self.agent.layouts.used(job_id) if self.agent.layouts is not None else None
        if may_take_next and self.blocked() is None:
            (kind, where), taken = await self.store.confirm_then_take(
                self.me, self.location, job_id, begun.epoch, layout
            )
            if taken is None:
                self.lookahead = Lookahead.EMPTY
            elif taken.source is Source.DRAINED:
                self.lookahead = Lookahead.DRAINED  # the operator's order reached take before the heartbeat
            else:
                self.lookahead = TakenAhead(taken.job_id)
        else:
            kind, where = await self.store.confirm(self.me, self.location, job_id, begun.epoch, layout)
        # The "closed" record only spares recovery a confirm (a no-op for a confirmed badge): a crash before it is
        # written leaves a "printed" record that recovery confirms again, harmlessly.
        await self.journal.append(job_id, begun.epoch, "closed")
        self.printed += 1
        # The counters and the log line change nothing the next badge depends on: they run at the event loop's next
        # turn, which comes while Redis works on that badge's begin, not before it is sent (bench/hot_path.py).
        asyncio.get_running_loop().call_soon(self._count_printed, job_id, begun.attempts, kind, where, seconds)

    def _count_printed(self, job_id: str, attempt: int, kind: str, where: str, seconds: float) -> None:
        self.agent.metrics.count_print("printed", seconds, kind, where)
        log.info("printed", extra=kv(job=job_id, attempt=attempt, confirm=kind, maybe_also_at=where))

    async def _release(self, job_id: str, begun: Begun, result: PrintResult, seconds: float) -> None:
        """Not proved printed: hand the job back. Nothing reached the printer: the printer failed, not the badge, so
        the job keeps its attempts."""
        agent = self.agent
        outcome: ReleaseOutcome = "failed" if result.sent else "unsent"
        if result.outcome is Outcome.UNKNOWN:
            outcome = "unknown"
            await clear_buffer(agent.driver, agent.config.printer.driver.io_timeout)
        agent.metrics.count_print(outcome, seconds)
        released = await self.store.release(self.me, self.location, job_id, outcome, result.reason, self.max_attempts)
        agent.metrics.released.labels(outcome, released).inc()
        await self.journal.append(job_id, begun.epoch, "closed")
        log.warning("badge not confirmed; released", extra=kv(job=job_id, outcome=result.outcome, reason=result.reason))

    # -- recovery --------------------------------------------------------------------------------------------------

    def _lost_track(self) -> bool:
        """True when the master moved (Sentinel) or peers declared us dead since the last recovery."""
        return (
            master_changes(self.agent.redis) != self._seen_master_changes
            or self.agent.declared_dead != self._seen_declared_dead
        )

    async def recover(self, *, stopping: bool = False) -> None:
        """Settle whatever our in-flight list holds (agent/recovery.py), then trust it again."""
        moved = master_changes(self.agent.redis)
        declared_dead = self.agent.declared_dead
        self.lookahead = Lookahead.UNKNOWN  # recovery settles whatever in-flight holds, a taken lookahead included
        await recover(self, stopping=stopping, master_moved=moved > 0)
        self._seen_master_changes, self._seen_declared_dead = moved, declared_dead
        self.must_recover = False

    async def _after_redis_error(self, exc: RedisError | OSError) -> None:
        agent = self.agent
        agent.redis_errors += 1
        fault = venue_fault_name(exc)
        if fault is not None and isinstance(exc, RedisError):
            # Redis answers and will refuse again: back off, say so once per interval (agent/venue_fault.py).
            await agent.sleep_unless_stopping(agent.venue_fault.failed(fault, exc))
            return
        log.warning("redis unavailable; will recover before taking more work", extra=kv(error=exc))
        await wait_for_redis(agent.redis, agent.timing.heartbeat_interval, agent.stopping)
