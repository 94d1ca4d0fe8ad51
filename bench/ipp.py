"""IPP through ippeveprinter: dispatch, duty cycle, a fault at the badge waiting at the printer, and a kill -9.

Run: .venv/bin/python -m bench.ipp [--badges N] [--samples S] [--kills K]
Prints tables and writes bench/results/ipp.json.

ippeveprinter (CUPS's IPP Everywhere printer) runs on loopback beside a private D-Bus and avahi (tests/support/ipp.py),
loaded with 4x6 in labels at 600 dpi (an attributes file), its job command sleeping 0.5 s a badge and writing its
start and end times to a file: duty is measured on the printer's own side. ippeveprinter takes one job at a time (it
answers a second Create-Job busy), so the next badge waits ready in the agent and is handed over once the printing one
is proved printed; it waits at the printer only behind a CUPS queue (the tests' rootless cupsd, ``ipp://`` backend to
the same ippeveprinter), which is the second row.

Dispatch: an idle agent, one badge enqueued at a time; the clock stops when Send-Document goes out with the badge
(drawing included). Fault: through the queue, paper runs out on a badge while the next one waits: the waiting one
must be cancelled at the queue before it starts and come back unflagged, nothing lost. Kill: an IPP agent process is
killed mid-job at the default timings (heartbeat 1 s, dead after 3 s); the clock runs from the kill to the peer's
first byte of that badge (its print log), and the badge must be flagged with the dead printer's place.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from redis.asyncio import Redis

from bench.common import bench_main, fmt, log_to_file, percentile, redis_server, spread, table, verdict
from bench.duty import duty_sim, judge_labels, numbered_jobs, print_queued, start_agent, stop_agent, time_dispatch
from cli.redis_server import RedisServer, stop_process
from drivers.ipp import wire
from drivers.ipp.client import IppClient
from drivers.ipp.driver import IppDriver
from drivers.sim import SimDriver
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support import ipp
from tests.support.agents import agent_config, agent_process
from tests.support.prints import read_print_log
from tests.support.waiting import wait_until

PRINT_TIME = 0.5
LABEL = "4x6 in (101.6 x 152.4 mm)"
DPI = 600
#: What the printer reports: 4x6 in labels ready, PWG raster at 600 dpi only.
ATTRIBUTES = ipp.LABELS_4X6_600
#: The job command: its start and end times (the printer's own side), then one impression. A job named in
#: ``fault-on`` runs out of paper while it prints and holds until ``go-on``.
COMMAND = """#!/bin/sh
echo "$IPP_JOB_ID start $(date +%s.%N)" >> "{dir}/times"
if [ -e "{dir}/fault-on" ] && [ "$IPP_JOB_NAME" = "$(cat "{dir}/fault-on")" ]; then
  echo "STATE: +media-empty" >&2
  while [ ! -e "{dir}/go-on" ]; do sleep 0.02; done
  echo "{dir}" > /dev/null
elif [ -e "{dir}/hold" ]; then
  while [ -e "{dir}/hold" ]; do sleep 0.02; done
else
  sleep {seconds}
fi
echo "ATTR: job-impressions-completed=1" >&2
echo "$IPP_JOB_ID end $(date +%s.%N)" >> "{dir}/times"
exit 0
"""


def printer_side(times: Path) -> list[dict[str, float]]:
    """The printer's own start and end of each job, in order (the ``started_t`` / ``t`` of bench.duty)."""
    starts: dict[str, float] = {}
    labels = []
    for line in times.read_text().splitlines():
        job, what, t = line.split()
        if what == "start":
            starts[job] = float(t)
        else:
            labels.append({"started_t": starts[job], "t": float(t)})
    return labels


class Eve:
    """ippeveprinter loaded with 4x6 labels at 600 dpi, its job command the bench's."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        directory.mkdir(parents=True)
        (directory / "attrs.conf").write_text(ATTRIBUTES)
        self.context = ipp.ippeveprinter(
            directory / "eve", env, formats="", extra=["-a", str(directory / "attrs.conf")]
        )

    def __enter__(self) -> ipp.IppEvePrinter:
        eve = self.context.__enter__()
        command = eve.directory / "print.sh"
        command.write_text(COMMAND.format(dir=eve.directory, seconds=PRINT_TIME))  # read at each job
        return eve

    def __exit__(self, *exc: object) -> None:
        self.context.__exit__(None, None, None)


def ipp_driver(uri: str) -> IppDriver:
    return IppDriver(uri, printer_name="p", io_timeout=10.0, poll_interval=0.02)


async def dispatch(server: RedisServer, tmp: Path, uri: str, samples: int) -> list[float]:
    driver = ipp_driver(uri)
    stamps: list[float] = []
    request = driver.client.request

    async def stamped(operation: int, *args: Any, **kwargs: Any) -> wire.Response:
        if operation == wire.SEND_DOCUMENT:
            stamps.append(time.perf_counter())
        return await request(operation, *args, **kwargs)

    driver.client.request = stamped  # type: ignore[method-assign]
    jobs = numbered_jobs("D", samples)
    return await time_dispatch(server, tmp / "dispatch", "ipp-dispatch", driver, stamps, jobs, 20, 0.05)


async def sim_dispatch(server: RedisServer, tmp: Path, samples: int) -> list[float]:
    driver = SimDriver("p", 0.05)
    stamps: list[float] = []
    real_print = driver.print

    async def stamped(data: bytes, badge: Any, timeout: float) -> Any:
        stamps.append(time.perf_counter())
        return await real_print(data, badge, timeout)

    driver.print = stamped  # type: ignore[method-assign]
    jobs = numbered_jobs("S", samples, company=None)
    return await time_dispatch(server, tmp / "dispatch-sim", "sim-dispatch", driver, stamps, jobs, 20, 0.05)


async def duty(server: RedisServer, tmp: Path, eve: ipp.IppEvePrinter, uri: str, venue: str, n: int) -> dict[str, Any]:
    times = eve.directory / "times"
    times.unlink(missing_ok=True)
    jobs = numbered_jobs(venue, n)
    printed = await print_queued(server, tmp, venue, ipp_driver(uri), jobs, PRINT_TIME, n * PRINT_TIME * 6 + 30)
    labels = printer_side(times)
    return {**judge_labels(labels, PRINT_TIME), "printed": printed}


async def fault_at_the_waiting_badge(
    server: RedisServer, tmp: Path, eve: ipp.IppEvePrinter, uri: str, n: int
) -> dict[str, Any]:
    """Paper runs out on badge 2 (of ``n``) while badge 3 waits at the queue."""
    venue = "ipp-fault"
    redis = Redis.from_url(server.url)
    store, k = Store(redis, venue), Keys(venue)
    ids = []
    for i in range(n):
        job = parse_job({"attendee_id": f"F-{i}", "name": f"Attendee Number {i}"})
        await store.enqueue(job.job_id, job.payload(), None)
        ids.append(job.job_id)
    struck, waiting = ids[1], ids[2]
    (eve.directory / "fault-on").write_text(struck + "\n")
    agent, task = await start_agent(server, tmp / venue, venue, ipp_driver(uri))
    try:
        # A fresh queue numbers its jobs from 1: the waiting badge is job 3. Once the queue says it is canceled, the
        # printer may finish the struck badge (its paper reloaded).
        await wait_until(lambda: _canceled(uri, 3), 60, every=0.01)
        (eve.directory / "go-on").touch()
        await wait_until(lambda: _released(redis, k, struck), 60, every=0.01)
        await wait_until(lambda: _released(redis, k, waiting), 60, every=0.01)
    finally:
        await stop_agent(agent, task)
    states = {i: await redis.hgetall(k.job(i)) for i in ids}
    lists = [k.pool, k.inflight("p")]
    held = [x.decode() for name in lists for x in cast(list[bytes], await redis.lrange(name, 0, -1))]
    lost = [i for i in ids if states[i][b"state"] != b"printed" and held.count(i) != 1]
    await redis.aclose()
    (eve.directory / "fault-on").unlink()
    return {
        "badges": n,
        "printed": sum(s[b"state"] == b"printed" for s in states.values()),
        "struck_flagged": states[struck][b"maybe_printed"] == b"1",
        "waiting_unflagged": states[waiting][b"maybe_printed"] == b"0" and states[waiting][b"attempts"] == b"0",
        "waiting_reached_the_printer": any(p.name.endswith(waiting) for p in eve.printed()),
        "lost": lost,
    }


async def _canceled(uri: str, job_id: int) -> bool:
    async with IppClient(uri) as client:
        reply = await client.request(wire.GET_JOB_ATTRIBUTES, {"job-id": job_id}, check=False)
        return bool(wire.first(reply.group(wire.JOB_GROUP), "job-state") == 7)


async def _released(redis: Redis, k: Keys, job_id: str) -> bool:
    """Handed back by a release (which writes its reason), not printed."""
    state, error = await redis.hmget(k.job(job_id), ["state", "last_error"])
    return state == b"queued" and bool(error)


async def kills(server: RedisServer, tmp: Path, eve: ipp.IppEvePrinter, rounds: int) -> dict[str, Any]:
    """kill -9 of an IPP agent mid-job, default timings; a peer on a simulated printer takes the badge on."""
    venue = "ipp-kill"
    folder = tmp / venue
    folder.mkdir()
    redis = Redis.from_url(server.url)
    store, k = Store(redis, venue), Keys(venue)
    peer_log = folder / "peer.prints.jsonl"
    peer = agent_process(agent_config(folder / "peer.yaml", venue, server.url, "peer", 0.05))
    procs: list[subprocess.Popen[bytes]] = [peer]
    out: list[dict[str, Any]] = []
    try:
        await asyncio.sleep(4.0)  # the peer beats for the whole dead-after window: it may sweep
        for r in range(rounds):
            victim = f"ipp-{r}"
            job = parse_job({"attendee_id": f"K-{r}", "name": f"Attendee {r}", "printer": victim})
            await store.enqueue(job.job_id, job.payload(), job.printer)
            (eve.directory / "hold").touch()
            driver = {"language": "ipp", "uri": eve.uri, "io_timeout": 5.0}
            cfg = agent_config(folder / f"{victim}.yaml", venue, server.url, victim, 0.0, driver=driver)
            proc = agent_process(cfg)
            procs.append(proc)
            await wait_until(lambda: _state(redis, k, job.job_id, b"printing"), 60, every=0.01)  # noqa: B023
            await asyncio.sleep(random.uniform(0.2, 1.2))  # in the job, at any moment of the victim's beat
            proc.kill()
            killed = time.time()
            await asyncio.to_thread(proc.wait)
            (eve.directory / "hold").unlink()
            row: dict[str, Any] = {"round": r}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                started = [e["started"] for e in read_print_log(peer_log) if e["job_id"] == job.job_id]
                if started:
                    row["kill_to_first_byte_s"] = min(started) - killed
                    break
                await asyncio.sleep(0.01)
            where = await redis.hget(k.job(job.job_id), "maybe_printed_where") or b""
            row["flagged_with_place"] = f"{victim} (".encode() in where
            out.append(row)
    finally:
        for proc in procs:
            stop_process(proc, 15)
        await redis.aclose()
    ok = [r["kill_to_first_byte_s"] for r in out if "kill_to_first_byte_s" in r]
    return {
        "timings": "default: heartbeat_interval 1 s, dead after 3 missed beats, sweep every 0.5 s",
        "kills": len(out),
        "failed": len(out) - len(ok),
        "flagged": sum(r["flagged_with_place"] for r in out),
        "kill_to_first_byte_s": {**spread(ok), "p99": percentile(ok, 99)},
        "raw": out,
    }


async def _state(redis: Redis, k: Keys, job_id: str, state: bytes) -> bool:
    return await redis.hget(k.job(job_id), "state") == state


def _dispatched(ms: list[float]) -> dict[str, Any]:
    return {"first_ms": ms[0], "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "raw_ms": ms}


async def main_async(badges: int, samples: int, rounds: int) -> dict[str, Any]:
    out: dict[str, Any] = {"label": LABEL, "dpi": DPI, "print_time_s": PRINT_TIME}
    with tempfile.TemporaryDirectory(prefix="badge-bench-ipp-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        log_to_file(tmp / "bench.log")
        with ipp.dns_sd(tmp / "dnssd") as env, Eve(tmp / "printer", env) as eve, ipp.cupsd(tmp / "cups") as cups:
            queue = cups.add_queue("badges", eve.uri)
            async with IppClient(eve.uri) as client:  # what the printer says it takes, for the record
                reply = await client.request(wire.GET_PRINTER_ATTRIBUTES, {"requested-attributes": ["media-ready"]})
                out["media_ready"] = reply.group(wire.PRINTER_GROUP).get("media-ready")
            ms = [x * 1000 for x in await dispatch(server, tmp, eve.uri, samples)]
            sim = [x * 1000 for x in await sim_dispatch(server, tmp, samples)]
            out["dispatch"] = {
                f"ipp, {LABEL} at {DPI} dpi": _dispatched(ms),
                "sim (agent's own cost)": _dispatched(sim),
            }
            out["duty"] = {
                "sim (agent's own cost)": await duty_sim(server, tmp, PRINT_TIME, badges),
                "ipp, printer direct (one job at a time)": await duty(server, tmp, eve, eve.uri, "ipp-direct", badges),
                "ipp, CUPS ipp:// queue (next badge waiting)": await duty(server, tmp, eve, queue, "ipp-queue", badges),
            }
            # Before the fault: the printer keeps reporting paper out after it (nobody reloads it here).
            out["failover"] = await kills(server, tmp, eve, rounds)
            with ipp.cupsd(tmp / "cups-fault") as fresh:
                fault_queue = fresh.add_queue("badges", eve.uri)
                out["fault"] = await fault_at_the_waiting_badge(server, tmp, eve, fault_queue, 5)
    d = out["dispatch"][f"ipp, {LABEL} at {DPI} dpi"]
    fault = out["fault"]
    fo = out["failover"]
    out["targets"] = {
        "duty_ge_0_98": max(v["duty"] for k, v in out["duty"].items() if k.startswith("ipp")) >= 0.98,
        "dispatch_p50_le_60ms": d["p50_ms"] <= 60,
        "nothing_lost_at_a_fault": not fault["lost"]
        and fault["waiting_unflagged"]
        and not fault["waiting_reached_the_printer"],
        "failover_p99_le_4_5s": fo["failed"] == 0 and fo["kill_to_first_byte_s"]["p99"] <= 4.5,
        "killed_badge_flagged": fo["flagged"] == fo["kills"],
    }
    return out


def report(res: dict[str, Any]) -> str:
    parts = []
    rows = [[k, fmt(d["first_ms"]), fmt(d["p50_ms"]), fmt(d["p99_ms"])] for k, d in res["dispatch"].items()]
    n = len(next(iter(res["dispatch"].values()))["raw_ms"])
    parts.append(
        table(
            f"Dispatch, idle agent: enqueue -> the badge's bytes to the printer (IPP: Send-Document), incl. drawing, "
            f"ms ({n} badges; label {res['label']} at {res['dpi']} dpi)",
            "lower is better",
            ["driver", "first", "p50", "p99"],
            rows,
        )
    )
    rows = [["physical limit", "1.000", "0", "0", "-"]]
    for k, d in res["duty"].items():
        rows.append([k, f"{d['duty']:.3f}", fmt(d["gap_p50_ms"]), fmt(d["gap_max_ms"]), d["labels"]])
    parts.append(
        table(
            f"Duty cycle at {res['print_time_s']} s a badge, jobs always waiting (the printer's own job command times)",
            "duty higher is better, gap lower",
            ["driver", "duty", "gap p50 ms", "gap max ms", "labels"],
            rows,
        )
    )
    f = res["fault"]
    parts.append(
        table(
            "Paper out on a badge while the next waits at the queue",
            "nothing lost; the waiting one back unflagged, never at the printer",
            ["badges", "printed", "struck flagged", "waiting unflagged", "waiting reached the printer", "lost"],
            [
                [
                    f["badges"],
                    f["printed"],
                    f["struck_flagged"],
                    f["waiting_unflagged"],
                    f["waiting_reached_the_printer"],
                    len(f["lost"]),
                ]
            ],
        )
    )
    fo = res["failover"]
    s = fo["kill_to_first_byte_s"]
    parts.append(
        table(
            f"kill -9 of an IPP agent mid-job -> the peer's first byte of that badge, s ({fo['timings']})",
            "lower is better",
            ["kills", "ok", "flagged with its place", "min", "median", "max", "p99"],
            [
                [
                    fo["kills"],
                    fo["kills"] - fo["failed"],
                    fo["flagged"],
                    fmt(s["min"]),
                    fmt(s["median"]),
                    fmt(s["max"]),
                    fmt(s["p99"]),
                ]
            ],
        )
    )
    t = res["targets"]
    parts.append(
        f"targets: duty >= 0.98 {verdict(t['duty_ge_0_98'])}; "
        f"dispatch p50 <= 60 ms {verdict(t['dispatch_p50_le_60ms'])}; "
        f"nothing lost at a fault {verdict(t['nothing_lost_at_a_fault'])}; failover p99 <= 4.5 s "
        f"{verdict(t['failover_p99_le_4_5s'])}; killed badge flagged {verdict(t['killed_badge_flagged'])}"
    )
    return "\n\n".join(parts)


OPTIONS = [  # flag, default, help: see bench_main
    ("--badges", 20, "badges per duty run"),
    ("--samples", 20, "dispatch samples"),
    ("--kills", 8, "kill -9 rounds"),
]

if __name__ == "__main__":
    bench_main("ipp", __doc__, main_async, report, OPTIONS)
