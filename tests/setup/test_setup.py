"""setup --yes against an emulated printer and the test Redis: a validated 0640 config and a confirmed test badge."""

from __future__ import annotations

import asyncio
import socket
import stat
import sys
from pathlib import Path

from agent.config import load_config
from cli.redis_server import RedisServer
from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.fronts import TcpFront


async def _cli(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def test_setup_yes_writes_checks_and_test_prints(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    printer = BrotherPrinter("p1", print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    out = tmp_path / "hall-b-2.yaml"
    args = ["setup", "--yes", "--venue", venue, "--name", "hall-b-2", "--location", "Hall B"]
    args += ["--redis", redis_server.url, "--language", "brother_ql", "--model", "QL-820NWB"]
    args += ["--host", f"{host}:{port}", "--out", str(out)]
    try:
        code, text = await _cli(*args)
        assert code == 0, text
        assert "test badge: printed (printer reported printing completed)" in text
        assert f"run it: badge-agent run -c {out}" in text
        assert stat.S_IMODE(out.stat().st_mode) == 0o640
        config = load_config(out)
        assert (config.printer.driver.host, config.printer.driver.port) == (host, port)
        assert config.printer.driver.model == "QL-820NWB" and len(printer.printed()) == 1
        before = out.read_text()
        code, text = await _cli(*args)
        assert code == 2 and f"{out} exists; --force overwrites it" in text and out.read_text() == before
        code, text = await _cli(*[a if a != redis_server.url else "redis:/127.0.0.1:6390" for a in args], "--force")
        assert code == 78 and "must start with redis://" in text and out.read_text() == before
    finally:
        await front.stop()
        await printer.stop()


async def test_setup_names_the_healthz_address_and_setting_another_process_holds(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    printer = BrotherPrinter("p1", print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    out = tmp_path / "hall-b-3.yaml"
    args = ["setup", "--yes", "--venue", venue, "--name", "hall-b-3", "--location", "Hall B", "--no-test-print"]
    args += ["--redis", redis_server.url, "--language", "brother_ql", "--host", f"{host}:{port}", "--out", str(out)]
    try:
        code, text = await _cli(*args)
        assert code == 0, text
        listen = load_config(out).http.listen
        assert listen is not None
        held_port = int(listen.rpartition(":")[2])
        # Rewritten while something else holds the config's port: setup keeps it (its own agent may hold it) and
        # says which address and setting, as `run` would.
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            other.bind(("127.0.0.1", held_port))
            other.listen()
            code, text = await _cli(*args, "--force")
        assert code == 0, text
        said = " ".join(text.split())
        assert f"cannot listen on {listen} (http.listen): another process already listens there" in said, said
        assert f"otherwise set http.listen in {out} to a free port" in said, said
    finally:
        await front.stop()
        await printer.stop()
