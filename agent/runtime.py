"""The agent daemon: one task per concern (pull loop, heartbeat, device probe, sweep, journal sync, systemd, HTTP),
and a structured shutdown.

The hot path (take, begin, print, confirm) is agent/pull.py; recovery of the in-flight list is agent/recovery.py;
the heartbeat agent/heartbeat.py, the sweep of dead peers agent/sweep.py. This module builds the parts, starts their
tasks, and hands back what is left at shutdown.
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
from agent.device import DeviceMonitor
from agent.gate import Gate
from agent.heartbeat import Heartbeat
from agent.journal import Journal
from agent.liveness import Loop, loop_budgets
from agent.metrics import AgentMetrics
from agent.notify import Notifier, supervise
from agent.printer import Printer, print_badge, render
from agent.pull import PullLoop
from agent.pull_events import Fanout, LogEvents
from agent.sweep import Sweep
from core.logs import kv
from drivers.base import Badge, DeviceStatus, Driver, Outcome, RenderError
from drivers.label import LabelConfig
from layouts.book import LayoutBook
from layouts.store import LayoutStore
from protocol.connection import make_redis, master_changes
from protocol.state import AgentState, Snapshot
from protocol.store import Store

log = logging.getLogger("agent")


class Agent:
    """One printer's agent: its parts, wired together, and the tasks that run them.

    Who writes what: the heartbeat its lease, drain order and error count (agent/heartbeat.py); the sweep its reclaim
    count (agent/sweep.py); the device monitor the printer's state (agent/device.py); the pull loop its badge,
    counts, Redis errors and venue fault (agent/pull.py); ``stop()`` and the end of ``run`` the ``stopping`` event.
    Everything else reads them through ``snapshot()``.
    """

    def __init__(self, config: AgentConfig, driver: Driver, redis: Redis | None = None) -> None:
        self.config = config
        self.me = config.printer.name
        self.location = config.printer.location
        self.timing = config.timing
        self.driver = driver
        self.redis = redis if redis is not None else make_redis(config.redis, config.timing.block_timeout)
        # Dedicated: the pull loop's begin/confirm/take keep one connection rather than taking one from the pool
        # for every round trip (two a badge); the heartbeat and everything else use the pool as before.
        # A zone printer is judged by this venue's heartbeat window, the one peers are declared dead by.
        self.store = Store(
            self.redis, config.venue, dedicated=True, zone_dead_after_ms=int(config.timing.dead_after * 1000)
        )
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
        self.loop_budgets = loop_budgets(config)
        self._alive: dict[str, float] = {}  # loop name -> monotonic time it last started an iteration (each its own)
        self._tasks: list[asyncio.Task[None]] = []
        self.heartbeat = Heartbeat(
            self.store, self.me, self.timing, lambda: self.snapshot().health(), lambda: self.mark_alive(Loop.HEARTBEAT)
        )
        self.sweep = Sweep(self.store, self.me, self.timing, self.heartbeat, self.stopping)
        self.metrics = AgentMetrics(self.snapshot)
        # Badge layouts (layouts/): only for printers the agent draws badges for (not the simulated one).
        self.layouts: LayoutBook | None = None
        if not driver.render_is_cheap:
            # The stock the driver draws for (its config's label; a driver built in code may carry its own).
            label = getattr(driver, "label", None)
            if not isinstance(label, LabelConfig):
                label = config.printer.driver.label
            # The stock the printer reports wins over the config's where the driver reads it.
            self.layouts = LayoutBook(LayoutStore(self.redis, config.venue), label, lambda: driver.loaded)
        driver_config = config.printer.driver
        self.printer = Printer(driver, driver_config.print_timeout, driver_config.io_timeout, self.device.observe)
        self.pull = PullLoop(
            self.store,
            self.journal,
            self.printer,
            Gate(self.stopping, self.heartbeat, self.device.ready, lambda: master_changes(self.redis)),
            Fanout(self.metrics, LogEvents()),
            me=self.me,
            location=self.location,
            timing=self.timing,
            max_attempts=config.jobs.max_attempts,
            layouts=self.layouts,
            alive=lambda: self.mark_alive(Loop.PULL),
        )

    def layouts_generation(self) -> int:
        """Which loading of the venue's badge layouts this agent draws with (0: none loaded)."""
        return self.layouts.generation if self.layouts is not None else 0

    @property
    def printed(self) -> int:
        """Badges this agent printed and confirmed since it started."""
        return self.pull.printed

    def mark_alive(self, loop: Loop) -> None:
        """A loop starts an iteration: the watchdog and /healthz check each loop does so within its budget."""
        self._alive[loop] = time.monotonic()

    def lease_ok(self) -> bool:
        """True while our last heartbeat is recent enough that no peer can have declared us dead."""
        return self.heartbeat.lease_ok()

    def snapshot(self) -> Snapshot:
        """What the agent is doing now, frozen: what the heartbeat, /healthz, /metrics and systemd read."""
        device, pull, heartbeat = self.device, self.pull, self.heartbeat
        return Snapshot(
            printer=self.me,
            venue=self.config.venue,
            location=self.location,
            version=__version__,
            device=device.status,
            device_down=device.down,
            device_ready=device.ready.is_set(),
            printing=pull.printing,
            printed=pull.printed,
            drained=heartbeat.drained,
            stopping=self.stopping.is_set(),
            venue_fault=next((f.describe() for f in (pull.venue_fault, heartbeat.venue_fault) if f.active()), None),
            lease_ok=heartbeat.lease_ok(),
            last_beat_ok=heartbeat.last_beat_ok,
            beating_since=heartbeat.beating_since,
            loops=dict(self._alive),
            redis_errors=heartbeat.redis_errors + pull.redis_errors,
            reclaimed=self.sweep.reclaimed,
            budgets=self.loop_budgets,
            stock=self.layouts.stock if self.layouts is not None else "",
            confirmed_by=self.driver.confirmed_by,
            faulted_since=device.faulted_since,
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
            asyncio.create_task(self.heartbeat.run(), name=Loop.HEARTBEAT),
            asyncio.create_task(self.device.run(busy=self._probe_tick), name=Loop.PROBE),
            asyncio.create_task(self.sweep.run(), name="sweep"),
            asyncio.create_task(self._journal_sync_loop(), name="journal"),
            asyncio.create_task(supervise(self.snapshot, self.stopping, Notifier()), name="systemd"),
        ]
        if self.layouts is not None:
            self._tasks.append(asyncio.create_task(self._layouts_loop(), name="layouts"))
        if self.config.http.listen:
            from agent.http_port import serve as serve_http  # aiohttp itself waits for the first client

            serving = serve_http(self.snapshot, self.metrics.text, self.config.http.listen)
            self._tasks.append(asyncio.create_task(serving, name="http"))
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
        self.heartbeat.left = True
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
                # The rest of a box it claimed goes on whole now: no peer reclaims a printer that left cleanly.
                await self.store.group_back(self.me, self.me, None, "agent stopped")
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
