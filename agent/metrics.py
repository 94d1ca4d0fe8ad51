"""Prometheus metrics of one agent, each agent with its own (tests run several agents in one process).

Counters are bumped by the pull loop where an outcome is known (agent/pull.py); the agent's state (device,
heartbeat age, Redis errors) is read when scraped, so it is never stale and costs nothing between scrapes.

They are counted here in plain Python, and turned into prometheus_client metric families only when ``/metrics`` is
scraped: prometheus_client's package pulls in http.server, wsgiref and urllib.request (about 3 MB resident), which
an agent with ``http.listen`` off would carry for nothing. The exposition (names, help, labels, ``_created``
series, buckets) is prometheus_client's own, as before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from agent.state import AgentState
from agent.vocabulary import INTENDED, MAY_EXIST_TWICE, PRINTED_TWICE, REPRINTS
from drivers.base import DeviceState

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

    from agent.runtime import Agent

#: A badge takes from a quarter second (fast thermal) to a minute (the print timeout's neighbourhood).
PRINT_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 45.0, 60.0)


def _use_created() -> bool:
    """prometheus_client's own switch for the ``_created`` series, honoured the same way."""
    return os.environ.get("PROMETHEUS_DISABLE_CREATED_SERIES", "False").lower() not in ("true", "1", "t")


class CounterValue:
    """One series of a :class:`Counter` (``counter.labels(...)``)."""

    def __init__(self) -> None:
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        self.value += amount


class Counter:
    """A counter as prometheus_client's ``Counter`` is used here: ``inc()``, or ``labels(...).inc()``.

    Only the event loop's thread touches it (the pull loop), so no lock.
    """

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        # As prometheus_client does: an unlabelled counter is a series (0) from the start, a labelled one gets a
        # series per label set the first time it is used.
        self.series: dict[tuple[str, ...], CounterValue] = {} if self.labelnames else {(): CounterValue()}

    def labels(self, *values: str) -> CounterValue:
        key = _label_key(self.name, self.labelnames, values)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = CounterValue()
        return series

    def inc(self, amount: float = 1.0) -> None:
        if self.labelnames:
            raise ValueError(f"counter {self.name} has labels: use labels(...).inc()")
        self.series[()].inc(amount)

    def family(self) -> Metric:
        from prometheus_client.core import CounterMetricFamily

        created = _use_created()
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, series in self.series.items():
            family.add_metric(list(key), series.value, created=series.created if created else None)
        return family


class HistogramValue:
    """One series of a :class:`Histogram`: per-bucket counts (not cumulative), their sum, when it began."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        self.sum += amount
        for i, bound in enumerate(self.bounds):
            if amount <= bound:
                self.counts[i] += 1
                break


class Histogram:
    """A histogram as prometheus_client's ``Histogram`` is used here: ``labels(...).observe(seconds)``."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        bounds = [float(b) for b in buckets]
        if bounds != sorted(bounds):
            raise ValueError("buckets not in sorted order")
        self.bounds = (*bounds, float("inf")) if bounds[-1] != float("inf") else tuple(bounds)
        self.series: dict[tuple[str, ...], HistogramValue] = {}

    def labels(self, *values: str) -> HistogramValue:
        key = _label_key(self.name, self.labelnames, values)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = HistogramValue(self.bounds)
        return series

    def family(self) -> Metric:
        from prometheus_client.core import HistogramMetricFamily
        from prometheus_client.samples import Sample
        from prometheus_client.utils import floatToGoString

        created = _use_created()
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, series in self.series.items():
            cumulative, total = [], 0
            for bound, count in zip(self.bounds, series.counts, strict=True):
                total += count
                cumulative.append((floatToGoString(bound), float(total)))  # type: ignore[no-untyped-call]
            family.add_metric(list(key), cumulative, series.sum)
            if created:
                family.samples.append(
                    Sample(f"{self.name}_created", dict(zip(self.labelnames, key, strict=True)), series.created)
                )
        return family


def _label_key(name: str, labelnames: tuple[str, ...], values: tuple[str, ...]) -> tuple[str, ...]:
    if len(values) != len(labelnames):
        raise ValueError(f"{name}: expected labels {labelnames}, got {values}")
    return tuple(str(v) for v in values)


class AgentMetrics:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.printed = Counter("badge_jobs_printed", "Badges this printer printed and confirmed.")
        self.failed = Counter(
            "badge_jobs_failed",
            "Badges sent but not confirmed, by outcome: failed (proof it did not print), unknown (it may have).",
            ["outcome"],
        )
        self.released = Counter(
            "badge_jobs_released",
            "Jobs this agent handed back, by outcome (failed, unknown, unsent) and result (released to the pool, "
            "dead = DLQ after max attempts, done, not_owner).",
            ["outcome", "result"],
        )
        self.dead_lettered = Counter(
            "badge_jobs_dead_lettered", "Jobs sent to the DLQ at once (cannot be parsed or rendered)."
        )
        self.skipped = Counter(
            "badge_jobs_skipped",
            "Jobs taken but not printed because begin said so (done, not_owner, dead, dropped).",
            ["reason"],
        )
        self.duplicates = Counter(
            "badge_jobs_possible_duplicates",
            f"Badges printed here staff must find: kind duplicate_print = {PRINTED_TWICE} (another printer had "
            f"confirmed it), maybe_duplicate = {MAY_EXIST_TWICE} (an earlier attempt's outcome was unknown). "
            f"A {REPRINTS} {INTENDED} copy is never counted here.",
            ["kind"],
        )
        self.drawn_ahead = Counter(
            "badge_drawn_ahead",
            "Badges drawn while the previous one printed: used (begin returned that job, no drawing between two "
            "badges) or wasted (another job came next, drawn again).",
            ["result"],
        )
        self.print_seconds = Histogram(
            "badge_print_duration_seconds",
            "From sending a badge to knowing its outcome.",
            ["outcome"],
            buckets=PRINT_BUCKETS,
        )

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

    def prometheus_registry(self) -> CollectorRegistry:
        """A registry of this agent's metrics for prometheus_client's exposition (``agent.http_app`` serves it)."""
        from prometheus_client import CollectorRegistry

        registry = CollectorRegistry()
        registry.register(_Collector(self))
        return registry


class _Collector:
    """Everything /metrics shows: the counters as counted, then the agent's state as it is at scrape time."""

    def __init__(self, metrics: AgentMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        for counter in (m.printed, m.failed, m.released, m.dead_lettered, m.skipped, m.duplicates, m.drawn_ahead):
            yield counter.family()
        yield m.print_seconds.family()
        yield from _state_families(m.agent)


def _state_families(a: Agent) -> Iterator[Metric]:
    """The agent's state as it is at scrape time."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily

    from agent.liveness import LOOPS, problems, stale_loops

    now = time.monotonic()
    snap = a.snapshot()
    info = InfoMetricFamily("badge_agent", "This agent and its printer.")
    info.add_metric(
        [], {"printer": snap.printer, "venue": a.config.venue, "location": snap.location, "version": snap.version}
    )
    yield info
    state = GaugeMetricFamily("badge_agent_state", "1 for the agent's current state.", labels=["state"])
    for agent_state in AgentState:
        state.add_metric([agent_state.value], 1.0 if snap.state is agent_state else 0.0)
    yield state
    ready = GaugeMetricFamily("badge_agent_ready", "1 when /healthz answers 200 (the printer can print now).")
    ready.add_metric([], 0.0 if problems(snap, a.loop_budgets) else 1.0)
    yield ready
    device = GaugeMetricFamily("badge_device_state", "1 for the printer's last reported state.", labels=["state"])
    for member in DeviceState:
        device.add_metric([member.value], 1.0 if snap.device.state is member else 0.0)
    yield device
    down = GaugeMetricFamily("badge_device_down", "1 while the printer is declared down (work handed back).")
    down.add_metric([], 1.0 if snap.device_down else 0.0)
    yield down
    age = GaugeMetricFamily(
        "badge_heartbeat_age_seconds", "Seconds since Redis last acknowledged a heartbeat (+Inf before the first)."
    )
    age.add_metric([], float("inf") if snap.last_beat_ok is None else now - snap.last_beat_ok)
    yield age
    loops = GaugeMetricFamily(
        "badge_loop_age_seconds", "Seconds since each loop last iterated (the watchdog's input).", labels=["loop"]
    )
    stale = stale_loops(snap, a.loop_budgets, now)
    for name in LOOPS:
        if name in snap.loops:
            loops.add_metric([name], now - snap.loops[name])
    yield loops
    stalled = GaugeMetricFamily("badge_loops_stalled", "Loops over their budget (watchdog not fed while > 0).")
    stalled.add_metric([], float(len(stale)))
    yield stalled
    errors = CounterMetricFamily("badge_redis_errors", "Failed Redis operations (heartbeats and the pull loop).")
    errors.add_metric([], float(snap.redis_errors))
    yield errors
    reclaims = CounterMetricFamily("badge_reclaims", "Dead peers whose work this agent reclaimed.")
    reclaims.add_metric([], float(snap.reclaimed))
    yield reclaims
