"""Two hosts on one networked printer (an agent beside `badge-agent test-print`, a probe beside a print): what the
printer says about a job reaches the host that sent it, and a status reply the host that asked for it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from drivers.base import Badge, Outcome
from drivers.emulators import EMULATORS
from drivers.languages import LANGUAGES
from tests.support.drivers import BADGE, LABELS

OTHER = Badge(job_id="job-2", attendee_id="ATT-0002", name="Grace Hopper", company="Navy", role="Speaker")


async def _driver(serve: Any, printer: Any, kind: str) -> Any:
    driver = LANGUAGES[kind](await serve(printer, "tcp"), label=LABELS[kind], io_timeout=0.3, poll_interval=0.02)
    await driver.open()
    return driver


@pytest.mark.parametrize("kind", ["brother_ql", "escpos"])
async def test_a_probe_from_another_host_does_not_take_the_printing_hosts_notices(serve, kind: str) -> None:
    printer = EMULATORS[kind]("p1", print_time=0.3)
    printing, probing = await _driver(serve, printer, kind), await _driver(serve, printer, kind)
    try:
        job = asyncio.create_task(printing.print(printing.render(BADGE), BADGE, timeout=3))
        # The other host asks for the status while the badge prints, as an idle agent's health probe does.
        while not job.done():
            await probing.probe()
            await asyncio.sleep(0.02)
        assert job.result().outcome is Outcome.PRINTED, job.result()
        assert len(printer.printed()) == 1
    finally:
        await printing.aclose()
        await probing.aclose()


async def test_badges_from_two_hosts_are_each_confirmed_to_their_own_host(serve) -> None:
    printer = EMULATORS["brother_ql"]("p1", print_time=0.1)
    one, two = await _driver(serve, printer, "brother_ql"), await _driver(serve, printer, "brother_ql")
    try:
        for _ in range(3):
            first = await one.print(one.render(BADGE), BADGE, timeout=3)
            second = await two.print(two.render(OTHER), OTHER, timeout=3)
            assert (first.outcome, second.outcome) == (Outcome.PRINTED, Outcome.PRINTED), (first, second)
        assert len(printer.printed()) == 6
    finally:
        await one.aclose()
        await two.aclose()
