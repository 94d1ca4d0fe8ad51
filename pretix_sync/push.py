"""A confirmed print told to pretix: the attendee checked in (first badge only) and the print logged on the ticket.

Sending may be repeated as often as needed (an answer lost, a sync process restarted) and pretix still records one
check-in and one print log per print: the check-in carries the job id as pretix's redeem ``nonce`` (the same nonce
twice is one check-in), and the print log, which pretix cannot de-duplicate, carries the print's own id in its
``info`` and is posted only when the ticket's ``print_logs`` do not already hold it. Whoever keeps the record of
what to send drops it only once :func:`send_print` returned; a :class:`~pretix_sync.errors.PretixUnavailable`
means "keep it, try again later".
"""

from __future__ import annotations

from dataclasses import dataclass

from pretix_sync.client import PretixClient

#: pretix's redeem answers that still mean "this attendee is checked in": they were let in by a door scanner first.
ALREADY_IN = frozenset({"already_redeemed"})


@dataclass(frozen=True)
class PrintedBadge:
    """What a confirmed print tells pretix.

    ``print_id`` names this print (one job may print again: a reprint has its own); ``first`` is the attendee's
    first badge, the one that checks them in. ``printed_at`` is ISO 8601 (the check-in's and the log's time).
    """

    job_id: str
    print_id: str
    code: str
    position_id: int
    first: bool
    printed_at: str
    printer: str
    location: str = ""


@dataclass(frozen=True)
class Sent:
    """What pretix made of it: ``checkin`` ok, already (a door scan came first), skipped (a reprint), or refused
    with pretix's reason (e.g. canceled); ``print_log`` posted, or already there (an earlier send's)."""

    checkin: str
    print_log: str
    reason: str = ""


async def send_print(client: PretixClient, list_id: int, badge: PrintedBadge) -> Sent:
    """Tell pretix about one confirmed print (see the module's docstring for why repeating it is safe)."""
    checkin, reason = "skipped", ""
    position = None
    if badge.first:
        result = await client.redeem(badge.code, [list_id], nonce=badge.job_id, when=badge.printed_at)
        if result.status == "ok":
            checkin = "ok"
        elif result.reason in ALREADY_IN:
            checkin = "already"
        else:
            checkin, reason = "refused", result.reason or result.status
        # pretix's answer carries the ticket as it is after the check-in, its print logs included: one request
        # fewer per first badge, a third of what a backlog costs.
        if result.position is not None and result.position.id == badge.position_id:
            position = result.position
    if position is None:
        position = await client.position(badge.position_id)
    if any(log.info.get("print_id") == badge.print_id for log in position.print_logs):
        return Sent(checkin, "already there", reason)
    info = {"job_id": badge.job_id, "print_id": badge.print_id, "printer": badge.printer}
    if badge.location:
        info["location"] = badge.location
    await client.print_log(badge.position_id, info, when=badge.printed_at)
    return Sent(checkin, "posted", reason)
