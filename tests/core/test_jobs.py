"""Jobs: the same checks whether a job comes from a desk (parse_job) or back from Redis (job_from_payload)."""

from __future__ import annotations

import json

import msgspec
import pytest

from core.errors import JobError
from protocol.jobs import MAX_JOB_BYTES, Job, job_from_payload, parse_job


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
    with pytest.raises(JobError, match="larger than 16384"):
        job_from_payload(json.dumps({"attendee_id": "a", "name": "x" * MAX_JOB_BYTES}).encode())


def test_a_job_is_frozen_and_checked_even_when_built_in_code() -> None:
    job = Job(attendee_id="a", name="n")
    with pytest.raises(AttributeError):
        job.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="name: must not be empty"):
        Job(attendee_id="a", name="")
    assert msgspec.json.decode(job.payload(), type=Job) == job


def test_fields_carry_the_events_own_data_checked_like_name() -> None:
    job = both(
        {"attendee_id": "A-1", "name": "Renée", "fields": {"ticket_type": "Speaker", "pronouns": " she/her ", "n": 3}}
    )
    assert job.fields == {"ticket_type": "Speaker", "pronouns": "she/her", "n": "3"}
    assert job.badge().fields == job.fields
    assert job_from_payload(job.payload().encode()) == job
    assert both({"attendee_id": "A-1", "name": "x", "fields": {"pronouns": "  "}}).payload().count("fields") == 0
    assert both({"attendee_id": "A-1", "name": "x", "layout": "speaker"}).badge().layout == "speaker"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"fields": {"name": "x"}}, r"^fields: 'name' is a job's own field"),
        ({"fields": {"Ticket": "x"}}, r"^fields: 'Ticket' is not a field name"),
        ({"fields": "Speaker"}, r"^fields: must be an object of text values$"),
        ({"fields": {"a": "x" * 201}}, r"^fields\.a: must be at most 200 characters$"),
        ({"fields": {"a": "\x1b[2J"}}, r"^fields\.a: contains a control character \(U\+001B\)$"),
        ({"fields": {"a": ["x"]}}, r"^fields: a: must be text$"),
        ({"fields": {f"k{i}": "v" for i in range(31)}}, r"^fields: at most 30 fields, not 31$"),
        ({"layout": "Not A Name"}, r"^layout: not a layout name"),
    ],
)
def test_bad_fields_are_named(given: dict[str, object], message: str) -> None:
    with pytest.raises(JobError, match=message):
        both({"attendee_id": "A-1", "name": "x", **given})


def test_a_job_with_fields_may_reach_16_kib() -> None:
    fields = {f"f{i}": "字" * 200 for i in range(30)}  # 30 x 200 characters of 3 bytes: ~18 KB, over the limit
    with pytest.raises(JobError, match="larger than 16384 bytes"):
        parse_job({"attendee_id": "A-1", "name": "x", "fields": fields})
    fields = {f"f{i}": "字" * 150 for i in range(30)}  # ~13.5 KB: fits
    assert len(parse_job({"attendee_id": "A-1", "name": "x", "fields": fields}).payload().encode()) > 4096


def test_a_zone_is_a_name_with_its_printers_or_neither() -> None:
    job = both(
        {"attendee_id": "a", "name": "A", "zone": "hall-a", "zone_printers": ["hall-a-2", "hall-a-1", "hall-a-2"]}
    )
    assert job.zoned == ("hall-a", ("hall-a-1", "hall-a-2"))  # sorted, once each
    assert json.loads(job.payload())["zone_printers"] == ["hall-a-1", "hall-a-2"]
    assert job_from_payload(job.payload().encode()) == job
    plain = both({"attendee_id": "a", "name": "A"})
    assert plain.zoned is None and "zone" not in json.loads(plain.payload())
    # A CSV column: names apart by spaces or commas.
    assert parse_job({"attendee_id": "a", "name": "A", "zone": "b", "zone_printers": "p1, p2 p3"}).zone_printers == (
        "p1", "p2", "p3"
    )  # fmt: skip
    for bad, says in (
        ({"zone_printers": ["p1"]}, "zone: is required with zone_printers"),
        ({"zone": "hall-a"}, "zone_printers: a zone needs at least one printer"),
        ({"zone": "Hall A", "zone_printers": ["p1"]}, "zone: not a zone name"),
        ({"zone": "z", "zone_printers": ["P 1"]}, "zone_printers: 'P 1' is not a printer name"),
        ({"zone": "z", "zone_printers": [f"p{i}" for i in range(33)]}, "zone_printers: at most 32 printers"),
        ({"zone": "z", "zone_printers": [1]}, "zone_printers: must be a list of printer names"),
    ):
        with pytest.raises(JobError, match=says):
            both({"attendee_id": "a", "name": "A", **bad})
