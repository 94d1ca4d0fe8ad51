"""The event day's numbers (eventday/counts.py) from what ``confirm`` counts in its atomic step, against a real
redis-server: arrivals per zone and minute, a zone's expected wait, labels left from a roll change, a fault's age."""

from __future__ import annotations

from redis.asyncio import Redis

from eventday.counts import MINUTE_MS, event_day, zone_waits
from eventday.rolls import RollError, mark_roll
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import add

ZONE = ("hall-a", ("a1", "a2"))


async def zone_job(store: Store, attendee: str, printer: str = "a1") -> str:
    job = parse_job({"attendee_id": attendee, "name": attendee, "printer": printer, "zone": ZONE[0],
                     "zone_printers": list(ZONE[1])})  # fmt: skip
    added, _ = await store.enqueue(job.job_id, job.payload(), job.printer, zone=job.zoned)
    assert added
    return job.job_id


async def print_one(store: Store, me: str, job_id: str) -> None:
    assert await store.take(me) is not None
    begun = await store.begin(me, f"{me} desk", job_id)
    assert begun.kind == "print", begun
    assert (await store.confirm(me, f"{me} desk", job_id, begun.epoch)).kind == "printed"


async def minutes(redis: Redis, venue: str) -> dict[str, int]:
    return {dec(k): int(v) for k, v in (await redis.hgetall(enc(Keys(venue).minutes))).items()}


async def now_minute(redis: Redis) -> int:
    sec, usec = await redis.time()
    return (int(sec) * 1000 + int(usec) // 1000) // MINUTE_MS


async def test_confirm_counts_a_first_badge_as_an_arrival_of_its_zone_once(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    for printer in ZONE[1]:
        await store.beat(printer, {"state": "ready"}, 60_000, first=True)
    zoned = await zone_job(store, "renee")
    plain = await add(store, "dimitris", "a2")
    await print_one(store, "a1", zoned)
    await print_one(store, "a2", plain)
    # The same print confirmed again (a lost reply, a journal replay) is not a second arrival.
    epoch = int(dec(await redis.hget(enc(Keys(venue).job(zoned)), "printed_epoch")))
    assert (await store.confirm("a1", "a1 desk", zoned, epoch)).kind == "printed"
    m = await now_minute(redis)
    counted = await minutes(redis, venue)
    # The confirm and the count share a minute unless the test crossed one: then the counts sit a minute apart.
    assert counted.get(f"b|hall-a|{m}", 0) + counted.get(f"b|hall-a|{m - 1}", 0) == 1
    assert counted.get(f"b|-|{m}", 0) + counted.get(f"b|-|{m - 1}", 0) == 1
    assert counted["n|a1"] == 1 and counted["n|a2"] == 1
    day = await event_day(redis, venue)
    assert sum(day.arrivals["hall-a"]) == 1 and sum(day.arrivals["-"]) == 1
    assert {p.printer: p.per_hour for p in day.printers} == {"a1": 1, "a2": 1}


async def test_a_reprint_and_a_preprint_are_prints_but_not_arrivals(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    first = await zone_job(store, "renee")
    await print_one(store, "a1", first)
    reply = await store.reprint(first, "coffee", "desk", 5, False)
    assert reply.kind == "reprint", reply
    await print_one(store, "a1", first)
    ahead = await zone_job(store, "omar")
    await redis.hset(enc(Keys(venue).job(ahead)), "kind", "preprint")  # a pre-print job, as its branch marks it
    await print_one(store, "a1", ahead)
    counted = await minutes(redis, venue)
    assert sum(v for f, v in counted.items() if f.startswith("b|")) == 1
    assert counted["n|a1"] == 3


async def test_a_zones_wait_is_its_waiting_badges_over_its_recent_rate(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    for n in range(6):
        await zone_job(store, f"guest-{n}")
    sec, usec = await redis.time()
    now = int(sec) * 1000 + int(usec) // 1000
    m = now // MINUTE_MS
    # Three minutes of printing at 4 badges a minute, as confirm would have counted them (no sleeping through them).
    began = now - 3 * MINUTE_MS
    fields = {f"b|hall-a|{minute}": 4 for minute in range(began // MINUTE_MS + 1, m)}
    fields[f"b|hall-a|{m}"] = round(4 * (now % MINUTE_MS) / MINUTE_MS)
    fields[f"b|hall-a|{began // MINUTE_MS}"] = round(4 * (MINUTE_MS - began % MINUTE_MS) / MINUTE_MS)
    fields |= {"f|hall-a": began, "l|hall-a": now}
    await redis.hset(enc(Keys(venue).minutes), mapping=fields)
    (wait,) = await zone_waits(redis, venue)
    assert wait.zone == "hall-a" and wait.waiting == 6
    assert 3.0 <= wait.per_minute <= 5.0
    assert wait.wait_minutes is not None and 1.2 <= wait.wait_minutes <= 2.0
    # An idle zone (its last print five minutes ago) has no rate: no wait is promised.
    await redis.hset(enc(Keys(venue).minutes), "l|hall-a", now - 6 * MINUTE_MS)
    (idle,) = await zone_waits(redis, venue)
    assert idle.wait_minutes is None and idle.per_minute == 0.0


async def test_labels_left_come_from_the_printer_else_from_the_last_roll_change(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await store.beat("a1", {"state": "ready", "location": "a1 desk"}, 60_000, first=True)
    await store.beat("d1", {"state": "ready", "location": "d1", "labels_remaining": 180}, 60_000, first=True)
    await print_one(store, "a1", await add(store, "before", "a1"))  # on the old roll
    mark = await mark_roll(redis, venue, "a1", 250)
    assert mark.printed == 1
    for n in range(3):
        await print_one(store, "a1", await add(store, f"after-{n}", "a1"))
    left = {p.printer: (p.labels_left, p.labels_source) for p in (await event_day(redis, venue)).printers}
    assert left == {"a1": (247, "roll"), "d1": (180, "printer")}
    for bad, words in (("zz", "no printer named 'zz'"),):
        try:
            await mark_roll(redis, venue, bad, 10)
        except RollError as exc:
            assert words in str(exc)
        else:
            raise AssertionError("an unknown printer was marked")


async def test_a_faults_age_counts_from_when_it_was_first_seen_and_ends_when_cleared(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await store.beat("a1", {"state": "paused", "reasons": ["out of labels"]}, 60_000, first=True)
    await store.beat("a2", {"state": "ready"}, 60_000, first=True)
    first = await event_day(redis, venue)
    again = await event_day(redis, venue)
    faults = {p.printer: p.fault_since_ms for p in again.printers}
    assert faults["a2"] is None and faults["a1"] == {p.printer: p.fault_since_ms for p in first.printers}["a1"]
    assert next(p for p in again.printers if p.printer == "a1").fault_age_s is not None
    await store.beat("a1", {"state": "ready"}, 60_000, first=False)
    assert all(p.fault_since_ms is None for p in (await event_day(redis, venue)).printers)


async def test_a_hand_over_counts_as_an_arrival_of_its_zone(redis: Redis, venue: str) -> None:
    """``count_handover`` as the desk's hand-over step calls it, in its own script (here one made of the helpers)."""
    from importlib import resources

    from protocol.library import helpers

    shared = helpers(resources.files("protocol").joinpath("prelude.lua").read_text(encoding="utf-8"))
    script = "".join(shared[name] for name in ("now_ms", "count_minute", "count_handover"))
    script += "count_handover(KEYS[1], ARGV[1], now_ms())\nreturn 1\n"
    for zone in ("hall-a", "hall-a", ""):
        assert await redis.eval(script, 1, Keys(venue).minutes, zone) == 1
    day = await event_day(redis, venue)
    assert sum(day.handed_over["hall-a"]) == 2 and sum(day.handed_over["-"]) == 1
    assert not day.arrivals  # handed over, not printed: no zone's printing rate moves


async def test_a_printer_back_from_running_out_of_labels_starts_a_new_roll_of_the_same_size(
    redis: Redis, venue: str
) -> None:
    store = Store(redis, venue)
    await store.beat("a1", {"state": "ready", "location": "a1 desk"}, 60_000, first=True)
    await mark_roll(redis, venue, "a1", 3)
    for n in range(3):
        await print_one(store, "a1", await add(store, f"g-{n}", "a1"))
    await store.beat("a1", {"state": "paused", "device": "media_out", "reasons": ["out of labels"]}, 60_000, False)
    (out,) = (await event_day(redis, venue)).printers
    assert out.labels_left == 0 and out.fault_since_ms is not None
    await store.beat("a1", {"state": "ready", "device": "ready"}, 60_000, first=False)  # a new roll loaded
    (back,) = (await event_day(redis, venue)).printers
    assert (back.labels_left, back.labels_source, back.fault_since_ms) == (3, "roll", None)
    await print_one(store, "a1", await add(store, "after", "a1"))
    (later,) = (await event_day(redis, venue)).printers
    assert later.labels_left == 2
