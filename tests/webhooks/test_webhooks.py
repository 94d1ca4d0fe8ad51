"""Webhooks against a real HTTP receiver on 127.0.0.1 and a real Redis: a confirmed print delivered once and signed,
a receiver down, failing, hanging, redirecting or answering 100 MB, filters, a sender killed mid-delivery, the lease,
the least-privilege user, and the commands."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import print_it
from tests.support.processes import ROOT, cli, create_user
from tests.support.waiting import wait_until
from tests.webhooks.receiver import Receiver
from webhooks.alerts import Alerts, AlertsConfig
from webhooks.delivery import session
from webhooks.hooks import Hooks, Webhook
from webhooks.keys import WebhookKeys
from webhooks.sender import Sender, webhooks_status

SECRET = b"s3cret-for-tests"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "hook.secret"
    path.write_bytes(SECRET + b"\n")
    return path


async def _add(redis: Redis, venue: str, name: str, url: str, secret: Path | None, **kw: object) -> Webhook:
    hook = Webhook(name=name, url=url, events=("printed", "failed"), secret_file=str(secret or ""), **kw)  # type: ignore[arg-type]
    await Hooks(redis, venue).add(hook)
    return hook


async def _print(store: Store, attendee: str, **fields: str) -> str:
    job = parse_job({"attendee_id": attendee, "name": f"Name {attendee}", "fields": fields})
    added, _ = await store.enqueue(job.job_id, job.payload(), None)
    assert added
    await print_it(store, "p1", job.job_id)
    return job.job_id


def _fast(redis: Redis, venue: str, lines: list[str] | None = None, **kw: object) -> Sender:
    options: dict[str, object] = {"timeout": 1.0, "first_delay": 0.05, "max_delay": 0.2, "lease_ms": 5000} | kw
    return Sender(redis, venue, report=(lines.append if lines is not None else None), **options)  # type: ignore[arg-type]


async def _rounds_until(sender: Sender, check: object, timeout: float = 15.0) -> None:
    async with session() as http:

        async def once() -> object:
            await sender.send_waiting(http)
            result = check()  # type: ignore[operator]
            return await result if asyncio.iscoroutine(result) else result

        await wait_until(once, timeout=timeout, every=0.02)


async def _pending(redis: Redis, venue: str, name: str) -> int:
    return int(await redis.zcard(WebhookKeys(venue).queue(name)))


async def _none_pending(redis: Redis, venue: str, name: str) -> bool:
    return await _pending(redis, venue, name) == 0


async def test_a_confirmed_print_is_delivered_once_signed_within_2_s(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    sender = _fast(redis, venue)
    stop = asyncio.Event()
    task = asyncio.create_task(sender.run(stop))
    try:
        job_id = await _print(store, "a1")
        await asyncio.wait_for(receiver.arrived.wait(), timeout=2.0)
        await wait_until(lambda: _none_pending(redis, venue, "crm"), timeout=2.0)
    finally:
        stop.set()
        await task
    (got,) = receiver.got
    assert got.signed_with(SECRET) and not got.signed_with(b"another secret")
    data = got.data
    assert data["event"] == "printed" and data["job_id"] == job_id and data["reprint"] is False
    assert data["id"] == got.delivery and data["printer"] == "p1" and data["job"]["name"] == "Name a1"
    assert data["time"].endswith("Z") and got.headers["Content-Type"] == "application/json"
    async with session() as http:  # another round sends nothing again
        await sender.send_waiting(http)
    assert len(receiver.got) == 1
    assert await redis.xlen(Keys(venue).printed) == 0  # the record's entry was taken and trimmed


async def test_a_reprint_fires_printed_with_reprint_true_and_a_dead_letter_fires_failed(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    job_id = await _print(store, "a1")
    assert (await store.reprint(job_id, "coffee", "staff", 2, False)).kind == "reprint"
    await print_it(store, "p1", job_id)
    dead = parse_job({"attendee_id": "d1", "name": "Dead One"})
    await store.enqueue(dead.job_id, dead.payload(), None)
    assert await store.take("p1") == ("pool", dead.job_id)
    await store.dead_letter("p1", dead.job_id, "cannot render")
    sender = _fast(redis, venue)
    await _rounds_until(sender, lambda: len(receiver.ok) == 3)
    first, again, failed = (r.data for r in receiver.ok)
    assert (first["event"], first["reprint"], again["event"], again["reprint"]) == ("printed", False, "printed", True)
    assert first["id"] != again["id"]
    assert failed["event"] == "failed" and failed["job_id"] == dead.job_id and failed["reason"] == "cannot render"
    assert failed["job"]["name"] == "Dead One"


async def test_receiver_down_then_up_every_event_delivered_none_lost_same_ids_on_retries(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    await receiver.stop()  # down: nothing listens
    jobs = [await _print(store, f"a{i}") for i in range(3)]
    lines: list[str] = []
    sender = _fast(redis, venue, lines)
    await _rounds_until(sender, lambda: any("not reached" in line for line in lines))
    assert await _pending(redis, venue, "crm") == 3
    status = await webhooks_status(redis, venue)
    assert status is not None and status["waiting"] == 3 and status["hooks"] == {"crm": 3}
    await receiver.start()
    receiver.mode = "500"  # up, failing: each try is the same delivery with the same id
    await _rounds_until(sender, lambda: len(receiver.got) >= 3)
    receiver.mode = "ok"
    await _rounds_until(sender, lambda: len(receiver.ok) == 3)
    assert [r.data["job_id"] for r in receiver.ok] == jobs  # in order, none lost
    failing = {r.delivery for r in receiver.got if r not in receiver.ok}
    assert failing <= {r.delivery for r in receiver.ok}  # a retry carries the id its failed try had
    assert all(r.data["id"] == r.delivery for r in receiver.got)
    assert any("HTTP 500: boom" in line for line in lines) and any("delivered again" in line for line in lines)
    assert await _pending(redis, venue, "crm") == 0


async def test_a_hanging_receiver_is_given_up_on_per_try_and_delivered_later(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    await _print(store, "a1")
    receiver.mode = "hang"
    lines: list[str] = []
    sender = _fast(redis, venue, lines, timeout=0.5)
    await _rounds_until(sender, lambda: any("no answer within 0.5 s" in line for line in lines))
    assert await _pending(redis, venue, "crm") == 1
    receiver.mode = "ok"
    await _rounds_until(sender, lambda: len(receiver.ok) == 1)
    assert len({r.delivery for r in receiver.got}) == 1


async def test_a_redirect_is_not_followed_and_the_delivery_kept(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    await _print(store, "a1")
    receiver.mode = "redirect"
    lines: list[str] = []
    sender = _fast(redis, venue, lines)
    await _rounds_until(sender, lambda: any("redirect to" in line and "not followed" in line for line in lines))
    assert receiver.redirected_to == 0 and await _pending(redis, venue, "crm") == 1
    receiver.mode = "ok"
    await _rounds_until(sender, lambda: len(receiver.ok) == 1)


async def test_a_100_mb_answer_is_read_no_further_than_the_cap(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    await _print(store, "a1")
    receiver.mode = "huge"
    sender = _fast(redis, venue)
    await _rounds_until(sender, lambda: len(receiver.ok) == 1)
    await _rounds_until(sender, lambda: _none_pending(redis, venue, "crm"))
    await wait_until(lambda: receiver.huge_bytes_sent < 100 * 1024 * 1024, timeout=5)
    assert receiver.huge_bytes_sent < 50 * 1024 * 1024  # the sender hung up long before the end


async def test_when_filters_on_the_jobs_fields(redis: Redis, venue: str, receiver: Receiver, secret_file: Path) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "speakers", receiver.url, secret_file, when=(("ticket_type", "Speaker"),))
    await _print(store, "a1", ticket_type="Attendee")
    speaker = await _print(store, "a2", ticket_type="Speaker")
    await _print(store, "a3")
    sender = _fast(redis, venue)
    await _rounds_until(sender, lambda: len(receiver.ok) == 1)
    async with session() as http:
        await sender.send_waiting(http)
    assert [r.data["job_id"] for r in receiver.got] == [speaker]
    assert await redis.xlen(Keys(venue).printed) == 0  # the others were taken too, not sent


async def test_when_filters_on_the_deliverys_own_fields_a_speaker_room_gets_arrivals_only(
    redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    when = (("ticket_type", "Speaker"), ("arrival", "true"))
    await _add(redis, venue, "speakers", receiver.url, secret_file, when=when)
    reprints = Receiver()
    await reprints.start()
    try:
        await _add(redis, venue, "reprints", reprints.url, None, when=(("kind", "reprint"),))
        speaker = await _print(store, "a1", ticket_type="Speaker")
        assert (await store.reprint(speaker, "coffee", "staff", 2, False)).kind == "reprint"
        await print_it(store, "p1", speaker)
        other = await _print(store, "a2", ticket_type="Attendee")
        sender = _fast(redis, venue)
        await _rounds_until(sender, lambda: len(receiver.ok) == 1 and len(reprints.ok) == 1)
        async with session() as http:
            await sender.send_waiting(http)
    finally:
        await reprints.stop()
    (arrived,) = receiver.got  # the speaker's arrival, not their reprint, not another's badge
    assert arrived.data["job_id"] == speaker and arrived.data["arrival"] is True and arrived.data["reprint"] is False
    (again,) = reprints.got
    assert again.data["job_id"] == speaker and again.data["reprint"] is True
    assert other not in {r.data["job_id"] for r in receiver.got + reprints.got}


async def test_text_format_sends_a_chat_line(redis: Redis, venue: str, receiver: Receiver) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "chat", receiver.url, None, format="text")
    await _print(store, "a1")
    await _rounds_until(_fast(redis, venue), lambda: len(receiver.ok) == 1)
    (got,) = receiver.ok
    assert got.data["text"] == "Badge printed: Name a1 at p1 desk" and "Badge-Signature" not in got.headers


async def test_two_senders_one_delivers(redis: Redis, venue: str, receiver: Receiver, secret_file: Path) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    one, two = _fast(redis, venue, me="one"), _fast(redis, venue, me="two")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(s.run(stop, poll=0.02)) for s in (one, two)]
    try:
        jobs = [await _print(store, f"a{i}") for i in range(5)]
        await wait_until(lambda: len(receiver.ok) >= 5, timeout=10)
        holder = await redis.get(WebhookKeys(venue).sender)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert sorted(r.data["job_id"] for r in receiver.got) == sorted(jobs)  # each once: one sender sent them
    assert holder in (b"one", b"two")


def _config(tmp_path: Path, server: RedisServer, venue: str) -> Path:
    path = tmp_path / "webhooks.yaml"
    path.write_text(f"venue: {venue}\nredis:\n  url: {server.url}\n")
    return path


async def test_a_sender_killed_mid_delivery_is_restarted_and_delivers_with_one_id(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    job_id = await _print(store, "a1")
    receiver.mode = "hang"
    config = _config(tmp_path, redis_server, venue)
    command = [sys.executable, "-m", "agent", "webhooks", "run", "-c", str(config), "--lease", "2"]
    first = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        await asyncio.wait_for(receiver.arrived.wait(), timeout=20)
        first.send_signal(signal.SIGKILL)  # mid-delivery: the receiver holds the request
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert await _pending(redis, venue, "crm") == 1
    receiver.mode = "ok"
    second = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        await wait_until(lambda: len(receiver.ok) == 1 or second.poll() is not None, timeout=30)
        assert second.poll() is None, second.communicate()
        await wait_until(lambda: _none_pending(redis, venue, "crm"), timeout=10)
    finally:
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=20)
    assert second.returncode == 0, err
    assert len({r.delivery for r in receiver.got}) == 1  # the killed try's id is the delivered one's
    assert receiver.ok[0].data["job_id"] == job_id and len(receiver.got) >= 2  # at least once
    assert await redis.get(WebhookKeys(venue).sender) is None  # a clean stop gave the lease up


async def test_the_webhooks_user_runs_the_sender_and_nothing_more(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str, receiver: Receiver, secret_file: Path
) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await store.beat("p2", {"state": "device_down", "device": "media_out"}, 60_000, first=True)
    await _add(redis, venue, "crm", receiver.url, secret_file)
    await Hooks(redis, venue).add(Webhook("ops", receiver.url, ("alert",)))
    password = tmp_path / "webhooks.pw"
    user = await create_user(redis, venue, password, role="webhooks")
    as_sender = Redis(port=redis_server.port, username=user, password=password.read_text().strip())
    try:
        await _print(store, "a1")
        # Its alerts too: the rules read the venue and INFO, and write their episodes with the deliveries.
        alerts = Alerts(as_sender, venue, AlertsConfig(out_of_labels=0.01, interval=0.01))
        sender = _fast(as_sender, venue, alerts=alerts)
        await _rounds_until(sender, lambda: len(receiver.ok) == 2)
        assert sorted(r.data["event"] for r in receiver.ok) == ["alert", "printed"]
        assert await webhooks_status(as_sender, venue) is not None
        from redis.exceptions import NoPermissionError

        with pytest.raises(NoPermissionError):  # the webhooks are an admin's: the sender cannot add a URL
            await Hooks(as_sender, venue).add(Webhook("evil", "http://127.0.0.1:1/", ("printed",)))
    finally:
        await as_sender.aclose()
        await redis.execute_command("ACL", "DELUSER", user)


def test_commands_add_list_test_rm(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    async def main() -> None:
        r = Receiver()
        await r.start()
        try:
            secret = tmp_path / "new.secret"
            added = await asyncio.to_thread(
                cli, redis_server, venue, "webhooks", "add", "crm", r.url, "--events", "printed,failed",
                "--when", "ticket_type=Speaker", "--secret-file", str(secret),
            )  # fmt: skip
            assert added.returncode == 0, added.stderr
            assert secret.stat().st_mode & 0o777 == 0o600 and len(secret.read_text().strip()) >= 32
            listed = await asyncio.to_thread(cli, redis_server, venue, "webhooks", "list", "--json")
            (hook,) = json.loads(listed.stdout)["webhooks"]
            assert hook["events"] == ["printed", "failed"] and hook["when"] == {"ticket_type": "Speaker"}
            assert secret.read_text().strip() not in listed.stdout
            tested = await asyncio.to_thread(cli, redis_server, venue, "webhooks", "test", "crm")
            assert tested.returncode == 0 and "HTTP 200" in tested.stdout, tested.stderr
            (got,) = r.got
            assert got.data["event"] == "test" and got.signed_with(secret.read_text().strip().encode())
            r.mode = "500"
            failing = await asyncio.to_thread(cli, redis_server, venue, "webhooks", "test", "crm")
            assert failing.returncode == 69 and "HTTP 500" in failing.stdout
            status = await asyncio.to_thread(cli, redis_server, venue, "status")
            assert "webhooks: 0 delivery(ies) wait" in status.stdout, status.stdout
            removed = await asyncio.to_thread(cli, redis_server, venue, "webhooks", "rm", "crm")
            assert removed.returncode == 0
            again = await asyncio.to_thread(cli, redis_server, venue, "webhooks", "rm", "crm")
            assert again.returncode == 2 and "no webhook 'crm'" in again.stderr
        finally:
            await r.stop()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["https://user:hunter2@example.org/hook", "--events", "printed"], "a user or password in the URL is refused"),
        (["ftp://example.org/hook", "--events", "printed"], "must start with https://"),
        (["https://example.org/hook", "--events", "printed,teleported"], "teleported: choose from"),
        (["https://example.org/hook", "--events", "printed", "--when", "nofield"], "FIELD=VALUE"),
        (["https://example.org/hook", "--events", "printed", "--when", "Ticket-Type=x"], "unknown field 'Ticket-Type'"),
        (["https://example.org/hook", "--events", "printed", "--when", "fields.ticket_type=x"], "unknown field"),
        (["https://example.org/hook", "--events", "printed", "--when", "arrival=yes"], "arrival is true or false"),
        (["https://example.org/hook", "--events", "printed", "--when", "kind=preprint"], "kind is badge or"),
        (["https://example.org/hook", "--events", "printed,alert", "--when", "reprint=false"], "alert events have no"),
    ],
)
def test_add_refuses_bad_input_in_one_line(
    redis_server: RedisServer, venue: str, args: list[str], message: str
) -> None:
    result = cli(redis_server, venue, "webhooks", "add", "crm", *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert "hunter2" not in result.stderr + result.stdout


def test_run_names_a_bad_config(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("venue: Not_A_Venue\nredis:\n  url: nope\n")
    result = subprocess.run(
        [sys.executable, "-m", "agent", "webhooks", "run", "-c", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert result.returncode == 78 and "venue:" in result.stderr and "Traceback" not in result.stderr
