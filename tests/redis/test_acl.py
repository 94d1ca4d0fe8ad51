"""ACL: every agent runs its whole flow under its generated user; the kiosk user enqueues and reads, nothing more."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from importlib import resources
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError, ResponseError

from attendees.importer import Importer
from attendees.keys import AttendeeKeys
from attendees.store import AttendeeStore
from cli.commands.acl import ROLES, Role, role_rules
from cli.redis_server import RedisServer
from layouts.specs import ADMIN_ONLY
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.library import build, default_library
from protocol.replies import RequeueKind
from protocol.scripts import load_library
from protocol.store import Store
from tests.support.agents import eq, printed_count, running_agent, running_process, write_agent_config
from tests.support.attendee_files import PEOPLE, rows
from tests.support.prints import print_log_copies
from tests.support.processes import badge_agent, create_user
from tests.support.venue import assert_each_unfinished_job_in_one_list
from tests.support.waiting import wait_until


def _user_url(server: RedisServer, user: str, password_file: Path) -> str:
    return f"redis://{user}:{password_file.read_text().strip()}@127.0.0.1:{server.port}/0"


@pytest.mark.timeout(90)
async def test_agents_run_their_whole_flow_under_generated_users(tmp_path: Path, venue: str) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    admin = Redis.from_url(server.url)
    try:
        await admin.execute_command("ACL", "SETUSER", "default", "off")  # nobody gets in without a user
        admin_pw = "admin-secret"
        await admin.execute_command("ACL", "SETUSER", "admin", "on", f">{admin_pw}", "~*", "&*", "+@all")
        await admin.aclose()
        admin = Redis.from_url(f"redis://admin:{admin_pw}@127.0.0.1:{server.port}/0")
        users = {}
        for printer in ("p1", "p2"):
            users[printer] = await create_user(admin, venue, tmp_path / f"{printer}.pw", printer)
        kiosk = await create_user(admin, venue, tmp_path / "kiosk.pw")
        kiosk_env = {**os.environ, "BADGE_REDIS_URL": _user_url(server, kiosk, tmp_path / "kiosk.pw")}
        kiosk_env["BADGE_VENUE"] = venue

        # The desk enqueues through the real CLI under the kiosk user: 30 to the pool, 10 pinned to p2.
        rows = [{"attendee_id": f"a{i}", "name": f"Attendee {i}"} for i in range(30)]
        (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        result = badge_agent("enqueue", "-f", str(tmp_path / "jobs.jsonl"), "-q", env=kiosk_env)
        assert result.returncode == 0 and "enqueued 30" in result.stdout, result.stdout + result.stderr
        pinned = [{"attendee_id": f"b{i}", "name": f"Pinned {i}"} for i in range(10)]
        (tmp_path / "pinned.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pinned))
        result = badge_agent("enqueue", "-f", str(tmp_path / "pinned.jsonl"), "--printer", "p2", "-q", env=kiosk_env)
        assert result.returncode == 0 and "enqueued 10" in result.stdout, result.stdout + result.stderr
        ids = [f"a{i}" for i in range(30)] + [f"b{i}" for i in range(10)]

        configs = {
            p: write_agent_config(
                tmp_path / f"{p}.yaml",
                venue,
                f"redis://127.0.0.1:{server.port}/0",
                p,
                print_time=0.05 if p == "p1" else 0.4,
                redis__username=users[p],
                redis__password_file=str(tmp_path / f"{p}.pw"),
                timing__affinity_wait=0.5,
            )
            for p in ("p1", "p2")
        }
        with running_process(configs["p1"]) as p1, running_process(configs["p2"]) as p2:
            await wait_until(lambda: _at_least(printed_count(admin, venue), 3), timeout=20)
            # Killed while it holds a badge (0.4 s a print): whatever the machine's load, there is a job to reclaim.
            await wait_until(lambda: admin.llen(Keys(venue).inflight("p2")), timeout=20)
            # p2 dies holding work: p1 sweeps, reclaims its held and pinned jobs (and steals) under its own user.
            p2.send_signal(signal.SIGKILL)
            p2.wait()
            await wait_until(lambda: _at_least(printed_count(admin, venue), 40), timeout=40)
            # The kiosk user reads status.
            status = badge_agent("status", "--json", env=kiosk_env)
            assert status.returncode == 0, status.stderr
            p1.send_signal(signal.SIGTERM)  # the clean leave (MULTI/EXEC) too
            assert await asyncio.to_thread(p1.wait, 45) == 0
        copies = print_log_copies(tmp_path / "p1.prints.jsonl", tmp_path / "p2.prints.jsonl")
        assert set(copies) == set(ids)
        twice = [j for j, n in copies.items() if n > 1]
        for job_id in twice:  # p2 was killed mid-print: a second copy is allowed only when flagged
            assert await admin.hget(Keys(venue).job(job_id), "maybe_duplicate") == b"1"
        await assert_each_unfinished_job_in_one_list(admin, venue, ids)
        assert int(await admin.hget(Keys(venue).stats, "reclaimed") or 0) >= 1
        for p in ("p1", "p2"):
            log = configs[p].with_suffix(".log").read_text()
            assert "NOPERM" not in log and "Traceback" not in log, log[-3000:]
        # Redis logs every refused command and key: none for the agents' and the desk's whole flow.
        assert await admin.execute_command("ACL", "LOG") == []
    finally:
        await admin.aclose()
        server.stop()


async def _at_least(value: object, n: int) -> bool:
    return await value >= n  # type: ignore[misc,operator]


async def test_kiosk_user_cannot_claim_or_confirm_and_agents_stay_in_their_venue(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    other = venue + "-other"
    kiosk = await create_user(redis, venue, tmp_path / "kiosk.pw")
    agent = await create_user(redis, venue, tmp_path / "p1.pw", "p1")
    as_kiosk = Redis(port=redis_server.port, username=kiosk, password=(tmp_path / "kiosk.pw").read_text().strip())
    as_agent = Redis(port=redis_server.port, username=agent, password=(tmp_path / "p1.pw").read_text().strip())
    k = Keys(venue)
    try:
        kiosk_store = Store(as_kiosk, venue)
        job = parse_job({"attendee_id": "k1", "name": "Kiosk Guest"})
        assert await kiosk_store.enqueue(job.job_id, job.payload(), None) == (True, "queued")
        # Claiming: the take script, and the blocking pop, are refused before anything moves.
        with pytest.raises(NoPermissionError):
            await kiosk_store.take("p1")
        with pytest.raises(NoPermissionError):
            await kiosk_store.wait_pool("p1", 0.1)
        assert await redis.lrange(k.pool, 0, -1) == [b"k1"]
        # Confirming: refused too, and the completion gate is not written.
        with pytest.raises(NoPermissionError):
            await kiosk_store.confirm("p1", "desk", "k1", 1)
        assert await redis.exists(k.done("k1")) == 0
        assert await redis.hget(k.job("k1"), "state") == b"queued"
        with pytest.raises(NoPermissionError):
            await as_kiosk.set(k.done("k1"), "p1")
        # Neither user may switch database (key patterns do not name one).
        for user in (as_kiosk, as_agent):
            with pytest.raises(NoPermissionError):
                await user.execute_command("SELECT", 1)

        # The agent does its job in its venue ...
        agent_store = Store(as_agent, venue)
        assert await agent_store.take("p1") == ("pool", "k1")
        begun = await agent_store.begin("p1", "desk", "k1")
        assert begun.kind == "print"
        assert (await agent_store.confirm("p1", "desk", "k1", begun.epoch))[0] == "printed"
        # A desk pins a job: the kiosk user writes the pinned index with it; the agent takes it out again.
        pinned = parse_job({"attendee_id": "k2", "name": "Pinned Guest", "printer": "p1"})
        assert await kiosk_store.enqueue(pinned.job_id, pinned.payload(), pinned.printer) == (True, "queued")
        assert await redis.zrange(k.pinned, 0, -1) == [b"p1|k2"]
        assert await agent_store.take("p1") == ("q", "k2")
        assert await redis.exists(k.pinned) == 0
        # ... and nothing in another venue: its real scripts and plain reads are refused there.
        await Store(redis, other).enqueue("x1", parse_job({"attendee_id": "x1", "name": "X"}).payload(), None)
        foreign = Store(as_agent, other)
        for attempt in (
            foreign.take("p1"),
            foreign.enqueue("x2", "{}", None),
            foreign.beat("p1", {}, 1000, True),
            foreign.inflight("p1"),
            as_agent.hgetall(Keys(other).job("x1")),
        ):
            with pytest.raises(NoPermissionError):
                await attempt
        assert await redis.lrange(Keys(other).pool, 0, -1) == [b"x1"]
        # Nor anything outside the protocol.
        for cmd in (("FLUSHALL",), ("CONFIG", "GET", "*"), ("KEYS", "*"), ("ACL", "LIST")):
            with pytest.raises(ResponseError):
                await as_agent.execute_command(*cmd)
    finally:
        await as_kiosk.aclose()
        await as_agent.aclose()
        await redis.execute_command("ACL", "DELUSER", kiosk, agent)


async def test_an_agent_prints_a_listed_badge_and_cannot_read_the_attendee_list(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    """A stolen Pi holds its agent's password: with it, no ticket code, name or e-mail of the list can be read."""
    user = await create_user(redis, venue, tmp_path / "p1.pw", "p1")
    password = (tmp_path / "p1.pw").read_text().strip()
    as_agent = Redis(port=redis_server.port, username=user, password=password)
    a = AttendeeKeys(venue)
    try:
        attendees = AttendeeStore(redis, venue)
        await Importer(attendees).load(iter(rows(PEOPLE)))
        badged, _ = await attendees.badge("secret-renee", "desk-1")
        assert badged.kind == "queued"
        async with running_agent(
            tmp_path, venue, redis_server.url, "p1", redis__username=user, redis__password_file=str(tmp_path / "p1.pw")
        ):
            await wait_until(lambda: eq(printed_count(redis, venue), 1), timeout=20)
        assert await redis.hget(Keys(venue).job("ORD1-1"), "state") == b"printed"
        # The agent met no refusal on its way: Redis logs every refused command and key by user.
        assert [e for e in await redis.execute_command("ACL", "LOG") if _field(e, "username") == user] == []
        # The refs (every code and its terms), a record, the search index, the job-id secret: all refused.
        for command in (
            ("HGETALL", a.refs),
            ("HGETALL", a.attendee("secret-renee")),
            ("HGET", a.attendee("secret-dimitris"), "n"),
            ("HGETALL", a.exact),
            ("ZRANGE", a.terms, 0, -1),
            ("GET", a.secret),
            ("SCAN", 0, "MATCH", a.attendee_pattern),
        ):
            with pytest.raises(NoPermissionError):
                await as_agent.execute_command(*command)
        with pytest.raises(NoPermissionError):
            await AttendeeStore(as_agent, venue).get("secret-lee")
        with pytest.raises(NoPermissionError):
            await AttendeeStore(as_agent, venue).search("Lefèvre")
        # ``status`` on the Pi still shows the list's counts (numbers, no attendee).
        env = {**os.environ, "BADGE_REDIS_URL": _user_url(redis_server, user, tmp_path / "p1.pw"), "BADGE_VENUE": venue}
        status = badge_agent("status", "--json", env=env)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["attendees"]["expected"] == len(PEOPLE)
    finally:
        await as_agent.aclose()
        await redis.execute_command("ACL", "DELUSER", user)


def _field(entry: object, name: str) -> object:
    """One field of an ``ACL LOG`` entry (a dict, or a flat list of names and values, as the client parses it)."""
    if isinstance(entry, dict):
        pairs = entry
    else:
        items = list(entry)  # type: ignore[call-overload]
        pairs = dict(zip(items[::2], items[1::2], strict=True))
    value = pairs.get(name, pairs.get(name.encode()))
    return value.decode() if isinstance(value, bytes) else value


async def test_no_user_may_run_a_script_of_its_own_or_load_one(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    """An EVAL that writes once and loops forever would make Redis answer BUSY to every venue: no user has EVAL; nor
    may any user call the functions that change the venue's badge layouts (``layout set``/``rm``/``rules``)."""
    users = {
        "agent": await create_user(redis, venue, tmp_path / "p1.pw", "p1"),
        "kiosk": await create_user(redis, venue, tmp_path / "kiosk.pw"),
        "intake": await create_user(redis, venue, tmp_path / "intake.pw", role="intake"),
    }
    files = {"agent": "p1.pw", "kiosk": "kiosk.pw", "intake": "intake.pw"}
    k = Keys(venue)
    try:
        for role, user in users.items():
            client = Redis(port=redis_server.port, username=user, password=(tmp_path / files[role]).read_text().strip())
            try:
                for command in (
                    ("EVAL", "return 1", 0),
                    ("EVAL", "redis.call('INCR', KEYS[1]) return 1", 1, k.stats),
                    ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
                    ("EVAL_RO", "return 1", 0),
                    ("SCRIPT", "LOAD", "return 1"),
                    ("FUNCTION", "LOAD", "#!lua name=mine\nredis.register_function('mine', function() end)"),
                    ("FUNCTION", "DELETE", default_library().name),
                    ("FCALL", "mine", 0),
                    # the venue's layouts are the admin's: no agent and no role changes them
                    *(
                        ("FCALL", default_library().function(name), 3, k.prefix + "layouts", k.events, k.stats)
                        for name in ADMIN_ONLY
                    ),
                ):
                    with pytest.raises(NoPermissionError):
                        await client.execute_command(*command)
            finally:
                await client.aclose()
        assert await redis.exists(k.stats) == 0
    finally:
        await redis.execute_command("ACL", "DELUSER", *users.values())


async def test_the_intake_user_calls_its_functions_and_cannot_leave_a_key_of_the_wrong_type(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    user = await create_user(redis, venue, tmp_path / "intake.pw", role="intake")
    intake = Redis(port=redis_server.port, username=user, password=(tmp_path / "intake.pw").read_text().strip())
    k = Keys(venue)
    try:
        store = Store(intake, venue)
        for attendee in ("i1", "i2"):
            job = parse_job({"attendee_id": attendee, "name": "Guest", "printer": "p1" if attendee == "i2" else None})
            assert await store.enqueue(job.job_id, job.payload(), job.printer) == (True, "queued")
        await intake.hset(k.job("i1"), "created_by", "desk-1")  # what the intake writes by itself
        assert (await store.cancel("i2", "desk-1")).kind == "cancelled"
        agent = Store(redis, venue)
        await agent.beat("p1", {"state": "ready", "location": "desk"}, 60_000, first=True)
        assert await agent.take("p1") == ("pool", "i1")
        begun = await agent.begin("p1", "desk", "i1")
        await agent.confirm("p1", "desk", "i1", begun.epoch)
        # The reprint names p1's in-flight list (a stale copy of the id is removed: LREM, the one write there).
        assert (await store.reprint("i1", "coffee", "desk-1", 2, False)).kind == "reprint"
        # A desk's reprint waits in its printer's queue, indexed as pinned, carrying the desk's zone.
        assert await agent.take("p1") == ("pool", "i1")
        begun = await agent.begin("p1", "desk", "i1")
        await agent.confirm("p1", "desk", "i1", begun.epoch)
        assert (await store.reprint("i1", "lost", "desk-1", 2, False, "p1", ("hall", ("p1",)))).kind == "reprint"
        assert await redis.lrange(k.queue("p1"), 0, -1) == [b"i1"]
        # A ticket's cancel undone: its withdrawn badge's record goes (by HDEL of its fields: DEL is not this user's).
        attendees = AttendeeStore(intake, venue)
        await Importer(attendees).load(iter(rows(PEOPLE[:1])))
        await attendees.badge("secret-renee", "desk-1")
        assert (await attendees.set_status("secret-renee", "cancelled", "desk-1")) == ("changed", "cancelled")
        assert (await attendees.set_status("secret-renee", "valid", "desk-1")) == ("changed", "none")
        assert not await redis.exists(k.job("ORD1-1"))
        # The functions of others are refused, and so is every write that could leave a key of another type.
        with pytest.raises(NoPermissionError):
            await store.take("p1")
        for command in (
            ("SET", k.done("i1"), "p1"),
            ("LPUSH", k.done("i1"), "x"),
            ("HSET", k.done("i1"), "a", "b"),
            ("SET", k.job("i1"), "x"),
            ("LPUSH", k.job("i1"), "x"),
            ("ZADD", k.job("i1"), 1, "x"),
            ("XADD", k.job("i1"), "*", "a", "b"),
            ("DEL", k.job("i1")),
            ("SET", k.pool, "x"),
            ("HSET", k.pool, "a", "b"),
            ("DEL", k.pool),
            ("HSET", k.events, "a", "b"),
            ("LPUSH", k.stats, "x"),
            ("SET", k.inflight("p1"), "x"),
            ("LPUSH", k.inflight("p1"), "x"),
            ("RPUSH", k.inflight("p1"), "x"),
            ("LMOVE", k.pool, k.inflight("p1"), "RIGHT", "LEFT"),
        ):
            with pytest.raises(NoPermissionError):
                await intake.execute_command(*command)
        queue = k.queue("p1")
        types = {key: await redis.type(key) for key in (k.job("i1"), queue, k.events, k.stats, k.inflight("p1"))}
        assert types == {
            k.job("i1"): b"hash",
            queue: b"list",
            k.events: b"stream",
            k.stats: b"hash",
            k.inflight("p1"): b"none",
        }
        assert await redis.exists(k.done("i1")) == 0  # the reprint's new round deleted it; nobody wrote it again
    finally:
        await intake.aclose()
        await redis.execute_command("ACL", "DELUSER", user)


async def test_a_new_role_gets_its_own_user_and_must_declare_every_key_type_it_writes(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    """How the attendee-list tools or a pretix sync get a user of their own: a Role naming functions and keys."""
    staff = Role(
        "dlq-staff", "sends dead jobs back", functions=("requeue",), writes=("job", "done", "pool", "dlq", "events")
    )
    rules = role_rules(staff, venue)
    assert f"+fcall|{default_library().function('requeue')}" in rules
    assert not [r for r in rules if "enqueue" in r or r in ("+eval", "+evalsha", "~*")]
    await load_library(redis)
    await redis.execute_command("ACL", "SETUSER", staff.user(venue), "reset", "on", ">pw", *rules)
    as_staff = Redis(port=redis_server.port, username=staff.user(venue), password="pw")
    try:
        store = Store(redis, venue)
        await store.enqueue("d1", parse_job({"attendee_id": "d1", "name": "Dead"}).payload(), None)
        assert await store.take("p1") == ("pool", "d1")
        await store.dead_letter("p1", "d1", "cannot render")
        assert await Store(as_staff, venue).requeue("d1", "staff") is RequeueKind.REQUEUED
        with pytest.raises(NoPermissionError):
            await Store(as_staff, venue).enqueue("d2", "{}", None)
    finally:
        await as_staff.aclose()
        await redis.execute_command("ACL", "DELUSER", staff.user(venue))
    # A role whose functions write a key it does not declare gets no line at all (it would end in NOPERM).
    with pytest.raises(ValueError, match=r"role short: no key type it writes allows del, lrem, rpush"):
        role_rules(Role("short", "forgot the DLQ", functions=("requeue",), writes=("job", "events")), venue)


async def test_a_user_made_for_another_library_version_is_told_to_run_its_acl_line_again(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    user = await create_user(redis, venue, tmp_path / "p1.pw", "p1")
    copy = tmp_path / "newer"
    copy.mkdir()
    for entry in resources.files("protocol").iterdir():
        if entry.name.endswith(".lua"):
            (copy / entry.name).write_text(entry.read_text(encoding="utf-8") + "\n-- a newer version\n")
    newer = build([copy])
    await load_library(redis, newer)
    as_agent = Redis(port=redis_server.port, username=user, password=(tmp_path / "p1.pw").read_text().strip())
    try:
        with pytest.raises(
            NoPermissionError, match=rf"run this user's `badge-agent acl` line again .*{newer.name}"
        ) as got:
            await Store(as_agent, venue, library=newer).take("p1")
        assert len(str(got.value)) <= 200  # /healthz and the log show up to 200 characters of it: all of it
    finally:
        await as_agent.aclose()
        await redis.execute_command("ACL", "DELUSER", user)
        await redis.function_delete(newer.name)


#: Every Redis user the project generates: one per printer, and one per role ``badge-agent acl --role`` makes.
PROJECT_USERS = ("agent", *sorted(ROLES))


@pytest.mark.parametrize("who", PROJECT_USERS)
async def test_every_project_user_is_refused_lua_of_its_own_config_and_keys(
    who: str, tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    """Lua of one's own (EVAL, EVALSHA, FUNCTION, SCRIPT) could write once and loop, answering BUSY to every venue;
    FUNCTION FLUSH or DELETE would stop every printer; CONFIG reaches the server itself and KEYS other venues (and
    blocks Redis while it walks them): each is NOPERM for every user the project generates, and changes nothing."""
    password = tmp_path / f"{who}.pw"
    user = await create_user(redis, venue, password, "p1" if who == "agent" else None, role=who)
    client = Redis(port=redis_server.port, username=user, password=password.read_text().strip())
    k = Keys(venue)
    library = default_library()
    mine = "#!lua name=mine\nredis.register_function('mine', function() return 1 end)"
    settings = await redis.config_get("maxmemory")
    try:
        for command in (
            ("EVAL", "return 1", 0),
            ("EVAL", "redis.call('HSET', KEYS[1], 'x', 1) return 1", 1, k.stats),
            ("EVAL_RO", "return 1", 0),
            ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
            ("EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
            ("FUNCTION", "LOAD", mine),
            ("FUNCTION", "LOAD", "REPLACE", mine),
            ("FUNCTION", "DELETE", library.name),
            ("FUNCTION", "FLUSH"),
            ("FUNCTION", "FLUSH", "ASYNC"),
            ("FUNCTION", "RESTORE", b"\x00", "REPLACE"),
            ("FUNCTION", "KILL"),
            ("SCRIPT", "LOAD", "return 1"),
            ("SCRIPT", "FLUSH"),
            ("SCRIPT", "KILL"),
            ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"),
            ("CONFIG", "GET", "*"),
            ("CONFIG", "SET", "maxmemory", "0"),
            ("CONFIG", "REWRITE"),
            ("CONFIG", "RESETSTAT"),
            ("KEYS", "*"),
            ("KEYS", k.prefix + "*"),
        ):
            with pytest.raises(NoPermissionError):
                await client.execute_command(*command)
        # Nothing moved: the library is still loaded, no function of the user's, the server's settings as they were.
        names = [entry[entry.index(b"library_name") + 1] for entry in await redis.function_list()]
        assert library.name.encode() in names and b"mine" not in names
        assert await redis.exists(k.stats) == 0
        assert await redis.config_get("maxmemory") == settings
    finally:
        await client.aclose()
        await redis.execute_command("ACL", "DELUSER", user)
