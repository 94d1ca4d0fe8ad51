"""Jobs: the same checks whether a job comes from a desk (parse_job) or back from Redis (job_from_payload)."""

from __future__ import annotations

import json

import msgspec
import pytest

from agent.errors import JobError
from agent.jobs import MAX_JOB_BYTES, Job, job_from_payload, parse_job


def both(data: object) -> Job:
    """The job from a dict and from its JSON bytes, which must agree (the fast path must not differ)."""
    try:
        job = parse_job(data)
    except JobError as exc:
        with pytest.raises(JobError) as again:
            job_from_payload(json.dumps(data).encode())
        assert str(again.value) == str(exc)
        raise
    assert job_from_payload(json.dumps(data).encode()) == job
    return job


def test_text_is_stripped_and_job_id_defaults_to_the_attendee_id() -> None:
    job = both({"attendee_id": " A-1 ", "name": " Zoë Ó Briain ", "company": "Acme ", "email": "ignored"})
    assert (job.job_id, job.attendee_id, job.name, job.company, job.role, job.printer) == (
        "A-1", "A-1", "Zoë Ó Briain", "Acme", "", None
    )  # fmt: skip
    assert job.payload() == '{"job_id":"A-1","attendee_id":"A-1","name":"Zoë Ó Briain","company":"Acme","role":""}'
    assert job_from_payload(job.payload().encode()) == job


def test_numbers_are_ids_and_null_is_empty() -> None:
    job = both({"attendee_id": 1234, "name": "Ada", "company": None, "printer": None})
    assert (job.job_id, job.attendee_id, job.company, job.printer) == ("1234", "1234", "", None)
    assert both({"attendee_id": "a", "name": "n", "printer": " desk-1 "}).printer == "desk-1"
    with pytest.raises(JobError, match=r"^attendee_id: must be text$"):
        both({"attendee_id": True, "name": "Ada"})


def test_every_problem_is_named() -> None:
    with pytest.raises(JobError) as info:
        both({"attendee_id": "A 1", "name": "Bell\x07", "role": "r" * 121, "printer": "Desk 1"})
    assert str(info.value) == (
        "job_id: must be 1-128 characters of letters, digits and . _ : @ - (starting with a letter or digit); "
        "when the attendee id has other characters, give job_id explicitly; "
        "name: contains a control character (U+0007); role: must be at most 120 characters; "
        "printer: not a printer name (lowercase letters, digits, - and _)"
    )
    with pytest.raises(JobError, match=r"^attendee_id is required; name: must not be empty$"):
        both({"name": "  "})
    with pytest.raises(JobError, match=r"^name is required$"):
        both({"attendee_id": "A-2"})
    with pytest.raises(JobError, match=r"^job_id: must not be empty$"):
        both({"job_id": " ", "attendee_id": "A-3", "name": "N"})


def test_payloads_that_are_not_jobs() -> None:
    with pytest.raises(JobError, match="not UTF-8"):
        job_from_payload(b'{"attendee_id":"\xff","name":"x"}')
    with pytest.raises(JobError, match="not valid JSON"):
        job_from_payload(b"{not json")
    with pytest.raises(JobError, match="must be a JSON object, not list"):
        job_from_payload(b"[1]")
    with pytest.raises(JobError, match="larger than 4096"):
        job_from_payload(json.dumps({"attendee_id": "a", "name": "x" * MAX_JOB_BYTES}).encode())


def test_a_job_is_frozen_and_checked_even_when_built_in_code() -> None:
    job = Job(attendee_id="a", name="n")
    with pytest.raises(AttributeError):
        job.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="name: must not be empty"):
        Job(attendee_id="a", name="")
    assert msgspec.json.decode(job.payload(), type=Job) == job
