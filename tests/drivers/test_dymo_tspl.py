"""DYMO LabelWriter and TSPL: the emulators held to what others wrote (DYMO's CUPS filter, the manuals' bytes),
and the drivers' outcomes, faults and noise against the emulators."""

from __future__ import annotations

import asyncio
import os
import struct
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageOps

from drivers.base import DeviceState, DeviceStatus, Outcome
from drivers.emulators import EMULATORS
from drivers.emulators.dymo import Dymo550Printer, DymoPrinter
from drivers.emulators.fronts import TcpFront
from drivers.emulators.tspl import TsplPrinter
from drivers.languages import dymo_status as ds
from drivers.languages import tspl_status as ts
from drivers.languages.dymo import DymoDriver
from drivers.languages.tspl import TsplDriver
from drivers.render import render_badge
from drivers.render.dymo import decode_dymo_4xx, encode_dymo_4xx
from drivers.render.tspl import decode_tspl, encode_tspl
from drivers.transports import TcpTransport
from protocol.state import Snapshot
from tests.support.drivers import BADGE, LABELS
from tests.support.waiting import wait_until

FILTER = Path("/usr/lib/cups/filter/raster2dymolw")  # Debian's printer-driver-dymo (scripts/setup --dev installs it)
DRIVER = Path("/usr/lib/cups/driver/dymo")


def _ink(image: Image.Image) -> Image.Image:
    """The image cropped to its black dots, so two placements of the same badge compare equal."""
    box = ImageOps.invert(image.convert("L")).getbbox()
    assert box is not None
    return image.convert("1").crop(box)


def cups_raster(image: Image.Image, dpi: int = 300) -> bytes:
    """A CUPS raster (v3, uncompressed) of a mode "1" image: one page, 1 bit per dot, colour space K (1 = black).

    The header is cups_page_header2_t as cups/raster.h lays it out; the sync word is written in this machine's
    byte order, as cupsRasterWriteHeader does.
    """
    header = bytearray(1796)
    width, height = image.width, image.height
    points = (round(width * 72 / dpi), round(height * 72 / dpi))
    struct.pack_into("=II", header, 276, dpi, dpi)  # HWResolution
    struct.pack_into("=II", header, 352, *points)  # PageSize
    struct.pack_into("=III", header, 372, width, height, 0)  # cupsWidth, cupsHeight, cupsMediaType
    struct.pack_into("=III", header, 384, 1, 1, (width + 7) // 8)  # bits per colour, bits per pixel, bytes per line
    struct.pack_into("=III", header, 396, 0, 3, 0)  # chunky, CUPS_CSPACE_K, compression
    struct.pack_into("=I", header, 420, 1)  # cupsNumColors
    struct.pack_into("=ff", header, 428, *map(float, points))  # cupsPageSize
    rows = image.convert("1").tobytes().translate(bytes(255 - i for i in range(256)))  # Pillow: 1 = white
    return struct.pack("=I", 0x52615333) + bytes(header) + rows


def test_cups_filter_output_prints_on_the_emulator_as_the_badge(tmp_path: Path) -> None:
    """DYMO's own filter (raster2dymolw) turns a CUPS raster of the badge into 4xx raster; the emulator reads that
    job back to the same badge as it reads the driver's own job, and the QR code scans."""
    assert FILTER.exists(), "apt-get install printer-driver-dymo (scripts/setup --dev)"
    image = render_badge(BADGE, LABELS["dymo"])
    (tmp_path / "badge.ras").write_bytes(cups_raster(image))
    ppd = tmp_path / "lw450.ppd"
    ppd.write_bytes(subprocess.run([str(DRIVER), "cat", "dymo:0/cups/model/lw450.ppd"], capture_output=True).stdout)
    # A network DEVICE_URI turns off the filter's USB language monitor, which would wait for status on fd 3.
    env = {**os.environ, "PPD": str(ppd), "DEVICE_URI": "socket://127.0.0.1:9100"}
    out = subprocess.run(
        [str(FILTER), "1", "user", "badge", "1", "", str(tmp_path / "badge.ras")],
        capture_output=True,
        env=env,
        timeout=60,
        check=True,
    ).stdout
    assert out.startswith(b"\x1b" * 85) and out.endswith(b"\x1bE")
    [theirs] = decode_dymo_4xx(out)
    [ours] = decode_dymo_4xx(encode_dymo_4xx(image))
    assert _ink(theirs).tobytes() == _ink(ours).tobytes() == _ink(image).tobytes()

    async def print_it() -> list[dict[str, object]]:
        printer = DymoPrinter("cups", print_time=0.01)
        await printer.start()
        printer.receive(out, lambda _: None)
        await wait_until(lambda: printer.printed() != [])
        await printer.stop()
        return printer.printed()

    [entry] = asyncio.run(print_it())
    assert entry["attendee_id"] == BADGE.attendee_id


def test_dymo_4xx_status_byte_as_the_manual_gives_it() -> None:
    """LabelWriter 400 Series Technical Reference Manual, "The Status Byte": bit 0 ready (always 1), bit 1 top of
    form, bit 5 out of paper, bit 6 paper jam, bit 7 error ("also sent when an out of paper condition is
    detected")."""
    assert ds.parse_4xx(0x03).state is DeviceState.READY and ds.parse_4xx(0x03).detail["top_of_form"] is True
    assert ds.parse_4xx(0x01).detail["top_of_form"] is False
    assert ds.parse_4xx(0xA1).state is DeviceState.MEDIA_OUT
    assert ds.parse_4xx(0xC1).state is DeviceState.JAM
    assert ds.parse_4xx(0x81).state is DeviceState.ERROR
    assert ds.format_4xx("media_out", True) == 0xA1 and ds.format_4xx(None, True) == 0x03


def test_tspl_bytes_as_tscs_manual_quotes_them() -> None:
    """TSC TSPL/TSPL2 Programming Manual. "<ESC>!?" is 1B 21 3F; its reply, "Status Polling Commands (RS-232)":
    00 Normal, 01 Head opened, 02 Paper Jam, 04 Out of paper, 08 Out of ribbon, 10 Pause, 20 Printing,
    05 Out of paper and head opened. The label commands: "SIZE m mm,n mm", "GAP m mm,n mm", "CLS",
    "BITMAP X,Y,width,height,mode,bitmap data", "PRINT m", each ended by CR LF ("CR,LF (ASCII 13),(ASCII 10) denotes
    end of command line")."""
    assert bytes.fromhex("1B 21 3F") == ts.STATUS_REQUEST
    table = {
        0x00: DeviceState.READY,
        0x01: DeviceState.HEAD_OPEN,
        0x02: DeviceState.JAM,
        0x04: DeviceState.MEDIA_OUT,
        0x08: DeviceState.RIBBON_OUT,
        0x10: DeviceState.PAUSED,
        0x20: DeviceState.PRINTING,
    }
    for byte, state in table.items():
        assert ts.parse_status(byte).state is state, hex(byte)
    assert set(ts.parse_status(0x05).reasons) == {"print head open", "out of labels"}
    for fault, byte in {"head_open": 0x01, "jam": 0x02, "media_out": 0x04, "ribbon_out": 0x08, "paused": 0x10}.items():
        assert ts.format_status(fault, False) == byte
    job = encode_tspl(Image.new("1", (16, 2), 1), width_mm=50, height_mm=30, gap_mm=2)
    assert job.startswith(b"SIZE 50 mm,30 mm\r\nGAP 2 mm,0 mm\r\n")
    assert b"\r\nCLS\r\nBITMAP 0,0,2,2,0," in job and job.endswith(b"\r\nPRINT 1\r\n")
    # 0 bits print (a white badge is all ones), as the manual's BITMAP data is read
    assert job[job.index(b"0,0,2,2,0,") + 10 :][:4] == b"\xff\xff\xff\xff"


def test_tspl_round_trip() -> None:
    image = render_badge(BADGE, LABELS["tspl"])
    label = LABELS["tspl"]
    job = encode_tspl(image, width_mm=label.width_mm, height_mm=label.height_mm, gap_mm=label.gap_mm)
    [back] = decode_tspl(job)
    assert _ink(back).tobytes() == _ink(image).tobytes()


async def _driver(serve, kind: str, print_time: float = 0.05, link: str = "tcp"):  # type: ignore[no-untyped-def]
    printer = EMULATORS[kind]("desk-7", print_time=print_time)
    transport = await serve(printer, link)
    cls = TsplDriver if kind == "tspl" else DymoDriver
    driver = cls(transport, printer_name="desk-7", label=LABELS[kind], io_timeout=0.3, poll_interval=0.02)
    await driver.open()
    return printer, driver


@pytest.mark.parametrize("kind", ["dymo", "dymo550", "tspl"])
async def test_paper_out_mid_label_is_unknown_and_holds_the_printer_until_reloaded(serve, kind: str) -> None:
    printer, driver = await _driver(serve, kind, print_time=0.6)
    job = asyncio.create_task(driver.print(driver.render(BADGE), BADGE, timeout=5))
    await wait_until(lambda: printer.printing is not None)
    printer.set_fault("media_out")
    result = await job
    assert result.outcome is Outcome.UNKNOWN and "media_out" in result.reason, result
    assert (await driver.probe()).state is DeviceState.MEDIA_OUT  # the agent takes no badge while this lasts
    refused = await driver.print(driver.render(BADGE), BADGE, timeout=2)
    assert refused.outcome is Outcome.FAILED and not refused.sent
    printer.set_fault(None)  # reloaded
    assert (await driver.probe()).state is DeviceState.READY
    assert (await driver.print(driver.render(BADGE), BADGE, timeout=5)).outcome is Outcome.PRINTED
    assert [e["complete"] for e in printer.log] == [False, True]  # the interrupted badge never came out later
    await driver.aclose()


@pytest.mark.parametrize(("kind", "junk"), [("dymo", b"HELLO\r\n"), ("dymo", b"\x00"), ("tspl", b"OK\r\n")])
async def test_noise_for_a_status_is_a_fault_naming_the_printer(kind: str, junk: bytes) -> None:
    async def chatter(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            writer.write(junk)
        writer.close()

    server = await asyncio.start_server(chatter, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    cls = TsplDriver if kind == "tspl" else DymoDriver
    driver = cls(TcpTransport("127.0.0.1", port, 1.0, 0.3), printer_name="desk-9", label=LABELS[kind], io_timeout=0.3)
    try:
        await driver.open()
        status = await driver.probe()
        assert status.state is DeviceState.ERROR and "desk-9 answered" in status.reasons[0], status
        result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
        assert result.outcome is Outcome.FAILED and not result.sent and "desk-9" in result.reason
    finally:
        await driver.aclose()
        server.close()


async def test_dymo_550_reports_labels_left_and_refuses_to_print_on_a_roll_it_refuses(serve) -> None:
    printer, driver = await _driver(serve, "dymo550")
    assert isinstance(printer, Dymo550Printer)
    assert driver.generation == "550"  # learnt from the length of its status reply: no model configured
    printer.labels_remaining = 40
    assert (await driver.print(driver.render(BADGE), BADGE, timeout=5)).outcome is Outcome.PRINTED
    status = await driver.probe()
    assert status.detail["labels_remaining"] == 39
    snap = Snapshot("desk-7", "v", "", "1", status, False, True, None, 1, False, False, None, True, None, None)
    assert snap.health()["labels_remaining"] == 39
    printer.refused_roll = True
    status = await driver.probe()
    assert status.state is DeviceState.MEDIA_OUT and "roll refused" in status.reasons[0]
    result = await driver.print(driver.render(BADGE), BADGE, timeout=2)
    assert result.outcome is Outcome.FAILED and not result.sent
    await driver.aclose()


def test_health_has_no_labels_left_where_the_printer_does_not_count_them() -> None:
    status = DeviceStatus(DeviceState.READY, (), {"status_byte": "0x03"})
    snap = Snapshot("p", "v", "", "1", status, False, True, None, 0, False, False, None, True, None, None)
    assert "labels_remaining" not in snap.health()


def test_dymo_model_from_usb_product_id_and_config() -> None:
    link = TcpTransport("127.0.0.1", 9, 1.0, 1.0)
    assert DymoDriver(link, product_id=0x0020).model == ds.MODELS["LabelWriter 450"]
    xl = DymoDriver(link, model="5XL")
    assert xl.generation == "550" and xl.head_dots == 1248
    assert DymoDriver(link, product_id=0x7777).generation is None  # learnt from its status at open
    with pytest.raises(ValueError, match="unknown DYMO model"):
        ds.model_named("LabelWriter 999")


async def test_tspl_model_read_at_open(serve) -> None:
    printer, driver = await _driver(serve, "tspl")
    assert isinstance(printer, TsplPrinter) and isinstance(driver, TsplDriver)
    assert driver.model == "TDP-247"
    await driver.aclose()


async def test_sim_command_serves_the_new_kinds(tmp_path: Path) -> None:
    for kind in ("dymo", "dymo550", "tspl"):
        printer = EMULATORS[kind](kind, print_time=0.01, print_log=tmp_path / f"{kind}.jsonl")
        await printer.start()
        front = TcpFront(printer, "127.0.0.1", 0)
        host, port = await front.start()
        cls = TsplDriver if kind == "tspl" else DymoDriver
        driver = cls(TcpTransport(host, port, 1.0, 1.0), label=LABELS[kind], io_timeout=1.0)
        async with driver:
            assert (await driver.print(driver.render(BADGE), BADGE, timeout=5)).outcome is Outcome.PRINTED
        await front.stop()
        await printer.stop()
        assert BADGE.attendee_id in (tmp_path / f"{kind}.jsonl").read_text()
    assert isinstance(EMULATORS["dymo"]("x"), DymoPrinter)


def test_status_shows_the_labels_left_where_the_printer_counts_them() -> None:
    from rich.console import Console

    from cli.commands.status import fleet_table
    from protocol.fleet import FleetView, PrinterView

    view = FleetView("v", 0, 0, 0, [PrinterView("desk-7", "ready", labels_remaining=39), PrinterView("z", "ready")], {})
    console = Console(width=200, record=True)
    console.print(fleet_table(view))
    text = console.export_text()
    assert "39 labels left" in text and text.count("labels left") == 1
