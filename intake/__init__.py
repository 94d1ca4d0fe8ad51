"""The intake service (``badge-agent intake``): desks and kiosks put badge jobs in over HTTP, without Redis credentials.

``app`` holds the job routes (``POST /v1/jobs`` and the reads, reprint and cancel beside it) and builds the
application; ``context`` what every route shares (the store, tokens, limits, request bodies); ``attendee_routes`` the
attendee-list routes; ``openapi``, ``attendee_openapi`` and ``openapi_parts`` the OpenAPI document; ``tokens``,
``ratelimit``, ``outstanding``, ``budget`` and ``guard`` who may ask and how much; ``hub`` the one reader of the
events stream that every SSE stream and long-poll listens to; ``kiosk/`` and ``desk/`` the pages it serves. It is
started by cli/commands/intake.py (docs/intake.md).
"""
