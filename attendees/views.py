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


def kiosk_view(attendee: Attendee, badge: BadgeState) -> dict[str, Any]:
    """What a kiosk that presented this attendee's full code sees: enough to greet them and say where their badge
    is; not their e-mail, order or the rest of the list."""
    return {
        "name": attendee.shown_name,
        "first_name": attendee.shown_fields.get("first_name") or next(iter(attendee.shown_name.split()), ""),
        "status": attendee.status,
        "job_id": attendee.job_id,
        "badge": badge.as_dict(),
    }
