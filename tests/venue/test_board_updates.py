"""``/updates``: the page's stream sends the snapshot once, then merge patches that rebuild exactly what the board
holds (board/wire.py), without the routine events a rush makes by the dozen."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from redis.asyncio import Redis

import board.server
from board.server import Board, make_board_app
from board.wire import merge_patch
from protocol.store import Store
from tests.eventday.test_counts import print_one
from tests.support.agents import add


def apply(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """RFC 7386, as board.js applies it."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            apply(target[key], value)
        else:
            target[key] = value
    return target


def test_a_merge_patch_turns_the_old_form_into_the_new() -> None:
    old = {"a": 1, "gone": {"x": 1}, "p": {"p-1": {"printed": 1, "depth": 2}, "p-2": {"printed": 0}}}
    new = {"a": 1, "p": {"p-1": {"printed": 2, "depth": 2}, "p-3": {"printed": 0}}, "day": {"z": [1, 2]}}
    patch = merge_patch(old, new)
    assert patch == {
        "gone": None,
        "p": {"p-1": {"printed": 2}, "p-2": None, "p-3": {"printed": 0}},
        "day": {"z": [1, 2]},
    }
    assert apply(json.loads(json.dumps(old)), patch) == new


async def test_updates_send_the_snapshot_once_then_patches_that_rebuild_it(
    redis: Redis, venue: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(board.server, "PUSH_EVERY", 0.0)
    store = Store(redis, venue)
    await store.beat("desk-1", {"state": "ready", "location": "Desk 1"}, 60_000, first=True)
    the_board = Board(redis, venue, interval=0.05)
    async with TestClient(TestServer(make_board_app(the_board))) as client:
        resp = await client.get("/updates")
        assert resp.headers["Content-Type"] == "text/event-stream"

        async def message() -> dict[str, Any]:
            while True:
                chunk = await resp.content.readuntil(b"\n\n")
                if chunk.startswith(b"data: "):
                    return dict(json.loads(chunk[len(b"data: ") :]))

        first = await message()
        shown = first["full"]
        assert isinstance(first["t"], int)
        await print_one(store, "desk-1", await add(store, "renee", "desk-1"))
        while not shown.get("day", {}).get("printers", {}).get("desk-1", {}).get("per_hour"):
            shown = apply(shown, (await message())["patch"])
        assert shown["day"]["printers"]["desk-1"]["per_hour"] == 1
        assert sum(sum(minutes.values()) for minutes in shown["day"]["arrivals"].values()) == 1
        # The badge's enqueued and printed events are counted in the chart, not listed.
        assert not any(e["event"] in ("enqueued", "printed") for e in shown["events"].values())
        resp.close()
