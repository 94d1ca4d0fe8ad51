"""/healthz and /metrics of real agents (simulated printers, a real redis-server), served with aiohttp."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
from aiohttp.test_utils import TestClient, TestServer
from redis.asyncio import Redis

from agent import __version__
from agent.http_app import make_app, stale_loops
from agent.liveness import Loop
from agent.runtime import Agent
from cli.redis_server import RedisServer, free_port
from drivers.sim import SimControl
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, running_agent, running_process, write_agent_config
from tests.support.metrics import Samples, samples
from tests.support.waiting import wait_until


async def scrape(client: TestClient) -> Samples:
    resp = await client.get("/metrics")
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=")
    return samples(await resp.text())


async def test_healthz_and_metrics_follow_the_printer(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    control = SimControl(tmp_path / "desk-1.control.json")
    control.set_fault(None, fail_attendees=["a1"])  # a1 jams at the feed: failed, and with 1 attempt, dead
    ids = await enqueue_many(store, 4)
    async with (
        running_agent(tmp_path, venue, redis_server.url, print_time=0.01, jobs__max_attempts=1) as agent,
        TestClient(TestServer(make_app(agent.snapshot, agent.metrics.text))) as client,
    ):
        await wait_until(lambda: agent.printed == 3)
        await wait_until(lambda: redis.llen(k.dlq))

        resp = await client.get("/healthz")
        body = await resp.json()
        assert resp.status == 200, body
        assert body["ok"] is True and body["reasons"] == [] and body["printer"] == "desk-1"
        assert body["health"]["printed"] == 3

        m = await scrape(client)
        assert m[("badge_jobs_printed_total", ())] == 3
        assert m[("badge_jobs_failed_total", (("outcome", "failed"),))] == 1
        assert m[("badge_jobs_released_total", (("outcome", "failed"), ("result", "dead")))] == 1
        assert m[("badge_print_duration_seconds_count", (("outcome", "printed"),))] == 3
        assert m[("badge_print_duration_seconds_count", (("outcome", "failed"),))] == 1
        assert m[("badge_device_state", (("state", "ready"),))] == 1
        assert m[("badge_device_state", (("state", "media_out"),))] == 0
        assert m[("badge_device_down", ())] == 0
        assert m[("badge_device_fault_age_seconds", ())] == 0
        assert m[("badge_agent_ready", ())] == 1
        assert m[("badge_agent_state", (("state", "ready"),))] == 1
        assert 0 <= m[("badge_heartbeat_age_seconds", ())] < agent.timing.dead_after
        assert m[("badge_redis_errors_total", ())] == 0
        assert m[("badge_loops_stalled", ())] == 0
        # The staff words of protocol/vocabulary.py, in the help of the counter staff act on.
        text = await (await client.get("/metrics")).text()
        help_line = next(line for line in text.splitlines() if line.startswith("# HELP badge_jobs_possible_duplicates"))
        assert "duplicate_print = printed twice" in help_line and "maybe_duplicate = may exist twice" in help_line
        labels = (("location", "desk of desk-1"), ("printer", "desk-1"), ("venue", venue), ("version", __version__))
        assert m[("badge_agent_info", labels)] == 1

        # Out of labels: three failed probes declare it down; /healthz says why, the metrics say what.
        control.set_fault("media_out")
        await wait_until(lambda: agent.device.down)
        resp = await client.get("/healthz")
        body = await resp.json()
        assert resp.status == 503
        assert "printer down: " in body["reason"] and "out of labels" in body["reason"]
        m = await scrape(client)
        assert m[("badge_device_down", ())] == 1
        assert m[("badge_device_state", (("state", "media_out"),))] == 1
        # Down takes failed probes in a row, so the fault is as old as they took at least.
        assert m[("badge_device_fault_age_seconds", ())] > 0
        assert m[("badge_agent_ready", ())] == 0
        assert m[("badge_agent_state", (("state", "device_down"),))] == 1

        control.set_fault(None)
        await wait_until(lambda: not agent.device.down and agent.device.ready.is_set())
        assert (await client.get("/healthz")).status == 200
    assert await redis.lrange(k.dlq, 0, -1) == [b"a1"]
    assert {i for i in ids if await redis.get(k.done(i)) == b"desk-1"} == {"a0", "a2", "a3"}


async def test_two_agents_in_one_process_each_serve_their_own_numbers(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Each agent has its own registry and its own port (the configured ``http.listen``, served by the agent)."""
    store = Store(redis, venue)
    ports = {"desk-1": free_port(), "desk-2": free_port()}
    ids = await enqueue_many(store, 10)
    async with (
        running_agent(
            tmp_path, venue, redis_server.url, "desk-1", print_time=0.02, http__listen=f"127.0.0.1:{ports['desk-1']}"
        ) as one,
        running_agent(
            tmp_path, venue, redis_server.url, "desk-2", print_time=0.02, http__listen=f"127.0.0.1:{ports['desk-2']}"
        ) as two,
        aiohttp.ClientSession() as http,
    ):
        await wait_until(lambda: one.printed + two.printed == len(ids))
        printed = {}
        for name, port in ports.items():
            async with http.get(f"http://127.0.0.1:{port}/metrics") as resp:
                m = samples(await resp.text())
            printed[name] = m[("badge_jobs_printed_total", ())]
            async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                assert resp.status == 200
                assert (await resp.json())["printer"] == name
    assert printed == {"desk-1": one.printed, "desk-2": two.printed}
    assert sum(printed.values()) == len(ids)


async def test_redis_down_makes_healthz_503_but_keeps_the_watchdog_fed(tmp_path: Path, venue: str) -> None:
    """Restarting the agent cannot bring Redis back: /healthz says why it cannot print, no loop counts as stalled."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        async with (
            running_agent(tmp_path, venue, server.url, print_time=0.01) as agent,
            TestClient(TestServer(make_app(agent.snapshot, agent.metrics.text))) as client,
        ):
            await wait_until(lambda: agent.snapshot().beating_since is not None)
            assert (await client.get("/healthz")).status == 200
            server.kill()
            await wait_until(lambda: agent.snapshot().beating_since is None and agent.snapshot().redis_errors > 0)
            await wait_until(lambda: not agent.lease_ok())
            resp = await client.get("/healthz")
            body = await resp.json()
            assert resp.status == 503
            assert "no heartbeat acknowledged by Redis for" in body["reason"]
            m = await scrape(client)
            assert m[("badge_redis_errors_total", ())] >= 1
            assert m[("badge_heartbeat_age_seconds", ())] > 0
            # Long enough for the pull loop to sit in wait_for_redis past its own budget.
            await asyncio.sleep(0.5)
            assert stale_loops(agent.snapshot()) == {}
            server.start()
            back = time.monotonic()
            # Beating again, and the pull loop has started an iteration since (it recovered first).
            await wait_until(lambda: agent.snapshot().lease_ok and agent.snapshot().loops[Loop.PULL] > back)
            await wait_until(_healthy(client))
            assert stale_loops(agent.snapshot()) == {}
    finally:
        server.stop()


def _healthy(client: TestClient):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return (await client.get("/healthz")).status == 200

    return check


async def test_a_port_in_use_leaves_the_agent_printing(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    port = free_port()
    blocker = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
    try:
        ids = await enqueue_many(store, 3)
        async with running_agent(
            tmp_path, venue, redis_server.url, print_time=0.01, http__listen=f"127.0.0.1:{port}"
        ) as agent:
            await wait_until(lambda: agent.printed == len(ids))
            assert isinstance(agent, Agent) and not agent.stopping.is_set()
    finally:
        blocker.close()
        await blocker.wait_closed()


async def test_a_port_in_use_is_named_with_its_setting_at_run(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # Several agents on one Pi each have an http.listen: "Address already in use" alone does not say whose.
    port = free_port()
    blocker = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
    config = write_agent_config(
        tmp_path / "desk-1.yaml", venue, redis_server.url, "desk-1", http__listen=f"127.0.0.1:{port}"
    )
    log = config.with_suffix(".log")
    said = f"cannot listen on 127.0.0.1:{port} (http.listen): another process already listens there"
    try:
        with running_process(config) as proc:
            await wait_until(lambda: log.is_file() and said in log.read_text(encoding="utf-8"), timeout=30)
            assert proc.poll() is None  # printing goes on
    finally:
        blocker.close()
        await blocker.wait_closed()
