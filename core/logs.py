"""One structured line per event: ``key=value`` for people and journald, or JSON for log shippers. No secrets."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from typing import Any


def kv(**fields: Any) -> dict[str, Any]:
    """Attach structured fields to a log call: ``log.info("printed", extra=kv(job=...))``."""
    return {"fields": fields}


#: What a terminal or journald would act on rather than show: C0/C1 controls (ESC, CR, CSI), DEL, line and
#: paragraph separators, bidi overrides (a job id could read backwards), and the surrogates that stand for
#: non-UTF-8 bytes read from Redis (``surrogateescape``), which no stream can encode.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udcff]")
#: Job ids, names and reasons come from desks, kiosks and Redis: one value never carries more than this.
MAX_VALUE_CHARS = 200


#: The password of a URL (``redis://user:PASSWORD@host``, any scheme): a config error quoting a mistyped URL, or a
#: library's message, must not put it on a terminal or in the journal.
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]*:)[^\s@/]+@")


def masked(text: str) -> str:
    """``text`` with every URL's password replaced by ``***``."""
    return _URL_PASSWORD.sub(r"\1***@", text) if "://" in text else text


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the raw byte the id held
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _json_escape_char(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def truncated(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...({len(text) - limit} more chars)"


def shown(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """An untrusted value made safe for a terminal or a log: escaped (``\\x1b``) and truncated."""
    text = value if type(value) is str else str(value)
    return _UNSAFE.sub(_escape_char, truncated(text, limit))


#: ``_UNSAFE`` less the C0 controls: json.dumps escapes those inside strings itself, and its indent puts newlines
#: between them.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udcff]")


def safe_json(data: Any, **dump_args: Any) -> str:
    """``json.dumps`` that any stream can write: unsafe characters become ``\\u`` escapes (still valid JSON)."""
    return _UNSAFE_IN_JSON.sub(_json_escape_char, json.dumps(data, ensure_ascii=False, default=str, **dump_args))


#: A value with one of these (or an empty one) is written as a JSON string, so the line still splits on spaces.
_NEEDS_QUOTES = re.compile(r'[ ="\\]|' + _UNSAFE.pattern)


def quoted(value: Any) -> str:
    """A log or CLI value: bare when it is one safe word, else a JSON string with every unsafe character escaped."""
    text = truncated(value if type(value) is str else str(value))
    if not text or _NEEDS_QUOTES.search(text) is not None:
        return safe_json(text)
    return text


#: sd-daemon(3) priority prefixes: journald files each line at its level, so `journalctl -p warning` works.
_JOURNAL_PRIORITY = {"CRITICAL": "<2>", "ERROR": "<3>", "WARNING": "<4>", "INFO": "<6>", "DEBUG": "<7>"}


class KeyValueFormatter(logging.Formatter):
    """``HH:MM:SS.mmm level=info msg=printed job=A-1 ...``: one line per event, cheap enough for one per badge."""

    def __init__(self, with_time: bool, journald: bool = False) -> None:
        super().__init__()
        self.with_time = with_time
        self.journald = journald
        # The clock part changes once a second, not once a line: localtime + strftime only when it does. One
        # attribute (second, text), replaced whole, so a formatter shared across threads never pairs them wrongly.
        self._clock: tuple[int, str] = (-1, "")

    def format(self, record: logging.LogRecord) -> str:
        parts = [_JOURNAL_PRIORITY.get(record.levelname, "<6>")] if self.journald else []
        if self.with_time:
            second = int(record.created)
            clock = self._clock
            if clock[0] != second:
                clock = self._clock = (second, time.strftime("%H:%M:%S", time.localtime(second)))
            parts.append(f"{clock[1]}.{int(record.msecs):03d}")
        parts.append(f"level={record.levelname.lower()}")
        parts.append(f"msg={quoted(masked(record.getMessage()))}")
        fields = getattr(record, "fields", None)
        if fields:
            parts += [f"{key}={quoted(masked(str(value)))}" for key, value in fields.items()]
        if record.exc_info:
            parts.append(f"error={quoted(masked(self.formatException(record.exc_info)))}")
        return _join(parts, self.journald)


def _join(parts: list[str], journald: bool) -> str:
    if journald:
        return parts[0] + " ".join(parts[1:])
    return " ".join(parts)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": record.created,
            "level": record.levelname.lower(),
            "msg": truncated(masked(record.getMessage())),
        }
        for key, value in getattr(record, "fields", {}).items():
            data[key] = truncated(masked(value)) if isinstance(value, str) else value
        if record.exc_info:
            data["error"] = masked(self.formatException(record.exc_info))
        return safe_json(data)


def setup_logging(level: str = "info", fmt: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    # Under systemd, journald stamps every line itself and reads the level from a <N> prefix; elsewhere a time helps.
    journald = "JOURNAL_STREAM" in os.environ
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter(not journald, journald))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("asyncio", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
