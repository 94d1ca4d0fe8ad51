"""Is the agent alive and able to print? The rules behind /healthz and systemd's watchdog, in one place.

Kept apart from ``agent.http`` so the watchdog (which always runs) does not pull aiohttp into an agent whose HTTP
endpoints are off.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.runtime import Agent

#: The loops whose progress the watchdog and /healthz check (each records ``agent.alive[name]`` per iteration).
LOOPS = ("pull", "heartbeat", "probe")
#: Slack on top of a loop's longest legitimate iteration: a slow SD card or a busy Pi is not a hung loop.
MARGIN = 2.0


def loop_budgets(agent: Agent) -> dict[str, float]:
    """The longest a loop may go between two iterations and still be called alive, in seconds.

    Each is its longest legitimate iteration (every wait inside is bounded) plus a margin, so a loop only counts as
    stalled when something waits without a bound (a hung driver, a lost wake-up), which a restart does fix.
    """
    t = agent.timing
    d = agent.config.printer.driver
    print_backstop = d.print_timeout + 5  # Agent._print's own backstop
    probe = t.probe_interval + 3 * d.io_timeout + MARGIN
    if agent.config.jobs.test_print_on_recovery:
        probe += print_backstop  # the test badge runs inside the probe loop
    return {
        # One badge (bounded by the print backstop) plus a few Redis round trips and blocking pops.
        "pull": print_backstop + 2 * t.block_timeout + 3 * d.io_timeout + MARGIN,
        # A beat is bounded by wait_for(2 x interval), then it sleeps one interval.
        "heartbeat": 3 * t.heartbeat_interval + MARGIN,
        "probe": probe,
    }


def stale_loops(agent: Agent, now: float | None = None) -> dict[str, float]:
    """Loops that have not iterated within their budget: name -> seconds since their last iteration."""
    now = time.monotonic() if now is None else now
    stale = {}
    for name, budget in loop_budgets(agent).items():
        last = agent.alive.get(name)
        if last is None:
            continue  # not started yet: start-up is systemd's TimeoutStartSec's business
        if name == "pull":
            if agent.beating_since is None:
                # Redis is unreachable: the pull loop waits in wait_for_redis, which is right, and a restart would
                # not bring Redis back. The heartbeat loop (checked too) proves the process is alive meanwhile.
                continue
            # After an outage, the pull loop gets its budget counted from when Redis came back.
            last = max(last, agent.beating_since)
        age = now - last
        if age > budget:
            stale[name] = age
    return stale


def problems(agent: Agent) -> list[str]:
    """Why this agent cannot print a badge right now, in words for staff; empty when it can."""
    reasons = []
    if agent.stopping.is_set():
        reasons.append("agent is stopping")
    if agent.last_beat_ok == 0:
        reasons.append("no heartbeat acknowledged by Redis yet")
    elif not agent._lease_ok():
        age = time.monotonic() - agent.last_beat_ok
        reasons.append(f"no heartbeat acknowledged by Redis for {age:.1f} s")
    if agent.drained:
        reasons.append("drained by an operator")
    if agent.venue_fault.active():
        reasons.append(agent.venue_fault.describe())
    status = agent.device.status
    if agent.device.down:
        reasons.append(f"printer down: {status.describe()}")
    elif not agent.device.ready.is_set() and not agent.sending:
        reasons.append(f"printer not ready: {status.describe()}")
    for name, age in stale_loops(agent).items():
        reasons.append(f"{name} loop stalled for {age:.0f} s")
    return reasons
