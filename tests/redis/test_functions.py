"""The functions library at a venue: an admin loads it, the venue's Redis keeps it across a crash, and an agent
whose user may not load it reports the command to run and prints once it is there."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import aiohttp
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from cli.redis_server import RedisServer, find_redis_server, free_port, kill_process
from protocol.keys import Keys
from protocol.library import default_library
from protocol.scripts import LOAD_COMMAND, library_loaded
from protocol.store import Store
from tests.support.agents import agent_config, enqueue_many, printed_count, running_agent
from tests.support.processes import ROOT, badge_agent, create_user
from tests.support.waiting import wait_until


async def _healthz(port: int) -> tuple[int, str]:
    try:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as resp:
            return resp.status, str((await resp.json()).get("reason"))
    except aiohttp.ClientError:
        return 0, ""


async def test_an_agent_without_the_library_names_the_command_and_prints_once_it_is_loaded(
    tmp_path: Path, venue: str
) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    admin = Redis.from_url(server.url)
    try:
        user = await create_user(admin, venue, tmp_path / "p1.pw", "p1")
        [job] = await enqueue_many(Store(admin, venue), 1)
        await admin.function_flush()  # a fresh Redis (or one with another version's library only)
        assert not await library_loaded(admin)
        http_port = free_port()
        as_user = {
            "redis__username": user,
            "redis__password_file": str(tmp_path / "p1.pw"),
            "http__listen": f"127.0.0.1:{http_port}",
        }
        async with running_agent(tmp_path, venue, server.url, "p1", **as_user) as agent:

            async def healthz_names_the_command() -> bool:
                status, reason = await _healthz(http_port)
                return status == 503 and LOAD_COMMAND in reason and default_library().name in reason

            await wait_until(healthz_names_the_command, timeout=20)
            assert agent.printed == 0 and await admin.hget(Keys(venue).job(job), "state") == b"queued"
            # Staff see it in `status` too (the agents cannot write their health without the library).
            shown = await asyncio.to_thread(badge_agent, "status", "--redis", server.url, "--venue", venue)
            said = " ".join(shown.stdout.split())  # as one line, however the terminal wrapped it
            assert shown.returncode == 0 and f"Redis lacks function library {default_library().name}" in said, said
            assert LOAD_COMMAND in said, said
            # The admin runs the named command (the real CLI, as an admin types it) ...
            loaded = await asyncio.to_thread(badge_agent, "functions", "load", "--redis", server.url)
            assert loaded.returncode == 0 and default_library().name in loaded.stdout, loaded.stderr
            # ... and the agent carries on by itself.
            await wait_until(lambda: printed_count(admin, venue), timeout=40)
            await wait_until(lambda: _healthy(http_port), timeout=20)
        # No user but the admin ran anything but its own functions: no script, no load.
        stats = await admin.info("commandstats")
        assert not {"cmdstat_eval", "cmdstat_evalsha", "cmdstat_script|load"} & set(stats)
    finally:
        await admin.aclose()
        server.stop()


async def _healthy(port: int) -> bool:
    return (await _healthz(port))[0] == 200


async def test_a_user_who_may_not_load_is_told_so(tmp_path: Path, redis_server: RedisServer, redis: Redis) -> None:
    pw = tmp_path / "desk.pw"
    user = await create_user(redis, "anywhere", pw)
    result = await asyncio.to_thread(
        badge_agent, "functions", "load", "--redis", redis_server.url, "--username", user, "--password-file", str(pw)
    )
    assert result.returncode == 77 and "may not FUNCTION LOAD" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    await redis.execute_command("ACL", "DELUSER", user)


async def test_the_venue_redis_config_keeps_the_library_across_a_crash(tmp_path: Path) -> None:
    port = free_port()
    args = [find_redis_server(), str(ROOT / "config" / "redis-venue.conf"), "--port", str(port), "--dir", str(tmp_path)]
    env = {**os.environ, "BADGE_REDIS_URL": f"redis://127.0.0.1:{port}/0"}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    redis = Redis(port=port)
    try:
        await wait_until(lambda: _answers(redis), timeout=10)
        assert not await library_loaded(redis)
        older = "badge_000000000000"  # the library of an earlier version, which agents not yet upgraded call
        await redis.function_load(f"#!lua name={older}\nredis.register_function('{older}_take', function() end)")
        loaded = await asyncio.to_thread(badge_agent, "functions", "load", env=env)
        assert loaded.returncode == 0, loaded.stderr
        assert f"loaded function library {default_library().name}" in loaded.stdout
        assert f"other versions still loaded: {older}" in loaded.stdout
        kill_process(proc)  # kill -9: only what the AOF holds survives
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await wait_until(lambda: _answers(redis), timeout=10)
        assert await library_loaded(redis)
    finally:
        await redis.aclose()
        kill_process(proc)


async def _answers(redis: Redis) -> bool:
    try:
        return bool(await redis.ping())
    except (RedisConnectionError, OSError):
        return False


async def test_an_admin_loads_with_a_config_whose_password_is_in_a_file(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    # Every config `setup` writes names its password in redis.password_file; the commands that connect with a
    # config read it as the agent does.
    admin = f"admin-{venue}"
    (tmp_path / "admin.pw").write_text("admin-secret\n", encoding="utf-8")
    await redis.execute_command("ACL", "SETUSER", admin, "on", ">admin-secret", "~*", "&*", "+@all")
    config = agent_config(
        tmp_path / "p1.yaml",
        venue,
        redis_server.url,
        "p1",
        0.01,
        overrides={"redis__username": admin, "redis__password_file": str(tmp_path / "admin.pw")},
    )
    try:
        commands = (["functions", "load", "-c"], ["status", "-c"], ["events", "-c"], ["check-config", "--connect"])
        for args in commands:
            result = await asyncio.to_thread(badge_agent, *args, str(config))
            assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr)
        loaded = await asyncio.to_thread(badge_agent, "functions", "load", "-c", str(config))
        assert f"function library {default_library().name}" in loaded.stdout, loaded.stdout
    finally:
        await redis.execute_command("ACL", "DELUSER", admin)
