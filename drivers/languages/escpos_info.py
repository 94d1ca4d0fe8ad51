"""What an ESC/POS printer says about itself (Epson ESC/POS Application Programming Guide):

* ``GS I n`` (transmit printer ID), n = 65 firmware version, 66 maker, 67 model, 68 serial number: each answered
  ``5F <text> 00``. Clones often answer only some of them, or none.
* ``GS ( E`` fn=6 a=3 (transmit the customized value "paper width"): ``37 27 "3" 1F <value as decimal digits>
  00``; the value is a code (Epson TM-T88 and TM-T20 series: 2 = 58 mm paper, 6 = 80 mm). Entering "user setting
  mode" first would reset the printer when it ends, so it is asked as is: a printer that answers it only in that
  mode stays silent, and the width is then not checked.

Both are ordinary buffered commands, not real-time ones: an offline printer answers them once it is back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

#: ``ask(question, complete, timeout)``: write the question, return what came back once ``complete`` held or the
#: timeout passed (detect/identify.py and the driver build one over their link).
Ask = Callable[[bytes, Callable[[bytes], bool], float], Awaitable[bytes]]

FIRMWARE, MAKER, MODEL, SERIAL = 65, 66, 67, 68
INFO_HEADER = 0x5F
PAPER_WIDTH_REQUEST = b"\x1d\x28\x45\x02\x00\x06\x03"
_PAPER_WIDTH_HEADER = b"\x37\x27\x33\x1f"

#: Paper width code -> paper width in mm (GS ( E fn=5/6, a=3).
PAPER_CODES = {2: 58, 3: 60, 4: 70, 5: 76, 6: 80}
#: Paper width -> the width a receipt head prints on it (mm): 576 dots of 80 mm paper, 384 of 58 mm at 203 dpi.
_PRINTABLE = {80: 72, 58: 48}


def info_request(n: int) -> bytes:
    return b"\x1d\x49" + bytes([n])


def info_complete(buf: bytes) -> bool:
    start = buf.find(bytes([INFO_HEADER]))
    return start >= 0 and b"\x00" in buf[start:]


def parse_info(buf: bytes) -> str:
    """The text of one ``GS I`` 65-69 answer. Raises ValueError for anything else."""
    start = buf.find(bytes([INFO_HEADER]))
    end = buf.find(b"\x00", start + 1)
    if start < 0 or end < 0:
        raise ValueError(f"not a GS I printer-information answer: {buf[:16].hex(' ')}")
    return buf[start + 1 : end].decode("ascii", "replace").strip()


def format_info(text: str) -> bytes:
    """A printer's answer to ``GS I`` 65-69 (the emulator's side)."""
    return bytes([INFO_HEADER]) + text.encode("ascii") + b"\x00"


def paper_width_complete(buf: bytes) -> bool:
    start = buf.find(_PAPER_WIDTH_HEADER)
    return start >= 0 and b"\x00" in buf[start:]


def parse_paper_width(buf: bytes) -> int:
    """The paper width in mm from a ``GS ( E`` fn=6 a=3 answer. Raises ValueError for anything else."""
    start = buf.find(_PAPER_WIDTH_HEADER)
    end = buf.find(b"\x00", start + len(_PAPER_WIDTH_HEADER))
    if start < 0 or end < 0:
        raise ValueError("no paper-width answer")
    digits = buf[start + len(_PAPER_WIDTH_HEADER) : end]
    if not digits.isdigit() or int(digits) not in PAPER_CODES:
        raise ValueError(f"unknown paper width code {digits!r}")
    return PAPER_CODES[int(digits)]


def format_paper_width(paper_mm: int) -> bytes:
    """The answer of a printer set for ``paper_mm`` paper (the emulator's side)."""
    code = next(c for c, mm in PAPER_CODES.items() if mm == paper_mm)
    return _PAPER_WIDTH_HEADER + str(code).encode() + b"\x00"


def printable_mm(paper_mm: int) -> int:
    return _PRINTABLE.get(paper_mm, paper_mm - 8)


@dataclass(frozen=True)
class PaperCheck:
    """How the configured badge width compares with the paper the printer is set for."""

    crops: bool  # the badge is wider than the printer prints: refused, never printed cropped
    message: str


def check_paper(paper_mm: int, configured_mm: float) -> PaperCheck | None:
    """None when the badge fits the paper (within 1 mm); else what differs, in the words staff act on."""
    printable = printable_mm(paper_mm)
    if abs(printable - configured_mm) <= 1:
        return None
    loaded = f"printer is set for {paper_mm} mm paper ({printable} mm printable), config expects {configured_mm:g} mm"
    if configured_mm > printable:
        return PaperCheck(True, f"wrong paper: {loaded}; the badge would be cropped")
    return PaperCheck(False, f"paper wider than the badge: {loaded}; badges print {configured_mm:g} mm wide")


@dataclass(frozen=True)
class PrinterInfo:
    model: str = ""
    firmware: str = ""
    serial_number: str = ""
    maker: str = ""
    paper_mm: int | None = None


async def read_info(ask: Ask, timeout: float) -> PrinterInfo:
    """Model, firmware, serial number, maker and paper width, each as far as the printer answers."""
    texts: dict[int, str] = {}
    for n in (MODEL, FIRMWARE, SERIAL, MAKER):
        try:
            texts[n] = parse_info(await ask(info_request(n), info_complete, timeout))
        except ValueError:
            if n == MODEL:
                break  # a printer without GS I answers none of them: do not wait for each in turn
    try:
        paper: int | None = parse_paper_width(await ask(PAPER_WIDTH_REQUEST, paper_width_complete, timeout))
    except ValueError:
        paper = None
    return PrinterInfo(
        texts.get(MODEL, ""), texts.get(FIRMWARE, ""), texts.get(SERIAL, ""), texts.get(MAKER, ""), paper
    )
