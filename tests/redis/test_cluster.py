"""Cluster: two venues side by side on 3 masters; each venue's agents print theirs and cannot touch the other's."""

from __future__ import annotations

import asyncio
import shlex
import signal
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.crc import key_slot
from redis.exceptions import NoPermissionError, ResponseError

from protocol.connection import make_redis
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.library import default_library
from protocol.redis_config import ClusterConfig, RedisConfig
from protocol.scripts import library_loaded, load_library
from protocol.store import Store
from tests.support.agents import enqueue_many, printed_count, running_process, write_agent_config
from tests.support.prints import print_log_copies
from tests.support.processes import badge_agent
from tests.support.topology import ClusterSetup
from tests.support.waiting import wait_until

#: A three-node Redis Cluster: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.cluster


async def _user_on_every_node(setup: ClusterSetup, venue: str, printer: str, password_file: Path) -> str:
    """ACLs are per node on a Cluster: the generated line runs on each of them."""
    result = badge_agent("acl", "--venue", venue, "--printer", printer, "--password-file", str(password_file))
    assert result.returncode == 0, result.stderr
    words = shlex.split(result.stdout)
    for node in setup.nodes:
        client = Redis(port=node.port)
        try:
            await client.execute_command(*words)
        finally:
            await client.aclose()
    return words[2]


@pytest.mark.timeout(90)
async def test_two_venues_share_a_cluster_and_stay_apart(tmp_path: Path) -> None:
    setup = ClusterSetup(tmp_path / "cluster")
    setup.start()
    admin = make_redis(RedisConfig.parse({"cluster": {"nodes": setup.addresses}}), 1.0, retries=5)
    venues = ["north-hall", "south-hall"]
    agents: dict[str, tuple[str, Path]] = {}
    try:
        await wait_until(lambda: _cluster_ok(setup), timeout=20)
        # The admin loads the functions library on every primary (the agents' users may not).
        assert not await library_loaded(admin)
        assert await load_library(admin) is True
        for node in setup.nodes:
            client = Redis(port=node.port)
            try:
                listed = await client.execute_command("FUNCTION", "LIST", "LIBRARYNAME", default_library().name)
                assert len(listed) == 1, node.port  # type: ignore[arg-type]
            finally:
                await client.aclose()
        # The two venues' keys live in different slots on different nodes: a real multi-node test.
        slots = {v: key_slot(Keys(v).pool.encode()) for v in venues}
        assert slots["north-hall"] != slots["south-hall"]
        ids: dict[str, list[str]] = {}
        for venue in venues:
            ids[venue] = await enqueue_many(Store(admin, venue), 30, prefix=venue[:1])
            for printer in ("p1", "p2"):
                pw = tmp_path / f"{venue}-{printer}.pw"
                agents[f"{venue}-{printer}"] = (await _user_on_every_node(setup, venue, printer, pw), pw)
        configs = [
            write_agent_config(
                tmp_path / f"{venue}-{printer}.yaml",
                venue,
                "redis://unused",
                printer,
                redis={
                    "cluster": {"nodes": setup.addresses[:1]},
                    "username": agents[f"{venue}-{printer}"][0],
                    "password_file": str(agents[f"{venue}-{printer}"][1]),
                },
                printer__driver__print_log=str(tmp_path / f"{venue}-{printer}.prints.jsonl"),
                printer__driver__control_file=str(tmp_path / f"{venue}-{printer}.control.json"),
                journal=str(tmp_path / f"{venue}-{printer}.journal"),
            )
            for venue in venues
            for printer in ("p1", "p2")
        ]
        procs = [running_process(c) for c in configs]
        started = [p.__enter__() for p in procs]
        try:
            for venue in venues:
                await wait_until(lambda v=venue: _at_least(printed_count(admin, v), 30), timeout=40)  # type: ignore[misc]
            for proc in started:
                proc.send_signal(signal.SIGTERM)
            for proc in started:
                assert await asyncio.to_thread(proc.wait, 20) == 0
        finally:
            for p in procs:
                p.__exit__(None, None, None)
        for venue in venues:
            logs = [tmp_path / f"{venue}-{p}.prints.jsonl" for p in ("p1", "p2")]
            assert print_log_copies(*logs) == {i: 1 for i in ids[venue]}
        for config in configs:
            log = config.with_suffix(".log").read_text()
            assert "CROSSSLOT" not in log and "NOPERM" not in log and "Traceback" not in log, log[-2000:]

        # A north-hall agent's own client, running the real scripts against south-hall's keys: refused.
        user, pw = agents["north-hall-p1"]
        north = make_redis(
            RedisConfig(cluster=ClusterConfig(nodes=setup.addresses), username=user, password_file=pw),
            1.0,
        )
        try:
            foreign = Store(north, "south-hall")
            south_job = parse_job({"attendee_id": "s-late", "name": "Late"})
            await Store(admin, "south-hall").enqueue(south_job.job_id, south_job.payload(), None)
            for attempt in (
                foreign.take("p1"),
                foreign.enqueue("x", south_job.payload(), None),
                foreign.beat("p1", {}, 1000, True),
                foreign.confirm("p1", "x", "s-late", 1),
                foreign.inflight("p1"),
            ):
                with pytest.raises(NoPermissionError):
                    await attempt
            assert await admin.lrange(Keys("south-hall").pool, 0, -1) == [b"s-late"]
            # Its own venue still works on the same connection.
            assert await Store(north, "north-hall").inflight("p1") == []
        finally:
            await north.aclose()

        # A script touching two venues' keys is refused by Redis (two slots), never half-run.
        node = Redis(port=setup.nodes[0].port)
        try:
            keys = [Keys("north-hall").queue("p1"), Keys("south-hall").pool, Keys("north-hall").inflight("p1"), "x"]
            with pytest.raises(ResponseError, match=r"CROSSSLOT|same slot"):
                await node.execute_command("FCALL", default_library().function("take"), len(keys), *keys)
        finally:
            await node.aclose()
    finally:
        await admin.aclose()
        setup.stop()


async def _cluster_ok(setup: ClusterSetup) -> bool:
    for node in setup.nodes:
        client = Redis(port=node.port)
        try:
            info = await client.execute_command("CLUSTER", "INFO")  # type: ignore[no-untyped-call]
        finally:
            await client.aclose()
        if b"cluster_state:ok" not in info:
            return False
    return True


async def _at_least(value: object, n: int) -> bool:
    return await value >= n  # type: ignore[misc,operator]
