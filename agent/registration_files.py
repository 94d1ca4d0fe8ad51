"""Registration exports as badge jobs: decoding what Excel saved, and mapping an export's columns to job fields.

Excel on Windows saves "CSV" in the machine's ANSI code page (Windows-1252 in Western Europe and the Americas),
"CSV UTF-8" with a byte-order mark, and "Unicode text" as UTF-16 with one. Without ``--encoding`` a file is read as
UTF-8 (a BOM is dropped) or UTF-16 (by its BOM), and else as Windows-1252 when it is not valid UTF-8; another code
page (1250 Central European, 1251 Cyrillic, ...) cannot be told apart from 1252 by its bytes: name it.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from agent.errors import UserError
from agent.jobs import FIELDS, Row

#: Column mappings of registration systems' CSV exports (their column names as the systems write them).
#: pretix: "Order data" export, sheet "Order positions" (one row per ticket); the ticket secret is what its QR code
#: carries. Eventbrite: the "Attendee Summary" report; "Barcode #" is the ticket's barcode.
PRESETS: dict[str, dict[str, str]] = {
    "pretix": {
        "job_id": "{Order code}-{Position ID}",
        "attendee_id": "{Ticket secret}",
        "name": "{Attendee name}",
        "company": "{Company}",
        "role": "{Product}",
    },
    "eventbrite": {
        "job_id": "{Barcode #}",
        "attendee_id": "{Barcode #}",
        "name": "{First Name} {Last Name}",
        "company": "{Company}",
        "role": "{Job Title}",
    },
}


def decode_export(data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """(text, the encoding used). A file that cannot be decoded raises UserError naming the line and the byte."""
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise UserError(f"--encoding: unknown encoding {encoding!r} (e.g. utf-8, cp1252, cp1250)") from None
        return _decode(data, encoding), encoding
    if data.startswith(codecs.BOM_UTF8):
        return _decode(data, "utf-8-sig"), "utf-8-sig"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _decode(data, "utf-16"), "utf-16"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return _decode(data, "cp1252"), "cp1252"


def _decode(data: bytes, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(
            f"line {line}: byte 0x{data[exc.start]:02x} is not valid {encoding}; "
            "give the file's encoding with --encoding (e.g. cp1252, cp1250, utf-8)"
        ) from None


_FIELD_RE = re.compile(r"^\s*([a-z_]+)\s*=(.*)$")
_COLUMN_RE = re.compile(r"\{([^{}]+)\}")  # not str.format: column names hold ":" and "!" ("Attendee name: Given")


@dataclass(frozen=True)
class ColumnMap:
    """Job field -> a template of the export's columns (``{First Name} {Last Name}``, or a bare column name)."""

    templates: Mapping[str, str]

    @classmethod
    def parse(cls, entries: list[str], preset: str | None) -> ColumnMap:
        templates = dict(PRESETS[preset]) if preset else {}
        for entry in entries:
            match = _FIELD_RE.match(entry)
            if not match:
                raise UserError(f"--map {entry!r}: expected FIELD=COLUMN or FIELD={{Column}} {{Other column}}")
            field, template = match.group(1), match.group(2).strip()
            if field not in FIELDS:
                raise UserError(f"--map {entry!r}: {field!r} is not a job field ({', '.join(FIELDS)})")
            templates[field] = template if "{" in template else "{" + template + "}"
        return cls(templates)

    def columns(self) -> set[str]:
        return {name for t in self.templates.values() for name in _COLUMN_RE.findall(t)}

    def check_header(self, header: list[str]) -> None:
        """Every mapped column must be in the file: a typo would otherwise give every badge an empty field."""
        missing = sorted(self.columns() - set(header))
        if missing:
            raise UserError(
                f"column(s) {', '.join(repr(m) for m in missing)} not in the file's header; it has: "
                + ", ".join(repr(h) for h in header)
            )

    def apply(self, row: dict[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for field, template in self.templates.items():
            filled = _COLUMN_RE.sub(lambda m: (row.get(m.group(1)) or "").strip(), template)
            value = " ".join(filled.split())  # "{First} {Last}" with an empty part: no stray space
            if value:
                out[field] = value
        return out


def mapped_rows(rows: Iterator[Row], mapping: ColumnMap) -> Iterator[Row]:
    """The rows with the mapping applied; the header is checked against it at the first row."""
    checked = False
    for number, row, error in rows:
        if row is not None and not checked:
            mapping.check_header(list(row))
            checked = True
        yield number, (mapping.apply(row) if row is not None else None), error
