"""Every printer detect reaches, in the one order both ``badge-agent detect`` and ``setup --detected N`` count in:
USB, then serial ports, then network hosts (the ones asked for, then the ones that announced themselves), then IPP
printers and CUPS queues (port 631 of the hosts asked, the ones announced, the local CUPS server's queues)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from detect.identify import Found
from detect.ipp import IPP_PORT, probe_ipp
from detect.mdns import Announced, browse_all
from detect.network import probe_hosts
from detect.serial import probe_serial
from detect.usb import probe_usb


async def _local(devices: list[str], usb: bool, timeout: float, usb_backend: Any, named: frozenset[str]) -> list[Found]:
    found = await probe_usb(timeout, usb_backend) if usb else []
    return found + await probe_serial(devices, timeout, named=named)


async def detect_all(
    targets: list[tuple[str, int]],
    devices: list[str],
    *,
    usb: bool,
    timeout: float,
    usb_backend: Any = None,
    mdns_window: float = 0.0,
    mdns_interfaces: list[str] | None = None,
    named_serial: frozenset[str] = frozenset(),
    named_hosts: frozenset[tuple[str, int]] = frozenset(),
    ipp_port: int | None = IPP_PORT,
    cups: str | None = None,
) -> list[Found]:
    """USB devices (when ``usb``), the serial ``devices``, the network ``targets`` and, when ``mdns_window`` > 0,
    every printer announced over mDNS within that many seconds, each that answers as a printer. ``named_serial``:
    the serial ports the user named, the only ones asked whether they speak TSPL; ``named_hosts``: the network hosts
    the user named, the only ones asked TSPL and DYMO. ``ipp_port``: the port each
    network host is asked IPP on (None: not asked); ``cups``: the local CUPS server (``HOST:PORT``) whose queues are
    listed, None for none."""
    if mdns_window > 0:
        # The browse window passes while the local ports are asked: it costs no time of its own.
        local, browsed = await asyncio.gather(
            _local(devices, usb, timeout, usb_backend, named_serial), browse_all(mdns_window, mdns_interfaces)
        )
        announced, announced_ipp = browsed
    else:
        local, announced, announced_ipp = await _local(devices, usb, timeout, usb_backend, named_serial), [], []
    names: dict[tuple[str, int], Announced] = {(a.host, a.port): a for a in announced}
    network = list(dict.fromkeys([*targets, *names]))
    hosts = [host for host, _ in targets] if ipp_port is not None else []
    found, ipp = await asyncio.gather(
        probe_hosts(network, timeout, named=named_hosts),
        probe_ipp(
            hosts, timeout, port=ipp_port or IPP_PORT, announced=[(a.uri, a.name) for a in announced_ipp], cups=cups
        ),
    )
    for n, f in enumerate(found):
        if (hit := names.get((f.driver["host"], f.driver["port"]))) is not None:
            found[n] = dataclasses.replace(f, announced=hit.name)
    return local + found + ipp
