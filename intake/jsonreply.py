"""The intake's JSON answers, encoded by msgspec: several times faster than ``json.dumps`` (what
``web.json_response`` uses) for a search's fifty attendees, with the same values (non-ASCII written as UTF-8 rather
than escaped, no spaces)."""

from __future__ import annotations

from typing import Any

import msgspec
from aiohttp import web

_ENCODER = msgspec.json.Encoder()


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=_ENCODER.encode(data), status=status, content_type="application/json", charset="utf-8")
