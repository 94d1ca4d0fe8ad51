"""The attendee routes' part of the intake's OpenAPI document (merged into intake/openapi.py's)."""

from __future__ import annotations

from typing import Any

from intake.openapi_parts import AUTH, BEARER, TEXT, json_body, json_reply, problem

CODE = {
    "name": "code",
    "in": "path",
    "required": True,
    "description": "the ticket code, or the attendee's handle (an answer's handle or badge_id)",
    "schema": {"type": "string", "pattern": "^[!-~]{1,128}$"},
}
LOOKUP_429 = {
    "429": {
        **AUTH["429"],
        "description": "over the token's rate, its attendee lookups' rate, or the failed lookups (codes not on the "
        "list) of the token or the client address; for a badge, the token's outstanding jobs at its cap",
    }
}


def schemas() -> dict[str, Any]:
    badge = {
        "type": "object",
        "properties": {
            "state": {"enum": ["none", "queued", "printing", "printed", "dead", "cancelled"]},
            "printer": TEXT,
            "location": {**TEXT, "description": "where it is printing, or where it came out"},
            "printed_ms": {"type": ["integer", "null"], "description": "when it was confirmed printed (ms UTC)"},
            "reprints": {"type": "integer"},
            "no_printer": {
                "type": "boolean",
                "description": "kiosk tokens, a queued badge: no printer it may go to can print now (its zone's "
                "nor the venue's): send the attendee to the help desk",
            },
            "wait_minutes": {
                "type": "integer",
                "description": "kiosk tokens, a queued badge: about how many minutes it waits, present when its "
                "zone's expected wait passes kiosk.say_wait_after",
            },
        },
    }
    attendee = {
        "type": "object",
        "description": "staff see all and the handle; a desk the code and e-mail masked and the handle; a kiosk "
        "name, first_name, status, badge_id and badge only",
        "properties": {
            "code": {**TEXT, "description": "the ticket code (staff); masked for a desk: its last 4 characters"},
            "handle": {**TEXT, "description": "desk, staff: what to name the attendee by in the path, not the code"},
            "badge_id": {**TEXT, "description": "kiosk: the id to follow the badge by (GET /v1/attendees/{code})"},
            "name": TEXT,
            "first_name": TEXT,
            "company": TEXT,
            "role": TEXT,
            "fields": {"type": "object", "additionalProperties": TEXT},
            "ticket_type": TEXT,
            "order_code": TEXT,
            "email": TEXT,
            "source": {"enum": ["import", "pretix", "walk-in"]},
            "status": {"enum": ["valid", "cancelled"]},
            "job_id": TEXT,
            "badge": badge,
            "source_says": {"type": "object", "description": "the source's values of what staff corrected"},
            "duplicate": {"type": "boolean", "description": "badge: the badge existed; nothing new was printed"},
            "message": {**TEXT, "description": "a sentence a kiosk can show (a cancelled ticket, a pre-printed badge)"},
            "preprint": {"$ref": "#/components/schemas/Preprint"},
            "printed": {"type": "boolean", "description": "badge: false for a pre-printed badge (nothing printed)"},
        },
    }
    return {
        "Attendee": attendee,
        "Attendees": {"type": "object", "properties": {"attendees": {"type": "array", "items": attendee}}},
    }


def paths() -> dict[str, Any]:
    auth = {**AUTH, **LOOKUP_429}
    return {
        "/v1/attendees": {
            "get": {
                "summary": "search the list (desk, staff): at most 50, by any word's prefix of name, company, "
                "order code or e-mail, case and accents ignored, any script",
                "security": BEARER,
                "parameters": [{"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 200}}],
                "responses": {"200": json_reply("matches", "Attendees"), "422": problem("q too long"), **auth},
            },
            "post": {
                "summary": "a walk-in (desk, staff): added to the list, then printed unless print is false",
                "security": BEARER,
                "requestBody": json_body(
                    {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": TEXT,
                            "company": TEXT,
                            "role": TEXT,
                            "fields": {"type": "object"},
                            "code": TEXT,
                            "email": TEXT,
                            "print": {"type": "boolean"},
                            "printer": TEXT,
                            "pretix_product": {
                                "type": "integer",
                                "description": "a product settings.json offers (pretix_products): the pretix sync "
                                "makes the walk-in a pretix order of it",
                            },
                        },
                    }
                ),
                "responses": {
                    "201": json_reply("added (and its badge queued)", "Attendee"),
                    "409": problem("the code is on the list already"),
                    "422": problem("invalid: the detail names the field"),
                    **auth,
                },
            },
        },
        "/v1/attendees/{code}": {
            "get": {
                "summary": "one attendee by ticket code or handle, with their badge (kiosk, desk, staff)",
                "security": BEARER,
                "parameters": [CODE],
                "responses": {
                    "200": json_reply("the attendee; a cancelled ticket says so", "Attendee"),
                    "404": problem("not on the list (a sentence a kiosk can show)"),
                    "422": problem("not a ticket code"),
                    **auth,
                },
            },
            "patch": {
                "summary": "staff: correct name, company or fields (a local edit), or set status: cancelled cancels "
                "the ticket (a badge no printer has taken is withdrawn), valid undoes that (the ticket is valid "
                "again, and a badge the cancel withdrew is back to state none, to print again)",
                "security": BEARER,
                "parameters": [CODE],
                "requestBody": json_body(
                    {
                        "type": "object",
                        "properties": {
                            "name": TEXT,
                            "company": TEXT,
                            "fields": {"type": "object"},
                            "status": {"enum": ["valid", "cancelled"]},
                        },
                    }
                ),
                "responses": {
                    "200": json_reply("the attendee as now shown", "Attendee"),
                    "404": problem("not on the list"),
                    "422": problem("invalid"),
                    **auth,
                },
            },
        },
        "/v1/attendees/{code}/badge": {
            "post": {
                "summary": "print this attendee's badge (kiosk, desk, staff): made once; a second request answers "
                "with that badge",
                "security": BEARER,
                "parameters": [CODE],
                "responses": {
                    "201": json_reply("queued now", "Attendee"),
                    "200": json_reply("the badge exists: duplicate true, its state and where it printed", "Attendee"),
                    "404": problem("not on the list"),
                    "409": problem("the ticket is cancelled: it never prints"),
                    "422": problem("not a ticket code"),
                    **auth,
                },
            }
        },
        "/desk": {
            "get": {
                "summary": "the help desk's page (desk or staff token in the URL fragment)",
                "responses": {"200": {"description": "text/html"}},
            }
        },
        "/desk/{name}": {
            "get": {
                "summary": "the desk page's script and style; settings.json (with the page's token: desk, staff): "
                "its role, what it may do (may: print, walk_in, reprint, force, cancel, restore, correct), "
                "reprint_cap, day (expected, arrived, to_come; null without an attendee list) and pretix_products "
                "(the products a walk-in's pretix order may be of: id, name)",
                "parameters": [
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"enum": ["desk.js", "desk.css", "settings.json"]},
                    }
                ],
                "responses": {"200": {"description": "file"}, "404": problem("no such file"), **AUTH},
            }
        },
    }
