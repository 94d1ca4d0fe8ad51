"""The IPP/1.1-2.0 message encoding (RFC 8010): requests built, responses read, every length checked.

Written here rather than taken from a library: the asyncio IPP clients on PyPI (pyipp and its fork aioipp) encode
no collections (``media-col``), no resolutions or ranges, drop an attribute whose tag they do not know, and read a
reply without checking a length against the bytes there are. This is the one place the encoding lives; the tests
read real replies from ippeveprinter and cupsd through it.

A decoded attribute group maps each name to its list of values (an IPP attribute is a set): ``int`` (integer, enum),
``bool``, ``str`` (text, name, keyword, uri, charset, language, mime type), ``bytes`` (octetString and anything
unknown), :class:`Resolution`, :class:`Range`, ``None`` (the out-of-band values: no-value, unknown, unsupported),
and collections as ``dict[str, list[value]]``.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, field
from typing import Any

# Operations (RFC 8011 section 5.4.15).
PRINT_JOB = 0x0002
CREATE_JOB = 0x0005
SEND_DOCUMENT = 0x0006
CANCEL_JOB = 0x0008
GET_JOB_ATTRIBUTES = 0x0009
GET_PRINTER_ATTRIBUTES = 0x000B

# Delimiter tags.
OPERATION_GROUP = 0x01
JOB_GROUP = 0x02
END_OF_ATTRIBUTES = 0x03
PRINTER_GROUP = 0x04
UNSUPPORTED_GROUP = 0x05

# Value tags.
UNSUPPORTED = 0x10
UNKNOWN = 0x12
NO_VALUE = 0x13
INTEGER = 0x21
BOOLEAN = 0x22
ENUM = 0x23
OCTET_STRING = 0x30
DATE_TIME = 0x31
RESOLUTION = 0x32
RANGE = 0x33
BEGIN_COLLECTION = 0x34
TEXT_WITH_LANGUAGE = 0x35
NAME_WITH_LANGUAGE = 0x36
END_COLLECTION = 0x37
TEXT = 0x41
NAME = 0x42
KEYWORD = 0x44
URI = 0x45
CHARSET = 0x47
LANGUAGE = 0x48
MIME_TYPE = 0x49
MEMBER_NAME = 0x4A
EXTENSION = 0x7F

_STRING_TAGS = frozenset({TEXT, NAME, KEYWORD, URI, 0x46, CHARSET, LANGUAGE, MIME_TYPE, MEMBER_NAME})
_MAX_DEPTH = 8

#: Status codes (RFC 8011 section 5.4.16) named in messages; the rest are shown as hex.
STATUS_NAMES = {
    0x0000: "successful-ok",
    0x0001: "successful-ok-ignored-or-substituted-attributes",
    0x0002: "successful-ok-conflicting-attributes",
    0x0400: "client-error-bad-request",
    0x0401: "client-error-forbidden",
    0x0402: "client-error-not-authenticated",
    0x0403: "client-error-not-authorized",
    0x0404: "client-error-not-possible",
    0x0405: "client-error-timeout",
    0x0406: "client-error-not-found",
    0x0407: "client-error-gone",
    0x0408: "client-error-request-entity-too-large",
    0x040A: "client-error-document-format-not-supported",
    0x040B: "client-error-attributes-or-values-not-supported",
    0x0500: "server-error-internal-error",
    0x0501: "server-error-operation-not-supported",
    0x0502: "server-error-service-unavailable",
    0x0503: "server-error-version-not-supported",
    0x0504: "server-error-device-error",
    0x0505: "server-error-temporary-error",
    0x0506: "server-error-not-accepting-jobs",
    0x0507: "server-error-busy",
    0x0508: "server-error-job-canceled",
}
NOT_FOUND = 0x0406
BUSY = 0x0507  # server-error-busy: a printer that takes one job at a time, printing one
NOT_POSSIBLE = 0x0404


def status_name(code: int) -> str:
    return STATUS_NAMES.get(code, f"status 0x{code:04x}")


class IppDecodeError(ValueError):
    """The bytes are not a well-formed IPP message."""


@dataclass(frozen=True)
class Resolution:
    x: int
    y: int
    #: 3 dots per inch, 4 dots per centimetre.
    units: int = 3

    @property
    def dpi(self) -> int:
        return self.x if self.units == 3 else round(self.x * 2.54)


@dataclass(frozen=True)
class Range:
    lower: int
    upper: int


@dataclass(frozen=True)
class Value:
    """One value to encode with its tag, for the attributes whose type a plain Python value does not say."""

    tag: int
    value: Any


Values = dict[str, list[Any]]


@dataclass
class Response:
    version: tuple[int, int]
    status: int
    request_id: int
    groups: list[tuple[int, Values]] = field(default_factory=list)
    data: bytes = b""

    @property
    def ok(self) -> bool:
        return self.status < 0x0100

    def group(self, tag: int) -> Values:
        """Every attribute of the groups with ``tag``, merged (a reply has one printer or job group)."""
        merged: Values = {}
        for group_tag, values in self.groups:
            if group_tag == tag:
                merged.update(values)
        return merged

    @property
    def status_message(self) -> str:
        text = first(self.group(OPERATION_GROUP), "status-message")
        return f"{status_name(self.status)}" + (f" ({text})" if isinstance(text, str) and text else "")


def first(values: Values, name: str, default: Any = None) -> Any:
    """The first value of attribute ``name``, or ``default`` when it is absent or out-of-band."""
    found = values.get(name)
    return found[0] if found and found[0] is not None else default


_request_ids = itertools.count(1)


def _value(tag: int, value: Any) -> bytes:
    if tag in (INTEGER, ENUM):
        return struct.pack(">hi", 4, value)
    if tag == BOOLEAN:
        return struct.pack(">hB", 1, 1 if value else 0)
    if tag == RESOLUTION:
        return struct.pack(">hiib", 9, value.x, value.y, value.units)
    if tag == RANGE:
        return struct.pack(">hii", 8, value.lower, value.upper)
    if tag in (NO_VALUE, UNKNOWN, UNSUPPORTED):
        return struct.pack(">h", 0)
    raw = value if isinstance(value, bytes) else str(value).encode("utf-8")
    if len(raw) > 32767:
        raise ValueError(f"IPP value longer than 32767 bytes ({len(raw)})")
    return struct.pack(">h", len(raw)) + raw


def _tag_of(value: Any) -> tuple[int, Any]:
    if isinstance(value, Value):
        return value.tag, value.value
    if isinstance(value, bool):
        return BOOLEAN, value
    if isinstance(value, int):
        return INTEGER, value
    if isinstance(value, Resolution):
        return RESOLUTION, value
    if isinstance(value, Range):
        return RANGE, value
    if isinstance(value, dict):
        return BEGIN_COLLECTION, value
    if isinstance(value, bytes):
        return OCTET_STRING, value
    return KEYWORD, value


def _attribute(name: str, value: Any) -> bytes:
    values = value if isinstance(value, list) else [value]
    out = bytearray()
    for n, one in enumerate(values):
        tag, raw = _tag_of(one)
        label = name.encode("ascii") if n == 0 else b""
        out += struct.pack(">bh", tag, len(label)) + label
        if tag == BEGIN_COLLECTION:
            out += struct.pack(">h", 0)
            for member, member_value in raw.items():
                member_name = member.encode("ascii")
                out += struct.pack(">bhh", MEMBER_NAME, 0, len(member_name)) + member_name
                # A member's own values follow with an empty name (RFC 8010 section 3.1.7).
                out += _attribute("", member_value)
            out += struct.pack(">bhh", END_COLLECTION, 0, 0)
        else:
            out += _value(tag, raw)
    return bytes(out)


def encode_request(
    operation: int,
    operation_attributes: dict[str, Any],
    job_attributes: dict[str, Any] | None = None,
    data: bytes = b"",
    request_id: int | None = None,
) -> bytes:
    """An IPP/2.0 request. Strings are keywords unless given as :class:`Value` with their tag (``uri``, ``name``...);
    ``attributes-charset`` and ``attributes-natural-language`` come first, as the standard requires."""
    rid = next(_request_ids) if request_id is None else request_id
    out = bytearray(struct.pack(">bbhi", 2, 0, operation, rid))
    out.append(OPERATION_GROUP)
    out += _attribute("attributes-charset", Value(CHARSET, "utf-8"))
    out += _attribute("attributes-natural-language", Value(LANGUAGE, "en"))
    for name, value in operation_attributes.items():
        out += _attribute(name, value)
    if job_attributes:
        out.append(JOB_GROUP)
        for name, value in job_attributes.items():
            out += _attribute(name, value)
    out.append(END_OF_ATTRIBUTES)
    return bytes(out) + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise IppDecodeError(f"message cut short in {what} (byte {self.at} of {len(self.data)})")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))


def _decode_value(tag: int, raw: bytes, name: str) -> Any:
    try:
        if tag in (INTEGER, ENUM):
            return struct.unpack(">i", raw)[0]
        if tag == BOOLEAN:
            return struct.unpack(">B", raw)[0] != 0
        if tag == RESOLUTION:
            x, y, units = struct.unpack(">iib", raw)
            return Resolution(x, y, units)
        if tag == RANGE:
            lower, upper = struct.unpack(">ii", raw)
            return Range(lower, upper)
    except struct.error:
        raise IppDecodeError(f"attribute {name!r}: a value of tag 0x{tag:02x} cannot be {len(raw)} bytes") from None
    if tag in (NO_VALUE, UNKNOWN, UNSUPPORTED) or 0x10 <= tag <= 0x1F:
        return None
    if tag in _STRING_TAGS:
        return raw.decode("utf-8", "replace")
    if tag in (TEXT_WITH_LANGUAGE, NAME_WITH_LANGUAGE):
        # language length, language, text length, text: the text is what staff read.
        try:
            (lang_len,) = struct.unpack_from(">h", raw, 0)
            (text_len,) = struct.unpack_from(">h", raw, 2 + lang_len)
            return raw[4 + lang_len : 4 + lang_len + text_len].decode("utf-8", "replace")
        except struct.error:
            raise IppDecodeError(f"attribute {name!r}: a malformed text with language") from None
    return raw


def _read_collection(reader: _Reader, depth: int) -> Values:
    if depth > _MAX_DEPTH:
        raise IppDecodeError(f"collections nested deeper than {_MAX_DEPTH}")
    members: Values = {}
    member = ""
    while True:
        (tag,) = reader.unpack(">B", "a collection")
        (name_len,) = reader.unpack(">h", "a collection")
        reader.take(name_len, "a collection member")
        (value_len,) = reader.unpack(">h", "a collection")
        raw = reader.take(value_len, "a collection value")
        if tag == END_COLLECTION:
            return members
        if tag == MEMBER_NAME:
            member = raw.decode("utf-8", "replace")
            members.setdefault(member, [])
            continue
        if not member:
            raise IppDecodeError("a collection value with no member name before it")
        if tag == BEGIN_COLLECTION:
            members[member].append(_read_collection(reader, depth + 1))
        else:
            members[member].append(_decode_value(tag, raw, member))


def decode_response(data: bytes) -> Response:
    """Read a whole IPP reply. Raises IppDecodeError (with what and where) for anything malformed."""
    reader = _Reader(data)
    major, minor, status, request_id = reader.unpack(">BBHi", "the header")
    if major not in (1, 2):
        raise IppDecodeError(f"not an IPP reply (version {major}.{minor})")
    response = Response((major, minor), status, request_id)
    values: Values | None = None
    name = ""
    while True:
        (tag,) = reader.unpack(">B", "the attributes")
        if tag == END_OF_ATTRIBUTES:
            break
        if tag < 0x10:
            values = {}
            response.groups.append((tag, values))
            continue
        if values is None:
            raise IppDecodeError("an attribute before any attribute group")
        if tag == EXTENSION:
            raise IppDecodeError("an extended (0x7f) value tag, which no printer should send")
        (name_len,) = reader.unpack(">h", "an attribute name")
        if name_len:
            name = reader.take(name_len, "an attribute name").decode("utf-8", "replace")
            values[name] = []
        elif not name:
            raise IppDecodeError("an additional value with no attribute before it")
        (value_len,) = reader.unpack(">h", "an attribute value")
        raw = reader.take(value_len, f"attribute {name!r}")
        if tag == BEGIN_COLLECTION:
            values[name].append(_read_collection(reader, 1))
        else:
            values[name].append(_decode_value(tag, raw, name))
    response.data = data[reader.at :]
    return response
