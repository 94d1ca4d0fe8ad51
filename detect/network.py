"""Network printers: a raw-print port (9100) on each host asked, a bounded number of probes at a time."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket

from detect.identify import Found, found, identify_stream

RAW_PORT = 9100


def own_subnets() -> list[str]:
    """The /24 around this machine's outbound address (no packet is sent to find it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: routing decides the source address, nothing is sent
            addr = s.getsockname()[0]
        except OSError:
            return []
    return [str(ipaddress.ip_network(f"{addr}/24", strict=False))]


def hosts_of(network: str, port: int = RAW_PORT) -> list[tuple[str, int]]:
    net = ipaddress.ip_network(network, strict=False)
    addresses = list(net.hosts()) or [net.network_address]
    return [(str(a), port) for a in addresses]


async def _probe(host: str, port: int, timeout: float, slots: asyncio.Semaphore, named: bool) -> Found | None:
    async with slots:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        except (OSError, TimeoutError):
            return None
        try:
            what = await identify_stream(reader, writer, timeout, named)
        except OSError:
            what = None
        finally:
            writer.close()
            with contextlib.suppress(OSError, TimeoutError):  # a closed socket is all that matters here
                await asyncio.wait_for(writer.wait_closed(), timeout)
    if what is None:
        return None
    return found("tcp", f"{host}:{port}", what, host=host, port=port)


async def probe_hosts(
    targets: list[tuple[str, int]],
    timeout: float = 0.5,
    in_flight: int = 64,
    named: frozenset[tuple[str, int]] = frozenset(),
) -> list[Found]:
    """Every target that accepts a connection and answers in a printer language, in the order given. ``named``: the
    hosts the user named, also asked TSPL and DYMO (never a host of a scanned network: ``~!T`` would print there)."""
    slots = asyncio.Semaphore(in_flight)
    results = await asyncio.gather(*(_probe(h, p, timeout, slots, (h, p) in named) for h, p in targets))
    return [r for r in results if r is not None]
