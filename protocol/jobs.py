"""Badge jobs: what a desk or kiosk enqueues, validated the same way at enqueue and again before printing.

Validation runs twice on purpose: anything can be pushed into Redis by hand, so the agent trusts nothing it reads.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from core.errors import JobError
from drivers.base import Badge
from protocol.keys import JOB_ID_RE, PRINTER_RE

#: A badge job is a few short fields; anything larger is a mistake (or an attack on the printer's memory). The event's
#: own ``fields`` (30 of 200 characters, in any script: up to 4 bytes a character) need more room than the built-ins.
MAX_JOB_BYTES = 16384
FIELDS = ("job_id", "attendee_id", "name", "company", "role", "printer", "fields", "layout", "zone", "zone_printers")
#: The job's own names: an event's ``fields`` cannot shadow them in a layout's templates.
BUILT_IN = ("name", "company", "role", "attendee_id", "job_id", "printer", "layout", "zone", "zone_printers")
MAX_EXTRA_FIELDS = 30
_FIELD_KEY = re.compile(r"[a-z0-9_]{1,40}")
#: A badge layout's name, as a job names it and `layout set --name` stores it.
LAYOUT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_REQUIRED = ("attendee_id", "name")
#: A zone's name, as the intake config's ``zones:`` and a token file spell it (intake/tokens.py).
ZONE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
#: Printers of one zone a job may name: a hall's few, with room to spare.
MAX_ZONE_PRINTERS = 32
#: Unicode's control characters (category Cc) are exactly these 65 code points; a regex finds one far faster than
#: asking unicodedata about every character of every badge.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
#: Lone surrogates (a JSON ``\ud800`` decodes to one: no UTF-8 can hold it) and the bidi embeddings, overrides and
#: isolates (U+202E makes "Alice" print as "ecilA" and hides what follows). Bidi *marks* and the zero-width joiners
#: stay: Arabic, Hebrew, Persian and the Indic scripts need them inside words.
_FORBIDDEN = re.compile("[\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
#: Categories that draw nothing on their own: format characters (zero-width space, joiners, BOM), separators and
#: combining marks; and the letters and symbols that render blank (Hangul fillers, the Braille blank).
_INVISIBLE_CATEGORIES = frozenset(("Cf", "Zs", "Zl", "Zp", "Mn", "Me"))
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _invisible(char: str) -> bool:
    return char in _BLANK or unicodedata.category(char) in _INVISIBLE_CATEGORIES


class _Problems(ValueError):
    """What is wrong with a job, one "field: what" per problem (raised by Job.__post_init__)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{field}: {what}" for field, what in problems))


def _text(field: str, value: str, low: int, high: int, problems: list[tuple[str, str]]) -> str:
    value = value.strip()  # a trailing space from a spreadsheet is not part of anyone's name
    if len(value) < low:
        problems.append((field, "must not be empty"))
    elif len(value) > high:
        problems.append((field, f"must be at most {high} characters"))
    elif (control := _CONTROL.search(value)) is not None:
        problems.append((field, f"contains a control character (U+{ord(control.group()):04X})"))
    elif (bad := _FORBIDDEN.search(value)) is not None:
        code = ord(bad.group())
        what = "a lone surrogate, not a character" if 0xD800 <= code <= 0xDFFF else "a bidi override or isolate"
        problems.append((field, f"contains {what} (U+{code:04X})"))
    elif value and all(_invisible(c) for c in value):  # stops at the first visible character: the first, usually
        problems.append((field, "has no visible character (only zero-width, format or blank characters)"))
    return value


class Job(msgspec.Struct, frozen=True, kw_only=True):
    """One badge job. Unknown fields are ignored (a registration export has many); text is stripped and checked.

    Building one runs every check (``__post_init__``), whether it is decoded from Redis or made in code.
    """

    #: Left out or empty: the attendee id (one badge per attendee unless the desk says otherwise).
    job_id: str = ""
    attendee_id: str
    name: str
    company: str = ""
    role: str = ""
    #: A pinned printer; "" means none.
    printer: str | None = None
    #: The event's own attendee data for the badge's layout (``{"ticket_type": "Speaker", "pronouns": "she/her"}``).
    fields: dict[str, str] = msgspec.field(default_factory=dict)
    #: The badge layout to print with; None: the venue's rules decide.
    layout: str | None = None
    #: The zone this badge belongs to (docs/intake.md, "Zones") and its printers: it prints on one of them, and
    #: elsewhere only when none of them can print (steal.lua, and every step that hands a pinned job on). None and
    #: () for a job of no zone; one is never given without the other.
    zone: str | None = None
    zone_printers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problems: list[tuple[str, str]] = []
        attendee_id = _text("attendee_id", self.attendee_id, 1, 256, problems)
        # The default is the attendee id as written (stripped); a job_id of spaces is not "left out" but empty.
        before = len(problems)
        job_id = _text("job_id", self.job_id, 1, 128, problems) if self.job_id else attendee_id
        if len(problems) == before and job_id and not JOB_ID_RE.match(job_id):
            problems.append(
                (
                    "job_id",
                    "must be 1-128 characters of letters, digits and . _ : @ - (starting with a letter or digit); "
                    "when the attendee id has other characters, give job_id explicitly",
                )
            )
        name = _text("name", self.name, 1, 200, problems)
        company = _text("company", self.company, 0, 200, problems)
        role = _text("role", self.role, 0, 120, problems)
        printer = (self.printer.strip() or None) if self.printer is not None else None
        if printer is not None and not PRINTER_RE.match(printer):
            problems.append(("printer", "not a printer name (lowercase letters, digits, - and _)"))
        fields = _extra_fields(self.fields, problems)
        layout = (self.layout.strip() or None) if self.layout is not None else None
        if layout is not None and not LAYOUT_NAME.fullmatch(layout):
            problems.append(("layout", "not a layout name (lowercase letters, digits, - and _, at most 64)"))
        zone, zone_printers = _zone(self.zone, self.zone_printers, problems)
        if problems:
            raise _Problems(sorted(problems, key=lambda p: FIELDS.index(p[0].split(".")[0])))
        # Frozen: a job is shared between the runtime, the journal and the logs, and must not change under them.
        for field, value in (
            ("job_id", job_id),
            ("attendee_id", attendee_id),
            ("name", name),
            ("company", company),
            ("role", role),
            ("printer", printer),
            ("fields", fields),
            ("layout", layout),
            ("zone", zone),
            ("zone_printers", zone_printers),
        ):
            msgspec.structs.force_setattr(self, field, value)

    def payload(self) -> str:
        data = msgspec.structs.asdict(self)
        # What enqueue stores, and always did for a job without them: no "printer": null, no empty "fields".
        for optional in ("printer", "layout", "zone"):
            if data[optional] is None:
                del data[optional]
        for empty in ("fields", "zone_printers"):
            if not data[empty]:
                del data[empty]
        return msgspec.json.encode(data).decode("utf-8")

    @property
    def zoned(self) -> tuple[str, tuple[str, ...]] | None:
        """(zone, its printers) for a job of a zone, as enqueue records it on the job; None for none."""
        return (self.zone, self.zone_printers) if self.zone is not None else None

    def badge(self) -> Badge:
        return Badge(self.job_id, self.attendee_id, self.name, self.company, self.role, self.fields, self.layout)


def _zone(
    zone: str | None, printers: tuple[str, ...], problems: list[tuple[str, str]]
) -> tuple[str | None, tuple[str, ...]]:
    """A job's zone and its printers, checked: a zone name with 1 to ``MAX_ZONE_PRINTERS`` printer names, or neither.
    The printers come back sorted and without repeats (the order says nothing: the least busy one is chosen)."""
    zone = (zone.strip() or None) if zone is not None else None
    names = tuple(sorted({str(p).strip() for p in printers}))
    if zone is None and not names:
        return None, ()
    if zone is None:
        problems.append(("zone", "is required with zone_printers"))
    elif not ZONE_NAME.fullmatch(zone):
        problems.append(("zone", "not a zone name (letters, digits, '-', '_' or '.', at most 64 characters)"))
    if not names:
        problems.append(("zone_printers", "a zone needs at least one printer"))
    elif len(names) > MAX_ZONE_PRINTERS:
        problems.append(("zone_printers", f"at most {MAX_ZONE_PRINTERS} printers, not {len(names)}"))
    elif bad := [p for p in names if not PRINTER_RE.match(p)]:
        problems.append(
            ("zone_printers", f"{bad[0][:70]!r} is not a printer name (lowercase letters, digits, - and _)")
        )
    return zone, names


def _extra_fields(given: object, problems: list[tuple[str, str]]) -> dict[str, str]:
    """The event's own fields, checked like ``name``: keys ``[a-z0-9_]{1,40}`` that are not built-in names."""
    if not isinstance(given, dict):
        problems.append(("fields", "must be an object of text values"))
        return {}
    if len(given) > MAX_EXTRA_FIELDS:
        problems.append(("fields", f"at most {MAX_EXTRA_FIELDS} fields, not {len(given)}"))
        return {}
    checked: dict[str, str] = {}
    for key, value in given.items():
        if not isinstance(key, str) or not _FIELD_KEY.fullmatch(key):
            problems.append(("fields", f"{str(key)[:50]!r} is not a field name (1-40 of a-z, 0-9 and _)"))
        elif key in BUILT_IN:
            problems.append(("fields", f"{key!r} is a job's own field: give it as {key}, not in fields"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                problems.append(("fields", f"{key}: must be text or a finite number, not {value}"))
                continue
            checked[key] = _text(f"fields.{key}", str(value), 0, 200, problems)
        elif not isinstance(value, str):
            problems.append(("fields", f"{key}: must be text"))
        else:
            checked[key] = _text(f"fields.{key}", value, 0, 200, problems)
    return {key: value for key, value in checked.items() if value}


#: Decoders are reused: building one per payload would cost more than decoding it.
_JOB_DECODER = msgspec.json.Decoder(Job)
_ANY_DECODER = msgspec.json.Decoder()


def parse_job(data: object) -> Job:
    """Validate one job from a dict. Raises JobError naming the field."""
    job = _validate(data)
    if len(job.payload().encode("utf-8")) > MAX_JOB_BYTES:
        raise JobError(f"job is larger than {MAX_JOB_BYTES} bytes")
    return job


def _validate(data: object) -> Job:
    """A job from a decoded JSON object or a CSV row, with the fix-ups a hand-made job needs."""
    if not isinstance(data, dict):
        raise JobError(f"a job must be a JSON object, not {type(data).__name__}")
    fields: dict[str, Any] = {}
    for key in FIELDS:
        if key not in data:
            continue
        value = data[key]
        if key == "fields":
            fields[key] = {} if value is None else value  # checked, with every other problem, by Job
            continue
        if key == "zone_printers":
            fields[key] = _printer_list(value)
            continue
        if value is None:
            value = "" if key != "layout" else None
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):  # NaN, 1e400: no id is "inf" or "nan"
                raise JobError(f"{key}: must be text or a finite number, not {value}")
            value = str(value)  # a numeric attendee id from a spreadsheet is still an id
        elif not isinstance(value, str):
            raise JobError(f"{key}: must be text")
        fields[key] = value
    missing = [key for key in _REQUIRED if key not in fields]
    try:
        # With a field missing, the others are still checked (every problem at once): a valid stand-in takes its
        # place, so the only problems raised are those of the fields that were given.
        job = Job(**fields, **dict.fromkeys(missing, "x"))  # type: ignore[arg-type]  # each checked by Job
    except _Problems as exc:
        problems = [f"{key} is required" for key in missing] + [f"{field}: {what}" for field, what in exc.problems]
        raise JobError("; ".join(problems)) from None
    if missing:
        raise JobError("; ".join(f"{key} is required" for key in missing))
    return job


def _printer_list(value: object) -> tuple[str, ...]:
    """``zone_printers`` as JSON gives it (a list of names) or a CSV column does (names apart by spaces or commas)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.replace(",", " ").split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise JobError("zone_printers: must be a list of printer names")


def job_from_payload(raw: bytes) -> Job:
    """Read a job back from Redis. Raises JobError for anything that is not a valid job."""
    if len(raw) > MAX_JOB_BYTES:  # enqueue stores compact JSON of at most this size; larger was pushed by hand
        raise JobError(f"payload is {len(raw)} bytes, larger than {MAX_JOB_BYTES}")
    try:
        # The fast path, for every job enqueue stored: straight from the bytes into a Job, checks included.
        return _JOB_DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        if isinstance(exc.__cause__, _Problems):  # the fields have the right types; Job's own checks said no
            raise JobError(str(exc.__cause__)) from None
    except msgspec.DecodeError:
        pass
    # Pushed by hand: numbers for ids, nulls, a missing field, not JSON at all. Slower, with the exact message.
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JobError(f"payload is not UTF-8 (byte {exc.start})") from None
    try:
        data = _ANY_DECODER.decode(raw)
    except msgspec.DecodeError as exc:
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
