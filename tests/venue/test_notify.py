"""sd_notify and the watchdog, against a real datagram socket standing in for systemd's $NOTIFY_SOCKET."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from agent.http_app import problems, stale_loops
from agent.notify import Notifier
from cli.redis_server import RedisServer
from drivers.sim import SimControl
from tests.support.agents import running_agent
from tests.support.waiting import wait_until


class FakeSystemd:
    """Receives what the agent sends to $NOTIFY_SOCKET, as systemd would, with the time each datagram came."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.setblocking(False)
        self.received: list[tuple[float, dict[str, str]]] = []
        # Read as datagrams arrive, like systemd: a unix datagram queue holds only a few.
        asyncio.get_running_loop().add_reader(self.sock, self.poll)

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.sock)
        self.sock.close()

    def poll(self) -> list[dict[str, str]]:
        while True:
            try:
                data = self.sock.recv(4096)
            except BlockingIOError:
                break
            fields = dict(line.split("=", 1) for line in data.decode().splitlines())
            self.received.append((time.monotonic(), fields))
        return [f for _, f in self.received]

    def has(self, key: str, since: float = 0.0) -> bool:
        self.poll()
        return any(key in f and t >= since for t, f in self.received)


@pytest.fixture
async def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSystemd]:
    fake = FakeSystemd(tmp_path / "notify.sock")
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify.sock"))
    monkeypatch.setenv("WATCHDOG_USEC", "300000")  # 0.3 s: the agent pings every 0.1 s
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    yield fake
    fake.close()


async def test_ready_status_watchdog_and_stopping(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, systemd: FakeSystemd
) -> None:
    async with running_agent(tmp_path, venue, redis_server.url) as agent:
        await wait_until(lambda: systemd.has("READY"))
        ready_at = next(t for t, f in systemd.received if "READY" in f)
        assert agent.snapshot().beating_since is not None  # READY only after Redis acknowledged a heartbeat
        await wait_until(lambda: systemd.has("WATCHDOG", since=ready_at))
        await wait_until(lambda: any(f.get("STATUS", "").startswith("ready; printed 0") for f in systemd.poll()))

        # A hung driver: the probe never returns. Once the probe loop is over its budget, the watchdog goes hungry
        # (systemd would restart us) and /healthz says which loop stalled.
        control = SimControl(tmp_path / "desk-1.control.json")
        control.set_fault("hung")
        try:
            await wait_until(lambda: "probe" in stale_loops(agent.snapshot()))
            stalled_at = time.monotonic()
            await asyncio.sleep(0.6)  # two watchdog periods
            assert not systemd.has("WATCHDOG", since=stalled_at + 0.15)
            assert any("probe loop stalled" in p for p in problems(agent.snapshot()))
        finally:
            control.set_fault(None)
        fed_again = time.monotonic()
        await wait_until(lambda: systemd.has("WATCHDOG", since=fed_again))
        assert stale_loops(agent.snapshot()) == {}
        stop_asked = time.monotonic()
    assert systemd.has("STOPPING", since=stop_asked)


async def test_starting_before_redis_extends_the_start_timeout_but_is_not_ready(
    tmp_path: Path, venue: str, systemd: FakeSystemd
) -> None:
    server = RedisServer(tmp_path / "redis")  # not started: the Redis host boots after the Pis
    try:
        async with running_agent(tmp_path, venue, server.url) as agent:
            await wait_until(lambda: systemd.has("EXTEND_TIMEOUT_USEC"))
            assert not systemd.has("READY")
            assert "no heartbeat acknowledged by Redis yet" in problems(agent.snapshot())
            server.start()
            await wait_until(lambda: systemd.has("READY"))
    finally:
        server.stop()


def test_notifier_reads_systemds_environment() -> None:
    abstract = Notifier({"NOTIFY_SOCKET": "@badge/notify", "WATCHDOG_USEC": "20000000"})
    assert abstract.enabled and abstract.address == "\0badge/notify" and abstract.watchdog_sec == 20.0
    # A child that inherited the variables must not ping for its parent.
    child = Notifier({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "1"})
    assert child.watchdog_sec is None
    outside = Notifier({})
    assert not outside.enabled and outside.send(READY="1") is False


def test_abstract_socket_datagrams_arrive() -> None:
    name = f"badge-agent-test-{os.getpid()}"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind("\0" + name)
    try:
        notifier = Notifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.send(READY="1", STATUS="ready; printed 0")
        assert receiver.recv(4096) == b"READY=1\nSTATUS=ready; printed 0"
        notifier.close()
    finally:
        receiver.close()
