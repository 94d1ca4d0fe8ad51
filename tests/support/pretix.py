"""What the pretix tests share: a kiosk's scan of an attendee, and whether the venue holds their badge printed."""

from __future__ import annotations

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from protocol.keys import Keys


async def print_badge(store: AttendeeStore, code: str) -> str:
    """What a kiosk's scan does (POST /v1/attendees/{code}/badge): the attendee's one badge job."""
    reply, attendee = await store.badge(code, "kiosk-1", at_desk=False)
    assert attendee is not None and reply.kind.value == "queued", reply
    return attendee.job_id


async def printed(redis: Redis, venue: str, job_id: str) -> bool:
    return await redis.exists(Keys(venue).done(job_id)) == 1
