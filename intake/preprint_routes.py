"""The intake's pre-print routes (docs/intake.md, "Pre-printed badges"): the desk's hand-over and a run's void list.

A kiosk's scan of an attendee whose badge is in a box prints nothing and says where it is (attendee_routes.py asks
``door_answer``); the desk's search shows the box; ``POST /v1/attendees/{code}/handed-over`` is the desk giving the
badge out, which checks the attendee in: by the attendee's handle, as the desk's other actions (or staff by the code).
The void list names attendees: a desk sees their codes masked, a viewer none of it (as the attendee routes).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from aiohttp import web

from attendees.store import Attendee, AttendeeStore
from attendees.views import masked_code
from intake.context import INTAKE, Intake, authorize, json_body
from intake.jsonreply import json_response
from intake.problem import Problem
from intake.tokens import Token
from preprint.store import PreprintStore, preprint_status
from preprint.views import door_view

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

HAND_OVER = ("desk", "staff")
VOIDS = ("desk", "staff")

PREPRINTS = web.AppKey("preprints", PreprintStore)


def add_routes(app: web.Application, intake: Intake, attendees: AttendeeStore) -> None:
    app[PREPRINTS] = PreprintStore(intake.redis, intake.config.venue, attendees)
    app.router.add_get("/v1/preprint/voids", voids, allow_head=False)


async def door_answer(request: web.Request, attendee: Attendee) -> dict[str, Any] | None:
    """Where the attendee's pre-printed badge is (None: not in a run, or void: the door prints theirs)."""
    if not attendee.preprint:
        return None
    return await door_view(request.app[PREPRINTS], attendee)


async def hand_over(request: web.Request, token: Token, code: str) -> web.Response:
    """The desk gives an attendee their pre-printed badge: their arrival (checked in, told to pretix and webhooks).
    ``POST /v1/attendees/{code}/handed-over`` as attendee_routes.py resolves it, as the desk's other actions on an
    attendee: ``code`` from the handle the desk was given (or a code as staff type it), ``token`` past its lookup
    rate, a code not on the list counted against its misses."""
    store = request.app[PREPRINTS]
    intake = request.app[INTAKE]
    # The arrival counts in the desk's zone, as a badge a token of a zone asks for is that zone's (the board).
    zone = intake.config.zone_name_of(token.name, token.zone) or ""
    outcome, _ = await store.handover(code, token.name, zone)
    if outcome == "unknown":
        raise Problem(404, "This code is not on the list.")
    attendee = await store.attendees.get(code)
    view = await door_view(store, attendee) if attendee is not None else None
    if outcome == "none":
        raise Problem(409, "This attendee has no pre-printed badge: print theirs instead.", preprint=None)
    if outcome == "void":
        raise Problem(
            409,
            "This attendee's pre-printed badge is void (their details changed): pull it from its box and print "
            "theirs instead.",
            preprint=view,
        )
    if outcome == "not_printed":
        raise Problem(409, "This attendee's badge has not been printed yet: its run is not done.", preprint=view)
    return json_response({"handed_over": outcome == "handed_over", "already": outcome == "already", "preprint": view})


async def voids(request: web.Request) -> web.Response:
    """Every run's void badges, by run and box, for staff to pull before the doors open."""
    token = authorize(request, VOIDS)
    store = request.app[PREPRINTS]
    runs = []
    for name in await store.names():
        found = [v.as_dict() for v in await store.voids(name)]
        if token.role != "staff":
            found = [{**v, "code": masked_code(v["code"])} for v in found]  # a desk sees codes masked
        runs.append({"run": name, "voids": found})
    return json_response({"runs": runs})


async def metric_families(request: web.Request) -> list[Metric]:
    """Each run's badges by where they are (preprint/store.py, ``counts``), as ``preprint status`` counts them (a big
    run's at most every few seconds: ``preprint_status``)."""
    from prometheus_client.core import GaugeMetricFamily

    store = request.app[PREPRINTS]
    found = await preprint_status(store.redis, store.venue)
    if found is None:
        return []
    family = GaugeMetricFamily(
        "badge_preprint_badges",
        "Pre-printed badges of each run, by where they are: planned, preprinted, handed_over, void, printed_at_door, "
        "in_boxes.",
        labels=["run", "what"],
    )
    for run in found["runs"]:
        for what, n in run["counts"].items():
            family.add_metric([run["run"], what], n)
    return [family]


#: The roles that may print a pre-printed attendee's badge at the door now (``{"at_door": true}``).
AT_DOOR = ("desk", "staff")


async def door_print(request: web.Request, token: Token, code: str) -> dict[str, Any] | None:
    """``POST /v1/attendees/{code}/badge`` with ``{"at_door": true}``: the attendee is at the desk and their badge
    is (or will be) in a box; void it first, in one step, so the badge route prints theirs now and the run never
    prints a second copy unflagged. None when the body does not ask for it; else what the answer adds
    (``door_print``: the box, and ``pull``, whether a boxed copy may be on paper for staff to pull)."""
    if not request.body_exists:
        return None
    body = await json_body(request)  # read once: aiohttp keeps the bytes for the next reader
    if not isinstance(body, dict) or "at_door" not in body:
        return None
    if not isinstance(body["at_door"], bool):
        raise Problem(422, "at_door must be true or false")
    if not body["at_door"]:
        return None
    if token.role not in AT_DOOR:
        raise Problem(403, "only a desk or staff token may print a pre-printed badge at the door", role=token.role)
    outcome, pull, box = await request.app[PREPRINTS].at_door(code)
    if outcome == "none":
        return None
    if outcome == "handed_over":
        raise Problem(
            409, "This attendee was handed their pre-printed badge already: reprint it instead.", handed_over=True
        )
    return {"box": box, "pull": pull, "voided": outcome == "voided"}


def with_door_print(response: web.Response, door: dict[str, Any] | None) -> web.Response:
    """The badge route's answer with what ``door_print`` did (the desk shows which box to pull from)."""
    if door is None or response.body is None:
        return response
    body = json.loads(cast(bytes, response.body))
    return json_response({**body, "door_print": door}, status=response.status)
