"""The intake's aiohttp application: the routes of docs/intake.md, one handler each.

Stateless: every job, state and event lives in the venue's Redis keys (agent/protocol/keys.py), so several intake
processes can serve one venue behind a proxy. Only the rate limit's buckets are per process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web
from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent.commands.staff import cancel_message, reprint_message
from agent.errors import JobError, UserError
from agent.fleet import fleet
from agent.intake.config import IntakeConfig
from agent.intake.openapi import spec
from agent.intake.problem import Problem, field_error, response
from agent.intake.ratelimit import RateLimit
from agent.intake.tokens import Token, TokenFile
from agent.jobs import parse_job
from agent.protocol.codec import dec, enc
from agent.protocol.keys import JOB_ID_RE
from agent.protocol.replies import CancelKind, ReprintKind
from agent.protocol.store import Store
from agent.vocabulary import StaffCounts, staff_metric_lines

log = logging.getLogger("badge_agent.intake")

CREATE = ("kiosk", "desk", "staff")
READ = ("kiosk", "desk", "staff", "viewer")
STAFF = ("staff",)
MAX_WAIT = 30.0
POLL = 0.05  # seconds between looks at a job's state while a ?wait= holds (one HGET each)
FINAL = ("printed", "dead", "cancelled")
#: The job hash fields a reader sees, besides job_id and location.
JOB_FIELDS = ("state", "printer", "attempts", "reprints", "maybe_duplicate", "maybe_printed_where", "last_printer")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Intake:
    """What the handlers share: the store, the token file, the limits and the request counters for /metrics."""

    def __init__(self, config: IntakeConfig, redis: Redis) -> None:
        self.config = config
        self.redis = redis
        self.store = Store(redis, config.venue)
        self.tokens = TokenFile(config.tokens)
        self.rate = RateLimit(config.limits.rate, config.limits.burst)
        self.requests: dict[tuple[str, int], int] = {}  # (route, status) -> count; never a token

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


def _public(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if not k.startswith("_")}


def _secret(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _route_name(request: web.Request) -> str:
    info = request.match_info.route.resource
    return info.canonical if info is not None else "unmatched"


def make_middleware(intake: Intake) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.monotonic()
        try:
            resp = await handler(request)
        except Problem as problem:
            resp = response(problem)
        except RedisError as exc:
            log.error("Redis refused or unreachable: %s", exc)
            resp = response(Problem(503, "the venue's Redis is unreachable; try again", headers={"Retry-After": "1"}))
        except web.HTTPRequestEntityTooLarge:
            resp = response(Problem(413, f"the body is larger than {intake.config.limits.max_body_bytes} bytes"))
        except web.HTTPException as exc:  # aiohttp's own 404 / 405 for an unknown route or method
            if exc.status < 400:
                raise
            resp = response(Problem(exc.status, exc.reason))
        route = _route_name(request)
        key = (route, resp.status)
        intake.requests[key] = intake.requests.get(key, 0) + 1
        # The route and status only: never a header (the token rides in Authorization), never the path (it holds
        # ticket codes: /v1/attendees/{code}).
        log.info("%s %s %d %.1f ms", request.method, route, resp.status, (time.monotonic() - started) * 1000)
        return resp

    return middleware


def authorize(request: web.Request, roles: tuple[str, ...]) -> Token:
    intake: Intake = request.app[INTAKE]
    secret = _secret(request)
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
    wait = intake.rate.take(token.name)
    if wait:
        raise Problem(
            429,
            f"over this token's rate ({intake.config.limits.rate:g} requests/s)",
            headers={"Retry-After": str(wait)},
            retry_after=wait,
        )
    return token


async def _json_body(request: web.Request) -> Any:
    intake: Intake = request.app[INTAKE]
    limit = intake.config.limits.max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise Problem(413, f"the body is larger than {limit} bytes")
    raw = await request.read()  # aiohttp refuses more than client_max_size (= the limit) with 413
    if not raw:
        raise Problem(422, "the body is empty: send a JSON object")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Problem(422, f"the body is not valid JSON: {exc}") from None


def _job_id(request: web.Request) -> str:
    job_id = request.match_info["id"]
    if not JOB_ID_RE.match(job_id):
        raise field_error(422, "id", "not a job id (letters, digits and . _ : @ -, at most 128)")
    return job_id


async def create(request: web.Request) -> web.Response:
    token = authorize(request, CREATE)
    intake: Intake = request.app[INTAKE]
    from attendees.routes import refuse_unlisted  # imported here: the attendee routes build on this module

    await refuse_unlisted(request, token)
    body = await _json_body(request)
    batch = isinstance(body, dict) and "jobs" in body
    items = body["jobs"] if batch else [body]
    if batch and not isinstance(items, list):
        raise field_error(422, "jobs", "must be a list of jobs")
    if len(items) > intake.config.limits.max_batch:
        raise Problem(413, f"{len(items)} jobs in one request; at most {intake.config.limits.max_batch}")
    if batch and not items:
        raise field_error(422, "jobs", "is empty")
    jobs, errors = [], []
    for i, item in enumerate(items):
        where = f"jobs[{i}]" if batch else ""
        try:
            jobs.append(parse_job(item))
        except JobError as exc:
            for part in str(exc).split("; "):
                name, sep, message = part.partition(": ")
                field = name if sep and " " not in name else ""
                if not sep and part.endswith(" is required"):
                    field, message = part.removesuffix(" is required"), "is required"
                errors.append({"field": ".".join(x for x in (where, field) if x), "message": message or part})
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errors)
        raise Problem(422, detail, errors=errors)
    from attendees.routes import badge_if_listed  # a listed ticket's job is its attendee's one badge

    out = []
    for job in jobs:
        listed = await badge_if_listed(request, token, job)
        if listed is None:
            added, _ = await intake.store.enqueue(job.job_id, job.payload(), job.printer)
            if added:
                await intake.redis.hset(enc(intake.store.keys.job(job.job_id)), "created_by", token.name)
            job_id = job.job_id
        else:
            added, job_id = listed
        view = await intake.job_view(job_id) or {"job_id": job_id}
        out.append({**_public(view), "duplicate": not added})
    created = any(not v["duplicate"] for v in out)
    return web.json_response({"jobs": out} if batch else out[0], status=201 if created else 200)


async def _readable(request: web.Request, token: Token, job_id: str) -> dict[str, Any]:
    view = await request.app[INTAKE].job_view(job_id)
    if view is None:
        raise Problem(404, f"no job {job_id!r}")
    if token.role == "kiosk" and view["_created_by"] != token.name:
        raise Problem(403, "a kiosk token reads only the jobs it created", role=token.role)
    return view


async def read(request: web.Request) -> web.Response:
    token = authorize(request, READ)
    job_id = _job_id(request)
    view = await _readable(request, token, job_id)
    wait_text = request.query.get("wait")
    if wait_text is not None:
        try:
            wait = float(wait_text)
        except ValueError:
            raise field_error(422, "wait", f"must be seconds (0 to {MAX_WAIT:g}), not {wait_text!r}") from None
        if not 0 <= wait <= MAX_WAIT or math.isnan(wait):
            raise field_error(422, "wait", f"must be between 0 and {MAX_WAIT:g} seconds")
        since = request.query.get("state", view["state"])
        deadline = time.monotonic() + wait
        key = enc(request.app[INTAKE].store.keys.job(job_id))
        while view["state"] == since and time.monotonic() < deadline:
            await asyncio.sleep(POLL)
            if dec(await request.app[INTAKE].redis.hget(key, "state")) != since:
                view = await _readable(request, token, job_id)
    return web.json_response(_public(view))


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: the job's past transitions, then each new one as it happens (``event:`` = its name)."""
    token = authorize(request, READ)
    job_id = _job_id(request)
    await _readable(request, token, job_id)
    intake: Intake = request.app[INTAKE]
    stream = enc(intake.store.keys.events)
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)

    async def send(entry_id: Any, fields: Any) -> None:
        data = {dec(k): dec(v) for k, v in fields.items()}
        if data.get("job_id") == job_id:
            line = json.dumps({"id": dec(entry_id), **data}, ensure_ascii=False)
            await resp.write(f"id: {dec(entry_id)}\nevent: {data.get('event', '')}\ndata: {line}\n\n".encode())

    # The newest part of the stream (it is capped; a job's life is recent), oldest first.
    past: Any = await intake.redis.xrevrange(stream, count=10_000)
    last = dec(past[0][0]) if past else "0-0"
    for entry_id, fields in reversed(past):
        await send(entry_id, fields)
    while True:
        replies: Any = await intake.redis.xread({stream: last}, count=500, block=15_000)
        if not replies:
            await resp.write(b": keep-alive\n\n")
            continue
        for entry_id, fields in replies[0][1]:
            await send(entry_id, fields)
            last = dec(entry_id)


async def reprint(request: web.Request) -> web.Response:
    token = authorize(request, STAFF)
    intake: Intake = request.app[INTAKE]
    job_id = _job_id(request)
    body = await _json_body(request)
    if not isinstance(body, dict):
        raise Problem(422, "the body must be a JSON object with a reason")
    reason, force = body.get("reason"), body.get("force", False)
    if not isinstance(reason, str) or not reason.strip():
        raise field_error(422, "reason", "is required (why this badge is printed again)")
    if len(reason) > 200:
        raise field_error(422, "reason", "at most 200 characters")
    if not isinstance(force, bool):
        raise field_error(422, "force", "must be true or false")
    cap = intake.config.limits.reprint_cap
    reply = await intake.store.reprint(job_id, reason.strip(), f"token:{token.name}", cap, force)
    ok, message = reprint_message(job_id, reply, cap)
    if reply.kind is ReprintKind.NO_JOB:
        raise Problem(404, message)
    view = await intake.job_view(job_id) or {}
    if not ok:
        raise Problem(409, message, state=view.get("state", ""), reprints=view.get("reprints", 0))
    return web.json_response(_public(view))


async def cancel(request: web.Request) -> web.Response:
    token = authorize(request, STAFF)
    intake: Intake = request.app[INTAKE]
    job_id = _job_id(request)
    reply = await intake.store.cancel(job_id, f"token:{token.name}")
    ok, message = cancel_message(job_id, reply)
    if reply.kind is CancelKind.NO_JOB:
        raise Problem(404, message)
    if not ok:
        state = "printing" if reply.detail == "taken" else reply.detail
        raise Problem(409, message, state=state)
    return web.json_response(_public(await intake.job_view(job_id) or {}))


async def printers(request: web.Request) -> web.Response:
    authorize(request, READ)
    view = await fleet(request.app[INTAKE].redis, request.app[INTAKE].config.venue)
    return web.json_response(
        {
            "printers": [
                {"name": p.name, "location": p.location, "state": p.state, "depth": p.depth, "inflight": p.inflight}
                for p in view.printers
            ]
        }
    )


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(spec())


async def metrics(request: web.Request) -> web.Response:
    """Prometheus text: the venue's counts (printed, reprints, cancels, ...) and this process's requests."""
    intake: Intake = request.app[INTAKE]
    view = await fleet(intake.redis, intake.config.venue)
    lines = ["# HELP badge_venue_jobs Venue counts by transition (the stats hash).", "# TYPE badge_venue_jobs gauge"]
    for name, value in sorted(view.counts.items()):
        lines.append(f'badge_venue_jobs{{what="{name}"}} {value}')
    lines += staff_metric_lines(StaffCounts.from_stats(view.counts))
    from attendees.routes import metric_lines  # the attendee list's counts, folded as they are read

    lines += await metric_lines(request)
    lines += [
        "# HELP badge_intake_requests Requests answered, by route and status.",
        "# TYPE badge_intake_requests counter",
    ]
    for (route, status), count in sorted(intake.requests.items()):
        lines.append(f'badge_intake_requests_total{{route="{route}",status="{status}"}} {count}')
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")


KIOSK_FILES = {"kiosk.js": "text/javascript", "kiosk.css": "text/css", "strings.js": "text/javascript"}


async def kiosk_page(request: web.Request) -> web.Response:
    text = resources.files("agent.intake").joinpath("kiosk/index.html").read_text(encoding="utf-8")
    return web.Response(text=text, content_type="text/html")


async def kiosk_asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name == "settings.json":  # what the page does with an attendee list, from the config and the venue
        from attendees.routes import kiosk_settings

        return await kiosk_settings(request)
    if name not in KIOSK_FILES:
        raise Problem(404, f"no kiosk file {name!r}")
    custom = request.app[INTAKE].config.kiosk.strings
    if name == "strings.js" and custom is not None:
        text = custom.read_text(encoding="utf-8")
    else:
        text = resources.files("agent.intake").joinpath(f"kiosk/{name}").read_text(encoding="utf-8")
    return web.Response(text=text, content_type=KIOSK_FILES[name])


def make_app(config: IntakeConfig, redis: Redis) -> web.Application:
    intake = Intake(config, redis)
    app = web.Application(middlewares=[make_middleware(intake)], client_max_size=config.limits.max_body_bytes)
    app[INTAKE] = intake
    app.router.add_post("/v1/jobs", create)
    app.router.add_get("/v1/jobs/{id}", read, allow_head=False)
    app.router.add_delete("/v1/jobs/{id}", cancel)
    app.router.add_get("/v1/jobs/{id}/events", events, allow_head=False)
    app.router.add_post("/v1/jobs/{id}/reprint", reprint)
    app.router.add_get("/v1/printers", printers, allow_head=False)
    app.router.add_get("/openapi.json", openapi, allow_head=False)
    app.router.add_get("/metrics", metrics, allow_head=False)
    app.router.add_get("/kiosk", kiosk_page, allow_head=False)
    app.router.add_get("/kiosk/{name}", kiosk_asset, allow_head=False)
    from attendees.routes import add_routes  # the attendee list's routes, in their own module

    add_routes(app, intake)
    return app
