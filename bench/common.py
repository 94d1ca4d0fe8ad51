"""Shared pieces of the benchmark scripts: a private redis-server, HTTP load, statistics, tables, JSON output and the
command line every script has. What the tests use as well (agent configs, print logs, waiting, what clients send,
Sentinel and Cluster setups) is in tests/support/, which the scripts import from.

Every script starts its own redis-server (the real one, on loopback) in a temporary folder and removes it at the end,
so nothing here touches a Redis or a printer that already exists on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import logging
import math
import multiprocessing
import os
import platform
import random
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from core.logs import KeyValueFormatter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


@contextmanager
def redis_server(appendonly: bool = False, fsync: str = "everysec") -> Iterator[RedisServer]:
    """A private redis-server on a loopback port, gone when the block ends.

    The benches default to no AOF: they measure the agent's own cost, not the disk's. Scripts that care about the
    production setting (``appendfsync always``) ask for it and say so in their output.
    """
    with tempfile.TemporaryDirectory(prefix="badge-bench-redis-") as tmp:
        server = RedisServer(Path(tmp), appendonly=appendonly, fsync=fsync)
        server.start()
        try:
            yield server
        finally:
            server.stop()


def log_to_file(path: Path) -> None:
    """Agents in this process log one key=value line per badge, as in production, to ``path`` (journald's cost is
    not theirs to add, and the tables stay readable)."""
    handler = logging.FileHandler(path)
    handler.setFormatter(KeyValueFormatter(True))
    logging.getLogger().handlers[:] = [handler]
    logging.getLogger().setLevel(logging.INFO)


async def command_counts(redis: Redis) -> dict[str, int]:
    """``INFO commandstats`` as {command: calls}."""
    info = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in info.items()}


async def redis_cpu(redis: Redis) -> float:
    """Seconds of CPU the redis-server has used (user + sys), from ``INFO cpu``."""
    info = await redis.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


# -- HTTP load -------------------------------------------------------------------------------------------------------

#: One request of a load: method, path (and query), body; ``{n}`` in the body becomes a number no other request of
#: the load has (a new job each).
Request = tuple[str, str, str | None]


async def _one_client(
    host: str, port: int, head: bytes, requests: Sequence[Request], rng: random.Random, start: float, stop: float,
    interval: float, tag: str, out: dict[str, Any],
) -> None:  # fmt: skip
    """One keep-alive connection sending requests back to back (or one every ``interval`` s) from ``start`` to
    ``stop`` (wall clock). A bare HTTP/1.1 client: its own cost must stay small beside the server's it measures.

    Paced, the requests keep a fixed schedule and each one's latency runs from the moment it was due, not from when
    the connection was free to send it: a server that falls behind makes the next requests wait at the client, as a
    desk's next keystroke waits, and that wait is part of what the user sees (a clock started at the send would
    leave it out: "coordinated omission")."""
    reader, writer = await asyncio.open_connection(host, port)
    await asyncio.sleep(max(0.0, start - time.time()) + rng.uniform(0, interval))  # paced clients do not start in step
    due = time.perf_counter()
    try:
        while time.time() < stop:
            method, path, body = rng.choice(requests)
            data = b""
            if body is not None:
                out["n"] += 1
                data = body.replace("{n}", f"{tag}-{out['n']}").encode()
            request = f"{method} {path} HTTP/1.1\r\n".encode() + head
            if body is not None:
                request += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(data)
            t0 = due if interval else time.perf_counter()
            writer.write(request + b"\r\n" + data)
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            answer = await reader.readexactly(length)
            out["latencies"].append((time.perf_counter() - t0) * 1000)
            status = int(status_line.split()[1])
            out["statuses"][status] = out["statuses"].get(status, 0) + 1
            if out["empty"] is not None and answer == out["empty"]:
                out["empties"] += 1
            if interval:
                due += interval
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
    finally:
        writer.close()


def _client_process(
    base: str, secret: str, requests: Sequence[Request], clients: int, start: float, stop: float, interval: float,
    seed: int, empty: bytes | None,
) -> dict[str, Any]:  # fmt: skip
    """``clients`` connections in one process of their own (``http_load``); its CPU time while they ran."""
    host, _, port = base.removeprefix("http://").partition(":")
    head = f"Host: {host}:{port}\r\nAuthorization: Bearer {secret}\r\n".encode()
    out: dict[str, Any] = {"latencies": [], "statuses": {}, "empties": 0, "empty": empty, "n": 0}
    rng = random.Random(seed)

    async def run() -> None:
        await asyncio.gather(
            *(
                _one_client(host, int(port), head, requests, rng, start, stop, interval, f"{seed}.{c}", out)
                for c in range(clients)
            )
        )

    cpu = time.process_time()
    asyncio.run(run())
    out["cpu_s"] = time.process_time() - cpu
    del out["empty"]
    return out


async def http_load(
    base: str,
    secret: str,
    requests: Sequence[Request],
    clients: int,
    seconds: float,
    interval: float = 0.0,
    processes: int = 2,
    pid: int = 0,
    redis: Redis | None = None,
    empty: bytes | None = None,
) -> dict[str, Any]:
    """``clients`` concurrent clients for ``seconds``, spread over ``processes`` processes of their own (so one event
    loop's delays are not the server's): each a keep-alive connection with a bearer token, sending random
    ``requests`` back to back (``interval`` 0: what the server can take) or one every ``interval`` seconds.

    Besides latency percentiles and rates: the clients' CPU time a request (``client_cpu_ms``), and with the server's
    ``pid`` its CPU time a request (``cpu_ms_per_request``: other work on a shared machine inflates it far less than
    latencies), with ``redis`` the redis-server's (``redis_cpu_ms``); ``empty``: how many answers were that body."""
    loop = asyncio.get_running_loop()
    context = multiprocessing.get_context("spawn")  # a fork would inherit this process's running event loop
    shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    with concurrent.futures.ProcessPoolExecutor(len(shares), mp_context=context) as pool:
        start = time.time() + 1.5  # every process started and connected before the clock runs
        stop = start + seconds
        futures = [
            loop.run_in_executor(
                pool, _client_process, base, secret, requests, share, start, stop, interval, 11 + i, empty
            )
            for i, share in enumerate(shares)
            if share
        ]
        await asyncio.sleep(max(0.0, start - time.time()))
        cpu_before = cpu_seconds(pid) if pid else 0.0
        redis_before = await redis_cpu(redis) if redis is not None else 0.0
        await asyncio.sleep(max(0.0, stop - time.time()))
        cpu = cpu_seconds(pid) - cpu_before if pid else 0.0
        redis_used = await redis_cpu(redis) - redis_before if redis is not None else 0.0
        parts = await asyncio.gather(*futures)
    latencies = [ms for part in parts for ms in part["latencies"]]
    statuses: dict[int, int] = {}
    for part in parts:
        for status, count in part["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    done = max(1, len(latencies))
    return {
        "requests": len(latencies),
        "per_s": len(latencies) / seconds,
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "statuses": statuses,
        "empty_answers": sum(part["empties"] for part in parts),
        "cpu_ms_per_request": cpu * 1000 / done,
        "client_cpu_ms": sum(part["cpu_s"] for part in parts) * 1000 / done,
        "redis_cpu_ms": redis_used * 1000 / done,
        "client_processes": len(futures),
    }


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (utime + stime), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- statistics -----------------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100): a value that was actually observed."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def spread(values: Sequence[float]) -> dict[str, float]:
    """min / median / max, the form every comparison is quoted in."""
    if not values:
        return {"min": math.nan, "median": math.nan, "max": math.nan, "n": 0}
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def fmt(value: float, digits: int = 2) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


def fmt_spread(s: dict[str, float], digits: int = 2, unit: str = "") -> str:
    return f"{fmt(s['min'], digits)} / {fmt(s['median'], digits)} / {fmt(s['max'], digits)}{unit}"


def table(title: str, better: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with its title and which way is better, as printed by every bench."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [f"## {title}", f"({better})"]
    for n, row in enumerate(cells):
        lines.append(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


# -- output ---------------------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    model = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        if m := re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M):
            model = m.group(1).strip()
    except OSError:
        pass
    try:
        redis_version = subprocess.run(
            [RedisServer(Path(tempfile.gettempdir())).executable, "--version"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        redis_version = ""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "redis": redis_version,
        "kernel": platform.release(),
    }


def write_results(name: str, data: dict[str, Any]) -> Path:
    """``bench/results/<name>.json`` with the machine it ran on."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"bench": name, "machine": machine(), **data}, indent=2, default=str) + "\n")
    return path


def bench_main(
    name: str,
    doc: str | None,
    run: Callable[..., Awaitable[dict[str, Any]]],
    report: Callable[[dict[str, Any]], str],
    options: Sequence[tuple[str, float, str]],
) -> None:
    """The command line every script has: ``--option`` flags (flag, default, help; the type is the default's),
    ``run`` called with their values in that order, its tables printed and its figures written as JSON."""
    parser = argparse.ArgumentParser(description=(doc or name).splitlines()[0])
    for flag, default, help_text in options:
        parser.add_argument(flag, type=type(default), default=default, help=help_text or None)
    res = asyncio.run(run(*vars(parser.parse_args()).values()))
    print(report(res))
    print(f"\nwritten: {write_results(name, res)}")
