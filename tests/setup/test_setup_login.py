"""Interactive setup against a Redis that wants a login: it asks for the agent's user name and password, names a
missing or wrong login plainly, and writes nothing (no config, no password file) until every check passed."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from click.testing import CliRunner, Result
from redis.asyncio import Redis

from agent.config import load_config
from cli.main import main
from drivers.emulators.brother import BrotherPrinter
from tests.support.processes import create_user
from tests.support.topology import Node


async def _setup(args: list[str], answers: list[str]) -> Result:
    result: Result = await asyncio.to_thread(CliRunner().invoke, main, args, input="\n".join(answers) + "\n")
    return result


async def test_setup_asks_for_the_login_and_writes_nothing_until_redis_takes_it(
    tmp_path: Path, venue: str, brother: tuple[BrotherPrinter, str]
) -> None:
    printer, address = brother
    node = Node(tmp_path / "redis", ["--save", "", "--requirepass", "admin-secret"])
    node.start()
    admin = Redis(host="127.0.0.1", port=node.port, password="admin-secret")
    try:
        user = await create_user(admin, venue, tmp_path / "hall-f-1.pw", printer="hall-f-1")
        secret = (tmp_path / "hall-f-1.pw").read_text().strip()
        url = f"redis://127.0.0.1:{node.port}/0"
        out = tmp_path / "etc" / "hall-f-1.yaml"
        args = ["setup", "--language", "brother_ql", "--host", address, "--out", str(out)]
        first = [venue, "hall-f-1", "Hall F", url]

        no_login = await _setup(args, [*first, ""])
        assert no_login.exit_code == 69, no_login.output
        assert "Redis user name" in no_login.output and "Redis wants a login" in no_login.output
        assert "HELLO must be called" not in no_login.output.split("Redis wants a login")[0]
        assert ("nothing written" in no_login.output and not out.parent.exists()) or not any(out.parent.iterdir())

        wrong = await _setup(args, [*first, user, "not-the-password"])
        assert wrong.exit_code == 69 and "wrong user name or password" in wrong.output, wrong.output
        assert not out.exists() and not out.with_name("hall-f-1.redis-password").exists()
        assert not out.with_name("hall-f-1.yaml.new").exists() and printer.printed() == []

        # The retry needs no --force: nothing was written before.
        right = await _setup(args, [*first, user, secret])
        assert right.exit_code == 0, right.output
        assert "Redis password" in right.output and secret not in right.output  # typed without echo
        config = load_config(out)
        assert config.redis.username == user and config.redis.password() == secret
        password_file = out.with_name("hall-f-1.redis-password")
        assert config.redis.password_file == password_file
        assert stat.S_IMODE(password_file.stat().st_mode) == 0o640
        assert "test badge: printed" in right.output and len(printer.printed()) == 1
    finally:
        await admin.aclose()
        node.stop()
