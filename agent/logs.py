"""One structured line per event: ``key=value`` for people and journald, or JSON for log shippers. No secrets."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any


def kv(**fields: Any) -> dict[str, Any]:
    """Attach structured fields to a log call: ``log.info("printed", extra=kv(job=...))``."""
    return {"fields": fields}


def _quote(value: Any) -> str:
    text = str(value)
    if text == "" or any(c in text for c in ' ="\n'):
        return json.dumps(text, ensure_ascii=False)
    return text


#: sd-daemon(3) priority prefixes: journald files each line at its level, so `journalctl -p warning` works.
_JOURNAL_PRIORITY = {"CRITICAL": "<2>", "ERROR": "<3>", "WARNING": "<4>", "INFO": "<6>", "DEBUG": "<7>"}


class KeyValueFormatter(logging.Formatter):
    def __init__(self, with_time: bool, journald: bool = False) -> None:
        super().__init__()
        self.with_time = with_time
        self.journald = journald

    def format(self, record: logging.LogRecord) -> str:
        parts = [_JOURNAL_PRIORITY.get(record.levelname, "<6>")] if self.journald else []
        if self.with_time:
            parts.append(time.strftime("%H:%M:%S", time.localtime(record.created)) + f".{int(record.msecs):03d}")
        parts.append(f"level={record.levelname.lower()}")
        parts.append(f"msg={_quote(record.getMessage())}")
        for key, value in getattr(record, "fields", {}).items():
            parts.append(f"{key}={_quote(value)}")
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
