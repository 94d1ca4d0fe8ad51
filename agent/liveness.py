"""Is the agent alive and able to print? The rules behind /healthz and systemd's watchdog, in one place.

Kept apart from ``agent.http_app`` so the watchdog (which always runs) does not pull aiohttp into an agent whose HTTP
endpoints are off.
"""

from __future__ import annotations

import enum
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.config import AgentConfig
    from protocol.state import Snapshot


class Loop(enum.StrEnum):
    """The loops whose progress the watchdog and /healthz check (each records its iterations in ``Snapshot.loops``)."""

    PULL = "pull"
    HEARTBEAT = "heartbeat"
    PROBE = "probe"


LOOPS = tuple(Loop)
#: Slack on top of a loop's longest legitimate iteration: a slow SD card or a busy Pi is not a hung loop.
MARGIN = 2.0


def loop_budgets(config: AgentConfig) -> dict[str, float]:
    """The longest a loop may go between two iterations and still be called alive, in seconds.

    Each is its longest legitimate iteration (every wait inside is bounded) plus a margin, so a loop only counts as
    stalled when something waits without a bound (a hung driver, a lost wake-up), which a restart does fix.
    """
    t = config.timing
    d = config.printer.driver
    print_backstop = d.print_timeout + 5  # agent/pull.py's own backstop (print_badge)
    probe = t.probe_interval + 3 * d.io_timeout + MARGIN
    if config.jobs.test_print_on_recovery:
        probe += print_backstop  # the test badge runs inside the probe loop
    return {
        # One badge (bounded by the print backstop) plus a few Redis round trips and blocking pops.
        Loop.PULL: print_backstop + 2 * t.block_timeout + 3 * d.io_timeout + MARGIN,
        # A beat is bounded by wait_for(2 x interval), then it sleeps one interval.
        Loop.HEARTBEAT: 3 * t.heartbeat_interval + MARGIN,
        Loop.PROBE: probe,
    }


def stale_loops(snap: Snapshot, now: float | None = None) -> dict[str, float]:
    """Loops that have not iterated within their budget: name -> seconds since their last iteration."""
    now = time.monotonic() if now is None else now
    stale = {}
    for name, budget in snap.budgets.items():
        last = snap.loops.get(name)
        if last is None:
            continue  # not started yet: start-up is systemd's TimeoutStartSec's business
        if name == Loop.PULL:
            if snap.beating_since is None:
                # Redis is unreachable: the pull loop waits in wait_for_redis, which is right, and a restart would
                # not bring Redis back. The heartbeat loop (checked too) proves the process is alive meanwhile.
                continue
            # After an outage, the pull loop gets its budget counted from when Redis came back.
            last = max(last, snap.beating_since)
        age = now - last
        if age > budget:
            stale[name] = age
    return stale


def problems(snap: Snapshot) -> list[str]:
    """Why this agent cannot print a badge right now, in words for staff; empty when it can."""
    reasons = []
    if snap.stopping:
        reasons.append("agent is stopping")
    if snap.last_beat_ok is None:
        reasons.append("no heartbeat acknowledged by Redis yet")
    elif not snap.lease_ok:
        age = time.monotonic() - snap.last_beat_ok
        reasons.append(f"no heartbeat acknowledged by Redis for {age:.1f} s")
    if snap.drained:
        reasons.append("drained by an operator")
    if snap.venue_fault:
        reasons.append(snap.venue_fault)
    if snap.device_down:
        reasons.append(f"printer down: {snap.device.describe()}")
    elif not snap.device_ready and snap.printing is None:
        reasons.append(f"printer not ready: {snap.device.describe()}")
    for name, age in stale_loops(snap).items():
        reasons.append(f"{name} loop stalled for {age:.0f} s")
    return reasons
