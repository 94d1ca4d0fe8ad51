"""Files built to exhaust the reader of attendee files, handed to ``attendees import`` and ``enqueue --file`` as an
admin would be: each is refused with one message naming what is wrong, within 10 s and 500 MB, by the real CLI in
its own process (its peak memory read from the kernel's account of it, ``wait4``'s ``ru_maxrss``).

The bombs are made here, in the test's folder: workbooks with zipfile (a sheet that inflates to hundreds of
megabytes, shared strings that inflate a thousand times, a sheet that claims a million rows), a 200 MB CSV, a CSV of
more rows than any list has, a CSV of one endless line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli.file_bounds import MAX_ROWS
from cli.redis_server import RedisServer
from tests.support.attendee_files import xlsx_export
from tests.support.processes import ROOT

#: What a refusal may cost: the bounds docs/cli.md promises.
SECONDS = 10.0
PEAK_BYTES = 500 * 1024 * 1024
#: Past this a run is stopped and fails (a reader without bounds runs for minutes).
KILL_AFTER = 60.0

SHEET_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    b'<row r="1"><c r="A1" t="inlineStr"><is><t>attendee_id</t></is></c>'
    b'<c r="B1" t="inlineStr"><is><t>name</t></is></c></row>'
)
SHEET_TAIL = b"</sheetData></worksheet>"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_bytes: int


def run_measured(server: RedisServer, venue: str, *args: str, cwd: Path) -> Run:
    """``badge-agent ARGS`` in its own process; its time and peak resident memory (the kernel's high-water mark,
    from ``wait4``). Stopped after ``KILL_AFTER`` seconds."""
    env = {**os.environ, "BADGE_REDIS_URL": server.url, "BADGE_VENUE": venue, "COLUMNS": "200"}
    out, err = cwd / "run.out", cwd / "run.err"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "agent", *args], cwd=ROOT, env=env, stdout=stdout, stderr=stderr)
        timer = threading.Timer(KILL_AFTER, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait for it again
    seconds = time.monotonic() - started
    return Run(proc.returncode, out.read_text(), err.read_text(), seconds, usage.ru_maxrss * 1024)  # KiB on Linux


def assert_refused(run: Run, *words: str) -> None:
    """Refused with one message (exit 2, no traceback) naming what is wrong, in time and memory."""
    assert run.returncode == 2, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    for word in words:
        assert word in run.stderr, run.stderr
    assert run.seconds < SECONDS, f"{run.seconds:.1f} s"
    assert run.peak_bytes < PEAK_BYTES, f"{run.peak_bytes / 1e6:.0f} MB"


def bomb_workbook(path: Path, replace: dict[str, tuple[bytes, bytes, bytes, int]]) -> Path:
    """A real workbook (openpyxl's) with members replaced by ``head + block * times + tail``, deflated by zipfile as
    it writes (never whole in memory)."""
    base = xlsx_export(path.with_suffix(".base.xlsx"), {"List": "attendee_id;name\r\nA1;Ada Lovelace\r\n"})
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        names = source.namelist()
        for name in names:
            if name in replace:
                head, block, tail, times = replace[name]
                with out.open(name, "w", force_zip64=True) as member:
                    member.write(head)
                    for _ in range(times):
                        member.write(block)
                    member.write(tail)
            else:
                out.writestr(source.getinfo(name), source.read(name))
        for name, (head, block, tail, times) in replace.items():
            if name not in names:
                with out.open(name, "w", force_zip64=True) as member:
                    member.write(head + block * times + tail)
    return path


def _rows(count: int) -> bytes:
    return b"".join(
        b'<row><c t="inlineStr"><is><t>c</t></is></c><c t="inlineStr"><is><t>Ada Lovelace</t></is></c></row>'
        for _ in range(count)
    )


@pytest.mark.slow
def test_an_xlsx_zip_bomb_is_refused_by_its_parts_sizes(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    # 300 MB of rows (three million attendees) in a 2 MB file: its sheet inflates past the bound for a sheet.
    block = _rows(10_000)
    path = bomb_workbook(
        tmp_path / "bomb.xlsx", {"xl/worksheets/sheet1.xml": (SHEET_HEAD, block, SHEET_TAIL, 300 * 2**20 // len(block))}
    )
    assert path.stat().st_size < 10 * 2**20
    for command in (("attendees", "import", str(path)), ("enqueue", "--file", str(path), "--dry-run")):
        run = run_measured(redis_server, venue, *command, cwd=tmp_path)
        assert_refused(run, "bomb.xlsx", "xl/worksheets/sheet1.xml", "uncompressed")


def test_shared_strings_that_inflate_a_thousand_times_are_refused(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # 50 MB of one string, under the bound for shared strings, but no spreadsheet's parts inflate like that.
    head = b'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>'
    path = bomb_workbook(
        tmp_path / "strings.xlsx", {"xl/sharedStrings.xml": (head, b"A" * 2**20, b"</t></si></sst>", 50)}
    )
    run = run_measured(redis_server, venue, "attendees", "import", str(path), cwd=tmp_path)
    assert_refused(run, "xl/sharedStrings.xml", "inflates", "zip bomb")


def test_a_sheet_that_claims_a_million_rows_and_every_column_is_read_as_what_it_holds(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # A few hundred bytes: a sheet whose recorded size is the whole grid (A1:XFD1048576), its one row at the end.
    # Each row would be padded to 16,384 cells and a million empty rows made: read, it is the one attendee there.
    head = SHEET_HEAD.replace(b"<sheetData>", b'<dimension ref="A1:XFD1048576"/><sheetData>')
    last = (
        b'<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>c1</t></is></c>'
        b'<c r="B1048576" t="inlineStr"><is><t>Ada Lovelace</t></is></c></row>'
    )
    path = bomb_workbook(tmp_path / "grid.xlsx", {"xl/worksheets/sheet1.xml": (head, last, SHEET_TAIL, 1)})
    run = run_measured(redis_server, venue, "enqueue", "--file", str(path), "--dry-run", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "row 1048576: would enqueue c1: Ada Lovelace" in run.stdout
    assert run.seconds < SECONDS and run.peak_bytes < PEAK_BYTES, (run.seconds, run.peak_bytes)


def test_a_200_mb_csv_is_refused_by_its_size(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    path = tmp_path / "huge.csv"
    row = b"c%07d,Ada Lovelace,Analytical Engines,ada@example.org\n"
    block = b"".join(row % i for i in range(100_000))
    with path.open("wb") as fh:
        fh.write(b"attendee_id,name,company,email\n")
        for _ in range(200 * 2**20 // len(block) + 1):
            fh.write(block)
    assert path.stat().st_size > 200 * 2**20
    for command in (("attendees", "import", str(path)), ("enqueue", "--file", str(path), "--dry-run")):
        run = run_measured(redis_server, venue, *command, cwd=tmp_path)
        assert_refused(run, "huge.csv", "MiB", "split it")
    # The same from stdin: copied up to the bound, no further.
    env = {**os.environ, "BADGE_REDIS_URL": redis_server.url, "BADGE_VENUE": venue}
    with path.open("rb") as stdin:
        piped = subprocess.run(
            [sys.executable, "-m", "agent", "attendees", "import", "-"],
            cwd=ROOT, env=env, stdin=stdin, capture_output=True, text=True, timeout=KILL_AFTER,
        )  # fmt: skip
    assert piped.returncode == 2 and "split it" in piped.stderr and "Traceback" not in piped.stderr, piped.stderr


def test_a_csv_of_more_rows_than_a_list_has_is_refused_before_any_is_loaded(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "many.csv"
    with path.open("w", encoding="utf-8") as fh:
        fh.write("attendee_id,name\n")
        fh.writelines(f"c{i},A\n" for i in range(MAX_ROWS + 1))
    run = run_measured(redis_server, venue, "attendees", "import", str(path), cwd=tmp_path)
    assert_refused(run, "many.csv", f"more than {MAX_ROWS:,} rows", "split it")


def test_a_csv_of_one_endless_line_is_refused_naming_the_line(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "line.csv"
    with path.open("wb") as fh:
        fh.write(b"attendee_id,name\n")
        fh.write(b'c1,"' + b"A" * (50 * 2**20))  # an unclosed quote: the rest of the file is one cell
    run = run_measured(redis_server, venue, "enqueue", "--file", str(path), "--dry-run", cwd=tmp_path)
    assert_refused(run, "line.csv", "line 2 is longer than 256 KiB")
