"""Prometheus metrics of one agent, in a registry of its own (tests run several agents in one process).

Counters are bumped by the pull loop where an outcome is known (``Agent._process``); the agent's state (device,
heartbeat age, Redis errors) is read when scraped, so it is never stale and costs nothing between scrapes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from agent import __version__
from drivers.base import DeviceState

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from agent.runtime import Agent

#: Agent states as ``_health()`` names them (one-hot in ``badge_agent_state``).
AGENT_STATES = ("ready", "printing", "paused", "device_down", "drained", "stopped")
#: A badge takes from a quarter second (fast thermal) to a minute (the print timeout's neighbourhood).
PRINT_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 45.0, 60.0)


class AgentMetrics:
    def __init__(self, agent: Agent) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.printed = Counter("badge_jobs_printed", "Badges this printer printed and confirmed.", registry=r)
        self.failed = Counter(
            "badge_jobs_failed",
            "Badges sent but not confirmed, by outcome: failed (proof it did not print), unknown (it may have).",
            ["outcome"],
            registry=r,
        )
        self.released = Counter(
            "badge_jobs_released",
            "Jobs this agent handed back, by outcome (failed, unknown, unsent) and result (released to the pool, "
            "dead = DLQ after max attempts, done, not_owner).",
            ["outcome", "result"],
            registry=r,
        )
        self.dead_lettered = Counter(
            "badge_jobs_dead_lettered", "Jobs sent to the DLQ at once (cannot be parsed or rendered).", registry=r
        )
        self.skipped = Counter(
            "badge_jobs_skipped",
            "Jobs taken but not printed because begin said so (done, not_owner, dead, skip).",
            ["reason"],
            registry=r,
        )
        self.duplicates = Counter(
            "badge_jobs_possible_duplicates",
            "Badges printed here that may exist twice: duplicate_print (another printer had confirmed it) or "
            "maybe_duplicate (an earlier attempt's outcome was unknown).",
            ["kind"],
            registry=r,
        )
        self.print_seconds = Histogram(
            "badge_print_duration_seconds",
            "From sending a badge to knowing its outcome.",
            ["outcome"],
            buckets=PRINT_BUCKETS,
            registry=r,
        )
        r.register(_StateCollector(agent))

    def count_print(self, outcome: str, seconds: float, confirm: str = "", maybe_where: str = "") -> None:
        """One badge's outcome; for a printed one, what ``confirm`` said about duplicates."""
        self.print_seconds.labels(outcome).observe(seconds)
        if outcome != "printed":
            self.failed.labels(outcome).inc()
            return
        self.printed.inc()
        if confirm == "duplicate":
            self.duplicates.labels("duplicate_print").inc()
        elif maybe_where:
            self.duplicates.labels("maybe_duplicate").inc()


class _StateCollector(Collector):
    """The agent's state as it is at scrape time."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def collect(self) -> Iterator[Metric]:
        from agent.liveness import LOOPS, problems, stale_loops

        a = self.agent
        now = time.monotonic()
        info = InfoMetricFamily("badge_agent", "This agent and its printer.")
        info.add_metric([], {"printer": a.me, "venue": a.config.venue, "location": a.location, "version": __version__})
        yield info
        health_state = str(a._health()["state"])
        state = GaugeMetricFamily("badge_agent_state", "1 for the agent's current state.", labels=["state"])
        for name in AGENT_STATES:
            state.add_metric([name], 1.0 if name == health_state else 0.0)
        yield state
        ready = GaugeMetricFamily("badge_agent_ready", "1 when /healthz answers 200 (the printer can print now).")
        ready.add_metric([], 0.0 if problems(a) else 1.0)
        yield ready
        device = GaugeMetricFamily("badge_device_state", "1 for the printer's last reported state.", labels=["state"])
        for member in DeviceState:
            device.add_metric([member.value], 1.0 if a.device.status.state is member else 0.0)
        yield device
        down = GaugeMetricFamily("badge_device_down", "1 while the printer is declared down (work handed back).")
        down.add_metric([], 1.0 if a.device.down else 0.0)
        yield down
        age = GaugeMetricFamily(
            "badge_heartbeat_age_seconds", "Seconds since Redis last acknowledged a heartbeat (+Inf before the first)."
        )
        age.add_metric([], now - a.last_beat_ok if a.last_beat_ok else float("inf"))
        yield age
        loops = GaugeMetricFamily(
            "badge_loop_age_seconds", "Seconds since each loop last iterated (the watchdog's input).", labels=["loop"]
        )
        stale = stale_loops(a, now)
        for name in LOOPS:
            if name in a.alive:
                loops.add_metric([name], now - a.alive[name])
        yield loops
        stalled = GaugeMetricFamily("badge_loops_stalled", "Loops over their budget (watchdog not fed while > 0).")
        stalled.add_metric([], float(len(stale)))
        yield stalled
        errors = CounterMetricFamily("badge_redis_errors", "Failed Redis operations (heartbeats and the pull loop).")
        errors.add_metric([], float(a.redis_errors))
        yield errors
        reclaims = CounterMetricFamily("badge_reclaims", "Dead peers whose work this agent reclaimed.")
        reclaims.add_metric([], float(a.reclaimed))
        yield reclaims
