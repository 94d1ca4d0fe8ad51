"""Prometheus metrics of one agent, each agent with its own (tests run several agents in one process).

The counters listen to the pull loop's events (agent/pull_events.py) and count with the light counters of
core/exposition.py; the agent's state (device, heartbeat age, Redis errors) is read from its snapshot when
scraped, so it is never stale and costs nothing between scrapes. ``text()`` writes them all (agent.http_app serves
it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from agent.pull_events import PullEvents
from core.exposition import Counter, Histogram, exposition
from drivers.base import DeviceState, PrintResult
from protocol.replies import Begun, ConfirmKind, ReleaseKind
from protocol.specs import ReleaseOutcome
from protocol.state import AgentState, Snapshot
from protocol.vocabulary import INTENDED, MAY_EXIST_TWICE, PRINTED_TWICE, REPRINTS

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

#: A badge takes from a quarter second (fast thermal) to a minute (the print timeout's neighbourhood).
PRINT_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 45.0, 60.0)


class AgentMetrics(PullEvents):
    def __init__(self, snapshot: Callable[[], Snapshot]) -> None:
        self.snapshot = snapshot
        self.printed_jobs = Counter("badge_jobs_printed", "Badges this printer printed and confirmed.")
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
        self.dead_lettered_jobs = Counter(
            "badge_jobs_dead_lettered", "Jobs sent to the DLQ at once (cannot be parsed or rendered)."
        )
        self.skipped_jobs = Counter(
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
        self.drawn_ahead_jobs = Counter(
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

    # -- what the pull loop reports (agent/pull_events.py) ---------------------------------------------------------

    def skipped(self, job_id: str, begun: Begun) -> None:
        self.skipped_jobs.labels(begun.kind).inc()

    def dead_lettered(self, job_id: str, reason: str) -> None:
        self.dead_lettered_jobs.inc()

    def unsent(self, job_id: str, why: str, released: ReleaseKind) -> None:
        self.released.labels("unsent", released).inc()

    def printed(self, job_id: str, attempt: int, confirm: ConfirmKind, maybe_where: str, seconds: float) -> None:
        self.print_seconds.labels("printed").observe(seconds)
        self.printed_jobs.inc()
        if confirm is ConfirmKind.DUPLICATE:
            self.duplicates.labels("duplicate_print").inc()
        elif maybe_where:
            self.duplicates.labels("maybe_duplicate").inc()

    def not_printed(
        self, job_id: str, outcome: ReleaseOutcome, result: PrintResult, released: ReleaseKind, seconds: float
    ) -> None:
        self.print_seconds.labels(outcome).observe(seconds)
        self.failed.labels(outcome).inc()
        self.released.labels(outcome, released).inc()

    def drawn_ahead(self, used: bool) -> None:
        self.drawn_ahead_jobs.labels("used" if used else "wasted").inc()

    # -- /metrics ----------------------------------------------------------------------------------------------------

    def text(self) -> tuple[bytes, str]:
        """Everything /metrics shows, and its Content-Type: the counters as counted, then the agent's state now."""
        return exposition(self.families())

    def families(self) -> Iterator[Metric]:
        counters = (
            self.printed_jobs,
            self.failed,
            self.released,
            self.dead_lettered_jobs,
            self.skipped_jobs,
            self.duplicates,
            self.drawn_ahead_jobs,
        )
        for counter in counters:
            yield counter.family()
        yield self.print_seconds.family()
        yield from _state_families(self.snapshot())


def _state_families(snap: Snapshot) -> Iterator[Metric]:
    """The agent's state as it is at scrape time."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily

    from agent.liveness import LOOPS, problems, stale_loops

    now = time.monotonic()
    info = InfoMetricFamily("badge_agent", "This agent and its printer.")
    info.add_metric(
        [], {"printer": snap.printer, "venue": snap.venue, "location": snap.location, "version": snap.version}
    )
    yield info
    state = GaugeMetricFamily("badge_agent_state", "1 for the agent's current state.", labels=["state"])
    for agent_state in AgentState:
        state.add_metric([agent_state.value], 1.0 if snap.state is agent_state else 0.0)
    yield state
    ready = GaugeMetricFamily("badge_agent_ready", "1 when /healthz answers 200 (the printer can print now).")
    ready.add_metric([], 0.0 if problems(snap) else 1.0)
    yield ready
    device = GaugeMetricFamily("badge_device_state", "1 for the printer's last reported state.", labels=["state"])
    for member in DeviceState:
        device.add_metric([member.value], 1.0 if snap.device.state is member else 0.0)
    yield device
    down = GaugeMetricFamily("badge_device_down", "1 while the printer is declared down (work handed back).")
    down.add_metric([], 1.0 if snap.device_down else 0.0)
    yield down
    fault_age = GaugeMetricFamily(
        "badge_device_fault_age_seconds",
        "Seconds the printer has read faulted without a good reading between (0 while it reads good).",
    )
    fault_age.add_metric([], 0.0 if snap.faulted_since is None else now - snap.faulted_since)
    yield fault_age
    age = GaugeMetricFamily(
        "badge_heartbeat_age_seconds", "Seconds since Redis last acknowledged a heartbeat (+Inf before the first)."
    )
    age.add_metric([], float("inf") if snap.last_beat_ok is None else now - snap.last_beat_ok)
    yield age
    loops = GaugeMetricFamily(
        "badge_loop_age_seconds", "Seconds since each loop last iterated (the watchdog's input).", labels=["loop"]
    )
    stale = stale_loops(snap, now)
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
