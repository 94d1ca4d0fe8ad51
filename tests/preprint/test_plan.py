"""Planning a pre-print run on a real redis-server: who is in it, the collation, the boxes, what is refused."""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from core.errors import UserError
from preprint.keys import PreprintKeys
from preprint.plan import box_label, family_of, sort_key
from preprint.store import PlanError, PreprintStore
from tests.support.attendee_files import rows


def person(code: str, name: str, ticket_type: str = "Visitor", **fields: str) -> dict[str, object]:
    return {"attendee_id": code, "name": name, "fields": {"ticket_type": ticket_type, **fields}}


async def listed(redis: Redis, venue: str, people: list[dict[str, object]]) -> PreprintStore:
    attendees = AttendeeStore(redis, venue)
    summary = await Importer(attendees).load(iter(rows(people)))
    assert summary.rejected == 0
    return PreprintStore(redis, venue, attendees)


def test_accents_and_case_never_split_a_name_and_each_script_has_its_place() -> None:
    names = ["Zorn", "Müller", "muller", "Öberg", "Mueller", "Иванов", "Oberg", "Muller", "Łukasz", "Lewandowski",
             "Æbelø", "Aabel", "Ωmega", "王", "김", "Abel", "Ángel"]  # fmt: skip
    ordered = sorted(names, key=sort_key)
    # the three spellings without an umlaut's second form sit together; Mueller is spelled differently
    at = ordered.index("muller")
    assert set(ordered[at : at + 3]) == {"muller", "Muller", "Müller"}
    assert ordered.index("Mueller") == at - 1
    assert ordered.index("Lewandowski") < ordered.index("Łukasz") < ordered.index("Mueller")
    assert ordered.index("Oberg") + 1 == ordered.index("Öberg")
    assert ordered[:5] == ["Aabel", "Abel", "Æbelø", "Ángel", "Lewandowski"][:2] + ordered[2:5]
    assert ordered.index("Aabel") < ordered.index("Æbelø") < ordered.index("Lewandowski")
    # Latin, then Greek, then Cyrillic, then Hangul, then Han
    tail = ordered[-5:]
    assert tail == ["Zorn", "Ωmega", "Иванов", "김", "王"]


def test_the_family_name_is_the_sources_part_else_the_stated_rule() -> None:
    assert family_of("Anna van der Berg", {}) == ("Berg", "Anna van der")
    assert family_of("Anna van der Berg", {"family_name": "van der Berg", "given_name": "Anna"}) == (
        "van der Berg",
        "Anna",
    )
    assert family_of("山田 太郎", {}) == ("山田 太郎", "")
    assert family_of("김민준", {}) == ("김민준", "")
    assert family_of("Cher", {}) == ("Cher", "")
    assert box_label(3, "Kowalski", "Müller") == "Box 3: Kowalski - Müller"


async def test_a_plan_boxes_the_attendees_by_family_name_and_tells_each_where(redis: Redis, venue: str) -> None:
    people = [person(f"c{i}", n) for i, n in enumerate(
        ["Jan Kowalski", "Anna Müller", "Ben muller", "Eva Adams", "Zoë Zimmer", "Ola Łaska", "Tom Lee"]
    )]  # fmt: skip
    people.append(person("c9", "Xavier Bond", family_name="Ybarra", given_name="Xavier"))
    store = await listed(redis, venue, people)
    report = await store.plan("night-1", box_size=3, pickup="Hall A welcome desk")
    assert report.run.total == 8 and report.run.boxes == 3 and report.run.state == "planned"
    assert [b.label for b in report.boxes] == [
        "Box 1: Adams - Łaska",
        "Box 2: Lee - muller",  # Anna Müller, then Ben muller: the accent and case split nothing, the given name does
        "Box 3: Ybarra - Zimmer",
    ]
    assert await store.box_codes("night-1", 1) == ["c3", "c0", "c5"]
    keys = PreprintKeys(venue)
    assert await redis.smembers(keys.runs) == {b"night-1"}
    raw = await redis.hgetall(keys.run("night-1"))
    assert raw[b"pickup"] == b"Hall A welcome desk" and raw[b"mode"] == b"" and raw[b"sort"] == b"family"
    assert json.loads(raw[b"ticket_types"]) == [] and json.loads(raw[b"layout_versions"]) == {"": 0}
    assert await redis.hgetall(keys.box("night-1", 2)) == {
        b"number": b"2",
        b"first": b"Lee",
        b"last": b"muller",
        b"count": b"3",
    }
    record = json.loads(await redis.hget(store.attendees.keys.attendee("c1"), "preprint"))
    assert record["run"] == "night-1" and record["box"] == 2 and len(record["fields_hash"]) == 16


async def test_a_second_plan_takes_only_those_in_no_run_and_without_a_badge(redis: Redis, venue: str) -> None:
    store = await listed(redis, venue, [person("a", "Ann Ames"), person("b", "Bob Baker"), person("c", "Cy Cole")])
    await store.attendees.badge("c", "kiosk")  # printed at the door already (or on its way)
    first = await store.plan("one")
    assert first.run.total == 2 and first.left_out == {"have a badge": 1}
    await Importer(store.attendees).load(iter(rows([person("d", "Dee Dale")])))
    second = await store.plan("two")
    assert second.run.total == 1 and await store.box_codes("two", 1) == ["d"]
    assert second.left_out == {"have a badge": 1, "in a run already": 2}
    with pytest.raises(PlanError, match="no attendee to pre-print"):
        await store.plan("three")


async def test_bad_plans_say_what_is_wrong_and_write_nothing(redis: Redis, venue: str) -> None:
    store = await listed(redis, venue, [person("a", "Ann Ames", "Speaker"), person("b", "Bob Baker")])
    with pytest.raises(UserError, match="--box-size must be 1-"):
        await store.plan("x", box_size=0)
    with pytest.raises(PlanError, match=r"no attendee has ticket type 'Speeker' \(the list's ticket types: Speaker"):
        await store.plan("x", ticket_types=["Speeker"])
    with pytest.raises(UserError, match="run name"):
        await store.plan("bad name")
    await store.plan("x", ticket_types=["Speaker"])
    with pytest.raises(PlanError, match="a pre-print run named 'x' exists"):
        await store.plan("x")
    assert await store.names() == ["x"]
    assert (await store.need_run("x")).total == 1


async def test_a_layout_missing_for_some_attendees_is_named_before_anything_is_written(
    redis: Redis, venue: str
) -> None:
    store = await listed(redis, venue, [person("a", "Ann Ames", "Speaker"), person("b", "Bob Baker")])
    from layouts.store import LayoutStore

    # a rule naming a layout the venue does not have (written as a hand-made rule would be)
    await redis.hset(LayoutStore(redis, venue).keys.layout_rules, "ticket_type=Speaker", "speaker")
    with pytest.raises(PlanError, match="1 attendee\\(s\\) get layout 'speaker', which is not set"):
        await store.plan("x")
    assert await store.names() == [] and await store.run("x") is None
    assert await redis.hget(store.attendees.keys.attendee("a"), "preprint") is None


async def test_an_attendee_renamed_while_the_plan_is_written_is_read_again(redis: Redis, venue: str) -> None:
    store = await listed(redis, venue, [person("a", "Ann Ames"), person("b", "Bob Baker")])
    original = store.attendees.get_many

    async def renamed_meanwhile(codes):  # the import of a rename lands between the plan's read and its write
        found = await original(codes)
        if len(codes) == 2:
            await store.attendees.edit("b", {"name": "Bob Zed"})
        return found

    store.attendees.get_many = renamed_meanwhile  # type: ignore[method-assign]
    report = await store.plan("x")
    assert report.run.total == 2
    record = json.loads(await redis.hget(store.attendees.keys.attendee("b"), "preprint"))
    fresh = await store.attendees.get("b")
    from preprint.plan import attendee_fields_hash

    assert fresh is not None and record["fields_hash"] == attendee_fields_hash(fresh)


async def test_a_run_never_printed_is_dropped_and_its_attendees_planned_again(redis: Redis, venue: str) -> None:
    store = await listed(redis, venue, [person("a", "Ann Ames"), person("b", "Bob Baker")])
    await store.plan("x", box_size=1)
    assert await store.remove("x") == 2
    assert await store.names() == [] and await redis.keys(PreprintKeys(venue).prefix + "preprint:*") == []
    assert await redis.hget(store.attendees.keys.attendee("a"), "preprint") is None
    assert (await store.plan("y")).run.total == 2
    await store.move("y", ["planned"], "printing", "pool")
    with pytest.raises(UserError, match="'y' is printing: its badges exist"):
        await store.remove("y")
    with pytest.raises(UserError, match="no pre-print run named 'zz'"):
        await store.remove("zz")
