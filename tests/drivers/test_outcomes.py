"""Faults before and during a job give the right tri-state outcome; cancel keeps a recovered printer from
printing a badge that was handed on."""

from __future__ import annotations

import asyncio

import pytest

from drivers.base import Outcome
from drivers.emulators import EMULATORS
from drivers.languages import LANGUAGES
from tests.support.drivers import BADGE, LABELS, language_of
from tests.support.waiting import wait_until

KINDS = ["zpl", "brother_ql", "escpos", "dymo", "dymo550", "tspl"]


async def _setup(serve, kind: str, link: str = "tcp", print_time: float = 0.3):
    printer = EMULATORS[kind]("p1", print_time=print_time)
    transport = await serve(printer, link)
    driver = LANGUAGES[language_of(kind)](transport, label=LABELS[kind], io_timeout=0.3, poll_interval=0.02)
    await driver.open()
    return printer, driver


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", ["media_out", "head_open", "jam", "paused"])
async def test_fault_before_sending_fails_without_sending(serve, kind: str, fault: str) -> None:
    printer, driver = await _setup(serve, kind)
    printer.set_fault(fault)
    result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
    assert result.outcome is Outcome.FAILED, result
    printer.set_fault(None)
    await asyncio.sleep(0.5)
    assert printer.printed() == [] and printer.log == []
    await driver.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_no_answer_fails_before_sending(serve, kind: str) -> None:
    printer, driver = await _setup(serve, kind)
    printer.set_fault("no_answer")
    result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
    assert result.outcome is Outcome.FAILED
    assert "no status reply" in result.reason
    await driver.aclose()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("link", ["tcp", "serial", "usb"])
async def test_fault_mid_print_is_unknown_and_cancel_prevents_reprint(serve, kind: str, link: str) -> None:
    printer, driver = await _setup(serve, kind, link, print_time=0.6)
    job = asyncio.create_task(driver.print(driver.render(BADGE), BADGE, timeout=5))
    await wait_until(lambda: printer.printing is not None)
    printer.set_fault("head_open")
    result = await job
    assert result.outcome is Outcome.UNKNOWN, result
    await wait_until(lambda: printer.log != [])  # the engine notices the fault at its next look (drivers/emulators)
    assert [e["complete"] for e in printer.log] == [False]  # half a badge came out
    await driver.cancel()  # what the agent does before the job leaves this printer
    printer.set_fault(None)  # head closed again
    await asyncio.sleep(1.0)  # the behaviour under test: nothing comes out in a second of the engine looking again
    assert printer.printed() == [], "a cancelled badge must not come out when the fault clears"
    await driver.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_without_cancel_the_recovered_printer_would_print(serve, kind: str) -> None:
    """The reason cancel exists: a job the printer holds comes out when the fault clears (Brother drops it)."""
    printer, driver = await _setup(serve, kind, print_time=0.05)
    data = driver.render(BADGE)
    await driver.aclose()
    printer.set_fault("media_out")
    printer.receive(data, lambda _: None)
    await asyncio.sleep(0.1)
    printer.set_fault(None)
    await wait_until(lambda: len(printer.printed()) == 1)


@pytest.mark.parametrize("kind", KINDS)
async def test_cancel_clears_a_job_held_by_a_faulted_printer(serve, kind: str) -> None:
    printer, driver = await _setup(serve, kind, print_time=0.05)
    printer.set_fault("media_out")
    printer.receive(driver.render(BADGE), lambda _: None)  # a badge sent earlier waits for paper
    await driver.cancel()
    printer.set_fault(None)  # paper reloaded
    await asyncio.sleep(0.4)
    assert printer.printed() == []
    await driver.aclose()


async def test_zpl_fault_before_the_label_started_is_failed_after_cancel(serve) -> None:
    printer, driver = await _setup(serve, "zpl", print_time=0.3)
    printer.set_fault("paused")
    printer.set_fault(None)
    # The fault strikes between the status check and the print: the format waits in the buffer.
    original = printer.enqueue

    def enqueue_then_pause(job):  # type: ignore[no-untyped-def]
        original(job)
        printer.set_fault("media_out")

    printer.enqueue = enqueue_then_pause  # type: ignore[method-assign]
    result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
    assert result.outcome is Outcome.FAILED, result
    assert printer.buffer == []
    printer.set_fault(None)
    await asyncio.sleep(0.4)
    assert printer.log == []
    await driver.aclose()


async def test_zpl_power_off_mid_print_is_unknown(serve) -> None:
    printer, driver = await _setup(serve, "zpl", print_time=0.6)
    job = asyncio.create_task(driver.print(driver.render(BADGE), BADGE, timeout=3))
    await wait_until(lambda: printer.printing is not None)
    printer.set_fault("power_off")
    assert (await job).outcome is Outcome.UNKNOWN
    await driver.aclose()


async def test_zpl_counter_that_does_not_move_is_unknown(serve) -> None:
    printer, driver = await _setup(serve, "zpl", print_time=0.05)
    printer.on_complete = lambda job: None  # type: ignore[method-assign]  # a label that never counted
    result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
    assert result.outcome is Outcome.UNKNOWN
    await driver.aclose()


async def test_zpl_without_label_counter_relies_on_the_buffer(serve) -> None:
    printer = EMULATORS["zpl"]("p1", print_time=0.05, label_counter=False)  # type: ignore[call-arg]
    transport = await serve(printer, "tcp")
    driver = LANGUAGES["zpl"](transport, io_timeout=0.3, poll_interval=0.02)
    async with driver:
        assert driver.has_label_counter is False  # type: ignore[attr-defined]
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
    assert result.outcome is Outcome.PRINTED
    assert "drained" in result.reason
