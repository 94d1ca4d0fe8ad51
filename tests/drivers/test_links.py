"""Every language over every link a venue uses, against the emulators, with real bytes end to end."""

from __future__ import annotations

import asyncio

import pytest

from drivers.base import DeviceState, Outcome
from drivers.emulators import EMULATORS
from drivers.languages import LANGUAGES
from tests.support.drivers import BADGE, LABELS, LINKS, language_of


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("language", ["zpl", "brother_ql", "escpos", "dymo", "dymo550", "tspl"])
async def test_badge_prints_and_scans(serve, language: str, link: str) -> None:
    printer = EMULATORS[language]("p1", print_time=0.05)
    transport = await serve(printer, link)
    driver = LANGUAGES[language_of(language)](
        transport, printer_name="p1", label=LABELS[language], io_timeout=0.5, poll_interval=0.02
    )
    async with driver:
        assert (await driver.probe()).state is DeviceState.READY
        result = await driver.print(driver.render(BADGE), BADGE, timeout=5)
        assert result.outcome is Outcome.PRINTED, result
    [entry] = printer.printed()
    assert entry["attendee_id"] == BADGE.attendee_id  # zxing-cpp read the QR code back from the printed graphic
    if language == "zpl":
        assert entry["job"] == BADGE.job_id


@pytest.mark.parametrize("link", LINKS)
async def test_power_off_is_offline_then_failed(serve, link: str) -> None:
    printer = EMULATORS["zpl"]("p1", print_time=0.05)
    transport = await serve(printer, link)
    driver = LANGUAGES["zpl"](transport, io_timeout=0.3, poll_interval=0.02)
    async with driver:
        printer.set_fault("power_off")
        await asyncio.sleep(0.1)
        status = await driver.probe()
        assert status.state in (DeviceState.OFFLINE, DeviceState.UNKNOWN)
        assert not status.ready
        result = await driver.print(b"^XA^FDx^FS^XZ", BADGE, timeout=1)
        assert result.outcome is Outcome.FAILED
    assert printer.printed() == []
