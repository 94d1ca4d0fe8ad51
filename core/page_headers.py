"""The headers every page the project serves carries (the kiosk page, the board): what a browser may load and run.

The pages load only their own scripts and styles and talk only to their own origin, so the policy allows exactly that:
an injected ``<script>`` or inline handler does not run, no other site may frame the page (a kiosk page framed by a
look-alike would hand over its token's taps), and a browser never guesses a response's type.
"""

from __future__ import annotations

from aiohttp import web

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


async def _add(request: web.BaseRequest, response: web.StreamResponse) -> None:
    for name, value in PAGE_HEADERS.items():
        response.headers.setdefault(name, value)


def add_page_headers(app: web.Application) -> None:
    """Every response of ``app`` carries ``PAGE_HEADERS`` (JSON and event streams too: they cost nothing there)."""
    app.on_response_prepare.append(_add)
