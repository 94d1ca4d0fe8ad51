"""What every intake handler shares: the ``Intake`` context on the app, the token check and the JSON body.

The job routes (intake/app.py) and the attendee routes (intake/attendee_routes.py) both build on this module, so
neither imports the other's internals.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from aiohttp import web
from redis.asyncio import Redis

from core.errors import UserError
from core.exposition import Counter
from intake.budget import Lanes, Watches
from intake.config import IntakeConfig
from intake.guard import Activity
from intake.hub import Hub
from intake.outstanding import Outstanding
from intake.problem import Problem
from intake.ratelimit import RateLimit
from intake.slow_bodies import CALLER, Bodies
from intake.tokens import Token, TokenFile
from protocol.codec import dec, enc
from protocol.store import Store

log = logging.getLogger("badge_agent.intake")

JOB_FIELDS = ("state", "printer", "attempts", "reprints", "maybe_duplicate", "maybe_printed_where", "last_printer")


class Intake:
    """What the handlers share: the store, the token file, the limits and the request counters for /metrics."""

    def __init__(self, config: IntakeConfig, redis: Redis) -> None:
        self.config = config
        self.redis = redis
        self.store = Store(redis, config.venue)
        self.tokens = TokenFile(config.tokens)
        self.rate = RateLimit(config.limits.rate, config.limits.burst)
        self.requests = Counter("badge_intake_requests", "Requests answered, by route and status.", ["route", "status"])
        self.hub = Hub(redis, enc(self.store.keys.events))
        self.watches = Watches(config.limits.watch_per_token, config.limits.watch_total)
        self.lanes = Lanes(config.limits.desk_lane, config.limits.public_lane)
        self.activity = Activity()  # which connections are inside a request, for the connection guard
        limits = config.limits
        self.bodies = Bodies(self.activity, limits.bodies_per_token, limits.bodies_per_address, limits.bodies_public)
        self.outstanding = Outstanding(redis, self.store.keys)

    async def location(self, printer: str) -> str:
        if not printer:
            return ""
        raw = await self.redis.get(enc(self.store.keys.health(printer)))
        try:
            return str(json.loads(raw).get("location", "")) if raw else ""
        except (ValueError, AttributeError):
            return ""

    async def job_view(self, job_id: str) -> dict[str, Any] | None:
        raw = await self.redis.hmget(enc(self.store.keys.job(job_id)), [*JOB_FIELDS, "created_by", "printed_at"])
        if raw[0] is None:
            return None
        fields = dict(zip([*JOB_FIELDS, "created_by", "printed_at"], (dec(v) for v in raw), strict=True))
        view: dict[str, Any] = {"job_id": job_id, "state": fields["state"], "printer": fields["printer"]}
        view["location"] = (
            fields["printed_at"] if fields["state"] == "printed" and fields["printed_at"] else ""
        ) or await self.location(fields["printer"])
        view["attempts"] = int(fields["attempts"] or 0)
        view["reprints"] = int(fields["reprints"] or 0)
        view["maybe_duplicate"] = fields["maybe_duplicate"] == "1"
        view["maybe_printed_where"] = fields["maybe_printed_where"]
        view["last_printer"] = fields["last_printer"]
        view["_created_by"] = fields["created_by"]
        return view


INTAKE = web.AppKey("intake", Intake)


def bearer_secret(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def authorize(request: web.Request, roles: tuple[str, ...]) -> Token:
    intake: Intake = request.app[INTAKE]
    secret = bearer_secret(request)
    if secret is None:
        raise Problem(401, "no token: send Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
    try:
        token = intake.tokens.lookup(secret)
    except UserError as exc:
        log.error("%s", exc)
        raise Problem(503, "the token file cannot be read; ask the operator") from None
    if token is None:
        raise Problem(401, "unknown or revoked token", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    if token.role not in roles:
        raise Problem(403, f"a {token.role} token may not do this (needs {' or '.join(roles)})", role=token.role)
    request[CALLER] = (token.role, token.name)  # for the bounds of slow bodies (json_body)
    wait = intake.rate.take(token.name)
    if wait:
        raise Problem(
            429,
            f"over this token's rate ({intake.config.limits.rate:g} requests/s)",
            headers={"Retry-After": str(wait)},
            retry_after=wait,
        )
    return token


async def json_body(request: web.Request) -> Any:
    intake: Intake = request.app[INTAKE]
    limit = intake.config.limits.max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise Problem(413, f"the body is larger than {limit} bytes")
    try:
        async with intake.bodies.waiting(request), asyncio.timeout(intake.config.limits.body_timeout):
            raw = await request.read()  # aiohttp refuses more than client_max_size (= the limit) with 413
    except TimeoutError:
        raise Problem(408, f"the body took longer than {intake.config.limits.body_timeout:g} s to arrive") from None
    if not raw:
        raise Problem(422, "the body is empty: send a JSON object")
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Problem(422, f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise Problem(422, "the body is not valid JSON: nested too deep") from None


def _no_constant(name: str) -> Any:
    """NaN, Infinity and -Infinity are not JSON (Python's json module accepts them unless told otherwise)."""
    raise ValueError(f"{name} is not a JSON value")
