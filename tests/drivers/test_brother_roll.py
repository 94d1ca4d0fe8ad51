"""The Brother driver checks the loaded roll against the config before every badge: a wrong roll sends nothing
(the readiness check reports it, so the agent leaves the job queued) and the badge prints once the right roll is in."""

from __future__ import annotations

import pytest

from drivers.base import DeviceState, Outcome
from drivers.emulators.brother import BrotherPrinter
from drivers.label import LabelConfig
from drivers.languages.brother import BrotherDriver
from tests.support.drivers import BADGE, LABELS


@pytest.mark.parametrize("link", ["tcp", "serial", "usb"])
async def test_a_wrong_roll_is_refused_and_the_right_one_prints(serve, link: str) -> None:
    printer = BrotherPrinter("p1", print_time=0.1)
    driver = BrotherDriver(await serve(printer, link), label=LABELS["brother_ql"], io_timeout=0.3, poll_interval=0.02)
    await driver.open()
    printer.roll = (29, False, 0)
    status = await driver.probe()
    assert status.state is DeviceState.MEDIA_OUT
    assert status.reasons == ("wrong roll: loaded 29 mm endless, config expects 62 mm endless",)
    result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
    assert (result.outcome, result.sent) == (Outcome.FAILED, False), result
    assert "loaded 29 mm endless, config expects 62 mm endless" in result.reason
    assert printer.log == []
    printer.roll = (62, False, 0)
    assert (await driver.probe()).state is DeviceState.READY
    result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
    assert result.outcome is Outcome.PRINTED, result
    assert len(printer.printed()) == 1
    await driver.aclose()


async def test_die_cut_stock_wants_die_cut_labels_of_its_length(serve) -> None:
    printer = BrotherPrinter("p1", print_time=0.1)
    label = LabelConfig(width_mm=62, height_mm=100, dpi=300, die_cut=True)
    driver = BrotherDriver(await serve(printer, "tcp"), label=label, io_timeout=0.3, model="QL-700")
    await driver.open()
    assert (await driver.probe()).reasons == ("wrong roll: loaded 62 mm endless, config expects 62x100 mm die-cut",)
    printer.roll = (62, True, 29)
    assert (await driver.probe()).reasons == ("wrong roll: loaded 62x29 mm die-cut, config expects 62x100 mm die-cut",)
    printer.roll = (62, True, 100)
    result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
    assert result.outcome is Outcome.PRINTED, result
    (page,) = [e for e in printer.printed()]
    assert page["complete"]
    await driver.aclose()
