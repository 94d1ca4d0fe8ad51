"""The agent's HTTP port: bound at start, served by aiohttp from the first connection on.

aiohttp and prometheus_client are ~13 MB of a Pi's memory (bench/footprint.py). Most venues never scrape an agent, and a
health probe comes now and then, so the port is bound (and a port already taken is reported) when the agent starts, but
the two libraries are imported only when the first client connects: in a worker thread, so the printing loop does
not stall on the import, while that client waits in the socket's accept backlog. From then on aiohttp serves the
same sockets (``agent.http_app``). The cost: the first request after start-up takes the import's time (~0.3 s on a
laptop, about a second on a Pi 3).
"""

from __future__ import annotations

import asyncio
import errno
import importlib
import logging
import socket
from collections.abc import Callable

from core.logs import kv
from core.settings import split_host_port
from protocol.state import Snapshot

log = logging.getLogger("agent.http_app")


def bind(listen: str) -> list[socket.socket]:
    """Listening sockets for ``host:port``: one per address the host name resolves to (``localhost``: v4 and v6)."""
    host, port = split_host_port(listen)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        ):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart must not wait out TIME_WAIT
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # its v4 twin is bound on its own
            sock.bind(address)
            sock.listen(128)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def bind_problem(listen: str, exc: OSError) -> str:
    """What is wrong with ``http.listen``, for a person: the address, the setting, and what to do about it.

    The OS says only "Address already in use"; an installer with several agents on one Pi needs to know which
    address and which setting that was.
    """
    if exc.errno == errno.EADDRINUSE:
        why = "another process already listens there"
    elif exc.errno == errno.EADDRNOTAVAIL:
        why = "this machine has no such address; give http.listen one of its own (127.0.0.1:PORT, 0.0.0.0:PORT)"
    elif exc.errno == errno.EACCES:
        why = "a port below 1024 needs root; give http.listen a port from 1024 up"
    else:
        why = exc.strerror or str(exc)
    return f"cannot listen on {listen} (http.listen): {why}"


async def _first_connection(sockets: list[socket.socket]) -> None:
    """Return once a client is waiting to be accepted on any of ``sockets`` (it is left in the backlog)."""
    loop = asyncio.get_running_loop()
    waiting = loop.create_future()

    def readable() -> None:
        if not waiting.done():
            waiting.set_result(None)

    for sock in sockets:
        loop.add_reader(sock.fileno(), readable)
    try:
        await waiting
    finally:
        for sock in sockets:
            loop.remove_reader(sock.fileno())


async def serve(snapshot: Callable[[], Snapshot], metrics_text: Callable[[], tuple[bytes, str]], listen: str) -> None:
    """Serve /healthz and /metrics on ``listen`` until cancelled (the agent cancels its tasks at shutdown).

    A port already taken is logged, not fatal: the printer keeps printing without its HTTP endpoints, which beats a
    service restart-looping at a venue over a metrics port.
    """
    try:
        sockets = bind(listen)
    except OSError as exc:
        log.error(
            f"{bind_problem(listen, exc)}; /healthz and /metrics are off, printing goes on without them (set "
            "http.listen to a free port, or off, and restart the agent)",
            extra=kv(listen=listen, error=exc.strerror or str(exc)),
        )
        # Returning would count as this task ending (the agent stops when any of its tasks ends): wait to be cancelled.
        await asyncio.Event().wait()
        return
    try:
        log.info("http endpoints up", extra=kv(listen=listen))
        await _first_connection(sockets)
        http = await asyncio.to_thread(importlib.import_module, "agent.http_app")
        await http.serve_sockets(snapshot, metrics_text, sockets)
    finally:
        for sock in sockets:
            sock.close()
