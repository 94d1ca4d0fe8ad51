"""The intake's OpenAPI 3.1 document, as served at /openapi.json (tests/intake/test_openapi.py walks every route)."""

from __future__ import annotations

from typing import Any

from intake import attendee_openapi as attendee_api  # the attendee routes document themselves
from intake import preprint_openapi as preprint_api
from intake.openapi_parts import AUTH, BEARER, TEXT, json_body, json_reply, problem

JOB_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"},
}


def spec() -> dict[str, Any]:
    doc = _jobs_spec()
    doc["components"]["schemas"].update(attendee_api.schemas())
    doc["paths"].update(attendee_api.paths())
    doc["components"]["schemas"].update(preprint_api.schemas())
    doc["paths"].update(preprint_api.paths())
    return doc


def _jobs_spec() -> dict[str, Any]:
    job_in = {
        "type": "object",
        "required": ["attendee_id", "name"],
        "properties": {
            "job_id": {
                **TEXT,
                "description": "stable id; defaults to attendee_id; a known one is never changed. A kiosk's job is "
                "kiosk:<token>:<this id> (ids starting kiosk: are refused from desks and staff)",
            },
            "attendee_id": {**TEXT, "description": "encoded in the badge's QR code"},
            "name": TEXT,
            "company": TEXT,
            "role": TEXT,
            "printer": {**TEXT, "description": "pin the job to one printer"},
            "zone": {
                **TEXT,
                "description": "the zone the badge belongs to (with zone_printers; docs/intake.md, Zones)",
            },
            "zone_printers": {
                "type": "array",
                "items": TEXT,
                "description": "the zone's printers: a pinned job goes elsewhere only when none of them can print",
            },
        },
    }
    job = {
        "type": "object",
        "properties": {
            "job_id": TEXT,
            "state": {"enum": ["queued", "printing", "printed", "dead", "cancelled"]},
            "printer": TEXT,
            "location": {**TEXT, "description": "where the badge is printing or came out (the printer's location)"},
            "attempts": {"type": "integer"},
            "reprints": {"type": "integer", "description": "intended reprints (never counted as duplicates)"},
            "maybe_duplicate": {"type": "boolean"},
            "maybe_printed_where": {**TEXT, "description": "where an earlier copy may lie"},
            "last_printer": {**TEXT, "description": "the printer of the round before the last reprint"},
            "duplicate": {"type": "boolean", "description": "POST only: the job_id was known; nothing changed"},
            "no_printer": {
                "type": "boolean",
                "description": "kiosk tokens, a queued job: no printer of the venue can print it now (send the "
                "attendee to the help desk)",
            },
            "wait_minutes": {
                "type": "integer",
                "description": "kiosk tokens, a queued job: about how many minutes it waits, present when the "
                "kiosk's zone's expected wait passes kiosk.say_wait_after (as an attendee badge's)",
            },
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "badge-agent intake", "version": "1", "description": "docs/intake.md"},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "JobIn": job_in,
                "Job": job,
                "Jobs": {
                    "type": "object",
                    "properties": {"jobs": {"type": "array", "items": {"$ref": "#/components/schemas/Job"}}},
                },
                "Problem": {
                    "type": "object",
                    "properties": {
                        "type": TEXT,
                        "title": TEXT,
                        "status": {"type": "integer"},
                        "detail": TEXT,
                        "errors": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"field": TEXT, "message": TEXT}},
                        },
                        "state": TEXT,
                    },
                },
                "Printers": {
                    "type": "object",
                    "properties": {
                        "printers": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": TEXT,
                                    "location": TEXT,
                                    "state": TEXT,
                                    "depth": {"type": "integer"},
                                    "inflight": TEXT,
                                },
                            },
                        }
                    },
                },
            },
        },
        "paths": {
            "/v1/jobs": {
                "post": {
                    "summary": 'create one job, or a batch {"jobs": [...]}; roles kiosk, desk, staff',
                    "security": BEARER,
                    "requestBody": json_body(
                        {
                            "oneOf": [
                                {"$ref": "#/components/schemas/JobIn"},
                                {
                                    "type": "object",
                                    "required": ["jobs"],
                                    "properties": {
                                        "jobs": {
                                            "type": "array",
                                            "items": {"$ref": "#/components/schemas/JobIn"},
                                        }
                                    },
                                },
                            ]
                        }
                    ),
                    "responses": {
                        "201": json_reply("created (a batch: at least one created)", "Job"),
                        "200": json_reply("known job_id: duplicate true, nothing changed", "Job"),
                        "408": problem("the body was too slow to arrive"),
                        "409": problem("a kiosk's job id that is someone else's: taken (nothing more is said)"),
                        "413": problem("body or batch too large"),
                        "422": problem("invalid: errors name each field"),
                        **AUTH,
                    },
                }
            },
            "/v1/jobs/{id}": {
                "get": {
                    "summary": "one job; a kiosk token reads only the jobs it created",
                    "security": BEARER,
                    "parameters": [
                        JOB_ID,
                        {
                            "name": "wait",
                            "in": "query",
                            "schema": {"type": "number", "minimum": 0, "maximum": 30},
                            "description": "hold the answer up to this many seconds until the state changes",
                        },
                        {
                            "name": "state",
                            "in": "query",
                            "schema": TEXT,
                            "description": "with wait: the state to wait away from (default: the current one)",
                        },
                    ],
                    "responses": {
                        "200": json_reply("the job", "Job"),
                        "404": problem("no such job"),
                        "422": problem("bad wait"),
                        **AUTH,
                    },
                },
                "delete": {
                    "summary": "cancel a queued job (staff)",
                    "security": BEARER,
                    "parameters": [JOB_ID],
                    "responses": {
                        "200": json_reply("cancelled", "Job"),
                        "404": problem("no such job"),
                        "409": problem("not queued any more: state says what it is"),
                        **AUTH,
                    },
                },
            },
            "/v1/jobs/{id}/events": {
                "get": {
                    "summary": "server-sent events of the job's transitions (past ones first)",
                    "security": BEARER,
                    "parameters": [JOB_ID],
                    "responses": {
                        "200": {"description": "text/event-stream", "content": {"text/event-stream": {"schema": TEXT}}},
                        "404": problem("no such job"),
                        **AUTH,
                    },
                }
            },
            "/v1/jobs/{id}/reprint": {
                "post": {
                    "summary": "print a printed (or dead) job again on purpose, with a reason (desk, staff): a new "
                    "round of the same job, capped by limits.reprint_cap (staff only may force past it); it waits at "
                    "the token's own printer or zone's printer that can print, or the printer asked for, else at the "
                    "front of the pool",
                    "security": BEARER,
                    "parameters": [JOB_ID],
                    "requestBody": json_body(
                        {
                            "type": "object",
                            "required": ["reason"],
                            "properties": {
                                "reason": TEXT,
                                "force": {"type": "boolean", "description": "past the cap: staff only"},
                                "printer": {**TEXT, "description": "the printer to print it at (one of the token's)"},
                            },
                        }
                    ),
                    "responses": {
                        "200": json_reply("queued at its printer's front, or at the front of the pool", "Job"),
                        "404": problem("no such job"),
                        "409": problem("not printed or dead (a reprint already waiting), or over the cap"),
                        "413": problem("body too large"),
                        "422": problem("no reason"),
                        **AUTH,
                    },
                }
            },
            "/v1/tokens/{name}/jobs": {
                "delete": {
                    "summary": "cancel every queued job one token created (staff)",
                    "security": BEARER,
                    "parameters": [
                        {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {
                            "description": "what was cancelled, and the jobs left (printing or final) with their state",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "token": TEXT,
                                            "cancelled": {"type": "array", "items": TEXT},
                                            "left": {
                                                "type": "array",
                                                "items": {
                                                    "type": "object",
                                                    "properties": {"job_id": TEXT, "state": TEXT},
                                                },
                                            },
                                        },
                                    }
                                }
                            },
                        },
                        "422": problem("not a token name"),
                        **AUTH,
                    },
                }
            },
            "/v1/printers": {
                "get": {
                    "summary": "each printer of the venue",
                    "security": BEARER,
                    "responses": {"200": json_reply("printers", "Printers"), **AUTH},
                }
            },
            "/": {
                "get": {
                    "summary": "a page linking /kiosk, /desk and /openapi.json (JSON for Accept: application/json)",
                    "responses": {"200": {"description": "text/html, or application/json"}},
                }
            },
            "/openapi.json": {
                "get": {"summary": "this document", "responses": {"200": {"description": "OpenAPI 3.1"}}}
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus text: venue counts and requests",
                    "responses": {"200": {"description": "text/plain"}},
                }
            },
            "/kiosk": {
                "get": {
                    "summary": "the self-service kiosk page (token in the URL fragment)",
                    "responses": {"200": {"description": "text/html"}},
                }
            },
            "/kiosk/{name}": {
                "get": {
                    "summary": "the kiosk page's script, style, strings and settings (list loaded, names typed)",
                    "parameters": [
                        {
                            "name": "name",
                            "in": "path",
                            "required": True,
                            "schema": {"enum": ["kiosk.js", "kiosk.css", "strings.js", "settings.json"]},
                        }
                    ],
                    "responses": {"200": {"description": "file"}, "404": problem("no such file")},
                }
            },
        },
    }
