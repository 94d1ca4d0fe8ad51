"""The driver contract: what the agent needs from any printer.

A driver is a transport (how bytes reach the device) plus a printer language (what the bytes mean and how the
device's status replies are read). The agent only ever sees :class:`Driver`; everything printer-specific stays
below this line.

The one rule every driver keeps: ``printed`` is reported only on evidence from the device, ``failed`` only with
proof that nothing came out, and everything else is ``unknown``. Silence from a device is "possibly faulted", never
"ready" (python-escpos reported offline/no-paper for an empty reply; we do not).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class Outcome(enum.StrEnum):
    """What happened to one badge, as far as the device lets us know."""

    PRINTED = "printed"
    FAILED = "failed"
    UNKNOWN = "unknown"


class DeviceState(enum.StrEnum):
    READY = "ready"
    PRINTING = "printing"
    PAUSED = "paused"
    MEDIA_OUT = "media_out"
    HEAD_OPEN = "head_open"
    RIBBON_OUT = "ribbon_out"
    JAM = "jam"
    OVERHEAT = "overheat"
    OFFLINE = "offline"
    ERROR = "error"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class DeviceStatus:
    """One reading of the device's status.

    Attributes:
        state: the dominant state (a fault wins over ``printing``, ``printing`` over ``ready``).
        reasons: every condition the device reported, most severe first, in words staff understand.
        detail: language-specific extras (label counter, buffered formats, raw flags) for logs and health.
    """

    state: DeviceState
    reasons: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return self.state is DeviceState.READY

    @property
    def busy(self) -> bool:
        return self.state is DeviceState.PRINTING

    @property
    def faulted(self) -> bool:
        return self.state not in (DeviceState.READY, DeviceState.PRINTING)

    def describe(self) -> str:
        return self.state.value + (f" ({', '.join(self.reasons)})" if self.reasons else "")


@dataclass(frozen=True)
class PrintResult:
    """The tri-state outcome of one badge and the evidence behind it.

    ``sent`` is False when not one byte of the badge reached the printer (it was off, silent or refused): the
    printer failed, not the job, so the attempt does not count towards the job's ``max_attempts``.
    """

    outcome: Outcome
    reason: str = ""
    status: DeviceStatus | None = None
    sent: bool = True


@dataclass(frozen=True)
class Badge:
    """What a badge shows. Built by the agent from a validated job; drivers never see raw job JSON."""

    job_id: str
    attendee_id: str
    name: str
    company: str = ""
    role: str = ""
    #: The event's own attendee data (``ticket_type``, ``pronouns``, ...), for a badge layout's templates.
    fields: Mapping[str, str] = field(default_factory=dict)
    #: The layout the job asked for; None: the venue's rules decide.
    layout: str | None = None


@dataclass(frozen=True)
class Handed:
    """A badge handed to a printer that holds it in its own queue (``Driver.holds`` 2): the printer's name for the
    job, and what the printer said just before it took it."""

    job: Any
    before: DeviceStatus


class DriverError(Exception):
    """The device or its link failed (cannot connect, timed out, unplugged)."""


class RenderError(Exception):
    """This badge cannot be rendered for this printer (a poison job: retrying will not help)."""


class Driver(abc.ABC):
    """A printer as the agent sees it. One instance owns the device's I/O; calls never overlap.

    Lifecycle is explicit (``open``/``aclose``, or ``async with``): nothing opens itself when a property is read and
    nothing is cleaned up in ``__del__``, the two habits python-escpos users report as devices left busy or closed
    under them.
    """

    #: False when the link cannot read the device's status (a one-way link): outcomes are then never ``printed``
    #: by evidence, and each driver documents its policy.
    status_capable: bool = True

    #: Whose word a ``printed`` outcome is on: ``device`` (the printer's own status, as every native driver reads
    #: it) or ``spooler`` (a print server that hands the bytes on and cannot read the printer: a CUPS queue with a
    #: ``usb://``, ``socket://`` or ``file:`` backend). Written on each confirmed print and shown by ``status``.
    confirmed_by: str = "device"

    #: How many badges the printer may hold at once. 1: the agent sends a badge and waits for its outcome
    #: (``print``). 2: the printer queues a badge it is handed while another prints and can cancel it there before it
    #: starts (an IPP printer or queue), so the agent hands it the next one early (``hand``, ``outcome``,
    #: ``withdraw``) and the printer never waits for the agent between two badges.
    holds: int = 1

    #: A short human description for logs and ``check-config`` ("ZPL over TCP 10.0.0.5:9100").
    description: str = ""

    #: True when ``render`` is trivial and may run on the event loop (the simulated printer); real badges are
    #: drawn in a worker thread.
    render_is_cheap: bool = False

    #: How a badge is drawn for a label (``draw(badge, label)`` -> a mode "1" image) when the venue has badge
    #: layouts; the agent sets it (layouts/book.py). None: the built-in design. Drivers that draw nothing ignore it.
    draw: Callable[[Badge, Any], Any] | None = None

    #: Why the loaded stock cannot take the venue's badges (a layout with no variant for it), or None; set by the
    #: agent, read by a driver at every probe and before every badge (a media fault, as a wrong roll is).
    media_fault: Callable[[], str | None] | None = None

    #: The stock the printer itself reports it has loaded (a ``LabelConfig``), or None where it does not say: the
    #: config's ``label`` then stands. A badge layout is drawn for this stock, and the venue's variant for it chosen.
    loaded: Any = None

    async def __aenter__(self) -> Driver:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @abc.abstractmethod
    async def open(self) -> None:
        """Connect to the device. Raises DriverError when it cannot be reached; callers may retry."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release the device. Safe to call twice and after a failed open."""

    @abc.abstractmethod
    def render(self, badge: Badge) -> bytes:
        """Turn a badge into the exact bytes for the device. CPU-bound: the agent calls it in a worker thread.

        Raises:
            RenderError: the badge cannot be drawn on this printer (the job goes to the DLQ with this reason).
        """

    @abc.abstractmethod
    async def probe(self) -> DeviceStatus:
        """Ask the device for its status. Never raises for a device fault: a fault is a state.

        A link failure or no reply gives ``OFFLINE``/``UNKNOWN`` with the reason, never ``READY``.
        """

    @abc.abstractmethod
    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        """Send one rendered badge and watch the device until the outcome is known or ``timeout`` passes."""

    @abc.abstractmethod
    async def cancel(self) -> None:
        """Clear whatever the device still buffers, so a job handed on is never printed here later.

        Raises DriverError when the device cannot be reached (the caller records that the buffer may survive).
        """

    async def hand(self, data: bytes, badge: Badge) -> Handed | PrintResult:
        """Hand the printer a badge without waiting for it to print (``holds`` 2 only): a ``Handed`` the printer now
        holds, or the outcome when it took none of it (refused, faulted: ``failed``; cut off: ``unknown``)."""
        raise NotImplementedError(f"{type(self).__name__} holds one badge at a time")

    async def outcome(self, handed: Handed, timeout: float) -> PrintResult:
        """Watch a handed badge until its outcome is known or ``timeout`` passes (counted from now: it may have
        waited behind another). While another handed badge waits behind it, a fault the printer reports withdraws
        that one (``withdraw``) before the printer can start it."""
        raise NotImplementedError(f"{type(self).__name__} holds one badge at a time")

    async def withdraw(self, handed: Handed) -> PrintResult:
        """Take back a handed badge before it leaves the agent: cancelled at the printer. ``failed`` (nothing sent
        counted: ``sent`` False) when the printer never started it, ``printed`` when it already proved it,
        ``unknown`` otherwise."""
        raise NotImplementedError(f"{type(self).__name__} holds one badge at a time")
