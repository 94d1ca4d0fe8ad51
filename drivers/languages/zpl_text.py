"""ZPL native text that no attendee field can escape from.

Every character of a field that is not plain printable ASCII, plus ``^``, ``~`` and the escape character itself,
goes out as ``_XX`` hex of its UTF-8 bytes under ``^FH_``; with ``^CI28`` the printer decodes them back to UTF-8.
So a name like ``^XZ^XA~JA`` is printed, never obeyed: ``~`` commands are acted on even inside field data, which
is why escaping (not stripping the caret alone) is the rule.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ESCAPE = "_"
PLACEHOLDERS = ("name", "company", "role", "attendee_id", "job_id")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_SAFE = {chr(c) for c in range(0x20, 0x7F)} - {"^", "~", ESCAPE}


def clean(text: str) -> str:
    """Control and format characters are never data a badge should carry: they become spaces."""
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text)


def escape_field(text: str) -> str:
    """Field data for ``^FH_^FD...^FS``: only safe ASCII stays literal."""
    out: list[str] = []
    for ch in clean(text):
        if ch in _SAFE:
            out.append(ch)
        else:
            out.extend(f"{ESCAPE}{byte:02X}" for byte in ch.encode("utf-8"))
    return "".join(out)


def unescape_field(data: bytes, escape: int = ord(ESCAPE)) -> str:
    """The printer's side of ``^FH``: used by the emulator to log what a native field printed."""
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == escape and re.fullmatch(rb"[0-9A-Fa-f]{2}", data[i + 1 : i + 3]):
            out.append(int(data[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(data[i])
            i += 1
    return out.decode("utf-8", "replace")


def font_covers(text: str) -> bool:
    """Whether a Zebra resident font (Latin code pages) can draw every character; else the badge is drawn as a
    graphic, because the printer would print a missing glyph as a space (a silently blank name)."""
    try:
        clean(text).encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def _fields(template: str) -> list[str]:
    """The template split into fields: each chunk runs from one ``^FS`` (or start) to the next."""
    return re.split(r"\^FS", template, flags=re.IGNORECASE)


def check_template(text: str) -> list[str]:
    """Problems that would let a field misprint or inject; empty when the template is safe."""
    problems: list[str] = []
    upper = text.upper()
    if "^XA" not in upper or "^XZ" not in upper:
        problems.append("a ZPL template needs ^XA ... ^XZ")
    if "^CI28" not in upper:
        problems.append("add ^CI28 (UTF-8) so names in any script print as sent")
    for chunk in _fields(text):
        names = _PLACEHOLDER.findall(chunk)
        if not names:
            continue
        head = chunk.upper()
        where = ", ".join("{" + n + "}" for n in names)
        fd = head.find("^FD")
        if fd < 0 or any(chunk.find("{" + n + "}") < fd for n in names):
            problems.append(f"{where} must be inside ^FD field data")
        if "^FH" + ESCAPE not in head[: max(fd, 0)] and "^FH^" not in head[: max(fd, 0)]:
            problems.append(f"the field with {where} needs ^FH_ before ^FD (field data is hex-escaped)")
        if "name" in names and "^FB" not in head and "^TB" not in head:
            problems.append("the {name} field needs ^FB (or ^TB) so a long name wraps instead of running off")
    unknown = set(re.findall(r"\{(\w+)\}", text)) - set(PLACEHOLDERS)
    if unknown:
        problems.append(f"unknown placeholder(s): {', '.join(sorted(unknown))}; use {', '.join(PLACEHOLDERS)}")
    return problems


def load_template(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    problems = check_template(text)
    if problems:
        raise ValueError(f"{path}: " + "; ".join(problems))
    return text


def fill_template(template: str, values: dict[str, str]) -> bytes:
    """Substitute escaped field data; everything else in the template is the venue's own, trusted ZPL."""
    return _PLACEHOLDER.sub(lambda m: escape_field(values.get(m.group(1), "")), template).encode("ascii")
