"""The venue as people see it: the fleet (protocol/fleet.py) with what each feature adds to it.

The board, ``badge-agent status`` and the demo's live table show the attendee list's counts, the pretix outbox,
the webhooks' backlog and the pre-print runs' counts beside the printers; the protocol's own view names none of
them, so they are added here, a layer above them.
"""

from __future__ import annotations

from redis.asyncio import Redis

from protocol.fleet import FleetView, fleet


async def venue_view(redis: Redis, venue: str) -> FleetView:
    """The fleet, with the sections ``attendees`` (None without a list), ``pretix`` (None without a sync),
    ``webhooks`` (None without a webhook) and ``preprint`` (None without a pre-print run)."""
    # Imported here: a venue without a list or a pretix sync, and ``status`` on a Pi, do not pay for them at start.
    from attendees.store import list_counts
    from preprint.store import preprint_status
    from pretix_sync.outbox import outbox_status
    from webhooks.sender import webhooks_status

    view = await fleet(redis, venue)
    view.sections["attendees"] = await list_counts(redis, venue)
    view.sections["pretix"] = await outbox_status(redis, venue)
    view.sections["webhooks"] = await webhooks_status(redis, venue)
    view.sections["preprint"] = await preprint_status(redis, venue)
    return view
