"""pretix: the first read of a check-in list of 5,000 tickets, a change after it, a check-in; pretix's time beside ours.

Run: .venv/bin/python -m bench.pretix_sync [--positions N] [--repeats R] [--checkins C] [--backlog B]
Prints a table and writes bench/results/pretix_sync.json.

A real pretix (tests/pretix: the cached install, a copy of the migrated database in WAL mode, served by several
processes on loopback, debug off as in production), seeded and then filled through pretix's own models to N tickets
of one order each (a few minutes; not timed). Per repeat:

* a first read: ``ListChanges.read()`` from nothing (the newest orders for the mark, every page of the check-in
  list's positions, the orders that are not paid; 50 a page), in all and split into the time spent waiting for
  pretix's answers (``PretixClient.waited``: request sent -> answer read) and ours (decoding, records, the rest).
  Target <= 60 s in all.
* a change: one attendee renamed in pretix, then one ``read()`` of the changes: with ``--follow`` a change is seen
  within the interval (5 s by default) plus this. Target <= 10 s together.
* a check-in: ``redeem`` with a nonce, one request; its time is what a confirmed print adds before pretix shows the
  check-in. Target <= 5 s.

A backlog (first, on tickets nothing else touches): B confirmed first badges of B tickets waiting in the outbox, as
after an hour offline, with pretix up again; one ``Sender.send_waiting()`` as ``attendees sync --follow`` runs it,
timed until the outbox is empty; then every ticket read back from pretix: checked in exactly once, one print log.
Target <= 60 s for 1,000.

Then end to end, with a private redis-server, ``badge-agent attendees sync --follow`` as its own process and one
agent process on a simulated printer:

* the first sync into the venue's list: from the process's start until every ticket is in Redis.
* a change at the kiosk: a ticket renamed in pretix (timed from when pretix committed it) until the attendee list in
  Redis holds the new name, which is what the kiosk's next scan prints. Target <= 10 s.
* a check-in after a print: a kiosk's badge confirmed printed by the agent (timed from when its ``done`` marker
  appears in Redis) until pretix shows the ticket checked in (its position's ``checkins``, read every 0.1 s).
  Target <= 5 s.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from bench.common import ROOT, bench_main, fmt, fmt_spread, redis_server, spread, table, verdict
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.keys import PretixKeys
from pretix_sync.listing import ListWriter
from pretix_sync.outbox import Outbox, Sender
from protocol.keys import Keys
from tests.pretix.install import PRETIX_VERSION, ensure_installed
from tests.pretix.server import PretixServer
from tests.support.agents import agent_config, agent_process

FOLLOW_INTERVAL = 5.0


async def run(positions: int, repeats: int, checkins: int, follows: int, backlog: int) -> dict[str, Any]:
    install = ensure_installed()
    with tempfile.TemporaryDirectory(prefix="bench-pretix-") as folder:
        server = PretixServer(install, Path(folder), debug=False)
        seed = server.run_data("seed")
        filled = time.perf_counter()
        missing = positions - len(seed["positions"])
        while missing > 0:
            chunk = min(missing, 1000)
            server.run_data("bulk", str(chunk))
            missing -= chunk
        filled = time.perf_counter() - filled
        server.start()
        try:
            drained = await measure_backlog(server, seed, backlog)
            res = await measure(server, seed, positions, repeats, checkins, filled)
            res.update(drained)
            res.update(await measure_follow(server, seed, positions, follows, Path(folder)))
            return res
        finally:
            server.close()


async def _until(check: Any, timeout: float, every: float) -> float:
    """Seconds until ``check()`` is true (polled every ``every`` seconds)."""
    started = time.perf_counter()
    while not await check():
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"not seen within {timeout:g} s")
        await asyncio.sleep(every)
    return time.perf_counter() - started


async def measure_follow(
    server: PretixServer, seed: dict[str, Any], positions: int, follows: int, folder: Path
) -> dict[str, Any]:
    """The sync as a venue runs it, end to end (see the module's docstring)."""
    list_id = seed["checkin_lists"]["Entrance"]
    token = folder / "pretix.token"
    token.write_text(seed["token"], encoding="utf-8")
    token.chmod(0o600)
    venue = "bench-pretix"
    k = Keys(venue)
    with redis_server() as rs:
        redis = Redis.from_url(rs.url, decode_responses=False)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        argv = [
            sys.executable, "-m", "agent", "attendees", "sync", "--follow", "--interval", str(FOLLOW_INTERVAL),
            "--redis", rs.url, "--venue", venue, "--pretix", server.url, "--event",
            f"{seed['organizer']}/{seed['event']}", "--token-file", str(token), "--checkin-list", str(list_id),
        ]  # fmt: skip
        log = (folder / "sync.log").open("ab")
        agent = agent_process(agent_config(folder / "bench-1.yaml", venue, rs.url, "bench-1", 0.05))
        started = time.perf_counter()
        sync = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            store = AttendeeStore(redis, venue)

            async def loaded() -> bool:
                return int(await redis.hlen(PretixKeys(venue).jobs)) >= positions

            await _until(loaded, 300, 0.2)
            first_sync = time.perf_counter() - started
            visible: list[float] = []
            checked_in: list[float] = []
            async with PretixClient(server.url, seed["organizer"], seed["event"], seed["token"]) as client:
                for n in range(follows):
                    placed = server.run_data("order", f"Follow {n}")
                    await _until(lambda placed=placed, n=n: _has(store, placed["secret"], f"Follow {n}"), 60, 0.05)
                    server.run_data("rename", str(placed["id"]), f"Renamed Follow {n}")
                    visible.append(
                        await _until(
                            lambda placed=placed, n=n: _has(store, placed["secret"], f"Renamed Follow {n}"), 60, 0.05
                        )
                    )
                    reply, attendee = await store.badge(placed["secret"], "bench-kiosk", at_desk=False)
                    if attendee is None or reply.kind.value != "queued":
                        raise RuntimeError(f"the kiosk's badge was not made: {reply}")
                    job_id = attendee.job_id

                    async def done(job_id: str = job_id) -> bool:
                        return bool(await redis.exists(k.done(job_id)))

                    async def in_pretix(position: int = placed["id"]) -> bool:
                        return bool((await client.position(position)).checkins)

                    await _until(done, 60, 0.02)
                    checked_in.append(await _until(in_pretix, 60, 0.1))
        finally:
            sync.terminate()
            agent.terminate()
            sync.wait(15)
            agent.wait(15)
            log.close()
            await redis.aclose()
    return {
        "follow_first_sync": first_sync,
        "kiosk_visible": spread(visible),
        "checkin_after_print": spread(checked_in),
    }


def pretix_cpu(server: PretixServer) -> float:
    """CPU seconds (user and system) pretix's server processes used so far: the parent and its workers."""
    parent = server.pid
    if parent is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone meanwhile
        pid = int(stat.parent.name)
        if parent in (pid, int(fields[1])):  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


async def measure_backlog(server: PretixServer, seed: dict[str, Any], backlog: int) -> dict[str, Any]:
    """``backlog`` first badges waiting in the outbox, sent to pretix (see the module's docstring)."""
    list_id = seed["checkin_lists"]["Entrance"]
    venue = "bench-backlog"
    with redis_server() as rs:
        redis = Redis.from_url(rs.url, decode_responses=False)
        store = AttendeeStore(redis, venue)
        outbox = Outbox(redis, venue)
        try:
            async with PretixClient(server.url, seed["organizer"], seed["event"], seed["token"]) as client:
                records = (await ListChanges(client, list_id).read()).records
                await ListWriter(store).write(records)
                bulk = sorted(r.code for r in records if r.name.startswith("Bulk Attendee"))[:backlog]
                if len(bulk) < backlog:
                    raise RuntimeError(f"--backlog {backlog} needs that many tickets: --positions is too small")
                printed_ms = int(time.time() * 1000) - 3_600_000  # printed during the hour pretix was away
                for code in bulk:
                    reply, attendee = await store.badge(code, "bench-kiosk", at_desk=False)
                    if attendee is None or reply.kind.value != "queued":
                        raise RuntimeError(f"the kiosk's badge was not made: {reply}")
                    fields = {"job_id": attendee.job_id, "epoch": "1", "first": "1", "printer": "bench-1",
                              "location": "", "printed_ms": str(printed_ms)}  # fmt: skip
                    await redis.xadd(outbox.keys.outbox, fields)  # type: ignore[arg-type]
                waited = client.waited
                sender = Sender(outbox, client, list_id, me="bench")
                cpu = pretix_cpu(server)
                started = time.perf_counter()
                done = await sender.send_waiting()
                drain = time.perf_counter() - started
                cpu = pretix_cpu(server) - cpu
                if done.sent != backlog or await outbox.waiting():
                    raise RuntimeError(f"the backlog did not drain: {done}")
                waited = client.waited - waited
                wanted = set(bulk)
                checked_in = logged = 0
                async for position in client.checkin_list_positions(list_id):
                    if position.secret in wanted:
                        checked_in += len(position.checkins) == 1
                        logged += len(position.print_logs) == 1
                if (checked_in, logged) != (backlog, backlog):
                    raise RuntimeError(f"of {backlog}: {checked_in} checked in once, {logged} logged once")
        finally:
            await redis.aclose()
    return {"backlog": backlog, "backlog_drain": drain, "backlog_waited": waited, "backlog_pretix_cpu": cpu}


async def _has(store: AttendeeStore, code: str, name: str) -> bool:
    attendee = await store.get(code)
    return attendee is not None and attendee.name == name


async def measure(
    server: PretixServer, seed: dict[str, Any], positions: int, repeats: int, checkins: int, filled: float
) -> dict[str, Any]:
    list_id = seed["checkin_lists"]["Entrance"]
    waited_for_pretix: list[float] = []
    ours: list[float] = []
    change: list[float] = []
    read_records = 0
    async with PretixClient(server.url, seed["organizer"], seed["event"], seed["token"]) as client:
        for n in range(repeats):
            changes = ListChanges(client, list_id)
            waited = client.waited
            started = time.perf_counter()
            read_records = len((await changes.read()).records)
            ours.append(time.perf_counter() - started)
            waited_for_pretix.append(client.waited - waited)
            renamed = seed["positions"][0]
            server.run_data("rename", str(renamed["id"]), f"Renamed {n}")
            started = time.perf_counter()
            batch = await changes.read()
            change.append(time.perf_counter() - started)
            if [r.name for r in batch.records] != [f"Renamed {n}"]:
                raise RuntimeError(f"the change read brought {len(batch.records)} records, not the renamed one")
        redeem: list[float] = []
        for n, position in zip(range(checkins), seed["positions"][:checkins], strict=False):
            started = time.perf_counter()
            result = await client.redeem(position["secret"], [list_id], f"bench-{n}")
            redeem.append(time.perf_counter() - started)
            if result.status != "ok":
                raise RuntimeError(f"check-in refused: {result.reason}")
    return {
        "pretix": PRETIX_VERSION,
        "positions": positions,
        "records": read_records,
        "fill_seconds": filled,
        "pretix_waited": spread(waited_for_pretix),
        "first_read": spread(ours),
        "ours_only": spread([o - a for o, a in zip(ours, waited_for_pretix, strict=True)]),
        "change_read": spread(change),
        "follow_interval": FOLLOW_INTERVAL,
        "redeem": spread(redeem),
    }


def report(res: dict[str, Any]) -> str:
    first_ok = res["first_read"]["median"] <= 60
    change_ok = FOLLOW_INTERVAL + res["change_read"]["median"] <= 10
    redeem_ok = res["redeem"]["median"] <= 5
    drain_ok = res["backlog_drain"] <= 60 * res["backlog"] / 1000
    rows = [
        [
            f"a backlog of {res['backlog']} first badges drained",
            f"{res['backlog_drain']:.1f} s",
            f"<= {60 * res['backlog'] / 1000:g} s: {verdict(drain_ok)}",
        ],
        [
            "  per badge (a check-in and a print log)",
            f"{res['backlog_drain'] / res['backlog'] * 1000:.0f} ms",
            f"{res['backlog_waited'] / res['backlog'] * 1000:.0f} ms waited, requests added up",
        ],
        [
            "  pretix's CPU per badge (its server processes)",
            f"{res['backlog_pretix_cpu'] / res['backlog'] * 1000:.0f} ms",
            f"{os.cpu_count()} cores here",
        ],
        [
            f"first read of {res['positions']} tickets, in all",
            fmt_spread(res["first_read"], unit=" s"),
            f"<= 60 s: {verdict(first_ok)}",
        ],
        ["  of it: waiting for pretix's answers", fmt_spread(res["pretix_waited"], unit=" s"), ""],
        ["  of it: ours (decoding, records, the rest)", fmt_spread(res["ours_only"], unit=" s"), ""],
        [
            "a change: read after a rename",
            fmt_spread(res["change_read"], unit=" s"),
            f"+ {fmt(res['follow_interval'], 0)} s interval <= 10 s: {verdict(change_ok)}",
        ],
        ["a check-in (redeem, one request)", fmt_spread(res["redeem"], 3, " s"), f"<= 5 s: {verdict(redeem_ok)}"],
        ["attendees sync --follow: first sync into Redis", f"{res['follow_first_sync']:.1f} s", ""],
        [
            f"a rename in pretix -> in the list (--interval {fmt(res['follow_interval'], 0)})",
            fmt_spread(res["kiosk_visible"], unit=" s"),
            f"<= 10 s: {verdict(res['kiosk_visible']['max'] <= 10)}",
        ],
        [
            "a badge confirmed printed -> checked in on pretix",
            fmt_spread(res["checkin_after_print"], unit=" s"),
            f"<= 5 s: {verdict(res['checkin_after_print']['max'] <= 5)}",
        ],
    ]
    title = f"pretix {res['pretix']} on loopback, {res['records']} records read"
    head = table(
        f"{title} (filling it took {res['fill_seconds']:.0f} s)",
        "lower is better; min / median / max over the repeats",
        ["what", "time", "target"],
        rows,
    )
    per_ticket = res["first_read"]["median"] / res["positions"] * 1000
    return head + f"\n(first read per ticket, median: {per_ticket:.2f} ms)"


if __name__ == "__main__":
    bench_main(
        "pretix_sync",
        __doc__,
        run,
        report,
        [
            ("--positions", 5000, "tickets in the event"),
            ("--repeats", 3, "first reads (each from nothing)"),
            ("--checkins", 5, "check-ins timed"),
            ("--follows", 5, "renames and prints timed end to end with attendees sync --follow"),
            ("--backlog", 1000, "confirmed first badges waiting in the outbox, drained once"),
        ],
    )
