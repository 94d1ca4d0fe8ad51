"""What the client says when the settings or pretix are wrong: one clear message naming what to check, the exit
status the CLI ends with (69 unavailable, 78 configuration), never the token."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web

from pretix_sync.client import PretixClient
from pretix_sync.errors import EXIT_UNAVAILABLE, PretixConfigError, PretixError, PretixUnavailable
from pretix_sync.token import read_token
from tests.pretix.server import free_loopback_port
from tests.support.pretix_server import Pretix


async def first_position(client: PretixClient, list_id: int) -> None:
    async for _ in client.checkin_list_positions(list_id):
        return


async def failure(client: PretixClient, list_id: int = 1) -> PretixError:
    async with client:
        with pytest.raises(PretixError) as caught:
            await first_position(client, list_id)
    return caught.value


async def test_nothing_listening_is_unavailable_and_names_the_url() -> None:
    port = free_loopback_port()  # bound and closed: nothing listens there
    client = PretixClient(f"http://127.0.0.1:{port}", "org", "ev", "secret-token", attempts=2, max_pause=0.01)
    error = await failure(client)
    assert isinstance(error, PretixUnavailable)
    assert error.exit_code == EXIT_UNAVAILABLE == 69
    assert f"http://127.0.0.1:{port} cannot be reached" in str(error)
    assert "--pretix" in str(error)


async def test_a_wrong_token_is_a_config_error_that_does_not_show_it(pretix: Pretix) -> None:
    wrong = "x" * 64
    error = await failure(PretixClient(pretix.url, pretix.organizer, pretix.event, wrong), pretix.entrance)
    assert isinstance(error, PretixConfigError)
    assert error.exit_code == 78
    assert "refused the API token" in str(error)
    assert "--token-file" in str(error)
    assert wrong not in str(error)
    assert wrong not in repr(PretixClient(pretix.url, pretix.organizer, pretix.event, wrong))


async def test_a_revoked_token_is_refused(pretix: Pretix) -> None:
    token = pretix.data("token")["token"]
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, token) as client:
        await first_position(client, pretix.entrance)  # works while active
        pretix.data("revoke", token)
        with pytest.raises(PretixConfigError, match="may be wrong or revoked"):
            await first_position(client, pretix.entrance)


async def test_an_unknown_event_organizer_or_list_names_what_to_check(pretix: Pretix) -> None:
    error = await failure(PretixClient(pretix.url, pretix.organizer, "no-such-event", pretix.token), pretix.entrance)
    assert isinstance(error, PretixConfigError)
    assert f"check --event {pretix.organizer}/no-such-event" in str(error)

    error = await failure(PretixClient(pretix.url, "no-such-org", pretix.event, pretix.token), pretix.entrance)
    assert isinstance(error, PretixConfigError)
    assert f"check --event no-such-org/{pretix.event}" in str(error)

    error = await failure(PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token), 999999)
    assert isinstance(error, PretixConfigError)
    assert "check-in list 999999" in str(error)

    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        with pytest.raises(PretixConfigError, match="check --checkin-list"):
            await client.redeem("some-secret", [999999], "n")


async def test_pretix_failing_on_its_side_is_unavailable(lone_pretix: Pretix) -> None:
    """A real pretix answering 500: its database went away under it."""
    lone_pretix.server.db.rename(lone_pretix.server.db.with_suffix(".gone"))
    lone_pretix.server.db.mkdir()  # sqlite cannot open a folder: every request that needs the database fails
    client = PretixClient(
        lone_pretix.url, lone_pretix.organizer, lone_pretix.event, lone_pretix.token, attempts=2, max_pause=0.01
    )
    error = await failure(client, lone_pretix.entrance)
    assert isinstance(error, PretixUnavailable)
    assert "failed on its side (HTTP 500)" in str(error)
    assert "try again later" in str(error)


async def test_pretix_stopped_then_back(lone_pretix: Pretix) -> None:
    async with PretixClient(
        lone_pretix.url, lone_pretix.organizer, lone_pretix.event, lone_pretix.token, attempts=1
    ) as client:
        await first_position(client, lone_pretix.entrance)
        lone_pretix.server.stop()
        with pytest.raises(PretixUnavailable, match="cannot be reached"):
            await first_position(client, lone_pretix.entrance)
        lone_pretix.server.start()
        await first_position(client, lone_pretix.entrance)  # the same client carries on


@pytest.fixture
async def not_pretix() -> AsyncIterator[NotPretix]:
    """Some other web server on loopback (a wrong --pretix): HTML at /garbage/, a 404 page elsewhere."""

    async def garbage(request: web.Request) -> web.Response:
        return web.Response(text="<html><body>Welcome to the venue Wi-Fi</body></html>", content_type="text/html")

    async def not_json_api(request: web.Request) -> web.Response:
        return web.Response(text='{"count": "many"}', content_type="application/json")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("https://pretix.example.org" + request.path)

    async def file(request: web.Request) -> web.Response:
        seen_headers.append(dict(request.headers))
        return web.Response(body=b"%PDF-1.4 elsewhere", content_type="application/pdf")

    async def slow_page(request: web.Request) -> web.StreamResponse:
        """A valid page of 2,000 results that arrives in pieces, as a large answer over a real network does."""
        body = json.dumps({"count": 2000, "next": None, "results": [{"id": i, "name": f"P{i}"} for i in range(2000)]})
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        for start in range(0, len(body), 4096):
            await response.write(body[start : start + 4096].encode())
            await asyncio.sleep(0.001)
        await response.write_eof()
        return response

    seen_headers: list[dict[str, str]] = []
    app = web.Application()
    app.router.add_get("/garbage/api/v1/{tail:.*}", garbage)
    app.router.add_get("/shape/api/v1/{tail:.*}", not_json_api)
    app.router.add_get("/moved/api/v1/{tail:.*}", moved)
    app.router.add_get("/file.pdf", file)
    app.router.add_get("/slow/api/v1/organizers/org/events/ev/items/", slow_page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.SockSite(runner, socket.create_server(("127.0.0.1", 0)))
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield NotPretix(f"http://127.0.0.1:{port}", seen_headers)
    await runner.cleanup()


@dataclass
class NotPretix:
    url: str
    headers: list[dict[str, str]]  # of the requests for /file.pdf: the token must never be in them


async def test_a_url_that_is_not_pretix(not_pretix: NotPretix) -> None:
    error = await failure(PretixClient(not_pretix.url + "/garbage", "org", "ev", "t"))
    assert isinstance(error, PretixConfigError)
    assert "not JSON" in str(error)
    assert "check --pretix" in str(error)

    error = await failure(PretixClient(not_pretix.url + "/shape", "org", "ev", "t"))
    assert isinstance(error, PretixConfigError)
    assert "shape" in str(error)

    error = await failure(PretixClient(not_pretix.url + "/elsewhere", "org", "ev", "t"))
    assert isinstance(error, PretixConfigError)
    assert "no pretix API at" in str(error)

    error = await failure(PretixClient(not_pretix.url + "/moved", "org", "ev", "t"))
    assert isinstance(error, PretixConfigError)
    assert "(301 to https://pretix.example.org/moved/api/v1/" in str(error)

    with pytest.raises(PretixConfigError, match="not an http"):
        PretixClient("pretix.example.org", "org", "ev", "t")


async def test_an_answer_that_arrives_in_pieces_is_read_whole(not_pretix: NotPretix) -> None:
    async with PretixClient(not_pretix.url + "/slow", "org", "ev", "t") as client:
        items = await client.items()
    assert [i.id for i in items] == list(range(2000))


async def test_the_token_goes_to_pretix_only(pretix: Pretix, not_pretix: NotPretix) -> None:
    """A layout's background may be linked anywhere: fetched without the token when it is not on pretix."""
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        assert await client.download(not_pretix.url + "/file.pdf") == b"%PDF-1.4 elsewhere"
    [headers] = not_pretix.headers
    assert "Authorization" not in headers
    assert pretix.token not in repr(headers)


def test_the_token_file_must_not_be_readable_by_everyone(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("  abc123\n", encoding="utf-8")
    path.chmod(0o644)
    with pytest.raises(PretixConfigError, match="every user of this machine can read it") as caught:
        read_token(path)
    assert "abc123" not in str(caught.value)
    path.chmod(0o600)
    assert read_token(path) == "abc123"
    path.chmod(0o640)  # the service's own group, as the venue's other secrets
    assert read_token(path) == "abc123"

    path.write_text("\n", encoding="utf-8")
    with pytest.raises(PretixConfigError, match="empty"):
        read_token(path)
    path.write_text("two words\n", encoding="utf-8")
    with pytest.raises(PretixConfigError, match="not an API token"):
        read_token(path)
    with pytest.raises(PretixConfigError, match="no such file"):
        read_token(tmp_path / "missing")
    if os.geteuid() != 0:  # root reads any file
        path.chmod(0o000)
        with pytest.raises(PretixConfigError, match="cannot be read"):
            read_token(path)
