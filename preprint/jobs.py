"""The badge job of one planned attendee, for whatever prints a run on the venue's printers.

Its payload is what the desk's print of the attendee makes (``Attendee.job``: the name as shown, staff corrections
included), drawn with the layout the plan chose; its job id is the attendee's pre-print job id (``preprint_job_id``),
never the attendee's own, so a badge printed at the door later is that attendee's first badge. The job hash carries
``kind`` (``preprint``: confirm.lua records it so, and no consumer takes it for an arrival), the run, the box and the
attendee's code.
"""

from __future__ import annotations

from dataclasses import dataclass

from attendees.store import Attendee
from preprint.keys import preprint_job_id
from preprint.store import Where, parse_where
from protocol.jobs import Job

#: The job hash's ``kind`` of a pre-printed badge, and of a box's separator page (no badge, no printed entry).
KIND_PREPRINT = "preprint"
KIND_SEPARATOR = "separator"


@dataclass(frozen=True)
class PreprintJob:
    job: Job
    #: Fields for the job's hash beside what enqueue writes: kind, run, box, attendee.
    hash_fields: dict[str, str]

    @property
    def payload(self) -> str:
        return self.job.payload()


class NotPlanned(ValueError):
    """The attendee is in no run, or their badge in it is void or handed over: nothing to pre-print."""


def preprint_job(attendee: Attendee, where: Where | None = None) -> PreprintJob:
    """The pre-print job of a planned attendee. Raises NotPlanned for one with nothing to pre-print."""
    where = where or parse_where(attendee.preprint, attendee.preprint_state)
    if where is None:
        raise NotPlanned(f"attendee {attendee.code} is in no pre-print run")
    if where.state in ("void", "handed_over"):
        raise NotPlanned(f"attendee {attendee.code}'s badge of run {where.run} is {where.state}")
    desk = attendee.job()
    job = Job(
        job_id=preprint_job_id(attendee.job_id),
        attendee_id=desk.attendee_id,
        name=desk.name,
        company=desk.company,
        role=desk.role,
        fields=desk.fields,
        layout=where.layout or None,
    )
    fields = {"kind": KIND_PREPRINT, "run": where.run, "box": str(where.box), "attendee": attendee.code}
    return PreprintJob(job, fields)
