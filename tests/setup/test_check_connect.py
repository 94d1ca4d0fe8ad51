"""check-config --connect names each failure: wrong port, wrong password, ACL refusal, printer silent."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer, free_port
from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.fronts import TcpFront
from tests.support.processes import create_user

CONFIG = """
venue: {venue}
printer:
  name: hall-b-2
  location: Hall B
  driver: {{language: brother_ql, transport: tcp, host: 127.0.0.1, port: {port}, io_timeout: 0.5}}
redis: {{url: "{url}"}}
"""


async def _check(tmp_path: Path, venue: str, url: str, printer_port: int) -> tuple[int, str]:
    path = tmp_path / "agent.yaml"
    path.write_text(CONFIG.format(venue=venue, url=url, port=printer_port), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "check-config", "--connect", str(path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def test_each_failure_is_named(tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str) -> None:
    printer = BrotherPrinter("p1", print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    _, pport = await front.start()
    user = f"u-{venue}"
    await redis.execute_command("ACL", "SETUSER", user, "on", ">right", "~other:*", "+@all")
    good = redis_server.url
    host_port = good.removeprefix("redis://").removesuffix("/0")
    try:
        code, out = await _check(tmp_path, venue, good, pport)
        assert code == 0 and "redis and printer answer" in out, out
        code, out = await _check(tmp_path, venue, f"redis://127.0.0.1:{free_port()}/0", pport)
        assert code == 69 and "nothing listens there: wrong host or port" in out, out
        code, out = await _check(tmp_path, venue, f"redis://{user}:wrong@{host_port}/0", pport)
        assert code == 69 and "Redis refused the login (wrong user name or password)" in out, out
        code, out = await _check(tmp_path, venue, f"redis://{user}:right@{host_port}/0", pport)
        assert code == 69 and "Redis ACL refused this agent's user its venue keys" in out, out
        # An agent's own user cannot load the functions library: the check names the command an admin runs.
        agent = await create_user(redis, venue, tmp_path / "agent.pw", "hall-b-2")
        await redis.function_flush()
        secret = (tmp_path / "agent.pw").read_text().strip()
        code, out = await _check(tmp_path, venue, f"redis://{agent}:{secret}@{host_port}/0", pport)
        await redis.execute_command("ACL", "DELUSER", agent)
        assert code == 69 and "run `badge-agent functions load` as a Redis admin" in out, out
        printer.set_fault("no_answer")
        code, out = await _check(tmp_path, venue, good, pport)
        assert code == 74 and "printer unknown (no status reply" in out and "Redis" not in out, out
    finally:
        await redis.execute_command("ACL", "DELUSER", user)
        await front.stop()
        await printer.stop()
