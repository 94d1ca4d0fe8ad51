"""IPP printers and CUPS queues for ``detect``: asked with Get-Printer-Attributes (a CUPS server with
CUPS-Get-Printers), never sent a job.

Three ways in: an ``_ipp._tcp``/``_ipps._tcp`` mDNS announcement (its address, port and TXT ``rp``, the resource
path), port 631 of each network host detect asks (a CUPS server lists its queues; a printer answers at
``/ipp/print``, the IPP Everywhere path), and the local CUPS server's queues. Each printer found carries the
``driver`` section that reaches it (``language: ipp``, ``uri``; for ``ipps`` the certificate's fingerprint, read as
the driver pins it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from detect.identify import Found
from drivers.ipp import status as ipp_status
from drivers.ipp import wire
from drivers.ipp.client import IppClient, IppError, format_fingerprint, peer_fingerprint

IPP_PORT = 631
#: The path an IPP Everywhere printer answers at (PWG 5100.14); a printer that announces itself says its own.
EVERYWHERE_PATH = "/ipp/print"
CUPS_GET_PRINTERS = 0x4002
ATTRIBUTES = [
    "printer-name",
    "printer-make-and-model",
    "printer-state",
    "printer-state-reasons",
    "printer-is-accepting-jobs",
    "media-ready",
    "device-uri",
]
STATES = {3: "idle", 4: "processing", 5: "stopped"}


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _strings(values: wire.Values, name: str) -> list[str]:
    return [v for v in values.get(name, []) if isinstance(v, str) and v]


def _found(uri: str, values: wire.Values, driver: dict[str, Any], announced: str = "") -> Found:
    model = wire.first(values, "printer-make-and-model")
    state = STATES.get(wire.first(values, "printer-state"), "")
    reasons = [r for r in _strings(values, "printer-state-reasons") if r != "none"]
    if state and reasons:
        state += f" ({', '.join(reasons)})"
    return Found(
        transport="ipp",
        address=uri,
        language="ipp",
        model=model if isinstance(model, str) and model else "IPP printer",
        media=", ".join(_strings(values, "media-ready")),
        announced=announced,
        state=state,
        confirmed_by=ipp_status.confirmed_by(values),
        driver=driver,
    )


async def ask_printer(uri: str, timeout: float, fingerprint: str | None = None, announced: str = "") -> Found | None:
    """The printer (or CUPS queue) at ``uri`` as detect lists it; None when it does not answer as one."""
    try:
        async with IppClient(uri, tls_fingerprint=fingerprint, connect_timeout=timeout, io_timeout=timeout) as client:
            reply = await client.request(wire.GET_PRINTER_ATTRIBUTES, {"requested-attributes": ATTRIBUTES})
    except (IppError, ValueError):
        return None
    values = reply.group(wire.PRINTER_GROUP)
    if "printer-state" not in values:
        return None
    driver: dict[str, Any] = {"language": "ipp", "uri": uri}
    if fingerprint is not None:
        driver["tls_fingerprint"] = fingerprint
    return _found(uri, values, driver, announced)


async def ask_secure(uri: str, timeout: float, announced: str = "") -> Found | None:
    """An ``ipps://`` printer: its certificate read (and pinned in the driver section), then asked over TLS."""
    try:
        fingerprint = format_fingerprint(await peer_fingerprint(uri, timeout))
    except IppError:
        return None
    return await ask_printer(uri, timeout, fingerprint, announced)


async def cups_queues(host: str, port: int, timeout: float) -> list[Found] | None:
    """The queues of the CUPS server at ``host:port`` (CUPS-Get-Printers), each reached at ``/printers/NAME``; None
    when no CUPS server answers there (nothing listens, or an IPP printer that knows no such operation)."""
    server = f"ipp://{_host(host)}:{port}/"
    try:
        async with IppClient(server, connect_timeout=timeout, io_timeout=timeout) as client:
            reply = await client.request(CUPS_GET_PRINTERS, {"requested-attributes": ATTRIBUTES})
    except (IppError, ValueError):
        return None
    queues = []
    for tag, values in reply.groups:
        name = wire.first(values, "printer-name")
        if tag != wire.PRINTER_GROUP or not isinstance(name, str) or not name or "/" in name:
            continue
        uri = f"ipp://{_host(host)}:{port}/printers/{name}"
        queues.append(_found(uri, values, {"language": "ipp", "uri": uri}))
    return sorted(queues, key=lambda f: f.address)


async def ask_host(host: str, port: int, timeout: float, slots: asyncio.Semaphore) -> list[Found]:
    """Port ``port`` (631) of one host: a CUPS server's queues, else an IPP Everywhere printer at ``/ipp/print``."""
    async with slots:
        queues = await cups_queues(host, port, timeout)
        if queues:
            return queues
        if queues is None and not await _listens(host, port, timeout):
            return []
        printer = await ask_printer(f"ipp://{_host(host)}:{port}{EVERYWHERE_PATH}", timeout)
        return [printer] if printer is not None else []


async def _listens(host: str, port: int, timeout: float) -> bool:
    """Something accepts connections there: only then is the printer path asked too (a /24 mostly does not)."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


async def probe_ipp(
    hosts: list[str],
    timeout: float,
    *,
    port: int = IPP_PORT,
    announced: Sequence[tuple[str, str]] = (),
    cups: str | None = None,
    in_flight: int = 64,
) -> list[Found]:
    """Every IPP printer and CUPS queue found: on port ``port`` of ``hosts``, at the ``announced`` (uri, name)
    pairs from mDNS, and the queues of the CUPS server ``cups`` (``HOST:PORT``), each once (by URI), in that order."""
    slots = asyncio.Semaphore(in_flight)
    by_host = await asyncio.gather(*(ask_host(h, port, timeout, slots) for h in dict.fromkeys(hosts)))

    async def one(uri: str, name: str) -> Found | None:
        async with slots:
            if uri.startswith("ipps:"):
                return await ask_secure(uri, timeout, name)
            return await ask_printer(uri, timeout, announced=name)

    heard = await asyncio.gather(*(one(uri, name) for uri, name in announced))
    local: list[Found] = []
    if cups:
        host, _, cups_port = cups.rpartition(":")
        local = await cups_queues(host, int(cups_port), timeout) or []
    seen: dict[str, Found] = {}
    for f in [*(f for found in by_host for f in found), *(f for f in heard if f is not None), *local]:
        seen.setdefault(f.address, f)
    return list(seen.values())
