"""The agent's own HTTP endpoints: ``/healthz`` (can this printer print now?) and ``/metrics`` (Prometheus text).

Imported at the first connection to the agent's port, not at start (``agent.http_port`` binds the port).

Served on loopback by default (``http.listen``): the fleet's picture lives in Redis and on the board; these are for
the Pi's own checks (a load balancer probe, node exporter's neighbour, a curl from an ssh session) and a scraper.
The same "can it print" rules feed systemd's watchdog (``agent.notify``), so /healthz and the watchdog never disagree
about a stalled loop.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

from aiohttp import web

from agent.liveness import LOOPS, problems, stale_loops
from protocol.state import Snapshot

__all__ = ["LOOPS", "make_app", "problems", "serve_sockets", "stale_loops"]


def make_app(snapshot: Callable[[], Snapshot], metrics_text: Callable[[], tuple[bytes, str]]) -> web.Application:
    """The /healthz and /metrics app for one agent (tests serve it with aiohttp's TestServer).

    ``snapshot``: the agent's state now; ``metrics_text``: its Prometheus text and Content-Type (agent/metrics.py).
    """

    async def healthz(_request: web.Request) -> web.Response:
        snap = snapshot()
        reasons = problems(snap)
        body: dict[str, Any] = {
            "ok": not reasons,
            "printer": snap.printer,
            "reason": "; ".join(reasons),
            "reasons": reasons,
            "health": snap.health(),
        }
        return web.json_response(body, status=503 if reasons else 200)

    async def metrics(_request: web.Request) -> web.Response:
        payload, content_type = metrics_text()
        return web.Response(body=payload, headers={"Content-Type": content_type})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app


async def serve_sockets(
    snapshot: Callable[[], Snapshot], metrics_text: Callable[[], tuple[bytes, str]], sockets: list[socket.socket]
) -> None:
    """Serve ``make_app`` on sockets already bound and listening (``agent.http_port``) until cancelled."""
    runner = web.AppRunner(make_app(snapshot, metrics_text), access_log=None)
    await runner.setup()
    try:
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        await asyncio.Event().wait()  # until the agent cancels its tasks at shutdown
    finally:
        await runner.cleanup()
