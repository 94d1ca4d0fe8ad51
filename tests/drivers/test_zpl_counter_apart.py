"""A Zebra that answers its label counter asked alone but not after ``~HS`` in the same write: the first combined
query that times out is noticed, and from then on the two are asked apart, so badges do not each wait
``io_timeout``."""

from __future__ import annotations

import time
from typing import Any

from drivers.base import Badge, Outcome
from drivers.emulators.zpl import ZplPrinter
from drivers.languages import LANGUAGES
from drivers.languages import zpl_status as zs
from tests.support.drivers import LABELS

IO_TIMEOUT = 2.0
COMBINED = zs.HOST_STATUS + zs.LABEL_COUNTER


def _badge(n: int) -> Badge:
    return Badge(job_id=f"job-{n}", attendee_id=f"ATT-{n:04d}", name=f"Guest {n}", company="", role="")


async def test_after_one_timed_out_combined_query_the_badges_print_at_their_normal_pace(serve: Any) -> None:
    printer = ZplPrinter("p1", print_time=0.05, counter_after_status=False)
    driver = LANGUAGES["zpl"](
        await serve(printer, "tcp"), label=LABELS["zpl"], io_timeout=IO_TIMEOUT, poll_interval=0.02
    )
    await driver.open()
    assert driver.has_label_counter  # asked alone at open, the counter answers

    first = await driver.print(driver.render(_badge(1)), _badge(1), timeout=10)
    assert first.outcome is Outcome.PRINTED, first
    assert driver.counter_apart  # the combined query's silence was noticed
    assert printer.counters_dropped == 1

    started = time.monotonic()
    for n in range(2, 5):
        result = await driver.print(driver.render(_badge(n)), _badge(n), timeout=10)
        assert result.outcome is Outcome.PRINTED and "label counter" in result.reason, result
    took = time.monotonic() - started
    assert printer.counters_dropped == 1  # never asked together again
    # Asked together, each badge waited IO_TIMEOUT at least once (on today's main: twice); apart, three badges of
    # 0.05 s take a fraction of one.
    assert took < IO_TIMEOUT, f"3 badges took {took:.2f} s"
    assert len(printer.printed()) == 4
    await driver.aclose()


async def test_a_printer_that_answers_both_together_keeps_one_query(serve: Any) -> None:
    printer = ZplPrinter("p1", print_time=0.05)
    driver = LANGUAGES["zpl"](
        await serve(printer, "tcp"), label=LABELS["zpl"], io_timeout=IO_TIMEOUT, poll_interval=0.02
    )
    await driver.open()
    for n in range(1, 3):
        result = await driver.print(driver.render(_badge(n)), _badge(n), timeout=10)
        assert result.outcome is Outcome.PRINTED, result
    assert not driver.counter_apart  # one combined query a poll, as before
    await driver.aclose()
