"""``badge-agent sim``: run one emulated printer as a process until cancelled.

Faults are switched at run time through the control file (the format of ``drivers.sim``)::

    echo '{"fault": "media_out"}' > /tmp/zebra.json    # paper out
    echo '{"fault": null}' > /tmp/zebra.json           # reloaded
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from drivers.emulators import EMULATORS
from drivers.emulators.fronts import PtyFront, TcpFront

log = logging.getLogger(__name__)


async def serve(
    kind: str,
    transport: str = "tcp",
    host: str = "127.0.0.1",
    port: int = 9100,
    print_time: float = 1.0,
    control_file: Path | None = None,
    print_log: Path | None = None,
    name: str | None = None,
    read_back: bool = True,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve one emulated printer until the task is cancelled.

    Args:
        kind: ``zpl``, ``brother_ql``, ``escpos``, ``dymo`` (a LabelWriter 450), ``dymo550`` or ``tspl``.
        transport: ``tcp`` (listen on host:port; 0 picks a free port) or ``serial`` (a pty; its path is logged).
        print_time: seconds per badge.
        control_file: JSON ``{"fault": ...}`` read at run time; faults: see ``drivers.emulators.FAULTS``.
        print_log: JSON lines, one per badge that came out (or half came out).
        read_back: decode each label for the log (attendee id, texts); off, the log says only when it came out.
        ready: told where the printer can be reached, once it can (``badge-agent sim`` prints it); else logged.
    """
    say = ready or log.info
    if kind not in EMULATORS:
        raise ValueError(f"unknown printer kind {kind!r}; choose from {', '.join(EMULATORS)}")
    printer = EMULATORS[kind](
        name or f"{kind}-emulator",
        print_time=print_time,
        control_file=control_file,
        print_log=print_log,
        read_back=read_back,
    )
    await printer.start()
    front: TcpFront | PtyFront
    if transport == "tcp":
        front = TcpFront(printer, host, port)
        bound = await front.start()
        say(f"{kind} printer listening on {bound[0]}:{bound[1]}")
    elif transport == "serial":
        front = PtyFront(printer)
        say(f"{kind} printer on serial device {await front.start()} (the agent's driver.device)")
    else:
        raise ValueError(f"the emulator serves 'tcp' or 'serial', not {transport!r} (USB is emulated in tests)")
    try:
        await asyncio.Event().wait()
    finally:
        await front.stop()
        await printer.stop()
