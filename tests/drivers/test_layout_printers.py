"""A badge from a layout through each printer language's real driver into its emulator, read back from the bytes
the emulator printed: the QR code decodes to the job's field, the band is black where the layout puts it, with
white text in it, and only for the ticket types it names."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
import zxingcpp
from PIL import Image

from drivers.base import Badge, Outcome
from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.core import EmulatedPrinter, Job
from drivers.emulators.escpos import EscposPrinter
from drivers.emulators.zpl import ZplPrinter
from drivers.languages.base import LanguageDriver
from drivers.languages.brother import BrotherDriver
from drivers.languages.escpos import EscposDriver
from drivers.languages.zpl import ZplDriver
from drivers.render.brother import decode_brother_raster
from drivers.render.escpos import decode_escpos_raster
from drivers.render.zpl import decode_zpl_graphics
from drivers.transports import TcpTransport
from layouts.draw import LayoutDraw
from layouts.files import load_layout
from tests.support.drivers import LABELS
from tests.support.layouts import BAND, SPEAKER, band_layout, write_logo

KINDS: dict[str, tuple[type[EmulatedPrinter], type[LanguageDriver], Any]] = {
    "zpl": (ZplPrinter, ZplDriver, decode_zpl_graphics),
    "brother_ql": (BrotherPrinter, BrotherDriver, decode_brother_raster),
    "escpos": (EscposPrinter, EscposDriver, decode_escpos_raster),
}


def keeping(kind: type[EmulatedPrinter]) -> EmulatedPrinter:
    """The emulator, keeping the bytes of every label it finished printing."""

    class Keeping(kind):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.kept: list[bytes] = []

        def on_complete(self, job: Job) -> None:
            super().on_complete(job)
            if not job.zero_time:
                self.kept.append(job.data)

    return Keeping("p1", print_time=0.05)  # type: ignore[no-any-return]


def band_black(image: Image.Image, width: float, height: float) -> tuple[float, float]:
    """(black share at the band's left end, black share of the band), for a label of ``width`` x ``height`` dots."""
    gray = image.convert("L")
    top, bottom = round(BAND[1] * height) + 3, round(BAND[3] * height) - 3
    left = next((x for x in range(gray.width) if gray.getpixel((x, (top + bottom) // 2)) == 0), 0)  # its edge
    end = gray.crop((left, top, left + round(0.02 * width), bottom)).histogram()
    band = gray.crop((0, top, gray.width, bottom)).histogram()
    return end[0] / sum(end), band[0] / sum(band)


@pytest.mark.parametrize("language", list(KINDS))
async def test_each_printer_prints_the_layout(serve, tmp_path: Path, language: str) -> None:
    label = LABELS[language]
    write_logo(tmp_path / "logo.png")
    layout_file = tmp_path / "band.yaml"
    inset = 2.0 if language == "brother_ql" else 0.0  # the QL's head does not reach the tape's edges
    layout_file.write_text(yaml.safe_dump(band_layout(label.width_mm, label.height_mm, inset)))
    emulator_kind, driver_kind, decode = KINDS[language]
    printer = keeping(emulator_kind)
    driver = driver_kind(await serve(printer, "tcp"), label=label, io_timeout=0.5, poll_interval=0.02)
    driver.draw = LayoutDraw(load_layout(layout_file))
    await driver.open()
    attendee = replace(SPEAKER, job_id="job-2", fields={"ticket_type": "Attendee", "seat": "A-7"})
    for badge in (SPEAKER, attendee):
        result = await driver.print(driver.render(badge), badge, timeout=5)
        assert result.outcome is Outcome.PRINTED, result
    await driver.aclose()

    speaker_bytes, attendee_bytes = printer.kept  # type: ignore[attr-defined]
    (speaker,) = decode(speaker_bytes)
    (plain,) = decode(attendee_bytes)
    dots_per_mm = label.dpi / 25.4
    drawn_w, drawn_h = label.width_mm * dots_per_mm, label.height_mm * dots_per_mm
    assert [r.text for r in zxingcpp.read_barcodes(speaker.convert("L"))] == ["S-12"]
    assert [r.text for r in zxingcpp.read_barcodes(plain.convert("L"))] == ["A-7"]
    end, band = band_black(speaker, drawn_w, drawn_h)
    assert end == 1.0 and 0.5 < band < 0.97, (end, band)  # black, with white letters in it
    assert band_black(plain, drawn_w, drawn_h) == (0.0, 0.0)  # no band for an attendee


def test_the_badge_a_layout_draws_is_not_the_built_in_one(tmp_path: Path) -> None:
    write_logo(tmp_path / "logo.png")
    (tmp_path / "band.yaml").write_text(yaml.safe_dump(band_layout()))
    driver = ZplDriver(TcpTransport("127.0.0.1", 9, 1.0, 1.0), label=LABELS["zpl"])  # drawing opens no link
    built_in = driver.render(Badge(job_id="j", attendee_id="A", name="Ada"))
    driver.draw = LayoutDraw(load_layout(tmp_path / "band.yaml"))
    assert driver.render(Badge(job_id="j", attendee_id="A", name="Ada")) != built_in
