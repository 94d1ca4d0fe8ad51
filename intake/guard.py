"""The intake's listening socket, with a deadline for every connection to send its request and a cap on connections.

aiohttp waits for a request's headers as long as the client likes: a thousand half-sent requests would hold a
thousand sockets until the process runs out of file descriptors and every new client is turned away. So here:

* a connection that is not inside a request must start one (send its complete headers) within ``header_timeout``
  seconds of connecting or of its last answer, or it is closed (one look a second);
* past ``max_connections``, a new connection closes the oldest one that is not inside a request (a half-sent request
  or an idle keep-alive), else the oldest one waiting for the body of a kiosk's (or any public caller's) request;
  only when every connection is inside a request and none waits for such a body is the new one answered 503 and
  closed.

Inside a request, the body has ``body_timeout`` (intake/context.py, ``json_body``) and bounds per token and address
(intake/slow_bodies.py), and long-polls and streams have their own limits (intake/budget.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger("badge_agent.intake")

#: Seconds a stopping intake (SIGTERM) waits for the requests still running before it cancels them: an answer
#: being written gets out, and a stop takes a few seconds, never the 60 aiohttp waits by default.
SHUTDOWN_TIMEOUT = 2.0
REFUSAL = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"


class Activity:
    """Which connections are inside a request now, and when each last finished one (the app's middleware says).

    Only connections the guard accepted (``opened``) are remembered past their request: an app served without a
    guard (the tests' server) keeps nothing.
    """

    def __init__(self) -> None:
        self.opened: dict[RequestHandler, float] = {}  # connection -> when it was accepted, oldest first
        self.inside: dict[RequestHandler, int] = {}
        self.finished: dict[RequestHandler, float] = {}
        #: Connections waiting for the body of a public caller's request (intake/slow_bodies.py), since when: the
        #: first to go when every connection is inside a request, so slow kiosks never keep a desk out.
        self.bodies: dict[RequestHandler, float] = {}

    def start(self, conn: object) -> None:
        if isinstance(conn, RequestHandler):
            self.inside[conn] = self.inside.get(conn, 0) + 1

    def end(self, conn: object) -> None:
        if isinstance(conn, RequestHandler):
            left = self.inside.get(conn, 1) - 1
            if left > 0:
                self.inside[conn] = left
            else:
                self.inside.pop(conn, None)
            if conn in self.opened:
                self.finished[conn] = time.monotonic()


class _Refuse(asyncio.Protocol):
    """Answers 503 and hangs up: the connection that arrived when every other one was inside a request."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.WriteTransport):
            transport.write(REFUSAL)
        transport.close()


class Guard:
    """The protocol factory for the listening socket, and the once-a-second sweep of slow connections."""

    def __init__(self, server: web.Server, activity: Activity, header_timeout: float, max_connections: int) -> None:
        self.server, self.activity = server, activity
        self.header_timeout, self.max_connections = header_timeout, max_connections
        self.opened = activity.opened
        self.closed_slow = 0
        self.closed_for_room = 0
        self.closed_slow_body = 0
        self.refused = 0

    def _idle_since(self, conn: RequestHandler) -> float:
        return max(self.opened[conn], self.activity.finished.get(conn, 0.0))

    def _forget(self, conn: RequestHandler) -> None:
        self.opened.pop(conn, None)
        self.activity.finished.pop(conn, None)
        self.activity.inside.pop(conn, None)
        self.activity.bodies.pop(conn, None)

    def _close(self, conn: RequestHandler) -> None:
        transport = conn.transport
        if transport is not None:
            transport.close()
        self._forget(conn)

    def factory(self) -> asyncio.BaseProtocol:
        now = time.monotonic()
        if len(self.opened) >= self.max_connections:
            self.sweep(now)
        if len(self.opened) >= self.max_connections:
            idle = [c for c in self.opened if c not in self.activity.inside]
            if idle:
                self._close(min(idle, key=self._idle_since))
                self.closed_for_room += 1
            elif waiting := [c for c in self.activity.bodies if c in self.opened]:
                bodies = self.activity.bodies
                self._close(min(waiting, key=lambda c: bodies[c]))
                self.closed_slow_body += 1
            else:
                self.refused += 1
                return _Refuse()
        conn = self.server()
        self.opened[conn] = now
        return conn

    def sweep(self, now: float) -> None:
        """Forget closed connections; close those that have sat outside a request longer than the header timeout."""
        for conn in list(self.opened):
            if conn.transport is None:
                if now - self.opened[conn] > 1.0:  # closed (or never made: a connection is made at once)
                    self._forget(conn)
            elif conn not in self.activity.inside and now - self._idle_since(conn) > self.header_timeout:
                self._close(conn)
                self.closed_slow += 1

    async def run(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.header_timeout / 2))
            self.sweep(time.monotonic())


@dataclass
class Serving:
    """A running intake: its runner, its listening socket and its guard; ``close()`` stops all three."""

    runner: web.AppRunner
    listener: asyncio.Server
    guard: Guard
    sweeper: asyncio.Task[None]

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.listener.sockets[0].getsockname()[:2]
        return host, port

    async def close(self) -> None:
        self.listener.close()
        self.sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.sweeper
        await self.runner.cleanup()


async def serve_app(
    app: web.Application, activity: Activity, host: str, port: int, *, header_timeout: float, max_connections: int
) -> Serving:
    """Serve ``app`` on host:port behind a ``Guard``."""
    # handler_cancellation: a long-poll whose client hung up is cancelled at once rather than when it next looks.
    # access_log=None: the app logs requests, never a header. lingering_time=0: a request answered without its body
    # (a refusal, a 408) closes its connection at once, rather than reading on for ten seconds a body nobody uses.
    # shutdown_timeout: at SIGTERM a request still running after this is cancelled (aiohttp waits 60 s by default;
    # the long-polls and streams end at once anyway, intake/app.py ``_stopping``).
    runner = web.AppRunner(
        app, access_log=None, handler_cancellation=True, lingering_time=0, shutdown_timeout=SHUTDOWN_TIMEOUT
    )
    await runner.setup()
    if runner.server is None:
        raise RuntimeError("aiohttp's runner has no server after setup")
    guard = Guard(runner.server, activity, header_timeout, max_connections)
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(guard.factory, host, port, reuse_address=True, backlog=1024)
    sweeper = asyncio.create_task(guard.run(), name="intake-connection-guard")
    return Serving(runner, listener, guard, sweeper)
