"""The intake's aiohttp application: the routes of docs/intake.md, one handler each.

Stateless: every job, state and event lives in the venue's Redis keys (protocol/keys.py), so several intake
processes can serve one venue behind a proxy. Only the rate limit's buckets, the open-watch counts and the events
reader's index (intake/hub.py, rebuilt from the stream at start) are per process.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web
from redis.asyncio import Redis
from redis.exceptions import OutOfMemoryError, RedisError

from core.errors import JobError, UserError
from core.exposition import exposition
from core.page_headers import add_page_headers
from eventday.counts import event_day
from eventday.metrics import metric_families as day_families
from intake.attendee_routes import (
    add_routes,
    any_printer_can_print,
    badge_if_listed,
    desk_target,
    kiosk_settings,
    kiosk_walk_in,
    metric_families,
    refuse_unlisted,
)
from intake.config import IntakeConfig
from intake.context import INTAKE, Intake, authorize, bearer_secret, json_body
from intake.hub import Event
from intake.jsonreply import json_response
from intake.openapi import spec
from intake.outstanding import FINAL
from intake.preprint_routes import metric_families as preprint_metric_families
from intake.problem import Problem, field_error, response
from intake.tokens import TOKEN_NAME_RE, Token
from intake.waits import kiosk_wait
from protocol.connection import master_changes
from protocol.fleet import fleet
from protocol.jobs import Job, parse_job
from protocol.keys import JOB_ID_RE, PRINTER_RE
from protocol.replies import CancelKind, ReprintKind
from protocol.staff import cancel_message, cancel_token_jobs, reprint_message
from protocol.vocabulary import StaffCounts, staff_family

log = logging.getLogger("badge_agent.intake")

CREATE = ("kiosk", "desk", "staff")
READ = ("kiosk", "desk", "staff", "viewer")
STAFF = ("staff",)
#: A desk reprints a lost badge too (within the cap); staff may force past it.
REPRINT = ("desk", "staff")
MAX_WAIT = 30.0
#: Seconds between looks at whether a long-poll's client is still there (and its token still valid).
GONE_CHECK = 1.0
#: A long-poll reads its job again after an event of that job, and at least this often (should the reader lag).
RECHECK = 5.0
#: The start of every job id a kiosk creates (``kiosk:<token>:<id>``); refused from desks and staff.
KIOSK_PREFIX = "kiosk:"
#: The job hash fields a reader sees, besides job_id and location.

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _public(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if not k.startswith("_")}


async def _answer(request: web.Request, token: Token, view: dict[str, Any]) -> dict[str, Any]:
    """A job as its reader sees it; for a kiosk, a waiting job says whether no printer can print it now
    (``no_printer``), so the page sends the attendee to the help desk instead of "next in line" for ever, and,
    as a scanned ticket's badge does, about how long it waits (``wait_minutes``) when that is worth saying."""
    body = _public(view)
    if token.role == "kiosk" and view.get("state") == "queued":
        body["no_printer"] = not await any_printer_can_print(request)
        wait = await kiosk_wait(request, token)
        if wait is not None:
            body["wait_minutes"] = wait
    return body


def _route_name(request: web.Request) -> str:
    info = request.match_info.route.resource
    return info.canonical if info is not None else "unmatched"


def make_middleware(intake: Intake) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.monotonic()
        intake.activity.start(request.protocol)
        try:
            resp = await handler(request)
        except Problem as problem:
            resp = response(problem)
        except OutOfMemoryError:
            # Over maxmemory the venue's Redis takes no new work, while the printers finish what they have.
            log.error("the venue's Redis is over maxmemory: new work is refused until memory is freed")
            resp = response(
                Problem(
                    503,
                    "the venue's Redis is full: no new badge can be queued now; tell the operator",
                    headers={"Retry-After": "5"},
                )
            )
        except RedisError as exc:
            log.error("Redis refused or unreachable: %s", exc)
            resp = response(Problem(503, "the venue's Redis is unreachable; try again", headers={"Retry-After": "1"}))
        except web.HTTPRequestEntityTooLarge:
            resp = response(Problem(413, f"the body is larger than {intake.config.limits.max_body_bytes} bytes"))
        except web.HTTPException as exc:  # aiohttp's own 404 / 405 for an unknown route or method
            if exc.status < 400:
                raise
            resp = response(Problem(exc.status, exc.reason))
        except (ConnectionResetError, asyncio.CancelledError):
            raise  # the client left: there is nobody to answer
        except Exception:  # a bug, not the caller's fault: logged with its traceback, answered as a problem
            log.exception("%s %s failed", request.method, _route_name(request))
            resp = response(Problem(500, "the intake failed on this request; it is in the intake's log"))
        finally:
            intake.activity.end(request.protocol)
        route = _route_name(request)
        intake.requests.labels(route, str(resp.status)).inc()
        # The route and status only: never a header (the token rides in Authorization), never the path (it holds
        # ticket codes: /v1/attendees/{code}). Refusals for being over a limit are counted in /metrics, not logged one
        # by one: a flooding kiosk must not flood the journal too.
        if resp.status != 429:
            log.info("%s %s %d %.1f ms", request.method, route, resp.status, (time.monotonic() - started) * 1000)
        return resp

    return middleware


def _job_id(request: web.Request) -> str:
    job_id = request.match_info["id"]
    if not JOB_ID_RE.match(job_id):
        raise field_error(422, "id", "not a job id (letters, digits and . _ : @ -, at most 128)")
    return job_id


def _kiosk_job(token: Token, item: dict[str, Any], job: Job) -> Job:
    """A kiosk's job under an id of its own: ``kiosk:<token>:<the id it asked for>`` (hashed when that is too long).

    So a kiosk can never take the id of a job on the attendee list (whose ids do not start with ``kiosk:``, which
    desks and staff may not use), and a duplicate a kiosk meets is always one it created itself.
    """
    job_id = f"{KIOSK_PREFIX}{token.name}:{job.job_id}"
    if not JOB_ID_RE.match(job_id):
        job_id = f"{KIOSK_PREFIX}{token.name}:{hashlib.sha256(job.job_id.encode()).hexdigest()[:32]}"
    return parse_job({**item, "job_id": job_id})


def _parse_jobs(token: Token, items: list[Any], batch: bool) -> list[Job]:
    """Each item as a job (422 naming every bad field of the batch), with the token's rules applied."""
    jobs, errors = [], []
    for i, item in enumerate(items):
        where = f"jobs[{i}]" if batch else ""
        try:
            job = parse_job(item)
            if token.role == "kiosk":
                job = _kiosk_job(token, item, job)
            elif job.job_id.startswith(KIOSK_PREFIX):
                errors.append({"field": _join(where, "job_id"), "message": f"ids starting {KIOSK_PREFIX} are kiosks'"})
                continue
            jobs.append(job)
        except JobError as exc:
            for part in str(exc).split("; "):
                name, sep, message = part.partition(": ")
                field = name if sep and " " not in name else ""
                if not sep and part.endswith(" is required"):
                    field, message = part.removesuffix(" is required"), "is required"
                errors.append({"field": _join(where, field), "message": message or part})
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errors)
        raise Problem(422, detail, errors=errors)
    if token.printers:
        for i, job in enumerate(jobs):
            if job.printer is not None and job.printer not in token.printers:
                field = _join(f"jobs[{i}]" if batch else "", "printer")
                allowed = ", ".join(token.printers)
                raise Problem(
                    403,
                    f"{field}: this token may pin jobs only to {allowed}",
                    errors=[{"field": field, "message": f"not one of this token's printers ({allowed})"}],
                )
    return jobs


def _join(where: str, field: str) -> str:
    return ".".join(x for x in (where, field) if x)


async def create(request: web.Request) -> web.Response:
    token = authorize(request, CREATE)
    intake: Intake = request.app[INTAKE]
    await refuse_unlisted(request, token)
    body = await json_body(request)
    batch = isinstance(body, dict) and "jobs" in body
    if batch and token.role == "kiosk":
        raise Problem(403, "a kiosk token creates one job a request, not a batch", role=token.role)
    items = body["jobs"] if batch else [body]
    if batch and not isinstance(items, list):
        raise field_error(422, "jobs", "must be a list of jobs")
    if len(items) > intake.config.limits.max_batch:
        raise Problem(413, f"{len(items)} jobs in one request; at most {intake.config.limits.max_batch}")
    if batch and not items:
        raise field_error(422, "jobs", "is empty")
    jobs = _parse_jobs(token, items, batch)
    if token.role == "kiosk":
        jobs = [kiosk_walk_in(job, intake.config.kiosk.walk_in_type) for job in jobs]

    out = []
    async with intake.lanes.lane(token.role):
        made: list[tuple[str, bool, bool]] = []  # (job id, made now, the attendee list's badge)
        async with intake.outstanding.room(token.name, token.max_outstanding, len(jobs)):
            for job in jobs:
                listed = await badge_if_listed(request, token, job)
                if listed is None:
                    added = (
                        await intake.store.enqueue(job.job_id, job.payload(), job.printer, token.name, job.zoned)
                    ).added
                    made.append((job.job_id, added, False))
                else:
                    made.append((listed[1], listed[0], True))
        for job_id, added, from_list in made:
            view = await intake.job_view(job_id) or {"job_id": job_id, "_created_by": ""}
            if not added and not from_list and not _may_read(token, view):
                # Someone else's job: say no more than that the id is taken (not its state, printer or place).
                raise Problem(409, f"job id {job_id!r} is taken", job_id=job_id)
            out.append({**await _answer(request, token, view), "duplicate": not added})
    created = any(not v["duplicate"] for v in out)
    return json_response({"jobs": out} if batch else out[0], status=201 if created else 200)


def _may_read(token: Token, view: dict[str, Any]) -> bool:
    return token.role != "kiosk" or view["_created_by"] == token.name


async def _readable(request: web.Request, token: Token, job_id: str) -> dict[str, Any]:
    intake: Intake = request.app[INTAKE]
    async with intake.lanes.lane(token.role):
        view = await intake.job_view(job_id)
    if view is None:
        raise Problem(404, f"no job {job_id!r}")
    if not _may_read(token, view):
        raise Problem(403, "a kiosk token reads only the jobs it created", role=token.role)
    return view


def _gone(request: web.Request) -> bool:
    """The client closed its connection (the handler may still be running, e.g. a long-poll waiting)."""
    transport = request.transport
    return transport is None or transport.is_closing()


def _still_valid(request: web.Request, token: Token) -> bool:
    """The request's token is still in the token file (a revoke ends a stream or long-poll that is open)."""
    secret = bearer_secret(request)
    try:
        now = request.app[INTAKE].tokens.lookup(secret) if secret else None
    except UserError:
        return True  # an unreadable file is the operator's to fix; it does not revoke anyone
    return now is not None and now.name == token.name


def _wait_seconds(request: web.Request) -> float | None:
    wait_text = request.query.get("wait")
    if wait_text is None:
        return None
    try:
        wait = float(wait_text)
    except ValueError:
        raise field_error(422, "wait", f"must be seconds (0 to {MAX_WAIT:g}), not {wait_text!r}") from None
    if not 0 <= wait <= MAX_WAIT or math.isnan(wait):
        raise field_error(422, "wait", f"must be between 0 and {MAX_WAIT:g} seconds")
    return wait


async def read(request: web.Request) -> web.Response:
    token = authorize(request, READ)
    job_id = _job_id(request)
    wait = _wait_seconds(request)
    intake: Intake = request.app[INTAKE]
    if wait:
        intake.watches.check(token.name)  # refused before any Redis work: a flood of them costs no round trip
    view = await _readable(request, token, job_id)
    since = request.query.get("state", view["state"])
    if not wait or view["state"] != since or view["state"] in FINAL:
        return json_response(await _answer(request, token, view))  # a final state never changes on its own
    deadline = time.monotonic() + wait
    with intake.watches.hold(token.name), intake.hub.listen(job_id) as listener:
        view = await _readable(request, token, job_id)  # again, now that no event can be missed
        recheck = time.monotonic() + RECHECK
        while view["state"] == since:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            woke = await listener.wait(min(left, GONE_CHECK))
            if intake.hub.closing:
                view = await _readable(request, token, job_id)
                break  # stopping: the state as it is now, and the client asks again (another intake, or this one)
            if _gone(request):
                return web.Response(status=499)  # nobody is there to read it (nginx's "client closed request")
            if not _still_valid(request, token):
                raise Problem(401, "this token was revoked", headers={"WWW-Authenticate": "Bearer"})
            if woke or time.monotonic() >= recheck:
                # An event of this job, or (rarely: the reader was cut off from Redis) time to look anyway.
                recheck = time.monotonic() + RECHECK
                view = await _readable(request, token, job_id)
    return json_response(await _answer(request, token, view))


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: the job's past transitions, then each new one as it happens (``event:`` = its name).

    A keep-alive comment every ``limits.keepalive`` seconds finds a client that left; the token is looked at
    again as often, and the stream ends after ``limits.stream_seconds`` (an EventSource reconnects with
    Last-Event-ID and is sent only what came after it).
    """
    token = authorize(request, READ)
    job_id = _job_id(request)
    intake: Intake = request.app[INTAKE]
    intake.watches.check(token.name)
    await _readable(request, token, job_id)
    limits = intake.config.limits
    with intake.watches.hold(token.name):
        try:
            async with asyncio.timeout(limits.keepalive * 4):
                await intake.hub.ready.wait()
        except TimeoutError:
            raise Problem(
                503,
                "the intake is still reading the venue's events (just started); try again",
                headers={"Retry-After": "2"},
            ) from None
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )
        with intake.hub.listen(job_id) as listener:
            past = intake.hub.history(job_id, request.headers.get("Last-Event-ID", ""))
            try:
                await resp.prepare(request)
                await _send(resp, past)
                ends = time.monotonic() + limits.stream_seconds
                while (left := ends - time.monotonic()) > 0:
                    if not await listener.wait(min(left, limits.keepalive)):
                        await resp.write(b": keep-alive\n\n")  # fails once the client is gone
                    if listener.overflowed or intake.hub.closing or _gone(request) or not _still_valid(request, token):
                        break
                    pending = list(listener.events)
                    listener.events.clear()
                    await _send(resp, pending)
            except ConnectionResetError:
                pass  # the client left: nothing to tell it
    return resp


async def _send(resp: web.StreamResponse, events: list[Event]) -> None:
    if events:
        await resp.write("".join(f"id: {e.entry_id}\nevent: {e.name}\ndata: {e.data}\n\n" for e in events).encode())


async def reprint(request: web.Request) -> web.Response:
    """A new print round of a printed or dead badge, with a reason, capped (``limits.reprint_cap``; staff only may
    ``force`` past it). It waits at the asking token's own printer or zone (``desk_target``), or the one asked for."""
    token = authorize(request, REPRINT)
    intake: Intake = request.app[INTAKE]
    job_id = _job_id(request)
    body = await json_body(request)
    if not isinstance(body, dict):
        raise Problem(422, "the body must be a JSON object with a reason")
    reason, force = body.get("reason"), body.get("force", False)
    if not isinstance(reason, str) or not reason.strip():
        raise field_error(422, "reason", "is required (why this badge is printed again)")
    if len(reason) > 200:
        raise field_error(422, "reason", "at most 200 characters")
    if not isinstance(force, bool):
        raise field_error(422, "force", "must be true or false")
    if force and token.role != "staff":
        raise Problem(403, "only a staff token may reprint past the cap (force)", role=token.role)
    printer = body.get("printer")
    if printer is not None:
        if not isinstance(printer, str) or not PRINTER_RE.match(printer):
            raise field_error(422, "printer", "must be a printer name")
        if token.printers and printer not in token.printers:
            allowed = ", ".join(token.printers)
            raise Problem(
                403,
                f"printer: this token may pin jobs only to {allowed}",
                errors=[{"field": "printer", "message": f"not one of this token's printers ({allowed})"}],
            )
    cap = intake.config.limits.reprint_cap
    async with intake.lanes.lane(token.role):
        target, zone = await desk_target(request, token, printer)
        reply = await intake.store.reprint(job_id, reason.strip(), f"token:{token.name}", cap, force, target, zone)
        view = await intake.job_view(job_id) or {}
    ok, message = reprint_message(job_id, reply, cap)
    if reply.kind is ReprintKind.NO_JOB:
        raise Problem(404, message)
    if not ok:
        raise Problem(409, message, state=view.get("state", ""), reprints=view.get("reprints", 0))
    return json_response(_public(view))


async def cancel(request: web.Request) -> web.Response:
    token = authorize(request, STAFF)
    intake: Intake = request.app[INTAKE]
    job_id = _job_id(request)
    async with intake.lanes.lane(token.role):
        reply = await intake.store.cancel(job_id, f"token:{token.name}")
        view = await intake.job_view(job_id) or {}
    ok, message = cancel_message(job_id, reply)
    if reply.kind is CancelKind.NO_JOB:
        raise Problem(404, message)
    if not ok:
        state = "printing" if reply.detail == "taken" else reply.detail
        raise Problem(409, message, state=state)
    return json_response(_public(view))


async def cancel_token(request: web.Request) -> web.Response:
    """Staff: cancel every queued job one token created (a kiosk that flooded the pool), in one request."""
    token = authorize(request, STAFF)
    intake: Intake = request.app[INTAKE]
    name = request.match_info["name"]
    if not TOKEN_NAME_RE.match(name):
        raise field_error(422, "name", "not a token name (letters, digits, '-', '_' or '.', at most 64)")
    async with intake.lanes.lane(token.role):
        done = await cancel_token_jobs(intake.store, name, f"token:{token.name}")
    return json_response(
        {
            "token": name,
            "cancelled": done.cancelled,
            "left": [{"job_id": job_id, "state": state} for job_id, state in done.refused],
        }
    )


async def printers(request: web.Request) -> web.Response:
    token = authorize(request, READ)
    intake: Intake = request.app[INTAKE]
    async with intake.lanes.lane(token.role):
        view = await fleet(intake.redis, intake.config.venue)
    return json_response(
        {
            "printers": [
                {"name": p.name, "location": p.location, "state": p.state, "depth": p.depth, "inflight": p.inflight}
                for p in view.printers
            ]
        }
    )


async def openapi(request: web.Request) -> web.Response:
    return json_response(spec())


async def metrics(request: web.Request) -> web.Response:
    """Prometheus text: the venue's counts (printed, reprints, cancels, ...) and this process's requests."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    intake: Intake = request.app[INTAKE]
    async with intake.lanes.lane(None):
        view = await fleet(intake.redis, intake.config.venue)
        day = await event_day(intake.redis, intake.config.venue, view)
    jobs = GaugeMetricFamily("badge_venue_jobs", "Venue counts by transition (the stats hash).", labels=["what"])
    for name, value in sorted(view.counts.items()):
        jobs.add_metric([name], value)

    dlq = GaugeMetricFamily("badge_venue_dlq_length", "Dead letters in the venue's DLQ now.")
    dlq.add_metric([], view.dlq)
    moved = CounterMetricFamily(
        "badge_redis_master_changes", "Times this process followed the venue's Redis master to another server."
    )
    moved.add_metric([], master_changes(intake.redis))
    families = [
        jobs,
        dlq,
        moved,
        staff_family(StaffCounts.from_stats(view.counts)),
        *await metric_families(request),
        *day_families(day),
        *await preprint_metric_families(request),
    ]
    watches = GaugeMetricFamily("badge_intake_watches", "SSE streams and long-polls open now.")
    watches.add_metric([], intake.watches.count)
    reads = CounterMetricFamily(
        "badge_intake_event_reads", "XREADs of the venue's events stream (one reader for every watch)."
    )
    reads.add_metric([], intake.hub.reads)
    text, content_type = exposition([*families, intake.requests.family(), watches, reads])
    return web.Response(body=text, headers={"Content-Type": content_type})


ROOT_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Badge intake</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem">
<h1>Badge intake</h1>
<ul>
<li><a href="/kiosk">/kiosk</a>: the self-service kiosk (open it once as <code>/kiosk#token=...</code>)</li>
<li><a href="/desk">/desk</a>: the help desk (open it once as <code>/desk#token=...</code>)</li>
<li><a href="/openapi.json">/openapi.json</a>: the API</li>
</ul>
</body>
</html>
"""


async def root(request: web.Request) -> web.Response:
    """Where a person who opens the intake's address is sent: the kiosk, the desk and the API (JSON when asked)."""
    links = {"kiosk": "/kiosk", "desk": "/desk", "openapi": "/openapi.json"}
    accept = request.headers.get("Accept", "")
    if "application/json" in accept and "text/html" not in accept:
        return json_response({"service": "badge-agent intake", "links": links})
    return web.Response(text=ROOT_PAGE, content_type="text/html")


KIOSK_FILES = {"kiosk.js": "text/javascript", "kiosk.css": "text/css", "strings.js": "text/javascript"}


async def kiosk_page(request: web.Request) -> web.Response:
    text = resources.files("intake").joinpath("kiosk/index.html").read_text(encoding="utf-8")
    return web.Response(text=text, content_type="text/html")


async def kiosk_asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name == "settings.json":  # what the page does with an attendee list, from the config and the venue
        return await kiosk_settings(request)
    if name not in KIOSK_FILES:
        raise Problem(404, f"no kiosk file {name!r}")
    custom = request.app[INTAKE].config.kiosk.strings
    if name == "strings.js" and custom is not None:
        text = custom.read_text(encoding="utf-8")
    else:
        text = resources.files("intake").joinpath(f"kiosk/{name}").read_text(encoding="utf-8")
    return web.Response(text=text, content_type=KIOSK_FILES[name])


def _reader(intake: Intake) -> Callable[[web.Application], AsyncIterator[None]]:
    """The events reader runs while the app does."""

    async def run(app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(intake.hub.run(), name="intake-events-reader")
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return run


def _stopping(intake: Intake) -> Callable[[web.Application], Awaitable[None]]:
    """At shutdown the long-polls answer and the streams end at once (a client asks again, of another intake or
    of this one restarted), rather than holding the stop up until the runner's shutdown timeout cancels them."""

    async def stop(app: web.Application) -> None:
        intake.hub.close()

    return stop


def make_app(config: IntakeConfig, redis: Redis) -> web.Application:
    intake = Intake(config, redis)
    app = web.Application(middlewares=[make_middleware(intake)], client_max_size=config.limits.max_body_bytes)
    app[INTAKE] = intake
    add_page_headers(app)
    app.cleanup_ctx.append(_reader(intake))
    app.on_shutdown.append(_stopping(intake))
    app.router.add_get("/", root, allow_head=False)
    app.router.add_post("/v1/jobs", create)
    app.router.add_get("/v1/jobs/{id}", read, allow_head=False)
    app.router.add_delete("/v1/jobs/{id}", cancel)
    app.router.add_get("/v1/jobs/{id}/events", events, allow_head=False)
    app.router.add_post("/v1/jobs/{id}/reprint", reprint)
    app.router.add_delete("/v1/tokens/{name}/jobs", cancel_token)
    app.router.add_get("/v1/printers", printers, allow_head=False)
    app.router.add_get("/openapi.json", openapi, allow_head=False)
    app.router.add_get("/metrics", metrics, allow_head=False)
    app.router.add_get("/kiosk", kiosk_page, allow_head=False)
    app.router.add_get("/kiosk/{name}", kiosk_asset, allow_head=False)

    add_routes(app, intake)
    return app
