"""test-print prints one confirmed badge through the real driver; preview writes the bitmap the driver sends."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from PIL import Image

from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.fronts import TcpFront

CONFIG = """
venue: expo-2026
printer:
  name: hall-b-2
  location: Hall B
  driver: {{language: brother_ql, transport: tcp, host: {host}, port: {port}, model: QL-820NWB,
            label: {{width_mm: 62, height_mm: 100, dpi: 300}}}}
"""


async def _cli(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def test_test_print_confirms_the_badge_and_a_wrong_roll_is_named(tmp_path: Path) -> None:
    printer = BrotherPrinter("p1", print_time=0.1)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    config = tmp_path / "hall-b-2.yaml"
    config.write_text(CONFIG.format(host=host, port=port), encoding="utf-8")
    try:
        printer.roll = (29, False, 0)
        code, out = await _cli("test-print", "-c", str(config), "--timeout", "5")
        assert code == 74 and "loaded 29 mm endless, config expects 62 mm endless" in out, out
        assert printer.log == []
        printer.roll = (62, False, 0)
        code, out = await _cli("test-print", "-c", str(config), "--timeout", "5")
        assert code == 0 and "test badge: printed (printer reported printing completed)" in out, out
        assert len(printer.printed()) == 1
    finally:
        await front.stop()
        await printer.stop()


async def test_preview_writes_the_raster_the_printer_would_get(tmp_path: Path) -> None:
    config = tmp_path / "a.yaml"
    config.write_text(CONFIG.format(host="127.0.0.1", port=9), encoding="utf-8")
    out = tmp_path / "badge.png"
    code, text = await _cli("preview", "-c", str(config), "--name", "Ada Lovelace", "-o", str(out))
    assert code == 0, text
    image = Image.open(out)
    assert image.width == 90 * 8 and abs(image.height - 1181) < 8  # the QL-820NWB head; 100 mm at 300 dpi
    assert image.convert("L").getextrema() == (0, 255)  # ink and paper
    wide = config.read_text().replace("width_mm: 62", "width_mm: 102").replace("QL-820NWB", "QL-1100")
    config.write_text(wide, encoding="utf-8")
    code, text = await _cli("preview", "-c", str(config), "--name", "Ada", "-o", str(out))
    assert code == 0 and Image.open(out).width == 162 * 8, text  # the QL-1100's wider head
    config.write_text(wide.replace("QL-1100", "QL-700"), encoding="utf-8")
    code, text = await _cli("preview", "-c", str(config), "--name", "Ada", "-o", str(out))
    assert code == 78 and "QL-700 cannot print 102 mm labels" in text, text


async def test_preview_of_a_cp1252_export_through_the_reader_enqueue_uses(tmp_path: Path) -> None:
    from tests.support.attendee_files import PRETIX

    config = tmp_path / "a.yaml"
    config.write_text(CONFIG.format(host="127.0.0.1", port=9), encoding="utf-8")
    export = tmp_path / "pretix.csv"
    export.write_bytes(PRETIX.encode("cp1252"))  # Excel in Europe: cp1252 and ";"
    out = tmp_path / "badge.png"
    code, text = await _cli("preview", "-c", str(config), "--file", str(export), "--preset", "pretix", "-o", str(out))
    assert code == 0 and "Traceback" not in text, text
    # Two badges; the third row has no name and is named as skipped.
    assert (tmp_path / "badge-1.png").exists() and (tmp_path / "badge-2.png").exists()
    assert "row 4: skipped: name is required" in text
