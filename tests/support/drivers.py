"""What the driver tests share: the links a venue uses and the badge every printer kind is loaded for."""

from __future__ import annotations

from drivers.base import Badge

LINKS = ["tcp", "serial", "usb"]
#: The stock each printer kind is loaded with: the badge is drawn for it (a receipt printer prints 72 mm).
BADGE = Badge(job_id="job-1", attendee_id="ATT-0001", name="Ada Lovelace", company="Analytical", role="Speaker")
