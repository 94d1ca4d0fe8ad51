"""What the drivers learn from the printer at open: an ESC/POS printer's model, firmware and paper width (GS I,
GS ( E fn=6) and a Zebra's print width and label length (SGD, ~HS), each against the config's label.

Paper narrower than an ESC/POS badge would crop it: refused (nothing sent, the job waits) until the printer
reports paper the badge fits. Any other difference is a warning naming both sizes, and badges print.
"""

from __future__ import annotations

import logging

import pytest

from drivers.base import DeviceState, Outcome
from drivers.emulators.escpos import EscposPrinter
from drivers.emulators.zpl import ZplPrinter
from drivers.label import LabelConfig
from drivers.languages import escpos_info as ei
from drivers.languages.escpos import EscposDriver
from drivers.languages.zpl import ZplDriver
from drivers.transports.base import Transport
from tests.support.drivers import BADGE, LABELS


async def _ask(link: Transport, question: bytes, within: float = 0.3) -> bytes:
    await link.write(question)
    return await link.read_until(lambda b: b.endswith(b"\x00"), within)


async def test_escpos_emulator_answers_printer_id_in_turn_like_a_tm(serve) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    link = await serve(printer, "tcp")
    await link.open()
    try:
        assert await _ask(link, ei.info_request(ei.MODEL)) == b"_TM-T88VI\x00"
        assert await _ask(link, ei.info_request(ei.SERIAL)) == b"_X5Y9012345\x00"
        assert await _ask(link, ei.PAPER_WIDTH_REQUEST) == b"\x37\x27\x33\x1f6\x00"  # code 6: 80 mm paper
        printer.set_fault("head_open")  # GS I is a buffered command: an offline printer answers once it is back
        assert await _ask(link, ei.info_request(ei.FIRMWARE)) == b""
        printer.set_fault(None)
        assert await link.read_until(lambda b: b.endswith(b"\x00"), 1.0) == b"_30.02 ESC/POS\x00"
        assert printer.log == []
    finally:
        await link.aclose()


@pytest.mark.parametrize("link", ["tcp", "serial", "usb"])
async def test_escpos_driver_reads_model_firmware_and_paper(serve, link: str) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    driver = EscposDriver(await serve(printer, link), label=LABELS["escpos"], io_timeout=0.5, poll_interval=0.02)
    await driver.open()
    try:
        assert driver.info == ei.PrinterInfo("TM-T88VI", "30.02 ESC/POS", "X5Y9012345", "EPSON", 80)
        assert driver.paper_refusal is None and printer.log == []  # asking printed nothing
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result
    finally:
        await driver.aclose()


async def test_escpos_paper_that_would_crop_the_badge_is_refused_until_it_fits(serve, caplog) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    printer.paper_mm = 58
    driver = EscposDriver(await serve(printer, "tcp"), label=LABELS["escpos"], io_timeout=0.5, poll_interval=0.02)
    with caplog.at_level(logging.WARNING, logger="drivers.languages.escpos"):
        await driver.open()
    try:
        why = "wrong paper: printer is set for 58 mm paper (48 mm printable), config expects 72 mm"
        assert why in caplog.text
        status = await driver.probe()
        assert status.state is DeviceState.MEDIA_OUT and status.reasons[0].startswith(why), status
        result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
        assert (result.outcome, result.sent) == (Outcome.FAILED, False) and why in result.reason, result
        assert printer.log == []
        printer.paper_mm = 80  # the crew set the printer for the event's paper
        assert (await driver.probe()).state is DeviceState.READY
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result
        assert len(printer.printed()) == 1
    finally:
        await driver.aclose()


async def test_escpos_paper_wider_than_the_badge_is_a_warning_and_prints(serve, caplog) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    narrow = LabelConfig(width_mm=48, height_mm=60, dpi=203)
    driver = EscposDriver(await serve(printer, "tcp"), label=narrow, io_timeout=0.5, poll_interval=0.02)
    with caplog.at_level(logging.WARNING, logger="drivers.languages.escpos"):
        await driver.open()
    try:
        assert "paper wider than the badge: printer is set for 80 mm paper (72 mm printable), config expects 48 mm" in (
            caplog.text
        )
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result
    finally:
        await driver.aclose()


async def test_escpos_clone_without_printer_id_prints_and_checks_nothing(serve) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    printer.info, printer.paper_mm = None, None  # answers neither GS I nor GS ( E
    driver = EscposDriver(await serve(printer, "tcp"), label=LABELS["escpos"], io_timeout=0.3, poll_interval=0.02)
    await driver.open()
    try:
        assert driver.info == ei.PrinterInfo() and driver.paper_refusal is None
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result
    finally:
        await driver.aclose()


async def test_escpos_opened_while_offline_checks_the_paper_before_the_first_badge(serve) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    printer.paper_mm = 58
    printer.set_fault("head_open")
    driver = EscposDriver(await serve(printer, "tcp"), label=LABELS["escpos"], io_timeout=0.5, poll_interval=0.02)
    await driver.open()
    try:
        assert driver.info is None  # an offline printer answers GS I only later: not asked
        printer.set_fault(None)
        result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
        assert (result.outcome, result.sent) == (Outcome.FAILED, False) and "wrong paper" in result.reason, result
        assert driver.info is not None and driver.info.paper_mm == 58 and printer.log == []
    finally:
        await driver.aclose()


@pytest.mark.parametrize("link", ["tcp", "serial", "usb"])
async def test_zpl_driver_warns_when_the_loaded_stock_differs(serve, link: str, caplog) -> None:
    printer = ZplPrinter("p1", print_time=0.05)
    printer.print_width, printer.label_length = 448, 1218  # 2.2 in wide stock, 6 in long; the config says 4x6
    driver = ZplDriver(await serve(printer, link), label=LABELS["zpl"], io_timeout=0.5, poll_interval=0.02)
    with caplog.at_level(logging.WARNING, logger="drivers.languages.zpl_media"):
        await driver.open()
    try:
        assert (
            "loaded stock differs from the config: printer reports print width x label length 448 x 1218 dots "
            "(56.1 x 152.4 mm), config expects 812 x 1218 dots (101.6 x 152.4 mm) at 203 dpi"
        ) in caplog.text
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result  # a warning: the crew may calibrate after the start
    finally:
        await driver.aclose()


async def test_zpl_driver_is_quiet_when_the_stock_matches_and_checks_length_without_sgd(serve, caplog) -> None:
    printer = ZplPrinter("p1", print_time=0.05)
    driver = ZplDriver(await serve(printer, "tcp"), label=LABELS["zpl"], io_timeout=0.5, poll_interval=0.02)
    with caplog.at_level(logging.WARNING, logger="drivers.languages.zpl_media"):
        await driver.open()
        await driver.aclose()
        assert caplog.text == ""
        old = ZplPrinter("p2", print_time=0.05, label_counter=False)  # no SGD: the width cannot be asked
        old.label_length, old.print_width = 406, 448  # 2 in labels
        driver = ZplDriver(await serve(old, "tcp"), label=LABELS["zpl"], io_timeout=0.5, poll_interval=0.02)
        await driver.open()
        await driver.aclose()
    assert "printer reports print width x label length ? x 406 dots (? x 50.8 mm)" in caplog.text


def _recording_draw(labels: list[LabelConfig]):  # type: ignore[no-untyped-def]
    """A layout's ``draw`` as the agent sets it, keeping the label each badge is drawn for."""
    from drivers.render import render_badge

    def draw(badge, label):  # type: ignore[no-untyped-def]
        labels.append(label)
        return render_badge(badge, label)

    return draw


async def test_zpl_reported_stock_is_what_a_layout_draws_for(serve) -> None:
    printer = ZplPrinter("p1", print_time=0.05)
    printer.print_width, printer.label_length = 448, 1218
    driver = ZplDriver(await serve(printer, "tcp"), label=LABELS["zpl"], io_timeout=0.5, poll_interval=0.02)
    await driver.open()
    try:
        assert driver.loaded == LabelConfig(width_mm=56.1, height_mm=152.4, dpi=203)
        driver.render(BADGE)
        labels: list[LabelConfig] = []
        driver.draw = _recording_draw(labels)
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result
        assert labels == [driver.loaded]
    finally:
        await driver.aclose()


async def test_escpos_reported_paper_is_what_a_layout_draws_for_and_it_judges_the_width(serve) -> None:
    printer = EscposPrinter("p1", print_time=0.05)
    printer.paper_mm = 58
    driver = EscposDriver(await serve(printer, "tcp"), label=LABELS["escpos"], io_timeout=0.5, poll_interval=0.02)
    await driver.open()
    try:
        assert driver.loaded == LabelConfig(width_mm=48, height_mm=100, dpi=203)
        assert (await driver.probe()).state is DeviceState.MEDIA_OUT  # the built-in design would be cropped
        labels: list[LabelConfig] = []
        driver.draw = _recording_draw(labels)  # the venue's layouts draw: their variant is for 48 mm
        assert (await driver.probe()).state is DeviceState.READY
        result = await driver.print(driver.render(BADGE), BADGE, timeout=3)
        assert result.outcome is Outcome.PRINTED, result
        assert labels == [driver.loaded] and len(printer.printed()) == 1
    finally:
        await driver.aclose()
