"""The agent daemon: one task per concern (pull loop, heartbeat, device probe), structured shutdown.

Ownership of a badge is decided in Redis (``inflight:<me>``), never in this process's memory: the pull loop asks
``begin`` right before printing, and after any Redis error the agent rebuilds its view from its in-flight list and
its local journal (``_recover``) instead of trusting what it believed before the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent import __version__
from agent.config import AgentConfig
from agent.connection import make_redis, master_changes, wait_for_redis
from agent.device import DeviceMonitor
from agent.errors import JobError
from agent.jobs import job_from_payload
from agent.journal import Journal, Stage
from agent.logs import kv
from agent.metrics import AgentMetrics
from agent.notify import Notifier, supervise
from agent.protocol.store import ReleaseOutcome, Store
from agent.venue_fault import VenueFaultBackoff, venue_fault_name
from drivers.base import Badge, DeviceStatus, Driver, DriverError, Outcome, PrintResult, RenderError

log = logging.getLogger("agent")

RECONFIRM_AFTER_FAILOVER = 100  # recent prints confirmed again after the master moved (~ a few seconds of printing)


class Agent:
    def __init__(self, config: AgentConfig, driver: Driver, redis: Redis | None = None) -> None:
        self.config = config
        self.me = config.printer.name
        self.location = config.printer.location
        self.timing = config.timing
        self.driver = driver
        self.redis = redis if redis is not None else make_redis(config.redis, config.timing.block_timeout)
        # Dedicated: the pull loop's begin/confirm/take keep one connection rather than taking one from the pool
        # for every round trip (two a badge); the heartbeat and everything else use the pool as before.
        self.store = Store(self.redis, config.venue, dedicated=True)
        self.journal = Journal(config.journal)
        self.io_lock = asyncio.Lock()
        self.device = DeviceMonitor(
            driver,
            self.io_lock,
            config.timing.probe_interval,
            config.timing.down_after_failures,
            config.timing.up_after_successes,
            on_down=self._device_down,
            on_up=self._device_up,
            test_print=self._test_print if config.jobs.test_print_on_recovery else None,
        )
        self.stopping = asyncio.Event()
        self.printed = 0
        self.current: str | None = None  # the job id being printed
        self.sending = False
        self.last_beat_ok = 0.0  # monotonic time of the last acknowledged heartbeat
        self.beating_since: float | None = None
        self.needs_recovery = True
        self.master_changes = 0  # Sentinel: how often we followed the master; each move means recovering
        self.redis_errors = 0
        self.venue_fault = VenueFaultBackoff()  # the pull loop's: a Redis error retrying cannot fix
        self.drained = False  # an operator ordered this printer out of service
        self.reclaimed = 0
        self._last_steal_check = 0.0
        # What the take pipelined with the last confirm moved into in-flight, and whether it found both lists empty.
        self._next: tuple[str, str] | None = None
        self._took_nothing = False
        # The last printed badge's bookkeeping ("closed" record, counters, log line), done while Redis runs the next
        # badge's begin rather than before sending it; run at the top of the pull loop otherwise (see _run_tail).
        self._tail: Callable[[], None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        # Monotonic time each loop last started an iteration: the watchdog and /healthz check they are all fresh.
        self.alive: dict[str, float] = {}
        self.metrics = AgentMetrics(self)

    # -- lifecycle -----------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until ``stop()``; then let the badge in progress finish (bounded) and hand back what was not sent."""
        log.info(
            "agent starting",
            extra=kv(printer=self.me, venue=self.config.venue, device=self.driver.description, version=__version__),
        )
        await self.device.observe(await self.device.probe_once())
        self._tasks = [
            asyncio.create_task(self._heartbeat_loop(), name="heartbeat"),
            asyncio.create_task(self.device.run(busy=self._probe_tick), name="probe"),
            asyncio.create_task(self._sweep_loop(), name="sweep"),
            asyncio.create_task(self._journal_sync_loop(), name="journal"),
            asyncio.create_task(supervise(self, Notifier()), name="systemd"),
        ]
        if self.config.http.listen:
            from agent.http_port import serve as serve_http  # aiohttp itself waits for the first client

            self._tasks.append(asyncio.create_task(serve_http(self, self.config.http.listen), name="http"))
        puller = asyncio.create_task(self._pull_loop(), name="pull")
        stop_wait = asyncio.create_task(self.stopping.wait(), name="stop-wait")
        done, _ = await asyncio.wait([puller, stop_wait, *self._tasks], return_when=asyncio.FIRST_COMPLETED)
        stop_wait.cancel()
        crashed = [t for t in done if t is not stop_wait and not t.cancelled() and t.exception() is not None]
        self.stopping.set()
        await self._finish(puller)
        for task in crashed:
            raise task.exception() or RuntimeError("task crashed")  # the real error, for the CLI to report

    def stop(self) -> None:
        self.stopping.set()

    async def sleep_unless_stopping(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking at once when a stop is asked.

        ``asyncio.wait`` rather than ``wait_for``: on Python 3.11 ``wait_for`` swallows a cancellation that arrives
        as the awaited thing completes (fixed in 3.12), and a task that ignores its cancel hangs the shutdown.
        """
        waiter = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait({waiter}, timeout=seconds)
        finally:
            waiter.cancel()

    async def _finish(self, puller: asyncio.Task[None]) -> None:
        if not puller.done():
            # The pull loop checks `stopping` between badges; give the badge in progress its grace period.
            try:
                await asyncio.wait_for(asyncio.shield(puller), timeout=self.timing.shutdown_grace)
            except TimeoutError:
                log.warning("badge still printing after the grace period; stopping it", extra=kv(job=self.current))
                puller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await puller
        for task in self._tasks:
            task.cancel()
        # Bounded: a task that swallows its cancellation must not keep the badge hand-back below from running.
        _, stuck = await asyncio.wait(self._tasks, timeout=5)
        for task in stuck:
            log.error("task did not stop when cancelled", extra=kv(task=task.get_name()))
        try:
            # Whatever in-flight still holds (a BLMOVE that landed as we cancelled it, a badge cut short) goes back.
            async with asyncio.timeout(10):
                await self._recover(stopping=True)
            await self.store.leave(self.me, self._health("stopped"))
        except (RedisError, OSError, TimeoutError) as exc:
            log.error("could not hand back work at shutdown; peers will reclaim it", extra=kv(error=exc))
        async with self.io_lock:
            await self.driver.aclose()
        await self.redis.aclose()
        self.journal.close()
        log.info("agent stopped", extra=kv(printer=self.me, printed=self.printed))

    # -- pulling and printing ------------------------------------------------------------------------------------

    async def _pull_loop(self) -> None:
        try:
            await self._pull()
        finally:
            self._run_tail()

    def _run_tail(self) -> None:
        tail, self._tail = self._tail, None
        if tail is not None:
            tail()

    def _straight_to_begin(self) -> bool:
        """True when this iteration goes from the job ``take`` handed over straight to its begin: the only case in
        which the last badge's bookkeeping waits to ride along with that begin (else it is done first)."""
        return (
            self._next is not None
            and not self.needs_recovery
            and not self.drained
            and self.device.ready.is_set()
            and self._lease_ok()
            and master_changes(self.redis) == self.master_changes
        )

    async def _pull(self) -> None:
        while not self.stopping.is_set():
            self.alive["pull"] = time.monotonic()
            if self._tail is not None and not self._straight_to_begin():
                self._run_tail()
            try:
                if master_changes(self.redis) != self.master_changes:
                    self.master_changes = master_changes(self.redis)
                    self.needs_recovery = True
                if self.needs_recovery:
                    self._next, self._took_nothing = None, False  # recovery settles whatever in-flight holds
                    await self._recover()
                if self._next is not None and (self.drained or not self.device.ready.is_set()):
                    await self._put_back_next()
                if not await self._wait_ready():
                    continue
                if self._took_nothing:
                    self._took_nothing = False
                    taken = None
                else:
                    taken = self._next or await self.store.take(self.me)
                    self._next = None
                    self.venue_fault.clear()
                if taken is not None and taken[0] == "drained":
                    self.drained = True
                    continue
                if taken is not None:
                    await self._process(taken[1])
                    continue
                stolen = await self._steal()
                if stolen is not None:
                    await self._process(stolen)
                    continue
                job_id = await self.store.wait_pool(self.me, self.timing.block_timeout)
                if job_id is not None:
                    await self._process(job_id)
            except (RedisError, OSError) as exc:
                self.redis_errors += 1
                self.needs_recovery = True
                fault = venue_fault_name(exc)
                if fault is not None and isinstance(exc, RedisError):
                    # Redis answers and will refuse again: back off, say so once per interval (agent/venue_fault.py).
                    await self.sleep_unless_stopping(self.venue_fault.failed(fault, exc))
                    continue
                log.warning("redis unavailable; will recover before taking more work", extra=kv(error=exc))
                await wait_for_redis(self.redis, self.timing.heartbeat_interval, self.stopping)

    async def _put_back_next(self) -> None:
        """The printer stopped being ready after the next job was taken: give it back rather than sit on it."""
        if self._next is None or self.stopping.is_set() or not self._lease_ok():
            # Stopping: the shutdown hands back what in-flight holds. No lease: the job stays held; peers reclaim it
            # if they declare us dead, and begin checks it is still ours before anything is printed.
            return
        job_id, self._next = self._next[1], None
        why = "drained by an operator" if self.drained else "printer not ready"
        await self.store.release(self.me, self.location, job_id, "unsent", why, self.config.jobs.max_attempts)

    async def _wait_ready(self) -> bool:
        """Wait until the printer may be sent a badge and our lease is fresh (or we are stopping). True when ready."""
        if not self._lease_ok():
            # Not yet beating (start-up, Redis back from an outage): taking work now would only release it again.
            await asyncio.sleep(min(0.05, self.timing.heartbeat_interval))
            return False
        if self.drained:
            await self.sleep_unless_stopping(self.timing.block_timeout)
            return False
        if self.device.ready.is_set():
            return True
        ready = asyncio.create_task(self.device.ready.wait())
        stop = asyncio.create_task(self.stopping.wait())
        await asyncio.wait([ready, stop], timeout=self.timing.block_timeout, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        stop.cancel()
        return self.device.ready.is_set() and not self.stopping.is_set()

    async def _process(self, job_id: str) -> None:
        begun = await self.store.begin(self.me, self.location, job_id)
        self._run_tail()  # the last badge's bookkeeping, once Redis has answered (nothing in it can fail begin)
        if begun.kind != "print":
            # dead, dropped: the record or the list contradicted the protocol (begin.lua): staff must look.
            (log.warning if begun.kind in ("dead", "dropped") else log.info)(
                "not printing", extra=kv(job=job_id, because=begun.kind, detail=begun.detail)
            )
            self.metrics.skipped.labels(begun.kind).inc()
            return
        reprinted_epoch = self.journal.printed_here(job_id)
        # A print from before the job's latest reprint round (reprint.lua) is not this round's copy: print it.
        if reprinted_epoch is not None and reprinted_epoch > await self.store.round_epoch(job_id):
            # Redis lost our confirm (restart or failover) and handed the job out again: it is on paper already.
            kind, _ = await self.store.confirm(self.me, self.location, job_id, begun.epoch)
            log.warning(
                "job came back after Redis lost its confirm; confirmed again, not reprinted",
                extra=kv(job=job_id, confirm=kind),
            )
            return
        try:
            job = job_from_payload(begun.payload)
            badge = job.badge()
            data = await self._render(badge)
        except (JobError, RenderError) as exc:
            await self.store.dead_letter(self.me, job_id, str(exc))
            log.error("job dead-lettered", extra=kv(job=job_id, reason=exc))
            self.metrics.dead_lettered.inc()
            return
        # Recorded before the lease is checked: where each record is synced, a slow card can stall here, and that
        # must not open a gap between the check and the first byte in which peers declare us dead and take the job.
        await self._journal(job_id, begun.epoch, "sending")
        if self.stopping.is_set() or not self._lease_ok():
            why = "agent stopping" if self.stopping.is_set() else "agent lost contact with Redis before sending"
            self.journal.write(job_id, begun.epoch, "closed")  # nothing was sent: no "maybe printed" on recovery
            released = await self.store.release(
                self.me, self.location, job_id, "unsent", why, self.config.jobs.max_attempts
            )
            self.metrics.released.labels("unsent", released).inc()
            return
        self.current = job_id
        self.sending = True
        send_started = time.monotonic()
        try:
            result = await self._print(data, badge)
        finally:
            self.sending = False
            self.current = None
        if result.status is not None:
            await self.device.observe(result.status)
        if result.outcome is Outcome.PRINTED:
            await self._journal(job_id, begun.epoch, "printed")
            kind, where = await self._confirm(job_id, begun.epoch)
            seconds = time.monotonic() - send_started
            tail = functools.partial(self._printed_tail, job_id, begun.epoch, begun.attempts, kind, where, seconds)
            self._tail = tail
            return
        # Nothing reached the printer: the printer failed, not the badge, so the job keeps its attempts.
        outcome: ReleaseOutcome = "failed" if result.sent else "unsent"
        if result.outcome is Outcome.UNKNOWN:
            outcome = "unknown"
            await self._cancel_device()
        self.metrics.count_print(outcome, time.monotonic() - send_started)
        released = await self.store.release(
            self.me, self.location, job_id, outcome, result.reason, self.config.jobs.max_attempts
        )
        self.metrics.released.labels(outcome, released).inc()
        self.journal.record(job_id, begun.epoch, "closed")
        log.warning("badge not confirmed; released", extra=kv(job=job_id, outcome=result.outcome, reason=result.reason))

    def _printed_tail(self, job_id: str, epoch: int, attempt: int, kind: str, where: str, seconds: float) -> None:
        """After the confirm: nothing here changes what Redis or the printer do, so it may wait one round trip.

        The "closed" record only spares recovery a confirm (a no-op for a confirmed badge): a crash before it is
        written leaves a "printed" record that recovery confirms again, harmlessly.
        """
        self.journal.write(job_id, epoch, "closed")
        self.printed += 1
        self.metrics.count_print("printed", seconds, kind, where)
        log.info("printed", extra=kv(job=job_id, attempt=attempt, confirm=kind, maybe_also_at=where))

    async def _journal(self, job_id: str, epoch: int, stage: Stage) -> None:
        """Record a stage before acting on it. Written is enough on Linux (see agent/journal.py); else synced."""
        self.journal.write(job_id, epoch, stage)
        if self.journal.syncs_each_record:
            # A worker thread: a Pi's SD card can take tens of ms, and the heartbeat must not wait for it.
            await asyncio.to_thread(self.journal.sync)

    async def _journal_sync_loop(self) -> None:
        """Sync the journal about once a second, off the hot path: bounds what a reboot can take from it."""
        while True:
            await asyncio.sleep(self.timing.heartbeat_interval)
            if self.journal.dirty:
                try:
                    await asyncio.to_thread(self.journal.sync)
                except OSError as exc:
                    log.error("could not sync the journal to disk", extra=kv(error=exc))

    async def _confirm(self, job_id: str, epoch: int) -> tuple[str, str]:
        """Confirm a printed badge; when the printer can take another, ``take`` rides in the same round trip."""
        ready_for_more = (
            not self.stopping.is_set()
            and not self.drained
            and not self.needs_recovery
            and self.device.ready.is_set()
            and self._lease_ok()
            and master_changes(self.redis) == self.master_changes
        )
        if not ready_for_more:
            return await self.store.confirm(self.me, self.location, job_id, epoch)
        confirmed, taken = await self.store.confirm_then_take(self.me, self.location, job_id, epoch)
        if taken is not None and taken[0] == "drained":
            self.drained = True  # the operator's order reached take before the heartbeat
        else:
            self._next, self._took_nothing = taken, taken is None
        return confirmed

    async def _render(self, badge: Badge) -> bytes:
        if self.driver.render_is_cheap:
            return self.driver.render(badge)
        return await asyncio.to_thread(self.driver.render, badge)  # drawing a badge is CPU work: off the loop

    async def _print(self, data: bytes, badge: Any) -> PrintResult:
        timeout = self.config.printer.driver.print_timeout
        try:
            async with self.io_lock:
                # The driver watches its own timeout; ours is the backstop for a driver that hangs.
                async with asyncio.timeout(timeout + 5):
                    return await self.driver.print(data, badge, timeout)
        except TimeoutError:
            return PrintResult(Outcome.UNKNOWN, f"printer gave no outcome within {timeout + 5:g} s")
        except DriverError as exc:
            return PrintResult(Outcome.UNKNOWN, f"printer link failed while sending: {exc}")

    async def _steal(self) -> str | None:
        """Idle: take a pinned job another printer has left waiting longer than ``affinity_wait``."""
        now = time.monotonic()
        # A look is one read of the venue's pinned index; a few looks per affinity window steal a job at most a fifth
        # of the window late, and keep an idle venue's reads at one per agent every couple of seconds.
        if now - self._last_steal_check < max(self.timing.block_timeout, self.timing.affinity_wait / 5):
            return None
        self._last_steal_check = now
        stolen = await self.store.steal(self.me, int(self.timing.affinity_wait * 1000))
        if stolen is not None:
            log.info("took a pinned job its printer left waiting", extra=kv(job=stolen))
        return stolen

    async def _sweep_loop(self) -> None:
        """Reclaim the work of peers that stopped beating. One agent per half interval sweeps (a short lease).

        Only an agent that has itself beaten without a break for the whole dead-after window sweeps: after a Redis
        restart every heartbeat looks old at once, and live peers need that long to beat again (no reclaim storm).
        """
        # Twice per heartbeat interval: a silent peer is found at most half an interval after its dead-after window
        # ends, so detection stays within dead-after + 1 s even when sweeps and deaths fall badly (bench/scale.py).
        interval = self.timing.heartbeat_interval / 2
        dead_ms = int(self.timing.dead_after * 1000)
        while True:
            await asyncio.sleep(interval)
            since = self.beating_since
            if since is None or time.monotonic() - since < self.timing.dead_after or self.stopping.is_set():
                continue
            try:
                for victim in await self.store.sweep(self.me, dead_ms, int(interval * 1000)):
                    if victim == self.me:
                        continue
                    result = await self.store.reclaim(victim, self.me, dead_ms)
                    if result.kind == "reclaimed":
                        self.reclaimed += 1
                        log.warning(
                            "reclaimed the work of a dead agent",
                            extra=kv(victim=victim, held=result.held, pinned=result.pinned),
                        )
            except (RedisError, OSError) as exc:
                log.warning("sweep failed", extra=kv(error=exc))

    async def _test_print(self) -> bool:
        """After the printer comes back: one test badge must print before real badges do."""
        badge = Badge("test-print", "TEST-PRINT", "Test print", self.me, "printer check")
        try:
            data = await self._render(badge)
        except RenderError as exc:
            log.error("test print cannot be rendered", extra=kv(error=exc))
            return False
        result = await self._print(data, badge)
        log.info("test print", extra=kv(outcome=result.outcome, reason=result.reason))
        return result.outcome is Outcome.PRINTED

    async def _cancel_device(self) -> None:
        """Clear the printer's buffer before a badge leaves it, so it never prints a job handed to a peer."""
        try:
            async with self.io_lock:
                async with asyncio.timeout(self.config.printer.driver.io_timeout + 2):
                    await self.driver.cancel()
        except (DriverError, TimeoutError) as exc:
            log.error("could not clear the printer's buffer; it may print a released badge later", extra=kv(error=exc))

    def _lease_ok(self) -> bool:
        """True while our last heartbeat is recent enough that no peer can have declared us dead.

        A frozen or cut-off agent finds its lease expired when it wakes and does not print; its heartbeat then tells
        it whether peers took its work.
        """
        margin = self.timing.heartbeat_interval
        return time.monotonic() - self.last_beat_ok < self.timing.dead_after - margin

    async def _recover(self, stopping: bool = False) -> None:
        """Settle whatever our in-flight list holds, using the journal: confirm, resume, or release."""
        for job_id in await self.store.inflight(self.me):
            entry = self.journal.lookup(job_id)
            if entry is not None and entry.stage == "printed":
                kind, _ = await self.store.confirm(self.me, self.location, job_id, entry.epoch)
                self.journal.record(job_id, entry.epoch, "closed")
                self.printed += 1
                log.warning("confirmed a badge printed before the interruption", extra=kv(job=job_id, confirm=kind))
            elif (entry is not None and entry.stage == "sending") or (entry is None and self.journal.after_reboot):
                # No record after a reboot is no proof that nothing was sent: the machine went down since the journal
                # was last written, and a "sending" record younger than the last sync may have gone with it.
                why = (
                    "interrupted while printing" if entry else "the agent's computer restarted while it held this badge"
                )
                await self._cancel_device()
                await self.store.release(self.me, self.location, job_id, "unknown", why, self.config.jobs.max_attempts)
                if entry is not None:
                    self.journal.record(job_id, entry.epoch, "closed")
                log.warning("released a badge that may have printed", extra=kv(job=job_id, because=why))
            elif stopping or not self.device.ready.is_set():
                why = "agent stopped before sending" if stopping else "printer not ready"
                await self.store.release(self.me, self.location, job_id, "unsent", why, self.config.jobs.max_attempts)
            else:
                log.info("resuming a job found in in-flight", extra=kv(job=job_id))
                await self._process(job_id)
        # Journal entries for jobs no longer in our in-flight list were settled elsewhere (reclaimed by a peer).
        held = set(await self.store.inflight(self.me))
        for entry in self.journal.open_entries():
            if entry.job_id not in held and entry.stage == "printed":
                await self.store.confirm(self.me, self.location, entry.job_id, entry.epoch)
            if entry.job_id not in held:
                self.journal.record(entry.job_id, entry.epoch, "closed")
        self.journal.after_reboot = False  # what in-flight held across the reboot is settled; trust it from now
        if self.master_changes and not stopping:
            # A failover can lose a confirm together with the take before it (docs/redis.md): the job is back in the
            # pool of the new master and a peer would print it again, unflagged. Confirming our recent prints again
            # is a no-op where Redis kept them; otherwise it settles the job, or flags the peer's copy as a duplicate.
            for job_id, epoch in self.journal.recent_prints(RECONFIRM_AFTER_FAILOVER):
                await self.store.confirm(self.me, self.location, job_id, epoch)
        self.needs_recovery = False

    # -- liveness ------------------------------------------------------------------------------------------------

    def _health(self, state: str | None = None) -> dict[str, Any]:
        status: DeviceStatus = self.device.status
        if state is None:
            if self.drained:
                state = "drained"
            elif self.venue_fault.active():
                state = "venue_fault"
            elif self.device.down:
                state = "device_down"
            elif self.sending:
                state = "printing"
            elif self.device.ready.is_set():
                state = "ready"
            else:
                state = "paused"
        return {
            "state": state,
            "reasons": list(status.reasons) + ([self.venue_fault.describe()] if self.venue_fault.active() else []),
            "device": status.state.value,
            "printing": self.current,
            "printed": self.printed,
            "location": self.location,
            "version": __version__,
            "redis_errors": self.redis_errors,
            "reclaimed": self.reclaimed,
        }

    async def _heartbeat_loop(self) -> None:
        interval = self.timing.heartbeat_interval
        ttl_ms = int(interval * (self.timing.dead_after_misses + 2) * 1000)
        first = True
        while True:
            started = time.monotonic()
            self.alive["heartbeat"] = started
            try:
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow the shutdown's cancel (see below).
                async with asyncio.timeout(interval * 2):
                    beat = await self.store.beat(self.me, self._health(), ttl_ms, first)
            except (RedisError, OSError, TimeoutError) as exc:
                if self.beating_since is not None:
                    log.warning("heartbeat failed; retrying every %.1f s", interval, extra=kv(error=exc))
                self.beating_since = None
                self.redis_errors += 1
            else:
                first = False
                self.last_beat_ok = started
                if self.beating_since is None:
                    self.beating_since = started
                    log.info("heartbeat ok", extra=kv(printer=self.me))
                if beat.was_declared_dead:
                    log.error("peers declared this agent dead (frozen or cut off); rejoining cleanly")
                    self.needs_recovery = True
                drained = beat.order == "drain"
                if drained != self.drained:
                    log.warning("drained by an operator" if drained else "back in service", extra=kv(printer=self.me))
                    self.drained = drained
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))

    def _probe_tick(self) -> bool:
        """Called by the probe loop once per iteration: records that it is alive; True while a badge streams."""
        self.alive["probe"] = time.monotonic()
        return self.sending

    async def _device_down(self, status: DeviceStatus) -> None:
        try:
            moved = await self.store.handback(self.me, f"printer down: {status.describe()}")
            await self.store.event(
                "device_down", self.me, location=self.location, reason=status.describe(), handed_back=str(moved)
            )
        except RedisError as exc:
            log.error("could not hand back pinned jobs", extra=kv(error=exc))

    async def _device_up(self, status: DeviceStatus) -> None:
        with contextlib.suppress(RedisError):
            await self.store.event("device_up", self.me, location=self.location)
