"""A value no step can count with, written into the attendee list's counts or an attendee's version by the intake's
own Redis user (which may HSET both): the desk's walk-ins, badges, corrections, cancels and the counts it reads all
still answer, each such counter restarts with an ``integrity_fault`` event naming it, and nobody's place in the
search index is taken."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from attendees.keys import AttendeeKeys
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.attendee_files import listed
from tests.support.intake import start_desk
from tests.support.processes import create_user


async def _faults(redis: Redis, venue: str) -> dict[tuple[str, str], str]:
    """(key, field) -> reason of every integrity_fault event."""
    return {
        (fields[b"key"].decode(), fields[b"field"].decode()): fields[b"reason"].decode()
        for _, fields in await redis.xrange(Keys(venue).events)
        if fields[b"event"] == b"integrity_fault"
    }


async def test_a_desk_goes_on_when_the_intakes_user_wrote_words_into_the_lists_counters(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    await listed(redis, venue)
    k, ak = Keys(venue), AttendeeKeys(venue)
    counts = ak.counts
    user = await create_user(redis, venue, tmp_path / "intake.pw", role="intake")
    url = f"redis://{user}:{(tmp_path / 'intake.pw').read_text().strip()}@127.0.0.1:{redis_server.port}/0"
    as_intake = Redis.from_url(url)
    # What a hand holding the intake's password may write: every counter the list's steps count with.
    await as_intake.hset(
        counts,
        mapping={
            "checked_in": "many",
            "checked_in:Speaker": "1e3",
            "expected": "lots",
            "expected:Visitor": "9" * 20,
            "cancelled": "-",
            "seq": "oops",
        },
    )
    for code in ("secret-renee", "secret-lee"):
        await as_intake.hset(ak.attendee(code), "v", "v2")
    await as_intake.hset(k.stats, "enqueued", "plenty")
    await as_intake.aclose()
    # The intake itself runs under that user too.
    desk, intake_redis = await start_desk(tmp_path, venue, url)
    try:
        # A badge for a listed attendee (its stats counter is a word): queued.
        resp = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("desk"))
        assert resp.status == 201, await resp.text()
        # A staff correction of a record whose version is a word: corrected.
        resp = await desk.client.patch(
            "/v1/attendees/secret-renee", json={"company": "Café Lefèvre"}, headers=desk.auth("staff")
        )
        assert resp.status == 200 and (await resp.json())["company"] == "Café Lefèvre", await resp.text()
        # A cancel, then its undo, of a ticket whose counts and version are words: both go through.
        for status in ("cancelled", "valid"):
            resp = await desk.client.patch(
                "/v1/attendees/secret-lee", json={"status": status}, headers=desk.auth("staff")
            )
            assert resp.status == 200 and (await resp.json())["status"] == status, await resp.text()
        # A walk-in while the ref counter is a word: added, and printed.
        resp = await desk.client.post("/v1/attendees", json={"name": "Walk Renée"}, headers=desk.auth("desk"))
        assert resp.status == 201, await resp.text()
        walk_in = (await resp.json())["handle"]  # a desk sees the code masked and acts by the handle

        # The printer prints Renée's badge; the desk's next look at the counts folds it in.
        store = Store(redis, venue)
        taken = await store.take("hall-a-1")
        assert taken is not None and taken.job_id == "ORD1-1"
        begun = await store.begin("hall-a-1", "Hall A", taken.job_id)
        assert (await store.confirm("hall-a-1", "Hall A", taken.job_id, begun.epoch))[0] == "printed"
        resp = await desk.client.get("/metrics")
        assert resp.status == 200, await resp.text()

        # Every attendee is still found by name: the walk-in took no listed attendee's ref (staff see whole codes).
        resp = await desk.client.get("/v1/attendees", params={"q": "renée"}, headers=desk.auth("staff"))
        found = {(a["code"], a["handle"]) for a in (await resp.json())["attendees"]}
        assert len(found) == 2 and {c for c, _ in found} >= {"secret-renee"}, found
        assert walk_in in {h for _, h in found}, found
        for name, code in (("golden", "secret-lee"), ("δημ", "secret-dimitris")):
            resp = await desk.client.get("/v1/attendees", params={"q": name}, headers=desk.auth("staff"))
            assert [a["code"] for a in (await resp.json())["attendees"]] == [code]
    finally:
        await desk.client.close()
        await intake_redis.aclose()

    # Each word restarted at the step's count, told once in an event naming the counter and what it held.
    faults = await _faults(redis, venue)
    for field, held in (
        ("checked_in", "many"),
        ("checked_in:Speaker", "1e3"),
        ("expected", "lots"),
        ("expected:Visitor", "9" * 20),
        ("cancelled", "-"),
        ("seq", "oops"),
    ):
        reason = faults[(counts, field)]
        assert f'field {field} is "{held}", not a whole number' in reason, reason
    for code in ("secret-renee", "secret-lee"):
        assert 'field v is "v2"' in faults[(ak.attendee(code), "v")]
    assert 'field enqueued is "plenty"' in faults[(k.stats, "enqueued")]
    stored = await redis.hgetall(counts)
    assert stored[b"checked_in"] == b"1" and stored[b"checked_in:Speaker"] == b"1"
    for code in ("secret-renee", "secret-lee"):
        assert int(await redis.hget(ak.attendee(code), "v") or b"") >= 1
    # The walk-in's ref came after every ref in use.
    refs = await redis.hkeys(ak.refs)
    assert len(refs) == len(set(refs)) == 4
    assert (await AttendeeStore(redis, venue).counts()).checked_in == 1
