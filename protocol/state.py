"""What the agent is doing, as one frozen picture: the heartbeat, /healthz, /metrics and systemd all read this.

Taken in one go by ``Agent.snapshot()``, so the views never mix two moments (a state from before a badge with a
count from after it), and they cannot reach into the agent's working parts: the metrics, systemd's notifications
and the HTTP endpoints are given a way to take a snapshot, never the agent.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drivers.base import DeviceStatus


class AgentState(enum.StrEnum):
    """The one list of agent states (``health.state`` in Redis, ``badge_agent_state`` in /metrics)."""

    READY = "ready"
    PRINTING = "printing"
    PAUSED = "paused"  # the printer said it cannot take a badge right now (cover open, out of labels, ...)
    DEVICE_DOWN = "device_down"  # failed probes in a row: its pinned work went to the peers
    DRAINED = "drained"  # an operator took it out of service
    VENUE_FAULT = "venue_fault"  # Redis answers but refuses (agent/venue_fault.py)
    STOPPED = "stopped"  # a clean stop: written once, by the shutdown


@dataclass(frozen=True)
class Snapshot:
    printer: str
    venue: str
    location: str
    version: str
    device: DeviceStatus
    device_down: bool
    device_ready: bool
    printing: str | None  # the job id being sent or watched, None between badges
    printed: int
    drained: bool
    stopping: bool
    venue_fault: str | None  # what Redis refuses, in words, while it does
    lease_ok: bool  # our last heartbeat is recent enough that no peer can have declared us dead
    last_beat_ok: float | None  # monotonic time of the last acknowledged heartbeat
    beating_since: float | None  # monotonic time since which heartbeats are acknowledged without a break
    loops: Mapping[str, float] = field(default_factory=dict)  # loop name -> monotonic time of its last iteration
    redis_errors: int = 0  # the heartbeat's and the pull loop's, added up
    reclaimed: int = 0
    #: The longest each loop may go between two iterations and still be called alive (agent/liveness.py).
    budgets: Mapping[str, float] = field(default_factory=dict)
    stock: str = ""  # the label stock loaded ("101.6x152.4", mm): which variant of a badge layout it prints
    #: Whose word a print is on: ``device`` (the printer's own status) or ``spooler`` (drivers/base.py).
    confirmed_by: str = "device"
    #: Monotonic time since which every reading of the printer was a fault; None while it reads good.
    faulted_since: float | None = None

    @property
    def state(self) -> AgentState:
        """The state these facts show; the first that holds wins (a drained printer is drained, whatever else)."""
        if self.drained:
            return AgentState.DRAINED
        if self.venue_fault:
            return AgentState.VENUE_FAULT
        if self.device_down:
            return AgentState.DEVICE_DOWN
        if self.printing is not None:
            return AgentState.PRINTING
        if self.device_ready:
            return AgentState.READY
        return AgentState.PAUSED

    def health(self, state: AgentState | None = None) -> dict[str, Any]:
        """The JSON the heartbeat publishes as ``health:<printer>`` (docs/redis.md)."""
        return {
            "state": str(state or self.state),
            "reasons": list(self.device.reasons) + ([self.venue_fault] if self.venue_fault else []),
            "device": self.device.state.value,
            "printing": self.printing,
            "printed": self.printed,
            "location": self.location,
            "version": self.version,
            "redis_errors": self.redis_errors,
            "reclaimed": self.reclaimed,
            "confirmed_by": self.confirmed_by,
            **({"stock": self.stock} if self.stock else {}),
            # Where the printer counts what is left on its roll (a DYMO LabelWriter 550 reads the roll's chip).
            **({"labels_remaining": n} if isinstance(n := self.device.detail.get("labels_remaining"), int) else {}),
        }
