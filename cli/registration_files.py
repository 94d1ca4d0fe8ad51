"""Registration exports as badge jobs: the one reader of attendee files (``enqueue --file``, ``preview --file``,
``attendees import``): CSV with ``,`` ``;`` or tab, JSON lines, XLSX; decoding what Excel saved; mapping an export's
columns to job fields.

Excel in most of continental Europe saves "CSV" with ``;`` (the list separator where ``,`` is the decimal comma);
the delimiter is the one of ``,`` ``;`` and tab the header row has most of, unless ``--delimiter`` says.

Excel on Windows saves "CSV" in the machine's ANSI code page (Windows-1252 in Western Europe and the Americas),
"CSV UTF-8" with a byte-order mark, and "Unicode text" as UTF-16 with one. Without ``--encoding`` a file is read as
UTF-8 (a BOM is dropped) or UTF-16 (by its BOM), and else as Windows-1252 when it is not valid UTF-8; another code
page (1250 Central European, 1251 Cyrillic, ...) cannot be told apart from 1252 by its bytes: name it.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import UserError
from protocol.jobs import FIELDS, Row, read_rows, sniff_format

#: Column mappings of registration systems' exports (their column names as the systems write them).
#: pretix: "Order data" export, sheet "Order positions" (one row per ticket); the ticket secret is what its QR code
#: carries. Eventbrite: the "Attendee Summary" report; "Barcode #" is the ticket's barcode. A target that is not a
#: job's own field goes into the job's ``fields`` (``ticket_type`` here, for a layout's band); ``order_code`` and
#: ``email`` are for the attendee list only (found by a help desk's search, never printed).
PRESETS: dict[str, dict[str, str]] = {
    "pretix": {
        "job_id": "{Order code}-{Position ID}",
        "attendee_id": "{Ticket secret}",
        "name": "{Attendee name}",
        "company": "{Company}",
        "role": "{Product}",
        "ticket_type": "{Product}",
        "order_code": "{Order code}",
        "email": "{Email}",
    },
    "eventbrite": {
        "job_id": "{Barcode #}",
        "attendee_id": "{Barcode #}",
        "name": "{First Name} {Last Name}",
        "company": "{Company}",
        "role": "{Job Title}",
        "ticket_type": "{Ticket Type}",
        "order_code": "{Order #}",
        "email": "{Email}",
    },
}
#: Targets that describe the attendee rather than the badge: kept on the attendee list, left out of a job.
LIST_ONLY = ("order_code", "email")


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


_FIELD_RE = re.compile(r"^\s*([A-Za-z0-9_.]+)\s*=(.*)$")
_TARGET = re.compile(r"[a-z0-9_]{1,40}")
_COLUMN_RE = re.compile(r"\{([^{}]+)\}")  # not str.format: column names hold ":" and "!" ("Attendee name: Given")


@dataclass(frozen=True)
class ColumnMap:
    """Target -> a template of the export's columns (``{First Name} {Last Name}``, or a bare column name).

    A target is a job's own field (``name``, ``job_id``, ...), else one of the event's ``fields`` (``ticket_type``);
    for the attendee list, also ``order_code`` and ``email``.
    """

    templates: Mapping[str, str]
    for_list: bool = False

    @classmethod
    def parse(cls, entries: list[str] | tuple[str, ...], preset: str | None, for_list: bool = False) -> ColumnMap:
        templates = dict(PRESETS[preset]) if preset else {}
        if not for_list:
            for target in LIST_ONLY:
                templates.pop(target, None)
        for entry in entries:
            match = _FIELD_RE.match(entry)
            if not match:
                raise UserError(f"--map {entry!r}: expected FIELD=COLUMN or FIELD={{Column}} {{Other column}}")
            target, template = match.group(1).removeprefix("fields."), match.group(2).strip()
            if not _TARGET.fullmatch(target):
                raise UserError(
                    f"--map {entry!r}: {target!r} is neither a job field ({', '.join(FIELDS)}) nor a name for the "
                    "badge's own fields (1-40 of a-z, 0-9 and _)"
                )
            if target in ("fields", "printer"):
                raise UserError(f"--map {entry!r}: {target!r} cannot come from a column")
            if not template:
                raise UserError(f"--map {entry!r}: no column given")
            templates[target] = template if "{" in template else "{" + template + "}"
        return cls(templates, for_list)

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

    def apply(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row as a job (plus ``order_code`` and ``email`` for the list): other targets go into ``fields``."""
        out: dict[str, Any] = {}
        extra: dict[str, str] = {}
        for target, template in self.templates.items():
            filled = _COLUMN_RE.sub(lambda m: _cell(row.get(m.group(1))), template)
            value = " ".join(filled.split())  # "{First} {Last}" with an empty part: no stray space
            if not value:
                continue
            if target in FIELDS or (self.for_list and target in LIST_ONLY):
                out[target] = value
            else:
                extra[target] = value
        if extra:
            out["fields"] = extra
        return out


def _cell(value: object) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else str(value)


def mapped_rows(rows: Iterator[Row], mapping: ColumnMap) -> Iterator[Row]:
    """The rows with the mapping applied; the header is checked against it at the first row."""
    checked = False
    for number, row, error in rows:
        if row is not None and not checked:
            mapping.check_header(list(row))
            checked = True
        yield number, (mapping.apply(row) if row is not None else None), error


DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
XLSX_MAGIC = b"PK\x03\x04"
#: One row of a list is a few short fields; a row past this is a broken file (an unclosed quote swallowing the
#: rest), reported by its number rather than read.
MAX_ROW_CHARS = 64 * 1024


@dataclass
class Export:
    """An attendee file, read: its rows (mapped when a mapping was given), how many, and how it was read."""

    rows: Iterator[Row]
    total: int
    #: ``xlsx``, or the text encoding used.
    encoding: str
    #: ``csv``, ``jsonl`` or ``xlsx``.
    format: str
    delimiter: str | None = None

    def describe(self) -> str:
        if self.format == "xlsx":
            return "XLSX"
        if self.format == "csv" and self.delimiter is not None:
            return f"CSV ({DELIMITERS.get(self.delimiter, repr(self.delimiter))}-separated, {self.encoding})"
        return f"{self.format.upper()} ({self.encoding})"


def read_export(
    data: bytes,
    name: str = "-",
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    fmt: str = "auto",
    mapping: ColumnMap | None = None,
) -> Export:
    """The one reader of attendee files: JSON lines, CSV (``,`` ``;`` or tab, sniffed), XLSX.

    Raises UserError for a file that cannot be read at all (its encoding, an unknown delimiter, a mapped column
    missing from the header: named). A bad row is a row with an error, reported by its number, never fatal.
    """
    if fmt == "xlsx" or (fmt == "auto" and (data.startswith(XLSX_MAGIC) or name.lower().endswith(".xlsx"))):
        rows, total = _xlsx_rows(data, mapping)
        export = Export(rows, total, "xlsx", "xlsx")
    else:
        text, used = decode_export(data, encoding)
        chosen = sniff_format(name, text[:200]) if fmt == "auto" else fmt
        lines = text.splitlines(keepends=True)
        total = max(0, len([line for line in lines if line.strip()]) - (1 if chosen == "csv" else 0))
        if chosen == "csv":
            sep = _delimiter(lines, delimiter)
            export = Export(_csv_rows(lines, sep), total, used, "csv", sep)
        else:
            export = Export(read_rows(lines, chosen), total, used, chosen)
    if mapping is not None:
        export.rows = mapped_rows(export.rows, mapping)
    return export


def _delimiter(lines: list[str], given: str | None) -> str:
    """The given delimiter (``,``, ``;``, ``tab`` or ``\\t``), else the one of ``,`` ``;`` and tab the header has most
    of (a header of one column has none: ``,``)."""
    if given is not None:
        sep = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";"}.get(given, given)
        if sep not in DELIMITERS:
            raise UserError(f"--delimiter: {given!r} is not one of , ; tab")
        return sep
    header = next((line for line in lines if line.strip()), "")
    counts = {sep: header.count(sep) for sep in DELIMITERS}
    best = max(counts, key=lambda sep: counts[sep])
    return best if counts[best] else ","


def _csv_rows(lines: list[str], sep: str) -> Iterator[Row]:
    csv.field_size_limit(MAX_ROW_CHARS)
    reader = csv.reader(lines, delimiter=sep)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        return
    except csv.Error as exc:
        raise UserError(f"row 1 (the header): {exc}") from None
    number = 1
    while True:
        number += 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a cell past MAX_ROW_CHARS: an unclosed quote, or not a list at all
            yield number, None, f"cannot be read: {exc}"
            return
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header):
            yield number, None, "row has more cells than the header"
            continue
        yield number, dict(zip(header, cells, strict=False)), ""


def _xlsx_rows(data: bytes, mapping: ColumnMap | None) -> tuple[Iterator[Row], int]:
    """The rows of the workbook's sheet that has the mapped columns (pretix's "Order data" has several sheets; the
    one of order positions is the list), else its first sheet. Numbers are the sheet's row numbers."""
    import zipfile

    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, OSError, KeyError, ValueError) as exc:
        raise UserError(f"not a readable XLSX workbook: {exc}") from None
    wanted = mapping.columns() if mapping is not None else {"attendee_id", "name"}
    chosen = None
    for sheet in book.worksheets:
        first = next(sheet.iter_rows(max_row=1, values_only=True), ())
        header = [_cell(h) for h in first]
        if chosen is None or wanted <= set(header):
            chosen, chosen_header = sheet, header
            if wanted <= set(header):
                break
    if chosen is None:
        raise UserError("the workbook has no sheet")
    total = max(0, (chosen.max_row or 1) - 1)

    def rows() -> Iterator[Row]:
        for number, values in enumerate(chosen.iter_rows(min_row=2, values_only=True), start=2):
            cells = [_xlsx_cell(v) for v in values]
            if not any(cells):
                continue
            if any(cells[len(chosen_header) :]):
                yield number, None, "row has more cells than the header"
                continue
            yield number, dict(zip(chosen_header, cells, strict=False)), ""
        book.close()

    return rows(), total


def _xlsx_cell(value: object) -> str:
    """A cell as the CSV export would have written it: whole numbers without ``.0``, dates in ISO form."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return str(value).strip()
