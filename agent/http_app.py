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
from typing import TYPE_CHECKING, Any

from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from agent.liveness import LOOPS, problems, stale_loops

if TYPE_CHECKING:
    from agent.runtime import Agent

__all__ = ["LOOPS", "make_app", "problems", "serve_sockets", "stale_loops"]


def make_app(agent: Agent) -> web.Application:
    """The /healthz and /metrics app for one agent (tests serve it with aiohttp's TestServer)."""
    registry = agent.metrics.prometheus_registry()

    async def healthz(_request: web.Request) -> web.Response:
        snap = agent.snapshot()
        reasons = problems(snap, agent.loop_budgets)
        body: dict[str, Any] = {
            "ok": not reasons,
            "printer": snap.printer,
            "reason": "; ".join(reasons),
            "reasons": reasons,
            "health": snap.health(),
        }
        return web.json_response(body, status=503 if reasons else 200)

    async def metrics(_request: web.Request) -> web.Response:
        payload = generate_latest(registry)
        return web.Response(body=payload, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app


async def serve_sockets(agent: Agent, sockets: list[socket.socket]) -> None:
    """Serve ``make_app(agent)`` on sockets already bound and listening (``agent.http_port``) until cancelled."""
    runner = web.AppRunner(make_app(agent), access_log=None)
    await runner.setup()
    try:
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        await asyncio.Event().wait()  # until the agent cancels its tasks at shutdown
    finally:
        await runner.cleanup()
