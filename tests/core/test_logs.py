"""The key=value log line: what staff and journald read, one per badge."""

from __future__ import annotations

import logging

from hypothesis import given
from hypothesis import strategies as st

from core.logs import KeyValueFormatter, kv


def _record(msg: str, created: float, **fields: object) -> logging.LogRecord:
    record = logging.getLogger("agent").makeRecord(
        "agent", logging.INFO, __file__, 1, msg, (), None, extra=kv(**fields)
    )
    record.created = created
    record.msecs = (created - int(created)) * 1000
    return record


def test_a_printed_line() -> None:
    line = KeyValueFormatter(False).format(_record("printed", 0.0, job="A-1", attempt=1, confirm="printed", at=""))
    assert line == 'level=info msg=printed job=A-1 attempt=1 confirm=printed at=""'


def test_values_that_would_split_the_line_are_quoted() -> None:
    line = KeyValueFormatter(False).format(_record("not printing", 0.0, reason='a "b"=c\nd', n=None))
    assert line == 'level=info msg="not printing" reason="a \\"b\\"=c\\nd" n=None'


def test_journald_lines_start_with_the_priority() -> None:
    assert KeyValueFormatter(False, journald=True).format(_record("x", 0.0)) == "<6>level=info msg=x"


@given(st.lists(st.floats(min_value=1e9, max_value=2e9), min_size=1, max_size=20))
def test_the_clock_is_the_records_own_second_even_when_cached(times: list[float]) -> None:
    formatter = KeyValueFormatter(True)
    for created in times:
        record = _record("x", created)
        expected = logging.Formatter("%(asctime)s", "%H:%M:%S").format(record) + f".{int(record.msecs):03d}"
        assert formatter.format(record).split(" ")[0] == expected


def test_untrusted_values_cannot_drive_the_terminal_or_flood_the_journal() -> None:
    from core.logs import JsonFormatter

    fields = {"job": "evil\r\x1b[2J", "raw": "bad\udcffid\x9b", "huge": "L" * 1_000_000, "bidi": "a\u202eb"}
    for formatter in (KeyValueFormatter(False), KeyValueFormatter(False, journald=True), JsonFormatter()):
        line = formatter.format(_record("not printing", 0.0, **fields))
        line.encode("utf-8")  # no lone surrogate: the stream can write it
        assert not any(c in line for c in "\r\n\x1b\x9b\u202e") and len(line) < 2000
        assert "more chars" in line
    line = KeyValueFormatter(False).format(_record("x", 0.0, job="evil\r\x1b[2J"))
    assert line == 'level=info msg=x job="evil\\r\\u001b[2J"'
