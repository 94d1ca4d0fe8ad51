"""The bounds of an attendee file, checked before its rows are read: an admin is handed files by others (a
registration system's export, a colleague's spreadsheet, a download), and a file built to exhaust the reader must be
refused with one message, in seconds and within a few hundred megabytes, never end the command in an abort.

* **Size.** A file over ``MAX_FILE_BYTES`` is refused by its size (stdin is copied to a temporary file up to that
  size, so every file can be read twice: once to check, once to read).
* **Text (CSV, JSON lines)** is read line by line, never whole: one pass finds the encoding and counts the rows, a
  line over ``MAX_LINE_BYTES`` (a row is a few short fields; a longer line is an unclosed quote or not a list at all)
  or more than ``MAX_ROWS`` rows refuse the file; the second pass reads the rows.
* **XLSX** is a zip of XML parts. Before openpyxl opens it, every member's declared size is checked against its
  bound (``XLSX_SHEET_BYTES`` a sheet, ``XLSX_STRINGS_BYTES`` the shared strings, which openpyxl holds whole,
  ``XLSX_PART_BYTES`` any other XML part, ``XLSX_TOTAL_BYTES`` all of them), and its compression ratio against
  ``XLSX_MAX_RATIO`` (an export compresses 5-20 times; a zip bomb thousands of times). zipfile itself stops a member
  at its declared size (a member that inflates past it fails its CRC), so the declared sizes are the actual ones.
  The sheet is then streamed (openpyxl's read-only mode) and its rows counted against ``MAX_ROWS``.
"""

from __future__ import annotations

import codecs
import io
import re
import tempfile
import zipfile
from collections.abc import Iterator
from typing import BinaryIO

from core.errors import UserError

MIB = 1024 * 1024
#: The largest attendee file read (CSV, JSON lines or XLSX): a list of 200,000 attendees with every column pretix
#: writes is well under it.
MAX_FILE_BYTES = 100 * MIB
#: The most rows a file may have: more attendees than any venue's list, and what the commands hold at once (``attendees
#: import`` looks at every row before loading any) within a few hundred megabytes.
MAX_ROWS = 200_000
#: The longest line of a text file: one row of a list is a few short fields (a cell may have at most
#: ``MAX_ROW_CHARS`` characters, registration_files.py), and a character up to 4 bytes.
MAX_LINE_BYTES = 256 * 1024
#: A workbook's parts, uncompressed: a sheet (streamed), the shared strings (held whole by openpyxl), any other XML
#: part (styles, the workbook, relations), all of them together.
XLSX_SHEET_BYTES = 256 * MIB
XLSX_STRINGS_BYTES = 64 * MIB
XLSX_PART_BYTES = 16 * MIB
XLSX_TOTAL_BYTES = 512 * MIB
#: The most a member of the workbook may inflate (uncompressed / compressed), for members over ``RATIO_FROM`` bytes.
XLSX_MAX_RATIO = 100
RATIO_FROM = MIB
#: Bytes read at a time when copying stdin.
CHUNK = 1024 * 1024
_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def _mib(n: int) -> str:
    return f"{n / MIB:.0f} MiB" if n >= MIB else f"{n / 1024:.0f} KiB"


def seekable(source: bytes | BinaryIO) -> BinaryIO:
    """``source`` as a file that can be read twice, no larger than ``MAX_FILE_BYTES`` (raises UserError naming the
    size otherwise): a regular file as it is, stdin or a pipe copied to a temporary file on the way."""
    if isinstance(source, bytes):
        raw: BinaryIO = io.BytesIO(source)
    elif _can_seek(source):
        raw = source
    else:
        spool = tempfile.TemporaryFile()  # noqa: SIM115 - the caller reads it; closed with the process
        copied = 0
        while chunk := source.read(CHUNK):
            copied += len(chunk)
            if copied > MAX_FILE_BYTES:
                spool.close()
                raise UserError(f"more than {_mib(MAX_FILE_BYTES)}: {_too_large()}")
            spool.write(chunk)
        spool.seek(0)
        raw = spool
    size = raw.seek(0, io.SEEK_END)
    raw.seek(0)
    if size > MAX_FILE_BYTES:
        raise UserError(f"{_mib(size)}: {_too_large()}")
    return raw


def _can_seek(source: BinaryIO) -> bool:
    try:
        return source.seekable()
    except (AttributeError, OSError, ValueError):
        return False


def _too_large() -> str:
    return (
        f"an attendee file may be at most {_mib(MAX_FILE_BYTES)} ({MAX_ROWS:,} rows); "
        "split it, or export only the columns the badges need"
    )


def too_many_rows(count: int) -> UserError:
    return UserError(
        f"more than {MAX_ROWS:,} rows ({count:,} counted so far): an attendee file may have at most {MAX_ROWS:,}; "
        "split it into files of fewer rows"
    )


def text_encoding(raw: BinaryIO, encoding: str | None) -> tuple[str, int]:
    """(the encoding to read the file with, how many of its lines are not blank), checking every line's length on
    the way: the given encoding, else UTF-8 (a BOM dropped) or UTF-16 by its BOM, else Windows-1252 when the file is
    not valid UTF-8. Raises UserError naming the line and the byte that the encoding cannot read, a line over
    ``MAX_LINE_BYTES``, or more rows than ``MAX_ROWS`` (counting a header)."""
    head = raw.read(4)
    raw.seek(0)
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise UserError(f"--encoding: unknown encoding {encoding!r} (e.g. utf-8, cp1252, cp1250)") from None
        return encoding, _count(raw, encoding)
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig", _count(raw, "utf-8-sig")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", _count(raw, "utf-16")
    try:
        return "utf-8", _count(raw, "utf-8", quiet=True)
    except UnicodeDecodeError:
        return "cp1252", _count(raw, "cp1252")


def _count(raw: BinaryIO, encoding: str, quiet: bool = False) -> int:
    """Lines that are not blank. ``quiet``: a byte the encoding cannot read raises UnicodeDecodeError (the caller
    tries another encoding) instead of UserError."""
    raw.seek(0)
    lines = 0
    try:
        for line in text_lines(raw, encoding):
            if line.strip():
                lines += 1
                if lines > MAX_ROWS + 1:
                    raise too_many_rows(lines - 1)
    except _BadByte as bad:
        if quiet:
            raise bad.error from None
        raise UserError(
            f"line {bad.line}: byte 0x{bad.byte:02x} is not valid {encoding}; "
            "give the file's encoding with --encoding (e.g. cp1252, cp1250, utf-8)"
        ) from None
    finally:
        raw.seek(0)
    return lines


class _BadByte(UserError):
    """A byte the encoding cannot read, at a line (a UserError: read on its own, it names them)."""

    def __init__(self, line: int, byte: int, error: UnicodeDecodeError) -> None:
        super().__init__(f"line {line}: byte 0x{byte:02x} cannot be read as {error.encoding}")
        self.line, self.byte, self.error = line, byte, error


def text_lines(raw: BinaryIO, encoding: str) -> Iterator[str]:
    """The file's lines, decoded, each with its line ending (``\\n``, ``\\r\\n`` or ``\\r``, as the csv module
    wants them), never reading more than one line at a time. A line over ``MAX_LINE_BYTES`` raises UserError."""
    if codecs.lookup(encoding).name.startswith("utf-16"):
        yield from _wide_lines(raw, encoding)
        return
    decoder = codecs.getincrementaldecoder(encoding)()
    number = 0
    while line := raw.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise UserError(_long_line(number))
        try:
            text = decoder.decode(line)
        except UnicodeDecodeError as exc:
            raise _BadByte(number, line[min(exc.start, len(line) - 1)], exc) from None
        # A lone "\r" ends a line too (old Mac files): split there, as the csv module would read the file.
        if "\r" in text[:-2]:
            yield from (part for part in _LONE_CR.split(text) if part)
        else:
            yield text
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise _BadByte(max(number, 1), 0, exc) from None


def _wide_lines(raw: BinaryIO, encoding: str) -> Iterator[str]:
    """UTF-16's lines (its bytes are not ASCII's: a newline is two bytes), through a text reader."""
    text = io.TextIOWrapper(raw, encoding=encoding, newline="")
    try:
        number = 0
        while line := text.readline(MAX_LINE_BYTES // 2 + 1):
            number += 1
            if len(line) > MAX_LINE_BYTES // 2:
                raise UserError(_long_line(number))
            yield line
    except UnicodeDecodeError as exc:
        raise _BadByte(number + 1, exc.object[exc.start] if exc.object else 0, exc) from None
    finally:
        text.detach()  # the file stays open for the second pass


def _long_line(number: int) -> str:
    return (
        f"line {number} is longer than {_mib(MAX_LINE_BYTES)}: a row of an attendee list is a few short fields (an "
        "unclosed quote, or not an attendee list at all)"
    )


def check_xlsx(raw: BinaryIO) -> None:
    """Refuse a workbook whose parts would inflate past their bounds (module docstring), naming the part."""
    try:
        with zipfile.ZipFile(raw) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UserError(f"not a readable XLSX workbook: {exc}") from None
    finally:
        raw.seek(0)
    total = 0
    for member in members:
        size = member.file_size
        total += size
        name = member.filename
        if name.startswith("xl/worksheets/"):
            bound = XLSX_SHEET_BYTES
        elif name == "xl/sharedStrings.xml":
            bound = XLSX_STRINGS_BYTES
        elif name.endswith((".xml", ".rels")):
            bound = XLSX_PART_BYTES
        else:
            bound = XLSX_TOTAL_BYTES  # pictures and the like: openpyxl's read-only mode never opens them
        if size > bound:
            raise UserError(
                f"not a workbook this reads: its part {name!r} is {_mib(size)} uncompressed, more than "
                f"{_mib(bound)}; save the sheet as CSV, or split it"
            )
        if size > RATIO_FROM and size > XLSX_MAX_RATIO * max(member.compress_size, 1):
            raise UserError(
                f"not a workbook this reads: its part {name!r} inflates {size // max(member.compress_size, 1):,} "
                f"times (from {member.compress_size:,} bytes to {_mib(size)}; a spreadsheet's own parts inflate "
                f"less than {XLSX_MAX_RATIO} times): a zip bomb, or a broken file"
            )
    if total > XLSX_TOTAL_BYTES:
        raise UserError(
            f"not a workbook this reads: its parts are {_mib(total)} uncompressed, more than "
            f"{_mib(XLSX_TOTAL_BYTES)}; save the sheet as CSV, or split it"
        )
