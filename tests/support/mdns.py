"""mDNS announcements as a network printer's firmware makes them, for the tests on a venue network of their own
(tests/support/netns.py): in-process (:func:`service_info`, :func:`responder`) or as a process of its own::

    python -m tests.support.mdns SERVICE NAME ADDRESS PORT   # e.g. _pdl-datastream._tcp "Zebra ZT230" 10.99.0.33 9300

which prints "announced" once the service is registered and answers queries until it is killed.
"""

from __future__ import annotations

import asyncio
import socket
import sys

from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

#: A responder multicasts a record at most once a second (RFC 6762, section 14): a question asked within a second of
#: its last answer is answered a second later, past detect's one-second window. Browses in a row wait this long.
RESPONDER_PAUSE = 1.0


def service_info(service: str, name: str, address: str, port: int) -> AsyncServiceInfo:
    """``name`` offering ``service`` (e.g. ``_ipp._tcp``) at address:port."""
    return AsyncServiceInfo(
        f"{service}.local.",
        f"{name}.{service}.local.",
        addresses=[socket.inet_aton(address)],
        port=port,
        server=f"{name.replace(' ', '-').lower()}.local.",
    )


def responder() -> AsyncZeroconf:
    """A zeroconf responder on every interface, as a printer (or any other device) runs one."""
    return AsyncZeroconf(ip_version=IPVersion.V4Only)


async def announce(zc: AsyncZeroconf, *infos: AsyncServiceInfo) -> None:
    """Register ``infos`` and return once their announcements are sent and answered questions are no longer held
    back (as for a printer that announced itself before detect ran)."""
    for info in infos:
        await (await zc.async_register_service(info))
    await asyncio.sleep(RESPONDER_PAUSE)


async def _announce(service: str, name: str, address: str, port: int) -> None:
    zc = responder()
    await announce(zc, service_info(service, name, address, port))
    print("announced", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await zc.async_close()


if __name__ == "__main__":
    service, name, address, port = sys.argv[1:]
    asyncio.run(_announce(service, name, address, int(port)))
