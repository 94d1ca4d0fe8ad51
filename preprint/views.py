"""An attendee's pre-printed badge as the kiosk and the desk show it: which box, its label, where to collect it."""

from __future__ import annotations

from typing import Any

from attendees.store import Attendee
from preprint.keys import BadgeState
from preprint.plan import DEFAULT_PICKUP, box_label
from preprint.store import PreprintStore


def kiosk_message(state: str, box: int, first: str, last: str, pickup: str) -> str:
    """What the kiosk says to an attendee whose badge is in a box (and prints nothing)."""
    label = box_label(box, first, last).removeprefix(f"Box {box}: ")
    where = f"box {box}, {label}" if label != f"Box {box}" else f"box {box}"
    if state == BadgeState.HANDED_OVER:
        return f"Your badge was handed to you already ({where}). If it is lost, please go to {pickup}."
    if state == BadgeState.PREPRINTED:
        return f"Your badge is ready: {where}, {pickup}."
    return f"Your badge is being printed for {where}: please collect it at {pickup}."


async def door_view(store: PreprintStore, attendee: Attendee) -> dict[str, Any] | None:
    """Where the attendee's pre-printed badge is, for a kiosk or a desk (None: none, or void: the door prints)."""
    where = await store.where(attendee)
    if where is None:
        return None
    run = await store.run(where.run)
    pickup = run.pickup if run is not None else DEFAULT_PICKUP
    raw = await store.redis.hmget(store.keys.box(where.run, where.box), ["first", "last"])
    first, last = (v.decode() if isinstance(v, bytes) else (v or "") for v in raw)
    view: dict[str, Any] = {
        "run": where.run,
        "box": where.box,
        "box_label": box_label(where.box, first, last),
        "range": box_label(where.box, first, last).removeprefix(f"Box {where.box}").removeprefix(": "),
        "pickup": pickup,
        "state": where.state,
        "layout": where.layout,
        "layout_version": where.layout_version,
    }
    if where.state != BadgeState.VOID:
        view["message"] = kiosk_message(where.state, where.box, first, last, pickup)
    return view
