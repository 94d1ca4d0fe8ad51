"""pretix's tickets as the venue's attendee records.

One admitted position is one attendee: its ``secret`` is the code a kiosk scans (and the badge's QR code carries),
its job id pretix's own non-secret ``{order code}-{position id}`` (job ids appear in logs, events and the board).
The name is the one pretix gives on its check-in list: the attendee's, else the name on the add-on's main ticket,
else the order's invoice name (pretix's own fallback); with none, the record is loaded without a name and flagged,
so the kiosk sends the attendee to the help desk instead of printing an empty badge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attendees.importer import is_email
from pretix_sync.api_types import Order, Position

#: pretix's order states: a ticket is valid only in an order the check-in list admits; these are why not.
ORDER_STATES = {"n": "pending", "p": "paid", "e": "expired", "c": "cancelled"}

#: A name, company or field value longer than this is cut (a badge field's limit).
MAX_TEXT = 200


@dataclass(frozen=True)
class AttendeeRecord:
    """One ticket as the venue's list keeps it.

    ``status`` is ``valid`` or ``cancelled`` (``reason`` says why: the order cancelled, expired or unpaid, the
    position cancelled). ``needs_attention`` is pretix's flag for the ticket (its product or order asks for it) or a
    missing name: the kiosk sends the attendee to a desk.
    """

    code: str
    job_id: str
    order_code: str
    position_id: int
    name: str
    company: str
    role: str
    product_id: int
    email: str
    status: str
    reason: str = ""
    needs_attention: bool = False
    fields: dict[str, str] = field(default_factory=dict)
    #: pretix held an attendee e-mail that is not an address: loaded without it (the sync says so, never what it was)
    email_left_out: bool = False

    def as_row(self) -> dict[str, Any]:
        """The record in the shape of an attendee file's row (``attendee_id`` is the ticket code)."""
        return {
            "attendee_id": self.code,
            "job_id": self.job_id,
            "name": self.name,
            "company": self.company,
            "role": self.role,
            "fields": dict(self.fields),
            "order_code": self.order_code,
            "email": self.email,
            "status": self.status,
            "needs_attention": self.needs_attention,
            "reason": self.reason,
        }


def _text(value: str | None) -> str:
    return " ".join((value or "").split())[:MAX_TEXT]


def job_id_for(order_code: str, position_id: int) -> str:
    return f"{order_code}-{position_id}"


def answer_fields(position: Position, questions: dict[str, str]) -> dict[str, str]:
    """The answers the venue maps into fields: ``questions`` is field -> the question's identifier in pretix."""
    answers = {a.question_identifier: a.answer for a in position.answers if a.question_identifier}
    return {f: _text(answers[q]) for f, q in questions.items() if _text(answers.get(q))}


def admitted(position: Position, products: dict[int, str], questions: dict[str, str] | None = None) -> AttendeeRecord:
    """A position pretix's check-in list admits (its answer, with pretix's name fallback already applied, and its
    ``require_attention``, which covers the order's, the product's and the variation's flag). ``questions``: the
    answers to put into fields (field -> question identifier)."""
    name = _text(position.attendee_name)
    answers = answer_fields(position, questions or {})
    return _record(position, position.order, name, products, "valid", position.require_attention or not name, answers)


def not_admitted(position: Position, order: Order, products: dict[int, str]) -> AttendeeRecord:
    """A position of a changed order that the check-in list no longer admits: a cancelled ticket, and why."""
    if position.canceled:
        reason = "the position was cancelled in pretix"
    else:
        reason = f"the order is {ORDER_STATES.get(order.status, order.status)} in pretix"
    name = _text(position.attendee_name) or _text(order.invoice_address.name if order.invoice_address else None)
    return _record(position, order.code, name, products, "cancelled", False, {}, reason)


def name_parts(position: Position) -> dict[str, str]:
    """The attendee's given and family name as pretix's name scheme keeps them (``attendee_name_parts``), for sorting
    pre-printed badges by family name (preprint/plan.py); none for a scheme without them (one field, or a title
    and a full name)."""
    parts = position.attendee_name_parts or {}
    found = {}
    for key in ("given_name", "family_name"):
        value = parts.get(key)
        if isinstance(value, str) and value.strip():
            found[key] = " ".join(value.split())
    return found


def _record(
    position: Position,
    order_code: str,
    name: str,
    products: dict[int, str],
    status: str,
    needs_attention: bool,
    answers: dict[str, str],
    reason: str = "",
) -> AttendeeRecord:
    """One ticket as a record: the product is its role and ``fields.ticket_type``, as the import presets make it."""
    product = _text(products.get(position.item, ""))
    # As `attendees import` judges one: pretix's forms check the address, but its models (imports, plugins) do not.
    # Judged whole (an address is at most 254 characters, no spaces), not cut to a badge field's length first.
    email = (position.attendee_email or "").strip()
    left_out = bool(email) and not is_email(email)
    return AttendeeRecord(
        code=position.secret,
        job_id=job_id_for(order_code, position.id),
        order_code=order_code,
        position_id=position.id,
        name=name,
        company=_text(position.company),
        role=product,
        product_id=position.item,
        email="" if left_out else email,
        status=status,
        reason=reason,
        needs_attention=needs_attention,
        fields={**answers, **name_parts(position), "ticket_type": product, "product_id": str(position.item)},
        email_left_out=left_out,
    )
