"""Code 128 barcodes, drawn here: the symbology is one table of 107 patterns and a checksum (ISO/IEC 15417).

Code set C (two digits a symbol) when the data is an even number of digits, else code set B (printable ASCII).
Bars are whole dots wide, as the QR code's modules are: a resampled bar prints unevenly on a 203 dpi head.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from drivers.base import RenderError

# Bar/space widths in modules, bar first, for the symbol values 0-106 (106 is the stop, with its final bar).
# fmt: off
_PATTERNS = [
    "212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
    "221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
    "221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
    "212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
    "231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
    "231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
    "314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
    "112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
    "111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
    "214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
    "114131", "311141", "411131", "211412", "211214", "211232", "2331112",
]
# fmt: on
_START_B, _START_C, _STOP = 104, 105, 106
QUIET_ZONE = 10  # modules of white each side, as the standard asks


def symbol_values(data: str) -> list[int]:
    """Start, data, checksum and stop values. Raises RenderError for empty data or characters outside ASCII 32-126."""
    if not data:
        raise RenderError("barcode data is empty")
    if len(data) % 2 == 0 and data.isascii() and data.isdigit():
        values = [_START_C] + [int(data[i : i + 2]) for i in range(0, len(data), 2)]
    else:
        bad = next((c for c in data if not 32 <= ord(c) <= 126), None)
        if bad is not None:
            raise RenderError(f"barcode data {data!r} has {bad!r}: Code 128 carries printable ASCII only")
        values = [_START_B] + [ord(c) - 32 for c in data]
    checksum = (values[0] + sum(i * v for i, v in enumerate(values[1:], start=1))) % 103
    return [*values, checksum, _STOP]


def modules(data: str) -> list[int]:
    """The run widths (bar, space, bar, ...) of the whole symbol, in modules, without the quiet zones."""
    return [int(w) for value in symbol_values(data) for w in _PATTERNS[value]]


def barcode_mask(data: str, width: int, height: int, min_module: int) -> Image.Image:
    """The symbol as an ink mask ("L", 255 = bar), as wide as whole-dot modules allow within ``width``, centred.

    Raises:
        RenderError: the data cannot be encoded, or does not fit ``width`` with modules of ``min_module`` dots.
    """
    runs = modules(data)
    total = sum(runs) + 2 * QUIET_ZONE
    module = width // total
    if module < min_module:
        raise RenderError(
            f"barcode {data!r} needs {total * min_module} dots across; its area is {width} dots (make it wider)"
        )
    mask = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(mask)
    x = (width - total * module) // 2 + QUIET_ZONE * module
    for number, run in enumerate(runs):
        if number % 2 == 0:
            draw.rectangle((x, 0, x + run * module - 1, height - 1), fill=255)
        x += run * module
    return mask
