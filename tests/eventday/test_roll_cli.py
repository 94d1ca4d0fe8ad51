"""``badge-agent roll PRINTER --labels N`` end to end: the mark it leaves, and one clear message for bad input."""

from __future__ import annotations

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from eventday.counts import event_day
from protocol.store import Store
from tests.eventday.test_counts import print_one
from tests.support.agents import add
from tests.support.processes import cli


async def test_roll_marks_a_new_roll_and_labels_left_count_down_from_it(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    await store.beat("desk-1", {"state": "ready", "location": "Desk 1"}, 60_000, first=True)
    done = cli(redis_server, venue, "roll", "desk-1", "--labels", "300")
    assert done.returncode == 0 and "new roll of 300 labels marked" in done.stdout, done
    await print_one(store, "desk-1", await add(store, "a", "desk-1"))
    (printer,) = (await event_day(redis, venue)).printers
    assert (printer.labels_left, printer.labels_source) == (299, "roll")
    for args, words in (
        (("nope", "--labels", "300"), "no printer named 'nope'"),
        (("desk-1", "--labels", "0"), "--labels must be between 1 and 100000, not 0"),
        (("desk-1", "--labels", "many"), "'many' is not a valid integer"),
    ):
        bad = cli(redis_server, venue, "roll", *args)
        assert bad.returncode == 2 and words in bad.stderr and "Traceback" not in bad.stderr, bad
