"""The intake service: job creations per second from 50 concurrent HTTP clients, and kiosk create -> "printing at".

Run: .venv/bin/python -m bench.intake [--seconds S] [--clients N] [--samples K]
Prints two tables and writes bench/results/intake.json.

1. Throughput. ``badge-agent intake`` runs as its own process on a private redis-server; N concurrent clients (a
   desk token; keep-alive connections of a bare HTTP/1.1 client in two processes of their own: bench/common.py
   ``http_load``) POST one new job each, back to back, for S seconds; every request's latency is kept, and the
   CPU time a request of the intake and of the clients. Beside it, in the same run: ``badge-agent enqueue --file``
   of the same number of jobs (the CLI's pipelined batches, process start included), and the floor: N concurrent
   tasks doing a bare ``LPUSH`` on redis-py.
2. Kiosk latency on an idle venue. One agent (its own process) drives a ZPL printer emulator over TCP (this process
   serves it); a kiosk-token client POSTs a job and long-polls ``GET /v1/jobs/{id}?wait=10&state=queued``; the clock
   stops when the answer says ``printing`` with the printer's location. Between samples the bench waits for the
   badge to be printed and a random 50-150 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from redis.asyncio import Redis

from bench.common import ROOT, fmt, http_load, percentile, redis_server, table, verdict, write_results
from cli.redis_server import free_port
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import TcpFront
from intake.tokens import TokenFile
from protocol.keys import Keys


def intake_process(
    folder: Path, venue: str, url: str, role: str = "kiosk", limits: dict[str, float] | None = None
) -> tuple[subprocess.Popen[bytes], str, str]:
    """An intake process and a token of ``role`` (any other role than a kiosk with its cap of outstanding jobs
    raised: the throughput run keeps thousands queued)."""
    port = free_port()
    config = folder / "intake.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "venue": venue,
                "redis": {"url": url},
                "listen": f"127.0.0.1:{port}",
                "tokens": str(folder / "tokens.json"),
                "limits": limits or {"rate": 1e5, "burst": 100_000},
            }
        )
    )
    secret = TokenFile(folder / "tokens.json").add("bench", role, max_outstanding=None if role == "kiosk" else 10**5)
    log = (folder / "intake.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "intake", "-c", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    assert f":{port}" in line, line
    return proc, f"http://127.0.0.1:{port}", secret


async def intake_rate(base: str, secret: str, clients: int, seconds: float, tag: str, pid: int = 0) -> dict[str, Any]:
    body = json.dumps({"attendee_id": f"{tag}-{{n}}", "name": "Guest {n}"})  # {n}: a new job each request
    load = await http_load(base, secret, [("POST", "/v1/jobs", body)], clients, seconds, pid=pid)
    created = load["statuses"].get(201, 0)
    return {
        "jobs": load["requests"],
        "per_s": load["per_s"],
        "p50_ms": load["p50_ms"],
        "p99_ms": load["p99_ms"],
        "errors": load["requests"] - created,
        "cpu_ms_per_request": load["cpu_ms_per_request"],
        "client_cpu_ms": load["client_cpu_ms"],
    }


def enqueue_rate(folder: Path, url: str, venue: str, jobs: int) -> dict[str, Any]:
    path = folder / "jobs.jsonl"
    path.write_text("".join(json.dumps({"attendee_id": f"E-{i}", "name": f"Guest {i}"}) + "\n" for i in range(jobs)))
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "agent", "enqueue", "--file", str(path), "-q", "--redis", url, "--venue", venue],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    return {"jobs": jobs, "per_s": jobs / wall}


async def lpush_rate(url: str, clients: int, seconds: float) -> dict[str, Any]:
    redis = Redis.from_url(url, max_connections=clients)
    done = 0
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def client(c: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            await redis.lpush("bench:floor", f"{c}-{done}")
            latencies.append(time.perf_counter() - t0)
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    wall = time.perf_counter() - started
    await redis.aclose()
    ms = [x * 1000 for x in latencies]
    return {"jobs": done, "per_s": done / wall, "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99)}


async def kiosk_latency(folder: Path, url: str, samples: int) -> dict[str, Any]:
    venue = "bench-kiosk"
    printer = EMULATORS["zpl"]("hall-a-1", print_time=0.05)
    await printer.start()
    front = TcpFront(printer, "127.0.0.1", 0)
    host, port = await front.start()
    config = folder / "hall-a-1.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "venue": venue,
                "printer": {
                    "name": "hall-a-1",
                    "location": "Hall A, desk 1",
                    "driver": {"language": "zpl", "transport": "tcp", "host": host, "port": port, "io_timeout": 2.0},
                },
                "redis": {"url": url},
                "http": {"listen": "off"},
                "journal": str(folder / "hall-a-1.journal"),
            }
        )
    )
    kiosk_folder = folder / "kiosk"
    kiosk_folder.mkdir()
    proc, base, secret = intake_process(kiosk_folder, venue, url, role="kiosk")
    with (folder / "agent.log").open("ab") as log:
        agent = subprocess.Popen([sys.executable, "-m", "agent", "run", "-c", str(config)], cwd=ROOT, stderr=log)
    redis = Redis.from_url(url)
    latencies: list[float] = []
    located = 0
    try:
        async with asyncio.timeout(30):
            while await redis.zcard(Keys(venue).hb) < 1:
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)
        headers = {"Authorization": f"Bearer {secret}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            for i in range(samples):
                t0 = time.perf_counter()
                async with session.post(f"{base}/v1/jobs", json={"attendee_id": f"K-{i}", "name": "Zoë"}) as r:
                    job = await r.json()
                job_id = job["job_id"]  # the kiosk's own id for it: kiosk:bench:K-<i>
                while job["state"] == "queued":
                    async with session.get(f"{base}/v1/jobs/{job_id}?wait=10&state=queued") as r:
                        job = await r.json()
                latencies.append(time.perf_counter() - t0)
                located += job["location"] == "Hall A, desk 1"
                async with session.get(f"{base}/v1/jobs/{job_id}?wait=10&state=printing") as r:
                    assert (await r.json())["state"] == "printed"
                await asyncio.sleep(random.uniform(0.05, 0.15))
    finally:
        agent.terminate()
        proc.terminate()
        agent.wait(30)
        proc.wait(10)
        await redis.aclose()
        await front.stop()
        await printer.stop()
    ms = [x * 1000 for x in latencies]
    return {"samples": len(ms), "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "located": located}


async def main_async(seconds: float, clients: int, samples: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="badge-bench-intake-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        proc, base, secret = intake_process(tmp, "bench-rate", server.url, role="desk")
        try:
            await intake_rate(base, secret, clients, 1.0, "W")  # warm up: connections, script cache
            intake = await intake_rate(base, secret, clients, seconds, "T", pid=proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
        enqueue = enqueue_rate(tmp, server.url, "bench-enqueue", max(1000, intake["jobs"]))
        floor = await lpush_rate(server.url, clients, seconds)
        kiosk = await kiosk_latency(tmp, server.url, samples)
    return {
        "clients": clients,
        "seconds": seconds,
        "intake": intake,
        "enqueue": enqueue,
        "lpush": floor,
        "kiosk": kiosk,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    out = asyncio.run(main_async(args.seconds, args.clients, args.samples))
    i, e, f, k = out["intake"], out["enqueue"], out["lpush"], out["kiosk"]
    print(
        table(
            f"job creations, {out['clients']} concurrent clients, {out['seconds']:g} s",
            "higher jobs/s is better; lower latency is better",
            ["way in", "jobs", "jobs/s", "p50 ms", "p99 ms", "of floor"],
            [
                [
                    "intake POST /v1/jobs (HTTP)",
                    i["jobs"],
                    fmt(i["per_s"], 0),
                    fmt(i["p50_ms"]),
                    fmt(i["p99_ms"]),
                    fmt(i["per_s"] / f["per_s"]),
                ],
                ["badge-agent enqueue --file", e["jobs"], fmt(e["per_s"], 0), "-", "-", fmt(e["per_s"] / f["per_s"])],
                ["bare LPUSH (floor)", f["jobs"], fmt(f["per_s"], 0), fmt(f["p50_ms"]), fmt(f["p99_ms"]), "1.00"],
            ],
        )
    )
    cpu = f"intake {fmt(i['cpu_ms_per_request'])}, clients {fmt(i['client_cpu_ms'])}"
    print(f"intake errors: {i['errors']}; CPU ms a request: {cpu}")
    print(f">= 500 creations/s: {verdict(i['per_s'] >= 500)}; p99 < 50 ms: {verdict(i['p99_ms'] < 50)}")
    print()
    print(
        table(
            "kiosk create -> state printing, idle venue, ZPL emulator over TCP",
            "lower is better",
            ["samples", "p50 ms", "p99 ms", "location given"],
            [[k["samples"], fmt(k["p50_ms"]), fmt(k["p99_ms"]), f"{k['located']}/{k['samples']}"]],
        )
    )
    print(f"p50 <= 100 ms: {verdict(k['p50_ms'] <= 100)}")
    path = write_results("intake", out)
    print(f"\nwritten: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
