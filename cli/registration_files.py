"""Registration exports as badge jobs: the one reader of attendee files (``enqueue --file``, ``preview --file``,
``layout preview --file``, ``attendees import``): CSV with ``,`` ``;`` or tab, JSON lines, XLSX; decoding what Excel
saved; mapping an export's columns to job fields (``--map``, and the presets: which of a registration system's
exports a file is, its header says); finding names Excel saved without their letters.

Excel in most of continental Europe saves "CSV" with ``;`` (the list separator where ``,`` is the decimal comma);
the delimiter is the one of ``,`` ``;`` and tab the header row has most of, unless ``--delimiter`` says.

Excel on Windows saves "CSV" in the machine's ANSI code page (Windows-1252 in Western Europe and the Americas),
"CSV UTF-8" with a byte-order mark, and "Unicode text" as UTF-16 with one. Without ``--encoding`` a file is read as
UTF-8 (a BOM is dropped) or UTF-16 (by its BOM), and else as Windows-1252 when it is not valid UTF-8; another code
page (1250 Central European, 1251 Cyrillic, ...) cannot be told apart from 1252 by its bytes: name it.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from cli.file_bounds import MAX_ROWS, check_xlsx, seekable, text_encoding, text_lines, too_many_rows
from core.errors import UserError
from protocol.jobs import FIELDS, Row, read_rows, sniff_format

_FIELD_RE = re.compile(r"^\s*([A-Za-z0-9_.]+)\s*=(.*)$")
_TARGET = re.compile(r"[a-z0-9_]{1,40}")
_COLUMN_RE = re.compile(r"\{([^{}]+)\}")  # not str.format: column names hold ":" and "!" ("Attendee name: Given")


@dataclass(frozen=True)
class Variant:
    """One attendee export of a registration system: the columns that tell it apart (``marks``), and where each
    field is. A target's templates are alternatives, the first that fills wins (pretix writes the attendee's e-mail,
    else only the buyer's). ``names``: where the name is, as (whole name, given name, family name) columns, the first
    source that names anyone wins, its parts with it (pretix's invoice name stands in for an attendee without one,
    as its own check-in list does). Columns other than the marks may be missing (pretix writes name parts only for
    events whose name scheme has them): read as empty."""

    preset: str
    label: str
    marks: frozenset[str]
    templates: Mapping[str, tuple[str, ...]]
    names: tuple[tuple[str, str, str], ...] = ()

    def columns(self) -> set[str]:
        named = {column for source in self.names for column in source if column}
        return named | {name for ts in self.templates.values() for t in ts for name in _COLUMN_RE.findall(t)}


#: pretix's name columns: the whole name, then one per part of the event's name scheme ("Given name", "Family
#: name" in pretix's default scheme; a scheme of one field writes none).
_PRETIX_ATTENDEE = ("Attendee name", "Attendee name: Given name", "Attendee name: Family name")
_PRETIX_INVOICE = ("Invoice address name", "Invoice address name: Given name", "Invoice address name: Family name")
#: The column mappings of registration systems' attendee exports, with their column names as the systems write them
#: (pretix's from its exporters: pretix/base/exporters/orderlist.py, pretix/plugins/checkinlists/exporters.py). A
#: target that is not a job's own field goes into the job's ``fields`` (``ticket_type`` for a layout's band, and the
#: name parts ``given_name``/``family_name`` where the export has them); ``order_code``, ``email`` and ``status`` are
#: for the attendee list only (a help desk's search, a cancelled ticket), never printed.
PRESETS: dict[str, tuple[Variant, ...]] = {
    "pretix": (
        Variant(
            "pretix",
            'pretix "Order data", order positions (the XLSX\'s "Order positions" sheet, or that sheet as CSV)',
            frozenset({"Order code", "Position ID", "Ticket secret", "Product"}),
            {
                "job_id": ("{Order code}-{Position ID}",),
                "attendee_id": ("{Ticket secret}",),  # what the ticket's QR code carries
                "company": ("{Attendee company}", "{Invoice address company}"),
                "role": ("{Product}",),
                "ticket_type": ("{Product}",),
                "order_code": ("{Order code}",),
                "email": ("{Attendee email}", "{Email}"),
                "status": ("{Status}",),  # "canceled", "expired": loaded as cancelled
            },
            (_PRETIX_ATTENDEE, _PRETIX_INVOICE),
        ),
        Variant(
            "pretix",
            'pretix "Check-in list" exported with "Include QR-code secret"',
            frozenset({"Order code", "Attendee name", "Product", "Secret", "Checked in"}),
            {
                "attendee_id": ("{Secret}",),
                "company": ("{Company}",),  # pretix's: the attendee's, else the invoice address's
                "role": ("{Product}",),
                "ticket_type": ("{Product}",),
                "order_code": ("{Order code}",),
                "email": ("{Email}",),
            },
            (_PRETIX_ATTENDEE,),  # pretix already put the invoice name where the attendee has none
        ),
    ),
    # Eventbrite's "Attendee Summary" report (Reports > Attendee summary, export to CSV or XLSX), its columns as
    # Eventbrite's help centre lists them: "Barcode #" is the ticket's barcode; "Company" and "Job Title" are there
    # when the event asks for them; "Attendee Status" says "Attending", "Checked In" or "Not Attending".
    "eventbrite": (
        Variant(
            "eventbrite",
            'Eventbrite "Attendee Summary" report',
            frozenset({"Order #", "First Name", "Last Name", "Barcode #"}),
            {
                "job_id": ("{Barcode #}",),
                "attendee_id": ("{Barcode #}",),
                "company": ("{Company}",),
                "role": ("{Job Title}",),
                "ticket_type": ("{Ticket Type}",),
                "order_code": ("{Order #}",),
                "email": ("{Email}",),
                "status": ("{Attendee Status}",),
            },
            (("", "First Name", "Last Name"),),
        ),
    ),
}
#: Near misses: a file that is a registration system's export, but not one that has what a badge needs.
NEAR_MISSES: tuple[tuple[frozenset[str], str], ...] = (
    (
        frozenset({"Order code", "Attendee name", "Product", "Checked in"}),
        'pretix\'s "Check-in list" without the ticket secrets: export it again with "Include QR-code secret", '
        "then --preset pretix",
    ),
    (
        frozenset({"Secret", "Product", "Variation", "Paid"}),
        'pretix\'s "Valid check-in codes", which has no names: export the "Check-in list" with "Include QR-code '
        'secret", or "Order data", then --preset pretix',
    ),
)
#: Targets that describe the attendee rather than the badge: kept on the attendee list, left out of a job.
LIST_ONLY = ("order_code", "email", "status")
#: What a row needs to be a badge: a job's required fields.
REQUIRED = ("attendee_id", "name")


def fitting(header: list[str] | set[str]) -> list[Variant]:
    """The presets' exports whose columns the header has."""
    have = set(header)
    return [v for variants in PRESETS.values() for v in variants if v.marks <= have]


def what_fits(header: list[str]) -> str:
    """One sentence: which preset reads a file of this header, or what the file is when none does."""
    found = fitting(header)
    if found:
        return "; ".join(f"it is {v.label}: give --preset {v.preset}" for v in found)
    for marks, hint in NEAR_MISSES:
        if marks <= set(header):
            return f"it is {hint}"
    return f"no preset fits it ({', '.join(sorted(PRESETS))})"


@dataclass(frozen=True)
class ColumnMap:
    """Target -> templates of the export's columns (``{First Name} {Last Name}``, or a bare column name), the first
    that fills wins; and where the name is (``Variant.names``).

    A target is a job's own field (``name``, ``job_id``, ...), else one of the event's ``fields`` (``ticket_type``);
    for the attendee list, also ``order_code``, ``email`` and ``status``. A ``--preset`` map is resolved against the
    file's header (``resolve``): which of the preset's exports the file is.
    """

    templates: Mapping[str, tuple[str, ...]]
    for_list: bool = False
    preset: str | None = None
    names: tuple[tuple[str, str, str], ...] = ()
    #: Columns a preset names that its export may lack (read as empty); a ``--map`` column must be in the file.
    optional: frozenset[str] = frozenset()
    #: The export the map was resolved to ("" before, or for a map of ``--map`` only).
    label: str = ""

    @classmethod
    def parse(cls, entries: list[str] | tuple[str, ...], preset: str | None, for_list: bool = False) -> ColumnMap:
        if preset is not None and preset not in PRESETS:
            raise UserError(f"--preset {preset!r}: one of {', '.join(sorted(PRESETS))}")
        templates: dict[str, tuple[str, ...]] = {}
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
            templates[target] = (template if "{" in template else "{" + template + "}",)
        return cls(templates, for_list, preset)

    def columns(self) -> set[str]:
        """The columns the ``--map`` entries name (each must be in the file)."""
        return {name for ts in self.templates.values() for t in ts for name in _COLUMN_RE.findall(t)}

    def fits(self, header: list[str]) -> bool:
        """Whether a file (a workbook's sheet) of this header is one this map reads."""
        return self.columns() <= set(header) and (self.preset is None or any(
            v.preset == self.preset for v in fitting(header)
        ))  # fmt: skip

    def resolve(self, header: list[str]) -> ColumnMap:
        """The map for a file of this header: the preset's export it is, with the ``--map`` entries over it. A file
        that is none of the preset's exports, or lacks a ``--map`` column, raises UserError naming its columns."""
        has = ", ".join(repr(h) for h in header)
        missing = sorted(self.columns() - set(header))
        if missing:
            raise UserError(
                f"--map column(s) {', '.join(repr(m) for m in missing)} not in the file's header; it has: {has}"
            )
        if self.preset is None:
            return self
        variant = next((v for v in fitting(header) if v.preset == self.preset), None)
        if variant is None:
            lacks = "; or ".join(
                f"{v.label}, whose {', '.join(repr(c) for c in sorted(v.marks - set(header)))} this file lacks"
                for v in PRESETS[self.preset]
            )
            raise UserError(f"--preset {self.preset} reads {lacks} ({what_fits(header)}). It has: {has}")
        templates = {**variant.templates, **self.templates}
        if not self.for_list:
            for target in LIST_ONLY:
                templates.pop(target, None)
        names = () if "name" in self.templates else variant.names
        return ColumnMap(templates, self.for_list, None, names, frozenset(variant.columns()), variant.label)

    def apply(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row as a job (plus ``order_code``, ``email`` and ``status`` for the list): other targets go into
        ``fields``."""
        out: dict[str, Any] = {}
        extra: dict[str, str] = {}
        for whole, given, family in self.names:
            parts = [_cell(row.get(given)) if given else "", _cell(row.get(family)) if family else ""]
            name = " ".join((_cell(row.get(whole)) if whole else "").split()) or " ".join(" ".join(parts).split())
            if name:
                out["name"] = name
                for target, part in zip(("given_name", "family_name"), parts, strict=True):
                    if part:
                        extra[target] = part
                break
        for target, templates in self.templates.items():
            value = ""
            for template in templates:
                filled = _COLUMN_RE.sub(lambda m: _cell(row.get(m.group(1))), template)
                value = " ".join(filled.split())  # "{First} {Last}" with an empty part: no stray space
                if value:
                    break
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
    """JSON lines with the mapping applied: resolved against the first row's keys (JSON lines have no header)."""
    resolved: ColumnMap | None = None
    for number, row, error in rows:
        if row is not None and resolved is None:
            resolved = mapping.resolve(list(row))
        yield number, (resolved.apply(row) if row is not None and resolved is not None else None), error


def unmapped_header(header: list[str]) -> str:
    """Why a file without --map or --preset cannot be read as badges (its header lacks a job's required columns),
    naming its columns and the preset that would read it; "" when it has them."""
    missing = [column for column in REQUIRED if column not in header]
    if not missing:
        return ""
    return (
        f"no {' and no '.join(missing)} column ({', '.join(REQUIRED)}: the ticket code and the name on the badge); "
        f"{what_fits(header)}, or map its columns (--map attendee_id=COLUMN --map 'name={{First}} {{Last}}'). "
        f"Its columns: {', '.join(repr(h) for h in header)}"
    )


DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
XLSX_MAGIC = b"PK\x03\x04"
#: One row of a list is a few short fields; a row past this is a broken file (an unclosed quote swallowing the
#: rest), reported by its number rather than read.
MAX_ROW_CHARS = 64 * 1024
#: A sheet's columns read: an export has a few dozen (pretix's has about forty).
MAX_COLUMNS = 1024


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
    #: The header row (CSV, a workbook's sheet); None for JSON lines.
    header: list[str] | None = None
    #: The registration system's export a ``--preset`` found the file to be.
    kind: str = ""

    def describe(self) -> str:
        if self.format == "xlsx":
            return "XLSX"
        if self.format == "csv" and self.delimiter is not None:
            return f"CSV ({DELIMITERS.get(self.delimiter, repr(self.delimiter))}-separated, {self.encoding})"
        return f"{self.format.upper()} ({self.encoding})"


def read_export(
    source: bytes | BinaryIO,
    name: str = "-",
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    fmt: str = "auto",
    mapping: ColumnMap | None = None,
) -> Export:
    """The one reader of attendee files: JSON lines, CSV (``,`` ``;`` or tab, sniffed), XLSX; ``source`` an open
    binary file (stdin too) or its bytes. The file is never read whole: its bounds (cli/file_bounds.py: size, rows,
    a line's length, a workbook's parts) are checked first, then its rows are read as they are used.

    Raises UserError for a file that cannot be read at all (past a bound, its encoding, an unknown delimiter, a
    mapped column missing from the header, a header without what a badge needs and no mapping: named, with the
    file's columns). A bad row is a row with an error, reported by its number, never fatal.
    """
    raw = seekable(source)
    magic = raw.read(len(XLSX_MAGIC))
    raw.seek(0)
    if fmt == "xlsx" or (fmt == "auto" and (magic == XLSX_MAGIC or name.lower().endswith(".xlsx"))):
        header, rows, total = _xlsx_rows(raw, mapping)
        export = Export(rows, total, "xlsx", "xlsx", header=header)
    else:
        used, lines_used = text_encoding(raw, encoding)
        lines = text_lines(raw, used)
        # The first lines: what the format (JSON lines start with "{") and the delimiter (the header's) are told by.
        peeked: list[str] = []
        for line in lines:
            peeked.append(line)
            if sum(map(len, peeked)) >= 200 and any(p.strip() for p in peeked):
                break
        chosen = sniff_format(name, "".join(peeked)[:200]) if fmt == "auto" else fmt
        total = max(0, lines_used - (1 if chosen == "csv" else 0))
        every = itertools.chain(peeked, lines)
        if chosen == "csv":
            sep = _delimiter(peeked, delimiter)
            header, rows = _csv_rows(every, sep)
            export = Export(rows, total, used, "csv", sep, header)
        else:
            export = Export(read_rows(every, chosen), total, used, chosen)
        export.rows = _until_unreadable(export.rows)
    if export.header is None:
        if mapping is not None:
            export.rows = mapped_rows(export.rows, mapping)
    elif mapping is not None:
        resolved = mapping.resolve(export.header)
        export.kind = resolved.label
        export.rows = ((n, resolved.apply(r) if r is not None else None, e) for n, r, e in export.rows)
    elif export.header and (why := unmapped_header(export.header)):
        raise UserError(why)
    return export


def _until_unreadable(rows: Iterator[Row]) -> Iterator[Row]:
    """The rows, and the row after the last one read as an error should the file stop being readable as it is read
    (it was checked whole before: only a file changed meanwhile does)."""
    number = 0
    try:
        for number, row, error in rows:
            yield number, row, error
    except UserError as exc:
        yield number + 1, None, f"cannot be read: {exc}"


def _delimiter(lines: Iterable[str], given: str | None) -> str:
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


def _csv_rows(lines: Iterable[str], sep: str) -> tuple[list[str], Iterator[Row]]:
    """The header (read now: a file is checked against it before any row) and the rows."""
    csv.field_size_limit(MAX_ROW_CHARS)
    reader = csv.reader(lines, delimiter=sep)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        return [], iter(())
    except csv.Error as exc:
        raise UserError(f"row 1 (the header): {exc}") from None

    def rows() -> Iterator[Row]:
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

    return header, rows()


def _xlsx_rows(raw: BinaryIO, mapping: ColumnMap | None) -> tuple[list[str], Iterator[Row], int]:
    """The header and rows of the workbook's sheet that the mapping reads (pretix's "Order data" has several
    sheets; the second, of order positions, is the list), else of the sheet a preset would read (so that the message
    of a file without a mapping names it), else of its first sheet. Numbers are the sheet's row numbers. A workbook
    past its bounds (cli/file_bounds.py) is refused before openpyxl opens it."""
    import zipfile

    from openpyxl import load_workbook

    check_xlsx(raw)
    try:
        book = load_workbook(raw, read_only=True, data_only=True)
    except (zipfile.BadZipFile, OSError, KeyError, ValueError) as exc:
        raise UserError(f"not a readable XLSX workbook: {exc}") from None
    try:
        return _sheet_rows(book, mapping)
    except zipfile.BadZipFile as exc:  # a part that inflates past its declared size fails its CRC there
        raise UserError(f"not a readable XLSX workbook: {exc}") from None
    finally:
        book.close()


def _sheet_rows(book: Any, mapping: ColumnMap | None) -> tuple[list[str], Iterator[Row], int]:
    sheets = []
    for sheet in book.worksheets:
        # A sheet's recorded size (A1:XFD1048576 in a hostile file) would pad every row to it: read what is there.
        sheet.reset_dimensions()
        first = next(sheet.iter_rows(max_row=1, values_only=True), ())
        sheets.append((sheet, [_cell(h) for h in first[:MAX_COLUMNS]]))
    if not sheets:
        raise UserError("the workbook has no sheet")

    def reads(header: list[str]) -> bool:
        return mapping.fits(header) if mapping is not None else not unmapped_header(header)

    chosen, chosen_header = next(
        (s for s in sheets if reads(s[1])), next((s for s in sheets if fitting(s[1])), sheets[0])
    )
    # Read now: a read-only workbook's sheets often do not record their size, and the rows are at most MAX_ROWS.
    found: list[Row] = []
    for number, values in enumerate(chosen.iter_rows(min_row=2, values_only=True), start=2):
        cells = [_xlsx_cell(v) for v in values[:MAX_COLUMNS]]
        if not any(cells):
            continue
        if len(found) >= MAX_ROWS:
            raise too_many_rows(len(found) + 1)
        if any(cells[len(chosen_header) :]) or len(values) > MAX_COLUMNS:
            found.append((number, None, "row has more cells than the header"))
            continue
        if sum(map(len, cells)) > MAX_ROW_CHARS:
            found.append((number, None, f"cannot be read: longer than {MAX_ROW_CHARS} characters"))
            continue
        found.append((number, dict(zip(chosen_header, cells, strict=False)), ""))
    return chosen_header, iter(found), len(found)


def _xlsx_cell(value: object) -> str:
    """A cell as the CSV export would have written it: whole numbers without ``.0``, dates in ISO form."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return str(value).strip()


#: How to save a spreadsheet so that every name keeps its letters: what a message about a lossy file says.
SAVE_AS_UTF8 = (
    'save it again as UTF-8 (Excel: Save As "CSV UTF-8 (Comma delimited)"; LibreOffice: Save As "Text CSV", '
    '"Edit filter settings", Character set "Unicode (UTF-8)"), or export it from the registration system again'
)


def lost_letters(text: str) -> bool:
    """Whether a name is mostly question marks: what Excel's plain "CSV" writes for each letter its code page lacks
    (``山田 太郎`` becomes ``?? ??``): the letters are gone from the file, and a badge would print the marks."""
    chars = [c for c in text if not c.isspace()]
    marks = chars.count("?")
    return marks >= 2 and marks * 2 >= len(chars)


def lossy_rows(rows: list[Row]) -> list[tuple[int, str]]:
    """(row number, value) of each row whose name, company, role or a field of the badge lost its letters."""
    found = []
    for number, row, _ in rows:
        if row is None:
            continue
        fields = row.get("fields")
        values = [row.get("name"), row.get("company"), row.get("role")]
        values += list(fields.values()) if isinstance(fields, dict) else []
        lost = next((v for v in values if isinstance(v, str) and lost_letters(v)), None)
        if lost is not None:
            found.append((number, lost))
    return found
