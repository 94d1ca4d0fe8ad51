"""The pieces every part of the intake's OpenAPI document is made of: bodies, replies, problems, the token's errors.

Both the job routes' document (intake/openapi.py) and the attendee routes' (intake/attendee_openapi.py) use them.
"""

from __future__ import annotations

from typing import Any

BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def problem(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def json_reply(description: str, ref: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A required JSON request body of this schema."""
    return {"required": True, "content": {"application/json": {"schema": schema}}}


AUTH = {
    "401": problem("no token, or an unknown or revoked one"),
    "403": problem("this token's role may not do it"),
    "429": {
        **problem("over the token's rate, its open streams and long-polls, or (creating) its outstanding jobs"),
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    },
    "503": {
        **problem("the venue's Redis is unreachable"),
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    },
}
TEXT = {"type": "string"}
