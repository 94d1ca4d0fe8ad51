"""The pull loop: take the next badge, begin it, print it, confirm it. One badge at a time, read top-down: ``run``
takes (``_next_job``, or the take that rode with the last confirm), ``handle`` begins, draws and prints, and
``_confirm`` confirms, letting the next take ride along. A printer that holds the next badge while one prints (an
IPP printer: ``driver.holds`` 2) is handed it early (``_print_held``); the in-flight list then holds both.

Ownership of a badge is decided in Redis (``inflight:<me>``), never in this process's memory: ``begin`` checks right
before printing that the job is still ours (and that its record, and a payload it can decode, are for this job), and
after any Redis error the loop settles its in-flight list from the journal (agent/recovery.py) instead of trusting
what it believed before the error.

Built from narrow parts: the store (protocol/store.py), the journal (agent/journal.py), the printer
(agent/printer.py: the driver and its timeouts), the gate (agent/gate.py: may this printer take a badge now?) and a
sink of events (agent/pull_events.py) that the metrics and the log listen to. Each piece of the loop's own state is
written here only:

- ``lookahead``: what the ``take`` that rode with the last confirm said about the next job (unknown, empty,
  taken(id), drained);
- ``must_recover``: set at start and after a Redis error, cleared by ``recover``; a master change (Sentinel) or a
  heartbeat answer "peers declared you dead" is lost track, which the gate notices by itself;
- ``printing``: the job id between the first byte and the outcome;
- ``printed``: badges confirmed since start, by this loop or by its recovery (which returns its counts);
- ``venue_fault`` and ``redis_errors``: Redis errors this loop met (the snapshot shows them);
- ``ahead``: the next badge, drawn while the current one prints (agent/draw_ahead.py, which keeps its own timings).

One rule decides whether this printer may take another badge now (``blocked``: the gate's, plus a drain order the
last take answered): the top of the loop waits on it, and a confirm lets ``take`` ride along only when it allows.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis.exceptions import RedisError

from agent.config import TimingConfig
from agent.draw_ahead import DrawAhead
from agent.gate import Blocked, Gate
from agent.journal import Journal
from agent.printer import Printer
from agent.pull_events import PullEvents
from agent.recovery import Recovered, Recovery
from agent.venue_fault import VenueFaultBackoff, venue_fault_name
from core.errors import JobError
from core.logs import kv
from drivers.base import Badge, Handed, Outcome, PrintResult, RenderError
from layouts.book import LayoutBook
from protocol.connection import wait_for_redis
from protocol.jobs import job_from_payload
from protocol.replies import BeginKind, Begun, ConfirmKind, GroupBackKind, GroupClaimKind, Source
from protocol.store import ReleaseOutcome, Store

log = logging.getLogger("agent")


class Lookahead(enum.Enum):
    UNKNOWN = "unknown"  # ask ``take``
    EMPTY = "empty"  # the take that rode with the last confirm found both lists empty: wait on the pool
    DRAINED = "drained"  # take answered that an operator drained this printer (before the heartbeat said so)


@dataclass(frozen=True)
class Ready:
    """A badge begun, drawn and recorded ``sending``: what is left is to send it."""

    job_id: str
    begun: Begun
    badge: Badge
    data: bytes


@dataclass(frozen=True)
class TakenAhead:
    """The take that rode with the last confirm moved this job into our in-flight list."""

    job_id: str


class PullLoop:
    def __init__(
        self,
        store: Store,
        journal: Journal,
        printer: Printer,
        gate: Gate,
        events: PullEvents,
        *,
        me: str,
        location: str,
        timing: TimingConfig,
        max_attempts: int,
        layouts: LayoutBook | None = None,
        alive: Callable[[], None] = lambda: None,
    ) -> None:
        """``layouts``: the venue's badge layouts the driver draws with (None: the driver's own design, as for the
        simulated printer); ``alive``: called as each iteration starts (the watchdog's input, agent/liveness.py)."""
        self.store = store
        self.journal = journal
        self.printer = printer
        self.gate = gate
        self.events = events
        self.me = me
        self.location = location
        self.timing = timing
        self.max_attempts = max_attempts
        self.layouts = layouts
        self.alive = alive
        self.lookahead: Lookahead | TakenAhead = Lookahead.UNKNOWN
        self.must_recover = True
        self.printing: str | None = None
        self.printed = 0
        self.redis_errors = 0
        self.venue_fault = VenueFaultBackoff()  # a Redis error retrying cannot fix (agent/venue_fault.py)
        self._last_steal_look = 0.0
        # Since when the printer has been unable to print (None: it can), and whether the box it claimed was handed
        # on in this episode (``_group_back_if_long_unready``).
        self._unready_since: float | None = None
        self._group_handed_back = False
        self.ahead = DrawAhead(store, me, printer.driver, events, lambda: layouts.generation if layouts else 0)
        self.recovery = Recovery(store, journal, printer, me, location, max_attempts)

    # -- the loop --------------------------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            self.ahead.cancel()

    async def _run(self) -> None:
        gate = self.gate
        while not gate.stopping.is_set():
            self.alive()
            try:
                if self.must_recover or gate.lost_track():
                    await self.recover()
                blocked = self.blocked()
                if blocked is not None:
                    await self.wait(blocked)
                    continue
                self._unready_since, self._group_handed_back = None, False
                job_id = await self._next_job()
                if job_id is not None:
                    await self.handle(job_id)
            except (RedisError, OSError) as exc:
                self.must_recover = True
                await self._after_redis_error(exc)

    def blocked(self) -> Blocked | None:
        """The one "may this printer take another badge now" rule (the gate's); None when it may."""
        return self.gate.blocked(drained_by_take=self.lookahead is Lookahead.DRAINED)

    async def wait(self, blocked: Blocked) -> None:
        """Wait (bounded) for what blocks this printer to clear; the loop then asks ``blocked`` again."""
        timing = self.timing
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
        if blocked in (Blocked.NOT_READY, Blocked.DRAINED):
            await self._group_back_if_long_unready(at_once=blocked is Blocked.DRAINED)
        if blocked is Blocked.DRAINED:
            self.lookahead = Lookahead.UNKNOWN  # ask take again after the pause: the order may have been lifted
            await self.gate.sleep(timing.block_timeout)
            return
        await self.gate.wait_ready(timing.block_timeout)

    async def _group_back_if_long_unready(self, at_once: bool = False) -> None:
        """A printer that cannot print (out of labels, jammed) keeps the box it claimed while the fault may clear
        soon; past the dead-after bound, as if its agent had died, the rest of the box goes on whole to another
        printer (``group_back``), opened by its continuation label. ``at_once``: an operator drained it, which is no
        passing fault. Once per episode of not being able to print."""
        now = time.monotonic()
        if self._unready_since is None:
            self._unready_since = now
        if self._group_handed_back or (not at_once and now - self._unready_since < self.timing.dead_after):
            return
        self._group_handed_back = True
        seconds = now - self._unready_since
        back = await self.store.group_back(self.me, self.me, None, f"printer not ready for {seconds:.0f} s")
        if back.kind is GroupBackKind.BACK:
            log.warning(
                "printer not ready; the rest of its box goes to another printer",
                extra=kv(jobs=back.count, continued=back.continued),
            )

    async def _put_back(self, job_id: str, blocked: Blocked) -> None:
        """The printer stopped being able to print after the next job was taken: give it back rather than sit on it."""
        self.lookahead = Lookahead.UNKNOWN
        await self.store.release(self.me, self.location, job_id, "unsent", blocked.value, self.max_attempts)

    async def _next_job(self) -> str | None:
        """The job to print next, moved into our in-flight list: the lookahead's, or take's, a stolen one, or the
        pool's next within one blocking pop. None when nothing came."""
        ahead, self.lookahead = self.lookahead, Lookahead.UNKNOWN
        if isinstance(ahead, TakenAhead):
            self.venue_fault.clear()
            return ahead.job_id
        if ahead is Lookahead.UNKNOWN:
            taken = await self.store.take(self.me)
            self.venue_fault.clear()
            if taken is not None and taken.source is Source.DRAINED:
                self.lookahead = Lookahead.DRAINED
                return None
            if taken is not None:
                return taken.job_id
        stolen = await self._steal()
        if stolen is not None:
            return stolen
        grouped = await self._claim_group()
        if grouped is not None:
            return grouped
        popped = await self.store.wait_pool(self.me, self.timing.block_timeout)
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

    async def _claim_group(self) -> str | None:
        """Idle, with nothing of our own, in the pool or stolen: claim the oldest waiting group (a box of pre-printed
        badges) whole and take its first job. Door badges come first (take serves a claimed group only after this
        printer's pinned queue and the pool): a run printed before doors open must not keep anyone waiting."""
        claimed = await self.store.claim_group(self.me)
        if claimed is None or claimed.kind is not GroupClaimKind.CLAIMED:
            return None
        taken = await self.store.take(self.me)
        if taken is None or taken.source is Source.DRAINED:
            return None
        return taken.job_id

    async def _steal(self) -> str | None:
        """Idle: take a pinned job another printer has left waiting longer than ``affinity_wait``."""
        timing = self.timing
        now = time.monotonic()
        # A look is one read of the venue's pinned index; a few looks per affinity window steal a job at most a fifth
        # of the window late, and keep an idle venue's reads at one per agent every couple of seconds.
        if now - self._last_steal_look < max(timing.block_timeout, timing.affinity_wait / 5):
            return None
        self._last_steal_look = now
        stolen = await self.store.steal(self.me, int(timing.affinity_wait * 1000))
        if stolen is not None:
            self.events.stole(stolen)
        return stolen

    # -- one badge: begin, draw, print, confirm ------------------------------------------------------------------

    async def handle(self, job_id: str, *, may_take_next: bool = True) -> None:
        """Begin, draw, print and settle one job found in our in-flight list.

        ``may_take_next``: a confirm may take the next job in the same round trip (not while recovery settles the
        in-flight list, which must end with nothing taken behind its back); a printer that holds two badges
        (``driver.holds``) is then handed the next one while this one prints (``_print_held``).
        """
        ready = await self._ready(job_id)
        if ready is None:
            return
        if may_take_next and self.printer.driver.holds > 1:
            await self._print_held(ready)
            return
        self.printing = job_id
        send_started = time.monotonic()
        self.ahead.start()
        try:
            result = await self.printer.print(ready.data, ready.badge)
        finally:
            self.printing = None
        seconds = time.monotonic() - send_started
        if result.status is not None:
            await self.printer.observe(result.status)
        await self._settle(ready, result, seconds, may_take_next)

    async def _ready(self, job_id: str, *, turn: bool = False) -> Ready | None:
        """Begin and draw a job, and record ``sending``: what is left is to send it. None when it was settled
        otherwise (not ours any more, printed already, dead-lettered, or given back unsent).

        ``turn``: the badge goes behind one that prints; a printer that takes one job at a time keeps it here, drawn,
        until that one's outcome (``Printer.turn``), and only then is it recorded ``sending`` and the lease checked,
        right before its first byte."""
        # begin.lua, the last check before paper: the job is still in our in-flight list (else a peer reclaimed it),
        # has no done:<id> (else it printed already), has a record that agrees with the protocol, and its payload, if
        # it decodes as JSON, names this job_id (else it is dead-lettered as an integrity fault). Only then "print".
        begun = await self.store.begin(self.me, self.location, job_id)
        if begun.kind is not BeginKind.PRINT:
            self.events.skipped(job_id, begun)
            return None
        if await self._printed_this_round(job_id):
            # Redis lost our confirm (restart or failover) and handed the job out again: it is on paper already.
            kind, _ = await self.store.confirm(self.me, self.location, job_id, begun.epoch)
            self.events.confirmed_again(job_id, kind)
            return None
        try:
            badge = job_from_payload(begun.payload).badge()
            data = await self.ahead.take(begun.payload) or await self.ahead.draw(badge)
        except (JobError, RenderError) as exc:
            # A job that cannot be read or drawn: the agent dead-letters it. begin.lua checked the record (its state,
            # done, the key types) and that a payload it could decode as JSON names this job_id (one naming another is
            # dead-lettered there as an integrity fault); a payload that is not JSON, fails the job's checks
            # (protocol/jobs.py) or cannot be drawn, it left to us.
            await self.store.dead_letter(self.me, job_id, str(exc))
            self.events.dead_lettered(job_id, str(exc))
            return None
        refused = await self.printer.turn() if turn else None
        if refused is not None:
            # The badge before it did not print: this one never leaves the agent and goes back unflagged, its
            # attempt not counted. Nothing is journalled for it: nothing of it was sent.
            released = await self.store.release(
                self.me, self.location, job_id, "unsent", refused.reason, self.max_attempts
            )
            self.events.unsent(job_id, refused.reason, released)
            return None
        # Recorded before the lease is checked: where each record is synced, a slow card can stall here, and that
        # must not open a gap between the check and the first byte in which peers declare us dead and take the job.
        await self.journal.append(job_id, begun.epoch, "sending", durable=True)
        stopping = self.gate.stopping.is_set()
        if stopping or not self.gate.lease_ok():
            why = "agent stopping" if stopping else "agent lost contact with Redis before sending"
            await self.journal.append(job_id, begun.epoch, "closed")  # nothing was sent: not "maybe printed"
            released = await self.store.release(self.me, self.location, job_id, "unsent", why, self.max_attempts)
            self.events.unsent(job_id, why, released)
            return None
        return Ready(job_id, begun, badge, data)

    async def _settle(self, ready: Ready, result: PrintResult, seconds: float, may_take_next: bool) -> None:
        if result.outcome is Outcome.PRINTED:
            await self._confirm(ready.job_id, ready.begun, seconds, may_take_next)
        else:
            await self._release(ready.job_id, ready.begun, result, seconds)

    # -- the badge waiting at the printer ----------------------------------------------------------------------------

    async def _print_held(self, ready: Ready) -> None:
        """Print on a printer that holds the next badge while one prints (``driver.holds`` 2: an IPP printer).

        While a badge prints, the next is taken (``take`` with room for two: our in-flight list then holds both, as
        the printer does), begun, drawn and handed to the printer, which starts it the moment the first ends. Each is
        settled on its own evidence, in order. When the first does not print, the waiting one is withdrawn (cancelled
        at the printer) before either leaves the agent: one the printer never started goes back unflagged, one it
        may have started flagged with this printer's place. A fault the printer reports while one waits withdraws
        it at once (the driver's watch), before the printer can start it.
        """
        current: tuple[Ready, Handed | PrintResult] | None = (ready, await self.printer.hand(ready.data, ready.badge))
        while current is not None:
            ready, handed = current
            if isinstance(handed, PrintResult):  # the printer holds none of it
                if not handed.sent and handed.outcome is Outcome.FAILED:
                    self.ahead.keep(ready.begun.payload, ready.data)  # most likely taken again next: not drawn twice
                await self._settle(ready, handed, 0.0, may_take_next=False)
                return
            self.printing = ready.job_id
            started = time.monotonic()
            behind = asyncio.create_task(self._hand_next(), name="hand-next")
            try:
                result = await self.printer.outcome(handed)
            except asyncio.CancelledError:
                behind.cancel()  # the agent is going down: recovery settles what the printer holds
                raise
            finally:
                self.printing = None
            seconds = time.monotonic() - started
            error: RedisError | OSError | None = None
            nxt: tuple[Ready, Handed | PrintResult] | None = None
            try:
                nxt = await behind
            except (RedisError, OSError) as exc:
                error = exc  # raised once this badge is settled: its outcome is known and must not be lost
            if result.status is not None:
                await self.printer.observe(result.status)
            if nxt is not None and result.outcome is not Outcome.PRINTED and isinstance(nxt[1], Handed):
                # The badge before it did not print: take the waiting one back before anything leaves the agent.
                nxt = (nxt[0], await self.printer.withdraw(nxt[1]))
            await self._settle(ready, result, seconds, may_take_next=nxt is None and error is None)
            if error is not None:
                raise error
            current = nxt

    async def _hand_next(self) -> tuple[Ready, Handed | PrintResult] | None:
        """While a badge prints: the next one taken, begun, drawn and handed to the printer (or what the printer
        said instead); None when this printer may not take one now or none waits."""
        if self.blocked() is not None:
            return None
        taken = await self.store.take(self.me, room=self.printer.driver.holds)
        if taken is None or taken.source is Source.HELD:
            return None
        if taken.source is Source.DRAINED:
            self.lookahead = Lookahead.DRAINED
            return None
        ready = await self._ready(taken.job_id, turn=True)
        if ready is None:
            return None
        return ready, await self.printer.hand(ready.data, ready.badge)

    async def _printed_this_round(self, job_id: str) -> bool:
        """True when the journal says this printer printed the job in its current round (not before a reprint)."""
        printed_epoch = self.journal.printed_here(job_id)
        # A print from before the job's latest reprint round (reprint.lua) is not this round's copy.
        return printed_epoch is not None and printed_epoch > await self.store.round_epoch(job_id)

    async def _confirm(self, job_id: str, begun: Begun, seconds: float, may_take_next: bool) -> None:
        """The printer proved the badge: record it, tell Redis, and let ``take`` ride along when the rule allows."""
        await self.journal.append(job_id, begun.epoch, "printed", durable=True)
        self.ahead.printed(seconds)
        layout = self.layouts.used(job_id) if self.layouts is not None else None
        # Whose word the print is on: the printer's own status, or a print server's that cannot read it.
        by = self.printer.driver.confirmed_by
        if may_take_next and self.blocked() is None:
            (kind, where), taken = await self.store.confirm_then_take(
                self.me, self.location, job_id, begun.epoch, layout, by
            )
            if taken is None:
                self.lookahead = Lookahead.EMPTY
            elif taken.source is Source.DRAINED:
                self.lookahead = Lookahead.DRAINED  # the operator's order reached take before the heartbeat
            else:
                self.lookahead = TakenAhead(taken.job_id)
        else:
            kind, where = await self.store.confirm(self.me, self.location, job_id, begun.epoch, layout, by)
        # The "closed" record only spares recovery a confirm (a no-op for a confirmed badge): a crash before it is
        # written leaves a "printed" record that recovery confirms again, harmlessly.
        await self.journal.append(job_id, begun.epoch, "closed")
        self.printed += 1
        # The listeners (counters, the log line) change nothing the next badge depends on: they run at the event
        # loop's next turn, which comes while Redis works on that badge's begin, not before it is sent
        # (bench/hot_path.py).
        asyncio.get_running_loop().call_soon(self._report_printed, job_id, begun.attempts, kind, where, seconds)

    def _report_printed(self, job_id: str, attempt: int, kind: ConfirmKind, where: str, seconds: float) -> None:
        self.events.printed(job_id, attempt, kind, where, seconds)

    async def _release(self, job_id: str, begun: Begun, result: PrintResult, seconds: float) -> None:
        """Not proved printed: hand the job back. Nothing reached the printer: the printer failed, not the badge, so
        the job keeps its attempts."""
        outcome: ReleaseOutcome = "failed" if result.sent else "unsent"
        if result.outcome is Outcome.UNKNOWN:
            outcome = "unknown"
            # Before the release: a failover can lose its maybe-printed flag, which recovery then writes again from
            # this record (agent/recovery.py). A crash right after it leaves an open record released as maybe printed.
            await self.journal.append(job_id, begun.epoch, "unknown")
            await self.printer.clear_buffer()
        released = await self.store.release(self.me, self.location, job_id, outcome, result.reason, self.max_attempts)
        await self.journal.append(job_id, begun.epoch, "closed")
        self.events.not_printed(job_id, outcome, result, released, seconds)

    # -- recovery --------------------------------------------------------------------------------------------------

    async def recover(self, *, stopping: bool = False) -> None:
        """Settle whatever our in-flight list holds (agent/recovery.py), then trust it again."""
        track = self.gate.track()
        self.lookahead = Lookahead.UNKNOWN  # recovery settles whatever in-flight holds, a taken lookahead included
        recovered = Recovered()
        try:
            await self.recovery.run(
                self._resume,
                recovered,
                stopping=stopping,
                printer_ready=self.gate.printer_ready.is_set,
                drained=lambda: self.gate.heartbeat.drained,
                master_moved=track.master_changes > 0,
            )
        finally:
            self.printed += recovered.confirmed
        self.gate.settled(track)
        self.must_recover = False

    async def _resume(self, job_id: str) -> None:
        await self.handle(job_id, may_take_next=False)

    async def _after_redis_error(self, exc: RedisError | OSError) -> None:
        self.redis_errors += 1
        fault = venue_fault_name(exc)
        if fault is not None and isinstance(exc, RedisError):
            # Redis answers and will refuse again: back off, say so once per interval (agent/venue_fault.py).
            await self.gate.sleep(self.venue_fault.failed(fault, exc))
            return
        log.warning("redis unavailable; will recover before taking more work", extra=kv(error=exc))
        await wait_for_redis(self.store.redis, self.timing.heartbeat_interval, self.gate.stopping)
