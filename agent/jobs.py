"""Badge jobs: what a desk or kiosk enqueues, validated the same way at enqueue and again before printing.

Validation runs twice on purpose: anything can be pushed into Redis by hand, so the agent trusts nothing it reads.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent.errors import JobError
from agent.protocol.keys import JOB_ID_RE, PRINTER_RE
from drivers.base import Badge

#: A badge job is a few short fields; anything larger is a mistake (or an attack on the printer's memory).
MAX_JOB_BYTES = 4096
FIELDS = ("job_id", "attendee_id", "name", "company", "role", "printer")


def _no_control(value: str, field: str) -> str:
    for ch in value:
        if unicodedata.category(ch) == "Cc":
            raise ValueError(f"{field} contains a control character (U+{ord(ch):04X})")
    return value


class Job(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, frozen=True)

    job_id: str = Field(min_length=1, max_length=128)
    attendee_id: str = Field(min_length=1, max_length=256)
    name: str = Field(min_length=1, max_length=200)
    company: str = Field(default="", max_length=200)
    role: str = Field(default="", max_length=120)
    printer: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_job_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("job_id") and data.get("attendee_id") is not None:
            data = {**data, "job_id": str(data["attendee_id"]).strip()}
        return data

    @field_validator("job_id")
    @classmethod
    def _job_id_shape(cls, value: str) -> str:
        if not JOB_ID_RE.match(value):
            raise ValueError(
                "must be 1-128 characters of letters, digits and . _ : @ - (starting with a letter or digit); "
                "when the attendee id has other characters, give job_id explicitly"
            )
        return value

    @field_validator("attendee_id", "name", "company", "role")
    @classmethod
    def _printable(cls, value: str, info: Any) -> str:
        return _no_control(value, info.field_name)

    @field_validator("printer")
    @classmethod
    def _printer_name(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not PRINTER_RE.match(value):
            raise ValueError("not a printer name (lowercase letters, digits, - and _)")
        return value

    def payload(self) -> str:
        return json.dumps(self.model_dump(exclude_none=True), ensure_ascii=False, separators=(",", ":"))

    def badge(self) -> Badge:
        return Badge(self.job_id, self.attendee_id, self.name, self.company, self.role)


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = ".".join(str(x) for x in err["loc"]) or "job"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            msg = "is required"
        parts.append(f"{field} {msg}" if err["type"] == "missing" else f"{field}: {msg}")
    return "; ".join(parts)


def parse_job(data: object) -> Job:
    """Validate one job from a dict. Raises JobError naming the field."""
    job = _validate(data)
    if len(job.payload().encode("utf-8")) > MAX_JOB_BYTES:
        raise JobError(f"job is larger than {MAX_JOB_BYTES} bytes")
    return job


def _validate(data: object) -> Job:
    if not isinstance(data, dict):
        raise JobError(f"a job must be a JSON object, not {type(data).__name__}")
    data = {k: ("" if v is None else v) for k, v in data.items()}
    for key in FIELDS:
        if key in data and not isinstance(data[key], str):
            if isinstance(data[key], (int, float)) and not isinstance(data[key], bool):
                data[key] = str(data[key])  # a numeric attendee id from a spreadsheet is still an id
            else:
                raise JobError(f"{key}: must be text")
    try:
        return Job.model_validate(data)
    except ValidationError as exc:
        raise JobError(_explain(exc)) from None


def job_from_payload(raw: bytes) -> Job:
    """Read a job back from Redis. Raises JobError for anything that is not a valid job."""
    if len(raw) > MAX_JOB_BYTES:  # enqueue stores compact JSON of at most this size; larger was pushed by hand
        raise JobError(f"payload is {len(raw)} bytes, larger than {MAX_JOB_BYTES}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JobError(f"payload is not UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise JobError(f"payload is not valid JSON: {exc}") from None
    return _validate(data)  # the size was checked on the raw bytes above: no need to serialise it again


def ignored_fields(data: dict[str, Any]) -> list[str]:
    return [k for k in data if k not in FIELDS]


Row = tuple[int, dict[str, Any] | None, str]
"""(line or row number, the row as a dict or None, the error when it could not be read)."""


def read_rows(stream: Iterable[str], fmt: str) -> Iterator[Row]:
    """Read jobs from JSON lines or CSV (with a header row). A bad row is reported, never fatal."""
    if fmt == "csv":
        reader = csv.DictReader(stream)
        for number, row in enumerate(reader, start=2):
            if None in row:
                yield number, None, "row has more cells than the header"
                continue
            yield number, {k.strip(): v for k, v in row.items() if k is not None}, ""
        return
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line), ""
        except ValueError as exc:
            yield number, None, f"not valid JSON: {exc}"


def sniff_format(name: str, head: str) -> str:
    if name.lower().endswith(".csv"):
        return "csv"
    if name.lower().endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    return "jsonl" if head.lstrip().startswith("{") else "csv"


def read_text_rows(text: str, name: str = "-") -> Iterator[Row]:
    return read_rows(io.StringIO(text), sniff_format(name, text[:200]))
