"""Badges back to back: what the printer said as one came out stands in for asking before the next
(``LanguageDriver.settle``), and the proof that the next one printed is as strong as when it is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from drivers.base import Badge, Outcome
from drivers.emulators import EMULATORS
from drivers.languages import LANGUAGES
from drivers.languages import base as language_base
from drivers.languages import brother_status as bs
from tests.support.drivers import BADGE, LABELS
from tests.support.waiting import wait_until

SETTLING = ["zpl", "brother_ql"]
#: What each language asks before a badge when nothing settled stands in for it.
PRE_CHECK = {"zpl": b"~HS", "brother_ql": b"\x1biS"}
SECOND = Badge(job_id="job-2", attendee_id="ATT-0002", name="Grace Hopper", company="Navy", role="Speaker")


async def _setup(serve: Any, kind: str, link: str = "tcp", print_time: float = 0.05) -> tuple[Any, Any]:
    printer = EMULATORS[kind]("p1", print_time=print_time)
    transport = await serve(printer, link)
    driver = LANGUAGES[kind](transport, label=LABELS[kind], io_timeout=0.3, poll_interval=0.02)
    await driver.open()
    return printer, driver


def asked_before(printer: Any, kind: str, mark: int, data: bytes) -> bool:
    """Did the driver send its pre-send query between ``mark`` and the badge ``data``?"""
    start = printer.received.find(data, mark)
    assert start >= 0, "the badge never reached the printer"
    return PRE_CHECK[kind] in printer.received[mark:start]


async def _first_badge(printer: Any, driver: Any) -> int:
    result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
    assert result.outcome is Outcome.PRINTED, result
    return len(printer.received)


@pytest.mark.parametrize("kind", SETTLING)
@pytest.mark.parametrize("link", ["tcp", "serial"])
async def test_the_next_badge_goes_without_asking_again_and_is_still_proven(serve, kind: str, link: str) -> None:
    printer, driver = await _setup(serve, kind, link)
    mark = await _first_badge(printer, driver)
    data = driver.render(SECOND)
    result = await driver.print(data, SECOND, timeout=3)
    assert result.outcome is Outcome.PRINTED, result
    assert not asked_before(printer, kind, mark, data)
    assert len(printer.printed()) == 2
    await driver.aclose()


@pytest.mark.parametrize("kind", SETTLING)
async def test_after_a_probe_or_a_pause_the_printer_is_asked_again(serve, kind: str, monkeypatch) -> None:
    printer, driver = await _setup(serve, kind)
    mark = await _first_badge(printer, driver)
    await driver.probe()  # someone else spoke to the printer in between
    mark = len(printer.received)
    data = driver.render(SECOND)
    assert (await driver.print(data, SECOND, timeout=3)).outcome is Outcome.PRINTED
    assert asked_before(printer, kind, mark, data)

    monkeypatch.setattr(language_base, "SETTLED_FOR", 0.05)
    mark = await _first_badge(printer, driver)
    await asyncio.sleep(0.1)  # longer than what settled stands for: the printer may have changed meanwhile
    data = driver.render(SECOND)
    assert (await driver.print(data, SECOND, timeout=3)).outcome is Outcome.PRINTED
    assert asked_before(printer, kind, mark, data)
    await driver.aclose()


@pytest.mark.parametrize("kind", SETTLING)
async def test_a_badge_the_printer_never_prints_is_not_confirmed_by_the_settled_counter(serve, kind: str) -> None:
    """The printer takes the next badge's bytes but nothing comes out (and, for a Zebra, nothing is counted)."""
    printer, driver = await _setup(serve, kind)
    await _first_badge(printer, driver)
    printer.enqueue = lambda job: None  # the badge vanishes inside the printer
    result = await driver.print(driver.render(SECOND), SECOND, timeout=1)
    assert result.outcome is Outcome.UNKNOWN, result
    assert len(printer.printed()) == 1
    await driver.aclose()


async def test_zpl_label_not_counted_after_a_settled_check_is_unknown(serve) -> None:
    printer, driver = await _setup(serve, "zpl")
    await _first_badge(printer, driver)
    printer.on_complete = lambda job: None  # type: ignore[method-assign]  # out, but the counter stays
    result = await driver.print(driver.render(SECOND), SECOND, timeout=3)
    assert result.outcome is Outcome.UNKNOWN, result
    assert "counter did not move" in result.reason
    await driver.aclose()


@pytest.mark.parametrize("kind", SETTLING)
async def test_a_stale_reply_waiting_in_the_input_does_not_confirm_the_next_badge(serve, kind: str) -> None:
    """A late answer sits in the link when the next badge goes: a counter far ahead (Zebra), or a "printing
    completed" notice (Brother QL). The badge itself never prints: the answer must not pass for its proof."""
    printer, driver = await _setup(serve, kind)
    await _first_badge(printer, driver)
    if kind == "zpl":
        printer.send(b'"999"')
    else:
        printer.send(bs.format_status(status_type=bs.TYPE_COMPLETED, media_type=0x0A, media_width_mm=62))
    await asyncio.sleep(0.05)  # it has arrived
    printer.enqueue = lambda job: None
    result = await driver.print(driver.render(SECOND), SECOND, timeout=1)
    assert result.outcome is Outcome.UNKNOWN, result
    await driver.aclose()


@pytest.mark.parametrize("kind", SETTLING)
async def test_printer_out_of_labels_between_badges_fails_the_next_and_prints_nothing(serve, kind: str) -> None:
    """The roll ends after a badge came out: the next badge goes on the settled status, the printer holds it, and
    the driver cancels it: ``failed``, and nothing comes out when the roll is replaced."""
    printer, driver = await _setup(serve, kind)
    await _first_badge(printer, driver)
    printer.set_fault("media_out")
    result = await driver.print(driver.render(SECOND), SECOND, timeout=3)
    assert result.outcome is Outcome.FAILED, result
    printer.set_fault(None)
    await asyncio.sleep(0.3)
    assert len(printer.printed()) == 1
    assert [e for e in printer.log if not e["complete"]] == []
    await driver.aclose()


@pytest.mark.parametrize("kind", SETTLING)
@pytest.mark.parametrize("fault", ["jam", "media_out"])
async def test_fault_in_the_middle_of_the_next_badge_is_unknown(serve, kind: str, fault: str) -> None:
    printer, driver = await _setup(serve, kind, print_time=0.4)
    await _first_badge(printer, driver)
    job = asyncio.create_task(driver.print(driver.render(SECOND), SECOND, timeout=5))
    await wait_until(lambda: printer.printing is not None)
    printer.set_fault(fault)
    result = await job
    assert result.outcome is Outcome.UNKNOWN, result
    await driver.cancel()
    printer.set_fault(None)
    await asyncio.sleep(0.6)
    assert len(printer.printed()) == 1, "the interrupted badge must not come out after the fault clears"
    await driver.aclose()
