"""A real HTTP receiver of webhooks on 127.0.0.1 (aiohttp), told how to answer: ok, 500, hang, redirect, huge."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from cli.redis_server import free_port


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def data(self) -> dict[str, Any]:
        value = json.loads(self.body)
        assert isinstance(value, dict)
        return value

    @property
    def delivery(self) -> str:
        return self.headers["Badge-Delivery"]

    def signed_with(self, secret: bytes) -> bool:
        parts = dict(p.split("=", 1) for p in self.headers["Badge-Signature"].split(","))
        mac = hmac.new(secret, parts["t"].encode() + b"." + self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(mac, parts["v1"])


@dataclass
class Receiver:
    #: how the next requests are answered: "ok", "500", "hang", "redirect", "huge"
    mode: str = "ok"
    port: int = field(default_factory=free_port)
    got: list[Received] = field(default_factory=list)
    #: requests answered with a 2xx
    ok: list[Received] = field(default_factory=list)
    redirected_to: int = 0
    huge_bytes_sent: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self._hook)
        app.router.add_post("/elsewhere", self._elsewhere)
        app.router.add_get("/elsewhere", self._elsewhere)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _elsewhere(self, request: web.Request) -> web.Response:
        self.redirected_to += 1
        return web.Response(text="followed")

    async def _hook(self, request: web.Request) -> web.StreamResponse:
        received = Received(dict(request.headers), await request.read())
        self.got.append(received)
        self.arrived.set()
        if self.mode == "500":
            return web.Response(status=500, text="boom")
        if self.mode == "hang":
            await asyncio.sleep(3600)
        if self.mode == "redirect":
            raise web.HTTPFound(f"http://127.0.0.1:{self.port}/elsewhere")
        if self.mode == "huge":
            self.ok.append(received)
            response = web.StreamResponse(status=200)
            response.content_length = 100 * 1024 * 1024
            await response.prepare(request)
            chunk = b"x" * (1024 * 1024)
            try:
                for _ in range(100):
                    await response.write(chunk)
                    self.huge_bytes_sent += len(chunk)
            except (ConnectionError, asyncio.CancelledError):
                pass
            return response
        self.ok.append(received)
        return web.Response(text="ok")
