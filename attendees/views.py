"""An attendee as the CLI, the intake and the desk page show it; and the little a kiosk may see."""

from __future__ import annotations

import datetime
from typing import Any

from attendees.store import NO_TYPE, Attendee, BadgeState


def describe(attendee: Attendee, badge: BadgeState) -> dict[str, Any]:
    """An attendee as the CLI and the intake show it: what the badge says, the source's values beside a correction."""
    data: dict[str, Any] = {
        "code": attendee.code,
        "name": attendee.shown_name,
        "company": attendee.shown_company,
        "role": attendee.role,
        "fields": attendee.shown_fields,
        "ticket_type": "" if attendee.ticket_type == NO_TYPE else attendee.ticket_type,
        "order_code": attendee.order_code,
        "email": attendee.email,
        "source": attendee.source,
        "status": attendee.status,
        "job_id": attendee.job_id,
        "badge": badge.as_dict(),
    }
    if attendee.attention:
        data["attention"] = attendee.attention
    if attendee.edits:
        data["source_says"] = {
            key: {"name": attendee.name, "company": attendee.company, "fields": attendee.fields}[key]
            for key in attendee.edits
        }
    return data


def when_printed(ms: int | None) -> str:
    """The time of day, for a person at the desk today: ``14:03:07 UTC``."""
    if not ms:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).strftime("%H:%M:%S UTC")


def printed_iso(ms: int | None) -> str:
    """The whole moment, for a file another system reads days later: ISO 8601 with its date and UTC offset
    (``2026-06-11T14:03:07+00:00``), as spreadsheets and registration systems parse it."""
    if not ms:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).isoformat(timespec="seconds")


def kiosk_view(attendee: Attendee, badge: BadgeState, handle: str) -> dict[str, Any]:
    """What a kiosk that presented this attendee's full code sees: enough to greet them and say where their badge
    is; not their e-mail, order or the rest of the list. Not the badge's job id either (a pretix badge's is the order
    code and position): the kiosk follows the badge by ``badge_id``, the attendee's handle."""
    return {
        "name": attendee.shown_name,
        "first_name": attendee.shown_fields.get("first_name") or next(iter(attendee.shown_name.split()), ""),
        "status": attendee.status,
        "badge_id": handle,
        "badge": badge.as_dict(),
    }


#: Characters of a ticket code a desk sees (its end, for a volunteer to match against the ticket in front of them),
#: and only of a code at least this long, so at most a quarter of it shows.
MASK_SHOWN = 4
MASK_MIN_LENGTH = 16


def masked_code(code: str) -> str:
    """A ticket code as a desk sees it: ``…a1b2`` (its last 4 characters, of a code of 16 or more), else ``…``."""
    return "…" + (code[-MASK_SHOWN:] if len(code) >= MASK_MIN_LENGTH else "")


def masked_email(email: str) -> str:
    """An e-mail as a desk sees it: its first character and its domain (``r…@example.org``), enough to ask "the
    address at example.org?" without handing out the list's addresses."""
    local, at, domain = email.partition("@")
    if not email:
        return ""
    return (local[:1] + "…" + at + domain) if at else "…"


def desk_view(attendee: Attendee, badge: BadgeState, handle: str) -> dict[str, Any]:
    """An attendee as a desk sees it: what a volunteer needs to help (the badge's text, order code, status, badge),
    the ticket code and e-mail masked, and the ``handle`` the desk acts on the attendee by."""
    data = describe(attendee, badge)
    data["code"] = masked_code(attendee.code)
    data["email"] = masked_email(attendee.email)
    data["handle"] = handle
    return data
