"""The Lua scripts, one atomic step each, against a real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from protocol import specs
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.keys import EncodedKeys, Keys, PrinterKeys
from protocol.library import build
from protocol.scripts import SCRIPT_NAMES, Lane, plain_source
from protocol.specs import ScriptCall
from protocol.store import Store
from tests.support.agents import add
from tests.support.venue import assert_each_unfinished_job_in_one_list


async def test_enqueue_is_idempotent_on_job_id(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job = parse_job({"attendee_id": "a1", "name": "Ada"})
    assert await store.enqueue(job.job_id, job.payload(), None) == (True, "queued")
    other = parse_job({"attendee_id": "a1", "name": "Someone Else"})
    assert await store.enqueue(other.job_id, other.payload(), None) == (False, "queued")
    k = Keys(venue)
    assert await redis.lrange(k.pool, 0, -1) == [b"a1"]
    assert json.loads(await redis.hget(k.job("a1"), "payload"))["name"] == "Ada"
    assert int(await redis.hget(k.stats, "enqueued")) == 1


async def test_take_serves_pinned_queue_first_then_pool_oldest_first(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    for a in ("p1", "p2"):
        await add(store, a)
    await add(store, "pin1", printer="desk-1")
    assert await store.take("desk-1") == ("q", "pin1")
    # A printer holds at most one job: taking again returns what it holds.
    assert await store.take("desk-1") == ("held", "pin1")
    assert await store.take("desk-2") == ("pool", "p1")
    assert await store.take("desk-3") == ("pool", "p2")
    assert await store.take("desk-4") is None


async def test_begin_refuses_a_job_no_longer_in_my_inflight(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    assert await store.take("desk-1") == ("pool", "a1")
    # A peer reclaims it (moves it back to the pool) before desk-1 begins.
    k = Keys(venue)
    await redis.lmove(k.inflight("desk-1"), k.pool, "LEFT", "RIGHT")
    begun = await store.begin("desk-1", "Hall A", job_id)
    assert begun.kind == "not_owner"
    assert await redis.hget(k.job(job_id), "state") == b"queued"
    assert await redis.hget(k.job(job_id), "attempts") == b"0"


async def test_begin_drops_an_already_printed_job(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    await redis.set(Keys(venue).done(job_id), "desk-9")
    await store.take("desk-1")
    begun = await store.begin("desk-1", "Hall A", job_id)
    assert (begun.kind, begun.detail) == ("done", "desk-9")
    assert await redis.llen(Keys(venue).inflight("desk-1")) == 0


@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        ({"state": "printed"}, "state is printed but no printer confirmed it"),
        ({"state": "dead"}, "state is dead but the job was still in a list"),
        (
            {"payload": json.dumps({"job_id": "other", "attendee_id": "x", "name": "Eve"})},
            "payload is for job_id other",
        ),
    ],
)
async def test_begin_dead_letters_a_record_that_contradicts_the_protocol(
    redis: Redis, venue: str, tamper: dict[str, str], said: str
) -> None:
    """What a raw write to a job hash (a desk credential, a broken tool) does: never printed, never a silent skip."""
    store = Store(redis, venue)
    k = Keys(venue)
    job_id = await add(store, "a1")
    await redis.hset(k.job(job_id), mapping=tamper)
    if tamper.get("state") == "dead":
        await redis.lpush(k.dlq, job_id)  # listed in the DLQ too: it must end up there once
    await store.take("desk-1")
    begun = await store.begin("desk-1", "Hall A", job_id)
    assert begun.kind == "dead" and said in begun.detail
    job = await redis.hgetall(k.job(job_id))
    assert job[b"state"] == b"dead" and said in job[b"error"].decode() and b"attempts" in job
    assert job[b"attempts"] == b"0"
    assert await redis.lrange(k.dlq, 0, -1) == [job_id.encode()]
    assert await redis.llen(k.inflight("desk-1")) == 0
    stats = await redis.hgetall(k.stats)
    assert stats[b"integrity_fault"] == b"1" and stats[b"dead"] == b"1"
    ((_, last),) = await redis.xrevrange(k.events, count=1)
    assert last[b"event"] == b"dead" and said in last[b"reason"].decode()
    await assert_each_unfinished_job_in_one_list(redis, venue, [])


async def test_begin_does_not_print_an_id_pushed_again_while_another_printer_prints_it(
    redis: Redis, venue: str
) -> None:
    """``LPUSH pool <id>`` by hand while desk-1 prints it: desk-2 must not make a second badge."""
    store = Store(redis, venue)
    k = Keys(venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    assert (await store.begin("desk-1", "Hall A", job_id)).kind == "print"
    await redis.lpush(k.pool, job_id)
    assert await store.take("desk-2") == ("pool", job_id)
    begun = await store.begin("desk-2", "Hall B", job_id)
    assert begun.kind == "dropped" and "desk-1 is printing this job" in begun.detail
    assert await redis.llen(k.inflight("desk-2")) == 0
    assert await redis.lrange(k.inflight("desk-1"), 0, -1) == [job_id.encode()]
    job = await redis.hgetall(k.job(job_id))
    assert job[b"state"] == b"printing" and job[b"printer"] == b"desk-1" and job[b"attempts"] == b"1"
    assert await redis.hget(k.stats, "integrity_fault") == b"1"
    ((_, last),) = await redis.xrevrange(k.events, count=1)
    assert last[b"event"] == b"integrity_fault" and last[b"printer"] == b"desk-2"
    # desk-1's badge is confirmed as usual.
    assert (await store.confirm("desk-1", "Hall A", job_id, 1))[0] == "printed"


async def test_begin_marks_printing_and_counts_attempts(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    begun = await store.begin("desk-1", "Hall A", job_id)
    assert (begun.kind, begun.attempts, begun.epoch) == ("print", 1, 1)
    assert json.loads(begun.payload)["attendee_id"] == "a1"
    job = await redis.hgetall(Keys(venue).job(job_id))
    assert job[b"state"] == b"printing" and job[b"printer"] == b"desk-1"


async def test_confirm_sets_done_once_and_a_second_confirm_is_a_duplicate(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    begun = await store.begin("desk-1", "Hall A", job_id)
    assert await store.confirm("desk-1", "Hall A", job_id, begun.epoch) == ("printed", "")
    assert await redis.get(k.done(job_id)) == b"desk-1"
    # The same confirm replayed (lost reply, journal replay) is not a duplicate.
    assert await store.confirm("desk-1", "Hall A", job_id, begun.epoch) == ("printed", "")
    assert await redis.hget(k.job(job_id), "duplicate_print") is None
    # Another printer confirming the same job means a second physical copy.
    assert await store.confirm("desk-2", "Hall B", job_id, begun.epoch + 1) == ("duplicate", "desk-1")
    assert await redis.get(k.done(job_id)) == b"desk-1"
    job = await redis.hgetall(k.job(job_id))
    assert job[b"maybe_duplicate"] == b"1" and job[b"duplicate_print"] == b"1"
    events = [f for _, f in await redis.xrange(k.events)]
    dup = [e for e in events if e[b"event"] == b"duplicate_print"]
    assert len(dup) == 1 and b"Hall A" in dup[0][b"reason"]


async def test_a_confirm_of_a_job_another_printer_has_begun_since_flags_that_printer(redis: Redis, venue: str) -> None:
    # A failover lost a reclaim and the take after it: the new master's record has the job printing at the frozen
    # desk-1 again, while desk-2 confirms the copy its journal says came out (the re-confirm after a master move).
    # desk-1 may print it too when it wakes, and its printer may not say so: desk-2's confirm names it for staff.
    store = Store(redis, venue)
    k = Keys(venue)
    await redis.hset(k.printers, "desk-1", "Hall A, desk 1")
    job_id = await add(store, "a1")
    await store.take("desk-1")
    begun = await store.begin("desk-1", "Hall A, desk 1", job_id)
    kind, where = await store.confirm("desk-2", "Hall B", job_id, begun.epoch + 1)
    assert (kind, where) == ("printed", "desk-1 (Hall A, desk 1)")
    job = await redis.hgetall(k.job(job_id))
    assert job[b"maybe_duplicate"] == b"1" and job[b"printer"] == b"desk-2"
    maybe = [f for _, f in await redis.xrange(k.events) if f[b"event"] == b"maybe_duplicate"]
    assert len(maybe) == 1 and b"desk-1 (Hall A, desk 1)" in maybe[0][b"reason"]
    # A late confirm of a job that went back to the pool (nobody began it since) flags nothing.
    other = await add(store, "a2")
    await store.take("desk-4")
    begun = await store.begin("desk-4", "Hall D", other)
    assert await store.release("desk-4", "Hall D", other, "unsent", "printer not ready", 3) == "released"
    assert await store.confirm("desk-3", "Hall C", other, begun.epoch) == ("printed", "")
    assert await redis.hget(k.job(other), "maybe_duplicate") == b"0"


async def test_release_puts_the_job_first_in_line(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    first = await add(store, "first")
    for a in ("second", "third"):
        await add(store, a)
    await store.take("desk-1")
    await store.begin("desk-1", "Hall A", first)
    assert await store.release("desk-1", "Hall A", first, "failed", "media out", 3) == "released"
    assert await store.take("desk-2") == ("pool", "first")
    assert await redis.hget(Keys(venue).job(first), "state") == b"queued"


async def test_unknown_outcome_then_print_elsewhere_flags_maybe_duplicate(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    await store.begin("desk-1", "Hall A, desk 1", job_id)
    await store.release("desk-1", "Hall A, desk 1", job_id, "unknown", "jam while printing", 3)
    assert await redis.hget(k.job(job_id), "maybe_printed") == b"1"
    await store.take("desk-2")
    begun = await store.begin("desk-2", "Hall B", job_id)
    assert begun.maybe_printed_where == "desk-1 (Hall A, desk 1)"
    kind, where = await store.confirm("desk-2", "Hall B", job_id, begun.epoch)
    assert (kind, where) == ("printed", "desk-1 (Hall A, desk 1)")
    assert await redis.hget(k.job(job_id), "maybe_duplicate") == b"1"
    events = [f for _, f in await redis.xrange(k.events)]
    maybe = [e for e in events if e[b"event"] == b"maybe_duplicate"]
    assert len(maybe) == 1 and b"Hall A, desk 1" in maybe[0][b"reason"] and maybe[0][b"printer"] == b"desk-2"


async def test_max_attempts_sends_the_job_to_the_dlq(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    job_id = await add(store, "a1")
    for attempt in range(1, 4):
        assert await store.take("desk-1") == ("pool", job_id)
        assert (await store.begin("desk-1", "Hall A", job_id)).attempts == attempt
        result = await store.release("desk-1", "Hall A", job_id, "failed", "jam", 3)
    assert result == "dead"
    assert await redis.lrange(k.dlq, 0, -1) == [job_id.encode()]
    job = await redis.hgetall(k.job(job_id))
    assert job[b"state"] == b"dead" and b"3 attempts" in job[b"error"]
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])


async def test_unsent_release_does_not_count_as_an_attempt(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    for _ in range(5):
        await store.take("desk-1")
        await store.begin("desk-1", "Hall A", job_id)
        assert await store.release("desk-1", "Hall A", job_id, "unsent", "stopping", 3) == "released"
    assert await redis.hget(Keys(venue).job(job_id), "attempts") == b"0"


async def test_garbage_id_in_pool_is_dead_lettered_with_a_reason(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await redis.lpush(k.pool, b"\xff\xfe junk")
    taken = await store.take("desk-1")
    assert taken is not None
    begun = await store.begin("desk-1", "Hall A", taken[1])
    assert begun.kind == "dead"
    assert await redis.lrange(k.dlq, 0, -1) == [b"\xff\xfe junk"]
    assert b"no job record" in await redis.hget(k.prefix.encode() + b"job:\xff\xfe junk", "error")


async def test_beat_uses_server_time_and_reports_depth_and_inflight(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await add(store, "pinned", printer="desk-1")
    await add(store, "pinned2", printer="desk-1")
    await store.take("desk-1")
    before = await store.server_ms()
    beat = await store.beat("desk-1", {"state": "ready", "printed": 4}, 5000, first=True)
    after = await store.server_ms()
    assert before <= beat.server_ms <= after
    assert int(await redis.zscore(k.hb, "desk-1")) == beat.server_ms
    health = json.loads(await redis.get(k.health("desk-1")))
    assert health["depth"] == 1 and health["inflight"] == "pinned" and health["printed"] == 4
    assert 0 < await redis.pttl(k.health("desk-1")) <= 5000
    assert not beat.was_declared_dead
    # Peers declared it dead while it was frozen: the next beat says so.
    await redis.set(k.health("desk-1"), json.dumps({"state": "dead"}))
    assert (await store.beat("desk-1", {"state": "ready"}, 5000, first=False)).was_declared_dead


async def test_beat_time_is_redis_time_not_the_local_clock(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    beat = await store.beat("desk-1", {"state": "ready"}, 5000, first=True)
    sec, usec = await redis.time()
    assert abs(beat.server_ms - (sec * 1000 + usec // 1000)) < 1000


async def test_handback_moves_pinned_jobs_to_the_front_of_the_pool_in_order(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await add(store, "pool-old")
    for a in ("pin-1", "pin-2", "pin-3"):
        await add(store, a, printer="desk-1")
    assert await store.handback("desk-1", "printer down") == 3
    order = [(await store.take(f"d{i}")) for i in range(4)]
    assert [t[1] for t in order if t] == ["pin-1", "pin-2", "pin-3", "pool-old"]
    assert await store.handback("desk-1", "again") == 0


def test_encoded_keys_are_the_keys_keys_spells() -> None:
    # The scripts name their keys from bytes encoded once; they must stay exactly what Keys spells.
    k = Keys("expo-2026")
    encoded = EncodedKeys(k)
    job_id = "odd id \udcff"  # not UTF-8: travels with surrogateescape, like every id
    job = enc(job_id)
    assert (encoded.job(job), encoded.done(job)) == (enc(k.job(job_id)), enc(k.done(job_id)))
    venue_wide = [k.pool, k.events, k.dlq, k.stats, k.pinned, k.hb, k.printers, k.sweep_lease, k.printed,
                  k.printed_consumers]  # fmt: skip
    assert [encoded.pool, encoded.events, encoded.dlq, encoded.stats, encoded.pinned, encoded.hb, encoded.printers,
            encoded.sweep_lease, encoded.printed,
            encoded.printed_consumers] == [enc(key) for key in venue_wide]  # fmt: skip
    desk = encoded.printer("desk-1")
    assert desk == PrinterKeys(
        b"desk-1",
        enc(k.inflight("desk-1")),
        enc(k.queue("desk-1")),
        enc(k.control("desk-1")),
        enc(k.health("desk-1")),
        enc(k.group_held("desk-1")),
        enc(k.group_claim("desk-1")),
    )
    assert encoded.groups == enc(k.groups) and encoded.group(b"g1") == enc(k.group("g1"))
    assert encoded.group_queue(b"g1") == enc(k.group_queue("g1"))
    _, keys, args = specs.CONFIRM.call(encoded, desk, job, b"Hall A", 7, 100)
    assert keys == [enc(key) for key in [k.inflight("desk-1"), k.job(job_id), k.done(job_id), k.events, k.pool,
                                                   k.stats, k.printed_consumers, k.printed, k.printers,
                                                   k.minutes]]  # fmt: skip
    assert args == [job, b"desk-1", b"Hall A", b"7", 100]


def _placeholder_calls() -> dict[str, list[ScriptCall[Any]]]:
    """Every script called with placeholders named as its .lua header names them (``<me>``, ``<id>``, ...)."""
    k = EncodedKeys(Keys("v"))
    me, victim, pinned = k.printer("<me>"), k.printer("<victim>"), k.printer("<pinned>")
    job = b"<id>"
    return {
        "enqueue": [
            specs.ENQUEUE.call(k, job, b"<payload>", pinned, 1),
            specs.ENQUEUE.call(k, job, b"<payload>", None, 1),
            specs.ENQUEUE.call(k, job, b"<payload>", None, 1, b"<creator>"),
            specs.ENQUEUE.call(k, job, b"<payload>", None, 1, b"<creator>", (b"<zone>", b"<zone_printers>")),
            specs.ENQUEUE.call(k, job, b"<payload>", pinned, 1, b"", (b"<zone>", b"<zone_printers>"), only=True),
            specs.ENQUEUE.call(k, job, b"<payload>", pinned, 1, only=True),
        ],
        "take": [specs.TAKE.call(k, me), specs.TAKE.call(k, me, 2)],
        "begin": [specs.BEGIN.call(k, me, job, b"<location>", 1)],
        "confirm": [
            specs.CONFIRM.call(k, me, job, b"<location>", 7, 1),
            specs.CONFIRM.call(k, me, job, b"<location>", 7, 1, ("<layout>", 3)),
            specs.CONFIRM.call(k, me, job, b"<location>", 7, 1, None, k.printer("<waits>")),
            specs.CONFIRM.call(
                k, me, job, b"<location>", 7, 1, ("<layout>", 3), k.printer("<waits>"), "<confirmed_by>"
            ),
        ],
        "release": [specs.RELEASE.call(k, me, job, b"<location>", "failed", b"<reason>", 3, 1, 1)],
        "reflag": [specs.REFLAG.call(k, me, job, b"<location>", 7, 1)],
        "dead_letter": [specs.DEAD_LETTER.call(k, me, job, b"<reason>", 1)],
        "beat": [specs.BEAT.call(k, me, b"<health>", 1, 1, True, b"<location>")],
        "handback": [specs.HANDBACK.call(k, me, b"<reason>", 1, 1)],
        "sweep": [specs.SWEEP.call(k, me, 1, 1, 1)],
        "reclaim": [
            specs.RECLAIM.call(k, victim, 1, b"<held>", b"<by>", 1, 1, 1),
            specs.RECLAIM.call(k, victim, None, b"", b"<by>", 1, 1, 1),
        ],
        "steal": [specs.STEAL.call(k, me, k.printer("<owner>"), job, 1, 1, 1)],
        "drain": [specs.DRAIN.call(k, k.printer("<printer>"), "drain", b"<by>", 1, 1)],
        "requeue": [specs.REQUEUE.call(k, job, b"<by>", 1)],
        "reprint": [
            specs.REPRINT.call(k, job, b"<reason>", b"<by>", 2, False, 1),
            specs.REPRINT.call(k, job, b"<reason>", b"<by>", 2, False, 1, (), pinned),
            specs.REPRINT.call(k, job, b"<reason>", b"<by>", 2, False, 1, (), pinned, (b"<zone>", b"<zone_printers>")),
        ],
        "cancel": [specs.CANCEL.call(k, job, pinned, b"<by>", 1), specs.CANCEL.call(k, job, None, b"<by>", 1)],
        "printed_took": [specs.PRINTED_TOOK.call(k, "<consumer>", "<id>")],
        "group_add": [specs.GROUP_ADD.call(k, b"<gid>", ["<printers>"], b"<cont>", 1, [])],
        "group_claim": [specs.GROUP_CLAIM.call(k, me, b"<gid>", 1)],
        "group_back": [
            specs.GROUP_BACK.call(k, k.printer("<p>"), 1, b"<gid>", b"<held>", b"<cont>", b"<by>", 1, b"<reason>"),
            specs.GROUP_BACK.call(k, k.printer("<p>"), None, b"<gid>", b"", b"<cont>", b"<by>", 1, b"<reason>"),
        ],
    }


def _header(source: str, field: str) -> list[str]:
    (line,) = [line for line in source.splitlines() if line.startswith(f"-- {field} ")]
    return line.split()[2:]


def _fixed(tokens: list[str]) -> list[str]:
    """A header's tokens before the first that repeats (``...``)."""
    return tokens[: next((i for i, token in enumerate(tokens) if "..." in token), len(tokens))]


#: The protocol's own scripts (the library also holds other packages', each tested with its specs).
PROTOCOL_SCRIPTS = build([resources.files("protocol")]).scripts


@pytest.mark.parametrize("name", PROTOCOL_SCRIPTS)
def test_each_scripts_header_names_the_keys_and_argv_its_spec_sends(name: str) -> None:
    # The .lua header's one-line reminder of KEYS and ARGV is what specs.py sends: a reordered key in either fails.
    source = plain_source(name)
    # A tail that repeats ("[job:<id>... zone-keys...]": a queue's jobs, zone printers' keys) is left to
    # test_a_queue_and_zone_printers_go_at_the_end_of_keys_and_argv; the calls here have none.
    keys, argv = (_fixed(_header(source, field)) for field in ("KEYS", "ARGV"))
    optional = next((i for i, token in enumerate(keys) if token.startswith("[")), len(keys))  # "[a b]": a tail
    keys = [token.strip("[]") for token in keys]
    # Optional ARGV tails, one after another ("[<zone> <zone_printers>] [<only>]"): a call sends up to one of their
    # starts, or all of it.
    lengths = {i for i, token in enumerate(argv) if token.startswith("[")} | {len(argv)}
    argv = [token.strip("[]") for token in argv]
    used = {int(n) for n in re.findall(r"KEYS\[(\d+)\]", source)}
    assert max(used) <= len(keys) and max(int(n) for n in re.findall(r"ARGV\[(\d+)\]", source)) <= len(argv)
    calls = _placeholder_calls()[name]
    for spec, call_keys, call_args in calls:
        assert spec.name == name
        named = [dec(key).removeprefix("badge:{v}:") for key in call_keys]
        expected = keys if len(named) == len(keys) else keys[:optional]
        assert len(named) == len(expected), (named, expected)
        for key, token in zip(named, expected, strict=True):
            assert key in token.split("|"), (name, named, keys)  # "a|b": either, by the arguments
        assert len(call_args) in lengths, (name, call_args, argv)
        expected_argv = argv[: len(call_args)]
        for arg, token in zip(call_args, expected_argv, strict=True):
            if isinstance(arg, bytes) and arg.startswith(b"<"):
                assert arg.decode() == token, (name, call_args, argv)
    assert {len(call_keys) for _, call_keys, _ in calls} >= (
        {len(keys)} if optional == len(keys) else {len(keys), optional}
    )


def test_every_script_has_a_spec() -> None:
    assert set(_placeholder_calls()) == set(PROTOCOL_SCRIPTS)
    assert set(PROTOCOL_SCRIPTS) <= set(SCRIPT_NAMES) and len(SCRIPT_NAMES) == len(set(SCRIPT_NAMES))


@contextlib.asynccontextmanager
async def _dedicated(redis: Redis, venue: str, *ids: str) -> AsyncIterator[Store]:
    """A dedicated store on a client with its own pool (the lane's connection is the only one running scripts),
    with ``ids`` queued and the first taken by desk-1."""
    pool = redis.connection_pool
    client = Redis(connection_pool=pool.__class__(**pool.connection_kwargs))
    store = Store(client, venue, dedicated=True)
    try:
        await store.scripts.prepare()
        for job_id in ids:
            await add(store, job_id)
        assert await store.take("desk-1") == ("pool", ids[0])
        yield store
    finally:
        await client.aclose()


async def _lane_client_id(lane: Lane) -> int:
    """The server's id for the lane's connection, asked on the lane itself."""
    (found,) = await lane.exchange([("CLIENT", "ID")])
    return int(found)


async def test_a_dedicated_store_keeps_one_connection_and_survives_losing_it(
    redis: Redis, venue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _dedicated(redis, venue, "d1", "d2", "d3", "d4") as store:
        begun = await store.begin("desk-1", "Hall A", "d1")
        pool_conn = await store.redis.client_id()  # another command meanwhile: from the pool, not the lane
        confirmed, nxt = await store.confirm_then_take("desk-1", "Hall A", "d1", begun.epoch)
        assert begun.kind == "print" and confirmed == ("printed", "") and nxt == ("pool", "d2")
        lane = store.scripts.lane
        assert lane is not None and lane.connected
        lane_id = await _lane_client_id(lane)
        assert lane_id != pool_conn
        # The server drops it mid-burst: the next call fails like any lost connection, the one after reconnects.
        await redis.client_kill_filter(_id=lane_id)
        with pytest.raises(RedisConnectionError):
            await store.begin("desk-1", "Hall A", "d2")
        assert (await store.begin("desk-1", "Hall A", "d2")).kind == "print"
        # The server drops it during a lull (Redis ``timeout``, a proxy's idle limit): the first call after the
        # lull checks the connection first and reconnects without an error.
        monkeypatch.setattr(Lane, "IDLE_CHECK", 0.05)
        killed = await _lane_client_id(lane)
        await redis.client_kill_filter(_id=killed)
        await asyncio.sleep(0.1)
        confirmed, nxt = await store.confirm_then_take("desk-1", "Hall A", "d2", 2)
        assert confirmed == ("printed", "") and nxt == ("pool", "d3")
        assert await _lane_client_id(lane) != killed
        # It stays the pool's: closing the pool's connections (as closing the client, or a Sentinel master change,
        # does) closes it too, and the next call opens a new one.
        before = await _lane_client_id(lane)
        await store.redis.connection_pool.disconnect()
        assert not lane.connected
        assert before not in [int(c["id"]) for c in await redis.client_list()]
        confirmed, nxt = await store.confirm_then_take("desk-1", "Hall A", "d3", 3)
        assert confirmed == ("printed", "") and nxt == ("pool", "d4")
        assert lane.connected and await _lane_client_id(lane) != before


@pytest.mark.parametrize("yields", [0, 1, 2, 3, 5])
async def test_a_dedicated_exchange_cut_short_never_hands_its_reply_to_the_next_call(
    redis: Redis, venue: str, yields: int
) -> None:
    async with _dedicated(redis, venue, "c1", "c2") as store:
        begin = asyncio.create_task(store.begin("desk-1", "Hall A", "c1"))
        for _ in range(yields):  # cut short before it is sent, while it is sent, while its reply is awaited
            await asyncio.sleep(0)
        begin.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await begin
        # Whatever the cancelled begin did in Redis, this reply is take's own, not begin's.
        assert await store.take("desk-2") == ("pool", "c2")


def test_a_queue_and_zone_printers_go_at_the_end_of_keys_and_argv() -> None:
    # prelude.lua reads them from there: queue_read (the job keys after the fixed keys, their number and ids after
    # the fixed ARGV) and zone_peers (four keys a printer at the very end of KEYS, its name at the end of ARGV).
    k = EncodedKeys(Keys("v"))
    me, held = k.printer("me"), b"h"
    zone_keys = [k.printer("p").health, k.printer("p").control, k.printer("p").queue, k.printer("p").inflight]
    _, keys, args = specs.HANDBACK.call(k, me, b"why", 9, 3000, [b"j1", b"j2"], ["p"])
    assert keys[4:] == [k.job(b"j1"), k.job(b"j2"), *zone_keys]
    assert args[3:] == [3000, 2, b"j1", b"j2", b"p"]
    _, keys, args = specs.DRAIN.call(k, me, "drain", b"ops", 9, 3000, [b"j1"], ["p"])
    assert keys[5:] == [k.job(b"j1"), *zone_keys] and args[4:] == [3000, 1, b"j1", b"p"]
    _, keys, args = specs.RECLAIM.call(k, me, 1, held, b"by", 9, 1, 3000, [b"j1"], ["p"])
    assert keys[9:] == [k.job(held), k.done(held), k.job(b"j1"), *zone_keys]
    assert args[6:] == [3000, 1, b"j1", b"p"]
    _, keys, args = specs.STEAL.call(k, me, k.printer("o"), b"j1", 1, 9, 3000, ["p"])
    assert keys[6:] == zone_keys and args[5:] == [3000, b"p"]
    _, keys, args = specs.RELEASE.call(k, me, b"j1", b"here", "failed", b"jam", 3, 9, 3000, ["p"])
    assert keys[9:] == zone_keys and args[7:] == [3000, b"p"]
