"""RFC 9457 problem details: every error the intake answers is ``application/problem+json`` naming what is wrong."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aiohttp import web

CONTENT_TYPE = "application/problem+json"


class Problem(Exception):
    """Raised by a handler; the middleware turns it into the response."""

    def __init__(
        self,
        status: int,
        detail: str,
        errors: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status, self.detail, self.errors, self.headers, self.extra = status, detail, errors, headers, extra


def field_error(status: int, field: str, message: str) -> Problem:
    return Problem(status, f"{field}: {message}", errors=[{"field": field, "message": message}])


def response(problem: Problem) -> web.Response:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(problem.status).phrase,
        "status": problem.status,
        "detail": problem.detail,
        **problem.extra,
    }
    if problem.errors:
        body["errors"] = problem.errors
    return web.Response(
        status=problem.status,
        text=json.dumps(body, ensure_ascii=False),
        content_type=CONTENT_TYPE,
        headers=problem.headers,
    )
