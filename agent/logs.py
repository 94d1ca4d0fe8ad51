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


#: A value with one of these (or an empty one) is written as a JSON string, so the line still splits on spaces.
_NEEDS_QUOTES = re.compile('[ ="\n]')


def _quote(value: Any) -> str:
    text = value if type(value) is str else str(value)
    if not text or _NEEDS_QUOTES.search(text) is not None:
        return json.dumps(text, ensure_ascii=False)
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
        parts.append(f"msg={_quote(record.getMessage())}")
        fields = getattr(record, "fields", None)
        if fields:
            parts += [f"{key}={_quote(value)}" for key, value in fields.items()]
        if record.exc_info:
            parts.append(f"error={_quote(self.formatException(record.exc_info))}")
        return _join(parts, self.journald)


def _join(parts: list[str], journald: bool) -> str:
    if journald:
        return parts[0] + " ".join(parts[1:])
    return " ".join(parts)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {"ts": record.created, "level": record.levelname.lower(), "msg": record.getMessage()}
        data.update(getattr(record, "fields", {}))
        if record.exc_info:
            data["error"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


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
