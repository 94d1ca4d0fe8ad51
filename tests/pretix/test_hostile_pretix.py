"""A pretix that misbehaves cannot keep the sync reading for ever, fill its memory or stop it being stopped.

A fake server (tests/pretix/hostile.py) stands at the ``--pretix`` address: pages that link back to themselves or to
a page already read, pages that never end, a count past any event, an answer that never comes. Each ends with one
line naming what pretix did and exit 69 (pretix fails on its side); SIGTERM and Ctrl-C stop a read wherever it is
within 5 s, exit 0. The commands run as the service runs them, in a process of their own, measured as the kernel
counts them (the peak resident size of that process).
"""

from __future__ import annotations

import asyncio
import re

import pytest

from pretix_sync.client import MAX_DOWNLOAD, MAX_RESULTS, PretixClient
from pretix_sync.errors import PretixConfigError, PretixError, PretixMisbehaves, ReadStopped
from tests.pretix.hostile import LIST_ID, Scenario, Served, hostile_pretix


def client(url: str, **kwargs: object) -> PretixClient:
    return PretixClient(url, "org", "ev", "hostile-test-token", attempts=1, **kwargs)  # type: ignore[arg-type]


async def read_all(c: PretixClient) -> int:
    n = 0
    async with c:
        async for _ in c.checkin_list_positions(LIST_ID):
            n += 1
    return n


async def refused(scenario: Scenario, **kwargs: object) -> tuple[PretixError, Served]:
    """The error that ends a read of the check-in list on a fake answering as ``scenario`` says, and what it served."""
    with hostile_pretix(scenario) as (url, served):
        with pytest.raises(PretixError) as caught:
            await read_all(client(url, **kwargs))
        return caught.value, served


# -- the client, in this process ---------------------------------------------------------------------------------


async def test_a_page_linked_to_itself_ends_the_read_naming_it() -> None:
    error, served = await refused(Scenario(count=120, loop="same"))
    assert isinstance(error, PretixMisbehaves)
    assert error.exit_code == 69
    assert "a page already read" in str(error) and "a loop" in str(error)
    assert f"/api/v1/organizers/org/events/ev/checkinlists/{LIST_ID}/positions/?page_size=50)" in str(error)
    assert served.pages == 1


async def test_a_page_linked_back_to_an_earlier_one_ends_the_read() -> None:
    error, served = await refused(Scenario(count=500, loop="back"))
    assert isinstance(error, PretixMisbehaves)
    assert re.search(r"links page 3 of .* to a page already read \(http.*\?page=2&page_size=50\)", str(error))
    assert served.pages == 3


async def test_pages_past_twice_the_announced_count_end_the_read_naming_the_count() -> None:
    error, served = await refused(Scenario(count=120))  # a new page every time, for ever
    assert isinstance(error, PretixMisbehaves)
    assert "first page announced 120" in str(error)
    assert "250 result(s) in 5 page(s)" in str(error)  # past twice 120: the page that went over
    assert "fails on its side" in str(error)
    assert served.pages == 5


async def test_a_count_over_the_cap_is_refused_before_reading_on() -> None:
    error, served = await refused(Scenario(count=10**9))
    assert isinstance(error, PretixMisbehaves)
    assert f"announces 1000000000 the positions of check-in list {LIST_ID}" in str(error)
    assert f"more than the {MAX_RESULTS} one listing may hold" in str(error)
    assert served.pages == 1


async def test_the_cap_holds_when_twice_the_count_is_over_it() -> None:
    error, served = await refused(Scenario(count=800), max_results=1000)
    assert isinstance(error, PretixMisbehaves)
    assert "1050 result(s) in 21 page(s) after its first page announced 800" in str(error)
    assert "more than the 1000 result(s) in 22 page(s)" in str(error)
    assert served.pages == 21


async def test_an_answer_over_20_mb_is_still_cut() -> None:
    error, _ = await refused(Scenario(count=1, positions=1, pad=MAX_DOWNLOAD + 1))
    assert isinstance(error, PretixConfigError)
    assert "is larger than 20 MB" in str(error)


async def test_an_honest_list_of_many_pages_is_read_whole() -> None:
    with hostile_pretix(Scenario(count=1234, positions=1234)) as (url, served):
        assert await read_all(client(url)) == 1234
    assert served.pages == 25


async def test_a_stop_is_seen_before_the_next_page() -> None:
    stop = asyncio.Event()
    with hostile_pretix(Scenario(count=100_000, positions=100_000)) as (url, served):
        async with client(url, stop=stop) as c:
            n = 0
            with pytest.raises(ReadStopped):
                async for _ in c.checkin_list_positions(LIST_ID):
                    n += 1
                    if n == 120:
                        stop.set()
    assert n == 150  # the rest of the page under way, no page more
    assert served.pages == 3
