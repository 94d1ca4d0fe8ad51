"""The agent daemon: one task per concern (pull loop, heartbeat, device probe, sweep, journal sync, systemd, HTTP),
and a structured shutdown.

The hot path (take, begin, print, confirm) is agent/pull.py; recovery of the in-flight list is agent/recovery.py.
This module starts the tasks, beats, sweeps dead peers, and hands back what is left at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent import __version__
from agent.config import AgentConfig
from agent.connection import make_redis
from agent.device import DeviceMonitor
from agent.journal import Journal
from agent.liveness import Loop, loop_budgets
from agent.logs import kv
from agent.metrics import AgentMetrics
from agent.notify import Notifier, supervise
from agent.printer import print_badge, render
from agent.protocol.replies import ReclaimKind
from agent.protocol.store import Store
from agent.pull import PullLoop
from agent.state import AgentState, Snapshot
from agent.venue_fault import VenueFaultBackoff, venue_fault_name
from drivers.base import Badge, DeviceStatus, Driver, Outcome, RenderError
from drivers.config import LabelConfig
from layouts.book import LayoutBook
from layouts.store import LayoutStore

log = logging.getLogger("agent")


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
        self.device = DeviceMonitor(
            driver,
            config.timing.probe_interval,
            config.timing.down_after_failures,
            config.timing.up_after_successes,
            on_down=self._device_down,
            on_up=self._device_up,
            test_print=self._test_print if config.jobs.test_print_on_recovery else None,
        )
        self.stopping = asyncio.Event()
        # Written by the heartbeat only (the pull loop reads them):
        self.last_beat_ok: float | None = None  # monotonic time of the last acknowledged heartbeat
        self.beating_since: float | None = None
        self.declared_dead = 0  # how often Redis answered that peers had declared us dead (each means recovering)
        self.drained = False  # an operator ordered this printer out of service
        self.redis_errors = 0
        self.venue_fault = VenueFaultBackoff()  # the pull loop's: a Redis error retrying cannot fix
        self.beat_fault = VenueFaultBackoff()  # the heartbeat's (its function missing from Redis, say)
        self.reclaimed = 0  # written by the sweep
        self.loop_budgets = loop_budgets(config)
        self._alive: dict[str, float] = {}  # loop name -> monotonic time it last started an iteration
        self._tasks: list[asyncio.Task[None]] = []
        self._left = False  # set once the shutdown starts handing back: no heartbeat may be published after it
        self.metrics = AgentMetrics(self)
        # Badge layouts (layouts/): only for printers the agent draws badges for (not the simulated one).
        self.layouts: LayoutBook | None = None
        if not driver.render_is_cheap:
            # The stock the driver draws for (its config's label; a driver built in code may carry its own).
            label = getattr(driver, "label", None)
            if not isinstance(label, LabelConfig):
                label = config.printer.driver.label
            # The stock the printer reports wins over the config's where the driver reads it.
            self.layouts = LayoutBook(LayoutStore(self.redis, config.venue), label, lambda: driver.loaded)
        self.pull = PullLoop(self)

    def layouts_generation(self) -> int:
        """The version of the venue's badge layouts this agent draws with (0: none loaded)."""
        return self.layouts.generation if self.layouts is not None else 0

    @property
    def printed(self) -> int:
        """Badges this agent printed and confirmed since it started."""
        return self.pull.printed

    def mark_alive(self, loop: Loop) -> None:
        """A loop starts an iteration: the watchdog and /healthz check each loop does so within its budget."""
        self._alive[loop] = time.monotonic()

    def lease_ok(self) -> bool:
        """True while our last heartbeat is recent enough that no peer can have declared us dead.

        A frozen or cut-off agent finds its lease expired when it wakes and does not print; its heartbeat then tells
        it whether peers took its work.
        """
        if self.last_beat_ok is None:
            return False
        margin = self.timing.heartbeat_interval
        return time.monotonic() - self.last_beat_ok < self.timing.dead_after - margin

    def snapshot(self) -> Snapshot:
        """What the agent is doing now, frozen: what the heartbeat, /healthz, /metrics and systemd read."""
        device = self.device
        printing = self.pull.printing
        return Snapshot(
            printer=self.me,
            location=self.location,
            version=__version__,
            device=device.status,
            device_down=device.down,
            device_ready=device.ready.is_set(),
            printing=printing,
            printed=self.pull.printed,
            drained=self.drained,
            stopping=self.stopping.is_set(),
            venue_fault=next((f.describe() for f in (self.venue_fault, self.beat_fault) if f.active()), None),
            lease_ok=self.lease_ok(),
            last_beat_ok=self.last_beat_ok,
            beating_since=self.beating_since,
            loops=dict(self._alive),
            redis_errors=self.redis_errors,
            reclaimed=self.reclaimed,
            stock=self.layouts.stock if self.layouts is not None else "",
        )

    # -- lifecycle -----------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until ``stop()``; then let the badge in progress finish (bounded) and hand back what was not sent."""
        log.info(
            "agent starting",
            extra=kv(printer=self.me, venue=self.config.venue, device=self.driver.description, version=__version__),
        )
        await self._refresh_layouts()  # before the first badge: it is drawn in the venue's layout
        await self.device.observe(await self.device.probe_once())
        await self._refresh_layouts()  # the first probe may have read the stock the printer has loaded
        self._tasks = [
            asyncio.create_task(self._heartbeat_loop(), name=Loop.HEARTBEAT),
            asyncio.create_task(self.device.run(busy=self._probe_tick), name=Loop.PROBE),
            asyncio.create_task(self._sweep_loop(), name="sweep"),
            asyncio.create_task(self._journal_sync_loop(), name="journal"),
            asyncio.create_task(supervise(self, Notifier()), name="systemd"),
        ]
        if self.layouts is not None:
            self._tasks.append(asyncio.create_task(self._layouts_loop(), name="layouts"))
        if self.config.http.listen:
            from agent.http_port import serve as serve_http  # aiohttp itself waits for the first client

            self._tasks.append(asyncio.create_task(serve_http(self, self.config.http.listen), name="http"))
        puller = asyncio.create_task(self.pull.run(), name=Loop.PULL)
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
                log.warning(
                    "badge still printing after the grace period; stopping it", extra=kv(job=self.pull.printing)
                )
                puller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await puller
        # From here no heartbeat is published, even by a beat already under way: the "stopped" health written below
        # must be the last word, or the venue would see a stopped printer as ready.
        self._left = True
        for task in self._tasks:
            task.cancel()
        # Bounded: a task that swallows its cancellation must not keep the badge hand-back below from running.
        _, stuck = await asyncio.wait(self._tasks, timeout=5)
        for task in stuck:
            where = io.StringIO()
            task.print_stack(limit=8, file=where)  # where it hangs: the fix starts there
            log.error("task did not stop when cancelled", extra=kv(task=task.get_name(), where=where.getvalue()))
        try:
            # Whatever in-flight still holds (a BLMOVE that landed as we cancelled it, a badge cut short) goes back.
            async with asyncio.timeout(10):
                await self.pull.recover(stopping=True)
            await self.store.leave(self.me, self.snapshot().health(AgentState.STOPPED))
        except (RedisError, OSError, TimeoutError) as exc:
            log.error("could not hand back work at shutdown; peers will reclaim it", extra=kv(error=exc))
        await self.driver.aclose()
        await self.redis.aclose()
        await asyncio.to_thread(self.journal.close)  # its last sync, like every other, off the event loop
        log.info("agent stopped", extra=kv(printer=self.me, printed=self.printed))

    # -- badge layouts ---------------------------------------------------------------------------------------------

    async def _refresh_layouts(self) -> None:
        """Load the venue's badge layouts if their version moved, and point the driver at them."""
        book, driver = self.layouts, self.driver
        if book is None:
            return
        try:
            changed = await book.refresh()
        except (RedisError, OSError) as exc:
            log.warning("could not read the venue's badge layouts; drawing with the ones loaded", extra=kv(error=exc))
            return
        if changed:
            # No layout in the venue: the built-in design, drawn as before (a ZPL printer's own template included).
            driver.draw = book.draw if book.active else None
            driver.media_fault = book.fault

    async def _layouts_loop(self) -> None:
        """Follow the venue's layouts: the announcement of a change wakes us at once; a look every heartbeat
        interval catches one missed while disconnected, and a stock the printer now reports (a roll swapped; the
        printer takes no badge until then). Each look is one GET of the version."""
        if self.layouts is None:
            return
        channel = self.layouts.store.keys.layouts_changed
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(channel)
                while True:
                    await pubsub.get_message(timeout=self.timing.heartbeat_interval)
                    await self._refresh_layouts()
            except (RedisError, OSError) as exc:
                log.debug("layouts announcement lost; looking every heartbeat", extra=kv(error=exc))
                await self._refresh_layouts()
                await asyncio.sleep(self.timing.heartbeat_interval)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    # -- journal -------------------------------------------------------------------------------------------------

    async def _journal_sync_loop(self) -> None:
        """Sync the journal about once a second, off the hot path: bounds what a reboot can take from it."""
        while True:
            await asyncio.sleep(self.timing.heartbeat_interval)
            if self.journal.dirty:
                await asyncio.to_thread(self.journal.sync)  # a disk error puts the journal in memory (agent/journal.py)

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
                    if result.kind is ReclaimKind.RECLAIMED:
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
            data = await render(self.driver, badge)
        except RenderError as exc:
            log.error("test print cannot be rendered", extra=kv(error=exc))
            return False
        result = await print_badge(self.driver, data, badge, self.config.printer.driver.print_timeout)
        log.info("test print", extra=kv(outcome=result.outcome, reason=result.reason))
        return result.outcome is Outcome.PRINTED

    # -- liveness ------------------------------------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        interval = self.timing.heartbeat_interval
        ttl_ms = int(interval * (self.timing.dead_after_misses + 2) * 1000)
        first = True
        while not self._left:
            started = time.monotonic()
            self.mark_alive(Loop.HEARTBEAT)
            try:
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow the shutdown's cancel (see
                # sleep_unless_stopping).
                async with asyncio.timeout(interval * 2):
                    beat = await self.store.beat(self.me, self.snapshot().health(), ttl_ms, first)
            except (RedisError, OSError, TimeoutError) as exc:
                fault = venue_fault_name(exc) if isinstance(exc, RedisError) else None
                if fault is not None and isinstance(exc, RedisError):
                    self.beat_fault.failed(fault, exc)  # named in health, logged once per interval; beats go on
                elif self.beating_since is not None:
                    log.warning("heartbeat failed; retrying every %.1f s", interval, extra=kv(error=exc))
                self.beating_since = None
                self.redis_errors += 1
            else:
                self.beat_fault.clear()
                first = False
                self.last_beat_ok = started
                if self.beating_since is None:
                    self.beating_since = started
                    log.info("heartbeat ok", extra=kv(printer=self.me))
                if beat.was_declared_dead:
                    log.error("peers declared this agent dead (frozen or cut off); rejoining cleanly")
                    self.declared_dead += 1
                drained = beat.order == "drain"
                if drained != self.drained:
                    log.warning("drained by an operator" if drained else "back in service", extra=kv(printer=self.me))
                    self.drained = drained
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))

    def _probe_tick(self) -> bool:
        """Called by the probe loop once per iteration: records that it is alive; True while a badge streams."""
        self.mark_alive(Loop.PROBE)
        return self.pull.printing is not None

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
