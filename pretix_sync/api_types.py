"""The parts of pretix's API answers the venue uses, decoded and checked by msgspec (unknown fields are ignored).

Field names follow pretix's; where pretix's JSON name is not a Python name (``order__status``) it is renamed.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

T = TypeVar("T")

#: pretix's translatable text: a plain string, or {"en": "...", "de": "..."}.
I18n = str | dict[str, str]


def i18n_text(value: I18n | None, locale: str = "en") -> str:
    """One language of a translatable text: ``locale`` if there, else English, else the first one given."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    for key in (locale, "en"):
        if value.get(key):
            return value[key]
    return next((text for text in value.values() if text), "")


class Page(msgspec.Struct, Generic[T]):
    """One page of a list: pretix pages by at most 50 and links the next page by URL."""

    count: int
    next: str | None
    results: list[T]


class Checkin(msgspec.Struct):
    list: int
    type: str = "entry"
    datetime: str | None = None
    successful: bool = True


class PrintLog(msgspec.Struct):
    id: int
    type: str
    source: str = ""
    datetime: str | None = None
    info: dict[str, Any] = msgspec.field(default_factory=dict)


class Answer(msgspec.Struct):
    question: int | dict[str, Any]
    answer: str = ""
    question_identifier: str | None = None


class Position(msgspec.Struct):
    """An order position: one ticket. ``require_attention`` and ``order_status`` come only from check-in lists;
    ``canceled`` only from the orders endpoint (which lists cancelled positions when asked to)."""

    id: int
    order: str
    positionid: int
    item: int
    secret: str
    attendee_name: str | None = None
    attendee_name_parts: dict[str, Any] = msgspec.field(default_factory=dict)
    company: str | None = None
    attendee_email: str | None = None
    addon_to: int | None = None
    subevent: int | None = None
    canceled: bool = False
    blocked: list[str] | None = None
    checkins: list[Checkin] = msgspec.field(default_factory=list)
    print_logs: list[PrintLog] = msgspec.field(default_factory=list)
    answers: list[Answer] = msgspec.field(default_factory=list)
    require_attention: bool = False
    order_status: str | None = msgspec.field(default=None, name="order__status")


class InvoiceAddress(msgspec.Struct):
    name: str | None = None
    company: str | None = None


class Order(msgspec.Struct):
    code: str
    status: str  # n pending, p paid, e expired, c canceled
    last_modified: str
    invoice_address: InvoiceAddress | None = None
    checkin_attention: bool = False
    positions: list[Position] = msgspec.field(default_factory=list)


class EventInfo(msgspec.Struct):
    """What the sync reads of the event itself."""

    testmode: bool = False


class Item(msgspec.Struct):
    id: int
    name: I18n
    admission: bool = True


class CheckinList(msgspec.Struct):
    id: int
    name: str
    all_products: bool = True
    limit_products: list[int] = msgspec.field(default_factory=list)
    include_pending: bool = False
    subevent: int | None = None


class ItemAssignment(msgspec.Struct):
    item: int


class BadgeLayout(msgspec.Struct):
    """A layout of pretix's badge designer: elements in ``layout``, a background PDF by URL, the products it is
    assigned to (a product with none gets the event's default layout)."""

    id: int
    name: str
    default: bool
    layout: Any
    background: str | None = None
    item_assignments: list[ItemAssignment] = msgspec.field(default_factory=list)


class RedeemResult(msgspec.Struct):
    """pretix's answer to a check-in: ``status`` ok, error (``reason`` says why) or incomplete (questions)."""

    status: str
    reason: str | None = None
    reason_explanation: str | None = None
    require_attention: bool = False
    position: Position | None = None
