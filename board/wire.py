"""The board's snapshot as the page is sent it over ``/updates``: once whole, then only what changed.

A venue of 50 printers makes a snapshot of tens of KB that changes with every badge; sent whole to each phone at
every change it would be tens of KB a second per viewer on the venue's Wi-Fi. So the page gets the snapshot once and
then JSON merge patches (RFC 7386: a changed field, ``null`` for one gone), at most one a ``PUSH_EVERY``. Lists whose
items come and go (printers, events, zones) are sent as objects keyed by name or id, so a patch names one item; a
heartbeat's age is sent only once it is worth a look (``STALE_BEAT``), not as a number that changes every poll.
"""

from __future__ import annotations

from typing import Any

#: A heartbeat younger than this shows as "just now": healthy printers' ages then never change on the wire.
STALE_BEAT = 10.0
#: Events a badge makes on its normal way (the arrival chart counts them): in a rush, dozens a second, which would be
#: most of what a phone is sent. The page lists the rest (faults, releases, duplicates, drains, ...).
ROUTINE = frozenset({"enqueued", "printing", "printed", "stolen"})


def wire(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The page's form of ``snapshot`` (board/server.py): keyed objects instead of lists, no clock that ticks."""
    out = {k: v for k, v in snapshot.items() if k not in ("server_ms", "printers", "events", "duplicates", "day")}
    printers = {}
    for p in snapshot.get("printers") or []:
        shown = {k: v for k, v in p.items() if k != "beat_age"}
        age = p.get("beat_age")
        shown["beat"] = None if age is None else (round(age) if age >= STALE_BEAT else 0)
        printers[p["name"]] = shown
    out["printers"] = printers
    out["events"] = {e["id"]: e for e in snapshot.get("events") or [] if "id" in e and e.get("event") not in ROUTINE}
    out["duplicates"] = {e["id"]: e for e in snapshot.get("duplicates") or [] if "id" in e}
    day = snapshot.get("day")
    if day:
        out["day"] = {
            "minute": day["minute"],
            "expected": day["expected"],
            "arrived": day["arrived"],
            "to_come": day["to_come"],
            # As the page shows them: a rate to a tenth, a wait to the minute (a tenth under one), so a zone's row
            # changes on the wire only when it changes on the screen.
            "zones": {
                z["zone"]: {
                    "waiting": z["waiting"],
                    "per_minute": round(z["per_minute"], 1),
                    "wait_minutes": _shown_wait(z["wait_minutes"]),
                }
                for z in day["zones"]
            },
            "printers": {
                p["printer"]: {k: v for k, v in p.items() if k not in ("printer", "fault_age_s")}
                for p in day["printers"]
            },
            # Per zone, only the minutes with arrivals: a patch then carries the current minute's count alone.
            "arrivals": _sparse(day["arrivals"], day["minute"]),
            "handed_over": _sparse(day["handed_over"], day["minute"]),
        }
    return out


def _shown_wait(minutes: float | None) -> float | None:
    if minutes is None:
        return None
    return round(minutes, 1) if minutes < 1 else float(round(minutes))


def _sparse(series: dict[str, list[int]], minute: int) -> dict[str, dict[str, int]]:
    out = {}
    for zone, counts in series.items():
        start = minute - len(counts) + 1
        out[zone] = {str(start + i): n for i, n in enumerate(counts) if n}
    return out


def merge_patch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The RFC 7386 patch that turns ``old`` into ``new`` ({} when they are equal)."""
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before == value:
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            patch[key] = merge_patch(before, value)
        else:
            patch[key] = value
    return patch


_MISSING = object()
