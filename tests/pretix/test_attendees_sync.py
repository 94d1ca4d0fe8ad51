"""``attendees sync`` on the real pretix into the venue's list on a real redis-server: the first sync, a name
change, a new order, a cancelled order refused at the kiosk, nameless tickets sent to the help desk, a desk's
correction kept and shown beside pretix's, exit 78 / 69."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.listing import NO_NAME, ListWriter
from protocol.keys import Keys
from tests.pretix.server import free_loopback_port
from tests.support.intake import Desk
from tests.support.pretix_server import Pretix
from tests.support.processes import badge_agent


class Synced:
    """One venue's list kept in step with the session's pretix, read by read."""

    def __init__(self, changes: ListChanges, writer: ListWriter, store: AttendeeStore, said: list[str]) -> None:
        self.changes, self.writer, self.store, self.said = changes, writer, store, said

    async def read(self) -> None:
        batch = await self.changes.read()
        await self.writer.write(batch.records)


@pytest.fixture
async def synced(pretix: Pretix, redis: Redis, venue: str) -> AsyncIterator[Synced]:
    said: list[str] = []
    store = AttendeeStore(redis, venue)
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        s = Synced(ListChanges(client, pretix.entrance), ListWriter(store, said.append), store, said)
        await s.read()
        yield s


def sync_args(pretix: Pretix, token_file: Path, redis_url: str, venue: str, url: str | None = None) -> list[str]:
    return [
        "attendees", "sync", "--redis", redis_url, "--venue", venue, "--pretix", url or pretix.url,
        "--event", f"{pretix.organizer}/{pretix.event}", "--token-file", str(token_file),
        "--checkin-list", str(pretix.entrance),
    ]  # fmt: skip


def test_the_command_loads_the_list_and_exits_78_or_69(
    pretix: Pretix, token_file: Path, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    done = badge_agent(*sync_args(pretix, token_file, redis_server.url, venue))
    assert done.returncode == 0, done.stderr
    added = re.search(r"list: added (\d+),", done.stderr)
    assert "pretix first read:" in done.stderr and added is not None and int(added.group(1)) >= 6
    assert pretix.token not in done.stderr + done.stdout
    shown = badge_agent("attendees", "show", pretix.position("山田 太郎")["secret"], "--json",
                        "--redis", redis_server.url, "--venue", venue)  # fmt: skip
    row = json.loads(shown.stdout)
    seeded = pretix.position("山田 太郎")
    assert (row["name"], row["company"]) == ("山田 太郎", "株式会社テスト")
    assert (row["source"], row["status"]) == ("pretix", "valid")
    assert row["job_id"] == f"{seeded['order']}-{seeded['id']}" and row["ticket_type"] == "Regular"
    again = badge_agent(*sync_args(pretix, token_file, redis_server.url, venue))
    assert f"list: added 0, updated 0, unchanged {added.group(1)}," in again.stderr

    open_file = tmp_path / "open.token"
    open_file.write_text(pretix.token, encoding="utf-8")
    open_file.chmod(0o644)
    bad = badge_agent(*sync_args(pretix, open_file, redis_server.url, venue))
    assert bad.returncode == 78 and "chmod 600" in bad.stderr and pretix.token not in bad.stderr
    nobody = f"http://127.0.0.1:{free_loopback_port()}"
    away = badge_agent(*sync_args(pretix, token_file, redis_server.url, venue, url=nobody))
    assert away.returncode == 69 and "cannot be reached" in away.stderr


async def test_nameless_tickets_go_to_the_help_desk_never_an_empty_badge(
    synced: Synced, pretix: Pretix, desk: Desk
) -> None:
    nameless = pretix.position(index=5)["secret"]
    attendee = await synced.store.get(nameless)
    assert attendee is not None and attendee.name == "" and attendee.attention == NO_NAME
    refused = await desk.client.post(f"/v1/attendees/{nameless}/badge", headers=desk.auth("kiosk"))
    assert refused.status == 409 and (await refused.json())["needs_attention"] is True
    looked = await (await desk.client.get(f"/v1/attendees/{nameless}", headers=desk.auth("desk"))).json()
    assert looked["attention"] == NO_NAME  # the desk sees why
    at_desk = await desk.client.post(f"/v1/attendees/{nameless}/badge", headers=desk.auth("desk"))
    assert at_desk.status == 422  # a desk must give it a name first; nothing was queued
    assert await synced.store.redis.llen(Keys(synced.store.keys.venue).pool) == 0
    fixed = await desk.client.patch(f"/v1/attendees/{nameless}", json={"name": "Kim Named"}, headers=desk.auth("staff"))
    assert fixed.status == 200
    printed = await desk.client.post(f"/v1/attendees/{nameless}/badge", headers=desk.auth("desk"))
    assert printed.status == 201 and (await printed.json())["name"] == "Kim Named"
    invoice = await synced.store.get(pretix.position(index=4)["secret"])
    assert invoice is not None and invoice.name == "Invoice Person" and invoice.attention == ""


async def test_a_name_changed_in_pretix_reaches_the_list_and_a_waiting_badge(
    synced: Synced, pretix: Pretix, desk: Desk
) -> None:
    placed = pretix.data("order", "Before Rename")
    await synced.read()
    new = await synced.store.get(placed["secret"])
    assert new is not None and new.name == "Before Rename" and new.source == "pretix"
    queued = await desk.client.post(f"/v1/attendees/{placed['secret']}/badge", headers=desk.auth("kiosk"))
    assert queued.status == 201
    pretix.data("rename", str(placed["id"]), "After Rename")
    await synced.read()
    renamed = await synced.store.get(placed["secret"])
    assert renamed is not None and renamed.name == "After Rename"
    job = await synced.store.redis.hget(Keys(synced.store.keys.venue).job(renamed.job_id), "payload")
    assert job is not None and json.loads(job)["name"] == "After Rename"  # the waiting badge prints the new name


async def test_an_e_mail_that_is_not_an_address_is_left_out_with_a_warning_naming_the_position(
    synced: Synced, pretix: Pretix
) -> None:
    """As ``attendees import`` does: the ticket loads (it still prints) without the e-mail, and the sync says which
    position, never what the e-mail was."""
    bad, good = pretix.data("order", "Mail Wrong"), pretix.data("order", "Mail Right")
    pretix.data("set_email", str(bad["id"]), "n/a (ask at desk)")
    pretix.data("set_email", str(good["id"]), "mail.right@example.org")
    synced.said.clear()
    await synced.read()
    wrong, right = await synced.store.get(bad["secret"]), await synced.store.get(good["secret"])
    assert wrong is not None and wrong.name == "Mail Wrong" and wrong.email == "" and wrong.status == "valid"
    assert right is not None and right.email == "mail.right@example.org"
    warned = [line for line in synced.said if "not an e-mail address" in line]
    assert warned == [
        f"{bad['order']}-{bad['id']} (pretix position {bad['id']}): its attendee e-mail is not an e-mail address;"
        " loaded without it"
    ], synced.said
    assert not any("n/a" in line or "ask at desk" in line for line in synced.said)


async def test_a_correction_at_the_desk_wins_and_both_are_shown(synced: Synced, pretix: Pretix, desk: Desk) -> None:
    placed = pretix.data("order", "Jon Smyth")
    await synced.read()
    patched = await desk.client.patch(
        f"/v1/attendees/{placed['secret']}", json={"name": "Jon Smith"}, headers=desk.auth("staff")
    )
    assert patched.status == 200
    pretix.data("rename", str(placed["id"]), "Jonathan Smyth")
    await synced.read()
    looked = await (await desk.client.get(f"/v1/attendees/{placed['secret']}", headers=desk.auth("desk"))).json()
    assert looked["name"] == "Jon Smith" and looked["source_says"] == {"name": "Jonathan Smyth"}
    assert any("kept the help desk's correction of name" in line for line in synced.said)


async def test_a_cancelled_order_is_refused_at_the_kiosk_and_its_waiting_badge_withdrawn(
    synced: Synced, pretix: Pretix, desk: Desk
) -> None:
    placed, waiting = pretix.data("order", "Cancelled Later"), pretix.data("order", "Cancelled While Queued")
    await synced.read()
    queued = await desk.client.post(f"/v1/attendees/{waiting['secret']}/badge", headers=desk.auth("kiosk"))
    assert queued.status == 201
    pretix.data("cancel", placed["order"])
    pretix.data("cancel", waiting["order"])
    await synced.read()
    refused = await desk.client.post(f"/v1/attendees/{placed['secret']}/badge", headers=desk.auth("kiosk"))
    assert refused.status == 409 and "cancelled" in (await refused.json())["detail"]
    attendee = await synced.store.get(waiting["secret"])
    assert attendee is not None and attendee.status == "cancelled"
    keys = Keys(synced.store.keys.venue)
    assert await synced.store.redis.hget(keys.job(attendee.job_id), "state") == b"cancelled"
    assert await synced.store.redis.llen(keys.pool) == 0
