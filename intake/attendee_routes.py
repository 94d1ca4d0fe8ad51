"""The intake's attendee routes (docs/intake.md, "Attendee list"): look up, search, badge, walk-in, correct.

A ticket code is a credential: a kiosk token may look up one full code and never search or list; a viewer token
sees no attendee; a desk sees the code masked and acts on an attendee by its handle (``AttendeeStore.handle``);
only staff see codes. Every lookup is rate-limited per token (``limits.lookup_rate``); no handler here logs a code
(the request log names the route, not the path). Registered on the intake's app by ``add_routes``.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import msgspec
from aiohttp import web

from attendees.importer import is_email
from attendees.keys import CODE_RE
from attendees.specs import BadgeKind, PutKind
from attendees.store import Attendee, AttendeeStore, BadgeState, record_for
from attendees.views import describe, desk_view, kiosk_view
from core.errors import JobError
from intake import preprint_routes
from intake.context import INTAKE, Intake, authorize, json_body
from intake.jsonreply import json_response
from intake.problem import Problem, field_error
from intake.ratelimit import RateLimit
from intake.tokens import Token
from intake.waits import kiosk_wait
from pretix_sync.walk_ins import desk_product, offered_products, order_wanted
from protocol.fleet import FleetView, PrinterView, fleet
from protocol.jobs import Job, parse_job
from protocol.state import AgentState
from protocol.store import Zoned

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

log = logging.getLogger("badge_agent.intake.attendees")

# A viewer (the board, a screen in the hall) sees no attendee: a search answers names, e-mails and order codes.
LOOKUP = ("kiosk", "desk", "staff")
SEARCH = ("desk", "staff")
BADGE = ("kiosk", "desk", "staff")
WALK_IN = ("desk", "staff")
CORRECT = ("staff",)
MAX_QUERY = 200
#: A code not on the list. A kiosk is never told more (nor whether it is someone's order code: a kiosk never looks
#: up, lists or names attendees by order code), so the answer sends everyone to the one code that works.
UNKNOWN = "This code is not on the list. Please scan the code on your ticket, or go to the help desk."
CANCELLED = "This ticket has been cancelled. Please go to the help desk."
ATTENTION = "Please go to the help desk: staff will print your badge there."

ATTENDEES = web.AppKey("attendees", AttendeeStore)
LOOKUPS = web.AppKey("attendee_lookups", RateLimit)
#: Failed lookups (codes not on the list), per token and per client address: ``token:<name>``, ``address:<ip>``.
MISSES = web.AppKey("attendee_misses", RateLimit)


def add_routes(app: web.Application, intake: Intake) -> None:
    app[ATTENDEES] = AttendeeStore(intake.redis, intake.config.venue, intake.store)
    limits = intake.config.limits
    app[LOOKUPS] = RateLimit(limits.lookup_rate, limits.lookup_burst)
    app[MISSES] = RateLimit(limits.miss_rate, limits.miss_burst)
    app.router.add_get("/v1/attendees", search, allow_head=False)
    app.router.add_post("/v1/attendees", walk_in)
    app.router.add_get("/v1/attendees/{code}", lookup, allow_head=False)
    app.router.add_patch("/v1/attendees/{code}", correct)
    app.router.add_post("/v1/attendees/{code}/badge", badge)
    app.router.add_get("/desk", desk_page, allow_head=False)
    app.router.add_get("/desk/{name}", desk_asset, allow_head=False)
    app.router.add_post("/v1/attendees/{code}/handed-over", handed_over)
    preprint_routes.add_routes(app, intake, app[ATTENDEES])


def _authorize_lookup(request: web.Request, roles: tuple[str, ...]) -> Token:
    """The token, past its role and both rates: every request's, and the lookups' (codes cannot be tried fast)."""
    token = authorize(request, roles)
    wait = request.app[LOOKUPS].take(token.name)
    if wait:
        rate = request.app[INTAKE].config.limits.lookup_rate
        raise Problem(
            429,
            f"over this token's attendee lookups ({rate:g}/s)",
            headers={"Retry-After": str(wait)},
            retry_after=wait,
        )
    return token


async def _code(request: web.Request) -> str:
    """The ticket code the path names: by the attendee's handle (what desks and kiosks are given), or by the code
    itself (a ticket scanned or typed). A code that looks like a handle but is none is taken as a code."""
    code = request.match_info["code"]
    if not CODE_RE.fullmatch(code):
        raise field_error(422, "code", "a ticket code is 1-128 printable characters without spaces")
    return await request.app[ATTENDEES].code_of(code) or code


async def _view(request: web.Request, token: Token, attendee: Attendee, state: BadgeState) -> dict[str, Any]:
    """The attendee as the token's role may see it (docs/intake.md, "Attendee list"): staff all and the handle, a
    desk the code and e-mail masked and the handle, a kiosk the little of ``kiosk_view``; with where a pre-printed
    badge is (preprint/views.py), to a kiosk without the run's name or layout."""
    handle = await request.app[ATTENDEES].handle(attendee)
    preprinted = await preprint_routes.door_answer(request, attendee)
    if token.role != "kiosk":
        body = (
            {**describe(attendee, state), "handle": handle}
            if token.role == "staff"
            else desk_view(attendee, state, handle)
        )
        if preprinted is not None:
            body["preprint"] = preprinted  # the desk sees the box
        return body
    body = kiosk_view(attendee, state, handle)
    if preprinted is not None:
        # A badge in a box: the kiosk prints nothing and says where it is (no run's name or layout to a kiosk).
        body["preprint"] = {k: preprinted[k] for k in ("box", "box_label", "range", "pickup", "state")}
        if "message" in preprinted:
            body["message"] = preprinted["message"]
    if state.state == "queued":
        # Waiting, and no printer it may go to can print (all out of labels, paused, down): the kiosk sends the
        # attendee to the help desk instead of saying "next in line" for ever.
        body["badge"]["no_printer"] = not await any_printer_can_print(request)
        wait = await kiosk_wait(request, token)
        if wait is not None:
            body["badge"]["wait_minutes"] = wait
    return body


async def _found(request: web.Request, code: str) -> tuple[Attendee, BadgeState]:
    found = await request.app[ATTENDEES].found(code)
    if found is None:
        raise Problem(404, UNKNOWN)
    return found


def _miss_buckets(request: web.Request, token: Token) -> tuple[str, str]:
    return f"token:{token.name}", f"address:{request.remote or '?'}"


async def _looked_up(request: web.Request, token: Token, code: str) -> tuple[Attendee, BadgeState]:
    """``_found``, counting a code not on the list against the token's and the client address's failed lookups: past
    either's bucket (``limits.miss_rate``, ``miss_burst``) every lookup is refused until it refills, so codes cannot
    be tried fast with many tokens from one machine, nor with one token from many."""
    misses = request.app[MISSES]
    buckets = _miss_buckets(request, token)
    wait = max(misses.wait(bucket) for bucket in buckets)
    if wait:
        rate = request.app[INTAKE].config.limits.miss_rate
        raise Problem(
            429,
            f"too many codes not on the list from this token or address (at most {rate:g}/s): wait, or go to the "
            "help desk",
            headers={"Retry-After": str(wait)},
            retry_after=wait,
        )
    found = await request.app[ATTENDEES].found(code)
    if found is None:
        for bucket in buckets:
            misses.take(bucket)
        raise Problem(404, UNKNOWN)
    return found


async def lookup(request: web.Request) -> web.Response:
    token = _authorize_lookup(request, LOOKUP)
    attendee, state = await _looked_up(request, token, await _code(request))
    body = await _view(request, token, attendee, state)
    if attendee.status == "cancelled":
        body["message"] = CANCELLED
    return json_response(body)


async def search(request: web.Request) -> web.Response:
    token = _authorize_lookup(request, SEARCH)
    query = request.query.get("q", "")
    if len(query) > MAX_QUERY:
        raise field_error(422, "q", f"at most {MAX_QUERY} characters")
    store = request.app[ATTENDEES]
    found = await store.search(query)
    states = await store.badge_states(found)
    return json_response({"attendees": [await _view(request, token, a, s) for a, s in zip(found, states, strict=True)]})


async def _printer(request: web.Request, token: Token) -> str | None:
    """A pin a desk or staff may ask for (``{"printer": NAME}``); a kiosk's badges go where the venue sends them."""
    if not request.can_read_body:
        return None
    body = await json_body(request)
    if not isinstance(body, dict):
        raise Problem(422, "the body must be a JSON object (or empty)")
    printer = body.get("printer")
    if printer is None:
        return None
    if token.role == "kiosk":
        raise Problem(403, "a kiosk token cannot choose the printer", role=token.role)
    if not isinstance(printer, str):
        raise field_error(422, "printer", "must be a printer name")
    return printer


#: Printer states in which a zone printer takes its pinned badges (protocol/state.py): anything else hands them on.
PRINTING_STATES = (AgentState.READY, AgentState.PRINTING)


def _able(view: FleetView, names: Sequence[str], beat_within_s: float) -> list[PrinterView]:
    """The printers of ``names`` that can print now: beating within the window, ready or printing (the rule of
    prelude.lua's ``can_print``; a drained printer's state is ``drained``)."""
    return [
        p
        for p in view.printers
        if p.name in names and p.state in PRINTING_STATES and p.beat_age is not None and p.beat_age < beat_within_s
    ]


def _fewest_ahead(able: list[PrinterView]) -> str:
    """The printer with the fewest badges ahead of a new one (its pinned queue plus the one in hand; a tie to the
    first name)."""
    return min(able, key=lambda p: (p.depth + (1 if p.inflight else 0), p.name)).name


async def any_printer_can_print(request: web.Request) -> bool:
    """Whether a printer the venue's badges may go to can print now. A badge of a zone goes to a printer outside it
    when none of the zone's can print, and any other to whichever printer is free: so a waiting badge is stuck
    exactly when no printer of the venue can print (each out of labels, paused, down, drained or not beating)."""
    intake = request.app[INTAKE]
    view = await fleet(intake.redis, intake.config.venue)
    names = [p.name for p in view.printers]
    return bool(_able(view, names, intake.store.zone_dead_after_ms / 1000))


async def desk_target(request: web.Request, token: Token, printer: str | None) -> tuple[str | None, Zoned | None]:
    """Where a desk's or staff's reprint waits: the printer asked for; else, for a token of a zone, its zone's
    printer that can print with the fewest badges ahead (the round carries the zone); else, for a token bound to
    printers (``--printer``), the one of them that can print with the fewest ahead; else, or when none of them can
    print, None (the front of the pool: the first printer free prints it)."""
    chosen, zone = await zone_printer(request, token)
    if printer is not None:
        return printer, zone
    if zone is not None or not token.printers:
        return chosen, zone
    intake = request.app[INTAKE]
    view = await fleet(intake.redis, intake.config.venue)
    able = _able(view, token.printers, intake.store.zone_dead_after_ms / 1000)
    return (_fewest_ahead(able) if able else None), None


async def zone_printer(request: web.Request, token: Token) -> tuple[str | None, Zoned | None]:
    """For a token bound to a zone: the zone's printer that can print (beating, ready or printing) with the fewest
    badges ahead (pinned queue plus the one in hand), or None when none of its printers can print (then the badge
    goes to the pool, for any printer of the venue); and the zone with its printers, which the job carries, so the
    agents keep it in its zone afterwards too (a steal from outside only when none of the zone's printers can
    print; a dead, drained or down printer's zone jobs handed to another of them: protocol/steal.lua,
    prelude.lua ``hand_on``). (None, None) for a token of no zone."""
    intake = request.app[INTAKE]
    name = intake.config.zone_name_of(token.name, token.zone)
    if name is None:
        return None, None
    zone = intake.config.zones[name]
    view = await fleet(intake.redis, intake.config.venue)
    # A printer whose last heartbeat is older than the store's zone window is not counted on: the window the
    # protocol's steps that hand a zone's jobs on count it by, as this process's store states it.
    able = _able(view, zone.printers, intake.store.zone_dead_after_ms / 1000)
    zoned = (name, tuple(zone.printers))
    if not able:
        return None, zoned
    return _fewest_ahead(able), zoned


async def _print(request: web.Request, token: Token, code: str, printer: str | None) -> web.Response:
    store = request.app[ATTENDEES]
    intake = request.app[INTAKE]
    _, before = await _looked_up(request, token, code)
    chosen, zone = await zone_printer(request, token)
    # created_by: the token, as POST /v1/jobs records it. A pin the desk asked for wins over the zone's choice; the
    # badge still carries the zone. A badge made now counts against the token's cap of outstanding jobs, as a job it
    # creates does (room held while it is made; the badge joins the token's set in the same step); a badge that
    # exists makes nothing, so a second scan is answered at the cap too.
    room = (
        intake.outstanding.room_in_turn(token.name, token.max_outstanding)
        if before.state == "none"
        else contextlib.nullcontext()
    )
    async with room:
        reply, _ = await store.badge(
            code, token.name, printer or chosen, at_desk=token.role != "kiosk", zone=zone, owned=True
        )
    if reply.kind is BadgeKind.UNKNOWN:
        raise Problem(404, UNKNOWN)
    if reply.kind is BadgeKind.CANCELLED:
        raise Problem(409, CANCELLED, status_of_ticket="cancelled")
    if reply.kind is BadgeKind.ATTENTION:
        raise Problem(409, ATTENTION, needs_attention=True)
    if reply.kind is BadgeKind.STALE:
        raise Problem(503, "the attendee kept changing; try again", headers={"Retry-After": "1"})
    attendee, state = await _found(request, code)
    if reply.kind is BadgeKind.PREPRINTED:
        # Their badge is in a box (attendee_badge.lua printed nothing): the answer says where.
        return json_response({**await _view(request, token, attendee, state), "printed": False, "duplicate": False})
    body = {**await _view(request, token, attendee, state), "duplicate": reply.kind is BadgeKind.EXISTS}
    return json_response(body, status=201 if reply.kind is BadgeKind.QUEUED else 200)


async def badge(request: web.Request) -> web.Response:
    """Print this attendee's badge from the list: created once; any later request answers with that badge.
    ``{"at_door": true}`` (desk and staff): print it now though a pre-print run has (or will have) it in a box."""
    token = _authorize_lookup(request, BADGE)
    code = await _code(request)
    try:
        printer = await _printer(request, token)
        door = await preprint_routes.door_print(request, token, code)
        response = await _print(request, token, code, printer)
        return preprint_routes.with_door_print(response, door)
    except JobError as exc:
        raise Problem(422, str(exc)) from None


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise field_error(422, key, "must be text")
    return value.strip()


async def walk_in(request: web.Request) -> web.Response:
    """A walk-in: added to the list (``source: walk-in``), then printed like anyone on it (``"print": false``: not)."""
    token = _authorize_lookup(request, WALK_IN)
    store = request.app[ATTENDEES]
    body = await json_body(request)
    if not isinstance(body, dict):
        raise Problem(422, "the body must be a JSON object with a name")
    code = _text(body, "code") or f"walkin-{secrets.token_urlsafe(12)}"
    if not CODE_RE.fullmatch(code):
        raise field_error(422, "code", "a ticket code is 1-128 printable characters without spaces")
    try:
        job = parse_job(
            {
                "attendee_id": code,
                "job_id": await store.job_id_for(code),
                "name": body.get("name"),
                "company": body.get("company"),
                "role": body.get("role"),
                "fields": body.get("fields"),
            }
        )
    except JobError as exc:
        raise Problem(422, str(exc)) from None
    try:  # a pretix order of this product, made by the pretix sync (pretix_sync/walk_ins.py)
        product = await desk_product(store.redis, store.keys.venue, body.get("pretix_product"))
    except ValueError as exc:
        raise field_error(422, "pretix_product", str(exc)) from None
    email = _text(body, "email")
    if email and not is_email(email):  # as `attendees import` and the pretix sync judge one
        raise field_error(422, "email", "is not an e-mail address")
    record = record_for(job, _text(body, "order_code")[:64], email, "walk-in", "valid")
    (put,) = await store.put_many([(code, record)])
    if put.kind is not PutKind.ADDED:
        raise Problem(409, "this code is on the list already: look it up instead", code_taken=True)
    if product is not None:
        await order_wanted(store.redis, store.keys.venue, code, product)
    if body.get("print", True) is False:
        attendee, state = await _found(request, code)
        return json_response(await _view(request, token, attendee, state), status=201)
    printer = body.get("printer")
    if printer is not None and not isinstance(printer, str):
        raise field_error(422, "printer", "must be a printer name")
    return await _print(request, token, code, printer)


async def correct(request: web.Request) -> web.Response:
    """Staff: correct name, company or fields (kept as a local edit beside the source's values), or set the ticket's
    status (``cancelled`` withdraws a badge still waiting). The badge job's payload follows a correction, so a reprint
    prints it."""
    token = authorize(request, CORRECT)
    store = request.app[ATTENDEES]
    code = await _code(request)
    body = await json_body(request)
    if not isinstance(body, dict) or not body:
        raise Problem(422, "the body must be a JSON object: name, company, fields or status")
    unknown = sorted(set(body) - {"name", "company", "fields", "status"})
    if unknown:
        raise field_error(422, unknown[0], "cannot be corrected here (name, company, fields, status)")
    if await store.get(code) is None:
        raise Problem(404, UNKNOWN)
    changes = {key: body[key] for key in ("name", "company", "fields") if key in body}
    if changes:
        for key in ("name", "company"):
            if key in changes and not isinstance(changes[key], str | None):
                raise field_error(422, key, "must be text")
        if "fields" in changes and not isinstance(changes["fields"], dict | None):
            raise field_error(422, "fields", "must be an object of text values")
        try:
            attendee = await store.edit(code, changes)
        except JobError as exc:
            raise Problem(422, str(exc)) from None
        if attendee is None:
            raise Problem(404, UNKNOWN)
        await store.refresh_payload(attendee)
    if "status" in body:
        status = body["status"]
        if status not in ("valid", "cancelled"):
            raise field_error(422, "status", "valid or cancelled")
        await store.set_status(code, status, f"token:{token.name}")
    attendee, state = await _found(request, code)
    log.info("attendee corrected by token %s: %s", token.name, ", ".join(sorted(body)))
    return json_response(await _view(request, token, attendee, state))


#: What each role may do on the desk page (the page shows a button only for what its token may do).
DESK_MAY = {
    "print": BADGE,
    "walk_in": WALK_IN,
    "reprint": ("desk", "staff"),
    "force": ("staff",),
    "cancel": CORRECT,
    "restore": CORRECT,
    "correct": CORRECT,
}


async def desk_settings(request: web.Request) -> web.Response:
    """What the desk page needs to know of its token: its role, what it may do, and the reprint cap."""
    token = authorize(request, SEARCH)
    intake = request.app[INTAKE]
    store = request.app[ATTENDEES]
    products = await offered_products(store.redis, store.keys.venue)
    return json_response(
        {
            "role": token.role,
            "may": {what: token.role in roles for what, roles in DESK_MAY.items()},
            "reprint_cap": intake.config.limits.reprint_cap,
            "day": await day_counts(request),
            # the products a walk-in's pretix order may be of (the pretix sync's --walk-in-product)
            "pretix_products": [{"id": i, "name": name} for i, name in products.items()],
        }
    )


async def refuse_unlisted(request: web.Request, token: Token) -> None:
    """With a list loaded, a kiosk does not make badges for names typed on it (``kiosk.allow_unlisted`` says
    otherwise): it scans tickets, looked up on the list."""
    intake = request.app[INTAKE]
    if token.role != "kiosk" or intake.config.kiosk.allow_unlisted:
        return
    if await AttendeeStore.exists(intake.redis, intake.config.venue):
        raise Problem(
            403,
            "this venue checks in from its attendee list: scan the ticket (POST /v1/attendees/{code}/badge)",
            role=token.role,
        )


def kiosk_walk_in(job: Job, walk_in_type: str) -> Job:
    """A job a kiosk types (no list, or ``kiosk.allow_unlisted``): a name and company, and the venue's walk-in type
    (``kiosk.walk_in_type``) as its ticket type; a role, a layout or a field it sets answers 403 naming it (a
    ticket type equal to the walk-in type aside). Venues give badge types room access (a Speaker's, a STAFF role):
    a kiosk prints only what the list says, or a walk-in's badge. A listed code's badge is the list's anyway."""
    asked = [("role", job.role)] if job.role else []
    if job.layout is not None:
        asked.append(("layout", job.layout))
    asked += [(f"fields.{k}", v) for k, v in job.fields.items() if not (k == "ticket_type" and v == walk_in_type)]
    if asked:
        field, _ = asked[0]
        raise Problem(
            403,
            f"a kiosk token cannot set {field}: a badge typed at a kiosk carries a name and company, and the venue's "
            "walk-in ticket type (kiosk.walk_in_type); a listed ticket's badge says what the list says",
            field=field,
            role="kiosk",
        )
    return msgspec.structs.replace(job, fields={"ticket_type": walk_in_type} if walk_in_type else {})


async def badge_if_listed(request: web.Request, token: Token, job: Job) -> tuple[bool, str] | None:
    """For ``POST /v1/jobs``: a job whose attendee id is a listed ticket code is that attendee's one badge (made now,
    or the one that exists), never a second job. Returns (made now, the attendee's job id), or None for a code not
    on the list (or no list). A cancelled ticket answers 409."""
    intake = request.app[INTAKE]
    store = request.app[ATTENDEES]
    if not await AttendeeStore.exists(intake.redis, intake.config.venue):
        return None
    if not CODE_RE.fullmatch(job.attendee_id) or not await intake.redis.exists(store.keys.attendee(job.attendee_id)):
        return None
    chosen, zone = await zone_printer(request, token)
    reply, attendee = await store.badge(
        job.attendee_id,
        token.name,
        job.printer or chosen,
        at_desk=token.role != "kiosk",
        zone=job.zoned or zone,
        owned=True,  # within the room POST /v1/jobs holds for it
    )
    if reply.kind is BadgeKind.CANCELLED:
        raise Problem(409, CANCELLED, status_of_ticket="cancelled")
    if reply.kind is BadgeKind.ATTENTION:
        raise Problem(409, ATTENTION, needs_attention=True)
    if reply.kind is BadgeKind.STALE:
        raise Problem(503, "the attendee kept changing; try again", headers={"Retry-After": "1"})
    if reply.kind is BadgeKind.UNKNOWN or attendee is None:
        return None  # taken off the list in between: a job like any other
    return reply.kind is BadgeKind.QUEUED, attendee.job_id


async def kiosk_settings(request: web.Request) -> web.Response:
    """What the kiosk page does: scan against the list (``list``), let names be typed (``names``: no list, or
    ``kiosk.allow_unlisted``), and how long an answer stays before it clears itself (``reset_after``)."""
    intake = request.app[INTAKE]
    kiosk = intake.config.kiosk
    listed = await AttendeeStore.exists(intake.redis, intake.config.venue)
    return json_response(
        {"list": listed, "names": kiosk.allow_unlisted or not listed, "reset_after": kiosk.reset_after}
    )


DESK_FILES = {"index.html": "text/html", "desk.js": "text/javascript", "desk.css": "text/css"}


async def desk_page(request: web.Request) -> web.Response:
    """The help desk's page (a desk or staff token in the address's fragment: ``/desk#token=...``)."""
    return await _desk_file("index.html")


async def desk_asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name == "settings.json":  # what the page's token may do (it sends its token, as for every /v1 call)
        return await desk_settings(request)
    if name not in DESK_FILES or name == "index.html":
        raise Problem(404, f"no desk file {name!r}")
    return await _desk_file(name)


async def _desk_file(name: str) -> web.Response:
    text = resources.files("intake").joinpath(f"desk/{name}").read_text(encoding="utf-8")
    return web.Response(text=text, content_type=DESK_FILES[name])


async def day_counts(request: web.Request) -> dict[str, int] | None:
    """The day's counts the desk shows at the top: expected, arrived (checked in) and still to come; None without a
    list."""
    intake = request.app[INTAKE]
    if not await AttendeeStore.exists(intake.redis, intake.config.venue):
        return None
    counts = await request.app[ATTENDEES].counts()
    return {"expected": counts.expected, "arrived": counts.checked_in,
            "to_come": max(0, counts.expected - counts.checked_in)}  # fmt: skip


async def metric_families(request: web.Request) -> list[Metric]:
    """The attendee list's counts for the intake's /metrics (the venue's one exporter of them), as metric families
    (core/exposition.py writes them): expected and checked in, in all and per ticket type; nothing without a list."""
    from prometheus_client.core import GaugeMetricFamily

    intake = request.app[INTAKE]
    if not await AttendeeStore.exists(intake.redis, intake.config.venue):
        return []
    counts = await request.app[ATTENDEES].counts()
    attendees = GaugeMetricFamily(
        "badge_attendees",
        "Attendees of the venue's list: expected (valid tickets), checked_in (first badge printed), cancelled.",
        labels=["what"],
    )
    attendees.add_metric(["expected"], counts.expected)
    attendees.add_metric(["checked_in"], counts.checked_in)
    attendees.add_metric(["cancelled"], counts.cancelled)
    by_type = GaugeMetricFamily(
        "badge_attendees_by_ticket_type", "Expected and checked in, per ticket type.", labels=["ticket_type", "what"]
    )
    for ticket_type, (expected, checked_in) in sorted(counts.by_type.items()):
        by_type.add_metric([ticket_type, "expected"], expected)  # label values escaped by the exposition
        by_type.add_metric([ticket_type, "checked_in"], checked_in)
    return [attendees, by_type]


async def handed_over(request: web.Request) -> web.Response:
    """The desk hands over a pre-printed badge (intake/preprint_routes.py): an attendee looked up as for the desk's
    other actions."""
    token = _authorize_lookup(request, preprint_routes.HAND_OVER)
    code = await _code(request)
    await _looked_up(request, token, code)
    return await preprint_routes.hand_over(request, token, code)
