"""Shared pieces of the benchmark scripts: a private redis-server, agent configs, what clients send (MONITOR and
round trips), statistics, tables, JSON output and the command line every script has.

Every script starts its own redis-server (the real one, on loopback) in a temporary folder and removes it at the end,
so nothing here touches a Redis or a printer that already exists on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import math
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent.logs import KeyValueFormatter
from agent.protocol.keys import Keys
from agent.redis_server import RedisServer

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


def agent_config(
    path: Path,
    venue: str,
    redis_url: str,
    name: str,
    print_time: float,
    print_log: bool = True,
    journal: bool = True,
    timing: dict[str, float] | None = None,
    http: str | None = None,
    log_level: str = "info",
    driver: dict[str, Any] | None = None,
    overrides: dict[str, object] | None = None,
) -> Path:
    """Write one agent's YAML on a simulated printer (or on ``driver``, a real one); its control file, print log
    and journal sit beside it. ``overrides``: any other setting by its path, parts joined by ``__``
    (``{"jobs__max_attempts": 1, "journal": "/dev/full"}``); a value of None removes the setting."""
    if driver is None:
        driver = {
            "language": "sim",
            "transport": "sim",
            "print_time": print_time,
            "control_file": str(path.parent / f"{name}.control.json"),
        }
        if print_log:
            driver["print_log"] = str(path.parent / f"{name}.prints.jsonl")
    config: dict[str, Any] = {
        "venue": venue,
        "printer": {"name": name, "location": f"desk of {name}", "driver": driver},
        "redis": {"url": redis_url},
        "timing": timing or {},
        "http": {"listen": http},
        "log": {"level": log_level},
    }
    if journal:
        config["journal"] = str(path.parent / f"{name}.journal")
    for dotted, value in (overrides or {}).items():
        node = config
        *parents, leaf = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def agent_process(config: Path) -> subprocess.Popen[bytes]:
    """``badge-agent run -c CONFIG`` as its own process, its log next to the config."""
    with config.with_suffix(".log").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "agent", "run", "-c", str(config)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


async def wait_until(check: Callable[[], object], timeout: float, every: float = 0.002) -> None:
    """Poll ``check`` (a plain or an async callable) every ``every`` seconds until it returns something true;
    TimeoutError after ``timeout``. A short poll by default: the benches time what they wait for."""
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(every)


async def job_states(client: Redis, venue: str, ids: Sequence[str]) -> list[bytes | None] | None:
    """Each job's state, read in one round trip; None while Redis does not answer (a failover under way)."""
    k = Keys(venue)
    try:
        async with client.pipeline(transaction=False) as pipe:
            for job_id in ids:
                pipe.hget(k.job(job_id), "state")
            return list(await pipe.execute())
    except (RedisError, OSError):
        return None


def read_print_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written right now
    return out


def print_log_copies(*logs: Path, complete_only: bool = True) -> collections.Counter[str]:
    """job id -> copies printed, over the given print logs (a missing log printed nothing)."""
    copies: collections.Counter[str] = collections.Counter()
    for log in logs:
        for entry in read_print_log(log):
            if entry["complete"] or not complete_only:
                copies[entry["job_id"]] += 1
    return copies


def printed_lines(folder: Path) -> int:
    """Labels out of every simulated printer whose print log is in ``folder``."""
    return sum(len(read_print_log(log)) for log in folder.glob("*.prints.jsonl"))


async def command_counts(redis: Redis) -> dict[str, int]:
    """``INFO commandstats`` as {command: calls}."""
    info = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in info.items()}


async def redis_cpu(redis: Redis) -> float:
    """Seconds of CPU the redis-server has used (user + sys), from ``INFO cpu``."""
    info = await redis.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


# -- what clients send ---------------------------------------------------------------------------------------------


class Monitor:
    """MONITOR on its own socket: (unix time, client, command, first argument) of every command clients send.

    Lua-internal calls come with the client ``lua``; the round-trip counts leave them out by it.
    """

    LINE = re.compile(r'^\+?([\d.]+) \[\d+ ([^\]]+)\] "(\w+)"(?: "([^"]*)")?')

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"MONITOR\r\n")
        self.lines: list[str] = []
        self._stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        buf = b""
        while not self._stop:
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            *lines, buf = buf.split(b"\r\n")
            self.lines += [line.decode("utf-8", "replace") for line in lines]

    def close(self) -> list[tuple[float, str, str, str]]:
        self._stop = True
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(2)
        out = []
        for line in self.lines:
            if m := self.LINE.match(line):
                out.append((float(m.group(1)), m.group(2), m.group(3).lower(), m.group(4) or ""))
        return out


class RoundTrips:
    """Every round trip a client makes, seen from the client: one per command or pipeline written to the socket.

    MONITOR shows commands, not round trips (a pipeline's commands arrive one by one); this counts the writes. Each
    entry is (``time.perf_counter()``, the start of the bytes sent), so callers can window them and tell scripts
    apart by their SHA. Install before the client opens its connections.
    """

    def __init__(self, redis: Redis) -> None:
        self.sent: list[tuple[float, bytes]] = []
        pool = redis.connection_pool
        base: Any = pool.connection_class
        sent = self.sent

        class Counting(base):  # type: ignore[misc]
            async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                head = command if isinstance(command, bytes | str) else b"".join(command[:3])
                sent.append((time.perf_counter(), head[:200] if isinstance(head, bytes) else head[:200].encode()))
                await super().send_packed_command(command, check_health)

        pool.connection_class = Counting

    def between(self, start: float, end: float, *, excluding: bytes = b"") -> int:
        """Round trips sent in [start, end] (perf_counter), leaving out those whose head contains ``excluding``."""
        return sum(1 for t, head in self.sent if start <= t <= end and not (excluding and excluding in head))


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
