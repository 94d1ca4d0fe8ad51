"""The badge the layout tests draw."""

from __future__ import annotations

from drivers.base import Badge

SPEAKER = Badge(
    job_id="job-1",
    attendee_id="ATT-0001",
    name="Renée Laurent",
    company="Analytical Engines",
    fields={"ticket_type": "Speaker", "pronouns": "she/her", "seat": "S-12"},
)
