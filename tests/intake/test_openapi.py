"""/openapi.json matches what is served: every route of the app is documented, and nothing else is."""

from __future__ import annotations

import re

from tests.support.intake import Desk

METHODS = ("get", "post", "delete", "put", "patch")


async def test_openapi_lists_exactly_the_served_routes(desk: Desk) -> None:
    resp = await desk.client.get("/openapi.json")
    assert resp.status == 200
    doc = await resp.json()
    assert doc["openapi"].startswith("3.")
    documented = {(m.upper(), path) for path, ops in doc["paths"].items() for m in ops if m in METHODS}
    app = desk.client.server.app
    assert app is not None
    served = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD"
    }
    assert documented == served


async def test_every_documented_status_is_an_answer_the_route_gives(desk: Desk) -> None:
    """Each operation's responses name problem+json for errors; every path parameter is declared."""
    doc = await (await desk.client.get("/openapi.json")).json()
    for path, ops in doc["paths"].items():
        params = set(re.findall(r"{(\w+)}", path))
        for method, op in ops.items():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == params, (method, path)
            for status, answer in op["responses"].items():
                if int(status) >= 400:
                    assert "application/problem+json" in answer["content"], (method, path, status)
            if op.get("security"):
                assert {"401", "403", "429"} <= set(op["responses"]), (method, path)
