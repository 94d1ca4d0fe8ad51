"""Alerts against a real Redis and a real HTTP receiver on 127.0.0.1: a rehearsal venue of four printers with one out
of labels (one alert when it starts, one when it clears, none again after a sender restart), a flapping printer held
in one episode, the DLQ growing, a Redis failover, thresholds read and refused, and the events the printed record
gives (hand-over, pre-print) and the ntfy body."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from drivers.sim import SimControl
from protocol.codec import enc
from protocol.fleet import FleetView, PrinterView
from protocol.keys import Keys
from protocol.printed import PrintedRecord
from tests.support.agents import running_agent
from tests.support.processes import ROOT
from tests.support.waiting import wait_until
from tests.webhooks.receiver import Receiver
from webhooks.alerts import Alerts, AlertsConfig, redis_key
from webhooks.delivery import session
from webhooks.hooks import Hooks, Webhook
from webhooks.keys import CONSUMER
from webhooks.sender import Sender

FAST = AlertsConfig(out_of_labels=0.5, printer_down=0.5, fault=0.5, clear_after=0.5, interval=0.05)


def _alerts(receiver: Receiver) -> list[dict[str, Any]]:
    return [r.data for r in receiver.ok if r.data.get("event") == "alert"]


def _sender(redis: Redis, venue: str, config: AlertsConfig = FAST) -> Sender:
    return Sender(
        redis, venue, timeout=1.0, first_delay=0.05, max_delay=0.2, lease_ms=5000, alerts=Alerts(redis, venue, config)
    )


async def _rounds(sender: Sender, until: object, timeout: float = 30.0) -> None:
    async with session() as http:

        async def once() -> object:
            await sender.send_waiting(http)
            result = until()  # type: ignore[operator]
            return await result if hasattr(result, "__await__") else result

        await wait_until(once, timeout=timeout, every=0.02)


async def _more_evaluations(sender: Sender, n: int) -> None:
    """Run rounds until the sender evaluated its rules ``n`` more times (not a sleep: counted evaluations)."""
    seen = [sender._alerts_ms]
    count = [0]

    def counted() -> bool:
        if sender._alerts_ms != seen[0]:
            seen[0] = sender._alerts_ms
            count[0] += 1
        return count[0] >= n

    await _rounds(sender, counted)


async def test_rehearsal_venue_one_printer_out_of_labels_alerts_once_and_clears_once(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, receiver: Receiver
) -> None:
    await Hooks(redis, venue).add(Webhook("ops", receiver.url, ("alert",)))
    names = [f"desk-{i}" for i in range(1, 5)]
    async with AsyncExitStack() as stack:
        for name in names:
            await stack.enter_async_context(running_agent(tmp_path, venue, redis_server.url, name))
        k = Keys(venue)
        await wait_until(lambda: redis.zcard(k.hb), timeout=30)
        await wait_until(lambda: redis.hlen(k.printers), timeout=30)

        control = SimControl(tmp_path / "desk-3.control.json")
        control.set_fault("media_out")
        sender = _sender(redis, venue)
        await _rounds(sender, lambda: len(_alerts(receiver)) >= 1)
        first = _alerts(receiver)[0]
        assert first["alert"] == "out_of_labels" and first["status"] == "firing"
        assert first["printer"] == "desk-3" and first["subject"] == "desk-3"
        assert "out of labels" in first["summary"]

        # A sender restarted mid-episode (or a second one taking the lease over) sends nothing again.
        await sender.release()
        sender = _sender(redis, venue)
        await _more_evaluations(sender, 10)
        assert len(_alerts(receiver)) == 1

        control.set_fault(None)
        await _rounds(sender, lambda: len(_alerts(receiver)) >= 2)
        cleared = _alerts(receiver)[1]
        assert cleared["status"] == "resolved" and cleared["alert"] == "out_of_labels"
        assert cleared["since"] == first["since"] and cleared["id"] != first["id"]
        await _more_evaluations(sender, 10)
    assert [a["status"] for a in _alerts(receiver)] == ["firing", "resolved"]
    assert {a["subject"] for a in _alerts(receiver)} == {"desk-3"}


def _view(server_ms: int, state: str = "ready", device: str = "ready", dlq: int = 0) -> FleetView:
    printer = PrinterView(name="p1", state=state, location="Hall A", device=device)
    return FleetView("v", server_ms, 0, dlq, [printer], {})


async def test_a_flapping_printer_is_one_episode(redis: Redis, venue: str) -> None:
    config = AlertsConfig(printer_down=10, clear_after=30)
    alerts = Alerts(redis, venue, config)
    t = 1_000_000
    due: list[tuple[str, str]] = []

    async def at(seconds: float, state: str) -> None:
        for episode, what in await alerts.evaluate(_view(t + int(seconds * 1000), state=state)):
            due.append((episode.rule, what))
            async with redis.pipeline(transaction=True) as pipe:
                alerts.store(pipe, episode, what, t + int(seconds * 1000))
                await pipe.execute()

    # Down and back every few seconds: held back until it has been (mostly) down for 10 s, then one alert.
    for second in range(0, 60, 4):
        await at(second, "device_down")
        await at(second + 2, "ready")
    assert due == [("printer_down", "start")]
    # Back for good: cleared once, 30 s after it was last seen down.
    await at(80, "ready")
    await at(100, "ready")
    assert due == [("printer_down", "start"), ("printer_down", "clear")]
    # A blip shorter than the hold after that is told to nobody.
    await at(200, "gone")
    await at(205, "ready")
    await at(240, "ready")
    assert due == [("printer_down", "start"), ("printer_down", "clear")]
    assert not await redis.hlen(enc(Keys(venue).prefix + "alerts"))


async def test_the_dlq_growing_and_a_redis_failover_alert(redis: Redis, venue: str) -> None:
    alerts = Alerts(redis, venue, AlertsConfig(dlq_growth=3, dlq_window=60, redis_failover=120, clear_after=5))
    t = 2_000_000
    assert await alerts.evaluate(_view(t, dlq=10)) == []
    assert await alerts.evaluate(_view(t + 1000, dlq=12)) == []
    [(episode, what)] = await alerts.evaluate(_view(t + 2000, dlq=13))
    assert (episode.rule, what) == ("dlq_growing", "start") and "grew by 3" in episode.summary

    # Another server answers at the venue's address: the state replicated from the old one names its run_id.
    await redis.hset(enc(redis_key(venue)), mapping={"run_id": "0" * 40, "changed_ms": "0"})
    found = {c.rule for c in await alerts.conditions(_view(t + 3000, dlq=13))}
    assert found == {"dlq_growing", "redis_failover"}
    # The failover's alert holds for redis_failover seconds; the DLQ's until it stops growing for the window.
    assert {c.rule for c in await alerts.conditions(_view(t + 100_000, dlq=13))} == {"redis_failover"}
    assert await alerts.conditions(_view(t + 200_000, dlq=13)) == []


def test_a_threshold_of_zero_is_refused_by_name(tmp_path: Path, redis_server: RedisServer) -> None:
    path = tmp_path / "webhooks.yaml"
    path.write_text(f"venue: expo\nredis:\n  url: {redis_server.url}\nalerts:\n  out_of_labels: 0\n")
    result = subprocess.run(
        [sys.executable, "-m", "agent", "webhooks", "run", "-c", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert result.returncode == 78, result.stderr
    assert str(path) in result.stderr and "alerts.out_of_labels: must be more than 0 (got 0)" in result.stderr
    assert "Traceback" not in result.stderr


async def _entry(redis: Redis, venue: str, kind: str, job_id: str) -> None:
    """A printed-record entry written the way confirm.lua writes one (the kind aside)."""
    await redis.xadd(
        enc(Keys(venue).printed),
        {"kind": kind, "job_id": job_id, "epoch": "1", "printer": "desk-1", "location": "Desk 1"}
        | {"printed_ms": "1777000000000", "layout": "default", "layout_version": "1", "confirmed_by": "device"},
    )


async def test_hand_over_is_told_and_pre_prints_are_not(redis: Redis, venue: str, receiver: Receiver) -> None:
    await Hooks(redis, venue).add(Webhook("crm", receiver.url, ("printed", "handed_over")))
    await redis.hset(enc(Keys(venue).job("j1")), "payload", json.dumps({"attendee_id": "a1", "name": "Ada"}))
    for kind in ("preprint", "separator", "handed_over", "badge"):
        await _entry(redis, venue, kind, "j1")
    sender = _sender(redis, venue)
    await _rounds(sender, lambda: len(receiver.ok) >= 2)
    async with session() as http:
        for _ in range(3):
            await sender.send_waiting(http)
    got = [r.data for r in receiver.ok]
    assert [(d["event"], d["kind"], d["arrival"]) for d in got] == [
        ("handed_over", "handed_over", True),
        ("printed", "badge", True),
    ]
    assert got[0]["job"]["name"] == "Ada"
    assert await PrintedRecord(redis, venue).after(CONSUMER, 10) == []


async def test_ntfy_gets_a_plain_text_line(redis: Redis, venue: str, receiver: Receiver) -> None:
    await Hooks(redis, venue).add(Webhook("phone", receiver.url, ("handed_over",), format="ntfy"))
    await redis.hset(enc(Keys(venue).job("j2")), "payload", json.dumps({"attendee_id": "a2", "name": "Grace"}))
    await _entry(redis, venue, "handed_over", "j2")
    await _rounds(_sender(redis, venue), lambda: receiver.ok)
    [got] = receiver.ok
    assert got.body == b"Badge handed over: Grace at Desk 1"
    assert got.headers["Content-Type"].startswith("text/plain")
