"""The pre-print routes' part of the intake's OpenAPI document (merged into intake/openapi.py's)."""

from __future__ import annotations

from typing import Any

from intake.openapi_parts import AUTH, BEARER, TEXT, json_reply, problem

CODE = {"name": "code", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[!-~]{1,128}$"}}


def schemas() -> dict[str, Any]:
    preprint = {
        "type": "object",
        "description": "an attendee's pre-printed badge (in an Attendee as preprint; a kiosk sees box, box_label, "
        "range, pickup and state only)",
        "properties": {
            "run": TEXT,
            "box": {"type": "integer"},
            "box_label": {**TEXT, "description": "Box 3: Kowalski - Müller"},
            "range": {**TEXT, "description": "Kowalski - Müller"},
            "pickup": {**TEXT, "description": "where the attendee collects it"},
            "state": {"enum": ["planned", "preprinted", "handed_over", "void"]},
            "layout": TEXT,
            "layout_version": {"type": "integer"},
            "message": {**TEXT, "description": "what a kiosk says (not for a void badge: the door prints theirs)"},
        },
    }
    void = {
        "type": "object",
        "properties": {
            "code": TEXT,
            "box": {"type": "integer"},
            "name": {**TEXT, "description": "the name the badge in the box says"},
            "reason": TEXT,
            "ms": {"type": "integer"},
            "printed": {"type": "boolean", "description": "it is in its box: pull it"},
        },
    }
    return {
        "Preprint": preprint,
        "HandedOver": {
            "type": "object",
            "properties": {"handed_over": {"type": "boolean"}, "already": {"type": "boolean"}, "preprint": preprint},
        },
        "PreprintVoids": {
            "type": "object",
            "properties": {
                "runs": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"run": TEXT, "voids": {"type": "array", "items": void}}},
                }
            },
        },
    }


def paths() -> dict[str, Any]:
    return {
        "/v1/attendees/{code}/handed-over": {
            "post": {
                "summary": "the desk hands over an attendee's pre-printed badge (desk, staff): their arrival, checked "
                "in (pretix included) in the same step; a second time changes nothing (already true)",
                "security": BEARER,
                "parameters": [CODE],
                "responses": {
                    "200": json_reply("handed over now, or already", "HandedOver"),
                    "404": problem("not on the list"),
                    "409": problem("no pre-printed badge, or it is void, or not printed yet: print theirs"),
                    **AUTH,
                },
            }
        },
        "/v1/preprint/voids": {
            "get": {
                "summary": "every run's void pre-printed badges (desk, staff, viewer): those printed are to be "
                "pulled from their boxes",
                "security": BEARER,
                "responses": {"200": json_reply("by run", "PreprintVoids"), **AUTH},
            }
        },
    }
