"""Test data written through pretix's own models. Runs inside pretix's virtualenv, never in ours.

    python pretix_data.py seed                      an organizer, event, products, check-in list, orders, layouts,
                                                    an API token; prints them as JSON
    python pretix_data.py rename POSITION_ID NAME   an attendee's name changed (as the organizer would in the back end)
    python pretix_data.py order NAME [PRODUCT]      a new paid order of one position; prints its code, id, secret
    python pretix_data.py cancel ORDER_CODE         the order cancelled, through pretix's own cancel service
    python pretix_data.py token [PERMISSION...]     a new API token of the same team, or of a new one with only these
                                                    permissions on the event
    python pretix_data.py revoke TOKEN              the API token revoked
    python pretix_data.py checkins POSITION_ID      the position's check-ins (list, type, nonce) as JSON
    python pretix_data.py bulk N                    N more paid orders of one position each (for benchmarks)
    python pretix_data.py position ORDER_CODE N     the order's position N (its id, secret and name) as JSON
    python pretix_data.py files_event               a second event whose names are given and family name (pretix's
                                                    default for new events), for its exporters' files; prints it
    python pretix_data.py serve                     the same commands, one JSON list a line on stdin, answers as
                                                    JSON lines (what the tests use: pretix loads once)

PRETIX_CONFIG_FILE and DJANGO_SETTINGS_MODULE come from the caller (tests/pretix/server.py).
"""

from __future__ import annotations

import io
import json
import sys
import traceback
from datetime import timedelta
from decimal import Decimal
from typing import Any

import django

django.setup()

from django.core.files.base import ContentFile  # noqa: E402
from django.db import transaction  # noqa: E402
from django.utils.timezone import now  # noqa: E402
from django_scopes import scopes_disabled  # noqa: E402
from pretix.base.models import (  # noqa: E402
    Event,
    InvoiceAddress,
    Item,
    Order,
    OrderPosition,
    Organizer,
    Team,
    TeamAPIToken,
)
from pretix.base.services.orders import _cancel_order  # noqa: E402
from pretix.plugins.badges.models import BadgeItem, BadgeLayout  # noqa: E402
from pretix.plugins.badges.templates import _simple_template  # noqa: E402
from reportlab.lib.units import mm  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

ORGANIZER = "badgeorg"
EVENT = "conf2026"

#: (attendee name or None, product, company, invoice name): the seeded orders, one position each.
ATTENDEES: list[tuple[str | None, str, str | None, str | None]] = [
    ("Renée Müller", "Regular", "Acme GmbH", None),
    ("Ahmed Al-Sayed", "Speaker", None, None),
    ("山田 太郎", "Regular", "株式会社テスト", None),
    ("שרה כהן", "Regular", None, None),
    (None, "Regular", None, "Invoice Person"),  # no attendee name: the order's invoice name stands in
    (None, "Regular", None, None),  # no name at all: the help desk
]


def _badge_background(width_mm: float, height_mm: float) -> bytes:
    """A one-page PDF with a filled band at the top, so a test can see the background was drawn."""
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=(width_mm * mm, height_mm * mm))
    pdf.rect(0, (height_mm - 20) * mm, width_mm * mm, 20 * mm, stroke=0, fill=1)
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def _order(event: Event, item: Item, name: str | None, company: str | None, invoice_name: str | None) -> Order:
    organizer = event.organizer
    order = Order.objects.create(
        event=event,
        status=Order.STATUS_PAID,
        email="attendee@example.invalid",
        locale="en",
        total=item.default_price,
        sales_channel=organizer.sales_channels.get(identifier="web"),
    )
    if invoice_name:
        InvoiceAddress.objects.create(order=order, name_parts={"_legacy": invoice_name})
    OrderPosition.objects.create(
        order=order,
        item=item,
        price=item.default_price,
        positionid=1,
        attendee_name_parts={"_legacy": name} if name else {},
        company=company,
    )
    order.create_transactions()  # pretix's accounting rows for a new order, in the same database transaction
    return order


def _position_json(order: Order) -> dict[str, Any]:
    pos = order.positions.get()
    return {"order": order.code, "id": pos.pk, "secret": pos.secret, "name": pos.attendee_name}


def seed() -> dict[str, Any]:
    organizer = Organizer.objects.create(name="Badge Org", slug=ORGANIZER)
    event = Event.objects.create(
        organizer=organizer,
        name="Conference 2026",
        slug=EVENT,
        currency="EUR",
        date_from=now() + timedelta(days=7),
        live=True,
        plugins="pretix.plugins.badges,pretix.plugins.banktransfer",
    )
    event.set_defaults()
    regular = event.items.create(name="Regular", default_price=Decimal("100.00"), admission=True)
    speaker = event.items.create(name="Speaker", default_price=Decimal("0.00"), admission=True)
    entrance = event.checkin_lists.create(name="Entrance", all_products=True)
    speakers_only = event.checkin_lists.create(name="Speaker lounge", all_products=False)
    speakers_only.limit_products.add(speaker)
    # A second event the token may also see, so a test can tell "wrong event" from "no permission".
    Event.objects.create(organizer=organizer, name="Other", slug="other", currency="EUR", date_from=now())

    team = Team.objects.create(organizer=organizer, name="Badge printing", all_events=True, all_event_permissions=True)
    token = team.tokens.create(name="badge-agent tests")

    pronouns = event.questions.create(question="Pronouns", identifier="PRONOUNS", type="S", required=False)
    pronouns.items.add(regular, speaker)

    items = {"Regular": regular, "Speaker": speaker}
    positions = []
    for name, product, company, invoice_name in ATTENDEES:
        order = _order(event, items[product], name, company, invoice_name)
        if name == "Renée Müller":
            order.positions.get().answers.create(question=pronouns, answer="she/her")
        positions.append(
            {**_position_json(order), "product": product, "company": company, "invoice_name": invoice_name}
        )

    # Badge layouts: a default one with the pretix designer's simple template, and one for speakers with a
    # background PDF, assigned to the Speaker product.
    default_layout = BadgeLayout.objects.create(
        event=event, name="Default", default=True, layout=json.dumps(_simple_template(148 * mm, 105 * mm))
    )
    speaker_layout = BadgeLayout.objects.create(
        event=event, name="Speaker", default=False, layout=json.dumps(_simple_template(90 * mm, 54 * mm))
    )
    speaker_layout.background.save("speaker.pdf", ContentFile(_badge_background(90, 54)))
    BadgeItem.objects.create(item=speaker, layout=speaker_layout)

    return {
        "organizer": ORGANIZER,
        "event": EVENT,
        "token": token.token,
        "token_id": token.pk,
        "items": {"Regular": regular.pk, "Speaker": speaker.pk},
        "checkin_lists": {"Entrance": entrance.pk, "Speaker lounge": speakers_only.pk},
        "layouts": {"Default": default_layout.pk, "Speaker": speaker_layout.pk},
        "positions": positions,
    }


def _event() -> Event:
    return Event.objects.get(organizer__slug=ORGANIZER, slug=EVENT)


def rename(position_id: str, name: str) -> dict[str, Any]:
    pos = OrderPosition.objects.get(pk=int(position_id))
    pos.attendee_name_parts = {"_legacy": name}
    pos.save()
    pos.order.touch()  # as pretix's own order-change views do: the order's last_modified says "changed"
    return {"id": pos.pk, "name": pos.attendee_name}


def set_email(position_id: str, email: str) -> dict[str, Any]:
    """The position's attendee e-mail set as given, through the model (which, unlike pretix's forms, takes any text:
    what an import or an old plugin may have left)."""
    pos = OrderPosition.objects.get(pk=int(position_id))
    pos.attendee_email = email
    pos.save()
    pos.order.touch()
    return {"id": pos.pk, "email": pos.attendee_email}


def new_order(name: str, product: str = "Regular") -> dict[str, Any]:
    event = _event()
    order = _order(event, event.items.get(name=product), name, None, None)
    return _position_json(order)


def pair(first: str, second: str) -> dict[str, Any]:
    """A paid order of two Regular tickets (a buyer and a guest)."""
    event = _event()
    order = _order(event, event.items.get(name="Regular"), first, None, None)
    guest = OrderPosition.objects.create(
        order=order, item=order.positions.get().item, price=order.total, positionid=2,
        attendee_name_parts={"_legacy": second},
    )  # fmt: skip
    order.total *= 2
    order.save()
    order.create_transactions()
    return {
        "order": order.code,
        "positions": [
            {"id": p.pk, "secret": p.secret, "name": p.attendee_name}
            for p in (order.positions.get(positionid=1), guest)
        ],
    }


def walk_in_products() -> dict[str, Any]:
    """Products a desk may sell to walk-ins: "Day ticket" (a quota with room) and "Sold out" (a quota of none);
    made once a data folder."""
    event = _event()
    made = {}
    for name, size in (("Day ticket", 1000), ("Sold out", 0)):
        item = event.items.filter(name=name).first()
        if item is None:
            item = event.items.create(name=name, default_price=Decimal("20.00"), admission=True)
            event.quotas.create(name=name, size=size).items.add(item)
        made[name] = item.pk
    return made


def orders_with_comment(text: str) -> list[dict[str, Any]]:
    """The event's orders whose comment contains ``text``, with their tickets' products and secrets."""
    return [
        {"code": o.code, "status": o.status, "testmode": o.testmode,
         "positions": [{"item": p.item_id, "secret": p.secret, "name": p.attendee_name} for p in o.positions.all()]}
        for o in Order.objects.filter(event=_event(), comment__contains=text).order_by("pk")
    ]  # fmt: skip


def cancel(code: str) -> dict[str, Any]:
    order = Order.objects.get(event=_event(), code=code)
    _cancel_order(order.pk, send_mail=False)
    order.refresh_from_db()
    return {"order": order.code, "status": order.status}


def new_token(*permissions: str) -> dict[str, Any]:
    """Another token of the seeded team; with permissions (e.g. event.orders:read), of a new team that has only
    those on the event."""
    if not permissions:
        team = Team.objects.get(organizer__slug=ORGANIZER, name="Badge printing")
    else:
        team = Team.objects.create(
            organizer=Organizer.objects.get(slug=ORGANIZER),
            name=f"Only {' '.join(permissions)}",
            limit_event_permissions=dict.fromkeys(permissions, True),
        )
        team.limit_events.add(_event())
    return {"token": team.tokens.create(name="another").token}


def revoke(token: str) -> dict[str, Any]:
    api_token = TeamAPIToken.objects.get(token=token)
    api_token.active = False
    api_token.save()
    return {"revoked": api_token.pk}


def checkins(position_id: str) -> list[dict[str, Any]]:
    pos = OrderPosition.all.get(pk=int(position_id))
    return [
        {"list": c.list_id, "type": c.type, "nonce": c.nonce, "successful": c.successful}
        for c in pos.all_checkins.order_by("pk")
    ]


def position(order_code: str, positionid: str) -> dict[str, Any]:
    """An order position by its order's code and its number in the order, as pretix's exports name it."""
    pos = OrderPosition.all.get(order__code=order_code, positionid=int(positionid))
    return {"order": order_code, "id": pos.pk, "secret": pos.secret, "name": pos.attendee_name}


def bulk(count: str) -> dict[str, Any]:
    event = _event()
    regular = event.items.get(name="Regular")
    for i in range(int(count)):
        _order(event, regular, f"Bulk Attendee {i:05d}", "Bulk Co", None)
    return {"created": int(count)}


FILES_EVENT = "files2026"
#: (given name, family name, attendee e-mail, company, product, order status): the files event's orders. The third
#: has no attendee name (the invoice address names the buyer), the last is cancelled.
FILES_ATTENDEES: list[tuple[str, str, str, str, str, str]] = [
    ("Zoë", "Ó Briain", "zoe@example.invalid", "Café Müller", "Regular", Order.STATUS_PAID),
    ("太郎", "山田", "", "株式会社テスト", "Speaker", Order.STATUS_PAID),
    ("", "", "", "", "Regular", Order.STATUS_PAID),
    ("Jan", "Nowak", "jan@example.invalid", "", "Regular", Order.STATUS_CANCELED),
]


def files_event() -> dict[str, Any]:
    """An event with names in parts, a company and e-mail per attendee, made once a data folder (idempotent)."""
    organizer = Organizer.objects.get(slug=ORGANIZER)
    event = Event.objects.filter(organizer=organizer, slug=FILES_EVENT).first()
    if event is None:
        event = Event.objects.create(
            organizer=organizer, name="Files 2026", slug=FILES_EVENT, currency="EUR",
            date_from=now() + timedelta(days=7), live=True,
        )  # fmt: skip
        event.set_defaults()
        event.settings.name_scheme = "given_family"
        items = {
            "Regular": event.items.create(name="Regular", default_price=Decimal("100.00"), admission=True),
            "Speaker": event.items.create(name="Speaker", default_price=Decimal("0.00"), admission=True),
        }
        event.checkin_lists.create(name="Entrance", all_products=True, include_pending=True)
        for given, family, email, company, product, status in FILES_ATTENDEES:
            order = Order.objects.create(
                event=event, status=status, email="buyer@example.invalid", locale="en",
                total=items[product].default_price, sales_channel=organizer.sales_channels.get(identifier="web"),
            )  # fmt: skip
            if not given:
                InvoiceAddress.objects.create(
                    order=order, company="Invoice Co",
                    name_parts={"_scheme": "given_family", "given_name": "Ines", "family_name": "Invoice"},
                )  # fmt: skip
            parts = {"_scheme": "given_family", "given_name": given, "family_name": family} if given else {}
            OrderPosition.objects.create(
                order=order, item=items[product], price=items[product].default_price, positionid=1,
                attendee_name_parts=parts, attendee_email=email or None, company=company or None,
                canceled=status == Order.STATUS_CANCELED,
            )  # fmt: skip
            order.create_transactions()
    positions = [
        {"order": p.order.code, "secret": p.secret, "name": p.attendee_name, "status": p.order.status}
        for p in OrderPosition.all.filter(order__event=event).order_by("order__datetime", "pk")
    ]
    return {
        "event": event.slug,
        "checkin_list": event.checkin_lists.get(name="Entrance").pk,
        "positions": positions,
    }


COMMANDS = {
    "seed": seed,
    "rename": rename,
    "set_email": set_email,
    "order": new_order,
    "pair": pair,
    "walk_in_products": walk_in_products,
    "orders_with_comment": orders_with_comment,
    "cancel": cancel,
    "token": new_token,
    "revoke": revoke,
    "checkins": checkins,
    "bulk": bulk,
    "position": position,
    "files_event": files_event,
}


def run(command: str, *args: str) -> Any:
    with scopes_disabled(), transaction.atomic():
        return COMMANDS[command](*args)


def serve() -> None:
    """Commands one a line on stdin (a JSON list: the command and its arguments), each answered with one JSON line
    on stdout: {"ok": result} or {"error": traceback}. Django and pretix load once, not once a command."""
    answers = sys.stdout
    sys.stdout = sys.stderr  # anything else printed must not be taken for an answer
    for line in sys.stdin:
        try:
            answer = {"ok": run(*json.loads(line))}
        except Exception:  # noqa: BLE001 - the test that asked fails with it
            answer = {"error": traceback.format_exc()}
        answers.write(json.dumps(answer, ensure_ascii=False) + "\n")
        answers.flush()


def main() -> None:
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        print(json.dumps(run(*sys.argv[1:]), ensure_ascii=False))


if __name__ == "__main__":
    main()
