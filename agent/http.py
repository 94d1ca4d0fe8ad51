"""The agent's own HTTP endpoints: ``/healthz`` (can this printer print now?) and ``/metrics`` (Prometheus text).

Served on loopback by default (``http.listen``): the fleet's picture lives in Redis and on the board; these are for
the Pi's own checks (a load balancer probe, node exporter's neighbour, a curl from an ssh session) and a scraper.
The same "can it print" rules feed systemd's watchdog (``agent.notify``), so /healthz and the watchdog never disagree
about a stalled loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from agent.liveness import LOOPS, problems, stale_loops
from agent.logs import kv

if TYPE_CHECKING:
    from agent.runtime import Agent

log = logging.getLogger("agent.http")

__all__ = ["LOOPS", "make_app", "problems", "serve", "stale_loops"]


def make_app(agent: Agent) -> web.Application:
    """The /healthz and /metrics app for one agent (tests serve it with aiohttp's TestServer)."""
    registry = agent.metrics.prometheus_registry()

    async def healthz(_request: web.Request) -> web.Response:
        reasons = problems(agent)
        body: dict[str, Any] = {
            "ok": not reasons,
            "printer": agent.me,
            "reason": "; ".join(reasons),
            "reasons": reasons,
            "health": agent._health(),
        }
        return web.json_response(body, status=503 if reasons else 200)

    async def metrics(_request: web.Request) -> web.Response:
        payload = generate_latest(registry)
        return web.Response(body=payload, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app


def split_listen(listen: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9731`` for IPv6) as (host, port)."""
    host, _, port = listen.rpartition(":")
    return host.strip("[]"), int(port)


async def serve(agent: Agent, listen: str) -> None:
    """Serve ``make_app(agent)`` until cancelled (the agent cancels its tasks at shutdown).

    A port already taken is logged, not fatal: the printer keeps printing without its HTTP endpoints, which beats a
    service restart-looping at a venue over a metrics port.
    """
    host, port = split_listen(listen)
    runner = web.AppRunner(make_app(agent), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            log.error("cannot serve /healthz and /metrics; printing goes on without them", extra=kv(error=exc))
        else:
            log.info("http endpoints up", extra=kv(listen=listen))
        # Returning would count as this task ending (the agent stops when any of its tasks ends): wait to be cancelled.
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
