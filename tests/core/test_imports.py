"""What a running ``badge-agent run`` has loaded: only what its config asks for (memory on a Pi: bench/footprint.py).

A real process on a simulated printer, past its first heartbeat, reports its ``sys.modules`` on SIGUSR1 (the
wrapper adds only that handler to ``cli.main.main``). Each module kept out below is memory a Pi never needs for
this config: the other CLI commands and rich (~3 MB), the badge renderer (Pillow, fontTools, segno), pyusb and
pyserial, prometheus_client and aiohttp until a client connects to the HTTP port (or at all while HTTP is off),
tenacity until Redis is lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer, free_port
from protocol.keys import Keys
from tests.support.agents import write_agent_config
from tests.support.processes import ROOT
from tests.support.waiting import wait_until

REPORTER = """
import json, os, signal, sys
path = sys.argv[1]
def report(*_):
    with open(path + ".tmp", "w") as out:
        json.dump(sorted(sys.modules), out)
    os.replace(path + ".tmp", path)
signal.signal(signal.SIGUSR1, report)
sys.argv = ["badge-agent", *sys.argv[2:]]
from cli.main import main
main()
"""

#: Never loaded by an agent on a simulated printer.
NEVER = (
    "rich",
    "cli.commands.demo",
    "cli.commands.status",
    "cli.commands.enqueue",
    "cli.commands.board",
    "board",
    "protocol.fleet",
    "drivers.render",
    "drivers.languages",
    "drivers.transports",
    "PIL",
    "fontTools",
    "segno",
    "usb",
    "serial",
    "tenacity",
    "pydantic",  # config and jobs are msgspec Structs; pydantic would be ~9 MB
)
#: Loaded only to serve /healthz and /metrics, once a client has connected.
HTTP_ONLY = ("aiohttp", "prometheus_client", "agent.http_app")


def _loaded(names: list[str], prefix: str) -> bool:
    return any(n == prefix or n.startswith(prefix + ".") for n in names)


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.status, resp.read()


@pytest.mark.parametrize("http", ["off", "on", "asked"], ids=["http-off", "http-on-never-asked", "http-on-asked"])
async def test_run_loads_only_what_its_config_needs(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, http: str
) -> None:
    port = free_port()
    config = write_agent_config(
        tmp_path / "desk-1.yaml",
        venue,
        redis_server.url,
        "desk-1",
        http__listen="off" if http == "off" else f"127.0.0.1:{port}",
    )
    report = tmp_path / "modules.json"
    with (tmp_path / "agent.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", REPORTER, str(report), "run", "-c", str(config)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        await wait_until(lambda: redis.zscore(Keys(venue).hb, "desk-1"))
        if http != "off":
            await wait_until(lambda: b"http endpoints up" in (tmp_path / "agent.log").read_bytes())
        if http == "asked":
            # The first request waits in the backlog while aiohttp is imported, then is answered like any other.
            status, body = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/healthz")
            assert status == 200 and json.loads(body)["printer"] == "desk-1"
            # prometheus_client comes with the first scrape (core/exposition.py).
            status, body = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/metrics")
            assert status == 200 and b"badge_jobs_printed_total 0.0" in body
        proc.send_signal(signal.SIGUSR1)
        await wait_until(report.exists)
    finally:
        proc.terminate()
        proc.wait(30)
    modules = json.loads(report.read_text())
    assert {"agent.runtime", "drivers.sim", "redis.asyncio"} <= set(modules)  # reported after start-up
    assert [m for m in NEVER if _loaded(modules, m)] == []
    http_loaded = [m for m in HTTP_ONLY if _loaded(modules, m)]
    assert http_loaded == (list(HTTP_ONLY) if http == "asked" else [])
